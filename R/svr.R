#' Support vector regression as a Gaussian-process MAP estimate
#'
#' Fits epsilon-insensitive support vector regression by solving its dual
#' quadratic programme, and reads the solution as the maximum a posteriori
#' (MAP) estimate of a Gaussian-process model (Gao, Gunn, Harris and Brown,
#' 2002): a zero-mean GP prior with covariance `kernel` and the likelihood
#' \eqn{C / (2(\epsilon C + 1)) \exp(-C L_\epsilon(y - a(x)))}. This is the
#' model of [mfsvr()], which gives its posterior mean where `svr()` gives its
#' mode. On top of the fit this gives the model's evidence
#' ([logLik.gpsvm_regression()], [evidence()]; see "The evidence" below), a
#' choice of `C` by that evidence, and error bars (eqs. 22, 29-31,
#' [predict.gpsvm_regression()]).
#'
#' With the default `scale = TRUE` the model is fitted to standardised data,
#' as by `e1071::svm()`: see "Scaling" below. `C` and `epsilon` then act on
#' the scaled response (so `epsilon = 0.1` is a tenth of its standard
#' deviation), and the default `rbf_kernel()` gets its width from the scaled
#' inputs ([kernels]). Everything the methods return is in the units of the
#' data as given ([regression-methods]).
#'
#' The solution is \eqn{a(x) = \sum_i \beta_i k(x_i, x) + b} with
#' \eqn{\beta_i = \alpha_i^+ - \alpha_i^-}, \eqn{|\beta_i| \le C}.
#' With `bias = TRUE` (libsvm's eps-SVR) the dual carries the equality
#' constraint \eqn{\sum_i \beta_i = 0} and is solved by sequential minimal
#' optimisation (SMO) with second-order working-set selection (Fan, Chen and
#' Lin, 2005) and shrinking. With `bias = FALSE` (the paper's model)
#' \eqn{b = 0} and the dual has box constraints only; the same SMO solver
#' is used with one extra unbounded variable whose kernel column is zero, so
#' that pairing with it is an exact one-coefficient step and the equality
#' constraint is void. Kernel columns are computed on demand and kept in
#' a cache of `control$cache_mb` megabytes, so large `n` does not need the
#' `n` x `n` Gram matrix. Rows with identical inputs share one kernel column
#' and one value of \eqn{K\beta}, and the solver keeps these once per
#' distinct input, so a step costs time in proportion to the number of
#' distinct inputs: \eqn{10^5} rows on a handful of input values fit in a
#' second.
#'
#' The training points are split as in eqs. (8)-(11) into `X_0`
#' (\eqn{\beta_i = 0}), `X_C` (\eqn{|\beta_i| = C}), `X_M-` and `X_M+`
#' (margin vectors, \eqn{0 < |\beta_i| < C}, residual \eqn{\mp\epsilon}).
#' A coefficient counts as `C` when it is within `control$margin_tol * C`
#' of it, and as 0 when it is within `margin_tol` times the smaller of `C`
#' and the largest \eqn{|\beta_i|}.
#'
#' The solver stops at a KKT tolerance (`control$tol`), and the evidence,
#' whose terms \eqn{\log |\beta_i|} and \eqn{\log(C - |\beta_i|)} are
#' sensitive to small errors in the coefficients, would then depend on that
#' tolerance. So the solution is polished: given the split of the training
#' set, the margin vectors' coefficients (and `b`) solve a linear system
#' exactly, and when that solution keeps the split and satisfies the KKT
#' conditions it is the exact optimum, and is returned (`fit$polished`).
#' Otherwise the dual is solved again at tolerance `1e-10` and polished from
#' there. The convergence record's `change` is the KKT gap of the returned
#' solution.
#'
#' @section Scaling:
#' With `scale = TRUE` (the default of all the regression models, as in
#' e1071 and kernlab) the numeric input columns are centred and scaled to
#' unit standard deviation (constant columns, with a warning naming them,
#' are only centred, to 0, so that they change no kernel, as [stats::lm()]
#' leaves an aliased column out; a formula's factor dummy columns are left
#' alone) and so is the response. The fit stores both scalings (`fit$scaling`,
#' `fit$response_scaling`); `fit$x` holds the scaled inputs and the model's
#' parameters (here `C`, `epsilon`, `beta`, `b`) refer to the scaled data.
#' Predictions, standard errors, intervals, derivatives (by the chain rule),
#' fitted values, residuals, [sigma()], plots and [logLik()] (with the
#' Jacobian of the response's scaling, so that evidences with and without
#' scaling compare) are in the data's units. `scale = FALSE` fits the data
#' as given, the setting of the papers.
#'
#' @section The evidence:
#' `logLik()` is the log evidence of the model the fit is the MAP estimate
#' of, with its latent function integrated out, computed by expectation
#' propagation as for [mfsvr()] (the same engine, with its accuracy and its
#' FITC approximation beyond 2000 observations): at the same `C`, `epsilon`
#' and kernel the two fits have the same `logLik()`. It is computed when
#' asked for (`logLik()`, `print()`, `summary()`, `glance()`), which costs
#' an EP fit, and stored by a search that computed it. The threshold `b` of
#' `bias = TRUE` is a known prior mean to it. The paper's own
#' approximations, eq. (16) and its refined form, are
#' `evidence(fit, method = "eq16")` and `"refined"`; they are not the
#' model's evidence ([evidence()], "Performance" below), and compared across
#' models they would make `svr(optimize = TRUE)` the fit of highest
#' evidence, whatever its intervals.
#'
#' @section Choosing C:
#' `optimize = TRUE` (or `"C"`) chooses `C` by the evidence, as `optimize`
#' chooses hyperparameters in every gpsvm fitter; the search is recorded in
#' `fit$optimization` (see [mfsvr()]; its `path` lists the values of `C`
#' tried with their log evidence, and `evidence` says which evidence was
#' maximised). `optimize = NULL`, the default, chooses `C` when the call
#' gives none, on standardised data (`scale = TRUE`; beyond `search_max_n`
#' observations of [gpsvm_size_policy()], on that many evenly spaced rows,
#' as [mfsvr()]'s); otherwise `C` is the one given, or 1
#' (e1071's `cost`). Read as a likelihood, `C = 1` on a standardised
#' response implies a noise standard deviation of about 1.4 times the
#' response's, so its prediction intervals are wide; the evidence's `C`
#' sets the noise the data support: its intervals hold about their level
#' on the benchmark data, where those of `C = 1` are far too wide, for a
#' held-out RMSE near `C = 1`'s ("Performance" below). On few rows the
#' evidence's `C` is itself uncertain, and up to 200 observations the
#' prediction intervals integrate over it (see
#' [predict.gpsvm_regression()]). On very few rows the intervals can stay
#' too narrow: what they miss is the shape of the noise (`epsilon` is not
#' searched), not its scale alone; the model can describe such data, but
#' the evidence of so few rows does not find the setting.
#' [svr_control()]'s `C_search` says how:
#'
#' * `"evidence"` (the default) maximises the log evidence
#'   (`control$evidence`). For the model's evidence, `"ep"`, the search is
#'   that of `mfsvr(optimize = "C")` (L-BFGS-B on log C with the EP
#'   evidence's gradient, within \eqn{C s \in [0.01, 10^4]}, \eqn{s} the
#'   response's standard deviation; [search_control()]'s `tol` and
#'   `max_iter` as there). With `bias = TRUE`, with a `C_interval`, or for
#'   the paper's `"eq16"` and `"refined"`, it is a grid of `grid` values of
#'   `C` on the log scale ([search_control()], 25 by default) over
#'   `control$C_interval` (by default `C / 100` to `100 C`), then
#'   golden sections between the best point's neighbours until the bracket
#'   is narrower than `tol` in log C (the search [rvm()] uses for its
#'   width); with `bias = TRUE` each point refits the threshold. Eq. (16)
#'   has logarithmic spikes where a margin vector's \eqn{|\beta_i|} reaches
#'   0 or `C`, so this finds the best point of a rough curve. A best `C` at
#'   an end of the interval is a warning (`fit$optimization$at_bound` says
#'   which, as `"C:lower"` or `"C:upper"`): there the evidence may rise
#'   further. For eq. (16) at the upper end with no multiplier at `C` it
#'   does rise, towards a limit: every residual is within \eqn{\epsilon},
#'   and a larger `C` leaves the fit as it is.
#' * `"fixed_point"` iterates eq. (17),
#'   \deqn{C_{new} = \frac{n + |X_M|}{\sum_{X_C} L_\epsilon(r_i) +
#'   \sum_{X_M} 1/(C - |\beta_i|) + n\epsilon/(\epsilon C + 1)},}
#'   refitting at every step from the starting value `C` (5 when none is
#'   given), until two successive values differ by less than `tol` (0.05,
#'   the paper's) or after `max_iter` steps (50; [search_control()]);
#'   `fit$optimization$path` lists the values of `C` with their eq. (16)
#'   evidence, the first the start. The paper notes the iteration is not
#'   globally stable: non-convergence is a warning.
#'
#' @section Noise that varies with the inputs: With `noise = "varying"` the
#'   fit is the MAP estimate of [mfsvr()]'s model with its noise that
#'   varies with the inputs (see "Noise that varies with the inputs" there,
#'   which `"auto"`, the fit's `C` and `epsilon`, its intervals and
#'   calibration follow too): the noise function \eqn{l(x)} is fitted on that
#'   model's EP evidence at the `C`, `epsilon` and kernel chosen as with
#'   constant noise, and each observation then has its own box
#'   \eqn{C e^{-l(x_i)}} and tube \eqn{\epsilon e^{l(x_i)}} in the dual.
#'   [confint()], [evidence_curve()] and the paper's evidences
#'   (`evidence(fit, method = "eq16")`) of such a fit are errors; `logLik()`
#'   is the evidence with the noise function integrated out. A free
#'   threshold (`bias = TRUE`) has no such evidence and is an error with a
#'   varying noise.
#'
#' @section Performance:
#' Measured up to 2026-12-02 (gpsvm 0.1.0, development version, on a 2-core
#' machine; `bench/bench-realdata.R` in the sources).
#'
#' * The evidence: an EP fit took 0.1 s of CPU on 354 observations, 1.5 s
#'   on 3000. Eq. (16) exceeded the EP value by 14 to 49 nats on 21-35 rows
#'   and by 110 to 290 on 140-350 rows (part "calibration").
#' * Choosing C (part "calibration"): on 20 held-out 70/30 splits of six
#'   mlbench data sets the 95% prediction intervals held 0.94-0.96 of the
#'   targets, and on six small sets of 21-35 training rows 0.88-0.93 at the
#'   chosen `C` alone, where those of `C = 1` held 0.97-1.00 at 2.5 to 4
#'   times the width; they were 0.95-1.10 times as wide as [mfsvr()]'s. The
#'   held-out RMSE was 0.83 to 1.04 times that of `C = 1` (above 1.02 on
#'   three noisy sets: PimaIndiansDiabetes2's glucose, LifeCycleSavings and
#'   attitude, 1.023 to 1.035; there the evidence's `C`, on average 1.7 to
#'   3.8, suits the posterior mean, whose RMSE was within 1.2% of `C = 1`'s,
#'   more than this posterior mode: half that `C` brought the mode within
#'   1.6%, while choosing `epsilon` by the evidence too did not). Integrated
#'   over `C`, on the six small sets the 95% intervals held 0.88-0.94 of the
#'   targets (0.92 or more on four sets, against one at the chosen `C`
#'   alone) and the 80% intervals 0.69-0.84 (0.75 or more on three sets,
#'   against one), 2% to 5% wider; the 80% intervals stayed too narrow on
#'   mtcars, LifeCycleSavings and attitude. One fixed `C` and `epsilon` for
#'   each set, chosen on the held-out rows themselves, brought [mfsvr()]'s
#'   95% and 80% intervals within 0.92-0.98 and 0.75-0.85 on each of the
#'   six (part "hindsight").
#'
#' @inheritParams rvm
#' @inheritParams mfsvr
#' @param C Regularisation constant (the likelihood's scale), a positive
#'   number, or `NULL` (the default): chosen by the evidence where `optimize =
#'   NULL` searches, and 1 (e1071's `cost`) elsewhere (see "Choosing C"). A
#'   value given is the starting value when `optimize` chooses it (else the
#'   search starts from 5, as [mfsvr()]'s does). It acts on the scaled response
#'   when `scale = TRUE`, as e1071's `cost` does.
#' @param kernel A kernel: [rbf_kernel()], [poly_kernel()] or [linear_kernel()].
#'   The default `rbf_kernel()` chooses its width from the (scaled) inputs;
#'   where the default search chooses `C`, the evidence weighs that width
#'   against e1071's as [mfsvr()]'s does (see its `kernel`).
#' @param bias `FALSE` (or 0) for the paper's zero-mean model, `TRUE` for a
#'   free threshold `b` (standard eps-SVR as in libsvm), or a prior variance
#'   \eqn{> 0} of a constant offset of the latent function (a constant added
#'   to the kernel, so that the fit is the MAP estimate of [mfsvr()]'s model
#'   with that `bias`). `NULL` (the default): where the evidence's gradient
#'   chooses `C` on standardised data (the default search), the evidence
#'   also chooses between no offset and a prior variance of 1, as in
#'   [mfsvr()] (same choice, same evidence); elsewhere no offset.
#' @param optimize `TRUE` (or `"C"`) chooses `C` by the evidence (see
#'   "Choosing C"); `FALSE` keeps the `C` given. `NULL` (the default)
#'   chooses `C` when the call gives none, on standardised data, by
#'   [mfsvr()]'s default search and under its size rule (`search_max_n` of
#'   [gpsvm_size_policy()]: beyond it the search runs on that many evenly
#'   spaced rows and the fit on every row keeps its `C`, and says so).
#' @param control Solver and selection settings from [svr_control()].
#' @param calibration_folds The number of cross-validation folds that
#'   calibrate the prediction intervals, as in [mfsvr()] (by default 5 from
#'   10 observations, beyond 100 on 100 evenly spaced rows; see
#'   [predict.gpsvm_regression()]); the refits
#'   choose `C` again where the fit's search chose it, at the fit's kernel
#'   and offset. With noise varying with the inputs, the default
#'   calibration stays only where its cross-validated log score beats the
#'   model's own intervals, as in [mfsvr()].
#' @param noise The noise model, as in [mfsvr()]: `"constant"` (the
#'   default), `"varying"` (its scale a smooth function of the inputs) or
#'   `"auto"` (varying where its evidence is higher by a log Bayes factor
#'   above 3); see "Noise that varies with the inputs".
#' @return An object of class `c("gpsvm_svr", "gpsvm_regression")`: a list
#'   with, in the units of the fitted (scaled) data, `beta`, `alpha_plus`,
#'   `alpha_minus`, `b`, `objective` (the dual objective
#'   \eqn{\frac12\beta'K\beta - y'\beta + \epsilon|\beta|_1}), `C`, `epsilon`,
#'   `x`; `partition` (factor with levels `X_0`, `X_C`, `X_M-`, `X_M+`),
#'   `margin_factor` (the lower Cholesky factor of the margin vectors' kernel
#'   matrix, with a jitter where it is singular, which the error bars and the
#'   evidence use), `polished`, `kernel` (with the width used, and the offset's
#'   prior variance as a constant), `bias` (`TRUE` for a free threshold),
#'   `bias_variance` (the offset's prior variance; absent with a free
#'   threshold), `bias_choice` and `kernel_choice` (as in [mfsvr()]),
#'   `optimization` (the record of the search for `C`, when `optimize` chooses
#'   it), `log_evidence` (the EP log evidence of the scaled response, when a
#'   search computed it), `C_mixture` (where the evidence chose `C` from at
#'   most `C_mixture_max_n` observations (200 by default: see
#'   [gpsvm_size_policy()]), the MAP fits and weights that integrate the
#'   prediction intervals over `C`, see [predict.gpsvm_regression()]),
#'   `interval_calibration` (where the prediction intervals are calibrated by
#'   cross-validation, its record: see `calibration_folds`),
#'   `calibration_declined` (as in [mfsvr()]), `noise_model` (with `noise =
#'   "varying"` or `"auto"`, as in [mfsvr()]); in the data's units `y`,
#'   `fitted.values`, `residuals`; `scaling` and `response_scaling` (`NULL`
#'   with `scale = FALSE`), `convergence` (`converged`, `iterations`, `change`
#'   (the KKT gap), `tol`, `reason`), `control`, `fit_time`, `call` and
#'   `fields` (see [hyperparameters()], "Fitted objects"); formula fits also
#'   `terms`, `xlevels`, `contrasts`, `na.action`, `variables` (the formula's
#'   variables as the data gave them).
#' @references Gao, J. B., Gunn, S. R., Harris, C. J. and Brown, M. (2002).
#'   A probabilistic framework for SVM regression and error bar estimation.
#'   *Machine Learning* 46, 71-89.
#'
#'   Fan, R.-E., Chen, P.-H. and Lin, C.-J. (2005). Working set selection
#'   using second order information for training support vector machines.
#'   *Journal of Machine Learning Research* 6, 1889-1918.
#' @seealso [predict.gpsvm_regression()], [regression-methods],
#'   [plot.gpsvm_regression()], [evidence()], [evidence_curve()],
#'   [svr_control()]; [gpsvm_corrections] (items 1, 4, 9 and 14-16) for where the
#'   fit departs from the paper.
#' @examples
#' # data as they come: inputs and response scaled, width from the data, C
#' # chosen by the evidence
#' fit <- svr(mpg ~ wt + hp, data = mtcars)
#' fit
#' # the same model's posterior mean: the same C, kernel and offset, the
#' # same evidence (the kernel that won, without the offset's constant,
#' # which `bias` adds back)
#' same_kernel <- fit$kernel
#' same_kernel$constant <- NULL
#' logLik(mfsvr(mpg ~ wt + hp, data = mtcars, C = fit$C, bias = fit$bias_variance,
#'              kernel = same_kernel))
#' predict(fit, data.frame(wt = 3, hp = 150), interval = "prediction")
#' # the paper's sine experiment, on the data as given
#' set.seed(1)
#' x <- seq(0, 4 * pi, length.out = 100)
#' y <- sin(x) + rnorm(100, sd = sqrt(0.5))
#' fit <- svr(x, y, C = 2.1, epsilon = 0.4, kernel = rbf_kernel(sqrt(0.8)), scale = FALSE)
#' logLik(fit)
#' head(predict(fit, interval = "prediction"))
#' # C by the eq. (17) fixed point, from C = 10, on another draw
#' set.seed(3)
#' y3 <- sin(x) + rnorm(100, sd = sqrt(0.5))
#' fp <- svr(x, y3, C = 10, epsilon = 0.4, kernel = rbf_kernel(sqrt(0.8)), optimize = TRUE,
#'           control = svr_control(C_search = "fixed_point"), scale = FALSE)
#' fp$optimization$path
#' @export
svr <- function(x, ...) UseMethod("svr")

