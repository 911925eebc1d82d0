#' Smooth relevance vector machine regression
#'
#' Fits the smooth relevance vector machine of ter Borg and Rothkrantz (2005):
#' the kernel model \eqn{y = H w + e}, \eqn{H = [1, K]}, with noise
#' \eqn{e \sim N(0, \sigma^2 I)} and the prior
#' \eqn{w \sim N(0, (\lambda L'L + A)^{-1})} (their eq. 6), where
#' \eqn{A = diag(\alpha)} is the relevance vector machine's sparsity prior and
#' \eqn{L'L} the roughness penalty of [roughness_penalty()]. The result is
#' sparse (most \eqn{\alpha_i} diverge and their basis functions drop out) and
#' smooth in the penalised derivative.
#'
#' \eqn{\alpha}, \eqn{\lambda} and \eqn{\sigma^2} maximise the marginal
#' likelihood by the fixed-point updates (7)-(9) of the paper, started from
#' all basis functions:
#' \deqn{\alpha_i \leftarrow \alpha_i (S_{ii} - \Sigma_{ii}) / \mu_i^2}{alpha_i <- alpha_i (S_ii - Sigma_ii) / mu_i^2}
#' \deqn{\lambda \leftarrow tr((S - \Sigma) \lambda L'L) / \mu' L'L \mu}{lambda <- tr((S - Sigma) lambda L'L) / (mu' L'L mu)}
#' \deqn{\sigma^2 \leftarrow |y - H\mu|^2 / (N - tr(\Sigma H'H) / \sigma^2)}{sigma^2 <- |y - H mu|^2 / (N - tr(Sigma H'H) / sigma^2)}
#' with \eqn{S = (\lambda L'L + A)^{-1}} and \eqn{\Sigma}, \eqn{\mu} the
#' posterior covariance and mean of \eqn{w}. The paper writes \eqn{N} for the
#' number of weights in the trace identities; here it is the number of weights
#' still in the model. All inverses are Cholesky factors of Jacobi-scaled
#' matrices (see `inst/include/gpsvm/rvm_posterior.hpp`), never of
#' \eqn{\lambda L'L + A} directly, which is singular to machine precision.
#'
#' Pruning and convergence: a basis function leaves when its \eqn{\alpha}
#' exceeds `control$prune_alpha` (for targets divided by their root mean
#' square, so units do not matter); the bias is always kept. \eqn{\alpha}
#' may also fall to `control$min_alpha`: that weight is then governed by the
#' penalty alone. The iteration stops when no basis function was pruned and
#' the largest change of a kept \eqn{\log \alpha_i}, of \eqn{\log \lambda}
#' and of \eqn{\log \sigma^2} is below `control$tol`, or when the log
#' marginal likelihood changes by less than `control$tol_evidence` in one
#' iteration.
#'
#' Starting point: the evidence has several local maxima in \eqn{\lambda}.
#' `control$lambda_init` is relative (1 gives \eqn{\lambda L'L} and \eqn{A}
#' equal traces). A strong start (`1e4`) ends in a smooth optimum and reproduces
#' the paper's results (see `vignette("srvm")`); a weak start (`1`) usually ends
#' in a rougher, sparser optimum, on the paper's data with a slightly higher
#' evidence on average. By default (`lambda_init = NULL`) a fit to scaled data
#' is run from both and keeps the one of higher evidence, at about twice the
#' cost; with `scale = FALSE` it starts strong only, so that fits to data as
#' given reproduce the paper. On held-out splits of benchmark data the weak
#' start usually won and lowered the held-out error ("Performance" below).
#'
#' With the default `scale = TRUE` the inputs and the response are
#' standardised before fitting (see "Scaling" in [svr()]): the penalty then
#' acts on derivatives in the standardised inputs (the points of
#' `roughness_penalty(at = )` are given in the data's units and scaled
#' with them), and a fixed `lambda` or `sigma2` in [srvm_control()] refers
#' to the scaled data. Everything the methods return is in the data's units
#' ([regression-methods], [predict.gpsvm_regression()]).
#'
#' @section Prediction intervals: As those of [rvm()]: the latent variance
#'   of the model augmented at each new input by a basis function centred
#'   there, and for a new target Student's t from the noise level integrated
#'   against its posterior at the fitted \eqn{\alpha} and \eqn{\lambda} (a
#'   fixed `sigma2` in [srvm_control()] gives normal quantiles); see
#'   "Prediction intervals" there. The fit's penalty does
#'   not act on the augmenting function. These intervals are still too
#'   narrow on real data, more so than [rvm()]'s: the smooth fit keeps more
#'   basis functions and its evidence fits more of the noise. By default
#'   they are therefore calibrated by cross-validation, as [rvm()]'s are
#'   (`calibration_folds`; the refits learn \eqn{\lambda} again unless it is
#'   fixed, and the kernel again where the fit chose it).
#'
#' @section Cost: Updates (7)-(9) are not sequential: the penalty couples
#'   the weights, so every step factors the prior precision
#'   \eqn{\lambda L'L + A} and the posterior of all the weights still in the
#'   model, \eqn{O(n r^2 + r^3)} for \eqn{r} of them, and the fit starts
#'   from every candidate (\eqn{r = m + 1}). Forming \eqn{H'H} and the
#'   penalty matrix costs \eqn{O((n + n_p d) m^2)} once (\eqn{n_p} penalty
#'   points in \eqn{d} dimensions); memory is \eqn{O(n m + m^2)}. With every
#'   input a candidate that is \eqn{O(n^3)} a step and \eqn{O(n^2)} memory,
#'   minutes beyond a few thousand observations. The default therefore
#'   offers at most 1000 candidates, chosen as in [rvm()]; the two starts on
#'   scaled data (see "Starting point") cost nearly twice one. A step's
#'   updates need the posterior covariance's diagonal and one trace, which
#'   come from the Cholesky factor without forming the covariance; the
#'   covariance is formed once, for the fit.
#'
#'   The penalty matrix is the costly part on wide inputs: each start forms
#'   it in about \eqn{n_p d (m + 1)^2 / 2} multiply-adds. A fit whose starts
#'   would need more than \eqn{10^{11}} of them (minutes) is
#'   refused before any work, naming the figure and what to change: fewer
#'   penalty points (`at` in [roughness_penalty()]), fewer input columns
#'   (principal components, say), fewer candidates (`basis`), or [rvm()],
#'   which has no penalty.
#'
#' @section Performance:
#' Measured up to 2026-12-02 (gpsvm 0.1.0, development version, on a 2-core
#' machine; `bench/bench-srvm.R` and `bench/bench-realdata.R` in the
#' sources).
#'
#' * Starting point: on mlbench's Ozone (142 training rows, 20 splits) the
#'   weak start won 18 times in 20 and the held-out RMSE fell by 6%. Its
#'   RMSE there stays 1.05 times that of `e1071::svm()` with its defaults
#'   (as does that of [rvm()]), and no width from half to four times the
#'   data-driven one brings it lower, even one chosen on the held-out rows
#'   (part "hindsight").
#' * Cost: with every input a candidate, about 18 s at \eqn{n = 2000} and
#'   minutes at \eqn{n = 5000}; with the default's 1000 candidates on
#'   two-dimensional inputs about half a second at \eqn{n = 2000} (where
#'   the chosen candidates also gave a higher evidence and a lower test
#'   error than all 2000) and 5 s and 320 MB at \eqn{n = 20000}, from one
#'   start; the two starts took 1.7 to 1.8 times as long as one. 300 rows
#'   of 20000 inputs need \eqn{5.4 \times 10^{11}} multiply-adds of the
#'   penalty for the default's two starts.
#' * The linear kernel (the benchmark of `kernel`): held-out RMSE 0.33,
#'   0.53, 0.57, 0.79, 0.84 and 0.96 times the Gaussian kernel's alone on
#'   `MASS::UScereal`, `trees`, `stackloss`, `attitude`, `mtcars` and
#'   `cars`, 1.05 on `rock` and 1.08 on Ozone; on 1000 rows of Friedman 1
#'   in 5 inputs the linear fit took 3.8 s from both starts and 2.1 s from
#'   one (the Gaussian kernel's fit 8.7 s).
#'
#' @inheritParams rvm
#' @param basis The number of training inputs offered as centres of basis
#'   functions, or `NULL`: every distinct input up to 1000 of them, 1000
#'   chosen ones beyond, as in [rvm()]; see "Cost".
#' @param penalty A [roughness_penalty()]. Where the linear kernel is
#'   chosen (see `kernel`), a penalty on second or higher
#'   derivatives vanishes on its basis functions: \eqn{\lambda} is then 0
#'   and the model is that of [rvm()]. The kernels are weighed as in
#'   [rvm()], by a Gaussian process's evidence. The linear candidate is
#'   fitted from the first of the starts in `lambda_init` only, as
#'   \eqn{\lambda} does not matter there: both starts end in the same fit.
#' @param control A list from [srvm_control()].
#' @param optimize If `TRUE` (or `"sigma"`), choose the width of an
#'   [rbf_kernel()] by maximising the log marginal likelihood, as in [rvm()].
#' @return An object of class `c("gpsvm_srvm", "gpsvm_rvm", "gpsvm_regression")`, as described in [rvm()],
#'   with the learned `lambda`, the `penalty` and `lambda_init`, the start
#'   of the fit kept.
#' @references ter Borg, R. W. and Rothkrantz, L. J. M. (2005). Smooth Bayesian
#'   kernel machines. In *Knowledge-Based Intelligent Information and
#'   Engineering Systems*, Lecture Notes in Computer Science 3682, Springer.
#' @seealso [rvm()], [predict.gpsvm_regression()], [regression-methods],
#'   [plot.gpsvm_regression()], [roughness_penalty()]; [gpsvm_corrections]
#'   (items 6, 13 and 19) for where the fit departs from the paper.
#' @examples
#' fit <- srvm(dist ~ speed, data = cars)
#' fit
#' # the slope in feet per mph, with its posterior standard deviation
#' predict(fit, data.frame(speed = c(10, 20)), deriv = 1, se.fit = TRUE)
#' # sinc data on the scale given, as by ter Borg and Rothkrantz
#' set.seed(1)
#' x <- runif(50, -10, 10)
#' y <- sin(x) / x + rnorm(50, sd = 0.1)
#' fit <- srvm(x, y, kernel = rbf_kernel(1.6), penalty = roughness_penalty(10), scale = FALSE)
#' # the fourth derivative with its posterior standard deviation
#' predict(fit, c(-1, 0, 1), deriv = 4, se.fit = TRUE)
#' @export
srvm <- function(x, ...) UseMethod("srvm")

