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
  # (the fit is on y over the mean's amplitude, the evidences on y)
  laplace <- at$log_evidence - length(pc$y) * log(nm$amplitude) -
    sum(theta * (pc$P %*% theta)) / 2 - occam / 2
  expect_equal(nm$log_evidence[["varying"]], laplace, tolerance = 1e-6)
  # the mode: the log posterior's gradient in theta vanishes there
  g <- drop(crossprod(pc$B, at$row_gradient)) - drop(pc$P %*% theta)
  expect_lt(max(abs(g)), 0.05 * max(abs(drop(crossprod(pc$B, at$row_gradient)))) + 0.05)
  # the constant model's evidence: the constant fit's with its amplitude and
  # level at their maximum, so at least the constant fit's at its C, epsilon
  const <- mfsvr(d$x, d$y, calibration_folds = 0)
  expect_gt(nm$log_evidence[["constant"]], const$log_evidence)
  expect_lt(nm$log_evidence[["constant"]], const$log_evidence + 0.5 * length(d$y))
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
    q <- epsins_quantile(c(0.05, 0.95), m[i], v[i], fit$C * exp(-l[i]),
                         fit$epsilon * exp(l[i]))
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


# The search's factors at every noise width with the screen off, for the
# fit `fit` (scaled data) as .tube_noise() would search them.
mf_searched_log_bf <- function(fit, screen) {
  ctl <- gpsvm:::.tube_noise_control(fit$x, fit$kernel, fit$control)
  y <- mf_noise_pieces(fit)$y
  cores <- NULL
  gpsvm:::.fit_noise_widths(fit$x, function(bases) {
    cores <<- gpsvm:::cpp_mfsvr_varying_noise_fit(
      fit$kernel, fit$x, y, fit$C, fit$epsilon, ctl, bases,
      list(max_iter = 50L, tol = 1e-3, screen_log_bf = screen, amplitude = TRUE))
  })
  vapply(cores, function(core) c(first = core$first_step_log_bf,
                                  searched = core$log_marginal - core$constant_log_evidence,
                                  screened = core$screened), numeric(3))
}

test_that("\"auto\" stops at constant noise only where the search would keep it", {
  # constant noise: the first steps' factors are below the screen at every
  # width, "auto" makes no search, and the searches it skipped (screen off)
  # all keep constant noise; varying noise: no stop
  set.seed(11)
  x <- sort(runif(test_size(150, 80), 0, 10))
  flat <- mfsvr(x, sin(x) + rnorm(length(x), sd = 0.3), noise = "auto", calibration_folds = 0)
  expect_true(flat$noise_model$screened)
  expect_identical(flat$noise_model$type, "constant")
  off <- mf_searched_log_bf(flat, -Inf)
  expect_true(all(off["first", ] < gpsvm:::.rvm_noise_settings$screen_log_bf))
  expect_true(all(off["searched", ] < gpsvm:::.noise_choice_log_bf))
  expect_true(all(off["screened", ] == 0))
  on <- mf_searched_log_bf(flat, 0)
  expect_identical(on["first", ], off["first", ])
  expect_true(all(on["screened", ] == 1))
  # the factor the fit reports is the best width's first step
  expect_equal(diff(flat$noise_model$log_evidence), max(on["first", ]), ignore_attr = TRUE)
  expect_match(paste(capture.output(print(flat)), collapse = " "), "first step .* so not searched")
  expect_match(flat$plan$by[flat$plan$step == "noise"], "not searched")
  d <- mf_het_data(test_size(150, 80), seed = 6)
  loud <- mfsvr(d$x, d$y, noise = "auto", calibration_folds = 0)
  expect_false(loud$noise_model$screened)
  expect_identical(loud$noise_model$type, "varying")
  # a hand-edited screen on a varying fit is an error
  bad <- loud
  bad$noise_model$screened <- TRUE
  expect_error(predict(bad, 1), "noise_model")
})

