# Mean-field SVR: the epsilon-insensitive likelihood's site moments, the
# TAP / EP engine, and the fitted model.

epsins <- function(t, m, v, C, eps) as.data.frame(core_probe("cpp_epsins")(t, m, v, C, eps))

cases <- rbind(
  c(t = 0.3, m = 0.1, v = 0.5, C = 5, eps = 0.1),
  c(1, 0, 0.01, 2, 0.3),       # target well outside the tube, narrow cavity
  c(-2, 1, 4, 0.5, 0),         # eps = 0: the Laplace likelihood
  c(0.05, 0, 0.001, 100, 0.1), # inside the tube, large C
  c(0, 0, 1e-6, 1, 0.1),       # deep inside, tiny variance
  c(3, 0, 25, 10, 1),          # wide cavity, C s = 50
  c(0.1, 0, 1e-4, 1000, 0.1)   # on the tube's edge, C s = 10
)

test_that("log Z matches integrate() over the likelihood times the cavity", {
  skip_on_cran()
  for (k in seq_len(nrow(cases))) {
    p <- as.list(cases[k, ])
    got <- epsins(p$t, p$m, p$v, p$C, p$eps)$log_z
    ref <- epsins_log_z_quad(p$t, p$m, p$v, p$C, p$eps)
    expect_equal(got, ref, tolerance = 1e-9, info = paste("case", k))
  }
})

test_that("d log Z / dm and d2 log Z / dm2 match central finite differences", {
  for (k in seq_len(nrow(cases))) {
    p <- as.list(cases[k, ])
    h <- 1e-4 * sqrt(p$v)
    at <- function(m) epsins(p$t, m, p$v, p$C, p$eps)
    fd1 <- (at(p$m + h)$log_z - at(p$m - h)$log_z) / (2 * h)
    fd2 <- (at(p$m + h)$dlog_z - at(p$m - h)$dlog_z) / (2 * h)
    scale <- p$C + 1 / sqrt(p$v)
    # absolute errors on the natural scales C and C^2 (or 1/s, 1/s^2)
    expect_lt(abs(at(p$m)$dlog_z - fd1), 1e-6 * scale, label = paste("d1, case", k))
    expect_lt(abs(at(p$m)$d2log_z - fd2), 1e-6 * scale^2, label = paste("d2, case", k))
    # log-concave likelihood: curvature in [-1/v, 0]
    expect_true(at(p$m)$d2log_z <= 0 && at(p$m)$d2log_z >= -1 / p$v)
  }
})

test_that("the second derivative is not eq. 3.12's: shifting t and m together leaves it unchanged", {
  a <- epsins(0.4, 0.1, 0.3, 5, 0.1)
  b <- epsins(10.4, 10.1, 0.3, 5, 0.1)
  expect_equal(a$d2log_z, b$d2log_z, tolerance = 1e-12)
  expect_equal(a$dlog_z, b$dlog_z, tolerance = 1e-12)
})

test_that("d log Z / dC and d log Z / d eps match central finite differences", {
  for (k in seq_len(nrow(cases))) {
    p <- as.list(cases[k, ])
    h <- 1e-6
    lz <- function(C, eps) epsins(p$t, p$m, p$v, C, eps)$log_z
    got <- epsins(p$t, p$m, p$v, p$C, p$eps)
    fdC <- (lz(p$C * (1 + h), p$eps) - lz(p$C * (1 - h), p$eps)) / (2 * h * p$C)
    expect_lt(abs(got$d_C - fdC), 1e-6 * (1 + abs(fdC)), label = paste("d/dC, case", k))
    if (p$eps > 0) {
      fde <- (lz(p$C, p$eps * (1 + h)) - lz(p$C, p$eps * (1 - h))) / (2 * h * p$eps)
      expect_lt(abs(got$d_eps - fde), 1e-6 * (1 + abs(fde)), label = paste("d/deps, case", k))
    }
  }
})

