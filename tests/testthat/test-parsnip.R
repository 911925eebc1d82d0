# parsnip's "gpsvm" engines: every fit and prediction against gpsvm's fitters
# called directly on the same rows with the arguments written out by hand;
# the kernels against kernlab's; every prediction type's shape and names;
# tune_grid() over three folds of a workflow with a recipe against fits of
# the baked folds; bad engine arguments stop with gpsvm's own message.

skip_if_not_installed("parsnip")
library(parsnip)

reg_data <- function(n = 80, seed = 21) {
  set.seed(seed)
  d <- data.frame(x1 = runif(n, -2, 2), x2 = rnorm(n), g = factor(sample(c("a", "b"), n, TRUE)))
  d$y <- 3 * sin(d$x1) + d$x2 + (d$g == "b") + rnorm(n, sd = 0.3)
  d
}

cls_data <- function(n = 90, seed = 22) {
  set.seed(seed)
  d <- data.frame(x1 = rnorm(n), x2 = rnorm(n))
  d$y <- factor(ifelse(d$x1^2 + d$x2 + rnorm(n, sd = 0.3) > 0.8, "high", "low"))
  d
}

# A model specification with the engine and its arguments.
regression <- function(object, ...) set_mode(set_engine(object, "gpsvm", ...), "regression")
classification <- function(object, ...) {
  set_mode(set_engine(object, "gpsvm", ...), "classification")
}

# The parsnip fit's predictions of every regression type against the direct
# fit's, at level 0.9.
expect_regression_predictions_equal <- function(pfit, direct, new) {
  expect_equal(predict(pfit, new)$.pred, unname(predict(direct, new)), tolerance = 1e-10)
  for (type in c("conf_int", "pred_int")) {
    interval <- if (type == "conf_int") "confidence" else "prediction"
    got <- predict(pfit, new, type = type, level = 0.9)
    want <- predict(direct, new, interval = interval, level = 0.9)
    expect_equal(got$.pred_lower, unname(want[, "lwr"]), tolerance = 1e-10)
    expect_equal(got$.pred_upper, unname(want[, "upr"]), tolerance = 1e-10)
  }
}

test_that("the engines are registered for all three models in both modes", {
  env <- get_model_env()
  for (model in c("svm_rbf", "svm_poly", "svm_linear")) {
    fits <- env[[paste0(model, "_fit")]]
    expect_setequal(fits$mode[fits$engine == "gpsvm"], c("regression", "classification"))
  }
  # a second registration (gpsvm loaded again) changes nothing
  before <- env$svm_rbf_predict
  gpsvm:::.register_parsnip_engines()
  expect_identical(get_model_env()$svm_rbf_predict, before)
})

test_that("loading parsnip after gpsvm registers the engines, and loading gpsvm does not load parsnip", {
  skip_on_cran()
  script <- paste(
    "invisible(loadNamespace('gpsvm'))",
    "cat(isNamespaceLoaded('parsnip'), '')",
    "invisible(loadNamespace('parsnip'))",
    "cat('gpsvm' %in% parsnip::get_model_env()$svm_poly$engine)", sep = "; ")
  rscript <- file.path(R.home("bin"), "Rscript")
  out <- system2(rscript, c("--vanilla", "-e", shQuote(script)), stdout = TRUE, stderr = FALSE,
                 env = paste0("R_LIBS=", paste(.libPaths(), collapse = .Platform$path.sep)))
  expect_identical(trimws(out[length(out)]), "FALSE TRUE")
})

test_that("rbf_sigma is kernlab's width: the same kernel matrix as rbfdot() and polydot()", {
  skip_if_not_installed("kernlab")
  set.seed(1)
  x <- matrix(rnorm(30), 10, 3)
  for (s in c(1e-3, 0.05, 0.7, 4)) {
    ours <- kernel_matrix(rbf_kernel(gpsvm:::.parsnip_rbf_width(s)), x)
    theirs <- kernlab::kernelMatrix(kernlab::rbfdot(sigma = s), x)
    expect_equal(ours, unclass(theirs)[, ], tolerance = 1e-14, ignore_attr = TRUE)
  }
  # svm_poly()'s mapping poly_kernel(degree, scale_factor, offset = 1)
  ours <- kernel_matrix(poly_kernel(3, scale = 0.2, offset = 1), x)
  theirs <- kernlab::kernelMatrix(kernlab::polydot(degree = 3, scale = 0.2, offset = 1), x)
  expect_equal(ours, unclass(theirs)[, ], tolerance = 1e-13, ignore_attr = TRUE)
})

