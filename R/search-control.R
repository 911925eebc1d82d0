#' Settings of the evidence searches
#'
#' The tolerance, budget and grid of the search that chooses hyperparameters
#' by the evidence, for every fitter that searches: [mfsvr()] and [gpc()]
#' (L-BFGS-B with the evidence's gradient), [rvm()] and [srvm()] (the
#' Gaussian width: a grid, then golden sections) and [svr()] (`C`: by the
#' EP evidence's gradient as [mfsvr()]; a grid, then golden sections, with a
#' threshold, an interval or the paper's approximations; or the eq. (17)
#' iteration). Each fitter takes it as
#' `search = search_control(...)`; it matters only where `optimize` asks
#' for a search.
#'
#' `NULL` (the default of each setting) means the search's own value, which
#' the fit records (`fit$optimization$convergence$tol`):
#'
#' | search | `tol` | `max_iter` | `grid` |
#' | --- | --- | --- | --- |
#' | L-BFGS-B, `mfsvr()`, `gpc()`, `svr()` by the EP evidence | \eqn{10^{-3}}: the largest component of the projected gradient of the log evidence per observation | 100 iterations | (none) |
#' | the width, `rvm()`, `srvm()` | 0.05: the bracket around the best width, in log sigma | 100 golden-section steps | 9 widths from \eqn{w/4} to \eqn{4w} |
#' | `C` by a grid, `svr()` | \eqn{10^{-3}}: the bracket around the best `C`, in log C | 100 golden-section steps | 25 values of `C`, log-spaced |
#' | `C` by eq. (17), `svr()` | 0.05: the change of `C` in one step (the paper's) | 50 steps | (none) |
#'
#' @param tol Positive number: the search's stopping tolerance, or `NULL`.
#' @param max_iter Whole number \eqn{\ge 1}: the most iterations the search
#'   takes, or `NULL`. A search that reaches it is reported as not converged,
#'   with a warning. In the default search for `C` of [mfsvr()] and [svr()]
#'   (one EP run that moves `C` as it converges), an iteration is a move of
#'   `C`.
#' @param grid Whole number \eqn{\ge 3}: the points of the grid a search
#'   starts from, or `NULL`.
#' @param hyperprior For the searches of [mfsvr()] and of [svr()] by the EP
#'   evidence: `TRUE` to maximise the evidence times the weakly informative
#'   hyperprior on the log hyperparameters (the posterior mode; see "The
#'   hyperprior" in [mfsvr()]), `FALSE` to maximise the evidence itself, or
#'   `NULL` (the default): for [mfsvr()], `TRUE` where the search chooses
#'   more than `C` (`optimize = TRUE`) on standardised data (`scale = TRUE`),
#'   whose scales the prior is stated in, and `FALSE` otherwise (the search
#'   of `C` alone, which the predictions integrate over anyway, and the data
#'   as given, the papers' searches); for [svr()], `FALSE`. `TRUE` also
#'   applies to the default search for `C` (`optimize = NULL`), which then
#'   refits at each `C` it tries instead of moving `C` within one EP run.
#'   Other searches have no hyperprior.
#' @return A list of class `gpsvm_search_control`.
#' @seealso `optimize` in [mfsvr()], [gpc()], [rvm()], [srvm()] and [svr()].
#' @examples
#' search_control(tol = 1e-4)
#' fit <- rvm(dist ~ speed, data = cars, optimize = TRUE, search = search_control(grid = 5))
#' fit$optimization$evaluations
#' @export
search_control <- function(tol = NULL, max_iter = NULL, grid = NULL, hyperprior = NULL) {
  if (!is.null(hyperprior)) .check_flag(hyperprior, "hyperprior")
  structure(list(tol = if (!is.null(tol)) .check_number(tol, "tol", lower = 0, open_lower = TRUE),
                 max_iter = if (!is.null(max_iter)) .check_count(max_iter, "max_iter", lower = 1L),
                 grid = if (!is.null(grid)) .check_count(grid, "grid", lower = 3L),
                 hyperprior = hyperprior),
            class = c("gpsvm_search_control", "gpsvm_control"))
}

# The searches' own settings, where search_control() leaves them NULL (the
# table in ?search_control).  NA: the search has no such setting.
.search_defaults <- list(
  gradient = list(tol = 1e-3, max_iter = 100L, grid = NA_integer_),
  width = list(tol = 0.05, max_iter = 100L, grid = 9L),
  C_evidence = list(tol = 1e-3, max_iter = 100L, grid = 25L),
  C_fixed_point = list(tol = 0.05, max_iter = 50L, grid = NA_integer_)
)

# The settings of search `kind` (a name of .search_defaults): the user's
# where given, else the search's own; `hyperprior` the user's (NULL: the
# model's default, see search_control()).
.search_settings <- function(search, kind) {
  .check_control(search, "search_control", arg = "search")
  defaults <- .search_defaults[[kind]]
  list(tol = search$tol %||% defaults$tol, max_iter = search$max_iter %||% defaults$max_iter,
       grid = search$grid %||% defaults$grid, hyperprior = search$hyperprior)
}
