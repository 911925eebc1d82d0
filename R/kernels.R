#' Kernels
#'
#' The kernels every gpsvm model accepts. Each returns a small object of class
#' `gpsvm_kernel` that is evaluated in C++ by [kernel_matrix()] and by the
#' model fitting functions.
#'
#' * `rbf_kernel(sigma)`: the Gaussian kernel
#'   \eqn{k(x, x') = \exp(-|x - x'|^2 / (2\sigma^2))} (other conventions:
#'   "Conversions" below).
#' * `rbf_kernel(sigma, per_input = TRUE)`: the Gaussian kernel with a width
#'   per input column, \eqn{k(x, x') = \exp(-\sum_c (x_c - x'_c)^2 /
#'   (2\sigma_c^2))} (automatic relevance determination): see "A width per
#'   input" below.
#' * `matern_kernel(nu, sigma)`: the Matern kernel of smoothness
#'   \eqn{\nu = 1/2, 3/2} or \eqn{5/2}, with \eqn{r = |x - x'|/\sigma}:
#'   \eqn{e^{-r}}, \eqn{(1 + \sqrt 3 r) e^{-\sqrt 3 r}} and
#'   \eqn{(1 + \sqrt 5 r + 5r^2/3) e^{-\sqrt 5 r}} (Rasmussen and Williams
#'   2006, eq. 4.17). `per_input = TRUE` gives it a width per input column,
#'   \eqn{r^2 = \sum_c (x_c - x'_c)^2/\sigma_c^2}, as for the Gaussian kernel.
#'   See "Matern kernels" below.
#' * `poly_kernel(degree, scale, offset)`: \eqn{(s \langle x, x'\rangle + c)^d}.
#' * `linear_kernel()`: \eqn{\langle x, x' \rangle}, the polynomial kernel of
#'   degree 1 with scale 1 and offset 0.
#'
#' @section Choosing the width:
#' `rbf_kernel()` without `sigma` asks the model to choose the width when it
#' is fitted, from the training inputs after scaling (see the `scale`
#' argument of the models): kernlab's `sigest()` rule, written in this
#' package's convention. With \eqn{q_{0.1}} and \eqn{q_{0.9}} the 10% and 90%
#' quantiles of the non-zero squared distances \eqn{|x_i - x_j|^2} between
#' training inputs (all rows up to 1000, else 1000 evenly spaced rows, so the
#' choice does not depend on the random seed), \eqn{s = (1/q_{0.9} +
#' 1/q_{0.1})/2} and \eqn{\sigma = 1/\sqrt{2s}}. The fit stores the kernel
#' it used (`fit$kernel`), and `print()` shows the width. With
#' `optimize = TRUE` in the models that have an evidence, this width is the
#' starting point of the search and sets its range.
#'
#' This rule is used because it follows the spread of the inputs rather
#' than only their number, and on held-out data it did as well as e1071's
#' \eqn{\gamma = 1/p} (\eqn{\sigma = \sqrt{p/2}}) and better than the
#' median of the pairwise distances ("Performance" below). Few or discrete
#' inputs put many pairs of points close together, and this rule then gives
#' a narrow width; so where the two rules' widths differ by more than 30%,
#' [mfsvr()] and [svr()] let their evidence choose between them (see
#' `kernel` in [mfsvr()]).
#'
#' @section A width per input:
#' With one width, every input column counts equally in the distance
#' between two points, so inputs that do not affect the response blur the
#' fit as much as those that do. `rbf_kernel(per_input = TRUE)` gives each
#' column \eqn{c} its own width \eqn{\sigma_c}: a large width makes the
#' kernel flat along that input, which the fit then ignores. `sigma` may be
#' `NULL` (every width starts at the data-driven one above), one number
#' for every column, or one per column of the model's inputs (after
#' scaling; with a formula, after factors are expanded into dummy columns).
#'
#' [mfsvr()] with `optimize = TRUE`, and [gpc()] with two classes and its
#' evidence search, choose the widths by their evidence, with its analytic
#' gradient in each log width (one \eqn{O(n^2 p)} pass per evaluation; on
#' inducing inputs, \eqn{O(n m p)}), each within a factor 100 of its start;
#' widths that reach the upper end belong to inputs the data say are
#' irrelevant, and do not warn. `gpc()` searches them by default when
#' `sigma` is not given; with three or more classes, whose models share one
#' scaling of the inputs, it keeps them. The other models ([svr()],
#' [rvm()], [srvm()], [svc()]) take the widths as given (or the
#' data-driven start), and `rvm()`/`srvm()`'s search, which has one width,
#' refuses them.
#'
#' A width per input gives the evidence one parameter per column, and with
#' many columns for the rows it can fit the noise: it pays where some inputs
#' are irrelevant, and can lose where all matter, even at a higher evidence
#' ("Performance" below). Compare held-out errors before preferring them.
#'
#' The kernel is the ordinary Gaussian kernel of width 1 on the inputs
#' divided column by column by their widths, and a fit stores it that way:
#' `fit$kernel` is that unit-width kernel, with the widths in
#' `fit$kernel$input_widths`, and the division is part of the input scaling
#' the fit applies to new data (`fit$scaling`). Predictions, derivatives
#' (\eqn{\partial / \partial x_c = \sigma_c^{-1} \partial / \partial
#' u_c}) and plots are in the units of the inputs as given. A fit's kernel
#' given to another model (`svr(y ~ ., d, kernel = fit$kernel)`) is the
#' kernel with those widths per input; `kernel_matrix(fit$kernel, fit$x)`
#' is the fit's kernel matrix.
#'
#' @section Matern kernels:
#' The Gaussian kernel's functions are infinitely differentiable, smoother
#' than most responses measured in practice; the Matern kernels'
#' are rougher: a process with `matern_kernel(nu)` is differentiable
#' \eqn{\nu - 1/2} times (in mean square), so `nu = 1/2` gives continuous
#' functions without a derivative, `nu = 3/2` functions with one, `nu = 5/2`
#' with two, and their sample paths look like measured data more often
#' (Stein 1999). `nu = 5/2` is the default of DiceKriging's `km()` and a
#' staple of GPML and scikit-learn; its width is their range: on one input
#' `matern_kernel(5/2, theta)` is DiceKriging's `matern5_2` covariance with
#' range `theta` and `matern_kernel(3/2, theta)` its `matern3_2`. On several
#' inputs this kernel is a function of the scaled distance
#' \eqn{r}, as GPML's and scikit-learn's are, where DiceKriging multiplies
#' one-dimensional Matern correlations, one per input.
#'
#' Every model takes them, with one width or a width per input, in the
#' same ways as `rbf_kernel()`: without `sigma` the width comes from the
#' data by the same rule (see "Choosing the width"), and [mfsvr()] and
#' [gpc()] search the widths by their evidence with `optimize`. Derivatives
#' (in [kernel_matrix()], `predict(deriv = )` and the roughness penalties of
#' [srvm()]) exist up to order \eqn{\nu - 1/2}: the first for `nu = 3/2`, the
#' first two for `nu = 5/2`; a higher order is an error, since the process
#' has no such derivative and its variance would be infinite. [mfsvr()] and
#' [svr()] on standardised data weigh `matern_kernel(5/2)` at the
#' data-driven width against the Gaussian kernels by their evidence when no
#' kernel is given (see `kernel` in [mfsvr()]).
#'
#' @section Performance:
#' Measured up to 2026-12-02 (gpsvm 0.1.0, development version, on a 2-core
#' machine; `bench/bench-realdata.R` in the sources).
#'
#' * The width rule, against the median of the pairwise distances and
#'   \eqn{\gamma = 1/p}, with every model's other defaults, on four 70/30
#'   held-out splits of five regression data sets (mlbench's Boston housing,
#'   Friedman 1-3 and Ozone) and four classification data sets (Pima
#'   diabetes, Wisconsin breast cancer, Sonar, Ionosphere): the held-out
#'   RMSE of this rule and of \eqn{\gamma = 1/p} was on average 2.5% and
#'   2.7% above the best of the three for each model and data set, their
#'   error rates 10% and 8% (mostly on the breast cancer data, whose
#'   discrete inputs give this rule a narrow width); the median, a width
#'   about twice as large, was 7% and 21% above. On the one scaled input of
#'   `faithful` and `cars` this rule gives 0.16 and 0.2, \eqn{1/p} 0.71.
#' * A width per input: on held-out splits of mlbench's Friedman 1 (five of
#'   its ten inputs irrelevant) the widths chosen by the evidence lowered
#'   the held-out RMSE of `mfsvr(optimize = TRUE)` by 40% against one width.
#'   For `gpc()` on four 70/30 splits of mlbench's classification sets the
#'   held-out log loss was 0.219 against one width's 0.148 on Ionosphere (33
#'   inputs, 246 training rows), 0.412 against 0.338 on Sonar (60, 146),
#'   0.104 against 0.090 on breast cancer and 0.465 against 0.473 on Pima,
#'   though the evidence was higher on each.
#'
#' @section Conversions:
#' * kernlab's `rbfdot(sigma = s)`, \eqn{\exp(-s|x - x'|^2)}, is
#'   `rbf_kernel(1 / sqrt(2 * s))`; conversely `rbf_kernel(sigma)` is
#'   `rbfdot(sigma = 1 / (2 * sigma^2))`.
#' * e1071's radial kernel with `gamma = g`, \eqn{\exp(-g|u - v|^2)}, is
#'   `rbf_kernel(1 / sqrt(2 * g))`; its default `gamma = 1 / p` (p input
#'   columns) is `rbf_kernel(sqrt(p / 2))`.
#' * e1071's and kernlab's polynomial kernels \eqn{(\gamma\langle u, v\rangle +
#'   c_0)^d} are `poly_kernel(d, scale = gamma, offset = c0)`.
#' * Gao, Gunn and Harris (2002) write \eqn{\exp(-|x - x'|^2/\tau^2)}, which
#'   is `rbf_kernel(tau / sqrt(2))`.
#'
#' @param sigma Width of the Gaussian kernel, a positive number whose square
#'   is a positive finite double (from about 1.5e-154 to 1.3e154); `NULL` (the
#'   default) means "choose it from the data when a model is fitted": see
#'   "Choosing the width" below. With `per_input = TRUE`, one width or one
#'   per input column.
#' @param per_input `TRUE` for a width per input column (see "A width per
#'   input"); `FALSE` (the default) for one width.
#' @param nu Smoothness of the Matern kernel: `1/2`, `3/2` or `5/2` (the
#'   default).
#' @param degree Degree of the polynomial kernel, a whole number from 1 to
#'   100.
#' @param scale Multiplier of the inner product, a number >= 0.
#' @param offset Constant added to the scaled inner product, a number >= 0.
#'   (With a negative `scale` or `offset` the polynomial kernel is not
#'   positive semidefinite, so not a covariance, and is refused.)
#' @param x A `gpsvm_kernel` object.
#' @param ... Ignored.
#' @return An object of class `gpsvm_kernel`: a list holding `type` and the
#'   parameters.
#' @references Rasmussen, C. E. and Williams, C. K. I. (2006). *Gaussian
#'   Processes for Machine Learning*. MIT Press, section 4.2.
#'
#'   Stein, M. L. (1999). *Interpolation of Spatial Data: Some Theory for
#'   Kriging*. Springer.
#' @seealso [kernel_matrix()]; [gpsvm_corrections], items 5 and 19.
#' @examples
#' k <- rbf_kernel(0.5)
#' k
#' kernel_matrix(k, c(0, 0.5, 1))
#' poly_kernel(3, scale = 0.5)
#' # a width per input: the second column hardly matters at width 50
#' kernel_matrix(rbf_kernel(c(1, 50), per_input = TRUE), cbind(c(0, 1), c(0, 1)))
#' # Matern 3/2 at distance 1 with width 2: (1 + sqrt(3) / 2) exp(-sqrt(3) / 2)
#' kernel_matrix(matern_kernel(3/2, 2), 0, 1)
#' @name kernels
NULL

