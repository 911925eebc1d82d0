# Input checks shared by every model.  Each error names the argument and what
# was expected, and is raised without the internal call.

.stop <- function(...) stop(..., call. = FALSE)

# A numeric input matrix from a vector, matrix or data frame of numbers;
# new data to predict at may have missing values (allow_na) or no rows
# (allow_empty, as predict.lm() allows), never infinite values.
.as_input_matrix <- function(x, arg = "x", allow_na = FALSE, allow_empty = FALSE) {
  if (is.data.frame(x)) {
    ok <- vapply(x, function(col) is.numeric(col) && !is.object(col), logical(1))
    if (!all(ok)) {
      .stop(sprintf("'%s' must contain only numeric columns; not numeric: %s",
                    arg, paste(names(x)[!ok], collapse = ", ")))
    }
    x <- as.matrix(x)
  } else if (is.null(dim(x))) {
    if (!is.numeric(x)) .stop(sprintf("'%s' must be numeric, not %s", arg, class(x)[1]))
    x <- matrix(x, ncol = 1L, dimnames = list(names(x), NULL))
  }
  if (!is.numeric(x) || length(dim(x)) != 2L) {
    .stop(sprintf("'%s' must be a numeric vector, matrix or data frame", arg))
  }
  if (ncol(x) < 1L || nrow(x) < 1L && !allow_empty) .stop(sprintf("'%s' has no data", arg))
  if (!allow_na && anyNA(x)) .stop(sprintf("'%s' contains missing values (NA or NaN)", arg))
  if (any(is.infinite(x))) .stop(sprintf("'%s' contains infinite values", arg))
  storage.mode(x) <- "double"
  x
}

# A single finite number within [lower, upper] (open at either end with
# open_lower, open_upper); infinite values only with allow_inf.  The range
# in the message is the one accepted: "(0, Inf)" when Inf is refused.
.check_number <- function(x, arg, lower = -Inf, upper = Inf, open_lower = FALSE,
                          allow_inf = FALSE, open_upper = FALSE) {
  if (!is.numeric(x) || length(x) != 1L || is.na(x)) {
    .stop(sprintf("'%s' must be a single number", arg))
  }
  open_lower <- open_lower || (!allow_inf && lower == -Inf)
  open_upper <- open_upper || (!allow_inf && upper == Inf)
  below <- if (open_lower) x <= lower else x < lower
  above <- if (open_upper) x >= upper else x > upper
  if (below || above || (!allow_inf && is.infinite(x))) {
    range <- sprintf("%s%s, %s%s", if (open_lower) "(" else "[", format(lower), format(upper),
                     if (open_upper) ")" else "]")
    .stop(sprintf("'%s' must lie in %s, not %s", arg, range, format(x)))
  }
  as.double(x)
}

# One or more positive finite numbers (several starting values, say).
.check_starts <- function(x, arg) {
  if (!is.numeric(x) || length(x) == 0L || anyNA(x)) {
    .stop(sprintf("'%s' must be one or more positive numbers", arg))
  }
  vapply(x, .check_number, numeric(1), arg = arg, lower = 0, open_lower = TRUE)
}

# A single whole number in [lower, upper] that R can hold as an integer.
.check_count <- function(x, arg, lower = 0L, upper = .Machine$integer.max) {
  if (!is.numeric(x) || length(x) != 1L || is.na(x) || !is.finite(x) ||
      x != round(x) || x < lower) {
    .stop(sprintf("'%s' must be a whole number >= %d", arg, lower))
  }
  if (x > upper) .stop(sprintf("'%s' must be at most %d, not %s", arg, upper, format(x)))
  as.integer(x)
}

# Unknown arguments swallowed by '...' are an error, named without
# evaluating them (`weights = cyl` would fail with "object 'cyl' not found").
.check_dots_empty <- function(...) {
  if (...length() > 0L) {
    nms <- ...names() %||% rep("", ...length())
    shown <- ifelse(is.na(nms) | nms == "", "(unnamed)", paste0("'", nms, "'"))
    .stop(sprintf("unknown argument(s): %s", paste(shown, collapse = ", ")))
  }
  invisible(TRUE)
}

# A control list made by its constructor, e.g. .check_control(control, "svr_control")
# (whose class is "gpsvm_svr_control").
.check_control <- function(control, constructor, arg = "control") {
  if (!inherits(control, paste0("gpsvm_", constructor))) {
    .stop(sprintf("'%s' must come from %s()", arg, constructor))
  }
  control
}

# A control's NULL settings resolved for the fit at hand, by a method per
# control class beside its constructor, so that fit$control says what was used.
.resolve_control.gpsvm_control <- function(control, ...) control

`%||%` <- function(a, b) if (is.null(a)) b else a

# match.arg() whose error names the argument instead of match.arg's 'arg'.
.match_choice <- function(x, choices, arg = deparse(substitute(x)), several.ok = FALSE) {
  if (missing(choices)) {
    caller <- sys.function(sys.parent())
    choices <- eval(formals(caller)[[arg]], envir = parent.frame())
  }
  if (!several.ok && identical(x, choices)) return(choices[1])
  tryCatch(match.arg(x, choices, several.ok = several.ok), error = function(e) {
    .stop(sprintf("'%s' must be one of %s", arg, paste0('"', choices, '"', collapse = ", ")))
  })
}

# One convergence record for every solver: converged, iterations, the last
# value of its stopping measure (`change`), its tolerance, and why it stopped
# (NA: nothing to add).  The glue builds the same (convergence_to_r()).
.convergence <- function(converged, iterations, change, tol, reason = NA_character_) {
  list(converged = isTRUE(converged), iterations = as.integer(iterations),
       change = as.double(change), tol = as.double(tol),
       reason = if (length(reason) == 1L) as.character(reason) else NA_character_)
}

# "converged after 12 iterations (change 3e-10, tolerance 1e-09)": print()'s line.
.format_convergence <- function(convergence) {
  paste(if (convergence$converged) "converged after" else "NOT converged after",
        .convergence_words(convergence))
}

# "12 iterations (change 3e-10, tolerance 1e-09): the reason".
.convergence_words <- function(cv) {
  sprintf("%s (change %.3g, tolerance %.3g)%s", .count(cv$iterations, "iteration"), cv$change,
          cv$tol, if (!is.na(cv$reason %||% NA)) paste0(": ", cv$reason) else "")
}

# "1 iteration", "12 iterations": a count with its noun in the right number.
.count <- function(n, singular, plural = paste0(singular, "s")) {
  sprintf("%d %s", as.integer(n), if (n == 1) singular else plural)
}

# list(value, warnings) of `expr`, its warnings held back: where several
# fits are made and one kept, only the kept one's are signalled again.
.held_warnings <- function(expr) {
  warnings <- list()
  value <- withCallingHandlers(expr, warning = function(w) {
    warnings[[length(warnings) + 1L]] <<- w
    invokeRestart("muffleWarning")
  })
  list(value = value, warnings = warnings)
}

# Signals held warnings again, and returns `value`.
.replay_warnings <- function(held) {
  for (w in held$warnings) warning(w)
  held$value
}

# The non-convergence warning every solver gives; `hint` says what to try.
.warn_not_converged <- function(what, convergence, hint = NULL) {
  if (convergence$converged) return(invisible(FALSE))
  warning(sprintf("%s did not converge in %s%s", what, .convergence_words(convergence),
                  if (length(hint)) paste0("; ", paste(hint, collapse = "; ")) else ""),
          call. = FALSE)
  invisible(TRUE)
}
