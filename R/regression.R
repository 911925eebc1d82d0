# The layer the regression models share (class "gpsvm_regression"): data in,
# the response-scale fields, and the lm-like accessors; a model contributes
# what is its own through the internal generics of generics.R.

.key_points.gpsvm_regression <- function(object) NULL
# whether a new target's interval exists (plots leave its band out if not)
.has_target_interval.gpsvm_regression <- function(object) TRUE

# The probability under a new target's predictive at each scaled input z of a
# target at least as far from its centre as y (model units).
.target_tail <- function(object, z, y) {
  if (!is.null(object$C_mixture)) return(.C_mixture_tail(object, z, y))
  m <- .latent_moments(object, z, 0L, 1L, TRUE)
  2 * stats::pnorm(-abs(.target_scores(object, y, m$mean, m$var, z)))
}
.loo_moments.gpsvm_regression <- function(object) NULL

# The default methods' common body: fit_model(x, y, kernel, scaling) fits
# the scaled data with the resolved kernel and returns the object in model
# units, to which this adds the response-scale fields.
.fit_regression <- function(x, y, kernel, scale, call, fit_model) {
  given <- .input_matrix(x)
  y <- .check_targets(y, nrow(given$x))
  inputs <- .model_inputs(given, kernel, scale)
  response_scaling <- .response_scaling(y, scale)
  start <- proc.time()[["elapsed"]]
  fit <- tryCatch(fit_model(inputs$x, .scale_response(y, response_scaling), inputs$kernel,
                            .with_input_widths(inputs$scaling, inputs$kernel, given$x)),
                  error = function(e) {
                    .explain_failure(e, inputs$x, inputs$kernel, as.character(call[[1L]]),
                                       scaled = !is.null(inputs$scaling))
                  })
  fit$fit_time <- proc.time()[["elapsed"]] - start  # seconds, for glance()
  if (!is.null(response_scaling)) {
    fit$y <- y
    fit$fitted.values <- .unscale_response(fit$fitted.values, response_scaling)
    fit$residuals <- stats::setNames(y - fit$fitted.values, names(fit$fitted.values))
  }
  # an evidence search may have moved the widths per input
  fit$scaling <- .with_input_widths(inputs$scaling, fit$kernel, given$x)
  fit$response_scaling <- response_scaling
  fit$call <- call
  .seal(fit)
}

# A numerical failure of the core says what failed, not which argument to
# change.  Two kernels cause most: a Gaussian kernel far wider than the
# inputs (nearly collinear columns) and a polynomial kernel whose values are
# huge; a size the core refused gets .memory_advice().  Others pass unchanged.
.explain_failure <- function(e, x, kernel, model, scaled) {
  reason <- conditionMessage(e)
  if (inherits(e, "gpsvm::MemoryShortage")) {
    .stop(sprintf("%s(): %s; %s", model, reason, .memory_advice(model)))
  }
  numerical <- grepl("Cholesky|cavity variance|non-finite posterior|not positive definite", reason)
  if (!numerical) stop(e)
  if (.has_width(kernel) && length(kernel$sigma) == 1L) {
    width <- .data_driven_width(x)
    if (kernel$sigma > 100 * width) {
      .stop(sprintf(paste("%s(): %s with %s(sigma = %.4g), %.3g times the data-driven",
                          "width of these inputs (%.3g): so wide a kernel makes the kernel matrix's",
                          "columns nearly collinear; choose a smaller sigma in 'kernel'"),
                    model, reason, .kernel_constructor(kernel), kernel$sigma,
                    kernel$sigma / width, width))
    }
  }
  if (!is.null(kernel$degree)) {
    # (k(x, x) bounds every value of the kernel: its largest is on the diagonal)
    largest <- max(abs(cpp_kernel_diagonal(kernel, x, 0L, 1L)))
    if (largest > 1e6) {
      .stop(sprintf(paste("%s(): %s with a polynomial kernel whose values reach %.3g on these",
                          "inputs: its few directions are so long that the problem is",
                          "singular in floating point; %sgive the kernel a lower",
                          "'degree' or a smaller 'scale'"),
                    model, reason, largest,
                    if (scaled) "" else "scale the inputs (scale = TRUE, the default) or "))
    }
  }
  stop(e)
}

