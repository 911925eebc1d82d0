# A validator per fitted class, run before any method computes from a fit:
# the length, type, range and shape of every field a computation reads, so
# that an object edited by hand is a clear error naming the field, not a
# wrong number.  Every check is cheap (never a factorisation).
# .validate_fit() dispatches on the class (.validate_model()); each model's
# method, in its own file, lists its fields and adds its layer's shared ones
# (.validate_regression(), .validate_classifier(), .ep_checks()).

# A fit records the names of the fields its fitter made, so that one
# removed is noticed where a fit of another kind lacks it; fields added
# later (caret's) are left alone.
.seal <- function(fit) {
  fit$fields <- setdiff(names(fit), "fields")
  fit
}

.check_sealed <- function(object, prefix = "fit$") {
  fields <- object$fields
  if (!is.character(fields) || anyNA(fields)) {
    .stop(sprintf("%sfields must name the fit's fields: was the object edited?", prefix))
  }
  absent <- setdiff(fields, names(object))
  if (length(absent) > 0L) {
    .stop(sprintf("%s%s is missing: was the object edited?", prefix, absent[1L]))
  }
}

.validate_model.default <- function(object) {
  .stop("the object is not a gpsvm fit: refit it with gpsvm's fitter")
}

# Each check is a function of a field's value that returns NULL when it is
# right, else what is wrong, in words that follow the field's name.

# Numbers: `n` of them (NULL: any count, at least one), within [lower,
# upper] (open below with `open`), finite unless `inf`, NA only with `na`.
# Vectors are doubles, as the C++ code maps them.
.numbers <- function(n = NULL, lower = -Inf, upper = Inf, open = FALSE, inf = FALSE, na = FALSE,
                     per = "training rows") {
  force(n)
  function(v) {
    if (is.null(v)) return("is missing")
    single <- identical(n, 1L)
    if (!is.numeric(v) || is.object(v) || !is.null(dim(v)) || (!single && !is.double(v))) {
      return(sprintf("must be a numeric vector, not %s", .type_of(v)))
    }
    if (!is.null(n) && length(v) != n) {
      return(if (n == 1L && per == "") sprintf("must be one number, not %d", length(v)) else
        sprintf("has %d elements; the fit has %d %s", length(v), n, per))
    }
    if (is.null(n) && length(v) == 0L) return("is empty")
    .value_problem(v, lower, upper, open, inf, na)
  }
}

# One number.
.number <- function(lower = -Inf, upper = Inf, open = FALSE, inf = FALSE, na = FALSE) {
  .numbers(1L, lower, upper, open, inf, na, per = "")
}

# What is wrong with a numeric vector's or matrix's values, or NULL, in two
# passes and no copy (an n x n factor is read, not duplicated).
.value_problem <- function(v, lower = -Inf, upper = Inf, open = FALSE, inf = FALSE, na = FALSE) {
  if (!na && anyNA(v)) return("contains missing values")
  if (length(v) == 0L || (na && all(is.na(v)))) return(NULL)
  r <- c(min(v, na.rm = TRUE), max(v, na.rm = TRUE))  # (range() would copy v)
  if (!inf && any(is.infinite(r))) return("contains infinite values")
  below <- if (open) r[1L] <= lower else r[1L] < lower
  if (below || r[2L] > upper) {
    return(sprintf("has values outside %s%s, %s]", if (open) "(" else "[", format(lower),
                   format(upper)))
  }
  NULL
}

.type_of <- function(v) if (is.null(dim(v))) class(v)[1L] else sprintf("a %s", class(v)[1L])

# Whole numbers (row indices, counts): `n` of them (NULL: any count), in
# [lower, upper], distinct when `distinct`.
.indices <- function(n = NULL, lower = 1L, upper = .Machine$integer.max, distinct = TRUE) {
  function(v) {
    if (is.null(v)) return("is missing")
    if (!is.numeric(v) || !is.null(dim(v))) {
      return(sprintf("must be whole numbers, not %s", .type_of(v)))
    }
    if (!is.null(n) && length(v) != n) return(sprintf("has %d elements, not %d", length(v), n))
    problem <- .value_problem(v, lower, upper)
    if (!is.null(problem)) return(problem)
    if (any(v != round(v))) return("must hold whole numbers")
    if (distinct && anyDuplicated(v)) return("repeats a value")
    NULL
  }
}

