# Whether a classifier's class probabilities hold what they claim, and its
# reliability plot: the counterpart of interval_coverage(), whose refits
# (.refit_data(), .refit_rows(), .fold_assignment()) it shares.

#' Calibration of a classifier's probabilities
#'
#' How well the class probabilities of a [gpc()] fit hold on cases it was
#' not fitted to: the probabilities are grouped into `bins` equal bins from
#' 0 to 1, and in each bin the mean probability is set against the share of
#' cases that belong to the class (a reliability diagram). The cases are
#' held-out data (`newdata`, with the response), or else the training rows
#' by `folds`-fold cross-validation: the model is refitted by its own call
#' (with any evidence search) on all folds but one, as [interval_coverage()]
#' does for the regression models' intervals.
#'
#' With two classes the probability of the second class (the `+1` label) is
#' binned; with more, every class's probability for every case (a case
#' counts once in each class's bin, and belongs to one class).
#'
#' `plot(fit, which = "calibration")` ([plot.gpsvm_classifier()]) draws the
#' table: the share against the mean probability, with the range in which
#' the share of a calibrated classifier's cases falls 95% of the time.
#' Points below the diagonal's range in the upper half mark
#' over-confidence, above it under-confidence.
#'
#' @param object A fit from [gpc()] ([svc()] gives no probabilities).
#' @param newdata Held-out data: for a formula fit a data frame with the
#'   response and every variable the formula uses; for a fit to a matrix,
#'   the inputs (and the classes in `y`). `NULL` (the default)
#'   cross-validates.
#' @param y For a fit to a matrix with `newdata`, the held-out classes.
#' @param folds The number of cross-validation folds (2 to the number of
#'   observations).
#' @param bins The number of equal bins from 0 to 1, 2 to 100.
#' @param seed Seed of the random assignment to folds (the session's random
#'   numbers are left as they were).
#' @param ... Not used; unknown arguments are an error.
#' @return A data frame with one row per bin that holds a probability:
#'   `bin_lower` and `bin_upper` (the bin), `predicted` (the mean probability
#'   in it), `observed` (the share of those that came true), `lower` and
#'   `upper` (the central 95% range of that share for a calibrated
#'   classifier: binomial at `predicted`, which is slightly wider than the
#'   exact range of probabilities that differ within the bin) and `n`; with
#'   attributes `source` (`"held-out data"` or `"5-fold cross-validation"`)
#'   and `log_loss` (the mean of minus the log probability of each case's
#'   class).
#' @seealso [predict.gpsvm_gpc()] for the probabilities.
#' @examples
#' fit <- gpc(Species ~ Petal.Length + Petal.Width, iris)
#' probability_calibration(fit, folds = 3)
#' plot(fit, which = "calibration", folds = 3)
#' @export
probability_calibration <- function(object, ...) UseMethod("probability_calibration")

#' @rdname probability_calibration
#' @export
probability_calibration.gpsvm_classifier <- function(object, newdata = NULL, y = NULL, folds = 5,
                                                     bins = 10, seed = 1, ...) {
  .check_dots_empty(...)
  .reliability_table(object, newdata, y, folds, bins, seed, parent.frame())
}

# probability_calibration()'s table; the refits of cross-validation
# evaluate the fit's call in `env`.
.reliability_table <- function(object, newdata, y, folds, bins, seed, env) {
  .validate_fit(object)
  if (!.gives_probabilities(object)) {
    .stop("a support vector machine gives no class probabilities to calibrate; use gpc()")
  }
  bins <- .check_count(bins, "bins", lower = 2L, upper = 100L)
  if (!is.null(newdata)) {
    held <- .held_out_probabilities(object, newdata, y)
    source <- "held-out data"
  } else {
    if (!is.null(y)) .stop("'y' goes with 'newdata' (held-out inputs of a fit to a matrix)")
    folds <- .check_count(folds, "folds", lower = 2L, upper = length(object$classes))
    seed <- .check_count(seed, "seed", lower = 0L)
    held <- .cross_validated_probabilities(object, folds, seed, env)
    source <- sprintf("%d-fold cross-validation", folds)
  }
  if (length(held$class) == 0L) .stop("no held-out case has both a class and a probability")
  out <- .reliability_bins(held$prob, held$class, bins)
  attr(out, "source") <- source
  attr(out, "log_loss") <- -mean(log(held$prob[cbind(seq_along(held$class),
                                                      as.integer(held$class))]))
  out
}

