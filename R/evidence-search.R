# Hyperparameters by maximising an evidence: L-BFGS-B on the analytic
# gradient (mfsvr(), the TAP classifier), or a grid and golden sections over
# one width (rvm(), srvm()).  A model gives .search_spec() and
# evaluate(par, first, warm, accuracy), which fits at one point and returns
# .search_point(); this file owns the drivers, fit$optimization and the warning.

# The kernel with another Gaussian width, keeping the rest (a bias's constant).
.with_width <- function(kernel, sigma) {
  kernel$sigma <- sigma
  kernel$sigma_rule <- NULL
  kernel
}

# A search over a width per input holds its inputs divided by its starting
# widths: the point h ("sigma[column]") is the unit-width kernel recording h's
# widths, on point sets (inputs, inducing inputs; NULL stays NULL) rescaled to h.
.per_input_point <- function(h, kernel, ...) {
  widths <- stats::setNames(unlist(h[grepl("^sigma\\[", names(h))], use.names = FALSE),
                            names(kernel$input_widths))
  ratio <- .input_widths(kernel) / widths
  divide <- function(m) if (!is.null(m)) sweep(m, 2L, ratio, "*", check.margin = FALSE)
  kernel <- .with_width(kernel, 1)
  kernel$input_widths <- widths
  c(list(kernel = kernel), lapply(list(...), divide))
}

# Search-scale ranges with log_sigma, for a width per input, split into one
# row per column, [w_c / 100, 100 w_c] around its start w_c.  A width at the
# upper end means the input does not matter: a legitimate answer (benign).
.per_input_ranges <- function(ranges, kernel) {
  if (is.null(kernel$input_widths) || !"log_sigma" %in% rownames(ranges)) return(ranges)
  widths <- .input_widths(kernel)
  split <- cbind(log(widths), log(widths / 100), log(100 * widths))
  rownames(split) <- sprintf("log_sigma[%s]", names(widths))
  rbind(ranges[rownames(ranges) != "log_sigma", , drop = FALSE], split)
}
.per_input_benign <- function(ranges) {
  sprintf("%s:upper", sub("^log_", "", grep("^log_sigma\\[", rownames(ranges), value = TRUE)))
}

# About `size` rows of n, evenly spaced (all n when n <= size): a subset that
# needs no random numbers and follows any order the rows have.
.evenly_spaced_rows <- function(n, size) {
  if (n <= size) seq_len(n) else unique(round(seq(1, n, length.out = size)))
}

# The rows gpc()'s default search on n observations sees: NULL (all of
# them) up to gpc_search_max_n, else search_subset_n evenly spaced ones.
.search_rows <- function(n) {
  if (n > .size_rule("gpc_search_max_n")) .evenly_spaced_rows(n, .size_rule("search_subset_n"))
}

# mfsvr()'s and svr()'s default beyond search_max_n: the whole default
# (kernel and offset weighed, C by the evidence, constant noise) on
# search_max_n evenly spaced rows, then the fit on every row at what it
# chose.  C scales the tube's likelihood of each observation, so the
# evidence's choice on rows spread over the data stands for all of them,
# and the fits either side of the rule are the default on the same number
# of rows.  `args` are the call's other arguments (no kernel where the call
# left it to the default's candidates).
.fit_on_search_rows <- function(fitter, x, y, args, call, what) {
  rows <- .evenly_spaced_rows(NROW(x), .size_rule("search_max_n"))
  some <- if (is.null(dim(x))) x[rows] else x[rows, , drop = FALSE]
  attr(some, "factor_column") <- attr(x, "factor_column")
  sub_args <- args
  sub_args[c("noise", "calibration_folds")] <- list("constant", 0)
  searched <- .quiet_refits(do.call(fitter, c(list(some, y[rows]), sub_args)))
  full_args <- args
  full_args[c("C", "kernel", "bias")] <- gpsvm_settings(searched)[c("C", "kernel", "bias")]
  fit <- .quiet_refits(do.call(fitter, c(list(x, y), full_args)))
  # (each fitter charged its steps in its own plan; the fit at the settings
  # the search chose is the search's)
  .charge_plan(searched$plan)
  .charge_plan(fit$plan)
  .charge("hyperparameters")
  searched$optimization$search_rows <- length(rows)
  fit <- .with_search_choices(fit, searched)
  fit$fit_time <- fit$fit_time + searched$fit_time
  fit$call <- call
  .with_plan(fit, what)
}

