#' What a fit chose, and why
#'
#' A default call of a gpsvm fitter makes a chain of choices before and
#' around the fit itself: the kernel and its width, an offset, the
#' hyperparameters the evidence searches, how the prior is represented
#' (the dense kernel matrix, a low-rank factor, the FITC approximation on
#' inducing inputs, a basis of candidate centres), whether the prediction
#' intervals integrate over `C` and whether they are calibrated by
#' cross-validation. Each fit records them in `fit$plan`, and `print()` and
#' `summary()` show them.
#'
#' Where a rule on the number of observations ([gpsvm_size_policy()], which
#' says what silences it) makes the fit differ from what the defaults compute
#' on small data, the fit says so in one message; refits made inside the
#' package (calibration, leave-one-out, interval coverage, [drop1()]) do not.
#'
#' @param object A gpsvm fit.
#' @return A data frame with one row per choice: `step` (what was chosen),
#'   `choice` (the outcome), `by` (what decided it, in words: the call, a
#'   default, the evidence, or a size rule with the data's size), `size_rule` (the
#'   name of the rule of [gpsvm_size_policy()] that decided it, else `NA`),
#'   `exact` (`FALSE` where that rule made the fit differ from the
#'   computation on small data), and what the step cost: `fits` (the model
#'   fits it ran, each evaluation of an evidence search one, wherever
#'   [future::plan()] sent them) and `seconds` (elapsed). The fit kept is
#'   part of the step that made it (the kernel where candidates were
#'   weighed, else the hyperparameters' search); a step weighed together
#'   with another (the offset with the kernel) or that ran nothing of its
#'   own has `NA`, and so does a fit at settings the call gave in full.
#'   `summary()` of a regression fit or of a [gpc()] fit lists the charged
#'   steps' costs in one line.
#' @seealso [gpsvm_size_policy()]
#' @examples
#' fit <- mfsvr(dist ~ speed, data = cars)
#' gpsvm_plan(fit)
#' @export
gpsvm_plan <- function(object) {
  .validate_fit(object)
  object$plan
}

# One row of a plan, as a list: the validator rebuilds the rows on every
# method call, where a one-row data frame apiece would be most of its time.
.plan_row <- function(step, choice, by, size_rule = NA_character_, exact = TRUE) {
  list(step = step, choice = choice, by = by, size_rule = size_rule, exact = exact)
}

# (a row whose fields are vectors is several rows, its other fields
# recycled, as data.frame() would)
.plan_frame <- function(rows) {
  columns <- names(.plan_row("", "", ""))
  sizes <- vapply(rows, function(row) max(lengths(row)), integer(1))
  plan <- as.data.frame(stats::setNames(lapply(columns, function(column) {
    unlist(Map(function(row, size) rep_len(row[[column]], size), rows, sizes), use.names = FALSE)
  }), columns), stringsAsFactors = FALSE)
  plan$fits <- plan$seconds <- rep(NA_real_, nrow(plan))
  plan[c(columns, "fits", "seconds")]
}

# "size rule NAME (n = 150 > 100)": the words of a rule's verdict.
.rule_words <- function(rule, n, beyond) {
  sprintf("size rule %s (n = %d %s %d)", rule, n, if (beyond) ">" else "<=", .size_rule(rule))
}

# The fit with its plan, and the message when a size rule made it differ
# from the computation on small data (`what`: "mfsvr():").
.with_plan <- function(fit, what) {
  fit$plan <- .with_costs(.plan_frame(.plan_rows(fit)))
  .plan_message(fit$plan, what, length(fit$classes %||% fit$y))
  .seal(fit)
}

# What each choice cost.  A fitter's default method opens a ledger
# (.open_ledger()), every model fit the core runs is counted
# (.count_fit()), and at each step of its selection the fitter charges the
# fits and seconds since its last charge to that step (.charge()); the
# fit it keeps is charged to the step that made it.  A step that runs the
# fitter's steps again on other rows (the calibration's refits) is charged
# whole (.charge_whole()): its refits' own charges are muted.  A fitter
# called inside another keeps a ledger of its own, and its cost falls to
# the outer one's next charge.  Fits on future's workers come back in
# .future_map()'s count.
.costs <- new.env(parent = emptyenv())
.costs$fits <- 0
.costs$ledgers <- list()

.count_fit <- function(count = 1) {
  .costs$fits <- .costs$fits + count
  invisible()
}

.cost_mark <- function() c(fits = .costs$fits, seconds = proc.time()[["elapsed"]])

.open_ledger <- function() {
  ledger <- new.env(parent = emptyenv())
  ledger$mark <- .cost_mark()
  ledger$steps <- list()
  ledger$muted <- FALSE
  .costs$ledgers <- c(list(ledger), .costs$ledgers)
  # closed when the fitter that opened it returns or fails
  do.call(on.exit, list(bquote(.close_ledger(.(ledger))), add = TRUE), envir = parent.frame())
  invisible(ledger)
}

.close_ledger <- function(ledger) {
  .costs$ledgers <- Filter(function(open) !identical(open, ledger), .costs$ledgers)
  # the prior mfsvr() kept for the fits of this call goes with it
  .forget_mfsvr_prior()
}

