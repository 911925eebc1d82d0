# Predictions and plots of the regression models: one pipeline for all four.
# The model gives the latent mean and variance at scaled inputs in model
# units (.latent_moments) and its target distribution (.target_distribution); this
# file takes newdata in, and the results back to the user's units and rows.

#' Predictions with error bars from a regression fit
#'
#' Predictions of the latent function (the regression function), of its
#' derivatives, and intervals for it and for new targets, following
#' [stats::predict.lm()], for fits from [svr()], [mfsvr()], [rvm()] and
#' [srvm()]. Everything is in the units of the response and the inputs as
#' given, also when the model was fitted with `scale = TRUE`: with
#' \eqn{y = c_y + s_y f(u)} and \eqn{u_j = (x_j - c_j)/s_j}, the mean and
#' standard error of \eqn{\partial^n y / \partial x_j^n} are
#' \eqn{s_y / s_j^n} times those of \eqn{\partial^n f / \partial u_j^n}.
#'
#' * `"confidence"` is the Gaussian band of the latent function (or of its
#'   derivative): the mean \eqn{\pm} the normal quantile times `se.fit`.
#' * `"prediction"` is the band of a new target (only for `deriv = 0`, since
#'   the noise is on the targets). For [rvm()] and [srvm()] the noise is
#'   Gaussian with an estimated variance, integrated against its posterior,
#'   and the band uses Student's t quantiles on degrees of freedom close to
#'   the residual ones [stats::predict.lm()] uses (calibrated by
#'   cross-validation by default: see below). For [svr()] and [mfsvr()] the noise is
#'   epsilon-insensitive, so the predictive distribution is the Gaussian
#'   latent convolved with the density \eqn{C / (2(\epsilon C + 1))
#'   \exp(-C L_\epsilon(u))} (Gao et al. 2002, eq. 28), which is not
#'   Gaussian: the interval's ends are its exact quantiles, whose CDF is in
#'   closed form (solved by safeguarded Newton iteration). Its variance is
#'   `se.fit^2` plus [svr_noise_variance()] (eq. 30), but mean \eqn{\pm} a
#'   normal quantile times its square root would be too wide at moderate
#'   levels and too narrow far out when the noise dominates.
#' * For [svr()] and [mfsvr()] fits whose `C` the EP evidence's search
#'   chose (their default on standardised data, or `optimize` with `"C"`;
#'   not `svr()`'s grid searches, with `bias = TRUE`, a `C_interval` or the
#'   paper's evidences) from at most `C_mixture_max_n` observations (200 by
#'   default: see [gpsvm_size_policy()]), the `"prediction"`
#'   interval also integrates over
#'   `C`: on few rows the evidence is flat in `C`, so the noise level it
#'   implies is itself uncertain. With a flat prior on \eqn{\log C}, the
#'   predictive distribution is \eqn{\int p(t \mid D, C)\, p(\log C \mid
#'   D)\, d\log C}, \eqn{p(\log C \mid D)} proportional to the EP evidence
#'   (at the other hyperparameters as chosen). The integral is Gauss-Hermite
#'   quadrature with five nodes on the Laplace approximation of the log
#'   evidence in \eqn{\log C} (its curvature from the evidence's gradient
#'   at \eqn{\log C \pm 0.2}), each node's weight corrected by the
#'   evidence there, so that a log evidence that is not quadratic is still
#'   integrated; the interval's ends are the exact quantiles of the mixture
#'   of the five predictive distributions (in the tests, within
#'   \eqn{10^{-4}} in probability of `integrate()` over \eqn{\log C}).
#'   Each node is a fit at its `C` (an EP fit for `mfsvr()`, the MAP fit
#'   for `svr()`; the middle node is the fit itself), kept in
#'   `fit$C_mixture` (`C`, `weight`, `log_evidence`, `log_C_sd` the
#'   Laplace sd of \eqn{\log C}, `components`). The point prediction,
#'   `se.fit` and the `"confidence"` band stay those of the fit at the
#'   chosen `C`. There is no mixture where the evidence has no interior
#'   maximum (`C` at an end of the search's range), nor beyond 200
#'   observations, where the evidence is sharp in `C` (a Laplace sd of
#'   \eqn{\log C} of 0.13 on 280 rows of Friedman 1 and 0.09 on 354 of
#'   Boston housing, against 0.4 on 21 rows of `attitude`) and each node
#'   costs a fit.
#' * By default the `"prediction"` interval of every model is then
#'   calibrated by cross-validation (`calibration_folds` of each fitter: 5
#'   folds from 10 observations; beyond 500 for [rvm()] and [srvm()] and
#'   beyond 100 for [svr()] and [mfsvr()], on that many evenly spaced rows,
#'   see `calibration_max_n_rvm` in [gpsvm_size_policy()]). The model is
#'   refitted on all folds but one, what its fit chooses from the data
#'   chosen again (the relevance vector machines' pruning and noise level,
#'   and their kernel
#'   where the fit's was chosen between the linear and the Gaussian one;
#'   the tube models' `C` where the evidence chose it, with its mixture, at
#'   the fit's kernel and offset), and
#'   each left-out target's place in its refit's predictive distribution
#'   is kept as the probability \eqn{p_i} of a target at least as far from
#'   the distribution's centre (the predictive distributions are
#'   symmetric, so \eqn{1 - p_i} is the level of the central interval that
#'   has the target at an end), with its normal score
#'   \eqn{z_i = \Phi^{-1}(1 - p_i/2)}. Were the refits' predictives right,
#'   the \eqn{z_i^2} would average 1; where they average \eqn{m > 1} the
#'   model is too sure of new targets, and the interval at level \eqn{L} is
#'   the model's own central interval whose normal score is
#'   \eqn{\Phi^{-1}((1 + L)/2)/s}, \eqn{s = \min(1, m^{-1/2})} (\eqn{p_i}
#'   below \eqn{10^{-12}} count as \eqn{10^{-12}}; the level is at most
#'   \eqn{1 - 10^{-12}}): the model's predictive widened on the
#'   normal-score scale, never narrowed. This is cross-validated
#'   calibration of the targets' probability integral transforms (as CV+,
#'   Barber, Candes, Ramdas and Tibshirani 2021, calibrates conformity
#'   scores) with one scale where CV+ takes an order statistic per level:
#'   a map through the order statistics is as noisy as the gaps between
#'   them, in its levels and in the density it implies, where one scale
#'   from all rows is as steady as a variance estimate. The widened
#'   predictive is centred on the full fit's; point predictions, `se.fit`, the
#'   `"confidence"` band and `logLik()` stay the model's. `print()` says
#'   which level of its own the 95% interval is; `fit$interval_calibration`
#'   holds the record (`folds`, each row's `fold`, the left-out
#'   targets' `tail` probabilities \eqn{p_i}, and where the refits chose
#'   their kernel, each one's choice, `kernel`); `calibration_folds = 0`
#'   gives the model's own intervals. Why the models' own intervals need it,
#'   how well the calibrated ones hold new targets and what the refits cost
#'   is in "Prediction intervals" in [rvm()].
#'
#' The latent variance (`se.fit^2`) of each model:
#' * `svr()`: eq. (22) of Gao, Gunn, Harris and Brown (2002),
#'   \eqn{k(z,z) - k_M(z)' K_{MM}^{-1} k_M(z)} over the margin vectors
#'   \eqn{X_M}; with `bound = TRUE` (passed in `...`) eq. (31) instead, the
#'   same over all training points, which needs the full kernel matrix.
#'   (Conditioning on more points, the eq. (31) "bound" lies inside the
#'   eq. (22) band.) The mean is \eqn{\sum_i \beta_i k(z, x_i) + b}.
#' * `mfsvr()`: eq. (5.1) of Gao, Gunn and Harris (2002),
#'   \eqn{k(z,z) - k_z' (K + \Sigma)^{-1} k_z} with the TAP / EP site
#'   variances \eqn{\Sigma}; the mean is \eqn{\sum_i k(z, x_i) w_i}. A fit
#'   on a pivoted Cholesky factor (see `rank_tol` in [mfsvr_control()])
#'   computes both through its \eqn{r} pivot inputs, in \eqn{O(r^2)} per
#'   point instead of \eqn{O(n r)}, and falls back to the formula above at
#'   inputs the pivots do not explain to \eqn{10^{-12}} of \eqn{k(z, z)}
#'   (so the two agree to rounding). An inducing-point fit
#'   ([inducing-points]) gives the FITC model's posterior: mean
#'   \eqn{k_Z(z)' c} and variance \eqn{k(z,z) - a'a + a' A^{-1} a} with
#'   \eqn{a = L^{-1} k_Z(z)}, \eqn{L L' = K_{ZZ}} and \eqn{A} the posterior
#'   precision of the whitened inducing values, \eqn{O(m^2)} per point.
#' * `rvm()`, `srvm()`: \eqn{h' \Sigma h} with \eqn{h = (1, k(z, x_j))_j} over
#'   the kept weights and \eqn{\Sigma} their posterior covariance, plus the
#'   variance of a basis function \eqn{k(\cdot, z)} added at \eqn{z} with the
#'   response's variance as its prior variance (see [rvm()]), \eqn{O(n r)}
#'   per point; the mean is \eqn{h' \mu}, the sparse fit's.
#'
#' With `deriv = n > 0` the same is given for the `n`-th partial derivative
#' of the latent function in input column `wrt`: the derivative of a
#' Gaussian process is one, so the kernel is replaced by its derivatives
#' (\eqn{D^n k(z, x_i)} in the mean, \eqn{D^n D'^n k(z, z)} and
#' \eqn{D^n k(z, x_i)} in the variance), and a constant such as the bias
#' drops out.
#'
#' Intervals are central: their ends are the predictive distribution's
#' \eqn{(1 \mp L)/2} quantiles. Where that distribution is the mixture over
#' `C` above, it is not symmetric about the point prediction (the fit at the
#' chosen `C`), so at very low levels the interval shrinks to the mixture's
#' median, which may lie beside the point prediction.
#'
#' With `scale = TRUE` the response's units are its standard deviation: a
#' fit to one observation, or to responses that are all equal, has none, and
#' its standard errors and intervals are an error that says so (its plots
#' draw no bands); the point predictions stand. Two observations are enough: the
#' intervals then rest on the prior, in units of the two responses' spread
#' (where [stats::lm()] with a slope has no residual degrees of freedom
#' left and gives `NaN`).
#'
#' Rows of `newdata` with missing values get `NA` predictions (with
#' `na.action = na.omit` they are left out instead). A factor level that
#' training never saw (in a row without missing values) is, by default,
#' predicted as a new direction of the input space: the row gets an
#' indicator column of its own for that level, along which every training
#' input lies at 0, and 0 in the factor's own columns; so its kernel values
#' with the training inputs shrink (a Gaussian kernel's by
#' \eqn{e^{-1/(2\sigma^2)}} per such factor), the prediction falls back
#' towards the prior mean and its standard error grows (for [rvm()] and
#' [srvm()] through the basis function their predictive adds at each new
#' input, see "Prediction intervals" in [rvm()]). One
#' warning names
#' every factor with new levels, the levels and the number of rows;
#' `new_levels = "error"` refuses them instead, as [stats::predict.lm()]
#' does. With
#' `newdata = NULL` the predictions are at the training rows, padded with
#' `NA` at rows left out by `na.action = na.exclude` (as [stats::napredict()]
#' does for `lm`).
#'
#' @param object A fit from [svr()], [mfsvr()], [rvm()] or [srvm()].
#' @param newdata New inputs: a data frame for formula fits, else a vector
#'   or matrix with the training columns. `NULL` means the training inputs.
#'   A data frame must hold every variable the formula uses (one it lacks is
#'   an error, not looked up elsewhere); no rows give an empty result. Row
#'   partitions from [gpsvm_partitions()] are predicted one at a time, the
#'   results in the order of their rows (`type = "distribution"` excepted).
#' @param deriv Order of the derivative to predict, a whole number from 0 to
#'   1000.
#' @param wrt The input column to differentiate in: a number, or a column
#'   name of the fit's design matrix (for formula fits, a column of the
#'   model matrix, such as `"log(x)"`).
#' @param se.fit If `TRUE`, also return the standard errors of the latent
#'   function (or derivative) and the noise standard deviation.
#' @param interval `"none"`, `"confidence"` (the latent function) or
#'   `"prediction"` (a new target).
#' @param level Coverage of the interval.
#' @param na.action What to do with rows of `newdata` that have missing
#'   values, as in [stats::predict.lm()]: [stats::na.pass()] (the default)
#'   and [stats::na.exclude()] predict `NA` there (`predict.lm()` leaves
#'   them out with `na.exclude`), [stats::na.omit()] leaves them out (as
#'   `e1071`'s `predict.svm()` does), [stats::na.fail()] makes them an error.
#' @param new_levels What to do with factor levels training never saw:
#'   `"predict"` (see Details) or `"error"`.
#' @param type `"response"` (the default) for the predictions above;
#'   `"distribution"` for the predictive distribution of a new target at each
#'   row (rows with missing values left out), whose central intervals are the
#'   `"prediction"` intervals: see [predictive-distribution]. `deriv`,
#'   `se.fit`, `interval` and `level` do not apply to it.
#' @param ... For [svr()] fits, `bound = TRUE` uses the eq. (31) variance;
#'   otherwise unused (unknown arguments are an error).
#' @return As [stats::predict.lm()]: a vector; a matrix with columns `fit`,
#'   `lwr`, `upr` when an interval is asked; with `se.fit = TRUE` a list
#'   with `fit`, `se.fit` and `residual.scale` (the noise standard deviation,
#'   [sigma()]); with `type = "distribution"` a `gpsvm_predictive` object.
#' @references Gao, J. B., Gunn, S. R., Harris, C. J. and Brown, M. (2002).
#'   A probabilistic framework for SVM regression and error bar estimation.
#'   *Machine Learning* 46, 71-89.
#'
#'   Gao, J. B., Gunn, S. R. and Harris, C. J. (2002). Mean field method for
#'   the support vector machine regression. *Neurocomputing* 50, 391-405.
#'
#'   ter Borg, R. W. and Rothkrantz, L. J. M. (2005). Smooth Bayesian kernel
#'   machines. Lecture Notes in Computer Science 3682.
#' @examples
#' fit <- mfsvr(dist ~ speed, data = cars)
#' new <- data.frame(speed = c(5, 15, 25, NA))
#' predict(fit, new, interval = "prediction")
#' predict(fit, new, se.fit = TRUE)
#' # the slope of the regression function, in feet per mph
#' predict(fit, new, deriv = 1, interval = "confidence")
#' set.seed(1)
#' x <- seq(0, 4 * pi, length.out = 100)
#' y <- sin(x) + rnorm(100, sd = sqrt(0.5))
#' s <- svr(x, y, C = 2.1, epsilon = 0.4, kernel = rbf_kernel(sqrt(0.8)), scale = FALSE)
#' predict(s, c(1, 2, 3), interval = "prediction", bound = TRUE)
#' @export
predict.gpsvm_regression <- function(object, newdata = NULL, deriv = 0, wrt = 1, se.fit = FALSE,
                                     interval = c("none", "confidence", "prediction"),
                                     level = 0.95, na.action = stats::na.pass,
                                     new_levels = c("predict", "error"),
                                     type = c("response", "distribution"), ...) {
  band_args <- !c(missing(deriv), missing(se.fit), missing(interval), missing(level))
  .validate_fit(object)
  interval <- .match_choice(interval)
  new_levels <- .match_choice(new_levels)
  type <- .match_choice(type)
  if (inherits(newdata, "gpsvm_partitions") || (is.null(newdata) && !is.null(object$partitions))) {
    if (type == "distribution") {
      .stop("type = \"distribution\" is not available for data in partitions; predict each one")
    }
    return(.predict_partitions(object, newdata, match.call(), parent.frame()))
  }
  if (type == "distribution") {
    if (any(band_args)) {
      .stop(paste("type = \"distribution\" is the distribution of a new target: 'deriv',",
                  "'se.fit', 'interval' and 'level' do not apply (take its quantiles instead)"))
    }
    return(.distribution_of_rows(object, newdata, na.action, new_levels, ...))
  }
  d <- .check_deriv(deriv, wrt, interval, object$x)
  .check_kernel_deriv(object$kernel, d$deriv)
  .check_flag(se.fit, "se.fit")
  level <- .check_level(level)
  inputs <- .prediction_inputs(object, newdata, na.action, new_levels)
  p <- .predict_rows(inputs$object, inputs$x, d, se.fit || interval != "none", interval, level,
                     ...)
  pad <- if (is.null(newdata)) {
    function(v) stats::napredict(object$na.action, v)
  } else {
    function(v) .pad_rows(v, inputs$keep, inputs$names)
  }
  .prediction_output(p, se.fit, interval, d$deriv, rownames(inputs$x), pad,
                     residual.scale = if (se.fit) sigma(object))
}

