# noise = NULL, the default of mfsvr(), svr() and rvm(): the evidence's
# choice (noise = "auto") up to the size rule noise_choice_max_n (rvm:
# noise_choice_max_n_rvm) and
# constant noise beyond it, with inducing inputs, or with svr()'s free
# threshold.  The references are the same fits with the noise model named
# in the call; the plan and the fit-time message say which rule decided.

noise_default_data <- function(n, seed = 3) {
  set.seed(seed)
  x <- sort(runif(n, 0, 10))
  list(x = x, y = 2 * sin(x) + rnorm(n, sd = 0.05 + 0.1 * x))  # sd 0.05 to 1.05
}

noise_row <- function(fit) fit$plan[fit$plan$step == "noise", ]

test_that("the default is noise = \"auto\" up to the size rule, for each model", {
  d <- noise_default_data(test_size(80, 50))
  new <- c(0.5, 5, 9.5)
  for (model in list(mfsvr, svr, rvm)) {
    default <- model(d$x, d$y, calibration_folds = 0)
    auto <- model(d$x, d$y, noise = "auto", calibration_folds = 0)
    expect_identical(default$noise_model$type, auto$noise_model$type)
    # the noise grows twentyfold: the evidence prefers it varying
    expect_identical(default$noise_model$type, "varying")
    expect_identical(predict(default, new, interval = "prediction"),
                     predict(auto, new, interval = "prediction"))
    row <- noise_row(default)
    rule <- if (inherits(default, "gpsvm_rvm")) "noise_choice_max_n_rvm" else "noise_choice_max_n"
    expect_identical(row$size_rule, rule)
    expect_true(row$exact)
    expect_match(row$by, sprintf("the evidence .*size rule %s \\(n = %d <= %d\\)", rule, length(d$y),
                                 gpsvm_size_policy()[rule, "value"]))
    expect_match(noise_row(auto)$by, "noise = \"auto\"")
    expect_match(paste(capture.output(print(default)), collapse = " "), "varying with the inputs")
  }
})

test_that("beyond noise_choice_max_n the default is constant noise, and the fit says so", {
  d <- noise_default_data(test_size(60, 40))
  old <- options(gpsvm.size_policy = list(noise_choice_max_n = 20, noise_choice_max_n_rvm = 20),
                 gpsvm.quiet = FALSE)
  on.exit(options(old))
  new <- c(0.5, 5, 9.5)
  for (model in list(mfsvr, svr, rvm)) {
    expect_message(default <- model(d$x, d$y, calibration_folds = 0),
                   "noise: constant \\(not weighed against noise varying with the inputs\\)")
    constant <- suppressMessages(model(d$x, d$y, noise = "constant", calibration_folds = 0))
    expect_null(default$noise_model)
    expect_identical(predict(default, new, interval = "prediction"),
                     predict(constant, new, interval = "prediction"))
    row <- noise_row(default)
    rule <- if (inherits(default, "gpsvm_rvm")) "noise_choice_max_n_rvm" else "noise_choice_max_n"
    expect_identical(row$size_rule, rule)
    expect_false(row$exact)
    expect_match(row$by, sprintf("size rule %s \\(n = %d > 20\\)", rule, length(d$y)))
    expect_identical(noise_row(constant)$by, "the call")
    expect_match(paste(capture.output(print(default)), collapse = " "), "; constant noise")
    # a noise model asked for is fitted whatever the rule
    auto <- suppressMessages(model(d$x, d$y, noise = "auto", calibration_folds = 0))
    expect_identical(auto$noise_model$type, "varying")
  }
  expect_identical(gpsvm_size_policy()[c("noise_choice_max_n", "noise_choice_max_n_rvm"), "value"],
                   c(20L, 20L))
})

test_that("the default keeps constant noise where the varying noise cannot be fitted", {
  d <- noise_default_data(test_size(60, 40))
  # svr()'s free threshold has no evidence for the noise: noise = "auto" is an
  # error, the default constant
  free <- svr(d$x, d$y, bias = TRUE, calibration_folds = 0)
  expect_null(free$noise_model)
  expect_match(noise_row(free)$by, "free threshold")
  expect_error(svr(d$x, d$y, bias = TRUE, noise = "auto"), "free threshold")
  # a C given or kept (no search) is the noise level: the default keeps it
  for (model in list(mfsvr, svr)) {
    given <- model(d$x, d$y, C = 3, calibration_folds = 0)
    constant <- model(d$x, d$y, C = 3, calibration_folds = 0, noise = "constant")
    expect_null(given$noise_model)
    expect_identical(fitted(given), fitted(constant))
    expect_match(noise_row(given)$by, "did not choose C")
    kept <- model(d$x, d$y, optimize = FALSE, calibration_folds = 0)
    expect_null(kept$noise_model)
    expect_identical(fitted(kept), fitted(model(d$x, d$y, optimize = FALSE, calibration_folds = 0,
                                                noise = "constant")))
    expect_identical(model(d$x, d$y, C = 3, noise = "auto", calibration_folds = 0)$noise_model$type,
                     "varying")
  }
  # inducing inputs: likewise
  fitc <- mfsvr(d$x, d$y, inducing = 10, calibration_folds = 0)
  expect_null(fitc$noise_model)
  expect_match(noise_row(fitc)$by, "inducing inputs")
  expect_error(mfsvr(d$x, d$y, inducing = 10, noise = "auto", calibration_folds = 0),
               "without inducing inputs")
  # fewer rows than calibration_min_n: too few for a noise function
  tiny <- mfsvr(1:5, 1:5)
  expect_null(tiny$noise_model)
  expect_identical(noise_row(tiny)$size_rule, "calibration_min_n")
  expect_equal(predict(tiny, 2), predict(mfsvr(1:5, 1:5, noise = "constant"), 2))
  # the bare fit at a default fit's settings chooses no noise model either
  fit <- mfsvr(d$x, d$y, kernel = rbf_kernel(1), C = 2, calibration_folds = 0, noise = "constant")
  bare <- gpsvm_fit(d$x, d$y, gpsvm_settings(fit))
  expect_null(bare$noise_model)
  expect_equal(fitted(bare), fitted(fit), tolerance = 1e-10)
})

test_that("'noise' is checked", {
  d <- noise_default_data(30)
  for (model in list(mfsvr, svr, rvm)) {
    expect_error(model(d$x, d$y, noise = "sometimes"), "'noise' must be")
    expect_error(model(d$x, d$y, noise = NA_character_), "'noise' must be")
    expect_error(model(d$x, d$y, noise = 1), "'noise' must be")
  }
})