# The innermost open ledger, and the one charges go to: NULL where none is
# open, and for charges also while it is muted.
.current_ledger <- function() if (length(.costs$ledgers) > 0L) .costs$ledgers[[1L]]
.charging_ledger <- function() {
  ledger <- .current_ledger()
  if (!is.null(ledger) && !ledger$muted) ledger
}

# (NULL: what ran since the last charge is no step's: the fit at settings
# the call gave)
.charge <- function(step) {
  ledger <- .charging_ledger()
  if (is.null(ledger)) return(invisible())
  now <- .cost_mark()
  if (!is.null(step)) ledger$steps[[step]] <- (ledger$steps[[step]] %||% 0) + now - ledger$mark
  ledger$mark <- now
  invisible()
}

# The fit kept is charged to the step that made it: the kernel where
# candidates were weighed, the hyperparameters where a search ran, none
# where the call gave them all.
.charge_chosen <- function(fit, searched) {
  .charge(if (!is.null(fit$kernel_choice)) "kernel" else if (searched) "hyperparameters")
}

.charge_whole <- function(step, expr) {
  ledger <- .charging_ledger()
  if (is.null(ledger)) return(expr)
  ledger$muted <- TRUE
  on.exit(ledger$muted <- FALSE)
  value <- expr
  ledger$muted <- FALSE
  .charge(step)
  value
}

# A plan's fits and seconds (a fit made by a fitter inside this one, as
# at the rows of a search) charged to the open ledger's steps of the same
# names; the next charge gets what that fitter's plan did not hold.
.charge_plan <- function(plan) {
  ledger <- .charging_ledger()
  if (is.null(ledger) || is.null(plan$fits)) return(invisible())
  for (i in which(!is.na(plan$fits))) {
    spent <- c(fits = plan$fits[i], seconds = plan$seconds[i])
    ledger$steps[[plan$step[i]]] <- (ledger$steps[[plan$step[i]]] %||% 0) + spent
    ledger$mark <- ledger$mark + spent
  }
  invisible()
}

# The plan with the open ledger's charges: each step's fits and seconds on
# its first row, NA where nothing was charged to it.
.with_costs <- function(plan) {
  steps <- .current_ledger()$steps
  first <- !duplicated(plan$step)
  cost <- function(what) {
    vapply(seq_len(nrow(plan)), function(i) {
      spent <- steps[[plan$step[i]]]
      if (first[i] && !is.null(spent)) spent[[what]] else NA_real_
    }, numeric(1))
  }
  plan$fits <- cost("fits")
  plan$seconds <- cost("seconds")
  plan
}

.plan_message <- function(plan, what, n) {
  inexact <- plan[!plan$exact, , drop = FALSE]
  if (nrow(inexact) == 0L || isTRUE(getOption("gpsvm.quiet"))) return(invisible())
  text <- sprintf("%s %d observations: %s (size rules of ?gpsvm_size_policy; fit$plan)\n", what,
                  n, paste(sprintf("%s: %s", inexact$step, inexact$choice), collapse = "; "))
  message(structure(class = c("gpsvm_plan_message", "message", "condition"),
                    list(message = text, call = NULL)))
}

# The package's own refits (interval coverage, drop1()) would repeat the
# fit's message once each: muffled by class, which works on future's workers.
.quiet_refits <- function(expr) {
  withCallingHandlers(expr, gpsvm_plan_message = function(m) invokeRestart("muffleMessage"))
}

# The rows of a fit's plan, in the order its choices are made.
.plan_rows.gpsvm_regression <- function(fit) {
  n <- length(fit$y)
  c(list(.plan_kernel(fit, n)), if (!is.null(fit$width_choice)) list(.plan_widths(fit)),
    if (!is.null(fit$bias_variance)) list(.plan_offset(fit)),
    list(.plan_search(fit, n)),
    if (!is.null(fit$optimization$hyperprior)) list(.plan_posterior(fit, n)),
    list(.plan_prior(fit, n)), .plan_factor(fit, n),
    if (inherits(fit, c("gpsvm_rvm", "gpsvm_mfsvr", "gpsvm_svr"))) list(.plan_noise(fit)),
    if (inherits(fit, c("gpsvm_mfsvr", "gpsvm_svr"))) list(.plan_mixture(fit, n)),
    list(.plan_calibration(fit, n)), .plan_partitions(fit))
}

.plan_rows.gpsvm_classifier <- function(fit) {
  n <- length(fit$classes)
  c(.plan_multiclass(fit, n), list(.plan_kernel(fit, n), .plan_search(fit, n), .plan_prior(fit, n)),
    .plan_factor(fit, n), .plan_ep_start(fit, n), .plan_partitions(fit))
}

