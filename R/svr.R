#' Support vector regression as a Gaussian-process MAP estimate
#'
#' Fits epsilon-insensitive support vector regression by solving its dual
#' quadratic programme, and reads the solution as the maximum a posteriori
#' (MAP) estimate of a Gaussian-process model (Gao, Gunn, Harris and Brown,
#' 2002): a zero-mean GP prior with covariance `kernel` and the likelihood
#' \eqn{C / (2(\epsilon C + 1)) \exp(-C L_\epsilon(y - a(x)))}. On top of the
#' fit this gives the evidence of eq. (16) ([logLik.gpsvm_svr()], [evidence()]), a
#' choice of `C` by evidence (eq. 17 or direct maximisation), and error bars
#' (eqs. 22, 29-31, [predict.gpsvm_svr()]).
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
#' `n` x `n` Gram matrix.
#'
#' The training points are split as in eqs. (8)-(11) into `X_0`
#' (\eqn{\beta_i = 0}), `X_C` (\eqn{|\beta_i| = C}), `X_M-` and `X_M+`
#' (margin vectors, \eqn{0 < |\beta_i| < C}, residual \eqn{\mp\epsilon}).
#' A coefficient counts as 0 or `C` when it is within
#' `control$margin_tol * C` of it.
#'
#' @section Choosing C:
#' `select_C = "fixed_point"` iterates eq. (17),
#' \deqn{C_{new} = \frac{n + |X_M|}{\sum_{X_C} L_\epsilon(r_i) +
#'   \sum_{X_M} 1/(C - |\beta_i|) + n\epsilon/(\epsilon C + 1)},}
#' refitting at every step from the starting value `C`, until two successive
#' values differ by less than `control$fixed_point_tol` (0.05 in the paper)
#' or `control$max_steps` steps; the history is `fit$C_path`. The paper notes
#' the iteration is not globally stable: non-convergence is a warning.
#' `select_C = "evidence"` maximises the log evidence (`control$evidence`,
#' eq. 16 or the refined form) over `control$C_interval` (by default
#' `C / 100` to `100 C`): a grid of `control$grid_size` values on the log
#' scale, then [stats::optimize()] between the best point's neighbours. The
#' evidence has logarithmic spikes where a margin vector's \eqn{|\beta_i|}
#' reaches 0 or `C`, so this finds the best point of a rough curve.
#'
#' @param x A numeric matrix, data frame or vector of inputs (one row per
#'   point), or a formula for the formula method.
#' @param y Numeric targets, one per row of `x`.
#' @param C Regularisation constant (the likelihood's scale), a positive
#'   number; the starting value when `select_C` is not `"none"`.
#' @param epsilon Half-width of the insensitive zone, a number `>= 0`.
#' @param kernel A kernel: [rbf_kernel()], [poly_kernel()] or [linear_kernel()].
#' @param bias `FALSE` for the paper's zero-mean model, `TRUE` for a free
#'   threshold `b` (standard eps-SVR as in libsvm).
#' @param select_C How to choose `C`: `"none"`, `"fixed_point"` (eq. 17) or
#'   `"evidence"` (maximise the evidence over an interval).
#' @param control Solver and selection settings from [svr_control()].
#' @param formula A model formula such as `y ~ x1 + x2`.
#' @param data,subset,na.action As in [stats::lm()].
#' @param ... Unused; unknown arguments are an error.
#' @return An object of class `c("gpsvm_svr", "gpsvm_regression")`: a list with `beta`, `alpha_plus`,
#'   `alpha_minus`, `b`, `fitted.values`, `residuals`, `objective` (the dual
#'   objective \eqn{\frac12\beta'K\beta - y'\beta + \epsilon|\beta|_1}),
#'   `partition` (factor with levels `X_0`, `X_C`, `X_M-`, `X_M+`), `C`,
#'   `epsilon`, `kernel`, `bias`, `x`, `y`, `C_path` (when selecting),
#'   `convergence` (`converged`, `iterations`, `change` (the KKT gap), `tol`,
#'   `reason`), `control`
#'   and `call`.
#' @references Gao, J. B., Gunn, S. R., Harris, C. J. and Brown, M. (2002).
#'   A probabilistic framework for SVM regression and error bar estimation.
#'   *Machine Learning* 46, 71-89.
#'
#'   Fan, R.-E., Chen, P.-H. and Lin, C.-J. (2005). Working set selection
#'   using second order information for training support vector machines.
#'   *Journal of Machine Learning Research* 6, 1889-1918.
#' @seealso [predict.gpsvm_svr()], [evidence()], [evidence_curve()], [svr_control()]
#' @examples
#' set.seed(1)
#' x <- seq(0, 4 * pi, length.out = 100)
#' y <- sin(x) + rnorm(100, sd = sqrt(0.5))
#' fit <- svr(x, y, C = 2.1, epsilon = 0.4, kernel = rbf_kernel(sqrt(0.8)))
#' fit
#' logLik(fit)
#' head(predict(fit, interval = "prediction"))
#' # C by the eq. (17) fixed point, from C = 10, on another draw
#' set.seed(3)
#' y3 <- sin(x) + rnorm(100, sd = sqrt(0.5))
#' fp <- svr(x, y3, C = 10, epsilon = 0.4, kernel = rbf_kernel(sqrt(0.8)),
#'           select_C = "fixed_point", control = svr_control(tol = 1e-8))
#' fp$C_path
#' @export
svr <- function(x, ...) UseMethod("svr")

