#' @importFrom generics tidy
#' @export
generics::tidy

#' @importFrom generics glance
#' @export
generics::glance

#' @importFrom generics augment
#' @export
generics::augment

#' Tidy summaries of gpsvm fits: tidy(), glance() and augment()
#'
#' Methods for the generics that broom uses (re-exported here from the
#' generics package, so they work with or without broom attached). Each
#' returns a tibble when the tibble package is installed, otherwise a data
#' frame, with broom's column names.
#'
#' @section tidy(): one row per weight of the kernel expansion:
#' * `term` the training row's name (its number when the inputs had no row
#'   names), or `"(Intercept)"` for a bias; `row` its index among the rows
#'   used in the fit;
#' * `estimate` the weight, in the units the model was fitted in (the scaled
#'   response when `scale = TRUE`), as [coef()] gives it: \eqn{\beta_i} for
#'   [svr()] (and the threshold `b` with `bias = TRUE`), \eqn{w_i} for
#'   [mfsvr()], the posterior mean weights of [rvm()] and [srvm()] (0 for
#'   pruned points), \eqn{y_i \alpha_i} for [gpc()] and [svc()] (one block of
#'   rows per class against the rest with three or more classes, named in
#'   `class`);
#' * `role` what the point is to the fit: for `svr()` and `svc()` `"margin"`
#'   (a support vector strictly inside the box, \eqn{0 < |\beta_i| < C}),
#'   `"bound"` (a support vector at `C`) or `"none"` (not a support vector);
#'   for `mfsvr()` `"bound"` (within 1% of `C`) or `"interior"`; for `rvm()`
#'   and `srvm()` `"relevance"` (kept), `"pruned"` or `"bias"`; for `gpc()`
#'   `"support"` (\eqn{\alpha_i > 0}) or `"none"`;
#' * for `rvm()` and `srvm()` also `std.error`, the posterior standard
#'   deviation of the weight (0 for pruned ones), `alpha`, its prior
#'   precision (`Inf` when pruned), and with `conf.int = TRUE` the Gaussian
#'   posterior interval `conf.low`, `conf.high`.
#'
#' @section glance(): one row: `nobs`; for the regression models `r.squared`
#' and `loo.r.squared`, \eqn{R^2} at the training rows and of the
#' leave-one-out predictions (`NA` for [svr()], see [regression-methods]);
#' `logLik`, `AIC`, `BIC` from [logLik()]
#' (for [gpc()] with `method = "tap"` and two classes or `multiclass =
#' "joint"`; `NA` for one-vs-rest models, which have no joint likelihood of
#' the labels, and for `method = "naive"`;
#' [svc()] has no evidence and no such columns); for the regression models
#' `sigma`, the noise standard deviation in the response's units ([sigma()]);
#' the kernel (`kernel`, its type, and `kernel.sigma`, the Gaussian width used,
#' or `NA` for other kernels and a width per input); the model's hyperparameters
#' on the scale it was fitted on (`C`, `epsilon`, `noise`, `kappa`, `bias`,
#' `lambda`, as the model has them; for a [gpc()] fit with three or more classes
#' whose evidence search chose a width, noise or kappa for each one-vs-rest
#' model, that column is `NA`: `print()` and `fit$models` give the values per
#' class); the number of support vectors (`n.support`: the non-zero weights of
#' `svr()` and `svc()`, summed over the one-vs-rest models) or relevance vectors
#' (`n.relevance`); `n.classes` for classifiers; whether a search by evidence
#' chose hyperparameters (`optimized`); the solver's convergence (`converged`,
#' `iter`); and `fit.time`, the seconds the fit took (the solver and any
#' evidence search, after the data were prepared).
#'
#' @section augment(): the data with one column per prediction added. For
#' regression fits: `.fitted` (the predicted mean), `.se.fit` (its standard
#' error, with `se_fit = TRUE`), `.lower` and `.upper` (the interval asked
#' for, see [predict.gpsvm_regression()]) and `.resid` (the response minus
#' `.fitted`, when the response is known: at the training rows, or in
#' `newdata` that holds it). For classifiers: `.pred_class` and, for
#' [gpc()] fits, `.pred_<level>`, the probability of each class. All in the
#' data's units. Rows of `newdata` with missing inputs get `NA`.
#'
#' Without `newdata` the predictions are at the training rows and go beside
#' `data`: the data frame the model was fitted to (all its rows, or only the
#' rows the fit used; rows dropped by `na.action = na.exclude` get `NA`, and
#' rows dropped by `na.omit` are dropped) or, by default, the fit's response
#' and inputs: for a formula fit its variables as the data gave them (a
#' factor as the factor, `wt` for `log(wt)`), for the matrix interface the
#' input columns, in the data's units. Row names other than R's automatic
#' numbers become a `.rownames` column, as in broom.
#'
#' @param x A gpsvm fit.
#' @param conf.int For `rvm()` and `srvm()` fits, add the columns `conf.low`
#'   and `conf.high`.
#' @param conf.level Coverage of those intervals and of `augment()`'s.
#' @param data For `augment()`, the data the model was fitted to (see
#'   "augment()"); `NULL` builds it from the fit.
#' @param newdata For `augment()`, new data to predict at (a data frame for
#'   formula fits; for the matrix interface a matrix or data frame with the
#'   training columns). It must hold every variable the model uses.
#' @param interval For regression fits, the interval in `.lower` and
#'   `.upper`: `"prediction"` (a new target), `"confidence"` (the regression
#'   function) or `"none"`.
#' @param se_fit For regression fits, add `.se.fit`.
#' @param ... For `augment()` of an [svr()] fit, `bound = TRUE` as in
#'   [predict.gpsvm_regression()]; otherwise unused (an error if given).
#' @return A tibble (or data frame): `tidy()` one row per weight, `glance()`
#'   one row, `augment()` one row per row of the data.
#' @examples
#' fit <- rvm(mpg ~ wt + hp, data = mtcars)
#' glance(fit)
#' tidy(fit, conf.int = TRUE)
#' head(augment(fit, data = mtcars))
#' augment(fit, newdata = data.frame(wt = c(2.5, 3.5), hp = c(100, 200)),
#'         interval = "confidence")
#' cls <- gpc(Species ~ Petal.Length + Petal.Width, data = iris)
#' glance(cls)
#' head(augment(cls, data = iris))
#' @name gpsvm-tidiers
NULL

