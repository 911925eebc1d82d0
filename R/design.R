# The pieces every model's R layer shares: formula -> design, newdata ->
# matrix, intervals, logLik objects.  A model's formula method calls
# .fit_formula() (or .formula_design()), its default method .as_input_matrix()
# / .check_targets(), and its predict method .prediction_inputs() and
# .prediction_output().

# Evaluate model.frame() in the caller's caller, as lm() does, and return the
# numeric design (no intercept column: kernels need none), the response and
# what predict() needs to rebuild the design for new data.  `variables` holds
# the input variables as the data gave them, untransformed, at the rows used
# (a data frame, or NULL when they cannot be evaluated on their own), so that
# plots can be drawn against them whatever the formula does to them
# (y ~ log(x)), with their medians and levels, and augment() can show them.
.formula_design <- function(call, env, data = eval(call$data, env)) {
  mf_call <- call[c(1L, match(c("formula", "data", "subset", "na.action"), names(call), 0L))]
  # the data's value, not its expression: model.frame() and the frames of
  # the raw variables and the response's levels below would each evaluate
  # an expression such as read.csv(...) again
  if (!is.null(data)) mf_call$data <- data
  mf_call$drop.unused.levels <- TRUE
  mf_call[[1L]] <- quote(stats::model.frame)
  mf <- eval(mf_call, env)
  if (nrow(mf) == 0L) {
    .stop(paste("no rows of 'data' are left to fit (after 'subset' and 'na.action', where",
                "given): a model needs at least one observation"))
  }
  .refuse_offset(attr(mf, "terms"))
  terms <- .drop_unused_variables(attr(mf, "terms"))
  .check_factor_inputs(mf, terms)
  attr(terms, "intercept") <- 0L
  x <- .distinct_column_names(stats::model.matrix(terms, mf), terms)
  if (ncol(x) == 0L) {
    .stop("'formula' names no inputs (as y ~ 1 does): a kernel model needs at least one")
  }
  # columns coding factors (dummies) are not standardised, as in e1071's
  # formula interface
  factor_column <- .factor_coded_columns(x, terms)
  contrasts <- attr(x, "contrasts")
  attr(x, "assign") <- NULL
  attr(x, "contrasts") <- NULL
  variables <- .formula_variables(mf_call, mf, terms, env)
  y <- stats::model.response(mf)
  list(x = x, y = y, terms = terms, factor_column = factor_column, contrasts = contrasts,
       xlevels = stats::.getXlevels(terms, mf), na.action = attr(mf, "na.action"),
       variables = variables,
       response_levels = if (is.factor(y)) .response_levels(mf_call, terms, env))
}

# Which columns of a model matrix code factors (its "assign" and
# "contrasts" attributes still on).
.factor_coded_columns <- function(x, terms) {
  attr(x, "assign") %in% which(attr(terms, "term.labels") %in% names(attr(x, "contrasts")))
}

# The model matrix with distinct column names.  model.matrix() names a
# factor's columns by pasting the variable's name and the level, which can
# repeat another input's name (mlbench's Ozone: factor V1's level 1 codes
# "V11", and V11 is a variable of its own), and the inputs must tell their
# columns apart (.input_matrix()).  The other inputs keep their names and
# the factor's columns take make.unique()'s suffix ("V11.1"); predict()
# builds the columns from the same terms in the same order, so it renames
# them alike.
.distinct_column_names <- function(x, terms) {
  names <- colnames(x)
  if (!anyDuplicated(names)) return(x)
  order_kept <- order(.factor_coded_columns(x, terms))
  names[order_kept] <- make.unique(names[order_kept])
  colnames(x) <- names
  x
}

# An offset() term would be dropped by the design (y ~ x + offset(w) fitted
# y ~ x, and y ~ . + offset(w) took w as an input): the models have a zero
# prior mean and nothing to add a known one to, so the formula is refused.
.refuse_offset <- function(terms) {
  offset <- attr(terms, "offset")
  if (is.null(offset)) return(invisible())
  shown <- .variable_names(terms)[offset]
  .stop(sprintf(paste("'formula' has the offset %s, which these models cannot take (their prior",
                      "mean is zero); fit the response minus it instead, e.g. I(y - w) ~ x for",
                      "y ~ x + offset(w)"), paste(shown, collapse = ", ")))
}

