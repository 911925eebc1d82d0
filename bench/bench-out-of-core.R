# Benchmark of FITC fits whose n x m cross-kernel factor is not held in
# memory (size rule inducing_factor_mb, ?gpsvm_size_policy): mfsvr() and
# gpc() with 500 inducing inputs on Friedman's first function (10 inputs),
# the factor held (the default up to 1000 MB) against its rows recomputed in
# every sweep (a budget of GPSVM_BENCH_OOC_MB megabytes, 64 by default), in
# the same process one after the other: the CPU seconds of each (user +
# system, every thread: wall time says little on a shared machine), their ratio, the
# sweeps, the largest difference between the two fits' fitted values, and
# the peak resident memory of a fresh process that makes the out-of-core
# fit alone.  From the per-sweep time and memory it states what 10^6 and
# 10^7 rows would take (linear in n at fixed m).
#
#   make bench BENCH=out-of-core
#   GPSVM_BENCH_OOC_N="20000 100000" GPSVM_BENCH_OOC_MB=64 make bench BENCH=out-of-core
#   GPSVM_BENCH_OOC_N=0 GPSVM_BENCH_PART_N=200000 make bench BENCH=out-of-core  # partitions only
#
# GPSVM_BENCH_OOC_ONCE=mfsvr (or gpc) makes only that model's out-of-core
# fit, once, in this process, at each size (for 10^6 rows, where the held
# fit and a second process would triple the time; run it under
# /usr/bin/time -v for the whole process's peak and CPU): the data's
# megabytes, this process's peak resident memory before and after the fit,
# the fit's CPU seconds, sweeps and CPU seconds a sweep.  The partitions
# part is skipped.
#
#   GPSVM_BENCH_OOC_ONCE=gpc GPSVM_BENCH_OOC_N=1000000 GPSVM_BENCH_OOC_MB=1000 \
#     /usr/bin/time -v Rscript bench/bench-out-of-core.R
#
# Then data in row partitions (gpsvm_partitions()): mfsvr(y ~ ., inducing =)
# on GPSVM_BENCH_PART_N rows (2 x 10^5 by default; 0 skips it) written to
# GPSVM_BENCH_PART_K rds files (4), against the same fit to the rows bound
# in one data frame, both at the budget above: the time of each in this
# process, the largest difference of their fitted values, and the peak
# resident memory of fresh processes that read the files and make one fit
# each (the in-memory one reads and binds every file first).
#
# Data: x uniform on [0, 1]^10, y = 10 sin(pi x1 x2) + 20 (x3 - 1/2)^2 +
# 10 x4 + 5 x5 + N(0, 1) (Friedman 1991; x6..x10 are noise inputs).  The
# fits fix their hyperparameters (mfsvr: C = 5, epsilon = 0.1; gpc: noise
# 0.1, labels y > 14.4, about half), the width is the data's rule, the 500
# inducing inputs are evenly spaced training rows (no greedy choice in the
# timings).  Peak memory: VmHWM of /proc/self/status (Linux).
suppressPackageStartupMessages(library(gpsvm))

sizes <- as.numeric(strsplit(trimws(Sys.getenv("GPSVM_BENCH_OOC_N", "20000 100000")), " +")[[1]])
sizes <- sizes[sizes > 0]
budget <- as.numeric(Sys.getenv("GPSVM_BENCH_OOC_MB", "64"))
m <- 500L

friedman1 <- function(n, seed) {
  set.seed(seed)
  x <- matrix(runif(10 * n), ncol = 10)
  y <- 10 * sin(pi * x[, 1] * x[, 2]) + 20 * (x[, 3] - 0.5)^2 + 10 * x[, 4] + 5 * x[, 5] +
    rnorm(n)
  list(x = x, y = y, z = x[round(seq(1, n, length.out = m)), ])
}

# CPU seconds of this process so far (user + system, all its threads).
cpu_now <- function() sum(proc.time()[1:2])

fit_one <- function(model, d, mb) {
  op <- options(gpsvm.size_policy = list(inducing_factor_mb = mb), gpsvm.quiet = TRUE)
  on.exit(options(op))
  t0 <- cpu_now()
  fit <- if (model == "mfsvr") {
    mfsvr(d$x, d$y, C = 5, epsilon = 0.1, inducing = d$z)
  } else {
    gpc(d$x, factor(d$y > 14.4), noise = 0.1, optimize = FALSE, inducing = d$z)
  }
  list(seconds = cpu_now() - t0, fit = fit)
}

