#' Running gpsvm's repeated work in parallel
#'
#' The functions that repeat independent fits, exact leave-one-out
#' ([loo_error()] with `method = "exact"`), [evidence_curve()], the grid of
#' the evidence search for `C` in [svr()] and the one-vs-rest models of
#' [svc()] and [gpc()] with three or more classes, hand their pieces of work
#' to [future.apply::future_lapply()]. Where they run is chosen with
#' [future::plan()], once, outside gpsvm: `future::sequential` (the
#' default, in the R session), `future::multisession` (background R
#' sessions), `future::multicore` (forked processes, not on Windows or in
#' RStudio), `future::cluster` with a cluster from [parallel::makeCluster()],
#' or a scheduler through a backend package such as future.batchtools.
#'
#' A single fit of [mfsvr()] to data in row partitions ([gpsvm_partitions()])
#' uses the workers of a cluster or multisession plan differently: each
#' keeps its share of the partitions for the whole fit, and the EP sweeps
#' exchange only the inducing inputs' \eqn{m \times m} sums (see
#' [gpsvm_partitions()]).
#'
#' Workers other than forked ones need gpsvm installed. The results do not
#' depend on the plan or the number of workers: each piece of work gets its
#' own L'Ecuyer-CMRG random number stream (`future.seed`), so that anything
#' random is reproducible across backends, and the random number stream of
#' the calling session is left where it was.
#'
#' Progress is reported through the progressr package and shown only when
#' asked for, either for the session with `progressr::handlers(global =
#' TRUE)` or around one call with `progressr::with_progress(...)`; the look
#' of the bar is chosen with `progressr::handlers()`.
#' @name gpsvm_parallel
#' @examples
#' set.seed(1)
#' x <- matrix(rnorm(80), 40, 2)
#' y <- factor(ifelse(x[, 1] + rnorm(40, sd = 0.5) > 0, "b", "a"))
#' fit <- svc(x, y)
#' # the default plan runs the refits in this session; with progress shown
#' progressr::with_progress(loo <- loo_error(fit, "exact"))
#' loo
#' \dontrun{
#' # the same refits on two background R sessions
#' future::plan(future::multisession, workers = 2)
#' loo_error(fit, "exact")
#' future::plan(future::sequential)
#' }
NULL

# lapply(xs, f) through future.apply, each call with its own random number
# stream and one progress step; the caller's random state is restored, so
# work that draws no random numbers leaves it untouched whatever the plan.
.future_map <- function(xs, f, ...) {
  if (length(xs) == 0L) return(list())
  restore <- .keep_random_state()
  on.exit(restore(), add = TRUE)
  step <- progressr::progressor(steps = length(xs))
  done <- future.apply::future_lapply(xs, .stepping(f, step), ..., future.seed = TRUE)
  .count_fit(sum(vapply(done, `[[`, numeric(1), "fits")))
  lapply(done, `[[`, "value")
}

# f followed by one progress step, made here so that the function sent to
# the workers carries only f and the progressor, not the list mapped over.
# It returns f's value and the model fits it ran, taken off the count where
# it ran, so that .future_map() counts them once on any plan.
.stepping <- function(f, step) {
  force(f)
  force(step)
  function(x, ...) {
    before <- .costs$fits
    out <- f(x, ...)
    fits <- .costs$fits - before
    .costs$fits <- before
    step()
    list(value = out, fits = fits)
  }
}

# A function that puts .Random.seed back as it is now, or if there is none
# the generator's kinds (future.seed switches to L'Ecuyer-CMRG).
.keep_random_state <- function() {
  env <- globalenv()
  had <- exists(".Random.seed", envir = env, inherits = FALSE)
  seed <- if (had) get(".Random.seed", envir = env, inherits = FALSE) else NULL
  kind <- if (had) NULL else RNGkind()
  function() {
    if (had) {
      assign(".Random.seed", seed, envir = env)
      return(invisible(NULL))
    }
    RNGkind(kind[1], kind[2], kind[3])
    if (exists(".Random.seed", envir = env, inherits = FALSE)) rm(".Random.seed", envir = env)
  }
}

