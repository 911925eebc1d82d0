# Benchmark: the largest N each fitting function fits within a time and a
# memory limit (by default 60 s and 8 GB) on 2-D inputs, with each model's
# default settings (the width of rbf_kernel() chosen from the data, inputs
# and response scaled) unless the table says otherwise.
#
#   make bench BENCH=scale
#   GPSVM_BENCH_SCALE_SECONDS=5 GPSVM_BENCH_SCALE_GB=1 make bench BENCH=scale
#   GPSVM_BENCH_SCALE_MODELS="svr rvm" make bench BENCH=scale
#
# Settings (environment variables):
#   GPSVM_BENCH_SCALE_SECONDS  time limit of one fit, seconds (60)
#   GPSVM_BENCH_SCALE_GB       memory limit, peak resident set in GB (8)
#   GPSVM_BENCH_SCALE_START    first N (500); N doubles from there
#   GPSVM_BENCH_SCALE_MAX      largest N tried (1024000)
#   GPSVM_BENCH_SCALE_MODELS   models to run, names from the table below (all)
#
# For each model N doubles until a fit fails: it takes longer than the time
# limit, its process grows past the memory limit, or it stops with an error.
# Every fit runs in a fresh R process (Rscript --vanilla), which builds the
# data, fits once and reports the fit's elapsed time and its own peak
# resident set (VmHWM in /proc/self/status).  This process watches the child
# every 0.1 s, reads its VmHWM, and kills it once it passes either limit
# (the time limit counts from the start of the fit; the child's start-up and
# data set are not charged).  Linux only (/proc).
#
# The figures are for a quiet machine: anything else running on the cores
# lengthens the times and so lowers the largest N.
suppressPackageStartupMessages(library(gpsvm))

env_number <- function(name, default) {
  value <- as.numeric(Sys.getenv(name, as.character(default)))
  if (!is.finite(value) || value <= 0) stop(sprintf("%s must be a positive number", name))
  value
}
limit_seconds <- env_number("GPSVM_BENCH_SCALE_SECONDS", 60)
limit_kb <- env_number("GPSVM_BENCH_SCALE_GB", 8) * 1024^2
start_n <- env_number("GPSVM_BENCH_SCALE_START", 500)
max_n <- env_number("GPSVM_BENCH_SCALE_MAX", 1024000)
if (!file.exists("/proc/self/status")) stop("bench-scale needs Linux's /proc")

# The models: the call made on the child's data x (n x 2) and y, and the
# kind of data.  Regression: y = sin(2 x1) cos(x2) + N(0, 0.2^2); two classes
# overlapping as in the scale issue's classifier example: x ~ N(0, I_2),
# y = sign(x1 + 0.7 x2^2 + N(0, 0.7^2) - 0.5).
has_argument <- function(fun, arg) arg %in% names(formals(getS3method(fun, "default")))
models <- list(
  svr = list(call = "svr(x, y)", data = "regression"),
  mfsvr = list(call = "mfsvr(x, y)", data = "regression"),
  rvm = list(call = "rvm(x, y)", data = "regression"),
  srvm = list(call = "srvm(x, y)", data = "regression"),
  svc = list(call = "svc(x, y)", data = "classification"),
  gpc_tap = list(call = "gpc(x, y)", data = "classification"),
  gpc_naive = list(call = "gpc(x, y, method = \"naive\")", data = "classification")
)
# the inducing-point fits, where the installed gpsvm has them
if (has_argument("mfsvr", "inducing")) {
  models$mfsvr_inducing <- list(call = "mfsvr(x, y, inducing = 500)", data = "regression")
}
if (has_argument("gpc", "inducing")) {
  models$gpc_tap_inducing <- list(call = "gpc(x, y, inducing = 200)", data = "classification")
}
wanted <- strsplit(trimws(Sys.getenv("GPSVM_BENCH_SCALE_MODELS", "")), "[ ,]+")[[1]]
if (length(wanted) > 0L) {
  unknown <- setdiff(wanted, names(models))
  if (length(unknown)) {
    stop(sprintf("no model %s; there are: %s", paste(unknown, collapse = ", "),
                 paste(names(models), collapse = ", ")))
  }
  models <- models[wanted]
}

# The child's script: data, one fit, then a line
# "RESULT <seconds> <VmHWM kB> <converged: 1, 0, or NA without a record>".
# It writes its process id first, so that this process can watch it.
child_script <- function(model, n, pid_file, out_file) {
  data <- switch(model$data,
    regression = c("x <- matrix(rnorm(2 * n), n, 2)",
                   "y <- sin(2 * x[, 1]) * cos(x[, 2]) + rnorm(n, sd = 0.2)"),
    classification = c("x <- matrix(rnorm(2 * n), n, 2)",
                       "y <- factor(sign(x[, 1] + 0.7 * x[, 2]^2 + rnorm(n, sd = 0.7) - 0.5))"))
  c(sprintf("writeLines(as.character(Sys.getpid()), %s)", deparse(pid_file)),
    "suppressPackageStartupMessages(library(gpsvm))",
    sprintf("n <- %d", as.integer(n)), "set.seed(n)", data,
    "writeLines('FITTING', paste0(commandArgs(TRUE)[1], '.start'))",
    sprintf("seconds <- system.time(fit <- suppressWarnings(%s))[['elapsed']]", model$call),
    "status <- readLines('/proc/self/status')",
    "hwm <- as.numeric(gsub('[^0-9]', '', grep('^VmHWM', status, value = TRUE)))",
    "converged <- as.integer(if (is.null(fit$convergence$converged)) NA else fit$convergence$converged)",
    sprintf("writeLines(sprintf('RESULT %%.3f %%.0f %%d', seconds, hwm, converged), %s)",
            deparse(out_file)))
}

