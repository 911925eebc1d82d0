# Hyperparameters of mfsvr() by maximising the EP evidence.
#
# Parameters live on the log scale: log C, log epsilon (unless epsilon is 0)
# and log sigma (for the Gaussian kernel).  At the EP fixed point the sites
# are stationary, so the gradient of log Z_EP is the explicit one (the
# likelihood's d log Z_i at fixed cavities, and 1/2 tr((w w' - R) dK)); the
# core computes it with the fit.

.mfsvr_hyper_names <- function(epsilon, kernel) {
  c("log_C", if (epsilon > 0) "log_epsilon", if (kernel$type == "rbf") "log_sigma")
}

.mfsvr_unpack <- function(par, names, epsilon, kernel) {
  p <- stats::setNames(exp(par), names)
  list(C = p[["log_C"]],
       epsilon = if ("log_epsilon" %in% names) p[["log_epsilon"]] else epsilon,
       kernel = if ("log_sigma" %in% names) rbf_kernel(p[["log_sigma"]]) else kernel)
}

.mfsvr_optimize <- function(x, y, C, epsilon, kernel, control) {
  names <- .mfsvr_hyper_names(epsilon, kernel)
  start <- log(c(C, if (epsilon > 0) epsilon, if (kernel$type == "rbf") kernel$sigma))
  # optim() asks for the value and the gradient at the same point in turn:
  # fit once per point.
  cache <- new.env(parent = emptyenv())
  # Points where EP needs very many sweeps lie towards degenerate limits and
  # count as failures anyway; cap the sweeps during the search so that they
  # stay cheap (the final fit uses the full control).
  search_control <- control
  search_control$max_iter <- min(control$max_iter, 60L)
  evaluate <- function(par) {
    if (!identical(cache$par, par)) {
      # warm start from the last usable fit: nearby hyperparameters have
      # nearby EP sites, so a few sweeps suffice (same fixed point)
      fit <- tryCatch({
        h <- .mfsvr_unpack(par, names, epsilon, kernel)
        .mfsvr_fit(x, y, h$C, h$epsilon, h$kernel, search_control, gradient = TRUE,
                   warn = FALSE, start = cache$last_good)
      }, error = function(e) NULL)
      if (usable(fit)) cache$last_good <- fit
      cache$par <- par
      cache$fit <- fit
    }
    cache$fit
  }
  keep <- c(TRUE, epsilon > 0, kernel$type == "rbf")
  # An EP run that did not converge has no evidence to speak of (far from
  # the data's scales it can report nonsense): treat it as a failed point,
  # so the line search steps back.
  usable <- function(fit) {
    !is.null(fit) && fit$convergence$converged && is.finite(fit$log_evidence) &&
      all(is.finite(fit$gradient))
  }
  value <- function(par) {
    if (any(abs(par - start) > 12)) return(1e300)
    fit <- evaluate(par)
    if (!usable(fit)) return(1e300)
    -fit$log_evidence
  }
  gradient <- function(par) {
    if (any(abs(par - start) > 12)) return(rep(0, length(par)))
    fit <- evaluate(par)
    if (!usable(fit)) return(rep(0, length(par)))
    -fit$gradient[keep]
  }
  # BFGS, whose line search steps back from failed points; the search stays
  # within a factor exp(12) (about 1.6e5) of the start, since the evidence
  # can keep rising slowly towards degenerate limits (an infinitely wide
  # kernel, say) where EP stops converging.
  # The evidence grows with n; per observation, its gradient in the log
  # parameters is of order 1, so BFGS's first step (along the raw gradient)
  # stays at a sensible scale instead of jumping by factors like exp(17).
  opt <- stats::optim(start, value, gradient, method = "BFGS",
                      control = list(maxit = 200L, reltol = 1e-12, fnscale = length(y)))
  h <- .mfsvr_unpack(opt$par, names, epsilon, kernel)
  if (opt$convergence != 0L) {
    warning(sprintf("evidence maximisation did not converge (optim code %d after %d evaluations)",
                    opt$convergence, opt$counts[["function"]]), call. = FALSE)
  }
  at_bound <- abs(opt$par - start) > 11
  if (any(at_bound)) {
    warning(sprintf("evidence maximisation stopped near the search bound for %s (a factor exp(12) from the start)",
                    paste(names[at_bound], collapse = ", ")), call. = FALSE)
  }
  fit <- .mfsvr_fit(x, y, h$C, h$epsilon, h$kernel, control, gradient = TRUE)
  opt$par <- stats::setNames(opt$par, names)
  opt$start <- stats::setNames(start, names)
  opt$gradient <- stats::setNames(fit$gradient[keep], names)
  fit$optimization <- opt
  fit
}

#' Evidence of a mean-field SVR and its gradient
#'
#' The EP approximation of the log evidence \eqn{\log p(y \mid C, \epsilon,
#' \sigma)} of [mfsvr()] and its analytic gradient in `log C`, `log epsilon`
#' and `log sigma` (the Gaussian kernel's width; 0 for other kernels), at the
#' EP fixed point. This is what `mfsvr(..., optimize = TRUE)` maximises.
#'
#' @inheritParams mfsvr
#' @return A list with `log_evidence` and `gradient` (named, length 3).
#' @examples
#' set.seed(1)
#' x <- runif(30, -10, 10)
#' y <- sin(x) / x + rnorm(30, sd = 0.1)
#' mfsvr_evidence(x, y, C = 5, epsilon = 0.1, kernel = rbf_kernel(sqrt(2)))
#' @export
mfsvr_evidence <- function(x, y, C = 1, epsilon = 0.1, kernel = rbf_kernel(1),
                           control = mfsvr_control()) {
  x <- .as_input_matrix(x, "x")
  y <- .check_targets(y, nrow(x))
  C <- .check_number(C, "C", lower = 0, open_lower = TRUE)
  epsilon <- .check_number(epsilon, "epsilon", lower = 0)
  .check_kernel(kernel)
  fit <- .mfsvr_fit(x, y, C, epsilon, kernel, control, gradient = TRUE)
  list(log_evidence = fit$log_evidence,
       gradient = stats::setNames(fit$gradient, c("log_C", "log_epsilon", "log_sigma")))
}
