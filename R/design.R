# The pieces every model's R layer shares: formula -> design, newdata ->
# matrix, intervals, logLik objects.

# model.frame() in the caller's caller, as lm() does: the numeric design (no
# intercept: kernels need none), the response and what predict() needs.
# `variables`: the inputs untransformed at the rows used (or NULL), so that
# plots and augment() show them whatever the formula does (y ~ log(x)).
.formula_design <- function(call, env, data = eval(call$data, env)) {
  mf_call <- call[c(1L, match(c("formula", "data", "subset", "na.action"), names(call), 0L))]
  # the data's value, not its expression (read.csv(...)), which each frame
  # below would evaluate again
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
  # columns coding factors are not standardised, as in e1071
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

# The model matrix with distinct column names: a factor's column (V1's
# level 1, "V11") can repeat another input's name ("V11").  The factor's
# columns take make.unique()'s suffix, alike in predict() (the same terms).
.distinct_column_names <- function(x, terms) {
  names <- colnames(x)
  if (!anyDuplicated(names)) return(x)
  order_kept <- order(.factor_coded_columns(x, terms))
  names[order_kept] <- make.unique(names[order_kept])
  colnames(x) <- names
  x
}

# An offset() term would be dropped by the design, and the models' zero
# prior mean has nothing to add it to: refused.
.refuse_offset <- function(terms) {
  offset <- attr(terms, "offset")
  if (is.null(offset)) return(invisible())
  shown <- .variable_names(terms)[offset]
  .stop(sprintf(paste("'formula' has the offset %s, which these models cannot take (their prior",
                      "mean is zero); fit the response minus it instead, e.g. I(y - w) ~ x for",
                      "y ~ x + offset(w)"), paste(shown, collapse = ", ")))
}

# Terms without the variables no term uses (Id in "Class ~ . - Id"), which
# model.frame() keeps: predict() would need them and refuse their new
# levels.  The response and the predvars kept (poly()'s, ns()'s bases) stay.
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

# The model frame of `mf_call` with the formula "~ rhs", NA rows and unused
# levels kept (NULL when a name is the environment's, not the data's).
.raw_frame <- function(mf_call, rhs, terms, env) {
  mf_call$formula <- stats::as.formula(call("~", rhs), env = environment(terms))
  mf_call$na.action <- quote(stats::na.pass)
  mf_call$drop.unused.levels <- NULL
  tryCatch(eval(mf_call, env), error = function(e) NULL)
}

# All levels of a factor response, which model.frame() drops when unused:
# predicted classes keep them, to compare with the data's own factor.
.response_levels <- function(mf_call, terms, env) {
  raw <- .raw_frame(mf_call, attr(terms, "variables")[[1L + attr(terms, "response")]], terms, env)
  if (!is.null(raw) && is.factor(raw[[1L]])) levels(raw[[1L]])
}

# A factor input with one level left cannot be coded: say which, instead of
# model.matrix()'s message about contrasts.
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

# The input variables of a formula, untransformed, at the rows of `mf`, from
# the frame of "~ a + b + ..." (NULL where .raw_frame() cannot make it).
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

# The one input variable of a formula when it is a numeric vector, else NULL.
.formula_variable <- function(variables) {
  if (is.null(variables) || ncol(variables) != 1L) return(NULL)
  values <- variables[[1L]]
  if (!is.numeric(values) || is.object(values) || !is.null(dim(values))) return(NULL)
  variables
}

# Every formula method's body: the design from the call as typed, the
# default method's fit (factor columns marked, unscaled), predict()'s parts.
.fit_formula <- function(call, env, generic, default, ...) {
  call <- .generic_call(call, generic)
  data <- eval(call$data, env)
  if (inherits(data, "gpsvm_partitions")) return(.fit_partitions(call, env, generic, data, ...))
  design <- .formula_design(call, env, data)
  x <- design$x
  attr(x, "factor_column") <- design$factor_column
  .add_formula_parts(default(x, design$y, ...), design, call)
}

# The call a fit stores names the generic (svr(), not svr.formula()), so
# that print() shows what was typed and update() re-dispatches.
.generic_call <- function(call, generic) {
  call[[1L]] <- as.name(generic)
  call
}

# The formula pieces on a default method's fit (and unused class levels).
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

# The formula of a fit, without its terms' attributes (as for lm).
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

# The inputs in the data's units (fit$x is scaled; model.matrix.default
# would look for the response in the formula's environment).
#' @importFrom stats model.matrix
#' @export
model.matrix.gpsvm_regression <- function(object, ...) {
  .validate_fit(object)
  .original_inputs(object)
}

#' @export
model.matrix.gpsvm_classifier <- model.matrix.gpsvm_regression

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

# predict()'s input matrix, unscaled: the training inputs, or newdata by the
# stored terms or as a matrix of the training columns (NA allowed).  Unseen
# factor levels are refused, or coded as attribute "new_directions".
.newdata_matrix <- function(object, newdata, new_levels = "error") {
  if (is.null(newdata)) return(object$x)
  if (!is.null(object$terms)) {
    if (!is.data.frame(newdata) && !is.list(newdata)) {
      .stop("'newdata' must be a data frame for a model fitted with a formula")
    }
    .check_newdata_variables(object, newdata)
    tt <- stats::delete.response(object$terms)
    # as predict.lm: a variable of another type would become other columns
    coded <- tryCatch({
      mf <- stats::model.frame(tt, newdata, na.action = stats::na.pass)
      coded <- .code_training_levels(mf, object$xlevels, new_levels)
      if (!is.null(classes <- attr(tt, "dataClasses"))) {
        stats::.checkMFClasses(classes, coded$mf)
      }
      coded
    }, error = function(e) .stop(sprintf("'newdata' does not fit the model: %s",
                                        conditionMessage(e))))
    # the fit's contrasts, as predict.lm(): a factor given as text would take
    # the session's default contrasts
    kept <- object$contrasts[intersect(names(object$contrasts), names(coded$mf))]
    x <- .distinct_column_names(
      stats::model.matrix(tt, coded$mf, contrasts.arg = if (length(kept) > 0L) kept), tt)
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
    # a vector for a p-column model is one new point
    if (is.null(dim(newdata)) && length(newdata) == p) {
      x <- matrix(x, nrow = 1L)
    } else {
      .stop(sprintf("'newdata' must have %d column(s) like the training inputs, not %d",
                    p, ncol(x)))
    }
  }
  cn <- colnames(object$x)
  if (is.null(cn) || is.null(colnames(x))) return(x)
  if (!setequal(cn, colnames(x))) {
    .stop(sprintf("'newdata' has columns %s but the model was fitted on %s",
                  paste(colnames(x), collapse = ", "), paste(cn, collapse = ", ")))
  }
  x[, cn, drop = FALSE]
}

# A variable the formula took from the data must be in newdata: otherwise
# model.frame() finds a namesake in the formula's environment (the function rm()).
.check_newdata_variables <- function(object, newdata) {
  absent <- setdiff(names(object$variables), names(newdata))
  if (length(absent) > 0L) {
    .stop(sprintf("'newdata' lacks the variable(s) %s that the model uses",
                  paste(absent, collapse = ", ")))
  }
}

# A newdata frame's factors coded with their training levels.  A level
# training never saw is refused with new_levels = "error", else its rows
# get the first level and `unseen` records it for .new_level_directions().
# Incomplete rows do not count: their predictions are NA whatever the levels.
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
# vary in: an indicator column of its own (0 in training) and 0 in the
# factor's columns, so the prediction falls back towards the prior.  Returns
# the columns ("<factor>: <level>"), the design entries to zero, and each
# column's scale (1, or the geometric mean of the factor's widths per input).
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

# predict.lm-style output from `p` (fit, se, lower, upper): a vector, a
# fit/lwr/upr matrix or a list with se.fit, `pad`ded to the rows asked for.
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

# predict()'s 'deriv' and 'wrt' (a column of fit$x, by number or name);
# derivatives carry no noise, so no prediction interval.
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
# overflow: say so instead of returning Inf or NaN.
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

# The df of a model's evidence (?regression-methods): the quantities
# estimated from the response, plus 2 where it was standardised.
.evidence_df <- function(estimated, response_scaling = NULL) {
  as.integer(sum(estimated) + if (is.null(response_scaling)) 0L else 2L)
}

.check_level <- function(level, arg = "level") {
  .check_number(level, arg, lower = 0, upper = 1, open_lower = TRUE, open_upper = TRUE)
}

# The central `level` band fit +- z sd of a Gaussian.
.gaussian_interval <- function(fit, sd, level) {
  half <- stats::qnorm((1 + level) / 2) * sd
  list(lower = fit - half, upper = fit + half)
}

# The rows predict() computes at, scaled as the fit: the training inputs, or
# newdata's complete rows (`keep`, for .pad_rows()) after `na.action`.  With
# unseen factor levels, x has their columns after the training ones and
# `object` zero columns to match (.with_new_directions()).
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

# The fit with k zero columns appended to every set of its training inputs.
.with_new_directions <- function(object, k) {
  pad <- function(m) if (!is.null(m)) cbind(m, matrix(0, nrow(m), k))
  object$x <- pad(object$x)
  if (!is.null(object$inducing)) object$inducing <- pad(object$inducing)
  if (!is.null(object$models)) object$models <- lapply(object$models, .with_new_directions, k = k)
  object
}

# The rows of newdata that predict() answers for, by `na.action` as in
# predict.lm() (na.exclude keeps every row).
.newdata_na_action <- function(x, na.action) {
  if (is.character(na.action) && length(na.action) == 1L) {
    na.action <- get0(na.action, envir = asNamespace("stats"), mode = "function",
                      ifnotfound = NULL)
  }
  if (!is.function(na.action)) .stop("'na.action' must be a function such as na.omit or na.pass")
  force(x)  # (an error in building x is not na.action's)
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

# print()'s line for rows na.action left out, as print.glm().
.missing_line <- function(na_action) {
  if (length(na_action) == 0L) return(NULL)
  text <- stats::naprint(na_action)
  if (!nzchar(text)) return(NULL)
  sprintf("(%s)", text)
}

# Values at the kept rows spread over all rows, NA where a row was set aside.
.pad_rows <- function(values, keep, names = NULL) {
  if (!(is.null(keep) || length(keep) > 0L && all(keep))) {
    idx <- rep(NA_integer_, length(keep))
    idx[keep] <- seq_len(sum(keep))
    values <- if (is.matrix(values)) values[idx, , drop = FALSE] else values[idx]
  } else if (is.null(names)) {
    return(values)
  }
  if (is.matrix(values)) rownames(values) <- names else names(values) <- names
  values
}
