# The predictive distribution of new targets as an object: what predict()'s
# "prediction" intervals are central intervals of, so that quantiles at any
# level, the CDF, the density, draws, moments and scores all come from the
# one computation and cannot disagree with the intervals.
#
# A model's own predictive ("G", model units) is a mixture of components,
# each a latent N(mean, var) plus the model's noise:
# * "epsins": the epsilon-insensitive noise of svr() and mfsvr(), one
#   component per C (the fit's C alone, or the nodes of its C mixture,
#   R/hyper-mixture.R); quantiles, CDF and density from the core
#   (gpsvm::EpsilonInsensitive, R/epsins-noise.R);
# * "t": the relevance vector machines' Student t on df degrees of freedom,
#   scale sqrt(var + noise) (R/rvm-methods.R).
# A calibration by cross-validation (R/interval-calibration.R) maps each
# level L of a central interval to the model's own level c(L)
# (.calibrated_level()); the distribution whose central intervals these are
# has, below its median, F(t) = Phi(s Phi^-1(G(t))), s the calibration's
# scale, and above it the same in the upper tail.  Its density is g(t)
# times s phi(s z) / phi(z), z = Phi^-1(G(t)) (F, f and the integrals for
# the moments and the CRPS: the core's predictive.hpp).  Then the
# response's scaling: y = center + scale * t.

# The model's own predictive at latent moments mean, var (vectors, model
# units) is .target_distribution() of each model (a generic of generics.R):
# a list with kind, the components' mean and var (n x k matrices), weight,
# and the noise's parameters (C and epsilon, or noise and df).

# The central `level` interval of the model's own predictive G, model units:
# list(lower, upper), each at (1 -+ level) / 2.
.g_interval <- function(g, level) {
  alpha <- (1 - level) / 2
  list(lower = .g_quantile(g, alpha), upper = .g_quantile(g, alpha, upper = TRUE))
}

# One component per row and C: the epsilon-insensitive predictive (epsilon
# one for all components, or one each).
.epsins_distribution <- function(mean, var, C, epsilon, weight = 1) {
  mean <- as.matrix(mean)
  var <- as.matrix(var)
  list(kind = "epsins", mean = mean, var = var, C = C, epsilon = rep_len(epsilon, length(C)),
       weight = weight)
}

# Level-u quantiles of G, u recycled over the rows; with `upper`, the
# level 1 - u, from the mirrored distribution (every component is symmetric
# about its mean), so that a tiny u keeps its precision.
.g_quantile <- function(g, u, upper = FALSE) {
  u <- rep_len(u, nrow(g$mean))
  if (upper) {
    g$mean <- -g$mean
    return(-.g_quantile(g, u))
  }
  if (g$kind == "t") {
    s <- sqrt(g$var[, 1L] + g$noise)
    # the interval's form, mean -+ t quantile times scale, in both tails
    return(ifelse(u < 0.5, g$mean[, 1L] - stats::qt(u, g$df, lower.tail = FALSE) * s,
                  g$mean[, 1L] + stats::qt(u, g$df) * s))
  }
  s <- g$row_scale %||% 1
  if (length(g$C) == 1L) return(s * .epsins_predictive_quantile(u, g$mean[, 1L], g$var[, 1L], g$C, g$epsilon))
  s * .epsins_mixture_quantile(u, g$mean, g$var, g$C, g$epsilon, g$weight)
}

# Mean and variance of G: the noise has mean 0 and its own variance.
.g_moments <- function(g) {
  noise <- if (g$kind == "t") {
    if (g$df > 2) (g$var[, 1L] + g$noise) * g$df / (g$df - 2) - g$var[, 1L] else Inf
  } else {
    matrix(mapply(svr_noise_variance, g$C, g$epsilon), nrow(g$mean),
           length(g$C), byrow = TRUE)
  }
  w <- matrix(g$weight, nrow(g$mean), length(g$weight), byrow = TRUE)
  mean <- rowSums(w * g$mean)
  second <- rowSums(w * (g$var + noise + g$mean^2))
  s <- g$row_scale %||% 1
  list(mean = s * mean, var = s^2 * pmax(second - mean^2, 0))
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

# ---- the object ------------------------------------------------------------

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
  structure(list(g = g, calibration = .calibration_scale(object$interval_calibration$tail),
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

# Quantiles in model units at levels p (recycled over the rows): G's at
# the calibration's own tail of each, from the nearer tail.
.d_quantile <- function(d, p) {
  p <- rep_len(p, nrow(d$g$mean))
  s <- .d_calibration(d)
  out <- numeric(length(p))
  out[p == 0] <- -Inf
  out[p == 1] <- Inf
  lower <- p > 0 & p < 0.5
  upper <- p >= 0.5 & p < 1
  if (any(lower)) out[lower] <- .g_quantile(.g_rows(d$g, lower), .own_tail(s, p[lower]))
  if (any(upper)) {
    out[upper] <- .g_quantile(.g_rows(d$g, upper), .own_tail(s, 1 - p[upper]), upper = TRUE)
  }
  out
}

# F(t), 1 - F(t) and log f(t), in model units (t recycled over the rows),
# from the core (gpsvm::predictive_at(), predictive.hpp): each tail from the
# model's own in that tail, so that far targets keep their precision.
.d_tails <- function(d, t) {
  cpp_predictive_at(d$g, .d_calibration(d), rep_len(as.double(t), length(d)))
}
.d_cdf <- function(d, t) .d_tails(d, t)$lower
.d_log_density <- function(d, t) .d_tails(d, t)$log_density

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

# Mean and variance in model units: G's closed forms without a
# calibration; with one, integrals of F's density by the core's quadrature
# (gpsvm::predictive_moments(), predictive.hpp).
.d_moments <- function(d) {
  if (.d_calibration(d) == 1) return(.g_moments(d$g))
  cpp_predictive_integrals(d$g, .d_calibration(d), NULL)
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