#' @rdname svr
#' @export
svr.default <- function(x, y, C = NULL, epsilon = 0.1, kernel = rbf_kernel(), bias = NULL,
                        optimize = NULL, control = svr_control(), scale = TRUE,
                        search = search_control(), calibration_folds = NULL,
                        noise = "constant", ...) {
  .open_ledger()
  .check_dots_empty(...)
  noise <- .check_noise_choice(noise)
  weigh_linear <- missing(kernel)  # (the default's candidates, see ?mfsvr)
  C_given <- !is.null(C)
  if (C_given) C <- .check_tube(C, "C")
  epsilon <- .check_tube(epsilon, "epsilon")
  bias_given <- bias
  .resolve_calibration_folds(calibration_folds, .Machine$integer.max, "svr")  # its checks
  # `bias` below flags libsvm's free threshold, `bias_variance` is an offset's
  flag <- is.logical(bias) && length(bias) == 1L && !is.na(bias)
  bias_variance <- if (!flag) .check_bias_variance(bias) else if (!bias) 0
  bias <- isTRUE(bias)
  .check_control(control, "svr_control")
  # the default search is mfsvr()'s, under the same size rule
  open <- is.null(optimize) && !C_given && isTRUE(scale)
  automatic <- open && NROW(x) <= .size_rule("search_max_n")
  if (open && !automatic) {
    args <- list(epsilon = epsilon, bias = bias_given, control = control, scale = scale,
                 search = search, calibration_folds = calibration_folds, noise = noise)
    if (!weigh_linear) args$kernel <- kernel
    return(.fit_on_search_rows(svr.default, x, y, args, .generic_call(match.call(), "svr"),
                               "svr():"))
  }
  searched <- length(.optimize_which(if (automatic) TRUE else optimize %||% FALSE, "C")) > 0L
  # (a search starts where mfsvr()'s does, so that one model's fits agree)
  if (!C_given) C <- if (searched || open) .mfsvr_default_C else .svr_default_C
  kind <- if (searched) .svr_search_kind(control, bias)
  settings <- if (searched) .search_settings(search, kind)
  # the evidence weighs an offset against none where its gradient chooses C
  choose_bias <- identical(kind, "gradient") && is.null(bias_variance) &&
    .bias_by_default(scale, NROW(x))
  if (!bias) bias_variance <- bias_variance %||% 0  # (NULL only with a free threshold)
  if (noise != "constant" && bias) {
    .stop(paste("noise = \"varying\" or \"auto\" needs a model's offset (bias NULL, FALSE or a",
                "prior variance), not a free threshold (bias = TRUE): the noise is fitted on the",
                "model's evidence"))
  }
  # `refit` (the calibration's refits) keeps that fit's kernel and offset
  fit_model <- function(x, y, kernel, scaling, refit = NULL) {
    .charge(NULL)  # (the data's checks and scaling are no choice's)
    if (!is.null(refit)) bias_variance <- refit$bias_variance
    .check_bias_scale(bias_variance, kernel, x)
    if (identical(refit$noise_model$type, "varying")) {
      # (the refit keeps the fit's noise function, C, epsilon and kernel)
      return(.svr_with_noise(list(x = x, y = y, kernel = refit$kernel, bias_variance = bias_variance),
                             noise, control, refit))
    }
    fit <- if (identical(kind, "gradient")) {
      .svr_ep_search(x, y, C, epsilon, kernel, control, settings, automatic,
                     bias_variance, choose_bias && is.null(refit),
                     choose_width = isTRUE(scale) && is.null(refit), weigh_linear)
    } else {
      kernel <- .with_bias(kernel, bias_variance %||% 0)
      fit <- switch(kind %||% "none",
        none = .svr_fit(x, y, C, epsilon, kernel, bias, control),
        C_fixed_point = .svr_fixed_point(x, y, C, epsilon, kernel, bias, control, settings),
        C_evidence = .svr_evidence_search(x, y, C, epsilon, kernel, bias, control, settings))
      fit$bias_variance <- bias_variance
      fit
    }
    .charge_chosen(fit, !is.null(kind))
    if (noise != "constant") {
      fit <- .svr_with_noise(fit, noise, control)
      .charge("noise")
    }
    fit
  }
  fit <- .fit_regression(x, y, kernel, scale, .generic_call(match.call(), "svr"), fit_model)
  fit <- .with_calibration(fit, calibration_folds, function(x, y) {
    fit_model(x, y, fit$kernel, fit$scaling, refit = fit)
  }, weigh = identical(fit$noise_model$type, "varying"))  # (the refits keep its noise function)
  fit$margin_factor <- .svr_margin_factor(fit)
  .with_plan(fit, "svr():")
}