# predict(type = "distribution"): the predictive distribution at the rows of
# newdata without missing values.
.distribution_of_rows <- function(object, newdata, na.action, new_levels, ...) {
  if (!.has_target_interval(object)) {
    .target_distribution(object, 0, 0)  # (its error: no noise level to predict with)
  }
  inputs <- .prediction_inputs(object, newdata, na.action, new_levels)
  z <- inputs$x
  m <- .latent_moments(inputs$object, z, 0L, 1L, TRUE, ...)
  d <- .predictive_distribution(inputs$object, z, m, ...)
  if (is.null(d$names)) d$names <- if (!is.null(newdata)) inputs$names[inputs$keep %||% TRUE]
  # which rows of newdata it has (parsnip's columns keep the others' places)
  attr(d, "kept") <- inputs$keep
  d
}

# Mean, standard error and interval ends at scaled inputs z, in the user's
# units.  Extra arguments (svr's bound) go to the model's .latent_moments().
.predict_rows <- function(object, z, d, want_var, interval = "none", level = 0.95, ...) {
  if (nrow(z) == 0L) {
    # nothing to compute, but the model still checks its extra arguments
    .latent_moments(object, object$x[1L, , drop = FALSE], d$deriv, d$wrt, FALSE, ...)
    empty <- numeric(0)
    return(list(fit = empty, se = if (want_var) empty,
                lower = if (interval != "none") empty, upper = if (interval != "none") empty))
  }
  if (want_var || interval != "none") .check_response_units(object)
  m <- .latent_moments(object, z, d$deriv, d$wrt, want_var, ...)
  sd <- if (want_var) sqrt(m$var)
  band <- switch(interval,
    none = list(),
    confidence = .gaussian_interval(m$mean, sd, level),
    prediction = .d_interval(.predictive_distribution(object, z, m, ...), level))
  s <- object$response_scaling %||% list(center = 0, scale = 1)
  if (is.null(object$response_scaling) && is.null(object$scaling)) {
    return(list(fit = m$mean, se = sd, lower = band$lower, upper = band$upper))
  }
  # y = c_y + s_y f(u), u_j = (x_j - c_j) / s_j: d^n y / dx_j^n = s_y / s_j^n d^n f / du_j^n
  # (s_j includes a width per input, and is 1 without scaling)
  factor <- s$scale / (object$scaling$scale[[d$wrt]] %||% 1)^d$deriv
  shift <- if (d$deriv == 0L) s$center else 0
  to_user <- function(v) if (!is.null(v)) shift + factor * v
  list(fit = to_user(m$mean), se = if (want_var) factor * sd, lower = to_user(band$lower),
       upper = to_user(band$upper))
}

