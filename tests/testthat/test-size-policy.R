# The rules on the data's size (?gpsvm_size_policy): one table, settable
# through options, recorded in each fit's plan and announced in one message
# where they change what is computed.

test_that("the table lists every rule with its default, and options set them", {
  policy <- gpsvm_size_policy()
  expect_identical(names(policy), c("name", "value", "default", "decides"))
  expect_true(all(c("search_max_n", "C_mixture_max_n", "dense_max_n", "calibration_max_n_ep",
                    "calibration_max_n_rvm") %in% policy$name))
  expect_identical(policy$value, as.integer(policy$default))
  expect_identical(policy["search_max_n", "value"], 10000L)
  op <- options(gpsvm.size_policy = list(dense_max_n = 4000, C_mixture_max_n = 10))
  on.exit(options(op), add = TRUE)
  set <- gpsvm_size_policy()
  expect_identical(set["dense_max_n", "value"], 4000L)
  expect_identical(set["C_mixture_max_n", "value"], 10L)
  expect_identical(set["search_max_n", "value"], 10000L)
})

test_that("a bad option names the rule and what is expected", {
  op <- options(gpsvm.size_policy = list(dense_max = 10))
  on.exit(options(op), add = TRUE)
  expect_error(gpsvm_size_policy(), "named list of rules among search_max_n")
  options(gpsvm.size_policy = list(dense_max_n = -1))
  expect_error(gpsvm_size_policy(), "options\\(gpsvm.size_policy\\)\\$dense_max_n must be a positive")
  options(gpsvm.size_policy = list(dense_max_n = 2.5))
  expect_error(mfsvr(dist ~ speed, cars), "dense_max_n must be a positive whole number")
  options(gpsvm.size_policy = 100)
  expect_error(gpsvm_size_policy(), "must be a named list")
})

test_that("beyond dense_max_n a kernel matrix without low rank gets the FITC prior, and says so", {
  # the rules lowered so that 240 rows cross them: a matrix that 20 pivots
  # do not represent, replaced by FITC on 30 inducing inputs
  op <- options(gpsvm.size_policy = list(dense_max_n = 200, low_rank_min_n = 100,
                                         low_rank_max = 20, automatic_inducing_count = 30))
  on.exit(options(op), add = TRUE)
  set.seed(5)
  x <- matrix(runif(240 * 4), 240, 4)
  y <- sin(3 * x[, 1]) + x[, 2]^2 + rnorm(240, sd = 0.2)
  expect_message(fit <- mfsvr(x, y, C = 5, calibration_folds = FALSE),
                 "mfsvr\\(\\): 240 observations: prior: FITC on 30 inducing inputs")
  expect_identical(nrow(fit$inducing), 30L)
  plan <- gpsvm_plan(fit)
  expect_identical(plan$size_rule[plan$step == "prior"], "dense_max_n")
  expect_false(plan$exact[plan$step == "prior"])
  expect_match(plan$by[plan$step == "prior"], "n = 240 > 200", fixed = TRUE)
  # the same model as the FITC fit given those inducing inputs (in the
  # data's units) explicitly
  z <- sweep(sweep(fit$inducing, 2, fit$scaling$scale, "*"), 2, fit$scaling$center, "+")
  given <- suppressMessages(mfsvr(x, y, C = 5, calibration_folds = FALSE, inducing = z,
                                  kernel = fit$kernel, bias = fit$bias_variance))
  expect_equal(predict(fit, x[1:20, ]), predict(given, x[1:20, ]), tolerance = 1e-6)
  # at the default rules the same data keep the dense (or low-rank) prior
  options(op)
  plain <- mfsvr(x, y, C = 5, calibration_folds = FALSE)
  expect_null(plain$inducing)
  expect_true(all(gpsvm_plan(plain)$exact))
})

