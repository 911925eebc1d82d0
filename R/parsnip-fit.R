#' The fitting function of parsnip's "gpsvm" engines
#'
#' When parsnip is installed, gpsvm registers an engine `"gpsvm"` for
#' parsnip's [parsnip::svm_rbf()], [parsnip::svm_poly()] and
#' [parsnip::svm_linear()] in both modes: regression fits [mfsvr()] (or
#' [svr()] with `set_engine("gpsvm", model = "svr")`) and classification fits
#' [gpc()]. Nothing is attached: the engine is there as soon as both gpsvm's
#' and parsnip's namespaces are loaded. `gpsvm_parsnip_fit()` is what
#' parsnip calls; users write
#' `svm_rbf() |> set_engine("gpsvm") |> set_mode("regression")` and never
#' call it themselves.
#'
#' @section Main arguments:
#' | parsnip | gpsvm |
#' | --- | --- |
#' | `cost` | `C` of [mfsvr()] and [svr()]; for [gpc()] `noise = 1 / cost` |
#' | `rbf_sigma` | the width `1 / sqrt(2 * rbf_sigma)` of [rbf_kernel()] |
#' | `margin` | `epsilon` (regression only) |
#' | `degree`, `scale_factor` | [poly_kernel()]`(degree, scale = scale_factor, offset = 1)` |
#'
#' `rbf_sigma` and the polynomial kernel's arguments are in kernlab's
#' convention (see "Conversions" in [kernels]), so the `"kernlab"` engine
#' given the same values uses the same kernel. With the default `scale =
#' TRUE` inputs and (in regression) the response are standardised, as kernlab
#' does, and the arguments act on the standardised data: `margin = 0.1` is a
#' tenth of the response's standard deviation.
#'
#' The classifier has no `C`: its label noise is the variance `noise` added
#' to the kernel's diagonal, and an SVM with the quadratic slack penalty
#' \eqn{(C/2) \sum_i \xi_i^2} is the same as adding \eqn{1/C} to the
#' diagonal (Opper and Winther 2000, section 17.3), so `cost` sets
#' `noise = 1 / cost`. (kernlab's `cost` penalises the slacks linearly, so
#' the two engines' `cost` are not the same number.) `margin` has no meaning
#' for a classifier and is an error there.
#'
#' @section Arguments left unset:
#' A main argument that is not set (not given, and not marked [tune::tune()])
#' is chosen by the evidence, which is what gpsvm adds to a tidymodels
#' workflow: one fit instead of a resampled grid.
#' * Where the fitter's own evidence search covers it, the fitter searches it:
#'   `cost`, `margin` and `rbf_sigma` for [mfsvr()] (its `optimize`),
#'   `cost` and `rbf_sigma` for [gpc()] (its `optimize`, over `noise` and the
#'   width), `cost` for [svr()] (its `optimize`).
#' * The others are chosen by comparing the evidence ([logLik()]) of fits
#'   over a grid, each fit searching the rest as above: `degree` over 1, 2,
#'   3; `scale_factor` over \eqn{1/(4p)}, \eqn{1/p}, \eqn{4/p} for \eqn{p}
#'   input columns (the inner product of two standardised inputs is of order
#'   \eqn{p}); for [svr()], `rbf_sigma` over the widths \eqn{w/2}, \eqn{w},
#'   \eqn{2w} around the data-driven width \eqn{w} of [kernels] and
#'   `margin` over 0.05, 0.1 and 0.2 (times the response's standard
#'   deviation with `scale = FALSE`). The fit with the highest evidence is
#'   kept, and `attr(fit, "evidence_grid")` holds the grid with each fit's
#'   log evidence. A classifier of three or more classes has no joint
#'   evidence to compare (its one-vs-rest models are separate), so there
#'   such arguments must be given.
#'
#' The engine argument `optimize` changes this: `FALSE` chooses nothing, and
#' an unset argument takes the fitter's default (`cost`: [mfsvr()]'s `C = 5`,
#' [svr()]'s `C = 1`, [gpc()]'s `noise = 0.1`; `rbf_sigma`: the data-driven
#' width; `margin`: 0.1; `degree = 1`, `scale_factor = 1` as kernlab's
#' `polydot()`); `TRUE` or a subset of the fitter's names (`"C"`,
#' `"epsilon"`, `"sigma"` for [mfsvr()]; `"sigma"`, `"noise"`, `"kappa"` for
#' [gpc()]; `"C"` for [svr()]) is passed to the fitter as its `optimize`,
#' starting from the values set.
#'
#' @section Engine arguments:
#' `set_engine("gpsvm", ...)` takes `model`, `per_input`, `optimize` and
#' the fitter's own arguments other than those the main arguments set:
#' [mfsvr()]'s `control`, `scale`, `inducing`, `bias`; [svr()]'s `bias`,
#' `control`, `scale`; [gpc()]'s `kappa`, `bias`, `method`, `scale`,
#' `control`, `inducing`. Any other name is an error that lists the ones
#' accepted, and a value the fitter refuses is the fitter's own error.
#'
#' @section Predictions:
#' `predict()` on the parsnip fit gives `type = "numeric"` (`.pred`),
#' `"conf_int"` (the regression function's band) and `"pred_int"` (a new
#' target's interval: the exact quantiles of the epsilon-insensitive
#' predictive distribution, see [predict.gpsvm_regression()]), both with
#' `level` (default 0.95) and columns `.pred_lower`, `.pred_upper`, and with
#' `std_error = TRUE` a column `.std_error` (the regression function's
#' standard error); for classifiers `"class"` (`.pred_class`) and `"prob"`
#' (`.pred_<level>`, from [predict.gpsvm_gpc()]); `"raw"` passes `opts` to
#' the fitted model's own `predict()`.
#'
#' @section Tuning:
#' [tune::tunable()] gives ranges that suit standardised data (the default
#' `scale = TRUE`): `cost` \eqn{2^{-2}} to \eqn{2^6} ([mfsvr()]'s noise
#' scale \eqn{\sqrt 2/C} from 5.7 to 0.022 of the response's standard
#' deviation; for [gpc()] `noise` from 4 to 0.016), `rbf_sigma`
#' \eqn{10^{-3}} to 1 (Gaussian widths \eqn{\sigma} from 22 down to 0.71,
#' around the data-driven widths of [kernels] on standardised inputs),
#' `margin` 0 to 0.2, `degree` 1 to 3 and
#' `scale_factor` \eqn{10^{-3}} to \eqn{10^{-0.5}}.
#'
#' @param formula,data The model's formula and data, as parsnip passes them
#'   (its formula interface: factors are expanded by the fitter's own formula
#'   method).
#' @param kernel The kernel family of the parsnip model: `"rbf"`
#'   ([parsnip::svm_rbf()]), `"poly"` ([parsnip::svm_poly()]) or
#'   `"linear"` ([parsnip::svm_linear()]); set by the engine, not by users.
#' @param cost,rbf_sigma,margin,degree,scale_factor parsnip's main
#'   arguments (see "Main arguments"); `NULL` when unset.
#' @param model The fitter: `"mfsvr"` (the default for regression) or
#'   `"svr"`; `"gpc"` (the only one for classification).
#' @param per_input `TRUE` for a Gaussian kernel with a width per input
#'   column (`rbf_kernel(per_input = TRUE)`; see [kernels]): an unset
#'   `rbf_sigma` is then a width per input chosen by the evidence, a given
#'   one is the same width for every input.
#' @param optimize `NULL` (the default: the evidence chooses what is unset),
#'   `FALSE`, `TRUE` or a subset of the fitter's names: see "Arguments left
#'   unset".
#' @param ... Further engine arguments, passed to the fitter (see "Engine
#'   arguments"). The arguments after `...` must be named in full, so that
#'   the fitter's `scale` is not taken for `scale_factor`.
#' @return The fitted model: a [mfsvr()], [svr()] or [gpc()] fit, which
#'   parsnip keeps as the model fit's `fit` (`parsnip::extract_fit_engine()`).
#' @references M. Opper and O. Winther (2000). Gaussian processes and SVM:
#'   mean field results and leave-one-out. In *Advances in Large Margin
#'   Classifiers*, MIT Press. Section 17.3.
#' @seealso `vignette("tidymodels", package = "gpsvm")`; [gpsvm_caret()]
#'   for caret.
#' @examples
#' if (requireNamespace("parsnip", quietly = TRUE)) {
#'   # cost, margin and the width left unset: chosen by the evidence
#'   spec <- parsnip::set_mode(parsnip::set_engine(parsnip::svm_rbf(), "gpsvm"), "regression")
#'   fit <- parsnip::fit(spec, mpg ~ wt + hp, data = mtcars)
#'   predict(fit, mtcars[1:3, ], type = "pred_int", level = 0.9)
#'   # the same model called directly
#'   direct <- mfsvr(mpg ~ wt + hp, data = mtcars, optimize = TRUE)
#'   predict(direct, mtcars[1:3, ], interval = "prediction", level = 0.9)
#' }
#' @export
gpsvm_parsnip_fit <- function(formula, data, ..., kernel = c("rbf", "poly", "linear"),
                              cost = NULL, rbf_sigma = NULL, margin = NULL, degree = NULL,
                              scale_factor = NULL, model = NULL, per_input = FALSE,
                              optimize = NULL) {
  if (!is.character(kernel)) {
    .stop(paste("set_engine(\"gpsvm\", kernel = ): the kernel is the model's (svm_rbf(), svm_poly(),",
                "svm_linear()); for a Gaussian width per input use per_input = TRUE"))
  }
  kernel <- .match_choice(kernel)
  y <- eval(formula[[2L]], data, environment(formula))
  spec <- .parsnip_model(model, is.factor(y))
  engine_args <- list(...)
  .parsnip_check_engine_args(spec, names(engine_args))
  .check_flag(per_input, "per_input")
  if (per_input && kernel != "rbf") .stop("'per_input' = TRUE needs svm_rbf()")
  given <- .parsnip_main_args(spec, kernel, cost, rbf_sigma, margin, degree, scale_factor)
  plan <- .parsnip_search_plan(spec, kernel, names(given), optimize)
  grid <- .parsnip_evidence_grid(plan$grid, formula, data, y, engine_args$scale %||% TRUE)
  fit_at <- function(values) {
    args <- .parsnip_fitter_args(spec, kernel, c(given, values), per_input, plan$search)
    .parsnip_call_fitter(spec$fitter, formula, data, c(args, engine_args))
  }
  if (nrow(grid) == 0L) return(fit_at(list()))
  .parsnip_best_by_evidence(grid, fit_at)
}

