#' Comparing fits by their evidence
#'
#' The log evidence [logLik()] of a gpsvm fit is the log density of the data
#' under the model with its weights integrated out, so two fits of the same
#' data compare by it directly: the difference of two log evidences is the
#' log Bayes factor between the models (with equal prior odds, their log
#' posterior odds). These methods give it the shapes an `lm` user knows.
#'
#' * `anova(fit1, fit2, ...)`: a table with one row per fit, its `Df`
#'   (the df of `logLik()`: the quantities estimated from the response, see
#'   [regression-methods]), log evidence, `AIC` and `log BF`, the log Bayes
#'   factor of each fit against the one in the row above (positive when the
#'   data favour it). Fits of different data, or of the same data on
#'   another scale (`y` and `log(y)`, metres and centimetres: their
#'   evidences are densities in different units), are refused.
#' * `extractAIC()` gives `c(df, AIC)` with the df of `logLik()`, as for
#'   `lm` (`scale` must be 0: it is lm's Mallows' Cp); `deviance()` is
#'   \eqn{-2} times the log evidence (`extractAIC(fit, k = 0)[2]`) and
#'   `df.residual()` the observations less that df.
#' * `drop1()` and `add1()` refit the model without (or with) each term of
#'   the formula and give the AIC of each fit, and so [stats::step()]
#'   chooses the inputs by AIC, that is by the evidence: with one width and
#'   the other hyperparameters counted the same in every fit, the df rarely
#'   changes with the inputs, and the evidence's own Occam factor is what
#'   charges a term for the flexibility it adds. Their `Df` column counts
#'   the input columns a term brings (a factor's indicator columns) rather
#'   than the change of df, which is 0 for most fits: `step()` would drop
#'   any term of zero `Df` without comparing AICs. There is no test (`test`
#'   must be `"none"`): compare log evidences. A model needs an input: the
#'   row of the term whose removal would leave none has AIC `NA`, and
#'   `step()` keeps that term.
#'
#' @param object,fit A fit from [svr()], [mfsvr()], [rvm()], [srvm()] or a
#'   two-class [gpc()] (`method = "tap"`); for `drop1()`, `add1()` and
#'   `step()`, one made with a formula.
#' @param ... For `anova()`, more fits of the same data; otherwise unused.
#' @param scale Must be 0 (lm's Mallows' Cp has no counterpart here).
#' @param k The penalty per degree of freedom, 2 for the AIC, `log(nobs)`
#'   for the BIC.
#' @param scope,trace As in [stats::drop1()] and [stats::add1()].
#' @param test Must be `"none"`.
#' @return `anova()`, `drop1()` and `add1()`: objects of class `"anova"`
#'   (data frames) as for `lm`; `extractAIC()`: `c(edf, AIC)`;
#'   `deviance()`, `df.residual()`: numbers.
#' @seealso [confint.gpsvm_regression()] for the hyperparameters' intervals.
#' @examples
#' d <- mtcars
#' small <- mfsvr(mpg ~ wt, data = d)
#' large <- mfsvr(mpg ~ wt + hp + qsec, data = d)
#' anova(small, large)
#' extractAIC(large)
#' drop1(large)
#' chosen <- step(large, trace = 0)
#' formula(chosen)
#' @name model-comparison
NULL

#' @rdname model-comparison
#' @importFrom stats extractAIC
#' @export
extractAIC.gpsvm_regression <- function(fit, scale = 0, k = 2, ...) {
  .check_dots_empty(...)
  if (!identical(as.numeric(scale), 0)) {
    .stop("'scale' must be 0: it sets lm's Mallows' Cp, which has no counterpart here")
  }
  .check_number(k, "k", lower = 0)
  ll <- stats::logLik(fit)
  df <- attr(ll, "df")
  c(df, -2 * c(ll) + k * df)
}

#' @rdname model-comparison
#' @export
extractAIC.gpsvm_classifier <- extractAIC.gpsvm_regression

#' @rdname model-comparison
#' @importFrom stats deviance
#' @export
deviance.gpsvm_regression <- function(object, ...) {
  .check_dots_empty(...)
  -2 * c(stats::logLik(object))
}