test_that("moments are finite and right in the far tails (|t - m|/s to 1e3, C s to 1e3)", {
  grid <- expand.grid(z = c(-1e3, -40, -5, 0, 5, 40, 1e3), cs = c(1e-3, 1, 50, 1e3),
                      eps = c(0, 0.1))
  s <- 0.5
  t <- grid$z * s
  C <- grid$cs / s
  for (k in seq_len(nrow(grid))) {
    got <- epsins(t[k], 0, s^2, C[k], grid$eps[k])
    expect_true(all(is.finite(unlist(got[1:5]))), info = paste("row", k))
    # plain-R closed form with R's log-scale pnorm, summing the three pieces
    a <- t[k]; e <- grid$eps[k]; Ck <- C[k]; v <- s^2
    # the tube's mass, taken between the tails that keep their digits
    b1 <- (e - a) / s; b0 <- (-e - a) / s
    l1 <- if (e == 0) -Inf else if (b0 > 0) {
      lp <- pnorm(-b0, log.p = TRUE); lp + log1p(-exp(pnorm(-b1, log.p = TRUE) - lp))
    } else {
      lp <- pnorm(b1, log.p = TRUE); lp + log1p(-exp(pnorm(b0, log.p = TRUE) - lp))
    }
    l2 <- Ck * (e - a) + Ck^2 * v / 2 + pnorm((a - e - Ck * v) / s, log.p = TRUE)
    l3 <- Ck * (e + a) + Ck^2 * v / 2 + pnorm((-a - e - Ck * v) / s, log.p = TRUE)
    l <- c(l1, l2, l3)
    mx <- max(l)
    ref <- log(Ck / (2 * (e * Ck + 1))) + mx + log(sum(exp(l - mx)))
    # the reference adds terms of size C^2 v and keeps ~1e-16 of them
    expect_lt(abs(got$log_z - ref), 1e-10 * max(1, abs(ref), Ck^2 * v))
    r <- exp(l - mx) / sum(exp(l - mx))
    expect_lt(abs(got$dlog_z - Ck * (r[2] - r[3])), 1e-8 * Ck, label = paste("d1, row", k))
  }
  # far outside with small C s the likelihood is exp(-C u): linear log Z
  far <- epsins(1e3 * 0.5, 0, 0.25, 2, 0.1)
  expect_equal(far$dlog_z, 2, tolerance = 1e-12)
  expect_equal(far$d2log_z, 0, tolerance = 1e-12)
})

test_that("the noise variance is eq. (29) of Gao et al. (2002b), not eq. (5.3) of the mean-field paper", {
  for (p in list(c(5, 0.1), c(1, 0), c(0.5, 2))) {
    C <- p[1]; eps <- p[2]
    ref <- integrate(function(u) u^2 * epsins_density(0, u, C, eps), -Inf, Inf,
                     rel.tol = 1e-12)$value
    expect_equal(svr_noise_variance(C, eps), ref, tolerance = 1e-9)
  }
})

test_that("the predictive CDF and density match the convolution by quadrature", {
  for (p in list(c(0.3, 0.1, 0.05, 5, 0.1), c(-1, 0, 2, 1, 0.5), c(0.02, 0, 1e-4, 20, 0.1))) {
    p <- as.list(setNames(p, c("q", "mu", "v", "C", "eps")))
    ref_cdf <- integrate(function(f) {
      x <- p$q - f
      k <- 1 / (2 * (p$eps * p$C + 1))
      Fe <- ifelse(x < -p$eps, k * exp(p$C * (x + p$eps)),
                   ifelse(x > p$eps, 1 - k * exp(-p$C * (x - p$eps)),
                          k + p$C * k * (x + p$eps)))
      Fe * dnorm(f, p$mu, sqrt(p$v))
    }, -Inf, Inf, rel.tol = 1e-12)$value
    got <- epsins(p$q, p$mu, p$v, p$C, p$eps)
    expect_equal(got$cdf, ref_cdf, tolerance = 1e-9)
    expect_equal(got$pdf, exp(epsins_log_z_quad(p$q, p$mu, p$v, p$C, p$eps)),
                 tolerance = 1e-9)
  }
})

# ---- the TAP / EP engine -------------------------------------------------

ep_engine <- function(K, y, C, eps, ...) core_probe("cpp_ep_epsins")(K, y, C, eps, ep_control_list(...))

test_that("for one data point EP is exact: evidence, mean and variance by integrate()", {
  for (p in list(c(t = 0.7, k = 1, C = 5, eps = 0.1), c(-3, 2, 0.5, 0), c(0.05, 0.3, 50, 0.1))) {
    p <- as.list(setNames(p, c("t", "k", "C", "eps")))
    fit <- ep_engine(matrix(p$k), p$t, p$C, p$eps)
    expect_true(fit$converged)
    z <- exp(epsins_log_z_quad(p$t, 0, p$k, p$C, p$eps))
    post <- function(f, j) f^j * epsins_density(p$t, f, p$C, p$eps) * dnorm(f, 0, sqrt(p$k)) / z
    cut <- sort(c(-Inf, p$t - p$eps, p$t + p$eps, Inf))
    mom <- function(j) sum(vapply(1:3, function(i) integrate(post, cut[i], cut[i + 1], j = j,
                                                              rel.tol = 1e-12)$value, 0))
    expect_equal(fit$log_evidence, log(z), tolerance = 1e-9)
    expect_equal(fit$mean, mom(1), tolerance = 1e-8)
    expect_equal(fit$variance, mom(2) - mom(1)^2, tolerance = 1e-8)
  }
})

test_that("for two data points the EP evidence is within 1e-3 of 2-D quadrature", {
  skip_on_cran()
  x <- c(-0.3, 0.4)
  K <- exp(-outer(x, x, "-")^2 / 2)
  y <- c(0.5, 0.1)
  C <- 3; eps <- 0.1
  fit <- ep_engine(K, y, C, eps)
  # midpoint rule on a fine grid over +-7 prior sds; the likelihood's kinks
  # cost O(h^2) only
  h <- 0.004
  g <- seq(-7 + h / 2, 7 - h / 2, by = h)
  lik1 <- epsins_density(y[1], g, C, eps)
  lik2 <- epsins_density(y[2], g, C, eps)
  Ki <- solve(K)
  dens <- outer(g, g, function(a, b) {
    exp(-0.5 * (Ki[1, 1] * a^2 + 2 * Ki[1, 2] * a * b + Ki[2, 2] * b^2))
  }) / (2 * pi * sqrt(det(K)))
  z <- sum(dens * outer(lik1, lik2)) * h^2
  expect_lt(abs(fit$log_evidence - log(z)), 1e-3)
  # and the approximation is not trivially exact: the TAP variances differ
  # from the prior
  expect_true(all(fit$variance < diag(K)))
})