.flag_field <- function(v) {
  if (!is.logical(v) || length(v) != 1L || is.na(v)) "must be TRUE or FALSE"
}

# One string, one of `choices` when given.
.string <- function(choices = NULL, na = FALSE) {
  function(v) {
    if (!is.character(v) || length(v) != 1L || (!na && is.na(v))) return("must be one string")
    if (!is.null(choices) && !v %in% choices) {
      return(sprintf("must be one of %s", paste0("\"", choices, "\"", collapse = ", ")))
    }
    NULL
  }
}

# `n` strings, each one of `choices`.
.strings <- function(n, choices) {
  function(v) {
    if (!is.character(v) || length(v) != n || anyNA(v)) return(sprintf("must be %d string(s)", n))
    if (!all(v %in% choices)) {
      return(sprintf("must each be one of %s", paste0("\"", choices, "\"", collapse = ", ")))
    }
    NULL
  }
}

# A numeric matrix of `nrow` x `ncol` (NULL: any), its values checked unless
# not `values`.
.numeric_matrix <- function(nrow = NULL, ncol = NULL, inf = FALSE, values = TRUE) {
  function(v) {
    if (is.null(v)) return("is missing")
    if (!is.matrix(v) || !is.double(v)) {
      return(sprintf("must be a numeric matrix, not %s", .type_of(v)))
    }
    if ((!is.null(nrow) && nrow(v) != nrow) || (!is.null(ncol) && ncol(v) != ncol)) {
      return(sprintf("is %d x %d; the fit needs %s x %s", nrow(v), ncol(v), nrow %||% nrow(v),
                     ncol %||% ncol(v)))
    }
    if (values) .value_problem(v, inf = inf)
  }
}

# The r x r lower triangular factor of a Cholesky decomposition (its
# values checked in one pass, in C++).
.lower_factor <- function(r) {
  shape <- .numeric_matrix(r, r, values = FALSE)
  function(v) {
    shape(v) %||% if (!cpp_is_lower_factor(v)) {
      "is not a lower triangular factor with a positive diagonal and finite entries"
    }
  }
}

# -1/+1 labels, one per training row.
.sign_labels <- function(n) {
  numbers <- .numbers(n)
  function(v) numbers(v) %||% if (!all(v %in% c(-1, 1))) "must hold only -1 and +1"
}

# A factor of `n` values with these levels.
.factor_of <- function(n, levels) {
  function(v) {
    if (!is.factor(v)) return(sprintf("must be a factor, not %s", .type_of(v)))
    if (length(v) != n) {
      return(sprintf("has %d elements; the fit has %d training rows", length(v), n))
    }
    if (!identical(levels(v), levels)) {
      return(sprintf("has levels %s, not %s", paste(levels(v), collapse = ", "),
                     paste(levels, collapse = ", ")))
    }
    if (anyNA(v)) return("contains missing values")
    NULL
  }
}

.inherits_field <- function(class, what) {
  function(v) if (!inherits(v, class)) sprintf("must be %s", what)
}

# NULL or what `check` accepts (for any other check, .check_fields() calls
# NULL missing).
.optional <- function(check) {
  structure(function(v) if (!is.null(v)) check(v), optional = TRUE)
}

# A field this model does not have: NULL, or absent.
.absent <- function(why) structure(function(v) if (!is.null(v)) why, optional = TRUE)

# A control list from `constructor` with all its settings, each valid.
.control_field <- function(constructor) .made_by(constructor, "a control list")

# An object of class gpsvm_<constructor> that `constructor`, given its own
# elements, accepts again.
.made_by <- function(constructor, what, class = paste0("gpsvm_", constructor)) {
  function(v) {
    if (!inherits(v, class) || !is.list(v)) {
      return(sprintf("must be %s from %s()", what, constructor))
    }
    settings <- names(formals(get(constructor, mode = "function")))
    absent <- setdiff(settings, names(v))
    if (length(absent) > 0L) return(sprintf("lacks %s", .quote_names(absent)))
    problem <- tryCatch({
      suppressWarnings(do.call(constructor, unclass(v)[settings]))
      NULL
    }, error = function(e) conditionMessage(e))
    if (!is.null(problem)) sprintf("is not a valid %s() object (%s)", constructor, problem)
  }
}

