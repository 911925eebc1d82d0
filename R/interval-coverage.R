#' Coverage of a regression fit's prediction intervals: their calibration
#'
#' How often the prediction intervals of a fit from [svr()], [mfsvr()],
#' [rvm()] or [srvm()] hold the targets they are meant for, level by level:
#' a calibrated fit's 80% intervals hold about 80% of new targets. The
#' targets are held-out data (`newdata`, with the response), or else the
#' training rows by `folds`-fold cross-validation: the model is refitted by
#' its own call on all folds but one, evidence search included (refits, not
#' the fit's own leave-one-out formulas, which would miss what the data
#' chose, such as the relevance vector machines' pruning), and its intervals
#' are asked for the rows left out. The refits find the data as [update()]
#' does (a fit to a matrix reuses what it stores), each at the fit's cost.
#'
#' `plot(fit, which = "calibration")` ([plot.gpsvm_regression()]) draws the
#' table: coverage against nominal level, with the band in which a
#' calibrated predictive's coverage of that many targets falls 95% of the
#' time. Points below the band mark intervals too narrow (over-confidence),
#' above it too wide.
#'
#' @param object A fit from [svr()], [mfsvr()], [rvm()] or [srvm()].
#' @param newdata Held-out data: for a formula fit a data frame with the
#'   response and every variable the formula uses, or row partitions of such
#'   data ([gpsvm_partitions()]); for a fit to a matrix, the
#'   inputs (and the targets in `y`). `NULL` (the default) cross-validates
#'   (not for a fit to partitions, which would refit on all of them).
#' @param y For a fit to a matrix with `newdata`, the held-out targets.
#' @param folds The number of cross-validation folds (2 to the number of
#'   observations; this many gives leave-one-out with refits).
#' @param levels Nominal levels of the central prediction intervals, in
#'   (0, 1).
#' @param seed Seed of the random assignment to folds (the session's random
#'   numbers are left as they were).
#' @param ... Not used; unknown arguments are an error.
#' @return A data frame with one row per level: `level`, `coverage` (the
#'   share of the targets inside their interval), `lower` and `upper` (the
#'   central 95% range of the coverage of a calibrated predictive on `n`
#'   targets, from the binomial distribution), `n`, `width` (the intervals'
#'   mean width, in the response's units); attribute `source`, `"held-out
#'   data"` or `"5-fold cross-validation"`.
#' @seealso [predict.gpsvm_regression()] for the intervals.
#' @examples
#' fit <- mfsvr(dist ~ speed, data = cars)
#' interval_coverage(fit)
#' plot(fit, which = "calibration")
#' @export
interval_coverage <- function(object, ...) UseMethod("interval_coverage")

#' @rdname interval_coverage
#' @export
interval_coverage.gpsvm_regression <- function(object, newdata = NULL, y = NULL, folds = 5,
                                               levels = c(0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99),
                                               seed = 1, ...) {
  .check_dots_empty(...)
  .coverage_by_level(object, newdata, y, folds, levels, seed, parent.frame())
}

# interval_coverage()'s table; the refits of cross-validation evaluate the
# fit's call in `env`.
.coverage_by_level <- function(object, newdata, y, folds, levels, seed, env) {
  .validate_fit(object)
  if (!is.numeric(levels) || length(levels) < 1L || anyNA(levels) || any(levels <= 0) ||
      any(levels >= 1)) {
    .stop("'levels' must be numbers in (0, 1)")
  }
  levels <- sort(unique(as.double(levels)))
  if (!is.null(newdata)) {
    bands <- .held_out_bands(object, newdata, y, levels)
    source <- "held-out data"
  } else {
    if (!is.null(y)) .stop("'y' goes with 'newdata' (held-out inputs of a fit to a matrix)")
    if (!is.null(object$partitions)) {
      .stop(paste("a fit to data in partitions is not cross-validated (each fold a refit on all",
                  "partitions): give held-out data, e.g. gpsvm_partitions() of other files, as",
                  "'newdata'"))
    }
    folds <- .check_count(folds, "folds", lower = 2L, upper = length(object$y))
    seed <- .check_count(seed, "seed", lower = 0L)
    bands <- .cross_validated_bands(object, folds, levels, seed, env)
    source <- sprintf("%d-fold cross-validation", folds)
  }
  out <- .coverage_table(bands, levels)
  attr(out, "source") <- source
  out
}

# One row per level: the share of targets inside their interval, the
# binomial range of a calibrated predictive's, the intervals' mean width.
.coverage_table <- function(bands, levels) {
  n <- length(bands$y)
  rows <- lapply(seq_along(levels), function(j) {
    lower <- bands$lower[, j]
    upper <- bands$upper[, j]
    range <- stats::qbinom(c(0.025, 0.975), n, levels[j]) / n
    data.frame(level = levels[j], coverage = mean(bands$y >= lower & bands$y <= upper),
               lower = range[1], upper = range[2], n = n, width = mean(upper - lower))
  })
  do.call(rbind, rows)
}

