# The Matern kernels: values and derivatives against their textbook forms
# written out here and against central differences, DiceKriging's covariance
# of the same range, the evidence gradient in the widths against central
# differences, every model on them (a width per input as the ordinary kernel
# on inputs divided by hand), the derivatives of predictions, the errors
# past the kernel's smoothness, and the default kernel choice.

matern_r <- function(nu, r) {
  switch(as.character(nu),
         "0.5" = exp(-r),
         "1.5" = (1 + sqrt(3) * r) * exp(-sqrt(3) * r),
         "2.5" = (1 + sqrt(5) * r + 5 * r^2 / 3) * exp(-sqrt(5) * r))
}

# k(x_i, z_j) with a width per column w (one width recycled).
matern_matrix_r <- function(nu, x, z, w) {
  w <- rep_len(w, ncol(x))
  outer(seq_len(nrow(x)), seq_len(nrow(z)), Vectorize(function(i, j) {
    matern_r(nu, sqrt(sum(((x[i, ] - z[j, ]) / w)^2)))
  }))
}

test_that("matern_kernel() evaluates the three Matern forms, with one width or one per input", {
  set.seed(1)
  x <- matrix(rnorm(15), 5)
  z <- matrix(rnorm(12), 4)
  for (nu in c(0.5, 1.5, 2.5)) {
    expect_equal(kernel_matrix(matern_kernel(nu, 0.8), x, z), matern_matrix_r(nu, x, z, 0.8),
                 tolerance = 1e-14)
    w <- c(0.5, 2, 30)
    expect_equal(kernel_matrix(matern_kernel(nu, w, per_input = TRUE), x, z),
                 matern_matrix_r(nu, x, z, w), tolerance = 1e-14)
    K <- kernel_matrix(matern_kernel(nu, 0.8), x)
    expect_identical(K, t(K))
    expect_equal(diag(K), rep(1, 5))
  }
  # far apart and duplicated inputs: 0 and 1, no NaN
  expect_equal(kernel_matrix(matern_kernel(1.5, 1e-3), c(0, 1e3, 1e3)),
               rbind(c(1, 0, 0), c(0, 1, 1), c(0, 1, 1)))
  expect_output(print(matern_kernel(3/2, 2)), "nu = 3/2.*\n.*sigma = 2")
  expect_output(print(matern_kernel()), "chosen from the data")
})

test_that("bad Matern arguments are errors that name them", {
  expect_error(matern_kernel(2), "'nu' must be 1/2, 3/2 or 5/2")
  expect_error(matern_kernel(c(0.5, 1.5)), "'nu'")
  expect_error(matern_kernel(NA), "'nu'")
  expect_error(matern_kernel(1.5, -1), "'sigma'")
  expect_error(matern_kernel(1.5, c(1, 2)), "'sigma'")
  expect_error(kernel_matrix(matern_kernel(1.5), 1:3), "has no width.*matern_kernel\\(1\\)")
})

