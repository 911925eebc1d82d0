# Data as users bring it.  Like e1071::svm() and kernlab::ksvm(), every fitter
# standardises the numeric input columns (and, for the regression models, the
# response) before fitting when scale = TRUE, stores the scaling in the fit,
# and undoes it in everything the user sees.  These are the pieces every
# model shares: the scalings themselves and a Gaussian kernel width chosen
# from the (scaled) inputs when rbf_kernel() was given none.

# TRUE or FALSE, nothing else.
.check_flag <- function(x, arg) {
  if (!is.logical(x) || length(x) != 1L || is.na(x)) .stop(sprintf("'%s' must be TRUE or FALSE", arg))
  x
}

# The inputs as a numeric matrix, and which of its columns code a factor: a
# formula method marks them (attribute "factor_column", set by
# .fit_formula()) so that scaling leaves them alone, as in e1071.
#
# The names of its columns must tell them apart: predict() matches newdata's
# columns to the training ones by name, and with two columns "a" it would
# use the first twice.
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

# Training data the models can compute with in double precision.  Kernels,
# scalings and likelihoods square differences of the inputs and of the
# response and sum them over the observations: with values beyond about
# 1e154 / sqrt(n) those sums overflow (y * 1e300 gave fitted values NaN),
# and a spread below 1e-150 squares to less than the smallest double (y *
# 1e-300 was taken for a constant and fitted by one without a word).  Both
# are refused with the reason, naming the data (`what`).
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

# The inputs a model is fitted on, from .input_matrix()'s `given`: scaled
# (`xs`, with `scaling`) and, for a Gaussian kernel with a width per input,
# divided by the widths (`x`), with the resolved `kernel` (a width chosen
# from the scaled inputs when none was given).
.model_inputs <- function(given, kernel, scale) {
  .check_flag(scale, "scale")
  .check_kernel(kernel)
  scaling <- .input_scaling(given$x, scale, skip = given$skip)
  xs <- .scale_inputs(given$x, scaling)
  unit <- .fit_kernel(xs, kernel)
  list(x = unit$x, kernel = unit$kernel, scaling = scaling, xs = xs)
}

# Centre and scale of each input column, or NULL when scale = FALSE.
# Constant columns (no spread, or a single row) are centred but not scaled,
# so that they are 0, with a warning naming them when there are rows to
# compare: left as they were, a constant c added c^2 times the kernel's
# scale to every value of a linear or polynomial kernel, a shared component
# that the centred response does not need; the relevance vector machines
# then found no basis function worth adding and fitted a constant (a column
# of 5 beside a slope on 30 rows, where lm() finds the slope).  Centred,
# they leave every kernel as it is without them, as lm() leaves an aliased
# column out.  Other columns flagged in `skip` (a formula's factor dummies)
# are left alone.
# `moments` (n, mean and sd of each column) stand for x's rows where these
# are not in memory (data in partitions: .partition_moments()).
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

# Centre and scale of a numeric response, or NULL when scale = FALSE.  A
# response with no spread (or a single value) is only centred.
.response_scaling <- function(y, scale) {
  .check_flag(scale, "scale")
  if (!scale) return(NULL)
  spread <- if (length(y) > 1L) stats::sd(y) else NA_real_
  list(center = mean(y), scale = if (isTRUE(spread > 0)) spread else 1)
}

.scale_response <- function(y, scaling) {
  if (is.null(scaling)) y else (y - scaling$center) / scaling$scale
}

# A Gaussian kernel width for the (scaled) inputs, when rbf_kernel() was
# given none: kernlab's sigest() rule written in gpsvm's convention.  With
# q_0.1 and q_0.9 the 10% and 90% quantiles of the non-zero squared
# distances between training inputs, kernlab's exp(-s |x - x'|^2) uses
# s = (1/q_0.9 + 1/q_0.1) / 2, which is sigma = 1 / sqrt(2 s) here.  Unlike
# sigest() it looks at a fixed subset of rows (all of them up to 1000), so the
# width does not depend on the random seed.  `quantiles = 0.5` gives the
# middle of sigest()'s three estimates, sigma = sqrt(q_0.5 / 2) (the median
# heuristic), where gpc()'s evidence search starts (.gpc_search_spec()).
.data_driven_width <- function(x, quantiles = c(0.1, 0.9)) {
  rows <- .evenly_spaced_rows(nrow(x), .size_rule("width_rule_max_n"))
  d2 <- .squared_distances(x[rows, , drop = FALSE])
  if (length(d2) == 0L) return(1)  # (one distinct input: any width fits it)
  1 / sqrt(2 * mean(1 / stats::quantile(d2, quantiles, names = FALSE)))
}

# The non-zero squared distances between the rows of x, kept for the last x
# asked: a default fit asks for widths of the same rows several times (its
# kernel, then each candidate's search bounds: three times in mfsvr(); in
# gpc() the bounds and the start at other quantiles, once per class against
# the rest), a sizeable part of a small fit's time.  The rows are at most
# 1000, and are not kept beyond .width_memory_max entries (8 MB; the
# distances of 1000 rows take 4 MB more).
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

# The rows .squared_distances() saw last (x) and their distances (d2).
.width_memory <- new.env(parent = emptyenv())
.width_memory_max <- 1e6

# The width rbf_kernel() without one gets for these inputs when a fit scales
# them with this `scale` (the centre of caret's and parsnip's grids).
.default_width <- function(x, scale = TRUE) {
  x <- .as_input_matrix(x, "x")
  .data_driven_width(.scale_inputs(x, suppressWarnings(.input_scaling(x, scale))))
}

# The kernel a fit uses: a Gaussian kernel without a width gets one from the
# (scaled) training inputs, and records that it was chosen.
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

# The widths of a kernel with a width per input, one per column of x (the
# columns of the model's design, factor dummies included), named by them:
# one width is repeated, else there must be one per column.
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

# The input columns' names, x1, x2, ... for those that have none (cbind(x, 5)
# names its second column "").
.input_names <- function(x) .fill_names(colnames(x), ncol(x))

# `names` of p columns (or NULL) with x<j> for the blank ones.
.fill_names <- function(names, p) {
  names <- names %||% character(p)
  blank <- is.na(names) | names == ""
  names[blank] <- paste0("x", which(blank))
  names
}
