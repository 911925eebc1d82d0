# gpsvm_caret(): every model through caret::train() on small data, checked
# against gpsvm's fitters called directly on the same rows; the default grids
# against the data-driven width written out; bad grids reach the user with
# the fitter's own message.

skip_if_not_installed("caret")

caret_reg_data <- function(n = 50, seed = 11) {
  set.seed(seed)
  d <- data.frame(x1 = runif(n, -2, 2), x2 = rnorm(n))
  d$y <- 3 * sin(d$x1) + d$x2 + rnorm(n, sd = 0.3)
  d
}

caret_cls_data <- function(n = 60, seed = 12) {
  set.seed(seed)
  d <- data.frame(x1 = rnorm(n), x2 = rnorm(n))
  d$y <- factor(ifelse(d$x1^2 + d$x2 > 0.8, "high", "low"))
  d
}

# kernlab's sigest() rule on the standardised inputs, in gpsvm's convention:
# 1 / sqrt(1/q_0.1 + 1/q_0.9) of the non-zero squared distances
width_r <- function(x) {
  d2 <- as.vector(dist(scale(as.matrix(x))))^2
  q <- quantile(d2[d2 > 0], c(0.1, 0.9), names = FALSE)
  1 / sqrt(1 / q[1] + 1 / q[2])
}

# The error and the warnings of an expression (caret prints a summary of the
# missing metrics before it stops, which is captured too).
stopped_with_warnings <- function(expr) {
  warnings <- character(0)
  error <- NULL
  utils::capture.output(error <- tryCatch(withCallingHandlers(expr, warning = function(w) {
    warnings <<- c(warnings, conditionMessage(w))
    invokeRestart("muffleWarning")
  }), error = conditionMessage))
  list(error = error, warnings = warnings)
}

cv3 <- function(...) caret::trainControl(method = "cv", number = 3, savePredictions = "final", ...)

# The held-out predictions caret saved for the first fold, and gpsvm's own
# fit on that fold's training rows with the chosen values (`refit`).
check_first_fold <- function(tr, d, refit, classes = FALSE) {
  fold <- tr$pred[tr$pred$Resample == "Fold1", ]
  train_rows <- tr$control$index$Fold1
  fit <- refit(d[train_rows, c("x1", "x2")], d$y[train_rows])
  direct <- predict(fit, d[fold$rowIndex, c("x1", "x2")])
  if (classes) {
    expect_identical(as.character(fold$pred), as.character(direct))
  } else {
    expect_equal(fold$pred, unname(direct), tolerance = 1e-8)
  }
}

test_that("the regression models train through caret with grids, as gpsvm fits them", {
  skip_on_cran()
  d <- caret_reg_data()
  grid <- list(
    svr = expand.grid(sigma = c(0.7, 1.5), C = c(0.5, 2), epsilon = 0.1),
    mfsvr = expand.grid(sigma = c(0.7, 1.5), C = 5, epsilon = c(0.05, 0.2)),
    rvm = data.frame(sigma = c(0.5, 1.5)),
    srvm = data.frame(sigma = 1))
  refit <- list(
    svr = function(b) function(x, y) svr(x, y, C = b$C, epsilon = b$epsilon, kernel = rbf_kernel(b$sigma)),
    mfsvr = function(b) function(x, y) mfsvr(x, y, C = b$C, epsilon = b$epsilon, kernel = rbf_kernel(b$sigma)),
    rvm = function(b) function(x, y) rvm(x, y, kernel = rbf_kernel(b$sigma)),
    srvm = function(b) function(x, y) srvm(x, y, kernel = rbf_kernel(b$sigma)))
  for (m in names(grid)) {
    set.seed(1)
    tr <- caret::train(d[c("x1", "x2")], d$y, method = gpsvm_caret(m), tuneGrid = grid[[m]],
                       trControl = cv3())
    expect_s3_class(tr$finalModel, paste0("gpsvm_", m))
    b <- tr$bestTune
    expect_equal(tr$finalModel$kernel$sigma, b$sigma, info = m)
    expect_equal(nrow(tr$results), nrow(grid[[m]]), info = m)
    expect_true(all(is.finite(tr$results$RMSE)), info = m)
    check_first_fold(tr, d, refit[[m]](b))
    # the final model is the fitter's fit on all rows
    direct <- refit[[m]](b)(d[c("x1", "x2")], d$y)
    expect_equal(unname(predict(tr, d)), unname(predict(direct, d[c("x1", "x2")])),
                 tolerance = 1e-8, info = m)
  }
})

