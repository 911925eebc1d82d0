# Hyperparameters of mfsvr() by maximising the EP evidence, on the log scale.
# At the EP fixed point the sites are stationary, so the gradient of log Z_EP
# is the explicit one, which the core computes with the fit.

# The log-scale parameters searched: those asked for in 'which' that exist
# (epsilon = 0 stays 0; only the Gaussian and Matern kernels have a width).
.mfsvr_hyper_names <- function(epsilon, kernel, which = c("C", "epsilon", "sigma")) {
  c(if ("C" %in% which) "log_C", if (epsilon > 0 && "epsilon" %in% which) "log_epsilon",
    if (.has_width(kernel) && "sigma" %in% which) "log_sigma")
}

# optimize = TRUE / FALSE, or which of "C", "epsilon", "sigma" to choose.
.mfsvr_which_hyper <- function(optimize, epsilon, kernel) {
  which <- .optimize_which(optimize, c("C", "epsilon", "sigma"))
  if (length(which) > 0L && length(.mfsvr_hyper_names(epsilon, kernel, which)) == 0L) {
    .stop(sprintf("'optimize' = %s leaves nothing to optimise (epsilon = 0 stays 0; only rbf_kernel() and matern_kernel() have a width)",
                  paste0("\"", which, "\"", collapse = ", ")))
  }
  which
}

# The search's ranges, set by the data's scales so that it works in any units
# (?mfsvr); `recorded` (a fit's $optimization) makes the search that fit's,
# whatever the rows.
.mfsvr_search_spec <- function(x, y, C, epsilon, kernel, which, noise_free_ok = FALSE,
                               hyperprior = FALSE, recorded = NULL) {
  names <- .mfsvr_hyper_names(epsilon, kernel, which)
  widths <- if ("log_sigma" %in% names) .input_widths(kernel)
  if (!is.null(recorded)) {
    ranges <- log(cbind(recorded$start, recorded$lower, recorded$upper))
    rownames(ranges) <- paste0("log_", names(recorded$start))
    prior <- recorded$hyperprior
  } else {
    s <- .response_scaling(y, TRUE)$scale
    w <- .data_driven_width(x)
    sigma <- if (.has_width(kernel)) kernel$sigma else 1
    ranges <- rbind(log_C = c(log(C), log(0.01 / s), log(1e4 / s)),
                    log_epsilon = c(log(epsilon), log(1e-4 * s), log(3 * s)),
                    log_sigma = c(log(sigma), log(w / 100), log(100 * w)))[names, , drop = FALSE]
    ranges <- .per_input_ranges(ranges, kernel)
    prior <- if (hyperprior) .mfsvr_hyperprior(ranges, s)
  }
  limit <- paste("the data favour the limit C = Inf, uniform noise on [-epsilon, epsilon]",
                 "(a likelihood that is flat inside the tube and zero outside)")
  # (the evidence can rise ever more slowly as C grows with epsilon adjusting)
  advice <- function(record, fit) {
    if (!record$convergence$converged) return(NULL)
    g <- record$gradient[["log_C"]] %||% 0
    est <- record$estimate
    eps <- if ("epsilon" %in% names(est)) est[["epsilon"]] else epsilon
    if (g > 0 && est[["C"]] * eps > 100) {
      sprintf("stopped on a slow rise: the evidence still rises as C grows (C = %.4g, C epsilon = %.3g): %s",
              est[["C"]], est[["C"]] * eps, limit)
    }
  }
  # the default search's (noise_free_ok) limit is an answer, not a warning
  slow_rise <- if ("log_C" %in% names && !noise_free_ok) advice else function(record, fit) NULL
  .search_spec(start = ranges[, 1], lower = ranges[, 2], upper = ranges[, 3], natural = exp,
               natural_names = sub("^log_", "", rownames(ranges)),
               benign = c("epsilon:lower", if (noise_free_ok) "C:upper", .per_input_benign(ranges)),
               notes = list(`C:upper` = paste("the evidence still rises as C grows:", limit)),
               advice = if (is.null(widths)) slow_rise else function(record, fit) {
                 c(slow_rise(record, fit), .per_input_overfit_advice(fit, length(widths)))
               },
               prior = if (!is.null(prior)) .hyperprior(prior, attr(prior, "coef")))
}