#' @rdname srvm
#' @export
srvm.default <- function(x, y, kernel = rbf_kernel(), penalty = roughness_penalty(2),
                         control = srvm_control(), scale = TRUE, optimize = FALSE,
                         basis = NULL, search = search_control(), calibration_folds = NULL,
                         ...) {
  .open_ledger()
  .check_dots_empty(...)
  weigh_linear <- missing(kernel)  # (the default's candidates, see ?srvm)
  .check_penalty(penalty)
  .check_kernel(kernel)
  .check_kernel_deriv(kernel, max(penalty$orders),
                      sprintf("'penalty' of order %d", max(penalty$orders)))
  .check_control(control, "srvm_control")
  if (!is.null(basis)) basis <- .check_count(basis, "basis", lower = 1L)
  .resolve_calibration_folds(calibration_folds, .Machine$integer.max, "srvm")  # its checks
  control <- .resolve_control(control, scale)
  settings <- .search_settings(search, "width")
  # the linear candidate from the first start alone (see `penalty`)
  control_for <- function(kernel, ctl) {
    if (identical(kernel$candidate, "linear")) ctl$lambda_init <- ctl$lambda_init[1L]
    ctl
  }
  .check_penalty_cost(penalty, NROW(x), NCOL(x), basis, length(control$lambda_init))
  resolved <- NULL  # the kernel at the data's width, before any choice
  fit <- .fit_regression(x, y, kernel, scale, .generic_call(match.call(), "srvm"),
                         function(x, y, kernel, scaling) {
    resolved <<- kernel
    .rvm_fit_candidates(function(kernel) {
      .rvm_optimize(x, kernel, optimize, control_for(kernel, control),
                    function(k, ctl) .srvm_fit(x, y, k, penalty, ctl, scaling, basis),
                    "srvm()", settings)
    }, kernel, x, y, scale, optimize, weigh_linear)
  })
  # (the refits learn lambda from the start that won on all rows only)
  refit_control <- fit$control
  refit_control$lambda_init <- fit$lambda_init
  fit <- .with_calibration(fit, calibration_folds, function(x, y) {
    refit_at <- function(k) {
      .srvm_fit(x, y, k, penalty, control_for(k, refit_control), fit$scaling,
                if (!is.null(basis)) min(basis, nrow(x)))
    }
    .rvm_refit(fit, refit_at, resolved, x, y, scale, optimize, weigh_linear)
  })
  .with_plan(fit, "srvm():")
}