# A fit at the settings a search on other rows chose (`searched`, a fit of
# the same model) records that search and the choices it made, for its plan.
.with_search_choices <- function(fit, searched) {
  fit$optimization <- searched$optimization
  fit <- .with_choice_records(fit, searched)
  # (the kernel records the rule that made it, as the choice it came from says)
  for (field in c("sigma_rule", "candidate")) fit$kernel[[field]] <- searched$kernel[[field]]
  fit
}

# The records of the kernel, widths and offset `chosen` weighed, for the
# plan of a fit at its choices on other rows.
.with_choice_records <- function(fit, chosen) {
  keep <- intersect(c("kernel_choice", "width_choice", "bias_choice", "choice_rows"), names(chosen))
  fit[keep] <- chosen[keep]
  fit
}

# `optimize` as given to a model: TRUE (the `default` parameters), FALSE, or
# a subset of `choices`.  Returns the parameter names to search.
.optimize_which <- function(optimize, choices, default = choices) {
  if (isTRUE(optimize)) return(default)
  if (isFALSE(optimize)) return(character(0))
  if (!is.character(optimize) || length(optimize) == 0L || anyNA(optimize) ||
      !all(optimize %in% choices)) {
    .stop(sprintf("'optimize' must be TRUE, FALSE or a subset of %s",
                  paste0("\"", choices, "\"", collapse = ", ")))
  }
  unique(optimize)
}

# The searched parameters on the search scale (log_C, ...); natural(par) maps
# to the model's values.  `benign`: bounds ("epsilon:lower") that are an
# answer, not a warning; `notes`: words for a bound's warning; advice(record,
# fit): warnings about a converged answer (a slow rise to a limit, a
# degenerate fit).  `prior` (.hyperprior(), NULL: flat within the bounds)
# makes the search find the posterior mode, reporting evidence and prior apart.
.search_spec <- function(start, lower, upper, natural, natural_names, benign = character(0),
                         notes = list(), advice = function(record, fit) NULL, prior = NULL) {
  list(start = start, lower = pmin(lower, start), upper = pmax(upper, start),
       natural = function(par) stats::setNames(natural(par), natural_names),
       names = names(start), natural_names = natural_names, benign = benign, notes = notes,
       advice = advice, prior = prior)
}

# A usable point's objective: log evidence plus log prior (and gradients).
.with_objective <- function(point, par, prior) {
  if (!point$ok) return(point)
  point$log_prior <- if (is.null(prior)) 0 else prior$log_density(par)
  point$objective <- point$log_evidence + point$log_prior
  point$objective_gradient <- if (!is.null(point$gradient)) {
    if (is.null(prior)) point$gradient else point$gradient + prior$gradient(par)
  }
  point
}

# One evaluation of the evidence: a usable point has a converged solver and
# a finite evidence and gradient.  `fit` may be an error condition.
.search_point <- function(fit, log_evidence = NA_real_, gradient = NULL, converged = TRUE,
                          iterations = NA_integer_, solver = "the solver") {
  status <- if (inherits(fit, "error")) {
    paste("error:", conditionMessage(fit))
  } else if (!isTRUE(converged)) {
    sprintf("%s did not converge in %d iterations", solver, as.integer(iterations))
  } else if (!is.finite(log_evidence)) {
    "the evidence is not finite"
  } else if (!is.null(gradient) && !all(is.finite(gradient))) {
    "the gradient is not finite"
  } else {
    "ok"
  }
  ok <- status == "ok"
  list(ok = ok, fit = if (ok) fit, log_evidence = if (ok) log_evidence else NA_real_,
       gradient = if (ok) gradient, iterations = as.integer(iterations), status = status)
}