# Terms without the variables that no term uses, such as Id in
# "Class ~ . - Id": model.frame() keeps them, so otherwise predict() would
# need them in newdata and would refuse their new levels (an identifier has
# nothing but new levels), a one-level factor the formula removed would be
# refused, and plots would offer them as inputs; e1071 and kernlab ignore
# them. The design is built from these terms, so that training and
# prediction code the same columns. The response and the predvars of the
# variables kept (the bases poly() or ns() fitted to the training data) are
# kept (an offset was refused before).
.drop_unused_variables <- function(terms) {
  factors <- attr(terms, "factors")
  response <- attr(terms, "response")
  if (length(factors) == 0L) return(terms)
  used <- rowSums(factors != 0L) > 0L
  used[response] <- TRUE
  if (all(used)) return(terms)
  formula <- stats::reformulate(attr(terms, "term.labels"),
                                response = if (response > 0L) terms[[2L]],
                                intercept = attr(terms, "intercept") == 1L,
                                env = environment(terms))
  out <- stats::terms(formula, keep.order = TRUE)
  old <- .variable_names(terms)
  kept <- match(.variable_names(out), old)
  if (!is.null(predvars <- attr(terms, "predvars"))) {
    attr(out, "predvars") <- as.call(c(quote(list), as.list(predvars)[-1L][kept]))
  }
  if (!is.null(classes <- attr(terms, "dataClasses"))) {
    attr(out, "dataClasses") <- classes[old[kept]]
  }
  out
}

# The variables of terms as model.frame() names its columns.
.variable_names <- function(terms) {
  vapply(as.list(attr(terms, "variables"))[-1L], function(v) {
    paste(deparse(v, width.cutoff = 500L, backtick = !is.symbol(v) && is.language(v)),
          collapse = " ")
  }, "")
}

# The model frame of `mf_call` with the formula "~ rhs" instead, NA rows and
# unused factor levels kept (NULL when it cannot be evaluated: a name in
# the formula that is a constant of the environment, not a variable of the
# data).
.raw_frame <- function(mf_call, rhs, terms, env) {
  mf_call$formula <- stats::as.formula(call("~", rhs), env = environment(terms))
  mf_call$na.action <- quote(stats::na.pass)
  mf_call$drop.unused.levels <- NULL
  tryCatch(eval(mf_call, env), error = function(e) NULL)
}

# All levels of a factor response, as the data (and subset) give them:
# model.frame() drops those no case used has, so a subset of two of three
# classes is a two-class fit, but the classifiers' predicted classes keep
# them, so that they compare with the data's own factor (e1071 and kernlab
# do the same).
.response_levels <- function(mf_call, terms, env) {
  raw <- .raw_frame(mf_call, attr(terms, "variables")[[1L + attr(terms, "response")]], terms, env)
  if (!is.null(raw) && is.factor(raw[[1L]])) levels(raw[[1L]])
}

# A factor input with one level left in the rows used (a subset, or NA rows
# dropped) cannot be coded; say which, instead of model.matrix()'s message
# about contrasts.
.check_factor_inputs <- function(mf, terms) {
  inputs <- setdiff(.variable_names(terms), names(mf)[attr(terms, "response")])
  single <- Filter(function(v) {
    (is.factor(mf[[v]]) || is.character(mf[[v]])) && length(unique(mf[[v]])) < 2L
  }, inputs)
  if (length(single) > 0L) {
    .stop(sprintf("input %s has a single level in the data used; drop it from the formula",
                  paste0("'", single, "'", collapse = ", ")))
  }
}

# The input variables of a formula, untransformed, at the rows of the model
# frame `mf`: the model frame of "~ a + b + ..." over the same data and
# subset, NA rows kept so that its rows can be matched to those of `mf`.
# NULL when they cannot be evaluated on their own (a name in the formula that
# is a constant of the environment, not a variable of the data).
.formula_variables <- function(mf_call, mf, terms, env) {
  names <- all.vars(stats::delete.response(terms))
  if (length(names) == 0L) return(NULL)
  rhs <- Reduce(function(a, b) call("+", a, b), lapply(names, as.name))
  raw <- .raw_frame(mf_call, rhs, terms, env)
  if (is.null(raw) || ncol(raw) != length(names)) return(NULL)
  out <- raw[match(rownames(mf), rownames(raw)), , drop = FALSE]
  attr(out, "terms") <- NULL
  names(out) <- names
  rownames(out) <- NULL
  out
}