#' @rdname srvm
#' @export
srvm.formula <- function(formula, data, subset, na.action, ...) {
  .fit_formula(match.call(), parent.frame(), "srvm", srvm.default, ...)
}

#' Control settings for srvm()
#'
#' @inheritParams rvm_control
#' @param max_iter Maximum number of iterations, each updating every
#'   \eqn{\alpha_i}, \eqn{\lambda} and \eqn{\sigma^2}.
#' @param tol Convergence tolerance on the largest change of a kept
#'   \eqn{\log \alpha_i}, of \eqn{\log \lambda} and of \eqn{\log \sigma^2}.
#' @param tol_evidence The iteration also stops when the log marginal
#'   likelihood changes by less than this in one iteration: a weight whose
#'   \eqn{\alpha} creeps towards the pruning threshold changes neither the
#'   evidence nor the fit, and would otherwise take thousands of iterations.
#' @param min_alpha Floor of \eqn{\alpha} (targets scaled to unit root mean
#'   square): a weight at the floor is left to the penalty alone.
#' @param alpha_init Initial \eqn{\alpha} of every weight (scaled targets).
#' @param lambda_init Initial \eqn{\lambda} relative to the value that gives
#'   \eqn{\lambda L'L} and \eqn{A} equal traces. Several values give a fit
#'   from each, and the one of highest evidence is kept. `NULL`: `c(1e4, 1)`
#'   when the data are scaled and \eqn{\lambda} is learned, else `1e4` (see
#'   "Starting point" in [srvm()]), resolved when the model is fitted:
#'   `fit$control` records the starts tried, `fit$lambda_init` the one kept.
#' @param lambda `NULL` to learn \eqn{\lambda}, or a fixed value >= 0 (in the
#'   units of the model: \eqn{\lambda} multiplies \eqn{|Lw|^2}). `lambda = 0`
#'   gives the relevance vector machine fitted by the original updates of
#'   Tipping (2001).
#' @param sigma2 `NULL` to learn the noise variance, or a fixed value > 0.
#' @return A list of class `gpsvm_srvm_control`.
#' @examples
#' srvm_control(lambda = 0)  # plain RVM by the original updates
#' @export
srvm_control <- function(max_iter = 10000, tol = 1e-6, tol_evidence = 1e-8, prune_alpha = 1e9, min_alpha = 1e-10,
                         alpha_init = 1, lambda_init = NULL, lambda = NULL, sigma2 = NULL,
                         sigma2_init = 0.1, min_sigma2 = 1e-10) {
  out <- list(
    max_iter = .check_count(max_iter, "max_iter", lower = 1L),
    tol = .check_number(tol, "tol", lower = 0, open_lower = TRUE),
    tol_evidence = .check_number(tol_evidence, "tol_evidence", lower = 0),
    prune_alpha = .check_number(prune_alpha, "prune_alpha", lower = 0, open_lower = TRUE),
    min_alpha = .check_number(min_alpha, "min_alpha", lower = 0, open_lower = TRUE),
    alpha_init = .check_number(alpha_init, "alpha_init", lower = 0, open_lower = TRUE),
    lambda_init = if (!is.null(lambda_init)) .check_starts(lambda_init, "lambda_init"),
    lambda = if (!is.null(lambda)) .check_number(lambda, "lambda", lower = 0),
    sigma2 = if (!is.null(sigma2)) .check_number(sigma2, "sigma2", lower = 0, open_lower = TRUE),
    sigma2_init = .check_number(sigma2_init, "sigma2_init", lower = 0, open_lower = TRUE),
    min_sigma2 = .check_number(min_sigma2, "min_sigma2", lower = 0, open_lower = TRUE)
  )
  if (out$min_alpha >= out$prune_alpha) .stop("'min_alpha' must be below 'prune_alpha'")
  structure(out, class = c("gpsvm_srvm_control", "gpsvm_control"))
}

