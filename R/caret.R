#' gpsvm's models for caret
#'
#' Returns a custom model for [caret::train()], so that gpsvm's fitters can be
#' tuned and compared with caret's models (`svmRadial`, `gaussprRadial`, ...)
#' on the same resamples: `caret::train(x, y, method = gpsvm_caret("mfsvr"))`.
#'
#' With `tune = "grid"` caret tunes a Gaussian kernel's width and the model's
#' constants over a grid by resampling. The width `sigma` is gpsvm's
#' (\eqn{\exp(-|x - x'|^2 / (2\sigma^2))}), not kernlab's: `svmRadial`'s
#' `sigma` is \eqn{1 / (2\sigma^2)}. The default grid of `tuneLength = len`
#' values per parameter puts the widths at \eqn{w 2^{u}} and `C` (or the
#' classifier's `noise`) at \eqn{c_0 4^{u}}, with \eqn{u = k - (len + 1)/2}
#' for \eqn{k = 1, \dots, len} (so -1, 0, 1 for `len = 3`), around
#' \eqn{w}, the width gpsvm chooses from the standardised inputs
#' ([kernels]), and the fitter's default \eqn{c_0} (`C = 1` for
#' [svr()] and [svc()], `C = 5` for [mfsvr()], `noise = 0.1` for [gpc()],
#' its noise without a search; the regression models' `C` acts on the
#' standardised response); `epsilon` stays at 0.1. With
#' `search = "random"` in [caret::trainControl()], `len` points are drawn
#' log-uniformly from \eqn{w/4} to \eqn{4w} and \eqn{c_0 / 32} to
#' \eqn{32 c_0} (and `epsilon` uniformly from 0 to 0.5). The grids assume
#' the fitters' default `scale = TRUE`.
#'
#' | model | parameters (`tune = "grid"`) | probabilities |
#' | --- | --- | --- |
#' | `"svr"` | `sigma`, `C`, `epsilon` | |
#' | `"mfsvr"` | `sigma`, `C`, `epsilon` | |
#' | `"rvm"` | `sigma` | |
#' | `"srvm"` | `sigma` | |
#' | `"gpc"` | `sigma`, `noise` | yes |
#' | `"svc"` | `sigma`, `C` | no |
#'
#' With `tune = "evidence"` the evidence (marginal likelihood) chooses the
#' hyperparameters inside every fit, so caret's resampling measures the
#' whole procedure, evidence search included, and can compare it with a
#' cross-validated grid on the same resamples. The only tuning parameter
#' is the kernel family, `kernel`: `"rbf"` (the default grid) or
#' `"linear"`. The fits are [mfsvr()] with `optimize = TRUE` (`C`,
#' `epsilon` and the width), [svr()] with `optimize = TRUE` (`C`),
#' [gpc()] with `optimize = TRUE` (the width and `noise`), and [rvm()] and
#' [srvm()] with `optimize = TRUE` for the Gaussian kernel (the width; their
#' weights' precisions and noise are chosen by the evidence in any case).
#' [svc()] has no evidence.
#'
#' Arguments given to [caret::train()] beyond its own (`scale`, `control`,
#' `bias`, ...) go to the fitter. Case weights are not supported. A
#' resample without a case of some class (a rare class and caret's default
#' bootstrap) fits the classes it has; its predictions keep every level,
#' and the missing class gets probability 0. A grid
#' value the fitter would refuse stops [caret::train()] with the fitter's own
#' error message before any resample is fitted. (caret shows the model a grid
#' of one row only by fitting it: then each failed resample is a warning that
#' carries the same message, and caret stops when all have failed.)
#'
#' @param model One of `"svr"`, `"mfsvr"`, `"rvm"`, `"srvm"`, `"gpc"`,
#'   `"svc"`.
#' @param tune `"grid"` (caret tunes the hyperparameters by resampling) or
#'   `"evidence"` (each fit chooses them by its evidence).
#' @return A list in caret's custom-model form: `label`, `library`, `type`,
#'   `parameters`, `grid`, `loop` (the grid check), `fit`, `predict`,
#'   `prob` (`NULL` where the model gives no probabilities), `sort`,
#'   `levels`, `tags`.
#' @seealso [caret::train()]; [gpsvm-tidiers] for the fits' tables.
#' @examples
#' # What caret::train() calls, by hand: the grid, a fit at one row of it and
#' # its predictions (caret itself is not loaded)
#' rvm_model <- gpsvm_caret("rvm")
#' rvm_model$parameters
#' x <- mtcars[, c("wt", "hp")]
#' grid <- rvm_model$grid(x, mtcars$mpg, len = 2)
#' grid
#' fit <- rvm_model$fit(x, mtcars$mpg, wts = NULL, param = grid[1, , drop = FALSE],
#'                      lev = NULL, last = TRUE, classProbs = FALSE)
#' head(rvm_model$predict(fit, x))
#' # With caret (vignette("ecosystem", package = "gpsvm") runs such calls;
#' # loading caret alone takes about 5 s of CPU time):
#' # ctrl <- caret::trainControl(method = "cv", number = 3)
#' # caret::train(mpg ~ wt + hp, data = mtcars, method = gpsvm_caret("rvm"),
#' #              tuneLength = 2, trControl = ctrl)
#' # caret::train(mpg ~ ., data = mtcars, trControl = ctrl,
#' #              method = gpsvm_caret("mfsvr", tune = "evidence"))
#' @export
gpsvm_caret <- function(model = c("svr", "mfsvr", "rvm", "srvm", "gpc", "svc"),
                        tune = c("grid", "evidence")) {
  model <- .match_choice(model)
  tune <- .match_choice(tune)
  spec <- .caret_models[[model]]
  if (tune == "evidence" && is.null(spec$evidence)) {
    .stop(sprintf("'tune' = \"evidence\" needs a model with an evidence; %s() has none (use tune = \"grid\")",
                  model))
  }
  params <- if (tune == "grid") spec$parameters else "kernel"
  classifier <- spec$type == "Classification"
  list(
    label = paste0("gpsvm::", model, "()", if (tune == "evidence") " tuned by its evidence"),
    library = "gpsvm",
    type = spec$type,
    parameters = data.frame(parameter = params,
                            class = ifelse(params == "kernel", "character", "numeric"),
                            label = unname(.caret_labels[params]), stringsAsFactors = FALSE),
    grid = function(x, y, len = NULL, search = "grid") {
      if (tune == "evidence") return(data.frame(kernel = "rbf", stringsAsFactors = FALSE))
      .caret_grid(spec, x, len %||% 3L, search)
    },
    loop = function(grid) {
      for (i in seq_len(nrow(grid))) .caret_args(spec, grid[i, , drop = FALSE], tune)
      list(loop = grid, submodels = vector("list", nrow(grid)))
    },
    fit = function(x, y, wts, param, lev, last, classProbs, ...) {
      if (!is.null(wts)) .stop(sprintf("%s() does not take case weights", model))
      # a bootstrap resample can miss a rare class: fit the classes it has,
      # predict with all of them (as the formula interface does)
      all_levels <- if (classifier && is.factor(y)) levels(y)
      if (!is.null(all_levels)) y <- droplevels(y)
      # x and y by name, so that the fit's stored call does not hold the data
      args <- c(list(x = quote(x), y = quote(y)), .caret_args(spec, param, tune), list(...))
      .keep_response_levels(do.call(spec$fitter, args, envir = environment()), all_levels)
    },
    predict = function(modelFit, newdata, preProc = NULL, submodels = NULL) {
      unname(if (classifier) stats::predict(modelFit, newdata, type = "class") else
        stats::predict(modelFit, newdata))
    },
    prob = if (isTRUE(spec$probabilities)) {
      function(modelFit, newdata, preProc = NULL, submodels = NULL) {
        p <- stats::predict(modelFit, newdata, type = "prob")
        out <- data.frame(p, row.names = NULL, check.names = FALSE)
        # a class the resample did not have: probability 0, a column for
        # every level as caret's summaries expect
        for (level in setdiff(modelFit$response_levels, colnames(p))) out[[level]] <- 0
        out[modelFit$response_levels %||% colnames(p)]
      }
    },
    sort = function(x) {
      if (tune == "evidence") return(x)
      # smoother models first: wide kernels, small C, much noise, a wide tube
      keys <- lapply(intersect(c("C", "sigma", "noise", "epsilon"), names(x)), function(p) {
        if (p == "C") x[[p]] else -x[[p]]
      })
      x[do.call(order, unname(keys)), , drop = FALSE]
    },
    levels = if (classifier) function(x) x$response_levels %||% x$levels,
    tags = c("Kernel Method", "Gaussian Process", "Support Vector Machines",
             "Radial Basis Function", if (tune == "evidence") "Bayesian Model")
  )
}

