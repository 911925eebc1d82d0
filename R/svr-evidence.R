# evidence() of every model, the evidences of an SVR fit, and evidence_curve().

#' Evidence (marginal likelihood) of a fitted model
#'
#' `evidence()` returns a fit's log evidence \eqn{\ln P(D)}, the log density
#' of the response (or the labels) under the fitted model with its weights
#' integrated out, in the units of the data as given: the value of
#' [logLik()] (for a fit with `scale = TRUE`, the evidence of the scaled
#' response converted with the Jacobian of the scaling, see
#' [logLik.gpsvm_regression()]). Every gpsvm model with an evidence has it:
#' [svr()] and [mfsvr()] (one model, so one evidence: the EP approximation
#' at its `C`, `epsilon` and kernel), two-class [gpc()] fits (EP), [rvm()]
#' and [srvm()] (exact, at the learned hyperparameters).
#' [evidence_curve()] gives it over a grid of `C`.
#'
#' Which evidences compare (densities of the same numbers: the same
#' response, at the same rows), and how [stats::AIC()] and [stats::BIC()]
#' charge the hyperparameters the evidence estimated, is under "The evidence
#' and its degrees of freedom" in [regression-methods].
#'
#' For [svr()] fits the paper gives two approximations of its own (Gao et
#' al., 2002, section 3.1), which `method = "eq16"` and `method = "refined"`
#' return. Both expand the log posterior to second order around the MAP
#' solution, integrate the non-margin points out exactly (which leaves the
#' prior of the margin vectors' function values, \eqn{N(0, K_{MM})}), and
#' differ in how the margin vectors' kinked likelihood terms are integrated:
#'
#' * `"eq16"`: eq. (16) of the paper, which drops the quadratic term and
#'   integrates the two exponential tails exactly:
#'   \deqn{\ln P(D) \approx -\frac12 \beta'K\beta - \frac12\ln\det(2\pi K_{MM})
#'   + n\ln\frac{C}{2(\epsilon C+1)} - C\sum_{X_C} L_\epsilon(r_i)
#'   + \sum_{X_M} \ln\frac{C}{|\beta_i|(C-|\beta_i|)}.}
#'   It has logarithmic spikes when a margin vector's \eqn{|\beta_i|}
#'   approaches 0 or `C` (as the paper says); coefficients within
#'   `control$margin_tol * C` of a bound are counted at the bound, so the
#'   value is always finite.
#' * `"refined"`: keeps the diagonal of the quadratic term, \eqn{h_i =
#'   (K_{MM}^{-1})_{ii}}, so each margin vector contributes
#'   \eqn{\ln[I(|\beta_i|) + I(C - |\beta_i|)]} with
#'   \eqn{I(c) = \int_0^\infty e^{-cu - h_i u^2/2} du =
#'   \sqrt{\pi/(2h_i)}\, \mathrm{erfcx}(c/\sqrt{2h_i})} in place of the last
#'   sum. It tends to eq. (16) as \eqn{h_i \to 0} and stays finite at
#'   \eqn{|\beta_i| = 0} or `C`. (The paper writes the diagonal of
#'   \eqn{K^{-1}} restricted to \eqn{X_M}; after integrating the other points
#'   out the precision of the margin values is \eqn{K_{MM}^{-1}}, which is
#'   what is used here.)
#'
#' Neither is the model's evidence: the expansion around the mode of a
#' posterior with kinks misses much of its mass (on the benchmark's held-out
#' splits eq. 16 exceeded the EP evidence by 14 to 290 nats), so
#' `logLik()` and `method = "ep"` (the default) give the EP value, checked
#' against numerical integration and importance sampling in the tests. With
#' `bias = TRUE` the threshold `b` is treated as a known prior mean. When
#' \eqn{K_{MM}} is numerically singular (duplicated inputs) a small multiple
#' of the identity is added before its Cholesky factorisation.
#'
#' For [mfsvr()] fits, `gradient = TRUE` adds the analytic gradient of the
#' log evidence at the EP fixed point, what `mfsvr(optimize = TRUE)`
#' follows: the attribute `gradient`, named `log_C`, `log_epsilon` and
#' `log_sigma` (the Gaussian kernel's width on the scale the model was
#' fitted on, 0 for other kernels), or with a width per input `log_C`,
#' `log_epsilon` and one `log_sigma[<column>]` per input. It costs one more
#' EP sweep from the fit's sites.
#'
#' @seealso [gpsvm_corrections], items 4 and 14.
#' @param object A fit from [svr()], [mfsvr()], [rvm()], [srvm()] or
#'   [gpc()] (two classes, `method = "tap"`).
#' @param method For [svr()] fits, `"ep"` (the model's evidence, as
#'   `logLik()`), `"eq16"` or `"refined"`.
#' @param gradient For [mfsvr()] fits, `TRUE` adds the gradient (see above).
#' @param ... Unused; unknown arguments are an error.
#' @return The log evidence, a number (with attribute `gradient` when
#'   asked).
#' @references Gao, J. B., Gunn, S. R., Harris, C. J. and Brown, M. (2002).
#'   A probabilistic framework for SVM regression and error bar estimation.
#'   *Machine Learning* 46, 71-89.
#' @examples
#' set.seed(2)
#' x <- seq(0, 4 * pi, length.out = 60)
#' y <- sin(x) + rnorm(60, sd = sqrt(0.5))
#' fit <- svr(x, y, C = 2, epsilon = 0.4, kernel = rbf_kernel(sqrt(0.8)))
#' evidence(fit)
#' evidence(fit, method = "eq16")
#' evidence(fit, method = "refined")
#' evidence(mfsvr(x, y, C = 2, epsilon = 0.4, kernel = rbf_kernel(sqrt(0.8))), gradient = TRUE)
#' @export
evidence <- function(object, ...) UseMethod("evidence")

