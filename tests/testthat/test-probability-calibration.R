# probability_calibration() and plot(fit, which = "calibration") for the
# classifiers: reliability of held-out and cross-validated class
# probabilities, against plain-R binning.

two_classes <- function(n, seed, flip = 0) {
  set.seed(seed)
  x1 <- runif(n, -2, 2)
  x2 <- runif(n, -2, 2)
  y <- x1^2 + x2 > 1
  y <- xor(y, runif(n) < flip)
  data.frame(x1 = x1, x2 = x2, y = factor(ifelse(y, "out", "in"), levels = c("in", "out")))
}

# The bins by plain R: probability p of the event `hit`, bins of width
# 1 / bins (the last closed).
reference_bins <- function(p, hit, bins) {
  bin <- pmin(floor(p * bins) + 1, bins)
  used <- sort(unique(bin))
  data.frame(bin_lower = (used - 1) / bins, bin_upper = used / bins,
             predicted = as.vector(tapply(p, bin, mean)),
             observed = as.vector(tapply(hit, bin, mean)),
             n = as.vector(table(bin)))
}

test_that("held-out reliability bins the second class's probability (two classes)", {
  train <- two_classes(80, 1, flip = 0.1)
  test <- two_classes(60, 2, flip = 0.1)
  test$x1[5] <- NA  # a case without a probability is left out
  fit <- gpc(y ~ x1 + x2, train, kernel = rbf_kernel(1), noise = 0.2)
  tab <- probability_calibration(fit, newdata = test, bins = 5)
  expect_identical(attr(tab, "source"), "held-out data")
  keep <- !is.na(test$x1)
  prob <- predict(fit, test[keep, ], type = "prob")
  hit <- test$y[keep] == "out"
  ref <- reference_bins(prob[, "out"], hit, 5)
  expect_equal(tab[c("bin_lower", "bin_upper", "predicted", "observed")],
               ref[c("bin_lower", "bin_upper", "predicted", "observed")], tolerance = 1e-12)
  expect_identical(tab$n, ref$n)
  for (i in seq_len(nrow(tab))) {
    expect_equal(c(tab$lower[i], tab$upper[i]),
                 qbinom(c(0.025, 0.975), ref$n[i], ref$predicted[i]) / ref$n[i])
  }
  truth <- ifelse(hit, prob[, "out"], prob[, "in"])
  expect_equal(attr(tab, "log_loss"), -mean(log(truth)), tolerance = 1e-12)
  # a fit to a matrix takes the classes in y, and agrees
  x <- as.matrix(train[, 1:2])
  m <- gpc(x, train$y, kernel = rbf_kernel(1), noise = 0.2)
  by_matrix <- probability_calibration(m, newdata = as.matrix(test[keep, 1:2]), y = test$y[keep],
                                       bins = 5)
  expect_equal(by_matrix$observed, tab$observed)
  expect_equal(by_matrix$predicted, tab$predicted, tolerance = 1e-10)
})

test_that("with three classes every class's probability of every case is binned", {
  set.seed(3)
  rows <- sample(150, 100)
  fit <- gpc(Species ~ Petal.Length + Sepal.Width, iris[rows, ], kernel = rbf_kernel(1),
             noise = 0.1)
  test <- iris[-rows, ]
  tab <- probability_calibration(fit, newdata = test, bins = 4)
  prob <- predict(fit, test, type = "prob")
  hit <- outer(as.integer(test$Species), 1:3, `==`)
  ref <- reference_bins(as.vector(prob), as.vector(hit), 4)
  expect_equal(tab$observed, ref$observed)
  expect_equal(tab$predicted, ref$predicted, tolerance = 1e-12)
  expect_identical(sum(tab$n), 3L * 50L)
})

