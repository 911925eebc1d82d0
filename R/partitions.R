# Data in row partitions (files or data frames), read one at a time and never
# gathered.  The R layer reads and codes the partitions; the core reads the
# inputs through a row source (gpsvm_glue.h's reader), a block of rows at a
# time, and sums each block's m x m terms itself (ep_priors.hpp), so the sweep
# is the in-memory fit's, with the same sums in the same order.

#' Data in row partitions
#'
#' A set of row partitions of one data set, each a file or a data frame,
#' which [mfsvr()] and [gpc()] with `inducing` take as `data` with a
#' formula, and `predict()` and [interval_coverage()] as `newdata`. The
#' partitions are read where they are used, one at a time, and never
#' gathered into one data frame: a fit reads each in a few passes before
#' fitting, once more for the \eqn{n \times m} factor of the cross-kernel,
#' and again in every EP sweep where that factor is larger than its memory
#' budget (see [inducing-points]).
#'
#' A file is read by its extension: `.rds` ([readRDS()], a data frame),
#' `.csv` ([utils::read.csv()]; also `.csv.gz`), or `.parquet` (with the
#' arrow package). The fit on the partitions is the fit on their rows bound
#' by [rbind()] (to rounding), a factor's levels in the order the partitions
#' first show them. Rows with missing values are an error. What a default
#' call leaves to a search (the `C` of [mfsvr()], the width and noise of
#' [gpc()]) is chosen by the default in memory on evenly spaced rows read from
#' the partitions, as many as the search would see in memory
#' ([gpsvm_size_policy()]); the fit on every row keeps it.
#'
#' With a [future::plan()] of several cluster or multisession workers (see
#' [gpsvm_parallel]), [mfsvr()] and a two-class [gpc()] run their EP sweeps
#' on them: each worker reads its share of the partitions once and keeps
#' them, with their EP sites, until the fit ends, and every sweep exchanges
#' only \eqn{m \times m} and \eqn{m} sums, so the fit is the one in one
#' process (to rounding). A file must be readable where its worker runs; a
#' data frame partition is sent to its worker once. The plan's `data` row
#' says so, with the bytes exchanged per sweep. On one machine,
#' `options(socketOptions = "no-delay")` set before [future::plan()] starts
#' the workers makes every exchange quicker. A plan of one worker, a backend
#' that starts a process per future (such as future.batchtools), and a run
#' that needs the sequential EP schedule fit in the calling session; a gpc()
#' of three or more classes fits its one-against-the-rest models in parallel
#' instead. Progress (a step per sweep) is reported through progressr.
#'
#' The constructor checks that every file exists and can be read and that
#' every partition has the columns of the first, with the same types
#' (numbers, text or factors, logical); a file's columns are read from the
#' file itself, so this reads each once. An error names the partition.
#'
#' @param ... Partitions: file names (a character vector may name several)
#'   or data frames, or one list of them, in the order of their rows.
#' @return An object of class `gpsvm_partitions`: a list with `sources`
#'   (file names, or the data frames), `kind` of each and `columns` (the
#'   first partition's column types).
#' @seealso [mfsvr()], [gpc()], [inducing-points]
#' @examples
#' set.seed(1)
#' d <- data.frame(x1 = runif(300, -3, 3), x2 = runif(300, -3, 3))
#' d$y <- sin(d$x1) * cos(d$x2) + rnorm(300, sd = 0.1)
#' files <- file.path(tempdir(), c("a.rds", "b.csv"))
#' saveRDS(d[1:100, ], files[1])
#' utils::write.csv(d[101:250, ], files[2], row.names = FALSE)
#' parts <- gpsvm_partitions(files, d[251:300, ])
#' parts
#' fit <- mfsvr(y ~ x1 + x2, data = parts, inducing = 20, C = 5)
#' head(predict(fit, parts))
#' @export
gpsvm_partitions <- function(...) {
  sources <- list(...)
  if (length(sources) == 1L && is.list(sources[[1L]]) && !is.data.frame(sources[[1L]])) {
    sources <- sources[[1L]]
  }
  sources <- unlist(lapply(sources, function(s) if (is.character(s)) as.list(s) else list(s)),
                    recursive = FALSE)
  if (length(sources) == 0L) .stop("'...' gives no partitions")
  kind <- vapply(seq_along(sources), function(i) .partition_kind(sources[[i]], i), "")
  parts <- structure(list(sources = sources, kind = kind, columns = NULL),
                     class = "gpsvm_partitions")
  for (i in seq_along(sources)) {
    types <- .column_types(.read_partition(parts, i, "'...'"))
    if (i == 1L) parts$columns <- types else .check_partition_columns(parts, i, types)
  }
  parts
}