# The control with the starting lambdas filled in: the user's, or the strong
# start (the paper's) and, on scaled data with lambda learned, the weak one too.
.resolve_control.gpsvm_srvm_control <- function(control, scale, ...) {
  control$lambda_init <- control$lambda_init %||%
    if (!is.null(control$lambda) || !isTRUE(scale)) 1e4 else c(1e4, 1)
  control
}

# One fit to (scaled) data from each of control$lambda_init, keeping the one
# of highest evidence; `scaling` scales the penalty's own points.
.srvm_fit <- function(x, y, kernel, penalty, control, scaling, basis) {
  points <- .penalty_points(penalty, x, scaling)
  .check_penalty_scale(penalty, kernel, points, nrow(x))
  rows <- .rvm_basis_rows(basis, x, kernel)
  fit_from <- function(start) {
    ctl <- control
    ctl$lambda_init <- start
    .count_fit()
    core <- cpp_rvm_fit(kernel, x, y, unclass(ctl),
                        list(points = points, orders = penalty$orders, weights = penalty$weights),
                        basis = rows)
    fit <- .new_rvm(core, x, y, kernel, control, class = "srvm", penalty = penalty)
    fit$lambda_init <- start
    fit
  }
  fit <- .best_of_starts(control$lambda_init, fit_from)
  fit$basis <- rows
  fit
}

