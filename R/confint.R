# confint() of every fit.  A model contributes, by internal generics:
#   .weight_intervals(object, level)  rows for weights with an exact posterior, or NULL;
#   .evidence_curvature(object)  the estimated hyperparameters (natural values) and
#       the Hessian of the log evidence in their transforms (.hyper_transforms()),
#       or NULL; by default .search_curvature()'s, from refits by .refit_at().

#' Confidence intervals for a fit's hyperparameters and weights
#'
#' `confint()` gives intervals for the hyperparameters a fit's evidence
#' estimated, on their natural scale: `C`, `epsilon` and the Gaussian
#' width `sigma` (or one width per input, `sigma[<column>]`) chosen by
#' `optimize` in [svr()] and [mfsvr()], the noise variance `noise`, `kappa`
#' and the width chosen by [gpc()]'s search, and the noise variance
#' `noise_variance`, the penalty weight `lambda` and a width chosen by
#' `optimize` in [rvm()] and [srvm()]; for `rvm()` and `srvm()` fits also
#' their weights (first), from the Gaussian posterior at the fitted
#' hyperparameters (the mean \eqn{\pm} the normal quantile times the
#' posterior standard deviation, as [stats::confint.default()] would give
#' them from [coef()] and [vcov()]).
#'
#' A hyperparameter's interval is the Laplace approximation of its posterior
#' with a flat prior on its log (for `kappa`, on \eqn{logit(2\kappa)}, the
#' scale its search uses): with \eqn{H} the Hessian of the log evidence in
#' those transformed values at the estimate, the transformed value is
#' approximately normal with covariance \eqn{(-H)^{-1}}, and the interval's
#' ends are mapped back, so they are positive (and \eqn{\kappa < 1/2}) and
#' not symmetric. Each hyperparameter's interval allows for the others that
#' were estimated with it (the marginal of the joint approximation), not
#' for those given. For `svr()`, `mfsvr()` and `gpc()` \eqn{H} comes from
#' refits at nearby values, in the model's units (`scale = TRUE` data): for
#' `mfsvr()` by central differences of the evidence's analytic gradient
#' (step 0.01; 2p refits for p hyperparameters), for the others by second
#' differences of the log evidence (step 0.05, about \eqn{2p^2} refits).
#' For `rvm()` and `srvm()` the evidence is the Gaussian marginal likelihood
#' in closed form, and \eqn{H} is taken jointly in the log precisions
#' \eqn{\alpha_i} of the kept weights, \eqn{\log \sigma^2}, \eqn{\log
#' \lambda} and the log width: the weights' precisions are estimated too,
#' and their uncertainty widens the others' intervals (an \eqn{\alpha} at
#' `srvm_control(min_alpha)`, or one the evidence does not pin down, with a
#' curvature below \eqn{10^{-6}}, is held where it is).
#'
#' Where the search maximised the evidence times a hyperprior (the
#' posterior mode: `search_control(hyperprior = TRUE)`, or [mfsvr()]'s
#' default for `optimize = TRUE` on standardised data, see "The hyperprior"
#' there), \eqn{H} is the Hessian of the log posterior, the log evidence
#' plus the log hyperprior, at that mode: the evidence alone need not be
#' curved downwards there. The result then has the attribute `"curvature"`,
#' `"log posterior (log evidence + log hyperprior)"`.
#'
#' A hyperparameter that stopped at the end of its search range (see
#' `fit$optimization$at_bound`) is not at a maximum of the evidence, and one
#' where the evidence is not curved downwards (a rough evidence, whose
#' second differences change with their step, or a flat one) has no
#' interval from the curvature: its row is `NA`, with a warning naming it.
#' A fit whose evidence estimated nothing (every hyperparameter given, or
#' chosen from the inputs alone, as the default width is) says so in an
#' error, as does a fit without an evidence ([svc()],
#' `gpc(method = "naive")`) and an `svr()` fit whose `C` was chosen by
#' another criterion than the evidence `logLik()` gives (the paper's
#' eq. (16) or (17), see [svr_control()]).
#'
#' @param object A fit from [svr()], [mfsvr()], [rvm()], [srvm()], [gpc()]
#'   or [svc()].
#' @param parm The rows wanted: names (as the rows of the full result) or
#'   numbers; all by default.
#' @param level The confidence level.
#' @param ... Unused; unknown arguments are an error.
#' @return A matrix with one row per weight or hyperparameter and columns for
#'   the lower and upper limits, labelled as by [stats::confint()] (`"2.5 %"`,
#'   `"97.5 %"`), with the attribute `"curvature"` where the hyperparameters'
#'   intervals come from the log posterior's curvature. For a classifier with
#'   three or more classes, one row per hyperparameter of each one-vs-rest
#'   model, named `"<class>: <hyperparameter>"`.
#' @seealso [hyperparameters()] for the estimates, [model-comparison] for
#'   comparing fits by their evidence.
#' @examples
#' fit <- mfsvr(dist ~ speed, data = cars, optimize = TRUE)
#' hyperparameters(fit)
#' confint(fit)
#' confint(rvm(dist ~ speed, data = cars))
#' @importFrom stats confint
#' @export
confint.gpsvm_regression <- function(object, parm, level = 0.95, ...) {
  .check_dots_empty(...)
  .validate_fit(object)
  .check_constant_tube(object, "confint()")
  .needs_inputs(object, "confint()")  # (its curvature refits the model)
  level <- .check_level(level)
  hyper <- .hyperparameter_intervals(object, level)
  out <- rbind(.weight_intervals(object, level), hyper)
  if (is.null(out)) .stop(.nothing_estimated(object))
  if (!missing(parm)) out <- .select_rows(out, parm)
  # (said only where it is not the evidence's, so that the matrix prints as lm's)
  curvature <- attr(hyper, "curvature")
  if (!is.null(curvature) && !identical(curvature, "log evidence")) attr(out, "curvature") <- curvature
  out
}

