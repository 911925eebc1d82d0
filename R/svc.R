#' Support vector classification by the kernel adatron
#'
#' Fits a two-class support vector machine without bias by the parallel
#' kernel adatron, as in Opper and Winther (2000, section 17.7). The dual
#' problem is to maximise
#' \eqn{W(\alpha) = \sum_i \alpha_i - \frac12 \sum_{ij} \alpha_i \alpha_j y_i y_j
#' (k(x_i, x_j) + v \delta_{ij})} subject to \eqn{0 \le \alpha_i \le C}: the
#' linear slack penalty \eqn{C \sum_i \xi_i} enters through the box, and the
#' quadratic slack penalty \eqn{\sum_i \xi_i^2 / (2v)} through the input-noise
#' variance `noise` = \eqn{v} on the kernel's diagonal (eq. 17.16). The
#' decision function is \eqn{f(x) = \sum_j k(x, x_j) y_j \alpha_j} (eq. 17.20).
#'
#' The adatron step \eqn{\alpha_i \leftarrow \mathrm{clip}_{[0, C]}(\alpha_i +
#' \eta (1 - y_i f_i))} updates all \eqn{\alpha_i} at once (projected gradient
#' ascent on \eqn{W}). Its learning rate adapts as the paper's Algorithm 17.1
#' does (times 1.1 after a step that raised \eqn{W}, halved and the step undone
#' otherwise), but never drops below one over the largest absolute row sum of
#' the kernel matrix, where every step is guaranteed to ascend. The iteration
#' stops when \eqn{\max_i |\mathrm{clip}(\alpha_i + 1 - y_i f_i) - \alpha_i|^2}
#' (the paper's \eqn{\max_i |\delta\alpha_i|^2} at unit rate, zero exactly at the
#' Kuhn-Tucker point) falls below `tol` (the paper's `ftol`); for `C < 1` the step is measured in
#' units of `C`, the width of the box the \eqn{\alpha_i} live in (otherwise
#' \eqn{\alpha = 0} would pass the test whenever \eqn{C^2 <} `tol`).
#'
#' With `C = Inf` and `noise = 0` (the hard margin) the problem has a solution
#' only if the classes are separable in the kernel's feature space; otherwise
#' the iteration runs to `max_iter` and warns.
#'
#' @param x A numeric matrix or data frame of inputs (one row per case), or a
#'   formula `class ~ inputs` for the formula method.
#' @param y The classes: a two-level factor (its second level is the "positive"
#'   class, coded +1), a logical or character vector with two values, or numbers
#'   -1 and +1.
#' @param kernel A kernel from [rbf_kernel()], [poly_kernel()] or
#'   [linear_kernel()].
#' @param C Upper bound on each \eqn{\alpha_i} (the linear slack penalty), a
#'   positive number or `Inf` (no linear slack).
#' @param noise Input-noise variance \eqn{v \ge 0} added to the kernel's
#'   diagonal (the quadratic slack penalty).
#' @param control Solver settings from [svc_control()].
#' @param formula A formula `class ~ x1 + x2 + ...`.
#' @param data,subset,na.action As in [stats::lm()].
#' @param ... For the formula method, arguments of the default method; for
#'   the default method, nothing (unknown arguments are an error).
#' @return An object of class `c("gpsvm_svc", "gpsvm_classifier")`, a list with
#'   `alpha` (the dual variables), `fitted.values` (the decision function at
#'   the training inputs), `objective` (the dual objective \eqn{W}), `x`, `y`
#'   (coded -1/+1), `levels`, `kernel`, `C`, `noise`, `control`, `convergence`
#'   (`converged`, `iterations`, `change`, `tol`, `reason`) and `call`. Methods:
#'   [predict.gpsvm_svc()], [loo_error()], `print`, `summary`, [fitted()][fitted.gpsvm_classifier],
#'   `nobs` and [plot()][plot.gpsvm_classifier] for two inputs.
#' @references Opper, M. and Winther, O. (2000). Gaussian processes and SVM:
#'   mean field results and leave-one-out. In Smola, Bartlett, Schoelkopf and
#'   Schuurmans (eds.), *Advances in Large Margin Classifiers*, MIT Press,
#'   311-326. Section 17.4 and 17.7.
#'
#'   Friess, T.-T., Cristianini, N. and Campbell, C. (1998). The kernel-adatron
#'   algorithm: a fast and simple learning procedure for support vector
#'   machines. *Proceedings of ICML 15*.
#' @seealso [gpc()] for the Gaussian process classifier, [loo_error()] for
#'   leave-one-out errors.
#' @examples
#' set.seed(1)
#' x <- matrix(rnorm(200), 100, 2)
#' y <- factor(ifelse(x[, 1] * x[, 2] > 0, "same", "different"))
#' fit <- svc(x, y, rbf_kernel(1), noise = 0.5)
#' fit
#' loo_error(fit)
#' d <- data.frame(x, y)
#' svc(y ~ X1 + X2, data = d, kernel = rbf_kernel(1), C = 10)
#' @export
svc <- function(x, ...) UseMethod("svc")