# gpc()'s model of three or more classes: the call's, its size rule's, or
# one-vs-rest kept because the joint model cannot carry the call's settings.
.plan_multiclass <- function(fit, n) {
  K <- length(fit$levels)
  joint <- inherits(fit, "gpsvm_gpc_joint")
  if (!inherits(fit, "gpsvm_gpc") || !(joint || .is_multiclass(fit))) return(NULL)
  choice <- if (joint) sprintf("one joint model of the %d classes", K) else
    sprintf("one model per class against the rest (%d models)", K)
  if (!isTRUE(fit$size_ruled_multiclass)) {
    by <- if (!is.null(fit$call$multiclass)) "the call" else
      if (!is.null(fit$partitions)) "data in partitions take one model per class" else
        "kept: the joint model needs method = \"tap\" and kappa = 0"
    return(list(.plan_row("multiclass", choice, by)))
  }
  limit <- .size_rule("ovr_max_nk")
  pool <- fit$joint_pool
  if (!is.null(pool)) {
    return(list(.plan_row("multiclass",
                          sprintf("%s, its probabilities pooled with a joint model's (weight %.3f)",
                                  choice, pool$weight),
                          sprintf("size rule ovr_max_nk (n x K = %d x %d between %d and %d)",
                                  n, K, limit %/% 2L, limit),
                          "ovr_max_nk", exact = FALSE)))
  }
  list(.plan_row("multiclass", choice,
                 sprintf("size rule ovr_max_nk (n x K = %d x %d %s %d)", n, K,
                         if (joint) ">=" else "<=", if (joint) limit else limit %/% 2L),
                 "ovr_max_nk", exact = !joint))
}

# The kernel: weighed among candidates by an evidence, or as the call or
# the data's width rule gave it.
.plan_kernel <- function(fit, n) {
  choice <- fit$kernel_choice
  if (is.null(choice)) {
    by <- if (.width_searched(fit)) "the call's family; its width by the search below" else
      if (!is.null(fit$kernel$sigma_rule)) "the data's width rule" else "the call"
    return(.plan_row("kernel", .kernel_words(fit$kernel, .class_model_widths(fit)), by))
  }
  words <- .kernel_choice_words(fit)
  if (!is.null(fit$choice_rows)) {  # (.weigh_on_dense_rows())
    return(.plan_row("kernel", sprintf("%s, weighed on %d evenly spaced rows", words$choice,
                                       as.integer(fit$choice_rows)),
                     paste(words$by, .rule_words("dense_max_n", n, TRUE), sep = "; "),
                     "dense_max_n", FALSE))
  }
  if (inherits(fit, "gpsvm_mfsvr") && is.null(fit$width_choice) && ncol(fit$x) >= 2L &&
      !.per_input_weighed(n, ncol(fit$x))) {
    rule <- if (n < .size_rule("per_input_min_n")) "per_input_min_n" else "per_input_max_n"
    return(.plan_row("kernel", words$choice, words$by, rule))
  }
  if (inherits(fit, "gpsvm_rvm") && n > .size_rule("kernel_choice_max_n")) {
    return(.plan_row("kernel", sprintf("%s, weighed on %d evenly spaced rows", words$choice,
                                       .size_rule("kernel_choice_max_n")),
                     paste(words$by, .rule_words("kernel_choice_max_n", n, TRUE), sep = "; "),
                     "kernel_choice_max_n", FALSE))
  }
  .plan_row("kernel", words$choice, words$by)
}

# One width (or the linear kernel) or a width per input, by the evidence.
.plan_widths <- function(fit) {
  words <- .width_choice_words(fit)
  n <- fit$choice_rows %||% length(fit$y)
  .plan_row("widths", words$choice, words$by,
            if (.per_input_weighed(n, ncol(fit$x))) "per_input_min_n" else NA_character_)
}

# Whether a search (any of a classifier's) chose the kernel's width.
.width_searched <- function(fit) {
  models <- if (inherits(fit, "gpsvm_classifier")) .binary_models(fit) else list(fit)
  any(vapply(models, function(m) any(grepl("^sigma", names(m$optimization$estimate))), logical(1)))
}

# The widths of one-vs-rest models' kernels where they differ (each class's
# search chose its own), else NULL.
.class_model_widths <- function(fit) {
  if (!inherits(fit, "gpsvm_classifier") || !.is_multiclass(fit)) return(NULL)
  sigma <- unlist(lapply(fit$models, function(m) m$kernel$sigma))
  if (length(sigma) == length(fit$models) && length(unique(sigma)) > 1L) sigma
}

# A kernel in a few words: "Gaussian (sigma = 2.26)"; with `widths`, the
# range of the widths the class models chose.
.kernel_words <- function(kernel, widths = NULL) {
  width <- if (!is.null(kernel$input_widths)) ", a width per input" else
    if (!is.null(widths)) sprintf(" (sigma per class model, %s to %s)",
                                  format(min(widths), digits = 4), format(max(widths), digits = 4)) else
    sprintf(" (sigma = %s)", format(kernel$sigma, digits = 4))
  switch(kernel$type,
         rbf = paste0("Gaussian", width),
         matern = sprintf("Matern %s%s", .nu_label(kernel$nu), width),
         poly = if (identical(kernel$degree, 1)) "linear" else
           sprintf("polynomial of degree %s", format(kernel$degree)),
         kernel$type)
}