# The largest derivative order and polynomial degree, as in the C++ core
# (kMaxDerivativeOrder, kMaxPolynomialDegree in kernels.hpp).
.max_deriv <- 1000L
.max_degree <- 100L

# The most points of a plotted curve, and along each axis of a surface: far
# more than a device resolves, so that a mistyped n = 1e9 is an error.
.max_curve_points <- 10000L
.max_surface_grid <- 1000L

.new_kernel <- function(type, ..., subclass) {
  structure(list(type = type, ...), class = c(subclass, "gpsvm_kernel"))
}

#' @rdname kernels
#' @export
rbf_kernel <- function(sigma = NULL, per_input = FALSE) {
  .check_flag(per_input, "per_input")
  if (!per_input) {
    if (!is.null(sigma)) {
      sigma <- .check_width(.check_number(sigma, "sigma", lower = 0, open_lower = TRUE))
    }
    return(.new_kernel("rbf", sigma = sigma, subclass = "gpsvm_rbf_kernel"))
  }
  if (!is.null(sigma) && (!is.numeric(sigma) || length(sigma) == 0L || anyNA(sigma) ||
                          !all(is.finite(sigma) & sigma > 0))) {
    .stop("'sigma' must be positive finite numbers: one width, or one per input column")
  }
  .new_kernel("rbf", sigma = if (!is.null(sigma)) .check_width(as.numeric(sigma)) else NULL,
              per_input = TRUE, subclass = "gpsvm_rbf_kernel")
}

