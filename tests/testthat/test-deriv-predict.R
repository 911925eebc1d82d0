# Derivatives of the fitted function with their error bars, for svr() and
# mfsvr(): the prior variance of a derivative (the kernel's mixed derivative
# on the diagonal) against R's symbolic D(), and the posterior mean and
# variance against central differences of a plain-R posterior covariance.

# n-fold derivative of an expression in each of two variables
mixed_D <- function(expr, p, q, n) {
  for (i in seq_len(n)) expr <- D(expr, p)
  for (i in seq_len(n)) expr <- D(expr, q)
  expr
}

test_that("the RBF mixed-derivative diagonal matches D() and (2n-1)!!/sigma^2n", {
  s <- 1.3
  z <- cbind(c(-0.7, 0, 2.1), c(0.4, -1.5, 0.3))
  e <- quote(exp(-((p - q)^2 + (a - b)^2) / (2 * s^2)))
  for (n in 0:3) {
    for (wrt in 1:2) {
      got <- gpsvm:::cpp_kernel_diagonal(rbf_kernel(s), z, n, wrt)
      vars <- if (wrt == 1) c("p", "q") else c("a", "b")
      d <- mixed_D(e, vars[1], vars[2], n)
      ref <- vapply(seq_len(nrow(z)), function(i) {
        eval(d, list(p = z[i, 1], q = z[i, 1], a = z[i, 2], b = z[i, 2], s = s))
      }, numeric(1))
      expect_equal(got, ref, tolerance = 1e-12, info = sprintf("n = %d, wrt = %d", n, wrt))
    }
  }
  # a high order, where D() would be slow: (2n - 1)!! / sigma^(2n)
  expect_equal(gpsvm:::cpp_kernel_diagonal(rbf_kernel(s), z, 5, 1),
               rep(prod(seq(1, 9, by = 2)) / s^10, 3))
})

test_that("the polynomial mixed-derivative diagonal matches D() and vanishes past the degree", {
  z <- cbind(c(-0.7, 0, 2.1), c(0.4, -1.5, 0.3))
  e <- quote((sc * (p * q + a * b) + o)^3)
  k <- poly_kernel(3, scale = 0.8, offset = 1.5)
  for (n in 0:3) {
    for (wrt in 1:2) {
      got <- gpsvm:::cpp_kernel_diagonal(k, z, n, wrt)
      vars <- if (wrt == 1) c("p", "q") else c("a", "b")
      d <- mixed_D(e, vars[1], vars[2], n)
      ref <- vapply(seq_len(nrow(z)), function(i) {
        eval(d, list(p = z[i, 1], q = z[i, 1], a = z[i, 2], b = z[i, 2], sc = 0.8, o = 1.5))
      }, numeric(1))
      expect_equal(got, ref, tolerance = 1e-12, info = sprintf("n = %d, wrt = %d", n, wrt))
    }
  }
  expect_identical(gpsvm:::cpp_kernel_diagonal(k, z, 4, 1), rep(0, 3))
  # linear kernel: <x, x>, then 1, then 0
  expect_equal(gpsvm:::cpp_kernel_diagonal(linear_kernel(), z, 0, 1), rowSums(z^2))
  expect_equal(gpsvm:::cpp_kernel_diagonal(linear_kernel(), z, 1, 2), rep(1, 3))
  expect_identical(gpsvm:::cpp_kernel_diagonal(linear_kernel(), z, 2, 1), rep(0, 3))
})

# Plain-R posterior covariance of the latent function between the rows of
# z1 and z2, given the training inputs, a kernel function and the inverse
# of the "noise" matrix the model conditions on: c(z1, z2) =
# k(z1, z2) - k(z1, X) M k(X, z2).
posterior_cov <- function(kfun, x, M, z1, z2) {
  kfun(z1, z2) - kfun(z1, x) %*% M %*% kfun(x, z2)
}
rbf_plain <- function(s) {
  function(a, b) exp(-outer(rowSums(a^2), rowSums(b^2), "+") / (2 * s^2) + tcrossprod(a, b) / s^2)
}

