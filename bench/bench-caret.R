# gpsvm inside caret: each model tuned by caret's resampled grid
# (gpsvm_caret(model)) and by its evidence inside every fit
# (gpsvm_caret(model, tune = "evidence")), beside kernlab's svmRadial and
# gaussprRadial, all on the same five folds, in one process.
#
#   make bench BENCH=caret
#   GPSVM_BENCH_FOLDS=10 make bench BENCH=caret
#
# Data: mlbench's BostonHousing (506 x 13, chas as 0/1) and Pima Indians
# diabetes (768 x 8).  gpsvm's grids are its default tuneLength = 3 grids
# (9 settings for mfsvr, svr, gpc, svc; 3 widths for rvm); svmRadial gets
# tuneLength = 5 (5 values of C at kernlab's sigest width) and inputs centred
# and scaled by caret, gaussprRadial its one sigest width.  Printed per
# model: the elapsed seconds of the whole train() call (all folds, every
# setting, the final fit), the number of settings, and the resampled RMSE or
# accuracy of the best setting.  The machines running this are shared:
# compare times within one run.
suppressPackageStartupMessages({
  library(gpsvm)
  for (p in c("caret", "kernlab", "mlbench")) {
    if (!requireNamespace(p, quietly = TRUE)) stop("bench-caret needs the package ", p, call. = FALSE)
  }
  library(caret)
})
folds_k <- as.integer(Sys.getenv("GPSVM_BENCH_FOLDS", "5"))

compare <- function(x, y, models, ctrl, metric) {
  fits <- lapply(models, function(args) {
    suppressWarnings(do.call(caret::train, c(list(x = x, y = y, trControl = ctrl), args)))
  })
  best <- if (metric == "RMSE") min else max
  data.frame(seconds = vapply(fits, function(m) m$times$everything[["elapsed"]], numeric(1)),
             settings = vapply(fits, function(m) nrow(m$results), integer(1)),
             value = vapply(fits, function(m) best(m$results[[metric]]), numeric(1)),
             check.names = FALSE)
}

kernlab_models <- function() {
  list(svmRadial = list(method = "svmRadial", preProcess = c("center", "scale"), tuneLength = 5),
       gaussprRadial = list(method = "gaussprRadial", preProcess = c("center", "scale")))
}

data(BostonHousing, package = "mlbench")
boston <- BostonHousing
boston$chas <- as.numeric(boston$chas == "1")
set.seed(1)
folds <- createFolds(boston$medv, k = folds_k, returnTrain = TRUE)
cat(sprintf("BostonHousing (%d rows), %d-fold CV: RMSE of the best setting\n", nrow(boston),
            folds_k))
reg <- compare(boston[setdiff(names(boston), "medv")], boston$medv, c(list(
  mfsvr_grid = list(method = gpsvm_caret("mfsvr"), tuneLength = 3),
  mfsvr_evidence = list(method = gpsvm_caret("mfsvr", tune = "evidence")),
  svr_grid = list(method = gpsvm_caret("svr"), tuneLength = 3),
  svr_evidence = list(method = gpsvm_caret("svr", tune = "evidence")),
  rvm_grid = list(method = gpsvm_caret("rvm"), tuneLength = 3)), kernlab_models()),
  trainControl(method = "cv", index = folds), "RMSE")
names(reg)[3] <- "RMSE"
print(reg, digits = 4)

data(PimaIndiansDiabetes, package = "mlbench")
pima <- PimaIndiansDiabetes
set.seed(2)
folds <- createFolds(pima$diabetes, k = folds_k, returnTrain = TRUE)
cat(sprintf("\nPimaIndiansDiabetes (%d rows), %d-fold CV: accuracy of the best setting\n",
            nrow(pima), folds_k))
cls <- compare(pima[setdiff(names(pima), "diabetes")], pima$diabetes, c(list(
  gpc_grid = list(method = gpsvm_caret("gpc"), tuneLength = 3),
  gpc_evidence = list(method = gpsvm_caret("gpc", tune = "evidence")),
  svc_grid = list(method = gpsvm_caret("svc"), tuneLength = 3)), kernlab_models()),
  trainControl(method = "cv", index = folds, classProbs = TRUE), "Accuracy")
names(cls)[3] <- "accuracy"
print(cls, digits = 4)