#' @rdname svc
#' @export
svc.default <- function(x, y, kernel = rbf_kernel(1), C = Inf, noise = 0,
                        control = svc_control(), ...) {
  .check_dots_empty(...)
  x <- .as_input_matrix(x, "x")
  labels <- .classif_labels(y, nrow(x))
  .check_kernel(kernel)
  C <- .check_number(C, "C", lower = 0, open_lower = TRUE, allow_inf = TRUE)
  noise <- .check_number(noise, "noise", lower = 0)
  control <- .check_control(control, "svc_control")
  fit <- .svc_fit(x, labels$y, kernel, C, noise, control)
  fit$levels <- labels$levels
  fit$call <- .generic_call(match.call(), "svc")
  .warn_not_converged("svc: the kernel adatron", fit$convergence)
  fit
}

#' @rdname svc
#' @export
svc.formula <- function(formula, data, subset, na.action, ...) {
  call <- .generic_call(match.call(), "svc")
  design <- .formula_design(call, parent.frame())
  fit <- svc.default(design$x, design$y, ...)
  .add_formula_parts(fit, design, call)
}

#' Settings for the kernel adatron
#'
#' @param tol Convergence tolerance: the iteration stops when the largest
#'   squared unit-rate adatron step \eqn{\max_i |\delta\alpha_i|^2} is below
#'   `tol` (the paper's criterion `ftol`, with its default \eqn{10^{-5}}); for
#'   `C < 1` the step is divided by `C` first.
#' @param max_iter Maximum number of parallel adatron steps.
#' @return A list of class `gpsvm_svc_control`.
#' @examples
#' svc_control(tol = 1e-10)
#' @export
svc_control <- function(tol = 1e-5, max_iter = 10000) {
  structure(list(tol = .check_number(tol, "tol", lower = 0, open_lower = TRUE),
                 max_iter = .check_count(max_iter, "max_iter", lower = 1L)),
            class = c("gpsvm_svc_control", "gpsvm_control"))
}

# The adatron on -1/+1 labels; `start` warm-starts alpha.
.svc_fit <- function(x, y, kernel, C, noise, control, start = NULL) {
  res <- cpp_classifier("fit", list(method = "svc", kernel = kernel, noise = noise, C = C), x, y,
                        unclass(control), list(alpha = start))
  alpha <- stats::setNames(res$alpha, rownames(x))
  # the field K (y alpha) includes the noise on the diagonal; the decision
  # function at x_i uses the noise-free kernel
  f <- stats::setNames(res$field - noise * y * res$alpha, rownames(x))
  structure(list(alpha = alpha, fitted.values = f, objective = res$objective, x = x, y = y,
                 kernel = kernel, C = C, noise = noise, control = control,
                 convergence = res$convergence),
            class = c("gpsvm_svc", "gpsvm_classifier"))
}

