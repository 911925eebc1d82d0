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
source(file.path("inst", "scripts", "wisconsin-fold1.R"))
d <- wisconsin_fold1()
fit <- gpc(d$x, d$y, rbf_kernel(sqrt(0.15 * 9)), noise = 1.3, method = "tap",
           bias = 0, scale = FALSE)
approx <- loo_error(fit)
exact <- progressr::with_progress(loo_error(fit, "exact"), enable = interactive())
saveRDS(list(approx = unname(approx$margins), exact = unname(exact$margins),
             exact_time = exact$time, n = nrow(d$x), sigma2 = 0.15 * 9, noise = 1.3,
             gpsvm_version = as.character(utils::packageVersion("gpsvm")),
             date = format(Sys.time(), "%Y-%m-%d")),
        file.path("inst", "extdata", "tap_loo_wisconsin.rds"), version = 2)