#' @export
print.gpsvm_partitions <- function(x, ...) {
  k <- length(x$sources)
  cat(sprintf("Data in %d row partition%s (%s), columns: %s\n", k, if (k == 1L) "" else "s",
              paste(sprintf("%d %s", tabulate(factor(x$kind, unique(x$kind))), unique(x$kind)),
                    collapse = ", "),
              paste(sprintf("%s <%s>", names(x$columns), x$columns), collapse = ", ")))
  shown <- vapply(x$sources[seq_len(min(k, 5L))], function(s) {
    if (is.character(s)) return(s)
    sprintf("a data frame of %d row%s", nrow(s), if (nrow(s) == 1L) "" else "s")
  }, "")
  cat(paste0("  ", seq_along(shown), ": ", shown, collapse = "\n"), "\n", sep = "")
  if (k > 5L) cat(sprintf("  ... and %d more\n", k - 5L))
  invisible(x)
}

# "rds", "csv", "parquet" or "data frame"; a missing or unreadable file, or
# parquet without arrow, is an error naming the partition.
.partition_kind <- function(s, i) {
  if (is.data.frame(s)) return("data frame")
  if (!is.character(s) || length(s) != 1L || is.na(s)) {
    .stop(sprintf("partition %d of '...' must be a file name or a data frame", i))
  }
  if (!file.exists(s)) .stop(sprintf("partition %d of '...' (%s) does not exist", i, s))
  if (file.access(s, 4L) != 0L) .stop(sprintf("partition %d of '...' (%s) cannot be read", i, s))
  kind <- switch(tolower(sub(".*\\.(rds|csv|csv\\.gz|parquet)$", "\\1", s, ignore.case = TRUE)),
                 rds = "rds", csv = , csv.gz = "csv", parquet = "parquet", NA_character_)
  if (is.na(kind)) {
    .stop(sprintf("partition %d of '...' (%s) is not an .rds, .csv or .parquet file", i, s))
  }
  if (kind == "parquet" && !requireNamespace("arrow", quietly = TRUE)) {
    .stop(sprintf("partition %d of '...' (%s) is a parquet file, which needs the arrow package",
                  i, s))
  }
  kind
}

# Partition i as a data frame (`arg` names the partitions in an error).
.read_partition <- function(parts, i, arg = "the data") {
  s <- parts$sources[[i]]
  out <- tryCatch(switch(parts$kind[[i]],
    "data frame" = s,
    rds = readRDS(s),
    csv = utils::read.csv(s, stringsAsFactors = FALSE, check.names = FALSE),
    # (arrow is in Enhances: .partition_kind() checked that it is there)
    parquet = as.data.frame(arrow::read_parquet(s))
  ), error = function(e) {
    .stop(sprintf("partition %d of %s (%s) cannot be read: %s", i, arg, s, conditionMessage(e)))
  })
  if (!is.data.frame(out)) .stop(sprintf("partition %d of %s (%s) holds no data frame", i, arg, s))
  out
}

# A partition's columns and their types, as rbind() would combine them.
.column_types <- function(df) {
  vapply(df, function(v) {
    if (is.numeric(v) && !is.object(v)) "number" else if (is.factor(v) || is.character(v)) {
      "text"
    } else if (is.logical(v)) "logical" else class(v)[1L]
  }, "")
}