test_that("Matern derivatives match their closed forms and central differences, up to the smoothness", {
  set.seed(2)
  x <- matrix(rnorm(8), 4)
  z <- matrix(rnorm(6), 3)
  s <- 0.9
  # d/dx_c and d^2/dx_c^2 written out from k(r), r = |x - z| / s
  by_hand <- function(nu, i, j, order, c) {
    t <- x[i, ] - z[j, ]
    r <- sqrt(sum(t^2)) / s
    a <- sqrt(2 * nu)
    if (order == 1 && nu == 1.5) return(-a^2 * t[c] / s^2 * exp(-a * r))
    if (order == 1) return(-a^2 / 3 * (1 + a * r) * t[c] / s^2 * exp(-a * r))
    -a^2 / (3 * s^2) * exp(-a * r) * (1 + a * r - a^2 * t[c]^2 / s^2)
  }
  for (nu in c(1.5, 2.5)) {
    k <- matern_kernel(nu, s)
    for (order in seq_len(nu - 0.5)) {
      for (c in 1:2) {
        ref <- outer(1:4, 1:3, Vectorize(function(i, j) by_hand(nu, i, j, order, c)))
        got <- kernel_matrix(k, x, z, deriv = order, wrt = c)
        expect_equal(got, ref, tolerance = 1e-13)
        h <- 1e-6
        shift <- matrix(0, 4, 2)
        shift[, c] <- h
        fd <- (kernel_matrix(k, x + shift, z, deriv = order - 1, wrt = c) -
                 kernel_matrix(k, x - shift, z, deriv = order - 1, wrt = c)) / (2 * h)
        expect_equal(got, fd, tolerance = 1e-7)
      }
    }
    expect_error(kernel_matrix(k, x, z, deriv = nu + 0.5),
                 sprintf("'deriv' = %d is past the smoothness .* nu = %d/2", nu + 0.5, 2 * nu))
  }
  expect_error(kernel_matrix(matern_kernel(0.5, 1), x, z, deriv = 1), "not differentiable")
  # a width per input: d/dx_c = 1 / sigma_c d/du_c
  w <- c(0.7, 3)
  got <- kernel_matrix(matern_kernel(2.5, w, per_input = TRUE), x, z, deriv = 2, wrt = 2)
  h <- 1e-4
  k0 <- function(dx) matern_matrix_r(2.5, x + cbind(0, rep(dx, 4)), z, w)
  expect_equal(got, (k0(h) - 2 * k0(0) + k0(-h)) / h^2, tolerance = 1e-6)
})

test_that("matern_kernel() is DiceKriging's covMatern5_2 and matern3_2 of the same range", {
  skip_if_not_installed("DiceKriging")
  # in one input (with several, DiceKriging multiplies one-dimensional
  # correlations, where this kernel is a function of the scaled distance)
  set.seed(3)
  x <- matrix(runif(8, 0, 3), 8, dimnames = list(NULL, "a"))
  y <- rnorm(8)
  for (theta in c(0.3, 1.9)) {
    for (nu in c(1.5, 2.5)) {
      model <- DiceKriging::km(~1, design = data.frame(x), response = y,
                               covtype = c("1.5" = "matern3_2", "2.5" = "matern5_2")[[as.character(nu)]],
                               coef.trend = 0, coef.cov = theta, coef.var = 1)
      dk <- DiceKriging::covMatrix(model@covariance, x)$C
      expect_equal(unname(kernel_matrix(matern_kernel(nu, theta), x)), unname(dk), tolerance = 1e-12)
    }
  }
})

test_that("the evidence gradient in Matern widths matches central differences", {
  set.seed(4)
  n <- 50
  x <- matrix(runif(n * 3, -2, 2), n, dimnames = list(NULL, c("a", "b", "c")))
  y <- sin(1.5 * x[, "a"]) + 0.5 * x[, "b"] + rnorm(n, sd = 0.1)
  ctl <- mfsvr_control(tol = 1e-10)
  w <- c(0.7, 1.5, 4)
  fd <- function(at, lw, h = 1e-5) {
    vapply(seq_along(lw), function(c) {
      step <- replace(numeric(length(lw)), c, h)
      (at(lw + step)$log_evidence - at(lw - step)$log_evidence) / (2 * h)
    }, numeric(1))
  }
  for (nu in c(0.5, 1.5, 2.5)) {
    # mfsvr(): a width per input, on the dense prior and on inducing inputs
    for (z in list(NULL, x[seq(1, n, by = 4), ])) {
      at <- function(lw) {
        ep_evidence(x, y, kernel = matern_kernel(nu, exp(lw), per_input = TRUE), control = ctl,
                    inducing = z)
      }
      e <- at(log(w))
      expect_equal(unname(e$gradient[3:5]), fd(at, log(w)), tolerance = 1e-6,
                   label = sprintf("nu = %g, inducing %s", nu, !is.null(z)))
    }
    # one width: the entries' sum
    one <- function(lw) ep_evidence(x, y, kernel = matern_kernel(nu, exp(lw)), control = ctl)
    expect_equal(one(log(1.2))$gradient[["log_sigma"]], fd(one, log(1.2)), tolerance = 1e-6)
    # the TAP classifier's
    labels <- ifelse(y > median(y), 1, -1)
    tap <- function(lw) {
      gctl <- gpsvm:::.resolve_control(gpc_control(tol = 1e-12, max_iter = 5000), "tap")
      model <- list(kernel = matern_kernel(nu, 1), noise = 0.2, kappa = 0, inducing = NULL)
      gpsvm:::cpp_gpc_tap_fit(model, sweep(x, 2L, exp(lw), "/"), labels, unclass(gctl), list(),
                              TRUE)
    }
    expect_equal(tap(log(w))$per_input_gradient, fd(tap, log(w)), tolerance = 1e-6)
  }
})

