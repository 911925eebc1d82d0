# The Gaussian kernel's width of rvm() and srvm() by their evidence: the log
# marginal likelihood at the weights' precisions (and penalty and noise) the
# fit learns, as a function of the width alone.  The fast RVM algorithm and
# the smooth RVM's updates give no gradient in the width, and the evidence
# can have several local maxima and small jumps where basis functions enter
# or leave, so the search is a grid over log sigma refined by golden
# sections (.width_search()).

# The fit from `fit_at(kernel, control)` (the model's own fit), with the
# width chosen by the evidence when `optimize` is TRUE (or "sigma"): log
# sigma on 9 grid points from w / 4 to 4 w (w the data-driven width of the
# inputs), then golden sections to 5% (0.05 in log sigma; finer steps meet the
# evidence's small jumps).  The start gets
# the full iteration budget; the other points get three times what the
# start needed (at least 1000): narrow kernels make these models keep
# hundreds of basis functions and cost seconds per fit, and a point that
# needs more counts as failed.
.rvm_optimize <- function(x, kernel, optimize, control, fit_at, what, settings) {
  if (length(.optimize_which(optimize, "sigma")) == 0L) return(fit_at(kernel, control))
  x <- .as_input_matrix(x, "x")
  .check_kernel(kernel)
  if (!.has_width(kernel)) {
    .stop("'optimize' chooses the width of rbf_kernel() or matern_kernel(); this kernel has none")
  }
  if (!is.null(kernel$input_widths)) {
    .stop(paste("'optimize' searches one kernel width here; a width per input is searched by",
                "mfsvr(optimize = TRUE): give rbf_kernel(per_input = TRUE) fixed widths, or",
                "use one width"))
  }
  kernel <- .resolve_kernel(kernel, x)
  w <- .data_driven_width(x)
  spec <- .search_spec(start = c(log_sigma = log(kernel$sigma)), lower = c(log_sigma = log(w / 4)),
                       upper = c(log_sigma = log(4 * w)), natural = exp, natural_names = "sigma",
                       advice = .dense_answer_advice)
  cap <- control$max_iter
  evaluate <- function(par, first, warm, accuracy) {  # (the width search asks none)
    ctl <- control
    if (!first && !is.null(cap)) ctl$max_iter <- min(control$max_iter, cap)
    # a fit that warns (did not converge) counts as a failed point below
    fit <- tryCatch(suppressWarnings(fit_at(.with_width(kernel, exp(par[[1]])), ctl)),
                    error = function(e) e)
    if (inherits(fit, "error")) return(.search_point(fit))
    if (first) cap <<- max(1000L, 3L * fit$convergence$iterations)
    .search_point(fit, fit$log_evidence, NULL, fit$convergence$converged,
                  fit$convergence$iterations, what)
  }
  outcome <- .width_search(spec, evaluate, grid = settings$grid, tol = settings$tol,
                           max_iter = settings$max_iter)
  fit <- outcome$best$fit %||% fit_at(kernel, control)
  fit$control <- control
  .finish_search(fit, outcome, spec, paste0(what, ":"), log_evidence = fit$log_evidence)
}

# The evidence of one precision per weight does not penalise a narrow kernel
# that gives most observations a basis function of its own: each such weight
# takes the point's deviation and the noise variance falls towards zero, so
# the evidence keeps rising as the width shrinks (on rounded or tied targets
# above all).  Such a fit interpolates, and its intervals are far too narrow
# (?rvm, "Performance").  A fit with more effective parameters than half the
# observations is no longer the sparse model the evidence was meant to
# choose, so the user hears of it.
.dense_answer_advice <- function(record, fit) {
  facts <- .interpolation_facts(fit)
  if (is.null(facts)) return(NULL)
  sprintf(paste("prefers a width at which the fit nearly interpolates: at it (sigma = %.3g)",
                "%s, so its prediction intervals are too narrow. The evidence of",
                "these models rises as the width shrinks; prefer the data-driven width",
                "(optimize = FALSE) or mfsvr(optimize = TRUE)."),
          fit$kernel$sigma, facts)
}

# "k of n observations are relevance vectors (p effective parameters) and
# the noise sd is r times the response's" for a fit whose effective number
# of parameters exceeds half the observations, else NULL (see above).  The
# count of relevance vectors alone is no measure for srvm(), whose penalty
# shrinks weights it keeps without making them interpolate.
.interpolation_facts <- function(fit, design = NULL) {
  n <- nrow(fit$x)
  spread <- if (n > 1L) stats::sd(fit$y) else NA_real_
  if (n < 2L || !isTRUE(spread > 0)) return(NULL)
  effective <- .effective_parameters(fit, design)
  if (effective <= n / 2) return(NULL)
  sprintf(paste("%d of %d observations are relevance vectors (%.3g effective parameters) and",
                "the noise sd is %.3g times the response's"),
          length(fit$relevance_vectors), n, effective, sqrt(fit$noise_variance) / spread)
}

