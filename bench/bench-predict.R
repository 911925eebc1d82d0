# Benchmark: 10^4 predictions with error bars from every model's default
# fit at N = 5000 on 2-D inputs, and what a prediction costs per point.
#
#   make bench BENCH=predict
#   GPSVM_BENCH_PREDICT_N=20000 make bench BENCH=predict
#
# "With error bars" means what each model has: the standard error of the
# mean and 95% prediction intervals for the regression models (svr's
# intervals are the epsilon-insensitive noise's exact quantiles), class
# probabilities (which integrate the activation's posterior variance) and
# the activation's standard error for gpc(), class probabilities for the
# naive mean-field gpc(), decision values for svc() (which has no posterior).
# The inducing-point fits use 500 (mfsvr) and 200 (gpc) inducing inputs.
#
# Data: regression x ~ N(0, I_2), y = sin(2 x1) cos(x2) + N(0, 0.2^2);
# classification x ~ N(0, I_2), y = sign(x1 + 0.7 x2^2 + N(0, 0.7^2) - 0.5);
# new inputs from the same x distribution (so a few fall outside the
# training range).  All in one process: the figures are times, and the
# predictions run in row chunks inside the package, so their memory does
# not grow with the number of new points beyond the n x chunk cross matrix.
suppressPackageStartupMessages(library(gpsvm))

n <- as.numeric(Sys.getenv("GPSVM_BENCH_PREDICT_N", "5000"))
n_new <- 10000
set.seed(1)
regression <- function(n) {
  x <- matrix(rnorm(2 * n), n, 2)
  list(x = x, y = sin(2 * x[, 1]) * cos(x[, 2]) + rnorm(n, sd = 0.2))
}
classes <- function(n) {
  x <- matrix(rnorm(2 * n), n, 2)
  list(x = x, y = factor(ifelse(x[, 1] + 0.7 * x[, 2]^2 + rnorm(n, sd = 0.7) - 0.5 > 0,
                                "b", "a")))
}
reg <- regression(n)
cls <- classes(n)
new_x <- matrix(rnorm(2 * n_new), n_new, 2)

# Each case: the fit (a call on the data above) and the predictions timed.
cases <- list(
  list("svr", quote(svr(reg$x, reg$y)),
       function(f) predict(f, new_x, interval = "prediction", se.fit = TRUE)),
  list("mfsvr", quote(mfsvr(reg$x, reg$y)),
       function(f) predict(f, new_x, interval = "prediction", se.fit = TRUE)),
  list("mfsvr(inducing = 500)", quote(mfsvr(reg$x, reg$y, inducing = 500)),
       function(f) predict(f, new_x, interval = "prediction", se.fit = TRUE)),
  list("rvm", quote(rvm(reg$x, reg$y)),
       function(f) predict(f, new_x, interval = "prediction", se.fit = TRUE)),
  list("srvm", quote(srvm(reg$x, reg$y)),
       function(f) predict(f, new_x, interval = "prediction", se.fit = TRUE)),
  list("gpc (TAP)", quote(gpc(cls$x, cls$y)),
       function(f) list(predict(f, new_x, type = "prob"),
                        predict(f, new_x, type = "link", se.fit = TRUE))),
  list("gpc(inducing = 200)", quote(gpc(cls$x, cls$y, inducing = 200)),
       function(f) list(predict(f, new_x, type = "prob"),
                        predict(f, new_x, type = "link", se.fit = TRUE))),
  list("gpc(method = \"naive\")", quote(gpc(cls$x, cls$y, method = "naive")),
       function(f) predict(f, new_x, type = "prob")),
  list("svc", quote(svc(cls$x, cls$y)), function(f) predict(f, new_x, type = "link"))
)

elapsed <- function(expr) {
  t0 <- proc.time()[["elapsed"]]
  value <- force(expr)
  list(value = value, seconds = proc.time()[["elapsed"]] - t0)
}

# What the predictions run on: inducing inputs, the pivots of a low-rank
# kernel matrix, or the model's own sparse or dense expansion.
representation <- function(fit) {
  model <- if (!is.null(fit$models)) fit$models[[1]] else fit
  if (isTRUE(attr(model$inducing, "low_rank"))) {
    return(sprintf("kernel matrix's %d pivots", NROW(model$inducing)))
  }
  if (!is.null(model$inducing)) return(sprintf("%d inducing inputs", NROW(model$inducing)))
  if (!is.null(model$rank)) return(sprintf("kernel matrix of rank %d", model$rank))
  ""
}

cat(sprintf("10^4 predictions with error bars, default fits at N = %g (2-D inputs)\n", n))
cat(sprintf("%-24s %8s %10s %12s  %s\n", "fit", "fit s", "predict s", "us / point", "path"))
for (case in cases) {
  fit <- elapsed(suppressWarnings(eval(case[[2]])))
  pred <- elapsed(case[[3]](fit$value))
  cat(sprintf("%-24s %8.2f %10.3f %12.1f  %s\n", case[[1]], fit$seconds, pred$seconds,
              1e6 * pred$seconds / n_new, representation(fit$value)))
}
