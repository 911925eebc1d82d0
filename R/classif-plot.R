# plot() for svc() and gpc() fits.  A formula fit's grid goes through
# predict()'s model frame, so factors are coded by the fit's own terms.

#' Plot a kernel classifier on two inputs
#'
#' Draws the training points (coloured and shaped by class) on two inputs,
#' in their own units. With two classes it adds the decision boundary
#' f(x) = 0; support vector fits also show the margins f(x) = -1 and +1
#' (dashed) and circle the support vectors, and Gaussian process fits the
#' contours where the probability of the second class is 0.1 and 0.9
#' (dashed). With three or more classes it shades the region each class is
#' predicted in.
#'
#' A fit on more than two inputs is drawn on a slice: the decision function
#' is evaluated over a grid of the two `inputs` with every other input held
#' at one value (see `slice`), which the subtitle gives. The training points
#' are drawn at their values on the two inputs whatever their other values,
#' so points far from the slice may lie on the "wrong" side of the boundary.
#'
#' For a formula fit the inputs are the variables of the formula, as the
#' data holds them: with `class ~ log(a) + b + f` they are `a`, `b` and `f`,
#' and the grid goes through the formula as in [predict()]. For a fit on a
#' matrix they are its columns.
#'
#' @param x A fit from [svc()] or [gpc()] with at least two numeric inputs.
#' @param inputs The two inputs on the horizontal and vertical axes: names
#'   (variables of the formula, or column names of the input matrix) or
#'   positions among the inputs, or a formula `vertical ~ horizontal` as
#'   `e1071`'s `plot.svm()` takes them. `NULL` takes the first two numeric
#'   inputs.
#' @param slice A named list with the value at which to hold each of the
#'   other inputs, for example `list(glucose = 150, sex = "female")`; a
#'   factor's value may be given as a level name. Inputs it does not name
#'   are held at their median (numeric) or most frequent level (factor) over
#'   the training data.
#' @param grid Number of grid points along each axis, at most 1000.
#' @param col One colour per class; `NULL` chooses them.
#' @param which `"regions"` (the default) draws the decision regions as
#'   above; `"calibration"` (for [gpc()] fits) the reliability diagram of
#'   the class probabilities on held-out or cross-validated cases (see
#'   [probability_calibration()], whose `newdata`, `y`, `folds`, `bins` and
#'   `seed` it takes in `...`; `inputs`, `slice`, `grid` and `col` are then
#'   not used).
#' @param ... Further graphical parameters passed to [graphics::plot()],
#'   such as `main`, `xlab` or `sub` (instead of the slice's subtitle); with
#'   `which = "calibration"` also the arguments of [probability_calibration()]
#'   named above.
#' @return `x`, invisibly.
#' @examples
#' set.seed(2)
#' x <- matrix(rnorm(80), 40, 2)
#' y <- factor(ifelse(x[, 1]^2 + x[, 2]^2 > 1.4, "out", "in"))
#' plot(svc(x, y))
#' plot(gpc(Species ~ Petal.Length + Sepal.Width, iris), grid = 40)
#' # four inputs: the petal dimensions with the sepal ones held at their
#' # medians, then at chosen values
#' fit <- svc(Species ~ ., iris)
#' plot(fit, inputs = c("Petal.Length", "Petal.Width"), grid = 40)
#' plot(fit, Petal.Width ~ Petal.Length,  # the form e1071's plot.svm() takes
#'      slice = list(Sepal.Length = 7, Sepal.Width = 3), grid = 40)
#' # do the probabilities hold? (three-fold cross-validation)
#' plot(gpc(Species ~ Petal.Length + Petal.Width, iris), which = "calibration", folds = 3)
#' @export
plot.gpsvm_classifier <- function(x, inputs = NULL, slice = list(), grid = 80, col = NULL,
                                  which = c("regions", "calibration"), ...) {
  object <- x
  .validate_fit(object)
  .needs_inputs(object, "plot()")
  which <- .match_choice(which)
  if (which == "calibration") return(.plot_probability_calibration(object, parent.frame(), ...))
  grid <- .check_count(grid, "grid", lower = 2L, upper = .max_surface_grid)
  k <- length(object$levels)
  col <- col %||% (if (k == 2L) c("#1b9e77", "#d95f02") else grDevices::hcl.colors(k, "Dark 3"))
  if (length(col) != k) .stop(sprintf("'col' must give %d colours, one per class", k))
  s <- .slice_surface(object, inputs, slice, grid)
  xs <- s$points
  cls <- as.integer(object$classes)
  .plot_frame(xs, s$inputs, s$held, ...)
  if (k == 2L) {
    # (NA where the formula gives no value, which contour() leaves out)
    graphics::contour(s$g1, s$g2, matrix(s$f, grid, grid), levels = 0, drawlabels = FALSE,
                      add = TRUE, lwd = 2)
    .plot_binary(object, s)
  } else {
    graphics::image(s$g1, s$g2, matrix(max.col(s$f, ties.method = "first"), grid, grid),
                    col = grDevices::adjustcolor(col, alpha.f = 0.25), breaks = seq(0.5, k + 0.5),
                    add = TRUE)
  }
  pch <- if (k == 2L) c(1, 3) else seq_len(k) %% 26
  graphics::points(xs[, 1], xs[, 2], col = col[cls], pch = pch[cls])
  graphics::legend("topright", legend = object$levels, col = col, pch = pch, bty = "n")
  invisible(x)
}