# The penalty's rows are derivatives D^n k(z, x_j), of size up to
# sqrt(D^n D'^n k(z, z)) each, and |L H|^2 sums their squares: beyond double
# precision the penalty is infinite and the fit meaningless, so refused.
.check_penalty_scale <- function(penalty, kernel, points, n) {
  for (k in seq_along(penalty$orders)) {
    order <- penalty$orders[[k]]
    size <- cpp_kernel_diagonal_max(kernel, points, order) * penalty$weights[[k]]^2 *
      nrow(points) * ncol(points) * (n + 1)
    if (!isTRUE(size <= 1e300)) {
      .stop(sprintf(paste("'penalty': the derivatives of order %d of this kernel are too large",
                          "for double precision at these inputs (|L H|^2 would %s);",
                          "use lower orders or a wider kernel"),
                    order, if (is.finite(size)) paste("be about", format(size, digits = 3)) else
                      "overflow"))
    }
  }
  invisible()
}

# The penalty matrix costs n_p d (m + 1)^2 / 2 multiply-adds a start, most of
# the fit on wide inputs: beyond the budget the fit is refused before any work.
.srvm_penalty_budget <- 1e11
.check_penalty_cost <- function(penalty, n, d, basis, starts) {
  candidates <- basis %||% min(n, .size_rule("basis_chosen"))
  points <- if (is.null(penalty$at)) n else nrow(penalty$at)
  cost <- starts * points * d * (candidates + 1)^2 / 2
  if (cost > .srvm_penalty_budget) {
    .stop(sprintf(paste("srvm(): the roughness penalty in each of the %d input columns at %d",
                        "points, on %d basis functions, would take about %.2g multiply-adds for",
                        "%s (the limit is %.0e: minutes of work); penalise fewer points",
                        "(roughness_penalty(at = )), use fewer input columns (principal",
                        "components, say) or fewer candidate centres ('basis'), or fit rvm(),",
                        "which has no penalty"),
                  d, points, candidates + 1, cost,
                  if (starts == 1L) "its start" else sprintf("its %d starts", starts),
                  .srvm_penalty_budget))
  }
  invisible(cost)
}

# The fit_from(start) of highest log evidence, with only its own warnings;
# an error only when every start fails.
.best_of_starts <- function(starts, fit_from) {
  if (length(starts) == 1L) return(fit_from(starts))
  runs <- lapply(starts, function(start) {
    tryCatch(.held_warnings(fit_from(start)), error = function(e) list(value = e))
  })
  usable <- Filter(function(run) !inherits(run$value, "error"), runs)
  if (length(usable) == 0L) stop(runs[[1L]]$value)
  evidence <- vapply(usable, function(run) run$value$log_evidence, numeric(1))
  evidence[!is.finite(evidence)] <- -Inf
  .replay_warnings(usable[[which.max(evidence)]])
}

