# Noise that varies with the inputs: rvm(noise = "auto") and
# mfsvr(noise = "auto") against the same models with constant noise and
# hetGP::mleHetGP(), by held-out interval coverage and
# width in each third of the input range and by the log score, in one
# process.
#
#   R_LIBS=... Rscript bench/bench-varying-noise.R
#   GPSVM_BENCH_SPLITS=5 Rscript bench/bench-varying-noise.R
#   GPSVM_BENCH_SETS=mcycle,simulated GPSVM_BENCH_MODELS=mfsvr_auto_own,hetGP Rscript ...
#     (a subset of the sets and models; Boston runs when no set is named)
#
# Data whose noise varies:
#   mcycle     MASS::mcycle, accel ~ times (133 rows; the residual sd is
#              about 2 before 15 ms and 20-30 after), split at random
#              70/30 on each repeat.
#   simulated  y = 2 sin(x) + e, x ~ U(0, 10), e ~ N(0, s(x)^2) with
#              s(x) = 0.1 + 0.9 (x / 10)^2 (from 0.1 to 1): 200 training
#              rows and 300 held out, drawn afresh on each repeat.
# Data whose noise does not:
#   sine       y = sin(x) + N(0, 0.3^2), x ~ U(0, 10), 150 + 150 rows.
#   cars       dist ~ speed (50 rows), 70/30.
#   faithful   waiting ~ eruptions (272 rows), 70/30.
# For each model: the held-out coverage of the 95% prediction intervals and
# their mean width in each third of the input range (pooled over the
# repeats), the ratio of the mean widths in the quietest and the noisiest
# third against the same ratio of the true noise sd (simulated) or of the
# held-out residuals' sd (mcycle: root mean square of the model's own
# held-out residuals), the mean log score (negative log predictive density)
# and the fit's CPU time (user + system).  *_own: the model's own intervals
# and density (calibration_folds = 0), the others the default calibrated
# ones (calibrated up to 100 rows).  Boston (mlbench's BostonHousing, medv ~
# ., 70/30; constant noise assumed) compares mfsvr(noise = "auto") with
# mfsvr() by the log score only (its inputs have no one range to cut).  hetGP: mleHetGP(covtype = "Gaussian") on inputs
# scaled to [0, 1], its predictive N(mean, sd2 + nugs).

suppressPackageStartupMessages(library(gpsvm))
options(gpsvm.quiet = TRUE)
repeats <- as.integer(Sys.getenv("GPSVM_BENCH_SPLITS", "20"))
has_hetgp <- requireNamespace("hetGP", quietly = TRUE)
if (!requireNamespace("MASS", quietly = TRUE)) stop("MASS is needed for mcycle")

# One repeat's data: train and test frames with columns x, y, and the true
# noise sd at the test rows where known.
simulate <- function(n, m, f, s) {
  x <- runif(n + m, 0, 10)
  y <- f(x) + rnorm(n + m, sd = s(x))
  d <- data.frame(x = x, y = y)
  list(train = d[seq_len(n), ], test = d[n + seq_len(m), ], sd = s(x[n + seq_len(m)]))
}
split_data <- function(d, share = 0.7) {
  i <- sample(nrow(d), round(share * nrow(d)))
  list(train = d[i, ], test = d[-i, ], sd = NULL)
}
sets <- list(
  mcycle = function() split_data(data.frame(x = MASS::mcycle$times, y = MASS::mcycle$accel)),
  simulated = function() simulate(200, 300, function(x) 2 * sin(x), function(x) 0.1 + 0.9 * (x / 10)^2),
  sine = function() simulate(150, 150, sin, function(x) rep(0.3, length(x))),
  cars = function() split_data(data.frame(x = cars$speed, y = cars$dist)),
  faithful = function() split_data(data.frame(x = faithful$eruptions, y = faithful$waiting)))