test_that("the EP fixed point satisfies the TAP equations, checked with plain-R linear algebra and integrate()", {
  d <- sinc_data(12, seed = 3)
  K <- exp(-outer(d$x, d$x, "-")^2 / 4)  # tau = 2
  C <- 5; eps <- 0.1
  fit <- ep_engine(K, d$y, C, eps)
  tau <- fit$site_precision
  Sigma <- solve(solve(K) + diag(tau))
  mu <- drop(Sigma %*% fit$site_nu)
  expect_equal(fit$mean, mu, tolerance = 1e-8)
  expect_equal(fit$variance, diag(Sigma), tolerance = 1e-8)
  expect_equal(drop(K %*% fit$weights), mu, tolerance = 1e-8)
  # cavity of each site, then w_i = d log Z_i / dm by finite differences of
  # the quadrature log Z (eq. 3.7), and Sigma_i = 1/tau_i (eq. 3.11)
  v <- 1 / (1 / diag(Sigma) - tau)
  m <- v * (mu / diag(Sigma) - fit$site_nu)
  for (i in c(1, 5, 9)) {
    h <- 1e-3 * sqrt(v[i])
    lz <- function(mm) epsins_log_z_quad(d$y[i], mm, v[i], C, eps)
    d1 <- (lz(m[i] + h) - lz(m[i] - h)) / (2 * h)
    d2 <- (lz(m[i] + h) - 2 * lz(m[i]) + lz(m[i] - h)) / h^2
    expect_equal(fit$weights[i], d1, tolerance = 1e-5)
    expect_equal(tau[i], -d2 / (1 + d2 * v[i]), tolerance = 1e-3)
  }
})

test_that("parallel, sequential and the paper's iteration reach the same weights on the paper's C sweep", {
  d <- sinc_data(40)
  K <- exp(-outer(d$x, d$x, "-")^2 / 4)
  for (C in c(0.1, 1, 2, 4, 8, 10)) {
    a <- ep_engine(K, d$y, C, 0.1)
    b <- ep_engine(K, d$y, C, 0.1, schedule = "sequential")
    p <- ep_engine(K, d$y, C, 0.1, algorithm = "paper", max_iter = 2000L)
    expect_true(a$converged && b$converged && p$converged, info = paste("C =", C))
    expect_lt(max(abs(a$weights - b$weights)), 1e-6)
    expect_lt(max(abs(a$weights - p$weights)), 1e-6)
    expect_equal(a$log_evidence, p$log_evidence, tolerance = 1e-6)
  }
})

test_that("EP converges where the paper's iteration does not (C = 100) and handles duplicate inputs", {
  d <- sinc_data(40)
  K <- exp(-outer(d$x, d$x, "-")^2 / 4)
  a <- ep_engine(K, d$y, 100, 0.1)
  expect_true(a$converged)
  # duplicated inputs make K singular; B = I + S^1/2 K S^1/2 is not
  x <- c(d$x[1:10], d$x[1:10])
  K2 <- exp(-outer(x, x, "-")^2 / 4)
  b <- ep_engine(K2, c(d$y[1:10], d$y[1:10] + 0.05), 5, 0.1)
  expect_true(b$converged)
  expect_true(all(is.finite(b$weights)))
})

# ---- the fitted model ------------------------------------------------------

test_that("logLik() is exact for one data point and within 1e-3 of 2-D quadrature for two", {
  fit1 <- mfsvr(0.8, 0.35, C = 4, epsilon = 0.2, kernel = rbf_kernel(1), scale = FALSE)
  expect_equal(as.numeric(logLik(fit1)),
               epsins_log_z_quad(0.35, 0, 1, 4, 0.2), tolerance = 1e-9)
  expect_identical(attr(logLik(fit1), "nobs"), 1L)
  # two points, kernel variance 1, correlation exp(-0.7^2 / 2)
  x <- c(-0.3, 0.4); y <- c(0.5, 0.1); C <- 3; eps <- 0.1
  fit2 <- mfsvr(x, y, C = C, epsilon = eps, kernel = rbf_kernel(1), scale = FALSE)
  K <- exp(-outer(x, x, "-")^2 / 2)
  inner <- function(f1) vapply(f1, function(a) {
    cond_m <- K[2, 1] * a; cond_v <- 1 - K[2, 1]^2
    integrate(function(b) epsins_density(y[2], b, C, eps) * dnorm(b, cond_m, sqrt(cond_v)),
              -Inf, Inf, rel.tol = 1e-10)$value
  }, 0)
  z <- integrate(function(a) epsins_density(y[1], a, C, eps) * dnorm(a) * inner(a),
                 -Inf, Inf, rel.tol = 1e-10)$value
  expect_lt(abs(as.numeric(logLik(fit2)) - log(z)), 1e-3)
})

