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
               "fit\\$kernel\\$type must be one of \"rbf\", \"matern\", \"polynomial\", \"linear\"")
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

# The data of the report these checks answer: 40 sinc points with one input
# near 0.
sinc_report <- function() {
  set.seed(1)
  x <- seq(-5, 5, length.out = 40)
  x[20] <- 1e-3
  list(x = x, y = sin(x) / x + rnorm(40, sd = 0.1))
}

test_that("duplicated input names are refused, not matched to the first column twice", {
  d <- sinc_report()
  X <- cbind(a = d$x, a = rev(d$x))
  for (fitter in list(mfsvr, svr, rvm)) {
    expect_error(fitter(X, d$y), "'x' has more than one column named 'a'")
  }
  df <- data.frame(a = d$x, a = rev(d$x), check.names = FALSE)
  expect_error(svr(df, d$y), "more than one column named 'a'")
  expect_error(svc(X, factor(d$y > 0.2)), "more than one column named 'a'")
  # distinct names fit, and predict() at the training rows gives fitted()
  colnames(X) <- c("a", "b")
  fit <- mfsvr(X, d$y, C = 5)
  expect_equal(unname(predict(fit, X[1:3, ])), unname(fitted(fit)[1:3]), tolerance = 1e-12)
  expect_equal(unname(predict(fit, X[1:3, 2:1])), unname(fitted(fit)[1:3]), tolerance = 1e-12)
})

test_that("a factor's column named like another input is renamed, and predicts as that input", {
  # model.matrix() names factor V1's level-1 column "V11", as the input V11
  # (mlbench's Ozone has both)
  set.seed(2)
  d <- data.frame(V1 = factor(sample(1:3, 60, TRUE)), V11 = runif(60, -2, 2))
  d$y <- sin(2 * d$V11) + 0.5 * (d$V1 == "2") + rnorm(60, sd = 0.1)
  new <- data.frame(V1 = factor(c(1, 2, 3, 2), levels = 1:3), V11 = c(-1, 0, 1, 1.5))
  kernel <- rbf_kernel(1)
  fit <- mfsvr(y ~ ., d, C = 5, kernel = kernel, scale = FALSE)
  expect_identical(colnames(fit$x), c("V11.1", "V12", "V13", "V11"))
  # the same model on a matrix whose columns were named by hand
  X <- cbind(f1 = d$V1 == "1", f2 = d$V1 == "2", f3 = d$V1 == "3", x = d$V11) + 0
  X_new <- cbind(f1 = new$V1 == "1", f2 = new$V1 == "2", f3 = new$V1 == "3", x = new$V11) + 0
  by_hand <- mfsvr(X, d$y, C = 5, kernel = kernel, scale = FALSE)
  expect_equal(unname(predict(fit, new)), unname(predict(by_hand, X_new)), tolerance = 1e-10)
  # with scaling, V11 is scaled and the factor's columns are not
  fit <- mfsvr(y ~ ., d, C = 5, kernel = kernel)
  expect_equal(unname(fit$scaling$center[colnames(fit$x) == "V11"]), mean(d$V11))
  expect_equal(unname(predict(fit, d[1:5, ])), unname(fitted(fit)[1:5]), tolerance = 1e-10)
  classes <- gpc(factor(y > 0.3) ~ V1 + V11, d)
  expect_identical(colnames(classes$x), c("V11.1", "V12", "V13", "V11"))
  expect_equal(unname(predict(classes, d[1:5, ], type = "prob")),
               unname(predict(classes, type = "prob")[1:5, ]), tolerance = 1e-12)
})

test_that("a response of classes given to a regression model points to the classifiers", {
  d <- data.frame(x = 1:12, y = rep(c("a", "b"), 6), z = rnorm(12))
  expect_error(mfsvr(factor(y) ~ x, d), "not a factor: these are regression models; gpc\\(\\)")
  expect_error(rvm(y == "a" ~ x, d), "'y' must be a numeric vector, not logical")
  expect_error(svr(d$x, d$y), "not text")
  expect_error(srvm(cbind(x, z) ~ x, d), "'y' must be a numeric vector \\(one response\\)")
  expect_error(mfsvr(z ~ 1, d), "'formula' names no inputs")
  expect_error(gpc(y ~ 1, d), "'formula' names no inputs")
})

test_that("an offset() in a formula is refused rather than dropped or taken as an input", {
  d <- sinc_report()
  frame <- data.frame(x = d$x, y = d$y, w = seq(0, 1, length.out = 40))
  expect_error(mfsvr(y ~ x + offset(w), frame), "'formula' has the offset offset\\(w\\)")
  expect_error(svr(y ~ . + offset(w), frame), "'formula' has the offset offset\\(w\\)")
  expect_error(gpc(factor(y > 0.2) ~ x + offset(w), frame), "offset")
  # the suggested form fits y - w
  fit <- mfsvr(I(y - w) ~ x, frame, C = 5)
  expect_equal(unname(fit$y), d$y - frame$w)
})

