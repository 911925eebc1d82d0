# Hostile input: absurd settings, edited fit objects and degenerate data
# give a clear R error naming what is wrong, or a correct answer in
# reasonable time; never a crash, an overflow or a read out of bounds.

test_that("derivative orders have a documented limit of 1000", {
  fit <- mfsvr(1:6, c(1, 2, 3, 3, 2, 1), C = 2, kernel = rbf_kernel(3))
  expect_error(predict(fit, 2, deriv = 2^30, se.fit = TRUE), "'deriv' must be at most 1000")
  expect_error(predict(fit, 2, deriv = 1001), "'deriv' must be at most 1000")
  expect_error(kernel_matrix(rbf_kernel(1), 1:3, deriv = 2^31), "'deriv' must be at most 1000")
  expect_error(roughness_penalty(c(2, 1e4)), "'orders' must be whole numbers from 0 to 1000")
  # the limit itself is allowed: past its degree a polynomial's derivatives
  # are 0; the Gaussian kernel's overflow and say so
  expect_identical(kernel_matrix(poly_kernel(3), 1:2, 1, deriv = 1000), matrix(0, 2, 1))
  expect_identical(gpsvm:::cpp_kernel_diagonal(poly_kernel(3), matrix(1), 1000L, 1L), 0)
  expect_error(predict(fit, 2, deriv = 1000, se.fit = TRUE), "overflows double precision")
  # the glue checks the same limit before any cast, whatever R passes
  expect_error(gpsvm:::cpp_kernel_diagonal(rbf_kernel(1), matrix(0), 1001, 1L),
               "'deriv' must be a whole number in \\[0, 1000\\]")
  expect_error(gpsvm:::cpp_kernel_diagonal(rbf_kernel(1), matrix(0), 2^31, 1L), "'deriv'")
  expect_error(gpsvm:::cpp_kernel_diagonal(rbf_kernel(1), matrix(0), 0L, 2L), "'wrt'")
})

test_that("polynomial degrees have a documented limit of 100", {
  expect_error(poly_kernel(.Machine$integer.max), "'degree' must be at most 100")
  expect_error(poly_kernel(1e300), "'degree' must be at most 100")
  k <- poly_kernel(100, scale = 0.5, offset = 1)
  expect_equal(kernel_matrix(k, 1, 1)[1, 1], 1.5^100, tolerance = 1e-12)
  # a kernel object edited past the limit is caught before the kernel code
  # runs (degree 2^31 - 1 with deriv = 1 used to loop for 35 s and overflow)
  k$degree <- .Machine$integer.max
  expect_error(kernel_matrix(k, 1:3, deriv = 1), "'degree' must be a whole number in \\[1, 100\\]")
})

test_that("iteration caps beyond R's integers are errors naming the setting", {
  expect_error(svr_control(max_iter = 1e300), "'max_iter' must be at most 2147483647")
  expect_error(mfsvr_control(max_iter = 1e10), "'max_iter' must be at most 2147483647")
  expect_error(gpc_control(max_iter = 2^31), "'max_iter' must be at most 2147483647")
  expect_error(rvm_control(max_iter = 1e300), "'max_iter' must be at most")
  expect_error(svc_control(max_iter = Inf), "'max_iter' must be a whole number")
  expect_identical(svr_control(max_iter = .Machine$integer.max)$max_iter, .Machine$integer.max)
  # a control list edited by hand is range-checked by the glue before any cast
  d <- data.frame(x = 1:10, y = sin(1:10))
  ctl <- svr_control()
  ctl$max_iter <- 1e300
  expect_error(svr(d$x, d$y, control = ctl), "'max_iter' must be a whole number in \\[1, 2147483647\\]")
  ctl <- mfsvr_control()
  ctl$seed <- -1
  expect_error(mfsvr(d$x, d$y, control = ctl), "'seed'")
  ctl <- mfsvr_control()
  ctl$tol <- NA_real_
  expect_error(mfsvr(d$x, d$y, control = ctl), "'tol' must be a single number, not NA")
  ctl <- mfsvr_control()
  ctl$schedule <- "random"
  expect_error(mfsvr(d$x, d$y, control = ctl), "'schedule' must be one of \"parallel\", \"accelerated\", \"sequential\"")
  ctl <- rvm_control()
  ctl$tol <- NULL
  expect_error(rvm(d$x, d$y, control = ctl), "'tol' is missing")
})

test_that("the paper's iteration has a bounded inner cycle", {
  d <- sinc_data(20)
  expect_error(mfsvr_control(algorithm = "paper", inner = 1e9), "'inner' must be at most 10000")
  ctl <- mfsvr_control(algorithm = "paper")
  ctl$inner <- 1e9
  expect_error(mfsvr(d$x, d$y, control = ctl), "'inner' must be a whole number in \\[1, 10000\\]")
  # the largest allowed cycle runs (and is interruptible); one outer step of
  # 10000 inner steps reaches the inner fixed point of the paper's example
  fit <- suppressWarnings(mfsvr(d$x, d$y, C = 1, kernel = rbf_kernel(sqrt(2)),
                                control = mfsvr_control(algorithm = "paper", inner = 10000,
                                                        max_iter = 1)))
  expect_identical(fit$convergence$iterations, 1L)
  expect_true(all(is.finite(coef(fit))))
})

