#' Leave-one-out error of a kernel classifier
#'
#' Estimates the leave-one-out error of an [svc()] or [gpc()] fit, either by
#' the linear-response approximations of Opper and Winther (2000) at the cost
#' of about one matrix inverse, or exactly by refitting without each case.
#'
#' For every case the leave-one-out margin \eqn{y_i f^{(-i)}(x_i)} is
#' computed, where \eqn{f^{(-i)}} is the decision function (or posterior mean
#' activation) learned without case \eqn{i}; a margin \eqn{\le 0} is a
#' leave-one-out error (eq. 17.26).
#'
#' `method = "approx"`:
#' * [svc()]: eqs. (17.26)-(17.31). Each other case is assumed to stay in its
#'   group (non-support vector, margin support vector with \eqn{0 < \alpha < C},
#'   or bounded vector with \eqn{\alpha = C}). A margin support vector's margin
#'   becomes \eqn{y_i f_i - \alpha_i / [K_{mSV}^{-1}]_{ii}}, a bounded vector's
#'   \eqn{y_i f_i + (k_i^T K_{mSV}^{-1} k_i - k_{ii}) \alpha_i}, a non-support
#'   vector's is unchanged. Here \eqn{f_i} and \eqn{K} carry the input noise on
#'   the diagonal, as the derivation requires.
#' * [gpc()] with `method = "naive"`: eqs. (17.41)-(17.42),
#'   \eqn{y_i\langle f_i\rangle - (1/[(\Omega + K)^{-1}]_{ii} - \Omega_i)\alpha_i}.
#'   \eqn{\Omega_i} is computed as the linear response of the mean-field map,
#'   \eqn{k_{ii}(1/(G(z_i)(z_i + G(z_i))) - 1)} with \eqn{G} the embedding
#'   function of eq. (17.40); at the fixed point this equals the paper's
#'   \eqn{k_{ii}(1/(y_i\alpha_i\langle f_i\rangle) - 1)} but does not divide by
#'   a margin that may vanish before convergence.
#' * [gpc()] with `method = "tap"`: the TAP analogue. The cavity distribution
#'   of case \eqn{i} is TAP's approximation to the posterior of its activation
#'   without case \eqn{i}, so the margin is \eqn{y_i} times the cavity mean; it
#'   comes with the fit at no extra cost.
#'
#' `method = "exact"` refits the model without each case, starting from the
#' full solution with that case removed (a warm start, as the paper
#' suggests), with the fit's own settings. Hyperparameters chosen by an
#' evidence search (`gpc()`'s default, or `optimize`) stay at the values the
#' full data gave: the search is not repeated without each case, so the
#' estimate is that of the model with those values. For TAP the warm start is the
#' full fit's EP sites without the case left out; it changes only the number
#' of sweeps, not the answer (sites that cannot be used, e.g. a negative
#' precision in an edited fit, fall back to fresh sites).
#' Refits run in chunks of cases wherever [future::plan()] sends them, with
#' progress reported through progressr (see [gpsvm_parallel]); the result
#' does not depend on the plan.
#'
#' With three or more classes, every one-vs-rest model is left without case
#' \eqn{i} (by the approximation or by refits) and gives its decision value
#' \eqn{f_k^{(-i)}(x_i)}; the case is an error when the largest of them is
#' not its own class's, which is what `predict(type = "class")` would say
#' without the case. Its margin is \eqn{f_{y_i}^{(-i)}(x_i) - \max_{k \ne y_i}
#' f_k^{(-i)}(x_i)}, again an error when \eqn{\le 0}.
#'
#' @param fit A fit from [svc()] or [gpc()].
#' @param method `"approx"` (linear response) or `"exact"` (refits).
#' @param x A `gpsvm_loo` object.
#' @param ... Not used; unknown arguments are an error.
#' @return An object of class `gpsvm_loo`: a list with `error` (the
#'   leave-one-out error rate), `count` (the number of cases misclassified when
#'   left out), `margins` (the leave-one-out margins: \eqn{y_i f^{(-i)}(x_i)}
#'   for two classes, the multi-class margin above otherwise), `method`,
#'   `model` (the fit's class and method), `estimator` (`"refits"`, or the
#'   approximation: `"linear response"` or `"TAP cavity means"`) and `time`
#'   (seconds); with three or
#'   more classes also `decision`, the n by K matrix of leave-one-out decision
#'   values; for exact refits also `iterations` (per refit; a matrix with one
#'   column per class for three or more) and `not_converged` (the number of
#'   refits that hit the iteration cap, with a warning).
#' @references Opper, M. and Winther, O. (2000). Gaussian processes and SVM:
#'   mean field results and leave-one-out. In *Advances in Large Margin
#'   Classifiers*, MIT Press. Sections 17.5 and 17.6.
#' @seealso [gpsvm_corrections], items 17 and 18.
#' @examples
#' set.seed(3)
#' x <- matrix(rnorm(120), 60, 2)
#' y <- factor(ifelse(x[, 1] + x[, 2] + rnorm(60, sd = 0.5) > 0, "b", "a"))
#' fit <- svc(x, y)
#' loo_error(fit)
#' loo_error(fit, "exact")
#' loo_error(gpc(Species ~ ., data = iris))
#' @export
loo_error <- function(fit, method = c("approx", "exact"), ...) {
  .check_dots_empty(...)
  if (!inherits(fit, "gpsvm_classifier")) .stop("'fit' must be a fit from svc() or gpc()")
  .validate_fit(fit)
  method <- .match_choice(method)
  start <- proc.time()[["elapsed"]]
  joint <- .is_joint(fit)
  if (joint) {
    out <- .joint_loo(fit, method)
    approx <- "variational cavities"
  } else {
    models <- .binary_models(fit)
    refusal <- if (method == "exact") .loo_exact_refusal(models[[1L]])
    if (!is.null(refusal)) .stop(refusal)
    out <- if (method == "approx") {
      list(margins = lapply(models, function(m) .loo_approx(m)))
    } else {
      .loo_exact(models)
    }
    out <- c(.loo_margins(fit, out$margins), out[setdiff(names(out), "margins")])
    approx <- .loo_approx_label(models[[1L]])
  }
  margins <- out$margins
  res <- c(list(error = mean(margins <= 0), count = sum(margins <= 0), margins = margins,
                method = method, model = .loo_model_name(fit),
                estimator = if (method == "exact") "refits" else approx),
           out[setdiff(names(out), "margins")],
           list(time = proc.time()[["elapsed"]] - start))
  if (isTRUE(res$not_converged > 0)) {
    warning(sprintf("%d of %d leave-one-out refits did not converge%s", res$not_converged,
                    length(margins) * if (joint) 1L else length(models),
                    if (joint) "" else sprintf(" within max_iter = %d", fit$control$max_iter)),
            call. = FALSE)
  }
  structure(res, class = "gpsvm_loo")
}

