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
  expect_true(isTRUE(attr(low$inducing, "low_rank")))
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
  bad$inducing_chol <- bad$inducing_chol[-1, -1]
  expect_error(predict(bad, z, se.fit = TRUE),
               "fit\\$inducing_chol is \\d+ x \\d+; the fit needs \\d+ x \\d+")
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

test_that("the predictive quantile's glue checks its vector lengths and tails", {
  g <- list(kind = "epsins", mean = matrix(c(0, 1)), var = matrix(c(1, 1)), C = 1,
            epsilon = 0.1, weight = 1)
  q <- gpsvm:::cpp_predictive_quantile
  expect_error(q(g, NULL, 0.1, FALSE), "one value per row")
  expect_error(q(g, NULL, c(0.1, 0.1), c(FALSE, NA)), "'upper' must not be NA")
  expect_error(q(g, NULL, c(0.1, 0.6), c(FALSE, FALSE)), "tail probability must lie in")
  expect_error(q(g, NULL, c(0.1, NaN), c(FALSE, FALSE)), "tail probability must lie in")
  expect_equal(q(g, NULL, c(0, 0), c(FALSE, TRUE)), c(-Inf, Inf))
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
  expect_true(isTRUE(attr(at_limit$inducing, "low_rank")))
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

# ---- answers that were silently wrong ---------------------------------------

test_that("a constant input column leaves the relevance vector machines' fit as lm() finds it", {
  # (the scaling centres a constant column: left at 5, it added 12.5 to every
  # value of the linear kernel, no basis function was worth adding, and the
  # fit was the mean, 0.0957 everywhere)
  for (setting in list(list(n = 30, value = 5), list(n = 100, value = 20))) {
    set.seed(1)
    a <- rnorm(setting$n)
    y <- a + rnorm(setting$n, sd = 0.1)
    X <- cbind(a = a, b = setting$value)
    Z <- cbind(a = c(-1, 0, 1), b = setting$value)
    ref <- unname(predict(lm(y ~ a), data.frame(a = Z[, "a"])))
    fits <- suppressWarnings(list(
      default = rvm(X, y), linear = rvm(X, y, kernel = linear_kernel()),
      poly2 = rvm(X, y, kernel = poly_kernel(2)),
      formula = rvm(y ~ a + b, data.frame(a = a, b = setting$value, y = y)),
      srvm = srvm(X, y, kernel = linear_kernel())))
    for (name in names(fits)) {
      fit <- fits[[name]]
      pred <- if (name == "formula") predict(fit, data.frame(a = Z[, "a"], b = setting$value)) else
        predict(fit, Z)
      expect_lt(max(abs(unname(pred) - ref)), 0.05, label = paste(name, setting$n))
      expect_gt(length(fit$relevance_vectors), 0L, label = paste(name, setting$n))
    }
    # the constant's value does not matter: it is centred to 0
    other <- suppressWarnings(rvm(cbind(a = a, b = -3 * setting$value), y))
    expect_equal(unname(predict(other, cbind(a = Z[, "a"], b = -3 * setting$value))),
                 unname(predict(fits$default, Z)), tolerance = 1e-10)
  }
  expect_warning(rvm(cbind(a = rnorm(20), 5), rnorm(20)),
                 "constant input column\\(s\\) centred to 0, not scaled: x2")
})

test_that("a polynomial kernel on a constant column no longer makes srvm()'s precision singular", {
  set.seed(1)
  x <- runif(30, -3, 3)
  d <- data.frame(x = x, b = 5, y = sin(x) + rnorm(30, sd = 0.1))
  with_b <- suppressWarnings(srvm(y ~ x + b, d, kernel = poly_kernel(3)))
  without <- srvm(y ~ x, d, kernel = poly_kernel(3))
  new <- data.frame(x = c(-2, 0, 2), b = 5)
  expect_equal(unname(predict(with_b, new)), unname(predict(without, new)), tolerance = 1e-8)
})

test_that("svr() on inputs far from the origin fits and predicts as on the inputs moved there", {
  # the Gaussian kernel depends on differences only: x + 1e8 is the same
  # model as x (the solver's fast kernel columns lost every digit of the
  # distances: fitted values 1.79, -4.27, 2.09 where sin gives 0.90, -0.97, 1.00)
  set.seed(1)
  xx <- sort(runif(60, 0, 10))
  yy <- sin(xx) + rnorm(60, sd = 0.05)
  for (bias in c(FALSE, TRUE)) {
    far <- svr(matrix(xx + 1e8), yy, C = 5, kernel = rbf_kernel(1), scale = FALSE, bias = bias)
    near <- svr(matrix(xx), yy, C = 5, kernel = rbf_kernel(1), scale = FALSE, bias = bias)
    expect_equal(unname(fitted(far)), unname(fitted(near)), tolerance = 1e-6)
    expect_equal(unname(predict(far, matrix(xx + 1e8))), unname(fitted(far)), tolerance = 1e-8)
    expect_lt(max(abs(fitted(far) - sin(xx))), 0.2)
  }
})

test_that("a Gaussian width far below the inputs' spread predicts fitted() at the training rows", {
  # at sigma = 1e-8 the kernel matrix is the identity; the fast kernel forms
  # rounded their exponents by O(1) there (fitted -0.808, predict() 0.080)
  set.seed(3)
  X <- matrix(rnorm(120), 40)
  y <- sin(X[, 1]) + rnorm(40, sd = 0.1)
  for (sigma in c(1e-8, 1e-6)) {
    expect_identical(kernel_matrix(rbf_kernel(sigma), scale(X)), diag(40))
    fit <- svr(X, y, kernel = rbf_kernel(sigma))
    expect_equal(unname(predict(fit, X)), unname(fitted(fit)), tolerance = 1e-10)
  }
})

test_that("one observation, or a response without spread, gets no intervals in arbitrary units", {
  for (fitter in list(mfsvr, svr)) {
    fit <- fitter(matrix(1, 1, 1), 3000)
    expect_identical(unname(predict(fit, matrix(5))), 3000)
    expect_error(predict(fit, matrix(5), interval = "prediction"),
                 "no spread \\(one observation\\) .* refit with scale = FALSE")
    expect_error(predict(fit, matrix(5), se.fit = TRUE), "arbitrary units")
  }
  # with scale = FALSE the units are y's own, as given
  expect_true(all(is.finite(predict(mfsvr(matrix(1, 1, 1), 3000, scale = FALSE), matrix(5),
                                    interval = "prediction"))))
})

test_that("a polynomial kernel that is no covariance is refused, given or edited", {
  set.seed(4)
  X <- scale(matrix(rnorm(80), 40))
  # (1 - <x, x'>)^2 has negative eigenvalues on these points (plain R)
  expect_lt(min(eigen((1 - tcrossprod(X))^2, symmetric = TRUE, only.values = TRUE)$values), -1)
  expect_error(poly_kernel(2, scale = -1), "'scale' must be >= 0, not -1: .* not positive semidefinite")
  expect_error(poly_kernel(1, offset = -2), "'offset' must be >= 0")
  k <- poly_kernel(2)
  k$scale <- -1
  y <- sin(X[, 1])
  for (fitter in list(svr, mfsvr, rvm, srvm)) expect_error(fitter(X, y, kernel = k), "'scale' must be >= 0")
  expect_error(gpc(X, factor(y > 0), kernel = k), "'scale' must be >= 0")
  # as parsnip's scale_factor, 0 is a constant kernel (positive semidefinite)
  expect_s3_class(poly_kernel(2, scale = 0), "gpsvm_kernel")
})

test_that("a fit whose kernel was replaced or edited by hand is refused by its validator", {
  g <- rvm(dist ~ speed, cars, kernel = rbf_kernel())
  g$kernel <- poly_kernel(2)
  expect_error(predict(g, data.frame(speed = c(5, 20))),
               "fit\\$kernel, the fit's weights and fit\\$x give .* fit\\$fitted.values has .* was the object edited")
  f <- mfsvr(dist ~ speed, cars)
  expect_identical(f$kernel$type, "polynomial")  # (the linear kernel, by the evidence)
  f$kernel$degree <- 2L
  expect_error(predict(f, data.frame(speed = c(5, 20))), "was the object edited")
  s <- svr(dist ~ speed, cars, kernel = rbf_kernel(1))
  s$kernel$sigma <- 3
  expect_error(print(s), "was the object edited")
  cl <- two_class_data(30, 3)
  clf <- gpc(cl$x, cl$y, rbf_kernel(1), noise = 0.5)
  clf$kernel$sigma <- 2
  expect_error(predict(clf, cl$x[1:2, ]), "fit\\$kernel, the weights and fit\\$x give the decision value")
})

test_that("a classifier has no residuals, and says so", {
  cl <- two_class_data(30, 3)
  for (fit in list(gpc(cl$x, cl$y, rbf_kernel(1), noise = 0.5), svc(cl$x, cl$y, rbf_kernel(1)))) {
    expect_error(residuals(fit), "a classifier has no residuals: compare fitted\\(fit\\)")
  }
})

# ---- errors that say what happened ---------------------------------------------

test_that("settings beyond double precision, and calls R's internals stopped, are errors naming the argument", {
  d <- sinc_report()
  expect_error(mfsvr(d$x, d$y, C = 1e-300), "'C' must lie in \\[1.49e-154, 1.34e\\+154\\]")
  expect_error(mfsvr(d$x, d$y, C = 5, epsilon = 1e308), "'epsilon' must lie in \\[0, 1.34e\\+154\\]")
  expect_error(svr(d$x, d$y, C = Inf), "'C' must lie in .* not Inf")
  expect_error(svr_noise_variance(1e-200, 0.1), "'C' must lie in")
  fit <- mfsvr(d$x, d$y, C = 5)
  expect_error(evidence_curve(fit, C = c(1e-300, 1e300)), "'C' must lie in \\[1.49e-154")
  # an open end is printed open, and the message gives the value
  expect_error(rbf_kernel(Inf), "'sigma' must lie in \\(0, Inf\\), not Inf")
  expect_error(rbf_kernel(0), "'sigma' must lie in \\(0, Inf\\), not 0")
  expect_error(predict(fit, 0, interval = "prediction", level = 1), "'level' must lie in \\(0, 1\\), not 1")
  expect_error(predict(fit, 0, interval = "prediction", level = 0), "'level' must lie in \\(0, 1\\), not 0")
  labels <- factor(d$y > 0.2)
  expect_error(gpc(d$x, labels, bias = 1e308), "'bias' must be at most 1e\\+10 .* not 1e\\+308")
  expect_error(mfsvr(d$x, d$y, bias = 1e300), "'bias' must be at most")
  # a polynomial kernel whose values reach 1e29 on the scaled inputs
  set.seed(1)
  u <- runif(30, -3, 3)
  expect_error(mfsvr(u, sin(u) + rnorm(30, sd = 0.1), kernel = poly_kernel(50),
                     control = mfsvr_control(rank_tol = 0)),
               "mfsvr\\(\\): .* polynomial kernel whose values reach .* lower 'degree' or a smaller 'scale'")
  # (its low-rank prior, FITC on 9 pivots, runs, and EP says it did not converge)
  said <- character(0)
  withCallingHandlers(mfsvr(u, sin(u) + rnorm(30, sd = 0.1), kernel = poly_kernel(50)),
                      warning = function(w) {
                        said <<- c(said, conditionMessage(w))
                        invokeRestart("muffleWarning")
                      })
  expect_match(said, "did not converge", all = FALSE)
  # rvm()'s basis beyond the observations, without R's integer overflow
  warned <- character(0)
  message <- withCallingHandlers(tryCatch(rvm(d$x, d$y, basis = 2^31 - 1), error = conditionMessage),
                                 warning = function(w) {
                                   warned <<- c(warned, conditionMessage(w))
                                   invokeRestart("muffleWarning")
                                 })
  expect_match(message, "'basis' = 2147483647 exceeds the number of observations \\(40\\)")
  expect_length(warned, 0L)
  # step() on a fit to a matrix, and formulas that leave no rows
  mat <- mfsvr(cbind(a = d$x, b = rev(d$x)), d$y, C = 5)
  expect_error(step(mat, trace = 0), "terms\\(\\) \\(and so step\\(\\)\\) needs a fit made with a formula")
  frame <- data.frame(x = d$x, y = d$y, cl = labels)
  for (call in list(quote(gpc(cl ~ x, frame, subset = x > 100)), quote(svc(cl ~ x, frame, subset = x > 100)),
                    quote(mfsvr(y ~ x, frame, subset = x > 100)))) {
    expect_error(eval(call), "no rows of 'data' are left to fit", info = deparse(call))
  }
  # print() of a fit to one row names its columns and counts in the singular
  one <- mfsvr(matrix(1, 1, 1), 3)
  expect_output(print(one), "1 observation, C")
  expect_output(print(one), "centred only: the constant column x1\\)")
})

# ---- hangs, threads and memory, each in a process of its own ------------------

# Runs `code` in a fresh R process with gpsvm loaded, killed after `seconds`
# and, with `memory_mb`, limited to that much address space (ulimit -v):
# the result's `value` is the last line the process wrote, "OK ..." or
# "ERROR <message>", and `timed_out` whether it was killed.
run_isolated <- function(code, seconds = 60, memory_mb = NULL) {
  skip_on_os("windows")
  script <- tempfile(fileext = ".R")
  on.exit(unlink(script))
  writeLines(c("suppressPackageStartupMessages(library(gpsvm))",
               sprintf("res <- tryCatch({%s}, error = function(e) e)", code),
               "cat(if (inherits(res, 'error')) paste('ERROR', conditionMessage(res)) else",
               "    paste('OK', paste(format(res), collapse = ' ')), '\\n')"), script)
  rscript <- shQuote(file.path(R.home("bin"), "Rscript"))
  command <- sprintf("%sexec %s --vanilla %s", if (is.null(memory_mb)) "" else
    sprintf("ulimit -v %d && ", as.integer(memory_mb * 1024)), rscript, shQuote(script))
  old <- Sys.getenv("R_LIBS", unset = NA)
  Sys.setenv(R_LIBS = paste(.libPaths(), collapse = .Platform$path.sep))
  on.exit(if (is.na(old)) Sys.unsetenv("R_LIBS") else Sys.setenv(R_LIBS = old), add = TRUE)
  out <- suppressWarnings(system2("sh", c("-c", shQuote(command)), stdout = TRUE, stderr = TRUE,
                                  timeout = seconds))
  status <- attr(out, "status") %||% 0L
  list(value = utils::tail(out[nzchar(out)], 1L), output = out, timed_out = identical(status, 124L))
}

test_that("srvm() on 300 rows of 20000 inputs is refused at once, naming the cost", {
  skip_on_cran()
  run <- run_isolated(paste("set.seed(1); x <- matrix(rnorm(300 * 20000), 300);",
                            "srvm(x, x[, 1] + rnorm(300))"), seconds = 60)
  expect_false(run$timed_out)
  expect_match(run$value, "ERROR srvm\\(\\): the roughness penalty in each of the 20000 input columns")
  expect_match(run$value, "5.4e\\+11 multiply-adds .*roughness_penalty\\(at = \\)")
  # below the limit it fits, and its check of the penalty's size takes one pass
  set.seed(2)
  x <- matrix(rnorm(40 * 300), 40)
  fit <- suppressWarnings(srvm(x, x[, 1] + rnorm(40, sd = 0.1), calibration_folds = 0))
  expect_s3_class(fit, "gpsvm_srvm")
  # that one pass: the largest prior variance of the second derivatives
  # over every row and column, against the formula at each (plain R: the
  # polynomial kernel's (2)-mixed derivative at x in column c)
  k <- poly_kernel(3, scale = 0.5, offset = 1)
  z <- matrix(rnorm(12), 4)
  by_column <- sapply(1:3, function(c) {
    sapply(1:4, function(i) {
      t <- z[i, c]
      rest <- 0.5 * (sum(z[i, ]^2) - t^2) + 1
      # d^2/dp^2 d^2/dq^2 (0.5 p q + rest)^3 at p = q = t: only j = 2, 3 terms
      3 * 0.5^2 * rest * 4 + 1 * 0.5^3 * 36 * t^2
    })
  })
  expect_equal(gpsvm:::cpp_kernel_diagonal_max(k, z, 2L), max(by_column), tolerance = 1e-12)
})

test_that("gpsvm_threads() is capped at the processors, and a small fit is the same on any setting", {
  old <- gpsvm_threads(1000)
  on.exit(gpsvm_threads(old), add = TRUE)
  expect_lte(gpsvm_threads(), parallel::detectCores())
  expect_gte(gpsvm_threads(), 1L)
  d <- sinc_report()
  many <- mfsvr(d$x, d$y, C = 5, control = mfsvr_control(rank_tol = 0))
  gpsvm_threads(1)
  one <- mfsvr(d$x, d$y, C = 5, control = mfsvr_control(rank_tol = 0))
  expect_identical(fitted(many), fitted(one))
  skip_on_cran()
  # the case of the report: 300 rows on the most threads allowed
  run <- run_isolated(paste("gpsvm_threads(2^31 - 1); set.seed(1); x <- runif(300, -3, 3);",
                            "f <- mfsvr(x, sin(x) + rnorm(300, sd = 0.1)); gpsvm_threads()"),
                      seconds = 60)
  expect_false(run$timed_out)
  expect_match(run$value, "^ERROR 'threads' must be a whole number in \\[1, 1024\\]|^OK [0-9]+")
})

test_that("a dense fit too large for the memory is refused before the allocation, naming the size", {
  skip_on_cran()
  # (AddressSanitizer's shadow memory takes terabytes of address space, so
  # no process under it runs within a limit on its address space)
  skip_if(grepl("asan", Sys.getenv("LD_PRELOAD")),
          "under AddressSanitizer no address-space limit can be set")
  # under a 3 GB limit whatever the machine: 50000 observations need three
  # 20 GB matrices
  setup <- "set.seed(1); n <- 5e4; x <- matrix(runif(2 * n), n); y <- sin(4 * x[, 1]) + rnorm(n, sd = 0.1);"
  runs <- list(
    mfsvr = run_isolated(paste(setup, "mfsvr(x, y, C = 5, kernel = rbf_kernel(1), bias = 0,",
                               "control = mfsvr_control(rank_tol = 0))"), memory_mb = 3000),
    gpc = run_isolated(paste(setup, "gpc(x, factor(y > 0), kernel = rbf_kernel(1), noise = 0.5,",
                             "control = gpc_control(rank_tol = 0))"), memory_mb = 3000),
    rvm = run_isolated(paste(setup, "rvm(x, y, kernel = rbf_kernel(1), basis = 5e4)"),
                       memory_mb = 3000))
  for (model in names(runs)) {
    run <- runs[[model]]
    expect_false(run$timed_out, label = model)
    expect_match(run$value, sprintf("^ERROR %s\\(\\): .* need about [0-9.]+ GB of memory, more than the", model),
                 label = model)
  }
  expect_match(runs$mfsvr$value, "50000 x 50000 kernel matrix .*3 matrices of 20.0 GB.*rank_tol")
  expect_match(runs$rvm$value, "50000 x 50001 design .*'basis'")
  # an allocation too small to be checked that still fails is an R error
  # that says so, not a bare std::bad_alloc: the address space of a process
  # that has loaded gpsvm, plus 40 MB, and a 72 MB kernel matrix
  size <- run_isolated(paste("status <- readLines('/proc/self/status');",
                             "as.numeric(gsub('[^0-9]', '', status[startsWith(status, 'VmSize')]))"))
  skip_if_not(startsWith(size$value, "OK"), "no /proc/self/status")
  vm_mb <- as.numeric(sub("OK ", "", size$value)) / 1024
  run <- run_isolated("kernel_matrix(rbf_kernel(1), seq_len(3000)); 'made'", memory_mb = vm_mb + 40)
  expect_false(run$timed_out)
  expect_match(run$value, "^ERROR there is not enough memory for this computation \\(an allocation failed\\)")
  expect_no_match(paste(run$output, collapse = "\n"), "std::bad_alloc")
})
