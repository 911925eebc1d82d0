# The joint K-class classifier of gpc() (multiclass = "joint"; ?gpc, the
# core's inst/include/gpsvm/multiclass.hpp).  Its fit (class
# "gpsvm_gpc_joint" before "gpsvm_gpc") holds the fields its validator below
# checks: `weights` (n x K), `variance` (the shared latent variances at the
# training inputs) and `chol` (of I + K / v, or on inducing inputs of
# A = I + G' D^-1 G) instead of a binary model's.

# The joint model's fit: `labels` from .classif_labels(), `optimize` as
# .gpc_automatic_search() resolved it (its "rows" attribute dropped),
# `inducing` the inducing inputs (scaled) the call asked for or NULL.
.gpc_joint_fit <- function(x, labels, kernel, noise, kappa, control, optimize, inducing,
                           settings) {
  if (kappa > 0) {
    .stop(paste("'kappa' needs multiclass = \"ovr\": the joint multi-class model has no flip",
                "noise (its probit noise, 'noise', plays that part)"))
  }
  which <- .optimize_which(optimize, c("sigma", "noise", "kappa"), default = c("sigma", "noise"))
  if ("kappa" %in% which) .stop("'optimize' = \"kappa\" needs multiclass = \"ovr\"")
  if (!.has_width(kernel)) which <- setdiff(which, "sigma")
  kernel <- .resolve_kernel(kernel, x)
  if (!is.null(kernel$input_widths) && "sigma" %in% which) {
    .stop("'optimize': the joint classifier searches one width; give the widths per input")
  }
  if (noise <= 0) .stop("'noise' must be positive for the joint multi-class model")
  y <- as.integer(labels$classes)
  K <- length(labels$levels)
  start <- outcome <- NULL
  if (length(which) > 0L) {
    search <- .gpc_joint_search(x, y, K, kernel, noise, control, which, inducing, settings)
    outcome <- search$outcome
    h <- search$spec$natural(outcome$best$par %||% search$spec$start)
    if ("sigma" %in% names(h)) kernel <- .with_width(kernel, h[["sigma"]])
    if ("noise" %in% names(h)) noise <- h[["noise"]]
    start <- search$start
  }
  z <- inducing %||% .choose_prior(x, kernel, control$rank_tol)
  fit <- .gpc_joint_bare(x, y, K, kernel, noise, control, z, start)
  if (!is.null(outcome)) {
    if (!is.null(search$rows)) outcome$record$search_rows <- length(search$rows)
    fit <- .finish_search(fit, outcome, search$spec, "gpc():")
    fit$optimization$criterion <- "approximate leave-one-out log predictive probability"
    fit$optimization$loo_log_predictive <- outcome$best$log_evidence
  }
  fit
}

# The fit at given hyperparameters (`start`: latent means to start from).
.gpc_joint_bare <- function(x, y, K, kernel, noise, control, inducing, start = NULL) {
  model <- list(kernel = kernel, noise = noise, inducing = inducing)
  .count_fit()
  res <- cpp_gpc_multiclass_fit(model, x, y, K, .joint_control(control), start, FALSE)
  fitted <- res$mean
  dimnames(fitted) <- list(rownames(x), NULL)
  out <- list(x = x, kernel = kernel, noise = noise, kappa = 0, method = "tap",
              control = control, weights = res$weights, variance = res$variance,
              chol = res$chol, fitted.values = fitted, log_evidence = res$log_evidence,
              multiclass = "joint", convergence = res$convergence)
  if (!is.null(inducing)) {
    out <- c(out, list(inducing = .fitted_inducing(inducing),
                       inducing_weights = res$inducing_weights, inducing_chol = res$inducing_chol))
  }
  structure(out, class = c("gpsvm_gpc_joint", "gpsvm_gpc", "gpsvm_classifier"))
}

.joint_control <- function(control, tol = control$tol) {
  list(tol = tol, max_iter = max(control$max_iter, 2000L))
}