# ---- the predictive distribution of new targets ---------------------------

# The predictive distribution of new targets as an object: what predict()'s
# "prediction" intervals are central intervals of, so that quantiles at any
# level, the CDF, the density, draws, moments and scores all come from the
# one computation and cannot disagree with the intervals.
#
# A model's own predictive ("G", model units) is a mixture of components,
# each a latent N(mean, var) plus the model's noise:
# * "epsins": the epsilon-insensitive noise of svr() and mfsvr(), one
#   component per C (the fit's C alone, or the nodes of its C mixture,
#   R/hyper-mixture.R);
# * "t": the relevance vector machines' Student t on df degrees of freedom,
#   scale sqrt(var + noise) (R/rvm-methods.R).
# A calibration by cross-validation (R/interval-calibration.R) widens G:
# the distribution whose central intervals predict() gives has, below its
# median, F(t) = Phi(s Phi^-1(G(t))), s the calibration's
# scale, and above it the same in the upper tail.  Its density is g(t)
# times s phi(s z) / phi(z), z = Phi^-1(G(t)).  Its quantiles, CDF, density
# and integrals are the core's (src/rcpp_noise.cpp -> predictive.hpp).  Then
# the response's scaling: y = center + scale * t.

# The model's own predictive at latent moments mean, var (vectors, model
# units) is .target_distribution() of each model (a generic of generics.R):
# a list with kind, the components' mean and var (n x k matrices), weight,
# and the noise's parameters (C and epsilon, or noise and df).