# The default weighs a width per input on rows of two or
# more inputs; "auto" must weigh it too, or the constant fit it keeps (and
# the one its varying noise is weighed against) is not the default's.
test_that("noise = \"auto\" weighs a width per input as the default does", {
  set.seed(11)
  n <- 100  # (per_input_min_n: from here a width per input wins by a nat a width)
  x <- matrix(runif(3 * n), n, dimnames = list(NULL, c("a", "b", "c")))
  signal <- sin(6 * x[, "a"]) + 0.3 * x[, "b"]  # (c irrelevant)
  new <- matrix(runif(15), 5, dimnames = list(NULL, colnames(x)))
  constant <- signal + rnorm(n, sd = 0.2)
  default <- mfsvr(x, constant, calibration_folds = 0)
  expect_false(is.null(default$kernel$input_widths))
  auto <- mfsvr(x, constant, noise = "auto", calibration_folds = 0)
  expect_identical(auto$noise_model$type, "constant")
  expect_identical(auto$kernel, default$kernel)
  expect_identical(predict(auto, new, interval = "prediction"),
                   predict(default, new, interval = "prediction"))
  varying <- signal + rnorm(n, sd = 0.02 + 0.6 * x[, "a"])
  default <- mfsvr(x, varying, calibration_folds = 0)
  auto <- mfsvr(x, varying, noise = "auto", calibration_folds = 0)
  expect_identical(auto$noise_model$type, "varying")
  # (the varying fit keeps the constant fit's kernel: the widths per input)
  expect_identical(auto$kernel, default$kernel)
  # and weighs it against the default's constant model (whose level and
  # amplitude it profiles from the default fit's, so no lower evidence)
  expect_gte(auto$noise_model$log_evidence[["constant"]], default$log_evidence - 1e-8)
})
# (calibration refits keep the noise function: test-svr-noise.R, for both models)

# The default's width suits the constant model; with a noise function the
# varying model's evidence widens it on a ladder of factors sqrt(2).
# Apart: the same model at widths given by the call (which it keeps).
test_that("a varying noise's mean width is the varying evidence's rung of the ladder", {
  skip_if_not_installed("MASS")
  d <- MASS::mcycle
  fit <- mfsvr(accel ~ times, d, noise = "varying", calibration_folds = 0)
  mw <- fit$noise_model$mean_width
  expect_false(is.null(mw))
  rung <- log(mw[["factor"]]) / log(sqrt(2))
  expect_equal(rung, round(rung), tolerance = 1e-12)
  expect_true(round(rung) >= 1)
  weighed <- fit$kernel$sigma / mw[["factor"]]
  at <- function(factor) {
    kernel <- fit$kernel
    kernel$sigma <- weighed * factor
    kernel$sigma_rule <- NULL
    mfsvr(accel ~ times, d, noise = "varying", kernel = kernel, calibration_folds = 0)
  }
  evidence <- function(f) f$noise_model$log_evidence[["varying"]]
  here <- at(mw[["factor"]])
  expect_null(here$noise_model$mean_width)
  expect_equal(here$kernel$sigma, fit$kernel$sigma)
  # (each fit's search for C stops at a change of 1e-3 in log C, from the
  # constant fit's C in the ladder and from the default start apart)
  expect_lt(abs(evidence(here) - evidence(fit)), 2e-3)
  expect_lt(abs(mw[["log_bayes_factor"]] - (evidence(here) - evidence(at(1)))), 2e-3)
  # the next rung on is worse (the ladder stopped there)
  expect_lt(evidence(at(mw[["factor"]] * sqrt(2))), evidence(here))
  new <- data.frame(times = c(5, 20, 40))
  expect_equal(predict(fit, new, interval = "prediction"), predict(here, new, interval = "prediction"),
               tolerance = 1e-4)
  expect_match(fit$plan$choice[fit$plan$step == "noise"], "the mean's width")
  # a hand-edited factor is a clear error
  bad <- fit
  bad$noise_model$mean_width[["factor"]] <- -1
  expect_error(predict(bad, new), "noise_model")
})

