# Prediction intervals calibrated by cross-validation, for every regression
# model (rvm(), srvm(), mfsvr(), svr()).
#
# A model whose hyperparameters the evidence chooses adapts them to the
# training targets, and its own predictive is then too sure of new ones
# where the data are few: the relevance vector machines' pruned fits
# explain part of the noise (even with the noise level integrated out and
# the basis augmented; see "Prediction intervals" in ?rvm), and on 21 to
# 35 training rows the 80% intervals of mfsvr() held 0.70-0.75 of new
# targets on three of six sets (its 95% ones 0.88 on one), C integrated
# out.  At the fitted hyperparameters the leave-one-out residuals look
# calibrated (their normal scores have root mean square 0.90-1.01 for
# rvm() on bench-realdata's twelve sets), because the hyperparameters were
# chosen with every point in; only refits that choose them again see the
# adaptation.  So the model is refitted on
# all folds but one, at the fit's kernel, and each left-out target's place
# in its refit's predictive distribution is kept as the probability p of a
# target at least as far from the predictive's centre (two-sided: the
# predictives are symmetric, so p = 1 - L for the central interval of
# level L whose end the target is on), and its normal score z = Phi^-1(1 -
# p / 2).  Were the refits' predictives right, the z would be the absolute
# values of standard normal draws, with mean square 1; a mean square m > 1
# says they are too sure.  The calibrated predictive then widens the
# model's own on the normal-score scale: a target of normal score z under
# the model has the normal score s z, s = min(1, 1 / sqrt(m)), and the
# interval at level L is the model's own at the level whose normal score
# is Phi^-1((1 + L) / 2) / s (cross-validated calibration of the
# probability integral transforms, as CV+ of Barber, Candes, Ramdas and
# Tibshirani 2021 calibrates conformity scores, with one scale in place of
# their order statistics).
#
# One scale, and not the quantile at each level of the n tail
# probabilities (an interpolation between their order statistics): that
# map's level at each L varies with the few order statistics near it, and
# its slope, the factor the calibrated density carries, is as noisy as the
# gaps between them, which costs about 0.4 in log score per target where
# the model was right (the mean log of a uniform spacing's ratio to its
# expectation); one scale from all n scores is as steady as a variance
# estimate.  Only wider: the adaptation the refits show makes the model too
# sure, never too unsure, and a scale below 1 estimated from a few dozen
# rows would narrow good intervals as often as it corrects.  The point
# predictions, standard errors and confidence intervals are untouched.

# Folds of the default calibration; the sizes it applies to are rules of
# ?gpsvm_size_policy.
.calibration_default_folds <- 5L

# Beyond its size rule the default calibration runs on that many evenly
# spaced rows (refits of four fifths of them), so that its cost stays that
# of the rule's size and a fit either side of the rule is calibrated alike.
# Such refits adapt to their targets as a fit on that many rows does, and a
# fit on all n rows adapts less: the tube models' few hyperparameters by
# O(1/n) of the predictive variance, and the relevance vector machines' own
# intervals too come closer to their nominal level as n grows ("Performance"
# in ?gpsvm_size_policy).  So every model keeps the fraction rows / n of the
# excess mean square the refits show (.calibration_scale()'s `weight`),
# which is 1 at the rule.  NULL: all rows, weight 1.  (Never fewer rows than
# calibration_min_n, whatever the rule is set to.)
.calibration_subset <- function(n, model) {
  max_n <- max(.calibration_max_n(model), .size_rule("calibration_min_n"))
  if (n <= max_n) return(NULL)
  list(rows = .evenly_spaced_rows(n, max_n), weight = max_n / n)
}

# The size rule of each fitter's default calibration.
.calibration_max_n <- function(model) {
  .size_rule(c(rvm = "calibration_max_n_rvm", srvm = "calibration_max_n_rvm",
               mfsvr = "calibration_max_n_ep", svr = "calibration_max_n_ep")[[model]])
}

# The calibrated level never reaches 1 (an interval without ends): at most
# this.  A p below 1e-12 means a left-out target some 7 predictive standard
# deviations out.
.calibration_max_level <- 1 - 1e-12

# calibration_folds as given (NULL, FALSE/TRUE, or a count) -> the number
# of folds for n observations of `model`'s fit, 0 for none.
.resolve_calibration_folds <- function(folds, n, model) {
  if (is.null(folds)) {
    return(if (n >= .size_rule("calibration_min_n")) .calibration_default_folds else 0L)
  }
  if (isFALSE(folds)) return(0L)
  if (isTRUE(folds)) folds <- .calibration_default_folds
  folds <- .check_count(folds, "calibration_folds")
  if (folds == 0L) return(0L)
  if (folds == 1L) .stop("'calibration_folds' must be 0 (the model's own intervals) or at least 2")
  if (n < .size_rule("calibration_min_n")) {
    .stop(sprintf(paste("'calibration_folds' needs at least %d observations (there are %d): the",
                        "refits on the other folds estimate the noise level"),
                  .size_rule("calibration_min_n"), n))
  }
  if (folds > n) {
    .stop(sprintf("'calibration_folds' = %d exceeds the number of observations (%d)", folds, n))
  }
  folds
}