# One component per row and C: the epsilon-insensitive predictive (epsilon
# one for all components, or one each).
.epsins_distribution <- function(mean, var, C, epsilon, weight = 1) {
  mean <- as.matrix(mean)
  var <- as.matrix(var)
  list(kind = "epsins", mean = mean, var = var, C = C, epsilon = rep_len(epsilon, length(C)),
       weight = weight)
}

# Rows of G.
.g_rows <- function(g, i) {
  g$mean <- g$mean[i, , drop = FALSE]
  g$var <- g$var[i, , drop = FALSE]
  # (noise that varies with the inputs)
  if (length(g$noise) > 1L) g$noise <- g$noise[i]
  if (!is.null(g$row_scale)) g$row_scale <- g$row_scale[i]
  g
}

# The distribution at scaled inputs z with latent moments m (model units):
# the fit's mixture over C where it has one, its calibration, its scaling.
.predictive_distribution <- function(object, z, m, ...) {
  g <- if (!is.null(object$C_mixture)) {
    mm <- .C_mixture_moments(object, z, ...)
    .epsins_distribution(mm$mean, mm$var, object$C_mixture$C, .C_mixture_epsilon(object),
                         object$C_mixture$weight)
  } else {
    .target_distribution(object, m$mean, m$var, z)
  }
  s <- object$response_scaling %||% list(center = 0, scale = 1)
  structure(list(g = g, calibration = .fit_calibration_scale(object$interval_calibration),
                 center = s$center, scale = s$scale, names = rownames(z)),
            class = "gpsvm_predictive")
}

