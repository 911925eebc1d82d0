# mfsvr() and gpc() on data in partitions over the workers of a future plan
# (R/split-fit.R, ep_split.hpp): each worker holds its partitions and their
# EP sites, and every sweep exchanges only m x m and m sums.  The reference
# is the in-memory fit to the partitions' rows bound together by rbind() in
# the test (one matrix, the core's own sweep in one process): values,
# evidence, intervals to 1e-8, for several numbers of workers and
# partitions of unequal sizes (one of a single row).  gpc()'s TAP fit runs
# the accelerated (Anderson) schedule, whose history the workers hold too.

split_data <- function(n, seed = 3, classes = FALSE) {
  set.seed(seed)
  d <- data.frame(x1 = runif(n), x2 = runif(n), x3 = runif(n))
  d$y <- 10 * sin(pi * d$x1 * d$x2) + 20 * (d$x3 - 0.5)^2 + rnorm(n)
  # (two classes, overlapping: a noisy threshold of y)
  if (classes) d$y <- ifelse(d$y + rnorm(n, sd = 2) > 6, "high", "low")
  cut <- c(0, round(n * 0.1), round(n * 0.1) + 1, round(n * 0.6), n)
  pieces <- lapply(1:4, function(k) d[(cut[k] + 1):cut[k + 1], ])
  files <- tempfile(fileext = c(".rds", ".csv", ".rds"))
  saveRDS(pieces[[1]], files[1])
  utils::write.csv(pieces[[3]], files[2], row.names = FALSE)
  saveRDS(pieces[[4]], files[3])
  bound <- rbind(pieces[[1]], pieces[[2]], utils::read.csv(files[2]), pieces[[4]])
  rownames(bound) <- NULL
  list(parts = gpsvm_partitions(files[1], pieces[[2]], files[2:3]), bound = bound)
}

split_inducing <- function(m) {
  set.seed(11)
  cbind(x1 = runif(m), x2 = runif(m), x3 = runif(m))
}

# The file's workers: three R processes started once, when a test first
# needs them, and stopped when the file ends; each fit's plan is a cluster
# plan over the first `workers` of them (starting the processes is most of
# this file's time).  What a fit leaves on a worker is released by the fit.
split_cluster <- local({
  cl <- NULL
  function() {
    if (is.null(cl)) {
      # (future's: parallel's refuses a third process under R CMD check's
      # limit of two cores, which the full-size run sets as check does)
      cl <<- future::makeClusterPSOCK(3L)
      withr::defer(parallel::stopCluster(cl), envir = testthat::teardown_env())
    }
    cl
  }
})

with_workers <- function(workers, code) {
  old <- future::plan(future::cluster, workers = split_cluster()[seq_len(workers)])
  on.exit(future::plan(old), add = TRUE)
  code
}

expect_same_fit <- function(fit, reference, newdata, tol = 1e-8) {
  expect_equal(unname(fitted(fit)), unname(fitted(reference)), tolerance = tol)
  expect_equal(fit$log_evidence, reference$log_evidence, tolerance = tol)
  expect_equal(fit$site_precision, reference$site_precision, tolerance = tol)
  expect_equal(fit$variance, reference$variance, tolerance = tol)
  expect_equal(unname(predict(fit, newdata, interval = "prediction")),
               unname(predict(reference, newdata, interval = "prediction")), tolerance = tol)
  expect_identical(fit$convergence$converged, reference$convergence$converged)
}

test_that("mfsvr() on partitions over 2 and 3 workers is the in-memory fit", {
  skip_on_cran()
  skip_if_not_installed("future")
  d <- split_data(test_size(900, 400))
  z <- split_inducing(25)
  reference <- mfsvr(y ~ ., d$bound, inducing = z, C = 5, epsilon = 0.1)
  for (workers in 2:3) {
    fit <- with_workers(workers, mfsvr(y ~ ., d$parts, inducing = z, C = 5))
    expect_identical(fit$split$workers, workers)
    expect_identical(fit$split$partitions, 4L)
    expect_same_fit(fit, reference, d$bound[c(1, 50, 300), ])
    expect_match(fit$plan$by[fit$plan$step == "data"], "EP on [23] workers of the future plan")
  }
  # the greedy choice of inducing inputs and the width rule, as in memory
  fit <- with_workers(2, mfsvr(y ~ ., d$parts, inducing = 20, C = 5))
  expect_same_fit(fit, mfsvr(y ~ ., d$bound, inducing = 20, C = 5, optimize = FALSE),
                  d$bound[1:3, ])
})