test_that("every model takes Matern kernels, a width per input as inputs divided by hand", {
  set.seed(5)
  n <- 60
  x <- matrix(runif(n * 2, -2, 2), n, dimnames = list(NULL, c("a", "b")))
  y <- sin(1.5 * x[, "a"]) + 0.3 * x[, "b"] + rnorm(n, sd = 0.1)
  w <- c(0.8, 3)
  xd <- sweep(x, 2L, w, "/")
  xn <- x[1:5, ] + 0.05
  k <- matern_kernel(2.5, w, per_input = TRUE)
  k1 <- matern_kernel(2.5, 1)
  for (fitter in list(mfsvr, svr, rvm, srvm)) {
    a <- fitter(x, y, kernel = k, scale = FALSE, calibration_folds = 0)
    b <- fitter(xd, y, kernel = k1, scale = FALSE, calibration_folds = 0)
    expect_equal(unname(predict(a, xn)), unname(predict(b, sweep(xn, 2L, w, "/"))),
                 tolerance = 1e-7)
    expect_true(is.finite(logLik(a)))
  }
  labels <- factor(ifelse(y > median(y), "hi", "lo"))
  a <- gpc(x, labels, kernel = k, noise = 0.1, scale = FALSE)
  b <- gpc(xd, labels, kernel = k1, noise = 0.1, scale = FALSE)
  expect_equal(predict(a, xn, type = "prob"), predict(b, sweep(xn, 2L, w, "/"), type = "prob"),
               tolerance = 1e-7)
  a <- svc(x, labels, kernel = k, scale = FALSE)
  b <- svc(xd, labels, kernel = k1, scale = FALSE)
  expect_equal(predict(a, xn, type = "link"), predict(b, sweep(xn, 2L, w, "/"), type = "link"),
               tolerance = 1e-7)
  # srvm()'s roughness penalty needs the derivative of its order
  expect_error(srvm(x, y, kernel = matern_kernel(1.5)), "'penalty' of order 2 is past")
  expect_error(srvm(x, y, kernel = matern_kernel(0.5), penalty = roughness_penalty(1)),
               "not differentiable")
})

test_that("the searches choose Matern widths by the evidence", {
  skip_on_cran()
  set.seed(6)
  n <- 80
  x <- matrix(runif(n * 3, -2, 2), n, dimnames = list(NULL, c("a", "b", "c")))
  y <- sin(1.5 * x[, "a"]) + rnorm(n, sd = 0.1)
  fit <- mfsvr(x, y, kernel = matern_kernel(2.5, per_input = TRUE), optimize = TRUE)
  widths <- gpsvm:::.input_widths(fit$kernel)
  # the irrelevant inputs get the wider widths, and the search converged
  expect_gt(min(widths[c("b", "c")]), 3 * widths[["a"]])
  expect_true(fit$optimization$convergence$converged)
  expect_identical(fit$kernel$type, "matern")
  labels <- factor(y > 0)
  clf <- gpc(x, labels, kernel = matern_kernel(1.5))
  expect_true("sigma" %in% names(clf$optimization$estimate))
  expect_identical(clf$kernel$type, "matern")
})