# The hyperprior of mfsvr()'s searches on standardised data (?mfsvr, "The
# hyperprior"): .hyperprior()'s record of normal terms on the search scale.
.mfsvr_hyperprior_sd <- c(log_C = 1.5, shape = 0.5, log_sigma = 1)
.mfsvr_hyperprior <- function(ranges, s) {
  names <- rownames(ranges)
  sd <- .mfsvr_hyperprior_sd
  unit <- function(k) stats::setNames(as.numeric(names == k), names)
  rows <- list()
  add <- function(term, coef, mean, sd) {
    rows[[length(rows) + 1L]] <<- list(term = term, coef = coef, mean = mean, sd = sd)
  }
  if ("log_C" %in% names) add("log_C", unit("log_C"), log(.mfsvr_default_C / s), sd[["log_C"]])
  if ("log_epsilon" %in% names) {
    if ("log_C" %in% names) {
      add("log_C + log_epsilon", unit("log_C") + unit("log_epsilon"),
          log(.mfsvr_default_C * 0.1), sd[["shape"]])
    } else {
      add("log_epsilon", unit("log_epsilon"), log(0.1 * s), sd[["shape"]])
    }
  }
  for (k in grep("^log_sigma", names, value = TRUE)) {
    add(k, unit(k), ranges[k, 1], sd[["log_sigma"]])
  }
  coef <- do.call(rbind, lapply(rows, `[[`, "coef"))
  dimnames(coef) <- list(vapply(rows, `[[`, "", "term"), names)
  terms <- data.frame(term = rownames(coef), mean = vapply(rows, `[[`, 0, "mean"),
                      sd = vapply(rows, `[[`, 0, "sd"), stringsAsFactors = FALSE)
  structure(terms, coef = coef)
}

# With many columns for the rows a width per input can fit the noise; real
# data are seldom that exact, so a noise sd below 1% of the response's is reported.
.per_input_overfit_advice <- function(fit, n_widths) {
  noise_sd <- sqrt(fit$noise_variance)
  ratio <- noise_sd / stats::sd(fit$y)
  if (!isTRUE(ratio < 0.01)) return(NULL)
  sprintf(paste("chose widths that make the fit nearly interpolate: a noise sd of %.2g%% of the",
                "response's, with %d widths for %d observations. The evidence of a width per",
                "input can overfit when there are many inputs for the rows; compare held-out",
                "errors with rbf_kernel() (one width)"),
          100 * ratio, n_widths, length(fit$y))
}

# Hyperparameters by maximising the EP evidence (.gradient_search()).  Each
# point is an EP fit warm-started from the nearest usable one, at the
# tolerance the search asks for (.search_accuracy()); with the kernel fixed it
# starts from that fit's marginals without refactorising.  Later points get
# three times the sweeps the start needed (at least 60): near a usable point
# EP needs far fewer, and points that need more lie towards degenerate limits.
.mfsvr_optimize <- function(x, y, C, epsilon, kernel, control,
                            which = c("C", "epsilon", "sigma"), inducing = NULL,
                            noise_free_ok = FALSE, settings, recorded = NULL) {
  kernel <- .resolve_kernel(kernel, x)
  per_input <- !is.null(kernel$input_widths) && "sigma" %in% which
  spec <- .mfsvr_search_spec(x, y, C, epsilon, kernel, which, noise_free_ok,
                             hyperprior = isTRUE(settings$hyperprior), recorded = recorded)
  # entries of fit$gradient (a width per input has its own, after them)
  keep <- c("log_C", "log_epsilon", "log_sigma") %in% spec$names
  width <- any(grepl("^log_sigma", spec$names))
  search_control <- utils::modifyList(control, list(algorithm = "ep", per_input_gradient = per_input,
                                                    width_gradient = width))
  cap <- control$max_iter
  at <- function(par) {
    h <- as.list(spec$natural(par))
    out <- list(C = h[["C"]] %||% C, epsilon = h[["epsilon"]] %||% epsilon, x = x,
                kernel = if (!is.null(h[["sigma"]])) .with_width(kernel, h[["sigma"]]) else kernel,
                inducing = inducing)
    if (per_input) out[c("kernel", "x", "inducing")] <- .per_input_point(h, kernel, x, inducing)
    out
  }
  evaluate <- function(par, first, warm, accuracy) {
    ctl <- search_control
    ctl$tol <- max(control$tol, accuracy %||% 1e-4)
    if (!first) ctl$max_iter <- min(control$max_iter, cap)
    h <- at(par)
    fit <- tryCatch(.mfsvr_fit(h$x, y, h$C, h$epsilon, h$kernel, ctl, gradient = TRUE,
                               warn = FALSE, start = warm, inducing = h$inducing,
                               keep_marginals = !width),
                    error = function(e) e)
    if (inherits(fit, "error")) return(.search_point(fit))
    if (first) cap <<- max(60L, 3L * fit$convergence$iterations)
    .search_point(fit, fit$log_evidence, c(fit$gradient[keep], fit$per_input_gradient),
                  fit$convergence$converged, fit$convergence$iterations, "EP")
  }
  outcome <- .gradient_search(spec, evaluate, n = length(y), tol = settings$tol,
                              max_iter = settings$max_iter)
  h <- at(outcome$best$par %||% spec$start)
  # (automatic inducing inputs are the pivots at the starting width)
  if (isTRUE(attr(inducing, "approximation"))) {
    h$inducing <- .mfsvr_approximation(h$x, h$kernel, control)
  }
  final_control <- control
  final_control$width_gradient <- width
  fit <- .mfsvr_fit(h$x, y, h$C, h$epsilon, h$kernel, final_control, gradient = TRUE,
                    start = outcome$best$fit, inducing = h$inducing)
  fit$control <- .resolve_control(control, length(y))  # (without the search's own settings)
  .finish_search(fit, outcome, spec, "mfsvr():")
}