# Each model gives its rows: .weight_frame() for the regression models (in
# their own files), .point_roles() for each binary model of a classifier.

#' @rdname gpsvm-tidiers
#' @export
tidy.gpsvm_regression <- function(x, ...) {
  .validate_fit(x)
  .needs_inputs(x, "tidy()")
  .as_tidy(.weight_frame(x, ...))
}

#' @rdname gpsvm-tidiers
#' @export
tidy.gpsvm_rvm <- function(x, conf.int = FALSE, conf.level = 0.95, ...) {
  .check_dots_empty(...)
  .validate_fit(x)
  .check_flag(conf.int, "conf.int")
  conf.level <- .check_level(conf.level, "conf.level")
  .as_tidy(.weight_frame(x, conf.int = conf.int, conf.level = conf.level))
}

#' @rdname gpsvm-tidiers
#' @export
tidy.gpsvm_classifier <- function(x, ...) {
  .check_dots_empty(...)
  .validate_fit(x)
  .needs_inputs(x, "tidy()")
  joint <- .is_joint(x)  # (one latent function per class, its weights)
  models <- if (!joint) .binary_models(x)
  positive <- if (joint) x$levels else if (.is_multiclass(x)) names(models) else x$levels[2L]
  blocks <- lapply(seq_along(positive), function(k) {
    out <- if (joint) .point_frame(x$x, x$weights[, k], .point_roles(x)) else
      .point_frame(x$x, models[[k]]$y * models[[k]]$alpha, .point_roles(models[[k]]))
    cbind(class = positive[k], out, stringsAsFactors = FALSE)
  })
  .as_tidy(do.call(rbind, blocks))
}

# One row per training point: its name, its index, its weight and role.
.point_frame <- function(inputs, estimate, role) {
  n <- nrow(inputs)
  data.frame(term = rownames(inputs) %||% as.character(seq_len(n)), row = seq_len(n),
             estimate = unname(as.vector(estimate)), role = unname(as.character(role)),
             stringsAsFactors = FALSE)
}

.bias_row <- function(b) {
  data.frame(term = "(Intercept)", row = NA_integer_, estimate = unname(b), role = "bias",
             stringsAsFactors = FALSE)
}

