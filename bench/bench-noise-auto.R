# Whether noise = "auto" can be the default of mfsvr() and svr(): on data
# whose noise is constant it must keep the constant fit (or do no worse), on
# data whose noise varies it must choose the varying noise.  Held-out mean
# log score (the model's own predictive, calibration_folds = 0) of noise =
# "auto" against noise = "constant", the share of fits choosing varying
# noise, the mean log Bayes factor (varying against constant) and the fit's
# CPU seconds (user + system), interleaved in one process.
#
#   R_LIBS=... Rscript bench/bench-noise-auto.R
#   GPSVM_BENCH_SPLITS=4 Rscript bench/bench-noise-auto.R
#
# Constant noise: cars (dist ~ speed, 50 rows), trees (Volume ~ Girth +
# Height, 31 rows), a sine (sin(x) + N(0, 0.3^2), 300 rows), Boston housing
# (mlbench, medv ~ ., 506 rows; at most 2 splits, its varying fits are the
# slow ones).  Varying noise: MASS::mcycle (133 rows), a simulated 2 sin(x)
# with noise sd 0.1 + 0.9 (x/10)^2 (400 rows).  Each split is 70 : 30.

suppressPackageStartupMessages(library(gpsvm))
options(gpsvm.quiet = TRUE)
splits <- as.integer(Sys.getenv("GPSVM_BENCH_SPLITS", "4"))
set.seed(20261202)
simulate <- function(n, s) {
  x <- runif(n, 0, 10)
  data.frame(x = x, y = 2 * sin(x) + rnorm(n, sd = s(x)))
}
sets <- list(
  cars = function() data.frame(x = cars$speed, y = cars$dist),
  trees = function() data.frame(x1 = trees$Girth, x2 = trees$Height, y = trees$Volume),
  sine = function() {
    x <- runif(300, 0, 10)
    data.frame(x = x, y = sin(x) + rnorm(300, sd = 0.3))
  },
  mcycle = function() data.frame(x = MASS::mcycle$times, y = MASS::mcycle$accel),
  simulated = function() simulate(400, function(x) 0.1 + 0.9 * (x / 10)^2))
if (requireNamespace("mlbench", quietly = TRUE)) {
  sets$Boston <- function() {
    data("BostonHousing", package = "mlbench", envir = environment())
    b <- BostonHousing
    b$chas <- as.numeric(b$chas)
    names(b)[names(b) == "medv"] <- "y"
    b
  }
}
out <- NULL
for (set in names(sets)) for (r in seq_len(if (set == "Boston") min(splits, 2L) else splits)) {
  d <- sets[[set]]()
  i <- sample(nrow(d), round(0.7 * nrow(d)))
  for (model in c("mfsvr", "svr")) for (noise in c("constant", "auto")) {
    t0 <- proc.time()
    fit <- tryCatch(match.fun(model)(y ~ ., d[i, ], noise = noise, calibration_folds = 0),
                    error = function(e) e)
    cpu <- sum((proc.time() - t0)[c("user.self", "sys.self")])
    if (inherits(fit, "error")) {
      message(set, " ", model, " ", noise, ": ", conditionMessage(fit))
      next
    }
    nm <- fit$noise_model
    out <- rbind(out, data.frame(
      set = set, split = r, model = model, noise = noise,
      log_score = mean(predictive_scores(fit, d[-i, ])$log_score),
      varying = identical(nm$type, "varying"),
      log_bf = if (is.null(nm)) NA_real_ else nm$log_evidence[["varying"]] - nm$log_evidence[["constant"]],
      cpu = cpu))
  }
}
auto <- out[out$noise == "auto", ]
const <- out[out$noise == "constant", ]
key <- c("set", "split", "model")
both <- merge(auto, const[c(key, "log_score", "cpu")], by = key, suffixes = c("", "_constant"))
res <- do.call(rbind, lapply(split(both, list(both$set, both$model), drop = TRUE), function(a) {
  data.frame(set = a$set[1], model = a$model[1], splits = nrow(a),
             log_score_auto = mean(a$log_score), log_score_constant = mean(a$log_score_constant),
             difference = mean(a$log_score - a$log_score_constant),
             varying_share = mean(a$varying), mean_log_bf = mean(a$log_bf),
             cpu_ratio = sum(a$cpu) / sum(a$cpu_constant))
}))
cat(sprintf("noise = \"auto\" against \"constant\", held-out mean log score (own intervals), %d splits\n",
            splits))
print(format(res[order(res$set, res$model), ], digits = 3), row.names = FALSE)
cat("\n(one process; the machine has 2 cores shared with other sessions: CPU ratios are noisy)\n")
