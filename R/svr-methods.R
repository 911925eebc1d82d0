# Methods for "gpsvm_svr" fits: prediction with error bars (eqs. 22, 29-31), and the
# lm-like accessors.

#' Predictions and error bars from an SVR fit
#'
#' The mean is the SVR function \eqn{a^*(z) = \sum_i \beta_i k(x_i, z) + b}.
#' Error bars follow Gao et al. (2002), section 4:
#'
#' * latent ("confidence") variance, eq. (22):
#'   \eqn{\sigma^2_{K_M}(z) = k(z,z) - k_M(z)' K_{MM}^{-1} k_M(z)} over the
#'   margin vectors \eqn{X_M};
#' * target ("prediction") variance, eq. (30): that plus the noise variance
#'   of eq. (29), [svr_noise_variance()];
#' * with `bound = TRUE`, eq. (31): the latent part is replaced by
#'   \eqn{\sigma^2_K(z) = k(z,z) - k_X(z)' K^{-1} k_X(z)} over all training
#'   points (this needs the full `n` x `n` kernel matrix). Note that
#'   \eqn{\sigma^2_K \le \sigma^2_{K_M}} always (conditioning on more points),
#'   so this "bound" band lies inside the eq. (22) band.
#'
#' The `"confidence"` interval is the Gaussian band of the latent function,
#' mean \eqn{\pm} the normal quantile times the eq. (22) (or eq. 31) standard
#' deviation. The `"prediction"` interval's ends are exact quantiles of the
#' predictive distribution of a new target, eq. (28): the Gaussian latent
#' \eqn{N(a^*(z), \sigma^2)} convolved with the epsilon-insensitive noise,
#' whose CDF is in closed form (solved by safeguarded Newton iteration, the
#' same computation as [predict.gpsvm_mfsvr()]). Eq. (30) is that distribution's
#' variance, but the distribution is not Gaussian: with small `C` its tails
#' are exponential, so mean \eqn{\pm} the normal quantile times
#' \eqn{\sigma_t} is too wide at moderate levels (e.g. 80%) and too narrow
#' far out (e.g. 99.9%); with `epsilon` large against the latent spread its
#' centre is flat.
#'
#' With `deriv = n > 0` the same is given for the `n`-th partial derivative
#' of the function in input column `wrt`: the mean
#' \eqn{\sum_i \beta_i D^n k(z, x_i)} (the bias drops out), and the latent
#' variance of eq. (22) or (31) with the derivative kernel in place of the
#' kernel, \eqn{D^n D'^n k(z, z) - d_M(z)' K_{MM}^{-1} d_M(z)},
#' \eqn{d_M(z) = (D^n k(z, x_i))_{i \in M}}: the posterior of a derivative
#' of the Gaussian process under the same Gaussian approximation. A
#' derivative has no noise, so only the `"confidence"` interval exists for it.
#'
#' @param object An `svr` fit.
#' @param newdata New inputs (matrix, vector or data frame for matrix fits; a
#'   data frame for formula fits); `NULL` for the training inputs.
#' @param deriv Order of the derivative to predict, a whole number from 0 to
#'   1000.
#' @param wrt The input column to differentiate in: a number, or a column
#'   name of the fit's design matrix `object$x`.
#' @param se.fit Whether to return standard errors of the latent function.
#' @param interval `"none"`, `"confidence"` (latent function) or
#'   `"prediction"` (a new target).
#' @param level Coverage of the interval.
#' @param bound Use the eq. (31) variance with the full kernel matrix.
#' @param ... Unused.
#' @return As [stats::predict.lm()]: a vector, or a matrix with columns
#'   `fit`, `lwr`, `upr`; with `se.fit = TRUE` a list with `fit`, `se.fit`
#'   and `residual.scale` (the square root of eq. 29).
#' @examples
#' set.seed(1)
#' x <- seq(0, 4 * pi, length.out = 100)
#' y <- sin(x) + rnorm(100, sd = sqrt(0.5))
#' fit <- svr(x, y, C = 2.1, epsilon = 0.4, kernel = rbf_kernel(sqrt(0.8)))
#' predict(fit, c(1, 2, 3), interval = "prediction")
#' predict(fit, c(1, 2, 3), se.fit = TRUE)
#' # the slope, against the true cos(x)
#' cbind(predict(fit, c(1, 2, 3), deriv = 1, interval = "confidence"), truth = cos(1:3))
#' @export
predict.gpsvm_svr <- function(object, newdata = NULL, deriv = 0, wrt = 1, se.fit = FALSE,
                        interval = c("none", "confidence", "prediction"), level = 0.95,
                        bound = FALSE, ...) {
  .check_dots_empty(...)
  interval <- .match_choice(interval, c("none", "confidence", "prediction"), "interval")
  d <- .check_deriv(deriv, wrt, interval, object$x)
  if (!is.logical(se.fit) || length(se.fit) != 1L || is.na(se.fit)) {
    .stop("'se.fit' must be TRUE or FALSE")
  }
  if (!is.logical(bound) || length(bound) != 1L || is.na(bound)) {
    .stop("'bound' must be TRUE or FALSE")
  }
  level <- .check_level(level)
  z <- .newdata_matrix(object, newdata)
  mean <- .svr_mean(object, z, d$deriv, d$wrt)
  if (!se.fit && interval == "none") {
    return(.prediction_output(mean, names = rownames(z), deriv = d$deriv))
  }
  latent <- .svr_latent_variance(object, z, bound, d$deriv, d$wrt)
  noise <- svr_noise_variance(object$C, object$epsilon)
  band <- switch(interval,
    none = list(),
    confidence = .gaussian_interval(mean, sqrt(latent), level),
    prediction = .epsins_prediction_interval(mean, latent, object$C, object$epsilon, level))
  out <- .prediction_output(mean, se = sqrt(latent), lower = band$lower, upper = band$upper,
                            se.fit = se.fit, interval = interval, names = rownames(z),
                            deriv = d$deriv)
  if (se.fit) out$residual.scale <- sqrt(noise)
  out
}