#' @rdname kernels
#' @export
matern_kernel <- function(nu = 5/2, sigma = NULL, per_input = FALSE) {
  if (!is.numeric(nu) || length(nu) != 1L || is.na(nu) || !nu %in% c(0.5, 1.5, 2.5)) {
    .stop("'nu' must be 1/2, 3/2 or 5/2 (the Matern kernels in closed form)")
  }
  kernel <- rbf_kernel(sigma, per_input)  # the same width, checked the same way
  kernel$type <- "matern"
  kernel$nu <- as.numeric(nu)
  class(kernel) <- c("gpsvm_matern_kernel", "gpsvm_kernel")
  kernel
}

# Whether a kernel has a width: the Gaussian and the Matern kernels.
.has_width <- function(kernel) isTRUE(kernel$type %in% c("rbf", "matern"))

# `deriv` within the kernel's smoothness (nu - 1/2 for a Matern kernel), or
# an error saying why not, with `what` naming the argument that asked for it.
.check_kernel_deriv <- function(kernel, deriv, what = sprintf("'deriv' = %d", deriv)) {
  top <- if (identical(kernel$type, "matern")) as.integer(kernel$nu - 0.5) else .max_deriv
  if (deriv > top) {
    .stop(sprintf(paste("%s is past the smoothness of the Matern kernel with nu = %s: its",
                        "process is %s, so derivatives of order above %d do not exist"),
                  what, .nu_label(kernel$nu),
                  c("not differentiable", "differentiable once", "differentiable twice")[top + 1L],
                  top))
  }
  invisible(deriv)
}