# What each fitter takes from parsnip: the main arguments its own evidence
# search can choose (by parsnip's name, with the fitter's name), the engine
# arguments the translation sets itself (refused from set_engine()), and its
# values of optimize.
.parsnip_models <- list(
  mfsvr = list(fitter = "mfsvr", mode = "regression",
               searched = c(cost = "C", margin = "epsilon", rbf_sigma = "sigma"),
               reserved = c("x", "y", "C", "epsilon", "kernel", "optimize")),
  svr = list(fitter = "svr", mode = "regression", searched = c(cost = "C"),
             reserved = c("x", "y", "C", "epsilon", "kernel", "optimize")),
  gpc = list(fitter = "gpc", mode = "classification",
             searched = c(cost = "noise", rbf_sigma = "sigma"),
             reserved = c("x", "y", "noise", "kernel", "optimize"))
)

# Where each reserved argument comes from, for the error that refuses it.
.parsnip_reserved_source <- c(C = "cost", noise = "cost", epsilon = "margin",
                              kernel = "the model (svm_rbf(), svm_poly(), svm_linear())",
                              optimize = "optimize",
                              x = "the data", y = "the data")

.parsnip_model <- function(model, classification) {
  allowed <- if (classification) "gpc" else c("mfsvr", "svr")
  if (is.null(model)) return(.parsnip_models[[allowed[1L]]])
  if (!is.character(model) || length(model) != 1L || !model %in% allowed) {
    .stop(sprintf("set_engine(\"gpsvm\", model = ): for %s the model must be %s",
                  if (classification) "classification" else "regression",
                  paste0("\"", allowed, "\"", collapse = " or ")))
  }
  .parsnip_models[[model]]
}

