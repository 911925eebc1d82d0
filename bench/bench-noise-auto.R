# Whether noise = "auto" chooses well (and could be a default): on data
# whose noise is constant it must keep the constant fit (or do no worse), on
# data whose noise varies it must choose the varying noise.  Held-out mean
# log score of noise = "auto" against noise = "constant" (the mean of the
# paired differences and its standard error over the splits), the share of
# fits choosing varying noise, the share that "auto"'s screen stopped at
# constant noise without a search (their factor is the first Newton step's
# prediction), the range of the log Bayes factors (varying
# against constant; "auto" needs one above 3), the ratio of the held-out
# RMSEs (of their means over the splits, and the largest of one split's)
# and of the fits' CPU seconds (user + system), interleaved in one process.
#
#   R_LIBS=... Rscript bench/bench-noise-auto.R
#   GPSVM_BENCH_SPLITS=20 GPSVM_BENCH_MODELS=mfsvr GPSVM_BENCH_CALIBRATION=default \
#     GPSVM_BENCH_BOSTON_SPLITS=20 GPSVM_BENCH_SETS=cars,mcycle Rscript bench/bench-noise-auto.R
#
# GPSVM_BENCH_CALIBRATION: "own" (the default here) the model's own
# predictive (calibration_folds = 0); "default" the fitters' default
# (calibrated by cross-validation up to 100 training rows).
# GPSVM_BENCH_SETS chooses a subset of the sets, GPSVM_BENCH_MODELS the
# models ("mfsvr,svr" unless set; "rvm" too, whose varying fits are slow
# beyond a hundred rows).
#
# Constant noise: women (weight ~ height, 15 rows), cars (dist ~ speed, 50
# rows), trees (Volume ~ Girth + Height, 31 rows), Friedman's first function
# (mlbench, 10 inputs, noise sd 1; 130 and 400 rows), faithful (waiting ~ eruptions, 272 rows), a sine
# (sin(x) + N(0, 0.3^2), 300 rows), Boston housing (mlbench, medv ~ ., 506
# rows; GPSVM_BENCH_BOSTON_SPLITS splits at most, 2 unless set: its varying
# fits are the slow ones).  Varying noise: MASS::mcycle (133 rows), a
# simulated 2 sin(x) with noise sd 0.1 + 0.9 (x/10)^2 (400 rows),
# ChickWeight (weight ~ Time + Diet, 578 rows: the spread grows with Time);
# only when GPSVM_BENCH_SETS names it, the simulated sine at 3600 rows
# (simulated_large: 2520 training rows, past the dense prior's size rule
# dense_max_n).
# Unknown: airquality (Ozone ~ Solar.R + Wind + Temp, the 111 complete
# rows).  Each split is 70 : 30.

suppressPackageStartupMessages(library(gpsvm))
options(gpsvm.quiet = TRUE)
splits <- as.integer(Sys.getenv("GPSVM_BENCH_SPLITS", "4"))
boston_splits <- as.integer(Sys.getenv("GPSVM_BENCH_BOSTON_SPLITS", "2"))
calibration <- match.arg(Sys.getenv("GPSVM_BENCH_CALIBRATION", "own"), c("own", "default"))
folds <- if (calibration == "own") 0 else NULL
pick <- function(variable, all) {
  chosen <- strsplit(Sys.getenv(variable, ""), ",", fixed = TRUE)[[1]]
  if (length(chosen)) intersect(all, chosen) else all
}
models <- if (nzchar(Sys.getenv("GPSVM_BENCH_MODELS"))) {
  pick("GPSVM_BENCH_MODELS", c("mfsvr", "svr", "rvm"))
} else c("mfsvr", "svr")
set.seed(20261202)
simulate <- function(n, s) {
  x <- runif(n, 0, 10)
  data.frame(x = x, y = 2 * sin(x) + rnorm(n, sd = s(x)))
}
sets <- list(
  cars = function() data.frame(x = cars$speed, y = cars$dist),
  trees = function() data.frame(x1 = trees$Girth, x2 = trees$Height, y = trees$Volume),
  women = function() data.frame(x = women$height, y = women$weight),
  friedman130 = function() {
    f <- mlbench::mlbench.friedman1(130)
    data.frame(f$x, y = f$y)
  },
  friedman400 = function() {
    f <- mlbench::mlbench.friedman1(400)
    data.frame(f$x, y = f$y)
  },
  sine = function() {
    x <- runif(300, 0, 10)
    data.frame(x = x, y = sin(x) + rnorm(300, sd = 0.3))
  },
  faithful = function() data.frame(x = faithful$eruptions, y = faithful$waiting),
  mcycle = function() data.frame(x = MASS::mcycle$times, y = MASS::mcycle$accel),
  simulated = function() simulate(400, function(x) 0.1 + 0.9 * (x / 10)^2),
  simulated_large = function() simulate(3600, function(x) 0.1 + 0.9 * (x / 10)^2),
  ChickWeight = function() data.frame(Time = ChickWeight$Time, Diet = ChickWeight$Diet,
                                      y = ChickWeight$weight),
  airquality = function() {
    a <- stats::na.omit(airquality[c("Ozone", "Solar.R", "Wind", "Temp")])
    names(a)[1] <- "y"
    a
  })
