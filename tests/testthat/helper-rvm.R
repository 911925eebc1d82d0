# Shared data and plain-R references for the rvm()/srvm() tests.

rvm_sinc_data <- function(n = 50, seed = 1, sd = 0.1) {
  set.seed(seed)
  x <- runif(n, -10, 10)
  list(x = x, y = sin(x) / x + rnorm(n, sd = sd))
}

rvm_sin_data <- function(n = 40, seed = 1, sd = 0.2) {
  set.seed(seed)
  x <- runif(n, -5, 5)
  list(x = x, y = sin(x) + rnorm(n, sd = sd))
}

# Gaussian kernel and its derivatives in the first argument, written out
# (not through the package): d^n/dz^n exp(-(z - x)^2 / (2 s^2)).
rbf_deriv_r <- function(z, x, s, n) {
  u <- outer(z, x, "-")
  k <- exp(-u^2 / (2 * s^2))
  switch(as.character(n),
    "0" = k,
    "1" = -u / s^2 * k,
    "2" = (u^2 / s^4 - 1 / s^2) * k,
    "3" = (-u^3 / s^6 + 3 * u / s^4) * k,
    "4" = (u^4 / s^8 - 6 * u^2 / s^6 + 3 / s^4) * k,
    stop("order not written out"))
}

# The variance of D^n f(z) under the fit augmented at z by one more basis
# function, k(., z), whose weight has the prior N(0, v), v the response's
# variance (Rasmussen and Quinonero-Candela 2005): the augmented posterior
# precision inverted directly, for a Gaussian kernel of width s on one input
# and a fit to the data as given.  The kept weights' prior precision is the
# fit's, Sigma^-1 - Phi'Phi / sigma^2 (diag(alpha) for rvm(), with the
# penalty for srvm()).
rvm_augmented_var_r <- function(fit, x, y, z, s, n = 0) {
  xr <- x[fit$relevance_vectors]
  Phi <- cbind(1, rbf_deriv_r(x, xr, s, 0))
  prior <- solve(fit$Sigma) - crossprod(Phi) / fit$noise_variance
  v <- mean((y - mean(y))^2)
  vapply(seq_along(z), function(i) {
    A <- cbind(Phi, rbf_deriv_r(x, z[i], s, 0))
    prior_a <- rbind(cbind(prior, 0), c(rep(0, ncol(prior)), 1 / v))
    Sigma_a <- solve(crossprod(A) / fit$noise_variance + prior_a)
    h <- c(if (n == 0) 1 else 0, rbf_deriv_r(z[i], xr, s, n), rbf_deriv_r(z[i], z[i], s, n))
    drop(t(h) %*% Sigma_a %*% h)
  }, numeric(1))
}

# One run of updates (7)-(9) of ter Borg and Rothkrantz with explicit
# inverses, from given alpha, lambda, sigma2, pruning above 'prune'
# (never the bias, column 1).
srvm_updates_r <- function(H, P, y, alpha, lambda, sigma2, iters, prune = Inf,
                           learn_lambda = TRUE) {
  N <- length(y)
  act <- seq_len(ncol(H))
  for (it in seq_len(iters)) {
    Ha <- H[, act, drop = FALSE]
    Pa <- P[act, act, drop = FALSE]
    Sinv <- lambda * Pa + diag(alpha, length(act))
    Sigma <- solve(crossprod(Ha) / sigma2 + Sinv)
    S <- solve(Sinv)
    mu <- drop(Sigma %*% crossprod(Ha, y)) / sigma2
    a_new <- alpha * (diag(S) - diag(Sigma)) / mu^2
    l_new <- if (learn_lambda) {
      (sum(diag(S %*% (lambda * Pa))) - sum(diag(Sigma %*% (lambda * Pa)))) /
        drop(t(mu) %*% Pa %*% mu)
    } else lambda
    s_new <- sum((y - Ha %*% mu)^2) / (N - sum(diag(Sigma %*% crossprod(Ha))) / sigma2)
    keep <- a_new <= prune | act == 1L
    act <- act[keep]
    alpha <- pmin(a_new[keep], prune)
    lambda <- l_new
    sigma2 <- s_new
  }
  list(alpha = alpha, lambda = lambda, sigma2 = sigma2, active = act)
}

# log N(y | 0, sigma2 I + H (lambda P + A)^-1 H') evaluated directly.
log_marginal_r <- function(H, P, y, alpha, lambda, sigma2) {
  prior_cov <- solve(lambda * P + diag(alpha, length(alpha)))
  C <- sigma2 * diag(length(y)) + H %*% prior_cov %*% t(H)
  R <- chol(C)
  -0.5 * (length(y) * log(2 * pi) + 2 * sum(log(diag(R))) + sum(backsolve(R, y, transpose = TRUE)^2))
}

# Three inputs, a smooth signal plus rounded Gaussian noise (tied targets): the
# relevance vector machines' evidence rises as narrow kernels give each point
# a basis function of its own and the noise variance falls towards zero.
rounded_noise_data <- function(n) {
  x <- matrix(runif(n * 3), n)
  list(x = x, y = sin(3 * x[, 1]) + round(rnorm(n)))
}

# The log evidence of a Gaussian process with kernel matrix K for the
# centred response y, y ~ N(0, a K + s2 I), at the a and s2 that maximise
# it: by plain R (Cholesky factors, numerical gradients, another start; the
# noise variance kept above 1e-8, where the factor of a kernel matrix of low
# rank, the linear one's, exists).
plain_gp_evidence <- function(K, y) {
  y <- y - mean(y)
  density <- function(t) {
    R <- chol(exp(t[1]) * K + exp(t[2]) * diag(length(y)))
    -sum(log(diag(R))) - sum(backsolve(R, y, transpose = TRUE)^2) / 2 - length(y) * log(2 * pi) / 2
  }
  -optim(c(0.5, -1), function(t) -density(t), method = "L-BFGS-B", lower = c(-20, log(1e-8)),
         upper = c(20, 5), control = list(factr = 1e3, maxit = 1000))$value
}