.plan_offset <- function(fit) {
  words <- .bias_choice_words(fit)
  if (!is.null(words)) return(.plan_row("offset", words$choice, words$by))
  b <- fit$bias_variance
  .plan_row("offset", if (b > 0) sprintf("prior variance %s", format(b)) else "none",
            if (is.null(fit$call$bias)) "the default" else "the call")
}

# The hyperparameters: searched by the evidence (the model's own account of
# the search), kept because a size rule left the search out, or as given.
.plan_search <- function(fit, n) {
  if (!is.null(fit$skipped_search)) {
    return(.plan_row("hyperparameters", paste("the evidence search", fit$skipped_search),
                     "data in partitions", exact = FALSE))
  }
  lines <- .search_summary(fit)
  if (length(lines) == 0L && inherits(fit, "gpsvm_rvm")) {
    return(.plan_row("hyperparameters", "the basis functions' precisions and the noise variance",
                     "the evidence, the model's own updates"))
  }
  if (length(lines) == 0L) return(.plan_row("hyperparameters", "fixed", "the call and the defaults"))
  rows <- fit$optimization$search_rows %||% fit$models[[1L]]$optimization$search_rows
  inducing <- fit$optimization$search_inducing %||%
    fit$models[[1L]]$optimization$search_inducing
  if (!is.null(rows)) {
    rule <- if (inherits(fit, "gpsvm_gpc_joint")) "joint_search_max_n" else
      if (inherits(fit, "gpsvm_regression")) "search_max_n" else "gpc_search_max_n"
    # (a classifier's fit on every row starts from its search's sites)
    effort <- if (inherits(fit, "gpsvm_classifier") && is.null(fit$partitions)) .search_effort(fit)
    return(.plan_search_row(c(lines, effort),
                            sprintf("searched on %d evenly spaced rows", rows), rule, n))
  }
  if (!is.null(inducing) && is.null(fit$inducing) && is.null(fit$call$control)) {
    return(.plan_search_row(lines, sprintf("searched on the FITC evidence of %d inducing inputs",
                                           inducing), "search_dense_max_n", n))
  }
  .plan_search_row(lines)
}

# What a search on some rows cost and what the fit on every row added, in
# EP sweeps (a fit's time), over a one-vs-rest fit's classes; NULL: no sweeps.
.search_effort <- function(fit) {
  models <- if (!is.null(fit$optimization)) list(fit) else fit$models
  steps <- lapply(models, function(m) m$optimization$path$iterations)
  final <- lapply(models, function(m) m$convergence$iterations)
  if (!length(models) || any(vapply(c(steps, final), is.null, logical(1)))) return(NULL)
  sprintf(paste("%d evaluations of the evidence, %d EP sweeps; the fit on every row %d sweeps",
                "from the search's sites"),
          sum(lengths(steps)), sum(unlist(steps), na.rm = TRUE), sum(unlist(final)))
}

# A search's rows from the model's account of it ("C by evidence
# maximisation: converged ..."), what, then how; with `choice`, one row that
# names the size rule that shaped the search.
.plan_search_row <- function(lines, choice = NULL, rule = NA_character_, n = NULL) {
  parts <- regmatches(lines, regexpr(": ", lines), invert = TRUE)
  what <- vapply(parts, `[`, character(1), 1L)
  how <- vapply(parts, function(p) if (length(p) > 1L) p[2L] else "", character(1))
  if (is.null(choice)) return(.plan_row("hyperparameters", what, how))
  .plan_row("hyperparameters", choice,
            paste(c(paste(lines, collapse = "; "), .rule_words(rule, n, TRUE)), collapse = "; "),
            rule, FALSE)
}

.plan_prior <- function(fit, n) {
  if (inherits(fit, "gpsvm_rvm")) return(.plan_basis(fit, n))
  z <- fit$inducing %||% fit$models[[1L]]$inducing
  if (isTRUE(attr(z, "approximation"))) {
    return(.plan_row("prior", sprintf("FITC on %d inducing inputs", nrow(z)),
                     paste("the kernel matrix has no low rank;",
                           .rule_words("dense_max_n", n, TRUE)),
                     "dense_max_n", FALSE))
  }
  if (isTRUE(attr(z, "low_rank"))) {
    return(.plan_row("prior", sprintf("a low-rank factor of the kernel matrix (%d pivots)", nrow(z)),
                     sprintf("the factor is exact to rank_tol = %.3g", fit$control$rank_tol)))
  }
  if (!is.null(z)) {
    return(.plan_row("prior", sprintf("FITC on %d inducing inputs", nrow(z)), "the call"))
  }
  ctl <- fit$control
  .plan_row("prior", "the dense kernel matrix", if (!inherits(fit, "gpsvm_mfsvr")) "the default" else
    if (ctl$algorithm != "ep") "the paper's iteration" else if (ctl$rank_tol == 0) "rank_tol = 0" else
      sprintf("no factor of at most max_rank = %d pivots to rank_tol = %.3g", ctl$max_rank,
              ctl$rank_tol))
}

