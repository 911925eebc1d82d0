# Benchmark: one RVM and one smooth RVM fit against kernlab::rvm on the sinc
# data of ter Borg and Rothkrantz (2005) at growing N, same Gaussian kernel
# (sigma = 1.6, kernlab's rbfdot sigma = 1 / (2 * 1.6^2)), with the RMSE of
# each fit against the true function over a fine grid.
#
#   R_LIBS=... Rscript bench/bench-srvm.R            # kernlab up to N = 1000
#   GPSVM_BENCH_KERNLAB_MAX=2000 R_LIBS=... Rscript bench/bench-srvm.R
#
# kernlab::rvm takes about 2 minutes at N = 2000 on the project's machines,
# so by default it is run up to N = 1000 only.
suppressPackageStartupMessages({
  library(gpsvm)
  have_kernlab <- requireNamespace("kernlab", quietly = TRUE)
})

sizes <- c(50, 500, 1000, 2000)
kernlab_max <- as.numeric(Sys.getenv("GPSVM_BENCH_KERNLAB_MAX", "1000"))
srvm_max <- as.numeric(Sys.getenv("GPSVM_BENCH_SRVM_MAX", "2000"))
sigma <- 1.6
grid <- seq(-10, 10, length.out = 1001)
truth <- ifelse(grid == 0, 1, sin(grid) / grid)
rmse <- function(p) sqrt(mean((p - truth)^2))
timed <- function(expr) {
  t <- system.time(value <- force(expr))[["elapsed"]]
  list(value = value, time = t)
}

rows <- list()
for (n in sizes) {
  set.seed(n)
  x <- runif(n, -10, 10)
  y <- sin(x) / x + rnorm(n, sd = 0.1)
  r <- timed(rvm(x, y, kernel = rbf_kernel(sigma), scale = FALSE))
  rows[[length(rows) + 1L]] <- data.frame(N = n, method = "gpsvm::rvm", seconds = r$time,
    bvs = length(r$value$relevance_vectors), rmse = rmse(predict(r$value, grid)))
  if (n <= srvm_max) {
    s <- timed(srvm(x, y, kernel = rbf_kernel(sigma), penalty = roughness_penalty(10),
                    scale = FALSE))
    rows[[length(rows) + 1L]] <- data.frame(N = n, method = "gpsvm::srvm", seconds = s$time,
      bvs = length(s$value$relevance_vectors), rmse = rmse(predict(s$value, grid)))
  }
  if (have_kernlab && n <= kernlab_max) {
    k <- timed(kernlab::rvm(matrix(x), y, kernel = "rbfdot",
                            kpar = list(sigma = 1 / (2 * sigma^2))))
    rows[[length(rows) + 1L]] <- data.frame(N = n, method = "kernlab::rvm", seconds = k$time,
      bvs = length(kernlab::RVindex(k$value)),
      rmse = rmse(drop(kernlab::predict(k$value, matrix(grid)))))
  }
  cat(sprintf("N = %d done\n", n))
}
res <- do.call(rbind, rows)
res$speedup_vs_kernlab <- NA_real_
for (n in unique(res$N)) {
  kt <- res$seconds[res$N == n & res$method == "kernlab::rvm"]
  if (length(kt)) {
    i <- res$N == n
    res$speedup_vs_kernlab[i] <- kt / res$seconds[i]
  }
}
print(res, digits = 3, row.names = FALSE)

# the 1000-repetition experiment (RVM + SRVM per repetition) on two cores
if (!nzchar(Sys.getenv("GPSVM_BENCH_SKIP_EXPERIMENT"))) {
  script <- system.file("scripts", "srvm-experiment.R", package = "gpsvm")
  if (!nzchar(script)) script <- "inst/scripts/srvm-experiment.R"
  source(script)
  srvm_experiment_plan(2)
  t <- system.time(ex <- srvm_experiment_run(1000))[["elapsed"]]
  future::plan(future::sequential)
  cat(sprintf("\n1000-repetition sinc experiment (RVM + SRVM each) on 2 cores: %.1f s\n", t))
}
