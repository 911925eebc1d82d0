# The epsilon-insensitive noise model shared by svr() and mfsvr(): the density
# C / (2 (eps C + 1)) exp(-C L_eps(u)), its variance, and the quantiles of the
# predictive distribution of a new target (a Gaussian latent convolved with
# this noise, eq. 28 of Gao, Gunn, Harris and Brown 2002).  The computations
# are gpsvm::EpsilonInsensitive in likelihoods.hpp; this file is the R face.

#' Noise variance of the epsilon-insensitive likelihood
#'
#' The variance of the noise density \eqn{C/(2(\epsilon C+1))
#' \exp(-C L_\epsilon(u))} that both [svr()] and [mfsvr()] assume, eq. (29)
#' of Gao et al. (2002):
#' \eqn{2/C^2 + \epsilon^2(\epsilon C + 3)/(3(\epsilon C + 1))}. It is the
#' noise part of the prediction variance of both models (`fit$noise_variance`
#' of an `mfsvr` fit). It is in the units the model was fitted in: for a
#' fit with `scale = TRUE`, `sigma(fit)` is its square root times the
#' response's standard deviation.
#' (Eq. 5.3 of Gao, Gunn and Harris's mean-field paper gives a different
#' target-noise term that does not follow from the likelihood; this one does,
#' and is checked against numerical integration in the tests.)
#'
#' The noise is not Gaussian, so neither is a new target's predictive
#' distribution: the `"prediction"` intervals of [predict.gpsvm_regression()]
#' for both models are its exact quantiles, not mean \eqn{\pm} a normal
#' quantile times the square root of this variance plus the latent one.
#'
#' Given a fit from [svr()] or [mfsvr()] instead of `C`, it is that fit's
#' noise variance in the response's units: the variance above at the fit's
#' `C` and `epsilon`, times the response's variance when the fit scaled it,
#' so that `svr_noise_variance(fit)` is `sigma(fit)^2`. (Where the fit's
#' prediction intervals integrate over `C`, this is the noise at the `C`
#' chosen; the predictive distribution, `predict(fit, type =
#' "distribution")`, has the mixture's.)
#'
#' @seealso [gpsvm_corrections], item 1; [sigma()][regression-methods].
#' @param C A positive regularisation constant, or a fit from [svr()] or
#'   [mfsvr()].
#' @param epsilon Non-negative insensitive width (not with a fit, which has
#'   its own).
#' @param ... Not used; unknown arguments are an error.
#' @return The variance, a number.
#' @references Gao, J. B., Gunn, S. R., Harris, C. J. and Brown, M. (2002).
#'   A probabilistic framework for SVM regression and error bar estimation.
#'   *Machine Learning* 46, 71-89.
#' @examples
#' svr_noise_variance(2.1, 0.4)
#' # the noise alone: a Laplace density as epsilon -> 0, variance 2 / C^2
#' svr_noise_variance(10, 0)
#' # a fit's, in the response's units: sigma(fit)^2
#' fit <- mfsvr(dist ~ speed, data = cars, C = 3)
#' c(svr_noise_variance(fit), sigma(fit)^2)
#' @export
svr_noise_variance <- function(C, ...) UseMethod("svr_noise_variance")

#' @rdname svr_noise_variance
#' @export
svr_noise_variance.default <- function(C, epsilon, ...) {
  .check_dots_empty(...)
  if (inherits(C, "gpsvm_regression") || inherits(C, "gpsvm_classifier")) {
    .stop(paste("'C' is a fit whose noise is not the epsilon-insensitive one: sigma(fit)^2 is",
                "its noise variance"))
  }
  C <- .check_tube(C, "C")
  if (missing(epsilon)) .stop("'epsilon' is missing: svr_noise_variance(C, epsilon)")
  epsilon <- .check_tube(epsilon, "epsilon")
  cpp_epsins_noise_variance(C, epsilon)
}

