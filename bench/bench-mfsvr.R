# Benchmark of mfsvr() against its peers, in one process.
#
#   R_LIBS=... Rscript bench/bench-mfsvr.R            # N = 500, 1000, 2000, 4000
#   GPSVM_BENCH_N="500 1000" Rscript bench/bench-mfsvr.R
#   GPSVM_BENCH_GAUSSPR_MAX=4000 Rscript bench/bench-mfsvr.R  # gausspr at 4000 too (slow)
#
# Data: the sinc problem of Gao, Gunn and Harris (2002) at size N (inputs
# uniform on [-10, 10], noise sd 0.1), C = 5, epsilon = 0.1, the paper's
# kernel exp(-|x - x'|^2 / 4) = rbf_kernel(sqrt(2)).
#
# Columns: the unit of cost is one Cholesky factorisation of the N x N kernel
# matrix by R's chol() (with the BLAS R is linked to); mfsvr() is timed with
# its default (EP on a pivoted Cholesky factor when the kernel matrix's
# numerical rank is small, which it is here) and with rank_tol = 0 (dense EP,
# one Cholesky of B and one triangular solve per sweep);
# kernlab::gausspr(variance.model = TRUE) is the GP regression with error bars
# R users have today; e1071::svm(type = "eps-regression") gives no error bars.
# Prediction: posterior mean and standard error at 10^4 new points.  Cheap
# steps report the best of three runs (shared machines are noisy).  Peak
# memory: VmHWM of a fresh R process that fits at the largest N.

suppressPackageStartupMessages(library(gpsvm))
sizes <- as.integer(strsplit(Sys.getenv("GPSVM_BENCH_N", "500 1000 2000 4000"), " ")[[1]])
gausspr_max <- as.integer(Sys.getenv("GPSVM_BENCH_GAUSSPR_MAX", "2000"))
dense_max <- as.integer(Sys.getenv("GPSVM_BENCH_DENSE_MAX", "2000"))
have_kernlab <- requireNamespace("kernlab", quietly = TRUE)
have_e1071 <- requireNamespace("e1071", quietly = TRUE)

sinc <- function(n, seed = 1) {
  set.seed(seed)
  x <- runif(n, -10, 10)
  list(x = x, y = sin(x) / x + rnorm(n, sd = 0.1))
}
# Elapsed seconds; the best of 'reps' runs for the cheap steps, since the
# machines are shared and single runs are noisy.
elapsed <- function(expr, reps = 1L) {
  expr <- substitute(expr)
  env <- parent.frame()
  best <- Inf
  for (r in seq_len(reps)) {
    gc(FALSE)
    best <- min(best, unname(system.time(eval(expr, env))[["elapsed"]]))
  }
  best
}
kern <- rbf_kernel(sqrt(2))

rows <- list()
for (n in sizes) {
  d <- sinc(n)
  K <- kernel_matrix(kern, d$x)
  t_chol <- elapsed(chol(K + diag(1e-8, n)), reps = if (n <= 2000) 3L else 1L)
  rm(K)
  t_fit <- elapsed(fit <- mfsvr(d$x, d$y, C = 5, epsilon = 0.1, kernel = kern, scale = FALSE),
                   reps = 3L)
  t_dense <- if (n <= dense_max) {
    elapsed(fit_dense <- mfsvr(d$x, d$y, C = 5, epsilon = 0.1, kernel = kern,
                               control = mfsvr_control(rank_tol = 0), scale = FALSE))
  } else NA
  xnew <- seq(-10, 10, length.out = 1e4)
  t_pred <- elapsed(p <- predict(fit, xnew, se.fit = TRUE), reps = 3L)
  t_gausspr <- if (have_kernlab && n <= gausspr_max) {
    # kernlab's rbfdot(sigma) is exp(-sigma |x - x'|^2): sigma = 1/4 here
    elapsed(suppressMessages(kernlab::gausspr(matrix(d$x), d$y, kernel = "rbfdot",
                                              kpar = list(sigma = 0.25),
                                              variance.model = TRUE, var = 0.01,
                                              scaled = FALSE)))
  } else NA
  t_svm <- if (have_e1071) {
    # e1071's radial kernel is exp(-gamma |x - x'|^2): gamma = 1/4
    elapsed(e1071::svm(matrix(d$x), d$y, type = "eps-regression", kernel = "radial",
                       gamma = 0.25, cost = 5, epsilon = 0.1, scale = FALSE), reps = 3L)
  } else NA
  rows[[length(rows) + 1L]] <- data.frame(
    N = n, chol_s = t_chol, mfsvr_s = t_fit, sweeps = fit$convergence$iterations,
    rank = if (is.null(fit$rank)) NA else fit$rank, fit_per_chol = t_fit / t_chol,
    dense_s = t_dense, dense_per_chol = t_dense / t_chol,
    gausspr_s = t_gausspr, gausspr_over_mfsvr = t_gausspr / t_fit,
    svm_s = t_svm, svm_over_mfsvr = t_svm / t_fit, predict_1e4_s = t_pred)
  cat(sprintf("N = %d done\n", n))
}
table <- do.call(rbind, rows)
cat("\nFit times (seconds) and ratios; sinc data, C = 5, epsilon = 0.1\n")
print(format(table, digits = 3), row.names = FALSE)

# Peak resident memory of a fresh process fitting at the largest N, with the
# default and with the dense solver, in units of one N x N double matrix.
peak <- function(n, control) {
  code <- sprintf(paste(
    "suppressPackageStartupMessages(library(gpsvm)); set.seed(1); x <- runif(%d, -10, 10);",
    "y <- sin(x) / x + rnorm(%d, sd = 0.1); hwm <- function() {",
    "s <- readLines('/proc/self/status'); as.numeric(sub('[^0-9]*([0-9]+).*', '\\\\1',",
    "s[grep('^VmHWM', s)])) / 1024 }; before <- hwm();",
    "fit <- mfsvr(x, y, C = 5, kernel = rbf_kernel(sqrt(2)), control = %s, scale = FALSE);",
    "cat(before, hwm(), '\\n')"), n, n, control)
  out <- system2(file.path(R.home("bin"), "Rscript"), c("-e", shQuote(code)), stdout = TRUE)
  as.numeric(strsplit(trimws(out[length(out)]), " +")[[1]])
}
if (file.exists("/proc/self/status")) {
  cat("\nPeak resident memory of a fresh process (VmHWM), in units of one N x N double matrix\n")
  for (ctl in c("mfsvr_control()", "mfsvr_control(rank_tol = 0)")) {
    n <- if (ctl == "mfsvr_control()") max(sizes) else min(max(sizes), dense_max)
    unit <- 8 * n^2 / 2^20
    m <- peak(n, ctl)
    cat(sprintf("  N = %d, %-28s R alone %.0f MB, after fit %.0f MB: fit added %.0f MB = %.2f N x N\n",
                n, ctl, m[1], m[2], m[2] - m[1], (m[2] - m[1]) / unit))
  }
}