test_that("predictions' derivatives on a Matern kernel match differences of the mean", {
  set.seed(7)
  x <- seq(-3, 3, length.out = 50)
  y <- sin(x) + rnorm(50, sd = 0.1)
  z <- c(-1.3, 0.2, 2.1)
  h <- 1e-5
  for (nu in c(1.5, 2.5)) {
    for (fitter in list(mfsvr, rvm)) {
      fit <- fitter(x, y, kernel = matern_kernel(nu))
      for (order in seq_len(nu - 0.5)) {
        got <- predict(fit, z, deriv = order, se.fit = TRUE)
        fd <- (predict(fit, z + h, deriv = order - 1) - predict(fit, z - h, deriv = order - 1)) /
          (2 * h)
        expect_equal(got$fit, fd, tolerance = 1e-5)
        expect_true(all(got$se.fit > 0 & is.finite(got$se.fit)))
      }
      expect_error(predict(fit, z, deriv = nu + 0.5), "past the smoothness")
    }
  }
  # the derivative's variance under the prior: a^2 / (3 sigma^2) for nu = 5/2
  # (-k''(0)), which a fit far from its data returns
  fit <- mfsvr(x, y, kernel = matern_kernel(2.5, 0.5), scale = FALSE, C = 5)
  far <- predict(fit, 1e3, deriv = 1, se.fit = TRUE)
  expect_equal(far$se.fit, sqrt(5 / (3 * 0.5^2)), tolerance = 1e-10)
})

test_that("the default kernel choice weighs the Matern kernels beside the Gaussian one", {
  skip_on_cran()
  # a rough response: Brownian motion sampled at 120 points, with noise
  set.seed(8)
  x <- sort(runif(120, 0, 10))
  y <- cumsum(c(0, rnorm(119, sd = sqrt(diff(x))))) + rnorm(120, sd = 0.1)
  for (fitter in list(mfsvr, svr)) {
    fit <- fitter(x, y, calibration_folds = 0)
    choice <- fit$kernel_choice
    matern <- startsWith(choice$rule, "Matern")
    expect_true(any(matern))
    # the winner is the one of highest evidence, and the Matern widths are the
    # Gaussian winner's carried over by sqrt(5/3) and sqrt(3)
    expect_identical(fit$kernel$type, "matern")
    expect_equal(choice$log_evidence[gpsvm:::.chosen_candidate(fit)], max(choice$log_evidence))
    gaussian <- choice$sigma[choice$rule == "sigest"]
    expect_equal(choice$sigma[choice$rule == "Matern 5/2, sigest"], sqrt(5 / 3) * gaussian)
    expect_output(print(fit), "kernel: Matern")
  }
  # a smooth response keeps the Gaussian kernel, one Matern fit weighed
  y2 <- sin(x) + rnorm(120, sd = 0.05)
  fit <- mfsvr(x, y2, calibration_folds = 0)
  expect_identical(fit$kernel$type, "rbf")
  expect_equal(sum(startsWith(fit$kernel_choice$rule, "Matern")), 1L)
  # a kernel given stays in its family
  given <- mfsvr(x, y, kernel = rbf_kernel(), calibration_folds = 0)
  expect_false(any(startsWith(given$kernel_choice$rule %||% "", "Matern")))
  expect_identical(given$kernel$type, "rbf")
})

test_that("a hand-edited Matern fit is refused before it is used", {
  fit <- mfsvr(dist ~ speed, data = cars, kernel = matern_kernel(1.5), calibration_folds = 0)
  bad <- fit
  bad$kernel$nu <- 2
  expect_error(predict(bad, cars[1:2, ]), "nu.*must be 0.5, 1.5 or 2.5")
  bad <- fit
  bad$kernel$sigma <- -1
  expect_error(predict(bad, cars[1:2, ]), "sigma")
})
