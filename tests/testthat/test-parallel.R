# The repeated work (exact leave-one-out, evidence_curve(), the svr() evidence
# grid, one-vs-rest models) goes through future.apply: its results must not
# depend on the future plan, random numbers must be reproducible across
# plans, the caller's random number stream must be left alone, and progress
# must be signalled through progressr, once per piece of work.

# Evaluate `code` under a future plan, putting the previous plan back after.
with_plan <- function(strategy, code, ...) {
  old <- future::plan(strategy, ...)
  on.exit(future::plan(old), add = TRUE)
  code
}

# Background R sessions load the installed gpsvm, so these tests need the
# package installed (as R CMD check and the test commands do); under covr the
# workers would run uninstrumented code.  Starting two sessions takes about
# a second.
skip_without_multisession <- function() {
  skip_if(nzchar(Sys.getenv("R_COVR")), "covr instruments only this session")
  skip_if_not(requireNamespace("gpsvm", quietly = TRUE) &&
                length(find.package("gpsvm", lib.loc = .libPaths(), quiet = TRUE)) > 0L,
              "gpsvm is not installed for background sessions")
}

three_class_data <- function(n, seed) {
  set.seed(seed)
  x <- matrix(rnorm(2 * n), n, 2)
  angle <- atan2(x[, 2], x[, 1]) + rnorm(n, sd = 0.4)
  y <- factor(cut(angle %% (2 * pi), c(0, 2, 4, 2 * pi), labels = c("a", "b", "c"),
                  include.lowest = TRUE))
  list(x = x, y = y)
}

test_that("results are identical under plan(sequential) and plan(multisession, workers = 2)", {
  skip_on_cran()
  skip_without_multisession()
  d <- two_class_data(40, 61)
  g <- gpc_paper(d$x, d$y, rbf_kernel(1), noise = 0.5)
  tap <- gpc_paper(d$x, d$y, rbf_kernel(1), noise = 0.5, method = "tap")
  d3 <- three_class_data(45, 62)
  s <- svr_sine_data(30, 3)
  sets <- list(svr_sine_data(25, 1), svr_sine_data(25, 2))
  run <- function() {
    list(loo_naive = loo_error(g, "exact"),
         loo_tap = loo_error(tap, "exact"),
         gpc3 = gpc(d3$x, d3$y, rbf_kernel(1), noise = 0.5),
         svc3 = svc(d3$x, d3$y, rbf_kernel(1), noise = 0.5),
         loo3 = loo_error(svc(d3$x, d3$y, rbf_kernel(1), noise = 0.5), "exact"),
         curve = evidence_curve(sets, C = c(0.5, 2, 8), epsilon = 0.4,
                                kernel = rbf_kernel(sqrt(0.8)), method = c("eq16", "refined")),
         search = svr(s$x, s$y, C = 2, epsilon = 0.4, kernel = rbf_kernel(sqrt(0.8)),
                      optimize = TRUE, scale = FALSE))
  }
  serial <- with_plan(future::sequential, run())
  parallel <- with_plan(future::multisession, run(), workers = 2)
  for (what in c("loo_naive", "loo_tap", "loo3")) {
    expect_identical(parallel[[what]]$margins, serial[[what]]$margins)
    expect_identical(parallel[[what]]$iterations, serial[[what]]$iterations)
  }
  expect_identical(parallel$loo3$decision, serial$loo3$decision)
  for (what in c("gpc3", "svc3")) {
    expect_identical(names(parallel[[what]]$models), c("a", "b", "c"))
    expect_identical(parallel[[what]]$fitted.values, serial[[what]]$fitted.values)
    expect_identical(lapply(parallel[[what]]$models, `[[`, "alpha"),
                     lapply(serial[[what]]$models, `[[`, "alpha"))
  }
  expect_identical(parallel$curve, serial$curve)
  expect_identical(parallel$search$C, serial$search$C)
  expect_identical(parallel$search$optimization$path, serial$search$optimization$path)
})

test_that("the work is the plain serial computation, split any way", {
  # the one-vs-rest models are the binary fits of each class against the rest
  d3 <- three_class_data(45, 63)
  fit <- svc(d3$x, d3$y, rbf_kernel(1), noise = 0.5, scale = FALSE)
  for (l in levels(d3$y)) {
    alone <- svc(d3$x, factor(d3$y == l, c(FALSE, TRUE)), rbf_kernel(1), noise = 0.5,
                 scale = FALSE)
    expect_identical(fit$models[[l]]$alpha, alone$alpha)
  }
  # leave-one-out refits in chunks of any size give the one-at-a-time refits
  d <- two_class_data(30, 64)
  g <- gpc_paper(d$x, d$y, rbf_kernel(1), noise = 0.5)
  whole <- loo_error(g, "exact")
  one_at_a_time <- with_plan(future::sequential, vapply(seq_len(30), function(i) {
    gpsvm:::.loo_refits(g, i)$margins
  }, numeric(1)))
  expect_identical(unname(whole$margins), one_at_a_time)
})