# Evaluations in order, with the best usable one and the last usable fit.
# at() evaluates each distinct point once (optim() asks for value and
# gradient in turn), unless `refresh` asks again at a finer accuracy.  A new
# point warm-starts from the nearer of the best and the last fit: a line
# search's overshoot is a poor start for its next trial back towards the best.
.search_state <- function(spec, evaluate) {
  state <- new.env(parent = emptyenv())
  state$rows <- list()
  state$at <- function(par, first = FALSE, accuracy = NULL, refresh = FALSE) {
    same <- function(a) max(abs(par - a)) <= 1e-10
    if (!refresh) {
      if (!is.null(state$last_par) && same(state$last_par)) return(state$last)
      for (row in rev(state$rows)) {
        if (same(row$par)) {
          if (!is.null(state$best) && identical(row$par, state$best$par)) return(state$best)
          return(c(row, list(ok = row$status == "ok")))
        }
      }
    }
    point <- .with_objective(evaluate(par, first, .nearer_warm_start(state, par), accuracy),
                             par, spec$prior)
    point$par <- par
    point$accuracy <- accuracy %||% NA_real_
    state$rows[[length(state$rows) + 1L]] <- point[c("par", "log_evidence", "gradient",
                                                      "log_prior", "objective",
                                                      "objective_gradient", "iterations",
                                                      "status", "accuracy")]
    if (point$ok) {
      state$warm <- point[c("fit", "par")]
      if (is.null(state$best) || point$objective > state$best$objective ||
          (refresh && same(state$best$par))) {
        state$best <- point
      }
    }
    state$last_par <- par
    state$last <- point
    point
  }
  state
}

.nearer_warm_start <- function(state, par) {
  last <- state$warm
  best <- state$best
  if (is.null(best) || is.null(last)) return(last$fit)
  distance <- function(point) max(abs(par - point$par))
  if (distance(best) < distance(last)) best$fit else last$fit
}

# The points tried, one row each: the model's values, log evidence (NA where
# failed), gradient on the search scale, accuracy asked, iterations, status.
.search_path <- function(state, spec) {
  rows <- state$rows
  values <- t(vapply(rows, function(r) spec$natural(r$par), numeric(length(spec$names))))
  path <- data.frame(matrix(values, nrow = length(rows),
                            dimnames = list(NULL, spec$natural_names)), check.names = FALSE)
  path$log_evidence <- vapply(rows, function(r) r$log_evidence, numeric(1))
  if (!is.null(spec$prior)) path$log_prior <- vapply(rows, function(r) r$log_prior %||% NA_real_, numeric(1))
  if (!all(vapply(rows, function(r) is.null(r$gradient), logical(1)))) {
    grad <- t(vapply(rows, function(r) {
      if (length(r$gradient) == length(spec$names)) r$gradient else rep(NA_real_, length(spec$names))
    }, numeric(length(spec$names))))
    grad <- matrix(grad, nrow = length(rows), dimnames = list(NULL, paste0("grad_", spec$names)))
    path <- cbind(path, as.data.frame(grad))
  }
  path$accuracy <- vapply(rows, function(r) r$accuracy %||% NA_real_, numeric(1))
  path$iterations <- vapply(rows, function(r) r$iterations, integer(1))
  path$status <- vapply(rows, function(r) r$status, character(1))
  path
}

.on_bounds <- function(par, spec) {
  close <- function(a, b) abs(a - b) <= 1e-8 * (1 + abs(b))
  list(lower = close(par, spec$lower), upper = close(par, spec$upper))
}

.search_at_bound <- function(par, spec) {
  on <- .on_bounds(par, spec)
  c(sprintf("%s:lower", spec$natural_names[on$lower]),
    sprintf("%s:upper", spec$natural_names[on$upper]))
}