#' @rdname confint.gpsvm_regression
#' @export
confint.gpsvm_classifier <- confint.gpsvm_regression

# With varying noise an mfsvr() or svr() fit's C and epsilon are the level of
# its noise function: their curvature or curve would be the constant model's.
.check_constant_tube <- function(object, what) {
  if (inherits(object, c("gpsvm_mfsvr", "gpsvm_svr")) &&
      identical(object$noise_model$type, "varying")) {
    .stop(sprintf(paste("%s is not available for a fit with noise = \"varying\": its C and epsilon",
                        "are the level of the fitted noise function, not hyperparameters of their own;",
                        "refit with noise = \"constant\" for it"), what))
  }
}

.weight_intervals.default <- function(object, level) NULL

.evidence_curvature.default <- function(object) .search_curvature(object)

# The kernel, inputs and inducing inputs of an EP fit at the width or widths
# per input ("sigma[<column>]") in the named list `h` (the fit's own elsewhere).
.refit_point <- function(object, h) {
  point <- list(kernel = object$kernel, x = object$x, inducing = object$inducing)
  if (!is.null(h$sigma)) point$kernel <- .with_width(object$kernel, h$sigma)
  if (any(grepl("^sigma\\[", names(h)))) {
    point[c("kernel", "x", "inducing")] <- .per_input_point(h, object$kernel, object$x,
                                                           object$inducing)
  }
  point
}

# The hyperparameters' rows: one block per binary model of a classifier
# with several (prefixed by the class), else one.
.hyperparameter_intervals <- function(object, level) {
  models <- if (inherits(object, "gpsvm_classifier")) .binary_models(object) else list(object)
  curvatures <- lapply(models, function(m) .evidence_curvature(m))  # (dispatch from here)
  blocks <- lapply(curvatures, .curvature_intervals, level = level)
  if (length(models) > 1L) {
    blocks <- Map(function(b, label) {
      if (!is.null(b)) rownames(b) <- paste0(label, ": ", rownames(b))
      b
    }, blocks, names(models))
  }
  out <- do.call(rbind, blocks)
  if (is.null(out)) return(NULL)
  kinds <- unique(unlist(lapply(curvatures, `[[`, "of")))
  structure(out, curvature = paste(kinds %||% "log evidence", collapse = "; "))
}