.nu_label <- function(nu) sprintf("%d/2", as.integer(2 * nu))

# The kernel divides by 2 sigma^2, which must be a positive finite double
# (below about 1.5e-154 it underflows, and the diagonal is 0 / 0).
.width_range <- sqrt(c(.Machine$double.xmin, .Machine$double.xmax))
.check_width <- function(sigma) {
  bad <- sigma < .width_range[1L] | sigma > .width_range[2L]
  if (any(bad)) {
    .stop(sprintf(paste("'sigma' must lie in [%.3g, %.3g], where its square is a positive",
                        "finite double, not %s"),
                  .width_range[1L], .width_range[2L], format(sigma[bad][1L])))
  }
  sigma
}

# A kernel with a width per input is the unit-width kernel on the inputs
# divided by their widths, and fits hold it that way (the widths recorded
# in `input_widths`), so the C++ core sees an ordinary kernel.
.unit_width_inputs <- function(x, kernel) {
  if (!isTRUE(kernel$per_input) || !is.null(kernel$input_widths)) {
    return(list(x = x, kernel = kernel))
  }
  widths <- kernel$sigma
  if (is.null(names(widths))) names(widths) <- .input_names(x)
  out <- sweep(x, 2L, widths, "/", check.margin = FALSE)
  dimnames(out) <- dimnames(x)
  kernel$sigma <- 1
  kernel$input_widths <- widths
  list(x = out, kernel = kernel)
}