#' Threads of the fits' matrix work
#'
#' Each EP sweep of a fit on an inducing-point (`inducing =`) or low-rank
#' prior, in [mfsvr()] and [gpc()], passes twice over an n x m matrix, and
#' choosing the inducing inputs passes over it once per input chosen; a
#' sweep on the full kernel matrix factors an n x n matrix (as do the
#' relevance vector machines' posteriors over their basis). That work is
#' split between threads. `gpsvm_threads()` says how many threads are used
#' and sets that number.
#'
#' The results do not depend on the number of threads: every number is
#' computed in the same order on any number of them. Forked processes (a
#' `future::multicore` plan, [parallel::mclapply()]) run on one thread. A
#' threaded loop starts no more threads than there are processors idle (on
#' Linux, the processors less the other runnable threads): a round of
#' threads waits for its slowest, so on a busy machine two threads could take
#' longer than one ("Performance" below).
#' `options(gpsvm.threads_follow_load = FALSE)` before `gpsvm_threads(n)`
#' starts them whatever the load.
#'
#' When the package is loaded the number is the option `gpsvm.threads`, else
#' the environment variable `GPSVM_THREADS`, else what
#' [future::availableCores()] reports: the machine's cores, limited by the
#' usual settings (`mc.cores`, cgroups, a batch scheduler's allocation, and 2
#' under `R CMD check --as-cran`). `OMP_THREAD_LIMIT` caps it further. The
#' number set is at most the processors the process may run on (more only
#' wait for each other): `gpsvm_threads(1000)` on two cores sets 2.
#' Threads only start where the work is large enough to gain from them: a
#' pass over an n x m matrix, or another loop over blocks of rows
#' (predictions, gradients in the kernel's widths, cross products), of at
#' least 5e7 multiply-adds (n m^2 for a pass; 200 rows at m = 500, 4435 at
#' m = 300, none at the rank of a linear kernel), the greedy choice of
#' inducing inputs on 8192 rows or more, a factorisation or Gram matrix of
#' order 512 or more; smaller fits, and the solvers that work one site or
#' one pair at a time, run on one thread whatever the setting.
#'
#' @section Performance:
#' Measured up to 2026-12-02 (gpsvm 0.1.0, development version, on 2-core
#' machines; `bench/bench-threads.R` in the sources): a sweep at 10^5
#' observations and 500 inducing inputs took 0.6 to 0.75 times as long on
#' two threads as on one, a dense sweep at 700 and 2000 observations 0.55
#' to 0.6 times, and [gpc()]'s default fit on 4435 rows (FITC on 300
#' inputs) 0.65 times. With a dozen runnable threads of other work, dense
#' [mfsvr()] fits on 300 to 1500 rows took 1.2 to 3 times as long on two
#' threads as on one when the threads did not follow the load, and the same
#' time when they did. 1000 threads on two cores made a 300-row [mfsvr()]
#' fit take 8 to 11 s instead of 0.04 s.
#'
#' @param threads `NULL` (the default) to ask, or a whole number >= 1 to set
#'   (at most the processors available; more count as their number).
#' @return The number of threads in use; when setting, the number before,
#'   invisibly.
#' @examples
#' gpsvm_threads()
#' old <- gpsvm_threads(1)  # one thread for what follows
#' gpsvm_threads(old)       # and back
#' @export
gpsvm_threads <- function(threads = NULL) {
  if (is.null(threads)) return(cpp_threads(NULL, TRUE))
  threads <- .check_count(threads, "threads", lower = 1L)
  old <- cpp_threads(NULL, TRUE)
  cpp_threads(as.integer(min(threads, 1024L)), .follow_load())
  invisible(old)
}

# Whether threaded loops follow the load (?gpsvm_threads): TRUE unless the
# option gpsvm.threads_follow_load is FALSE.
.follow_load <- function() !isFALSE(getOption("gpsvm.threads_follow_load"))

# The number of threads a session starts with (see ?gpsvm_threads); a bad
# option or variable is ignored with a warning rather than failing the load.
.default_threads <- function() {
  given <- getOption("gpsvm.threads", Sys.getenv("GPSVM_THREADS", ""))
  if (!identical(given, "")) {
    value <- suppressWarnings(as.numeric(given))
    if (length(value) == 1L && !is.na(value) && value >= 1 && value == round(value)) {
      return(as.integer(min(value, 1024)))
    }
    warning(sprintf("gpsvm: ignoring the thread count '%s' (option gpsvm.threads or GPSVM_THREADS)",
                    paste(given, collapse = " ")), call. = FALSE)
  }
  cores <- tryCatch(future::availableCores(), error = function(e) 1L)
  max(1L, as.integer(cores[[1]]))
}
