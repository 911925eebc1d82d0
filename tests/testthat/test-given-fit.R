# gpsvm_fit(), the fit at given settings, and gpsvm_settings(), what a
# default fit's selection step chose: the chosen settings through the bare
# fit give the model that a route making no choice gives (the internal fit
# on data standardised by hand); the bare fit chooses nothing, at any size.

# The package's standardisation written out: each column's mean and sd.
standardise <- function(v) {
  v <- as.matrix(v)
  sweep(sweep(v, 2L, colMeans(v)), 2L, apply(v, 2L, sd), "/")
}

# The kernel of the internal fits: the offset's variance as its constant.
with_offset <- function(kernel, bias) {
  kernel$constant <- if (bias > 0) bias
  kernel
}

given_data <- function(n, seed) {
  set.seed(seed)
  x <- cbind(u = runif(n, -3, 3), w = runif(n, -1, 1))
  list(x = x, y = 10 + 4 * sin(x[, "u"]) + x[, "w"] + rnorm(n, sd = 0.3))
}

test_that("a default fit's settings through gpsvm_fit() give the model of a route that chooses nothing", {
  d <- given_data(45, 1)
  xs <- standardise(d$x)
  sy <- sd(d$y)
  ys <- (d$y - mean(d$y)) / sy
  # the internal fit of each model on the standardised data, at settings s
  reference <- list(
    mfsvr = function(s) {
      if (identical(s$prior, "dense")) s$control$rank_tol <- 0
      # (a width per input divides each input; the kernel's own width is 1)
      widths <- s$kernel$input_widths
      xw <- if (is.null(widths)) xs else sweep(xs, 2, s$kernel$sigma * widths, "/")
      gpsvm:::.mfsvr_fit(xw, ys, s$C, s$epsilon, with_offset(s$kernel, s$bias), s$control)
    },
    svr = function(s) gpsvm:::.svr_fit(xs, ys, s$C, s$epsilon, with_offset(s$kernel, s$bias),
                                       isTRUE(s$bias), s$control),
    rvm = function(s) gpsvm:::.rvm_fit(xs, ys, s$kernel, s$control, s$basis, s$noise),
    srvm = function(s) gpsvm:::.srvm_fit(xs, ys, s$kernel, s$penalty, s$control, NULL, s$basis))
  for (model in names(reference)) {
    fit <- get(model)(d$x, d$y)
    s <- gpsvm_settings(fit)
    expect_identical(s$model, model)
    expect_true(s$scale)
    bare <- gpsvm_fit(d$x, d$y, s)
    expect_s3_class(bare, paste0("gpsvm_", model))
    ref <- reference[[model]](s)
    expect_equal(unname(fitted(bare)), mean(d$y) + sy * unname(ref$fitted.values),
                 tolerance = 1e-10, info = model)
    if (model != "svr") {
      expect_equal(bare$log_evidence, ref$log_evidence, tolerance = 1e-10, info = model)
    }
    # the default's own fit, up to the solvers' stopping rules (mfsvr's
    # search ended on a warm-started EP run, at control$tol posterior sds)
    expect_equal(unname(fitted(bare)), unname(fitted(fit)), tolerance = 1e-6, info = model)
    expect_equal(as.numeric(logLik(bare)), as.numeric(logLik(fit)), tolerance = 1e-8, info = model)
    expect_true(all(gpsvm_plan(bare)$by == "given"), info = model)
    expect_null(bare$optimization)
    expect_null(bare$interval_calibration)
    expect_null(bare$C_mixture)
  }
  # gpc: two classes, the latent means and the evidence of EP on the
  # standardised inputs with the chosen width, noise and offset
  cls <- factor(ifelse(d$y > 10.5, "high", "low"))
  fit <- gpc(d$x, cls)
  s <- gpsvm_settings(fit)
  bare <- gpsvm_fit(d$x, cls, s)
  ref <- gpsvm:::.gpc_fit(xs, ifelse(cls == levels(cls)[2L], 1, -1),
                          with_offset(s$kernel, s$bias), s$noise, s$kappa, s$method, s$control)
  expect_equal(unname(bare$fitted.values), unname(ref$fitted.values), tolerance = 1e-10)
  expect_equal(bare$log_evidence, ref$log_evidence, tolerance = 1e-10)
  expect_equal(unname(fitted(bare, type = "prob")), unname(fitted(fit, type = "prob")),
               tolerance = 1e-6)
  expect_true(all(gpsvm_plan(bare)$by == "given"))
  expect_null(bare$optimization)
  # svc: the dual's solution at the width of the data's rule
  fit <- svc(d$x, cls)
  s <- gpsvm_settings(fit)
  bare <- gpsvm_fit(d$x, cls, s)
  ref <- gpsvm:::.svc_fit(xs, ifelse(cls == levels(cls)[2L], 1, -1), with_offset(s$kernel, s$bias),
                          s$C, s$noise, s$control)
  expect_equal(unname(bare$fitted.values), unname(ref$fitted.values), tolerance = 1e-10)
  expect_identical(fitted(bare), fitted(fit))
  expect_true(all(gpsvm_plan(bare)$by == "given"))
})