test_that("predict() gives eq. 3.2 and eq. 5.1 computed with plain-R linear algebra", {
  d <- sinc_data(25, seed = 2)
  fit <- mfsvr(d$x, d$y, C = 5, epsilon = 0.1, kernel = rbf_kernel(sqrt(2)), scale = FALSE)
  xn <- c(-12, -3.3, 0, 0.01, 7.5)
  K <- kernel_matrix(rbf_kernel(sqrt(2)), d$x)
  Ks <- kernel_matrix(rbf_kernel(sqrt(2)), xn, d$x)
  S <- diag(fit$site_precision)
  # (K + Sigma)^-1 = S^1/2 (I + S^1/2 K S^1/2)^-1 S^1/2
  R <- sqrt(S) %*% solve(diag(25) + sqrt(S) %*% K %*% sqrt(S)) %*% sqrt(S)
  mean_ref <- drop(Ks %*% coef(fit))
  sd_ref <- sqrt(1 - rowSums((Ks %*% R) * Ks))
  p <- predict(fit, xn, se.fit = TRUE)
  expect_equal(p$fit, mean_ref, tolerance = 1e-10)
  expect_equal(p$se.fit, sd_ref, tolerance = 1e-8)
  ci <- predict(fit, xn, interval = "confidence", level = 0.9)
  expect_equal(unname(ci[, "upr"]), mean_ref + qnorm(0.95) * sd_ref, tolerance = 1e-8)
  # fitted values and training-point variances agree with predict()
  expect_equal(unname(fitted(fit)), predict(fit), tolerance = 1e-10)
  expect_equal(sqrt(fit$variance), predict(fit, se.fit = TRUE)$se.fit, tolerance = 1e-8)
  expect_equal(unname(residuals(fit)), d$y - unname(fitted(fit)))
  expect_identical(nobs(fit), 25L)
  expect_identical(coef(fit), fit$coefficients)
})

test_that("prediction intervals are exact quantiles of the latent Gaussian convolved with the noise", {
  d <- sinc_data(30, seed = 4)
  fit <- mfsvr(d$x, d$y, C = 2, epsilon = 0.3, kernel = rbf_kernel(1.5), scale = FALSE,
               calibration_folds = 0)
  xn <- c(-11, 0.5, 4)
  p <- predict(fit, xn, interval = "prediction", level = 0.8)
  s <- predict(fit, xn, se.fit = TRUE)
  # noise CDF by integrating the density by hand, checked against integrate()
  C <- 2; eps <- 0.3; k <- 1 / (2 * (eps * C + 1))
  noise_cdf <- function(u) ifelse(u < -eps, k * exp(C * (u + eps)),
                                  ifelse(u > eps, 1 - k * exp(-C * (u - eps)),
                                         k + C * k * (u + eps)))
  for (u in c(-1, 0.1, 0.7)) {
    expect_equal(noise_cdf(u), integrate(function(e) epsins_density(0, e, C, eps), -Inf, u,
                                         rel.tol = 1e-12)$value, tolerance = 1e-10)
  }
  # P(f + e <= q) = E_f[F_e(q - f)]
  cdf <- function(q, mu, sd) {
    integrate(function(f) noise_cdf(q - f) * dnorm(f, mu, sd), -Inf, Inf, rel.tol = 1e-11)$value
  }
  for (i in seq_along(xn)) {
    lo <- uniroot(function(q) cdf(q, s$fit[i], s$se.fit[i]) - 0.1,
                  s$fit[i] + c(-10, 10), tol = 1e-10)$root
    hi <- uniroot(function(q) cdf(q, s$fit[i], s$se.fit[i]) - 0.9,
                  s$fit[i] + c(-10, 10), tol = 1e-10)$root
    expect_equal(unname(p[i, "lwr"]), lo, tolerance = 1e-6)
    expect_equal(unname(p[i, "upr"]), hi, tolerance = 1e-6)
  }
  # and they are not mean +- z sd of the total variance
  naive <- s$fit + qnorm(0.9) * sqrt(s$se.fit^2 + fit$noise_variance)
  expect_gt(max(abs(p[, "upr"] - naive)), 1e-3)
})

test_that("the evidence gradient matches central finite differences", {
  d <- sinc_data(30, seed = 5)
  at <- function(lc, le, ls) {
    ep_evidence(d$x, d$y, C = exp(lc), epsilon = exp(le), kernel = rbf_kernel(exp(ls)),
                control = mfsvr_control(tol = 1e-12))
  }
  p0 <- c(log(3), log(0.2), log(1.2))
  g <- do.call(at, as.list(p0))$gradient
  h <- 1e-5
  for (j in 1:3) {
    up <- p0; up[j] <- up[j] + h
    dn <- p0; dn[j] <- dn[j] - h
    fd <- (do.call(at, as.list(up))$log_evidence - do.call(at, as.list(dn))$log_evidence) / (2 * h)
    expect_equal(unname(g[j]), fd, tolerance = 1e-6)
  }
})