#' @rdname evidence
#' @export
evidence.gpsvm_regression <- function(object, ...) {
  .check_dots_empty(...)
  c(logLik(object))
}

#' @rdname evidence
#' @export
evidence.gpsvm_classifier <- evidence.gpsvm_regression

#' @rdname evidence
#' @export
evidence.gpsvm_svr <- function(object, method = c("ep", "eq16", "refined"), ...) {
  .check_dots_empty(...)
  .validate_fit(object)
  method <- .match_choice(method, .svr_evidence_methods, "method")
  if (method != "ep") .check_constant_tube(object, sprintf("evidence(method = \"%s\")", method))
  .response_log_density(object, .svr_log_evidence(object, method))
}

.svr_evidence_methods <- c("ep", "eq16", "refined")

# The terms of eq. (16) but the margin vectors' one-dimensional integrals.
.svr_evidence_parts <- function(fit) {
  n <- length(fit$y)
  C <- fit$C
  eps <- fit$epsilon
  M <- .svr_margin(fit)
  # beta'K beta from the fitted values (in model units): K beta = fitted - b
  latent <- .to_model_units(fit$fitted.values, fit$response_scaling) - fit$b
  quad <- sum(fit$beta * latent)
  L <- .svr_margin_factor(fit)
  logdet <- 2 * sum(log(diag(L))) + sum(M) * log(2 * pi)
  list(base = -0.5 * quad - 0.5 * logdet + n * log(C / (2 * (eps * C + 1))) - C * .svr_loss_C(fit),
       a = abs(fit$beta[M]), L = L, C = C)
}

# The log evidence of the scaled response by `method` (EP: stored, or computed).
.svr_log_evidence <- function(fit, method) {
  if (method == "ep") {
    return(fit$log_evidence %||%
             .svr_ep_fit(fit$x, .to_model_units(fit$y, fit$response_scaling), fit)$log_evidence)
  }
  p <- .svr_evidence_parts(fit)
  a <- p$a
  C <- p$C
  if (length(a) == 0L) return(p$base)
  if (method == "eq16") return(p$base + sum(log(C) - log(a) - log(C - a)))
  h <- cpp_inverse_diagonal(p$L)  # (K_MM^-1)_ii
  p$base + sum(.log_margin_integral(a, C - a, h))
}