# The one input variable of a formula when it is a numeric vector (a
# one-column data frame), else NULL.
.formula_variable <- function(variables) {
  if (is.null(variables) || ncol(variables) != 1L) return(NULL)
  values <- variables[[1L]]
  if (!is.numeric(values) || is.object(values) || !is.null(dim(values))) return(NULL)
  variables
}

# A formula method's whole body, for every model: build the design from the
# call as the user typed it, fit with the model's default method (factor
# dummy columns marked so that scaling leaves them alone, see
# .input_matrix()) and keep what predict() and plot() need.
.fit_formula <- function(call, env, generic, default, ...) {
  call <- .generic_call(call, generic)
  data <- eval(call$data, env)
  if (inherits(data, "gpsvm_partitions")) return(.fit_partitions(call, env, generic, data, ...))
  design <- .formula_design(call, env, data)
  x <- design$x
  attr(x, "factor_column") <- design$factor_column
  .add_formula_parts(default(x, design$y, ...), design, call)
}

# The call a fit stores, named after the generic (svr(...), not
# svr.formula(...)), so that print() shows what the user typed and update()
# re-dispatches on the new arguments.
.generic_call <- function(call, generic) {
  call[[1L]] <- as.name(generic)
  call
}

# Attach the formula pieces to a fit made by the default method (and, for
# a classifier, the class factor's levels that no training case has).
.add_formula_parts <- function(fit, design, call) {
  fit <- .keep_response_levels(fit, design$response_levels)
  fit$terms <- design$terms
  fit$xlevels <- design$xlevels
  fit$contrasts <- design$contrasts
  fit$na.action <- design$na.action
  fit$variables <- design$variables
  fit$call <- call
  .seal(fit)
}

# The formula of a fit by the formula interface, without the attributes of
# its terms (as formula() of an lm fit gives it).
.model_formula <- function(x) {
  .validate_fit(x)
  if (is.null(x$terms)) .stop("the fit has no formula: it was fitted to a matrix and a response")
  stats::formula(x$terms)
}

#' @importFrom stats formula
#' @export
formula.gpsvm_regression <- function(x, ...) .model_formula(x)

#' @export
formula.gpsvm_classifier <- function(x, ...) .model_formula(x)

# The input matrix of the fit in the data's units, as model.matrix() of an lm
# fit (model.matrix.default would look for the response in the formula's
# environment; fit$x holds the inputs scaled).
#' @importFrom stats model.matrix
#' @export
model.matrix.gpsvm_regression <- function(object, ...) {
  .validate_fit(object)
  .original_inputs(object)
}

#' @export
model.matrix.gpsvm_classifier <- function(object, ...) {
  .validate_fit(object)
  .original_inputs(object)
}

# Numeric targets: finite, one per row of x.
.check_targets <- function(y, n, arg = "y") {
  if (is.data.frame(y) && ncol(y) == 1L) y <- y[[1L]]
  if (is.factor(y) || is.logical(y) || is.character(y)) {
    .stop(sprintf(paste("'%s' must be a numeric vector, not %s: these are regression models;",
                        "gpc() and svc() classify"), arg,
                  if (is.factor(y)) "a factor" else if (is.logical(y)) "logical" else "text"))
  }
  if (!is.numeric(y) || !is.null(dim(y)) && NCOL(y) != 1L) {
    .stop(sprintf("'%s' must be a numeric vector (one response)", arg))
  }
  y <- as.double(y)
  if (length(y) != n) {
    .stop(sprintf("'%s' has %d values but 'x' has %d rows", arg, length(y), n))
  }
  if (anyNA(y)) .stop(sprintf("'%s' contains missing values (NA or NaN)", arg))
  if (any(!is.finite(y))) .stop(sprintf("'%s' contains infinite values", arg))
  .check_representable(y, sprintf("'%s'", arg))
}

