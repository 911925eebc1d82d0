# Remedies for the relevance vector machine's too-narrow prediction intervals
# that stay within the model, measured on held-out splits of the six small
# regression sets of bench-realdata.R (mtcars, cars, trees, swiss,
# LifeCycleSavings, attitude: 21-35 training rows), where rvm()'s default
# intervals miss most.  One rvm() fit per split; from it:
#
#   default       rvm()'s intervals: the noise level integrated against its
#                 posterior at the fitted alphas (see ?rvm)
#   t(n - tr S)   Student's t on the residual degrees of freedom n - tr(S)
#                 (S the hat matrix) with the fitted noise variance
#   laplace       the alphas and log sigma^2 integrated as well: a Laplace
#                 approximation in their logarithms around the fit (the
#                 Hessian by differences of the evidence's gradient), 100
#                 draws, the mixture of the draws' predictive normals
#   gamma(a, b)   a Gamma(a, b) hyperprior on every alpha (scaled data):
#                 Tipping's (2001) fixed-point updates with it, in plain R
#                 over all basis functions, then the default's predictive;
#                 gamma(0, 0) is the same updates without one
#
# Printed: coverage of 95% and 80% prediction intervals (targets 0.92-0.98
# and 0.75-0.85) and the RMSE over the default fit's, mean over the splits.
#
#   make bench BENCH=rvm-remedies                  # 20 splits, a few minutes
#   GPSVM_BENCH_SPLITS=5 make bench BENCH=rvm-remedies
suppressPackageStartupMessages(library(gpsvm))
n_splits <- Sys.getenv("GPSVM_BENCH_SPLITS", "20")
# the data sets and splits of bench-realdata.R, running none of its parts
Sys.setenv(GPSVM_BENCH_PARTS = "none", GPSVM_BENCH_SPLITS = n_splits)
source(file.path("bench", "bench-realdata.R"))
ns <- asNamespace("gpsvm")
internal <- function(name) get(name, envir = ns)

# Tipping's updates with a Gamma(a, b) hyperprior on the alphas:
# alpha_i <- (gamma_i + 2 a) / (mu_i^2 + 2 b), sigma^2 by the usual rule.
hyperprior_fit <- function(H, y, a, b, max_iter = 3000L, prune = 1e9) {
  alpha <- rep(1, ncol(H))
  sigma2 <- 0.1 * stats::var(y)
  keep <- rep(TRUE, ncol(H))
  posterior <- function() {
    Hk <- H[, keep, drop = FALSE]
    Sigma <- chol2inv(chol(diag(alpha[keep], sum(keep)) + crossprod(Hk) / sigma2))
    list(Sigma = Sigma, mu = drop(Sigma %*% crossprod(Hk, y)) / sigma2, Hk = Hk)
  }
  for (iteration in seq_len(max_iter)) {
    p <- posterior()
    g <- pmax(1 - alpha[keep] * diag(p$Sigma), 0)
    updated <- pmin(pmax((g + 2 * a) / (p$mu^2 + 2 * b), 1e-12), 1e12)
    sigma2_new <- sum((y - p$Hk %*% p$mu)^2) / (length(y) - sum(g))
    change <- max(abs(log(updated / alpha[keep])), abs(log(sigma2_new / sigma2)))
    alpha[keep] <- updated
    sigma2 <- sigma2_new
    keep <- keep & alpha < prune
    keep[1L] <- TRUE
    if (change < 1e-6) break
  }
  c(posterior(), list(keep = keep, alpha = alpha[keep], sigma2 = sigma2))
}

# The rvm() fit `fit` with its weights, alphas and noise replaced.
with_posterior <- function(fit, keep, alpha, mu, Sigma, sigma2) {
  rv <- which(keep)[-1L] - 1L
  labels <- c("(Intercept)", sprintf("x%d", rv))
  fit$relevance_vectors <- rv
  fit$coefficients <- stats::setNames(mu, labels)
  fit$prior_precision <- stats::setNames(alpha, labels)
  fit$Sigma <- structure((Sigma + t(Sigma)) / 2, dimnames = list(labels, labels))
  fit$noise_variance <- sigma2
  fitted <- drop(internal(".rvm_design")(fit$x, fit$kernel, rv) %*% mu)
  fit$residuals <- fit$y - internal(".unscale_response")(fitted, fit$response_scaling)
  fit
}

# quantile p of an equal mixture of normals, row by row
mixture_quantile <- function(mean, sd, p) {
  vapply(seq_len(nrow(mean)), function(i) {
    stats::uniroot(function(q) mean(stats::pnorm(q, mean[i, ], sd[i, ])) - p,
                   range(mean[i, ]) + c(-12, 12) * max(sd[i, ]), tol = 1e-10)$root
  }, numeric(1))
}

