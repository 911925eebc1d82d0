# rvm(noise = ): the noise variance sigma^2 exp(h(x)) against plain-R
# references: the heteroscedastic posterior and its Gaussian evidence, the
# Laplace evidence over the noise function with the Fisher information
# written out, stationarity by central finite differences, leave-one-out by
# refitting, and constant-noise data keeping the constant fit.

het_data <- function(n, seed = 1) {
  set.seed(seed)
  x <- sort(runif(n, 0, 10))
  s <- 0.1 + 0.9 * (x / 10)^2
  list(x = x, y = 2 * sin(x) + rnorm(n, sd = s), sd = s)
}

# The fit's pieces in model units: the kept design Phi, the row noise
# variances, the noise basis B at the training rows and its prior precision
# P (as R/rvm-noise.R assembles them).
noise_pieces <- function(fit) {
  nm <- fit$noise_model
  y <- (fit$y - fit$response_scaling$center) / fit$response_scaling$scale
  phi <- gpsvm:::.rvm_design(fit$x, fit$kernel, fit$relevance_vectors)
  B <- kernel_matrix(nm$kernel, fit$x, nm$centres)
  P <- kernel_matrix(nm$kernel, nm$centres, nm$centres) / nm$prior_variance
  diag(P) <- diag(P) * (1 + 1e-8)
  list(y = y, phi = phi, B = B, P = P, alpha = unname(fit$prior_precision),
       eta = drop(B %*% nm$theta), log_level = log(fit$noise_variance) + nm$offset)
}

# log N(y; 0, Phi A^-1 Phi' + diag(exp(log_level + eta))), written out.
het_evidence_r <- function(pc, eta, log_level = pc$log_level) {
  C <- pc$phi %*% (t(pc$phi) / pc$alpha) + diag(exp(log_level + eta), length(pc$y))
  R <- chol(C)
  -sum(log(diag(R))) - sum(backsolve(R, pc$y, transpose = TRUE)^2) / 2 -
    length(pc$y) * log(2 * pi) / 2
}

test_that("the varying-noise posterior and its Laplace evidence match plain R", {
  skip_on_cran()
  d <- het_data(80)
  fit <- rvm(d$x, d$y, noise = "varying", calibration_folds = 0)
  expect_identical(fit$noise_model$type, "varying")
  pc <- noise_pieces(fit)
  # the weights' posterior under row noise variances s_i
  s <- exp(pc$log_level + pc$eta)
  Sigma <- solve(diag(pc$alpha, length(pc$alpha)) + crossprod(pc$phi / s, pc$phi))
  expect_equal(unname(fit$Sigma), Sigma, tolerance = 1e-6)
  expect_equal(unname(fit$coefficients), drop(Sigma %*% crossprod(pc$phi, pc$y / s)),
               tolerance = 1e-6)
  # the row noise the methods read
  expect_equal(unname(gpsvm:::.rvm_row_noise(fit)), s, tolerance = 1e-10)
  # Laplace over theta with log sigma^2 profiled: the Fisher information
  # 1/2 tr(C^-1 dC_j C^-1 dC_k) in (log sigma^2, theta), its Schur complement
  n <- length(pc$y)
  C <- pc$phi %*% (t(pc$phi) / pc$alpha) + diag(s, n)
  Ci <- solve(C)
  J <- cbind(1, pc$B)
  dC <- lapply(seq_len(ncol(J)), function(j) diag(s * J[, j], n))
  info <- outer(seq_len(ncol(J)), seq_len(ncol(J)), Vectorize(function(j, k) {
    sum(diag(Ci %*% dC[[j]] %*% Ci %*% dC[[k]])) / 2
  }))
  Fs <- info[-1, -1] - tcrossprod(info[-1, 1]) / info[1, 1]
  theta <- fit$noise_model$theta
  laplace <- het_evidence_r(pc, pc$eta) - sum(theta * (pc$P %*% theta)) / 2 -
    (determinant(pc$P + Fs)$modulus - determinant(pc$P)$modulus) / 2
  expect_equal(fit$noise_model$log_evidence[["varying"]], as.numeric(laplace), tolerance = 1e-6)
  # the evidence function confint() and the t's degrees of freedom read
  ev <- gpsvm:::.rvm_evidence_function(fit)
  at <- ev(pc$alpha, fit$noise_variance, 0, fit$kernel$sigma, rep(FALSE, length(pc$alpha)),
           "noise_variance")
  expect_equal(at$value, het_evidence_r(pc, pc$eta), tolerance = 1e-8)
})

