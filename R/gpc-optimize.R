# Hyperparameters of the TAP classifier by maximising its EP evidence, with
# the gradient at the EP fixed point from the core (ep_gradient.hpp), on the
# scale log sigma, log noise and logit(2 kappa).

# Where a search starts a parameter given as 0, on which the scale has no
# value: the noise as a fraction of the kernel's mean diagonal, and kappa.
.gpc_search_start <- list(noise = 0.1, kappa = 0.05)

# The fit (an ordinary .gpc_fit() when optimize is FALSE), with the
# hyperparameters in `optimize` (TRUE: the width and the noise) chosen by the
# evidence.  `rows` (the default search beyond gpc_search_max_n) confines the
# search to those rows; the fit on every row at the values found starts from
# the best point's sites on them, near its fixed point.
.gpc_optimize <- function(x, y, kernel, noise, kappa, method, control, optimize = FALSE,
                          inducing = NULL, settings, rows = NULL) {
  which <- .optimize_which(optimize, c("sigma", "noise", "kappa"), default = c("sigma", "noise"))
  if (length(which) == 0L) {
    return(.gpc_fit(x, y, kernel, noise, kappa, method, control, inducing = inducing))
  }
  if (method != "tap") {
    .stop("'optimize' needs method = \"tap\": the naive mean field has no evidence to maximise")
  }
  if (!.has_width(kernel)) {
    if (!isTRUE(optimize) && "sigma" %in% which) {
      .stop(paste("'optimize' = \"sigma\" needs rbf_kernel() or matern_kernel(): only they",
                  "have a width"))
    }
    which <- setdiff(which, "sigma")
  }
  kernel <- .resolve_kernel(kernel, x)
  per_input <- !is.null(kernel$input_widths) && "sigma" %in% which
  search_x <- if (is.null(rows)) x else x[rows, , drop = FALSE]
  search_y <- if (is.null(rows)) y else y[rows]
  spec <- .gpc_search_spec(search_x, kernel, noise, kappa, which)
  search_inducing <- (if (is.null(rows)) inducing) %||%
    .gpc_search_inducing(search_x, kernel, control, subset = !is.null(rows))
  # the inputs (`points`: the search's, or every row for the fit), the
  # inducing inputs of the search and of the fit, and the kernel at a point
  # (with a width per input all but the last move with it)
  at <- function(par, points = search_x) {
    h <- as.list(spec$natural(par))
    out <- list(kernel = if (!is.null(h[["sigma"]])) .with_width(kernel, h[["sigma"]]) else kernel,
                noise = h[["noise"]] %||% noise, kappa = h[["kappa"]] %||% kappa, x = points,
                search_inducing = search_inducing, inducing = inducing)
    if (per_input) {
      out[c("kernel", "x", "search_inducing", "inducing")] <-
        .per_input_point(h, kernel, points, search_inducing, inducing)
    }
    out
  }
  search_control <- unclass(control)
  cap <- control$max_iter
  # one EP fit (the raw core result) at hyperparameters h, warm-started
  # from the sites of `warm`
  ep_at <- function(h, ctl, warm, gradient) {
    model <- list(kernel = h$kernel, noise = h$noise, kappa = h$kappa,
                  inducing = h$search_inducing %||%
                    .choose_prior(h$x, h$kernel, control$rank_tol, "search"))
    state <- if (!is.null(warm)) warm[c("site_precision", "site_nu")] else list()
    .count_fit()
    tryCatch(cpp_gpc_tap_fit(model, h$x, search_y, ctl, state, gradient), error = function(e) e)
  }
  # entries of the core's gradient the search has (a width per input has its
  # own, after them, as in the search's parameters)
  keep <- c("sigma" %in% which && !per_input, c("noise", "kappa") %in% which)
  chain <- function(res, h) {  # d / d(log sigma, log noise, kappa) -> search scale
    g <- res$gradient
    g[3] <- g[3] * h$kappa * (1 - 2 * h$kappa)
    c(g[keep], if (per_input) res$per_input_gradient)
  }
  evaluate <- function(par, first, warm, accuracy) {
    ctl <- search_control
    ctl$tol <- max(control$tol, accuracy %||% 1e-4)  # as mfsvr's search
    if (!first) ctl$max_iter <- min(control$max_iter, cap)
    h <- at(par)
    res <- ep_at(h, ctl, warm, TRUE)
    if (inherits(res, "error")) return(.search_point(res))
    if (first) cap <<- max(60L, 3L * res$convergence$iterations)
    gradient <- chain(res, h)
    if (res$convergence$converged && res$clamped_sites > 0L) {
      gradient <- .gpc_numeric_gradient(par, at, ep_at, search_control, res)
    }
    .search_point(res, res$log_evidence, gradient, res$convergence$converged,
                  res$convergence$iterations, "EP")
  }
  outcome <- .gradient_search(spec, evaluate, n = length(search_y), tol = settings$tol,
                              max_iter = settings$max_iter)
  h <- at(outcome$best$par %||% spec$start, x)
  approximate <- is.null(inducing) && !is.null(search_inducing)
  # after a search on inducing inputs, the model optimize = FALSE fits (the
  # full prior, on the kernel matrix's pivots when they represent it)
  if (approximate) h$inducing <- .choose_prior(h$x, h$kernel, control$rank_tol)
  # warm-started from the best point's EP sites (the same fixed point in
  # fewer sweeps; after a search on some rows, their sites and 0 elsewhere)
  sites <- outcome$best$fit[c("site_precision", "site_nu")]
  if (!is.null(rows) && !is.null(outcome$best$fit)) {
    sites <- lapply(sites, function(s) replace(numeric(length(y)), rows, s))
  }
  fit <- .gpc_fit(h$x, y, h$kernel, h$noise, h$kappa, method, control, inducing = h$inducing,
                  sites = sites)
  # (the search's own inducing inputs, where they are not the fit's)
  if (!is.null(search_inducing) && !identical(search_inducing, inducing)) {
    outcome$record$search_inducing <- nrow(search_inducing)
  }
  if (!is.null(rows)) outcome$record$search_rows <- length(rows)
  .finish_search(fit, outcome, spec, "gpc():")
}