# Each model: a fit, and its predictive at the test rows as mean, the 95%
# interval and the log density of the targets.
gpsvm_model <- function(model, ...) {
  function(tr, te) {
    fit <- model(y ~ x, tr, ...)
    p <- predict(fit, te, interval = "prediction")
    list(fit = p[, "fit"], lower = p[, "lwr"], upper = p[, "upr"],
         log_score = predictive_scores(fit, te)$log_score,
         varying = identical(fit$noise_model$type, "varying"))
  }
}
models <- list(
  rvm_auto = gpsvm_model(rvm, noise = "auto"),
  rvm_constant = gpsvm_model(rvm),
  rvm_auto_own = gpsvm_model(rvm, noise = "auto", calibration_folds = 0),
  rvm_constant_own = gpsvm_model(rvm, calibration_folds = 0),
  mfsvr_auto = gpsvm_model(mfsvr, noise = "auto"),
  mfsvr_constant = gpsvm_model(mfsvr),
  mfsvr_auto_own = gpsvm_model(mfsvr, noise = "auto", calibration_folds = 0),
  mfsvr_constant_own = gpsvm_model(mfsvr, calibration_folds = 0))
if (has_hetgp) {
  models$hetGP <- function(tr, te) {
    lo <- min(tr$x)
    span <- diff(range(tr$x))
    fit <- hetGP::mleHetGP(matrix((tr$x - lo) / span), tr$y, covtype = "Gaussian")
    p <- predict(fit, matrix((te$x - lo) / span))
    s <- sqrt(p$sd2 + p$nugs)
    list(fit = p$mean, lower = p$mean - qnorm(0.975) * s, upper = p$mean + qnorm(0.975) * s,
         log_score = -dnorm(te$y, p$mean, s, log = TRUE), varying = TRUE)
  }
}

pick <- function(variable, all) {
  chosen <- strsplit(Sys.getenv(variable, ""), ",", fixed = TRUE)[[1]]
  if (length(chosen)) intersect(all, chosen) else all
}
sets <- sets[pick("GPSVM_BENCH_SETS", names(sets))]
models <- models[pick("GPSVM_BENCH_MODELS", names(models))]
run_boston <- !nzchar(Sys.getenv("GPSVM_BENCH_SETS", ""))

set.seed(20261202)
rows <- list()
for (set in names(sets)) {
  pooled <- list()
  for (r in seq_len(repeats)) {
    d <- sets[[set]]()
    # thirds of the input range (of all rows of the set)
    cuts <- seq(min(d$train$x, d$test$x), max(d$train$x, d$test$x), length.out = 4)
    third <- findInterval(d$test$x, cuts, rightmost.closed = TRUE, all.inside = TRUE)
    for (m in names(models)) {
      t0 <- proc.time()
      out <- tryCatch(models[[m]](d$train, d$test), error = function(e) e)
      time <- sum((proc.time() - t0)[c("user.self", "sys.self")])
      if (inherits(out, "error")) {
        message(set, " ", m, ": ", conditionMessage(out))
        next
      }
      pooled[[length(pooled) + 1L]] <- data.frame(
        model = m, third = third, y = d$test$y, fit = out$fit, width = out$upper - out$lower,
        covered = d$test$y >= out$lower & d$test$y <= out$upper, log_score = out$log_score,
        true_sd = if (is.null(d$sd)) NA_real_ else d$sd, time = time / nrow(d$test),
        varying = out$varying)
    }
  }
  all <- do.call(rbind, pooled)
  for (m in unique(all$model)) {
    a <- all[all$model == m, ]
    cover <- tapply(a$covered, a$third, mean)
    width <- tapply(a$width, a$third, mean)
    noise <- if (all(is.na(a$true_sd))) tapply(a$y - a$fit, a$third, function(e) sqrt(mean(e^2))) else
      tapply(a$true_sd, a$third, mean)
    quiet <- which.min(noise)
    loud <- which.max(noise)
    width_ratio <- width[[quiet]] / width[[loud]]
    noise_ratio <- noise[[quiet]] / noise[[loud]]
    rows[[length(rows) + 1L]] <- data.frame(
      set = set, model = m, cover1 = cover[[1]], cover2 = cover[[2]], cover3 = cover[[3]],
      width1 = width[[1]], width2 = width[[2]], width3 = width[[3]],
      width_ratio = width_ratio, noise_ratio = noise_ratio,
      ratio_of_ratios = width_ratio / noise_ratio, log_score = mean(a$log_score),
      varying_share = mean(a$varying),
      fit_time = sum(a$time) / repeats)
  }
}
res <- do.call(rbind, rows)
cat(sprintf("Held-out 95%% intervals over %d repeats (thirds of the input range; ratio = quietest / noisiest third)\n",
            repeats))