# Peak resident memory (MB) of a fresh process making the out-of-core fit.
peak_mb <- function(model, n) {
  code <- sprintf(paste(
    "suppressPackageStartupMessages(library(gpsvm)); set.seed(1);",
    "x <- matrix(runif(10 * %d), ncol = 10);",
    "y <- 10 * sin(pi * x[, 1] * x[, 2]) + 20 * (x[, 3] - 0.5)^2 + 10 * x[, 4] + 5 * x[, 5] + rnorm(%d);",
    "z <- x[round(seq(1, %d, length.out = %d)), ];",
    "options(gpsvm.size_policy = list(inducing_factor_mb = %g), gpsvm.quiet = TRUE);",
    "fit <- %s;",
    "s <- readLines('/proc/self/status');",
    "cat(as.numeric(sub('[^0-9]*([0-9]+).*', '\\\\1', s[grep('^VmHWM', s)])) / 1024, '\\n')"),
    n, n, n, m, budget,
    if (model == "mfsvr") "mfsvr(x, y, C = 5, epsilon = 0.1, inducing = z)" else
      "gpc(x, factor(y > 14.4), noise = 0.1, optimize = FALSE, inducing = z)")
  out <- system2(file.path(R.home("bin"), "Rscript"), c("--vanilla", "-e", shQuote(code)),
                 stdout = TRUE)
  as.numeric(out[length(out)])
}

cat(sprintf("load average at the start: %s (2 cores; figures from a busy machine are slower)\n",
            paste(readLines("/proc/loadavg"), collapse = "")))
cat(sprintf("m = %d inducing inputs, out-of-core budget %g MB\n\n", m, budget))

# This process's peak resident memory so far (MB).
own_peak_mb <- function() {
  s <- readLines("/proc/self/status")
  as.numeric(sub("[^0-9]*([0-9]+).*", "\\1", s[grep("^VmHWM", s)])) / 1024
}
once <- Sys.getenv("GPSVM_BENCH_OOC_ONCE")
if (nzchar(once)) {
  if (!once %in% c("mfsvr", "gpc")) stop("GPSVM_BENCH_OOC_ONCE must be mfsvr or gpc")
  for (n in sizes) {
    d <- friedman1(n, 1)
    data_mb <- (object.size(d$x) + object.size(d$y)) / 2^20
    before <- own_peak_mb()
    ooc <- fit_one(once, d, budget)
    conv <- if (!is.null(ooc$fit$convergence)) ooc$fit$convergence else
      ooc$fit$models[[1]]$convergence
    cat(sprintf(paste("%s n = %d: data %.1f MB (x and y); peak before the fit %.0f MB, after %.0f MB;",
                      "fit %.1f CPU s, %d sweeps, %.2f CPU s a sweep; load average now %s\n"),
                once, as.integer(n), data_mb, before, own_peak_mb(), ooc$seconds,
                as.integer(conv$iterations), ooc$seconds / conv$iterations,
                paste(readLines("/proc/loadavg"), collapse = "")))
    rm(d, ooc)
    invisible(gc())
  }
  quit(save = "no")
}
if (length(sizes) > 0L) {
  cat(sprintf("%-6s %8s %9s %9s %6s %7s %10s %9s %11s\n", "model", "n", "held CPU", "ooc CPU",
              "ratio", "sweeps", "max |diff|", "peak MB", "CPU s/sweep"))
}
per_row <- list()
for (model in c("mfsvr", "gpc")) {
  for (n in sizes) {
    d <- friedman1(n, 1)
    held <- fit_one(model, d, 1000)
    ooc <- fit_one(model, d, budget)
    diff <- max(abs(ooc$fit$fitted.values - held$fit$fitted.values))
    # (a two-class gpc() fit is its binary model)
    conv <- if (!is.null(ooc$fit$convergence)) ooc$fit$convergence else
      ooc$fit$models[[1]]$convergence
    sweeps <- conv$iterations
    peak <- peak_mb(model, n)
    cat(sprintf("%-6s %8d %9.1f %9.1f %6.2f %7d %10.2g %9.0f %11.3f\n", model, as.integer(n),
                held$seconds, ooc$seconds, ooc$seconds / held$seconds, as.integer(sweeps), diff,
                peak, ooc$seconds / sweeps))
    per_row[[model]] <- rbind(per_row[[model]], c(n = n, seconds = ooc$seconds, peak = peak))
    rm(d, held, ooc)
    invisible(gc())
  }
}

