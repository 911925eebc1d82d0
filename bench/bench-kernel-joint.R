# The default kernel choice of mfsvr() and svr() on data where the linear
# kernel leads the Gaussian ones: what each default fit chose, its held-out
# scores and its CPU seconds.  Run with two builds (say, before and after a
# change to the choice) and compare their output; the machine may be
# shared, so compare CPU seconds, not wall time.
#
#   R_LIBS=... Rscript bench/bench-kernel-joint.R
#   GPSVM_BENCH_SPLITS=10 Rscript bench/bench-kernel-joint.R
#
# Data: MASS's cpus (log10 perf on the six machine inputs; 140 training
# rows, the first split set.seed(77); sample(209, 140)), base R's
# airquality (Ozone on the other five, complete cases, 75 training rows)
# and the six small sets of bench-tiny-search.R (15-35 training rows);
# random 70/30 splits (GPSVM_BENCH_SPLITS, default 20).  For each model and
# set: mean held-out RMSE, 95% interval score (IS), log score (LS, the
# negative log predictive density), coverage, log evidence of the fit,
# mean CPU seconds per fit, and how often each kernel rule was chosen.

suppressPackageStartupMessages(library(gpsvm))
options(gpsvm.quiet = TRUE)
splits <- as.integer(Sys.getenv("GPSVM_BENCH_SPLITS", "20"))

response <- function(d, name) {
  d <- d[stats::complete.cases(d), ]
  names(d)[names(d) == name] <- "y"
  d
}
sets <- list(
  cpus = if (requireNamespace("MASS", quietly = TRUE)) {
    e <- new.env()
    utils::data("cpus", package = "MASS", envir = e)
    data.frame(e$cpus[2:7], y = log10(e$cpus$perf))
  })
base_sets <- c(airquality = "Ozone", stackloss = "stack.loss", trees = "Volume", attitude = "rating",
               mtcars = "mpg", swiss = "Fertility", LifeCycleSavings = "sr")
sets <- c(sets, Map(function(set, y) response(get(set, asNamespace("datasets")), y),
                    names(base_sets), base_sets))
sets <- Filter(Negate(is.null), sets)
models <- list(mfsvr = function(d) mfsvr(y ~ ., d), svr = function(d) svr(y ~ ., d))

scores <- function(fit, test) {
  band <- predict(fit, test, interval = "prediction")
  is <- (band[, "upr"] - band[, "lwr"]) + 40 * pmax(band[, "lwr"] - test$y, 0) +
    40 * pmax(test$y - band[, "upr"], 0)
  d <- predict(fit, test, type = "distribution")
  c(rmse = sqrt(mean((band[, "fit"] - test$y)^2)), IS = mean(is),
    LS = mean(-density(d, test$y, log = TRUE)),
    cov = mean(test$y >= band[, "lwr"] & test$y <= band[, "upr"]),
    logev = fit$log_evidence)
}
rule_of <- function(fit) {
  k <- fit$kernel
  rule <- if (identical(k$type, "polynomial")) "linear" else
    paste0(if (identical(k$type, "matern")) paste0("Matern ", k$nu * 2, "/2") else "Gaussian",
           if (!is.null(k$input_widths)) " per input" else "")
  paste0(rule, if (isTRUE(fit$bias_variance > 0)) "+offset" else "")
}

cat(sprintf("%d random 70/30 splits per set (cpus: the first is set.seed(77))\n\n", splits))
for (name in names(sets)) {
  d <- sets[[name]]
  n <- nrow(d)
  for (m in names(models)) {
    out <- matrix(NA_real_, splits, 6, dimnames = list(NULL, c("rmse", "IS", "LS", "cov", "logev", "cpu")))
    rules <- character(splits)
    for (s in seq_len(splits)) {
      set.seed(if (name == "cpus" && s == 1L) 77 else 1000 + s)
      train <- sample(n, round(0.7 * n))
      t <- system.time(fit <- tryCatch(suppressWarnings(models[[m]](d[train, ])),
                                       error = function(e) NULL))
      if (is.null(fit)) next
      out[s, ] <- c(scores(fit, d[-train, ]), t[["user.self"]] + t[["sys.self"]])
      rules[s] <- rule_of(fit)
    }
    avg <- colMeans(out, na.rm = TRUE)
    tab <- table(rules[nzchar(rules)])
    cat(sprintf("%-16s %-5s RMSE %.4f IS %.3f LS %.4f cov %.3f logev %.3f CPU %.3f s | %s\n",
                name, m, avg[["rmse"]], avg[["IS"]], avg[["LS"]], avg[["cov"]], avg[["logev"]],
                avg[["cpu"]], paste(names(tab), tab, sep = ": ", collapse = ", ")))
  }
}