# The calibration's scale s of a distribution (1: none), checked: an edited
# object is a clear error, not a wrong number.
.d_calibration <- function(d) {
  s <- d$calibration
  if (!is.numeric(s) || length(s) != 1L || !isTRUE(s > 0 && s <= 1)) {
    .stop("the distribution's calibration must be a scale in (0, 1]: was the object edited?")
  }
  s
}

# Quantiles in model units at levels p (recycled over the rows), each from
# its nearer tail (the core's gpsvm::predictive_quantile(), predictive.hpp).
.d_quantile <- function(d, p) {
  p <- rep_len(as.double(p), length(d))
  upper <- p >= 0.5
  .d_tail_quantile(d, ifelse(upper, 1 - p, p), upper)
}
.d_tail_quantile <- function(d, u, upper) {
  cpp_predictive_quantile(d$g, .d_calibration(d), as.double(u), rep_len(upper, length(u)))
}

# The central `level` interval, model units: list(lower, upper), the
# quantiles at the tails (1 - level) / 2 either side.
.d_interval <- function(d, level) {
  u <- rep_len((1 - level) / 2, length(d))
  list(lower = .d_tail_quantile(d, u, FALSE), upper = .d_tail_quantile(d, u, TRUE))
}

# F(t), 1 - F(t) and log f(t), in model units (t recycled over the rows),
# from the core (gpsvm::predictive_at(), predictive.hpp): each tail from the
# model's own in that tail, so that far targets keep their precision.
.d_tails <- function(d, t) {
  cpp_predictive_at(d$g, .d_calibration(d), rep_len(as.double(t), length(d)))
}
.d_cdf <- function(d, t) .d_tails(d, t)$lower
.d_log_density <- function(d, t) .d_tails(d, t)$log_density

# Mean and variance in model units (gpsvm::predictive_moments(),
# predictive.hpp: G's closed forms, or with a calibration integrals of F's
# density).
.d_moments <- function(d) cpp_predictive_integrals(d$g, .d_calibration(d), NULL)

# With scale = TRUE the response's units are its standard deviation: a
# response with none (one observation, or every value the same) is only
# centred, and the model's variances are then in units of 1 of y, whatever
# y's own are: one observation of 3000 got a 95% interval of +-1.96, one of
# 0.003 would have got the same.  The point prediction (the mean) stands;
# standard errors and intervals are refused, naming what to change.
.check_response_units <- function(object) {
  if (.has_response_units(object)) return(invisible(TRUE))
  y <- object$y
  .stop(sprintf(paste("the fit's response has no spread (%s) and scale = TRUE takes its units",
                      "from its standard deviation, so standard errors and intervals would be in",
                      "arbitrary units; refit with scale = FALSE (the model then works in the",
                      "units of y) or on responses that vary"),
                if (length(y) == 1L) "one observation" else
                  sprintf("all %d values are %s", length(y), format(y[1L]))))
}

.has_response_units <- function(object) {
  is.null(object$response_scaling) || isTRUE(stats::sd(object$y) > 0)
}

