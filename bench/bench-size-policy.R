# The size rules of ?gpsvm_size_policy at their thresholds: each rule
# switches between two computations at some n.  For each, the same data of
# that size are fitted on both sides of the switch (the rule set to n and
# to n - 1 through options(gpsvm.size_policy), or to n + 1 for a smallest
# size), and the fits compared on
# held-out rows: the largest difference of the point predictions in units
# of the predictive sd, the ratio of the mean widths of the 95% prediction
# intervals (regression) or the largest difference of class probabilities
# (classification), the held-out coverage or log loss on each side, and the
# seconds each side took.  A switch is harmless where these differences are
# within the model's own uncertainty (a fraction of a predictive sd).
#
#   make bench BENCH=size-policy
suppressPackageStartupMessages(library(gpsvm))
options(gpsvm.quiet = TRUE)

friedman1 <- function(n, seed) {
  set.seed(seed)
  x <- matrix(runif(n * 10), n, 10)
  y <- 10 * sin(pi * x[, 1] * x[, 2]) + 20 * (x[, 3] - 0.5)^2 + 10 * x[, 4] + 5 * x[, 5] +
    rnorm(n)
  list(x = x, y = y)
}

# Fits `fit(x, y)` with the rule at n (the small-data side) and at `other`
# (n - 1 for a largest size; n + 1 for a smallest, per_input_min_n).
both_sides <- function(rule, n, fit, other = n - 1) {
  side <- function(value) {
    old <- options(gpsvm.size_policy = stats::setNames(list(value), rule))
    on.exit(options(old))
    t0 <- proc.time()[["elapsed"]]
    f <- fit()
    list(fit = f, seconds = proc.time()[["elapsed"]] - t0)
  }
  list(small = side(n), large = side(other))
}

regression_row <- function(rule, model, n, sides, test) {
  p <- lapply(sides, function(s) predict(s$fit, test$x, interval = "prediction"))
  se <- predict(sides$small$fit, test$x, se.fit = TRUE)
  sd <- sqrt(se$se.fit^2 + sigma(sides$small$fit)^2)
  width <- vapply(p, function(q) mean(q[, "upr"] - q[, "lwr"]), numeric(1))
  cover <- vapply(p, function(q) mean(test$y >= q[, "lwr"] & test$y <= q[, "upr"]), numeric(1))
  data.frame(rule = rule, model = model, n = n,
             mean_shift_sd = max(abs(p$small[, "fit"] - p$large[, "fit"]) / sd),
             width_ratio = width[["large"]] / width[["small"]],
             coverage_small = cover[["small"]], coverage_large = cover[["large"]],
             seconds_small = sides$small$seconds, seconds_large = sides$large$seconds)
}

# three inputs of which one barely matters: on 2000 rows the kernel matrix
# has a low rank, so dense_max_n switches no prior, only where the kernel
# and the widths are weighed
low_rank_inputs <- function(n, seed) {
  set.seed(seed)
  x <- matrix(runif(n * 3), n, 3)
  list(x = x, y = sin(6 * x[, 1]) + 2 * x[, 2] + 0.3 * x[, 3] + rnorm(n, sd = 0.2))
}

rows <- list()
add <- function(row) {
  print(row, row.names = FALSE, digits = 3)
  rows[[length(rows) + 1L]] <<- row
}

for (case in list(list(rule = "per_input_min_n", model = "mfsvr", n = 100, other = 101),
                  list(rule = "C_mixture_max_n", model = "mfsvr", n = 200),
                  list(rule = "calibration_max_n_ep", model = "mfsvr", n = 100),
                  list(rule = "calibration_max_n_ep", model = "svr", n = 100),
                  list(rule = "calibration_max_n_rvm", model = "rvm", n = 500),
                  list(rule = "kernel_choice_max_n", model = "rvm", n = 500),
                  list(rule = "basis_chosen", model = "rvm", n = 1000),
                  list(rule = "dense_max_n", model = "mfsvr", n = 2000),
                  list(rule = "dense_max_n", model = "mfsvr", n = 2000, data = low_rank_inputs),
                  list(rule = "search_max_n", model = "mfsvr", n = 2000),
                  list(rule = "search_max_n", model = "svr", n = 2000))) {
  make <- if (is.null(case$data)) friedman1 else case$data
  d <- make(case$n, 1)
  test <- make(1000, 2)
  fitter <- get(case$model, asNamespace("gpsvm"))
  other <- if (is.null(case$other)) case$n - 1 else case$other
  sides <- both_sides(case$rule, case$n, function() fitter(d$x, d$y), other)
  add(cbind(regression_row(case$rule, case$model, case$n, sides, test),
            data = if (is.null(case$data)) "friedman1" else "low_rank"))
}

# gpc()'s rules: two noisy classes of two inputs, and five classes around a
# circle (mlbench's 2dnormals).  The class probabilities of the two sides
# are compared (largest and mean absolute difference) with those of the
# small side's fit to a second sample of the same size: a classifier's
# probabilities have no predictive sd to measure a shift in, and a switch
# that moves them less than a new sample does is within what the data fix.
set.seed(3)
two_class <- function(n) {
  x <- matrix(rnorm(2 * n), n, 2)
  p <- stats::pnorm(2 * sin(2 * x[, 1]) + x[, 2])
  list(x = x, y = factor(ifelse(runif(n) < p, "b", "a")))
}
five_class <- function(n) {
  d <- mlbench::mlbench.2dnormals(n, cl = 5, sd = 0.6)
  list(x = d$x, y = d$classes)
}
classification_row <- function(rule, n, sides, resample, test) {
  prob <- lapply(c(sides, list(resample = resample)),
                 function(s) predict(s$fit, test$x, type = "prob"))
  log_loss <- vapply(prob, function(p) {
    -mean(log(pmax(p[cbind(seq_along(test$y), match(test$y, colnames(p)))], 1e-15)))
  }, numeric(1))
  switch_diff <- abs(prob$small - prob$large)
  sample_diff <- abs(prob$small - prob$resample)
  data.frame(rule = rule, model = "gpc", n = n,
             largest_probability_difference = max(switch_diff),
             mean_difference = mean(switch_diff),
             largest_difference_new_sample = max(sample_diff),
             mean_difference_new_sample = mean(sample_diff),
             log_loss_small = log_loss[["small"]], log_loss_large = log_loss[["large"]],
             seconds_small = sides$small$seconds, seconds_large = sides$large$seconds)
}
for (case in list(list(rule = "search_dense_max_n", n = 300, data = two_class),
                  list(rule = "gpc_search_max_n", n = 2000, data = two_class),
                  list(rule = "joint_search_max_n", n = 500, data = five_class,
                       multiclass = "joint"),
                  # n K = 10000 at half the rule, where the pool starts, and at
                  # the rule, where the joint model is left alone
                  list(rule = "ovr_max_nk", n = 2000, data = five_class, nk = 20000),
                  list(rule = "ovr_max_nk", n = 2000, data = five_class, nk = 10000,
                       other = 10001))) {
  d <- case$data(case$n)
  again <- case$data(case$n)
  test <- case$data(2000)
  fitter <- function(d) {
    if (is.null(case$multiclass)) function() gpc(d$x, d$y) else
      function() gpc(d$x, d$y, multiclass = case$multiclass)
  }
  at <- if (is.null(case$nk)) case$n else case$nk
  other <- if (is.null(case$other)) at - 1 else case$other
  sides <- both_sides(case$rule, at, fitter(d), other)
  resample <- both_sides(case$rule, at, fitter(again), other)$small
  add(classification_row(case$rule, case$n, sides, resample, test))
}