test_that("the noise function is at a stationary point of its posterior (central differences)", {
  skip_on_cran()
  d <- het_data(80, seed = 3)
  fit <- rvm(d$x, d$y, noise = "varying", calibration_folds = 0)
  pc <- noise_pieces(fit)
  theta <- fit$noise_model$theta
  objective <- function(th) {
    het_evidence_r(pc, drop(pc$B %*% th)) - sum(th * (pc$P %*% th)) / 2
  }
  h <- 1e-5
  grad <- vapply(seq_along(theta), function(j) {
    e <- replace(numeric(length(theta)), j, h)
    (objective(theta + e) - objective(theta - e)) / (2 * h)
  }, numeric(1))
  grad0 <- vapply(seq_along(theta), function(j) {
    e <- replace(numeric(length(theta)), j, h)
    (objective(e) - objective(-e)) / (2 * h)
  }, numeric(1))
  # the Newton step the gradient left would move the log noise by < 1%, where
  # at theta = 0 the gradient is large
  hess <- vapply(seq_along(theta), function(j) {
    e <- replace(numeric(length(theta)), j, 1e-4)
    vapply(seq_along(theta), function(k) {
      f <- replace(numeric(length(theta)), k, 1e-4)
      (objective(theta + e + f) - objective(theta + e - f) - objective(theta - e + f) +
         objective(theta - e - f)) / 4e-8
    }, numeric(1))
  }, numeric(length(theta)))
  step <- solve(-hess, grad)
  expect_lt(max(abs(pc$B %*% step)), 0.02)
  expect_gt(sqrt(sum(grad0^2)), 100 * sqrt(sum(grad^2)))
})

test_that("noise = 'auto' keeps the constant fit on constant-noise data and finds varying noise", {
  skip_on_cran()
  set.seed(2)
  x <- seq(0, 10, length.out = 120)
  y <- sin(x) + rnorm(120, sd = 0.3)
  auto <- rvm(x, y, noise = "auto", calibration_folds = 0)
  constant <- rvm(x, y, calibration_folds = 0)
  expect_identical(auto$noise_model$type, "constant")
  expect_lt(diff(auto$noise_model$log_evidence), 0)
  new <- c(-1, 2.5, 7, 11)
  expect_equal(predict(auto, new, interval = "prediction"),
               predict(constant, new, interval = "prediction"), tolerance = 1e-12)
  expect_equal(auto$log_evidence, constant$log_evidence, tolerance = 1e-12)
  plan <- gpsvm_plan(auto)
  expect_identical(plan$choice[plan$step == "noise"], "constant")
  expect_match(plan$by[plan$step == "noise"], "the evidence")
  expect_identical(gpsvm_plan(constant)$choice[gpsvm_plan(constant)$step == "noise"], "constant")
  # forced to vary, the noise function stays near flat on these data
  forced <- rvm(x, y, noise = "varying", calibration_folds = 0)
  f <- gpsvm:::.noise_factor(forced, forced$x)
  expect_lt(max(f) / min(f), 2)

  d <- het_data(150, seed = 4)
  het <- rvm(d$x, d$y, noise = "auto", calibration_folds = 0)
  expect_identical(het$noise_model$type, "varying")
  expect_output(print(het), "noise variance varying with the inputs")
  expect_output(print(constant), "constant noise")
  # the fitted noise sd at the quiet and the loud end against the truth
  fitted_sd <- sqrt(het$noise_variance * gpsvm:::.noise_factor(het, het$x)) *
    het$response_scaling$scale
  ends <- c(which.min(abs(d$x - 1.5)), which.min(abs(d$x - 8.5)))
  ratio <- (fitted_sd[ends[2]] / fitted_sd[ends[1]]) / (d$sd[ends[2]] / d$sd[ends[1]])
  expect_gt(ratio, 1 / 1.6)
  expect_lt(ratio, 1.6)
})