# Mean and variance of the first or second derivative in coordinate `wrt`
# at the rows of z, by central differences of a plain-R posterior mean and
# covariance function.
fd_derivative_moments <- function(mean_fun, cov_fun, z, wrt, n, h) {
  e <- matrix(0, nrow(z), ncol(z))
  e[, wrt] <- h
  pts <- if (n == 1) list(z + e, z - e) else list(z + e, z, z - e)
  w <- if (n == 1) c(1, -1) / (2 * h) else c(1, -2, 1) / h^2
  mean <- Reduce(`+`, Map(function(p, wk) wk * mean_fun(p), pts, w))
  var <- vapply(seq_len(nrow(z)), function(i) {
    zi <- do.call(rbind, lapply(pts, function(p) p[i, , drop = FALSE]))
    drop(crossprod(w, cov_fun(zi, zi) %*% w))
  }, numeric(1))
  list(mean = mean, var = var)
}

test_that("mfsvr derivative predictions match differences of the plain-R posterior", {
  set.seed(3)
  x <- runif(30, -6, 6)
  y <- sin(x) / x + rnorm(30, sd = 0.1)
  s <- 1.6
  fit <- mfsvr(x, y, C = 8, epsilon = 0.05, kernel = rbf_kernel(s), scale = FALSE)
  kfun <- rbf_plain(s)
  X <- fit$x
  # (K + S^-1)^-1 = S^1/2 (I + S^1/2 K S^1/2)^-1 S^1/2, safe for zero sites
  sq <- sqrt(fit$site_precision)
  M <- sq * solve(diag(30) + outer(sq, sq) * kfun(X, X)) * rep(sq, each = 30)
  mean_fun <- function(p) drop(kfun(p, X) %*% fit$coefficients)
  cov_fun <- function(a, b) posterior_cov(kfun, X, M, a, b)
  expect_equal(predict(fit, X[1:5, , drop = FALSE]), mean_fun(X[1:5, , drop = FALSE]),
               tolerance = 1e-8)
  z <- cbind(c(-7.5, -3.2, 0, 0.4, 5.9))
  for (n in 1:2) {
    h <- if (n == 1) 1e-3 else 1e-2
    ref <- fd_derivative_moments(mean_fun, cov_fun, z, 1, n, h)
    got <- predict(fit, z, deriv = n, se.fit = TRUE)
    expect_equal(unname(got$fit), ref$mean, tolerance = if (n == 1) 1e-6 else 1e-4)
    expect_equal(unname(got$se.fit^2), ref$var, tolerance = if (n == 1) 1e-5 else 1e-3)
    # the band is the Gaussian one around the same mean
    band <- predict(fit, z, deriv = n, interval = "confidence", level = 0.9)
    expect_equal(band[, "upr"] - band[, "fit"], qnorm(0.95) * got$se.fit, tolerance = 1e-12)
  }
  # the fit's derivative tracks the true one where the data are dense
  zz <- seq(-4, 4, by = 0.5)
  truth <- ifelse(zz == 0, 0, cos(zz) / zz - sin(zz) / zz^2)
  expect_lt(sqrt(mean((predict(fit, zz, deriv = 1) - truth)^2)), 0.05)
})

test_that("mfsvr derivatives in the second input of a polynomial-kernel fit match differences", {
  set.seed(4)
  x <- cbind(runif(25, -1, 1), runif(25, -1, 1))
  y <- x[, 1] * x[, 2]^2 + rnorm(25, sd = 0.05)
  k <- poly_kernel(3, scale = 0.5, offset = 1)
  fit <- mfsvr(x, y, C = 20, epsilon = 0.02, kernel = k, scale = FALSE)
  kfun <- function(a, b) (0.5 * tcrossprod(a, b) + 1)^3
  sq <- sqrt(fit$site_precision)
  M <- sq * solve(diag(25) + outer(sq, sq) * kfun(x, x)) * rep(sq, each = 25)
  mean_fun <- function(p) drop(kfun(p, x) %*% fit$coefficients)
  z <- cbind(c(-0.5, 0.2, 0.9), c(0.3, -0.8, 0.6))
  cov_fun <- function(a, b) posterior_cov(kfun, x, M, a, b)
  ref <- fd_derivative_moments(mean_fun, cov_fun, z, 2, 1, 1e-4)
  got <- predict(fit, z, deriv = 1, wrt = 2, se.fit = TRUE)
  expect_equal(unname(got$fit), ref$mean, tolerance = 1e-6)
  expect_equal(unname(got$se.fit^2), ref$var, tolerance = 1e-5)
  # past the degree the derivative and its uncertainty vanish
  got4 <- predict(fit, z, deriv = 4, wrt = 2, se.fit = TRUE)
  expect_identical(unname(got4$fit), rep(0, 3))
  expect_identical(unname(got4$se.fit), rep(0, 3))
})

