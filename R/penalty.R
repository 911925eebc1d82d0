#' Roughness penalties for the smooth relevance vector machine
#'
#' Specifies the linear differential operator
#' \eqn{L y(x) = \sum_n c_n D^n y(x)} of ter Borg and Rothkrantz (2005,
#' eq. 4) whose squared size \eqn{|L w|^2} the smooth RVM penalises. It is
#' applied to the design \eqn{H = [1, K]} through derivative kernels
#' (\eqn{D^n H = [0, D^n K]} for \eqn{n \ge 1}), evaluated at a set of
#' points: the training inputs by default, or the points given in `at` (a
#' dense grid approximates the integral of \eqn{(Ly)^2} over the input range).
#' For inputs with several columns the penalty is the sum of the penalties of
#' the derivatives in each coordinate.
#'
#' @param orders Derivative orders \eqn{n}, whole numbers from 0 to 1000 (no
#'   repeats).
#' @param weights Weights \eqn{c_n}, one per order, finite and not all zero.
#' @param at `NULL` (the training inputs) or the points at which to evaluate
#'   the operator: a numeric vector (one input column) or matrix with the
#'   training inputs' columns.
#' @param x A `gpsvm_penalty` object.
#' @param ... Ignored.
#' @return An object of class `gpsvm_penalty`: a list with `orders`,
#'   `weights` and `at`.
#' @references ter Borg, R. W. and Rothkrantz, L. J. M. (2005). Smooth Bayesian
#'   kernel machines. In *Knowledge-Based Intelligent Information and
#'   Engineering Systems*, Lecture Notes in Computer Science 3682, Springer.
#' @seealso [srvm()]
#' @examples
#' roughness_penalty(10)                  # the paper's penalty on D^10
#' roughness_penalty(c(2, 4), c(1, 0.5))  # D^2 + 0.5 D^4
#' roughness_penalty(2, at = seq(-1, 1, length.out = 101))
#' @export
roughness_penalty <- function(orders = 2, weights = rep(1, length(orders)), at = NULL) {
  if (!is.numeric(orders) || length(orders) < 1L || anyNA(orders) || any(!is.finite(orders)) ||
      any(orders != round(orders)) || any(orders < 0) || any(orders > .max_deriv)) {
    .stop(sprintf("'orders' must be whole numbers from 0 to %d", .max_deriv))
  }
  if (anyDuplicated(orders)) .stop("'orders' must not repeat an order")
  if (!is.numeric(weights) || length(weights) != length(orders) || anyNA(weights) ||
      any(!is.finite(weights))) {
    .stop(sprintf("'weights' must be %d finite number(s), one per order", length(orders)))
  }
  if (all(weights == 0)) .stop("'weights' must not all be zero")
  if (!is.null(at)) at <- .as_input_matrix(at, "at")
  structure(list(orders = as.integer(orders), weights = as.double(weights), at = at),
            class = "gpsvm_penalty")
}

#' @rdname roughness_penalty
#' @export
print.gpsvm_penalty <- function(x, ...) {
  cat(format(x), sep = "\n")
  invisible(x)
}

#' @rdname roughness_penalty
#' @export
format.gpsvm_penalty <- function(x, ...) {
  terms <- sprintf("%s D^%d", format(x$weights), x$orders)
  where <- if (is.null(x$at)) "the training inputs" else sprintf("%d given points", nrow(x$at))
  c(sprintf("Roughness penalty |L y|^2, L = %s", paste(terms, collapse = " + ")),
    sprintf("  evaluated at %s", where))
}

.check_penalty <- function(penalty) {
  if (!inherits(penalty, "gpsvm_penalty")) {
    .stop("'penalty' must be a roughness_penalty(), e.g. roughness_penalty(2)")
  }
  penalty
}

# The points at which the operator is evaluated, checked against x and
# scaled like it.
.penalty_points <- function(penalty, x, scaling = NULL) {
  if (is.null(penalty$at)) return(x)
  if (ncol(penalty$at) != ncol(x)) {
    .stop(sprintf("the penalty's 'at' points have %d column(s) but 'x' has %d",
                  ncol(penalty$at), ncol(x)))
  }
  .scale_inputs(penalty$at, scaling)
}
