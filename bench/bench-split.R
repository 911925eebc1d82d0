# Benchmark of mfsvr() (or, with GPSVM_BENCH_SPLIT_MODEL=gpc, a two-class
# gpc(method = "tap"), whose EP runs the accelerated schedule) on data in
# row partitions over the workers of a future plan (R/split-fit.R): the same fit in this process (the plan
# sequential) and on GPSVM_BENCH_SPLIT_WORKERS multisession workers (2),
# one after the other in this process, for each size in GPSVM_BENCH_SPLIT_N
# ("20000 200000"), the rows written to GPSVM_BENCH_SPLIT_K rds files (4).
# Printed: wall seconds of each and their ratio, CPU seconds of this process
# and of the workers (user + system, from proc.time() in each), sweeps,
# the bytes of requests and replies exchanged per sweep (serialized; the
# futures' own wrapping not counted) and the exchanges' seconds per sweep
# (each exchange's wall time beyond its slowest worker's work), the largest differences of fitted
# values and log evidence, and the peak resident memory of this process and
# of each worker (VmHWM, Linux).  The workers are started and have loaded
# gpsvm before the timing.  GPSVM_BENCH_SPLIT_NODELAY=1 sets
# options(socketOptions = "no-delay") before the workers start, so that
# this session's ends of their sockets send at once too (parallelly sets it
# on the workers' ends).
#
#   make bench BENCH=split
#   GPSVM_BENCH_SPLIT_N=200000 make bench BENCH=split
#   GPSVM_BENCH_SPLIT_MODEL=gpc GPSVM_BENCH_SPLIT_N=20000 make bench BENCH=split
#
# Data: Friedman 1 (10 inputs uniform on [0, 1], y = 10 sin(pi x1 x2) +
# 20 (x3 - 1/2)^2 + 10 x4 + 5 x5 + N(0, 1)); C = 5, epsilon = 0.1,
# GPSVM_BENCH_SPLIT_M (500) inducing inputs evenly spaced training rows.
# gpc: the labels y > 14.4 (about half), noise 0.1, the width rule.
suppressPackageStartupMessages(library(gpsvm))

sizes <- as.numeric(strsplit(trimws(Sys.getenv("GPSVM_BENCH_SPLIT_N", "20000 200000")), " +")[[1]])
k <- as.integer(Sys.getenv("GPSVM_BENCH_SPLIT_K", "4"))
workers <- as.integer(Sys.getenv("GPSVM_BENCH_SPLIT_WORKERS", "2"))
m <- as.integer(Sys.getenv("GPSVM_BENCH_SPLIT_M", "500"))
model <- Sys.getenv("GPSVM_BENCH_SPLIT_MODEL", "mfsvr")
options(gpsvm.quiet = TRUE)
fit_model <- function(parts, z) {
  if (model == "gpc") gpc(y ~ ., data = parts, noise = 0.1, inducing = z) else
    mfsvr(y ~ ., data = parts, C = 5, epsilon = 0.1, inducing = z)
}

peak_mb <- function() {
  s <- readLines("/proc/self/status")
  as.numeric(sub("[^0-9]*([0-9]+).*", "\\1", s[grep("^VmHWM", s)])) / 1024
}
cpu <- function() sum(proc.time()[c(1, 2)])
# each worker's pid, CPU seconds and peak memory (futures launched together
# land on different workers)
on_workers <- function() {
  fs <- lapply(seq_len(workers), function(j) {
    future::future(c(pid = Sys.getpid(), cpu = sum(proc.time()[c(1, 2)]), peak = peak_mb()),
                   globals = list(peak_mb = peak_mb), seed = NULL)
  })
  out <- do.call(rbind, lapply(fs, future::value))
  out[order(out[, "pid"]), , drop = FALSE]
}

cat(sprintf("%s, m = %d; load average at the start: %s (2 cores, shared: wall times are a busy machine's)\n",
            model, m, paste(readLines("/proc/loadavg"), collapse = "")))
cat(sprintf("%8s %7s %7s %6s %8s %8s %6s %10s %9s %9s %9s %s\n", "n", "one s", "split s", "ratio",
            "one cpu", "split cpu", "sweeps", "KB/sweep", "max|dfit|", "d logev", "peak one",
            "peak workers"))
for (n in sizes) {
  set.seed(2)
  x <- matrix(runif(10 * n), ncol = 10)
  y <- 10 * sin(pi * x[, 1] * x[, 2]) + 20 * (x[, 3] - 0.5)^2 + 10 * x[, 4] + 5 * x[, 5] + rnorm(n)
  frame <- data.frame(x, y = y)
  if (model == "gpc") frame$y <- factor(ifelse(y > 14.4, "high", "low"))
  z <- x[round(seq(1, n, length.out = m)), ]
  colnames(z) <- names(frame)[1:10]
  dir <- tempfile("split")
  dir.create(dir)
  cut <- round(seq(0, n, length.out = k + 1L))
  files <- file.path(dir, sprintf("part-%02d.rds", seq_len(k)))
  for (i in seq_len(k)) saveRDS(frame[(cut[i] + 1):cut[i + 1], ], files[i])
  rm(frame, x)
  parts <- gpsvm_partitions(files)
  future::plan(future::sequential)
  c0 <- cpu()
  t0 <- proc.time()[[3]]
  one <- fit_model(parts, z)
  t1 <- proc.time()[[3]]
  c1 <- cpu()
  if (Sys.getenv("GPSVM_BENCH_SPLIT_NODELAY") == "1") options(socketOptions = "no-delay")
  future::plan(future::multisession, workers = workers)
  before <- on_workers()
  c2 <- cpu()
  t2 <- proc.time()[[3]]
  split <- fit_model(parts, z)
  t3 <- proc.time()[[3]]
  c3 <- cpu()
  after <- on_workers()
  future::plan(future::sequential)
  if (is.null(split$split)) stop("the fit did not run on the workers")
  worker_cpu <- sum(after[, "cpu"] - before[, "cpu"])
  cat(sprintf("%8d %7.1f %7.1f %6.2f %8.1f %8.1f %6d %10.0f %9.2g %9.2g %9.0f %s\n",
              as.integer(n), t1 - t0, t3 - t2, (t3 - t2) / (t1 - t0), c1 - c0,
              (c3 - c2) + worker_cpu, as.integer(split$split$sweeps),
              split$split$bytes / split$split$sweeps / 1024,
              max(abs(split$fitted.values - one$fitted.values)),
              abs(split$log_evidence - one$log_evidence),
              peak_mb(), paste(sprintf("%.0f", after[, "peak"]), collapse = " + ")))
  cat(sprintf(paste("  split cpu: this process %.1f s, workers %s s; %d exchanges, their own",
                    "time %.2f s per sweep\n"), c3 - c2,
              paste(sprintf("%.1f", after[, "cpu"] - before[, "cpu"]), collapse = " + "),
              as.integer(split$split$rounds), split$split$seconds / split$split$sweeps))
  unlink(dir, recursive = TRUE)
}
