# The evidence searches on tiny data: mfsvr()'s optimize = TRUE and a width
# per input against the defaults, by held-out proper scores, in one process.
#
#   R_LIBS=... Rscript bench/bench-tiny-search.R
#   GPSVM_BENCH_SPLITS=20 Rscript bench/bench-tiny-search.R
#   GPSVM_BENCH_MODELS=default,optimize,per_input Rscript bench/bench-tiny-search.R
#
# Data: six of R's data sets of 21 to 50 rows, each split at random 100
# times into 70% training rows (15 to 35) and 30% held out: stackloss (all
# three inputs), trees (Volume on Girth and Height), attitude (rating on the
# other six), mtcars (mpg on the other ten), swiss (Fertility on the other
# five), LifeCycleSavings (sr on the other four).  Models, each with its
# defaults otherwise:
#   default     mfsvr(y ~ ., d)
#   optimize    mfsvr(y ~ ., d, optimize = TRUE)
#   per_input   mfsvr(y ~ ., d, kernel = rbf_kernel(per_input = TRUE), optimize = TRUE)
#   gaussian    mfsvr(y ~ ., d, kernel = rbf_kernel())   (one data-driven width)
#   matern_per_input  mfsvr(y ~ ., d, kernel = matern_kernel(per_input = TRUE), optimize = TRUE)
#   matern      mfsvr(y ~ ., d, kernel = matern_kernel())   (nu = 5/2, one width)
#   parsnip     gpsvm_parsnip_fit(y ~ ., d, kernel = "rbf")   (svm_rbf() with
#               every argument unset: optimize over C, epsilon and the width)
# For each: the mean interval score of the 95% prediction intervals
# (width + 2 / 0.05 times the distance outside, in the response's units,
# computed here from predict()'s intervals), the mean log score
# (the negative log predictive density, from predict(type =
# "distribution")) and the coverage, averaged over the splits; the ratio of
# each model's mean interval score to the defaults' on the same splits.

suppressPackageStartupMessages(library(gpsvm))
options(gpsvm.quiet = TRUE)
splits <- as.integer(Sys.getenv("GPSVM_BENCH_SPLITS", "100"))

sets <- list(
  stackloss = setNames(stackloss, c(names(stackloss)[1:3], "y")),
  trees = data.frame(Girth = trees$Girth, Height = trees$Height, y = trees$Volume),
  attitude = setNames(attitude[c(2:7, 1)], c(names(attitude)[2:7], "y")),
  mtcars = data.frame(mtcars[-1], y = mtcars$mpg),
  swiss = data.frame(swiss[-1], y = swiss$Fertility),
  LifeCycleSavings = data.frame(LifeCycleSavings[-1], y = LifeCycleSavings$sr))

models <- list(
  default = function(d) mfsvr(y ~ ., d),
  optimize = function(d) mfsvr(y ~ ., d, optimize = TRUE),
  per_input = function(d) mfsvr(y ~ ., d, kernel = rbf_kernel(per_input = TRUE), optimize = TRUE),
  gaussian = function(d) mfsvr(y ~ ., d, kernel = rbf_kernel()),
  matern_per_input = function(d) {
    mfsvr(y ~ ., d, kernel = matern_kernel(per_input = TRUE), optimize = TRUE)
  },
  matern = function(d) mfsvr(y ~ ., d, kernel = matern_kernel()),
  parsnip = function(d) gpsvm_parsnip_fit(y ~ ., d, kernel = "rbf"))
chosen <- strsplit(Sys.getenv("GPSVM_BENCH_MODELS", paste(names(models), collapse = ",")), ",")[[1L]]
models <- models[unique(c("default", chosen))]

scores <- function(fit, test) {
  band <- predict(fit, test, interval = "prediction")
  alpha <- 0.05
  is <- (band[, "upr"] - band[, "lwr"]) + 2 / alpha * pmax(band[, "lwr"] - test$y, 0) +
    2 / alpha * pmax(test$y - band[, "upr"], 0)
  d <- predict(fit, test, type = "distribution")
  c(interval = mean(is), log = mean(-density(d, test$y, log = TRUE)),
    coverage = mean(test$y >= band[, "lwr"] & test$y <= band[, "upr"]))
}

cat(sprintf("%d random 70/30 splits per set; mean held-out 95%% interval score (IS), log score (LS), coverage (cov)\n",
            splits))
cat("the machine may be shared: times are not compared here\n\n")
summary <- NULL
for (name in names(sets)) {
  d <- sets[[name]]
  n <- nrow(d)
  out <- array(NA_real_, c(splits, length(models), 3),
               dimnames = list(NULL, names(models), c("interval", "log", "coverage")))
  failed <- setNames(integer(length(models)), names(models))
  for (s in seq_len(splits)) {
    set.seed(1000 + s)
    train <- sample(n, round(0.7 * n))
    for (k in names(models)) {
      fit <- tryCatch(suppressWarnings(models[[k]](d[train, ])), error = function(e) NULL)
      if (is.null(fit)) {
        failed[k] <- failed[k] + 1L
        next
      }
      out[s, k, ] <- scores(fit, d[-train, ])
    }
  }
  ok <- stats::complete.cases(out[, , "interval"])
  m <- apply(out[ok, , , drop = FALSE], c(2, 3), mean)
  ratio <- m[, "interval"] / m["default", "interval"]
  cat(sprintf("%s (%d training rows; %d splits with every fit)\n", name, round(0.7 * n), sum(ok)))
  print(round(cbind(IS = m[, "interval"], `IS / default` = ratio, LS = m[, "log"],
                    cov = m[, "coverage"], failed = failed), 3))
  if (all(c("per_input", "gaussian", "matern_per_input", "matern") %in% names(models))) {
    cat(sprintf("  per_input IS / gaussian IS: %.3f; matern_per_input IS / matern IS: %.3f\n",
                m["per_input", "interval"] / m["gaussian", "interval"],
                m["matern_per_input", "interval"] / m["matern", "interval"]))
  }
  cat("\n")
  summary <- rbind(summary, data.frame(set = name, t(ratio[-1]), check.names = FALSE))
}
cat("Interval score over the defaults' (target: at most 1.05 for optimize and per_input)\n")
print(summary, digits = 3, row.names = FALSE)
