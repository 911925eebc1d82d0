# Methods for "gpsvm_mfsvr" objects: print, summary, coef, fitted, residuals, nobs,
# logLik, predict, plot.

#' Basic methods for mean-field SVR fits
#'
#' `print()` shows the hyperparameters, the log evidence and the solver's
#' convergence and returns the fit invisibly; `coef()` returns the weights
#' \eqn{w} of the posterior mean \eqn{\sum_i k(x, x_i) w_i}; `fitted()` the
#' posterior means at the training inputs; `residuals()` the targets minus
#' those; `nobs()` the number of observations.
#'
#' @param x,object An `mfsvr` fit.
#' @param digits Significant digits to print.
#' @param ... Unused.
#' @return See the description.
#' @examples
#' set.seed(1)
#' x <- runif(30, -10, 10)
#' fit <- mfsvr(x, sin(x) / x + rnorm(30, sd = 0.1), C = 5, kernel = rbf_kernel(sqrt(2)))
#' fit
#' head(coef(fit))
#' nobs(fit)
#' @name mfsvr-methods
NULL

#' @rdname mfsvr-methods
#' @export
print.gpsvm_mfsvr <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat("Mean-field support vector regression (TAP / EP)\n")
  if (!is.null(x$call)) cat("Call: ", paste(deparse(x$call), collapse = "\n"), "\n", sep = "")
  cat(sprintf("  %d observations, C = %s, epsilon = %s\n", length(x$y),
              format(x$C, digits = digits), format(x$epsilon, digits = digits)))
  cat(paste0("  ", format(x$kernel)), sep = "\n")
  cat(sprintf("  log evidence %s; noise sd %s\n", format(x$log_evidence, digits = digits),
              format(sqrt(x$noise_variance), digits = digits)))
  cat("  ", .format_convergence(x$convergence), "\n", sep = "")
  invisible(x)
}

#' Summarise a mean-field SVR fit
#'
#' @param object,x An `mfsvr` fit, or its summary.
#' @param digits Significant digits to print.
#' @param ... Unused.
#' @return `summary()` returns an object of class `summary.gpsvm_mfsvr` holding the
#'   call, hyperparameters, residual quantiles, weight summary, posterior
#'   standard deviations at the training inputs, the log evidence and the
#'   convergence record; its print method returns it invisibly.
#' @examples
#' set.seed(1)
#' x <- runif(40, -10, 10)
#' fit <- mfsvr(x, sin(x) / x + rnorm(40, sd = 0.1), C = 5, kernel = rbf_kernel(sqrt(2)))
#' summary(fit)
#' @export
summary.gpsvm_mfsvr <- function(object, ...) {
  w <- object$coefficients
  structure(list(
    call = object$call, n = length(object$y), C = object$C, epsilon = object$epsilon,
    kernel = object$kernel,
    residuals = stats::quantile(object$residuals, names = TRUE),
    outside_tube = sum(abs(object$residuals) > object$epsilon),
    weights = summary(w), at_bound = sum(abs(w) > 0.99 * object$C),
    posterior_sd = summary(sqrt(object$variance)),
    noise_sd = sqrt(object$noise_variance),
    log_evidence = object$log_evidence, convergence = object$convergence,
    algorithm = object$control$algorithm, optimization = object$optimization
  ), class = "summary.gpsvm_mfsvr")
}

#' @rdname summary.gpsvm_mfsvr
#' @export
print.summary.gpsvm_mfsvr <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat("Mean-field support vector regression (TAP / EP)\n")
  if (!is.null(x$call)) cat("Call: ", paste(deparse(x$call), collapse = "\n"), "\n", sep = "")
  cat(sprintf("\n%d observations; C = %s, epsilon = %s\n", x$n, format(x$C, digits = digits),
              format(x$epsilon, digits = digits)))
  cat(format(x$kernel), sep = "\n")
  cat("\nResiduals (target - posterior mean):\n")
  print(x$residuals, digits = digits)
  cat(sprintf("%d of %d outside the epsilon tube\n", x$outside_tube, x$n))
  cat("\nWeights w (posterior mean = sum_i k(x, x_i) w_i):\n")
  print(x$weights, digits = digits)
  cat(sprintf("%d weights within 1%% of the bound C\n", x$at_bound))
  cat("\nLatent posterior sd at the training inputs:\n")
  print(x$posterior_sd, digits = digits)
  cat(sprintf("Noise sd (eq. 29 of Gao et al. 2002b): %s\n", format(x$noise_sd, digits = digits)))
  cat(sprintf("\nLog evidence (EP): %s\n", format(x$log_evidence, digits = digits + 3L)))
  if (!is.null(x$optimization)) {
    cat(sprintf("Hyperparameters by evidence maximisation: %s\n",
                .format_convergence(x$optimization$convergence)))
  }
  cat(sprintf("Solver '%s': %s\n", x$algorithm, .format_convergence(x$convergence)))
  invisible(x)
}