# a*(z), or its deriv-th derivative in column wrt (no bias then), from the
# support vectors, in blocks so that large newdata stays small.
.svr_mean <- function(object, z, deriv = 0L, wrt = 1L) {
  bias <- if (deriv == 0L) object$b else 0
  sv <- which(object$beta != 0)
  out <- numeric(nrow(z))
  if (length(sv) == 0L) return(out + bias)
  xs <- object$x[sv, , drop = FALSE]
  bs <- object$beta[sv]
  block <- max(1L, floor(2e6 / length(sv)))
  for (start in seq(1L, nrow(z), by = block)) {
    rows <- start:min(nrow(z), start + block - 1L)
    out[rows] <- kernel_matrix(object$kernel, z[rows, , drop = FALSE], xs, deriv = deriv,
                               wrt = wrt) %*% bs
  }
  out + bias
}

# Eq. (22) over the margin vectors, or (bound = TRUE) the full-K variance, of
# the function or of its deriv-th derivative.
.svr_latent_variance <- function(object, z, bound = FALSE, deriv = 0L, wrt = 1L) {
  keep <- if (bound) rep(TRUE, length(object$y)) else .svr_margin(object)
  kzz <- cpp_kernel_diagonal(object$kernel, z, deriv, wrt)
  if (!any(keep)) return(kzz)
  xm <- object$x[keep, , drop = FALSE]
  R <- .chol_jitter(kernel_matrix(object$kernel, xm))
  A <- backsolve(R, t(kernel_matrix(object$kernel, z, xm, deriv = deriv, wrt = wrt)),
                 transpose = TRUE)
  pmax(kzz - colSums(A^2), 0)
}

#' Methods for SVR fits
#'
#' `print`, `summary`, `coef` (the coefficients \eqn{\beta_i}, one per
#' training point; the threshold is `fit$b`), `fitted`, `residuals`, `nobs`,
#' `logLik` (the eq. 16 log evidence as a `"logLik"` object whose `df` counts
#' the bias and a selected `C`, so [AIC()] works), and `plot` (1-D inputs:
#' data, support vectors circled, the fit, the prediction band of
#' [predict.gpsvm_svr()] (exact quantiles of eq. 28 with the eq. 22 latent variance)
#' and, optionally, the same with the eq. (31) variance).
#'
#' @param x,object An `svr` fit (or its summary for `print`).
#' @param level Coverage of the plotted band.
#' @param bound Also draw the eq. (31) band.
#' @param n_grid Number of grid points for the plotted curves.
#' @param ... Unused, or passed to [graphics::plot()] by `plot`.
#' @return `print` returns its argument invisibly; `summary` an object of
#'   class `summary.gpsvm_svr`; `plot` `NULL` invisibly.
#' @examples
#' set.seed(1)
#' x <- seq(0, 4 * pi, length.out = 100)
#' y <- sin(x) + rnorm(100, sd = sqrt(0.5))
#' fit <- svr(x, y, C = 2.1, epsilon = 0.4, kernel = rbf_kernel(sqrt(0.8)))
#' summary(fit)
#' plot(fit, bound = TRUE)
#' @name svr-methods
NULL

#' @rdname svr-methods
#' @export
print.gpsvm_svr <- function(x, ...) {
  cat("Support vector regression (GP MAP estimate)\n")
  if (!is.null(x$call)) cat("Call: ", paste(deparse(x$call), collapse = "\n"), "\n", sep = "")
  cat(sprintf("n = %d, C = %s, epsilon = %s, bias = %s\n", length(x$y), format(x$C, digits = 5),
              format(x$epsilon), x$bias))
  cat(format(x$kernel), sep = "\n")
  tab <- table(x$partition)
  cat(sprintf("Support vectors: %d (%.1f%%): %d margin (X_M-: %d, X_M+: %d), %d at C\n",
              sum(tab[-1]), 100 * sum(tab[-1]) / length(x$y), tab[["X_M-"]] + tab[["X_M+"]],
              tab[["X_M-"]], tab[["X_M+"]], tab[["X_C"]]))
  if (x$bias) cat(sprintf("Bias b = %s\n", format(x$b, digits = 6)))
  if (!x$convergence$converged) cat("Warning: the dual solver did not converge\n")
  invisible(x)
}

