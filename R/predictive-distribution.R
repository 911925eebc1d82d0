# The predictive distribution's methods for users: quantiles, CDF, density,
# draws, moments, and the distributional package's interface.  The object
# and what it computes with are in R/regression-predict.R.

#' The predictive distribution of new targets
#'
#' `predict(fit, newdata, type = "distribution")` returns, for each row of
#' `newdata`, the distribution of a new target there whose central intervals
#' are [predict()][predict.gpsvm_regression]'s `"prediction"` intervals at
#' every level: for [svr()] and [mfsvr()] the Gaussian latent function plus
#' the epsilon-insensitive noise (a mixture over `C` where the fit
#' integrates over it), for [rvm()] and [srvm()] a Student t, and where the
#' intervals are calibrated by cross-validation, that calibration too: below
#' its median the distribution is \eqn{F(t) = \Phi(s \Phi^{-1}(G(t)))},
#' \eqn{G} the model's own and \eqn{s \le 1} the calibration's scale on the
#' normal-score scale (see "calibrated" in [predict.gpsvm_regression()]),
#' and the same in the upper tail. Its quantiles are therefore the
#' intervals' ends, computed by the same code.
#'
#' * `quantile(d, probs)`: a matrix, one row per prediction and a column per
#'   level.
#' * `predictive_cdf(d, q)`: \eqn{P(T \le q)}, `q` one value per prediction
#'   (or one for all).
#' * `density(d, at, log = FALSE)`: the density at `at` (likewise).
#' * `generate(d, times)`: draws, a matrix with `times` columns, by the
#'   quantiles of uniform numbers.
#' * `mean(d)` and `predictive_variance(d)`: the moments (from the model's
#'   own distribution in closed form; with a calibration, by numerical
#'   integration of \eqn{F}).
#' * `as_distribution(d)`: the same distributions as a vector of the
#'   distributional package (class `dist_gpsvm`), which its `quantile()`,
#'   `cdf()`, `density()`, `generate()`, `mean()`, `variance()` and plots
#'   take.
#' * [predictive_scores()]: the log score, CRPS and interval score of
#'   observed targets.
#'
#' Everything is in the response's units. `d[i]` keeps rows `i`.
#'
#' @param x,d A `gpsvm_predictive` object from `predict(type =
#'   "distribution")`.
#' @param probs Levels in \[0, 1\].
#' @param q,at Values of the response, one per prediction or one for all.
#' @param log `TRUE` for the log density.
#' @param times Draws per prediction.
#' @param i Rows to keep.
#' @param ... Not used.
#' @return `quantile()` and `generate()` a matrix with a row per
#'   prediction, the others a vector, `as_distribution()` a distributional
#'   vector.
#' @examples
#' fit <- mfsvr(dist ~ speed, data = cars)
#' d <- predict(fit, data.frame(speed = c(10, 20)), type = "distribution")
#' d
#' quantile(d, c(0.025, 0.5, 0.975))
#' predict(fit, data.frame(speed = c(10, 20)), interval = "prediction")
#' predictive_cdf(d, 50)
#' density(d, 50)
#' mean(d)
#' set.seed(1)
#' rowMeans(generate(d, 1000) <= 50)
#' @name predictive-distribution
NULL

#' @rdname predictive-distribution
#' @importFrom stats quantile
#' @export
quantile.gpsvm_predictive <- function(x, probs = c(0.025, 0.5, 0.975), ...) {
  .check_dots_empty(...)
  if (!is.numeric(probs) || length(probs) == 0L || anyNA(probs) || any(probs < 0 | probs > 1)) {
    .stop("'probs' must be numbers in [0, 1]")
  }
  n <- length(x)
  out <- vapply(probs, function(p) x$center + x$scale * .d_quantile(x, rep(p, n)), numeric(n))
  dim(out) <- c(n, length(probs))
  dimnames(out) <- list(x$names, paste0(format(100 * probs, trim = TRUE), "%"))
  out
}

#' @rdname predictive-distribution
#' @export
predictive_cdf <- function(d, q) {
  .check_predictive(d)
  .d_cdf(d, (.check_target_values(q, length(d), "q") - d$center) / d$scale)
}

#' @rdname predictive-distribution
#' @importFrom stats density
#' @export
density.gpsvm_predictive <- function(x, at, log = FALSE, ...) {
  .check_dots_empty(...)
  .check_flag(log, "log")
  t <- (.check_target_values(at, length(x), "at") - x$center) / x$scale
  out <- .d_log_density(x, t) - log(x$scale)
  if (log) out else exp(out)
}