# A convergence record as .convergence() makes it (a search's may lack a
# change, where the evidence could not be evaluated).
.convergence_field <- function(v, change_na = FALSE) {
  fields <- c("converged", "iterations", "change", "tol", "reason")
  if (!is.list(v) || !identical(names(v), fields)) {
    return("must be a convergence record (converged, iterations, change, tol, reason)")
  }
  .nested(v, list(converged = .flag_field, iterations = .indices(1L, lower = 0L),
                  change = .number(inf = TRUE, na = change_na), tol = .number(lower = 0),
                  reason = .string(na = TRUE)))
}

# A kernel whose parameters the C++ kernel accepts, on p input columns.
.kernel_field <- function(p) {
  function(k) {
    if (!inherits(k, "gpsvm_kernel") || !is.list(k)) return("must be a kernel object")
    problem <- .string(c("rbf", "matern", "polynomial", "linear"))(k$type)
    if (!is.null(problem)) return(paste0("$type ", problem))
    checks <- if (.has_width(k)) {
      list(sigma = .number(lower = 0, open = TRUE),
           input_widths = .optional(.numbers(p, lower = 0, open = TRUE, per = "input columns")),
           nu = if (k$type == "matern") function(v) {
             if (!(is.numeric(v) && length(v) == 1L && isTRUE(v %in% c(0.5, 1.5, 2.5)))) {
               "must be 0.5, 1.5 or 2.5"
             }
           } else .optional(function(v) "belongs to the Matern kernel alone"))
    } else {
      list(degree = .indices(1L, upper = .max_degree), scale = .number(lower = 0),
           offset = .number(lower = 0))
    }
    checks$constant <- .optional(.number(lower = 0))
    checks$sigma_rule <- .optional(.string(c("data", "inputs")))
    checks$candidate <- .optional(.string("linear"))
    for (name in names(checks)) {
      problem <- checks[[name]](k[[name]])
      if (!is.null(problem)) return(sprintf("$%s %s", name, problem))
    }
    NULL
  }
}

# NULL (scale = FALSE) or an input scaling of p columns.
.scaling_field <- function(p) {
  .optional(function(s) {
    if (!is.list(s)) return("must be a list with center and scale")
    .nested(s, list(center = .numbers(p, per = "input columns"),
                    scale = .numbers(p, lower = 0, open = TRUE, per = "input columns"),
                    constant = function(v) {
                      if (!is.character(v) || anyNA(v) || anyDuplicated(v) || length(v) > p) {
                        "must name distinct input columns"
                      }
                    },
                    standardised = .optional(.flag_field),
                    input_widths = .optional(.numbers(p, lower = 0, open = TRUE,
                                                      per = "input columns"))))
  })
}

# The first problem among the fields of a list: list(name, problem), or NULL.
.first_problem <- function(value, checks) {
  for (name in names(checks)) {
    check <- checks[[name]]
    element <- value[[name]]
    problem <- if (is.null(element) && !isTRUE(attr(check, "optional"))) "is missing" else
      check(element)
    if (!is.null(problem)) return(list(name = name, problem = problem))
  }
  NULL
}

# The first problem among the fields of a list, as "$field problem".
.nested <- function(value, checks) {
  found <- .first_problem(value, checks)
  if (!is.null(found)) sprintf("$%s %s", found$name, found$problem)
}

# The record of an evidence search (see .search_outcome() and svr()).
.search_record_field <- .optional(function(r) {
  if (!is.list(r)) return("must be the record of an evidence search")
  estimate <- r$estimate
  problem <- .nested(r, list(
    method = .string(), estimate = .numbers(),
    start = .numbers(length(estimate), per = "estimates"),
    lower = .optional(.numbers(length(estimate), per = "estimates")),
    upper = .optional(.numbers(length(estimate), per = "estimates")),
    log_evidence = .number(na = TRUE), evaluations = .indices(1L, lower = 0L),
    at_bound = function(v) if (!is.character(v)) "must be a character vector",
    path = .inherits_field("data.frame", "a data frame"), stopped = .string(),
    convergence = function(v) .convergence_field(v, change_na = TRUE),
    search_inducing = .optional(.indices(1L))))
  problem %||% if (is.null(names(estimate))) "$estimate must be named"
})

