# The layer svc() and gpc() share (class "gpsvm_classifier"); a method adds
# only what is its own, through the internal generics of generics.R.
#
# A two-class fit is one binary model: a list with alpha, fitted.values, x,
# y (coded -1/+1) and the model's settings.  With K >= 3 classes the fit
# holds the settings, x and `models`, K binary fits of "class k against the
# rest" named by the levels, and its fitted.values are an n x K matrix.  Both
# carry `levels`, `classes` (the training labels), `scaling` and
# `bias_variance`.

# The classes as a factor and its levels.  A factor keeps its levels (the
# second is +1 in two-class fits, as glm()'s "success"); logicals and
# characters go through factor(); numbers must be 0/1 or -1/+1.
.classif_labels <- function(y, n, arg = "y") {
  if (is.data.frame(y) && ncol(y) == 1L) y <- y[[1L]]
  if (!is.null(dim(y)) && NCOL(y) != 1L) .stop(sprintf("'%s' must be a vector of labels", arg))
  if (length(y) != n) {
    .stop(sprintf("'%s' has %d labels but 'x' has %d rows", arg, length(y), n))
  }
  if (anyNA(y)) .stop(sprintf("'%s' contains missing values", arg))
  if (is.numeric(y) && !is.object(y)) y <- .numeric_labels(y, arg)
  if (is.logical(y) || is.character(y)) y <- factor(y)
  if (!is.factor(y)) {
    .stop(sprintf("'%s' must be a factor, a character or logical vector, or 0/1 or -1/+1 numbers",
                  arg))
  }
  y <- factor(y, levels = levels(y))  # an ordered factor's classes are unordered here
  lev <- levels(y)
  counts <- tabulate(y, length(lev))
  if (sum(counts > 0L) < 2L) {
    .stop(sprintf("'%s' has one class only (%s); a classifier needs two or more", arg,
                  paste0("'", lev[counts > 0L], "'", collapse = "")))
  }
  if (any(counts == 0L)) {
    .stop(sprintf("'%s' has no cases of level(s) %s; drop unused levels with droplevels()", arg,
                  .quote_names(lev[counts == 0L])))
  }
  list(classes = y, levels = lev)
}

# The number of distinct labels in y, before .classif_labels() checks them
# (for choices that depend on it: the search over a width per input).
.class_count <- function(y) {
  if (is.data.frame(y) && ncol(y) == 1L) y <- y[[1L]]
  length(unique(y[!is.na(y)]))
}

# Numeric labels as a factor: 0/1 or -1/+1 codes only, since other numbers
# (1, 2, 3 or a continuous response) are more likely a mistake than classes.
.numeric_labels <- function(y, arg) {
  if (all(y %in% c(-1, 1))) return(factor(y, levels = intersect(c(-1, 1), y)))
  if (all(y %in% c(0, 1))) return(factor(y, levels = intersect(c(0, 1), y)))
  .stop(sprintf(paste("numeric '%s' must hold only 0 and 1, or -1 and +1; use a factor for",
                      "other codes"), arg))
}

# -1/+1 codes of one binary problem: +1 for `positive`, -1 for the rest.
.binary_codes <- function(classes, positive) ifelse(classes == positive, 1, -1)