# The empty plot with its axes; the user's xlab, ylab or sub (in `...`)
# replace the defaults (sub NULL, plot()'s own, with no input held).
.plot_frame <- function(xs, inputs, held, ..., xlab = inputs[1L], ylab = inputs[2L],
                        sub = .slice_label(held)) {
  graphics::plot(xs[, 1], xs[, 2], type = "n", xlab = xlab, ylab = ylab, sub = sub, ...)
}

# The decision values over a grid x grid lattice of the two `inputs`, the
# other inputs held as `slice` says.  Returns `inputs`, `held` (a named
# list), the grid along each axis (`g1`, `g2`), the training points on the
# two axes (`points`), the scaled inputs at the grid points that could be
# coded (`x`; `keep`: which, NULL for all), and the decision values at every
# grid point (`f`, NA where not coded), the first axis varying fastest.
.slice_surface <- function(object, inputs = NULL, slice = list(), grid = 80L) {
  vars <- .plot_variables(object)
  inputs <- .check_plot_inputs(inputs, vars)
  held <- .held_values(object, vars, inputs, slice)
  g1 <- .axis_grid(vars[[inputs[1L]]], grid)
  g2 <- .axis_grid(vars[[inputs[2L]]], grid)
  frame <- expand.grid(stats::setNames(list(g1, g2), inputs), KEEP.OUT.ATTRS = FALSE)
  for (v in names(held)) frame[[v]] <- rep(held[[v]], nrow(frame))
  design <- .slice_design(object, frame[names(vars)])
  if (nrow(design$x) == 0L) {
    .stop(paste("the model cannot be evaluated anywhere on this slice:",
                "the formula gives missing values there"))
  }
  f <- .classif_decision(object, design$x)
  list(inputs = inputs, held = held, g1 = g1, g2 = g2,
       points = cbind(vars[[inputs[1L]]], vars[[inputs[2L]]]), x = design$x,
       keep = design$keep, f = unname(.pad_rows(f, design$keep)))
}

# The grid along one axis: the range of the training values, widened by 5%
# on each side.
.axis_grid <- function(v, grid) {
  lim <- range(v) + c(-0.05, 0.05) * diff(range(v))
  seq(lim[1L], lim[2L], length.out = grid)
}

