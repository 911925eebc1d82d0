# rvm() and srvm(): prediction intervals calibrated by cross-validation.
#
# The relevance vector machines choose one prior precision per basis
# function by maximising the evidence, and that choice adapts to the
# training targets: the pruned fit explains part of the noise, and its own
# predictive (even augmented, with the noise level integrated out; see
# "Prediction intervals" in ?rvm) is too narrow on new targets.  At the
# fitted hyperparameters the leave-one-out residuals look calibrated (their
# normal scores have root mean square 0.90-1.01 on bench-realdata's twelve sets),
# because the precisions were chosen with every point in; only refits that
# choose them again see the adaptation.  So the model is refitted on all
# folds but one, at the fit's kernel, and each left-out target's absolute
# residual is divided by its refit's interval half-width at the level asked
# for; the interval at that level is the model's own scaled by the level's
# quantile of these ratios (the (n + 1) L-th smallest, interpolated:
# quantile type 6).  This is cross-validated conformal calibration of the
# model's own standardised scores; the point predictions are untouched.

# Folds by default, and the sizes between which the default calibrates:
# below the lower one a fold's refit has too few targets to estimate the
# noise, above the upper one the five refits cost more than a console user
# waits for (rvm() on 400 rows of Friedman 1 0.7 s a fit, srvm() 1.5 s).
.calibration_default_folds <- 5L
.calibration_min_n <- 10L
.calibration_max_n <- 500L

# calibration_folds as given (NULL, FALSE/TRUE, or a count) -> the number
# of folds for n observations, 0 for none.
.resolve_calibration_folds <- function(folds, n) {
  if (is.null(folds)) {
    within <- n >= .calibration_min_n && n <= .calibration_max_n
    return(if (within) .calibration_default_folds else 0L)
  }
  if (isFALSE(folds)) return(0L)
  if (isTRUE(folds)) folds <- .calibration_default_folds
  folds <- .check_count(folds, "calibration_folds")
  if (folds == 0L) return(0L)
  if (folds == 1L) .stop("'calibration_folds' must be 0 (the model's own intervals) or at least 2")
  if (n < .calibration_min_n) {
    .stop(sprintf(paste("'calibration_folds' needs at least %d observations (there are %d): the",
                        "refits on the other folds estimate the noise level"),
                  .calibration_min_n, n))
  }
  if (folds > n) {
    .stop(sprintf("'calibration_folds' = %d exceeds the number of observations (%d)", folds, n))
  }
  folds
}

# The fit with its intervals calibrated by `calibration_folds` (as given to
# the fitter) and its record of it, sealed again; the refits' time is part
# of the fit's.  fit_rows(x, y) fits the model to rows of the fitted
# (scaled) data at the fit's kernel.
.with_calibration <- function(fit, calibration_folds, fit_rows, what) {
  folds <- .resolve_calibration_folds(calibration_folds, nrow(fit$x))
  if (folds == 0L) return(fit)
  start <- proc.time()[["elapsed"]]
  fit <- .calibrate_intervals(fit, folds, fit_rows, what)
  fit$fit_time <- fit$fit_time + proc.time()[["elapsed"]] - start
  .seal(fit)
}

# fit$interval_calibration: the left-out rows' absolute residuals, their
# refits' predictive scales and degrees of freedom, in the model's units.
# A fold whose refit fails drops the calibration, with a warning that
# begins with `what`; one that leaves no noise estimate drops it silently
# (the model's own intervals remain in both cases).
.calibrate_intervals <- function(fit, folds, fit_rows, what) {
  n <- nrow(fit$x)
  fold <- .fold_assignment(n, folds, seed = 1L)
  y <- .to_model_units(fit$y, fit$response_scaling)
  residual <- scale <- df <- numeric(n)
  for (k in seq_len(folds)) {
    out <- fold == k
    piece <- tryCatch({
      fk <- suppressWarnings(fit_rows(fit$x[!out, , drop = FALSE], y[!out]))
      # fk's targets are in the model's units already; a response centred by
      # the scaling has its mean integrated out of the noise's posterior,
      # as the full fit's (.rvm_target_noise())
      if (!is.null(fit$response_scaling)) fk$response_scaling <- list(center = 0, scale = 1)
      noise <- .rvm_target_noise(fk)
      # a refit that interpolates its rows leaves the noise level free: no
      # interval to compare with, and the fit's own intervals remain (print()
      # says so; the fit has warned when it interpolates too)
      if (!is.finite(noise$variance)) return(fit)
      m <- .latent_moments(fk, fit$x[out, , drop = FALSE], 0L, 1L, TRUE)
      list(residual = abs(y[out] - m$mean), scale = sqrt(m$var + noise$variance), df = noise$df)
    }, error = function(e) e)
    if (inherits(piece, "error")) {
      warning(sprintf(paste("%s the prediction intervals are the model's own: the refit without",
                            "fold %d of %d failed (%s)"), what, k, folds, conditionMessage(piece)),
              call. = FALSE)
      return(fit)
    }
    residual[out] <- piece$residual
    scale[out] <- piece$scale
    df[out] <- piece$df
  }
  fit$interval_calibration <- list(folds = folds, fold = fold, residual = residual,
                                   scale = scale, df = df)
  fit
}

# What multiplies the model's own half-width at `level` (1 without a
# calibration): the ratios' quantile at that level.
.interval_scale <- function(object, level) {
  cal <- object$interval_calibration
  if (is.null(cal)) return(rep(1, length(level)))
  vapply(level, function(l) {
    ratio <- cal$residual / (stats::qt((1 + l) / 2, cal$df) * cal$scale)
    stats::quantile(ratio, l, type = 6L, names = FALSE)
  }, numeric(1))
}

# print()'s line on the intervals.
.calibration_line <- function(object, digits) {
  cal <- object$interval_calibration
  if (is.null(cal)) {
    n <- nrow(object$x)
    by_default <- is.null(object$call$calibration_folds)
    why <- if (!by_default) "" else if (n > .calibration_max_n) {
      sprintf(" (not calibrated beyond %d observations: calibration_folds = 5 asks for it)",
              .calibration_max_n)
    } else if (n < .calibration_min_n) {
      sprintf(" (not calibrated below %d observations)", .calibration_min_n)
    } else " (a cross-validation refit left no noise level to calibrate them with)"
    return(sprintf("Prediction intervals: the model's own%s", why))
  }
  sprintf(paste("Prediction intervals: calibrated by %d-fold cross-validation (the model's own",
                "x %s at 95%%)"),
          cal$folds, format(.interval_scale(object, 0.95), digits = digits))
}

# The validator's check of fit$interval_calibration for n training rows.
.calibration_check <- function(n) {
  .optional(function(v) {
    if (!is.list(v)) return("must be the record of the calibration (a list)")
    folds <- v$folds
    problem <- .nested(v, list(folds = .indices(1L, lower = 2L, upper = n),
                               residual = .numbers(n, lower = 0),
                               scale = .numbers(n, lower = 0, open = TRUE),
                               df = .numbers(n, lower = 0, open = TRUE, inf = TRUE)))
    problem %||% .nested(v, list(fold = .indices(n, upper = folds, distinct = FALSE)))
  })
}
