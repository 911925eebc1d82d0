# With scale = TRUE every fitter standardises the inputs (and a regression's
# response), as e1071 and kernlab do, and undoes it in all the user sees;
# and a Gaussian kernel given no width gets one from the scaled inputs.

.check_flag <- function(x, arg) {
  if (!is.logical(x) || length(x) != 1L || is.na(x)) .stop(sprintf("'%s' must be TRUE or FALSE", arg))
  x
}

# The inputs as a numeric matrix, and which columns code a factor (marked
# by .fit_formula(), unscaled).  Names must be distinct: predict() matches
# newdata's columns by name.
.input_matrix <- function(x) {
  skip <- attr(x, "factor_column")
  x <- .as_input_matrix(x, "x")
  attr(x, "factor_column") <- NULL
  duplicated_names <- unique(colnames(x)[duplicated(colnames(x))])
  if (length(duplicated_names) > 0L) {
    .stop(sprintf("'x' has more than one column named %s; give each input column its own name",
                  paste0("'", duplicated_names, "'", collapse = ", ")))
  }
  for (j in seq_len(ncol(x))) {
    .check_representable(x[, j], if (ncol(x) > 1L) {
      sprintf("column %s of 'x'", colnames(x)[j] %||% j)
    } else "'x'")
  }
  list(x = x, skip = skip %||% rep(FALSE, ncol(x)))
}

# Sums of squared values overflow beyond about 1e154 / sqrt(n), and a
# spread below 1e-150 squares to nothing (taken for a constant): both are
# refused, naming the data (`what`).
.check_representable <- function(v, what) {
  n <- length(v)
  if (n == 0L) return(invisible(v))
  largest <- max(abs(v))
  limit <- sqrt(.Machine$double.xmax / (4 * n))
  if (largest > limit) {
    .stop(sprintf(paste("%s has values as large as %.3g: sums of the squares of %d such values",
                        "overflow double precision (the limit is %.3g); rescale it, e.g. divide",
                        "by %.0e"), what, largest, n, limit, 10^floor(log10(largest))))
  }
  spread <- max(v) - min(v)
  if (spread > 0 && spread < .min_spread) {
    .stop(sprintf(paste("%s spreads over only %.3g: the squares of such differences underflow",
                        "double precision (a spread below %.0e), so it would be taken for a",
                        "constant; rescale it, e.g. multiply by %.0e"),
                  what, spread, .min_spread, 10^-floor(log10(spread))))
  }
  invisible(v)
}
.min_spread <- 1e-150

# The inputs a model is fitted on: scaled (`xs`, `scaling`), divided by a
# width per input (`x`), and the resolved `kernel`.
.model_inputs <- function(given, kernel, scale) {
  .check_flag(scale, "scale")
  .check_kernel(kernel)
  scaling <- .input_scaling(given$x, scale, skip = given$skip)
  xs <- .scale_inputs(given$x, scaling)
  unit <- .fit_kernel(xs, kernel)
  list(x = unit$x, kernel = unit$kernel, scaling = scaling, xs = xs)
}

# Centre and scale of each input column, or NULL when scale = FALSE.
# Constant columns are centred to 0 (with a warning), not scaled: a constant
# c would add c^2 times a polynomial kernel's scale to every value, which
# the centred response does not need.  `skip` columns are left alone.
# `moments` stand for x's rows not in memory (.partition_moments()).
.input_scaling <- function(x, scale, skip = rep(FALSE, ncol(x)),
                           moments = list(n = nrow(x), mean = colMeans(x), sd = if (nrow(x) > 1L) {
                             apply(x, 2L, stats::sd)
                           } else rep(NA_real_, ncol(x)))) {
  .check_flag(scale, "scale")
  if (!scale) return(NULL)
  center <- moments$mean
  spread <- moments$sd
  constant <- !(spread > 0) | is.na(spread)
  center[skip & !constant] <- 0
  spread[constant | skip] <- 1
  names_x <- .input_names(x)
  if (moments$n > 1L && any(constant & !skip)) {
    warning(sprintf("constant input column(s) centred to 0, not scaled: %s",
                    paste(names_x[constant & !skip], collapse = ", ")), call. = FALSE)
  }
  list(center = stats::setNames(center, colnames(x)), scale = stats::setNames(spread, colnames(x)),
       constant = names_x[constant])
}

