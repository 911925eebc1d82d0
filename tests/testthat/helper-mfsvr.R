# Shared data and plain-R references for the mfsvr tests.

# The paper's sinc experiment (Gao, Gunn and Harris 2002, section 6):
# 40 inputs uniform on [-10, 10], sinc(x) = sin(x)/x, noise sd 0.1.
sinc_data <- function(n = 40, seed = 1) {
  set.seed(seed)
  x <- runif(n, -10, 10)
  data.frame(x = x, y = sin(x) / x + rnorm(n, sd = 0.1))
}

# The epsilon-insensitive likelihood (eq. 2.2), written out in plain R.
epsins_density <- function(t, f, C, eps) {
  C / (2 * (eps * C + 1)) * exp(-C * pmax(abs(t - f) - eps, 0))
}

# log of int p(t | f) N(f; m, v) df by quadrature, split at the kinks.
epsins_log_z_quad <- function(t, m, v, C, eps) {
  s <- sqrt(v)
  g <- function(f) epsins_density(t, f, C, eps) * dnorm(f, m, s)
  lo <- min(m - 40 * s, t - eps - 40 / C); hi <- max(m + 40 * s, t + eps + 40 / C)
  cuts <- sort(unique(c(lo, t - eps, t + eps, m - 8 * s, m, m + 8 * s, hi)))
  cuts <- cuts[cuts >= lo & cuts <= hi]
  total <- 0
  for (k in seq_len(length(cuts) - 1L)) {
    total <- total + integrate(g, cuts[k], cuts[k + 1L], rel.tol = 1e-12,
                               subdivisions = 1000L)$value
  }
  log(total)
}

ep_control_list <- function(...) {
  modifyList(list(algorithm = "ep", schedule = "parallel", max_iter = 1000L, tol = 1e-10,
                  damping = 1, seed = 1, rank_tol = 0, eta = 0.05, inner = 30L,
                  adaptive_eta = TRUE),
             list(...))
}

# The EP evidence of mfsvr() at given hyperparameters on the data as given,
# with its gradient, as a list.
ep_evidence <- function(x, y, C = 5, epsilon = 0.1, kernel = rbf_kernel(1),
                        control = mfsvr_control(), inducing = NULL) {
  fit <- mfsvr(x, y, C = C, epsilon = epsilon, kernel = kernel, control = control,
               inducing = inducing, optimize = FALSE, scale = FALSE)
  e <- evidence(fit, gradient = TRUE)
  list(log_evidence = c(e), gradient = attr(e, "gradient"))
}

# Pivoted Cholesky in plain R, one kernel column at a time: the input with
# the largest residual variance k(x, x) - Q(x, x) next (the earliest on
# ties). column(j) is the kernel matrix's column j, `diagonal` its
# diagonal; the full matrix is never needed.
plain_greedy_pivots <- function(column, diagonal, m) {
  d <- diagonal
  L <- matrix(0, length(d), 0)
  chosen <- integer(0)
  for (k in seq_len(m)) {
    j <- which.max(d)
    l <- (column(j) - L %*% L[j, ]) / sqrt(d[j])
    L <- cbind(L, l)
    d <- pmax(d - l^2, 0)
    chosen <- c(chosen, j)
    d[chosen] <- 0
  }
  chosen
}

# Level-p quantiles of t = f + e, f ~ N(mean, var) and e the
# epsilon-insensitive noise (C, eps), through the core's quantile of the
# predictive distribution (uncalibrated, one component); p recycled.
epsins_quantile <- function(p, mean, var, C, eps) {
  n <- max(length(p), length(mean))
  p <- rep_len(p, n)
  g <- list(kind = "epsins", mean = matrix(rep_len(mean, n)), var = matrix(rep_len(var, n)),
            C = C, epsilon = eps, weight = 1)
  gpsvm:::cpp_predictive_quantile(g, NULL, pmin(p, 1 - p), p >= 0.5)
}