vm_hwm_kb <- function(pid) {
  status <- tryCatch(suppressWarnings(readLines(sprintf("/proc/%d/status", pid))),
                     error = function(e) character(0))
  line <- grep("^VmHWM", status, value = TRUE)
  if (length(line) == 0L) NA_real_ else as.numeric(gsub("[^0-9]", "", line))
}

# Running, not yet a zombie (an exited child that nobody has reaped, which
# happens where the container's first process does not reap orphans).
alive <- function(pid) {
  status <- tryCatch(suppressWarnings(readLines(sprintf("/proc/%d/status", pid))),
                     error = function(e) character(0))
  length(status) > 0L && !any(grepl("^State:\\s+[ZX]", status))
}

# One fit in a fresh process, watched: list(outcome, seconds, peak_gb, note).
run_child <- function(model, n) {
  dir <- tempfile("scale-")
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE), add = TRUE)
  files <- file.path(dir, c("pid", "result", "child.R", "stderr"))
  writeLines(child_script(model, n, files[1], files[2]), files[3])
  system2(file.path(R.home("bin"), "Rscript"),
          c("--vanilla", shQuote(files[3]), shQuote(file.path(dir, "child"))),
          stdout = FALSE, stderr = files[4], wait = FALSE)
  started <- Sys.time()
  while (!file.exists(files[1]) || length(readLines(files[1], warn = FALSE)) == 0L) {
    if (as.numeric(Sys.time() - started, units = "secs") > 120) {
      return(list(outcome = "error", note = "the child did not start"))
    }
    Sys.sleep(0.05)
  }
  pid <- as.integer(readLines(files[1]))
  fit_start <- NULL
  peak <- 0
  outcome <- NULL
  while (alive(pid)) {
    peak <- max(peak, vm_hwm_kb(pid), na.rm = TRUE)
    if (is.null(fit_start) && file.exists(file.path(dir, "child.start"))) fit_start <- Sys.time()
    over_time <- !is.null(fit_start) &&
      as.numeric(Sys.time() - fit_start, units = "secs") > limit_seconds
    if (peak > limit_kb) outcome <- "memory"
    if (over_time) outcome <- "time"
    if (!is.null(outcome)) {
      tools::pskill(pid, tools::SIGKILL)
      break
    }
    Sys.sleep(0.1)
  }
  while (alive(pid)) Sys.sleep(0.05)
  result <- if (file.exists(files[2])) readLines(files[2]) else character(0)
  if (is.null(outcome) && length(result) == 1L && startsWith(result, "RESULT")) {
    fields <- as.numeric(strsplit(result, " ")[[1]][-1])
    peak <- max(peak, fields[2])
    outcome <- if (fields[1] > limit_seconds) "time" else if (peak > limit_kb) "memory" else "ok"
    return(list(outcome = outcome, seconds = fields[1], peak_gb = peak / 1024^2,
                converged = as.logical(fields[3]),
                note = if (identical(fields[3], 0)) "(not converged)" else ""))
  }
  if (is.null(outcome)) {
    err <- if (file.exists(files[4])) readLines(files[4], warn = FALSE) else character(0)
    err <- grep("Error|error|bad_alloc|Killed", err, value = TRUE)
    outcome <- "error"
    note <- if (length(err)) substr(trimws(err[1]), 1, 60) else "the child died"
  } else {
    note <- ""
  }
  seconds <- if (!is.null(fit_start)) as.numeric(Sys.time() - fit_start, units = "secs") else NA
  list(outcome = outcome, seconds = seconds, peak_gb = peak / 1024^2, converged = NA, note = note)
}

cat(sprintf(paste("Largest N fitted within %g s and %g GB (2-D inputs, doubling N from %d;",
                  "%d cores, %s)\n"),
            limit_seconds, limit_kb / 1024^2, as.integer(start_n), parallel::detectCores(),
            format(Sys.time(), "%Y-%m-%d %H:%M %Z")))
rows <- list()
for (name in names(models)) {
  model <- models[[name]]
  best <- list(n = NA_integer_, seconds = NA_real_, peak_gb = NA_real_, converged = NA)
  stop_reason <- sprintf("reached the cap N = %d", as.integer(max_n))
  n <- start_n
  while (n <= max_n) {
    r <- run_child(model, n)
    cat(sprintf("  %-16s N = %7d: %-6s %s%8.2f s %6.2f GB %s\n", name, as.integer(n), r$outcome,
                if (r$outcome == "time") ">" else " ", r$seconds, r$peak_gb, r$note))
    if (r$outcome != "ok") {
      stop_reason <- sprintf("N = %d: %s%s", as.integer(n), switch(r$outcome,
        time = sprintf("over %g s", limit_seconds),
        memory = sprintf("over %g GB (%.1f GB when stopped)", limit_kb / 1024^2, r$peak_gb),
        error = "error"), if (nzchar(r$note)) paste0(" (", r$note, ")") else "")
      break
    }
    best <- list(n = as.integer(n), seconds = r$seconds, peak_gb = r$peak_gb,
                 converged = r$converged)
    n <- 2 * n
  }
  rows[[name]] <- data.frame(model = name, call = model$call, largest_N = best$n,
                             seconds = round(best$seconds, 2), peak_GB = round(best$peak_gb, 2),
                             converged = best$converged, next_step = stop_reason)
}
cat("\n")
options(width = 200)
print(do.call(rbind, rows), row.names = FALSE, right = FALSE)