# The intervals at every level for held-out rows (n x levels matrices
# `lower`, `upper`) and the targets `y`, incomplete rows left out.
.held_out_bands <- function(object, newdata, y, levels) {
  if (inherits(newdata, "gpsvm_partitions")) {  # (each partition's, in their order)
    return(.bind_pieces(lapply(seq_along(newdata$sources), function(i) {
      .held_out_bands(object, .read_partition(newdata, i), y, levels)
    })))
  }
  y <- .held_out_response(object, newdata, y, "targets")
  .bands_at(object, newdata, .check_targets_na(y, NROW(newdata)), levels)
}

# The response of held-out rows: from newdata through the formula of a
# formula fit, else `y` (the held-out `what`, for a fit to a matrix).
.held_out_response <- function(object, newdata, y, what) {
  if (!is.null(object$terms)) {
    if (!is.null(y)) .stop("'y' is for a fit to a matrix; a formula fit takes the response from 'newdata'")
    if (!is.data.frame(newdata)) .stop("'newdata' must be a data frame with the response")
    frame <- stats::model.frame(object$terms, newdata, na.action = stats::na.pass)
    y <- stats::model.response(frame)
    if (is.null(y)) .stop("'newdata' has no response")
  } else if (is.null(y)) {
    .stop(sprintf("'y' must give the held-out %s of 'newdata' for a fit to a matrix", what))
  }
  y
}

# Numeric targets, one per row of newdata, NA allowed.
.check_targets_na <- function(y, n) {
  if (!is.numeric(y) || length(y) != n) {
    .stop(sprintf("the held-out response must be numeric with one value per row of 'newdata' (%d)", n))
  }
  as.double(y)
}

.bands_at <- function(fit, newdata, y, levels) {
  ends <- lapply(levels, function(level) {
    stats::predict(fit, newdata, interval = "prediction", level = level)
  })
  # (a matrix also for one row, where vapply() would give a vector)
  lower <- matrix(vapply(ends, function(e) e[, "lwr"], numeric(length(y))), length(y))
  upper <- matrix(vapply(ends, function(e) e[, "upr"], numeric(length(y))), length(y))
  keep <- stats::complete.cases(lower, upper, y)
  list(lower = lower[keep, , drop = FALSE], upper = upper[keep, , drop = FALSE], y = y[keep])
}

# Cross-validated intervals: each fold's rows predicted by the fit's call
# refitted to the other folds.
.cross_validated_bands <- function(object, folds, levels, seed, env) {
  data <- .refit_data(object, env)
  fold <- .fold_assignment(length(object$y), folds, seed)
  .bind_pieces(lapply(seq_len(folds), function(k) {
    out <- fold == k
    refit <- suppressWarnings(.refit_rows(object, data, !out, env))
    .bands_at(refit, data$newdata(out), object$y[out], levels)
  }))
}

# n rows at random to `folds` folds of equal size, leaving the session's
# random numbers as they were.
.fold_assignment <- function(n, folds, seed) {
  restore <- .keep_random_state()
  on.exit(restore())
  set.seed(seed)
  sample(rep_len(seq_len(folds), n))
}

# The data a refit needs, at the rows the fit used: the call's data frame
# (found as update() finds it), or the stored inputs and the `response`;
# `newdata(rows)` as predict() takes them, `arguments(rows)` as the fitter.
.refit_data <- function(object, env, response = object$y) {
  if (is.null(object$terms)) {
    x <- .original_inputs(object)
    return(list(newdata = function(rows) x[rows, , drop = FALSE],
                arguments = function(rows) list(x = x[rows, , drop = FALSE], y = response[rows])))
  }
  data <- tryCatch(eval(object$call$data, env), error = function(e) NULL)
  used <- rownames(object$x)
  if (!is.data.frame(data) || is.null(used) || !all(used %in% rownames(data))) {
    .stop(paste("cross-validation refits the model on parts of its data, which were not found",
                "where the function was called (they are looked up as update() does); give",
                "held-out data in 'newdata' instead"))
  }
  data <- data[used, , drop = FALSE]
  list(newdata = function(rows) data[rows, , drop = FALSE],
       arguments = function(rows) list(data = data[rows, , drop = FALSE], subset = NULL))
}

# The fit's call evaluated on some of its rows.
.refit_rows <- function(object, data, rows, env) {
  call <- object$call
  if (is.null(call)) .stop("the fit has no stored call to refit")
  arguments <- data$arguments(rows)
  for (name in names(arguments)) {
    value <- arguments[[name]]
    if (!is.null(value)) call[[name]] <- value else if (!is.null(call[[name]])) call[[name]] <- NULL
  }
  call[[1L]] <- call("::", quote(gpsvm), call[[1L]])
  .quiet_refits(eval(call, env))
}

