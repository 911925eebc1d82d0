# Hyperparameters of mfsvr() by maximising the EP evidence.
#
# Parameters live on the log scale: log C, log epsilon (unless epsilon is 0)
# and log sigma (for the Gaussian kernel).  At the EP fixed point the sites
# are stationary, so the gradient of log Z_EP is the explicit one (the
# likelihood's d log Z_i at fixed cavities, and 1/2 tr((w w' - R) dK)); the
# core computes it with the fit.

# The log-scale parameters searched: those asked for in 'which' that exist
# (epsilon = 0 stays 0; only the Gaussian kernel has a width).
.mfsvr_hyper_names <- function(epsilon, kernel, which = c("C", "epsilon", "sigma")) {
  c(if ("C" %in% which) "log_C", if (epsilon > 0 && "epsilon" %in% which) "log_epsilon",
    if (kernel$type == "rbf" && "sigma" %in% which) "log_sigma")
}

.mfsvr_unpack <- function(par, names, C, epsilon, kernel) {
  p <- stats::setNames(exp(par), names)
  list(C = if ("log_C" %in% names) p[["log_C"]] else C,
       epsilon = if ("log_epsilon" %in% names) p[["log_epsilon"]] else epsilon,
       kernel = if ("log_sigma" %in% names) rbf_kernel(p[["log_sigma"]]) else kernel)
}

# optimize = TRUE / FALSE, or which of "C", "epsilon", "sigma" to choose.
.mfsvr_which_hyper <- function(optimize, epsilon, kernel) {
  all <- c("C", "epsilon", "sigma")
  which <- if (isTRUE(optimize)) all else if (isFALSE(optimize)) character(0) else {
    if (!is.character(optimize) || length(optimize) == 0L || anyNA(optimize) ||
        !all(optimize %in% all)) {
      .stop("'optimize' must be TRUE, FALSE or a subset of \"C\", \"epsilon\", \"sigma\"")
    }
    unique(optimize)
  }
  if (length(which) > 0L && length(.mfsvr_hyper_names(epsilon, kernel, which)) == 0L) {
    .stop(sprintf("'optimize' = %s leaves nothing to optimise (epsilon = 0 stays 0; only rbf_kernel() has a width)",
                  paste0("\"", which, "\"", collapse = ", ")))
  }
  which
}

.mfsvr_optimize <- function(x, y, C, epsilon, kernel, control,
                            which = c("C", "epsilon", "sigma")) {
  names <- .mfsvr_hyper_names(epsilon, kernel, which)
  keep <- c("log_C", "log_epsilon", "log_sigma") %in% names  # entries of fit$gradient
  start <- log(c(C, epsilon, if (kernel$type == "rbf") kernel$sigma else 1))[keep]
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
        h <- .mfsvr_unpack(par, names, C, epsilon, kernel)
        .mfsvr_fit(x, y, h$C, h$epsilon, h$kernel, search_control, gradient = TRUE,
                   warn = FALSE, start = cache$last_good)
      }, error = function(e) NULL)
      if (usable(fit)) cache$last_good <- fit
      cache$par <- par
      cache$fit <- fit
    }
    cache$fit
  }
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
  h <- .mfsvr_unpack(opt$par, names, C, epsilon, kernel)
  fit <- .mfsvr_fit(x, y, h$C, h$epsilon, h$kernel, control, gradient = TRUE)
  if (opt$convergence != 0L) {
    # A common cause: the evidence keeps rising with C, whose limit C = Inf
    # is uniform noise on [-epsilon, epsilon]; BFGS creeps along that ridge.
    rising_c <- "log_C" %in% names && fit$gradient[1] > 0 && h$C > 10 * C
    warning(sprintf("evidence maximisation did not converge (optim code %d after %d evaluations)%s",
                    opt$convergence, opt$counts[["function"]],
                    if (rising_c) sprintf("; the evidence still rises as C grows (C = %.3g at the stop): the data favour the limit C = Inf, uniform noise on [-epsilon, epsilon]", h$C) else ""),
            call. = FALSE)
  }
  at_bound <- abs(opt$par - start) > 11
  if (any(at_bound)) {
    warning(sprintf("evidence maximisation stopped near the search bound for %s (a factor exp(12) from the start)",
                    paste(names[at_bound], collapse = ", ")), call. = FALSE)
  }
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