#' @rdname mfsvr-methods
#' @export
coef.gpsvm_mfsvr <- function(object, ...) object$coefficients

#' @rdname mfsvr-methods
#' @export
fitted.gpsvm_mfsvr <- function(object, ...) object$fitted.values

#' @rdname mfsvr-methods
#' @export
residuals.gpsvm_mfsvr <- function(object, ...) object$residuals

#' @rdname mfsvr-methods
#' @export
nobs.gpsvm_mfsvr <- function(object, ...) length(object$y)

#' The evidence of a mean-field SVR as a log-likelihood
#'
#' `logLik()` returns the EP (TAP mean-field) approximation of the log
#' marginal likelihood \eqn{\log p(y \mid C, \epsilon, k)}, including the
#' likelihood's normaliser \eqn{C / (2(\epsilon C + 1))}, as a `"logLik"`
#' object. For one observation it is exact. Its `df` is the number of
#' hyperparameters (`C`, `epsilon` and the kernel's parameters), so that
#' [stats::AIC()] and [stats::BIC()] work.
#'
#' @param object An `mfsvr` fit.
#' @param ... Unused.
#' @return An object of class `"logLik"`.
#' @examples
#' set.seed(1)
#' x <- runif(40, -10, 10)
#' fit <- mfsvr(x, sin(x) / x + rnorm(40, sd = 0.1), C = 5, kernel = rbf_kernel(sqrt(2)))
#' logLik(fit)
#' @export
logLik.gpsvm_mfsvr <- function(object, ...) {
  k <- object$kernel
  df <- 2L + switch(k$type, rbf = 1L, polynomial = 3L, linear = 0L)
  .as_logLik(object$log_evidence, df = df, nobs = length(object$y))
}

#' Predictions with error bars from a mean-field SVR
#'
#' The posterior mean \eqn{\sum_i k(x, x_i) w_i} (Gao, Gunn and Harris 2002,
#' eq. 3.2), its standard error \eqn{\sqrt{k(x,x) - k_x^T (K + \Sigma)^{-1} k_x}}
#' (eq. 5.1), and intervals following [stats::predict.lm()]:
#' `"confidence"` is the Gaussian band of the latent function,
#' `"prediction"` the band for a new target. The prediction interval's ends
#' are exact quantiles of the predictive distribution, the Gaussian latent
#' convolved with the epsilon-insensitive noise (whose CDF is in closed
#' form), found by safeguarded Newton iteration, the same computation as for
#' [predict.gpsvm_svr()]; its variance is the latent variance plus
#' [svr_noise_variance()], \eqn{2/C^2 + \epsilon^2(\epsilon C+3)/(3(\epsilon C+1))}.
#'
#' With `deriv = n > 0`, the posterior of the `n`-th partial derivative of
#' the latent function in input column `wrt`: the derivative of a Gaussian
#' process is one, with mean \eqn{\sum_i D^n k(x, x_i) w_i} and variance
#' \eqn{D^n D'^n k(x, x) - d_x^T (K + \Sigma)^{-1} d_x},
#' \eqn{d_x = (D^n k(x, x_i))_i}. Only the `"confidence"` interval exists for
#' a derivative (the noise is on the targets).
#'
#' @param object An `mfsvr` fit.
#' @param newdata New inputs: a data frame for formula fits, else a vector or
#'   matrix with the training columns. `NULL` means the training inputs.
#' @param deriv Order of the derivative to predict, a whole number from 0 to
#'   1000.
#' @param wrt The input column to differentiate in: a number, or a column
#'   name of the fit's design matrix `object$x`.
#' @param se.fit If `TRUE`, also return the latent posterior standard
#'   deviations.
#' @param interval `"none"`, `"confidence"` or `"prediction"`.
#' @param level Coverage of the interval.
#' @param ... Must be empty.
#' @return A vector of predictions; a matrix with columns `fit`, `lwr`, `upr`
#'   when an interval is asked; a list with `fit` and `se.fit` when
#'   `se.fit = TRUE`.
#' @examples
#' set.seed(1)
#' x <- runif(40, -10, 10)
#' fit <- mfsvr(x, sin(x) / x + rnorm(40, sd = 0.1), C = 5, kernel = rbf_kernel(sqrt(2)))
#' predict(fit, c(-12, 0, 3), interval = "confidence")
#' predict(fit, c(-12, 0, 3), interval = "prediction", level = 0.9)
#' predict(fit, c(-12, 0, 3), se.fit = TRUE)
#' predict(fit, c(-12, 0, 3), deriv = 2, interval = "confidence")
#' @export
predict.gpsvm_mfsvr <- function(object, newdata = NULL, deriv = 0, wrt = 1, se.fit = FALSE,
                          interval = c("none", "confidence", "prediction"), level = 0.95, ...) {
  .check_dots_empty(...)
  interval <- .match_choice(interval)
  d <- .check_deriv(deriv, wrt, interval, object$x)
  level <- .check_level(level)
  if (!is.logical(se.fit) || length(se.fit) != 1L || is.na(se.fit)) {
    .stop("'se.fit' must be TRUE or FALSE")
  }
  z <- .newdata_matrix(object, newdata)
  want_var <- se.fit || interval != "none"
  p <- cpp_ep_predict(list(kernel = object$kernel, x = object$x, weights = object$coefficients,
                           site_precision = object$site_precision, chol = object$chol,
                           factor = object$factor),
                      z, want_var, d$deriv, d$wrt)
  band <- switch(interval,
    none = list(),
    confidence = .gaussian_interval(p$mean, sqrt(p$variance), level),
    prediction = .epsins_prediction_interval(p$mean, p$variance, object$C, object$epsilon, level))
  .prediction_output(p$mean, if (se.fit) sqrt(p$variance), band$lower, band$upper, se.fit, interval,
                     rownames(z), d$deriv)
}