test_that("gpsvm_fit() keeps the given prior beyond the size rules and searches nothing", {
  d <- given_data(60, 2)
  # rules far below the data's size: a default fit would search on a
  # subset or not at all, calibrate nothing and take a FITC prior
  op <- options(gpsvm.size_policy = list(dense_max_n = 20, low_rank_min_n = 10, search_max_n = 20,
                                         gpc_search_max_n = 20, search_dense_max_n = 20))
  on.exit(options(op))
  k <- rbf_kernel(0.3)  # narrow on standardised inputs: the kernel matrix has no low rank
  given <- list(model = "mfsvr", C = 3, epsilon = 0.1, kernel = k, bias = 0, prior = "dense",
                scale = TRUE, control = mfsvr_control())
  expect_silent(bare <- gpsvm_fit(d$x, d$y, given))
  expect_null(bare$inducing)
  expect_identical(bare$C, 3)
  ref <- gpsvm:::.mfsvr_fit(standardise(d$x), (d$y - mean(d$y)) / sd(d$y), 3, 0.1, k,
                            mfsvr_control(rank_tol = 0))
  expect_equal(unname(coef(bare)), unname(ref$coefficients), tolerance = 1e-10)
  # inducing inputs given are the FITC prior on exactly them
  z <- d$x[c(3, 17, 29, 41), ]
  sparse <- gpsvm_fit(d$x, d$y, modifyList(given, list(prior = z)))
  expect_equal(unname(sparse$inducing),
               unname(scale(z, colMeans(d$x), apply(d$x, 2L, sd))), tolerance = 1e-12,
               ignore_attr = TRUE)
  # a low-rank factor asked for where there is none is an error, not a switch
  expect_error(withCallingHandlers(gpsvm_fit(d$x, d$y, modifyList(given, list(prior = "low_rank"))),
                                   message = function(m) stop("a message: ", conditionMessage(m))),
               "'settings\\$prior' is \"low_rank\", but the kernel matrix has no factor")
  # a smooth kernel has one: its rank is the core's pivoted Cholesky's
  wide <- gpsvm_fit(d$x[, "u", drop = FALSE], d$y,
                    modifyList(given, list(prior = "low_rank", kernel = rbf_kernel(2))))
  expect_true(isTRUE(attr(wide$inducing, "low_rank")))
  # every row a candidate centre, beyond the rule that would choose 20
  op2 <- options(gpsvm.size_policy = list(basis_chosen = 20))
  r <- gpsvm_fit(d$x, d$y, list(model = "rvm", kernel = rbf_kernel(1), basis = 60, noise = "constant",
                                scale = TRUE, control = rvm_control()))
  options(op2)
  expect_null(r$basis)
  cls <- factor(ifelse(d$y > 10.5, "high", "low"))
  g <- gpsvm_fit(d$x, cls, list(model = "gpc", kernel = k, noise = 0.2, kappa = 0, bias = 1,
                                method = "tap", multiclass = "ovr", prior = "dense", scale = TRUE,
                                control = gpc_control()))
  expect_null(g$inducing)
  expect_identical(g$noise, 0.2)
  expect_true(all(gpsvm_plan(g)$exact))
  # a low-rank gpc fit's settings name its prior "low_rank" (not its pivots
  # as inducing inputs, which FITC would take with a jitter): the bare fit
  # at them is that fit
  u <- d$x[, "u", drop = FALSE]
  g_low <- gpc(u, cls, kernel = rbf_kernel(2), noise = 0.2)
  expect_true(isTRUE(attr(g_low$inducing, "low_rank")))
  s <- gpsvm_settings(g_low)
  expect_identical(s$prior, "low_rank")
  expect_identical(fitted(gpsvm_fit(u, cls, s), type = "prob"), fitted(g_low, type = "prob"))
  expect_error(gpsvm_fit(d$x, cls, modifyList(s, list(kernel = k))),
               "'settings\\$prior' is \"low_rank\", but the kernel matrix has no factor")
})