test_that("svm_rbf() regression with every argument set is mfsvr() with them translated", {
  d <- reg_data()
  train <- d[1:60, ]
  new <- d[61:80, ]
  pfit <- fit(regression(svm_rbf(cost = 3, rbf_sigma = 0.2, margin = 0.05)), y ~ ., data = train)
  direct <- mfsvr(y ~ ., data = train, C = 3, epsilon = 0.05,
                  kernel = rbf_kernel(1 / sqrt(2 * 0.2)), optimize = FALSE)
  expect_regression_predictions_equal(pfit, direct, new)
  expect_equal(logLik(extract_fit_engine(pfit)), logLik(direct))
})

test_that("svm_rbf() regression with nothing set has the evidence choose C, epsilon and the width", {
  skip_on_cran()
  d <- reg_data()
  pfit <- fit(regression(svm_rbf()), y ~ ., data = d[1:60, ])
  direct <- mfsvr(y ~ ., data = d[1:60, ], optimize = TRUE)
  expect_regression_predictions_equal(pfit, direct, d[61:80, ])
  # with one of them set, the evidence chooses the others
  pfit <- fit(regression(svm_rbf(margin = 0.2)), y ~ ., data = d[1:60, ])
  direct <- mfsvr(y ~ ., data = d[1:60, ], epsilon = 0.2, optimize = c("C", "sigma"))
  expect_regression_predictions_equal(pfit, direct, d[61:80, ])
  # optimize = FALSE: the fitter's defaults
  pfit <- fit(regression(svm_rbf(), optimize = FALSE), y ~ ., data = d[1:60, ])
  direct <- mfsvr(y ~ ., data = d[1:60, ], optimize = FALSE)
  expect_regression_predictions_equal(pfit, direct, d[61:80, ])
})

test_that("engine arguments reach the fitter: a width per input, inducing inputs, scale, control", {
  d <- reg_data()
  spec <- regression(svm_rbf(cost = 4), per_input = TRUE, inducing = 15,
                     control = mfsvr_control(tol = 1e-8))
  pfit <- fit(spec, y ~ ., data = d[1:60, ])
  direct <- mfsvr(y ~ ., data = d[1:60, ], C = 4, kernel = rbf_kernel(per_input = TRUE),
                  inducing = 15, control = mfsvr_control(tol = 1e-8),
                  optimize = c("epsilon", "sigma"))
  expect_regression_predictions_equal(pfit, direct, d[61:80, ])
  spec <- regression(svm_linear(cost = 2, margin = 0.3), scale = FALSE)
  pfit <- fit(spec, y ~ x1 + x2, data = d[1:60, ])
  direct <- mfsvr(y ~ x1 + x2, data = d[1:60, ], C = 2, epsilon = 0.3, kernel = linear_kernel(),
                  scale = FALSE, optimize = FALSE)
  expect_regression_predictions_equal(pfit, direct, d[61:80, ])
})

test_that("model = \"svr\" fits svr(), with C by its evidence when cost is unset", {
  d <- reg_data()
  spec <- regression(svm_rbf(cost = 2, rbf_sigma = 0.1, margin = 0.1), model = "svr", bias = TRUE)
  pfit <- fit(spec, y ~ ., data = d[1:60, ])
  direct <- svr(y ~ ., data = d[1:60, ], C = 2, epsilon = 0.1, bias = TRUE,
                kernel = rbf_kernel(1 / sqrt(0.2)))
  expect_regression_predictions_equal(pfit, direct, d[61:80, ])
  spec <- regression(svm_rbf(rbf_sigma = 0.1, margin = 0.1), model = "svr")
  pfit <- fit(spec, y ~ ., data = d[1:60, ])
  direct <- svr(y ~ ., data = d[1:60, ], epsilon = 0.1, kernel = rbf_kernel(1 / sqrt(0.2)),
                optimize = TRUE)
  expect_regression_predictions_equal(pfit, direct, d[61:80, ])
})

