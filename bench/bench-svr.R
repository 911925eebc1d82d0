# Benchmark: svr(bias = TRUE) against e1071::svm (libsvm) and kernlab::ksvm on
# the same data, Gaussian kernel, C, epsilon, KKT tolerance (1e-3) and cache
# (100 MB), in one process.  The sinc data come twice: as drawn, and with x
# rounded to 21 distinct values (many identical rows).  Prints times, ratios
# (gpsvm / peer; <= 1 means gpsvm is faster) and the dual objective of each
# solution, all evaluated by the same formula 1/2 b'Kb - y'b + eps |b|_1.
#
# Times are the minimum over repetitions (3 up to n = 5000, 2 above) of the
# CPU time (user + system) of the fitting call; the machine may be shared, so
# CPU time is the primary measure and elapsed time is printed beside it.
#
# Run: R_LIBS=... Rscript bench/bench-svr.R [sizes]
suppressPackageStartupMessages({
  library(gpsvm)
  library(e1071)
  library(kernlab)
})

args <- commandArgs(trailingOnly = TRUE)
sizes <- if (length(args)) as.numeric(args) else c(1000, 5000, 20000)

# K[, sv] %*% beta[sv] in row blocks, never the n x n matrix.
kernel_times <- function(kernel, x, sv, beta) {
  out <- numeric(nrow(x))
  if (!length(sv)) return(out)
  block <- max(1L, floor(4e6 / length(sv)))
  for (s in seq(1L, nrow(x), by = block)) {
    rows <- s:min(nrow(x), s + block - 1L)
    out[rows] <- kernel_matrix(kernel, x[rows, , drop = FALSE], x[sv, , drop = FALSE]) %*% beta
  }
  out
}

dual_objective <- function(kernel, x, y, eps, sv, beta) {
  f <- kernel_times(kernel, x, sv, beta)
  0.5 * sum(beta * f[sv]) - sum(y[sv] * beta) + eps * sum(abs(beta))
}

timed <- function(expr, reps) {
  cpu <- Inf
  wall <- Inf
  for (r in seq_len(reps)) {
    gc(FALSE)
    t <- system.time(value <- force(expr()))
    cpu <- min(cpu, t[["user.self"]] + t[["sys.self"]])
    wall <- min(wall, t[["elapsed"]])
  }
  list(time = cpu, wall = wall, value = value)
}

run_case <- function(name, x, y, sigma, C, eps, tol = 1e-3, cache = 100) {
  n <- nrow(x)
  reps <- if (n <= 5000) 3L else 2L
  k <- rbf_kernel(sigma)
  gamma <- 1 / (2 * sigma^2)
  g <- timed(function() svr(x, y, C = C, epsilon = eps, kernel = k, bias = TRUE,
                            control = svr_control(tol = tol, cache_mb = cache),
                            scale = FALSE), reps)
  e <- timed(function() svm(x, y, type = "eps-regression", kernel = "radial", gamma = gamma,
                            cost = C, epsilon = eps, tolerance = tol, cachesize = cache,
                            scale = FALSE, shrinking = TRUE), reps)
  kl <- timed(function() ksvm(x, y, type = "eps-svr", kernel = "rbfdot",
                              kpar = list(sigma = gamma), C = C, epsilon = eps, tol = tol,
                              cache = cache, scaled = FALSE, shrinking = TRUE), reps)
  gf <- g$value
  sv_g <- which(gf$beta != 0)
  obj_g <- dual_objective(k, x, y, eps, sv_g, gf$beta[sv_g])
  obj_e <- dual_objective(k, x, y, eps, e$value$index, as.vector(e$value$coefs))
  ki <- alphaindex(kl$value)
  kc <- coef(kl$value)
  obj_k <- dual_objective(k, x, y, eps, ki, kc)
  # kernlab may store the coefficients with the opposite sign convention
  obj_k <- min(obj_k, dual_objective(k, x, y, eps, ki, -kc))
  data.frame(data = name, n = n, d = ncol(x), nSV = length(sv_g),
             cpu_gpsvm = g$time, cpu_e1071 = e$time, cpu_kernlab = kl$time,
             ratio_e1071 = g$time / e$time, ratio_kernlab = g$time / kl$time,
             wall_gpsvm = g$wall, wall_e1071 = e$wall, wall_kernlab = kl$wall,
             obj_gpsvm = obj_g, obj_e1071 = obj_e, obj_kernlab = obj_k,
             rel_diff_e1071 = (obj_g - obj_e) / abs(obj_e),
             rel_diff_kernlab = (obj_g - obj_k) / abs(obj_k))
}

results <- list()
for (n in sizes) {
  set.seed(20260101 + n)
  x <- matrix(runif(n, -10, 10))
  y <- ifelse(x[, 1] == 0, 1, sin(x[, 1]) / x[, 1]) + rnorm(n, sd = 0.1)
  results[[length(results) + 1L]] <- run_case("sinc", x, y, sigma = 1, C = 10, eps = 0.05)
  cat(sprintf("done sinc n = %d\n", n))
  # the same targets on 21 distinct inputs (x rounded): many identical rows,
  # which gpsvm's solver handles per distinct input
  xr <- round(x)
  results[[length(results) + 1L]] <- run_case("sinc, rounded x", xr, y, sigma = 1, C = 10,
                                              eps = 0.05)
  cat(sprintf("done sinc, rounded x, n = %d\n", n))
}
if (requireNamespace("mlbench", quietly = TRUE)) {
  data("BostonHousing", package = "mlbench", envir = environment())
  bh <- BostonHousing
  bh$chas <- as.numeric(as.character(bh$chas))
  x <- scale(as.matrix(bh[, setdiff(names(bh), "medv")]))
  y <- as.vector(scale(bh$medv))
  results[[length(results) + 1L]] <- run_case("BostonHousing", x, y, sigma = sqrt(13 / 2),
                                              C = 10, eps = 0.1)
  # Friedman #1 (mlbench's simulated regression benchmark) at the larger sizes
  for (n in sizes) {
    set.seed(7 + n)
    fr <- mlbench::mlbench.friedman1(n, sd = 1)
    results[[length(results) + 1L]] <- run_case("friedman1", fr$x, fr$y, sigma = 1.5,
                                                C = 10, eps = 0.5)
    cat(sprintf("done friedman1 n = %d\n", n))
  }
}
tab <- do.call(rbind, results)
options(width = 200)
print(tab, digits = 4, row.names = FALSE)