# The probabilities at held-out rows and their classes.
.held_out_probabilities <- function(object, newdata, y) {
  y <- .held_out_response(object, newdata, y, "classes")
  if (length(y) != NROW(newdata)) {
    .stop(sprintf("the held-out classes must be one per row of 'newdata' (%d), not %d",
                  NROW(newdata), length(y)))
  }
  class <- as.character(y)
  unseen <- setdiff(unique(class[!is.na(class)]), object$levels)
  if (length(unseen) > 0L) {
    .stop(sprintf("the held-out classes include %s, which the fit does not know (its classes: %s)",
                  .quote_names(unseen), paste(object$levels, collapse = ", ")))
  }
  prob <- stats::predict(object, newdata, type = "prob")
  .complete_probabilities(prob, factor(class, levels = object$levels), object$levels)
}

# Cross-validated probabilities: each fold's rows predicted by the fit's
# call refitted to the other folds.
.cross_validated_probabilities <- function(object, folds, seed, env) {
  data <- .refit_data(object, env, response = object$classes)
  fold <- .fold_assignment(length(object$classes), folds, seed)
  parts <- lapply(seq_len(folds), function(k) {
    out <- fold == k
    refit <- suppressWarnings(.refit_rows(object, data, !out, env))
    prob <- stats::predict(refit, data$newdata(out), type = "prob")
    list(prob = prob, class = object$classes[out])
  })
  prob <- lapply(parts, function(p) .complete_probabilities(p$prob, p$class, object$levels))
  class <- unlist(lapply(prob, function(p) as.character(p$class)))
  list(prob = do.call(rbind, lapply(prob, `[[`, "prob")),
       class = factor(class, levels = object$levels))
}

# The probabilities as an n x (classes) matrix in the fit's level order
# (a refit to folds without some class gives it no column: probability 0),
# with their classes, rows with a missing value left out.
.complete_probabilities <- function(prob, class, levels) {
  prob <- as.matrix(prob)
  full <- matrix(0, nrow(prob), length(levels), dimnames = list(NULL, levels))
  full[, colnames(prob)] <- prob
  keep <- stats::complete.cases(full) & !is.na(class)
  list(prob = full[keep, , drop = FALSE], class = class[keep])
}

# The reliability diagram's bins (see ?probability_calibration).
.reliability_bins <- function(prob, class, bins) {
  truth <- outer(as.integer(class), seq_len(ncol(prob)), `==`)
  if (ncol(prob) == 2L) {
    p <- prob[, 2L]
    hit <- truth[, 2L]
  } else {
    p <- as.vector(prob)
    hit <- as.vector(truth)
  }
  edges <- seq(0, 1, length.out = bins + 1L)
  bin <- findInterval(p, edges, rightmost.closed = TRUE, all.inside = TRUE)
  rows <- lapply(sort(unique(bin)), function(b) {
    inside <- bin == b
    n <- sum(inside)
    predicted <- mean(p[inside])
    range <- stats::qbinom(c(0.025, 0.975), n, predicted) / n
    data.frame(bin_lower = edges[b], bin_upper = edges[b + 1L], predicted = predicted,
               observed = mean(hit[inside]), lower = range[1], upper = range[2], n = n)
  })
  do.call(rbind, rows)
}

# plot(fit, which = "calibration"): the share against the mean probability,
# bin by bin; `env`, where plot() was called, holds the refits' data.
.plot_probability_calibration <- function(x, env, newdata = NULL, y = NULL, folds = 5, bins = 10,
                                          seed = 1, main = NULL, xlab = "predicted probability",
                                          ylab = "observed share", legend = "topleft", ...) {
  table <- .reliability_table(x, newdata, y, folds, bins, seed, env)
  graphics::plot(c(0, 1), c(0, 1), type = "n", xlab = xlab, ylab = ylab,
                 main = main %||% sprintf("Class probabilities, %s", attr(table, "source")), ...)
  graphics::abline(0, 1, lty = 2, col = "grey40")
  graphics::segments(table$predicted, table$lower, table$predicted, table$upper,
                     col = "#4682B466", lwd = 8, lend = 1)
  graphics::lines(table$predicted, table$observed, col = "navy")
  graphics::points(table$predicted, table$observed, pch = 20, col = "navy")
  if (!is.null(legend)) {
    graphics::legend(legend, legend = c("observed share", "calibrated",
                                        "95% range of a calibrated classifier's share"),
                     col = c("navy", "grey40", "#4682B466"), lty = c(1, 2, 1), lwd = c(1, 1, 8),
                     pch = c(20, NA, NA), bty = "n", cex = 0.8)
  }
  invisible(x)
}