test_that("optimize = TRUE finds a stationary point that beats the starting evidence", {
  d <- sinc_data(40)
  start <- mfsvr(d$x, d$y, C = 5, epsilon = 0.1, kernel = rbf_kernel(sqrt(2)), scale = FALSE)
  opt <- mfsvr(d$x, d$y, C = 5, epsilon = 0.1, kernel = rbf_kernel(sqrt(2)), optimize = TRUE,
               scale = FALSE)
  expect_gt(opt$log_evidence, start$log_evidence)
  expect_true(opt$optimization$convergence$converged)
  # the stopping rule: no gradient component above 1e-3 per observation
  expect_lt(max(abs(opt$optimization$gradient)) / 40, 1e-3)
  expect_equal(opt$optimization$gradient[["log_C"]],
               ep_evidence(d$x, d$y, opt$C, opt$epsilon, opt$kernel)$gradient[["log_C"]],
               tolerance = 1e-3)
  # the optimum is a maximum along each coordinate
  for (j in 1:3) {
    par <- log(opt$optimization$estimate)
    for (step in c(-0.05, 0.05)) {
      p <- par; p[j] <- p[j] + step
      e <- ep_evidence(d$x, d$y, exp(p[1]), exp(p[2]), rbf_kernel(exp(p[3])))$log_evidence
      expect_lt(e, opt$log_evidence)
    }
  }
})

test_that("optimize = c(\"C\", \"epsilon\") keeps the kernel width and maximises over the rest", {
  d <- sinc_data(40)
  k <- rbf_kernel(1.6)
  opt <- mfsvr(d$x, d$y, C = 5, epsilon = 0.1, kernel = k, optimize = c("C", "epsilon"),
               scale = FALSE)
  expect_identical(opt$kernel$sigma, 1.6)
  expect_named(opt$optimization$estimate, c("C", "epsilon"))
  expect_lt(max(abs(opt$optimization$gradient)) / 40, 1e-3)
  # a maximum along each searched coordinate, by independent evidence calls
  par <- log(opt$optimization$estimate)
  for (j in 1:2) for (step in c(-0.05, 0.05)) {
    p <- par; p[j] <- p[j] + step
    e <- ep_evidence(d$x, d$y, exp(p[1]), exp(p[2]), k)$log_evidence
    expect_lt(e, opt$log_evidence)
  }
  # C alone: epsilon stays as given
  only_c <- mfsvr(d$x, d$y, C = 5, epsilon = 0.1, kernel = k, optimize = "C", scale = FALSE)
  expect_identical(only_c$epsilon, 0.1)
  expect_lt(abs(ep_evidence(d$x, d$y, only_c$C, 0.1, k)$gradient[["log_C"]]) / 40, 1e-3)
  expect_error(mfsvr(d$x, d$y, optimize = "width", scale = FALSE),
               "'optimize' must be TRUE, FALSE or a subset")
  expect_error(mfsvr(d$x, d$y, optimize = NA, scale = FALSE), "'optimize'")
  expect_error(mfsvr(d$x, d$y, kernel = poly_kernel(2), optimize = "sigma", scale = FALSE),
               "leaves nothing to optimise")
  expect_error(mfsvr(d$x, d$y, epsilon = 0, optimize = "epsilon", scale = FALSE),
               "leaves nothing to optimise")
})

test_that("an evidence search that creeps towards C = Inf says so", {
  # sinc data where the evidence at sigma = 1.6 keeps rising with C (found
  # in the srvm experiment): the warning names the uniform-noise limit, and
  # the evidence there is indeed still increasing in C: profiled over
  # epsilon (by optimize()), it is higher at 3 C than at the stop
  set.seed(4)
  x <- runif(50, -10, 10)
  y <- sin(x) / x + rnorm(50, sd = 0.1)
  k <- rbf_kernel(1.6)
  expect_warning(f <- mfsvr(x, y, C = 10, epsilon = 0.1, kernel = k, optimize = c("C", "epsilon"),
                            scale = FALSE),
                 "still rises as C grows")
  expect_gt(f$C, 100)
  profile <- function(C) {
    optimize(function(le) ep_evidence(x, y, C, exp(le), k)$log_evidence,
             log(c(0.1, 0.2)), maximum = TRUE)$objective
  }
  expect_gt(profile(3 * f$C), f$log_evidence)
})

test_that("optimize = TRUE survives steps towards degenerate hyperparameters", {
  # from sigma = 1 the first BFGS steps on these data head for huge widths,
  # where EP stops converging; those points must count as failures
  set.seed(1)
  d <- data.frame(u = runif(30, -5, 5))
  d$v <- sin(d$u) + rnorm(30, sd = 0.1)
  f <- mfsvr(v ~ u, data = d, C = 5, kernel = rbf_kernel(1), optimize = TRUE, scale = FALSE)
  expect_true(f$convergence$converged)
  expect_true(f$optimization$convergence$converged)
  expect_lt(max(abs(f$optimization$gradient)) / 30, 1e-3)
  expect_gt(f$log_evidence, mfsvr(v ~ u, data = d, C = 5, kernel = rbf_kernel(1),
                                  scale = FALSE)$log_evidence)
})