# The fitters' entry: the kernel a fit uses on the scaled inputs xs, and
# those inputs divided by its widths per input.
.fit_kernel <- function(xs, kernel) {
  .unit_width_inputs(xs, .resolve_kernel(.as_given_kernel(kernel), xs))
}

# A fit's kernel given to a new fit (svr(..., kernel = fit$kernel)): the
# kernel with those widths per input, to be applied to the new inputs.
.as_given_kernel <- function(kernel) {
  if (is.null(kernel$input_widths)) return(kernel)
  kernel$sigma <- .input_widths(kernel)
  kernel$input_widths <- NULL
  kernel
}

# The widths a per-input kernel stands for, or NULL for other kernels.
.input_widths <- function(kernel) {
  if (is.null(kernel$input_widths)) return(NULL)
  kernel$sigma * kernel$input_widths
}

# The input scaling with a fit's widths per input folded in, so that new
# inputs reach the unit-width kernel as the training inputs did.
.with_input_widths <- function(scaling, kernel, x) {
  widths <- kernel$input_widths
  if (is.null(widths)) return(scaling)
  if (is.null(scaling)) {
    scaling <- list(center = stats::setNames(rep(0, ncol(x)), colnames(x)),
                    scale = stats::setNames(rep(1, ncol(x)), colnames(x)),
                    constant = character(0), standardised = FALSE)
  }
  scaling$scale <- scaling$scale * unname(widths)
  scaling$input_widths <- widths
  scaling
}

#' @rdname kernels
#' @export
poly_kernel <- function(degree, scale = 1, offset = 1) {
  degree <- .check_count(degree, "degree", lower = 1L, upper = .max_degree)
  scale <- .check_number(scale, "scale")
  offset <- .check_number(offset, "offset")
  .check_definite(scale, offset)
  .new_kernel("polynomial", degree = degree, scale = scale, offset = offset,
              subclass = "gpsvm_poly_kernel")
}

# (s <x, x'> + c)^d is a covariance when s >= 0 and c >= 0 (a sum of powers
# of <x, x'> with non-negative weights); otherwise the odd powers get
# negative weights, and it is refused.
.check_definite <- function(scale, offset) {
  for (arg in c("scale", "offset")) {
    value <- if (arg == "scale") scale else offset
    if (value < 0) {
      .stop(sprintf(paste("'%s' must be >= 0, not %s: with a negative %s the polynomial kernel",
                          "is not positive semidefinite, so it is no covariance and the models'",
                          "fits, evidence and error bars would mean nothing; use %s >= 0"),
                    arg, format(value), arg, arg))
    }
  }
  invisible(TRUE)
}

#' @rdname kernels
#' @export
linear_kernel <- function() {
  .new_kernel("linear", degree = 1L, scale = 1, offset = 0, subclass = "gpsvm_linear_kernel")
}

#' @rdname kernels
#' @export
print.gpsvm_kernel <- function(x, ...) {
  cat(format(x), sep = "\n")
  invisible(x)
}