# The C a fit without one keeps when no search chooses it: e1071's cost.
.svr_default_C <- 1

# Which search chooses C (a kind of ?search_control's table): the EP
# evidence's gradient where it has one in C (no threshold refitted at each C,
# no interval given), else a grid and golden sections.
.svr_search_kind <- function(control, bias) {
  if (control$C_search == "fixed_point") return("C_fixed_point")
  if (control$evidence == "ep" && !bias && is.null(control$C_interval)) "gradient" else
    "C_evidence"
}


#' @rdname svr
#' @export
svr.formula <- function(formula, data, subset, na.action, ...) {
  .fit_formula(match.call(), parent.frame(), "svr", svr.default, ...)
}

#' Control settings for svr()
#'
#' @param tol KKT tolerance of the dual solver, with the meaning of
#'   libsvm's `eps` (default 1e-3). With residuals
#'   \eqn{r_i = y_i - \sum_j \beta_j k(x_i, x_j)} (bias excluded), let
#'   \eqn{m} be the largest of \eqn{r_i - \epsilon} over \eqn{\alpha_i^+ < C}
#'   and \eqn{r_i + \epsilon} over \eqn{\alpha_i^- > 0}, and \eqn{M} the
#'   smallest of \eqn{r_i - \epsilon} over \eqn{\alpha_i^+ > 0} and
#'   \eqn{r_i + \epsilon} over \eqn{\alpha_i^- < C}. The solution is optimal
#'   when \eqn{m \le M}; the solver stops when \eqn{m - M} < `tol`. The
#'   solution is then polished to the exact optimum (see [svr()]).
#'   With `bias = FALSE` the value 0 joins both sets (the bias is fixed at 0).
#' @param max_iter Cap on solver iterations (pair steps), a whole number up to
#'   `.Machine$integer.max`.
#' @param cache_mb Size of the kernel-column cache in megabytes (500, as in
#'   every gpsvm control with a cache; it fills only as columns are needed).
#' @param shrinking Whether the solver may set aside points that sit at a
#'   bound and look like staying there (libsvm's heuristic; every point is
#'   re-checked before the solver stops).
#' @param margin_tol A coefficient within `margin_tol * C` of `C` (of 0:
#'   `margin_tol` times the smaller of `C` and the largest coefficient)
#'   counts as being at that bound when the training set is split into
#'   `X_0`, `X_C` and the margin sets.
#' @param evidence Which evidence `optimize` maximises with `C_search =
#'   "evidence"`: `"ep"`, the model's evidence (what `logLik()` gives), or the
#'   paper's approximations `"eq16"` and `"refined"` (see [evidence()]).
#' @param C_search How `optimize = TRUE` chooses `C` (see "Choosing C" in
#'   [svr()]): `"evidence"` maximises the evidence, `"fixed_point"` iterates
#'   the paper's eq. (17).
#' @param C_interval Search interval for `C_search = "evidence"`; `NULL`
#'   means `C / 100` to `100 C` around the starting `C` for the grid search,
#'   and the ranges of `mfsvr(optimize = "C")` for the EP evidence's
#'   gradient search (an interval given makes it a grid search).
#' @return A list of class `gpsvm_svr_control`.
#' @examples
#' svr_control(tol = 1e-6)
#' svr_control(C_search = "fixed_point")
#' @export
svr_control <- function(tol = 1e-3, max_iter = 1e7, cache_mb = 500,
                        shrinking = TRUE, margin_tol = 1e-8,
                        evidence = c("ep", "eq16", "refined"),
                        C_search = c("evidence", "fixed_point"),
                        C_interval = NULL) {
  tol <- .check_number(tol, "tol", lower = 0, open_lower = TRUE)
  max_iter <- .check_count(max_iter, "max_iter", lower = 1L)
  cache_mb <- .check_number(cache_mb, "cache_mb", lower = 0, open_lower = TRUE)
  .check_flag(shrinking, "shrinking")
  margin_tol <- .check_number(margin_tol, "margin_tol", lower = 0, upper = 0.5)
  evidence <- .match_choice(evidence, c("ep", "eq16", "refined"), "evidence")
  C_search <- .match_choice(C_search, c("evidence", "fixed_point"), "C_search")
  if (!is.null(C_interval) && (!is.numeric(C_interval) || length(C_interval) != 2L ||
      any(!is.finite(C_interval)) || any(C_interval <= 0) || C_interval[1] >= C_interval[2])) {
    .stop("'C_interval' must be two increasing positive finite numbers")
  }
  structure(list(tol = tol, max_iter = max_iter, cache_mb = cache_mb,
                 shrinking = shrinking, margin_tol = margin_tol, evidence = evidence,
                 C_search = C_search, C_interval = C_interval),
            class = c("gpsvm_svr_control", "gpsvm_control"))
}

