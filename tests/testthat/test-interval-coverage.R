# interval_coverage() and plot(fit, which = "calibration"): coverage of held-out
# and cross-validated prediction intervals, against plain-R counts.

calibration_data <- function(n, seed) {
  set.seed(seed)
  x <- runif(n, -3, 3)
  data.frame(x = x, y = sin(x) + rnorm(n, sd = 0.3))
}

test_that("held-out coverage is the share of targets inside predict()'s intervals", {
  train <- calibration_data(40, 1)
  test <- calibration_data(25, 2)
  test$y[3] <- NA  # a missing target is left out
  fit <- mfsvr(y ~ x, data = train)
  levels <- c(0.5, 0.8, 0.95)
  tab <- interval_coverage(fit, newdata = test, levels = levels)
  expect_identical(attr(tab, "source"), "held-out data")
  expect_equal(tab$level, levels)
  keep <- !is.na(test$y)
  for (j in seq_along(levels)) {
    band <- predict(fit, test[keep, ], interval = "prediction", level = levels[j])
    inside <- test$y[keep] >= band[, "lwr"] & test$y[keep] <= band[, "upr"]
    expect_equal(tab$coverage[j], mean(inside))
    expect_equal(tab$width[j], mean(band[, "upr"] - band[, "lwr"]))
    expect_equal(c(tab$lower[j], tab$upper[j]), qbinom(c(0.025, 0.975), 24, levels[j]) / 24)
  }
  expect_identical(tab$n, rep(24L, 3))
  # a fit to a matrix takes the targets in y
  m <- rvm(train$x, train$y)
  by_matrix <- interval_coverage(m, newdata = test$x[keep], y = test$y[keep], levels = levels)
  by_formula <- interval_coverage(rvm(y ~ x, data = train), newdata = test, levels = levels)
  expect_equal(by_matrix$coverage, by_formula$coverage)
})

test_that("cross-validation refits the call on each fold: against a plain-R loop", {
  skip_on_cran()
  d <- calibration_data(24, 3)
  fit <- svr(y ~ x, data = d, C = 2, epsilon = 0.1)
  levels <- c(0.6, 0.9)
  tab <- interval_coverage(fit, folds = 4, levels = levels, seed = 7)
  expect_identical(attr(tab, "source"), "4-fold cross-validation")
  # the same folds, by hand
  set.seed(7)
  fold <- sample(rep_len(1:4, 24))
  inside <- matrix(NA, 24, 2)
  for (k in 1:4) {
    out <- fold == k
    refit <- svr(y ~ x, data = d[!out, ], C = 2, epsilon = 0.1)
    for (j in 1:2) {
      band <- predict(refit, d[out, ], interval = "prediction", level = levels[j])
      inside[out, j] <- d$y[out] >= band[, "lwr"] & d$y[out] <= band[, "upr"]
    }
  }
  expect_equal(tab$coverage, colMeans(inside))
  # the session's random numbers are as they were
  set.seed(99)
  before <- runif(1)
  set.seed(99)
  interval_coverage(fit, folds = 3, levels = 0.8)
  expect_identical(runif(1), before)
  # a search in the call is repeated on every fold; a fit to a matrix
  # reuses the inputs it stores
  m <- mfsvr(d$x, d$y)
  expect_identical(nrow(interval_coverage(m, folds = 3)), 7L)
})

test_that("cross-validation shows intervals too narrow or too wide, and calibrated ones", {
  skip_on_cran()
  # svr() with a C far too large claims almost no noise, one far too small a
  # noise as large as the response; the evidence's C claims what holds
  d <- calibration_data(test_size(60, 30), 4)
  # (the model's own intervals: the default calibration would repair them)
  narrow <- interval_coverage(svr(y ~ x, data = d, C = 1000, epsilon = 0.01, calibration_folds = 0),
                              levels = 0.9)
  expect_lt(narrow$coverage, narrow$lower)
  wide <- interval_coverage(svr(y ~ x, data = d, C = 0.05, calibration_folds = 0), levels = 0.5)
  expect_gt(wide$coverage, wide$upper)
  # with noise of the model's own kind (Laplace), the evidence's intervals
  # hold what they claim (within the binomial range, as 95% of data sets do)
  set.seed(7)
  x <- runif(60, -3, 3)
  laplace <- data.frame(x = x, y = sin(x) + rexp(60, 5) * sample(c(-1, 1), 60, TRUE))
  good <- interval_coverage(svr(y ~ x, data = laplace), levels = c(0.5, 0.8, 0.9))
  expect_true(all(good$coverage >= good$lower & good$coverage <= good$upper))
})

test_that("plot(fit, which = \"calibration\") draws the table", {
  d <- calibration_data(30, 5)
  fit <- rvm(y ~ x, data = d)
  pdf(NULL)
  on.exit(dev.off())
  expect_invisible(plot(fit, which = "calibration", folds = 3, main = "rvm"))
  expect_invisible(plot(svr(y ~ x, data = d), which = "calibration", newdata = d))
  expect_error(plot(fit, which = "calibrate"), "'which' must name panels among")
})

test_that("bad input gives clear errors", {
  d <- calibration_data(20, 6)
  fit <- mfsvr(y ~ x, data = d, C = 5)
  expect_error(interval_coverage(fit, levels = c(0.5, 1)), "'levels' must be numbers in \\(0, 1\\)")
  expect_error(interval_coverage(fit, folds = 1), "'folds'")
  expect_error(interval_coverage(fit, folds = 21), "'folds'")
  expect_error(interval_coverage(fit, newdata = d, y = d$y), "'y' is for a fit to a matrix")
  expect_error(interval_coverage(fit, y = d$y), "'y' goes with 'newdata'")
  expect_error(interval_coverage(fit, newdata = d$x), "'newdata' must be a data frame")
  expect_error(interval_coverage(mfsvr(d$x, d$y, C = 5), newdata = d$x), "'y' must give the held-out")
  expect_error(interval_coverage(fit, newdata = d, extra = 1), "unused|unknown")
  # data that cannot be found again for the refits
  make <- function() {
    local_data <- calibration_data(20, 7)
    mfsvr(y ~ x, data = local_data, C = 5)
  }
  expect_error(interval_coverage(make()), "give held-out data in 'newdata'")
})