# The input matrix for predict(): the training inputs when newdata is NULL,
# else newdata through the stored terms (formula fits) or as a matrix with
# the training columns, on the original scale; rows of newdata may hold
# missing values (see .prediction_inputs()).  Factor levels training never
# saw are refused with new_levels = "error", else coded as new directions
# (.new_level_directions()), which the matrix carries as its attribute
# "new_directions".
.newdata_matrix <- function(object, newdata, new_levels = "error") {
  if (is.null(newdata)) return(object$x)
  if (!is.null(object$terms)) {
    if (!is.data.frame(newdata) && !is.list(newdata)) {
      .stop("'newdata' must be a data frame for a model fitted with a formula")
    }
    .check_newdata_variables(object, newdata)
    tt <- stats::delete.response(object$terms)
    # as predict.lm: a variable of another type (a number given as text)
    # would otherwise become other columns
    coded <- tryCatch({
      mf <- stats::model.frame(tt, newdata, na.action = stats::na.pass)
      coded <- .code_training_levels(mf, object$xlevels, new_levels)
      if (!is.null(classes <- attr(tt, "dataClasses"))) {
        stats::.checkMFClasses(classes, coded$mf)
      }
      coded
    }, error = function(e) .stop(sprintf("'newdata' does not fit the model: %s",
                                        conditionMessage(e))))
    # the fit's contrasts, as predict.lm() uses them: a factor given as text
    # (or an ordered factor as a plain one) would otherwise take the session's
    # default contrasts, other columns under the same positions
    x <- .distinct_column_names(
      stats::model.matrix(tt, coded$mf, contrasts.arg = .fit_contrasts(object, coded$mf)), tt)
    if (!identical(colnames(x), colnames(object$x))) {
      .stop(sprintf("'newdata' codes to the columns %s, where the fit has %s",
                    paste(colnames(x), collapse = ", "),
                    paste(colnames(object$x), collapse = ", ")))
    }
    directions <- .new_level_directions(x, coded$unseen, tt, object$scaling)
    attr(x, "assign") <- NULL
    attr(x, "contrasts") <- NULL
    x <- .as_input_matrix(x, "newdata", allow_na = TRUE, allow_empty = TRUE)
    if (!is.null(directions)) {
      x[directions$zeroed] <- 0
      attr(x, "new_directions") <- directions[c("columns", "scale")]
    }
    return(x)
  }
  x <- .as_input_matrix(newdata, "newdata", allow_na = TRUE, allow_empty = TRUE)
  p <- ncol(object$x)
  if (ncol(x) != p) {
    # a plain vector of new 1-D points arrives as one column already; a
    # vector for a p-column model is one new point
    if (is.null(dim(newdata)) && length(newdata) == p) {
      x <- matrix(x, nrow = 1L)
    } else {
      .stop(sprintf("'newdata' must have %d column(s) like the training inputs, not %d",
                    p, ncol(x)))
    }
  }
  cn <- colnames(object$x)
  if (!is.null(cn) && !is.null(colnames(x)) && !setequal(cn, colnames(x))) {
    .stop(sprintf("'newdata' has columns %s but the model was fitted on %s",
                  paste(colnames(x), collapse = ", "), paste(cn, collapse = ", ")))
  }
  if (!is.null(cn) && !is.null(colnames(x))) x <- x[, cn, drop = FALSE]
  x
}

# A variable the formula took from the data must be in newdata: otherwise
# model.frame() looks it up in the formula's environment, where a namesake
# (the function rm() for BostonHousing's rm, or a vector of the training
# rows) gives a baffling error or predictions at the wrong inputs.
.check_newdata_variables <- function(object, newdata) {
  absent <- setdiff(names(object$variables), names(newdata))
  if (length(absent) > 0L) {
    .stop(sprintf("'newdata' lacks the variable(s) %s that the model uses",
                  paste(absent, collapse = ", ")))
  }
}

# The contrasts the fit coded its factors with (fit$contrasts), for the
# factors that `mf` holds; NULL when there are none.
.fit_contrasts <- function(object, mf) {
  kept <- object$contrasts[intersect(names(object$contrasts), names(mf))]
  if (length(kept) > 0L) kept
}

