# Methods shared by rvm() and srvm() fits (class "gpsvm_rvm"; srvm fits are
# c("gpsvm_srvm", "gpsvm_rvm")).

#' Predictions and derivatives from a (smooth) relevance vector machine
#'
#' The posterior mean of the fitted function, or of its `deriv`-th partial
#' derivative in input column `wrt`, at new inputs, with its posterior
#' standard deviation. The derivative of the kernel expansion is the
#' expansion in derivative kernels:
#' \eqn{D^n f(z) = \sum_j \mu_j D^n k(z, x_j)} (plus \eqn{\mu_0} when
#' \eqn{n = 0}), so with \eqn{h = (1[n = 0], D^n k(z, x_j))_j} over the kept
#' weights the posterior of \eqn{D^n f(z)} is normal with mean \eqn{h'\mu}
#' and variance \eqn{h' \Sigma h}, at the fitted hyperparameters.
#'
#' @param object A fit from [rvm()] or [srvm()].
#' @param newdata New inputs (a vector, matrix or data frame; a data frame for
#'   formula fits). `NULL` predicts at the training inputs.
#' @param deriv Order of the derivative, a whole number from 0 to 1000.
#' @param wrt The input column to differentiate in: a number, or a column
#'   name of the fit's design matrix `object$x`.
#' @param se.fit Return the posterior standard deviations as well?
#' @param interval `"none"`, `"confidence"` (the band of the function or
#'   derivative) or `"prediction"` (adds the noise variance; only for
#'   `deriv = 0`).
#' @param level Probability of the interval.
#' @param ... Unused (an error if given).
#' @return As [stats::predict.lm()]: a vector; a matrix with columns `fit`,
#'   `lwr`, `upr` when an interval is asked; a list with `fit` and `se.fit`
#'   when `se.fit = TRUE` (`se.fit` is the posterior standard deviation of
#'   the function or derivative, without the noise).
#' @references ter Borg, R. W. and Rothkrantz, L. J. M. (2005). Smooth Bayesian
#'   kernel machines. Lecture Notes in Computer Science 3682.
#' @examples
#' set.seed(2)
#' x <- runif(40, -5, 5)
#' y <- sin(x) + rnorm(40, sd = 0.1)
#' fit <- srvm(x, y, kernel = rbf_kernel(1), penalty = roughness_penalty(4))
#' z <- c(-2, 0, 2)
#' cbind(fit = predict(fit, z, deriv = 1), truth = cos(z))
#' predict(fit, z, deriv = 2, interval = "confidence")
#' @export
predict.gpsvm_rvm <- function(object, newdata = NULL, deriv = 0, wrt = 1, se.fit = FALSE,
                        interval = c("none", "confidence", "prediction"), level = 0.95, ...) {
  .check_dots_empty(...)
  interval <- .match_choice(interval)
  d <- .check_deriv(deriv, wrt, interval, object$x)
  if (!is.logical(se.fit) || length(se.fit) != 1L || is.na(se.fit)) {
    .stop("'se.fit' must be TRUE or FALSE")
  }
  if (interval != "none") level <- .check_level(level)
  z <- .newdata_matrix(object, newdata)
  h <- .rvm_basis(object, z, d$deriv, d$wrt)
  fit <- drop(h %*% object$coefficients)
  se <- NULL
  if (se.fit || interval != "none") {
    se <- sqrt(pmax(rowSums((h %*% object$Sigma) * h), 0))
  }
  band <- switch(interval,
    none = list(),
    confidence = .gaussian_interval(fit, se, level),
    prediction = .gaussian_interval(fit, sqrt(se^2 + object$sigma2), level))
  .prediction_output(fit, se, band$lower, band$upper, se.fit, interval, rownames(z), d$deriv)
}

# The rows h(z) of the (derivative) design at new inputs, kept weights only.
.rvm_basis <- function(object, z, deriv = 0L, wrt = 1L) {
  rv <- object$x[object$relevance_vectors, , drop = FALSE]
  k <- if (nrow(rv) > 0L) kernel_matrix(object$kernel, z, rv, deriv = deriv, wrt = wrt) else
    matrix(0, nrow(z), 0L)
  cbind(if (deriv == 0L) 1 else 0, k)
}