# The gradient without the components that push against an active bound.
.projected_gradient <- function(par, gradient, spec) {
  on <- .on_bounds(par, spec)
  gradient[on$lower & gradient < 0] <- 0
  gradient[on$upper & gradient > 0] <- 0
  gradient
}

# What the gradient search's stopping rule compares with its tolerance.
.gradient_change <- function(par, gradient, spec, n) {
  max(abs(.projected_gradient(par, gradient, spec))) / n
}

# What the failed evaluations said, for the reason of a stop.
.search_failures <- function(state) {
  status <- vapply(state$rows, function(r) r$status, character(1))
  failed <- status[status != "ok"]
  if (length(failed) == 0L) return(NULL)
  sprintf("%d of %d evaluations failed (%s)", length(failed), length(status),
          paste(utils::head(unique(failed), 2L), collapse = "; "))
}

# The evidence a factor e either way along each parameter: flat when none
# differs by more than 1e-8 relatively; `better`, a neighbour to go on from.
.search_probe <- function(state, spec, centre, accuracy = NULL) {
  values <- numeric(0)
  best <- NULL
  for (k in seq_along(centre$par)) {
    for (step in c(-1, 1)) {
      par <- centre$par
      par[k] <- min(max(par[k] + step, spec$lower[k]), spec$upper[k])
      if (par[k] == centre$par[k]) next
      point <- state$at(par, accuracy = accuracy)
      if (!point$ok) next
      values <- c(values, point$objective)
      if (point$objective > (if (is.null(best)) centre$objective else best$objective)) {
        best <- point
      }
    }
  }
  flat <- length(values) > 0L &&
    all(abs(values - centre$objective) <= 1e-8 * (1 + abs(centre$objective)))
  list(flat = flat, better = best)
}

# The solver's tolerance for an evaluation.  The gradient's error is of the
# first order in it (the evidence is stationary in the EP sites), and the
# search needs the gradient only well within its own size: a tenth of the
# last one, between .search_accuracy_floor times the search's tolerance
# (where it decides convergence) and .search_accuracy_max.
.search_accuracy_max <- 1e-2
.search_accuracy_floor <- 0.1
.search_accuracy <- function(gradient_seen, finest) {
  if (is.null(gradient_seen) || !is.finite(gradient_seen)) return(.search_accuracy_max)
  min(max(0.1 * gradient_seen, finest), .search_accuracy_max)
}

# optim() from `from`; while its best point was evaluated coarser than
# `finest`, that point again at `finest` and, if not converged, optim() on
# from there (at most three times).
.run_to_accuracy <- function(run, from, state, spec, n, tol, finest, seen) {
  opt <- run(from)
  for (round in 1:3) {
    best <- state$best
    if (is.null(best) || !isTRUE(best$accuracy > finest)) break
    point <- seen(state$at(best$par, accuracy = finest, refresh = TRUE))
    if (!point$ok || .gradient_change(point$par, point$objective_gradient, spec, n) <= tol) break
    opt <- run(point$par)
  }
  opt
}