# The checks (a named list) on the fields of `object`, in order; the first
# problem is an error naming the field (`prefix`: "fit$" or "fit$models$b$").
.check_fields <- function(object, checks, prefix = "fit$") {
  found <- .first_problem(object, checks)
  if (!is.null(found)) {
    # a problem of a list's element reads "$element ...", after the name
    .stop(sprintf("%s%s%s%s: was the object edited?", prefix, found$name,
                  if (startsWith(found$problem, "$")) "" else " ", found$problem))
  }
  invisible(object)
}

# The training inputs first: their rows and columns set the other sizes.
.input_checks <- function(object, prefix = "fit$") {
  .check_sealed(object, prefix)
  # a fit to data in partitions keeps no inputs (gpsvm_partitions())
  if (is.list(object$partitions) && is.matrix(object$x) && nrow(object$x) == 0L) {
    n <- NROW(object$fitted.values)
    rows <- object$partitions$rows
    if (!is.numeric(rows) || anyNA(rows) || sum(rows) != n) {
      .stop(sprintf("%spartitions$rows must count the fit's %d rows: was the object edited?",
                    prefix, n))
    }
    return(list(n = n, p = ncol(object$x), kept = FALSE))
  }
  .check_fields(object, list(x = function(v) {
    .numeric_matrix()(v) %||% if (nrow(v) < 1L || ncol(v) < 1L) "has no rows or no columns"
  }), prefix)
  list(n = nrow(object$x), p = ncol(object$x))
}

# What every fit has besides its model, and the formula interface's parts.
.common_checks <- function(n, p, object) {
  list(
    kernel = .kernel_field(p), scaling = .scaling_field(p),
    convergence = .convergence_field, optimization = .search_record_field,
    fit_time = .number(lower = 0), plan = function(v) .plan_check(v, object),
    call = .optional(function(v) if (!is.call(v)) "must be a call"),
    terms = .optional(.inherits_field("terms", "the terms of a formula")),
    xlevels = .optional(function(v) {
      ok <- is.list(v) && all(vapply(v, function(l) is.character(l) && !anyNA(l), logical(1)))
      if (!ok || (length(v) > 0L && is.null(names(v)))) "must be a named list of factor levels"
    }),
    contrasts = .optional(function(v) {
      ok <- is.list(v) && !is.null(names(v)) && all(vapply(v, function(k) {
        (is.character(k) && length(k) == 1L && !is.na(k)) || (is.numeric(k) && is.matrix(k))
      }, logical(1)))
      if (!ok) "must be a named list of contrasts (function names or matrices)"
    }),
    na.action = .optional(function(v) {
      .indices(NULL)(v) %||% if (!inherits(v, c("omit", "exclude"))) "must come from na.action"
    }),
    variables = .optional(function(v) {
      if (!is.data.frame(v) || nrow(v) != n) sprintf("must be a data frame of %d rows", n)
    }))
}

