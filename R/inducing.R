# Inducing inputs for the FITC prior of mfsvr() and gpc(method = "tap"), on
# the fit's (scaled) input scale.

#' Inducing-point (sparse) fits
#'
#' [mfsvr()] and [gpc()] with `method = "tap"` take `inducing =` to replace
#' the Gaussian-process prior by its FITC approximation (fully independent
#' training conditional; Snelson and Ghahramani 2006), with EP run on it as
#' in Naish-Guzman and Holden (2008): with \eqn{m} inducing inputs
#' \eqn{Z},
#' \deqn{K \approx Q + \mathrm{diag}(K - Q), \quad Q = K_{nZ} K_{ZZ}^{-1} K_{Zn},}
#' exact on the diagonal and of rank \eqn{m} elsewhere. A fit then costs
#' \eqn{O(n m^2)} time and \eqn{O(n m)} memory per EP sweep instead of
#' \eqn{O(n^3)} and \eqn{O(n^2)}, and a prediction with its error bar
#' \eqn{O(m^2)}. The evidence ([logLik()]) is that of the FITC model, and
#' `optimize = TRUE` maximises it with its analytic gradient, the inducing
#' inputs staying where they were chosen. With the training inputs as
#' inducing inputs the FITC model is the full one (up to the jitter
#' \eqn{10^{-8}} times the mean of \eqn{k(z, z)} added to \eqn{K_{ZZ}}).
#'
#' `inducing` is either
#' * a count \eqn{m} (a single number, at most the number of observations):
#'   the inducing inputs are \eqn{m} training inputs chosen greedily on the
#'   scaled inputs with the fit's kernel (at the starting width when
#'   `optimize` is used): each is the input whose kernel value is worst
#'   explained by those chosen before (the largest \eqn{k(x, x) - Q(x, x)}),
#'   i.e. a pivoted Cholesky factorisation of the kernel matrix. This rule
#'   greedily shrinks \eqn{\mathrm{tr}(K - Q)}, the prior variance that FITC
#'   moves to its diagonal, costs \eqn{O(n m^2)} without forming \eqn{K}, and
#'   is deterministic (ties go to the earliest row). It spreads the points
#'   over the inputs' range rather than by their density. Inputs already
#'   explained to \eqn{10^{-12}} relative are not taken, so duplicated rows
#'   are never chosen twice and fewer than \eqn{m} points may be used (all
#'   distinct inputs, at most). Beyond 20000 observations (or \eqn{4m}, if
#'   more) the candidates are that many evenly spaced rows, and the fit uses
#'   every row: an input unlike every candidate (an isolated outlier on a
#'   row left out) is then not chosen.
#' * a numeric matrix or data frame of inducing inputs, one per row, with
#'   the columns of the training inputs `x` (for the formula interface, of
#'   the model matrix), in the data's units: they are scaled with the fit's
#'   scaling. Duplicated rows are an error (they add nothing and make
#'   \eqn{K_{ZZ}} singular). A plain vector of length above one is read as
#'   inducing inputs of a one-column `x`.
#'
#' The fit records the inducing inputs (scaled) in `fit$inducing`; `print()`
#' and `summary()` say that the fit is sparse and with how many points.
#'
#' Data in row partitions ([gpsvm_partitions()]) are fitted without
#' gathering them: the width rule and a count of inducing inputs choose from
#' the rows they would see in memory, and the fit is the one to the
#' partitions' rows bound together (to rounding).
#'
#' The \eqn{n \times m} factor of the cross-kernel is held in memory up to
#' `inducing_factor_mb` megabytes ([gpsvm_size_policy()]); the rows beyond
#' are recomputed from the inputs in every sweep (\eqn{O(m^2 + n)} memory
#' beyond that budget), for the same fit to rounding, as its plan
#' ([gpsvm_plan()]) says.
#'
#' With `inducing = NULL`, `mfsvr()` and `gpc()` use this representation by
#' themselves as a factorisation of the full prior where the kernel matrix
#' has a low numerical rank (`gpc()` beyond 1000 observations; the inducing
#' inputs the pivots of a pivoted Cholesky factor, without jitter; `rank_tol`
#' in [mfsvr_control()] and [gpc_control()]; beyond 20000 observations the
#' test looks first at 20000 evenly spaced rows), and `gpc()` as an
#' approximation beyond 2000
#' observations where it has none (as `inducing = 500`) and for its evidence
#' search beyond 300 (`search_inducing` in [gpc_control()]).
#' @references E. Snelson and Z. Ghahramani (2006). Sparse Gaussian processes
#'   using pseudo-inputs. *NIPS 18*.
#'
#'   A. Naish-Guzman and S. Holden (2008). The generalized FITC
#'   approximation. *NIPS 20*.
#' @name inducing-points
#' @seealso [mfsvr()], [gpc()]
#' @examples
#' set.seed(1)
#' x <- matrix(runif(400, -3, 3), ncol = 2)
#' y <- sin(2 * x[, 1]) * cos(x[, 2]) + rnorm(200, sd = 0.1)
#' fit <- mfsvr(x, y, inducing = 30)
#' fit
#' predict(fit, x[1:3, ], se.fit = TRUE)
NULL