test_that("gpsvm_fit() refuses settings that leave a choice open, naming them", {
  d <- given_data(20, 3)
  expect_error(gpsvm_fit(d$x, d$y, list(model = "mfsvr", C = 1)),
               "lacks 'epsilon', 'kernel', 'bias', 'prior', 'scale', 'control'")
  expect_error(gpsvm_fit(d$x, d$y, list(model = "lm")), "'settings' must be a list whose 'model'")
  expect_error(gpsvm_fit(d$x, d$y, "mfsvr"), "'settings' must be a list")
  s <- list(model = "svr", C = 1, epsilon = 0.1, kernel = rbf_kernel(), bias = 0, scale = TRUE,
            control = svr_control())
  expect_error(gpsvm_fit(d$x, d$y, s), "'kernel' has no width")
  s$kernel <- rbf_kernel(1)
  s$C <- -1
  expect_error(gpsvm_fit(d$x, d$y, s), "'C'")
  expect_error(gpsvm_fit(d$x, d$y, list(model = "mfsvr", C = 1, epsilon = 0.1, kernel = rbf_kernel(1),
                                        bias = 0, prior = "fitc", scale = TRUE,
                                        control = mfsvr_control())),
               "'settings\\$prior' must be one of \"dense\", \"low_rank\"")
  expect_error(gpsvm_settings(lm(y ~ x, d)), "not a gpsvm fit")
})

test_that("gpsvm_settings() of a one-vs-rest fit whose classes chose apart says so", {
  set.seed(4)
  x <- matrix(rnorm(90), 45, 2)
  cls <- factor(c("a", "b", "c")[1 + (x[, 1] > 0) + (x[, 2] > 0.5)])
  fit <- gpc(x, cls)
  expect_error(gpsvm_settings(fit), "the classes' models have different settings")
  shared <- gpc(x, cls, kernel = rbf_kernel(1), noise = 0.1)
  s <- gpsvm_settings(shared)
  expect_equal(fitted(gpsvm_fit(x, cls, s), type = "prob"), fitted(shared, type = "prob"),
               tolerance = 1e-10)
})

test_that("gpsvm_settings() of a varying-noise tube fit is an error, not constant-noise settings", {
  set.seed(5)
  x <- matrix(sort(runif(60, 0, 10)), 60, 1)
  y <- sin(x[, 1]) + rnorm(60, sd = 0.05 + 0.1 * x[, 1])
  for (fitter in list(mfsvr, svr)) {
    fit <- fitter(x, y, noise = "varying", calibration_folds = 0)
    expect_error(gpsvm_settings(fit), "noise that varies with the inputs, which gpsvm_fit\\(\\) does not fit")
    constant <- fitter(x, y, kernel = rbf_kernel(1), C = 2, calibration_folds = 0)
    expect_identical(gpsvm_settings(constant)$C, constant$C)
  }
})