.check_partition_columns <- function(parts, i, types) {
  if (identical(types, parts$columns)) return(invisible())
  what <- if (is.character(parts$sources[[i]])) sprintf(" (%s)", parts$sources[[i]]) else ""
  if (!identical(names(types), names(parts$columns))) {
    .stop(sprintf("partition %d of '...'%s has the columns %s, where the first has %s", i,
                  what, paste(names(types), collapse = ", "),
                  paste(names(parts$columns), collapse = ", ")))
  }
  differ <- names(types)[types != parts$columns]
  .stop(sprintf("partition %d of '...'%s has column(s) %s of another type than the first (%s)",
                i, what, paste(differ, collapse = ", "),
                paste(sprintf("%s not %s", types[differ], parts$columns[differ]), collapse = ", ")))
}

# The formula's design over all partitions without gathering them: the
# terms, levels and contrasts of the rows bound together (from each row that
# shows a level first, so that model.frame() orders the levels as on the
# bound rows), the response, and each partition's rows.
.partition_design <- function(parts, formula, env) {
  pieces <- vector("list", length(parts$sources))
  y <- vector("list", length(pieces))
  seen <- list()
  for (i in seq_along(pieces)) {
    df <- .read_partition(parts, i)
    mf <- tryCatch(stats::model.frame(formula, df, na.action = stats::na.fail),
                   error = function(e) {
                     .stop(sprintf("partition %d of 'data' does not fit 'formula': %s", i,
                                   conditionMessage(e)))
                   })
    if (i == 1L) .refuse_fitted_terms(attr(mf, "terms"))
    new <- seq_len(nrow(mf)) == 1L
    for (v in names(mf)[vapply(mf, function(col) is.factor(col) || is.character(col), NA)]) {
      values <- as.character(mf[[v]])
      fresh <- !duplicated(values) & !(values %in% seen[[v]])
      seen[[v]] <- c(seen[[v]], values[fresh])
      new <- new | fresh
    }
    pieces[[i]] <- df[new, , drop = FALSE]
    y[[i]] <- stats::model.response(mf)
  }
  rows <- vapply(y, length, 1L)
  design <- .formula_design(call("model.frame", formula = formula, data = do.call(rbind, pieces)),
                            env)
  y <- unlist(lapply(y, function(v) if (is.factor(v)) as.character(v) else v))
  if (!is.null(design$response_levels)) y <- factor(y, levels = design$response_levels)
  design[c("y", "rows", "na.action", "variables")] <- list(y, rows, NULL, NULL)
  design
}

# Terms whose basis is fitted to the data (poly(), ns(), scale()) would be
# fitted to one partition, not to all rows.
.refuse_fitted_terms <- function(terms) {
  predvars <- attr(terms, "predvars")
  if (!is.null(predvars) && !identical(predvars, attr(terms, "variables"))) {
    .stop(paste("'formula' has terms fitted to the data (such as poly(), ns() or scale()),",
                "which data in partitions cannot take: their basis would be fitted to one",
                "partition; code them in the data"))
  }
}

# Partition i's inputs as the fit's design codes them (the columns of
# `template`, a fit-like list with terms, xlevels, contrasts and x).
.partition_inputs <- function(parts, i, template) {
  x <- .newdata_matrix(template, .read_partition(parts, i))
  attr(x, "new_directions") <- NULL
  x
}

