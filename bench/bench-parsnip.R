# gpsvm through tidymodels against gpsvm called directly: a workflow of a
# recipe and svm_rbf() with the "gpsvm" engine, fitted and asked for 95%
# prediction intervals (type = "pred_int"), against mfsvr() fitted to the same
# rows with the same settings and predict(interval = "prediction"), in one
# process, alternating, each timed GPSVM_BENCH_REPS times (default 5).
#
#   make bench BENCH=parsnip
#
# Data: mlbench's BostonHousing, the first 400 rows to fit, the other 106 to
# predict.  Two settings: svm_rbf() with nothing set (the evidence chooses C,
# epsilon and the width: mfsvr(optimize = TRUE), about two seconds), and
# every argument set (one fit of a few hundredths of a second, where the
# workflow's own work, the recipe and parsnip's conversions, weighs most).
# Printed: median elapsed seconds of each and their ratio.  The machines
# running this are shared: compare times within one run.
suppressPackageStartupMessages({
  library(gpsvm)
  for (p in c("parsnip", "workflows", "recipes", "mlbench")) {
    if (!requireNamespace(p, quietly = TRUE)) stop("bench-parsnip needs the package ", p, call. = FALSE)
  }
  library(parsnip)
})
reps <- as.integer(Sys.getenv("GPSVM_BENCH_REPS", "5"))
data(BostonHousing, package = "mlbench")
train <- BostonHousing[1:400, ]
test <- BostonHousing[401:506, ]

through_workflow <- function(spec) {
  rec <- recipes::recipe(medv ~ ., data = train)
  fitted <- workflows::fit(workflows::workflow(rec, spec), train)
  predict(fitted, test, type = "pred_int")
}

directly <- function(args) {
  fit <- do.call(mfsvr, c(list(medv ~ ., data = train), args))
  predict(fit, test, interval = "prediction")
}

settings <- list(
  "nothing set (evidence)" = list(
    spec = svm_rbf(),
    args = list(optimize = TRUE)),
  "all set" = list(
    spec = svm_rbf(cost = 4, rbf_sigma = 0.05, margin = 0.1),
    args = list(C = 4, epsilon = 0.1, kernel = rbf_kernel(1 / sqrt(2 * 0.05)), optimize = FALSE))
)

rows <- lapply(names(settings), function(name) {
  s <- settings[[name]]
  spec <- set_mode(set_engine(s$spec, "gpsvm"), "regression")
  times <- matrix(NA_real_, reps, 2L)
  for (r in seq_len(reps)) {
    times[r, 1L] <- system.time(a <- through_workflow(spec))[["elapsed"]]
    times[r, 2L] <- system.time(b <- directly(s$args))[["elapsed"]]
  }
  stopifnot(isTRUE(all.equal(a$.pred_upper, unname(b[, "upr"]), tolerance = 1e-8)))
  med <- apply(times, 2L, stats::median)
  data.frame(setting = name, workflow_s = med[1L], mfsvr_s = med[2L], ratio = med[1L] / med[2L])
})
cat(sprintf("BostonHousing, 400 rows fitted, 106 predicted; median of %d runs\n", reps))
print(do.call(rbind, rows), row.names = FALSE, digits = 3)
