#' Hyperparameters of a fitted model, and the fields of fitted objects
#'
#' The settings a gpsvm fit was made with, given or chosen by the data, as
#' numbers on the scale the model was fitted on (the scaled data when
#' `scale = TRUE`), named by the arguments that set them:
#'
#' * `sigma`, the Gaussian kernel's width (for a width per input, one
#'   `sigma[<column>]` per input column, the widths of the scaled inputs);
#'   absent for other kernels;
#' * `C` and `epsilon` for [svr()] and [mfsvr()];
#' * `noise` (the input-noise variance), `kappa` (the flip probability) and
#'   `bias` (the prior variance of the offset) for [gpc()]; `C`, `noise` and
#'   `bias` for [svc()];
#' * `noise_variance`, the noise variance \eqn{\sigma^2} that [rvm()] and
#'   [srvm()] learn, and `lambda`, the penalty weight of [srvm()]. (Their
#'   weights' precisions \eqn{\alpha_i}, one per kept weight, are in
#'   [tidy()][gpsvm-tidiers].)
#'
#' Values an evidence search chose are the ones found (`fit$optimization`
#' records the search). The noise standard deviation in the response's units
#' is [sigma()][regression-methods], the evidence [logLik()] or
#' [evidence()], the weights [coef()].
#'
#' @section Fitted objects:
#' A concept has one name in every fitted object: `log_evidence` the log
#' evidence of the model on the scale it was fitted on ([logLik()] gives it
#' for the data as given), `noise_variance` the noise variance of a
#' regression model ([sigma()][regression-methods] its standard deviation
#' in the response's units), `alpha` a classifier's dual weights (its
#' embedding strengths) and `prior_precision` the relevance vector
#' machines' weight precisions \eqn{\alpha_i}, `bias_variance` a
#' classifier's prior variance of the offset (`svr()`'s `bias` says whether
#' it has a free threshold `b`), `optimization` the record of any search
#' by evidence (see [mfsvr()]), `control` the settings used, with the
#' defaults that depend on the data filled in, and `convergence` the
#' solver's record. Code outside a model reads the accessors: [coef()],
#' [sigma()][regression-methods], [logLik()], [evidence()],
#' `hyperparameters()`.
#'
#' Every method checks a fit before it computes from it: the length, type,
#' range and shape of each field it reads (in time linear in the data, or
#' quadratic for a triangular factor; no factorisation). An object edited
#' by hand, or put together from two fits, is an error that names the
#' field, e.g. "fit$alpha has 39 elements; the fit has 40 training rows:
#' was the object edited?", rather than a wrong answer. `fields` lists the
#' fields the fitter made, so that one removed is noticed too; fields added
#' later (caret adds its own) are left alone.
#'
#' @param object A fit from [svr()], [mfsvr()], [rvm()], [srvm()], [gpc()]
#'   or [svc()].
#' @param ... Not used; unknown arguments are an error.
#' @return A named numeric vector; for a classifier with three or more
#'   classes a matrix with one row per one-vs-rest model (named by its
#'   class), since an evidence search chooses each model's own.
#' @examples
#' hyperparameters(mfsvr(dist ~ speed, data = cars))
#' hyperparameters(gpc(Species ~ ., data = iris))
#' @export
hyperparameters <- function(object, ...) UseMethod("hyperparameters")

#' @rdname hyperparameters
#' @export
hyperparameters.gpsvm_regression <- function(object, ...) {
  .check_dots_empty(...)
  .validate_fit(object)
  .hyperparameter_matrix(object)[1L, ]
}

#' @rdname hyperparameters
#' @export
hyperparameters.gpsvm_classifier <- function(object, ...) {
  .check_dots_empty(...)
  .validate_fit(object)
  h <- .hyperparameter_matrix(object)
  if (.is_multiclass(object)) h else h[1L, ]
}

# A model's own hyperparameters (all but the kernel's width, which every
# model has in its kernel), named as above: one method per model class.

# The hyperparameters as a matrix with one row per model: one row for a
# regression fit, one per binary model of a classifier (the bias, a
# setting of the fit, is the same in every row).
.hyperparameter_matrix.gpsvm_regression <- function(object) {
  rbind(c(.model_hyperparameters(object), bias = object$bias_variance))
}
.hyperparameter_matrix.gpsvm_classifier <- function(object) {
  models <- .binary_models(object)
  out <- do.call(rbind, lapply(models, function(m) {
    c(.model_hyperparameters(m), bias = object$bias_variance)
  }))
  rownames(out) <- if (length(models) > 1L) names(models)
  out
}

# One model's hyperparameters (a regression fit, or one binary model of a
# classifier): the kernel's width and its own, named as above.
.model_hyperparameters <- function(model) {
  c(.kernel_width(model$kernel), .own_hyperparameters(model))
}

# c(sigma = width) for a Gaussian kernel with one width, one sigma[<column>]
# per input for a width per input, nothing for other kernels.
.kernel_width <- function(kernel) {
  if (!.has_width(kernel)) return(NULL)
  widths <- .input_widths(kernel)
  if (is.null(widths)) return(c(sigma = kernel$sigma))
  stats::setNames(widths, sprintf("sigma[%s]", names(widths)))
}