test_that("gpc() on partitions over 2 and 3 workers is the in-memory fit", {
  skip_on_cran()
  skip_if_not_installed("future")
  d <- split_data(test_size(900, 400), classes = TRUE)
  z <- split_inducing(20)
  expect_identical(gpc_control()$schedule, "accelerated")
  check <- function(fit, reference, newdata, workers) {
    expect_identical(fit$split$workers, workers)
    expect_equal(unname(fit$fitted.values), unname(reference$fitted.values), tolerance = 1e-8)
    expect_equal(fit$log_evidence, reference$log_evidence, tolerance = 1e-8)
    expect_equal(fit$site_precision, reference$site_precision, tolerance = 1e-8)
    expect_equal(fit$site_nu, reference$site_nu, tolerance = 1e-8)
    expect_equal(unname(predict(fit, newdata, type = "prob")),
                 unname(predict(reference, newdata, type = "prob")), tolerance = 1e-8)
    # the same path: the extrapolated sweeps as in one process
    expect_identical(fit$convergence$iterations, reference$convergence$iterations)
    expect_true(fit$convergence$converged)
  }
  reference <- gpc(factor(y) ~ ., d$bound, inducing = z, kernel = rbf_kernel(0.5), noise = 0.1)
  for (workers in 2:3) {
    fit <- with_workers(workers, gpc(factor(y) ~ ., d$parts, inducing = z,
                                     kernel = rbf_kernel(0.5), noise = 0.1))
    expect_identical(fit$split$partitions, 4L)
    check(fit, reference, d$bound[c(1, 2, 77, 300), ], workers)
    expect_match(fit$plan$by[fit$plan$step == "data"], "EP on [23] workers of the future plan")
  }
  # hard settings: a flip probability, almost no input noise (sites of
  # large precision), two partitions over three workers
  halves <- gpsvm_partitions(d$bound[1:150, ], d$bound[-(1:150), ])
  reference <- gpc(factor(y) ~ ., d$bound, inducing = z, kernel = rbf_kernel(0.3),
                   noise = 1e-4, kappa = 0.05)
  fit <- with_workers(3, gpc(factor(y) ~ ., halves, inducing = z, kernel = rbf_kernel(0.3),
                             noise = 1e-4, kappa = 0.05))
  expect_identical(fit$split$partitions, 2L)
  check(fit, reference, d$bound[1:3, ], 2L)
})

test_that("a split sweep exchanges m x m and m sums, whatever the number of rows", {
  skip_on_cran()
  skip_if_not_installed("future")
  z <- split_inducing(12)
  per_round <- with_workers(2, vapply(c(300, 1200), function(n) {
    fit <- mfsvr(y ~ ., split_data(n)$parts, inducing = z, C = 5)
    fit$split$bytes / fit$split$rounds
  }, 0))
  # the same requests and replies (matrices of m x (m + 1) numbers at most;
  # the sweeps' mix of exchanges differs a little) at four times the rows,
  # far below one number per row
  expect_lt(abs(per_round[2] / per_round[1] - 1), 0.05)
  expect_lt(per_round[2], 8 * 2 * (12 * 13) + 8 * 2 * (12 * 12 + 12) + 6000)
})

test_that("a run the split cannot follow is fitted in one process, and equally", {
  skip_on_cran()
  skip_if_not_installed("future")
  d <- split_data(300)
  z <- split_inducing(15)
  ctl <- mfsvr_control(schedule = "sequential")
  fit <- with_workers(2, mfsvr(y ~ ., d$parts, inducing = z, C = 5, control = ctl))
  expect_null(fit$split)
  expect_same_fit(fit, mfsvr(y ~ ., d$bound, inducing = z, C = 5, control = ctl), d$bound[1:2, ])
  # the accelerated schedule is split
  ctl <- mfsvr_control(schedule = "accelerated")
  fit <- with_workers(2, mfsvr(y ~ ., d$parts, inducing = z, C = 5, control = ctl))
  expect_identical(fit$split$workers, 2L)
  expect_same_fit(fit, mfsvr(y ~ ., d$bound, inducing = z, C = 5, control = ctl), d$bound[1:2, ])
  # a residual that stalls at the rounding level (huge C, tol below it):
  # the level is probed over the parts as in one process
  ctl <- mfsvr_control(tol = 1e-15, max_iter = 80)
  fit <- with_workers(2, suppressWarnings(mfsvr(y ~ ., d$parts, inducing = z, C = 1e4,
                                                control = ctl)))
  reference <- suppressWarnings(mfsvr(y ~ ., d$bound, inducing = z, C = 1e4, control = ctl))
  expect_false(is.null(fit$split))
  # (the level is rounding's own, so each fit measures its own)
  level <- function(f) as.numeric(sub(".*\\(([0-9.e+-]+)\\).*", "\\1", f$convergence$reason))
  expect_true(is.finite(level(fit)) && is.finite(level(reference)))
  expect_lt(abs(log10(level(fit) / level(reference))), 1)
  expect_same_fit(fit, reference, d$bound[1:2, ], tol = 1e-7)
})

test_that("partitions that cannot be read stop the fit before the workers start", {
  skip_on_cran()
  skip_if_not_installed("future")
  d <- split_data(200)
  gone <- d$parts$sources[[4]]
  file.remove(gone)
  expect_error(suppressWarnings(with_workers(2, mfsvr(y ~ ., d$parts,
                                                      inducing = split_inducing(5), C = 5))),
               "partition 4 of the data \\(.*\\) cannot be read")
})