#' @rdname model-comparison
#' @export
deviance.gpsvm_classifier <- deviance.gpsvm_regression

#' @rdname model-comparison
#' @importFrom stats df.residual
#' @export
df.residual.gpsvm_regression <- function(object, ...) {
  .check_dots_empty(...)
  ll <- stats::logLik(object)
  attr(ll, "nobs") - attr(ll, "df")
}

#' @rdname model-comparison
#' @export
df.residual.gpsvm_classifier <- df.residual.gpsvm_regression

#' @rdname model-comparison
#' @importFrom stats anova
#' @export
anova.gpsvm_regression <- function(object, ...) {
  fits <- c(list(object), list(...))
  if (length(fits) < 2L) {
    .stop(paste("anova() compares two or more fits of the same data, e.g. anova(fit1, fit2);",
                "for one fit see summary() and confint()"))
  }
  base <- if (inherits(object, "gpsvm_regression")) "gpsvm_regression" else "gpsvm_classifier"
  for (j in seq_along(fits)[-1L]) {
    if (!inherits(fits[[j]], base)) {
      .stop(sprintf("argument %d of anova() is not a gpsvm %s fit like the first", j,
                    if (base == "gpsvm_regression") "regression" else "classifier"))
    }
    .check_same_data(fits[[1L]], fits[[j]], j)
  }
  ll <- lapply(fits, stats::logLik)
  value <- vapply(ll, c, numeric(1))
  df <- vapply(ll, attr, numeric(1), "df")
  table <- data.frame(Df = df, `Log evidence` = value, AIC = -2 * value + 2 * df,
                      `log BF` = c(NA, diff(value)), check.names = FALSE,
                      row.names = paste("Model", seq_along(fits)))
  calls <- vapply(fits, function(f) paste(deparse(f$call, width.cutoff = 500L), collapse = " "),
                  character(1))
  structure(table, class = c("anova", "data.frame"), heading = c(
    "Log evidences (marginal likelihoods) of fits of the same data\n",
    paste0(sprintf("Model %d: %s", seq_along(fits), calls), collapse = "\n"),
    "\nlog BF: the log Bayes factor of each model against the one above it (> 0 favours it)\n"))
}

#' @rdname model-comparison
#' @export
anova.gpsvm_classifier <- anova.gpsvm_regression

# Evidences compare only as densities of the same observations in the same
# units: the responses (or labels) of the two fits must agree exactly.
.check_same_data <- function(first, other, j) {
  a <- .observed_response(first)
  b <- .observed_response(other)
  if (length(a) != length(b)) {
    .stop(sprintf(paste("fit %d has %d observations and fit 1 has %d: anova() compares fits of",
                        "the same data (their log evidences are densities of different data)"),
                  j, length(b), length(a)))
  }
  if (identical(unname(a), unname(b))) return(invisible())
  if (is.numeric(a) && is.numeric(b) && isTRUE(abs(stats::cor(a, b, method = "spearman")) == 1)) {
    .stop(sprintf(paste("the response of fit %d (%s) is that of fit 1 (%s) on another scale:",
                        "their log evidences are densities in different units and do not",
                        "compare; fit both to the same response"), j, .response_name(other),
                  .response_name(first)))
  }
  .stop(sprintf(paste("the responses of fits 1 and %d differ in %d of %d observations: anova()",
                      "compares fits of the same data"), j, sum(a != b), length(a)))
}

# The targets in the user's units, or the class labels.
.observed_response <- function(fit) {
  .validate_fit(fit)
  if (inherits(fit, "gpsvm_classifier")) as.character(fit$classes) else fit$y
}

#' @rdname model-comparison
#' @importFrom stats drop1
#' @export
drop1.gpsvm_regression <- function(object, scope, scale = 0, test = "none", k = 2,
                                   trace = FALSE, ...) {
  .check_dots_empty(...)
  terms <- .formula_terms(object, "drop1()")
  scope <- if (missing(scope)) {
    stats::drop.scope(object)
  } else {
    if (!is.character(scope)) scope <- attr(stats::terms(stats::update.formula(object, scope)),
                                            "term.labels")
    if (!all(scope %in% attr(terms, "term.labels"))) .stop("'scope' is not a subset of the terms")
    scope
  }
  .term_table(object, scope, "-", scale, test, k, trace,
              c("Single term deletions", "\nModel:", deparse(stats::formula(object))))
}