# The rows of a FITC fit's n x m factor held in memory within the size rule
# inducing_factor_mb (NULL: all of them); the core recomputes the others in
# every pass over them.
.inducing_held_rows <- function(n, m) {
  held <- floor(.size_rule("inducing_factor_mb") * 2^20 / (8 * m))
  if (held >= n) NULL else as.integer(held)
}

# Relative residual below which the greedy choice stops (see above).
.inducing_tol <- 1e-12

# The greedy choice of m training rows (the pivots of a pivoted Cholesky
# factorisation of K, in the order chosen), among at most
# max(greedy_max_rows, 4 m) evenly spaced rows, as choose_prior()'s.
.greedy_rows <- function(kernel, xs, m) {
  cpp_greedy_inducing(kernel, xs, m, .inducing_tol,
                      .evenly_spaced_rows(nrow(xs), max(.size_rule("greedy_max_rows"), 4L * m)))
}

# The inducing inputs (scaled) for `inducing` (NULL: none), given the scaled
# training inputs xs, the resolved kernel and the input scaling.
.inducing_inputs <- function(inducing, xs, kernel, scaling) {
  if (is.null(inducing)) return(NULL)
  # (gpc()'s request for .choose_prior()'s default representation)
  if (inherits(inducing, "gpsvm_low_rank")) return(.choose_prior(xs, kernel, inducing$rank_tol))
  n <- nrow(xs)
  if (is.numeric(inducing) && is.null(dim(inducing)) && length(inducing) == 1L) {
    m <- .check_count(inducing, "inducing", lower = 1L)
    if (m > n) {
      .stop(sprintf("'inducing' = %d exceeds the number of observations (%d)", m, n))
    }
    return(xs[.greedy_rows(kernel, xs, m), , drop = FALSE])
  }
  if (!is.data.frame(inducing) && !is.numeric(inducing)) {
    .stop("'inducing' must be a count or a numeric matrix of inducing inputs")
  }
  z <- .as_input_matrix(inducing, "inducing")
  if (ncol(z) != ncol(xs)) {
    .stop(sprintf("'inducing' has %d column(s) but the training inputs have %d", ncol(z),
                  ncol(xs)))
  }
  if (!is.null(colnames(z)) && !is.null(colnames(xs)) && !identical(colnames(z), colnames(xs))) {
    .stop(sprintf("'inducing' has columns %s, but the training inputs have %s",
                  paste(colnames(z), collapse = ", "), paste(colnames(xs), collapse = ", ")))
  }
  twins <- duplicated(z)
  if (any(twins)) {
    .stop(sprintf("'inducing' has duplicated rows (%s): remove them",
                  paste(utils::head(which(twins), 5L), collapse = ", ")))
  }
  z <- .scale_inputs(z, scaling)
  dimnames(z) <- list(NULL, colnames(xs))
  z
}