# Engine arguments are the fitter's own (other than those the translation
# sets); anything else is refused by name, with what is accepted.
.parsnip_check_engine_args <- function(spec, names) {
  if (length(names) == 0L) return(invisible())
  if (any(is.na(names) | names == "")) {
    .stop("set_engine(\"gpsvm\", ...): every engine argument needs a name")
  }
  fitter_args <- setdiff(names(formals(utils::getS3method(spec$fitter, "default"))), "...")
  reserved <- intersect(names, spec$reserved)
  if (length(reserved) > 0L) {
    .stop(sprintf("set_engine(\"gpsvm\", %s = ): set by %s, not as an engine argument",
                  reserved[1L], .parsnip_reserved_source[[reserved[1L]]]))
  }
  unknown <- setdiff(names, fitter_args)
  if (length(unknown) > 0L) {
    accepted <- c("model", "per_input", "optimize", setdiff(fitter_args, spec$reserved))
    .stop(sprintf("set_engine(\"gpsvm\", ...): unknown engine argument(s) %s for %s(); accepted: %s",
                  paste0("'", unknown, "'", collapse = ", "), spec$fitter,
                  paste(accepted, collapse = ", ")))
  }
  invisible()
}

# The main arguments that are set, checked, by parsnip's names.
.parsnip_main_args <- function(spec, kernel, cost, rbf_sigma, margin, degree, scale_factor) {
  if (!is.null(margin) && spec$mode == "classification") {
    .stop("'margin' is the width of a regression's insensitive tube; a classifier has none")
  }
  positive <- function(v, arg) if (!is.null(v)) .check_number(v, arg, lower = 0, open_lower = TRUE)
  .drop_null(list(
    cost = positive(cost, "cost"), rbf_sigma = positive(rbf_sigma, "rbf_sigma"),
    margin = if (!is.null(margin)) .check_number(margin, "margin", lower = 0),
    degree = if (!is.null(degree)) .check_count(degree, "degree", lower = 1L, upper = .max_degree),
    scale_factor = positive(scale_factor, "scale_factor")))
}

