# gpc_paper(method = "tap"): the probit-with-flip site moments against integrate(),
# the whole fit against a plain-R EP and, for one point, against quadrature.

moments <- function(t, m, v, kappa, noise) core_probe("cpp_probit_flip_moments")(t, m, v, kappa, noise)

# log Z and its m-derivatives by quadrature: d log Z/dm = (E f - m)/v and
# d2 log Z/dm2 = (Var f - v)/v^2 under the tilted density.
moments_quad <- function(t, m, v, kappa, noise) {
  lik <- function(f) {
    if (noise == 0) kappa + (1 - 2 * kappa) * (t * f > 0) else
      kappa + (1 - 2 * kappa) * pnorm(t * f / sqrt(noise))
  }
  s <- sqrt(v)
  # in u = (f - m) / s, split at u = 0 (where (f - m)^p changes sign) and at
  # the step f = 0
  w <- function(u, p) lik(m + s * u) * dnorm(u) * (s * u)^p
  brk <- sort(unique(c(-12, 0, min(max(-m / s, -12), 12), 12)))
  q <- function(p) sum(vapply(seq_len(length(brk) - 1), function(k)
    integrate(w, brk[k], brk[k + 1], p = p, rel.tol = 1e-10)$value, numeric(1)))
  z0 <- q(0); e1 <- q(1) / z0; e2 <- q(2) / z0
  c(log(z0), e1 / v, (e2 - e1^2 - v) / v^2)
}

test_that("site moments match integrate() for the step and probit forms", {
  cases <- expand.grid(t = c(-1, 1), m = c(-2.5, -0.3, 0.7, 3), v = c(0.2, 1.7),
                       kappa = c(0, 0.1), noise = c(0, 0.6))
  for (r in seq_len(nrow(cases))) {
    cs <- cases[r, ]
    got <- moments(cs$t, cs$m, cs$v, cs$kappa, cs$noise)
    ref <- moments_quad(cs$t, cs$m, cs$v, cs$kappa, cs$noise)
    expect_equal(as.vector(got), ref, tolerance = 1e-7, info = paste(unlist(cs), collapse = " "))
  }
})

test_that("site moments are finite and right in the far tails", {
  # z = t m / sqrt(v + noise) from -1e6 to +40: log Phi, the Mills ratio and
  # the curvature against R's log-scale pnorm/dnorm and the tail series
  z <- c(-1e6, -1e5, -2e4, -1e3, -40, 40)
  got <- moments(rep(1, 6), z, rep(1, 6), 0, 0)
  expect_true(all(is.finite(got)))
  expect_equal(got[, 1], pnorm(z, log.p = TRUE), tolerance = 1e-13)
  lam <- exp(dnorm(z, log = TRUE) - pnorm(z, log.p = TRUE))
  lam[z < -100] <- -z[z < -100] * (1 + 1 / z[z < -100]^2 - 2 / z[z < -100]^4)
  expect_equal(got[, 2], lam, tolerance = 1e-12)
  # d2 = -lambda (z + lambda); z + lambda ~ 1/x - 2/x^3 for x = -z large
  x <- -z[1:4]
  expect_equal(-got[1:4, 3], lam[1:4] * (1 / x - 2 / x^3 + 10 / x^5), tolerance = 1e-9)
  expect_true(all(got[, 3] <= 0))
  # with flips the far wrong side is an outlier: weight and curvature vanish
  gk <- moments(c(1, 1), c(-1e3, 1e3), c(1, 1), 0.05, 0)
  expect_equal(gk[, 1], log(c(0.05, 0.95)), tolerance = 1e-14)
  expect_true(all(abs(gk[, 2:3]) < 1e-300))
})

# Plain-R EP for the flip-step likelihood on the noisy kernel: ep_plain()
# (helper-classif.R) with the flip-noise moments.
ep_r <- function(K, y, kappa) {
  ep_plain(K, function(i, m, v) {
    z <- y[i] * m / sqrt(v)
    logZ <- log(kappa + (1 - 2 * kappa) * pnorm(z))
    G <- (1 - 2 * kappa) * dnorm(z) / exp(logZ)
    c(logZ, y[i] * G / sqrt(v), -G * (z + G) / v)
  })
}