# A FITC fit's n x m factor: held in memory, or its rows beyond the budget
# of size rule inducing_factor_mb recomputed in every sweep (so exact).
.plan_factor <- function(fit, n) {
  model <- if (!is.null(fit$inducing)) fit else fit$models[[1L]]
  z <- model$inducing
  if (is.null(z)) return(list())
  mb <- 8 * n * nrow(z) / 2^20
  held <- model$inducing_held_rows
  budget <- .size_rule("inducing_factor_mb")
  choice <- if (is.null(held)) "the n x m cross-kernel factor held in memory" else
    sprintf("the cross-kernel factor's first %d rows held, the other %d recomputed in each sweep",
            held, n - held)
  if (is.null(held) && mb > budget) {  # the joint multi-class model holds it always
    return(list(.plan_row("factor", choice, "the model (it holds the factor whatever its size)")))
  }
  rule <- sprintf("size rule inducing_factor_mb (%s MB %s %d)", format(signif(mb, 3)),
                  if (is.null(held)) "<=" else ">", budget)
  list(.plan_row("factor", choice, rule, "inducing_factor_mb"))
}

# Where a two-class gpc()'s EP on inducing inputs started (ep_start_subset_n).
.plan_ep_start <- function(fit, n) {
  model <- if (!is.null(fit$inducing)) fit else fit$models[[1L]]
  if (is.null(model$inducing) || !identical(model$method, "tap") || !is.matrix(model$x)) {
    return(list())
  }
  rows <- model$ep_start_rows
  beyond <- n > .size_rule("ep_start_subset_n")
  choice <- if (!is.null(rows)) {
    sprintf("from the sites of the same fit on %d evenly spaced rows", rows)
  } else if (beyond) "from the sites it was given" else "from the prior"
  list(.plan_row("EP start", choice, .rule_words("ep_start_subset_n", n, beyond),
                 "ep_start_subset_n"))
}

# The relevance vector machines' candidate centres.
.plan_basis <- function(fit, n) {
  m <- length(fit$basis %||% seq_len(n))
  if (!is.null(fit$call$basis)) {
    return(.plan_row("basis", sprintf("%d candidate centres", m), "the call"))
  }
  distinct <- sum(!duplicated(fit$x))
  beyond <- distinct > .size_rule("basis_chosen")
  words <- sprintf("size rule basis_chosen (%d distinct inputs %s %d)", distinct,
                   if (beyond) ">" else "<=", .size_rule("basis_chosen"))
  if (beyond) {
    return(.plan_row("basis", sprintf("%d candidate centres, chosen greedily", m), words,
                     "basis_chosen", FALSE))
  }
  .plan_row("basis", sprintf("every distinct input (%d candidate centres)", m), words, "basis_chosen")
}

# The intervals' integration over C, where the evidence chose C, up to the size rule.
.plan_mixture <- function(fit, n) {
  mixture <- fit$C_mixture
  if (!is.null(mixture$posterior)) return(.plan_hyper_mixture(fit, n))
  if (!is.null(mixture)) {
    return(.plan_row("C mixture", sprintf("intervals integrate over %d values of C from %.3g to %.3g",
                                          length(mixture$C), min(mixture$C), max(mixture$C)),
                     sprintf("the evidence's weights, sd of log C %.2f; %s", mixture$log_C_sd,
                             .rule_words("C_mixture_max_n", n, FALSE)),
                     "C_mixture_max_n"))
  }
  if (identical(fit$noise_model$type, "varying")) {
    return(.plan_row("C mixture", "intervals at the fit's C and noise function",
                     "the mixture over C is the constant noise model's"))
  }
  chosen <- !is.null(fit$optimization) && "C" %in% names(fit$optimization$estimate)
  if (chosen && n > .size_rule("C_mixture_max_n")) {
    return(.plan_row("C mixture", "not integrated over C (intervals at the chosen C)",
                     .rule_words("C_mixture_max_n", n, TRUE), "C_mixture_max_n", FALSE))
  }
  .plan_row("C mixture", "intervals at the fit's C", if (chosen) "the evidence was flat or failed"
            else "C was not chosen by the evidence")
}

# The noise model: constant or varying with the inputs, given or by the evidence.
.plan_noise <- function(fit) {
  nm <- fit$noise_model
  if (is.null(nm)) {
    return(.plan_row("noise", "constant", if (inherits(fit, "gpsvm_srvm")) "the model" else
      "the default (noise = \"constant\")"))
  }
  bf <- .noise_log_bf(nm)
  amplitude <- if (!is.null(nm$amplitude)) {
    sprintf(", the mean's prior amplitude %.3g times the response's sd fitted with it", nm$amplitude)
  }
  width <- if (!is.null(nm$mean_width)) {
    sprintf("; the mean's width %.3g times the constant fit's, by the varying fit's evidence (log Bayes factor %.3g)",
            nm$mean_width[["factor"]], nm$mean_width[["log_bayes_factor"]])
  }
  .plan_row("noise", if (nm$type != "varying") "constant" else if (inherits(fit, "gpsvm_rvm"))
    "variance varying with the inputs" else
      paste0("scale (C and epsilon of the tube) varying with the inputs", amplitude, width),
    if (!is.null(nm$interpolates)) {
      sprintf(paste("the evidence (log Bayes factor %.3g, varying against constant) not trusted:",
                    "a fit nearly interpolates (%s)"), bf, nm$interpolates)
    } else if (nm$chosen == "auto") {
      sprintf("the evidence (log Bayes factor %.3g, varying against constant%s%s; varying needs > %g)",
              bf, if (!is.null(nm$basis_log_evidence)) " on the constant fit's relevance vectors" else "",
              .screened_words(nm), .noise_choice_log_bf)
    } else {
      sprintf("the call (noise = \"%s\"; log Bayes factor %.3g, varying against constant)",
              nm$chosen, bf)
    })
}