# The error of a fit with nothing to give an interval for.
.nothing_estimated <- function(object) {
  why <- tryCatch({
    stats::logLik(object)
    NULL
  }, error = function(e) conditionMessage(e))
  model <- sub("^gpsvm_", "", class(object)[1L])
  if (!is.null(why)) return(sprintf("confint(): nothing to give intervals for: %s", why))
  sprintf(paste("confint(): this %s() fit estimated no hyperparameters by its evidence: they",
                "were given, or chosen from the inputs alone (as the default kernel width is).",
                "Fit with optimize = TRUE to choose them by the evidence and get their",
                "intervals"), sub("_tap$|_naive$", "", model))
}

# Rows of a confint() matrix by name or number.
.select_rows <- function(out, parm) {
  if (is.numeric(parm)) {
    if (anyNA(parm) || any(parm < 1 | parm > nrow(out) | parm != round(parm))) {
      .stop(sprintf("'parm' must be row numbers from 1 to %d", nrow(out)))
    }
    return(out[parm, , drop = FALSE])
  }
  if (!is.character(parm) || anyNA(parm)) .stop("'parm' must be row names or numbers")
  unknown <- setdiff(parm, rownames(out))
  if (length(unknown) > 0L) {
    .stop(sprintf("'parm' names %s, which the fit has no interval for; it has %s",
                  paste0("'", unknown, "'", collapse = ", "),
                  paste0("'", rownames(out), "'", collapse = ", ")))
  }
  out[parm, , drop = FALSE]
}

# The intervals from a curvature, transformed estimate +- z sd mapped back;
# NA (with a warning) at a bound, or all where the evidence is rough or not
# curved downwards.
.curvature_intervals <- function(curvature, level) {
  if (is.null(curvature)) return(NULL)
  est <- curvature$estimate
  of <- curvature$of %||% "log evidence"
  labels <- .confint_labels(level)
  out <- matrix(NA_real_, length(est), 2L, dimnames = list(names(est), labels))
  free <- setdiff(names(est), curvature$at_bound)
  if (length(curvature$at_bound) > 0L) {
    warning(sprintf(paste("confint(): %s is at the end of its range (where its search",
                          "stopped, or lambda at 0), not at a maximum of the %s: no interval"),
                    paste(curvature$at_bound, collapse = ", "), of), call. = FALSE)
  }
  if (length(free) == 0L) return(out)
  if (length(curvature$rough) > 0L) {
    warning(sprintf(paste("confint(): the %s is rough near the estimate of %s (its",
                          "curvature changes with the step of the differences): no interval"),
                    of, paste(curvature$rough, collapse = ", ")), call. = FALSE)
    return(out)
  }
  H <- curvature$hessian[free, free, drop = FALSE]
  precision <- -(H + t(H)) / 2
  decomposition <- if (all(is.finite(precision))) eigen(precision, symmetric = TRUE)
  if (is.null(decomposition) || min(decomposition$values) <= 0) {
    warning(sprintf(paste("confint(): the %s is not curved downwards at the estimate",
                          "of %s (it is flat or rough there, or a refit near it failed): no",
                          "interval"),
                    of, paste(free, collapse = ", ")), call. = FALSE)
    return(out)
  }
  v <- decomposition$vectors
  sd <- sqrt(rowSums(v^2 %*% diag(1 / decomposition$values, length(free))))
  z <- stats::qnorm((1 + level) / 2)
  transform <- .hyper_transforms(free)
  centre <- transform$to(est[free])
  out[free, ] <- cbind(transform$from(centre - z * sd), transform$from(centre + z * sd))
  out
}

# "2.5 %", "97.5 %", as stats::confint() labels its columns.
.confint_labels <- function(level) {
  a <- (1 - level) / 2
  paste(format(100 * c(a, 1 - a), trim = TRUE, scientific = FALSE, digits = 3), "%")
}