test_that("the formula interface matches the matrix interface", {
  d <- sinc_data(20)
  a <- mfsvr(y ~ x, data = d, C = 5, kernel = rbf_kernel(sqrt(2)), scale = FALSE)
  b <- mfsvr(d$x, d$y, C = 5, kernel = rbf_kernel(sqrt(2)), scale = FALSE)
  expect_equal(unname(coef(a)), unname(coef(b)))
  expect_equal(unname(predict(a, data.frame(x = c(0, 1)))), predict(b, c(0, 1)))
  expect_error(predict(a, data.frame(z = 1)), "newdata")
})

test_that("the paper's algorithm gives the EP weights through mfsvr() and warns when it fails", {
  d <- sinc_data(40)
  a <- mfsvr(d$x, d$y, C = 5, kernel = rbf_kernel(sqrt(2)), scale = FALSE)
  p <- mfsvr(d$x, d$y, C = 5, kernel = rbf_kernel(sqrt(2)),
             control = mfsvr_control(algorithm = "paper", max_iter = 2000), scale = FALSE)
  expect_lt(max(abs(coef(a) - coef(p))), 1e-6)
  expect_warning(mfsvr(d$x, d$y, C = 100, kernel = rbf_kernel(sqrt(2)),
                       control = mfsvr_control(algorithm = "paper", max_iter = 20), scale = FALSE),
                 "did not converge in 20 iterations")
})

test_that("hard cases: one point, duplicates, constant targets, tiny and huge C, far targets", {
  expect_s3_class(mfsvr(1, 2, C = 1, kernel = rbf_kernel(1), scale = FALSE), "gpsvm_mfsvr")
  x <- rep(c(0, 1, 2), each = 3)
  fit <- mfsvr(x, x + rep(c(-0.1, 0, 0.1), 3), C = 10, epsilon = 0.05, kernel = rbf_kernel(1),
               scale = FALSE)
  expect_true(fit$convergence$converged)
  expect_equal(unname(fitted(fit)[1:3]), rep(fitted(fit)[1], 3))
  cst <- mfsvr(1:10, rep(3, 10), C = 2, kernel = rbf_kernel(3), scale = FALSE)
  expect_true(all(is.finite(coef(cst))))
  d <- sinc_data(40)
  for (C in c(1e-3, 1e3)) {
    f <- mfsvr(d$x, d$y, C = C, kernel = rbf_kernel(sqrt(2)), scale = FALSE)
    expect_true(f$convergence$converged, info = paste("C =", C))
    expect_true(is.finite(f$log_evidence))
  }
  # a nearly box-shaped likelihood: parallel EP oscillates and hands over to
  # sequential sweeps; both representations reach the same fixed point
  d2 <- sinc_data(200, seed = 7)
  box <- mfsvr(d2$x, d2$y, C = 1000, kernel = rbf_kernel(sqrt(2)), scale = FALSE)
  expect_true(box$convergence$converged)
  box_seq <- mfsvr(d2$x, d2$y, C = 1000, kernel = rbf_kernel(sqrt(2)),
                   control = mfsvr_control(schedule = "sequential"), scale = FALSE)
  expect_lt(max(abs(fitted(box) - fitted(box_seq))), 1e-8)
  far <- mfsvr(d$x, d$y + c(1e3, rep(0, 39)), C = 5, kernel = rbf_kernel(sqrt(2)), scale = FALSE)
  expect_true(far$convergence$converged)
  # the outlier pulls with at most weight C
  expect_lte(max(abs(coef(far))), 5 + 1e-8)
})

test_that("bad input gives clear errors naming the argument", {
  expect_error(mfsvr(c(1, NA, 3), 1:3, scale = FALSE), "'x' contains missing")
  expect_error(mfsvr(1:3, c(1, Inf, 3), scale = FALSE), "'y' contains infinite")
  expect_error(mfsvr(letters[1:3], 1:3, scale = FALSE), "'x' must be numeric")
  expect_error(mfsvr(1:3, 1:4, scale = FALSE), "'y' has 4 values")
  expect_error(mfsvr(1:3, 1:3, C = 0, scale = FALSE), "'C' must lie in")
  expect_error(mfsvr(1:3, 1:3, C = -1, scale = FALSE), "'C'")
  expect_error(mfsvr(1:3, 1:3, epsilon = -0.1, scale = FALSE), "'epsilon' must lie in")
  expect_error(mfsvr(1:3, 1:3, kernel = "rbf", scale = FALSE), "'kernel'")
  expect_error(mfsvr(1:3, 1:3, control = list(), scale = FALSE), "'control'")
  expect_error(mfsvr(1:3, 1:3, foo = 1, scale = FALSE), "unknown argument")
  expect_error(mfsvr_control(algorithm = "newton"), "'algorithm' must be one of")
  expect_error(mfsvr_control(damping = 0), "'damping'")
  fit <- mfsvr(cbind(a = 1:5, b = c(2, 1, 4, 3, 5)), 1:5, scale = FALSE)
  expect_error(predict(fit, matrix(1:6, ncol = 3)), "'newdata' must have 2 column")
  expect_error(predict(fit, interval = "both"), "'interval' must be one of")
  expect_error(predict(fit, level = 1.5), "'level'")
  # two inputs: plot() draws observed against fitted; a derivative needs one
  expect_error(plot(fit, deriv = 1), "one input")
})