test_that("svr derivative predictions and eq. (22)/(31) variances match differences", {
  # the bound (all points) needs a well-conditioned K, hence fewer points
  s <- 1.2
  kfun <- rbf_plain(s)
  z <- cbind(c(-0.5, 1.1, 6, 12.9))
  for (bias in c(FALSE, TRUE)) for (bound in c(FALSE, TRUE)) {
    set.seed(5)
    n_train <- if (bound) 16 else 60
    x <- seq(0, 4 * pi, length.out = n_train)
    y <- sin(x) + rnorm(n_train, sd = 0.3)
    fit <- svr(x, y, C = 3, epsilon = 0.2, kernel = rbf_kernel(s), bias = bias, scale = FALSE)
    X <- fit$x
    mean_fun <- function(p) drop(kfun(p, X) %*% fit$beta) + fit$b
    keep <- if (bound) rep(TRUE, n_train) else gpsvm:::.svr_margin(fit)
    expect_gt(sum(keep), 3)
    Xm <- X[keep, , drop = FALSE]
    cov_fun <- function(a, b) posterior_cov(kfun, Xm, solve(kfun(Xm, Xm)), a, b)
    for (n in 1:2) {
      h <- if (n == 1) 1e-3 else 1e-2
      ref <- fd_derivative_moments(mean_fun, cov_fun, z, 1, n, h)
      got <- predict(fit, z, deriv = n, se.fit = TRUE, bound = bound)
      info <- sprintf("bias = %s, bound = %s, n = %d", bias, bound, n)
      expect_equal(unname(got$fit), ref$mean, tolerance = if (n == 1) 1e-6 else 1e-4,
                   info = info)
      expect_equal(unname(got$se.fit^2), ref$var, tolerance = if (n == 1) 1e-4 else 1e-3,
                   info = info)
    }
  }
})

test_that("derivative predictions validate deriv, wrt and the interval", {
  set.seed(6)
  d <- data.frame(a = runif(30), b = runif(30))
  d$y <- sin(3 * d$a) + d$b^2 + rnorm(30, sd = 0.05)
  fits <- list(svr = svr(y ~ a + b, data = d, C = 5, epsilon = 0.05, scale = FALSE),
               mfsvr = mfsvr(y ~ a + b, data = d, C = 5, epsilon = 0.05, scale = FALSE),
               rvm = rvm(y ~ a + b, data = d, scale = FALSE))
  nd <- data.frame(a = c(0.2, 0.7), b = c(0.5, 0.1))
  for (name in names(fits)) {
    f <- fits[[name]]
    expect_equal(predict(f, nd, deriv = 1, wrt = "b"), predict(f, nd, deriv = 1, wrt = 2),
                 info = name)
    expect_error(predict(f, nd, deriv = 1, interval = "prediction"), "deriv = 0 only",
                 info = name)
    expect_error(predict(f, nd, deriv = -1), "'deriv'", info = name)
    expect_error(predict(f, nd, deriv = 1.5), "'deriv'", info = name)
    expect_error(predict(f, nd, deriv = 1, wrt = 3), "'wrt' must be an input column",
                 info = name)
    expect_error(predict(f, nd, deriv = 1, wrt = "c"), "'wrt' = \"c\" is not an input column",
                 info = name)
  }
  # far orders overflow double precision: an error, not Inf, NaN or a zero sd
  x1 <- seq(-3, 3, length.out = 25)
  y1 <- sin(x1)
  k1 <- rbf_kernel(1)
  for (f in list(svr(x1, y1, C = 5, epsilon = 0.05, kernel = k1, scale = FALSE),
                 mfsvr(x1, y1, C = 5, epsilon = 0.05, kernel = k1, scale = FALSE),
                 rvm(x1, y1, kernel = k1, scale = FALSE))) {
    expect_error(predict(f, c(0, 1), deriv = 200, se.fit = TRUE), "overflows double precision")
    expect_error(predict(f, c(0, 1), deriv = 200, interval = "confidence"), "overflows")
  }
  # deriv = 0 is the ordinary prediction
  expect_equal(predict(fits$svr, nd, deriv = 0), predict(fits$svr, nd))
})