# The main arguments of each kernel family's parsnip model.
.parsnip_kernel_args <- list(rbf = c("cost", "rbf_sigma", "margin"),
                             poly = c("cost", "degree", "scale_factor", "margin"),
                             linear = c("cost", "margin"))

# Which unset arguments the fitter searches (its `optimize`, or TRUE/FALSE
# for svr()'s evidence choice of C) and which the evidence grid compares.
.parsnip_search_plan <- function(spec, kernel, given, optimize) {
  args <- .parsnip_kernel_args[[kernel]]
  if (spec$mode == "classification") args <- setdiff(args, "margin")
  unset <- setdiff(args, given)
  searched <- spec$searched[names(spec$searched) %in% args]
  grid <- if (isFALSE(optimize)) character(0) else setdiff(unset, names(searched))
  if (is.null(optimize)) {
    optimize <- unname(searched[names(searched) %in% unset])
    if (length(optimize) == 0L) optimize <- FALSE
  }
  if (spec$fitter == "svr") optimize <- "C" %in% .optimize_which(optimize, "C")
  list(search = optimize, grid = grid)
}

# The candidates of the evidence grid (by parsnip's names and conventions).
.parsnip_evidence_grid <- function(which, formula, data, y, scale) {
  if (length(which) == 0L) return(data.frame())
  if (is.factor(y) && nlevels(y) > 2L) {
    .stop(sprintf(paste("with %d classes, give %s: the evidence chooses them for two classes only",
                        "(the one-vs-rest models have no joint evidence)"),
                  nlevels(y), paste0("'", which, "'", collapse = " and ")))
  }
  x <- if (any(c("scale_factor", "rbf_sigma") %in% which)) .parsnip_inputs(formula, data)
  values <- list(
    degree = 1:3,
    scale_factor = if ("scale_factor" %in% which) c(0.25, 1, 4) / ncol(x),
    rbf_sigma = if ("rbf_sigma" %in% which) 1 / (2 * (.default_width(x, scale) * c(0.5, 1, 2))^2),
    margin = c(0.05, 0.1, 0.2) * (if (isTRUE(scale)) 1 else stats::sd(y)))
  expand.grid(values[which], KEEP.OUT.ATTRS = FALSE)
}