# The scaled model inputs at the rows of `frame` (in the user's units): for
# formula fits through predict()'s newdata path, which drops rows the
# formula turns into missing values (`keep` marks the others).
.slice_design <- function(object, frame) {
  if (!is.null(object$terms)) {
    inputs <- .prediction_inputs(object, frame)
    return(list(x = inputs$x, keep = if (all(inputs$keep)) NULL else inputs$keep))
  }
  x <- as.matrix(frame)
  dimnames(x) <- list(NULL, colnames(object$x))
  list(x = .scale_inputs(x, object$scaling), keep = NULL)
}

# The training inputs in the user's units, one column per input: the
# formula's variables as the data gave them, or the columns of the input
# matrix (named x1, x2, ... when it had no column names).
.plot_variables <- function(object) {
  if (!is.null(object$terms)) {
    if (is.null(object$variables)) {
      .stop(paste("plot() cannot evaluate the variables of this fit's formula on their own;",
                  "fit it on a data frame holding them"))
    }
    return(object$variables)
  }
  xs <- .original_inputs(object)
  names <- colnames(xs) %||% paste0("x", seq_len(ncol(xs)))
  stats::setNames(as.data.frame(unname(xs)), make.unique(names))
}

.is_numeric_input <- function(v) is.numeric(v) && !is.object(v) && is.null(dim(v))

# The axes of inputs = vertical ~ horizontal (e1071's plot.svm() takes its
# two dimensions so): c(horizontal, vertical), each one variable.
.formula_axes <- function(inputs) {
  sides <- if (length(inputs) == 3L) list(all.vars(inputs[[3L]]), all.vars(inputs[[2L]]))
  if (length(sides) != 2L || any(lengths(sides) != 1L)) {
    .stop("'inputs' as a formula must name one input on each side: vertical ~ horizontal")
  }
  unlist(sides)
}

# The names of the two inputs on the axes: `inputs` as given (names,
# positions or a formula), else the first two numeric inputs.
.check_plot_inputs <- function(inputs, vars) {
  numeric <- vapply(vars, .is_numeric_input, logical(1))
  if (is.null(inputs)) {
    if (sum(numeric) < 2L) {
      found <- if (any(numeric)) sprintf(" (%s)", names(vars)[numeric]) else ""
      .stop(sprintf("plot() needs a fit with two numeric inputs; this one has %d%s", sum(numeric),
                    found))
    }
    return(names(vars)[numeric][1:2])
  }
  if (inherits(inputs, "formula")) inputs <- .formula_axes(inputs)
  if (!(is.character(inputs) || is.numeric(inputs)) || length(inputs) != 2L || anyNA(inputs)) {
    .stop("'inputs' must give two inputs, by name, by position or as a formula vertical ~ horizontal")
  }
  if (is.numeric(inputs)) {
    if (any(inputs != round(inputs)) || any(inputs < 1) || any(inputs > ncol(vars))) {
      .stop(sprintf("'inputs' positions must be whole numbers from 1 to %d", ncol(vars)))
    }
    inputs <- names(vars)[inputs]
  }
  unknown <- setdiff(inputs, names(vars))
  if (length(unknown) > 0L) {
    .stop(sprintf("'inputs' names %s, which is not an input; the inputs are %s",
                  .quote_names(unknown), paste(names(vars), collapse = ", ")))
  }
  if (inputs[1L] == inputs[2L]) .stop("'inputs' must be two different inputs")
  bad <- inputs[!numeric[inputs]]
  if (length(bad) > 0L) {
    .stop(sprintf("'inputs' must be numeric inputs; %s is not", .quote_names(bad)))
  }
  inputs
}

.quote_names <- function(x) paste0("'", x, "'", collapse = ", ")

