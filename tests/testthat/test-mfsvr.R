# Mean-field SVR: the epsilon-insensitive likelihood's site moments, the
# TAP / EP engine, and the fitted model.

epsins <- function(t, m, v, C, eps) as.data.frame(gpsvm:::cpp_epsins(t, m, v, C, eps))

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
    expect_equal(gpsvm:::.mfsvr_noise_variance(C, eps), ref, tolerance = 1e-9)
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

ep_engine <- function(K, y, C, eps, ...) gpsvm:::cpp_ep_epsins(K, y, C, eps, ep_control_list(...))

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
