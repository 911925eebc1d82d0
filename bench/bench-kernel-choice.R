# mfsvr()'s default kernel choice: a width per input weighed by the
# evidence (size rules per_input_min_n, per_input_max_n), and the kernel
# candidates weighed by their evidence (Bayesian model averaging) instead of
# the single best, against the choice of one kernel, in one process.
#
#   R_LIBS=... Rscript bench/bench-kernel-choice.R
#   GPSVM_BENCH_SPLITS=10 GPSVM_BENCH_MID_SPLITS=3 Rscript bench/bench-kernel-choice.R
#
# Data: base R's airquality (Ozone on the other five, complete cases, 75
# training rows; the first split is set.seed(2026); sample(111, 75)), the
# six small sets of bench-tiny-search.R (15-35 training rows), and
# mlbench's Ozone (na.omit, 142 training rows), Friedman 2 and 3 (400
# simulated, 280 training rows) and PimaIndiansDiabetes2's glucose on the
# others (na.omit, 274 training rows); random 70/30 splits (GPSVM_BENCH_SPLITS
# of the small sets, default 20, GPSVM_BENCH_MID_SPLITS of the larger, 5).
# Models:
#   one_width   mfsvr(y ~ ., d) with no width per input weighed (the size
#               rule per_input_min_n set above the data)
#   default     mfsvr(y ~ ., d) (the package's size rules)
#   per_input_low  mfsvr(y ~ ., d) with per_input_min_n = 15
#   bma         the candidates one_width weighed (fit$kernel_choice), each
#               fitted alone (mfsvr(kernel = it)), their predictive
#               distributions mixed with weights proportional to their
#               evidences; the point prediction the mixture's mean
#   e1071       e1071::svm() with its defaults (RMSE only)
# For each: held-out RMSE, mean log score (negative log predictive density),
# and for the single fits the 95% interval score and coverage; CPU seconds
# (user + system) of the fits.  The machine may be shared: read the ratios.

suppressPackageStartupMessages(library(gpsvm))
options(gpsvm.quiet = TRUE)
splits <- as.integer(Sys.getenv("GPSVM_BENCH_SPLITS", "20"))
mid_splits <- as.integer(Sys.getenv("GPSVM_BENCH_MID_SPLITS", "5"))
has_e1071 <- requireNamespace("e1071", quietly = TRUE)

response <- function(d, name) {
  d <- d[stats::complete.cases(d), ]
  names(d)[names(d) == name] <- "y"
  for (j in seq_along(d)) if (is.factor(d[[j]])) d[[j]] <- as.numeric(d[[j]])
  d
}
mlbench_data <- function(name) {
  e <- new.env()
  utils::data(list = name, package = "mlbench", envir = e)
  e[[name]]
}
simulated <- function(gen, seed) {
  set.seed(seed)
  s <- gen(400)
  data.frame(s$x, y = s$y)
}
small <- list(
  airquality = response(datasets::airquality, "Ozone"),
  stackloss = response(datasets::stackloss, "stack.loss"),
  trees = response(datasets::trees, "Volume"),
  attitude = response(datasets::attitude, "rating"),
  mtcars = response(datasets::mtcars, "mpg"),
  swiss = response(datasets::swiss, "Fertility"),
  LifeCycleSavings = response(datasets::LifeCycleSavings, "sr"))
mid <- if (requireNamespace("mlbench", quietly = TRUE)) list(
  Ozone = response(mlbench_data("Ozone"), "V4"),
  Friedman2 = simulated(mlbench::mlbench.friedman2, 102),
  Friedman3 = simulated(mlbench::mlbench.friedman3, 103),
  PimaGlucose = response(mlbench_data("PimaIndiansDiabetes2"), "glucose"))

with_rule <- function(min_n, expr) {
  old <- options(gpsvm.size_policy = list(per_input_min_n = min_n))
  on.exit(options(old))
  expr
}
cpu <- function(expr) {
  t <- system.time(value <- expr)
  list(value = value, time = t[["user.self"]] + t[["sys.self"]])
}
single_scores <- function(fit, test) {
  band <- predict(fit, test, interval = "prediction")
  scores <- colMeans(predictive_scores(fit, test))
  c(rmse = sqrt(mean((band[, "fit"] - test$y)^2)), log = scores[["log_score"]],
    interval = scores[["interval_score"]],
    coverage = mean(test$y >= band[, "lwr"] & test$y <= band[, "upr"]))
}
candidate_kernel <- function(rule, sigma, p) {
  if (rule == "linear") return(gpsvm:::.linear_candidate(p))
  if (startsWith(rule, "Matern")) {
    nu <- if (startsWith(rule, "Matern 5/2")) 2.5 else 1.5
    return(matern_kernel(nu, sigma))
  }
  rbf_kernel(sigma)
}
bma <- function(one, train, test) {
  choice <- one$kernel_choice
  if (is.null(choice)) return(c(rmse = NA, log = NA, top_weight = NA))
  p <- ncol(one$x)
  fits <- lapply(seq_len(nrow(choice)), function(i) {
    tryCatch(mfsvr(y ~ ., train, kernel = candidate_kernel(choice$rule[i], choice$sigma[i], p)),
             error = function(e) NULL)
  })
  ok <- !vapply(fits, is.null, logical(1))
  fits <- fits[ok]
  ev <- vapply(fits, function(f) f$log_evidence, numeric(1))
  w <- exp(ev - max(ev))
  w <- w / sum(w)
  mean <- Reduce(`+`, Map(function(f, wk) wk * predict(f, test), fits, w))
  dens <- Reduce(`+`, Map(function(f, wk) {
    wk * density(predict(f, test, type = "distribution"), test$y)
  }, fits, w))
  c(rmse = sqrt(mean((mean - test$y)^2)), log = mean(-log(dens)), top_weight = max(w))
}