#' Predict with a support vector classifier
#'
#' @param object A fit from [svc()].
#' @param newdata New inputs: a matrix or data frame with the training
#'   columns (a data frame for formula fits). `NULL` means the training inputs.
#' @param type `"class"` for the predicted classes (a factor with the training
#'   levels; the second level where \eqn{f(x) \ge 0}) or `"link"` for the
#'   decision function \eqn{f(x) = \sum_j k(x, x_j) y_j \alpha_j}. A support
#'   vector machine has no class probabilities (its "likelihood" is not
#'   normalised, section 17.4); use [gpc()] for those.
#' @param ... Not used; unknown arguments are an error.
#' @return A factor or numeric vector, one element per row of `newdata`.
#' @examples
#' set.seed(1)
#' x <- matrix(rnorm(100), 50, 2)
#' y <- factor(ifelse(x[, 1] > 0, "b", "a"))
#' fit <- svc(x, y, linear_kernel(), C = 10)
#' predict(fit, rbind(c(-1, 0), c(1, 0)))
#' predict(fit, rbind(c(-1, 0), c(1, 0)), type = "link")
#' @export
predict.gpsvm_svc <- function(object, newdata = NULL, type = c("class", "link"), ...) {
  .check_dots_empty(...)
  if (identical(type, "prob")) {
    .stop(paste("'type = \"prob\"' is not available for svc(): a support vector machine",
                "gives no class probabilities; use gpc()"))
  }
  type <- .match_choice(type)
  x <- .newdata_matrix(object, newdata)
  f <- if (is.null(newdata)) object$fitted.values else .classif_link(object, x)
  names(f) <- rownames(x)
  if (type == "link") return(f)
  .classif_class(object, f, rownames(x))
}

# Support vectors by group: on the margin (0 < alpha < C) and at the bound.
.svc_groups <- function(object) {
  c(margin = sum(object$alpha > 0 & object$alpha < object$C),
    bound = sum(object$alpha >= object$C))
}

#' @export
print.gpsvm_svc <- function(x, ...) {
  cat("Support vector classifier (kernel adatron, no bias)\n")
  if (!is.null(x$call)) cat("Call: ", paste(deparse(x$call), collapse = "\n"), "\n", sep = "")
  cat(.format_kernel_line(x$kernel), "\n", sep = "")
  cat(sprintf("C = %s, noise variance = %s\n", format(x$C), format(x$noise)))
  g <- .svc_groups(x)
  cat(sprintf("%d cases, %d support vectors (%d on the margin, %d at C)\n",
              length(x$y), sum(g), g[["margin"]], g[["bound"]]))
  cat(.format_convergence(x$convergence), "\n", sep = "")
  invisible(x)
}

#' Summarise a support vector classifier
#'
#' Adds to the printed fit the training confusion table, the dual objective
#' and the approximate leave-one-out error of eqs. (17.26)-(17.31), which
#' costs one inverse of the margin support vectors' kernel matrix.
#'
#' @param object A fit from [svc()].
#' @param x A `summary.gpsvm_svc` object.
#' @param ... Not used.
#' @return An object of class `summary.gpsvm_svc`.
#' @examples
#' set.seed(1)
#' x <- matrix(rnorm(100), 50, 2)
#' y <- factor(ifelse(x[, 1] + rnorm(50, sd = 0.3) > 0, "b", "a"))
#' summary(svc(x, y, rbf_kernel(1), noise = 0.5))
#' @export
summary.gpsvm_svc <- function(object, ...) {
  .check_dots_empty(...)
  train <- .classif_training(object)
  structure(list(fit = object, groups = .svc_groups(object), objective = object$objective,
                 training = train, loo = loo_error(object, "approx")),
            class = "summary.gpsvm_svc")
}

#' @rdname summary.gpsvm_svc
#' @export
print.summary.gpsvm_svc <- function(x, ...) {
  print(x$fit)
  cat(sprintf("Dual objective W(alpha) = %.6g\n", x$objective))
  cat(sprintf("Training error: %.4f\n", x$training$error))
  print(x$training$table)
  cat(sprintf("Approximate leave-one-out error (eqs. 17.26-17.31): %.4f (%d of %d)\n",
              x$loo$error, x$loo$count, length(x$loo$margins)))
  invisible(x)
}