# The fitter's name (rvm, srvm, mfsvr, svr) of a regression fit.
.calibration_model <- function(object) {
  sub("^gpsvm_", "", intersect(paste0("gpsvm_", c("rvm", "srvm", "mfsvr", "svr")), class(object))[1L])
}

# The fit with its intervals calibrated by `calibration_folds` (as given to
# the fitter) and its record of it, sealed again; the refits' time is part
# of the fit's.  fit_rows(x, y) fits the model to rows of the fitted
# (scaled) data at the fit's kernel.  With `weigh`, the calibration is kept
# only where its cross-validated log score beats the model's own
# (.calibration_log_score_gain()) when the calibration is the default one
# (calibration_folds NULL); otherwise fit$calibration_declined records it.
# A fitter asks for that where its refits keep hyperparameters the evidence
# chose with every row in (mfsvr()'s and svr()'s noise function): the
# refits then cannot show the adaptation the calibration corrects, and a
# map fitted to the pooled tail probabilities of rows whose own intervals
# err in opposite directions (too wide where the noise is low, too narrow
# where it is high) narrows them everywhere.
.with_calibration <- function(fit, calibration_folds, fit_rows, weigh = FALSE) {
  model <- .calibration_model(fit)
  folds <- .resolve_calibration_folds(calibration_folds, nrow(fit$x), model)
  if (folds == 0L) return(fit)
  start <- proc.time()[["elapsed"]]
  subset <- if (is.null(calibration_folds)) .calibration_subset(nrow(fit$x), model)
  .charge(NULL)
  fit <- .charge_whole("calibration",
                       .calibrate_intervals(fit, folds, fit_rows, sprintf("%s():", model), subset))
  cal <- fit$interval_calibration
  if (weigh && is.null(calibration_folds) && !is.null(cal)) {
    gain <- .calibration_log_score_gain(cal)
    if (!(gain > 0)) {
      fit$interval_calibration <- NULL
      fit$calibration_declined <- c(cal[intersect(c("folds", "fold", "tail", "rows", "weight"),
                                                  names(cal))],
                                    list(log_score_gain = gain))
    }
  }
  fit$fit_time <- fit$fit_time + proc.time()[["elapsed"]] - start
  .seal(fit)
}

# fit$interval_calibration: the folds, each row's fold, each left-out
# target's two-sided tail probability p under its refit's predictive, and,
# where the refits chose their kernel among candidates (.rvm_refit()), the
# rule of each one's choice (.kernel_rule()); on `subset`
# (.calibration_subset()) those of its rows, and its rows and weight.  A
# fold whose refit fails drops the calibration, with a warning that begins
# with `what`; one that leaves no noise estimate drops it silently (the
# model's own intervals remain in both cases).
.calibrate_intervals <- function(fit, folds, fit_rows, what, subset = NULL) {
  rows <- subset$rows %||% seq_len(nrow(fit$x))
  x <- fit$x[rows, , drop = FALSE]
  n <- length(rows)
  fold <- .fold_assignment(n, folds, seed = 1L)
  y <- .to_model_units(fit$y, fit$response_scaling)[rows]
  tail <- numeric(n)
  kernel <- rep(NA_character_, folds)
  for (k in seq_len(folds)) {
    out <- fold == k
    p <- tryCatch({
      fk <- suppressWarnings(fit_rows(x[!out, , drop = FALSE], y[!out]))
      # fk's targets are in the model's units already; a response centred by
      # the scaling has its mean integrated out of the noise's posterior
      # where the model estimates the noise (rvm(), .rvm_target_noise())
      if (!is.null(fit$response_scaling)) fk$response_scaling <- list(center = 0, scale = 1)
      if (!is.null(fk$kernel_choice)) kernel[k] <- .kernel_rule(fk$kernel)
      .target_tail(fk, x[out, , drop = FALSE], y[out])
    }, error = function(e) e)
    if (inherits(p, "error")) {
      warning(sprintf(paste("%s the prediction intervals are the model's own: the refit without",
                            "fold %d of %d failed (%s)"), what, k, folds, conditionMessage(p)),
              call. = FALSE)
      return(fit)
    }
    # NA: a refit that interpolates its rows leaves the noise level free (the
    # relevance vector machines' scores are NA then): no interval to compare
    # with, and the fit's own intervals remain (print() says so; the fit has
    # warned when it interpolates too)
    if (anyNA(p)) return(fit)
    tail[out] <- p
  }
  fit$interval_calibration <- c(list(folds = folds, fold = fold, tail = tail),
                                if (!anyNA(kernel)) list(kernel = kernel), subset)
  fit
}

