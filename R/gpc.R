#' Gaussian process classification by mean-field theory
#'
#' Fits the Gaussian process classifier of Opper and Winther (2000). The
#' latent activation has a Gaussian process prior with covariance
#' \eqn{k(x, x') + v \delta_{xx'}} (the "noisy process" of eq. 17.16, `noise` =
#' \eqn{v}), and each label is flipped with probability \eqn{\kappa}
#' (`kappa`), so that \eqn{p(y | f) = \kappa + (1 - 2\kappa) \Theta(y f)}
#' (eq. 17.17). Integrating the input noise out instead gives the equivalent
#' likelihood \eqn{\kappa + (1 - 2\kappa)\Phi(y f / \sqrt v)} (eq. 17.15).
#'
#' * `method = "naive"` solves the naive mean-field equations (17.40) by
#'   Algorithm 17.1 exactly: \eqn{\alpha = 0} at the start, all
#'   \eqn{\delta\alpha_i} computed in parallel, \eqn{\alpha \leftarrow \alpha +
#'   \eta\,\delta\alpha}, \eqn{\eta} multiplied by 1.1 when
#'   \eqn{\sum_i \delta\alpha_i^2} fell and halved otherwise, stopping when
#'   \eqn{\max_i \delta\alpha_i^2 <} `ftol`. The posterior mean activation is
#'   \eqn{\langle f(x)\rangle = \sum_i k(x, x_i) y_i \alpha_i} (eq. 17.35). The
#'   ratio \eqn{\phi(z)/(\kappa/(1-2\kappa) + \Phi(z))} is evaluated in logs, so
#'   points far on either side of the boundary are handled without overflow.
#'
#' Class probabilities of the naive method follow the approximation itself:
#' it replaces the local field of a point by its mean and keeps the prior
#' spread, so a new point has \eqn{p(y = +1 | x) = \kappa + (1 - 2\kappa)
#' \Phi(\langle f(x)\rangle / \sqrt{k(x, x) + v})}, the quantity in the
#' denominator of eq. (17.40).
#'
#' @inheritParams svc
#' @param noise Input-noise variance \eqn{v \ge 0}, added to the kernel's
#'   diagonal (eq. 17.16). With `noise = 0` the kernel's own diagonal must be
#'   positive.
#' @param kappa Output flip probability \eqn{\kappa \in [0, 1/2)} (eq. 17.17).
#' @param method `"naive"` (Algorithm 17.1).
#' @param control Solver settings from [gpc_control()].
#' @return An object of class `c("gpc", "gpsvm_classifier")`: a list with
#'   `alpha` (the embedding strengths), `fitted.values` (the posterior mean
#'   activation at the training inputs), `x`, `y` (coded -1/+1), `levels`,
#'   `kernel`, `noise`, `kappa`, `method`, `control`, `convergence`
#'   (`converged`, `iterations`, `residual`, `tolerance`) and `call`. Methods:
#'   [predict.gpc()], [loo_error()], `print`, `summary`,
#'   [fitted()][fitted.gpsvm_classifier], `nobs` and
#'   [plot()][plot.gpsvm_classifier] for two inputs.
#' @references Opper, M. and Winther, O. (2000). Gaussian processes and SVM:
#'   mean field results and leave-one-out. In Smola, Bartlett, Schoelkopf and
#'   Schuurmans (eds.), *Advances in Large Margin Classifiers*, MIT Press,
#'   311-326. Sections 17.3 and 17.6, Algorithm 17.1.
#' @seealso [svc()] for the support vector machine, [loo_error()] for
#'   leave-one-out errors.
#' @examples
#' set.seed(1)
#' x <- matrix(rnorm(200), 100, 2)
#' y <- factor(ifelse(x[, 1]^2 + x[, 2]^2 > 1.4, "out", "in"))
#' fit <- gpc(x, y, rbf_kernel(1), noise = 0.5)
#' fit
#' predict(fit, rbind(c(0, 0), c(2, 2)), type = "prob")
#' loo_error(fit)
#' @export
gpc <- function(x, ...) UseMethod("gpc")

#' @rdname gpc
#' @export
gpc.default <- function(x, y, kernel = rbf_kernel(1), noise = 0, kappa = 0,
                        method = c("naive"), control = gpc_control(), ...) {
  .check_dots_empty(...)
  x <- .as_input_matrix(x, "x")
  labels <- .classif_labels(y, nrow(x))
  .check_kernel(kernel)
  noise <- .check_number(noise, "noise", lower = 0)
  kappa <- .check_number(kappa, "kappa", lower = 0, upper = 0.5)
  if (kappa >= 0.5) .stop("'kappa' must lie in [0, 0.5): at 1/2 the labels carry no information")
  method <- match.arg(method)
  control <- .check_control(control, "gpc_control")
  fit <- .gpc_fit(x, labels$y, kernel, noise, kappa, method, control)
  fit$levels <- labels$levels
  fit$call <- match.call()
  .warn_not_converged(sprintf("gpc: the %s mean-field iteration", method), fit$convergence)
  fit
}

#' @rdname gpc
#' @export
gpc.formula <- function(formula, data, subset, na.action, ...) {
  call <- match.call()
  design <- .formula_design(call, parent.frame())
  fit <- gpc.default(design$x, design$y, ...)
  .add_formula_parts(fit, design, call)
}