# Every fit's row (?gpsvm-tidiers): the evidence (.glance_evidence()), what
# the model adds (.glance_columns()), whether a search chose (.searched()).
.glance_evidence.gpsvm_regression <- function(x) .evidence_columns(logLik(x))
.evidence_columns <- function(ll) {
  value <- function(f) if (is.null(ll)) NA_real_ else f(ll)
  data.frame(logLik = value(c), AIC = value(stats::AIC), BIC = value(stats::BIC))
}
.searched.gpsvm_regression <- function(x) !is.null(x$optimization)
.searched.gpsvm_classifier <- function(x) {
  any(vapply(.binary_models(x), function(m) !is.null(m$optimization), logical(1)))
}

#' @rdname gpsvm-tidiers
#' @export
glance.gpsvm_regression <- function(x, ...) {
  .check_dots_empty(...)
  .validate_fit(x)
  r2 <- .r_squared(x)
  .as_tidy(.glance_row(
    nobs = nobs(x), r.squared = r2[["training"]], loo.r.squared = r2[["loo"]],
    .glance_evidence(x), sigma = sigma(x), .hyperparameter_columns(x),
    .glance_columns(x), optimized = .searched(x), .fit_record(x)))
}

#' @rdname gpsvm-tidiers
#' @export
glance.gpsvm_classifier <- function(x, ...) {
  .check_dots_empty(...)
  .validate_fit(x)
  .as_tidy(.glance_row(
    nobs = nobs(x), .glance_evidence(x), .hyperparameter_columns(x), .glance_columns(x),
    n.classes = length(x$levels), optimized = .searched(x), .fit_record(x)))
}

# One row of columns from the pieces given (data frames of one row, or
# single values), leaving out those that are NULL or empty.
.glance_row <- function(...) {
  parts <- Filter(function(part) length(part) > 0L, list(...))
  do.call(data.frame, c(parts, list(check.names = FALSE, stringsAsFactors = FALSE)))
}

# The kernel's type and width and the other hyperparameters, one number
# each: NA where one-vs-rest searches chose them apart (not the first's).
.hyperparameter_columns <- function(x) {
  h <- .hyperparameter_matrix(x)
  common <- as.list(apply(h, 2L, function(v) if (isTRUE(all(v == v[1L]))) v[1L] else NA_real_))
  kept <- setdiff(names(common), c("sigma", "noise_variance"))
  kept <- kept[!grepl("^sigma\\[", kept)]
  .glance_row(kernel = x$kernel$type, kernel.sigma = common[["sigma"]] %||% NA_real_, common[kept])
}

.fit_record <- function(x) {
  data.frame(converged = x$convergence$converged, iter = x$convergence$iterations,
             fit.time = x$fit_time)
}

#' @rdname gpsvm-tidiers
#' @export
augment.gpsvm_regression <- function(x, data = NULL, newdata = NULL,
                                     interval = c("prediction", "confidence", "none"),
                                     conf.level = 0.95, se_fit = TRUE, ...) {
  interval <- .match_choice(interval)
  conf.level <- .check_level(conf.level, "conf.level")
  .check_flag(se_fit, "se_fit")
  .validate_fit(x)
  predict_at <- function(object, newdata) {
    p <- stats::predict(object, newdata, se.fit = TRUE, interval = interval,
                        level = conf.level, ...)
    fit <- if (interval == "none") p$fit else p$fit[, "fit"]
    out <- data.frame(.fitted = unname(fit))
    if (se_fit) out$.se.fit <- unname(p$se.fit)
    if (interval != "none") {
      out$.lower <- unname(p$fit[, "lwr"])
      out$.upper <- unname(p$fit[, "upr"])
    }
    out
  }
  if (!is.null(newdata)) {
    out <- predict_at(x, newdata)
    response <- .newdata_response(x, newdata)
    if (!is.null(response)) out$.resid <- response - out$.fitted
    return(.augment_frame(.newdata_frame(x, newdata), out))
  }
  out <- predict_at(.without_na_action(x), NULL)
  out$.resid <- unname(x$residuals)
  .augment_training(x, data, out, x$y)
}