#' @export
format.gpsvm_kernel <- function(x, ...) {
  out <- switch(x$type,
    rbf = if (isTRUE(x$per_input)) .format_per_input(x) else
      c("Gaussian RBF kernel: k(x, x') = exp(-|x - x'|^2 / (2 sigma^2))",
        .format_sigma(x, " (e1071's gamma = 1/p for the p input columns)")),
    polynomial = c("Polynomial kernel: k(x, x') = (scale <x, x'> + offset)^degree",
                   sprintf("  degree = %d, scale = %s, offset = %s%s",
                           x$degree, format(x$scale), format(x$offset),
                           if (identical(x$candidate, "linear")) {
                             " (linear, scale 1/p for the p input columns)"
                           } else "")),
    linear = "Linear kernel: k(x, x') = <x, x'>",
    matern = .format_matern(x)
  )
  # a classifier's bias enters its prior covariance as a constant
  if (!is.null(x$constant)) {
    out <- c(out, sprintf("  plus a constant %s (the prior variance of a bias)", format(x$constant)))
  }
  out
}

# A Matern kernel as format() shows it.
.format_matern <- function(x) {
  head <- sprintf("Matern kernel, nu = %s: k(x, x') = %s, r = |x - x'| / sigma", .nu_label(x$nu),
                  switch(.nu_label(x$nu), "1/2" = "exp(-r)",
                         "3/2" = "(1 + sqrt(3) r) exp(-sqrt(3) r)",
                         "5/2" = "(1 + sqrt(5) r + 5 r^2 / 3) exp(-sqrt(5) r)"))
  c(head, if (isTRUE(x$per_input)) .format_per_input(x)[-1L] else .format_sigma(x))
}

# The width line of format(), with the rule that chose it.
.format_sigma <- function(x, inputs = "") {
  if (is.null(x$sigma)) return("  sigma: chosen from the data when a model is fitted")
  sprintf("  sigma = %s%s", format(x$sigma), if (identical(x$sigma_rule, "data")) {
    " (chosen from the data)"
  } else if (identical(x$sigma_rule, "inputs")) inputs else "")
}

# The widths per input by name (on the scaled inputs), or how they are chosen.
.format_per_input <- function(x) {
  widths <- .input_widths(x) %||% x$sigma
  head <- "Gaussian RBF kernel, a width per input: k(x, x') = exp(-sum_c (x_c - x'_c)^2 / (2 sigma_c^2))"
  if (is.null(widths)) return(c(head, "  sigma_c: chosen from the data when a model is fitted"))
  if (length(widths) == 1L && is.null(names(widths))) {
    return(c(head, sprintf("  sigma_c = %s for every input", format(widths))))
  }
  labels <- names(widths) %||% paste0("x", seq_along(widths))
  shown <- paste0(labels, "=", trimws(formatC(widths, digits = 3, format = "g")))
  c(head, strwrap(paste("sigma_c:", paste(shown, collapse = ", ")), width = 78, indent = 2,
                  exdent = 4),
    if (identical(x$sigma_rule, "data")) "  (the data-driven width for every input)")
}

# A kernel object; with resolved = TRUE also one that can be evaluated (a
# Gaussian kernel with a width).
.check_kernel <- function(kernel, arg = "kernel", resolved = FALSE) {
  if (!inherits(kernel, "gpsvm_kernel") || !utils::hasName(kernel, "type")) {
    .stop(sprintf(paste("'%s' must be a kernel such as rbf_kernel(1), matern_kernel(5/2),",
                        "poly_kernel(2) or linear_kernel()"), arg))
  }
  if (.has_width(kernel) && is.numeric(kernel$sigma)) .check_width(kernel$sigma)
  if (kernel$type == "polynomial" && is.numeric(kernel$scale) && is.numeric(kernel$offset) &&
      length(kernel$scale) == 1L && length(kernel$offset) == 1L) {
    .check_definite(kernel$scale, kernel$offset)
  }
  if (resolved && .has_width(kernel) && is.null(kernel$sigma)) {
    .stop(sprintf(paste("'%s' has no width: %s() without 'sigma' gets one from the data",
                        "when a model is fitted; give one here, e.g. %s(1)"), arg,
                  .kernel_constructor(kernel), .kernel_constructor(kernel)))
  }
  kernel
}