#' Settings for the mean-field classifiers
#'
#' @param ftol Convergence tolerance of Algorithm 17.1: stop when
#'   \eqn{\max_i \delta\alpha_i^2 <} `ftol` (the paper's \eqn{10^{-5}}).
#' @param eta Initial learning rate of Algorithm 17.1 (the paper's 0.05).
#' @param maxit Maximum number of iterations.
#' @return A list of class `gpc_control`.
#' @examples
#' gpc_control(ftol = 1e-12, maxit = 5000)
#' @export
gpc_control <- function(ftol = 1e-5, eta = 0.05, maxit = 10000) {
  structure(list(ftol = .check_number(ftol, "ftol", lower = 0, open_lower = TRUE),
                 eta = .check_number(eta, "eta", lower = 0, open_lower = TRUE),
                 maxit = .check_count(maxit, "maxit", lower = 0L)),
            class = "gpc_control")
}

# The mean-field fit on -1/+1 labels; `start` warm-starts alpha.
.gpc_fit <- function(x, y, kernel, noise, kappa, method, control, start = NULL) {
  res <- cpp_gpc_naive_fit(kernel, x, y, noise, kappa, unclass(control), start)
  alpha <- stats::setNames(res$alpha, rownames(x))
  # <f_i> with the noise-free kernel: the activation a new case at x_i gets
  f <- stats::setNames(res$field - noise * y * res$alpha, rownames(x))
  structure(list(alpha = alpha, fitted.values = f, x = x, y = y, kernel = kernel,
                 noise = noise, kappa = kappa, method = method, control = control,
                 convergence = res$status),
            class = c("gpc", "gpsvm_classifier"))
}

# Probability of the second class at inputs x (rows).
.gpc_prob <- function(object, x, f = .classif_link(object, x)) {
  spread <- sqrt(cpp_kernel_diagonal(object$kernel, x) + object$noise)
  .flip_probit(f, spread, object$kappa)
}

#' Predict with a Gaussian process classifier
#'
#' @param object A fit from [gpc()].
#' @param newdata New inputs: a matrix or data frame with the training
#'   columns (a data frame for formula fits). `NULL` means the training inputs.
#' @param type `"class"` (a factor with the training levels), `"prob"` (the
#'   probability of the second level, as in [stats::glm()]) or `"link"` (the
#'   posterior mean activation \eqn{\langle f(x) \rangle}).
#' @param ... Not used; unknown arguments are an error.
#' @return A factor or numeric vector, one element per row of `newdata`.
#' @details With `method = "naive"` the probability is
#'   \eqn{\kappa + (1 - 2\kappa)\Phi(\langle f(x)\rangle / \sqrt{k(x, x) + v})};
#'   see [gpc()]. It lies in \eqn{[\kappa, 1 - \kappa]}.
#' @examples
#' set.seed(1)
#' x <- matrix(rnorm(100), 50, 2)
#' y <- factor(ifelse(x[, 1] > 0, "b", "a"))
#' fit <- gpc(x, y, rbf_kernel(2), noise = 0.2)
#' predict(fit, rbind(c(-1, 0), c(0, 0), c(1, 0)), type = "prob")
#' @export
predict.gpc <- function(object, newdata = NULL, type = c("class", "prob", "link"), ...) {
  .check_dots_empty(...)
  type <- match.arg(type)
  x <- .newdata_matrix(object, newdata)
  f <- if (is.null(newdata)) object$fitted.values else .classif_link(object, x)
  names(f) <- rownames(x)
  switch(type,
    link = f,
    prob = stats::setNames(.gpc_prob(object, x, f), rownames(x)),
    class = .classif_class(object, f, rownames(x)))
}

#' @export
print.gpc <- function(x, ...) {
  cat(sprintf("Gaussian process classifier (%s mean field)\n", x$method))
  if (!is.null(x$call)) cat("Call: ", paste(deparse(x$call), collapse = "\n"), "\n", sep = "")
  cat("Kernel: ", .format_kernel_line(x$kernel), "\n", sep = "")
  cat(sprintf("noise variance = %s, flip probability kappa = %s\n", format(x$noise),
              format(x$kappa)))
  cat(sprintf("%d cases; embedding strengths alpha in [%.3g, %.3g]\n", length(x$y),
              min(x$alpha), max(x$alpha)))
  .print_convergence(x$convergence)
  invisible(x)
}

#' Summarise a Gaussian process classifier
#'
#' Adds to the printed fit the training confusion table and the approximate
#' leave-one-out error (eqs. 17.41-17.42 for the naive method), which costs
#' one inverse of an n by n matrix.
#'
#' @param object A fit from [gpc()].
#' @param x A `summary.gpc` object.
#' @param ... Not used.
#' @return An object of class `summary.gpc`.
#' @examples
#' set.seed(1)
#' x <- matrix(rnorm(100), 50, 2)
#' y <- factor(ifelse(x[, 1] + rnorm(50, sd = 0.3) > 0, "b", "a"))
#' summary(gpc(x, y, rbf_kernel(1), noise = 0.5))
#' @export
summary.gpc <- function(object, ...) {
  .check_dots_empty(...)
  structure(list(fit = object, training = .classif_training(object),
                 loo = loo_error(object, "approx")),
            class = "summary.gpc")
}

#' @rdname summary.gpc
#' @export
print.summary.gpc <- function(x, ...) {
  print(x$fit)
  cat(sprintf("Training error: %.4f\n", x$training$error))
  print(x$training$table)
  cat(sprintf("Approximate leave-one-out error: %.4f (%d of %d)\n", x$loo$error, x$loo$count,
              length(x$loo$margins)))
  invisible(x)
}