# One pass over the partitions: each column's mean and standard deviation
# (combined by Chan, Golub and LeVeque's pairwise update, as accurate as a
# pass over the bound rows) and the rows `keep` (over all partitions).
.partition_moments <- function(parts, template, keep) {
  n <- 0
  mean <- m2 <- 0
  kept <- list()
  first <- 0L
  for (i in seq_along(parts$sources)) {
    x <- .partition_inputs(parts, i, template)
    k <- nrow(x)
    if (k > 0L) {
      mean_i <- colMeans(x)
      m2_i <- colSums(sweep(x, 2L, mean_i)^2)
      delta <- mean_i - mean
      m2 <- m2 + m2_i + delta^2 * n * k / (n + k)
      mean <- mean + delta * k / (n + k)
      n <- n + k
    }
    here <- keep[keep > first & keep <= first + k] - first
    kept[[i]] <- x[here, , drop = FALSE]
    first <- first + k
  }
  list(n = n, mean = mean, sd = if (n > 1) sqrt(m2 / (n - 1)) else NA * mean,
       rows = do.call(rbind, kept))
}

# The reader the core calls for rows start + 1 to start + len (over all
# partitions), on the fit's scale; it keeps the partition read last, as
# the core's passes go through the rows in order.
.partition_reader <- function(parts, template, scaling, rows) {
  last <- cumsum(rows)
  cache <- new.env(parent = emptyenv())
  cache$i <- 0L
  scaled <- function(i) {
    if (cache$i != i) {
      cache$x <- unname(.scale_inputs(.partition_inputs(parts, i, template), scaling))
      cache$i <- i
    }
    cache$x
  }
  read <- function(start, len) {
    wanted <- start + seq_len(len)
    from <- findInterval(wanted - 1, c(0, last), left.open = FALSE)
    out <- matrix(0, len, ncol(template$x))
    for (i in unique(from)) {
      here <- from == i
      out[here, ] <- scaled(i)[wanted[here] - c(0, last)[i], , drop = FALSE]
    }
    out
  }
  # (the rest for a fit on the future plan's workers, R/split-fit.R)
  list(read = read, rows = sum(rows), cols = ncol(template$x), parts = parts,
       template = template, scaling = scaling, partition_rows = rows)
}

# The inputs of a fit to partitions on the fit's scale, as .model_inputs()
# and .inducing_inputs() make them in memory: the width rule and the greedy
# choice see the evenly spaced rows they see there, gathered in one pass.
.partition_model_inputs <- function(design, parts, kernel, scale, inducing, bias = NULL) {
  .check_flag(scale, "scale")
  .check_kernel(kernel)
  template <- list(terms = design$terms, xlevels = design$xlevels, contrasts = design$contrasts,
                   x = design$x[0L, , drop = FALSE])
  n <- sum(design$rows)
  m <- if (is.numeric(inducing) && length(inducing) == 1L) inducing else 0L
  width_rows <- .evenly_spaced_rows(n, .size_rule("width_rule_max_n"))
  greedy_rows <- .evenly_spaced_rows(n, max(.size_rule("greedy_max_rows"), 4L * m))
  keep <- sort(union(width_rows, greedy_rows))
  moments <- .partition_moments(parts, template, keep)
  scaling <- .input_scaling(template$x, scale, skip = design$factor_column, moments = moments)
  xs <- .scale_inputs(moments$rows, scaling)
  kernel <- .fit_kernel(xs[match(width_rows, keep), , drop = FALSE], kernel)$kernel
  scaling <- .with_input_widths(scaling, kernel, template$x)
  xs <- .scale_inputs(moments$rows[match(greedy_rows, keep), , drop = FALSE], scaling)
  if (!is.null(bias)) {  # (the classifiers' offset, as .classif_train() adds it)
    .check_bias_scale(bias, kernel, xs)
    kernel <- .with_bias(kernel, bias)
  }
  z <- .inducing_inputs(inducing, xs, kernel, scaling)
  list(reader = .partition_reader(parts, template, scaling, design$rows), kernel = kernel,
       scaling = scaling, inducing = z)
}

# Methods that read the training inputs, which a fit to partitions lacks.
.needs_inputs <- function(object, what) {
  if (!is.null(object$partitions)) {
    .stop(sprintf(paste("%s reads the training inputs, which a fit to data in partitions does",
                        "not keep; predict() at the partitions or at new inputs instead"), what))
  }
}

