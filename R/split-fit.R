# A fit to data in partitions on the workers of the future plan: each
# worker reads its partitions once and keeps them, with their EP sites, for
# the whole fit; every sweep sends the workers the m x m factor L_A and the
# m-vector beta and gets back their m x m and m sums (ep_split.hpp), so the
# rows never travel and the fit is the one-process fit to rounding.
#
# Why future's cluster and multisession workers: they are persistent R
# processes, so a worker keeps what a future left in the package's namespace
# (`.split_store`, keyed by the fit's id) for the next future, and n futures
# launched together go to n different workers, which is how every sweep
# reaches every held part.  Backends that start a process per future would
# read every partition again: they get the one-process fit instead.  An
# exchange is one future per worker: a multisession plan keeps its cluster
# where parallel::clusterCall() cannot reach it.

# What workers hold between futures: the parts of the fits under way, by id.
.split_store <- new.env(parent = emptyenv())

# The number of workers a split fit uses: those of a cluster or
# multisession plan, else 0 (a fit in this process).
.split_workers <- function() {
  if (!inherits(future::plan("next"), "cluster")) return(0L)
  workers <- future::nbrOfWorkers()
  if (is.finite(workers) && workers >= 2L) as.integer(workers) else 0L
}

# The worker of each partition: contiguous runs of partitions of about the
# same number of rows, one run per worker.
.split_chunks <- function(rows, workers) {
  middle <- cumsum(rows) - rows / 2
  chunk <- findInterval(middle, seq(0, sum(rows), length.out = workers + 1L),
                        rightmost.closed = TRUE, all.inside = TRUE)
  match(chunk, unique(chunk))
}

# On a worker: reads partitions `index` (of `parts`), scales them and makes
# their parts (cpp_ep_part_new()), kept under `id`.  `held_rows`: the size
# rule inducing_factor_mb applied in the calling session, whose options the
# workers do not share.
.split_setup <- function(id, chunk, parts, index, first, y, held_rows, template, scaling, kernel,
                         model) {
  held <- lapply(seq_along(index), function(k) {
    x <- unname(.scale_inputs(.partition_inputs(parts, index[[k]], template), scaling))
    model$inducing_held_rows <- held_rows[[k]]
    cpp_ep_part_new(kernel, x, y[[k]], model, first[[k]])
  })
  assign(id, list(chunk = chunk, parts = held), envir = .split_store)
  chunk
}

# On a worker: its parts' reply to a request, combined (NULL from a worker
# that holds none of fit `id`), or their release (`release`); with the
# seconds its work took (the driver tells the exchange's time from it).  The
# last request (`finish`) also takes the parts' rows of the fit and releases
# them.
.split_answer <- function(id, request, release = FALSE) {
  held <- get0(id, envir = .split_store, inherits = FALSE)
  if (release) {
    if (!is.null(held)) rm(list = id, envir = .split_store)
    return(NULL)
  }
  if (is.null(held)) return(NULL)
  start <- proc.time()[[3]]
  out <- list(chunk = held$chunk, replies = list(cpp_ep_parts_answer(held$parts, request)))
  if (isTRUE(request$finish)) {
    out$rows <- lapply(held$parts, cpp_ep_part_result)
    rm(list = id, envir = .split_store)
  }
  out$seconds <- proc.time()[[3]] - start
  out
}

# One future per worker, all launched before any is collected, so that each
# lands on a different worker: f(...) with the arguments `each[[j]]` added
# for the j-th; their values in launch order.
.split_round <- function(workers, f, ..., each = NULL) {
  futures <- lapply(seq_len(workers), function(j) {
    args <- c(list(...), each[[j]])
    future::future(do.call(f, args), globals = list(f = f, args = args), packages = "gpsvm",
                   seed = NULL)
  })
  lapply(futures, future::value)
}

# The reader of partitions when `x` is one, else NULL.
.split_reader <- function(x) if (is.list(x) && !is.null(x$parts)) x

