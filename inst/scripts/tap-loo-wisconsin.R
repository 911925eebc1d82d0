# Exact leave-one-out of the TAP classifier on the Wisconsin data, for the
# classification vignette (too slow to run there: 614 EP refits, each
# warm-started from the full fit's sites, about three minutes).  Run from the
# package source directory:
#
#   Rscript inst/scripts/tap-loo-wisconsin.R
#
# It writes inst/extdata/tap_loo_wisconsin.rds: the approximate (cavity) and
# exact leave-one-out margins on the vignette's fold-1 training set, the
# settings and the elapsed time.
library(gpsvm)
data(BreastCancer, package = "mlbench")
bc <- na.omit(BreastCancer)
x <- scale(sapply(bc[, 2:10], function(v) as.numeric(as.character(v))))
y <- factor(bc$Class, levels = c("benign", "malignant"))
set.seed(1)
fold <- sample(rep(1:10, length.out = nrow(x)))
train <- fold != 1
fit <- gpc(x[train, ], y[train], rbf_kernel(sqrt(0.15 * 9)), noise = 1.3, method = "tap",
           bias = 0, scale = FALSE)
approx <- loo_error(fit)
exact <- progressr::with_progress(loo_error(fit, "exact"), enable = interactive())
saveRDS(list(approx = unname(approx$margins), exact = unname(exact$margins),
             exact_time = exact$time, n = sum(train), sigma2 = 0.15 * 9, noise = 1.3,
             gpsvm_version = as.character(utils::packageVersion("gpsvm")),
             date = format(Sys.time(), "%Y-%m-%d")),
        file.path("inst", "extdata", "tap_loo_wisconsin.rds"), version = 2)