# plot(fit, which = "calibration"); `env`: where plot() was called.
.plot_calibration <- function(x, env, newdata = NULL, y = NULL, folds = 5,
                              levels = c(0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99), seed = 1,
                              main = NULL, xlab = "nominal level", ylab = "coverage",
                              legend = "topleft", ...) {
  table <- .coverage_by_level(x, newdata, y, folds, levels, seed, env)
  graphics::plot(table$level, table$coverage, type = "n", xlim = c(min(table$level, 0.5), 1),
                 ylim = range(0, 1, table$coverage, table$lower), xlab = xlab, ylab = ylab,
                 main = main %||% sprintf("Prediction intervals, %s", attr(table, "source")), ...)
  graphics::polygon(c(table$level, rev(table$level)), c(table$lower, rev(table$upper)),
                    col = "#4682B426", border = NA)
  graphics::abline(0, 1, lty = 2, col = "grey40")
  graphics::lines(table$level, table$coverage, col = "navy")
  graphics::points(table$level, table$coverage, pch = 20, col = "navy")
  if (!is.null(legend)) {
    graphics::legend(legend, legend = c("coverage", "calibrated",
                                        sprintf("95%% range of a calibrated fit's (n = %d)",
                                                table$n[1])),
                     col = c("navy", "grey40", "#4682B426"), lty = c(1, 2, 1), lwd = c(1, 1, 8),
                     pch = c(20, NA, NA), bty = "n", cex = 0.8)
  }
  invisible(x)
}

#' Proper scores of a regression fit's predictive distributions
#'
#' How well the predictive distributions of a fit from [svr()], [mfsvr()],
#' [rvm()] or [srvm()] (those of `predict(type = "distribution")`, whose
#' central intervals are the `"prediction"` intervals, calibrated where
#' those are) score observed targets \eqn{y}, beside [interval_coverage()]'s
#' calibration. All three are negatively oriented (lower is better) and
#' proper (Gneiting and Raftery 2007):
#' * `log_score`: \eqn{-\log f(y)}, the negative log predictive density;
#' * `crps`: the continuous ranked probability score \eqn{\int (F(t) -
#'   1\{t \ge y\})^2 dt}, in the response's units (the absolute error for a
#'   point prediction), by Gauss-Legendre quadrature between the points
#'   where \eqn{F} has a kink (the calibration's knots) and `integrate()` on
#'   the tails;
#' * `interval_score`: at level \eqn{1 - \alpha}, \eqn{(u - l) +
#'   \frac{2}{\alpha}(l - y)_+ + \frac{2}{\alpha}(y - u)_+} for the interval
#'   \eqn{[l, u]}.
#'
#' @param object A regression fit, or a distribution from
#'   `predict(type = "distribution")`.
#' @param newdata Held-out data, as in [interval_coverage()]: for a formula
#'   fit a data frame with the response, else the inputs, with the targets
#'   in `y`.
#' @param y The targets (a fit to a matrix, or a distribution: one per
#'   prediction).
#' @param level Level of the interval score's intervals.
#' @param ... Not used; unknown arguments are an error.
#' @return A data frame with one row per target (rows with missing values
#'   left out): `log_score`, `crps`, `interval_score`; its column means
#'   summarise a fit.
#' @references Gneiting, T. and Raftery, A. E. (2007). Strictly proper
#'   scoring rules, prediction, and estimation. *Journal of the American
#'   Statistical Association* 102, 359-378.
#' @seealso [predictive-distribution], [interval_coverage()].
#' @examples
#' fit <- mfsvr(dist ~ speed, data = cars[1:35, ], C = 3)
#' colMeans(predictive_scores(fit, cars[36:50, ]))
#' @export
predictive_scores <- function(object, ...) UseMethod("predictive_scores")

#' @rdname predictive_scores
#' @export
predictive_scores.gpsvm_regression <- function(object, newdata, y = NULL, level = 0.95, ...) {
  .check_dots_empty(...)
  .validate_fit(object)
  y <- .check_targets_na(.held_out_response(object, newdata, y, "targets"), NROW(newdata))
  keep <- stats::complete.cases(if (is.data.frame(newdata)) newdata else as.matrix(newdata), y)
  rows <- if (is.data.frame(newdata)) newdata[keep, , drop = FALSE] else
    as.matrix(newdata)[keep, , drop = FALSE]
  d <- stats::predict(object, rows, type = "distribution")
  predictive_scores(d, y = y[keep], level = level)
}

#' @rdname predictive_scores
#' @export
predictive_scores.gpsvm_predictive <- function(object, y, level = 0.95, ...) {
  .check_dots_empty(...)
  level <- .check_level(level)
  y <- .check_target_values(y, length(object), "y")
  alpha <- 1 - level
  ends <- quantile(object, c(alpha / 2, 1 - alpha / 2))
  lower <- ends[, 1L]
  upper <- ends[, 2L]
  data.frame(log_score = -density(object, y, log = TRUE),
             crps = .crps(object, y),
             interval_score = (upper - lower) + 2 / alpha * pmax(lower - y, 0) +
               2 / alpha * pmax(y - upper, 0),
             row.names = object$names)
}

# int_-Inf^y F^2 + int_y^Inf (1 - F)^2 for each row, in the response's
# units (gpsvm::predictive_crps(), predictive.hpp).
.crps <- function(d, y) {
  d$scale * cpp_predictive_integrals(d$g, .d_calibration(d), (y - d$center) / d$scale)$crps
}