#' @rdname predictive-distribution
#' @importFrom generics generate
#' @export
generate.gpsvm_predictive <- function(x, times = 1, ...) {
  .check_dots_empty(...)
  times <- .check_count(times, "times", lower = 1L)
  n <- length(x)
  u <- stats::runif(n * times)
  rows <- rep(seq_len(n), times)
  out <- x$center + x$scale * .d_quantile(x[rows], u)
  matrix(out, n, times, dimnames = list(x$names, NULL))
}

#' @export
generics::generate

#' @rdname predictive-distribution
#' @export
mean.gpsvm_predictive <- function(x, ...) {
  .check_dots_empty(...)
  x$center + x$scale * .d_moments(x)$mean
}

#' @rdname predictive-distribution
#' @export
predictive_variance <- function(d) {
  .check_predictive(d)
  d$scale^2 * .d_moments(d)$var
}

#' @export
length.gpsvm_predictive <- function(x) nrow(x$g$mean)

#' @rdname predictive-distribution
#' @export
`[.gpsvm_predictive` <- function(x, i) {
  keep <- seq_len(length(x))[i]
  if (anyNA(keep)) .stop("'i' must select rows of the distribution")
  x <- unclass(x)
  attr(x, "kept") <- NULL
  x$g <- .g_rows(x$g, keep)
  x$names <- x$names[keep]
  structure(x, class = "gpsvm_predictive")
}

#' @export
format.gpsvm_predictive <- function(x, digits = 4, ...) {
  if (length(x) == 0L) return(character(0))
  q <- quantile(x, c(0.025, 0.5, 0.975))
  what <- if (x$g$kind == "t") "t" else if (length(x$g$C) > 1L) "tube mixture" else "tube"
  sprintf("%s%s(median %s, 95%% [%s, %s])", what, if (.d_calibration(x) == 1) "" else ", calibrated ",
          format(q[, 2], digits = digits), format(q[, 1], digits = digits),
          format(q[, 3], digits = digits))
}

#' @export
print.gpsvm_predictive <- function(x, ...) {
  cat(sprintf("Predictive distributions of %d new target(s)\n", length(x)))
  out <- format(x, ...)
  if (length(out) > 0L) {
    labels <- format(x$names %||% seq_along(out))
    cat(paste0(labels, "  ", out), sep = "\n")
  }
  invisible(x)
}

.check_predictive <- function(d) {
  if (!inherits(d, "gpsvm_predictive")) {
    .stop("'d' must be a predictive distribution from predict(fit, type = \"distribution\")")
  }
  invisible(d)
}

# Finite numbers, one per prediction or one for all.
.check_target_values <- function(v, n, arg) {
  if (!is.numeric(v) || !length(v) %in% c(1L, n) || any(!is.finite(v))) {
    .stop(sprintf("'%s' must be finite numbers, one per prediction (%d) or one for all", arg, n))
  }
  rep_len(as.double(v), n)
}

#' @rdname predictive-distribution
#' @export
as_distribution <- function(d) {
  .check_predictive(d)
  if (!requireNamespace("distributional", quietly = TRUE)) {
    .stop("as_distribution() needs the distributional package")
  }
  rows <- lapply(seq_len(length(d)), function(i) d[i])
  distributional::new_dist(d = rows, class = "dist_gpsvm")
}

# The distributional package's methods for one element, registered by
# .onLoad() when that package's namespace is loaded.
.register_dist_methods <- function() {
  ns <- asNamespace("distributional")
  for (generic in names(.dist_gpsvm_methods)) {
    where <- if (exists(generic, envir = ns, inherits = FALSE)) ns else
      environment(get(generic, mode = "function"))
    registerS3method(generic, "dist_gpsvm", .dist_gpsvm_methods[[generic]], envir = where)
  }
  invisible()
}

.dist_gpsvm_methods <- list(
  format = function(x, ...) paste0("gpsvm<", format(x[["d"]], digits = 3), ">"),
  density = function(x, at, ..., log = FALSE) density(x[["d"]][rep(1L, length(at))], at, log = log),
  log_density = function(x, at, ...) density(x[["d"]][rep(1L, length(at))], at, log = TRUE),
  cdf = function(x, q, ...) predictive_cdf(x[["d"]][rep(1L, length(q))], q),
  quantile = function(x, p, ...) {
    vapply(p, function(level) quantile(x[["d"]], level)[1L, 1L], numeric(1))
  },
  generate = function(x, times, ...) generate(x[["d"]], times)[1L, ],
  mean = function(x, ...) mean(x[["d"]]),
  variance = function(x, ...) predictive_variance(x[["d"]])
)
