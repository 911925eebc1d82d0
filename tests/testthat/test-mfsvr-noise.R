# mfsvr(noise = ): the tube's noise scale exp(l(x)) (C exp(-l), epsilon
# exp(l)) against independent references: the EP evidence's gradient in the
# noise weights by central finite differences, a constant shift of l as the
# constant model at the shifted C and epsilon, the predictive distribution at
# each input as the core's epsilon-insensitive predictive at that input's own
# C and epsilon, the Laplace evidence written out, and constant-noise data
# keeping the constant fit.

mf_het_data <- function(n, seed = 1) {
  set.seed(seed)
  x <- sort(runif(n, 0, 10))
  s <- 0.1 + 0.09 * x  # noise sd from 0.1 to 1
  list(x = x, y = 2 * sin(x) + rnorm(n, sd = s), sd = s)
}

# The fit's pieces in model units: y scaled, the noise basis B at the
# training rows and its prior precision P (as R/rvm-noise.R assembles
# them), and each row's log noise scale l (half the log variance factor).
mf_noise_pieces <- function(fit) {
  nm <- fit$noise_model
  B <- kernel_matrix(nm$kernel, fit$x, nm$centres)
  P <- kernel_matrix(nm$kernel, nm$centres, nm$centres) / nm$prior_variance
  diag(P) <- diag(P) * (1 + 1e-8)
  list(y = (fit$y - fit$response_scaling$center) / fit$response_scaling$scale,
       B = B, P = P, l = drop(B %*% nm$theta + nm$offset) / 2)
}

# The EP fit at per-row log noise scales l (the core's, as the R layer calls it).
mf_fit_at <- function(fit, pc, l, C = fit$C, epsilon = fit$epsilon) {
  ctl <- unclass(fit$control)  # (resolved for these rows)
  ctl$rank_tol <- 0
  ctl$log_noise_scale <- l
  gpsvm:::cpp_mfsvr_fit(fit$kernel, fit$x, pc$y, C, epsilon, ctl, TRUE)
}

test_that("the evidence's gradient in the noise weights matches central differences", {
  d <- mf_het_data(test_size(80, 50))
  fit <- mfsvr(d$x, d$y, noise = "varying", calibration_folds = 0)
  expect_identical(fit$noise_model$type, "varying")
  pc <- mf_noise_pieces(fit)
  # away from the mode, so that the gradient is not near 0
  set.seed(3)
  theta <- rnorm(ncol(pc$B), sd = 0.3)
  l <- pc$l + drop(pc$B %*% theta)
  at <- mf_fit_at(fit, pc, l)
  analytic <- drop(crossprod(pc$B, at$row_gradient))
  h <- 1e-4
  numeric <- vapply(seq_len(ncol(pc$B)), function(j) {
    (mf_fit_at(fit, pc, l + h * pc$B[, j])$log_evidence -
       mf_fit_at(fit, pc, l - h * pc$B[, j])$log_evidence) / (2 * h)
  }, numeric(1))
  expect_gt(max(abs(analytic)), 0.1)
  expect_equal(analytic, numeric, tolerance = 1e-4)
  # and in the level a: the sum of the rows' gradients
  level <- (mf_fit_at(fit, pc, l + h)$log_evidence - mf_fit_at(fit, pc, l - h)$log_evidence) / (2 * h)
  expect_equal(sum(at$row_gradient), level, tolerance = 1e-4)
  # each row's curvature (cavity held) against a difference of its gradient
  # from the site's log normaliser at that cavity (the core's predictive
  # density is the tilted normaliser), written out in l
  logz <- function(i, li) {
    gpsvm:::cpp_epsins_log_density(pc$y[i], at$cavity_mean[i], at$cavity_var[i],
                                   fit$C * exp(-li), fit$epsilon * exp(li))
  }
  for (i in c(1L, 17L, length(l))) {
    g_i <- (logz(i, l[i] + h) - logz(i, l[i] - h)) / (2 * h)
    c_i <- (logz(i, l[i] + h) - 2 * logz(i, l[i]) + logz(i, l[i] - h)) / h^2
    expect_equal(at$row_gradient[i], g_i, tolerance = 1e-6)
    expect_equal(at$row_curvature[i], c_i, tolerance = 1e-3)
  }
})