#' Plot a one-dimensional mean-field SVR fit
#'
#' Draws the data, the posterior mean, the latent (confidence) band and the
#' band for new targets (prediction band), with base graphics.
#'
#' @param x An `mfsvr` fit with one input column.
#' @param level Coverage of the bands.
#' @param n Number of grid points for the curves.
#' @param xlim,ylim Plot limits; default to the data and the bands.
#' @param truth Optional function of x drawn dotted, e.g. the true regression
#'   function of a simulation.
#' @param legend Where to put the legend (a [graphics::legend()] keyword), or
#'   `NULL` for none.
#' @param xlab,ylab,main Axis labels and title.
#' @param ... Further graphical parameters for [graphics::plot()].
#' @return `x`, invisibly.
#' @examples
#' set.seed(1)
#' x <- runif(40, -10, 10)
#' fit <- mfsvr(x, sin(x) / x + rnorm(40, sd = 0.1), C = 5, kernel = rbf_kernel(sqrt(2)))
#' plot(fit, truth = function(x) sin(x) / x)
#' @export
plot.gpsvm_mfsvr <- function(x, level = 0.95, n = 200, xlim = NULL, ylim = NULL, truth = NULL,
                       legend = "topright", xlab = "x", ylab = "y",
                       main = "Mean-field SVR", ...) {
  if (ncol(x$x) != 1L) .stop("plot() needs a fit with one input; use predict() for more")
  level <- .check_level(level)
  n <- .check_count(n, "n", lower = 2L)
  if (is.null(xlim)) xlim <- range(x$x)
  g <- .plot_grid(x, n, xlim)
  grid <- g$grid
  newdata <- g$newdata
  conf <- predict(x, newdata, interval = "confidence", level = level)
  pred <- predict(x, newdata, interval = "prediction", level = level)
  if (is.null(ylim)) ylim <- range(x$y, pred[, c("lwr", "upr")])
  graphics::plot(x$x[, 1], x$y, xlim = xlim, ylim = ylim, xlab = xlab, ylab = ylab,
                 main = main, ...)
  graphics::polygon(c(grid, rev(grid)), c(pred[, "lwr"], rev(pred[, "upr"])),
                    col = "#4682B426", border = NA)
  graphics::polygon(c(grid, rev(grid)), c(conf[, "lwr"], rev(conf[, "upr"])),
                    col = "#4682B459", border = NA)
  graphics::points(x$x[, 1], x$y)
  graphics::lines(grid, conf[, "fit"], lwd = 2, col = "navy")
  if (!is.null(truth)) graphics::lines(grid, truth(grid), lty = 3)
  if (!is.null(legend)) {
    graphics::legend(legend, bty = "n",
                     legend = c("posterior mean", sprintf("%g%% latent band", 100 * level),
                                sprintf("%g%% prediction band", 100 * level),
                                if (!is.null(truth)) "truth"),
                     col = c("navy", "#4682B459",
                             "#4682B426",
                             if (!is.null(truth)) "black"),
                     lwd = c(2, 8, 8, if (!is.null(truth)) 1),
                     lty = c(1, 1, 1, if (!is.null(truth)) 3))
  }
  invisible(x)
}