#' @rdname summary.gpsvm_rvm
#' @export
print.gpsvm_rvm <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  smooth <- inherits(x, "gpsvm_srvm")
  cat(if (smooth) "Smooth relevance vector machine" else "Relevance vector machine", "\n")
  if (!is.null(x$call)) cat("Call: ", paste(deparse(x$call), collapse = "\n"), "\n", sep = "")
  cat(format(x$kernel), sep = "\n")
  if (smooth) cat(format(x$penalty), sep = "\n")
  cat(sprintf("Relevance vectors: %d of %d training points\n",
              length(x$relevance_vectors), nrow(x$x)))
  if (smooth) cat(sprintf("lambda: %s\n", format(x$lambda, digits = digits)))
  cat(sprintf("sigma^2: %s (sd %s)\n", format(x$sigma2, digits = digits),
              format(sqrt(x$sigma2), digits = digits)))
  cat(sprintf("Log marginal likelihood: %s\n", format(x$log_lik, digits = digits + 2L)))
  if (!x$convergence$converged) {
    cat(sprintf("NOT converged after %d iterations\n", x$convergence$iterations))
  }
  invisible(x)
}

#' Summaries of (smooth) relevance vector machine fits
#'
#' @name summary.gpsvm_rvm
#' @param object,x A fit from [rvm()] or [srvm()], or its summary.
#' @param digits Significant digits to print.
#' @param ... Unused.
#' @return `summary()` returns an object of class `summary.gpsvm_rvm` holding the
#'   table of kept weights (relevance vector, input, posterior mean, posterior
#'   sd, alpha), the hyperparameters, the evidence and the convergence record.
#'   `print()` methods return their argument invisibly. `logLik()` returns the
#'   log marginal likelihood (the evidence) as a `"logLik"` object whose `df`
#'   counts the kept weights' alphas, the noise variance and, for `srvm`,
#'   lambda; `nobs()` the number of training points.
#' @examples
#' set.seed(1)
#' x <- runif(50, -10, 10)
#' y <- sin(x) / x + rnorm(50, sd = 0.1)
#' summary(rvm(x, y, kernel = rbf_kernel(1.6)))
#' @export
summary.gpsvm_rvm <- function(object, ...) {
  .check_dots_empty(...)
  idx <- c(NA_integer_, object$relevance_vectors)
  inputs <- rbind(NA, object$x[object$relevance_vectors, , drop = FALSE])
  colnames(inputs) <- if (is.null(colnames(object$x))) {
    if (ncol(inputs) == 1L) "x" else paste0("x", seq_len(ncol(inputs)))
  } else colnames(object$x)
  table <- data.frame(row = idx, inputs, estimate = unname(object$coefficients),
                      sd = sqrt(pmax(diag(object$Sigma), 0)), alpha = unname(object$alpha),
                      row.names = names(object$coefficients), check.names = FALSE)
  structure(list(call = object$call, smooth = inherits(object, "gpsvm_srvm"), weights = table,
                 n = nrow(object$x), lambda = object$lambda, sigma2 = object$sigma2,
                 log_lik = object$log_lik, kernel = object$kernel, penalty = object$penalty,
                 convergence = object$convergence,
                 residuals = stats::quantile(object$residuals)),
            class = "summary.gpsvm_rvm")
}

