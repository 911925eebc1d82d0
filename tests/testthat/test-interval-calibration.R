# rvm() and srvm(): prediction intervals calibrated by cross-validation
# (R/interval-calibration.R), held to refits through the public interface
# and to held-out coverage where the models' own intervals fall short.

sinc_data <- function(n, seed, sd = 0.15) {
  set.seed(seed)
  x <- matrix(runif(n, -8, 8))
  list(x = x, y = sin(x[, 1]) / x[, 1] + rnorm(n, sd = sd))
}

# The calibrated interval at `level` by plain R: each fold refitted by the
# fitter with the model's own intervals, each left-out target's absolute
# residual over its refit's half-width, the (n + 1) level-th smallest of
# these (interpolated) times the full fit's own half-width.
reference_interval <- function(fitter, d, new_x, folds, level) {
  n <- length(d$y)
  ratio <- numeric(n)
  for (k in unique(folds)) {
    out <- folds == k
    refit <- fitter(d$x[!out, , drop = FALSE], d$y[!out], 0)
    b <- predict(refit, d$x[out, , drop = FALSE], interval = "prediction", level = level)
    ratio[out] <- abs(d$y[out] - b[, "fit"]) / ((b[, "upr"] - b[, "lwr"]) / 2)
  }
  sorted <- sort(ratio)
  h <- (n + 1) * level  # position of the quantile, between order statistics
  below <- floor(h)
  q <- if (h >= n) sorted[n] else sorted[below] + (h - below) * (sorted[below + 1] - sorted[below])
  own <- predict(fitter(d$x, d$y, 0), new_x, interval = "prediction", level = level)
  half <- q * (own[, "upr"] - own[, "lwr"]) / 2
  cbind(fit = own[, "fit"], lwr = own[, "fit"] - half, upr = own[, "fit"] + half)
}

test_that("the calibrated intervals are the refits' quantile times the model's own", {
  d <- sinc_data(40, 1)
  new_x <- matrix(c(-9, -2.5, 0.3, 4, 12))
  fitters <- list(
    rvm = function(x, y, folds) rvm(x, y, kernel = rbf_kernel(1.6), scale = FALSE,
                                    calibration_folds = folds),
    srvm = function(x, y, folds) srvm(x, y, kernel = rbf_kernel(1.6), scale = FALSE,
                                      calibration_folds = folds))
  for (name in names(fitters)) {
    fit <- fitters[[name]](d$x, d$y, 5)
    cal <- fit$interval_calibration
    expect_identical(cal$folds, 5L)
    # the documented assignment: a seeded permutation of equal folds
    set.seed(1)
    expect_identical(cal$fold, sample(rep_len(1:5, 40)))
    for (level in c(0.5, 0.8, 0.95, 0.99)) {
      expected <- reference_interval(fitters[[name]], d, new_x, cal$fold, level)
      got <- predict(fit, new_x, interval = "prediction", level = level)
      expect_equal(unname(got), unname(expected), tolerance = 1e-8, info = paste(name, level))
    }
  }
})

test_that("calibration moves the intervals only: fits, means and confidence bands stay", {
  fit <- rvm(mpg ~ wt + hp + disp, data = mtcars)
  own <- update(fit, calibration_folds = 0)
  expect_null(own$interval_calibration)
  expect_identical(fit$interval_calibration$folds, 5L)  # the default at 32 rows
  expect_identical(fitted(fit), fitted(own))
  expect_identical(logLik(fit), logLik(own))
  new <- mtcars[c(1, 15, 20), ]
  expect_identical(predict(fit, new), predict(own, new))
  expect_identical(predict(fit, new, interval = "confidence"),
                   predict(own, new, interval = "confidence"))
  wide <- predict(fit, new, interval = "prediction")
  narrow <- predict(own, new, interval = "prediction")
  expect_identical(wide[, "fit"], narrow[, "fit"])
  # one factor per level, the same for every new input
  ratio <- (wide[, "upr"] - wide[, "lwr"]) / (narrow[, "upr"] - narrow[, "lwr"])
  expect_equal(unname(ratio), rep(ratio[[1]], 3), tolerance = 1e-12)
  expect_match(paste(capture.output(print(fit)), collapse = "\n"),
               "calibrated by 5-fold cross-validation", fixed = TRUE)
  expect_match(paste(capture.output(summary(fit)), collapse = "\n"),
               "calibrated by 5-fold cross-validation", fixed = TRUE)
  expect_match(paste(capture.output(print(own)), collapse = "\n"),
               "Prediction intervals: the model's own", fixed = TRUE)
})

test_that("calibrated intervals follow a change of the response's units", {
  d <- sinc_data(40, 9)
  new_x <- matrix(c(-5, 0.5, 7))
  for (fitter in list(rvm, srvm)) {
    f1 <- fitter(d$x, d$y)
    f2 <- fitter(d$x, 5 + 1000 * d$y)
    expect_false(is.null(f1$interval_calibration))
    b1 <- predict(f1, new_x, interval = "prediction", level = 0.8)
    b2 <- predict(f2, new_x, interval = "prediction", level = 0.8)
    expect_equal(unname(b2), 5 + 1000 * unname(b1), tolerance = 1e-8)
  }
})