#' @rdname svr-methods
#' @export
summary.gpsvm_svr <- function(object, ...) {
  .check_dots_empty(...)
  structure(list(
    call = object$call, n = length(object$y), C = object$C, epsilon = object$epsilon,
    bias = object$bias, b = object$b, kernel = object$kernel,
    partition = table(object$partition), objective = object$objective,
    log_evidence = c(eq16 = .svr_log_evidence(object, "eq16"),
                     refined = .svr_log_evidence(object, "refined")),
    noise_variance = svr_noise_variance(object$C, object$epsilon),
    residuals = stats::quantile(object$residuals), C_path = object$C_path,
    convergence = object$convergence), class = "summary.gpsvm_svr")
}

#' @rdname svr-methods
#' @export
print.summary.gpsvm_svr <- function(x, ...) {
  cat("Support vector regression (GP MAP estimate)\n")
  if (!is.null(x$call)) cat("Call: ", paste(deparse(x$call), collapse = "\n"), "\n", sep = "")
  cat(format(x$kernel), sep = "\n")
  cat(sprintf("\nn = %d, C = %s, epsilon = %s, bias = %s%s\n", x$n, format(x$C, digits = 5),
              format(x$epsilon), x$bias,
              if (x$bias) sprintf(" (b = %s)", format(x$b, digits = 6)) else ""))
  cat("\nResiduals:\n")
  print(stats::setNames(x$residuals, c("Min", "1Q", "Median", "3Q", "Max")), digits = 4)
  cat("\nPartition of the training set (eqs. 8-11):\n")
  print(x$partition)
  cat(sprintf("\nDual objective: %s\n", format(x$objective, digits = 8)))
  cat(sprintf("Log evidence: %s (eq. 16), %s (refined)\n",
              format(x$log_evidence[["eq16"]], digits = 6),
              format(x$log_evidence[["refined"]], digits = 6)))
  cat(sprintf("Noise variance (eq. 29): %s\n", format(x$noise_variance, digits = 5)))
  if (!is.null(x$C_path)) {
    cat("C path: ", paste(format(x$C_path, digits = 5), collapse = ", "), "\n", sep = "")
  }
  cat("Solver: ", .format_convergence(x$convergence), "\n", sep = "")
  invisible(x)
}

#' @rdname svr-methods
#' @export
coef.gpsvm_svr <- function(object, ...) object$beta

#' @rdname svr-methods
#' @export
fitted.gpsvm_svr <- function(object, ...) object$fitted.values

#' @rdname svr-methods
#' @export
residuals.gpsvm_svr <- function(object, ...) object$residuals

#' @rdname svr-methods
#' @export
nobs.gpsvm_svr <- function(object, ...) length(object$y)

#' @rdname svr-methods
#' @export
plot.gpsvm_svr <- function(x, level = 0.95, bound = FALSE, n_grid = 200, ...) {
  if (ncol(x$x) != 1L) .stop("plot() for svr fits needs one input variable")
  n_grid <- .check_count(n_grid, "n_grid", lower = 2L)
  xs <- x$x[, 1]
  g <- .plot_grid(x, n_grid)
  grid <- g$grid
  newdata <- g$newdata
  band <- predict(x, newdata, interval = "prediction", level = level)
  ylim <- range(x$y, band)
  graphics::plot(xs, x$y, ylim = ylim, xlab = colnames(x$x)[1] %||% "x", ylab = "y",
                 pch = 20, col = "grey40", ...)
  sv <- x$partition != "X_0"
  graphics::points(xs[sv], x$y[sv], pch = 1, cex = 1.4)
  graphics::lines(grid, band[, "fit"], lwd = 2)
  graphics::lines(grid, band[, "lwr"], lty = 3)
  graphics::lines(grid, band[, "upr"], lty = 3)
  if (bound) {
    bb <- predict(x, newdata, interval = "prediction", level = level, bound = TRUE)
    graphics::lines(grid, bb[, "lwr"], lty = 4, col = "grey30")
    graphics::lines(grid, bb[, "upr"], lty = 4, col = "grey30")
  }
  labels <- c("fit", sprintf("%g%% prediction band, eq. (22)", 100 * level),
              if (bound) sprintf("%g%% prediction band, eq. (31)", 100 * level), "support vector")
  graphics::legend("topright", legend = labels, bty = "n", cex = 0.8,
                   lty = c(1, 3, if (bound) 4, NA), lwd = c(2, 1, if (bound) 1, NA),
                   pch = c(NA, NA, if (bound) NA, 1))
  invisible(NULL)
}