# What shrinks a fit that does not fit in memory, by fitter.
.memory_advice <- function(model) {
  switch(model,
    mfsvr = , gpc = sprintf(paste("keep %s_control(rank_tol) at its default (a low-rank factor",
                                  "where the kernel matrix has one), give 'inducing' inputs (see",
                                  "?`inducing-points`), or fit fewer observations"), model),
    rvm = , srvm = sprintf(paste("offer fewer candidate centres ('basis'; by default at most %d:",
                                 "see gpsvm_size_policy()), or fit fewer observations"),
                           .size_rule("basis_chosen")),
    "fit fewer observations")
}

# Values of the response (center = TRUE) or differences of it between the
# user's units and the model's.
.unscale_response <- function(v, scaling, center = TRUE) {
  if (is.null(scaling)) return(v)
  (if (center) scaling$center else 0) + scaling$scale * v
}
.to_model_units <- function(v, scaling, center = TRUE) {
  if (is.null(scaling)) return(v)
  (v - if (center) scaling$center else 0) / scaling$scale
}

# The training inputs in the user's units (fit$x holds them scaled).
.original_inputs <- function(object) {
  s <- object$scaling
  if (is.null(s)) return(object$x)
  out <- sweep(sweep(object$x, 2L, s$scale, "*", check.margin = FALSE), 2L, s$center, "+",
               check.margin = FALSE)
  dimnames(out) <- dimnames(object$x)
  out
}