# Shared by gpc() and svc(): check the labels, scale the inputs, choose the
# kernel width, add the bias, and fit `fit_binary(x, y, kernel)` once (two
# classes) or once per class against the rest (or `fit_joint` once).  `what`
# names the solver in warnings.  The inducing inputs are chosen once, on the
# scaled inputs, and passed as fit_binary(x, y, kernel, inducing = z).
.classif_train <- function(x, y, kernel, bias, scale, fit_binary, what, inducing = NULL,
                           call = NULL, fit_joint = NULL) {
  given <- .input_matrix(x)
  labels <- .classif_labels(y, nrow(given$x))
  bias <- .check_number(bias, "bias", lower = 0)
  inputs <- .model_inputs(given, kernel, scale)
  x <- inputs$x
  .check_bias_scale(bias, inputs$kernel, x)
  kernel <- .with_bias(inputs$kernel, bias)
  z <- .inducing_inputs(inducing, x, kernel,
                        .with_input_widths(inputs$scaling, kernel, inputs$xs))
  lev <- labels$levels
  start <- proc.time()[["elapsed"]]
  fit <- tryCatch({
    if (length(lev) > 2L && !is.null(fit_joint)) {
      fit_joint(x, labels, kernel, z)
    } else {
      .classif_models(x, labels, kernel,
                      if (is.null(z)) fit_binary else .with_inducing(fit_binary, z), what)
    }
  }, error = function(e) {
    .explain_failure(e, x, inputs$kernel, as.character(call[[1L]] %||% "gpc"),
                     scaled = !is.null(inputs$scaling))
  })
  # (one-vs-rest warns per class inside .one_vs_rest)
  if (length(lev) == 2L || !is.null(fit_joint)) .warn_not_converged(what, fit$convergence)
  fit$fit_time <- proc.time()[["elapsed"]] - start  # seconds, for glance()
  fit$levels <- lev
  fit$classes <- stats::setNames(labels$classes, rownames(x))
  # an evidence search may have moved the widths per input (two classes)
  fit$scaling <- .with_input_widths(inputs$scaling, fit$kernel, inputs$xs)
  fit$bias_variance <- bias
  fit$call <- call
  if (!is.null(fit$models)) fit$models <- lapply(fit$models, .seal)
  .seal(fit)
}

# fit_binary(x, y, kernel) fitted on the inducing inputs z (a closure that
# holds only these two, as it travels to the future plan's workers).
.with_inducing <- function(fit_binary, z) {
  force(fit_binary)
  function(x, y, kernel) fit_binary(x, y, kernel, inducing = z)
}

# The kernel the solvers see: the user's kernel plus the constant `bias`, the
# prior variance of an offset b ~ N(0, bias) shared by all activations (the
# process mean section 17.3 identifies with the SVM's threshold).
.with_bias <- function(kernel, bias) {
  kernel$constant <- if (bias > 0) bias else NULL
  kernel
}

# One binary model for two classes (the caller warns if it did not
# converge), else one per class against the rest.
.classif_models <- function(x, labels, kernel, fit_binary, what) {
  lev <- labels$levels
  if (length(lev) > 2L) return(.one_vs_rest(x, labels, kernel, fit_binary, what))
  fit_binary(x, .binary_codes(labels$classes, lev[2L]), kernel)
}

# K >= 3 classes: one binary model per class against the rest, fitted
# wherever the future plan sends them; the fit keeps their shared settings.
.one_vs_rest <- function(x, labels, kernel, fit_binary, what) {
  lev <- labels$levels
  models <- .future_map(lev, function(l) fit_binary(x, .binary_codes(labels$classes, l), kernel))
  names(models) <- lev
  for (l in lev) {
    .warn_not_converged(sprintf("%s (class '%s' against the rest)", what, l), models[[l]]$convergence)
  }
  fit <- models[[1L]][c("x", "kernel", .setting_names(models[[1L]]))]
  fit$models <- models
  fit$fitted.values <- .decision_matrix(models, lapply(models, `[[`, "fitted.values"), rownames(x))
  fit$convergence <- .combined_convergence(models)
  structure(fit, class = class(models[[1L]]))
}

# Column k holds model k's values (one per input row).
.decision_matrix <- function(models, values, rows) {
  matrix(unlist(values, use.names = FALSE), ncol = length(models),
         dimnames = list(rows, names(models)))
}

# One convergence record for K models: converged when all did, with the
# largest iteration count and change.
.combined_convergence <- function(models) {
  cv <- lapply(models, `[[`, "convergence")
  ok <- vapply(cv, `[[`, logical(1), "converged")
  .convergence(all(ok), max(vapply(cv, `[[`, integer(1), "iterations")),
               max(vapply(cv, `[[`, numeric(1), "change")), cv[[1L]]$tol,
               if (all(ok)) NA_character_ else
                 sprintf("not for class(es) %s", .quote_names(names(models)[!ok])))
}

# The binary models of a fit: itself for two classes, else its K models.
.binary_models <- function(object) {
  if (is.null(object$models)) list(object) else object$models
}

.is_multiclass <- function(object) !is.null(object$models)

# The activation f(x) = sum_j k(x, x_j) y_j alpha_j (eqs. 17.20, 17.35) with
# the noise-free kernel, over the points with nonzero weight only.
.kernel_expansion_link <- function(model, x) {
  w <- model$y * model$alpha
  used <- which(w != 0)
  .kernel_expansion(model$kernel, x, model$x[used, , drop = FALSE], w[used])
}