# The function that makes a kernel of this type.
.kernel_constructor <- function(kernel) {
  switch(kernel$type, rbf = "rbf_kernel", matern = "matern_kernel", polynomial = "poly_kernel",
         linear = "linear_kernel")
}

#' Kernel matrices and their derivatives
#'
#' Evaluates a kernel between two sets of points, or its partial derivative
#' of order `deriv` in coordinate `wrt` of the first argument. For the
#' Gaussian kernel the n-th derivative is
#' \eqn{(-1/\sigma)^n He_n(u) k(x, x')} with \eqn{u = (x_j - x'_j)/\sigma} and
#' \eqn{He_n} the probabilists' Hermite polynomial, for any order; for the
#' polynomial kernel the closed form is used, which is zero past the degree.
#' The Matern kernels have derivatives up to order \eqn{\nu - 1/2} (see
#' [kernels]); a higher `deriv` is an error.
#'
#' @param kernel A kernel from [rbf_kernel()], [matern_kernel()],
#'   [poly_kernel()] or [linear_kernel()].
#' @param x Points as rows: a numeric vector (one coordinate), matrix or data
#'   frame of numbers.
#' @param y Optional second set of points with the same columns as `x`. When
#'   `NULL` and `deriv = 0` the symmetric Gram matrix of `x` is returned, each
#'   pair evaluated once.
#' @param deriv Order of the derivative, a whole number from 0 to 1000.
#' @param wrt Column of `x` (the first argument) to differentiate in.
#' @return A `nrow(x)` by `nrow(y)` matrix with entries
#'   \eqn{\partial^n k(x_i, y_j) / \partial x_{i,wrt}^n}.
#' @examples
#' x <- seq(-2, 2, length.out = 5)
#' kernel_matrix(rbf_kernel(1), x)
#' # second derivative of the Gaussian kernel in its first argument
#' kernel_matrix(rbf_kernel(1), x, 0, deriv = 2)
#' @export
kernel_matrix <- function(kernel, x, y = NULL, deriv = 0, wrt = 1) {
  .check_kernel(kernel, resolved = TRUE)
  x <- .as_input_matrix(x, "x")
  if (!is.null(y)) {
    y <- .as_input_matrix(y, "y")
    if (ncol(y) != ncol(x)) {
      .stop(sprintf("'y' must have as many columns as 'x' (%d), not %d", ncol(x), ncol(y)))
    }
  }
  deriv <- .check_count(deriv, "deriv", upper = .max_deriv)
  .check_kernel_deriv(kernel, deriv)
  wrt <- .check_count(wrt, "wrt", lower = 1L)
  if (wrt > ncol(x)) .stop(sprintf("'wrt' must be a column of 'x' (1 to %d)", ncol(x)))
  # a width per input: the unit-width kernel on the divided inputs, and
  # d^n / dx_c^n = sigma_c^-n d^n / du_c^n
  factor <- 1
  if (isTRUE(kernel$per_input) && is.null(kernel$input_widths)) {
    kernel <- .resolve_kernel(kernel, x)  # its widths, one per column of x
    if (!is.null(y)) y <- .unit_width_inputs(y, kernel)$x
    unit <- .unit_width_inputs(x, kernel)
    factor <- unit$kernel$input_widths[[wrt]]^-deriv
    x <- unit$x
    kernel <- unit$kernel
  }
  out <- cpp_kernel_matrix(kernel, x, y, deriv, wrt)
  if (factor != 1) out <- factor * out
  .check_finite_prediction(out, deriv, what = "kernel")
  names_x <- rownames(x)
  names_y <- rownames(if (is.null(y)) x else y)
  if (!is.null(names_x) || !is.null(names_y)) dimnames(out) <- list(names_x, names_y)
  out
}