.plan_calibration <- function(fit, n) {
  cal <- fit$interval_calibration
  model <- .calibration_model(fit)
  rule <- c(rvm = "calibration_max_n_rvm", srvm = "calibration_max_n_rvm",
            mfsvr = "calibration_max_n_ep", svr = "calibration_max_n_ep")[[model]]
  by_default <- is.null(fit$call$calibration_folds)
  if (!is.null(cal)) {
    s <- .fit_calibration_scale(cal)
    what <- if (s == 1) "the model's own held the left-out targets: not widened" else
      sprintf("widened by %s%% on the normal-score scale; at 95%%, the model's own at %s%%",
              format(100 * (1 / s - 1), digits = 2), format(100 * .calibrated_level(fit, 0.95), digits = 4))
    if (!is.null(cal$rows)) {  # (.calibration_subset())
      faded <- if (cal$weight < 1) {
        sprintf("; the widening weighted by %d/n (a fit on all rows adapts less than the refits)",
                length(cal$rows))
      } else ""
      return(.plan_row("calibration",
                       sprintf("intervals calibrated by %d-fold cross-validation on %d evenly spaced rows (%s)",
                               cal$folds, length(cal$rows), what),
                       paste0(.rule_words(rule, n, TRUE), faded), rule, FALSE))
    }
    return(.plan_row("calibration", sprintf("intervals calibrated by %d-fold cross-validation (%s)",
                                            cal$folds, what),
                     if (by_default) .rule_words(rule, n, FALSE) else "the call",
                     if (by_default) rule else NA_character_))
  }
  own <- function(by, ...) .plan_row("calibration", "the model's own intervals", by, ...)
  declined <- fit$calibration_declined
  if (!is.null(declined)) {
    return(own(sprintf(paste("the %d-fold calibration's cross-validated log score per row",
                             "was %.3g below the model's own (noise varying with the inputs)"),
                       declined$folds, abs(declined$log_score_gain))))
  }
  if (!by_default) return(own("the call"))
  if (!is.null(fit$partitions)) return(own("data in partitions (no refits on folds)"))
  if (n < .size_rule("calibration_min_n")) {
    return(own(sprintf("size rule calibration_min_n (n = %d < %d)", n,
                       .size_rule("calibration_min_n")), "calibration_min_n"))
  }
  own("a cross-validation refit failed or left no noise level")
}

# The validator's check of fit$plan: the columns, and the steps the fit's
# records give (its words depend on the size rules in force at the fit).
.plan_check <- function(v, object) {
  columns <- c(names(.plan_row("", "", "")), "fits", "seconds")
  # (a fit saved before plans had costs keeps working)
  if (!is.data.frame(v) || !(identical(names(v), columns) || identical(names(v), columns[1:5])) ||
      nrow(v) == 0L) {
    return(sprintf("must be a data frame with the columns %s", paste(columns, collapse = ", ")))
  }
  if (!is.logical(v$exact) || anyNA(v$exact) ||
      !all(vapply(v[columns[1:4]], is.character, logical(1))) || anyNA(v$step)) {
    return("has columns of the wrong type")
  }
  costs <- c(v$fits, v$seconds)
  if ((!is.null(v$fits) && !is.numeric(costs)) || any(is.nan(costs)) ||
      any(costs < 0 | is.infinite(costs), na.rm = TRUE)) {
    return("must have fits and seconds that are numbers >= 0 (or NA)")
  }
  steps <- tryCatch(unlist(lapply(.plan_rows(object), function(row) {
    rep_len(row$step, max(lengths(row)))
  })), error = function(e) NULL)
  if (!is.null(steps) && !identical(v$step, steps)) {
    return(sprintf("must have the steps %s, which the fit's records give",
                   paste(steps, collapse = ", ")))
  }
  NULL
}

# print()'s and summary()'s account of the plan.
.plan_lines <- function(plan) {
  c("Plan:", sprintf("  %s: %s; %s", plan$step, plan$choice, plan$by))
}

# summary()'s line of what the steps cost (NULL where none was charged).
.plan_cost_line <- function(plan) {
  charged <- !is.na(plan$fits)
  if (!any(charged)) return(NULL)
  sprintf("Cost of the choices: %s", paste(sprintf(
    "%s %s (%s s)", plan$step[charged],
    ifelse(plan$fits[charged] == 1, "1 fit", sprintf("%d fits", as.integer(plan$fits[charged]))),
    format(round(plan$seconds[charged], 2), nsmall = 2, trim = TRUE)), collapse = ", "))
}