# A formula method's fit when `data` is a gpsvm_partitions object.
.fit_partitions <- function(call, env, generic, parts, ...) {
  fitter <- switch(generic, mfsvr = .mfsvr_partitioned, gpc = .gpc_partitioned,
                   .stop(sprintf(paste("%s() does not fit data in partitions",
                                       "(gpsvm_partitions()); mfsvr() and gpc() with 'inducing'",
                                       "do"), generic)))
  if (!is.null(call$subset) || !is.null(call$na.action)) {
    .stop("'subset' and 'na.action' are not available for data in partitions (gpsvm_partitions())")
  }
  design <- .partition_design(parts, stats::as.formula(eval(call$formula, env)), env)
  .add_formula_parts(fitter(design, parts, call, ...), design, call)
}

# Arguments of a fitter that a fit to partitions does not take (each would
# refit or search on all rows, or hold them).
.refuse_for_partitions <- function(...) {
  given <- names(Filter(Negate(is.null), list(...)))
  if (length(given) > 0L) {
    .stop(sprintf("%s not available for data in partitions (gpsvm_partitions())",
                  .quote_names(given)))
  }
}

.needs_inducing <- function(inducing, model) {
  if (is.null(inducing)) {
    .stop(sprintf(paste("%s() on data in partitions (gpsvm_partitions()) needs inducing inputs:",
                        "give 'inducing', a count or the inputs (see ?`inducing-points`)"), model))
  }
}

# mfsvr() on partitions: one EP fit at C, the core reading the rows through
# the reader.  C not given (on standardised data) is the default's on
# evenly spaced rows, as in memory beyond search_max_n; otherwise 5.
.mfsvr_partitioned <- function(design, parts, call, C = NULL, epsilon = 0.1,
                               kernel = rbf_kernel(), control = mfsvr_control(), scale = TRUE,
                               inducing = NULL, optimize = NULL, search = NULL, bias = NULL,
                               calibration_folds = NULL) {
  .refuse_for_partitions(optimize = optimize, search = search, bias = bias,
                         calibration_folds = calibration_folds)
  .needs_inducing(inducing, "mfsvr")
  C_given <- !is.null(C)
  C <- if (C_given) .check_tube(C, "C") else .mfsvr_default_C
  epsilon <- .check_tube(epsilon, "epsilon")
  .check_control(control, "mfsvr_control")
  if (control$algorithm != "ep") .stop("'inducing' needs mfsvr_control(algorithm = \"ep\")")
  y <- .check_targets(design$y, length(design$y))
  start <- proc.time()[["elapsed"]]
  searched <- NULL
  if (!C_given && isTRUE(scale)) {
    # (the default in memory, without the offset that fits to partitions lack)
    args <- list(epsilon = epsilon, control = control, inducing = inducing, bias = 0,
                 calibration_folds = 0)
    if (!missing(kernel)) args$kernel <- kernel
    rows <- .evenly_spaced_rows(sum(design$rows), .size_rule("search_max_n"))
    searched <- .partition_search(design, parts, mfsvr.default, args, rows)
    C <- searched$C
    kernel <- gpsvm_settings(searched)$kernel
  }
  inputs <- .partition_model_inputs(design, parts, kernel, scale, inducing)
  response_scaling <- .response_scaling(y, scale)
  fit <- .mfsvr_fit(inputs$reader, .scale_response(y, response_scaling), C, epsilon,
                    inputs$kernel, control, inducing = inputs$inducing)
  fit$x <- design$x[0L, , drop = FALSE]  # (the inputs' columns; no rows are kept)
  fit$fit_time <- proc.time()[["elapsed"]] - start
  if (!is.null(response_scaling)) {
    fit$y <- y
    fit$fitted.values <- .unscale_response(fit$fitted.values, response_scaling)
    fit$residuals <- y - fit$fitted.values
  }
  fit$scaling <- inputs$scaling
  fit$response_scaling <- response_scaling
  fit$partitions <- .partition_record(parts, design, inducing)
  fit$call <- call
  if (!is.null(searched)) fit <- .with_search_choices(fit, searched)
  .with_plan(.seal(fit), "mfsvr():")
}

