# gpsvm_threads(): asking and setting the threads of the inducing-point and
# low-rank passes and of the dense factorisations, and fits that do not
# depend on that number, to the last bit (the work is split into the same
# pieces on any number of threads).  The threaded loops themselves are
# checked against plain loops, Woodbury's formulas and Eigen's own
# factorisation in the C++ suite (tests/cpp/test_threads.cpp); here the
# whole fits a user makes.

# (whatever the machine's load: on a busy machine the threaded loops would
# otherwise run on one thread, and "the same on two threads" would say
# nothing)
with_threads <- function(threads, code) {
  options_before <- options(gpsvm.threads_follow_load = FALSE)
  old <- gpsvm_threads(threads)
  on.exit({
    options(options_before)
    gpsvm_threads(old)
  }, add = TRUE)
  code
}

# Enough rows for the greedy choice to run on several threads (8192 or
# more), and enough inducing inputs for a sweep's passes to (n m^2 of at
# least 5e7 multiply-adds: 8400 x 80^2), so that a fit takes a fraction of
# a second.
threaded_data <- function(n = 8400) {
  set.seed(71)
  x <- matrix(runif(2 * n, -4, 4), n, 2)
  f <- sin(x[, 1]) * cos(x[, 2] / 2)
  list(x = x, y = f + rnorm(n, sd = 0.2), label = factor(ifelse(f + rnorm(n, sd = 0.3) > 0, "b", "a")))
}

test_that("gpsvm_threads() asks, sets and restores, and rejects what is not a count", {
  now <- gpsvm_threads()
  expect_true(is.numeric(now) && length(now) == 1L && now >= 1)
  old <- gpsvm_threads(1)
  expect_identical(old, now)
  expect_identical(gpsvm_threads(), 1L)
  expect_invisible(gpsvm_threads(old))
  expect_identical(gpsvm_threads(), now)
  for (bad in list(0, -1, 1.5, "2", NA, c(1, 2), Inf)) {
    expect_error(gpsvm_threads(bad), "'threads'")
  }
  expect_identical(gpsvm_threads(), now)
})

test_that("inducing-point fits on 8400 rows are the same to the last bit on one and two threads", {
  skip_on_cran()
  d <- threaded_data()
  fits <- lapply(c(1, 2), function(threads) with_threads(threads, {
    z <- gpsvm:::cpp_greedy_inducing(rbf_kernel(1), d$x, 80L, 1e-12)
    list(z = z,
         mfsvr = mfsvr(d$x, d$y, C = 5, kernel = rbf_kernel(1), scale = FALSE, bias = 0,
                       inducing = d$x[z, ]),
         gpc = gpc(d$x, d$label, kernel = rbf_kernel(1), noise = 0.5, scale = FALSE,
                   inducing = d$x[z, ]))
  }))
  expect_length(fits[[1]]$z, 80L)
  expect_identical(fits[[1]]$z, fits[[2]]$z)
  for (model in c("mfsvr", "gpc")) {
    one <- fits[[1]][[model]]
    two <- fits[[2]][[model]]
    expect_true(one$convergence$converged, label = model)
    for (part in c("inducing_weights", "fitted.values", "site_precision", "site_nu", "chol",
                   "log_evidence")) {
      expect_false(is.null(one[[part]]), label = paste(model, part, "is there"))
      expect_identical(one[[part]], two[[part]], label = paste(model, part))
    }
    expect_identical(logLik(one), logLik(two), label = model)
  }
  new <- d$x[1:50, ] + 0.01
  expect_identical(predict(fits[[1]]$mfsvr, new, interval = "prediction"),
                   predict(fits[[2]]$mfsvr, new, interval = "prediction"))
  expect_identical(predict(fits[[1]]$gpc, new, type = "prob"),
                   predict(fits[[2]]$gpc, new, type = "prob"))
})

test_that("dense fits past order 512 are the same to the last bit on one and two threads", {
  skip_on_cran()
  d <- threaded_data(520)
  fits <- lapply(c(1, 2), function(threads) with_threads(threads, list(
    mfsvr = mfsvr(d$x, d$y, C = 5, kernel = rbf_kernel(1), scale = FALSE, bias = 0,
                  control = mfsvr_control(rank_tol = 0)),
    gpc = gpc(d$x, d$label, kernel = rbf_kernel(1), noise = 0.5, scale = FALSE,
              control = gpc_control(rank_tol = 0)),
    # srvm()'s EM starts from all 520 candidate centres: its posterior's
    # factorisations are of order 520 until the pruning brings them below
    # 512 (rvm()'s fast algorithm adds centres from none, and here keeps few)
    srvm = srvm(d$x, d$y, kernel = rbf_kernel(1), scale = FALSE, basis = 520L,
                calibration_folds = 0))))
  for (model in c("mfsvr", "gpc")) {
    one <- fits[[1]][[model]]
    two <- fits[[2]][[model]]
    expect_true(one$convergence$converged, label = model)
    expect_true(is.matrix(one$chol) && nrow(one$chol) == 520L, label = paste(model, "is dense"))
    for (part in c("fitted.values", "site_precision", "site_nu", "chol", "log_evidence")) {
      expect_identical(one[[part]], two[[part]], label = paste(model, part))
    }
  }
  expect_identical(coef(fits[[1]]$srvm), coef(fits[[2]]$srvm))
  expect_identical(logLik(fits[[1]]$srvm), logLik(fits[[2]]$srvm))
  new <- d$x[1:20, ] + 0.01
  for (model in c("mfsvr", "srvm")) {
    expect_identical(predict(fits[[1]][[model]], new, interval = "prediction"),
                     predict(fits[[2]][[model]], new, interval = "prediction"), label = model)
  }
  expect_identical(predict(fits[[1]]$gpc, new, type = "prob"),
                   predict(fits[[2]]$gpc, new, type = "prob"))
})

test_that("a forked child runs on one thread", {
  skip_on_os("windows")  # no fork()
  with_threads(2, {
    before <- gpsvm_threads()
    job <- parallel::mcparallel(gpsvm_threads())
    expect_identical(parallel::mccollect(job)[[1]], 1L)
    expect_identical(gpsvm_threads(), before)  # the parent's own setting stays
  })
})