# The inputs on the scale the model was fitted on.
.scale_inputs <- function(x, scaling) {
  if (is.null(scaling)) return(x)
  out <- sweep(sweep(x, 2L, scaling$center, "-", check.margin = FALSE), 2L, scaling$scale, "/",
               check.margin = FALSE)
  dimnames(out) <- dimnames(x)
  out
}

# Centre and scale of a response (only centred without spread), or NULL.
.response_scaling <- function(y, scale) {
  .check_flag(scale, "scale")
  if (!scale) return(NULL)
  spread <- if (length(y) > 1L) stats::sd(y) else NA_real_
  list(center = mean(y), scale = if (isTRUE(spread > 0)) spread else 1)
}

.scale_response <- function(y, scaling) {
  if (is.null(scaling)) y else (y - scaling$center) / scaling$scale
}

# kernlab's sigest() rule in gpsvm's convention: s = (1/q_0.9 + 1/q_0.1) / 2
# of the squared distances' quantiles, sigma = 1 / sqrt(2 s), on fixed rows
# (no random seed).  `quantiles = 0.5` is the median heuristic.
.data_driven_width <- function(x, quantiles = c(0.1, 0.9)) {
  rows <- .evenly_spaced_rows(nrow(x), .size_rule("width_rule_max_n"))
  d2 <- .squared_distances(x[rows, , drop = FALSE])
  if (length(d2) == 0L) return(1)  # (one distinct input: any width fits it)
  1 / sqrt(2 * mean(1 / stats::quantile(d2, quantiles, names = FALSE)))
}

# The non-zero squared distances between the rows of x, kept for the last x
# (up to .width_memory_max entries): a default fit asks for the same rows'
# widths several times.
.squared_distances <- function(x) {
  if (identical(x, .width_memory$x)) return(.width_memory$d2)
  d2 <- as.vector(stats::dist(x))^2
  d2 <- d2[d2 > 0]
  if (length(x) <= .width_memory_max) {
    assign("x", x, envir = .width_memory)
    assign("d2", d2, envir = .width_memory)
  }
  d2
}

.width_memory <- new.env(parent = emptyenv())
.width_memory_max <- 1e6

# The width rbf_kernel() without one gets for these inputs (grids' centre).
.default_width <- function(x, scale = TRUE) {
  x <- .as_input_matrix(x, "x")
  .data_driven_width(.scale_inputs(x, suppressWarnings(.input_scaling(x, scale))))
}

# A Gaussian kernel without a width gets one from the inputs, and says so.
.resolve_kernel <- function(kernel, x) {
  .check_kernel(kernel)
  if (isTRUE(kernel$per_input) && is.null(kernel$input_widths)) {
    if (is.null(kernel$sigma)) kernel$sigma_rule <- "data"
    kernel$sigma <- .per_input_widths(kernel$sigma %||% .data_driven_width(x), x)
    return(kernel)
  }
  if (!.has_width(kernel) || !is.null(kernel$sigma)) return(kernel)
  kernel$sigma <- .data_driven_width(x)
  kernel$sigma_rule <- "data"
  kernel
}

# A width per column of x (the design's), named by them; one is repeated.
.per_input_widths <- function(sigma, x) {
  if (length(sigma) == 1L) sigma <- rep(sigma, ncol(x))
  if (length(sigma) != ncol(x)) {
    .stop(sprintf(paste("'sigma' of rbf_kernel(per_input = TRUE) must be one width or one per",
                        "input column of the model (%d: %s), not %d"),
                  ncol(x), paste(utils::head(colnames(x) %||% character(0), 6L), collapse = ", "),
                  length(sigma)))
  }
  stats::setNames(as.numeric(sigma), .input_names(x))
}

# The input columns' names, x<j> for blank ones (cbind(x, 5) names one "").
.input_names <- function(x) .fill_names(colnames(x), ncol(x))

.fill_names <- function(names, p) {
  names <- names %||% character(p)
  blank <- is.na(names) | names == ""
  names[blank] <- paste0("x", which(blank))
  names
}
