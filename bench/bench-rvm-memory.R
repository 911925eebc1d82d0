# Benchmark: time, peak memory and held-out RMSE (against the true sinc, on
# 2000 test inputs) of rvm() and srvm() with their default candidate centres
# (every input up to N = 5000 for rvm(), 1000 for srvm(); 1000 chosen ones
# beyond) at growing N on the sinc data, each fit in a fresh R process so
# that the peak resident memory (VmHWM, Linux only) belongs to that fit
# alone; kernlab::rvm beside them up to GPSVM_BENCH_KERNLAB_MAX (default
# 2000), with the time ratios.
#
#   R_LIBS=... Rscript bench/bench-rvm-memory.R
#   GPSVM_BENCH_SIZES=2000,5000,20000,50000 R_LIBS=... Rscript bench/bench-rvm-memory.R
sizes <- as.numeric(strsplit(Sys.getenv("GPSVM_BENCH_SIZES", "2000,5000,20000"), ",")[[1]])
kernlab_max <- as.numeric(Sys.getenv("GPSVM_BENCH_KERNLAB_MAX", "2000"))

child <- function(n, method) {
  code <- sprintf('
    suppressPackageStartupMessages(library(%s))
    set.seed(%d); n <- %d
    x <- runif(n, -10, 10); y <- sin(x) / x + rnorm(n, sd = 0.1)
    t <- system.time(f <- %s)[["elapsed"]]
    st <- readLines("/proc/self/status")
    hwm <- as.numeric(gsub("[^0-9]", "", st[grepl("^VmHWM", st)])) / 1024
    z <- seq(-10, 10, length.out = 2000)
    rmse <- sqrt(mean((as.numeric(predict(f, matrix(z))) - sin(z) / z)^2))
    cat(t, hwm, rmse, "\\n")',
    if (method == "kernlab") "kernlab" else "gpsvm", n, n,
    switch(method,
      kernlab = "kernlab::rvm(matrix(x), y, kernel = \"rbfdot\", kpar = list(sigma = 1 / (2 * 1.6^2)))",
      sprintf("suppressWarnings(gpsvm::%s(x, y, kernel = gpsvm::rbf_kernel(1.6), scale = FALSE))",
              method)))
  out <- system2(file.path(R.home("bin"), "Rscript"), c("-e", shQuote(code)), stdout = TRUE)
  v <- as.numeric(strsplit(trimws(out[length(out)]), " +")[[1]])
  data.frame(N = n, method = method, seconds = v[1], peak_MB = round(v[2]),
             rmse_vs_truth = signif(v[3], 3))
}

if (!file.exists("/proc/self/status")) stop("this benchmark reads /proc (Linux)")
rows <- list()
for (n in sizes) {
  rows[[length(rows) + 1L]] <- child(n, "rvm")
  rows[[length(rows) + 1L]] <- child(n, "srvm")
  if (n <= kernlab_max && requireNamespace("kernlab", quietly = TRUE))
    rows[[length(rows) + 1L]] <- child(n, "kernlab")
}
res <- do.call(rbind, rows)
print(res, row.names = FALSE)
for (n in res$N[res$method == "kernlab"]) {
  r <- res[res$N == n, ]
  cat(sprintf("N = %d: time rvm / kernlab = %.2g, srvm / kernlab = %.2g\n", n,
              r$seconds[r$method == "rvm"] / r$seconds[r$method == "kernlab"],
              r$seconds[r$method == "srvm"] / r$seconds[r$method == "kernlab"]))
}
