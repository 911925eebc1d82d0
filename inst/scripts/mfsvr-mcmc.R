# Long elliptical slice sampling run for the mfsvr vignette.
#
# The exact posterior of the sinc example (Gao, Gunn and Harris 2002,
# section 6: N = 40, C = 5, epsilon = 0.1, kernel exp(-|x - x'|^2 / 4)) is
# sampled with elliptical slice sampling (Murray, Adams and MacKay 2010) over
# the latent values at the 40 training inputs and at a grid of 101 test
# inputs jointly, so that no kernel matrix is inverted.  Four chains of
# 400,000 iterations, thinned by 20 after 20,000 burn-in.  The vignette compares
# the mean-field (EP) posterior means and standard deviations with these.
#
# Run from the package source directory:
#   Rscript inst/scripts/mfsvr-mcmc.R
# It writes inst/extdata/mfsvr-mcmc.rds (about 10 minutes of CPU).

ess_sample <- function(log_lik, chol_prior, n_iter, thin = 1L, f0 = NULL) {
  d <- nrow(chol_prior)
  f <- if (is.null(f0)) drop(crossprod(chol_prior, rnorm(d))) else f0
  ll <- log_lik(f)
  keep <- matrix(NA_real_, n_iter %/% thin, d)
  for (it in seq_len(n_iter)) {
    nu <- drop(crossprod(chol_prior, rnorm(d)))  # a prior draw, L' z with K = L' L
    threshold <- ll + log(runif(1))
    theta <- runif(1, 0, 2 * pi)
    lo <- theta - 2 * pi
    hi <- theta
    repeat {
      proposal <- f * cos(theta) + nu * sin(theta)
      lp <- log_lik(proposal)
      if (lp > threshold) break
      if (theta < 0) lo <- theta else hi <- theta
      theta <- runif(1, lo, hi)
    }
    f <- proposal
    ll <- lp
    if (it %% thin == 0L) keep[it %/% thin, ] <- f
  }
  keep
}

# The vignette's data: sinc(x) = sin(x)/x, 40 inputs uniform on [-10, 10],
# noise sd 0.1, seed 2002.
sinc_example <- function() {
  set.seed(2002)
  x <- sort(runif(40, -10, 10))
  list(x = x, y = sin(x) / x + rnorm(40, sd = 0.1), grid = seq(-10, 10, length.out = 101))
}

if (sys.nframe() == 0L) {
  d <- sinc_example()
  C <- 5
  eps <- 0.1
  z <- c(d$x, d$grid)
  K <- exp(-outer(z, z, "-")^2 / 4)
  R <- chol(K + diag(1e-8, length(z)))  # jitter far below the posterior variances
  n <- length(d$x)
  log_lik <- function(f) -C * sum(pmax(abs(d$y - f[seq_len(n)]) - eps, 0))
  set.seed(1)
  n_iter <- 400000L
  thin <- 20L
  burn <- 20000L
  chains <- lapply(1:4, function(k) {
    ess_sample(log_lik, R, n_iter = n_iter, thin = thin)[-seq_len(burn / thin), ]
  })
  draws <- do.call(rbind, chains)
  # Monte Carlo standard errors of the means by batch means within chains
  batch_se <- function(j) {
    b <- unlist(lapply(chains, function(ch) {
      colMeans(matrix(ch[seq_len(50 * (nrow(ch) %/% 50)), j], ncol = 50))
    }))
    sd(b) / sqrt(length(b))
  }
  out <- list(
    x = d$x, y = d$y, grid = d$grid, C = C, epsilon = eps, kernel_sigma = sqrt(2),
    mean_train = colMeans(draws[, seq_len(n)]), sd_train = apply(draws[, seq_len(n)], 2, sd),
    mean_grid = colMeans(draws[, -seq_len(n)]), sd_grid = apply(draws[, -seq_len(n)], 2, sd),
    mcse_train = vapply(seq_len(n), batch_se, 0),
    mcse_grid = vapply(n + seq_along(d$grid), batch_se, 0),
    n_draws = nrow(draws), chains = length(chains), iterations = n_iter,
    thin = thin, burn_in = burn, jitter = 1e-8, created = format(Sys.time(), "%Y-%m-%d")
  )
  saveRDS(out, file.path("inst", "extdata", "mfsvr-mcmc.rds"), version = 2)
  cat("draws:", out$n_draws, " max MCSE of the training means:", max(out$mcse_train), "\n")
}