#' Fit a model at given settings, choosing nothing
#'
#' A default call such as `mfsvr(x, y)` is two steps: a selection step that
#' chooses the kernel, the offset, the hyperparameters, the prior's
#' representation and the intervals' calibration (recorded in `fit$plan`,
#' [gpsvm_plan()]), and the fit at what it chose. `gpsvm_settings()` gives
#' what a fit's selection step chose; `gpsvm_fit()` is the fit alone: a
#' matrix and a response in, a fit out, at settings given in full. It
#' searches nothing, weighs no candidates, calibrates nothing and keeps the
#' given prior representation whatever the data's size (the rules of
#' [gpsvm_size_policy()] do not apply); every row of its plan says `"given"`.
#' So `gpsvm_fit(x, y, gpsvm_settings(fit))` refits a default fit's model
#' without its choices: the same fitted values and evidence, up to the
#' solver's tolerance (a search's fit ends at a warm-started point), and
#' the model's own intervals (no mixture over `C`, no calibration).
#'
#' @param x A numeric matrix of inputs (a vector is one input).
#' @param y The response: numeric for the regression models, a factor (or
#'   labels) for `"gpc"` and `"svc"`.
#' @param settings A list with `model` (the fitter's name) and every setting
#'   of that model, each as the model's default method takes it; a setting
#'   left out is an error, not a default:
#'   * `"mfsvr"`: `C`, `epsilon`, `kernel` (with its width), `bias` (the
#'     offset's prior variance, 0 for none), `prior`, `scale`, `control`;
#'   * `"svr"`: `C`, `epsilon`, `kernel`, `bias` (a variance, or `TRUE` for
#'     a free threshold), `scale`, `control`;
#'   * `"gpc"`: `kernel`, `noise`, `kappa`, `bias`, `method`, `multiclass`,
#'     `prior`, `scale`, `control`;
#'   * `"rvm"`: `kernel`, `basis` (the count of candidate centres),
#'     `noise` (`"constant"` or `"varying"`), `scale`, `control`;
#'   * `"srvm"`: `kernel`, `penalty`, `basis`, `scale`, `control`;
#'   * `"svc"`: `kernel`, `C`, `noise`, `bias`, `scale`, `control`.
#'
#'   `prior` is `"dense"` (the kernel matrix), `"low_rank"` (the
#'   pivoted Cholesky factor to `control$rank_tol`, an error where the
#'   kernel matrix has none) or a matrix of inducing inputs in the data's
#'   units (FITC on them).
#'   The kernel and the hyperparameters refer to the scaled data when
#'   `scale` is `TRUE` (see [mfsvr()]).
#' @param object A fit of one of these models (a classifier of more than
#'   two classes whose binary models share their settings).
#' @return `gpsvm_fit()`: a fit of the model's class. `gpsvm_settings()`: the
#'   list `gpsvm_fit()` takes. (An `mfsvr()` or `svr()` fit with
#'   `noise = "varying"` has no such settings: its noise function is chosen
#'   with the rest, and `gpsvm_settings()` says so with an error.)
#' @seealso [gpsvm_plan()] for what the selection step chose and why.
#' @examples
#' fit <- mfsvr(dist ~ speed, data = cars)
#' s <- gpsvm_settings(fit)
#' str(s[c("C", "epsilon", "bias", "prior")])
#' bare <- gpsvm_fit(cars$speed, cars$dist, s)
#' gpsvm_plan(bare)
#' range(fitted(bare) - fitted(fit))
#' # settings by hand: no search, no kernel choice, no calibration
#' gpsvm_fit(cars$speed, cars$dist, list(model = "svr", C = 2, epsilon = 0.1,
#'   kernel = rbf_kernel(0.5), bias = 0, scale = TRUE, control = svr_control()))
#' @export
gpsvm_fit <- function(x, y, settings) {
  if (!is.list(settings) || !is.character(settings$model) || length(settings$model) != 1L ||
      !settings$model %in% names(.given_settings)) {
    .stop(sprintf("'settings' must be a list whose 'model' is one of %s",
                  paste0("\"", names(.given_settings), "\"", collapse = ", ")))
  }
  model <- settings$model
  absent <- setdiff(.given_settings[[model]], names(settings))
  if (length(absent) > 0L) {
    .stop(sprintf("'settings' for %s() lacks %s: gpsvm_fit() chooses nothing, so every setting is given",
                  model, paste0("'", absent, "'", collapse = ", ")))
  }
  kernel <- settings$kernel
  .check_kernel(kernel, resolved = TRUE)
  # a width given is kept: the rule's name would make it a candidate to weigh
  kernel[c("sigma_rule", "candidate", "constant")] <- NULL
  args <- c(list(x, y, kernel = kernel),
            settings[setdiff(.given_settings[[model]], c("kernel", "prior", "control"))],
            .given_prior(model, settings$prior, settings$control), .given_pins(model))
  # the representation is the one given: no size rule may switch it to FITC
  op <- options(gpsvm.size_policy = utils::modifyList(as.list(getOption("gpsvm.size_policy")),
                                                      list(dense_max_n = .Machine$integer.max)))
  on.exit(options(op), add = TRUE)
  fit <- do.call(get(paste0(model, ".default"), envir = asNamespace("gpsvm")), args)
  .check_given_prior(fit, settings$prior)
  fit$plan$by <- "given"
  fit$plan$size_rule <- NA_character_
  fit$plan$exact <- TRUE
  fit$call <- match.call()
  .seal(fit)
}

