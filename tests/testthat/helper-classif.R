# Shared data and plain-R reference solvers for the classifier tests.  The
# references are deliberately simple and independent of the package: cyclic
# coordinate ascent for the SVM dual, Algorithm 17.1 transcribed from the
# paper with dnorm/pnorm, and the leave-one-out formulas with solve().

two_class_data <- function(n, seed, noise = 0.4) {
  set.seed(seed)
  x <- matrix(rnorm(2 * n), n, 2)
  y <- ifelse(x[, 1] + 0.5 * x[, 2]^2 - 0.3 + rnorm(n, sd = noise) > 0, 1, -1)
  list(x = x, y = y)
}

# n points of two classes split by a parabola in two inputs:
# x1 + 0.7 x2^2 + N(0, noise^2) > 0.5 is labels[2], the rest labels[1].
parabola_classes <- function(n, seed, noise = 0.7, labels = c(-1, 1)) {
  set.seed(seed)
  x <- matrix(rnorm(2 * n), n, 2)
  above <- x[, 1] + 0.7 * x[, 2]^2 + rnorm(n, sd = noise) - 0.5 > 0
  list(x = x, y = labels[above + 1])
}

rbf_gram <- function(x, sigma, z = x) {
  d2 <- outer(rowSums(x^2), rowSums(z^2), "+") - 2 * x %*% t(z)
  exp(-pmax(d2, 0) / (2 * sigma^2))
}

# Box-constrained SVM dual by cyclic coordinate ascent: each alpha_i is set to
# the exact maximiser along its coordinate, clipped to [0, C].
svm_dual_cd <- function(K, y, C = Inf, sweeps = 20000, tol = 1e-13) {
  n <- length(y)
  Q <- K * outer(y, y)
  a <- numeric(n)
  g <- rep(1, n)  # gradient 1 - Q a
  for (s in seq_len(sweeps)) {
    moved <- 0
    for (i in seq_len(n)) {
      new <- min(max(a[i] + g[i] / Q[i, i], 0), C)
      d <- new - a[i]
      if (d != 0) {
        g <- g - Q[, i] * d
        a[i] <- new
        moved <- max(moved, abs(d))
      }
    }
    if (moved < tol) break
  }
  a
}

svm_dual_objective <- function(a, K, y) sum(a) - 0.5 * sum(outer(a * y, a * y) * K)

# Algorithm 17.1 of Opper and Winther, line by line.
naive_mf_r <- function(K, y, kappa = 0, eta = 0.05, ftol = 1e-5, maxit = 10000, alpha = NULL) {
  n <- length(y)
  if (is.null(alpha)) alpha <- numeric(n)
  kd <- diag(K)
  prev <- Inf
  it <- 0
  repeat {
    f <- drop(K %*% (y * alpha))
    z <- y * (f - kd * y * alpha) / sqrt(kd)
    target <- (1 - 2 * kappa) * dnorm(z) / (kappa + (1 - 2 * kappa) * pnorm(z)) / sqrt(kd)
    delta <- target - alpha
    if (max(delta^2) < ftol || it >= maxit) break
    err <- sum(delta^2)
    if (it > 0) eta <- if (err < prev) 1.1 * eta else eta / 2
    prev <- err
    alpha <- alpha + eta * delta
    it <- it + 1
  }
  list(alpha = alpha, iterations = it, field = f)
}

# The paper's settings, which the solver tests compare with plain-R
# references on the inputs as given: no scaling, no bias, no noise unless
# asked, and gpc()'s naive mean field.
gpc_paper <- function(..., noise = 0, bias = 0, method = "naive", scale = FALSE) {
  gpc(..., noise = noise, bias = bias, method = method, scale = scale)
}
svc_paper <- function(..., noise = 0, bias = 0, scale = FALSE) {
  svc(..., noise = noise, bias = bias, scale = scale)
}

# Plain-R EP (Rasmussen and Williams, Algorithm 3.5, sequential sweeps with a
# refresh) on a dense covariance K for a likelihood given by its tilted
# log Z(m, v) and first two derivatives in m; evidence by their eq. (3.65).
ep_plain <- function(K, moments, sweeps = 300) {
  n <- nrow(K)
  tau <- numeric(n); nu <- numeric(n)
  Sigma <- K; mu <- numeric(n)
  for (s in seq_len(sweeps)) {
    old <- mu
    for (i in seq_len(n)) {
      tc <- 1 / Sigma[i, i] - tau[i]; nc <- mu[i] / Sigma[i, i] - nu[i]
      m <- nc / tc; v <- 1 / tc
      mo <- moments(i, m, v)
      tnew <- max(-mo[3] / (1 + mo[3] * v), 0)
      nnew <- tnew * m + mo[2] * (1 + tnew * v)
      dt <- tnew - tau[i]
      tau[i] <- tnew; nu[i] <- nnew
      si <- Sigma[, i]
      Sigma <- Sigma - dt / (1 + dt * si[i]) * si %*% t(si)
      mu <- drop(Sigma %*% nu)
    }
    Sigma <- solve(solve(K) + diag(tau)); mu <- drop(Sigma %*% nu)
    if (max(abs(mu - old)) < 1e-13) break
  }
  tc <- 1 / diag(Sigma) - tau; nc <- mu / diag(Sigma) - nu
  m <- nc / tc; v <- 1 / tc
  logZ <- vapply(seq_len(n), function(i) moments(i, m[i], v[i])[1], numeric(1))
  # eq. (3.65) with the site variances 1 / tau: the
  # sites' normalisers Z_i sqrt(2 pi (v_i + 1/tau_i)) exp((m_i - mt_i)^2 /
  # (2 (v_i + 1/tau_i))) times N(mt; 0, K + diag(1/tau))
  evidence <- NA_real_  # the form below needs every tau > 0
  if (all(tau > 0)) {
    mt <- nu / tau
    A <- K + diag(1 / tau)
    evidence <- sum(logZ) - 0.5 * determinant(A)$modulus[1] - 0.5 * sum(mt * solve(A, mt)) +
      0.5 * sum(log(v + 1 / tau)) + 0.5 * sum((m - mt)^2 / (v + 1 / tau))
  }
  list(tau = tau, nu = nu, mean = mu, Sigma = Sigma, cavity_mean = m, evidence = evidence)
}