test_that("the TAP classifier reaches the plain-R EP fixed point", {
  d <- two_class_data(12, 31)
  for (kappa in c(0, 0.1)) {
    K <- rbf_gram(d$x, 1) + diag(0.4, 12)
    ref <- ep_r(K, d$y, kappa)
    for (schedule in c("accelerated", "parallel", "sequential")) {
      fit <- gpc_paper(d$x, d$y, rbf_kernel(1), noise = 0.4, kappa = kappa, method = "tap",
                 control = gpc_control(tol = 1e-12, schedule = schedule))
      w <- d$y * unname(fit$alpha)
      expect_equal(drop(K %*% w), ref$mean, tolerance = 1e-8)
      expect_equal(fit$cavity_mean, ref$cavity_mean, tolerance = 1e-8)
      # posterior variance of the latent at a training input, noise-free
      K0 <- rbf_gram(d$x, 1)
      se <- predict(fit, d$x, type = "link", se.fit = TRUE)$se.fit
      # Sigma is the posterior of g = f + xi; f = g - xi has the same cross
      # covariance with the data as the noise-free kernel column
      Kinv <- solve(K)
      var_f <- diag(K0) - diag(K0 %*% (Kinv - Kinv %*% ref$Sigma %*% Kinv) %*% K0)
      expect_equal(unname(se), sqrt(var_f), tolerance = 1e-7)
    }
  }
})

test_that("the default tolerance puts probabilities within 1e-7 of the plain-R fixed point", {
  # ?gpc_control: about 1e-8 at the default tol = 1e-6.  The reference is the
  # plain-R sequential EP at its own fixed point, whose posterior is that of
  # g = f + noise; the probability of the second class is
  # Phi(m / sqrt(s^2 + noise)) for the mean m and variance s^2 of f
  d <- two_class_data(60, 8, noise = 0.8)
  K0 <- rbf_gram(d$x, 1)
  K <- K0 + diag(0.3, 60)
  ref <- ep_r(K, d$y, 0)
  Kinv <- solve(K)
  var_f <- diag(K0) - diag(K0 %*% (Kinv - Kinv %*% ref$Sigma %*% Kinv) %*% K0)
  mean_f <- drop(K0 %*% solve(K, ref$mean))
  p_ref <- pnorm(mean_f / sqrt(var_f + 0.3))
  fit <- gpc_paper(d$x, d$y, rbf_kernel(1), noise = 0.3, method = "tap")
  expect_identical(fit$convergence$tol, 1e-6)
  expect_true(fit$convergence$converged)
  expect_lt(max(abs(unname(predict(fit, d$x, type = "prob")[, 2]) - p_ref)), 1e-7)
})

test_that("duplicated inputs with both labels: right with noise, a clear error without", {
  # every input twice, once per label: the noise-free kernel matrix is
  # singular and the noise-free data have zero likelihood
  x <- matrix(rep(c(-1, 0, 1.5), each = 2), 6, 1)
  y <- rep(c(-1, 1), 3)
  for (noise in c(1e-3, 0.5)) {
    K <- rbf_gram(x, 1) + diag(noise, 6)
    ref <- ep_r(K, y, 0)
    fit <- gpc_paper(x, y, rbf_kernel(1), noise = noise, method = "tap",
               control = gpc_control(tol = 1e-12))
    expect_equal(drop(K %*% (y * unname(fit$alpha))), ref$mean, tolerance = 1e-8)
    expect_equal(fit$cavity_mean, ref$cavity_mean, tolerance = 1e-8)
  }
  expect_error(gpc_paper(x, y, rbf_kernel(1), method = "tap"), "'noise' > 0")
})