#' Plot a kernel and its derivatives
#'
#' Draws \eqn{z \mapsto k(z, x')} for a one-dimensional kernel, and its
#' derivatives of the given orders in \eqn{z}, as functions of \eqn{z - x'}
#' (at \eqn{x' = 0}, or \eqn{x' = 1} for the polynomial kernels).
#'
#' @param x A kernel from [rbf_kernel()], [matern_kernel()], [poly_kernel()]
#'   or [linear_kernel()].
#' @param deriv Derivative orders to draw; 0 is the kernel itself.
#' @param from,to Range of \eqn{z}; by default four widths either side for the
#'   Gaussian and Matern kernels, \[-2, 2\] otherwise.
#' @param n Number of points, at most 10000.
#' @param col,lwd Colours and line width, recycled over `deriv`.
#' @param xlab,ylab,... Passed to [graphics::matplot()].
#' @return The drawn values, invisibly: a matrix with one column per order.
#' @examples
#' plot(rbf_kernel(1), deriv = c(0, 2, 4))
#' @export
plot.gpsvm_kernel <- function(x, deriv = 0, from = NULL, to = NULL, n = 401,
                              col = c("black", "steelblue", "firebrick", "darkgreen"),
                              lwd = 2, xlab = "z - x'", ylab = "value", ...) {
  .check_kernel(x, "x", resolved = TRUE)
  if (isTRUE(x$per_input) && length(.input_widths(x) %||% x$sigma) > 1L) {
    .stop("'x' has a width per input: plot() draws a kernel of one input")
  }
  width <- if (.has_width(x)) 4 * (.input_widths(x) %||% x$sigma) else 2
  from <- if (is.null(from)) -width else .check_number(from, "from")
  to <- if (is.null(to)) width else .check_number(to, "to")
  if (to <= from) .stop("'to' must be greater than 'from'")
  n <- .check_count(n, "n", lower = 2L, upper = .max_curve_points)
  orders <- vapply(deriv, .check_count, integer(1), arg = "deriv", upper = .max_deriv)
  centre <- if (.has_width(x)) 0 else 1
  z <- seq(from, to, length.out = n)
  values <- vapply(orders, function(k) kernel_matrix(x, z + centre, centre, deriv = k)[, 1],
                   numeric(n))
  values <- matrix(values, nrow = n, dimnames = list(NULL, paste0("deriv_", orders)))
  col <- rep_len(col, length(orders))
  graphics::matplot(z, values, type = "l", lty = 1, lwd = lwd, col = col,
                    xlab = xlab, ylab = ylab, ...)
  graphics::legend("topright", ifelse(orders == 0, "k", paste0("order ", orders)),
                   col = col, lwd = lwd, bty = "n")
  invisible(values)
}

# K(z, xs) coef (or its derivative in column wrt) at the rows of z, by
# blocks, so that memory stays bounded and an interrupt is seen between them.
.kernel_expansion <- function(kernel, z, xs, coef, deriv = 0L, wrt = 1L) {
  out <- numeric(nrow(z))
  if (length(coef) == 0L) return(out)
  block <- if (deriv == 0L) .expansion_block else max(1L, floor(2e6 / length(coef)))
  for (start in seq(1L, nrow(z), by = block)) {
    rows <- start:min(nrow(z), start + block - 1L)
    zr <- z[rows, , drop = FALSE]
    out[rows] <- if (deriv == 0L) {
      cpp_kernel_times(kernel, zr, xs, coef)
    } else {
      kernel_matrix(kernel, zr, xs, deriv = deriv, wrt = wrt) %*% coef
    }
  }
  out
}

# Rows of new inputs per call of the C++ expansion.
.expansion_block <- 4096L