# A default fit in memory, fitter(x, y, args), on the rows `rows` (over all
# partitions) read in one pass: the search whose choices the fit to the
# partitions keeps.  Its search records (a classifier's, per class) count
# the rows when they are fewer than all.
.partition_search <- function(design, parts, fitter, args, rows) {
  n <- sum(design$rows)
  template <- list(terms = design$terms, xlevels = design$xlevels, contrasts = design$contrasts,
                   x = design$x[0L, , drop = FALSE])
  x <- .partition_moments(parts, template, rows)$rows
  attr(x, "factor_column") <- design$factor_column
  y <- design$y[rows]
  if (is.factor(y)) y <- droplevels(y)
  fit <- .quiet_refits(do.call(fitter, c(list(x, y), args)))
  if (length(rows) < n) {
    if (is.null(fit$models)) {
      fit$optimization$search_rows <- length(rows)
    } else {
      for (k in seq_along(fit$models)) fit$models[[k]]$optimization$search_rows <- length(rows)
    }
  }
  fit
}

# gpc() on partitions: the TAP fit at the given noise and width; what the
# call leaves open, the default's search chooses on the rows it would see in
# memory (all up to gpc_search_max_n, else search_subset_n evenly spaced),
# read from the partitions, each class's model its own; with optimize =
# FALSE, the defaults' starting values (noise 0.1, the width rule).
.gpc_partitioned <- function(design, parts, call, kernel = rbf_kernel(), noise = NULL, kappa = 0,
                             bias = 1, method = "tap", scale = TRUE, control = gpc_control(),
                             optimize = NULL, inducing = NULL, search = NULL,
                             multiclass = "ovr") {
  .refuse_for_partitions(optimize = if (!isFALSE(optimize)) optimize, search = search)
  if (!identical(method, "tap") || !identical(multiclass, "ovr")) {
    .stop(paste("data in partitions (gpsvm_partitions()) take gpc(method = \"tap\",",
                "multiclass = \"ovr\")"))
  }
  .needs_inducing(inducing, "gpc")
  noise_given <- !is.null(noise)
  noise <- if (noise_given) .check_number(noise, "noise", lower = 0) else .gpc_default_noise
  kappa <- .check_number(kappa, "kappa", lower = 0, upper = 0.5)
  if (kappa >= 0.5) .stop("'kappa' must lie in [0, 0.5): at 1/2 the labels carry no information")
  control <- .resolve_control(.check_control(control, "gpc_control"), method)
  bias <- .check_number(bias, "bias", lower = 0)
  open <- c(if (.has_width(kernel) && is.null(kernel$sigma)) "the width rule",
            if (!noise_given) sprintf("noise = %g", noise))
  labels <- .classif_labels(design$y, length(design$y))
  lev <- labels$levels
  start <- proc.time()[["elapsed"]]
  searched <- NULL
  # (the rows gpc()'s search sees in memory; a class absent from them leaves
  # the search out)
  rows <- .search_rows(length(labels$classes)) %||% seq_along(labels$classes)
  usable <- all(lev %in% labels$classes[rows])
  if (length(open) > 0L && is.null(optimize) && usable) {
    args <- list(kappa = kappa, bias = bias, method = method, scale = scale, control = control,
                 inducing = inducing, multiclass = "ovr")
    if (!"the width rule" %in% open) args$kernel <- kernel
    if (noise_given) args$noise <- noise
    searched <- .partition_search(design, parts, gpc.default, args, rows)
  }
  inputs <- .partition_model_inputs(design, parts, kernel, scale, inducing, bias)
  fit_binary <- function(x, y, kernel) {
    chosen <- NULL
    if (!is.null(searched)) {
      # (the class this model separates from the rest, and its search's model)
      chosen <- if (length(lev) > 2L) searched$models[[as.character(labels$classes[match(1, y)])]] else
        searched
      kernel <- .with_width(kernel, chosen$kernel$sigma)
      noise <- chosen$noise
    }
    model <- .gpc_fit(x, y, kernel, noise, kappa, method, control, inducing = inputs$inducing)
    model$x <- design$x[0L, , drop = FALSE]  # (the inputs' columns; no rows are kept)
    model$optimization <- chosen$optimization
    .seal(model)
  }
  what <- "gpc: TAP mean field (EP)"
  fit <- .classif_models(inputs$reader, labels, inputs$kernel, fit_binary, what)
  if (length(lev) == 2L) .warn_not_converged(what, fit$convergence)
  fit$x <- design$x[0L, , drop = FALSE]
  fit$fit_time <- proc.time()[["elapsed"]] - start
  fit$levels <- lev
  fit$classes <- labels$classes
  fit$scaling <- inputs$scaling
  fit$bias_variance <- bias
  fit$partitions <- .partition_record(parts, design, inducing)
  fit$call <- call
  if (length(open) > 0L && is.null(optimize) && !usable) {
    fit$skipped_search <- sprintf(paste("not run: a class is missing from the %d evenly spaced",
                                        "rows it would see; %s used"),
                                  length(rows), paste(open, collapse = " and "))
  }
  .with_plan(.seal(fit), "gpc():")
}

