# What the C++ core hands to R through the glue, the same for every model.

test_that("every fitter's convergence record has exactly the fields and types of .convergence()", {
  d <- sinc_data(25)
  cl <- two_class_data(30, 5)
  fits <- list(
    svr = svr(d$x, d$y, C = 2, kernel = rbf_kernel(1)),
    svr_bias = svr(d$x, d$y, C = 2, kernel = rbf_kernel(1), bias = TRUE),
    mfsvr = mfsvr(d$x, d$y, C = 2, kernel = rbf_kernel(1)),
    mfsvr_paper = suppressWarnings(mfsvr(d$x, d$y, C = 1, kernel = rbf_kernel(1),
                                         control = mfsvr_control(algorithm = "paper"))),
    rvm = rvm(d$x, d$y, kernel = rbf_kernel(1.6)),
    srvm = srvm(d$x, d$y, kernel = rbf_kernel(1.6)),
    svc = svc(cl$x, cl$y, rbf_kernel(1), noise = 0.5),
    gpc_naive = gpc(cl$x, cl$y, rbf_kernel(1), noise = 0.5),
    gpc_tap = gpc(cl$x, cl$y, rbf_kernel(1), noise = 0.5, method = "tap")
  )
  for (name in names(fits)) {
    cv <- fits[[name]]$convergence
    expect_identical(names(cv), c("converged", "iterations", "change", "tol", "reason"),
                     info = name)
    expect_identical(cv, do.call(gpsvm:::.convergence, cv), info = name)
    expect_true(cv$converged, info = name)
    # the reported change is the measure compared with the tolerance; the
    # RVMs may also stop when the evidence stops moving, and then say so
    if (cv$change < cv$tol) {
      expect_true(is.na(cv$reason), info = name)
    } else {
      expect_true(name %in% c("rvm", "srvm"), info = name)
      expect_match(cv$reason, "tol_evidence", info = name)
    }
  }
  expect_identical(fits$svr$convergence$tol, svr_control()$tol)
  expect_identical(fits$mfsvr$convergence$tol, mfsvr_control()$tol)
  expect_identical(fits$gpc_tap$convergence$tol, 1e-6)
})

test_that("a solver stopped by its cap reports it in the record and the warning", {
  d <- sinc_data(25)
  expect_warning(fit <- mfsvr(d$x, d$y, C = 2, kernel = rbf_kernel(1),
                              control = mfsvr_control(max_iter = 1)),
                 "did not converge in 1 iteration ")
  expect_false(fit$convergence$converged)
  expect_identical(fit$convergence$iterations, 1L)
  expect_gt(fit$convergence$change, fit$convergence$tol)
  expect_warning(fit <- svr(d$x, d$y, C = 2, kernel = rbf_kernel(1),
                            control = svr_control(max_iter = 2)),
                 "did not converge in 2 iterations")
  expect_identical(fit$convergence$iterations, 2L)
  expect_gt(fit$convergence$change, fit$convergence$tol)
})

test_that("EP's reported change is the damped sweep's change divided by its damping", {
  # a heavily damped sequential run: the raw change of each sweep is about
  # damping times the undamped one, and the convergence test (and so the
  # record) uses change / damping
  d <- sinc_data(25)
  ctl <- mfsvr_control(schedule = "sequential", damping = 0.1, max_iter = 3, rank_tol = 0)
  fit <- suppressWarnings(mfsvr(d$x, d$y, C = 2, kernel = rbf_kernel(1), control = ctl))
  expect_false(fit$convergence$converged)
  # the plain-R change of the last sweep from the fits with 2 and 3 sweeps
  ctl2 <- ctl
  ctl2$max_iter <- 2L
  prev <- suppressWarnings(mfsvr(d$x, d$y, C = 2, kernel = rbf_kernel(1), control = ctl2))
  dm <- abs(fit$fitted.values - prev$fitted.values) / sqrt(fit$variance)
  dv <- abs(fit$variance / prev$variance - 1)
  expect_equal(fit$convergence$change, max(dm, dv) / 0.1, tolerance = 1e-8)
})

test_that("counts reach the core whole, up to R's longest vector (2^52), on every platform", {
  # The glue checks counts in 64 bits.  Held in a long, which has 32 bits on
  # Windows, the bound R_XLEN_T_MAX became 0 and every cap was refused.
  d <- sinc_data(25)
  choose_at <- function(cap) {
    rules <- list(rank_tol = 1e-13, low_rank_min_n = 0, low_rank_max = cap, dense_max_n = 1e9,
                  inducing_count = 1, rows_per_inducing = 1, greedy_max_rows = 1,
                  test_rank = TRUE, half_rows_at_most = FALSE)
    gpsvm:::cpp_choose_prior(rbf_kernel(1), as.matrix(d$x), rules)
  }
  expect_identical(choose_at(2)$form, "dense")
  # no cap beyond the number of points: the choice of a cap of n
  expect_identical(choose_at(2^52)$form, "low_rank")
  expect_identical(choose_at(2^52)[c("rows", "factor")], choose_at(25)[c("rows", "factor")])
  expect_error(choose_at(2^52 + 2),
               "'low_rank_max' must be a whole number in [1, 4503599627370496], not",
               fixed = TRUE)
  expect_error(choose_at(-1), "'low_rank_max' must be a whole number in [1, ", fixed = TRUE)
  expect_error(choose_at(2.5), "'low_rank_max' must be a whole number in [1, ", fixed = TRUE)
})