# The search of the joint model's width and noise: L-BFGS-B on log sigma and
# log noise (the noise above .joint_min_noise) maximising the approximate
# leave-one-out log predictive probability (the core's MulticlassLoo), with
# its gradient from the core (an adjoint Newton solve) on the dense prior of
# at most joint_search_max_n evenly spaced rows, or by central differences
# on the FITC prior of given inducing inputs.  Returns the outcome, the spec,
# the rows it ran on (NULL: all), and the latent means of its best point at
# every row (the fit's warm start).
.gpc_joint_search <- function(x, y, K, kernel, noise, control, which, inducing, settings) {
  n <- nrow(x)
  rows <- if (is.null(inducing) && n > .size_rule("joint_search_max_n")) {
    .evenly_spaced_rows(n, .size_rule("joint_search_max_n"))
  }
  search_x <- if (is.null(rows)) x else x[rows, , drop = FALSE]
  search_y <- if (is.null(rows)) y else y[rows]
  spec <- .gpc_search_spec(search_x, kernel, noise, 0, which)
  if ("log_noise" %in% spec$names) {
    diagonal <- mean(cpp_kernel_diagonal(kernel, search_x, 0L, 1L))
    spec$lower[["log_noise"]] <- log(.joint_min_noise * diagonal)
    spec$start <- pmax(spec$start, spec$lower)
  }
  at <- function(par) {
    h <- as.list(spec$natural(par))
    list(kernel = if (!is.null(h$sigma)) .with_width(kernel, h$sigma) else kernel,
         noise = h$noise %||% noise, inducing = inducing)
  }
  fit_at <- function(par, start, tol, gradient) {
    ctl <- c(.joint_control(control, tol), adjoint_tol = .joint_adjoint_tol)
    .count_fit()
    tryCatch(cpp_gpc_multiclass_fit(at(par), search_x, search_y, K, ctl, start, FALSE, gradient),
             error = function(e) e)
  }
  # d / d(log sigma, log noise) -> the searched ones
  keep <- c("log_sigma", "log_noise") %in% spec$names
  # one progress step per evaluation, bounded by the search's iteration limit
  step <- progressr::progressor(steps = settings$max_iter)
  evaluate <- function(par, first, warm, accuracy) {
    tol <- max(min(control$tol, .joint_search_tol), accuracy %||% .joint_search_tol)
    res <- fit_at(par, warm$mean, tol, is.null(inducing))
    step(message = "gpc(): the joint search")
    if (inherits(res, "error") || !res$convergence$converged) {
      return(.search_point(res, converged = FALSE, iterations = res$convergence$iterations %||% NA,
                           solver = "the variational fit"))
    }
    gradient <- if (is.null(inducing)) res$loo_gradient[keep] else {
      .joint_numeric_gradient(par, function(p) fit_at(p, res$mean, .joint_difference_tol, FALSE))
    }
    .search_point(res, res$loo, gradient, TRUE, res$convergence$iterations,
                  "the variational fit")
  }
  outcome <- .gradient_search(spec, evaluate, n = length(search_y), tol = settings$tol,
                              max_iter = settings$max_iter)
  best <- outcome$best$fit
  # (after a search on some rows, the latent means K(x, rows) W at every row)
  start <- if (!is.null(best) && !is.null(rows)) {
    cpp_kernel_matrix(at(outcome$best$par)$kernel, x, search_x, 0L, 1L) %*% best$weights
  } else best$mean
  list(outcome = outcome, spec = spec, rows = rows, start = start)
}

# The criterion's gradient by central differences of step
# .joint_search_step on the search's log scale, each fit warm-started from
# the centre's means at .joint_difference_tol (the FITC prior, whose
# criterion has no analytic gradient here).
.joint_numeric_gradient <- function(par, fit_at) {
  vapply(seq_along(par), function(j) {
    e <- replace(numeric(length(par)), j, .joint_search_step)
    up <- fit_at(par + e)
    down <- fit_at(par - e)
    if (is.null(up$loo) || is.null(down$loo)) return(NA_real_)
    (up$loo - down$loo) / (2 * .joint_search_step)
  }, numeric(1))
}

# The search's fits stop at this tolerance at most (the control's, if finer;
# coarser where the search asks for less accuracy far from its optimum).
# Differences of the criterion use .joint_difference_tol: their rounding,
# about n times the tolerance, stays far below the step's change.
.joint_search_tol <- 1e-4
.joint_difference_tol <- 1e-7
# The adjoint solve's relative residual in the search's gradient: far below
# what the stopping rule sees; a tighter one costs iterations, no steps.
.joint_adjoint_tol <- 1e-6

# The smallest noise variance the joint search considers, relative to the
# kernel's mean diagonal.  Below it the variational posterior pins every
# case with precision 1 / v whatever its label's curvature: the
# leave-one-out criterion becomes over-confident and keeps rising as v falls.
.joint_min_noise <- 0.01
.joint_search_step <- 0.01

# Latent means (n x K, named by the levels) and shared latent variances of
# a joint fit at scaled inputs x.
.joint_moments <- function(object, x) {
  fit <- list(kernel = object$kernel, noise = object$noise, x = object$x,
              weights = object$weights, chol = object$chol, inducing = object$inducing,
              inducing_weights = object$inducing_weights, inducing_chol = object$inducing_chol)
  out <- cpp_gpc_multiclass_predict(fit, x)
  dimnames(out$mean) <- list(rownames(x), object$levels)
  out
}

.is_joint <- function(object) inherits(object, "gpsvm_gpc_joint")

# Leave-one-out of the joint model by its cavities (the core's
# MulticlassLoo): the latent means without each case and their variance.
.joint_loo_decision <- function(object) {
  out <- cpp_multiclass_loo(object$fitted.values, object$weights, object$variance, object$noise)
  dimnames(out$mean) <- list(rownames(object$x), object$levels)
  out
}