#' @rdname model-comparison
#' @export
drop1.gpsvm_classifier <- drop1.gpsvm_regression

#' @rdname model-comparison
#' @importFrom stats add1
#' @export
add1.gpsvm_regression <- function(object, scope, scale = 0, test = "none", k = 2,
                                  trace = FALSE, ...) {
  .check_dots_empty(...)
  .formula_terms(object, "add1()")
  if (missing(scope) || is.null(scope)) .stop("'scope' must give the terms to add")
  if (!is.character(scope)) scope <- stats::add.scope(object, stats::update.formula(object, scope))
  if (length(scope) == 0L) .stop("'scope' has no terms to add to the model")
  .term_table(object, scope, "+", scale, test, k, trace,
              c("Single term additions", "\nModel:", deparse(stats::formula(object))))
}

#' @rdname model-comparison
#' @export
add1.gpsvm_classifier <- add1.gpsvm_regression

# The terms of a fit made with a formula, for refits without or with a term.
.formula_terms <- function(object, what) {
  .validate_fit(object)
  if (is.null(object$terms)) {
    .stop(sprintf(paste("%s needs a fit made with a formula; this one was fitted to a matrix:",
                        "refit it as y ~ ., data = data.frame(x, y = y)"), what))
  }
  object$terms
}

# terms() of a formula fit; of a matrix fit, an error that says why (where
# step() would say "no terms component nor attribute").
#' @importFrom stats terms
#' @export
terms.gpsvm_regression <- function(x, ...) .formula_terms(x, "terms() (and so step())")

#' @export
terms.gpsvm_classifier <- terms.gpsvm_regression

# drop1()'s and add1()'s table: each term of `scope` removed ("-") or added
# ("+"), its refit's AIC, and Df the input columns the term brings.
.term_table <- function(object, scope, sign, scale, test, k, trace, heading) {
  if (!identical(test, "none")) {
    .stop(paste("'test' must be \"none\": the models are not nested parametric models with a",
                "likelihood-ratio test; compare their log evidences (the AIC differences here,",
                "or anova())"))
  }
  if ((!is.numeric(trace) && !is.logical(trace)) || length(trace) != 1L || is.na(trace)) {
    .stop("'trace' must be a number (as step() passes it) or TRUE or FALSE")
  }
  start <- stats::extractAIC(object, scale, k = k)
  env <- environment(stats::formula(object))
  rows <- lapply(scope, function(term) {
    # as drop1.default(): each refit is announced when trace > 1
    if (trace > 1) cat("trying", sign, term, "\n")
    change <- stats::as.formula(paste("~ .", sign, term))
    # a model without inputs is no kernel model: no AIC (step() keeps the term)
    if (length(attr(stats::terms(stats::update(stats::formula(object), change)),
                    "term.labels")) == 0L) {
      return(c(ncol(stats::model.matrix(object)), NA_real_))
    }
    call <- .gpsvm_call(stats::update(object, change, evaluate = FALSE))
    refit <- .quiet_refits(eval(call, envir = env))
    if (stats::nobs(refit) != stats::nobs(object)) {
      .stop(sprintf("refitting %s %s changes the rows used (%d, not %d): remove missing values first",
                    sign, term, stats::nobs(refit), stats::nobs(object)))
    }
    c(abs(ncol(stats::model.matrix(refit)) - ncol(stats::model.matrix(object))),
      stats::extractAIC(refit, scale, k = k)[2L])
  })
  table <- data.frame(Df = c(NA, vapply(rows, `[[`, numeric(1), 1L)),
                      AIC = c(start[2L], vapply(rows, `[[`, numeric(1), 2L)),
                      row.names = c("<none>", scope))
  structure(table, heading = heading, class = c("anova", "data.frame"))
}