test_that("the session's random numbers are left as they were", {
  set.seed(42)
  before <- .Random.seed
  fit <- rvm(dist ~ speed, data = cars)
  expect_false(is.null(fit$interval_calibration))
  expect_identical(.Random.seed, before)
})

test_that("calibrated intervals hold new targets where the models' own fall short", {
  # Friedman 1 with 40 training rows (10 inputs, 5 irrelevant): the pruned
  # fits' own 95% intervals hold about 0.86 (rvm) and 0.77 (srvm) of new
  # targets over these splits
  coverage <- function(model, reps) {
    rowMeans(vapply(seq_len(reps), function(r) {
      set.seed(r)
      s <- mlbench::mlbench.friedman1(240, sd = 1)
      train <- 1:40
      held <- s$y[-train]
      inside <- function(folds) {
        fit <- suppressWarnings(model(s$x[train, ], s$y[train], folds))
        b <- predict(fit, s$x[-train, ], interval = "prediction", level = 0.95)
        mean(held >= b[, "lwr"] & held <= b[, "upr"])
      }
      c(calibrated = inside(NULL), own = inside(0))
    }, numeric(2)))
  }
  skip_if_not_installed("mlbench")
  skip_if_small_tests("coverage is a mean over 15 splits of 210 fits")
  for (model in list(function(x, y, k) rvm(x, y, calibration_folds = k),
                     function(x, y, k) srvm(x, y, calibration_folds = k))) {
    cov <- coverage(model, 15)
    expect_lt(cov[["own"]], 0.9)
    expect_gt(cov[["calibrated"]], 0.92)
    expect_lt(cov[["calibrated"]], 0.98)
  }
})

test_that("the default calibrates from 10 to 500 observations and print() says why not", {
  d <- sinc_data(9, 2)
  small <- rvm(d$x, d$y)
  expect_null(small$interval_calibration)
  d <- sinc_data(10, 2)
  expect_identical(rvm(d$x, d$y)$interval_calibration$folds, 5L)
  d <- sinc_data(501, 3)
  large <- rvm(d$x, d$y, kernel = rbf_kernel(1))
  expect_null(large$interval_calibration)
  expect_match(paste(capture.output(print(large)), collapse = "\n"),
               "not calibrated beyond 500 observations", fixed = TRUE)
  three <- rvm(d$x, d$y, kernel = rbf_kernel(1), calibration_folds = 3)
  expect_identical(three$interval_calibration$folds, 3L)
  # TRUE is the default's five folds, FALSE none
  d <- sinc_data(30, 4)
  expect_identical(rvm(d$x, d$y, calibration_folds = TRUE)$interval_calibration$folds, 5L)
  expect_null(rvm(d$x, d$y, calibration_folds = FALSE)$interval_calibration)
  # as many folds as rows: leave-one-out refits
  loo <- rvm(d$x, d$y, calibration_folds = 30)
  expect_setequal(loo$interval_calibration$fold, 1:30)
})

test_that("bad calibration_folds are errors that name it", {
  d <- sinc_data(30, 5)
  for (bad in list(-1, 1, 1.5, NA, "a", c(2, 3), Inf)) {
    expect_error(rvm(d$x, d$y, calibration_folds = bad), "calibration_folds")
    expect_error(srvm(d$x, d$y, calibration_folds = bad), "calibration_folds")
  }
  expect_error(rvm(d$x, d$y, calibration_folds = 31), "exceeds the number of observations")
  d <- sinc_data(6, 6)
  expect_error(suppressWarnings(rvm(d$x, d$y, calibration_folds = 2)), "at least 10 observations")
})

test_that("a refit that fails leaves the model's own intervals, with a warning", {
  d <- sinc_data(30, 7)
  fit <- rvm(d$x, d$y, calibration_folds = 0)
  failing <- function(x, y) stop("no convergence")
  expect_warning(out <- gpsvm:::.calibrate_intervals(fit, 3L, failing, "rvm():"),
                 "rvm\\(\\): the prediction intervals are the model's own.*no convergence")
  expect_null(out$interval_calibration)
})

test_that("an edited calibration record is caught before use", {
  d <- sinc_data(30, 8)
  fit <- rvm(d$x, d$y)
  edits <- list(function(f) { f$interval_calibration$scale[2] <- -1; f },
                function(f) { f$interval_calibration$residual[1] <- NaN; f },
                function(f) { f$interval_calibration$fold[4] <- 9; f },
                function(f) { f$interval_calibration$folds <- 1; f },
                function(f) { f$interval_calibration$df <- f$interval_calibration$df[-1]; f },
                function(f) { f$interval_calibration <- "calibrated"; f })
  for (edit in edits) {
    expect_error(predict(edit(fit), d$x[1:2, , drop = FALSE], interval = "prediction"),
                 "interval_calibration")
  }
})