#' Plot a regression fit
#'
#' `which` chooses the panels, as for [stats::plot.lm()]: by number 1 to 4
#' or by name, several drawn one after another (asking before each new page
#' on an interactive device).
#'
#' * `"fit"` (the default): the data, the fitted function with its latent
#'   (confidence) band and the band for new targets (prediction band), for
#'   a fit on one input variable; with `deriv > 0`, the fitted derivative
#'   and its band instead (the data are not drawn). A fit on several inputs
#'   is drawn as panel 4. Support vectors of [svr()] fits and relevance
#'   vectors of [rvm()] and [srvm()] fits are circled. For a formula fit
#'   such as `y ~ log(x)`, the horizontal axis is the variable `x` and the
#'   curve is the fit evaluated through the formula; a derivative is taken
#'   in the model's input column (here `log(x)`), which is then the
#'   horizontal axis.
#' * 1, `"residuals"`: the residuals against the fitted values, with a
#'   [stats::lowess()] smooth.
#' * 2, `"qq"`: a normal QQ plot of the standardised residuals, the normal
#'   scores \eqn{\Phi^{-1}(F_i(y_i))} of the targets under their predictive
#'   distributions \eqn{F_i} (their probability integral transforms, PIT):
#'   for Gaussian noise ([rvm()], [srvm()]) the residual over its
#'   predictive standard deviation, for the epsilon-insensitive noise of
#'   [svr()] and [mfsvr()] the exact predictive CDF. The predictive
#'   distributions leave the point out where that is cheap (for `rvm()` and
#'   `srvm()` exactly, as `lm`'s standardised residuals do, for `mfsvr()`
#'   the EP cavities); for `svr()` they are the in-sample posterior
#'   predictive, and the axis says so. Calibrated error bars put the points
#'   on the dotted line.
#' * 3, `"scale"`: the scale-location plot, \eqn{\sqrt{|z_i|}} of those
#'   standardised residuals against the fitted values, with a smooth.
#' * 4, `"observed"`: the observed responses against the fitted values,
#'   each with its prediction interval, beside the line of perfect fit.
#' * `"calibration"` (by name): the coverage of the fit's prediction
#'   intervals against their nominal level, on held-out data or by
#'   cross-validation ([interval_coverage()], whose arguments `newdata`,
#'   `y`, `folds`, `levels` and `seed` it takes in `...`).
#'
#' @param x A regression fit.
#' @param which The panels: numbers from 1 to 4 or the names above
#'   (`NULL` is `"fit"`).
#' @param deriv Order of the derivative to draw (panel `"fit"`).
#' @param level Coverage of the bands; `NA` draws none.
#' @param n Number of grid points for the curves, at most 10000.
#' @param xlim,ylim Plot limits; by default the range of the inputs, and of
#'   the data and the bands.
#' @param truth Optional function of the input drawn dotted, e.g. the true
#'   regression function of a simulation (it should return the derivative
#'   drawn).
#' @param legend Where to put the legend (a [graphics::legend()] keyword),
#'   or `NULL` for none.
#' @param xlab,ylab,main Axis labels and title.
#' @param bound For [svr()] fits, also draw the prediction band with the
#'   eq. (31) latent variance (see [predict.gpsvm_regression()]).
#' @param ... Further graphical parameters for [graphics::plot()]; for
#'   `svr` fits, also the arguments above; with `which = "calibration"`,
#'   [interval_coverage()]'s arguments.
#' @return `x`, invisibly.
#' @examples
#' set.seed(1)
#' d <- data.frame(u = runif(40, 0.5, 20))
#' d$v <- log(d$u) + rnorm(40, sd = 0.2)
#' plot(mfsvr(v ~ log(u), data = d), truth = log)
#' fit <- srvm(v ~ u, data = d, penalty = roughness_penalty(2))
#' plot(fit, deriv = 1, truth = function(u) 1 / u)
#' op <- par(mfrow = c(2, 2))
#' plot(rvm(mpg ~ wt + hp, data = mtcars), which = 1:4)
#' par(op)
#' # do its 50% to 99% intervals hold what they claim? (5-fold cross-validation)
#' plot(fit, which = "calibration")
#' @export
plot.gpsvm_regression <- function(x, which = "fit", deriv = 0, level = 0.95, n = 200, xlim = NULL,
                                  ylim = NULL, truth = NULL, legend = "topright", xlab = NULL,
                                  ylab = NULL, main = NULL, ...) {
  .needs_inputs(x, "plot()")
  .plot_regression(x, which, deriv, level, n, xlim, ylim, truth, legend, xlab, ylab, main, NULL,
                   ..., env = parent.frame())
}

#' @rdname plot.gpsvm_regression
#' @export
plot.gpsvm_svr <- function(x, ..., bound = FALSE) {
  .check_flag(bound, "bound")
  extra <- if (bound) {
    function(z, level) c(.predict_rows(x, z, list(deriv = 0L, wrt = 1L), TRUE, "prediction",
                                       level, bound = TRUE),
                         label = "prediction band, eq. (31)")
  }
  .plot_regression(x, ..., extra = extra, env = parent.frame())
}

# The panels plot() draws, by name, with the number plot.lm() gives each
# (NA: by name only).  A panel is function(x, options, ...) with `options`
# the list of plot()'s arguments (with `diagnostics`, .diagnostic_values(),
# for the residual panels) and `...` graphical parameters; a new panel
# is one more entry here.
.regression_panels <- function() {
  list(fit = list(number = NA_integer_, draw = .plot_fit_panel),
       residuals = list(number = 1L, draw = .plot_residual_panel),
       qq = list(number = 2L, draw = .plot_qq_panel),
       scale = list(number = 3L, draw = .plot_scale_panel),
       observed = list(number = 4L, draw = function(x, options, ...) {
         .plot_observed_fitted(x, options$band, options$level, options$xlim, options$ylim,
                               options$legend, options$xlab, options$ylab,
                               options$main %||% "Observed vs Fitted", ...)
       }),
       calibration = list(number = NA_integer_, draw = function(x, options, ...) {
         .plot_calibration(x, options$env, main = options$main, ...)
       }))
}

# `which` as panel names: numbers map to the numbered panels (NULL is the
# fit).
.check_panels <- function(which, panels) {
  if (is.null(which)) return("fit")
  numbers <- vapply(panels, `[[`, integer(1), "number")
  choices <- sprintf("%s (%s)", names(panels), ifelse(is.na(numbers), "by name", numbers))
  bad <- function() {
    .stop(sprintf("'which' must name panels among %s", paste(choices, collapse = ", ")))
  }
  if (length(which) == 0L || anyNA(which)) bad()
  if (is.numeric(which)) {
    picked <- names(panels)[match(which, numbers)]
    if (anyNA(picked)) bad()
    return(picked)
  }
  if (!is.character(which) || !all(which %in% names(panels))) bad()
  which
}