#' @rdname svr_noise_variance
#' @export
svr_noise_variance.gpsvm_svr <- function(C, epsilon, ...) {
  .check_dots_empty(...)
  if (!missing(epsilon)) .stop("'epsilon' goes with a number C; a fit has its own")
  .validate_fit(C)
  h <- .own_hyperparameters(C)
  scale <- C$response_scaling$scale %||% 1
  scale^2 * svr_noise_variance.default(h[["C"]], h[["epsilon"]])
}

#' @rdname svr_noise_variance
#' @export
svr_noise_variance.gpsvm_mfsvr <- svr_noise_variance.gpsvm_svr

# C (> 0) or epsilon (>= 0) of the epsilon-insensitive noise, one number or
# (several = TRUE) a vector of them.  Its variance, 2 / C^2 + epsilon^2
# (epsilon C + 3) / (3 (epsilon C + 1)), and its density need C^2 and
# epsilon^2 to be finite doubles, and C^2 positive: C = 1e-300 or epsilon =
# 1e308 fitted, and predict() then met a noise variance of Inf or NaN and
# blamed an edited object; evidence_curve() at C = 1e-300 stopped inside EP.
# The range is that of a Gaussian kernel's width (.width_range).
.check_tube <- function(value, arg, several = FALSE) {
  positive <- arg == "C"
  if (!is.numeric(value) || length(value) < 1L || (!several && length(value) != 1L) ||
      anyNA(value)) {
    .stop(sprintf("'%s' must be %s", arg, if (several) "one or more numbers" else
      "a single number"))
  }
  low <- if (positive) .width_range[1L] else 0
  bad <- value < low | value > .width_range[2L] | !is.finite(value)
  if (any(bad)) {
    .stop(sprintf(paste("'%s' must lie in [%s, %.3g], where the noise variance it implies is a",
                        "finite double, not %s"),
                  arg, if (positive) sprintf("%.3g", low) else "0", .width_range[2L],
                  format(value[bad][1L])))
  }
  as.double(value)
}

# The noise model of both svr() and mfsvr() fits, for the regression layer:
# the predictive distribution of a new target (R/predictive-distribution.R)
# and the noise sd, in model units.
# With noise varying with the inputs (R/rvm-noise.R) the noise at input z is
# the level's stretched by s(z): the distribution of t / s(z), whose latent
# moments are mean / s and var / s^2, times s (`row_scale`).
.target_distribution.gpsvm_svr <- function(object, mean, var, z = NULL) {
  h <- .own_hyperparameters(object)
  s <- sqrt(.noise_factor(object, z))
  g <- .epsins_distribution(mean / s, var / s^2, h[["C"]], h[["epsilon"]])
  if (any(s != 1)) g$row_scale <- rep_len(s, NROW(mean))
  g
}
.target_distribution.gpsvm_mfsvr <- .target_distribution.gpsvm_svr

.noise_sd.gpsvm_svr <- function(object) {
  h <- .own_hyperparameters(object)
  sqrt(svr_noise_variance.default(h[["C"]], h[["epsilon"]]))
}
.noise_sd.gpsvm_mfsvr <- .noise_sd.gpsvm_svr

# Normal scores qnorm(F(y)) of targets y under that predictive distribution
# (the standardised residuals of the diagnostic plots).  Above the median
# through the upper tail, F(y; m) = 1 - F(-y; -m) by the symmetry of the
# latent and the noise, so that targets far out keep their precision.
.epsins_normal_scores <- function(y, mean, var, C, epsilon) {
  lower <- cpp_epsins_cdf(y, mean, var, C, epsilon)
  upper <- cpp_epsins_cdf(-y, -mean, var, C, epsilon)
  ifelse(lower < upper, stats::qnorm(lower), -stats::qnorm(upper))
}
.target_scores.gpsvm_svr <- function(object, y, mean, var, z = NULL) {
  h <- .own_hyperparameters(object)
  s <- sqrt(.noise_factor(object, z))
  .epsins_normal_scores(y / s, mean / s, var / s^2, h[["C"]], h[["epsilon"]])
}
.target_scores.gpsvm_mfsvr <- .target_scores.gpsvm_svr