# The factor and character inputs of a newdata model frame coded with the
# levels they had in training, as model.frame(xlev =) codes them.  A level
# training never saw is refused with new_levels = "error" (as predict.lm()
# does, but naming every factor); else its rows get the first training
# level, and `unseen` records, per factor, the new levels and each row's
# value, for .new_level_directions().  Only rows that can be predicted
# count: a row with a missing value gets an NA prediction whatever its
# levels. (In mlbench's Ozone no complete row falls on days 6 and 7 of the
# week, so every held-out set with such a day was refused.)  One warning
# names every factor with new levels, its levels and the rows.
.code_training_levels <- function(mf, xlevels, new_levels = "error") {
  complete <- stats::complete.cases(mf)
  unseen <- list()
  for (name in intersect(names(xlevels), names(mf))) {
    values <- mf[[name]]
    if (is.character(values)) values <- factor(values)
    # (another type is refused by .checkMFClasses())
    if (!is.factor(values)) next
    values[!complete] <- NA
    new <- setdiff(levels(droplevels(values)), xlevels[[name]])
    if (length(new) > 0L) {
      values <- as.character(values)
      unseen[[name]] <- list(levels = new, values = values)
      values[values %in% new] <- xlevels[[name]][[1L]]
    }
    mf[[name]] <- factor(values, levels = xlevels[[name]])
  }
  if (length(unseen) == 0L) return(list(mf = mf, unseen = NULL))
  rows <- Reduce(`|`, lapply(unseen, function(u) u$values %in% u$levels))
  listing <- paste(vapply(names(unseen), function(name) {
    sprintf("%s (%s)", name, paste(unseen[[name]]$levels, collapse = ", "))
  }, character(1)), collapse = "; ")
  if (identical(new_levels, "error")) {
    stop(sprintf("factor levels training never saw, in %s: %s", .count(sum(rows), "row"), listing),
         call. = FALSE)
  }
  warning(sprintf(paste("'newdata' has factor levels training never saw, in %s: %s. Each is",
                        "predicted as a new direction of the input space (its kernel values with the",
                        "training inputs shrink, and the prediction moves towards the prior",
                        "mean); new_levels =",
                        "\"error\" refuses them"),
                  .count(sum(rows), "row"), listing), call. = FALSE)
  list(mf = mf, unseen = unseen)
}

# A level training never saw is a direction the training inputs did not
# vary in: its rows get an indicator column of their own (one per new level,
# 0 in every training row) and 0 in the columns of the terms the factor
# enters, the centre of its coding whatever the contrasts (with the default
# treatment contrasts, the reference level's place, one unit from each
# known level along the new column).  The kernel then relates those rows to
# the training ones only through the other inputs and a distance one unit
# longer, so the prediction falls back towards the prior and its variance
# grows.  Returns the columns (named "<factor>: <level>"), the entries of
# the design to zero (a logical matrix: each factor's columns in its rows
# with a new level), and each new column's scale: 1, as the factor's
# columns are not scaled, or with widths per input the geometric mean of
# the factor's own columns' widths.
.new_level_directions <- function(x, unseen, terms, scaling) {
  if (is.null(unseen)) return(NULL)
  factors <- attr(terms, "factors")
  assign <- attr(x, "assign")
  columns <- list()
  zeroed <- matrix(FALSE, nrow(x), ncol(x))
  scale <- numeric(0)
  for (name in names(unseen)) {
    own <- assign %in% which(factors[name, ] > 0)
    u <- unseen[[name]]
    zeroed[u$values %in% u$levels, own] <- TRUE
    widths <- scaling$input_widths[own]
    for (level in u$levels) {
      columns[[paste0(name, ": ", level)]] <- as.numeric(u$values %in% level)
      scale <- c(scale, if (length(widths) > 0L) exp(mean(log(widths))) else 1)
    }
  }
  list(columns = do.call(cbind, columns), zeroed = zeroed, scale = scale)
}