test_that("intervals, the distribution and scores use the noise at the new inputs", {
  d <- het_data(100, seed = 5)
  fit <- rvm(d$x, d$y, noise = "varying", calibration_folds = 0)
  new <- c(1, 5, 9)
  p <- predict(fit, new, interval = "prediction", se.fit = TRUE)
  width <- p$fit[, "upr"] - p$fit[, "lwr"]
  expect_true(all(diff(width) > 0))
  # the model's own t interval: level, mean and scale written out
  noise <- gpsvm:::.rvm_target_noise(fit)
  s_y <- fit$response_scaling$scale
  z <- gpsvm:::.scale_inputs(matrix(new), fit$scaling)
  scale <- sqrt((p$se.fit / s_y)^2 + noise$variance * gpsvm:::.noise_factor(fit, z))
  expect_equal(unname(width), unname(2 * qt(0.975, noise$df) * scale * s_y), tolerance = 1e-8)
  dist <- predict(fit, new, type = "distribution")
  q <- quantile(dist, c(0.025, 0.975))
  expect_equal(unname(q[, 1]), unname(p$fit[, "lwr"]), tolerance = 1e-8)
  expect_equal(unname(q[, 2]), unname(p$fit[, "upr"]), tolerance = 1e-8)
  # a subset of the rows keeps each row's own noise
  expect_equal(unname(quantile(dist[2:3], 0.975)[, 1]), unname(p$fit[2:3, "upr"]), tolerance = 1e-8)
})

test_that("leave-one-out moments with row noise match refits at fixed hyperparameters", {
  d <- het_data(40, seed = 6)
  fit <- rvm(d$x, d$y, noise = "varying", calibration_folds = 0)
  pc <- noise_pieces(fit)
  s <- exp(pc$log_level + pc$eta)
  loo <- gpsvm:::.loo_moments(fit)
  for (i in c(1, 17, 40)) {
    keep <- -i
    S <- solve(diag(pc$alpha, length(pc$alpha)) + crossprod(pc$phi[keep, ] / s[keep], pc$phi[keep, ]))
    m <- S %*% crossprod(pc$phi[keep, ], pc$y[keep] / s[keep])
    expect_equal(loo$mean[i], sum(pc$phi[i, ] * m), tolerance = 1e-8)
    expect_equal(loo$var[i], drop(pc$phi[i, ] %*% S %*% pc$phi[i, ]), tolerance = 1e-8)
  }
})

test_that("edge cases: tiny data, duplicated inputs, several inputs, bad arguments", {
  tiny <- rvm(c(1, 2, 3, 4), c(1.1, 1.9, 3.2, 3.9), noise = "auto", calibration_folds = 0)
  expect_true(tiny$noise_model$type %in% c("constant", "varying"))
  expect_true(all(is.finite(predict(tiny, 2.5, interval = "prediction"))))
  set.seed(7)
  x <- rep(seq(0, 5, length.out = 15), each = 3)
  y <- cos(x) + rnorm(45, sd = 0.05 + 0.1 * x)
  dup <- rvm(x, y, noise = "varying", calibration_folds = 0)
  expect_true(all(is.finite(predict(dup, c(0.5, 4.5), interval = "prediction"))))
  expect_true(is.finite(dup$noise_model$log_evidence[["varying"]]))
  set.seed(8)
  X <- matrix(runif(120), 60, 2)
  yy <- X[, 1] - X[, 2] + rnorm(60, sd = 0.02 + 0.3 * X[, 1])
  two <- rvm(X, yy, noise = "auto", calibration_folds = 0)
  expect_true(all(is.finite(predict(two, X[1:3, ], interval = "prediction"))))
  expect_error(rvm(x, y, noise = "vary"), "'noise' must be")
  expect_error(rvm(x, y, noise = c("auto", "constant")), "'noise' must be")
  broken <- unclass(dup)
  broken$noise_model$theta <- broken$noise_model$theta[-1]
  class(broken) <- class(dup)
  expect_error(predict(broken, 1, interval = "prediction"), "noise_model")
})