#' @rdname summary.gpsvm_rvm
#' @export
print.summary.gpsvm_rvm <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat(if (x$smooth) "Smooth relevance vector machine" else "Relevance vector machine", "\n")
  if (!is.null(x$call)) cat("Call: ", paste(deparse(x$call), collapse = "\n"), "\n", sep = "")
  cat(format(x$kernel), sep = "\n")
  if (x$smooth) cat(format(x$penalty), sep = "\n")
  cat("\nResiduals:\n")
  print(x$residuals, digits = digits)
  cat(sprintf("\nKept weights (bias and %d relevance vectors of %d points):\n",
              nrow(x$weights) - 1L, x$n))
  print(x$weights, digits = digits)
  if (x$smooth) cat(sprintf("\nlambda: %s", format(x$lambda, digits = digits)))
  cat(sprintf("\nsigma^2: %s (sd %s)\n", format(x$sigma2, digits = digits),
              format(sqrt(x$sigma2), digits = digits)))
  cat(sprintf("Log marginal likelihood: %s\n", format(x$log_lik, digits = digits + 2L)))
  cat(.format_convergence(x$convergence), "\n", sep = "")
  invisible(x)
}

#' @rdname summary.gpsvm_rvm
#' @export
nobs.gpsvm_rvm <- function(object, ...) nrow(object$x)

#' @rdname summary.gpsvm_rvm
#' @export
logLik.gpsvm_rvm <- function(object, ...) {
  # estimated: the kept weights' alphas, sigma^2, and lambda for srvm
  df <- length(object$alpha) + 1L + inherits(object, "gpsvm_srvm")
  .as_logLik(object$log_lik, df = df, nobs = nrow(object$x))
}

#' Plot a (smooth) relevance vector machine fit
#'
#' For one input column: the data, the relevance vectors (circled), the
#' fitted function and its confidence band; with `deriv > 0`, the fitted
#' derivative and its band instead (the data are not drawn).
#'
#' @param x A fit from [rvm()] or [srvm()] with one input column.
#' @param deriv Order of the derivative to draw.
#' @param level Probability of the band; `NA` draws none.
#' @param n Number of points of the curve.
#' @param xlim Range of the curve (default: the range of the inputs).
#' @param truth Optional function of the input drawn dashed for comparison
#'   (it should return the same derivative as drawn).
#' @param ... Passed to [graphics::plot()].
#' @return `x`, invisibly.
#' @examples
#' set.seed(1)
#' x <- runif(50, -10, 10)
#' y <- sin(x) / x + rnorm(50, sd = 0.1)
#' fit <- srvm(x, y, kernel = rbf_kernel(1.6), penalty = roughness_penalty(10))
#' plot(fit, truth = function(x) sin(x) / x)
#' plot(fit, deriv = 2)
#' @export
plot.gpsvm_rvm <- function(x, deriv = 0, level = 0.95, n = 200, xlim = NULL, truth = NULL, ...) {
  if (ncol(x$x) != 1L) .stop("plot() draws fits with one input column only")
  deriv <- .check_count(deriv, "deriv")
  n <- .check_count(n, "n", lower = 2L)
  if (is.null(xlim)) xlim <- range(x$x)
  g <- .plot_grid(x, n, xlim)
  grid <- g$grid
  band <- !is.na(level)
  p <- predict(x, g$newdata, deriv = deriv, interval = if (band) "confidence" else "none",
               level = if (band) level else 0.95)
  p <- if (band) p else cbind(fit = p, lwr = p, upr = p)
  ylab <- if (deriv == 0L) "y" else sprintf("d^%d y / dx^%d", deriv, deriv)
  ylim <- range(p, if (deriv == 0L) x$y)
  graphics::plot(grid, p[, "fit"], type = "n", xlim = xlim, ylim = ylim, xlab = "x",
                 ylab = ylab, ...)
  if (band) {
    graphics::polygon(c(grid, rev(grid)), c(p[, "lwr"], rev(p[, "upr"])),
                      col = "#4682B440", border = NA)
  }
  if (deriv == 0L) {
    graphics::points(x$x, x$y, pch = 20, col = "grey40")
    rv <- x$relevance_vectors
    graphics::points(x$x[rv], x$y[rv], pch = 1, cex = 1.6, col = "firebrick")
  }
  if (!is.null(truth)) graphics::lines(grid, truth(grid), lty = 2)
  graphics::lines(grid, p[, "fit"], lwd = 2, col = "steelblue4")
  invisible(x)
}