# L-BFGS-B over a box from spec$start (evaluated with first = TRUE: the
# solver's full budget).  Failed points count as a very low evidence, so the
# line search steps back.  Converged when the projected gradient per
# observation is within `tol`; any other stop is reported with its reason.
.gradient_search <- function(spec, evaluate, n, tol, max_iter) {
  state <- .search_state(spec, evaluate)
  finest <- .search_accuracy_floor * tol
  accuracy <- function() .search_accuracy(state$gradient_seen, finest)
  start <- state$at(spec$start, first = TRUE, accuracy = .search_accuracy_max)
  if (!start$ok) {
    return(.search_outcome(state, spec, start, n, tol, "L-BFGS-B",
                           reason = paste("the evidence could not be evaluated at the start:",
                                          start$status)))
  }
  wall <- abs(start$objective) + 1e6 * n  # far below any usable point
  # (the last usable point's gradient sets the next evaluation's accuracy)
  seen <- function(point) {
    if (point$ok) {
      state$gradient_seen <- .gradient_change(point$par, point$objective_gradient, spec, n)
    }
    point
  }
  seen(start)
  value <- function(par) {
    point <- seen(state$at(par, accuracy = accuracy()))
    if (point$ok) -point$objective else wall
  }
  gradient <- function(par) {
    point <- seen(state$at(par, accuracy = accuracy()))
    if (point$ok) -point$objective_gradient else rep(0, length(par))
  }
  # L-BFGS-B's first step is the scaled gradient: divided by the starting
  # gradient's length it moves by a factor e, whatever n and the data;
  # pgtol follows the scaling.
  scale <- sqrt(sum(.projected_gradient(spec$start, start$objective_gradient, spec)^2))
  if (!is.finite(scale) || scale <= 0) scale <- n
  run <- function(from) {
    stats::optim(from, value, gradient, method = "L-BFGS-B", lower = spec$lower,
                 upper = spec$upper,
                 control = list(fnscale = scale, pgtol = tol * n / scale, maxit = max_iter))
  }
  opt <- .run_to_accuracy(run, spec$start, state, spec, n, tol, finest, seen)
  reason <- NULL
  if (identical(unname(state$best$par), unname(spec$start))) {
    # no move: a maximum, a flat evidence, or a stationary point that is not one
    probe <- .search_probe(state, spec, state$best, finest)
    if (probe$flat) {
      reason <- sprintf("the evidence is flat around the start (it does not change when %s move by a factor e): the data do not determine them",
                        paste(spec$natural_names, collapse = ", "))
    } else if (!is.null(probe$better)) {
      opt <- .run_to_accuracy(run, probe$better$par, state, spec, n, tol, finest, seen)
    }
  }
  if (is.null(reason)) {
    reason <- c(if (opt$convergence == 1L) sprintf("the iteration limit (%d) was reached", max_iter),
                if (opt$convergence %in% c(51L, 52L))
                  sprintf("the line search could not raise the evidence further (%s)", opt$message),
                .search_failures(state))
    reason <- if (length(reason)) paste(reason, collapse = "; ") else "the search stopped with the gradient still large"
  }
  .search_outcome(state, spec, state$best, n, tol, "L-BFGS-B", reason = reason,
                  force_fail = grepl("^the evidence is flat", reason))
}

# One parameter without a gradient: a grid over the bounds, then golden
# sections around its best point to a bracket of `tol`.  These evidences
# have local maxima and small jumps (basis functions entering and leaving)
# that a grid sees and a local method would not.
.width_search <- function(spec, evaluate, grid, tol, max_iter) {
  state <- .search_state(spec, evaluate)
  start <- state$at(spec$start, first = TRUE)
  f <- function(p) {
    point <- state$at(stats::setNames(p, spec$names))
    if (point$ok) point$objective else -Inf
  }
  points <- seq(spec$lower, spec$upper, length.out = grid)
  values <- vapply(points, f, numeric(1))
  usable <- is.finite(values)
  if (sum(usable) < 2L) {
    return(.search_outcome(state, spec, start, 1, tol, "grid and golden section",
                           reason = paste("the evidence could be evaluated at fewer than two",
                                          "of the grid's points;", .search_failures(state)),
                           force_fail = TRUE))
  }
  top <- max(values[usable])
  if (all(abs(values[usable] - top) <= 1e-8 * (1 + abs(top)))) {
    return(.search_outcome(state, spec, state$best, 1, tol, "grid and golden section",
                           reason = sprintf("the evidence is flat: it is the same at every %s from %.3g to %.3g",
                                            .one_parameter_words(spec), exp(spec$lower), exp(spec$upper)),
                           force_fail = TRUE))
  }
  k <- which.max(values)
  lo <- points[max(k - 1L, 1L)]
  hi <- points[min(k + 1L, grid)]
  ratio <- (sqrt(5) - 1) / 2
  a <- hi - ratio * (hi - lo)
  b <- lo + ratio * (hi - lo)
  fa <- f(a)
  fb <- f(b)
  steps <- 0L
  while (hi - lo > tol && steps < max_iter) {
    steps <- steps + 1L
    if (fa >= fb) {
      hi <- b
      b <- a
      fb <- fa
      a <- hi - ratio * (hi - lo)
      fa <- f(a)
    } else {
      lo <- a
      a <- b
      fa <- fb
      b <- lo + ratio * (hi - lo)
      fb <- f(b)
    }
  }
  .search_outcome(state, spec, state$best, 1, tol, "grid and golden section",
                  change = hi - lo,
                  reason = c(if (hi - lo > tol) {
                    sprintf("the iteration limit (%d) was reached", max_iter)
                  }, .search_failures(state)))
}