# One fit at a fixed C: the dual solved and polished (smo.hpp), the set split.
.svr_fit <- function(x, y, C, epsilon, kernel, bias, control, warn = TRUE,
                     log_noise_scale = NULL) {
  .count_fit()
  res <- cpp_svr_fit(kernel, x, y, list(
    C = C, epsilon = epsilon, bias = bias, tol = control$tol, max_iter = control$max_iter,
    cache_mb = control$cache_mb, shrinking = control$shrinking,
    log_noise_scale = log_noise_scale, margin_tol = control$margin_tol))
  nm <- rownames(x)
  fit <- list(
    beta = stats::setNames(res$beta, nm), alpha_plus = res$alpha_plus,
    alpha_minus = res$alpha_minus, b = res$b, fitted.values = stats::setNames(res$fitted, nm),
    residuals = stats::setNames(y - res$fitted, nm), objective = res$objective,
    C = C, epsilon = epsilon, kernel = kernel, bias = bias, x = x, y = y,
    convergence = res$convergence, polished = res$polished, control = control)
  fit$partition <- factor(.svr_parts[res$partition + 1L], levels = .svr_parts)
  class(fit) <- c("gpsvm_svr", "gpsvm_regression")
  if (warn) {
    .warn_not_converged("svr(): the dual solver", fit$convergence,
                        "the change is the KKT gap; try a larger 'max_iter' in svr_control()")
  }
  fit
}

