# Benchmark: fits on one thread and on all the threads gpsvm_threads()
# allows (the machine's processors), interleaved in this one process, and
# the ratio of their median times.  A ratio above 1 means the threads cost
# more than they gain; the target is at most 1.1 for every fit (small fits
# stay on one thread whatever the setting, see ?gpsvm_threads).  Also
# gpsvm_threads(1000), which is capped at the processors.
#
#   make bench BENCH=threads
#   GPSVM_BENCH_THREADS_REPS=7 make bench BENCH=threads    # repetitions (default 3)
#
# The machine's other work shows in every figure (the load average is
# printed); compare the ratios.  Threaded loops start no more threads than
# there are idle processors (?gpsvm_threads), so on a busy machine the
# ratios are near 1 and on a quiet one they show the gain.
suppressPackageStartupMessages(library(gpsvm))
reps <- as.integer(Sys.getenv("GPSVM_BENCH_THREADS_REPS", "3"))
most <- gpsvm_threads(1000)  # (returns the setting before: what the session started with)
most <- gpsvm_threads()
cat(sprintf("gpsvm_threads(1000) sets %d (the processors); load average %s\n", most,
            if (file.exists("/proc/loadavg")) readLines("/proc/loadavg") else "unknown"))

regression <- function(n, p = 2, seed = 1) {
  set.seed(seed)
  x <- matrix(runif(n * p, -3, 3), n, p)
  list(x = x, y = sin(x[, 1]) + x[, 2] / 2 + rnorm(n, sd = 0.3))
}
classes <- function(n, seed = 2) {
  d <- regression(n, seed = seed)
  list(x = d$x, y = factor(ifelse(d$y > median(d$y), "b", "a")))
}
d300 <- regression(300)
d1200 <- regression(1200)
d3000 <- regression(3000)
c300 <- classes(300)
c1200 <- classes(1200)
d8400 <- regression(8400)
z8400 <- d8400$x[seq(1, 8400, length.out = 80), ]

cases <- list(
  "mfsvr() default, n = 300" = function() mfsvr(d300$x, d300$y),
  "mfsvr() dense, n = 300" = function() mfsvr(d300$x, d300$y, C = 5, kernel = rbf_kernel(1),
                                              control = mfsvr_control(rank_tol = 0)),
  "mfsvr() default, n = 1200" = function() mfsvr(d1200$x, d1200$y),
  "mfsvr() dense, n = 1200" = function() mfsvr(d1200$x, d1200$y, C = 5, kernel = rbf_kernel(1),
                                               control = mfsvr_control(rank_tol = 0)),
  "mfsvr() dense, n = 3000" = function() mfsvr(d3000$x, d3000$y, C = 5, kernel = rbf_kernel(1),
                                               bias = 0, control = mfsvr_control(rank_tol = 0)),
  "mfsvr() inducing 80, n = 8400" = function() mfsvr(d8400$x, d8400$y, C = 5,
                                                     kernel = rbf_kernel(1), bias = 0,
                                                     inducing = z8400),
  "gpc() default, n = 300" = function() gpc(c300$x, c300$y),
  "gpc() default, n = 1200" = function() gpc(c1200$x, c1200$y),
  "svr() default, n = 1200" = function() svr(d1200$x, d1200$y),
  "rvm() default, n = 1200" = function() rvm(d1200$x, d1200$y),
  "srvm() default, n = 300" = function() srvm(d300$x, d300$y)
)

time_on <- function(threads, fit) {
  old <- gpsvm_threads(threads)
  on.exit(gpsvm_threads(old))
  system.time(suppressWarnings(fit()))[["elapsed"]]
}

rows <- lapply(names(cases), function(name) {
  fit <- cases[[name]]
  time_on(1, fit)  # warm-up (width and memory caches, first-touch pages)
  one <- several <- numeric(reps)
  for (r in seq_len(reps)) {  # interleaved, so that the machine's load falls on both
    one[r] <- time_on(1, fit)
    several[r] <- time_on(most, fit)
  }
  row <- data.frame(fit = name, one_thread_s = median(one), threads = most,
                    threads_s = median(several), ratio = median(several) / median(one))
  cat(sprintf("%-32s 1 thread %7.3f s, %d threads %7.3f s, ratio %.2f\n", name, row$one_thread_s,
              most, row$threads_s, row$ratio))
  row
})
results <- do.call(rbind, rows)
print(results, digits = 3, row.names = FALSE)
cat(sprintf("largest ratio %.2f (target at most 1.1); load average now %s\n", max(results$ratio),
            if (file.exists("/proc/loadavg")) readLines("/proc/loadavg") else "unknown"))