# The one parameter of a width search in words ("width", or its name).
.one_parameter_words <- function(spec) {
  if (identical(spec$natural_names[1L], "sigma")) "width" else spec$natural_names[1L]
}

# The best point and the search's record.  `change`, the stopping measure
# (projected gradient, or the final bracket), converges within `tol`.
.search_outcome <- function(state, spec, best, n, tol, method, reason = NULL, change = NULL,
                            force_fail = FALSE) {
  evaluations <- length(state$rows)
  par <- best$par %||% spec$start
  if (is.null(change)) {
    g <- best$objective_gradient %||% best$gradient
    change <- if (best$ok && !is.null(g)) {
      .gradient_change(par, g, spec, n)
    } else NA_real_
  }
  converged <- best$ok && !force_fail && is.finite(change) && change <= tol
  reason <- if (converged) NA_character_ else
    paste(reason %||% "the search stopped early", collapse = "; ")
  stopped <- if (!converged) reason else if (!is.null(best$gradient)) {
    sprintf("no gradient component exceeds %g per observation (largest %.2g)", tol, change)
  } else {
    sprintf("the bracket around the best %s is %.2g wide in log %s (tolerance %g)",
            .one_parameter_words(spec), change, spec$natural_names[1L], tol)
  }
  record <- list(
    method = method, start = spec$natural(spec$start), estimate = spec$natural(par),
    lower = spec$natural(spec$lower), upper = spec$natural(spec$upper),
    log_evidence = best$log_evidence,
    gradient = if (!is.null(best$gradient)) stats::setNames(best$gradient, spec$names),
    hyperprior = spec$prior$table,
    log_prior = if (!is.null(spec$prior)) best$log_prior %||% NA_real_,
    at_bound = if (best$ok) .search_at_bound(par, spec) else character(0),
    evaluations = evaluations, path = .search_path(state, spec), stopped = stopped,
    convergence = .convergence(converged, evaluations, change, tol, reason))
  list(best = best, record = record)
}

# The final fit with the search's record (and its log evidence), and the warning.
.finish_search <- function(fit, outcome, spec, what, log_evidence = fit$log_evidence) {
  record <- outcome$record
  if (!is.null(log_evidence)) record$log_evidence <- log_evidence
  fit$optimization <- record
  .warn_search(what, record, spec, fit)
  fit
}

# The warnings of every evidence search: not converged, stopped at a bound
# that is not an answer (with the model's note), the model's advice.
.warn_search <- function(what, record, spec, fit = NULL) {
  .warn_not_converged(paste(what, "the evidence search"), record$convergence,
                      "fit$optimization$path lists the points tried")
  bad <- setdiff(record$at_bound, spec$benign)
  for (b in bad) {
    parts <- strsplit(b, ":", fixed = TRUE)[[1]]
    note <- spec$notes[[b]]
    warning(sprintf("%s the evidence search stopped at the %s bound of its range for %s (%s = %.4g)%s",
                    what, parts[2], parts[1], parts[1], record$estimate[[parts[1]]],
                    if (!is.null(note)) paste0(": ", note) else ""), call. = FALSE)
  }
  for (advice in spec$advice(record, fit)) {
    warning(paste(what, "the evidence search", advice), call. = FALSE)
  }
  invisible(record)
}