test_that("beyond dense_max_n mfsvr()'s default weighs kernel, widths and offset on dense rows", {
  # two inputs matter and two do not: the dense default takes a width per
  # input, which the evidence of a FITC prior could not weigh
  set.seed(12)
  n <- 160L
  x <- matrix(runif(n * 4), n, 4, dimnames = list(NULL, paste0("x", 1:4)))
  y <- sin(6 * x[, 1]) + 2 * x[, 2] + rnorm(n, sd = 0.2)
  new_x <- matrix(runif(200 * 4), 200, 4, dimnames = list(NULL, paste0("x", 1:4)))
  side <- function(rule) {
    withr::local_options(gpsvm.size_policy = list(dense_max_n = rule, per_input_min_n = 50))
    suppressMessages(mfsvr(x, y))
  }
  dense <- side(n)
  sparse <- side(n - 1L)
  expect_null(dense$inducing)
  expect_true(isTRUE(attr(sparse$inducing, "approximation")))
  expect_identical(sparse$choice_rows, n - 1L)
  # the same choices either side of the rule: widths per input on both
  expect_false(is.null(dense$kernel$input_widths))
  expect_false(is.null(sparse$kernel$input_widths))
  expect_identical(dense$kernel$type, sparse$kernel$type)
  expect_identical(dense$bias_variance, sparse$bias_variance)
  # inputs that do not matter are given widths far beyond those that do,
  # and each width is near the dense fit's
  expect_gt(min(sparse$kernel$input_widths[3:4]), 3 * max(sparse$kernel$input_widths[1:2]))
  expect_equal(sparse$kernel$input_widths, dense$kernel$input_widths, tolerance = 0.15)
  # the widths chosen on other rows count in the df as the search's do
  expect_identical(attr(logLik(sparse), "df"), attr(logLik(dense), "df"))
  # and predictions within a small fraction of a predictive sd of each other
  p_dense <- predict(dense, new_x, se.fit = TRUE)
  p_sparse <- predict(sparse, new_x)
  sd <- sqrt(p_dense$se.fit^2 + sigma(dense)^2)
  expect_lt(max(abs(p_dense$fit - p_sparse) / sd), 0.15)
  plan <- gpsvm_plan(sparse)
  kernel_row <- plan[plan$step == "kernel", ]
  expect_identical(kernel_row$size_rule, "dense_max_n")
  expect_false(kernel_row$exact)
  expect_match(kernel_row$choice, sprintf("weighed on %d evenly spaced rows", n - 1L), fixed = TRUE)
  expect_identical(plan$step[2], "widths")
  # beyond search_max_n too the fit records where its kernel was weighed
  both <- withr::with_options(list(gpsvm.size_policy = list(dense_max_n = 100, search_max_n = 140,
                                                            per_input_min_n = 50)),
                              suppressMessages(mfsvr(x, y)))
  expect_identical(both$choice_rows, 100L)
  expect_identical(both$optimization$search_rows, 140L)
  expect_false(is.null(both$kernel$input_widths))
  # a hand-edited record of those rows is caught
  bad <- unclass(sparse)
  bad$choice_rows <- 10 * n
  class(bad) <- class(sparse)
  expect_error(print(bad), "choice_rows")
})

test_that("the calibration's size rule is the same for mfsvr() and svr(), and is recorded", {
  op <- options(gpsvm.size_policy = list(calibration_max_n_ep = 20))
  on.exit(options(op), add = TRUE)
  d <- data.frame(x = seq(0, 3, length.out = 25))
  d$y <- sin(2 * d$x) + rnorm(25, sd = 0.1)
  for (fitter in list(mfsvr, svr)) {
    expect_message(fit <- fitter(y ~ x, d), "calibration: intervals calibrated .* on 20 evenly")
    expect_length(fit$interval_calibration$rows, 20L)
    plan <- gpsvm_plan(fit)
    expect_identical(plan$size_rule[plan$step == "calibration"], "calibration_max_n_ep")
    expect_false(plan$exact[plan$step == "calibration"])
  }
  options(gpsvm.size_policy = list(calibration_max_n_ep = 25))
  expect_identical(suppressMessages(mfsvr(y ~ x, d))$interval_calibration$folds, 5L)
})

test_that("the plan's message is one line, classed, silenced by the option and by refits", {
  op <- options(gpsvm.size_policy = list(C_mixture_max_n = 10, calibration_max_n_ep = 10))
  on.exit(options(op), add = TRUE)
  messages <- list()
  fit <- withCallingHandlers(mfsvr(dist ~ speed, cars), message = function(m) {
    messages[[length(messages) + 1L]] <<- m
    invokeRestart("muffleMessage")
  })
  expect_length(messages, 1L)
  expect_s3_class(messages[[1]], "gpsvm_plan_message")
  expect_match(conditionMessage(messages[[1]]),
               "^mfsvr\\(\\): 50 observations: C mixture: .*; calibration: .*\n$")
  options(gpsvm.quiet = TRUE)
  expect_silent(mfsvr(dist ~ speed, cars))
  options(gpsvm.quiet = NULL)
  # interval_coverage()'s refits repeat no message
  cover <- withCallingHandlers(interval_coverage(fit, folds = 3), message = function(m) {
    messages[[length(messages) + 1L]] <<- m
    invokeRestart("muffleMessage")
  })
  expect_length(messages, 1L)
})