print(format(res, digits = 3), row.names = FALSE)

cat("\nTargets (data whose noise varies): coverage 0.90-0.99 in each third; width ratio within 1.5x",
    "of the noise ratio; log score no worse than hetGP's\n")
for (set in c("mcycle", "simulated")) for (m in c("rvm_auto", "rvm_auto_own", "mfsvr_auto", "mfsvr_auto_own")) {
  a <- res[res$set == set & res$model == m, ]
  if (!nrow(a)) next
  h <- res[res$set == set & res$model == "hetGP", ]
  covers <- unlist(a[c("cover1", "cover2", "cover3")])
  cat(sprintf("  %-9s %-12s coverage %s: %s; width ratio %.3g vs noise ratio %.3g (x%.2f): %s; log score %.3f vs hetGP %s: %s\n",
              set, m, paste(sprintf("%.3f", covers), collapse = "/"),
              if (all(covers >= 0.9 & covers <= 0.99)) "met" else "NOT met",
              a$width_ratio, a$noise_ratio, a$ratio_of_ratios,
              if (a$ratio_of_ratios >= 1 / 1.5 && a$ratio_of_ratios <= 1.5) "met" else "NOT met",
              a$log_score, if (nrow(h)) sprintf("%.3f", h$log_score) else "n/a",
              if (!nrow(h)) "n/a" else if (a$log_score <= h$log_score) "met" else "NOT met"))
}
cat("\nConstant noise: noise = \"auto\" against constant noise (log score difference, share of fits choosing varying noise)\n")
for (set in c("sine", "cars", "faithful")) for (mod in c("rvm", "mfsvr")) for (m in c("", "_own")) {
  a <- res[res$set == set & res$model == paste0(mod, "_auto", m), ]
  c0 <- res[res$set == set & res$model == paste0(mod, "_constant", m), ]
  if (!nrow(a) || !nrow(c0)) next
  cat(sprintf("  %-9s %-10s log score %.4f vs %.4f (difference %+.4f); varying chosen in %.0f%% of fits; fit CPU time x%.2f\n",
              set, paste0(mod, m), a$log_score, c0$log_score, a$log_score - c0$log_score,
              100 * a$varying_share, a$fit_time / c0$fit_time))
}
if (run_boston && requireNamespace("mlbench", quietly = TRUE)) {
  data("BostonHousing", package = "mlbench", envir = environment())
  b <- BostonHousing
  boston <- NULL
  for (r in seq_len(min(repeats, 10L))) {
    i <- sample(nrow(b), round(0.7 * nrow(b)))
    for (noise in c("constant", "auto")) {
      t0 <- proc.time()
      fit <- mfsvr(medv ~ ., b[i, ], noise = noise)
      time <- sum((proc.time() - t0)[c("user.self", "sys.self")])
      boston <- rbind(boston, data.frame(
        noise = noise, log_score = mean(predictive_scores(fit, b[-i, ])$log_score),
        varying = identical(fit$noise_model$type, "varying"), time = time))
    }
  }
  a <- boston[boston$noise == "auto", ]
  c0 <- boston[boston$noise == "constant", ]
  cat(sprintf("  %-9s %-10s log score %.4f vs %.4f (difference %+.4f); varying chosen in %.0f%% of fits; fit CPU time x%.2f (%d splits)\n",
              "Boston", "mfsvr", mean(a$log_score), mean(c0$log_score),
              mean(a$log_score) - mean(c0$log_score), 100 * mean(a$varying),
              sum(a$time) / sum(c0$time), nrow(a)))
}
cat("\n(one process; the machine has 2 cores shared with other sessions: times are noisy)\n")