test_that("an unset degree and scale_factor are the grid point of highest evidence", {
  d <- reg_data()
  train <- d[1:60, ]
  pfit <- fit(regression(svm_poly(cost = 5, margin = 0.1)), y ~ ., data = train)
  # the candidates written out: degree 1-3, scale 1/(4p), 1/p, 4/p for the
  # p = 3 input columns (x1, x2 and the dummy of g)
  grid <- expand.grid(degree = 1:3, scale_factor = c(0.25, 1, 4) / 3)
  fits <- lapply(seq_len(nrow(grid)), function(i) {
    mfsvr(y ~ ., data = train, C = 5, epsilon = 0.1, optimize = FALSE,
          kernel = poly_kernel(grid$degree[i], grid$scale_factor[i], offset = 1))
  })
  evidence <- vapply(fits, function(f) as.numeric(logLik(f)), numeric(1))
  expect_equal(attr(extract_fit_engine(pfit), "evidence_grid")$log_evidence, evidence,
               tolerance = 1e-10)
  expect_regression_predictions_equal(pfit, fits[[which.max(evidence)]], d[61:80, ])
  # three classes have no joint evidence: the grid's arguments must be given
  expect_error(fit(classification(svm_poly()), Species ~ ., data = iris),
               "with 3 classes, give 'degree' and 'scale_factor'")
})

test_that("svr()'s unset width and margin are chosen over its grid by its evidence", {
  d <- reg_data()
  train <- d[1:60, ]
  pfit <- fit(regression(svm_rbf(cost = 1), model = "svr"), y ~ x1 + x2,
              data = train)
  # the grid: the data-driven width of the standardised inputs (kernlab's
  # sigest() rule, 1 / sqrt(1/q_0.1 + 1/q_0.9) of the squared distances)
  # halved and doubled, and margins 0.05, 0.1, 0.2
  d2 <- as.vector(dist(scale(as.matrix(train[c("x1", "x2")]))))^2
  q <- quantile(d2[d2 > 0], c(0.1, 0.9), names = FALSE)
  widths <- c(0.5, 1, 2) / sqrt(1 / q[1] + 1 / q[2])
  grid <- expand.grid(width = widths, margin = c(0.05, 0.1, 0.2))
  evidence <- vapply(seq_len(nrow(grid)), function(i) {
    as.numeric(logLik(svr(y ~ x1 + x2, data = train, C = 1, epsilon = grid$margin[i],
                          kernel = rbf_kernel(grid$width[i]))))
  }, numeric(1))
  recorded <- attr(extract_fit_engine(pfit), "evidence_grid")
  expect_equal(recorded$rbf_sigma, 1 / (2 * grid$width^2), tolerance = 1e-12)
  expect_equal(recorded$log_evidence, evidence, tolerance = 1e-10)
  best <- which.max(evidence)
  direct <- svr(y ~ x1 + x2, data = train, C = 1, epsilon = grid$margin[best],
                kernel = rbf_kernel(grid$width[best]))
  expect_regression_predictions_equal(pfit, direct, d[61:80, ])
})