test_that("on replicated inputs the noise search runs on the low-rank prior, as the dense one", {
  # 15 inputs taken 8 (small: 5) times: K has rank 15 and the constant fit's
  # prior is FITC on the pivots of a factor exact to rank_tol; the noise
  # search runs on it too, and must find what it finds on the dense matrix
  set.seed(21)
  x <- rep(seq(0, 10, length.out = 15), each = test_size(8, 5))
  y <- 2 * sin(x) + rnorm(length(x), sd = 0.1 + 0.09 * x)
  low <- mfsvr(x, y, noise = "auto", calibration_folds = 0)
  dense <- mfsvr(x, y, noise = "auto", calibration_folds = 0, control = mfsvr_control(rank_tol = 0))
  expect_true(isTRUE(attr(low$inducing, "low_rank")))
  expect_null(dense$inducing)
  expect_identical(low$noise_model$type, "varying")
  expect_identical(low$noise_model$type, dense$noise_model$type)
  expect_identical(low$noise_model$mean_width, dense$noise_model$mean_width)
  # The factor moves K by 1e-13 of its diagonal, below EP's tol (1e-9), so
  # the two fits' EP fixed points, and every step of the searches (for C,
  # the noise function, the amplitude and the width), agree to about that
  # tol, and so do the noise function and the predictions.  The Laplace
  # term of the varying evidence, log|P + F| with P = K_zz / tau2 nearly
  # singular for the wider noise bases, moves by some 1e-6 nats under any
  # rounding-level change of the sites (on the dense prior alone too).
  expect_lt(max(abs(unlist(low$noise_model$log_evidence) -
                      unlist(dense$noise_model$log_evidence))), 1e-4)
  new <- seq(0, 10, length.out = 9)
  expect_equal(predict(low, new, interval = "prediction"),
               predict(dense, new, interval = "prediction"), tolerance = 1e-6)
})

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

# Plain-R EP for the epsilon-insensitive likelihood with C and epsilon per
# row on the prior covariance K: the tilted moments by integrate() between
# the tube's kinks, sequential site updates to convergence, and the log
# evidence of Rasmussen and Williams (2006), eq. 3.65.
mf_plain_ep_evidence <- function(K, y, C, eps) {
  n <- length(y)
  moments <- function(i, m, v) {
    s <- sqrt(v)
    lik <- function(f) C[i] / (2 * (C[i] * eps[i] + 1)) * exp(-C[i] * pmax(abs(y[i] - f) - eps[i], 0))
    # (in u = (f - m) / s, the kinks at the tube's ends)
    ends <- c(-Inf, (y[i] - eps[i] - m) / s, (y[i] + eps[i] - m) / s, Inf)
    piece <- function(k) sum(vapply(1:3, function(j) {
      stats::integrate(function(u) lik(m + s * u) * stats::dnorm(u) * u^k, ends[j], ends[j + 1],
                       rel.tol = 1e-11, abs.tol = 1e-16)$value
    }, numeric(1)))
    z <- piece(0)
    mu <- piece(1) / z
    list(log_z = log(z), mean = m + s * mu, var = s^2 * (piece(2) / z - mu^2))
  }
  tau <- rep(0, n)
  nu <- rep(0, n)
  Sigma <- K
  mu <- rep(0, n)
  for (sweep in 1:200) {
    before <- c(tau, nu)
    for (i in seq_len(n)) {
      tc <- 1 / Sigma[i, i] - tau[i]
      nc <- mu[i] / Sigma[i, i] - nu[i]
      mo <- moments(i, nc / tc, 1 / tc)
      tau[i] <- 1 / mo$var - tc
      nu[i] <- mo$mean / mo$var - nc
      Sigma <- solve(solve(K) + diag(tau, n))
      mu <- drop(Sigma %*% nu)
    }
    if (max(abs(c(tau, nu) - before)) < 1e-11) break
  }
  tc <- 1 / diag(Sigma) - tau
  nc <- mu / diag(Sigma) - nu
  log_z <- vapply(seq_len(n), function(i) moments(i, nc[i] / tc[i], 1 / tc[i])$log_z, numeric(1))
  site_var <- 1 / tau
  site_mean <- nu / tau
  A <- K + diag(site_var, n)
  sum(log_z) - as.numeric(determinant(A)$modulus) / 2 - sum(site_mean * solve(A, site_mean)) / 2 +
    sum(log(1 / tc + site_var)) / 2 + sum((nc / tc - site_mean)^2 / (1 / tc + site_var)) / 2
}