# Each interval's scale: the log, and for kappa in (0, 1/2) logit(2 kappa).
.hyper_transforms <- function(names) {
  kappa <- names == "kappa"
  list(to = function(v) ifelse(kappa, stats::qlogis(2 * v), log(v)),
       from = function(t) ifelse(kappa, stats::plogis(t) / 2, exp(t)))
}

# The curvature of a model whose evidence search fit$optimization records:
# the Hessian in the transformed estimates, by central differences of the
# gradient of .refit_at() where it gives one, else by second differences of
# the log evidence (step 0.05: an iterated evidence is rough on finer scales).
.search_curvature <- function(object) {
  record <- object$optimization
  searched <- names(unlist(record$estimate))
  if (length(searched) == 0L) return(NULL)
  est <- .model_hyperparameters(object)[searched]
  at_bound <- intersect(sub(":(lower|upper)$", "", record$at_bound %||% character(0)), names(est))
  free <- setdiff(names(est), at_bound)
  transform <- .hyper_transforms(free)
  # (a search with a hyperprior stopped at the posterior's mode: its curvature)
  prior <- record$hyperprior
  prior <- if (!is.null(prior)) .hyperprior(prior, attr(prior, "coef"))
  search_scale <- function(values) stats::setNames(log(values), paste0("log_", names(values)))
  refit <- function(theta) {
    values <- replace(est, free, transform$from(theta))
    out <- tryCatch(suppressWarnings(.refit_at(object, values)),
                    error = function(e) list(value = NA_real_))
    if (!is.null(prior)) {
      out$value <- out$value + prior$log_density(search_scale(values))
      if (!is.null(out$gradient)) {
        g <- prior$gradient(search_scale(values))
        out$gradient[free] <- out$gradient[free] + g[paste0("log_", free)]
      }
    }
    if (!is.null(out$gradient)) out$gradient <- unname(out$gradient[free])
    out
  }
  theta <- transform$to(est[free])
  H <- if (length(free) == 0L) matrix(0, 0, 0) else .hessian(refit, theta)
  rough <- free[attr(H, "rough") %||% logical(length(free))]
  H <- matrix(H, length(free), length(free), dimnames = list(free, free))
  list(estimate = est, at_bound = at_bound, rough = rough, hessian = H,
       of = if (is.null(prior)) "log evidence" else "log posterior (log evidence + log hyperprior)")
}

# The Hessian of f at theta, f(theta) = list(value, gradient or NULL): central
# differences of the gradient, symmetrised, else second differences of the value.
.hessian <- function(f, theta, gradient_step = 0.01, value_step = 0.05) {
  p <- length(theta)
  at <- function(k, h) f(theta + replace(numeric(p), k, h))
  centre <- f(theta)
  if (!is.null(centre$gradient)) {
    h <- gradient_step
    columns <- lapply(seq_len(p), function(k) {
      up <- at(k, h)$gradient
      down <- at(k, -h)$gradient
      if (is.null(up) || is.null(down)) rep(NA_real_, p) else (up - down) / (2 * h)
    })
    H <- do.call(cbind, columns)
    return((H + t(H)) / 2)
  }
  h <- value_step
  value <- function(shift) f(theta + shift)$value
  second <- function(j, step) {
    e <- replace(numeric(p), j, step)
    (value(e) - 2 * centre$value + value(-e)) / step^2
  }
  H <- matrix(NA_real_, p, p)
  rough <- logical(p)
  for (j in seq_len(p)) {
    H[j, j] <- second(j, h)
    # (over h and 2h they agree on a smooth evidence, not on a rough one's spike)
    wide <- second(j, 2 * h)
    rough[j] <- !isTRUE(abs(H[j, j] - wide) <= 0.2 * max(abs(H[j, j]), abs(wide)))
    e_j <- replace(numeric(p), j, h)
    for (k in seq_len(j - 1L)) {
      e_k <- replace(numeric(p), k, h)
      H[j, k] <- H[k, j] <- (value(e_j + e_k) - value(e_j - e_k) - value(e_k - e_j) +
                               value(-e_j - e_k)) / (4 * h^2)
    }
  }
  structure(H, rough = rough)
}