# The leave-one-out margins of a fit from its binary models': for K classes
# the decision values f_k(x_i) = (y_k)_i m_k,i and the true class's margin.
.loo_margins <- function(fit, binary) {
  rows <- rownames(fit$x)
  if (!.is_multiclass(fit)) return(list(margins = stats::setNames(binary[[1L]], rows)))
  decision <- .decision_matrix(fit$models, Map(function(m, b) m$y * b, fit$models, binary), rows)
  truth <- as.integer(fit$classes)
  own <- decision[cbind(seq_along(truth), truth)]
  others <- decision
  others[cbind(seq_along(truth), truth)] <- -Inf
  list(margins = stats::setNames(own - apply(others, 1L, max), rows), decision = decision)
}

.loo_model_name <- function(fit) {
  name <- .model_label(fit)
  if (.is_joint(fit)) return(sprintf("%s, %d classes, one joint model", name, length(fit$levels)))
  if (!is.null(fit$joint_pool)) {
    return(sprintf("%s, %d classes one-vs-rest (without the joint model it pools them with)", name,
                   length(fit$levels)))
  }
  if (.is_multiclass(fit)) sprintf("%s, %d classes one-vs-rest", name, length(fit$levels)) else name
}

# What each classifier method brings to leave-one-out (methods in gpc.R and
# svc.R): .loo_approx() margins and their label, .loo_refits() for the
# cases `which`, warm-started, and why exact refits are refused (or NULL).
.loo_approx_label.gpsvm_classifier <- function(model) "linear response"
.loo_exact_refusal.gpsvm_classifier <- function(model) NULL

# Exact refits of every binary model as one list of tasks, so that the
# progress bar and the workers cover all of them.
.loo_exact <- function(models) {
  n <- length(models[[1L]]$y)
  # about 50 chunks per model: fine for progress and workers, coarse enough
  # that each call's set-up (the Gram matrix) stays small next to the refits
  chunks <- split(seq_len(n), ceiling(seq_len(n) / max(1L, ceiling(n / 50))))
  tasks <- unlist(lapply(seq_along(models), function(k) {
    lapply(chunks, function(which) list(model = k, which = which))
  }), recursive = FALSE)
  worker <- .loo_worker(models)
  parts <- .future_map(tasks, worker)
  model_of <- vapply(tasks, `[[`, integer(1), "model")
  collect <- function(field) {
    lapply(seq_along(models), function(k) unlist(lapply(parts[model_of == k], `[[`, field)))
  }
  iterations <- collect("iterations")
  list(margins = collect("margins"),
       iterations = if (length(models) == 1L) iterations[[1L]] else do.call(cbind, iterations),
       not_converged = sum(vapply(parts, `[[`, numeric(1), "not_converged")))
}

# A closure holding only the binary models, so that workers get nothing else.
.loo_worker <- function(models) {
  force(models)
  function(task) .loo_refits(models[[task$model]], task$which)
}

#' @rdname loo_error
#' @export
print.gpsvm_loo <- function(x, ...) {
  what <- if (x$method == "exact") "exact (refits)" else sprintf("approximate (%s)", x$estimator)
  cat(sprintf("Leave-one-out error of %s, %s\n", x$model, what))
  cat(sprintf("  error = %.4f (%d of %d cases misclassified when left out)\n", x$error, x$count,
              length(x$margins)))
  if (!is.null(x$iterations)) {
    cat(sprintf("  refits: %d iterations on average\n", round(mean(x$iterations))))
  }
  cat(sprintf("  time: %.3g s\n", x$time))
  invisible(x)
}