test_that("the mean's amplitude fitted with the noise: the evidence against plain-R EP", {
  set.seed(11)
  x <- matrix(seq(0, 7, length.out = 8))
  y <- 1.5 * sin(x[, 1]) + rnorm(8, sd = 0.05 + 0.1 * x[, 1])
  y <- (y - mean(y)) / stats::sd(y)
  k <- rbf_kernel(1.5)
  nk <- rbf_kernel(4)
  z <- x[c(1, 4, 8), , drop = FALSE]
  B <- kernel_matrix(nk, x, z)
  P <- kernel_matrix(nk, z, z) / 4
  diag(P) <- diag(P) * (1 + 1e-8)
  ctl <- unclass(gpsvm:::.resolve_control(mfsvr_control(tol = 1e-12, rank_tol = 0), 8))
  C <- 3
  eps <- 0.05
  bases <- list(list(basis = B, precision = P))
  core <- gpsvm:::cpp_mfsvr_varying_noise_fit(k, x, y, C, eps, ctl, bases,
                                              list(max_iter = 200L, tol = 1e-8, screen_log_bf = -Inf,
                                                   amplitude = TRUE))[[1]]
  rho <- core$log_amplitude
  l <- core$log_noise_scale
  expect_gt(abs(rho), 0.05)
  expect_equal(core$level + drop(B %*% core$theta), l, tolerance = 1e-12)
  plain <- function(r) {
    mf_plain_ep_evidence(exp(2 * r) * kernel_matrix(k, x, x), y, C * exp(-l), eps * exp(l))
  }
  at <- plain(rho)
  expect_equal(core$log_evidence, at, tolerance = 1e-7)
  # the amplitude at its maximum (l held): lower a little either side
  expect_lt(plain(rho + 0.1), at)
  expect_lt(plain(rho - 0.1), at)
  # without the amplitude: rho stays 0 and the constant model is the fit at l = 0
  fixed <- gpsvm:::cpp_mfsvr_varying_noise_fit(k, x, y, C, eps, ctl, bases,
                                               list(max_iter = 200L, tol = 1e-8, screen_log_bf = -Inf,
                                                    amplitude = FALSE))[[1]]
  expect_identical(fixed$log_amplitude, 0)
  expect_equal(fixed$constant_log_evidence,
               mf_plain_ep_evidence(kernel_matrix(k, x, x), y, rep(C, 8), rep(eps, 8)),
               tolerance = 1e-7)
  expect_gt(core$constant_log_evidence, fixed$constant_log_evidence)
})

test_that("a fit's mean amplitude joins the response's scale: logLik, fitted values, intervals", {
  d <- mf_het_data(test_size(80, 50), seed = 12)
  fit <- mfsvr(d$x, d$y, noise = "varying", calibration_folds = 0)
  a <- fit$noise_model$amplitude
  expect_true(is.numeric(a) && abs(log(a)) > 0.01)
  sd_y <- stats::sd(d$y)
  expect_equal(fit$response_scaling$scale, sd_y * a)
  # the evidence of y on the user's scale: the varying model's (on y / sd(y))
  # less the Jacobian of sd(y) alone
  expect_equal(as.numeric(logLik(fit)),
               fit$noise_model$log_evidence[["varying"]] - length(d$y) * log(sd_y),
               tolerance = 1e-8)
  # fitted values: the latent mean at the training rows, through predict()
  expect_equal(unname(fit$fitted.values), unname(predict(fit, d$x)), tolerance = 1e-8)
  # the same model at amplitude 1 (the refit at the kept noise function) is
  # another fit: the intervals move
  p <- predict(fit, d$x[1:5], interval = "prediction")
  expect_true(all(p[, "lwr"] < p[, "fit"] & p[, "fit"] < p[, "upr"]))
  # scale = FALSE fits no amplitude
  raw <- mfsvr(d$x, (d$y - mean(d$y)) / sd_y, noise = "varying", calibration_folds = 0, scale = FALSE,
               kernel = fit$kernel, C = 1)
  expect_null(raw$noise_model$amplitude)
})