# The regression fields every model has; model(n, p) the model's own checks.
.validate_regression <- function(object, model) {
  size <- .input_checks(object)
  n <- size$n
  .check_fields(object, c(
    list(y = .numbers(n), fitted.values = .numbers(n), residuals = .numbers(n),
         response_scaling = .optional(function(s) {
           if (!is.list(s)) return("must be a list with center and scale")
           .nested(s, list(center = .number(), scale = .number(lower = 0, open = TRUE)))
         })),
    model(n, size$p), .common_checks(n, size$p, object),
    list(bias_variance = .optional(.number(lower = 0)),
         interval_calibration = .calibration_check(n),
         calibration_declined = .calibration_declined_check(n),
         bias_choice = .optional(function(d) {
           if (!is.data.frame(d) || !identical(names(d), c("bias", "log_evidence", "fitted")) ||
               nrow(d) != 2L || !is.numeric(d$log_evidence) || !is.logical(d$fitted) ||
               !any(d$bias %in% object$bias_variance)) {
             "must be the two biases weighed and their log evidences"
           }
         }),
         choice_rows = .optional(.number(lower = 1, upper = n)),
         width_choice = .optional(function(d) {
           if (!is.data.frame(d) ||
               !identical(names(d), c("widths", "log_evidence", "parameters", "margin")) ||
               !is.numeric(d$margin) || !isTRUE(all(d$margin >= .per_input_margin)) ||
               !isTRUE(d$widths[1L] %in% c("one", "none")) ||
               !identical(d$widths[2L], "per input") || nrow(d) != 2L ||
               !is.numeric(d$log_evidence) || is.na(d$log_evidence[1L]) ||
               !identical(d$parameters[1L], 1L + (d$widths[1L] == "one")) ||
               !isTRUE(d$parameters[2L] >= size$p)) {
             return(paste("must be the log evidences of one width (or none) and of a width per",
                          "input, the hyperparameters each fitted, and the margin"))
           }
           # ("none": the search started from the linear kernel that won)
           if ((d$widths[1L] == "none") != isTRUE(.linear_kept(object$kernel_choice))) {
             return("must weigh the linear kernel (\"none\") exactly where it won the kernel choice")
           }
           if (.per_input_wins(d) != !is.null(object$kernel$input_widths)) {
             "must have chosen a width per input exactly where its evidence won by the margin"
           }
         }),
         kernel_choice = .optional(function(d) {
           # the rows .kernel_candidates() gives from the record's sigest width
           weighed <- function(d) {
             linear <- identical(d$rule[1L], "linear")
             sigest <- d$sigma[1L + linear]
             if (!is.numeric(sigest) || !isTRUE(sigest > 0 && is.finite(sigest))) return(NULL)
             kernel <- list(type = "rbf", sigma = sigest, sigma_rule = "data")
             .candidate_rows(.kernel_candidates(kernel, matrix(0, 0L, size$p), TRUE, linear,
                                                widths = !inherits(object, "gpsvm_rvm")))
           }
           # and after them .fit_best_kernel()'s Matern kernels (a tube model's)
           gaussian_rows <- function(d) {
             d[!startsWith(as.character(d$rule), "Matern"), , drop = FALSE]
           }
           matern_ok <- function(d) {
             m <- d[startsWith(as.character(d$rule), "Matern"), , drop = FALSE]
             g <- gaussian_rows(d)
             if (!is.numeric(g$log_evidence) || !is.numeric(m$log_evidence)) return(FALSE)
             best <- which.max(replace(g$log_evidence, is.na(g$log_evidence) | g$rule == "linear",
                                       -Inf))
             expected <- !inherits(object, "gpsvm_rvm") && identical(g$rule[1L], "linear")
             if (!expected) return(nrow(m) == 0L)
             width <- g$sigma[best]
             rules <- paste0(c("Matern 5/2, ", "Matern 3/2, ")[seq_len(nrow(m))], g$rule[best])
             gained <- isTRUE(m$log_evidence[1L] > g$log_evidence[best])
             nrow(m) == 1L + gained && identical(as.character(m$rule), rules) &&
               isTRUE(all(abs(m$sigma - .matern_width_factor[seq_len(nrow(m))] * width) <=
                            1e-12 * m$sigma))
           }
           if (!is.data.frame(d) || !identical(names(d), c("rule", "sigma", "log_evidence")) ||
               !nrow(d) %in% 2:5 || !identical(gaussian_rows(d)$rule, weighed(d)$rule) ||
               !identical(gaussian_rows(d)$sigma, weighed(d)$sigma) || !matern_ok(d) ||
               !is.numeric(d$log_evidence)) {
             return("must be the kernels weighed (their rules and widths) and their log evidences")
           }
           # the kernel is one of them and names its rule; a search of the
           # width starts at the one weighed
           chosen <- .chosen_candidate(object)
           width <- .weighed_width(object)
           # (widths per input come from a search, maybe on other rows)
           searched <- any(startsWith(as.character(names(object$optimization$estimate)), "sigma")) ||
             !is.null(object$kernel$input_widths)
           if (is.na(chosen) || (d$rule[chosen] != "linear" && !searched &&
                                 !isTRUE(abs(d$sigma[chosen] - width) <= 1e-12 * width))) {
             return("must have the fit's kernel among the kernels weighed")
           }
           if (d$rule[chosen] == "linear") {
             if (!identical(object$kernel$candidate, "linear")) {
               return("chose the linear kernel, whose candidate should be \"linear\"")
             }
             return(NULL)
           }
           rule <- .rule_kernel(d$rule[chosen])$sigma_rule
           if (!searched && !identical(object$kernel$sigma_rule, rule)) {
             sprintf("chose the kernel whose sigma_rule should be \"%s\"", rule)
           }
         }))))
  if (!is.null(object$bias_variance)) .bias_matches_kernel(object)
  .check_reproduces_fitted(object)
  invisible(object)
}

