# mfsvr()'s defaults against DiceKriging::km() (Matern 5/2, a range per
# input, maximum likelihood with a nugget), in one process, interleaved.
#
#   R_LIBS=... Rscript bench/bench-matern.R
#   GPSVM_BENCH_SPLITS=3 Rscript bench/bench-matern.R
#   GPSVM_BENCH_FRIEDMAN_N=2860 GPSVM_BENCH_SETS=friedman1 Rscript bench/bench-matern.R
#     (about 2000 training rows, where mfsvr()'s default weighs its widths
#     per input on the most rows it does that on: see ?gpsvm_size_policy)
#
# Data: mlbench's Friedman 1 (n = 500 unless GPSVM_BENCH_FRIEDMAN_N, sd 1; 10 inputs, 5 of them
# irrelevant) and BostonHousing (506 rows, 13 inputs; chas as a number for
# km()), random 70/30 splits.  For each split and model: held-out RMSE, mean
# log score (the negative log predictive density of the held-out targets:
# gpsvm's from predict(type = "distribution"), km's Gaussian from its
# predict(type = "UK") mean and sd, the nugget added), the 95% interval's
# coverage, and the fit's CPU seconds (user + system).  gpsvm is also fitted with
# kernel = matern_kernel(5/2, per_input = TRUE) and optimize = TRUE, km's
# own kernel.  The two packages are timed in turn on each split; the
# ratios are what to read, as the machine may be shared.

suppressPackageStartupMessages(library(gpsvm))
if (!requireNamespace("DiceKriging", quietly = TRUE)) {
  cat("DiceKriging is not installed: nothing to compare with\n")
  quit(save = "no")
}
splits <- as.integer(Sys.getenv("GPSVM_BENCH_SPLITS", "3"))
friedman_n <- as.integer(Sys.getenv("GPSVM_BENCH_FRIEDMAN_N", "500"))
only <- strsplit(Sys.getenv("GPSVM_BENCH_SETS", "friedman1,boston"), ",")[[1]]

sets <- function() {
  set.seed(1)
  f1 <- mlbench::mlbench.friedman1(friedman_n, sd = 1)
  friedman <- data.frame(f1$x, y = f1$y)
  data(BostonHousing, package = "mlbench", envir = environment())
  boston <- BostonHousing
  boston$chas <- as.numeric(as.character(boston$chas))
  names(boston)[names(boston) == "medv"] <- "y"
  list(friedman1 = friedman, boston = boston)[only]
}

# CPU seconds (user + system) of the fit: the machine may be shared
elapsed <- function(expr) {
  t <- system.time(value <- expr)
  list(value = value, time = t[["user.self"]] + t[["sys.self"]])
}

gpsvm_row <- function(fit, test) {
  d <- predict(fit, test, type = "distribution")
  band <- predict(fit, test, interval = "prediction")
  c(rmse = sqrt(mean((band[, "fit"] - test$y)^2)),
    log_score = mean(-density(d, test$y, log = TRUE)),
    coverage = mean(test$y >= band[, "lwr"] & test$y <= band[, "upr"]))
}

km_row <- function(model, test) {
  x <- test[setdiff(names(test), "y")]
  p <- DiceKriging::predict(model, x, type = "UK", checkNames = FALSE)
  sd <- sqrt(p$sd^2 + model@covariance@nugget)
  c(rmse = sqrt(mean((p$mean - test$y)^2)),
    log_score = mean(-stats::dnorm(test$y, p$mean, sd, log = TRUE)),
    coverage = mean(abs(test$y - p$mean) <= stats::qnorm(0.975) * sd))
}

results <- list()
for (name in names(data <- sets())) {
  d <- data[[name]]
  for (s in seq_len(splits)) {
    set.seed(100 + s)
    rows <- sample(nrow(d), round(0.7 * nrow(d)))
    train <- d[rows, ]
    test <- d[-rows, ]
    x <- train[setdiff(names(train), "y")]
    defaults <- elapsed(mfsvr(y ~ ., data = train))
    km <- elapsed(suppressWarnings(DiceKriging::km(~1, design = x, response = train$y,
                                                   covtype = "matern5_2", nugget.estim = TRUE,
                                                   control = list(trace = FALSE))))
    ard <- elapsed(suppressWarnings(mfsvr(y ~ ., data = train, optimize = TRUE,
                                          kernel = matern_kernel(5/2, per_input = TRUE))))
    rows_out <- rbind(
      data.frame(set = name, split = s, model = "mfsvr defaults",
                 t(gpsvm_row(defaults$value, test)), seconds = defaults$time,
                 kernel = sprintf("%s%s%s", defaults$value$kernel$type,
                                  if (is.null(defaults$value$kernel$nu)) "" else
                                    sprintf(" %g", defaults$value$kernel$nu),
                                  if (is.null(defaults$value$kernel$input_widths)) "" else
                                    " ARD")),
      data.frame(set = name, split = s, model = "km matern5_2 nugget",
                 t(km_row(km$value, test)), seconds = km$time, kernel = "matern 2.5 ARD"),
      data.frame(set = name, split = s, model = "mfsvr matern ARD opt",
                 t(gpsvm_row(ard$value, test)), seconds = ard$time, kernel = "matern 2.5 ARD"))
    print(rows_out, row.names = FALSE, digits = 4)
    results[[length(results) + 1L]] <- rows_out
  }
}

all <- do.call(rbind, results)
cat("\nMeans over the splits (machine possibly shared: read the ratios)\n")
means <- aggregate(cbind(rmse, log_score, coverage, seconds) ~ set + model, data = all, FUN = mean)
print(means, row.names = FALSE, digits = 4)
cat("\nRatios to km (RMSE, time) and log score differences (gpsvm - km; negative is better)\n")
for (name in unique(all$set)) {
  k <- means[means$set == name & means$model == "km matern5_2 nugget", ]
  for (model in setdiff(unique(all$model), "km matern5_2 nugget")) {
    g <- means[means$set == name & means$model == model, ]
    cat(sprintf("%-10s %-22s RMSE ratio %.3f  log score diff %+.3f  time ratio %.2f\n", name,
                model, g$rmse / k$rmse, g$log_score - k$log_score, g$seconds / k$seconds))
  }
}