#' Methods for the regression models
#'
#' [svr()], [mfsvr()], [rvm()] and [srvm()] fits share the class
#' `gpsvm_regression` and these methods, which behave like [stats::lm()]'s.
#' Everything they return is in the units of the response and the inputs as
#' given, whether or not the model was fitted with `scale = TRUE`.
#'
#' * `print()` shows the call, the model's settings, the kernel (with a
#'   width chosen from the data when there was one), the scaling, how the
#'   hyperparameters chosen by the data were found (an evidence search, or
#'   `svr()`'s choice of `C`, with where it stopped), the log evidence and
#'   the solver's convergence; `summary()` adds the residuals,
#'   \eqn{R^2} and the model's details (see the model's help page).
#'   \eqn{R^2} is \eqn{1 - \sum_i (y_i - \hat y_i)^2 / \sum_i (y_i -
#'   \bar y)^2} at the training rows and, where the model gives its
#'   leave-one-out predictions \eqn{\hat y_{-i}} cheaply, the same with
#'   them (the predictive \eqn{R^2} from the PRESS residuals): for `rvm()`
#'   and `srvm()` exact at the fitted hyperparameters and kept basis
#'   (\eqn{\hat y_{-i} = y_i - r_i / (1 - h_i)} with \eqn{h_i} the
#'   leverage \eqn{\phi_i' \Sigma \phi_i / \sigma^2}), for `mfsvr()` the
#'   EP cavity means (EP's own leave-one-out approximation); `svr()` has
#'   none.
#' * `fitted()` and `residuals()` at the training rows; with
#'   `na.action = na.exclude` they are padded with `NA` at the rows left out,
#'   as [stats::naresid()] does for `lm`.
#' * `coef()` the weights of the kernel expansion of the latent function, in
#'   the units the model was fitted in (the scaled response when
#'   `scale = TRUE`): \eqn{\beta} for `svr()`, \eqn{w} for `mfsvr()`, the
#'   kept weights (bias first) for `rvm()` and `srvm()`.
#' * `vcov()`, for `rvm()` and `srvm()` fits, the posterior covariance of
#'   those kept weights, in the same units; the posterior is Gaussian, so
#'   `confint()` gives the weights' exact posterior intervals (at the fitted
#'   hyperparameters), and for every fit intervals for the hyperparameters
#'   its evidence estimated: see [confint.gpsvm_regression()].
#' * `sigma()` the noise standard deviation in the units of the response: for
#'   `svr()` and `mfsvr()` the standard deviation of the epsilon-insensitive
#'   noise ([svr_noise_variance()]), for `rvm()` and `srvm()`
#'   \eqn{\sqrt{\sigma^2}}.
#' * `logLik()` the log evidence (marginal likelihood) of the response as a
#'   `"logLik"` object, so that [stats::AIC()] and [stats::BIC()] work;
#'   [evidence()] the same number, and for `svr()` the paper's
#'   approximations (eq. 16 and its refined form).
#'   `anova()`, `extractAIC()`, `deviance()`, `df.residual()`, `drop1()`,
#'   `add1()` and so [stats::step()] compare fits by it: see
#'   [model-comparison].
#' * [hyperparameters()] the model's settings (`C`, `epsilon`, the width,
#'   ...), given or chosen by the data; its help page lists the fields of
#'   the fitted objects.
#' * `nobs()` the number of observations used; `formula()` the model formula
#'   of a fit by the formula interface; `model.matrix()` the input matrix
#'   the model was fitted on, in the data's units (a factor's indicator
#'   columns included); `plot()`, the fit or plot.lm's diagnostic panels
#'   (`which = 1:4`), see [plot.gpsvm_regression()].
#' * `update()` refits with changed arguments (or a changed formula, as
#'   `update(fit, . ~ . - x2)`), as [stats::update()] does, calling gpsvm's
#'   fitter even when another attached package masks its name (kernlab's
#'   `rvm()`, say).
#'
#' @section The evidence and its degrees of freedom:
#' Every gpsvm model with an evidence reports it through `logLik()` as the
#' log density of the response in the units the user gave it. When the
#' response was centred and scaled (`scale = TRUE`), the model's evidence for
#' the scaled response is converted with the Jacobian of that map:
#' \eqn{-n \log s_y}, with \eqn{s_y} the response's standard deviation. So
#' the evidences of a fit with and one without scaling are densities of the
#' same data and can be compared.
#'
#' The `df` attribute counts the quantities estimated from the response, by
#' the same rule for every model (classifiers too):
#' * hyperparameters chosen by the evidence or its fixed point: `C` with
#'   `svr(optimize = TRUE)`, each of `C`,
#'   `epsilon` and the kernel width searched by `mfsvr(optimize = ...)`, and
#'   whatever any other search by evidence chose (the names in
#'   `fit$optimization$estimate`);
#' * the relevance vector machines' kept weight precisions \eqn{\alpha_i}
#'   (bias included) as far as the data can tell them apart, their noise
#'   variance and, for `srvm()`, \eqn{\lambda}, each when learned rather
#'   than fixed in the control. The \eqn{\alpha_i} move the model through
#'   \eqn{\sum_i \phi_i \phi_i' / \alpha_i} (\eqn{\phi_i} the kept basis
#'   function at the training inputs), so they count as the dimension of the
#'   span of the \eqn{\phi_i \phi_i'}: one each on a Gaussian kernel, fewer
#'   on a polynomial kernel whose functions span few dimensions (on one
#'   input every linear function is a multiple of \eqn{x}: two, bias
#'   included, however many a fit keeps). \eqn{\lambda} does not count
#'   where the penalty vanishes on the kernel's functions (derivatives past
#'   a polynomial kernel's degree), since it then changes no fit;
#' * the threshold `b` of `svr(bias = TRUE)`, which the evidence treats as a
#'   known prior mean;
#' * 2 for the centre and scale of the response when `scale = TRUE`.
#'
#' Input scaling and a kernel width chosen from the inputs use no response
#' and do not count; neither do the weights that the evidence integrates out.
#'
#' Two fits' evidences compare when they are densities of the same numbers:
#' the same response (not `log(y)` against `y`), at the same rows (the same
#' data, `subset` and rows dropped for missing values), in any units and
#' with or without `scale = TRUE`, since the Jacobian is included. Then the
#' difference of their `logLik()` is the log Bayes factor of the two models
#' at their hyperparameters, whatever the model family; `svr()` and
#' `mfsvr()`, one model, have the same evidence at the same `C`, `epsilon`
#' and kernel. What the evidence does not charge for is the hyperparameters
#' chosen by maximising it: the relevance vector machines choose one
#' precision per kept basis function, so their evidence can be the highest
#' of several fits without their intervals being the best ("Performance"
#' below). [stats::AIC()] and [stats::BIC()] charge each estimated
#' hyperparameter (the `df`): compare models of different families with
#' `BIC()`, and check the intervals themselves with [interval_coverage()].
#'
#' @section Performance:
#' Measured up to 2026-12-02 (gpsvm 0.1.0, development version;
#' `bench/bench-realdata.R`, part "calibration", in the sources): `srvm()`'s
#' evidence was the highest of six default and searched fits on ten of the
#' package benchmark's twelve sets (`rvm()`'s on the other two). The fit of
#' highest `logLik()` had a held-out 95% interval score within 10% of the
#' best of the six on eleven sets; on Friedman 1 `srvm()`'s was 1.12 times
#' the best, and no rescaling of its intervals did better (its RMSE is 8%
#' above `mfsvr()`'s). The fit of lowest `BIC()` was within 10% of the best
#' score on ten sets (within 16% on all), that of lowest `AIC()` on nine.
#'
#' @param object,x A fit from [svr()], [mfsvr()], [rvm()] or [srvm()], or
#'   (for `print`) its summary.
#' @param digits Significant digits to print.
#' @param formula. For `update()`, changes to the formula, as in
#'   [stats::update.formula()].
#' @param evaluate For `update()`: refit (`TRUE`) or return the new call.
#' @param ... For `update()`, the arguments to change; otherwise unused
#'   (unknown arguments are an error).
#' @return `print()` returns its argument invisibly; `summary()` an object of
#'   class `summary.gpsvm_regression` (and `summary.<model class>`); the
#'   accessors the values described.
#' @examples
#' fit <- svr(dist ~ speed, data = cars)
#' fit
#' summary(fit)
#' sigma(fit)
#' logLik(fit)
#' AIC(fit, update(fit, C = 1))
#' head(residuals(fit))
#' confint(rvm(dist ~ speed, data = cars))
#' @name regression-methods
NULL

