# Benchmark: time, peak memory and held-out RMSE (against the true function,
# on 2000 test inputs) of rvm() and srvm() with their default candidate
# centres (every input up to N = 5000 for rvm(), 1000 for srvm(); 1000 chosen
# ones beyond) at growing N, each fit in a fresh R process so that the peak
# resident memory (VmHWM, Linux only) belongs to that fit alone;
# kernlab::rvm beside them up to GPSVM_BENCH_KERNLAB_MAX (default 2000), with
# the time ratios.  GPSVM_BENCH_DATA chooses the data: "sinc" (default; one
# input, the width fixed at 1.6 for all three, no scaling) or "friedman1"
# (mlbench's Friedman 1, ten inputs, every fitter with its defaults, the
# formula y ~ .).
#
#   R_LIBS=... Rscript bench/bench-rvm-memory.R
#   GPSVM_BENCH_SIZES=2000,5000,20000,50000 R_LIBS=... Rscript bench/bench-rvm-memory.R
#   GPSVM_BENCH_DATA=friedman1 GPSVM_BENCH_SIZES=500,1000,2000 R_LIBS=... Rscript bench/bench-rvm-memory.R
sizes <- as.numeric(strsplit(Sys.getenv("GPSVM_BENCH_SIZES", "2000,5000,20000"), ",")[[1]])
kernlab_max <- as.numeric(Sys.getenv("GPSVM_BENCH_KERNLAB_MAX", "2000"))
data_name <- match.arg(Sys.getenv("GPSVM_BENCH_DATA", "sinc"), c("sinc", "friedman1"))

# The data and the truth on the test inputs, then the fit, as R code.
data_code <- c(
  sinc = '
    x <- runif(n, -10, 10); y <- sin(x) / x + rnorm(n, sd = 0.1)
    z <- matrix(seq(-10, 10, length.out = 2000)); truth <- sin(z) / z',
  friedman1 = '
    d <- as.data.frame(mlbench::mlbench.friedman1(n))
    zd <- as.data.frame(mlbench::mlbench.friedman1(2000))
    z <- zd[, -11]
    truth <- with(zd, 10 * sin(pi * x.1 * x.2) + 20 * (x.3 - 0.5)^2 + 10 * x.4 + 5 * x.5)')
fit_code <- list(
  sinc = c(
    kernlab = "kernlab::rvm(matrix(x), y, kernel = \"rbfdot\", kpar = list(sigma = 1 / (2 * 1.6^2)))",
    gpsvm = "suppressWarnings(gpsvm::%s(x, y, kernel = gpsvm::rbf_kernel(1.6), scale = FALSE))"),
  friedman1 = c(
    kernlab = "suppressMessages(kernlab::rvm(y ~ ., d))",
    gpsvm = "suppressWarnings(gpsvm::%s(y ~ ., d))"))

child <- function(n, method) {
  fit <- fit_code[[data_name]]
  code <- sprintf('
    suppressPackageStartupMessages(library(%s))
    set.seed(%d); n <- %d
    %s
    t <- system.time(f <- %s)[["elapsed"]]
    st <- readLines("/proc/self/status")
    hwm <- as.numeric(gsub("[^0-9]", "", st[grepl("^VmHWM", st)])) / 1024
    rmse <- sqrt(mean((as.numeric(predict(f, z)) - truth)^2))
    cat(t, hwm, rmse, "\\n")',
    if (method == "kernlab") "kernlab" else "gpsvm", n, n, data_code[[data_name]],
    if (method == "kernlab") fit[["kernlab"]] else sprintf(fit[["gpsvm"]], method))
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