test_that("a fit object edited by hand gives a clear error, never a read out of bounds", {
  d <- sinc_data(100)
  dense <- mfsvr(d$x, d$y, C = 5, kernel = rbf_kernel(sqrt(2)), control = mfsvr_control(rank_tol = 0))
  low <- mfsvr(d$x, d$y, C = 5, kernel = rbf_kernel(sqrt(2)))
  expect_gt(ncol(low$factor), 0)
  z <- c(-1, 0, 1)
  for (fit in list(dense, low)) {
    bad <- fit
    bad$x <- bad$x[-1, , drop = FALSE]
    expect_error(predict(bad, z, se.fit = TRUE),
                 "fit\\$y has 100 elements; the fit has 99 training rows: was the object edited\\?")
    bad <- fit
    bad$site_precision <- bad$site_precision[-1]
    expect_error(predict(bad, z, se.fit = TRUE),
                 "fit\\$site_precision has 99 elements; the fit has 100 training rows")
    bad <- fit
    bad$coefficients <- bad$coefficients[1:3]
    expect_error(predict(bad, z),
                 "fit\\$coefficients has 3 elements; the fit has 100 training rows")
    bad <- fit
    bad$chol <- bad$chol[-1, -1]
    expect_error(predict(bad, z, se.fit = TRUE),
                 "fit\\$chol is \\d+ x \\d+; the fit needs \\d+ x \\d+")
    bad <- fit
    bad$site_precision[2] <- -1
    expect_error(predict(bad, z, se.fit = TRUE),
                 "fit\\$site_precision has values outside \\[0, Inf\\]")
  }
  bad <- low
  bad$factor <- bad$factor[-1, ]
  expect_error(predict(bad, z, se.fit = TRUE),
               "fit\\$factor is 99 x \\d+; the fit needs 100 x \\d+")
  # the engine's predictor reads matrices as matrices
  pieces <- list(kernel = dense$kernel, x = as.vector(dense$x), weights = coef(dense),
                 site_precision = dense$site_precision, chol = dense$chol)
  expect_error(gpsvm:::cpp_ep_predict(pieces, matrix(z), TRUE, 0L, 1L), "'x' must be a numeric matrix")
  # the same engine serves the TAP classifier
  cl <- two_class_data(30, 3)
  tap <- gpc(cl$x, cl$y, rbf_kernel(1), noise = 0.5, method = "tap")
  bad <- tap
  bad$site_precision <- bad$site_precision[-1]
  expect_error(predict(bad, cl$x[1:2, ], type = "link", se.fit = TRUE),
               "fit\\$site_precision has 29 elements; the fit has 30 training rows")
  expect_error(loo_error(bad, "exact"), "fit\\$site_precision has 29 elements")
  # and the classifiers' leave-one-out reads alpha and the labels of the fit
  for (fit in list(svc(cl$x, cl$y, rbf_kernel(1), noise = 0.5),
                   gpc(cl$x, cl$y, rbf_kernel(1), noise = 0.5, method = "naive"))) {
    bad <- fit
    bad$alpha <- bad$alpha[-1]
    expect_error(loo_error(bad), "fit\\$alpha has 29 elements; the fit has 30 training rows")
    expect_error(loo_error(bad, "exact"), "fit\\$alpha has 29 elements")
    bad <- fit
    bad$y <- bad$y[-1]
    expect_error(loo_error(bad), "fit\\$y has 29 elements")
  }
  # TAP's approximate leave-one-out reads the cavity means and the labels
  bad <- tap
  bad$y <- bad$y[-1]
  expect_error(loo_error(bad), "fit\\$y has 29 elements")
  bad <- tap
  bad$cavity_mean <- bad$cavity_mean[-1]
  expect_error(loo_error(bad), "fit\\$cavity_mean has 29 elements")
  # a kernel edited into nonsense
  bad <- dense
  bad$kernel$sigma <- -1
  expect_error(predict(bad, z), "fit\\$kernel\\$sigma has values outside \\(0, Inf\\]")
  bad$kernel$type <- "spline"
  expect_error(predict(bad, z),
               "fit\\$kernel\\$type must be one of \"rbf\", \"polynomial\", \"linear\"")
})

test_that("svr() on many identical rows computes one kernel column and the exact fit", {
  # 20000 copies of one input: every kernel entry is 1, the fitted value s
  # is the same for all points and solves s = C * (#{y_i - s > eps} -
  # #{y_i - s < -eps}) (the KKT conditions), here found by bisection
  set.seed(2)
  n <- 20000
  x <- matrix(0.5, n, 1)
  y <- rnorm(n)
  res <- gpsvm:::cpp_svr_fit(rbf_kernel(1), x, y,
                             list(C = 1, epsilon = 0.1, bias = FALSE, tol = 1e-3, max_iter = 1e7,
                                  cache_mb = 100, shrinking = TRUE))
  expect_true(res$convergence$converged)
  expect_identical(res$kernel_columns, 1)
  balance <- function(s) s - sum((y - s > 0.1) - (y - s < -0.1))
  s_ref <- stats::uniroot(balance, c(-5, 5), tol = 1e-12)$root
  expect_lt(max(abs(res$fitted - s_ref)), 2e-3)
  fit <- svr(x[1:2000, , drop = FALSE], y[1:2000], C = 1, epsilon = 0.1, kernel = rbf_kernel(1),
             scale = FALSE)
  s2 <- stats::uniroot(function(s) s - sum((y[1:2000] - s > 0.1) - (y[1:2000] - s < -0.1)),
                       c(-5, 5), tol = 1e-12)$root
  expect_lt(max(abs(fitted(fit) - s2)), 2e-3)
})

test_that("the noise model's glue checks its vector lengths", {
  expect_error(gpsvm:::cpp_epsins_quantile(numeric(0), 0, 1, 1, 0.1), "'p' is empty")
  expect_error(gpsvm:::cpp_epsins_quantile(0.5, c(0, 1), 1, 1, 0.1), "differ in length")
})