test_that("with one point TAP is exact: mean, variance and evidence by quadrature", {
  for (setting in list(list(kappa = 0, noise = 0.3, y = 1), list(kappa = 0.2, noise = 1, y = -1),
                       list(kappa = 0, noise = 0, y = -1))) {
    x <- matrix(c(0.3, -0.2), 1)
    k <- poly_kernel(2, 1, 1)  # k(x, x) = (0.13 + 1)^2
    kxx <- (sum(x^2) + 1)^2
    s2 <- kxx + setting$noise
    lik <- function(g) setting$kappa + (1 - 2 * setting$kappa) * (setting$y * g > 0)
    q <- function(p) integrate(function(g) g^p * lik(g) * dnorm(g, 0, sqrt(s2)), -Inf, 0,
                               rel.tol = 1e-12)$value +
      integrate(function(g) g^p * lik(g) * dnorm(g, 0, sqrt(s2)), 0, Inf, rel.tol = 1e-12)$value
    Z <- q(0); Eg <- q(1) / Z; Vg <- q(2) / Z - Eg^2
    # one case is one class, which gpc() refuses; the binary solver (which
    # leave-one-out refits use) takes it, and the methods work on its result
    expect_error(gpc_paper(x, setting$y, k, method = "tap"), "one class only")
    fit <- gpsvm:::.gpc_fit(x, setting$y, k, setting$noise, setting$kappa, "tap",
                            gpsvm:::.resolve_control(gpc_control(tol = 1e-12), "tap"))
    # the fields of a classifier that .classif_train() adds
    fit$levels <- c("-1", "1")
    fit$classes <- factor(setting$y, levels = c(-1, 1))
    fit$bias_variance <- 0
    fit$fit_time <- 0
    fit <- gpsvm:::.with_plan(fit, "gpc():")  # (and the plan every fit records)
    expect_equal(as.numeric(logLik(fit)), log(Z), tolerance = 1e-9)
    # f = g - xi: E f = r E g, Var f = kxx - r kxx + r^2 Vg with r = kxx / s2
    r <- kxx / s2
    p <- predict(fit, x, type = "link", se.fit = TRUE)
    expect_equal(unname(p$fit), r * Eg, tolerance = 1e-9)
    expect_equal(unname(p$se.fit), sqrt(kxx - r * kxx + r^2 * Vg), tolerance = 1e-9)
    # the class probability integrates the likelihood over the predictive
    expect_equal(unname(predict(fit, x, type = "prob")[, "1"]),
                 setting$kappa + (1 - 2 * setting$kappa) *
                   pnorm(r * Eg / sqrt(kxx - r * kxx + r^2 * Vg + setting$noise)),
                 tolerance = 1e-9)
  }
})

# Exact TAP refits for every case, from the given sites (NULL: fresh sites).
tap_refits <- function(fit, site_precision, site_nu) {
  gpsvm:::cpp_gpc_tap_loo_refits(gpsvm:::.gpc_model(fit), fit$x, fit$y, unclass(fit$control),
                                 list(site_precision = site_precision, site_nu = site_nu),
                                 seq_along(fit$y))
}

test_that("warm-started TAP refits equal cold refits and gpc_paper() refits without the case", {
  d <- two_class_data(40, 33, noise = 0.6)
  for (kappa in c(0, 0.05)) {
    fit <- gpc_paper(d$x, d$y, rbf_kernel(1), noise = 0.6, kappa = kappa, method = "tap",
               control = gpc_control(tol = 1e-11))
    warm <- loo_error(fit, "exact")
    cold <- tap_refits(fit, NULL, NULL)
    expect_lt(max(abs(unname(warm$margins) - cold$margins)), 1e-6)
    expect_identical(warm$not_converged, 0)
    # the warm start saves sweeps
    expect_lt(mean(warm$iterations), mean(cold$iterations))
    # independent reference: fit without case i from scratch by the user-level
    # function and predict the activation at x_i
    ref <- vapply(seq_len(40), function(i) {
      g <- gpc_paper(d$x[-i, ], d$y[-i], rbf_kernel(1), noise = 0.6, kappa = kappa, method = "tap",
               control = gpc_control(tol = 1e-11))
      d$y[i] * unname(predict(g, d$x[i, , drop = FALSE], type = "link"))
    }, numeric(1))
    expect_lt(max(abs(unname(warm$margins) - ref)), 1e-6)
  }
})