# The EP fit on partitions over `workers` workers, as cpp_mfsvr_fit() or
# cpp_gpc_tap_fit() returns it; NULL when the run needs a schedule the split
# does not follow.  `model`: the likelihood's settings (C and epsilon, or
# noise and kappa); ctl: the control with the inducing inputs.
.split_ep_fit <- function(reader, y, kernel, ctl, workers, model) {
  parts <- reader$parts
  k <- length(parts$sources)
  chunk <- .split_chunks(reader$partition_rows, min(workers, k))
  workers <- max(chunk)
  first <- cumsum(reader$partition_rows) - reader$partition_rows
  ys <- split(y, rep(seq_len(k), reader$partition_rows))
  .split_store$count <- (.split_store$count %||% 0L) + 1L
  id <- sprintf("fit-%d-%d", Sys.getpid(), .split_store$count)
  model$inducing <- ctl$inducing
  step <- progressr::progressor(steps = k + 1L)
  rows <- NULL  # the parts' rows of the fit, with the reply to `finish`
  on.exit(if (is.null(rows)) {
    .split_round(workers, .split_answer, id = id, request = NULL, release = TRUE)
  }, add = TRUE)
  held <- unlist(.split_round(workers, .split_setup, id = id, template = reader$template,
                              scaling = reader$scaling, kernel = kernel, model = model,
                              each = lapply(seq_len(workers), function(j) {
    index <- which(chunk == j)
    mine <- parts
    mine$sources[-index] <- list(NULL)  # (data frames go only to their worker)
    list(chunk = j, parts = mine, index = index, first = first[index], y = ys[index],
         held_rows = lapply(reader$partition_rows[index], .inducing_held_rows,
                            m = nrow(ctl$inducing)))
  })))
  step(amount = k, message = "partitions read on the workers")
  # (each round checks that every chunk replied once: workers that run other
  # futures too may get two chunks; bytes: the requests and replies
  # serialized; seconds: each round's wall time beyond its slowest worker's)
  exchanged <- c(bytes = 0, rounds = 0, seconds = 0)
  gather <- function(request) {
    start <- proc.time()[[3]]
    values <- .split_round(workers, .split_answer, id = id, request = request)
    wall <- proc.time()[[3]] - start
    chunks <- vapply(values, function(v) if (is.null(v)) NA_integer_ else v$chunk, 1L)
    if (anyNA(chunks) || anyDuplicated(chunks)) {
      .stop(paste("the workers of the future plan do not hold the partitions they read",
                  "(a worker was restarted, or the plan's workers are busy with other futures);",
                  "fit again, or with future::plan(future::sequential)"))
    }
    values <- values[order(chunks)]
    replies <- unlist(lapply(values, `[[`, "replies"), recursive = FALSE)
    if (isTRUE(request$finish)) rows <<- unlist(lapply(values, `[[`, "rows"), recursive = FALSE)
    work <- max(vapply(values, `[[`, 0, "seconds"))
    exchanged <<- exchanged + c(workers * length(serialize(request, NULL)) +
                                  length(serialize(replies, NULL)), 1, max(0, wall - work))
    if (isTRUE(request$marginals) && !isTRUE(request$perturbed)) {
      step(amount = 0, message = "an EP sweep")
    }
    replies
  }
  if (!setequal(held, seq_len(workers)) || anyDuplicated(held)) {
    .stop("the workers of the future plan did not each set up their partitions")
  }
  .count_fit()
  run <- cpp_ep_split_run(gather, workers, nrow(ctl$inducing), ctl)
  if (!is.null(run$unavailable)) return(NULL)
  if (is.null(rows)) .stop("the split fit ended without the workers' rows of the fit")
  step(message = "the fit's rows gathered")
  out <- lapply(c(weights = "weights", site_precision = "site_precision", site_nu = "site_nu",
                  cavity_mean = "cavity_mean", cavity_var = "cavity_var", mean = "mean",
                  variance = "variance", fitted = "fitted", fitted_variance = "fitted_variance"),
                function(name) unlist(lapply(rows, `[[`, name)))
  c(out, run[c("chol", "log_evidence", "convergence")],
    list(factor = matrix(0, 0, 0), inducing_chol = rows[[1L]]$inducing_chol,
         inducing_weights = rows[[1L]]$inducing_weights,
         split = list(workers = workers, partitions = k,
                      sweeps = run$convergence$iterations,
                      bytes = exchanged[["bytes"]], rounds = exchanged[["rounds"]],
                      seconds = exchanged[["seconds"]])))
}