# Every setting of a model's fit, as its default method names them, and the
# arguments that keep its default method from choosing (svc() has no search,
# gpc() no calibration).
.given_settings <- list(
  mfsvr = c("C", "epsilon", "kernel", "bias", "prior", "scale", "control"),
  svr = c("C", "epsilon", "kernel", "bias", "scale", "control"),
  gpc = c("kernel", "noise", "kappa", "bias", "method", "multiclass", "prior", "scale", "control"),
  rvm = c("kernel", "basis", "noise", "scale", "control"),
  srvm = c("kernel", "penalty", "basis", "scale", "control"),
  svc = c("kernel", "C", "noise", "bias", "scale", "control"))
.given_pins <- function(model) {
  list(optimize = FALSE, calibration_folds = FALSE)[c(model != "svc", !model %in% c("gpc", "svc"))]
}

# The prior as the default method's arguments: inducing inputs, or a
# rank_tol that keeps the dense matrix (0) or the factor's (the model's).
.given_prior <- function(model, prior, control) {
  if (!model %in% c("mfsvr", "gpc")) return(list(control = control))
  if (is.matrix(prior) || is.data.frame(prior)) return(list(control = control, inducing = prior))
  prior <- .match_choice(prior, c("dense", "low_rank"), "settings$prior")
  if (prior == "dense") control$rank_tol <- 0
  list(control = control)
}

# A low-rank factor asked for and not found is an error, not a dense fit.
.check_given_prior <- function(fit, prior) {
  one <- fit$models[[1L]] %||% fit
  if (identical(prior, "low_rank") && !isTRUE(attr(one$inducing, "low_rank"))) {
    .stop(sprintf(paste("'settings$prior' is \"low_rank\", but the kernel matrix has no factor to",
                        "rank_tol = %.3g in the pivots its rules allow (max_rank, ?gpsvm_size_policy): give prior =",
                        "\"dense\" or inducing inputs"), one$control$rank_tol))
  }
}

#' @rdname gpsvm_fit
#' @export
gpsvm_settings <- function(object) {
  .validate_fit(object)
  model <- sub("^gpsvm_", "", intersect(class(object), paste0("gpsvm_", names(.given_settings)))[1L])
  if (is.na(model)) {
    .stop(sprintf("gpsvm_settings() takes a fit of %s",
                  paste0(names(.given_settings), "()", collapse = ", ")))
  }
  if (model %in% c("mfsvr", "svr") && identical(object$noise_model$type, "varying")) {
    # (its noise function is chosen with the rest: a bare fit chooses nothing)
    .stop(sprintf(paste("gpsvm_settings(): this %s() fit has noise that varies with the inputs,",
                        "which gpsvm_fit() does not fit; refit it with %s(noise = \"varying\")"),
                  model, model))
  }
  if (!is.null(object$joint_pool)) {
    .stop(paste("gpsvm_settings(): this gpc() fit pools one-vs-rest models with a joint model",
                "(size rule ovr_max_nk), which gpsvm_fit() does not fit; refit with",
                "multiclass = \"ovr\" or \"joint\", or take the joint model's settings,",
                "gpsvm_settings(fit$joint_pool$fit)"))
  }
  one <- if (model %in% c("gpc", "svc")) .shared_binary_model(object) else object
  kernel <- one$kernel
  kernel[c("sigma_rule", "candidate", "constant")] <- NULL
  prior <- if (isTRUE(attr(one$inducing, "low_rank"))) "low_rank" else
    if (!is.null(one$inducing)) .original_inputs(list(x = one$inducing, scaling = object$scaling)) else
      "dense"
  settings <- list(model = model, C = one$C, epsilon = one$epsilon, kernel = kernel,
                   bias = if (isTRUE(object$bias)) TRUE else object$bias_variance %||% 0,
                   noise = if (model == "rvm") object$noise_model$type %||% "constant" else one$noise,
                   kappa = one$kappa, method = one$method, penalty = one$penalty,
                   basis = length(one$basis %||% one$y),
                   multiclass = if (inherits(object, "gpsvm_gpc_joint")) "joint" else "ovr",
                   prior = prior, scale = !is.null(object$scaling %||% object$response_scaling),
                   control = one$control)
  c(settings["model"], settings[.given_settings[[model]]])
}

# The model of a classifier whose binary models share their settings.
.shared_binary_model <- function(object) {
  models <- if (is.null(object$models)) list(object) else object$models
  keys <- c("kernel", "C", "noise", "kappa", "method", "inducing")
  if (length(unique(lapply(models, `[`, keys))) > 1L) {
    .stop(paste("gpsvm_settings(): the classes' models have different settings (their searches",
                "chose apart); fit each class's model with gpsvm_fit() on its own labels"))
  }
  models[[1L]]
}
