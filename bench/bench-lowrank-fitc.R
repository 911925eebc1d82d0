# mfsvr()'s low-rank prior against the dense fit at the same settings: the
# predictions, their standard errors and the evidence, on cars (low rank at
# the default rank_tol, and forced further with rank_tol = 1e-6) and on 2200
# two-dimensional rows where the default fit's prior is low rank.
# Rscript --vanilla bench/bench-lowrank-fitc.R  (with the package on R_LIBS)
suppressPackageStartupMessages(library(gpsvm))
options(gpsvm.quiet = TRUE)

compare <- function(label, x, y, new, rank_tol = NULL, kernel = NULL) {
  fit <- suppressMessages(if (is.null(kernel)) mfsvr(x, y) else mfsvr(x, y, kernel = kernel))
  s <- gpsvm_settings(fit)
  if (!is.null(rank_tol)) s$control$rank_tol <- rank_tol
  s$prior <- "low_rank"
  t_low <- system.time(low <- gpsvm_fit(x, y, s))[["elapsed"]]
  s$prior <- "dense"
  t_dense <- system.time(dense <- gpsvm_fit(x, y, s))[["elapsed"]]
  pl <- predict(low, new, se.fit = TRUE)
  pd <- predict(dense, new, se.fit = TRUE)
  rank <- if (!is.null(low$inducing)) nrow(low$inducing) else low$rank
  cat(sprintf(paste("%-28s n = %4d  rank %4d  rank_tol %.0e  C %.4g  sd(y) %.3g\n",
                    "  max|fit diff| %.3e  max|pred diff| %.3e  max rel se diff %.3e",
                    " logLik low %.10g dense %.10g diff %.3e  (%.2f s / %.2f s)\n"),
              label, length(y), rank, s$control$rank_tol, s$C, sd(y),
              max(abs(fitted(low) - fitted(dense))), max(abs(pl$fit - pd$fit)),
              max(abs(pl$se.fit / pd$se.fit - 1)), as.numeric(logLik(low)),
              as.numeric(logLik(dense)), as.numeric(logLik(low)) - as.numeric(logLik(dense)),
              t_low, t_dense))
  invisible(list(low = low, dense = dense))
}

new_speed <- data.frame(speed = seq(2, 27, length.out = 101))
# (the default fit to cars takes the linear kernel, of rank 1: the Gaussian
# kernel is given)
compare("cars", cars["speed"], cars$dist, new_speed, kernel = rbf_kernel())
compare("cars, rank_tol = 1e-6", cars["speed"], cars$dist, new_speed, rank_tol = 1e-6,
        kernel = rbf_kernel())
set.seed(62)
n <- 2200
x <- matrix(runif(2 * n, -2, 2), ncol = 2, dimnames = list(NULL, c("a", "b")))
y <- sin(2 * x[, 1]) * cos(x[, 2]) + rnorm(n, sd = 0.2)
new <- matrix(runif(400, -2.2, 2.2), ncol = 2, dimnames = list(NULL, c("a", "b")))
if (!nzchar(Sys.getenv("BENCH_SMALL"))) compare("2-d sine, 2200 rows", x, y, new)