# The fields together: each can be valid and the whole wrong (a kernel
# replaced by hand), so the kernel, weights and inputs must give the fitted
# values at three rows, to a millionth of the response's spread (the fit's
# rounding is far below that, an edit far above).
.check_reproduces_fitted <- function(object) {
  if (NROW(object$x) == 0L) return(invisible())  # (data in partitions: no inputs kept)
  rows <- .evenly_spaced_rows(nrow(object$x), 3L)
  mean <- .latent_moments(object, object$x[rows, , drop = FALSE], 0L, 1L, FALSE)$mean
  s <- object$response_scaling %||% list(center = 0, scale = 1)
  predicted <- s$center + s$scale * mean
  fitted <- unname(object$fitted.values[rows])
  y <- object$y
  tol <- 1e-6 * max(abs(y - mean(y))) + 64 * .Machine$double.eps * max(abs(y), abs(fitted))
  gap <- abs(predicted - fitted)
  if (!all(gap <= tol)) {
    worst <- which.max(ifelse(is.na(gap), Inf, gap))
    .stop(sprintf(paste("fit$kernel, the fit's weights and fit$x give %s at training row %d, where",
                        "fit$fitted.values has %s: was the object edited? (refit it instead)"),
                  format(predicted[worst], digits = 6), rows[worst],
                  format(fitted[worst], digits = 6)))
  }
}

# fit$bias_variance is the constant the fit's kernel carries; returns it.
.bias_matches_kernel <- function(object) {
  constant <- object$kernel$constant %||% 0
  if (!isTRUE(all.equal(constant, object$bias_variance))) {
    .stop(sprintf(paste("fit$bias_variance is %s but the kernel's constant is %s: was the object",
                        "edited?"), format(object$bias_variance), format(constant)))
  }
  constant
}

# The EP engine's fields (mfsvr(), the TAP classifier): sites, cavities, the
# evidence and the posterior's factor, dense (n x n) or on m inducing inputs.
.ep_checks <- function(object, n, p) {
  inducing <- object$inducing
  m <- if (is.matrix(inducing)) nrow(inducing)
  list(site_precision = .numbers(n, lower = 0), site_nu = .numbers(n),
       cavity_mean = .numbers(n), cavity_var = .numbers(n, lower = 0, inf = TRUE),
       log_evidence = .number(),
       inducing = .optional(.numeric_matrix(ncol = p)),
       inducing_weights = if (!is.null(m)) .numbers(m, per = "inducing inputs") else
         .optional(.numbers()),
       inducing_chol = if (!is.null(m)) .lower_factor(m) else .optional(.numeric_matrix()),
       inducing_held_rows = .optional(.indices(1L, lower = 0L, upper = n - 1L)),
       chol = .lower_factor(m %||% n))
}