# predict.lm-style output from the pieces `p` (fit, se, lower, upper) at the
# rows computed, named `names`: a vector, or a fit/lwr/upr matrix, or a list
# with se.fit; `pad` then puts them on the rows the user asked for (NA rows
# of newdata, na.exclude).  Nothing non-finite is returned ('deriv' words
# the error).
.prediction_output <- function(p, se.fit, interval, deriv, names = NULL, pad = identity,
                               residual.scale = NULL) {
  .check_finite_prediction(c(p$fit, p$se, p$lower, p$upper), deriv)
  fit <- stats::setNames(as.vector(p$fit), names)
  value <- if (interval == "none") {
    fit
  } else {
    m <- cbind(fit = fit, lwr = as.vector(p$lower), upr = as.vector(p$upper))
    rownames(m) <- names
    m
  }
  if (!se.fit) return(pad(value))
  out <- list(fit = pad(value), se.fit = pad(stats::setNames(as.vector(p$se), names)))
  if (!is.null(residual.scale)) out$residual.scale <- residual.scale
  out
}

# The 'deriv' and 'wrt' arguments of the predict() methods: a whole order,
# and an input column by number or by name (a column of the design matrix
# fit$x, so for formula fits the name of a model-matrix column).  Targets
# carry the noise, derivatives do not: no prediction interval for them.
.check_deriv <- function(deriv, wrt, interval, x) {
  deriv <- .check_count(deriv, "deriv", upper = .max_deriv)
  if (is.character(wrt) && length(wrt) == 1L && !is.na(wrt)) {
    col <- match(wrt, colnames(x))
    if (is.na(col)) {
      .stop(sprintf("'wrt' = \"%s\" is not an input column; the columns are %s", wrt,
                    paste(colnames(x), collapse = ", ")))
    }
    wrt <- col
  }
  wrt <- .check_count(wrt, "wrt", lower = 1L)
  if (wrt > ncol(x)) .stop(sprintf("'wrt' must be an input column (1 to %d)", ncol(x)))
  if (interval == "prediction" && deriv > 0L) {
    .stop("'interval = \"prediction\"' is defined for deriv = 0 only; use \"confidence\"")
  }
  list(deriv = deriv, wrt = wrt)
}

# High derivatives of the Gaussian kernel grow like (2n-1)!! / sigma^2n and
# overflow double precision (around n = 150 for sigma = 1); say so instead of
# returning Inf or NaN.
.check_finite_prediction <- function(values, deriv, what = "prediction") {
  if (all(is.finite(values))) return(invisible())
  .stop(if (deriv > 0L) {
    sprintf("the derivative of order %d overflows double precision at these inputs; use a lower 'deriv'",
            deriv)
  } else paste("the", what, "is not finite at these inputs"))
}

# A "logLik" object, so that AIC() and BIC() work.
.as_logLik <- function(value, df, nobs) {
  structure(value, df = df, nobs = nobs, class = "logLik")
}

# The df of a model's evidence, by one rule for every model (documented in
# ?regression-methods, "The evidence and its degrees of freedom"): the number
# of quantities estimated from the response (hyperparameters chosen by
# evidence, learned precisions and noise variances, a threshold the evidence
# treats as known), plus 2 for the response's centre and scale when it was
# standardised.  Input scaling and a width chosen from the inputs do not count.
.evidence_df <- function(estimated, response_scaling = NULL) {
  as.integer(sum(estimated) + if (is.null(response_scaling)) 0L else 2L)
}

# Check a confidence level.
.check_level <- function(level) {
  .check_number(level, "level", lower = 0, upper = 1, open_lower = TRUE, open_upper = TRUE)
}

# The central `level` band fit +- z sd of a Gaussian: confidence intervals of
# every model, and prediction intervals where the noise is Gaussian (rvm).
.gaussian_interval <- function(fit, sd, level) {
  half <- stats::qnorm((1 + level) / 2) * sd
  list(lower = fit - half, upper = fit + half)
}

