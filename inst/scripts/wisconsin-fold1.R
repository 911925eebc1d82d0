# The classification vignette's Wisconsin training set: mlbench::BreastCancer
# without its 16 incomplete cases (683), the nine scores standardised over
# all of them, and fold 1's training set (614 cases) of a 10-fold split drawn
# with set.seed(1), as the vignette's chunks "data" and "folds" draw it.
# Sourced from the package source directory by tap-loo-wisconsin.R and the
# classification benchmark, so that both use the vignette's cases.
wisconsin_fold1 <- function() {
  utils::data(BreastCancer, package = "mlbench", envir = environment())
  bc <- stats::na.omit(BreastCancer)
  x <- scale(sapply(bc[, 2:10], function(v) as.numeric(as.character(v))))
  y <- factor(bc$Class, levels = c("benign", "malignant"))
  set.seed(1)
  fold <- sample(rep(1:10, length.out = nrow(x)))
  list(x = x[fold != 1, ], y = y[fold != 1])
}