# The EP fit of the model an svr() fit is the MAP estimate of, for y less the
# threshold b (a known prior mean); `start` an EP fit to warm-start from.  A
# run that does not settle is a warning and an NA evidence: the MAP fit stands.
.svr_ep_fit <- function(x, y, fit, start = NULL) {
  control <- mfsvr_control()
  ep <- .mfsvr_fit(x, y - fit$b, fit$C, fit$epsilon, fit$kernel, control, warn = FALSE,
                   start = start, inducing = .mfsvr_approximation(x, fit$kernel, control))
  convergence <- ep$convergence
  if (convergence$converged) return(list(fit = ep, log_evidence = ep$log_evidence))
  unsettled <- tryCatch(.stop_unsettled(convergence, fit$C, fit$epsilon), error = function(e) e)
  where <- sprintf("at C = %.4g, epsilon = %.4g", fit$C, fit$epsilon)
  if (inherits(unsettled, "error")) {
    warning(sprintf(paste("svr(): no EP evidence %s: after %d sweeps EP's marginals still move by",
                          "%.3g posterior sd per sweep (a large C makes the likelihood nearly a",
                          "hard tube), so the log evidence is NA; evidence(fit, method = \"eq16\")",
                          "gives the paper's approximation"),
                    where, as.integer(convergence$iterations), convergence$change), call. = FALSE)
    return(list(fit = NULL, log_evidence = NA_real_))
  }
  warning(sprintf(paste("svr(): the EP evidence %s did not converge in %d sweeps (change %.3g,",
                        "tolerance %.3g); the log evidence may be slightly off"),
                  where, as.integer(convergence$iterations), convergence$change, convergence$tol),
          call. = FALSE)
  list(fit = ep, log_evidence = ep$log_evidence)
}

# The log evidences of the fit to data set task$s at C[task$k]; a closure over
# the settings only, so that the data sets reach the workers once.
.evidence_curve_worker <- function(C, epsilon, kernel, bias, control, method) {
  settings <- list(C, epsilon, kernel, bias, control, method)  # forces the promises
  function(task, sets) {
    set <- sets[[task$s]]
    fit <- .svr_fit(set$x, set$y, C[task$k], epsilon, kernel, bias, control)
    vapply(method, function(m) .svr_log_evidence(fit, m), numeric(1))
  }
}

# Data set `s` of evidence_curve(), checked.
.evidence_curve_set <- function(set, s) {
  if (!is.list(set) || is.null(set$x) || is.null(set$y)) {
    .stop(sprintf("data set %d must be a list with components 'x' and 'y'", s))
  }
  x <- .as_input_matrix(set$x, "x")
  list(x = x, y = .check_targets(set$y, nrow(x)))
}

# log[ I(a) + I(b) ], I(c) = int_0^Inf exp(-c u - h u^2 / 2) du
#                          = sqrt(pi / (2 h)) erfcx(c / sqrt(2 h)).
.log_margin_integral <- function(a, b, h) {
  s <- sqrt(2 * h)
  la <- 0.5 * log(pi / (2 * h)) + log(cpp_erfcx(a / s))
  lb <- 0.5 * log(pi / (2 * h)) + log(cpp_erfcx(b / s))
  m <- pmax(la, lb)
  m + log(exp(la - m) + exp(lb - m))
}

#' Evidence over a grid of C
#'
#' The log evidence ([evidence()]) at every value of `C`: for data, of
#' [svr()] fits, for one data set or averaged over several (Gao et al.,
#' 2002, Fig. 2, average over 50 data sets to smooth out the spikes of
#' eq. 16); for an [svr()] or [mfsvr()] fit, of the same model refitted at
#' each `C` with everything else as it is (the data, kernel, `epsilon`,
#' scaling and control), in the units of the data as given, as `evidence()`
#' and `logLik()` give it.
#'
#' The fits, one per data set and value of `C`, are independent: they go
#' through [future.apply::future_lapply()] and run wherever
#' [future::plan()] sends them (see [gpsvm_parallel]), with the same result
#' whatever the plan.
#'
#' @param x Inputs as for [svr()], or a list of data sets, each a list with
#'   components `x` and `y` (then `y` is left out); or a fit from [svr()]
#'   or [mfsvr()].
#' @param y Targets (one data set only).
#' @param C Positive grid of regularisation constants.
#' @param epsilon,kernel,bias,control As for [svr()].
#' @param method `"ep"` (the model's evidence, the default), `"eq16"`,
#'   `"refined"`, or several (for data and [svr()] fits; an [mfsvr()] fit's
#'   is `"ep"`).
#' @param ... For a fit, `C` and `method`; unknown arguments are an error.
#' @return A data frame with one row per `C` and method: `C`, `method`,
#'   `log_evidence` (mean over data sets), `se` (its standard error; `NA` for
#'   one data set) and `sets`; the per-set values are attribute `values`
#'   (a list of `length(C)` x sets matrices, one per method).
#' @seealso [evidence()]
#' @examples
#' set.seed(3)
#' x <- seq(0, 4 * pi, length.out = 50)
#' y <- sin(x) + rnorm(50, sd = sqrt(0.5))
#' evidence_curve(x, y, C = c(0.5, 1, 2, 4, 8), epsilon = 0.4,
#'                kernel = rbf_kernel(sqrt(0.8)))
#' fit <- mfsvr(x, y, C = 2, epsilon = 0.4, kernel = rbf_kernel(sqrt(0.8)))
#' evidence_curve(fit, C = c(0.5, 1, 2, 4, 8))
#' @export
evidence_curve <- function(x, ...) UseMethod("evidence_curve")