test_that("the classifiers train through caret, with gpc()'s probabilities", {
  d <- caret_cls_data()
  set.seed(2)
  g <- caret::train(d[c("x1", "x2")], d$y, method = gpsvm_caret("gpc"),
                    tuneGrid = expand.grid(sigma = c(0.5, 1.5), noise = c(0.05, 0.5)),
                    trControl = cv3(classProbs = TRUE))
  expect_s3_class(g$finalModel, "gpsvm_gpc")
  b <- g$bestTune
  expect_equal(g$finalModel$noise, b$noise)
  check_first_fold(g, d, function(x, y) gpc(x, y, kernel = rbf_kernel(b$sigma), noise = b$noise),
                   classes = TRUE)
  p <- predict(g, d, type = "prob")
  expect_named(p, c("high", "low"))
  direct <- gpc(d[c("x1", "x2")], d$y, kernel = rbf_kernel(b$sigma), noise = b$noise)
  expect_equal(as.matrix(p), unname(predict(direct, d[c("x1", "x2")], type = "prob")),
               ignore_attr = TRUE, tolerance = 1e-10)
  expect_equal(unname(rowSums(p)), rep(1, nrow(d)))
  set.seed(2)
  s <- caret::train(y ~ x1 + x2, data = d, method = gpsvm_caret("svc"),
                    tuneGrid = expand.grid(sigma = 1, C = c(0.5, 4)), trControl = cv3())
  expect_s3_class(s$finalModel, "gpsvm_svc")
  expect_null(gpsvm_caret("svc")$prob)
  b <- s$bestTune
  check_first_fold(s, d, function(x, y) svc(x, y, kernel = rbf_kernel(b$sigma), C = b$C),
                   classes = TRUE)
  # three classes, one model per class against the rest
  set.seed(3)
  i <- caret::train(Species ~ Petal.Length + Petal.Width, data = iris,
                    method = gpsvm_caret("gpc"), tuneLength = 1,
                    trControl = caret::trainControl(method = "cv", number = 2, classProbs = TRUE))
  expect_identical(colnames(predict(i, iris, type = "prob")), levels(iris$Species))
  expect_gt(max(i$results$Accuracy), 0.8)
})

test_that("a resample that misses a rare class fits the others and predicts every level", {
  # three cases of the third class; the first resample has none of them
  d <- iris[c(1:100, 101:103), c("Petal.Length", "Sepal.Width", "Species")]
  names(d) <- c("x1", "x2", "y")
  set.seed(4)
  index <- list(Resample1 = sort(sample(100, 100, replace = TRUE)),
                Resample2 = sort(sample(nrow(d), nrow(d), replace = TRUE)))
  for (model in c("gpc", "svc")) {
    grid <- if (model == "gpc") data.frame(sigma = 1, noise = 0.1) else data.frame(sigma = 1, C = 1)
    ctrl <- caret::trainControl(method = "boot", index = index, classProbs = model == "gpc",
                                savePredictions = "all")
    run <- stopped_with_warnings({
      tr <- caret::train(d[c("x1", "x2")], d$y, method = gpsvm_caret(model), tuneGrid = grid,
                         trControl = ctrl)
      NULL
    })
    expect_null(run$error)
    expect_length(run$warnings, 0L)
    expect_false(anyNA(tr$results$Accuracy))
    # the first resample's held-out predictions are those of the fit on its
    # two classes, and carry all three levels
    held <- tr$pred[tr$pred$Resample == "Resample1", ]
    direct <- if (model == "gpc") {
      gpc(d[index$Resample1, c("x1", "x2")], droplevels(d$y[index$Resample1]),
          kernel = rbf_kernel(1), noise = 0.1)
    } else {
      svc(d[index$Resample1, c("x1", "x2")], droplevels(d$y[index$Resample1]),
          kernel = rbf_kernel(1), C = 1)
    }
    expect_identical(levels(held$pred), levels(d$y))
    expect_identical(as.character(held$pred),
                     as.character(predict(direct, d[held$rowIndex, c("x1", "x2")])))
    if (model == "gpc") {
      p <- predict(direct, d[held$rowIndex, c("x1", "x2")], type = "prob")
      expect_equal(held$versicolor, unname(p[, "versicolor"]), tolerance = 1e-10)
      expect_identical(held$virginica, rep(0, nrow(held)))
    }
  }
})

test_that("tune = 'evidence' lets each fit choose its hyperparameters by its evidence", {
  skip_on_cran()
  d <- caret_reg_data()
  set.seed(4)
  ev <- suppressWarnings(caret::train(d[c("x1", "x2")], d$y,
                                      method = gpsvm_caret("mfsvr", tune = "evidence"),
                                      trControl = cv3()))
  expect_identical(as.character(ev$bestTune$kernel), "rbf")
  expect_named(ev$finalModel$optimization$estimate, c("C", "epsilon", "sigma"))
  fold <- ev$pred[ev$pred$Resample == "Fold1", ]
  rows <- ev$control$index$Fold1
  own <- suppressWarnings(mfsvr(d[rows, c("x1", "x2")], d$y[rows], kernel = rbf_kernel(),
                               optimize = TRUE))
  expect_equal(fold$pred, unname(predict(own, d[fold$rowIndex, c("x1", "x2")])),
               tolerance = 1e-6)
  set.seed(4)
  # (some folds' evidence for C is largest at its interval's end: a warning)
  s <- suppressWarnings(caret::train(d[c("x1", "x2")], d$y,
                                     method = gpsvm_caret("svr", tune = "evidence"),
                                     tuneGrid = data.frame(kernel = c("rbf", "linear")),
                                     trControl = cv3()))
  expect_identical(s$finalModel$optimization$evidence, "ep")
  expect_equal(nrow(s$results), 2L)
  r <- gpsvm_caret("rvm", tune = "evidence")
  expect_identical(r$parameters$parameter, "kernel")
  expect_equal(r$grid(d[c("x1", "x2")], d$y, len = 5), data.frame(kernel = "rbf"))
  expect_error(gpsvm_caret("svc", tune = "evidence"), "svc\\(\\) has none")
})