# The value each input off the axes is held at, named by input: the one in
# `slice`, else the training values' median or most frequent level, of the
# input's own type and levels, so that predict()'s model frame accepts it.
.held_values <- function(object, vars, inputs, slice) {
  others <- setdiff(names(vars), inputs)
  slice <- .check_slice(slice, names(vars), inputs)
  held <- lapply(others, function(v) {
    values <- vars[[v]]
    if (.is_numeric_input(values)) {
      if (is.null(slice[[v]])) return(stats::median(values))
      return(.check_slice_number(slice[[v]], v))
    }
    if (!(is.factor(values) || is.character(values) || is.logical(values)) ||
        !is.null(dim(values))) {
      .stop(sprintf("plot() cannot hold input '%s' fixed: it is neither numeric nor a factor", v))
    }
    levels <- .input_levels(object, values, v)
    # (unless given, the most frequent level, the first of `levels` on ties)
    value <- if (is.null(slice[[v]])) {
      levels[which.max(tabulate(match(as.character(values), levels), length(levels)))]
    } else .check_slice_level(slice[[v]], v, levels)
    if (is.factor(values)) factor(value, levels = levels) else
      if (is.logical(values)) as.logical(value) else value
  })
  stats::setNames(held, others)
}

# `slice` as a list named by inputs off the axes.
.check_slice <- function(slice, names, inputs) {
  if (is.null(slice)) return(list())
  if (!is.list(slice)) .stop("'slice' must be a named list, such as list(x3 = 0)")
  if (length(slice) == 0L) return(list())
  if (is.null(names(slice)) || any(is.na(names(slice)) | names(slice) == "")) {
    .stop("'slice' must be a named list: every value needs the name of its input")
  }
  if (anyDuplicated(names(slice))) {
    twice <- unique(names(slice)[duplicated(names(slice))])
    .stop(sprintf("'slice' names %s more than once", .quote_names(twice)))
  }
  unknown <- setdiff(names(slice), names)
  if (length(unknown) > 0L) {
    .stop(sprintf("'slice' names %s, which is not an input; the inputs are %s",
                  .quote_names(unknown), paste(names, collapse = ", ")))
  }
  on_axis <- intersect(names(slice), inputs)
  if (length(on_axis) > 0L) {
    .stop(sprintf("'slice' gives a value for %s, which is on an axis", .quote_names(on_axis)))
  }
  as.list(slice)
}

.check_slice_number <- function(value, name) {
  if (!is.numeric(value) || is.object(value) || length(value) != 1L) {
    .stop(sprintf("'slice' value for '%s' must be one number", name))
  }
  if (!is.finite(value)) {
    .stop(sprintf("'slice' value for '%s' must be finite, not %s", name, format(value)))
  }
  as.double(value)
}

# A level given as a name (or a one-element factor, or TRUE/FALSE for a
# logical input).
.check_slice_level <- function(value, name, levels) {
  if (length(value) != 1L || !(is.character(value) || is.factor(value) || is.logical(value))) {
    .stop(sprintf("'slice' value for '%s' must be one level name", name))
  }
  value <- as.character(value)
  if (is.na(value) || !value %in% levels) {
    shown <- if (is.na(value)) "NA" else paste0("'", value, "'")
    .stop(sprintf("'slice' value for '%s' is %s, which is not one of its levels (%s)", name,
                  shown, paste(levels, collapse = ", ")))
  }
  value
}

# The levels of a factor, character or logical input as the model codes
# them: those recorded at fitting (the levels present in the rows used),
# else the values present.
.input_levels <- function(object, values, name) {
  object$xlevels[[name]] %||%
    (if (is.factor(values)) levels(droplevels(values)) else sort(unique(as.character(values))))
}

# "slice: a = 1.5, f = b, ...": the held values, cut at `width` characters.
.slice_label <- function(held, width = 80L) {
  if (length(held) == 0L) return(NULL)
  values <- vapply(held, function(v) {
    if (is.numeric(v)) format(v, digits = 3) else as.character(v)
  }, character(1))
  parts <- paste(names(held), "=", values)
  label <- paste0("slice: ", paste(parts, collapse = ", "))
  if (nchar(label) <= width) return(label)
  # as many whole parts as leave room for ", ..."
  fits <- nchar("slice: ") + cumsum(nchar(parts) + 2L) + 3L <= width
  paste0("slice: ", paste(c(parts[fits], "..."), collapse = ", "))
}