test_that("the calibrated default refits choose the noise again", {
  skip_on_cran()
  d <- het_data(test_size(150, 90), seed = 9)
  fit <- rvm(d$x, d$y, noise = "auto")
  expect_identical(fit$noise_model$type, "varying")
  expect_false(is.null(fit$interval_calibration))
  p <- predict(fit, c(1, 9), interval = "prediction")
  expect_lt(p[1, "upr"] - p[1, "lwr"], (p[2, "upr"] - p[2, "lwr"]) / 2)
})

test_that("noise = 'auto' needs a log Bayes factor above 3 for varying noise", {
  skip_on_cran()
  # cars: constant noise by most accounts, yet rvm()'s varying model has
  # the higher evidence on the full set (by less than 3 nats): the constant
  # fit stays, identical to noise = "constant"
  for (model in list(rvm, mfsvr, svr)) {
    auto <- model(dist ~ speed, cars, noise = "auto", calibration_folds = 0)
    constant <- model(dist ~ speed, cars, noise = "constant", calibration_folds = 0)
    varying <- model(dist ~ speed, cars, noise = "varying", calibration_folds = 0)
    # the Bayes factor auto weighs is that of the two fits made apart (not
    # for mfsvr(), whose constant side has its mean's amplitude profiled as
    # the varying side does, see ?mfsvr)
    bf <- unname(diff(auto$noise_model$log_evidence))
    searched <- c(logLik(varying)) - c(logLik(constant))
    if (isTRUE(auto$noise_model$screened)) {
      # "auto" stopped at Newton's first step: its prediction below the
      # screen, and the search it skipped keeps constant noise too
      expect_lt(bf, gpsvm:::.rvm_noise_settings$screen_log_bf)
      if (!inherits(auto, "gpsvm_mfsvr")) expect_lt(searched, 3)
    } else if (!inherits(auto, "gpsvm_mfsvr")) {
      expect_equal(bf, searched, tolerance = 1e-6)
    }
    # (the case the threshold decides: positive, below 3)
    if (inherits(auto, "gpsvm_rvm")) expect_true(bf > 0 && bf < 3)
    # (rvm()'s choice reads the factor on the constant fit's relevance
    # vectors, tested below; on cars it is as small)
    bf <- gpsvm:::.noise_log_bf(auto$noise_model)
    expect_identical(auto$noise_model$type, if (bf > 3) "varying" else "constant")
    reference <- if (bf > 3) varying else constant
    expect_equal(predict(auto, data.frame(speed = c(5, 15, 25)), interval = "prediction"),
                 predict(reference, data.frame(speed = c(5, 15, 25)), interval = "prediction"), tolerance = 1e-10)
  }
})

# Friedman's first function (mlbench::mlbench.friedman1(), written out):
# ten uniform inputs, five of them used, noise sd 1 -- constant noise.
friedman1 <- function(n) {
  x <- matrix(runif(10 * n), ncol = 10)
  y <- 10 * sin(pi * x[, 1] * x[, 2]) + 20 * (x[, 3] - 0.5)^2 + 10 * x[, 4] + 5 * x[, 5] + rnorm(n)
  data.frame(x, y = y)
}