# The numeric input columns the formula makes (factors as dummies).
.parsnip_inputs <- function(formula, data) {
  frame <- stats::model.frame(formula, data)
  x <- stats::model.matrix(attr(frame, "terms"), frame)
  x[, colnames(x) != "(Intercept)", drop = FALSE]
}

# The fitter's arguments for a set of parsnip values: C or the classifier's
# noise, epsilon, the kernel (as a call, so that the fit's stored call reads
# rbf_kernel(0.5)) and the search.
.parsnip_fitter_args <- function(spec, kernel, values, per_input, search) {
  cost <- values$cost
  args <- list(
    C = if (spec$mode == "regression") cost,
    noise = if (spec$mode == "classification" && !is.null(cost)) 1 / cost,
    epsilon = values$margin,
    kernel = switch(kernel,
      rbf = as.call(c(quote(rbf_kernel),
                      .drop_null(list(sigma = .parsnip_rbf_width(values$rbf_sigma),
                                      per_input = if (per_input) TRUE)))),
      poly = call("poly_kernel", degree = values$degree %||% 1L,
                  scale = values$scale_factor %||% 1, offset = 1),
      linear = quote(linear_kernel())))
  c(.drop_null(args), list(optimize = search))
}

# kernlab's rbfdot(sigma) is exp(-sigma |x - x'|^2), which is rbf_kernel(s)
# with s = 1 / sqrt(2 sigma); NULL (unset) stays NULL, the data-driven width.
.parsnip_rbf_width <- function(rbf_sigma) if (!is.null(rbf_sigma)) 1 / sqrt(2 * rbf_sigma)

# The fit, by a call that names the data rather than holding it, so that the
# fit's stored call prints as what it is; larger engine arguments (a control
# list, a matrix of inducing inputs) are named too.
.parsnip_call_fitter <- function(fitter, formula, data, args) {
  env <- new.env(parent = asNamespace("gpsvm"))
  env$formula <- formula
  env$data <- data
  for (name in names(args)) {
    value <- args[[name]]
    if (!is.call(value) && !(is.atomic(value) && length(value) <= 5L)) {
      assign(name, value, envir = env)
      args[[name]] <- as.name(name)
    }
  }
  eval(as.call(c(as.name(fitter), list(formula = quote(formula), data = quote(data)), args)), env)
}

# The fit of highest evidence, with the grid and each fit's log evidence.
.parsnip_best_by_evidence <- function(grid, fit_at) {
  fits <- lapply(seq_len(nrow(grid)), function(i) fit_at(as.list(grid[i, , drop = FALSE])))
  grid$log_evidence <- vapply(fits, function(fit) as.numeric(stats::logLik(fit)), numeric(1))
  best <- fits[[which.max(grid$log_evidence)]]
  attr(best, "evidence_grid") <- grid
  best
}

.drop_null <- function(x) x[!vapply(x, is.null, logical(1))]
