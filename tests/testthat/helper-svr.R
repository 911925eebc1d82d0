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

# Tail probability of a new target t = f + e, f ~ N(mu, s^2) and e with the
# epsilon-insensitive density C / (2 (eps C + 1)) exp(-C L_eps(e)) (eq. 28),
# by integrate() over the noise of its density times the Gaussian CDF:
# P(t <= q) = int dens(e) pnorm(q - e; mu, s) de (upper = TRUE: P(t > q)).
# The pieces are cut at the kinks +-eps and around e = q - mu, where the
# Gaussian factor turns, so that neither scale is missed.
svr_pred_tail <- function(q, mu, s, C, eps, upper = FALSE) {
  dens <- function(e) C / (2 * (eps * C + 1)) * exp(-C * pmax(abs(e) - eps, 0))
  g <- function(e) dens(e) * pnorm(q - e, mu, s, lower.tail = !upper)
  tail <- 60 / C  # exp(-60) ~ 1e-26 of the mass lies beyond
  lo <- -eps - tail - 40 * s
  hi <- eps + tail + 40 * s
  cuts <- c(lo, -eps, eps, hi, q - mu + s * c(-40, -8, -2, 0, 2, 8, 40),
            -eps - c(1, 5, 20) / C, eps + c(1, 5, 20) / C)
  cuts <- sort(unique(cuts[cuts >= lo & cuts <= hi]))
  total <- 0
  for (k in seq_len(length(cuts) - 1L)) {
    total <- total + integrate(g, cuts[k], cuts[k + 1], rel.tol = 1e-12,
                               abs.tol = 1e-17, subdivisions = 1000L)$value
  }
  total
}

# Its level-p quantile by uniroot(), the lower or upper tail integrated
# (whichever is the smaller probability, so far quantiles keep their digits).
svr_pred_quantile_ref <- function(p, mu, s, C, eps) {
  sd_t <- sqrt(s^2 + 2 / C^2 + eps^2 * (eps * C + 3) / (3 * (eps * C + 1)))
  f <- if (p < 0.5) function(q) svr_pred_tail(q, mu, s, C, eps) - p else
    function(q) (1 - p) - svr_pred_tail(q, mu, s, C, eps, upper = TRUE)
  # Chebyshev: the quantile lies within mu +- sd_t / sqrt(min(p, 1 - p))
  width <- 1.01 * sd_t / sqrt(min(p, 1 - p))
  uniroot(f, mu + c(-width, width), tol = 1e-13 * (abs(mu) + width))$root
}

# Eq. (16) of Gao et al. (2002) at given coefficients, in plain R: margin
# vectors are those strictly between tol * C and (1 - tol) C in size.
svr_eq16_r <- function(beta, K, y, C, eps, b = 0, tol = 1e-8) {
  r <- y - drop(K %*% beta) - b
  a <- abs(beta)
  M <- a > tol * C & a < C * (1 - tol)
  XC <- a >= C * (1 - tol)
  logdet <- if (any(M)) {
    as.numeric(determinant(2 * pi * K[M, M, drop = FALSE], logarithm = TRUE)$modulus)
  } else 0
  -0.5 * sum(beta * (K %*% beta)) - 0.5 * logdet + length(y) * log(C / (2 * (eps * C + 1))) -
    C * sum(abs(r[XC]) - eps) + sum(log(C / (a[M] * (C - a[M]))))
}

# The optimum of the SVR dual when every input is the same (K = 1), in plain
# R.  With B = sum(beta) the objective is B^2 / 2 + h(B), where h(B), the least
# -y'beta + eps |beta|_1 over the box with that sum, is piecewise linear: each
# point gives a piece of length C with slope -y_i - eps (beta_i from -C to 0)
# and one with slope -y_i + eps (from 0 to C), taken in increasing slope from
# B = -n C.  With a bias B = 0; without one B minimises B^2 / 2 + h(B).
svr_identical_inputs_optimum <- function(y, C, eps, bias) {
  slopes <- sort(c(-y - eps, -y + eps))
  B <- -length(y) * C
  h <- sum(C * y + C * eps)
  for (s in slopes) {
    end <- B + C
    stop <- if (bias) min(end, 0) else min(max(-s, B), end)
    h <- h + s * (stop - B)
    if (stop < end) return(0.5 * stop^2 + h)
    B <- end
  }
  0.5 * B^2 + h
}