# The split of the training points, eqs. (8)-(11).
.svr_parts <- c("X_0", "X_C", "X_M-", "X_M+")

.svr_margin <- function(fit) fit$partition %in% c("X_M-", "X_M+")

# Eq. (17): the evidence's stationarity condition in C, with the fit held fixed.
.svr_C_update <- function(fit) {
  n <- length(fit$y)
  M <- .svr_margin(fit)
  eps <- fit$epsilon
  C <- fit$C
  (n + sum(M)) / (.svr_loss_C(fit) + sum(1 / (C - abs(fit$beta[M]))) + n * eps / (eps * C + 1))
}

# The loss beyond the tube over X_C (model units).
.svr_loss_C <- function(fit) {
  r <- .to_model_units(fit$residuals, fit$response_scaling, center = FALSE)
  sum(pmax(abs(r[fit$partition == "X_C"]) - fit$epsilon, 0))
}

# Eq. (17) from the starting C until successive values are within
# settings$tol, every value fitted; the record lists their eq. (16) evidence.
.svr_fixed_point <- function(x, y, C, epsilon, kernel, bias, control, settings) {
  path <- C
  tried <- evidence <- numeric(0)
  converged <- FALSE
  fit_at <- function(C) {
    fit <- .svr_fit(x, y, C, epsilon, kernel, bias, control)
    tried <<- c(tried, C)
    evidence <<- c(evidence, .svr_log_evidence(fit, "eq16"))
    fit
  }
  for (step in seq_len(settings$max_iter)) {
    fit <- fit_at(C)
    C_new <- .svr_C_update(fit)
    path <- c(path, C_new)
    if (!is.finite(C_new) || C_new <= 0) break
    converged <- abs(C_new - C) < settings$tol
    C <- C_new
    if (converged) break
  }
  if (is.finite(C) && C > 0) fit <- fit_at(C)
  steps <- length(path) - 1L
  change <- abs(diff(utils::tail(path, 2)))
  if (!converged) {
    warning(sprintf(paste0("svr(): the eq. (17) iteration for C did not settle in %d steps ",
                           "(last change %.3g, tolerance %.3g)"), steps, change, settings$tol),
            call. = FALSE)
  }
  fit$optimization <- list(
    method = "eq. (17) fixed point", start = c(C = path[1L]), estimate = c(C = fit$C),
    log_evidence = utils::tail(evidence, 1L), at_bound = character(0),
    evaluations = length(evidence),
    path = data.frame(C = tried, log_evidence = evidence),
    stopped = if (converged) sprintf("successive values of C within %g", settings$tol) else
      sprintf("not settled after %d steps", steps),
    convergence = .convergence(converged, steps, change, settings$tol,
                               if (!converged) "the iteration did not settle"))
  fit
}