test_that("cross-validation refits the call on each fold: against a plain-R loop", {
  d <- two_classes(48, 4, flip = 0.1)
  fit <- gpc(y ~ x1 + x2, d, kernel = rbf_kernel(1), noise = 0.2)
  tab <- probability_calibration(fit, folds = 4, bins = 4, seed = 7)
  expect_identical(attr(tab, "source"), "4-fold cross-validation")
  set.seed(7)
  fold <- sample(rep_len(1:4, 48))
  p <- numeric(48)
  for (k in 1:4) {
    out <- fold == k
    refit <- gpc(y ~ x1 + x2, d[!out, ], kernel = rbf_kernel(1), noise = 0.2)
    p[out] <- predict(refit, d[out, ], type = "prob")[, "out"]
  }
  ref <- reference_bins(p, d$y == "out", 4)
  expect_equal(tab$observed, ref$observed)
  expect_equal(tab$predicted, ref$predicted, tolerance = 1e-10)
  # the session's random numbers are as they were
  set.seed(99)
  before <- runif(1)
  set.seed(99)
  probability_calibration(fit, folds = 3)
  expect_identical(runif(1), before)
})

test_that("an over-confident classifier shows: its confident cases come true less often", {
  # 30% of the labels flipped at random, fitted with almost no noise and a
  # narrow kernel: the fit interpolates the flips and is sure of them
  d <- two_classes(test_size(200, 120), 5, flip = 0.3)
  test <- two_classes(400, 6, flip = 0.3)
  sure <- gpc(y ~ x1 + x2, d, kernel = rbf_kernel(0.1), noise = 1e-4)
  tab <- probability_calibration(sure, newdata = test, bins = 5)
  top <- tab[nrow(tab), ]
  expect_gt(top$predicted, 0.8)
  expect_lt(top$observed, top$lower)
  # the evidence's noise and width: its most confident bin holds
  chosen <- probability_calibration(gpc(y ~ x1 + x2, d), newdata = test, bins = 5)
  expect_lt(attr(chosen, "log_loss"), attr(tab, "log_loss"))
})

test_that("plot(fit, which = \"calibration\") draws the table, and bad input gives clear errors", {
  d <- two_classes(40, 8, flip = 0.1)
  fit <- gpc(y ~ x1 + x2, d, kernel = rbf_kernel(1), noise = 0.2)
  pdf(NULL)
  on.exit(dev.off())
  expect_invisible(plot(fit, which = "calibration", folds = 3, bins = 4, main = "gpc"))
  expect_invisible(plot(fit, which = "calibration", newdata = d))
  expect_invisible(plot(fit))  # the decision regions, as before
  expect_error(plot(fit, which = "calibrate"), "'which' must be one of")
  expect_error(plot(svc(y ~ x1 + x2, d), which = "calibration"), "no class probabilities")
  expect_error(probability_calibration(svc(y ~ x1 + x2, d)), "use gpc\\(\\)")
  expect_error(probability_calibration(fit, bins = 1), "'bins'")
  expect_error(probability_calibration(fit, folds = 41), "'folds'")
  expect_error(probability_calibration(fit, y = d$y), "'y' goes with 'newdata'")
  expect_error(probability_calibration(fit, newdata = d, y = d$y), "'y' is for a fit to a matrix")
  other <- d
  other$y <- factor(ifelse(d$y == "in", "in", "elsewhere"))
  expect_error(probability_calibration(fit, newdata = other), "include 'elsewhere'")
  m <- gpc(as.matrix(d[, 1:2]), d$y, kernel = rbf_kernel(1), noise = 0.2)
  expect_error(probability_calibration(m, newdata = as.matrix(d[, 1:2])), "'y' must give")
  expect_error(probability_calibration(m, newdata = as.matrix(d[, 1:2]), y = d$y[1:3]),
               "one per row")
  expect_error(probability_calibration(fit, extra = 1), "unused|unknown")
  missing <- d[1:3, ]
  missing$x1 <- NA_real_
  expect_error(probability_calibration(fit, newdata = missing), "no held-out case has both")
})