# The rows a predict() method computes at, on the scale the model was fitted
# on: the training inputs (object$x, stored scaled) when newdata is NULL,
# else the complete rows of newdata, scaled with the fit's input scaling.
# `keep` marks the rows of newdata that were complete (NULL for the training
# inputs); .pad_rows() puts NA back where rows were set aside, as predict.lm()
# does for NA rows of newdata.  `na.action` acts on newdata's rows first
# (.newdata_na_action()).
#
# With factor levels training never saw (new_levels = "predict", see
# .new_level_directions()), x has their indicator columns after the
# training ones, and `object` is the fit with as many zero columns appended
# to its training inputs (.with_new_directions()), for the prediction to
# compute with; otherwise `object` is the fit.
.prediction_inputs <- function(object, newdata, na.action = stats::na.pass,
                               new_levels = "error") {
  if (is.null(newdata)) {
    return(list(x = object$x, keep = NULL, names = rownames(object$x), object = object))
  }
  x <- .newdata_matrix(object, newdata, new_levels)
  directions <- attr(x, "new_directions")
  p <- ncol(x)
  if (!is.null(directions)) x <- cbind(x, directions$columns)
  x <- .newdata_na_action(x, na.action)
  keep <- stats::complete.cases(x)
  scaled <- .scale_inputs(x[keep, seq_len(p), drop = FALSE], object$scaling)
  if (is.null(directions)) {
    return(list(x = scaled, keep = keep, names = rownames(x), object = object))
  }
  extra <- sweep(x[keep, -seq_len(p), drop = FALSE], 2L, directions$scale, "/",
                 check.margin = FALSE)
  list(x = cbind(scaled, extra), keep = keep, names = rownames(x),
       object = .with_new_directions(object, ncol(extra)))
}

# The fit with k zero columns appended to every set of training inputs its
# predictions compute with (the inputs, inducing inputs, each one-vs-rest
# model's): a training input lies at 0 along each new direction.
.with_new_directions <- function(object, k) {
  pad <- function(m) if (!is.null(m)) cbind(m, matrix(0, nrow(m), k))
  object$x <- pad(object$x)
  if (!is.null(object$inducing)) object$inducing <- pad(object$inducing)
  if (!is.null(object$models)) object$models <- lapply(object$models, .with_new_directions, k = k)
  object
}

# The rows of newdata's input matrix x that predict() answers for, by the
# na.action argument of the predict() methods (as in predict.lm()): every
# row with na.pass, the default, and with na.exclude (NA where an input is
# missing); only the complete rows with na.omit, as e1071's predict.svm()
# returns them; an error with na.fail.
.newdata_na_action <- function(x, na.action) {
  if (is.character(na.action) && length(na.action) == 1L) {
    na.action <- get0(na.action, envir = asNamespace("stats"), mode = "function",
                      ifnotfound = NULL)
  }
  if (!is.function(na.action)) .stop("'na.action' must be a function such as na.omit or na.pass")
  # evaluate x first: an error in building it (a factor level unseen in
  # training) is not na.action's, whose errors the handler below rewords
  force(x)
  out <- tryCatch(na.action(x), error = function(e) {
    .stop(sprintf("'newdata' has missing values and 'na.action' refuses them: %s",
                  conditionMessage(e)))
  })
  if (!is.matrix(out) || ncol(out) != ncol(x)) {
    .stop("'na.action' must return the rows of 'newdata' it keeps")
  }
  if (inherits(attr(out, "na.action"), "exclude")) return(x)
  attr(out, "na.action") <- NULL
  out
}

# The line print() adds when the formula's na.action left rows out, as
# print.glm() does: "(12 observations deleted due to missingness)".
.missing_line <- function(na_action) {
  if (length(na_action) == 0L) return(NULL)
  text <- stats::naprint(na_action)
  if (!nzchar(text)) return(NULL)
  sprintf("(%s)", text)
}

# Values computed at the kept rows (a vector, factor or matrix with one row
# per kept row) spread over all rows, NA where a row was set aside.
.pad_rows <- function(values, keep, names = NULL) {
  if (is.null(keep) || length(keep) > 0L && all(keep)) {
    if (!is.null(names)) {
      if (is.matrix(values)) rownames(values) <- names else names(values) <- names
    }
    return(values)
  }
  idx <- rep(NA_integer_, length(keep))
  idx[keep] <- seq_len(sum(keep))
  out <- if (is.matrix(values)) values[idx, , drop = FALSE] else values[idx]
  if (is.matrix(out)) rownames(out) <- names else names(out) <- names
  out
}