#' @rdname evidence_curve
#' @export
evidence_curve.gpsvm_regression <- function(x, C, method = NULL, ...) {
  .check_dots_empty(...)
  .validate_fit(x)
  .check_constant_tube(x, "evidence_curve()")
  .needs_inputs(x, "evidence_curve()")
  C <- .check_C_grid(C)
  method <- .curve_methods(x, method)
  # each refit in a worker sees only the fit and one C
  values <- .future_map(C, function(value) .evidence_at(x, value, method))
  values <- matrix(unlist(values, use.names = FALSE), nrow = length(method))
  .curve_frame(C, stats::setNames(lapply(seq_along(method), function(j) {
    matrix(values[j, ], ncol = 1L)
  }), method))
}

# evidence_curve() of a fit: its evidence's methods, and its log evidence
# (data units) refitted at C.
.curve_methods.gpsvm_regression <- function(object, method) {
  .stop(sprintf("evidence_curve() varies C, which a %s() fit does not have",
                sub("^gpsvm_", "", class(object)[1L])))
}
.curve_methods.gpsvm_svr <- function(object, method) {
  if (is.null(method)) "ep" else
    .match_choice(method, .svr_evidence_methods, "method", several.ok = TRUE)
}
.evidence_at.gpsvm_svr <- function(object, C, method) {
  y <- .to_model_units(object$y, object$response_scaling)
  fit <- .svr_fit(object$x, y, C, object$epsilon, object$kernel, object$bias, object$control)
  vapply(method, function(m) .response_log_density(object, .svr_log_evidence(fit, m)),
         numeric(1))
}

# A positive finite grid of C.
.check_C_grid <- function(C) .check_tube(C, "C", several = TRUE)

#' @rdname evidence_curve
#' @export
evidence_curve.default <- function(x, y = NULL, C, epsilon = 0.1, kernel = rbf_kernel(1),
                                   bias = FALSE, method = c("ep", "eq16", "refined"),
                                   control = svr_control(), ...) {
  .check_dots_empty(...)
  sets <- if (is.list(x) && !is.data.frame(x)) x else list(list(x = x, y = y))
  if (length(sets) == 0L) .stop("'x' holds no data sets")
  C <- .check_C_grid(C)
  method <- if (missing(method)) "ep" else
    .match_choice(method, .svr_evidence_methods, "method", several.ok = TRUE)
  epsilon <- .check_tube(epsilon, "epsilon")
  .check_kernel(kernel)
  .check_control(control, "svr_control")
  sets <- lapply(seq_along(sets), function(s) .evidence_curve_set(sets[[s]], s))
  # one task per data set and C, in the order of a C x sets matrix
  tasks <- expand.grid(k = seq_along(C), s = seq_along(sets))
  fit_one <- .evidence_curve_worker(C, epsilon, kernel, bias, control, method)
  per_task <- .future_map(split(tasks, seq_len(nrow(tasks))), fit_one, sets = sets)
  per_task <- matrix(unlist(per_task, use.names = FALSE), nrow = length(method))
  .curve_frame(C, stats::setNames(lapply(seq_along(method), function(j) {
    matrix(per_task[j, ], length(C), length(sets))
  }), method))
}

# evidence_curve()'s data frame from a length(C) x sets matrix per method.
.curve_frame <- function(C, values) {
  out <- do.call(rbind, lapply(names(values), function(m) {
    v <- values[[m]]
    data.frame(C = C, method = m, log_evidence = rowMeans(v),
               se = if (ncol(v) > 1L) apply(v, 1L, stats::sd) / sqrt(ncol(v)) else NA_real_,
               sets = ncol(v))
  }))
  attr(out, "values") <- values
  out
}