# Decision values at scaled inputs: a vector for two classes, an n x K
# matrix (one column per class against the rest) otherwise.
.classif_decision <- function(object, x) {
  if (.is_joint(object)) return(.joint_moments(object, x)$mean)
  if (!.is_multiclass(object)) return(stats::setNames(.classif_link(object, x), rownames(x)))
  links <- lapply(object$models, function(m) .classif_link(m, x))
  .decision_matrix(object$models, links, rownames(x))
}

# Classes from decision values: for two classes the second level where
# f >= 0; for K classes the one whose model against the rest gives the
# largest activation (the first on ties).
.classif_class <- function(object, f) {
  lev <- object$levels
  idx <- if (is.matrix(f)) max.col(f, ties.method = "first") else ifelse(f >= 0, 2L, 1L)
  stats::setNames(factor(lev[idx], levels = object$response_levels %||% lev),
                  if (is.matrix(f)) rownames(f) else names(f))
}

# kappa + (1 - 2 kappa) Phi(f / s): probability of the label +1 under the
# flip-noise probit likelihood, with s the spread of the local field.
.flip_probit <- function(f, s, kappa) {
  kappa + (1 - 2 * kappa) * stats::pnorm(f / s)
}

# Predictions at newdata (NULL: the training inputs): `what(object, x, f)`
# turns the fit (its inputs extended for unseen factor levels,
# .prediction_inputs()), the scaled inputs and their decision values into
# the output, one row per input, or a list of those.  Rows with missing
# values, and at the training inputs those na.exclude dropped, get NA.
.classif_predict <- function(object, newdata, what, na.action = stats::na.pass,
                             new_levels = "predict") {
  .validate_fit(object)
  inputs <- .prediction_inputs(object, newdata, na.action, new_levels)
  if (is.null(newdata)) {
    value <- what(object, object$x, object$fitted.values)
    return(.map_output(value, function(v) stats::napredict(object$na.action, v)))
  }
  object <- inputs$object
  # with no complete row, compute at one training input and keep none of it
  x <- if (nrow(inputs$x) > 0L) inputs$x else object$x[1L, , drop = FALSE]
  value <- what(object, x, .classif_decision(object, x))
  .map_output(value, function(v) .pad_rows(v, inputs$keep, inputs$names))
}

.map_output <- function(value, f) {
  if (is.list(value) && !is.data.frame(value)) lapply(value, f) else f(value)
}

#' @export
nobs.gpsvm_classifier <- function(object, ...) {
  .validate_fit(object)
  length(object$classes)
}

#' Fitted values of a kernel classifier
#'
#' The predictions at the training inputs: `fitted(object, type)` is
#' `predict(object, type = type)`. With `na.action = na.exclude` in the
#' formula, the cases left out get `NA`, as in [stats::lm()].
#'
#' A classifier has no residuals: `residuals()` of one is an error that
#' says so, rather than `NULL`. Its training errors are where
#' `fitted(object)` differs from the classes, and for [gpc()] fits the class
#' probabilities `fitted(object, type = "prob")` say how sure it is of each
#' case.
#'
#' @param object A fit from [svc()] or [gpc()].
#' @param type `"class"`, `"link"` or (for [gpc()] fits) `"prob"`; see
#'   [predict.gpsvm_gpc()] and [predict.gpsvm_svc()].
#' @param ... Not used; unknown arguments are an error.
#' @return A factor of classes, a vector or matrix of decision values, or a
#'   matrix of class probabilities, one element or row per training case.
#' @examples
#' set.seed(1)
#' x <- matrix(rnorm(40), 20, 2)
#' y <- factor(ifelse(x[, 1] + x[, 2] > 0, "b", "a"))
#' fit <- gpc(x, y)
#' table(fitted(fit), y)
#' @export
fitted.gpsvm_classifier <- function(object, type = c("class", "link", "prob"), ...) {
  .check_dots_empty(...)
  type <- .match_choice(type)
  stats::predict(object, type = type)
}

#' @rdname fitted.gpsvm_classifier
#' @export
residuals.gpsvm_classifier <- function(object, ...) {
  .stop(paste("a classifier has no residuals: compare fitted(fit) with the classes for its",
              "training errors, or use fitted(fit, type = \"prob\") for a gpc() fit's class",
              "probabilities"))
}