.plot_regression <- function(x, which = "fit", deriv = 0, level = 0.95, n = 200, xlim = NULL,
                             ylim = NULL, truth = NULL, legend = "topright", xlab = NULL,
                             ylab = NULL, main = NULL, extra = NULL, ..., env) {
  .validate_fit(x)
  panels <- .regression_panels()
  which <- .check_panels(which, panels)
  deriv <- .check_count(deriv, "deriv", upper = .max_deriv)
  if (deriv > 0L && !identical(which, "fit")) .stop("'deriv' is drawn by the panel which = \"fit\" alone")
  n <- .check_count(n, "n", lower = 2L, upper = .max_curve_points)
  band <- !(length(level) == 1L && is.na(level))
  if (band) level <- .check_level(level)
  band <- band && .has_response_units(x)  # (none to draw in, see .check_response_units())
  options <- list(deriv = deriv, level = if (band) level else 0.95, band = band, n = n,
                  xlim = xlim, ylim = ylim, truth = truth, legend = legend, xlab = xlab,
                  ylab = ylab, main = main, extra = extra, env = env)
  # the residual panels' values, computed once for all of them
  if (any(which %in% c("residuals", "qq", "scale"))) options$diagnostics <- .diagnostic_values(x)
  if (length(which) > 1L && grDevices::dev.interactive() &&
      prod(graphics::par("mfcol")) < length(which)) {
    old <- grDevices::devAskNewPage(TRUE)
    on.exit(grDevices::devAskNewPage(old), add = TRUE)
  }
  for (panel in which) panels[[panel]]$draw(x, options, ...)
  invisible(x)
}

# The panel "fit": the fitted curve and its bands over one input, or the
# observed responses against the fitted values for a fit on several.
.plot_fit_panel <- function(x, options, ...) {
  o <- options
  deriv <- o$deriv
  band <- o$band
  level <- o$level
  if (deriv == 0L && is.null(.formula_variable(x$variables)) && ncol(x$x) > 1L) {
    return(.plot_observed_fitted(x, band, level, o$xlim, o$ylim, o$legend, o$xlab, o$ylab, o$main,
                                 ...))
  }
  axis <- .plot_axis(x, deriv)
  xlim <- o$xlim %||% range(axis$values)
  grid <- seq(xlim[1], xlim[2], length.out = o$n)
  inputs <- axis$inputs(grid)
  grid <- grid[inputs$keep %||% TRUE]
  d <- list(deriv = deriv, wrt = 1L)
  conf <- .predict_rows(x, inputs$x, d, band, if (band) "confidence" else "none", level)
  pred <- if (band && deriv == 0L && .has_target_interval(x)) {
    .predict_rows(x, inputs$x, d, TRUE, "prediction", level)
  }
  more <- if (band && deriv == 0L && !is.null(o$extra)) o$extra(inputs$x, level)
  response <- .response_label(x)
  xlab <- o$xlab %||% axis$name
  ylab <- o$ylab %||% if (deriv == 0L) response else
    sprintf("d^%d %s / d %s^%d", deriv, response, axis$name, deriv)
  ylim <- o$ylim %||% range(if (deriv == 0L) x$y, conf$fit, conf$lower, conf$upper, pred$lower,
                            pred$upper, more$lower, more$upper, finite = TRUE)
  graphics::plot(grid, conf$fit, type = "n", xlim = xlim, ylim = ylim, xlab = xlab, ylab = ylab,
                 main = o$main, ...)
  shade <- function(p, col) {
    graphics::polygon(c(grid, rev(grid)), c(p$lower, rev(p$upper)), col = col, border = NA)
  }
  if (!is.null(pred)) shade(pred, "#4682B426")
  if (band) shade(conf, "#4682B459")
  if (!is.null(more)) {
    graphics::lines(grid, more$lower, lty = 4, col = "grey30")
    graphics::lines(grid, more$upper, lty = 4, col = "grey30")
  }
  key <- .key_points(x)
  if (deriv == 0L) {
    graphics::points(axis$values, x$y, pch = 20, col = "grey40")
    if (!is.null(key)) {
      graphics::points(axis$values[key$index], x$y[key$index], pch = 1, cex = 1.6,
                       col = "firebrick")
    }
  }
  if (!is.null(o$truth)) graphics::lines(grid, o$truth(grid), lty = 3)
  graphics::lines(grid, conf$fit, lwd = 2, col = "navy")
  if (!is.null(o$legend)) {
    pct <- if (band) sprintf("%g%% ", 100 * level)
    entries <- rbind(
      c("fit", "navy", 1, 2, NA, NA),
      if (band) c(paste0(pct, "latent band"), "#4682B459", 1, 8, NA, NA),
      if (!is.null(pred)) c(paste0(pct, "prediction band"), "#4682B426", 1, 8, NA, NA),
      if (!is.null(more)) c(paste0(pct, more$label), "grey30", 4, 1, NA, NA),
      if (deriv == 0L && !is.null(key)) c(key$label, "firebrick", NA, NA, 1, NA),
      if (!is.null(o$truth)) c("truth", "black", 3, 1, NA, NA))
    graphics::legend(o$legend, legend = entries[, 1], col = entries[, 2],
                     lty = as.numeric(entries[, 3]), lwd = as.numeric(entries[, 4]),
                     pch = as.numeric(entries[, 5]), bty = "n", cex = 0.8)
  }
  invisible(x)
}