#' @rdname regression-methods
#' @export
fitted.gpsvm_regression <- function(object, ...) {
  .check_dots_empty(...)
  .validate_fit(object)
  stats::napredict(object$na.action, object$fitted.values)
}

#' @rdname regression-methods
#' @export
residuals.gpsvm_regression <- function(object, ...) {
  .check_dots_empty(...)
  .validate_fit(object)
  stats::naresid(object$na.action, object$residuals)
}

#' @rdname regression-methods
#' @export
coef.gpsvm_regression <- function(object, ...) {
  .check_dots_empty(...)
  .validate_fit(object)
  object$coefficients
}

#' @rdname regression-methods
#' @export
nobs.gpsvm_regression <- function(object, ...) {
  .validate_fit(object)
  length(object$y)
}

#' @rdname regression-methods
#' @importFrom stats sigma
#' @export
sigma.gpsvm_regression <- function(object, ...) {
  .check_dots_empty(...)
  .validate_fit(object)
  .unscale_response(.noise_sd(object), object$response_scaling, center = FALSE)
}

#' @rdname regression-methods
#' @export
logLik.gpsvm_regression <- function(object, ...) {
  .check_dots_empty(...)
  .validate_fit(object)
  # (an offset and a kernel weighed by the evidence count as one each;
  # widths per input searched on other rows, .weigh_on_dense_rows(), as
  # the search on these rows would have counted them)
  weighed_widths <- if (!is.null(object$choice_rows)) length(object$kernel$input_widths) else 0L
  estimated <- c(.response_df(object), searched = length(object$optimization$estimate),
                 widths = weighed_widths, bias = !is.null(object$bias_choice),
                 kernel = !is.null(object$kernel_choice))
  .as_logLik(.response_log_density(object, .log_evidence(object)),
             df = .evidence_df(estimated, object$response_scaling), nobs = length(object$y))
}

#' @rdname regression-methods
#' @importFrom stats update
#' @export
update.gpsvm_regression <- function(object, formula., ..., evaluate = TRUE) {
  call <- object$call
  if (is.null(call)) .stop("the fit has no stored call to update")
  if (!missing(formula.)) call$formula <- stats::update(stats::formula(object), formula.)
  extras <- match.call(expand.dots = FALSE)$...
  for (name in names(extras)) call[[name]] <- extras[[name]]
  call <- .gpsvm_call(call)
  if (!evaluate) return(call)
  eval(call, parent.frame())
}

# A fit's call with gpsvm's fitter named through the namespace, so that it
# evaluates where gpsvm is not attached or another package masks the name.
.gpsvm_call <- function(call) {
  if (is.name(call[[1L]])) call[[1L]] <- call("::", quote(gpsvm), call[[1L]])
  call
}

# A log evidence of the model-unit response as the log density of the
# response in the user's units (the Jacobian of the scaling).
.response_log_density <- function(object, log_evidence) {
  s <- object$response_scaling
  if (is.null(s)) log_evidence else log_evidence - length(object$y) * log(s$scale)
}

# R^2 at the training rows, and from the leave-one-out predictions where the
# model has them cheaply (.loo_moments(); NA otherwise, and for a constant y).
.r_squared <- function(object) {
  y <- object$y
  total <- sum((y - mean(y))^2)
  share <- function(residuals) if (total > 0) 1 - sum(residuals^2) / total else NA_real_
  loo <- .loo_moments(object)
  c(training = share(object$residuals),
    loo = if (is.null(loo)) NA_real_ else
      share(y - .unscale_response(loo$mean, object$response_scaling)))
}