run_set <- function(name, d, n_splits) {
  rows <- NULL
  for (s in seq_len(n_splits)) {
    if (name == "airquality" && s == 1L) set.seed(2026) else set.seed(1000 + s)
    i <- if (name == "airquality") sample(nrow(d), 75) else sample(nrow(d), round(0.7 * nrow(d)))
    train <- d[i, ]
    test <- d[-i, ]
    one <- cpu(with_rule(1e6, mfsvr(y ~ ., train)))
    def <- cpu(mfsvr(y ~ ., train))
    low <- cpu(with_rule(15, mfsvr(y ~ ., train)))
    mix <- cpu(bma(one$value, train, test))
    e1 <- if (has_e1071) {
      cpu(sqrt(mean((predict(e1071::svm(y ~ ., train), test) - test$y)^2)))
    } else list(value = NA_real_, time = NA_real_)
    kernel_of <- function(f) {
      paste0(if (identical(f$kernel$candidate, "linear")) "linear" else f$kernel$type,
             if (!is.null(f$kernel$input_widths)) " ARD" else "")
    }
    row <- function(model, r, extra = list()) {
      data.frame(set = name, split = s, model = model, rmse = r$value[["rmse"]],
                 log = r$value[["log"]], interval = r$value["interval"][[1]] %||% NA_real_,
                 coverage = r$value["coverage"][[1]] %||% NA_real_, seconds = r$time,
                 kernel = extra$kernel %||% NA_character_, top_weight = extra$w %||% NA_real_)
    }
    score <- function(r) list(value = single_scores(r$value, test), time = r$time)
    rows <- rbind(rows,
                  row("one_width", score(one), list(kernel = kernel_of(one$value))),
                  row("default", score(def), list(kernel = kernel_of(def$value))),
                  row("per_input_low", score(low), list(kernel = kernel_of(low$value))),
                  row("bma", list(value = mix$value, time = mix$time + one$time),
                      list(w = mix$value[["top_weight"]])),
                  row("e1071", list(value = c(rmse = e1$value, log = NA), time = e1$time)))
  }
  rows
}
`%||%` <- function(a, b) if (is.null(a) || (length(a) == 1L && is.na(a))) b else a

all <- NULL
for (name in names(small)) all <- rbind(all, run_set(name, small[[name]], splits))
for (name in names(mid)) all <- rbind(all, run_set(name, mid[[name]], mid_splits))

cat(sprintf("random 70/30 splits: %d of the small sets, %d of the larger; machine possibly shared\n\n",
            splits, mid_splits))
cat("airquality, the first split (set.seed(2026); sample(111, 75)):\n")
print(all[all$set == "airquality" & all$split == 1L, -2], row.names = FALSE, digits = 4)
means <- aggregate(cbind(rmse, log, interval, coverage, seconds) ~ set + model,
                   data = transform(all, interval = ifelse(is.na(interval), 0, interval),
                                    coverage = ifelse(is.na(coverage), 0, coverage),
                                    log = ifelse(is.na(log), 0, log)),
                   FUN = mean)
cat("\nMeans over the splits (interval and coverage 0 where not computed; e1071's log 0: none)\n")
print(means[order(means$set, means$model), ], row.names = FALSE, digits = 4)
cat("\nRatios to one_width (RMSE, interval score), log score differences (negative is better)\n")
for (name in unique(all$set)) {
  b <- means[means$set == name & means$model == "one_width", ]
  for (m in c("default", "per_input_low", "bma", "e1071")) {
    g <- means[means$set == name & means$model == m, ]
    cat(sprintf("%-16s %-14s RMSE %.3f  log %+.3f  IS %s  CPU %.2f\n", name, m, g$rmse / b$rmse,
                g$log - b$log, if (g$interval > 0) sprintf("%.3f", g$interval / b$interval) else "  -  ",
                g$seconds / b$seconds))
  }
}
chosen <- table(all$set[all$model == "per_input_low"], all$kernel[all$model == "per_input_low"])
cat("\nKernels per_input_low chose (splits)\n")
print(chosen)