#' @rdname gpsvm-tidiers
#' @export
augment.gpsvm_classifier <- function(x, data = NULL, newdata = NULL, ...) {
  .check_dots_empty(...)
  .validate_fit(x)
  predict_at <- function(object, newdata) {
    out <- data.frame(.pred_class = stats::predict(object, newdata, type = "class"))
    if (.gives_probabilities(object)) {
      p <- stats::predict(object, newdata, type = "prob")
      for (level in colnames(p)) out[[paste0(".pred_", level)]] <- unname(p[, level])
    }
    rownames(out) <- NULL
    out
  }
  if (!is.null(newdata)) {
    return(.augment_frame(.newdata_frame(x, newdata), predict_at(x, newdata)))
  }
  .augment_training(x, data, predict_at(.without_na_action(x), NULL), x$classes)
}

# The fit as if no rows had been dropped, so that predict() gives one value
# per row used (not padded for na.exclude).
.without_na_action <- function(x) {
  x$na.action <- NULL
  .seal(x)
}

# The data augment() shows by default: the response, then a formula fit's
# variables as the data gave them, or the input columns in the data's units.
.fitted_data <- function(x, response) {
  inputs <- x$variables %||% .input_frame(.original_inputs(x))
  data <- cbind(stats::setNames(data.frame(response), .response_name(x)), inputs)
  # the rows' names, unless they are R's automatic numbers 1..n
  rows <- rownames(x$x)
  rownames(data) <- if (!identical(rows, as.character(seq_along(rows)))) rows
  data
}

# Predictions at the training rows beside `data` (na.action's rows dropped,
# or NA for na.exclude), or beside the fit's inputs and response.
.augment_training <- function(x, data, out, response) {
  used <- nrow(x$x)
  if (is.null(data)) return(.augment_frame(.fitted_data(x, response), out))
  if (!is.data.frame(data) && !is.matrix(data)) {
    .stop("'data' must be the data frame the model was fitted to")
  }
  data <- as.data.frame(data, optional = TRUE)
  dropped <- x$na.action
  if (nrow(data) == used) return(.augment_frame(data, out))
  if (is.null(dropped) || nrow(data) != used + length(dropped)) {
    .stop(sprintf("'data' has %d rows but the model was fitted to %d%s", nrow(data), used,
                  if (!is.null(dropped)) sprintf(" (%d more dropped for missing values)",
                                                 length(dropped)) else ""))
  }
  if (!inherits(dropped, "exclude")) return(.augment_frame(data[-dropped, , drop = FALSE], out))
  idx <- rep(NA_integer_, nrow(data))
  idx[-dropped] <- seq_len(used)
  padded <- out[idx, , drop = FALSE]
  rownames(padded) <- NULL
  .augment_frame(data, padded)
}

# Inputs of the matrix interface as a data frame, its columns named as in
# the matrix, else x (one column) or x1, x2, ...
.input_frame <- function(m) {
  if (is.null(colnames(m))) {
    colnames(m) <- if (ncol(m) == 1L) "x" else paste0("x", seq_len(ncol(m)))
  }
  as.data.frame(m, optional = TRUE)
}

# newdata as augment() shows it: a formula fit's data frame as given; for
# the matrix interface, the inputs as predict() reads them.
.newdata_frame <- function(x, newdata) {
  if (!is.null(x$terms)) return(newdata)
  .input_frame(.newdata_matrix(x, newdata))
}

# The data with the prediction columns after its own (replacing namesakes)
# and a .rownames column for row names other than R's automatic ones.
.augment_frame <- function(data, out) {
  data <- as.data.frame(data, optional = TRUE)
  if (.row_names_info(data) > 0L) {
    data <- cbind(.rownames = rownames(data), data, stringsAsFactors = FALSE)
  }
  rownames(data) <- NULL
  data[names(out)] <- out
  .as_tidy(data)
}

.response_name <- function(x) {
  if (!is.null(x$terms)) deparse(x$terms[[2L]]) else "y"
}

# A formula fit's response in newdata, where it can be computed (else NULL).
.newdata_response <- function(x, newdata) {
  if (is.null(x$terms) || !is.data.frame(newdata)) return(NULL)
  if (!all(all.vars(x$terms[[2L]]) %in% names(newdata))) return(NULL)
  y <- tryCatch(eval(x$terms[[2L]], newdata, environment(x$terms)), error = function(e) NULL)
  if (is.numeric(y) && length(y) == nrow(newdata)) as.vector(y) else NULL
}

# broom's tidiers return tibbles; without the tibble package, a data frame.
.as_tidy <- function(df) {
  rownames(df) <- NULL
  if (requireNamespace("tibble", quietly = TRUE)) tibble::as_tibble(df) else df
}