laplace_band <- function(fit, test, y, draws = 100L) {
  alpha <- fit$prior_precision
  evidence <- internal(".rvm_evidence_function")(fit)
  all_free <- rep(TRUE, length(alpha))
  a <- seq_along(alpha)
  f <- function(t) {
    evidence(exp(t[a]), exp(t[[length(t)]]), 0, fit$kernel$sigma, all_free, "noise_variance")
  }
  centre <- c(log(alpha), log(fit$noise_variance))
  H <- internal(".hessian")(f, centre, gradient_step = 1e-3)
  # an alpha with no curvature (a weight all but pruned) is held
  curved <- c(diag(H)[a] < -1e-6, TRUE)
  e <- eigen(-H[curved, curved, drop = FALSE], symmetric = TRUE)
  root <- e$vectors %*% diag(1 / sqrt(pmax(e$values, 1e-8)), length(e$values))
  design <- internal(".rvm_design")(fit$x, fit$kernel, fit$relevance_vectors)
  unit <- fit$response_scaling$scale
  means <- sds <- matrix(0, nrow(test), draws)
  for (k in seq_len(draws)) {
    t <- centre
    t[curved] <- centre[curved] + drop(root %*% stats::rnorm(sum(curved)))
    sigma2 <- exp(t[[length(t)]])
    Sigma <- chol2inv(chol(diag(exp(t[a]), length(a)) + crossprod(design) / sigma2))
    mu <- drop(Sigma %*% crossprod(design, y)) / sigma2
    drawn <- with_posterior(fit, c(TRUE, seq_len(nrow(fit$x)) %in% fit$relevance_vectors),
                            exp(t[a]), mu, Sigma, sigma2)
    p <- stats::predict(drawn, test, se.fit = TRUE)
    means[, k] <- p$fit
    sds[, k] <- sqrt(p$se.fit^2 + sigma2 * unit^2)
  }
  function(level) {
    cbind(fit = rowMeans(means), lwr = mixture_quantile(means, sds, (1 - level) / 2),
          upr = mixture_quantile(means, sds, (1 + level) / 2))
  }
}

hyperpriors <- list(c(0, 0), c(0, 0.01), c(0.5, 0.001))

measure <- function(set, s, train, test) {
  set.seed(s)
  fit <- suppressWarnings(rvm(y ~ ., data = train))
  y <- internal(".to_model_units")(fit$y, fit$response_scaling)
  reference <- rmse(stats::predict(fit, test), test$y)
  row <- function(method, band_at) {
    b95 <- band_at(0.95)
    b80 <- band_at(0.80)
    data.frame(data = set, split = s, method = method,
               coverage95 = interval_stats(b95, test$y)[["coverage"]],
               coverage80 = interval_stats(b80, test$y)[["coverage"]],
               rmse_ratio = rmse(b95[, "fit"], test$y) / reference)
  }
  default <- function(f) function(level) stats::predict(f, test, interval = "prediction", level = level)
  residual_t <- function(level) {
    p <- stats::predict(fit, test, se.fit = TRUE)
    df <- nrow(fit$x) - internal(".effective_parameters")(fit)
    half <- stats::qt((1 + level) / 2, df) *
      sqrt(p$se.fit^2 + fit$noise_variance * fit$response_scaling$scale^2)
    cbind(fit = p$fit, lwr = p$fit - half, upr = p$fit + half)
  }
  all_columns <- cbind(1, kernel_matrix(fit$kernel, fit$x, fit$x))
  rbind(row("default", default(fit)), row("t(n - tr S)", residual_t),
        row("laplace", laplace_band(fit, test, y)),
        do.call(rbind, lapply(hyperpriors, function(ab) {
          h <- hyperprior_fit(all_columns, y, ab[[1]], ab[[2]])
          f <- suppressWarnings(with_posterior(fit, h$keep, h$alpha, h$mu, h$Sigma, h$sigma2))
          row(sprintf("gamma(%g, %g)", ab[[1]], ab[[2]]), default(f))
        })))
}

results <- over_splits(small_regression_sets(), measure)
cat(sprintf("\n== rvm() on the small sets: remedies for its intervals (mean over %s splits) ==\n",
            n_splits))
agg <- stats::aggregate(results[c("coverage95", "coverage80", "rmse_ratio")],
                        results[c("data", "method")], mean)
methods <- unique(results$method)
for (column in c("coverage95", "coverage80", "rmse_ratio")) {
  cat(switch(column, coverage95 = "\nCoverage of 95% prediction intervals (target 0.92-0.98):\n",
             coverage80 = "\nCoverage of 80% prediction intervals (target 0.75-0.85):\n",
             rmse_ratio = "\nRMSE over the default fit's:\n"))
  tab <- stats::xtabs(stats::reformulate(c("method", "data"), column), agg)
  print(round(tab[methods, unique(results$data), drop = FALSE], 3))
}