test_that("random streams are reproducible across plans and leave the caller's stream alone", {
  skip_on_cran()
  draw <- function(i) stats::rnorm(3)
  set.seed(11)
  serial <- with_plan(future::sequential, gpsvm:::.future_map(1:6, draw))
  after_serial <- stats::runif(1)
  set.seed(11)
  expected_after <- stats::runif(1)
  # the caller's stream continues as if nothing had been drawn
  expect_identical(after_serial, expected_after)
  # each element has its own stream: no two are alike, and none is the
  # caller's stream
  expect_equal(length(unique(unlist(serial))), 18)
  set.seed(11)
  expect_false(isTRUE(all.equal(serial[[1]], stats::rnorm(3))))
  # the same seed gives the same numbers again, and in another order of work
  set.seed(11)
  expect_identical(with_plan(future::sequential, gpsvm:::.future_map(1:6, draw)), serial)
  skip_without_multisession()
  set.seed(11)
  parallel <- with_plan(future::multisession, gpsvm:::.future_map(1:6, draw), workers = 2)
  expect_identical(parallel, serial)
  expect_identical(stats::runif(1), expected_after)
  # no seed set yet in the session: none is left behind either
  had <- exists(".Random.seed", envir = globalenv())
  if (had) {
    saved <- get(".Random.seed", envir = globalenv())
    on.exit(assign(".Random.seed", saved, envir = globalenv()), add = TRUE)
    rm(".Random.seed", envir = globalenv())
  }
  kind <- RNGkind()
  gpsvm:::.future_map(1:2, function(i) i)
  expect_false(exists(".Random.seed", envir = globalenv()))
  expect_identical(RNGkind(), kind)
})

test_that("progress is signalled through progressr, one step per piece of work", {
  withr_option <- options(progressr.enable = TRUE)
  on.exit(options(withr_option), add = TRUE)
  d <- two_class_data(30, 65)
  fit <- gpc_paper(d$x, d$y, rbf_kernel(1), noise = 0.5)
  steps <- character()
  loo <- withCallingHandlers(loo_error(fit, "exact"), progression = function(cond) {
    steps <<- c(steps, cond$type)
  })
  # 30 cases in chunks of 1 (about 50 chunks for a model, at most n)
  expect_identical(sum(steps == "update"), 30L)
  expect_identical(sum(steps == "initiate"), 1L)
  expect_identical(sum(steps == "finish"), 1L)
  # nothing is shown unless asked for; asked for, a bar reaches 100%
  expect_silent(loo_error(fit, "exact"))
  expect_output(progressr::with_progress(loo_error(fit, "exact"),
                                         handlers = progressr::handler_txtprogressbar(file = stdout())),
                "100%")
  sets <- list(svr_sine_data(20, 1), svr_sine_data(20, 2))
  steps <- character()
  withCallingHandlers(evidence_curve(sets, C = c(1, 4, 16), epsilon = 0.4,
                                     kernel = rbf_kernel(sqrt(0.8))),
                      progression = function(cond) steps <<- c(steps, cond$type))
  expect_identical(sum(steps == "update"), 6L)
})

test_that("fits draw no random numbers, so future finds none in a fresh worker", {
  skip_on_cran()
  # a session without a seed keeps none after fitting every model
  had <- exists(".Random.seed", envir = globalenv())
  if (had) {
    saved <- get(".Random.seed", envir = globalenv())
    on.exit(assign(".Random.seed", saved, envir = globalenv()), add = TRUE)
  }
  d <- two_class_data(30, 67)
  s <- svr_sine_data(30, 4)
  y3 <- factor(c("a", "b", "c")[1 + (d$x[, 1] > 0) + (d$x[, 2] > 0.5)])
  fits <- list(
    function() svr(s$x, s$y, kernel = rbf_kernel(1)),
    function() mfsvr(s$x, s$y, kernel = rbf_kernel(1)),
    function() rvm(s$x, s$y, kernel = rbf_kernel(1)),
    function() srvm(s$x, s$y, kernel = rbf_kernel(1)),
    function() svc(d$x, d$y, rbf_kernel(1)),
    function() gpc(d$x, y3, rbf_kernel(1)),
    function() gpc(d$x, d$y, rbf_kernel(1), method = "naive"),
    function() predict(svr(s$x, s$y, kernel = rbf_kernel(1)), s$x, interval = "prediction"))
  for (fit in fits) {
    if (exists(".Random.seed", envir = globalenv())) rm(".Random.seed", envir = globalenv())
    suppressWarnings(fit())
    expect_false(exists(".Random.seed", envir = globalenv()))
  }
  skip_without_multisession()
  # the user's own future_lapply() over gpsvm fits, without future.seed:
  # no "unexpectedly generated random numbers" warning from the workers
  sets <- list(svr_sine_data(20, 1), svr_sine_data(20, 2), svr_sine_data(20, 3))
  one <- function(ds) svr(ds$x, ds$y, kernel = rbf_kernel(1), scale = FALSE)$beta
  serial <- lapply(sets, one)
  expect_warning(parallel <- with_plan(future::multisession,
                                        future.apply::future_lapply(sets, one), workers = 2), NA)
  expect_identical(parallel, serial)
})