if (requireNamespace("mlbench", quietly = TRUE)) {
  sets$Boston <- function() {
    data("BostonHousing", package = "mlbench", envir = environment())
    b <- BostonHousing
    b$chas <- as.numeric(b$chas)
    names(b)[names(b) == "medv"] <- "y"
    b
  }
}
sets <- if (nzchar(Sys.getenv("GPSVM_BENCH_SETS"))) {
  sets[pick("GPSVM_BENCH_SETS", names(sets))]
} else sets[names(sets) != "simulated_large"]
out <- NULL
for (set in names(sets)) for (r in seq_len(if (set == "Boston") min(splits, boston_splits) else splits)) {
  d <- sets[[set]]()
  i <- sample(nrow(d), round(0.7 * nrow(d)))
  for (model in models) for (noise in c("constant", "auto")) {
    t0 <- proc.time()
    fit <- tryCatch(match.fun(model)(y ~ ., d[i, ], noise = noise, calibration_folds = folds),
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
      rmse = sqrt(mean((d$y[-i] - predict(fit, d[-i, ]))^2)),
      varying = identical(nm$type, "varying"), screened = isTRUE(nm$screened),
      log_bf = if (is.null(nm)) NA_real_ else nm$log_evidence[["varying"]] - nm$log_evidence[["constant"]],
      cpu = cpu))
  }
}
auto <- out[out$noise == "auto", ]
const <- out[out$noise == "constant", ]
key <- c("set", "split", "model")
both <- merge(auto, const[c(key, "log_score", "rmse", "cpu")], by = key, suffixes = c("", "_constant"))
res <- do.call(rbind, lapply(split(both, list(both$set, both$model), drop = TRUE), function(a) {
  data.frame(set = a$set[1], model = a$model[1], splits = nrow(a),
             log_score_auto = mean(a$log_score), log_score_constant = mean(a$log_score_constant),
             difference = mean(a$log_score - a$log_score_constant),
             se = stats::sd(a$log_score - a$log_score_constant) / sqrt(nrow(a)),
             varying_share = mean(a$varying), screened_share = mean(a$screened), log_bf_min = min(a$log_bf), log_bf_max = max(a$log_bf),
             rmse_ratio = mean(a$rmse) / mean(a$rmse_constant),
             rmse_ratio_max = max(a$rmse / a$rmse_constant),
             cpu_ratio = sum(a$cpu) / sum(a$cpu_constant))
}))
cat(sprintf(paste("noise = \"auto\" against \"constant\", held-out mean log score (%s), %d splits",
                  "(Boston %d); difference auto - constant (negative: auto better), se over splits\n"),
            if (calibration == "own") "own intervals" else "default calibration", splits,
            min(splits, boston_splits)))
print(format(res[order(res$set, res$model), ], digits = 3), row.names = FALSE)
cat("\n(one process; the machine has 2 cores shared with other sessions: CPU ratios are noisy)\n")