# Each model once: its fitter, type, tuning parameters (the width first),
# the centre of its C or noise grid, probabilities, its evidence search.
.caret_models <- list(
  svr = list(fitter = "svr", type = "Regression", parameters = c("sigma", "C", "epsilon"),
             centre = c(C = 1), evidence = function(family) list(optimize = TRUE)),
  mfsvr = list(fitter = "mfsvr", type = "Regression", parameters = c("sigma", "C", "epsilon"),
               centre = c(C = 5), evidence = function(family) list(optimize = TRUE)),
  rvm = list(fitter = "rvm", type = "Regression", parameters = "sigma",
             evidence = function(family) list(optimize = family == "rbf")),
  srvm = list(fitter = "srvm", type = "Regression", parameters = "sigma",
              evidence = function(family) list(optimize = family == "rbf")),
  gpc = list(fitter = "gpc", type = "Classification", parameters = c("sigma", "noise"),
             centre = c(noise = 0.1), probabilities = TRUE,
             evidence = function(family) list(optimize = TRUE)),
  svc = list(fitter = "svc", type = "Classification", parameters = c("sigma", "C"),
             centre = c(C = 1))
)

.caret_labels <- c(sigma = "Gaussian kernel width (gpsvm's sigma)", C = "C",
                   epsilon = "Epsilon (half-width of the tube)", noise = "Noise variance",
                   kernel = "Kernel family")