test_that("plot() draws matrix and formula fits", {
  d <- sinc_data(20, seed = 12)
  pdf(NULL)
  on.exit(dev.off())
  fit <- mfsvr(d$x, d$y, C = 5, kernel = rbf_kernel(sqrt(2)), scale = FALSE)
  expect_invisible(plot(fit, truth = function(x) sin(x) / x))
  df <- data.frame(u = d$x, v = d$y)
  expect_invisible(plot(mfsvr(v ~ u, data = df, C = 5, kernel = rbf_kernel(sqrt(2)),
                              scale = FALSE), n = 30))
})

test_that("EP on the pivoted Cholesky factor agrees with EP on the dense kernel matrix", {
  d <- sinc_data(200, seed = 6)
  k <- rbf_kernel(sqrt(2))
  lr <- mfsvr(d$x, d$y, C = 5, epsilon = 0.1, kernel = k, scale = FALSE)
  dn <- mfsvr(d$x, d$y, C = 5, epsilon = 0.1, kernel = k, control = mfsvr_control(rank_tol = 0),
              scale = FALSE)
  sq <- mfsvr(d$x, d$y, C = 5, epsilon = 0.1, kernel = k,
              control = mfsvr_control(schedule = "sequential"), scale = FALSE)
  expect_true(isTRUE(attr(lr$inducing, "low_rank")))
  expect_lt(nrow(lr$inducing), 200 / 4)
  expect_null(dn$inducing)
  # FITC on the pivots with the fit's factor L of K_ZZ (L L' = K_ZZ, no
  # jitter) reproduces K to the requested accuracy: G = K_xZ L^-T
  K <- kernel_matrix(k, d$x)
  L <- lr$inducing_chol
  expect_lt(max(abs(tcrossprod(L) - kernel_matrix(k, lr$inducing))), 1e-14)
  G <- t(forwardsolve(L, kernel_matrix(k, lr$inducing, d$x)))
  expect_lt(max(abs(K - tcrossprod(G))), 1e-12)
  for (other in list(dn, sq)) {
    expect_lt(max(abs(coef(lr) - coef(other))), 1e-7)
    expect_equal(lr$log_evidence, other$log_evidence, tolerance = 1e-9)
    expect_equal(lr$variance, other$variance, tolerance = 1e-7)
  }
  # predictions read K's columns through the pivots, k_z ~ G g_z: by positive
  # semi-definiteness each entry's error is at most sqrt(r(z) max_i r_i),
  # the residual variances r <= rank_tol k(x, x) (1 here), so a mean moves by
  # at most sqrt(rank_tol) |w|_1: tiny near the data, up to that far from it
  xn <- c(-15, -2.5, 0, 9.9)
  a <- predict(lr, xn, se.fit = TRUE)
  b <- predict(dn, xn, se.fit = TRUE)
  expect_lt(max(abs(a$fit - b$fit)), sqrt(lr$control$rank_tol) * sum(abs(coef(dn))))
  expect_equal(a$fit[2:3], b$fit[2:3], tolerance = 1e-8)
  expect_equal(a$se.fit, b$se.fit, tolerance = 1e-7)
  ga <- ep_evidence(d$x, d$y, 5, 0.1, k)$gradient
  gb <- ep_evidence(d$x, d$y, 5, 0.1, k, control = mfsvr_control(rank_tol = 0))$gradient
  expect_equal(ga, gb, tolerance = 1e-7)
})

test_that("sites deep inside a wide tube have precision exactly 0 and leave the prior untouched", {
  d <- sinc_data(15)
  C <- 2; eps <- 100
  fit <- mfsvr(d$x, d$y, C = C, epsilon = eps, kernel = rbf_kernel(1), scale = FALSE)
  expect_true(all(fit$site_precision == 0))
  expect_equal(unname(fitted(fit)), rep(0, 15), tolerance = 1e-12)
  expect_equal(fit$variance, rep(1, 15), tolerance = 1e-12)
  # the likelihood is the constant C / (2 (eps C + 1)) wherever the prior has mass
  expect_equal(fit$log_evidence, 15 * log(C / (2 * (eps * C + 1))), tolerance = 1e-12)
})

test_that("non-convergence of EP is a warning naming the iterations and the change", {
  d <- sinc_data(40)
  expect_warning(f <- mfsvr(d$x, d$y, C = 5, kernel = rbf_kernel(sqrt(2)),
                            control = mfsvr_control(max_iter = 2), scale = FALSE),
                 "did not converge in 2 iterations \\(change [0-9.e-]+, tolerance 1e-09\\)")
  expect_false(f$convergence$converged)
  expect_identical(f$convergence$iterations, 2L)
})