test_that("classification is gpc() with noise = 1 / cost, its probabilities and classes", {
  d <- cls_data()
  train <- d[1:70, ]
  new <- d[71:90, ]
  pfit <- fit(classification(svm_rbf(cost = 4, rbf_sigma = 0.3)), y ~ ., data = train)
  direct <- gpc(y ~ ., data = train, noise = 1 / 4, kernel = rbf_kernel(1 / sqrt(0.6)),
                optimize = FALSE)
  prob <- predict(pfit, new, type = "prob")
  want <- predict(direct, new, type = "prob")
  expect_equal(prob$.pred_high, unname(want[, "high"]), tolerance = 1e-10)
  expect_equal(prob$.pred_low, unname(want[, "low"]), tolerance = 1e-10)
  expect_identical(predict(pfit, new)$.pred_class, unname(predict(direct, new, type = "class")))
  # unset: the width and the noise by the evidence
  pfit <- fit(classification(svm_rbf()), y ~ ., data = train)
  direct <- gpc(y ~ ., data = train, optimize = c("noise", "sigma"))
  expect_equal(predict(pfit, new, type = "prob")$.pred_high,
               unname(predict(direct, new, type = "prob")[, "high"]), tolerance = 1e-10)
  # three classes, a linear kernel with its noise by the evidence
  pfit <- fit(classification(svm_linear()), Species ~ ., data = iris)
  direct <- gpc(Species ~ ., data = iris, kernel = linear_kernel(), optimize = "noise")
  expect_equal(as.matrix(predict(pfit, iris[c(1, 60, 120), ], type = "prob")),
               unname(predict(direct, iris[c(1, 60, 120), ], type = "prob")),
               tolerance = 1e-10, ignore_attr = TRUE)
})

test_that("every prediction type has parsnip's shape and column names", {
  d <- reg_data()
  new <- d[61:66, ]
  new$x1[2] <- NA  # a row that cannot be predicted keeps its place
  pfit <- fit(regression(svm_rbf(cost = 3, rbf_sigma = 0.2, margin = 0.1)), y ~ ., data = d[1:60, ])
  num <- predict(pfit, new)
  expect_s3_class(num, "tbl_df")
  expect_named(num, ".pred")
  expect_identical(nrow(num), 6L)
  expect_identical(which(is.na(num$.pred)), 2L)
  for (type in c("conf_int", "pred_int")) {
    band <- predict(pfit, new, type = type)
    expect_named(band, c(".pred_lower", ".pred_upper"))
    expect_identical(nrow(band), 6L)
    expect_true(all(band$.pred_lower[-2] < num$.pred[-2] & num$.pred[-2] < band$.pred_upper[-2]))
    with_se <- predict(pfit, new, type = type, std_error = TRUE)
    expect_named(with_se, c(".pred_lower", ".pred_upper", ".std_error"))
    direct <- predict(extract_fit_engine(pfit), new, se.fit = TRUE)
    expect_equal(with_se$.std_error, unname(direct$se.fit), tolerance = 1e-12)
  }
  # a wider level, a wider interval
  narrow <- predict(pfit, new[-2, ], type = "pred_int", level = 0.5)
  wide <- predict(pfit, new[-2, ], type = "pred_int", level = 0.99)
  expect_true(all(wide$.pred_lower < narrow$.pred_lower & narrow$.pred_upper < wide$.pred_upper))
  raw <- predict(pfit, new, type = "raw", opts = list(interval = "prediction"))
  expect_equal(colnames(raw), c("fit", "lwr", "upr"))

  cls <- fit(classification(svm_rbf(cost = 2, rbf_sigma = 0.3)), Species ~ ., data = iris)
  class <- predict(cls, iris[c(1, 51, 101), ])
  expect_named(class, ".pred_class")
  expect_identical(levels(class$.pred_class), levels(iris$Species))
  prob <- predict(cls, iris[c(1, 51, 101), ], type = "prob")
  expect_named(prob, paste0(".pred_", levels(iris$Species)))
  expect_equal(rowSums(prob), rep(1, 3), tolerance = 1e-12, ignore_attr = TRUE)
  expect_error(predict(cls, iris[1:2, ], type = "conf_int"))
})