# Every choice of a Gaussian-process prior's representation without given
# inducing inputs, for every model: the core's choose_prior()
# (prior_choice.hpp, which says why) under the size rules of its `use`:
# * "fit": a fit's prior. Dense up to low_rank_min_n rows; beyond, the
#   pivots of a low-rank factor of K (attribute low_rank, and the factor
#   itself, from which the core makes FITC on them the same model up to
#   rank_tol) when at most low_rank_max pivots represent it; else dense up
#   to dense_max_n rows and FITC beyond on automatic_inducing_count
#   inducing inputs (attribute approximation).
#   Beyond greedy_max_rows rows the rank is tested first on that many evenly
#   spaced ones, and the greedy choice sees max(greedy_max_rows, 4 m).
# * "search": one evaluation of gpc()'s evidence search on the full prior:
#   as "fit" with low_rank_min_n = search_dense_max_n, never FITC.
# * "search_fitc": the FITC prior gpc()'s evidence search runs on: beyond
#   search_dense_max_n rows, on the greedy rule's rows, at most
#   search_inducing_count (subset_search_inducing_count for a search on
#   `subset` rows, beyond gpc_search_max_n) and one per
#   search_rows_per_inducing rows, without a rank test; `count`
#   (gpc_control(search_inducing)): that many, at any n.
# The inducing inputs (rows of xs), or NULL for the dense matrix.
.choose_prior <- function(xs, kernel, rank_tol, use = c("fit", "search", "search_fitc"),
                          count = NULL, subset = FALSE) {
  use <- match.arg(use)
  rules <- list(rank_tol = rank_tol, low_rank_min_n = .size_rule("low_rank_min_n"),
                low_rank_max = .size_rule("low_rank_max"), dense_max_n = .size_rule("dense_max_n"),
                inducing_count = .size_rule("automatic_inducing_count"), rows_per_inducing = 1L,
                greedy_max_rows = .size_rule("greedy_max_rows"), test_rank = TRUE)
  if (use == "search") {
    rules[c("low_rank_min_n", "dense_max_n")] <- list(.size_rule("search_dense_max_n"),
                                                      .Machine$integer.max)
  } else if (use == "search_fitc") {
    rules$test_rank <- FALSE
    rules[c("dense_max_n", "inducing_count", "rows_per_inducing")] <- if (is.null(count)) {
      list(.size_rule("search_dense_max_n"),
           .size_rule(if (subset) "subset_search_inducing_count" else "search_inducing_count"),
           .size_rule("search_rows_per_inducing"))
    } else list(0L, count, 1L)
  }
  .chosen_inducing(xs, cpp_choose_prior(kernel, xs, rules), use == "fit")
}

# The inducing inputs (rows of xs) of a choice of cpp_choose_prior(), NULL
# for the dense matrix: a low-rank factor's pivots carry it (attributes
# low_rank, factor and pivots), from which the core makes FITC on them the
# factor's model; FITC chosen for a fit is an approximation.
.chosen_inducing <- function(xs, choice, approximation = TRUE) {
  if (choice$form == "dense") return(NULL)
  low <- choice$form == "low_rank"
  structure(xs[choice$rows, , drop = FALSE], low_rank = if (low) TRUE,
            factor = choice$factor, pivots = if (low) choice$rows,
            approximation = if (!low && approximation) TRUE)
}

# A fit keeps its inducing inputs without the factor they carried to the core.
.fitted_inducing <- function(z) structure(z, factor = NULL, pivots = NULL)

# The line print() shows for a sparse fit.
.inducing_line <- function(object) {
  if (is.null(object$inducing)) return(NULL)
  # the model's own control: mfsvr_control() or gpc_control()
  dense <- sprintf("%s(rank_tol = 0) for the dense matrix",
                   sub("^gpsvm_", "", class(object$control)[1L]))
  if (isTRUE(attr(object$inducing, "low_rank"))) {
    return(sprintf("low rank: the kernel matrix to rank_tol = %.3g on %d pivots (FITC on them; %s)",
                   object$control$rank_tol, nrow(object$inducing), dense))
  }
  if (isTRUE(attr(object$inducing, "approximation"))) {
    return(sprintf(paste("sparse: the kernel matrix has no low rank, so beyond %d observations",
                         "the FITC prior on %d inducing inputs (%s)"), .size_rule("dense_max_n"),
                   nrow(object$inducing), dense))
  }
  sprintf("sparse: FITC prior with %d inducing inputs", nrow(object$inducing))
}

# What predictions read from an EP fit: the inducing-point factors when it
# has them (FITC, or a low-rank prior's), else the training inputs'.
.ep_prediction_fit <- function(object, weights) {
  if (!is.null(object$inducing)) {
    return(list(kernel = object$kernel, inducing = object$inducing,
                inducing_weights = object$inducing_weights,
                inducing_chol = object$inducing_chol, chol = object$chol))
  }
  list(kernel = object$kernel, x = object$x, weights = weights,
       site_precision = object$site_precision, chol = object$chol)
}