test_that("a constant noise scale is the constant model at the stretched C and epsilon", {
  d <- mf_het_data(40, seed = 2)
  fit <- mfsvr(d$x, d$y, noise = "varying", calibration_folds = 0)
  pc <- mf_noise_pieces(fit)
  n <- length(pc$y)
  for (shift in c(0, -0.7, 1.3)) {
    rows <- mf_fit_at(fit, pc, rep(shift, n))
    plain <- gpsvm:::cpp_mfsvr_fit(fit$kernel, fit$x, pc$y, fit$C * exp(-shift),
                                   fit$epsilon * exp(shift),
                                   modifyList(unclass(fit$control), list(rank_tol = 0)), FALSE)
    expect_equal(rows$log_evidence, plain$log_evidence, tolerance = 1e-10)
    expect_equal(rows$mean, plain$mean, tolerance = 1e-10)
  }
})

test_that("the Laplace evidence over the noise function is assembled as written", {
  d <- mf_het_data(60, seed = 4)
  fit <- mfsvr(d$x, d$y, noise = "varying", calibration_folds = 0)
  pc <- mf_noise_pieces(fit)
  nm <- fit$noise_model
  at <- mf_fit_at(fit, pc, pc$l)
  # l = a + B theta_l with theta_l half the stored log-variance weights
  theta <- nm$theta / 2
  J <- cbind(1, pc$B)
  info <- crossprod(J, pmax(-at$row_curvature, 0) * J)
  Fs <- info[-1, -1] - tcrossprod(info[-1, 1]) / info[1, 1]
  occam <- as.numeric(determinant(pc$P + Fs)$modulus - determinant(pc$P)$modulus)
  laplace <- at$log_evidence - sum(theta * (pc$P %*% theta)) / 2 - occam / 2
  expect_equal(nm$log_evidence[["varying"]], laplace, tolerance = 1e-6)
  # the mode: the log posterior's gradient in theta vanishes there
  g <- drop(crossprod(pc$B, at$row_gradient)) - drop(pc$P %*% theta)
  expect_lt(max(abs(g)), 0.05 * max(abs(drop(crossprod(pc$B, at$row_gradient)))) + 0.05)
  # the constant model's evidence: the constant fit at the same C, epsilon
  const <- mfsvr(d$x, d$y, calibration_folds = 0)
  expect_equal(nm$log_evidence[["constant"]], const$log_evidence, tolerance = 1e-6)
})

test_that("predictions use each input's own C and epsilon", {
  d <- mf_het_data(test_size(120, 60), seed = 5)
  fit <- mfsvr(d$x, d$y, noise = "varying", calibration_folds = 0)
  new <- c(0.3, 4.2, 9.7)
  p <- predict(fit, new, interval = "prediction", level = 0.9, se.fit = TRUE)
  z <- matrix((new - fit$scaling$center) / fit$scaling$scale)
  nm <- fit$noise_model
  l <- drop(kernel_matrix(nm$kernel, z, nm$centres) %*% nm$theta + nm$offset) / 2
  s <- fit$response_scaling
  m <- (p$fit[, "fit"] - s$center) / s$scale
  v <- (p$se.fit / s$scale)^2
  for (i in seq_along(new)) {
    q <- gpsvm:::cpp_epsins_quantile(c(0.05, 0.95), rep(m[i], 2), rep(v[i], 2),
                                     fit$C * exp(-l[i]), fit$epsilon * exp(l[i]))
    expect_equal(unname(p$fit[i, c("lwr", "upr")]), s$center + s$scale * q, tolerance = 1e-8)
  }
  # the widths follow the noise: the noisy end's interval is wider
  w <- p$fit[, "upr"] - p$fit[, "lwr"]
  expect_gt(w[3] / w[1], 2)
  # the distribution: quantiles are the interval ends, its CDF there the
  # level, its density integrates to 1
  dist <- predict(fit, new, type = "distribution")
  expect_equal(unname(quantile(dist, 0.05)[, 1]), unname(p$fit[, "lwr"]), tolerance = 1e-8)
  expect_equal(unname(predictive_cdf(dist, p$fit[, "upr"])), rep(0.95, 3), tolerance = 1e-8)
  for (i in c(1L, 3L)) {
    mass <- stats::integrate(function(t) density(dist[rep(i, length(t))], t),
                             -Inf, Inf, rel.tol = 1e-9)$value
    expect_equal(mass, 1, tolerance = 1e-6)
  }
})