# C by mfsvr()'s default search on the same model (so that the two fits of
# one model choose the same C, width and offset), then the MAP fit there.
.svr_ep_search <- function(x, y, C, epsilon, kernel, control, settings, automatic,
                           bias_variance, choose_bias, choose_width, weigh_linear) {
  ep_control <- mfsvr_control()
  inducing <- .mfsvr_approximation(x, kernel, ep_control)
  fit_at <- .mfsvr_fit_at(x, y, C, epsilon, ep_control, "C", automatic, inducing, settings)
  kernels <- .kernel_candidates(kernel, x, choose_width &&
                                  .kernel_by_default(TRUE, NROW(x), "C", inducing),
                                linear = weigh_linear, matern = weigh_linear)
  ep <- .as_svr_conditions(.fit_with_bias(fit_at, kernels, bias_variance, choose_bias))
  kernel <- ep$kernel
  fit <- .svr_fit(x, y, ep$C, epsilon, kernel, FALSE, control)
  fit$optimization <- c(ep$optimization, list(evidence = "ep"))
  fit$log_evidence <- ep$log_evidence
  fit$bias_variance <- ep$bias_variance
  fit$bias_choice <- ep$bias_choice
  fit$kernel_choice <- ep$kernel_choice
  # (predictions integrate over C with the MAP fits at the nodes)
  fit$C_mixture <- .C_mixture(ep, y, function(q) {
    lapply(q$C, function(C_k) {
      if (C_k == ep$C) fit else .svr_fit(x, y, C_k, epsilon, kernel, FALSE, control, warn = FALSE)
    })
  })
  fit
}