# A classifier's own fields, then its binary models': the fit itself for
# two classes, else each of `models`, on the same inputs.
.validate_classifier <- function(object) {
  size <- .input_checks(object)
  n <- size$n
  .check_fields(object, list(levels = function(v) {
    if (!is.character(v) || length(v) < 2L || anyNA(v) || anyDuplicated(v)) {
      "must be two or more distinct class names"
    }
  }))
  K <- length(object$levels)
  .check_fields(object, c(list(
    classes = .factor_of(n, object$levels),
    bias_variance = .number(lower = 0),
    response_levels = .optional(function(v) {
      if (!is.character(v) || !all(object$levels %in% v)) "must hold every level of fit$levels"
    }),
    models = if (K > 2L) function(v) {
      if (!is.list(v) || !identical(names(v), object$levels)) {
        sprintf("must be a list of %d models named by the levels", K)
      }
    } else .absent("must be NULL for two classes"),
    fitted.values = if (K > 2L) .numeric_matrix(n, K) else .numbers(n)),
    .common_checks(n, size$p, object)))
  constant <- .bias_matches_kernel(object)
  kept <- size$kept %||% TRUE
  if (K == 2L) return(.validate_binary(object, n, size$p, "fit$", class(object), constant, kept))
  # the settings the models share, as print() shows them
  .check_fields(object, .binary_checks(object, n, size$p)[.setting_names(object)])
  for (level in object$levels) {
    .validate_binary(object$models[[level]], n, size$p, sprintf("fit$models$%s$", level),
                     class(object), constant, kept)
  }
  .check_fields(object, list(joint_pool = .optional(function(v) .joint_pool_problem(v, object))))
  invisible(object)
}

# A pooled one-vs-rest fit's joint model (gpc()): one of the same classes on
# the same inputs, and its share of the probabilities strictly in (0, 1).
.joint_pool_problem <- function(v, object) {
  if (!is.list(v) || !setequal(names(v), c("fit", "weight"))) {
    return("must be a list of fit and weight")
  }
  weight <- v$weight
  if (!is.numeric(weight) || length(weight) != 1L || is.na(weight) || weight <= 0 || weight >= 1) {
    return("$weight must be one number strictly between 0 and 1")
  }
  if (!inherits(v$fit, "gpsvm_gpc_joint") || !identical(v$fit$levels, object$levels) ||
      !identical(v$fit$x, object$x)) {
    return("$fit must be a joint gpc() model of the same classes and inputs")
  }
  .validate_model(v$fit)
  NULL
}

.validate_model.gpsvm_classifier <- function(object) .validate_classifier(object)

# One binary model (of the fit's `class`) on the n x p inputs, with the
# fit's bias as its kernel's constant; `kept`: the fit keeps its inputs.
.validate_binary <- function(model, n, p, prefix, class, constant, kept = TRUE) {
  if (!is.list(model) || !identical(class(model), class)) {
    .stop(sprintf("%s is not a model of this fit's class: was the object edited?",
                  sub("\\$$", "", prefix)))
  }
  .check_sealed(model, prefix)
  .check_fields(model, list(x = .numeric_matrix(if (kept) n else 0L, p), kernel = function(k) {
    .kernel_field(p)(k) %||% if (!identical(k$constant %||% 0, constant)) {
      "has another bias (constant) than the fit"
    }
  }), prefix)
  .check_fields(model, c(list(y = .sign_labels(n), alpha = .numbers(n),
                              fitted.values = .numbers(n), convergence = .convergence_field,
                              optimization = .search_record_field),
                         .binary_checks(model, n, p)), prefix)
  # its kernel and weights give its decision values (see .check_reproduces_fitted())
  if (!kept) return(invisible(model))
  rows <- .evenly_spaced_rows(n, 3L)
  link <- .classif_link(model, model$x[rows, , drop = FALSE])
  fitted <- unname(model$fitted.values[rows])
  gap <- abs(link - fitted)
  if (!all(gap <= 1e-6 * max(abs(model$fitted.values), 1e-300) + 1e-12)) {
    .stop(sprintf(paste("%skernel, the weights and %sx give the decision value %s at training row",
                        "%d, where %sfitted.values has %s: was the object edited? (refit it",
                        "instead)"), prefix, prefix, format(link[which.max(gap)], digits = 6),
                  rows[which.max(gap)], prefix, format(fitted[which.max(gap)], digits = 6)))
  }
  invisible(model)
}

# A binary model's own fields, by its method (gpc.R and svc.R).