# The trace of the hat matrix H Sigma H' / sigma^2 of the kept weights: the
# number the noise update subtracts from n (at convergence
# n - |y - H mu|^2 / sigma^2).  `design` is H when the caller has it.
.effective_parameters <- function(fit, design = NULL) sum(.rvm_leverage(fit, design))

# The same at the width given or the data-driven one, said by every fit:
# with a formula's factor columns the inputs have many dimensions in which
# two observations either agree or differ by a whole unit, and the default
# width can already be narrow enough (?rvm, "Performance").
.warn_interpolation <- function(fit, model, design) {
  facts <- .interpolation_facts(fit, design)
  if (is.null(facts)) return(invisible())
  warning(sprintf(paste("%s: the fit nearly interpolates: %s. Unless the data are almost free of",
                        "noise its prediction intervals are too narrow; a wider kernel (a",
                        "larger sigma in rbf_kernel()) or mfsvr() gives error bars that hold."),
                  model, facts), call. = FALSE)
}

# The default kernel of rvm() and srvm(): with the call giving no kernel
# (`linear`), on standardised data and without a width search, the linear
# kernel (.linear_candidate()) is weighed against the Gaussian one of the
# data's width, as mfsvr() weighs them, and the model is fitted with the one
# chosen; fit$kernel_choice records the choice.  A response nearly linear in
# its inputs is where every Gaussian basis extrapolates worst (?rvm,
# "Performance").  The judge is not these models' own evidence but that of a
# Gaussian process with each kernel (.gp_kernel_evidence()): maximised over
# one precision per basis function, the relevance vector machines' evidence
# rewards the more flexible Gaussian basis, and would choose it where a line
# predicts better.  e1071's second width is not weighed (widths = FALSE):
# these models' own evidence rises as the width shrinks (see above), and
# whether the Gaussian process's would choose the better width is untested.
# The linear kernel needs more than p + 2 observations: with fewer, a line
# in the p inputs passes through every centred one and leaves nothing to
# estimate the noise from (two observations would get no prediction
# interval).  fit_at(kernel) is the model's fit to the scaled rows x and
# response y.
.rvm_fit_candidates <- function(fit_at, kernel, x, y, scale, optimize, linear) {
  choose <- .kernel_by_default(scale, nrow(x), .optimize_which(optimize, "sigma"), NULL)
  linear <- linear && nrow(x) > ncol(x) + 2L
  kernels <- .kernel_candidates(kernel, x, choose, linear, widths = FALSE)
  .charge(NULL)  # (the data's checks and scaling are no choice's)
  fit <- if (length(kernels) == 1L) fit_at(kernel) else {
    log_evidence <- vapply(kernels, .gp_kernel_evidence, numeric(1), x = x, y = y)
    chosen <- fit_at(kernels[[which.max(log_evidence)]])
    rows <- .candidate_rows(kernels)
    chosen$kernel_choice <- data.frame(rows, log_evidence = log_evidence[attr(rows, "order")])
    chosen
  }
  .charge_chosen(fit, TRUE)  # (the fit itself is the evidence's choice of the precisions)
  fit
}

# The log evidence of a Gaussian process with the kernel, at the amplitude
# and noise variance that maximise it (the core's gp_kernel_evidence(),
# rvm_posterior.hpp), on at most kernel_choice_max_n evenly spaced rows.
.gp_kernel_evidence <- function(kernel, x, y) {
  rows <- .evenly_spaced_rows(nrow(x), .size_rule("kernel_choice_max_n"))
  .count_fit()
  cpp_gp_kernel_evidence(kernel, x[rows, , drop = FALSE], y[rows])$log_evidence
}

# A calibration refit (R/interval-calibration.R) on rows x, y: at the
# fit's kernel, or, where the fit's kernel was chosen among the candidates,
# chosen again among them (`kernel` the one at the data's width, as
# .rvm_fit_candidates() took it) on the refit's own rows.  The choice
# adapts to the training targets as the relevance vectors do, and refits
# at the kernel chosen with every row in would hide that, and so make the
# calibrated intervals too narrow.  mfsvr() and svr() keep their fit's
# kernel and offset: their own evidence weighs them, without the
# relevance vector machines' bias towards flexible bases, and refits that
# weighed them again only widened the intervals.
.rvm_refit <- function(fit, refit_at, kernel, x, y, scale, optimize, linear) {
  if (is.null(fit$kernel_choice)) return(refit_at(fit$kernel))
  .rvm_fit_candidates(refit_at, kernel, x, y, scale, optimize, linear)
}