# The response's name for axis labels.
.response_label <- function(x) if (!is.null(x$terms)) deparse(x$terms[[2L]]) else "y"

# The diagnostic panels' values at the training rows: the fitted values and
# residuals (the user's units), and the standardised residuals, the normal
# scores of the targets under their predictive distributions: leave-one-out
# where the model has them cheaply (.loo_moments()), else the in-sample
# posterior predictive (`predictive` says which).
.diagnostic_values <- function(x) {
  loo <- .loo_moments(x)
  moments <- loo %||% .latent_moments(x, x$x, 0L, 1L, TRUE)
  y <- .to_model_units(x$y, x$response_scaling)
  list(fitted = unname(x$fitted.values), residuals = unname(x$residuals),
       scores = .target_scores(x, y, moments$mean, moments$var, x$x),
       predictive = if (is.null(loo)) "in-sample" else "leave-one-out")
}

# A scatter of v against the fitted values with a lowess smooth and a
# dotted reference line at `reference`.
.smoothed_scatter <- function(fitted, v, options, ylab, title, reference, ...) {
  graphics::plot(fitted, v, xlab = options$xlab %||% "Fitted values", ylab = options$ylab %||% ylab,
                 main = options$main %||% title, pch = 20, col = "grey40", ...)
  graphics::abline(h = reference, lty = 3, col = "grey50")
  if (length(unique(fitted)) > 1L) graphics::lines(stats::lowess(fitted, v), col = "firebrick")
}

.plot_residual_panel <- function(x, options, ...) {
  v <- options$diagnostics
  .smoothed_scatter(v$fitted, v$residuals, options, "Residuals", "Residuals vs Fitted", 0, ...)
}

.plot_qq_panel <- function(x, options, ...) {
  v <- options$diagnostics
  stats::qqnorm(v$scores, main = options$main %||% "Normal Q-Q of the PIT",
                xlab = options$xlab %||% "Theoretical quantiles",
                ylab = options$ylab %||% sprintf("Standardised residuals (%s)", v$predictive),
                pch = 20, col = "grey40", ...)
  graphics::abline(0, 1, lty = 3, col = "grey50")
}

.plot_scale_panel <- function(x, options, ...) {
  v <- options$diagnostics
  # the reference is the median of sqrt(|z|) for standard normal z
  .smoothed_scatter(v$fitted, sqrt(abs(v$scores)), options,
                    sprintf("sqrt(|standardised residuals|) (%s)", v$predictive), "Scale-Location",
                    sqrt(stats::qnorm(0.75)), ...)
}

# A fit on several inputs has no curve to draw: the observed responses
# against the fitted values, each with its prediction interval (what plot()
# of lm() shows first is the residuals against the fitted values; here the
# interval is the point), and the line of perfect fit.
.plot_observed_fitted <- function(x, band, level, xlim, ylim, legend, xlab, ylab, main, ...) {
  band <- band && .has_target_interval(x)
  pred <- .predict_rows(x, x$x, list(deriv = 0L, wrt = 1L), band,
                        if (band) "prediction" else "none", if (band) level else 0.95)
  response <- .response_label(x)
  graphics::plot(pred$fit, x$y, type = "n", xlim = xlim %||% range(pred$fit),
                 ylim = ylim %||% range(x$y, pred$lower, pred$upper, finite = TRUE),
                 xlab = xlab %||% "Fitted values", ylab = ylab %||% response, main = main, ...)
  if (band) {
    graphics::segments(pred$fit, pred$lower, pred$fit, pred$upper, col = "#4682B466")
  }
  graphics::abline(0, 1, lwd = 2, col = "navy")
  graphics::points(pred$fit, x$y, pch = 20, col = "grey40")
  if (!is.null(legend)) {
    labels <- c("observed", "observed = fitted",
                if (band) sprintf("%g%% prediction interval", 100 * level))
    graphics::legend(legend, legend = labels, col = c("grey40", "navy", "#4682B466")[seq_along(labels)],
                     pch = c(20, NA, NA)[seq_along(labels)], lty = c(NA, 1, 1)[seq_along(labels)],
                     lwd = c(NA, 2, 1)[seq_along(labels)], bty = "n", cex = 0.8)
  }
  invisible(x)
}

# The horizontal axis of a plot: the data's coordinates on it, its name, and
# the scaled model inputs at grid points along it.  A formula fit on one
# numeric variable is drawn against that variable, evaluated through the
# formula; otherwise (and for derivatives, which are taken in a model input
# column) the fit needs one input column, drawn in the user's units.
.plot_axis <- function(x, deriv) {
  variable <- .formula_variable(x$variables)
  if (deriv == 0L && !is.null(variable)) {
    name <- names(variable)
    return(list(values = variable[[1L]], name = name, inputs = function(grid) {
      .prediction_inputs(x, stats::setNames(data.frame(grid), name))
    }))
  }
  if (ncol(x$x) != 1L) {
    .stop(sprintf("plot() needs a fit on one input column (or a formula with one input variable%s); this one has %d columns",
                  if (deriv > 0L) ", for deriv = 0" else "", ncol(x$x)))
  }
  name <- colnames(x$x)[1L] %||% "x"
  list(values = .original_inputs(x)[, 1L], name = name, inputs = function(grid) {
    list(x = .scale_inputs(matrix(grid, ncol = 1L, dimnames = list(NULL, colnames(x$x))),
                           x$scaling))
  })
}