#' @rdname svr
#' @export
svr.default <- function(x, y, C = 1, epsilon = 0.1, kernel = rbf_kernel(1), bias = FALSE,
                        select_C = c("none", "fixed_point", "evidence"),
                        control = svr_control(), ...) {
  .check_dots_empty(...)
  x <- .as_input_matrix(x, "x")
  y <- .check_targets(y, nrow(x))
  C <- .check_number(C, "C", lower = 0, open_lower = TRUE)
  epsilon <- .check_number(epsilon, "epsilon", lower = 0)
  .check_kernel(kernel)
  if (!is.logical(bias) || length(bias) != 1L || is.na(bias)) {
    .stop("'bias' must be TRUE or FALSE")
  }
  select_C <- .match_choice(select_C, c("none", "fixed_point", "evidence"), "select_C")
  .check_control(control, "svr_control")
  fit <- switch(select_C,
    none = .svr_fit(x, y, C, epsilon, kernel, bias, control),
    fixed_point = .svr_fixed_point(x, y, C, epsilon, kernel, bias, control),
    evidence = .svr_evidence_search(x, y, C, epsilon, kernel, bias, control)
  )
  fit$select_C <- select_C
  fit$call <- .generic_call(match.call(), "svr")
  fit
}

#' @rdname svr
#' @export
svr.formula <- function(formula, data, subset, na.action, ...) {
  call <- .generic_call(match.call(), "svr")
  design <- .formula_design(call, parent.frame())
  fit <- svr.default(design$x, design$y, ...)
  .add_formula_parts(fit, design, call)
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
#'   when \eqn{m \le M}; the solver stops when \eqn{m - M} < `tol`.
#'   With `bias = FALSE` the value 0 joins both sets (the bias is fixed at 0).
#' @param max_iter Cap on solver iterations (pair steps), a whole number up to
#'   `.Machine$integer.max`.
#' @param cache_mb Size of the kernel-column cache in megabytes.
#' @param shrinking Whether the solver may set aside points that sit at a
#'   bound and look like staying there (libsvm's heuristic; every point is
#'   re-checked before the solver stops).
#' @param margin_tol A coefficient within `margin_tol * C` of 0 or `C` counts
#'   as being at that bound when the training set is split into `X_0`, `X_C`
#'   and the margin sets.
#' @param evidence Which evidence `select_C = "evidence"` maximises: `"eq16"`
#'   or `"refined"` (see [evidence()]).
#' @param fixed_point_tol,max_steps Stopping rule of the eq. (17) iteration:
#'   successive `C` within `fixed_point_tol`, or `max_steps` refits.
#' @param C_interval Search interval for `select_C = "evidence"`; `NULL`
#'   means `C / 100` to `100 C` around the starting `C`.
#' @param grid_size Number of log-spaced grid points of that search.
#' @return A list of class `gpsvm_svr_control`.
#' @examples
#' svr_control(tol = 1e-6)
#' @export
svr_control <- function(tol = 1e-3, max_iter = 1e7, cache_mb = 100,
                        shrinking = TRUE, margin_tol = 1e-8,
                        evidence = c("eq16", "refined"), fixed_point_tol = 0.05,
                        max_steps = 50, C_interval = NULL, grid_size = 25) {
  tol <- .check_number(tol, "tol", lower = 0, open_lower = TRUE)
  max_iter <- .check_count(max_iter, "max_iter", lower = 1L)
  cache_mb <- .check_number(cache_mb, "cache_mb", lower = 0, open_lower = TRUE)
  if (!is.logical(shrinking) || length(shrinking) != 1L || is.na(shrinking)) {
    .stop("'shrinking' must be TRUE or FALSE")
  }
  margin_tol <- .check_number(margin_tol, "margin_tol", lower = 0, upper = 0.5)
  evidence <- .match_choice(evidence, c("eq16", "refined"), "evidence")
  fixed_point_tol <- .check_number(fixed_point_tol, "fixed_point_tol", lower = 0,
                                   open_lower = TRUE)
  max_steps <- .check_count(max_steps, "max_steps", lower = 1L)
  if (!is.null(C_interval)) {
    if (!is.numeric(C_interval) || length(C_interval) != 2L || anyNA(C_interval) ||
        any(!is.finite(C_interval)) || any(C_interval <= 0) || C_interval[1] >= C_interval[2]) {
      .stop("'C_interval' must be two increasing positive finite numbers")
    }
  }
  grid_size <- .check_count(grid_size, "grid_size", lower = 3L)
  structure(list(tol = tol, max_iter = max_iter, cache_mb = cache_mb,
                 shrinking = shrinking, margin_tol = margin_tol, evidence = evidence,
                 fixed_point_tol = fixed_point_tol, max_steps = max_steps,
                 C_interval = C_interval, grid_size = grid_size),
            class = c("gpsvm_svr_control", "gpsvm_control"))
}

# One fit at a fixed C: solve the dual in C++, then split the training set.
.svr_fit <- function(x, y, C, epsilon, kernel, bias, control, warn = TRUE) {
  res <- cpp_svr_fit(kernel, x, y, list(
    C = C, epsilon = epsilon, bias = bias, tol = control$tol,
    max_iter = control$max_iter, cache_mb = control$cache_mb,
    shrinking = control$shrinking))
  nm <- rownames(x)
  fitted <- stats::setNames(res$fitted, nm)
  fit <- list(
    beta = stats::setNames(res$beta, nm), alpha_plus = res$alpha_plus,
    alpha_minus = res$alpha_minus, b = res$b, fitted.values = fitted,
    residuals = stats::setNames(y - res$fitted, nm), objective = res$objective,
    C = C, epsilon = epsilon, kernel = kernel, bias = bias, x = x, y = y,
    convergence = res$convergence,
    control = control)
  fit$partition <- .svr_partition(fit$beta, C, control$margin_tol)
  class(fit) <- c("gpsvm_svr", "gpsvm_regression")
  if (warn) {
    .warn_not_converged("svr(): the dual solver", fit$convergence,
                        "the change is the KKT gap; try a larger 'max_iter' in svr_control()")
  }
  fit
}

# Eqs. (8)-(11): X_0 (beta = 0), X_C (|beta| = C), margin vectors X_M- (beta < 0)
# and X_M+ (beta > 0) in between, with a relative tolerance on the bounds.
.svr_partition <- function(beta, C, tol) {
  a <- abs(beta)
  part <- ifelse(a <= tol * C, "X_0",
          ifelse(a >= C * (1 - tol), "X_C", ifelse(beta < 0, "X_M-", "X_M+")))
  factor(part, levels = c("X_0", "X_C", "X_M-", "X_M+"))
}

.svr_margin <- function(fit) fit$partition %in% c("X_M-", "X_M+")

# Eq. (17): the evidence's stationarity condition in C, with the fit held fixed.
.svr_C_update <- function(fit) {
  n <- length(fit$y)
  M <- .svr_margin(fit)
  XC <- fit$partition == "X_C"
  eps <- fit$epsilon
  C <- fit$C
  loss_C <- sum(pmax(abs(fit$residuals[XC]) - eps, 0))
  (n + sum(M)) / (loss_C + sum(1 / (C - abs(fit$beta[M]))) + n * eps / (eps * C + 1))
}

.svr_fixed_point <- function(x, y, C, epsilon, kernel, bias, control) {
  path <- C
  converged <- FALSE
  for (step in seq_len(control$max_steps)) {
    fit <- .svr_fit(x, y, C, epsilon, kernel, bias, control)
    C_new <- .svr_C_update(fit)
    path <- c(path, C_new)
    if (!is.finite(C_new) || C_new <= 0) break
    if (abs(C_new - C) < control$fixed_point_tol) {
      converged <- TRUE
      C <- C_new
      break
    }
    C <- C_new
  }
  if (is.finite(C) && C > 0) fit <- .svr_fit(x, y, C, epsilon, kernel, bias, control)
  if (!converged) {
    warning(sprintf(paste0("svr(): the eq. (17) iteration for C did not settle in %d steps ",
                           "(last change %.3g, tolerance %.3g)"), length(path) - 1L,
                    abs(diff(utils::tail(path, 2))), control$fixed_point_tol), call. = FALSE)
  }
  fit$C_path <- unname(path)
  fit$C_selection <- list(method = "fixed_point", converged = converged,
                          steps = length(path) - 1L)
  fit
}

.svr_evidence_search <- function(x, y, C, epsilon, kernel, bias, control) {
  interval <- control$C_interval %||% c(C / 100, C * 100)
  method <- control$evidence
  log_ev <- function(logC) {
    fit <- .svr_fit(x, y, exp(logC), epsilon, kernel, bias, control)
    .svr_log_evidence(fit, method)
  }
  grid <- seq(log(interval[1]), log(interval[2]), length.out = control$grid_size)
  values <- vapply(grid, log_ev, numeric(1))
  best <- which.max(values)
  lo <- grid[max(best - 1L, 1L)]
  hi <- grid[min(best + 1L, length(grid))]
  seen <- data.frame(C = exp(grid), log_evidence = values)
  opt <- stats::optimize(function(lc) {
    v <- log_ev(lc)
    seen[nrow(seen) + 1L, ] <<- c(exp(lc), v)
    v
  }, c(lo, hi), maximum = TRUE, tol = 1e-3)
  C_best <- if (opt$objective >= values[best]) exp(opt$maximum) else exp(grid[best])
  fit <- .svr_fit(x, y, C_best, epsilon, kernel, bias, control)
  fit$C_path <- c(C, seen$C)
  fit$C_selection <- list(method = "evidence", evidence = method, interval = interval,
                          evaluations = seen, converged = TRUE)
  fit
}