# Training confusion table and error, for summaries.
.classif_training <- function(object) {
  # (a fit to partitions has no inputs to predict at; NULL: not available)
  if (!is.null(object$partitions)) return(NULL)
  truth <- object$classes
  pred <- factor(stats::predict(object, type = "class"), levels = levels(truth))
  if (!is.null(object$na.action)) pred <- pred[!is.na(pred)]
  list(table = table(predicted = pred, observed = truth), error = mean(pred != truth))
}

# Prints the training error and the confusion table, or, where the table
# would wrap at the console's width (many classes with long names), each
# class's count and errors on one line; the table stays in the summary.
.print_training <- function(training) {
  if (is.null(training)) {
    cat("Training error: not computed (a fit to data in partitions keeps no inputs; predict() at",
        "the partitions for it)\n")
    return(invisible())
  }
  cat(sprintf("Training error: %.4f\n", training$error))
  tab <- training$table
  shown <- .printed_unwrapped(tab)
  if (max(nchar(shown)) <= getOption("width")) {
    writeLines(shown)
    return(invisible())
  }
  cases <- colSums(tab)
  errors <- cases - diag(tab)
  keep <- cases > 0
  cat("By class (the confusion table, too wide to print here, is summary(fit)$training$table):\n")
  print(data.frame(observed = names(cases)[keep], cases = as.vector(cases[keep]),
                   errors = as.vector(errors[keep]),
                   error = round(as.vector(errors[keep] / cases[keep]), 4)), row.names = FALSE)
  invisible()
}

# What print(x) writes on a console as wide as R allows.
.printed_unwrapped <- function(x) {
  old <- options(width = 10000L)
  on.exit(options(old))
  utils::capture.output(print(x))
}

#' @export
print.gpsvm_classifier <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  .validate_fit(x)
  .print_header(x)
  cat(.classifier_kernel_line(x), .format_scaling(x), .classes_line(x), sep = "\n")
  # (cat(NULL, sep = "\n") would print an empty line)
  writeLines(as.character(c(.missing_line(x$na.action), .unused_levels_line(x))))
  writeLines(.model_lines(x, digits))
  writeLines(.plan_lines(x$plan))
  writeLines(.convergence_lines(x))
  invisible(x)
}

# The solver's convergence, one line per one-vs-rest model when there are
# several (which model did not converge is what a user needs to know).
.convergence_lines <- function(x) {
  if (!.is_multiclass(x)) return(.format_convergence(x$convergence))
  c("Solvers, one per class against the rest:",
    sprintf("  %s: %s", names(x$models),
            vapply(x$models, function(m) .format_convergence(m$convergence), character(1))))
}

# The kernel (with the width chosen) and the bias, on one line; with K >= 3
# classes whose evidence searches each chose a width, those widths are
# printed per model instead.
.classifier_kernel_line <- function(x) {
  raw <- format(x$kernel)
  # a wrapped line (deeper indent: a long list of widths per input) continues
  # the one before it
  lines <- vapply(split(trimws(raw), cumsum(!startsWith(raw, "    "))), paste, character(1),
                  collapse = " ")
  if (.widths_per_model(x)) lines[startsWith(lines, "sigma")] <- "sigma chosen per model (below)"
  paste(lines, collapse = "; ")
}

# Whether the one-vs-rest models' evidence searches chose a width each.
.widths_per_model <- function(object) {
  models <- .binary_models(object)
  length(models) > 1L && "sigma" %in% names(models[[1L]]$optimization$estimate)
}

.classes_line <- function(x) {
  k <- length(x$levels)
  sprintf("%d cases, %d classes: %s%s", length(x$classes), k, paste(x$levels, collapse = ", "),
          if (.is_joint(x)) " (one joint model)" else if (k > 2L)
            " (one model per class against the rest)" else "")
}

.unused_levels_line <- function(x) {
  unused <- setdiff(x$response_levels, x$levels)
  if (length(unused) > 0L) sprintf("no training case of level(s) %s: never predicted",
                                   .quote_names(unused))
}

# All the levels of the data's class factor, kept as `response_levels` when
# some have no training case, so that predicted classes compare with it.
.keep_response_levels <- function(fit, levels) {
  if (length(setdiff(levels, fit$levels)) == 0L) return(fit)
  fit$response_levels <- levels
  .seal(fit)
}