test_that("data whose squares overflow or underflow double precision are refused with the reason", {
  d <- sinc_report()
  for (fitter in list(mfsvr, svr, rvm, srvm)) {
    expect_error(fitter(d$x, d$y * 1e300), "'y' has values as large as 1.09e\\+300: .*overflow")
    expect_error(fitter(d$x * 1e160, d$y), "'x' has values as large as 5e\\+160")
    expect_error(fitter(d$x, d$y * 1e-300), "'y' spreads over only 1.39e-300: .*underflow")
    expect_error(fitter(d$x * 1e-300, d$y), "'x' spreads over only 1e-299")
  }
  expect_error(gpc(cbind(u = d$x, v = d$x * 1e-300), factor(d$y > 0.2)),
               "column v of 'x' spreads over only")
  # inside the limits the fit is the fit of the rescaled data, rescaled
  # (scaling standardises both; the evidence moves by the Jacobian)
  big <- mfsvr(d$x * 1e100, d$y * 1e140, C = 5)
  ref <- mfsvr(d$x, d$y, C = 5)
  expect_equal(unname(fitted(big)) / 1e140, unname(fitted(ref)), tolerance = 1e-10)
  expect_equal(c(logLik(big)), c(logLik(ref)) - 40 * log(1e140), tolerance = 1e-10)
})

test_that("every fitter refuses a Gaussian width whose square is not a positive double", {
  d <- sinc_report()
  expect_error(rbf_kernel(1e-300), "'sigma' must lie in \\[1.49e-154, 1.34e\\+154\\]")
  expect_error(rbf_kernel(1e200), "'sigma' must lie in")
  expect_error(rbf_kernel(c(1, 1e-200), per_input = TRUE), "not 1e-200")
  # a kernel edited by hand meets the same rule in every fitter
  k <- rbf_kernel(1)
  k$sigma <- 1e-300
  labels <- factor(d$y > 0.2)
  for (call in list(quote(mfsvr(d$x, d$y, kernel = k)), quote(svr(d$x, d$y, kernel = k)),
                    quote(rvm(d$x, d$y, kernel = k)), quote(srvm(d$x, d$y, kernel = k)),
                    quote(gpc(d$x, labels, kernel = k)), quote(svc(d$x, labels, kernel = k)))) {
    expect_error(eval(call), "'sigma' must lie in", info = deparse(call))
  }
  # the narrowest width allowed computes: the kernel matrix is the identity
  expect_identical(kernel_matrix(rbf_kernel(1.5e-154), c(0, 1)), diag(2))
})

test_that("a roughness penalty beyond double precision is refused, naming its order", {
  d <- sinc_report()
  expect_error(srvm(d$x, d$y, penalty = roughness_penalty(200), control = srvm_control(lambda = 1)),
               "'penalty': the derivatives of order 200 .* overflow")
  for (order in c(300, 1000)) {
    expect_error(srvm(d$x, d$y, penalty = roughness_penalty(c(2, order))),
                 sprintf("derivatives of order %d", order))
  }
  # the bound is the size of the operator: (2n - 1)!! / sigma^(2n) at the
  # width of these scaled inputs passes 1e300 between orders 60 and 100
  sigma <- srvm(d$x, d$y, penalty = roughness_penalty(2))$kernel$sigma
  log10_size <- function(n) (lgamma(2 * n + 1) - n * log(2) - lgamma(n + 1)) / log(10) -
    2 * n * log10(sigma) + log10(40 * 41)
  expect_lt(log10_size(60), 300)
  expect_gt(log10_size(100), 300)
  fit <- srvm(d$x, d$y, penalty = roughness_penalty(60))
  expect_gt(fit$lambda, 0)
  expect_error(srvm(d$x, d$y, penalty = roughness_penalty(100)), "order 100")
})

test_that("mfsvr_control(rank_tol) is limited to factors whose error stays out of the predictions", {
  d <- sinc_report()
  expect_error(mfsvr_control(rank_tol = 0.9), "'rank_tol' must lie in \\[0, 1e-06\\]")
  expect_error(mfsvr_control(rank_tol = 1e-4), "'rank_tol' must lie in")
  # at the limit the low-rank fit's predictions and standard errors agree
  # with the dense fit's, near the data and far from them, and no standard
  # error is 0
  z <- c(-8, -2, 0, 0.5, 3, 4.9, 8)
  dense <- predict(mfsvr(d$x, d$y, C = 5, control = mfsvr_control(rank_tol = 0)), z, se.fit = TRUE)
  set.seed(2)
  X <- matrix(runif(400), 200)
  y <- sin(4 * X[, 1]) + X[, 2]^2 + rnorm(200, sd = 0.1)
  Z <- rbind(matrix(runif(40), 20), c(3, 3))
  at_limit <- mfsvr(X, y, C = 5, control = mfsvr_control(rank_tol = 1e-6))
  expect_false(is.null(at_limit$factor))
  low <- predict(at_limit, Z, se.fit = TRUE)
  full <- predict(mfsvr(X, y, C = 5, control = mfsvr_control(rank_tol = 0)), Z, se.fit = TRUE)
  expect_equal(low$fit, full$fit, tolerance = 1e-4)
  expect_equal(low$se.fit, full$se.fit, tolerance = 1e-3)
  expect_true(all(low$se.fit > 0))
  expect_true(all(dense$se.fit > 0))
})

test_that("plots bound their grids", {
  d <- sinc_report()
  fit <- mfsvr(d$x, d$y, C = 5)
  expect_error(plot(fit, n = 1e9), "'n' must be at most 10000")
  expect_error(plot(rbf_kernel(1), n = 1e7), "'n' must be at most 10000")
  expect_error(plot(svc(d$x, factor(d$y > 0.2)), grid = 1e5), "'grid' must be at most 1000")
})