# Conditions of the shared EP engine as svr()'s own.
.as_svr_conditions <- function(expr) {
  withCallingHandlers(expr, warning = function(w) {
    warning(sub("^mfsvr\\(\\)", "svr()", conditionMessage(w)), call. = FALSE)
    invokeRestart("muffleWarning")
  })
}

# C by maximising the evidence over the interval (.width_search()); an end of
# the interval is a limit of the search, not an answer: the warning says so.
.svr_evidence_search <- function(x, y, C, epsilon, kernel, bias, control, settings) {
  interval <- control$C_interval %||% c(C / 100, C * 100)
  method <- control$evidence
  bounds <- log(interval)
  spec <- .search_spec(start = c(log_C = min(max(log(C), bounds[1]), bounds[2])),
                       lower = c(log_C = bounds[1]), upper = c(log_C = bounds[2]), natural = exp, natural_names = "C",
                       benign = c("C:lower", "C:upper"), advice = .svr_C_bound_advice)
  evaluate <- function(par, first, warm, accuracy) {
    fit <- .svr_fit(x, y, exp(par[[1]]), epsilon, kernel, bias, control)
    if (method != "ep") return(.search_point(fit, .svr_log_evidence(fit, method)))
    # a point where EP does not settle is a failed point, not a warning
    ep <- suppressWarnings(.svr_ep_fit(x, y, fit, start = warm$sites))
    fit$sites <- ep$fit
    .search_point(fit, ep$log_evidence)
  }
  outcome <- .width_search(spec, evaluate, grid = settings$grid, tol = settings$tol,
                           max_iter = settings$max_iter)
  if (is.null(outcome$best$fit)) {
    .stop(sprintf("svr(): the %s evidence could not be evaluated at any C over [%.3g, %.3g]",
                  if (method == "ep") "EP" else method, interval[1], interval[2]))
  }
  fit <- outcome$best$fit
  fit$sites <- NULL
  if (method == "ep") fit$log_evidence <- outcome$best$log_evidence
  fit <- .finish_search(fit, outcome, spec, "svr():", log_evidence = outcome$best$log_evidence)
  fit$optimization[c("evidence", "interval")] <- list(method, interval)
  fit
}

# The warning of a C search at an end of its interval: at the upper end with
# no multiplier at C the fit is the hard tube, which a larger C leaves as it is.
.svr_C_bound_advice <- function(record, fit) {
  at_bound <- sub("^C:", "", record$at_bound)
  if (length(at_bound) == 0L) return(NULL)
  hard_tube <- at_bound == "upper" && !any(fit$partition == "X_C")
  sprintf(paste("ended where the evidence for C is largest, at the %s end of its search interval",
                "(C = %.4g)%s; widen control$C_interval, or set C"),
          at_bound, fit$C,
          if (hard_tube) paste(": no multiplier is at C, so the fit keeps every residual",
                               "within epsilon and the evidence rises towards a limit as",
                               "C grows") else "")
}