# print()'s line on the scaling ("Scaling: 12 of 13 input columns and the
# response centred and scaled (centred only: the constant column z)"); widths
# per input, folded into the scaling, do not count.
.format_scaling <- function(object) {
  s <- object$scaling
  response <- !is.null(object$response_scaling)
  if ((is.null(s) || isFALSE(s$standardised)) && !response) {
    return("Scaling: none (scale = FALSE)")
  }
  if (!is.null(s$input_widths)) s$scale <- s$scale / unname(s$input_widths)
  p <- length(s$scale)
  constant <- length(s$constant)
  centred_only <- .fill_names(names(s$scale), p) %in% s$constant
  scaled <- sum((s$scale != 1 | s$center != 0) & !centred_only)
  indicators <- p - scaled - constant
  inputs <- if (scaled == 0L) NULL else if (scaled == p) {
    if (p == 1L) "the input column" else if (p == 2L) "both input columns" else
      sprintf("all %d input columns", p)
  } else sprintf("%d of %d input columns", scaled, p)
  what <- c(inputs, if (response) "the response")
  notes <- c(if (constant > 0L) {
               sprintf("centred only: the constant %s %s", if (constant == 1L) "column" else
                 "columns", paste(s$constant, collapse = ", "))
             },
             if (indicators > 0L) {
               sprintf("left as they are: %s",
                       .count(indicators, "column coding a factor", "columns coding factors"))
             })
  sprintf("Scaling: %s%s",
          if (length(what) == 0L) "none" else paste(paste(what, collapse = " and "),
                                                    "centred and scaled"),
          if (length(notes) > 0L) sprintf(" (%s)", paste(notes, collapse = "; ")) else "")
}

# The plan's account of the evidence search recorded in fit$optimization.
.search_summary.default <- function(object) {
  searches <- if (!is.null(object$optimization)) list(object$optimization) else
    Filter(Negate(is.null), lapply(object$models, `[[`, "optimization"))
  if (length(searches) > 0L) .search_lines(searches)
}

# The first lines of print() and summary(): the model's title and the call.
.print_header <- function(object, title = .title(object), call = object$call) {
  cat(title, "\n", sep = "")
  if (!is.null(call)) cat("Call: ", paste(deparse(call), collapse = "\n"), "\n", sep = "")
}

#' @rdname regression-methods
#' @export
print.gpsvm_regression <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  .validate_fit(x)
  .print_header(x)
  cat(.model_lines(x, digits), .missing_line(x$na.action), format(x$kernel),
      .format_scaling(x), .plan_lines(x$plan), sep = "\n")
  ll <- logLik(x)
  cat(sprintf("Log evidence %s (df %d); noise sd %s\n", format(c(ll), digits = digits + 2L),
              attr(ll, "df"), format(sigma(x), digits = digits)))
  cat("Solver: ", .format_convergence(x$convergence), "\n", sep = "")
  invisible(x)
}

#' @rdname regression-methods
#' @export
summary.gpsvm_regression <- function(object, ...) {
  .check_dots_empty(...)
  .validate_fit(object)
  ll <- logLik(object)
  structure(list(
    call = object$call, title = .title(object), n = length(object$y),
    missing = .missing_line(object$na.action),
    kernel = object$kernel, scaling = .format_scaling(object),
    residuals = stats::quantile(object$residuals), log_lik = c(ll), df = attr(ll, "df"),
    sigma = sigma(object), r_squared = .r_squared(object), convergence = object$convergence,
    plan = c(.plan_lines(object$plan), .plan_cost_line(object$plan)),
    details = .summary_details(object)),
    class = paste0("summary.", class(object)))
}

#' @rdname regression-methods
#' @export
print.summary.gpsvm_regression <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  .print_header(x, x$title, x$call)
  cat(format(x$kernel), x$scaling, x$plan, sep = "\n")
  cat(sprintf("\n%d observations%s. Residuals:\n", x$n,
              if (is.null(x$missing)) "" else paste0(" ", x$missing)))
  print(stats::setNames(x$residuals, c("Min", "1Q", "Median", "3Q", "Max")), digits = digits)
  .print_details(x, digits)
  cat(sprintf("\nLog evidence: %s (df %d); noise sd %s\n", format(x$log_lik, digits = digits + 2L),
              x$df, format(x$sigma, digits = digits)))
  r2 <- x$r_squared
  cat(sprintf("R-squared: %s (training)%s\n", format(r2[["training"]], digits = digits),
              if (is.na(r2[["loo"]])) "" else
                sprintf(", %s (leave-one-out)", format(r2[["loo"]], digits = digits))))
  cat("Solver: ", .format_convergence(x$convergence), "\n", sep = "")
  invisible(x)
}