# The fitter's arguments for one row of the grid, checked as the fitter
# does before any resample is fitted (not a column of NA metrics).
.caret_args <- function(spec, param, tune) {
  param <- as.list(param)
  # kernels as calls, so that the fit's stored call reads rbf_kernel(0.5)
  if (tune == "evidence") {
    family <- .match_choice(as.character(param$kernel), c("rbf", "linear"), "kernel")
    return(c(list(kernel = call(paste0(family, "_kernel"))), spec$evidence(family)))
  }
  rbf_kernel(param$sigma)  # the kernel's own check of the width
  args <- list(kernel = call("rbf_kernel", param$sigma))
  for (p in setdiff(spec$parameters, "sigma")) {
    value <- param[[p]]
    # the fitters' bounds: C > 0 (svc() takes Inf; the tube's C and epsilon
    # as .check_tube() has them), epsilon >= 0, noise >= 0
    args[[p]] <- switch(p,
      C = if (spec$fitter == "svc") {
        .check_number(value, "C", lower = 0, open_lower = TRUE, allow_inf = TRUE)
      } else .check_tube(value, "C"),
      epsilon = .check_tube(value, "epsilon"),
      noise = .check_number(value, "noise", lower = 0))
  }
  args
}

# The default grid (?gpsvm_caret), or random points over wider ranges.
.caret_grid <- function(spec, x, len, search) {
  len <- .check_count(len, "len", lower = 1L)
  w <- .default_width(x)
  centre <- spec$centre
  if (search == "grid") {
    # len steps centred on the defaults: a factor 2 apart in the width, 4 in C
    u <- seq_len(len) - (len + 1) / 2
    values <- list(sigma = w * 2^u)
    if (!is.null(centre)) values[[names(centre)]] <- unname(centre) * 4^u
    if ("epsilon" %in% spec$parameters) values$epsilon <- 0.1
    return(expand.grid(values[spec$parameters], KEEP.OUT.ATTRS = FALSE))
  }
  log_uniform <- function(lo, hi) exp(stats::runif(len, log(lo), log(hi)))
  out <- data.frame(sigma = log_uniform(w / 4, 4 * w))
  if (!is.null(centre)) out[[names(centre)]] <- log_uniform(centre / 32, centre * 32)
  if ("epsilon" %in% spec$parameters) out$epsilon <- stats::runif(len, 0, 0.5)
  out[spec$parameters]
}