# The fifth and the third of ten draws of 130 rows (a 91-row training split
# each) where the varying model's evidence exceeds the constant one's by
# more than 3 although the noise is constant (held-out log score 0.80 and
# 2.2 worse with the varying fit).
friedman_draws <- function() {
  set.seed(20261202)
  draws <- list()
  for (r in 1:5) {
    d <- friedman1(130)
    draws[[r]] <- d[sample(nrow(d), 91), ]
  }
  draws
}

test_that("noise = 'auto' judges the noise on the constant fit's relevance vectors", {
  skip_on_cran()
  d <- friedman_draws()[[5]]
  auto <- rvm(y ~ ., d, noise = "auto", calibration_folds = 0)
  constant <- rvm(y ~ ., d, calibration_folds = 0)
  varying <- rvm(y ~ ., d, noise = "varying", calibration_folds = 0)
  nm <- auto$noise_model
  # the full varying fit's Bayes factor would choose it...
  full_bf <- c(logLik(varying)) - c(logLik(constant))
  expect_equal(unname(diff(nm$log_evidence)), full_bf, tolerance = 1e-6)
  expect_gt(full_bf, 3)
  # ...but it re-chose the basis: more relevance vectors than the constant fit
  expect_gt(length(varying$relevance_vectors), length(constant$relevance_vectors))
  # held to the constant fit's relevance vectors, the constant side is that
  # fit again (the same basis functions are on offer) and the factor is small
  # (in the model's units: the scaled response)
  expect_equal(nm$basis_log_evidence[["constant"]], constant$log_evidence, tolerance = 1e-6)
  expect_lt(diff(nm$basis_log_evidence), 3)
  expect_identical(nm$type, "constant")
  new <- d[1:5, ]
  expect_equal(predict(auto, new, interval = "prediction"),
               predict(constant, new, interval = "prediction"), tolerance = 1e-12)
  expect_match(gpsvm_plan(auto)$by[gpsvm_plan(auto)$step == "noise"],
               "on the constant fit's relevance vectors")
})

test_that("noise = 'auto' does not trust a Bayes factor against a fit that nearly interpolates", {
  skip_on_cran()
  d <- friedman_draws()[[3]]
  expect_warning(auto <- rvm(y ~ ., d, noise = "auto", calibration_folds = 0), "nearly interpolates")
  nm <- auto$noise_model
  expect_gt(diff(nm$basis_log_evidence), 3)
  expect_identical(nm$type, "constant")
  # effective parameters, the trace of the hat matrix Phi Sigma Phi' / the
  # row noise written out: more than half the rows in the constant fit and
  # in the varying one (which the noise model names)
  effective <- function(fit) {
    phi <- cbind(1, kernel_matrix(fit$kernel, fit$x, fit$x[fit$relevance_vectors, , drop = FALSE]))
    nm <- fit$noise_model
    row_noise <- fit$noise_variance * if (identical(nm$type, "varying")) {
      exp(drop(kernel_matrix(nm$kernel, fit$x, nm$centres) %*% nm$theta) + nm$offset)
    } else 1
    sum(diag(phi %*% fit$Sigma %*% t(phi)) / row_noise)
  }
  varying <- suppressWarnings(rvm(y ~ ., d, noise = "varying", calibration_folds = 0))
  expect_identical(varying$noise_model$type, "varying")  # asked for, it is still given
  expect_gt(effective(auto), nrow(d) / 2)
  expect_gt(effective(varying), nrow(d) / 2)
  expect_match(nm$interpolates, sprintf("%.3g effective parameters", effective(varying)), fixed = TRUE)
  expect_output(print(auto), "not trusted: a fit nearly interpolates")
  expect_match(gpsvm_plan(auto)$by[gpsvm_plan(auto)$step == "noise"], "not trusted")
  # hand-edited, the two new fields are clear errors
  bad <- auto
  bad$noise_model$interpolates <- 3
  expect_error(predict(bad, d[1:2, ]), "noise_model")
  bad <- auto
  bad$noise_model$basis_log_evidence <- "7"
  expect_error(predict(bad, d[1:2, ]), "noise_model")
})