test_that("tune_grid() over 3 folds of a workflow with a recipe gives the fitter's own results", {
  skip_on_cran()
  skip_if_not_installed(c("tune", "workflows", "recipes", "rsample", "yardstick"))
  d <- reg_data(n = 90)
  rec <- recipes::step_dummy(recipes::recipe(y ~ ., data = d), g)
  rec <- recipes::step_mutate(rec, x2 = x2^2)
  spec <- regression(svm_rbf(cost = tune::tune(), rbf_sigma = tune::tune(), margin = 0.1))
  grid <- data.frame(cost = c(1, 8), rbf_sigma = c(0.05, 0.3))
  set.seed(5)
  folds <- rsample::vfold_cv(d, v = 3)
  res <- tune::tune_grid(workflows::workflow(rec, spec), folds, grid = grid,
                         metrics = yardstick::metric_set(yardstick::rmse),
                         control = tune::control_grid(save_pred = TRUE))
  expect_identical(nrow(tune::collect_notes(res)), 0L)
  preds <- tune::collect_predictions(res)
  metrics <- tune::collect_metrics(res, summarize = FALSE)
  for (i in seq_len(nrow(folds))) {
    split <- folds$splits[[i]]
    prepped <- recipes::prep(rec, rsample::analysis(split))
    train <- recipes::bake(prepped, NULL)
    test <- recipes::bake(prepped, rsample::assessment(split))
    for (g in seq_len(nrow(grid))) {
      direct <- mfsvr(y ~ ., data = train, C = grid$cost[g], epsilon = 0.1, optimize = FALSE,
                      kernel = rbf_kernel(1 / sqrt(2 * grid$rbf_sigma[g])))
      want <- unname(predict(direct, test))
      got <- preds[preds$id == folds$id[i] & preds$cost == grid$cost[g], ]
      expect_equal(got$.pred[order(got$.row)], want, tolerance = 1e-10)
      rmse <- metrics$.estimate[metrics$id == folds$id[i] & metrics$cost == grid$cost[g]]
      expect_equal(rmse, sqrt(mean((test$y - want)^2)), tolerance = 1e-10)
    }
  }
})

test_that("tunable() gives the engine's dials ranges", {
  skip_if_not_installed("dials")
  ranges <- function(spec) {
    params <- tune::extract_parameter_set_dials(spec)
    stats::setNames(lapply(params$object, function(p) unlist(p$range)), params$id)
  }
  skip_if_not_installed("tune")
  rbf <- ranges(regression(svm_rbf(cost = tune::tune(), rbf_sigma = tune::tune(),
                                   margin = tune::tune())))
  expect_equal(rbf$cost, c(lower = -2, upper = 6))
  expect_equal(rbf$rbf_sigma, c(lower = -3, upper = 0))
  expect_equal(rbf$margin, c(lower = 0, upper = 0.2))
  poly <- ranges(classification(svm_poly(degree = tune::tune(), scale_factor = tune::tune())))
  expect_equal(poly$degree, c(lower = 1, upper = 3))
  expect_equal(poly$scale_factor, c(lower = -3, upper = -0.5))
})

test_that("bad engine arguments stop with gpsvm's own message naming them", {
  d <- reg_data()
  fit_with <- function(spec, data = d) fit(spec, y ~ ., data = data)
  expect_error(fit_with(regression(svm_rbf(), tol = 1)),
               "unknown engine argument\\(s\\) 'tol' for mfsvr\\(\\); accepted: model, per_input")
  expect_error(fit_with(regression(svm_rbf(), C = 1)),
               "set_engine\\(\"gpsvm\", C = \\): set by cost")
  expect_error(fit_with(regression(svm_rbf(), kernel = rbf_kernel())),
               "the kernel is the model's")
  expect_error(fit_with(regression(svm_rbf(), model = "gpc")),
               "for regression the model must be \"mfsvr\" or \"svr\"")
  expect_error(fit_with(regression(svm_poly(), per_input = TRUE)),
               "'per_input' = TRUE needs svm_rbf\\(\\)")
  expect_error(fit_with(regression(svm_rbf(cost = 1), inducing = -3)),
               "inducing")
  expect_error(fit_with(regression(svm_rbf(), optimize = "width")),
               "'optimize' must be TRUE, FALSE or a subset of \"C\", \"epsilon\", \"sigma\"")
  expect_error(fit_with(regression(svm_rbf(cost = -1))), "'cost' must lie in \\(0, Inf\\), not -1")
  expect_error(fit_with(regression(svm_poly(degree = 1.5))), "'degree' must be a whole number")
  expect_error(fit(classification(svm_linear(margin = 0.1)), Species ~ ., data = iris),
               "'margin' is the width of a regression's insensitive tube")
})