test_that("unusable warm-start sites fall back to fresh sites", {
  d <- two_class_data(40, 33, noise = 0.6)
  fit <- gpc_paper(d$x, d$y, rbf_kernel(1), noise = 0.6, method = "tap")
  cold <- tap_refits(fit, NULL, NULL)
  # a negative precision: every refit but the one that drops it starts cold,
  # exactly as without a warm start
  neg <- replace(fit$site_precision, 3, -1)
  r <- tap_refits(fit, neg, fit$site_nu)
  expect_identical(r$margins[-3], cold$margins[-3])
  expect_identical(r$iterations[-3], cold$iterations[-3])
  expect_lt(abs(r$margins[3] - cold$margins[3]), 1e-6)
  # non-finite sites, and finite ones so extreme that the warm run breaks
  # down (NaN posterior means, which must not pass as converged)
  for (bad in list(list(fit$site_precision, replace(fit$site_nu, 5, NaN)),
                   list(replace(fit$site_precision, 7, Inf), fit$site_nu),
                   list(rep(1e300, 40), fit$site_nu))) {
    r <- tap_refits(fit, bad[[1]], bad[[2]])
    expect_true(all(is.finite(r$margins)))
    expect_lt(max(abs(r$margins - cold$margins)), 1e-6)
    expect_identical(r$not_converged, 0L)
  }
  # a fit edited to hold such sites is refused before any refit (its
  # predictions would be refused too)
  edited <- fit
  edited$site_precision[3] <- -1
  expect_error(loo_error(edited, "exact"), "fit\\$site_precision has values outside \\[0, Inf\\]")
  expect_error(tap_refits(fit, fit$site_precision[-1], fit$site_nu), "wrong length")
})

test_that("TAP leave-one-out: cavity margins against exact refits, and methods", {
  d <- two_class_data(60, 32, noise = 0.6)
  fit <- gpc_paper(d$x, d$y, rbf_kernel(1), noise = 0.6, method = "tap")
  approx <- loo_error(fit)
  exact <- loo_error(fit, "exact")
  expect_gt(exact$count, 3)
  expect_lte(abs(approx$count - exact$count), 1)
  expect_gt(cor(approx$margins, exact$margins), 0.99)
  # exact refits against plain-R EP without each point
  K <- rbf_gram(d$x, 1) + diag(0.6, 60)
  for (i in c(1, 17, 60)) {
    r <- ep_r(K[-i, -i], d$y[-i], 0)
    w <- solve(K[-i, -i], r$mean)
    expect_equal(unname(exact$margins[i]), d$y[i] * sum(K[i, -i] * w), tolerance = 1e-7)
  }
  expect_output(print(fit), "TAP")
  expect_s3_class(logLik(fit), "logLik")
  expect_error(logLik(gpc_paper(d$x, d$y, rbf_kernel(1), noise = 0.6)), "method = \"tap\"")
  expect_error(predict(fit, type = "prob", se.fit = TRUE), "type = \"link\"")
  p <- predict(fit, rbind(c(1e6, 0), c(-50, 50)), type = "prob")
  expect_true(all(is.finite(p) & p >= 0 & p <= 1))
  expect_error(gpc_control(schedule = "random"), "'schedule' must be one of")
  expect_error(gpc_control(damping = 0), "'damping'")
})

test_that("the accelerated schedule hands over to the parallel one when it stalls", {
  skip_if_small_tests("the stall needs 900 points and hundreds of sweeps; the schedules' C++ code runs at small size above")
  # Two interleaved spirals at a near-step likelihood (the values an
  # evidence search reached on these data): Anderson extrapolation circled
  # the fixed point at a residual of 0.36 for 500 sweeps.
  skip_if_not_installed("mlbench")
  set.seed(1)
  sp <- mlbench::mlbench.spirals(1200, cycles = 1.5, sd = 0.05)
  d <- data.frame(sp$x, y = sp$classes)[1:900, ]
  at <- function(schedule) {
    gpc(y ~ ., d, kernel = rbf_kernel(0.5948817), noise = 0.0001975914,
        control = gpc_control(schedule = schedule))
  }
  accelerated <- expect_no_warning(at("accelerated"))
  expect_true(accelerated$convergence$converged)
  expect_lt(accelerated$convergence$iterations, 200)
  parallel <- at("parallel")
  expect_equal(accelerated$log_evidence, parallel$log_evidence, tolerance = 1e-9)
  expect_equal(unname(accelerated$fitted.values), unname(parallel$fitted.values),
               tolerance = 1e-6)
})