# mfsvr()'s default search for C: one EP run that moves C by a Newton step,
# then secant steps, on the evidence's gradient while it converges (the
# core's CSearch), in the range and to the stopping rule of the other
# searches; a move of C is its iteration.  Where EP ends unconverged or the
# run fails, the search of separate fits (.mfsvr_optimize()) takes over.
.mfsvr_choose_C <- function(x, y, C, epsilon, kernel, control, inducing = NULL, settings,
                            start = NULL) {
  kernel <- .resolve_kernel(kernel, x)
  spec <- .mfsvr_search_spec(x, y, C, epsilon, kernel, "C", noise_free_ok = TRUE)
  tol <- settings$tol
  ctl <- control
  ctl$width_gradient <- FALSE
  ctl$tol <- max(control$tol, .C_search_ep_tol(tol))
  ctl$C_search <- list(log_C_lower = spec$lower[["log_C"]], log_C_upper = spec$upper[["log_C"]],
                       tol = tol, max_moves = settings$max_iter)
  fit <- tryCatch(.mfsvr_fit(x, y, C, epsilon, kernel, ctl, gradient = TRUE, warn = FALSE,
                             inducing = inducing, start = start),
                  error = function(e) e)
  record <- if (!inherits(fit, "error")) fit$C_search
  if (is.null(record) || !fit$convergence$converged) {
    return(.mfsvr_optimize(x, y, C, epsilon, kernel, control, "C", inducing = inducing,
                           noise_free_ok = TRUE, settings = settings))
  }
  capped <- !(record$settled || record$at_lower || record$at_upper)
  reason <- if (capped) sprintf("reached max_iter = %d moves of C", settings$max_iter)
  fit$C_search <- NULL
  fit$control <- .resolve_control(control, length(y))  # (without the search's own settings)
  .finish_search(fit, .C_search_outcome(record, spec, fit, tol, reason), spec, "mfsvr():")
}

# The fit_at(kernel, previous) of .fit_with_bias() for mfsvr()'s model: one
# fit, the default search for C (`automatic`) or the search of `which`, from
# `previous`'s C, epsilon and (where it has them for these rows) EP sites.
.mfsvr_fit_at <- function(x, y, C, epsilon, control, which, automatic, inducing, settings) {
  function(kernel, previous) {
    start <- NULL
    if (!is.null(previous)) {
      C <- previous$C
      epsilon <- previous$epsilon
      if (!is.null(previous$site_precision)) start <- previous[c("site_precision", "site_nu")]
      if (automatic && identical(kernel$candidate, "linear") && !is.null(previous$kernel) &&
          !identical(previous$kernel$candidate, "linear")) {
        C <- .linear_start_C(x, y, C)
      }
    }
    if (length(which) == 0L) {
      return(.mfsvr_fit(x, y, C, epsilon, kernel, control, inducing = inducing, start = start))
    }
    # (the one-run search for C has no hyperprior)
    if (automatic && !isTRUE(settings$hyperprior)) {
      .mfsvr_choose_C(x, y, C, epsilon, kernel, control, inducing = inducing, settings = settings,
                      start = start)
    } else {
      .mfsvr_optimize(x, y, C, epsilon, kernel, control, which, inducing = inducing,
                      noise_free_ok = automatic, settings = settings,
                      recorded = previous[["search_record"]])
    }
  }
}

# The default search's start on the linear candidate kernel: the C whose
# noise has the spread of least squares' residual (the Gaussian kernel's C is
# too large for it), within the search's range; `fallback` without a residual.
.linear_start_C <- function(x, y, fallback) {
  fit <- stats::lm.fit(cbind(1, x), y)
  rms <- sqrt(mean(fit$residuals^2))
  s <- .response_scaling(y, TRUE)$scale
  if (fit$rank >= length(y) - 1L || !(rms > 1e-4 * s)) return(fallback)
  min(max(sqrt(2) / rms, 0.01 / s), 1e4 / s)
}

# The EP tolerance of the default search for C: a thousandth of its own (C is
# only known to that, and finer sweeps would change nothing the fit resolves).
.C_search_ep_tol <- function(search_tol) search_tol * 1e-3

# The record of .mfsvr_choose_C() as .search_outcome() makes it.
.C_search_outcome <- function(record, spec, fit, tol, reason = NULL) {
  k <- length(record$C)
  state <- new.env(parent = emptyenv())
  state$rows <- lapply(seq_len(k), function(i) {
    list(par = c(log_C = log(record$C[i])), log_evidence = record$log_evidence[i],
         gradient = record$gradient[i], accuracy = record$residual[i],
         iterations = as.integer(record$sweeps[i] - if (i > 1L) record$sweeps[i - 1L] else 0L),
         status = "ok")
  })
  best <- c(state$rows[[k]], list(ok = TRUE))
  .search_outcome(state, spec, best, length(fit$y), tol,
                  "one EP run, C by a Newton step, then secant steps, on the evidence's gradient",
                  reason = reason)
}