test_that("the noise sd's ratio is recovered and the plan and print say which noise", {
  d <- mf_het_data(test_size(200, 120), seed = 6)
  fit <- mfsvr(d$x, d$y, noise = "auto", calibration_folds = 0)
  expect_identical(fit$noise_model$type, "varying")
  scale <- sqrt(gpsvm:::.noise_factor(fit, fit$x))
  ratio <- scale[length(scale)] / scale[1]
  truth <- d$sd[length(d$sd)] / d$sd[1]
  expect_gt(ratio, truth / 1.6)
  expect_lt(ratio, truth * 1.6)
  expect_match(paste(capture.output(print(fit)), collapse = " "), "varying with the inputs")
  expect_match(fit$plan$choice[fit$plan$step == "noise"], "varying")
})

test_that("noise = \"auto\" keeps the constant fit on constant noise (mfsvr() and svr())", {
  set.seed(7)
  x <- sort(runif(test_size(100, 60), 0, 10))
  y <- sin(x) + rnorm(length(x), sd = 0.3)
  for (model in list(mfsvr, svr)) {
    const <- model(x, y, calibration_folds = 0)
    auto <- model(x, y, noise = "auto", calibration_folds = 0)
    expect_identical(auto$noise_model$type, "constant")
    new <- seq(0, 10, length.out = 7)
    expect_identical(predict(auto, new, interval = "prediction"),
                     predict(const, new, interval = "prediction"))
    expect_match(paste(capture.output(print(auto)), collapse = " "), "constant noise")
    expect_match(paste(capture.output(print(const)), collapse = " "), "; constant noise")
  }
})

# (calibration refits keep the noise function: test-svr-noise.R, for both models)

test_that("bad noise arguments and hand-edited noise models are errors", {
  d <- mf_het_data(30, seed = 9)
  expect_error(mfsvr(d$x, d$y, noise = "hetero"), "'noise'")
  expect_error(mfsvr(d$x, d$y, noise = NA), "'noise'")
  expect_error(mfsvr(d$x, d$y, noise = "varying", inducing = 5), "inducing")
  fit <- mfsvr(d$x, d$y, noise = "varying", calibration_folds = 0)
  bad <- fit
  bad$noise_model$theta[1] <- NaN
  expect_error(predict(bad, 1, interval = "prediction"), "noise_model")
  bad <- fit
  bad$noise_model$centres <- bad$noise_model$centres[-1, , drop = FALSE]
  expect_error(predict(bad, 1), "noise_model")
  # four rows, two of them duplicated inputs: a finite fit
  tiny <- mfsvr(c(1, 1, 2, 3), c(0.1, 0.3, 1, 0.2), noise = "varying", calibration_folds = 0)
  expect_true(all(is.finite(predict(tiny, c(1, 2.5), interval = "prediction"))))
})

test_that("confint() and evidence_curve() refuse a varying-noise fit; update() keeps C epsilon", {
  d <- mf_het_data(test_size(80, 50), seed = 10)
  fit <- mfsvr(d$x, d$y, noise = "varying", C = 2, epsilon = 0.1, calibration_folds = 0)
  expect_error(confint(fit), "noise = \"varying\"")
  expect_error(evidence_curve(fit, C = c(1, 2)), "noise = \"varying\"")
  # the fitted level absorbs the tube's scale: C epsilon is what was given
  expect_equal(fit$C * fit$epsilon, 2 * 0.1, tolerance = 1e-8)
  refit <- update(fit, C = 8)
  expect_equal(refit$C * refit$epsilon, 8 * 0.1, tolerance = 1e-8)
  # the constant fit's confint() still answers
  expect_true(is.matrix(confint(mfsvr(d$x, d$y, optimize = "C", calibration_folds = 0))))
})