test_that("EP that does not settle at all is an error, not a meaningless fit", {
  # a sine with noise sd 0.1: C = 1e4 still gives a fit near the data (EP
  # ends within 1e-4 of its fixed point), C = 1e5 and more a tube so hard
  # that the marginals still jump by many posterior sd after 500 sweeps
  set.seed(1)
  x <- seq(-3, 3, length.out = 40)
  y <- sin(x) + rnorm(40, sd = 0.1)
  near <- suppressWarnings(mfsvr(x, y, C = 1e4))
  expect_lt(max(abs(predict(near, x) - sin(x))), 0.3)
  for (C in c(1e5, 1e8)) {
    expect_error(mfsvr(x, y, C = C),
                 sprintf("EP did not settle at C = %s, epsilon = 0.1: after 500 sweeps", format(C)),
                 fixed = TRUE, info = paste("C =", C))
  }
  # the same run cut short by max_iter is a warning, as any early stop: one,
  # the returned fit's, though the default weighs several fits (two widths,
  # the offset), each cut short
  # (on the dense prior: at C = 1e8 EP's sites are degenerate, and which of
  # the weighed fits stops within 20 sweeps turns on the rounding of the
  # prior's representation, a low-rank one's diagonal rest among it)
  said <- character(0)
  short <- withCallingHandlers(mfsvr(x, y, C = 1e8, control = mfsvr_control(max_iter = 20,
                                                                            rank_tol = 0)),
                               warning = function(w) {
                                 said <<- c(said, conditionMessage(w))
                                 invokeRestart("muffleWarning")
                               })
  expect_length(said, 1L)
  expect_match(said, sprintf("did not converge in 20 iterations (change %.3g,",
                             short$convergence$change), fixed = TRUE)
  expect_identical(nrow(short$bias_choice), 2L)
})

test_that("a warm start from nearby hyperparameters reaches the same fixed point in fewer sweeps", {
  d <- sinc_data(40)
  for (ctl in list(mfsvr_control(), mfsvr_control(schedule = "sequential"))) {
    near <- gpsvm:::.mfsvr_fit(matrix(d$x), d$y, 5.5, 0.11, rbf_kernel(1.5), ctl)
    cold <- gpsvm:::.mfsvr_fit(matrix(d$x), d$y, 5, 0.1, rbf_kernel(sqrt(2)), ctl)
    warm <- gpsvm:::.mfsvr_fit(matrix(d$x), d$y, 5, 0.1, rbf_kernel(sqrt(2)), ctl, start = near)
    expect_true(warm$convergence$converged)
    expect_lt(warm$convergence$iterations, cold$convergence$iterations)
    expect_lt(max(abs(warm$coefficients - cold$coefficients)), 1e-7)
    expect_equal(warm$log_evidence, cold$log_evidence, tolerance = 1e-9)
  }
  # unusable sites (a negative precision) are ignored: the fit starts from
  # the prior, exactly as without a start; sites of the wrong length are a bug
  bad <- list(site_precision = c(-1, rep(0, 39)), site_nu = rep(0, 40))
  fresh <- gpsvm:::.mfsvr_fit(matrix(d$x), d$y, 5, 0.1, rbf_kernel(1), mfsvr_control())
  ignored <- gpsvm:::.mfsvr_fit(matrix(d$x), d$y, 5, 0.1, rbf_kernel(1), mfsvr_control(),
                                start = bad)
  expect_identical(ignored$coefficients, fresh$coefficients)
  expect_identical(ignored$convergence$iterations, fresh$convergence$iterations)
  short <- list(site_precision = rep(0, 39), site_nu = rep(0, 39))
  expect_error(gpsvm:::.mfsvr_fit(matrix(d$x), d$y, 5, 0.1, rbf_kernel(1), mfsvr_control(),
                                  start = short), "differ in size")
})

test_that("with Gaussian noise the engine is exact GP regression (dense and low-rank)", {
  d <- sinc_data(30, seed = 8)
  K <- exp(-outer(d$x, d$x, "-")^2 / 4)
  s2 <- 0.05
  A <- K + diag(s2, 30)
  w_ref <- drop(solve(A, d$y))
  var_ref <- diag(K - K %*% solve(A, K))
  ev_ref <- -0.5 * sum(d$y * w_ref) - sum(log(diag(chol(A)))) - 15 * log(2 * pi)
  G <- t(chol(K + diag(1e-10, 30)))  # a factor with K ~ G G'
  for (lr in c(FALSE, TRUE)) {
    fit <- core_probe("cpp_ep_gaussian")(if (lr) G else K, d$y, s2, lr)
    expect_true(fit$converged)
    expect_lte(fit$iterations, 3L)
    expect_equal(fit$weights, w_ref, tolerance = 1e-6)
    expect_equal(fit$mean, drop(K %*% w_ref), tolerance = 1e-8)
    expect_equal(fit$variance, var_ref, tolerance = 1e-7)
    expect_equal(fit$log_evidence, ev_ref, tolerance = 1e-8)
  }
})
