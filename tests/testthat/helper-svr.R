# Shared data and plain-R references for test-svr.R.

# The paper's experiment (Gao et al. 2002, section 3.2): sin(x) plus Gaussian
# noise of variance 0.5 on [0, 4 pi].
svr_sine_data <- function(n = 40, seed = 1) {
  set.seed(seed)
  x <- seq(0, 4 * pi, length.out = n)
  list(x = x, y = sin(x) + rnorm(n, sd = sqrt(0.5)))
}

svr_rbf_gram <- function(x, sigma) {
  x <- as.matrix(x)
  d2 <- as.matrix(dist(x))^2
  exp(-d2 / (2 * sigma^2))
}

# Dual objective 1/2 b'Kb - y'b + eps |b|_1.
svr_dual_objective <- function(beta, K, y, eps) {
  0.5 * sum(beta * (K %*% beta)) - sum(y * beta) + eps * sum(abs(beta))
}

# Cyclic exact coordinate descent for the bias-free dual, run to a tiny
# change: an independent slow reference.
svr_cd_reference <- function(K, y, C, eps, sweeps = 20000, tol = 1e-13) {
  n <- length(y)
  beta <- numeric(n)
  f <- numeric(n)
  for (s in seq_len(sweeps)) {
    change <- 0
    for (k in seq_len(n)) {
      r <- y[k] - f[k]
      z <- beta[k] + r / K[k, k]
      b <- sign(z) * min(max(abs(z) - eps / K[k, k], 0), C)
      d <- b - beta[k]
      if (d != 0) {
        f <- f + d * K[, k]
        beta[k] <- b
        change <- max(change, abs(d))
      }
    }
    if (change < tol) break
  }
  beta
}

# Largest KKT violation of a bias-free solution, in residual units.
svr_kkt_violation <- function(beta, r, C, eps, tol_bound = 1e-12) {
  v <- ifelse(abs(beta) <= tol_bound, pmax(abs(r) - eps, 0),
       ifelse(beta >= C - tol_bound, pmax(eps - r, 0),
       ifelse(beta <= -C + tol_bound, pmax(r + eps, 0),
              abs(r - sign(beta) * eps))))
  max(v)
}