.model_lines.gpsvm_gpc_joint <- function(object, digits) {
  search <- object$optimization
  c(sprintf("one joint model of %d classes (multinomial probit, variational): noise variance = %s, bias variance = %s",
            length(object$levels), format(object$noise, digits = digits),
            format(object$bias_variance)),
    sprintf("log evidence (variational lower bound) = %.6g", object$log_evidence),
    if (!is.null(search)) .search_lines(list(search)),
    .inducing_line(object))
}

.glance_evidence.gpsvm_gpc_joint <- function(x) .evidence_columns(logLik(x))

.hyperparameter_matrix.gpsvm_gpc_joint <- function(object) {
  rbind(c(.model_hyperparameters(object), bias = object$bias_variance))
}

.point_roles.gpsvm_gpc_joint <- function(model) rep("support", nrow(model$x))

.validate_model.gpsvm_gpc_joint <- function(object) {
  size <- .input_checks(object)
  n <- size$n
  K <- length(object$levels)
  m <- if (is.matrix(object$inducing)) nrow(object$inducing)
  .check_fields(object, c(list(
    levels = function(v) {
      if (!is.character(v) || length(v) < 2L || anyNA(v) || anyDuplicated(v)) {
        "must be two or more distinct class names"
      }
    },
    classes = .factor_of(n, object$levels), bias_variance = .number(lower = 0),
    noise = .number(lower = 0, open = TRUE), kappa = .number(lower = 0, upper = 0),
    method = .string("tap"), multiclass = .string("joint"),
    control = .control_field("gpc_control"),
    weights = .numeric_matrix(n, K), variance = .numbers(n, lower = 0),
    fitted.values = .numeric_matrix(n, K), log_evidence = .number(),
    inducing = .optional(.numeric_matrix(ncol = size$p)),
    inducing_weights = if (!is.null(m)) .numeric_matrix(m, K) else .optional(.numeric_matrix()),
    inducing_chol = if (!is.null(m)) .lower_factor(m) else .optional(.numeric_matrix()),
    chol = .lower_factor(m %||% n),
    response_levels = .optional(function(v) {
      if (!is.character(v) || !all(object$levels %in% v)) "must hold every level of fit$levels"
    })),
    .common_checks(n, size$p)))
  invisible(object)
}

# loo_error() of a joint fit: the leave-one-out latent means (n x K) by the
# cavities, or by warm-started refits in chunks through the future plan; a
# case's margin, its class's mean less the largest other, is <= 0 exactly
# when its class is not the most probable (one predictive variance).
.joint_loo <- function(fit, method) {
  parts <- NULL
  decision <- if (method == "approx") .joint_loo_decision(fit)$mean else {
    n <- nrow(fit$x)
    chunks <- split(seq_len(n), ceiling(seq_len(n) / max(1L, ceiling(n / 50))))
    parts <- .future_map(chunks, .joint_loo_worker(fit))
    structure(do.call(rbind, lapply(parts, `[[`, "mean")),
              dimnames = list(rownames(fit$x), fit$levels))
  }
  truth <- as.integer(fit$classes)
  own <- decision[cbind(seq_along(truth), truth)]
  others <- decision
  others[cbind(seq_along(truth), truth)] <- -Inf
  out <- list(margins = stats::setNames(own - apply(others, 1L, max), rownames(fit$x)),
              decision = decision)
  if (method == "exact") {
    out$iterations <- unlist(lapply(parts, `[[`, "iterations"))
    out$not_converged <- sum(unlist(lapply(parts, `[[`, "not_converged")))
  }
  out
}

.joint_loo_worker <- function(fit) {
  fit <- unclass(fit)[c("x", "kernel", "noise", "control", "inducing", "fitted.values",
                        "classes", "levels")]
  function(which) {
    y <- as.integer(fit$classes)
    K <- length(fit$levels)
    rows <- lapply(which, function(i) {
      refit <- .gpc_joint_bare(fit$x[-i, , drop = FALSE], y[-i], K, fit$kernel, fit$noise,
                               fit$control, fit$inducing, fit$fitted.values[-i, , drop = FALSE])
      list(mean = .joint_moments(refit, fit$x[i, , drop = FALSE])$mean,
           iterations = refit$convergence$iterations,
           converged = refit$convergence$converged)
    })
    list(mean = do.call(rbind, lapply(rows, `[[`, "mean")),
         iterations = vapply(rows, `[[`, integer(1), "iterations"),
         not_converged = sum(!vapply(rows, `[[`, logical(1), "converged")))
  }
}

.title.gpsvm_gpc_joint <- function(object) {
  "Gaussian process classifier (joint multinomial probit, variational)"
}
.model_label.gpsvm_gpc_joint <- function(object) "gpc (joint multinomial probit)"
.own_hyperparameters.gpsvm_gpc_joint <- function(object) c(noise = object$noise)