# The calibration's scale s of the tail probabilities `tail` (see above),
# 1 without them; `weight` keeps that fraction of the excess mean square
# (.calibration_subset()).  A p below 1e-12 counts as 1e-12 (normal score
# 7.1): a target beyond that is an outlier, whose own square would set the
# scale.
.calibration_scale <- function(tail, weight = 1) {
  if (is.null(tail)) return(1)
  m <- 1 + weight * (mean(.calibration_scores(tail)^2) - 1)
  if (m <= 1) 1 else 1 / sqrt(m)
}

# A fit's calibration scale from its record (NULL: none).
.fit_calibration_scale <- function(cal) .calibration_scale(cal$tail, cal$weight %||% 1)

# The normal scores of two-sided tail probabilities.
.calibration_scores <- function(tail) stats::qnorm(pmax(tail, 1e-12) / 2, lower.tail = FALSE)

# The level of the model's own interval that a prediction interval at
# `level` is (`level` itself without a calibration, or where it did not
# widen).
.calibrated_level <- function(object, level) {
  .own_level(.fit_calibration_scale(object$interval_calibration), level)
}

# The model's own level at `level` under the calibration's scale s.
.own_level <- function(s, level) {
  if (s == 1) return(level)
  pmin(1 - 2 * .own_tail(s, (1 - level) / 2), .calibration_max_level)
}

# The model's own one-sided tail probability at the calibrated one u
# (u <= 1/2), so that a tiny u keeps its precision.
.own_tail <- function(s, u) if (s == 1) u else stats::pnorm(stats::qnorm(u) / s)

# The cross-validated gain in log score, per row, of the calibrated
# predictive over the model's own, from a calibration's record `cal`: each
# fold's rows scored by the scale the other folds' tail probabilities
# make.  The calibrated density is the model's times the map's slope,
# s phi(s z) / phi(z) at the row's normal score z
# (R/predictive-distribution.R), so a row's gain needs no refit.
.calibration_log_score_gain <- function(cal) {
  gain <- numeric(length(cal$tail))
  for (k in seq_len(cal$folds)) {
    out <- cal$fold == k
    s <- .calibration_scale(cal$tail[!out], cal$weight %||% 1)
    z <- .calibration_scores(cal$tail[out])
    gain[out] <- log(s) + z^2 * (1 - s^2) / 2
  }
  mean(gain)
}

# The validator's check of fit$interval_calibration for n training rows.
.calibration_check <- function(n) {
  .optional(function(v) {
    if (!is.list(v)) return("must be the record of the calibration (a list)")
    folds <- v$folds
    problem <- .calibration_rows_check(v, n)
    rows <- length(v$rows %||% seq_len(n))
    problem <- problem %||% .nested(v, list(folds = .indices(1L, lower = 2L, upper = rows),
                                            tail = .numbers(rows, lower = 0, upper = 1)))
    problem %||% .nested(v, list(fold = .indices(rows, upper = folds, distinct = FALSE),
                                 kernel = .optional(.strings(folds, .kernel_rules))))
  })
}

# A calibration record's rows (increasing, of the n training rows) and the
# weight of its excess mean square, both or neither.
.calibration_rows_check <- function(v, n) {
  if (is.null(v$rows) != is.null(v$weight)) return("must have rows and weight, both or neither")
  if (is.null(v$rows)) return(NULL)
  .nested(v, list(rows = .indices(NULL, upper = n),
                  weight = .number(lower = 0, upper = 1, open = TRUE))) %||%
    if (is.unsorted(v$rows)) "must have its rows in increasing order"
}

# The validator's check of fit$calibration_declined: the record of a
# calibration and its cross-validated gain in log score (not above 0).
.calibration_declined_check <- function(n) {
  .optional(function(v) {
    if (!is.list(v)) return("must be the record of the declined calibration (a list)")
    rows <- length(v$rows %||% seq_len(n))
    problem <- .calibration_rows_check(v, n) %||%
      .nested(v, list(folds = .indices(1L, lower = 2L, upper = rows),
                      tail = .numbers(rows, lower = 0, upper = 1),
                      log_score_gain = .number(upper = 0, inf = TRUE)))
    problem %||% .nested(v, list(fold = .indices(rows, upper = v$folds, distinct = FALSE)))
  })
}