# What a fit records of its partitions (for its plan and print()).
.partition_record <- function(parts, design, inducing) {
  list(count = length(parts$sources), rows = design$rows, kind = parts$kind,
       inducing = if (is.numeric(inducing) && length(inducing) == 1L) "greedy" else "given")
}

# The plan's row for a fit to partitions.
.plan_partitions <- function(fit) {
  p <- fit$partitions
  if (is.null(p)) return(list())
  by <- if (p$inducing == "greedy") {
    paste("read one at a time in every pass; the inducing inputs the greedy choice on evenly",
          "spaced rows over all partitions (size rule greedy_max_rows), as in memory")
  } else "read one at a time in every pass; the inducing inputs the call's"
  s <- fit$split
  if (!is.null(s)) {
    by <- paste0(by, sprintf(paste0("; EP on %d workers of the future plan, each partition read",
                                    " once and kept there, %.3g MB exchanged per sweep"),
                             s$workers, s$bytes / s$sweeps / 2^20))
  }
  list(.plan_row("data", sprintf("%d partitions of %d rows in all (%s)", p$count, sum(p$rows),
                                 paste(unique(p$kind), collapse = ", ")), by))
}

# A predict() method's call (from match.call(), in `env`) evaluated at each
# partition of its newdata, the results bound in the partitions' order.
.predict_partitions <- function(object, newdata, call, env) {
  if (is.null(newdata)) {
    .stop(paste("a fit to data in partitions keeps no inputs: give them as 'newdata'",
                "(the gpsvm_partitions() object), or use fitted()"))
  }
  pieces <- lapply(seq_along(newdata$sources), function(i) {
    call[[1L]] <- quote(stats::predict)
    call$newdata <- .read_partition(newdata, i)
    eval(call, env)
  })
  .bind_pieces(pieces)
}

# Predictions of several partitions as one: vectors and factors
# concatenated, matrices and data frames bound by rows, lists (se.fit)
# element by element, residual.scale and df (the same in each) kept once.
.bind_pieces <- function(pieces) {
  first <- pieces[[1L]]
  if (is.data.frame(first) || is.matrix(first)) return(do.call(rbind, pieces))
  if (is.list(first) && !is.object(first)) {
    out <- lapply(names(first), function(name) {
      values <- lapply(pieces, `[[`, name)
      if (name %in% c("residual.scale", "df")) values[[1L]] else .bind_pieces(values)
    })
    return(stats::setNames(out, names(first)))
  }
  if (is.atomic(first) && is.null(dim(first))) return(do.call(c, pieces))
  .stop("this type of prediction is not available for data in partitions")
}