test_that("the default grids sit around the data-driven width, C on a log grid", {
  d <- caret_reg_data()
  x <- d[c("x1", "x2")]
  w <- width_r(x)
  g <- gpsvm_caret("mfsvr")$grid(x, d$y, len = 3)
  expect_named(g, c("sigma", "C", "epsilon"))
  expect_equal(nrow(g), 9L)
  expect_equal(sort(unique(g$sigma)), w * c(1 / 2, 1, 2))
  expect_equal(sort(unique(g$C)), c(5 / 4, 5, 20))
  expect_equal(unique(g$epsilon), 0.1)
  expect_equal(gpsvm_caret("svr")$grid(x, d$y, len = 1), data.frame(sigma = w, C = 1, epsilon = 0.1))
  expect_equal(gpsvm_caret("rvm")$grid(x, d$y, len = 5)$sigma, w * c(1 / 4, 1 / 2, 1, 2, 4))
  gp <- gpsvm_caret("gpc")$grid(x, d$y, len = 2)
  expect_equal(sort(unique(gp$noise)), c(0.05, 0.2))
  expect_equal(sort(unique(gp$sigma)), w * 2^c(-0.5, 0.5))
  set.seed(5)
  rnd <- gpsvm_caret("svc")$grid(x, d$y, len = 20, search = "random")
  expect_equal(nrow(rnd), 20L)
  expect_true(all(rnd$sigma >= w / 4 & rnd$sigma <= 4 * w))
  expect_true(all(rnd$C >= 1 / 32 & rnd$C <= 32))
  sorted <- gpsvm_caret("svr")$sort(g)
  expect_equal(sorted$C, sort(g$C))
})

test_that("a bad grid value reaches the user as gpsvm's own error", {
  d <- caret_reg_data(30)
  x <- d[c("x1", "x2")]
  own <- function(expr) tryCatch(expr, error = conditionMessage)
  c_message <- own(svr(x, d$y, C = -1))
  sigma_message <- own(rbf_kernel(-2))
  noise_message <- own(gpc(x, d$y > 0, noise = -0.1))
  expect_match(c_message, "'C'")
  ctrl <- caret::trainControl(method = "cv", number = 2)
  run <- function(model, grid, y = d$y) {
    caret::train(x, y, method = gpsvm_caret(model), tuneGrid = grid, trControl = ctrl)
  }
  expect_error(run("svr", expand.grid(sigma = 1, C = c(-1, 1), epsilon = 0.1)), c_message,
               fixed = TRUE)
  expect_error(run("mfsvr", expand.grid(sigma = c(1, -2), C = 1, epsilon = 0.1)), sigma_message,
               fixed = TRUE)
  expect_error(run("gpc", expand.grid(sigma = 1, noise = c(0.1, -0.1)), factor(d$y > 0)),
               noise_message, fixed = TRUE)
  expect_error(run("svr", expand.grid(sigma = 1, C = 1, epsilon = c(0.1, -1))), "'epsilon'")
  expect_error(caret::train(x, d$y, method = gpsvm_caret("mfsvr", "evidence"),
                            tuneGrid = data.frame(kernel = c("rbf", "spline")), trControl = ctrl),
               "'kernel' must be one of \"rbf\", \"linear\"", fixed = TRUE)
  # a one-row grid is not shown to the model before fitting: each resample's
  # failure is a warning with the same message, and caret stops
  one_row <- stopped_with_warnings(run("svr", data.frame(sigma = 1, C = -1, epsilon = 0.1)))
  expect_match(one_row$error, "Stopping")
  expect_true(any(grepl(c_message, one_row$warnings, fixed = TRUE)))
  weighted <- stopped_with_warnings(
    caret::train(x, d$y, method = gpsvm_caret("rvm"), weights = rep(1, 30),
                 tuneGrid = data.frame(sigma = c(1, 2)), trControl = ctrl))
  expect_true(any(grepl("rvm() does not take case weights", weighted$warnings, fixed = TRUE)))
  expect_error(gpsvm_caret("glm"), "'model' must be one of")
  expect_error(gpsvm_caret("svr", tune = "cv"), "'tune' must be one of")
})