# The inducing inputs (scaled) of the FITC prior an evidence search without
# `inducing` runs on (.choose_prior()'s "search_fitc"), or NULL for the full
# prior, whose evaluations then each test for a low rank ("search").  The
# greedy rule runs at the kernel's width, narrower than where the search
# starts (a wider one would stop at fewer pivots).  `subset`: the search sees
# evenly spaced rows of a larger data set.
.gpc_search_inducing <- function(x, kernel, control, subset = FALSE) {
  count <- control$search_inducing
  if (isTRUE(count == 0)) return(NULL)
  if (!is.null(count) && count > nrow(x)) {
    .stop(sprintf("gpc_control(search_inducing = %d) exceeds the number of observations (%d)",
                  count, nrow(x)))
  }
  .choose_prior(x, kernel, control$rank_tol, "search_fitc", count, subset)
}

# Where EP holds sites at precision 0 that asked for a negative one (kappa >
# 0 can curve a site's tilted distribution upwards), the evidence is not
# stationary in those sites and the explicit gradient only approximate.
# There it is taken by central differences (step 1e-3 on the search scale),
# each EP fit warm-started from the centre's sites at tolerance 1e-6, which
# keeps the gradient's error far inside the stopping rule.
.gpc_numeric_gradient <- function(par, at, ep_at, control, centre) {
  control$tol <- min(control$tol, 1e-6)
  step <- 1e-3
  evidence <- function(p) {
    res <- ep_at(at(p), control, centre, FALSE)
    if (inherits(res, "error") || !res$convergence$converged) NA_real_ else res$log_evidence
  }
  vapply(seq_along(par), function(k) {
    e <- replace(numeric(length(par)), k, step)
    (evidence(par + e) - evidence(par - e)) / (2 * step)
  }, numeric(1))
}

# Where the search for one width starts: the width given, or for a width
# the data chose the median heuristic, wider than the sigest() rule of
# .data_driven_width(): nearer the evidence's usual optimum, so fewer steps.
.gpc_start_width <- function(x, kernel) {
  if (!identical(kernel$sigma_rule, "data") || !is.null(kernel$input_widths)) return(kernel$sigma)
  .data_driven_width(x, quantiles = 0.5)
}

# The search: log sigma in [w / 100, 100 w] (w the data-driven width of the
# inputs; with a width per input, one log width per column instead, see
# .per_input_ranges()), log noise in [1e-6, 1e3] times the kernel's mean
# diagonal, and kappa in [1e-6, 0.45]; a zero noise or kappa starts at
# .gpc_search_start.
.gpc_search_spec <- function(x, kernel, noise, kappa, which) {
  w <- .data_driven_width(x)
  diagonal <- mean(cpp_kernel_diagonal(kernel, x, 0L, 1L))
  if (!(diagonal > 0)) diagonal <- 1
  logit <- function(k) stats::qlogis(2 * k)
  noise0 <- if (noise > 0) noise else .gpc_search_start$noise * diagonal
  kappa0 <- if (kappa > 0) kappa else .gpc_search_start$kappa
  sigma0 <- if (.has_width(kernel)) .gpc_start_width(x, kernel) else 1
  ranges <- rbind(log_sigma = c(log(sigma0), log(w / 100), log(100 * w)),
                  log_noise = c(log(noise0), log(1e-6 * diagonal), log(1e3 * diagonal)),
                  logit_kappa = c(logit(kappa0), logit(1e-6), logit(0.45)))
  ranges <- .per_input_ranges(ranges[c("sigma", "noise", "kappa") %in% which, , drop = FALSE],
                              kernel)
  benign <- c("noise:lower", "kappa:lower", .per_input_benign(ranges))
  natural <- function(par) {
    ifelse(rownames(ranges) == "logit_kappa", stats::plogis(par) / 2, exp(par))
  }
  .search_spec(start = ranges[, 1], lower = ranges[, 2], upper = ranges[, 3], natural = natural,
               natural_names = sub("^log_|^logit_", "", rownames(ranges)), benign = benign,
               notes = list(`noise:upper` = paste("the evidence prefers labels that do not depend",
                                                  "on the inputs: it finds no signal in them")))
}