# Time is linear in n at a fixed number of sweeps; memory beyond the budget
# too, but R's own baseline does not grow, so its slope comes from the two
# largest sizes (with one size, none is stated).
if (length(sizes) > 0L) cat("\nlinear extrapolation from the largest n (same sweeps):\n")
for (model in names(per_row)) {
  r <- per_row[[model]]
  last <- r[nrow(r), ]
  slope <- if (nrow(r) >= 2L) diff(r[nrow(r) - 1:0, "peak"]) / diff(r[nrow(r) - 1:0, "n"])
  for (target in c(1e6, 1e7)) {
    f <- target / last[["n"]]
    memory <- if (is.null(slope)) "peak not extrapolated (one size)" else
      sprintf("peak about %.1f GB", (last[["peak"]] + slope * (target - last[["n"]])) / 1024)
    cat(sprintf("  %-6s n = %.0e: about %.0f min, %s\n", model, target,
                f * last[["seconds"]] / 60, memory))
  }
}

# ---- data in row partitions ---------------------------------------------------

part_n <- as.numeric(Sys.getenv("GPSVM_BENCH_PART_N", "200000"))
part_k <- as.integer(Sys.getenv("GPSVM_BENCH_PART_K", "4"))

# Peak resident memory (MB) of a fresh process that runs `code` after
# loading gpsvm with the budget set (the files and inducing inputs in `dir`).
peak_of <- function(code, dir) {
  script <- sprintf(paste(
    "suppressPackageStartupMessages(library(gpsvm));",
    "files <- sort(Sys.glob(file.path('%s', 'part-*.rds')));",
    "z <- readRDS(file.path('%s', 'z.rds'));",
    "options(gpsvm.size_policy = list(inducing_factor_mb = %g), gpsvm.quiet = TRUE);",
    "%s;",
    "s <- readLines('/proc/self/status');",
    "cat(as.numeric(sub('[^0-9]*([0-9]+).*', '\\\\1', s[grep('^VmHWM', s)])) / 1024, '\\n')"),
    dir, dir, budget, code)
  out <- system2(file.path(R.home("bin"), "Rscript"), c("--vanilla", "-e", shQuote(script)),
                 stdout = TRUE)
  as.numeric(out[length(out)])
}

if (part_n > 0) {
  d <- friedman1(part_n, 2)
  frame <- data.frame(d$x, y = d$y)
  dir <- tempfile("partitions")
  dir.create(dir)
  cut <- round(seq(0, part_n, length.out = part_k + 1L))
  for (k in seq_len(part_k)) {
    saveRDS(frame[(cut[k] + 1):cut[k + 1], ], file.path(dir, sprintf("part-%02d.rds", k)))
  }
  saveRDS(d$z, file.path(dir, "z.rds"))
  colnames(d$z) <- names(frame)[1:10]
  parts <- gpsvm_partitions(sort(Sys.glob(file.path(dir, "part-*.rds"))))
  op <- options(gpsvm.size_policy = list(inducing_factor_mb = budget), gpsvm.quiet = TRUE)
  t0 <- cpu_now()
  memory <- mfsvr(y ~ ., data = frame, C = 5, epsilon = 0.1, inducing = d$z, bias = 0,
                  calibration_folds = 0)
  t1 <- cpu_now()
  split <- mfsvr(y ~ ., data = parts, C = 5, epsilon = 0.1, inducing = d$z)
  t2 <- cpu_now()
  options(op)
  in_memory_code <- paste("frame <- do.call(rbind, lapply(files, readRDS));",
                          "colnames(z) <- names(frame)[1:10];",
                          "fit <- mfsvr(y ~ ., data = frame, C = 5, epsilon = 0.1, inducing = z,",
                          "bias = 0, calibration_folds = 0)")
  partition_code <- paste("colnames(z) <- paste0('X', 1:10);",
                          "fit <- mfsvr(y ~ ., data = gpsvm_partitions(files), C = 5,",
                          "epsilon = 0.1, inducing = z)")
  peaks <- c(peak_of(in_memory_code, dir), peak_of(partition_code, dir))
  cat(sprintf(paste("\nmfsvr(y ~ ., inducing = %d) on %d rows in %d rds files, budget %g MB:",
                    "in memory %.1f CPU s, partitions %.1f CPU s (ratio %.2f), %d sweeps;",
                    "max |fitted difference| %.2g; peak MB in memory %.0f, partitions %.0f\n"),
              m, as.integer(part_n), part_k, budget, t1 - t0, t2 - t1, (t2 - t1) / (t1 - t0),
              as.integer(split$convergence$iterations),
              max(abs(fitted(split) - fitted(memory))), peaks[1], peaks[2]))
  unlink(dir, recursive = TRUE)
}