# print()'s account of the evidence searches (one per class with K >= 3):
# one line when there is one search or all converged, else one per search.
.search_lines <- function(searches) {
  fitc <- function(record) {
    m <- record$search_inducing
    c(if (!is.null(record$search_rows)) sprintf("on %d evenly spaced rows", record$search_rows),
      if (!is.null(m)) sprintf("FITC evidence on %d inducing inputs", m))
  }
  lead <- .searched_names(searches[[1L]])
  # (the joint multi-class search records its criterion, a leave-one-out score)
  criterion <- searches[[1L]]$criterion
  by <- if (is.null(criterion)) "by evidence maximisation" else
    paste("by maximising the", criterion)
  converged <- vapply(searches, function(s) isTRUE(s$convergence$converged), logical(1))
  if (length(searches) > 1L && all(converged)) {
    steps <- range(vapply(searches, function(s) as.numeric(s$convergence$iterations), numeric(1)))
    about <- paste(c("one search per class", fitc(searches[[1L]])), collapse = "; ")
    bounded <- sum(vapply(searches, function(s) length(s$at_bound) > 0L, logical(1)))
    return(sprintf("%s %s (%s): all %d converged, after %s iterations%s",
                   lead, by, about, length(searches),
                   if (steps[1] == steps[2]) steps[1] else paste(steps, collapse = " to "),
                   if (bounded > 0L) sprintf("; %d at an end of a range (fit$optimization)", bounded)
                   else ""))
  }
  vapply(seq_along(searches), function(k) {
    about <- c(if (length(searches) > 1L) sprintf("%s vs rest", names(searches)[k]),
               fitc(searches[[k]]))
    sprintf("%s %s%s: %s%s", lead, by,
            if (length(about) > 0L) sprintf(" (%s)", paste(about, collapse = "; ")) else "",
            .format_convergence(searches[[k]]$convergence), .bound_words(searches[[k]]))
  }, character(1))
}

# A search's estimates at an end of their range, for print(): even a benign
# bound (a classifier's noise at 0) is not an estimate, and the reader should know.
.bound_words <- function(record) {
  phrases <- .bound_phrases(record)
  if (!length(phrases)) "" else paste0("; ", paste(phrases, collapse = ", "))
}

# "C at the upper end of its range", per estimate at a bound.
.bound_phrases <- function(record) {
  parts <- strsplit(record$at_bound %||% character(0), ":", fixed = TRUE)
  vapply(parts, function(p) sprintf("%s at the %s end of its range", p[1L], p[2L]), character(1))
}

.searched_names <- function(record) .parameter_words(names(record$estimate))

# Parameter names in words: "sigma and noise".
.parameter_words <- function(what) {
  per_input <- grepl("^sigma\\[", what)
  if (any(per_input)) {  # a width per input, in one phrase
    what <- c(what[!per_input], sprintf("a width per input (%d)", sum(per_input)))
  }
  if (length(what) <= 2L) paste(what, collapse = " and ") else
    paste0(paste(utils::head(what, -1L), collapse = ", "), " and ", utils::tail(what, 1L))
}

# A hyperprior on the search scale: independent normals (`terms`: term,
# mean, sd) on linear combinations `coef` (a row per term, a column per
# named parameter; parameters in no term are flat within their bounds).
# `table` is what fit$optimization keeps.
.hyperprior <- function(terms, coef) {
  stopifnot(nrow(terms) == nrow(coef), !is.null(colnames(coef)))
  value <- function(par) drop(coef %*% par[colnames(coef)])
  list(log_density = function(par) sum(stats::dnorm(value(par), terms$mean, terms$sd, log = TRUE)),
       gradient = function(par) {
         g <- stats::setNames(numeric(length(par)), names(par))
         g[colnames(coef)] <- drop(crossprod(coef, -(value(par) - terms$mean) / terms$sd^2))
         g
       },
       table = structure(terms, coef = coef))
}
