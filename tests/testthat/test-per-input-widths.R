# A Gaussian kernel with a width per input (automatic relevance
# determination): its values and derivatives against the formula written out
# here, its fits against an ordinary kernel on inputs divided by hand, the
# evidence gradient in each width against central differences, and the
# evidence search on data where only some inputs matter.

per_input_data <- function(n = 80, seed = 3) {
  set.seed(seed)
  x <- matrix(runif(n * 3, -2, 2), n, dimnames = list(NULL, c("a", "b", "c")))
  y <- sin(1.5 * x[, "a"]) + 0.5 * x[, "b"] + rnorm(n, sd = 0.1)
  list(x = x, y = y)
}

test_that("rbf_kernel(per_input = TRUE) evaluates exp(-sum_c (x_c - x'_c)^2 / (2 sigma_c^2)) and its derivatives", {
  set.seed(1)
  x <- matrix(rnorm(12), 4)
  z <- matrix(rnorm(9), 3)
  w <- c(0.5, 2, 30)
  k <- rbf_kernel(w, per_input = TRUE)
  by_hand <- function(i, j, order, c) {
    d <- x[i, ] - z[j, ]
    k0 <- exp(-sum(d^2 / w^2) / 2)
    u <- d[c] / w[c]
    he <- switch(order + 1L, 1, u, u^2 - 1, u^3 - 3 * u)
    (-1 / w[c])^order * he * k0
  }
  for (order in 0:3) {
    for (c in 1:3) {
      ref <- outer(1:4, 1:3, Vectorize(function(i, j) by_hand(i, j, order, c)))
      expect_equal(kernel_matrix(k, x, z, deriv = order, wrt = c), ref, tolerance = 1e-13)
    }
  }
  # one width for all inputs is the ordinary kernel
  expect_equal(kernel_matrix(rbf_kernel(1.7, per_input = TRUE), x),
               kernel_matrix(rbf_kernel(1.7), x), tolerance = 1e-15)
})

test_that("bad widths per input are errors that name sigma", {
  expect_error(rbf_kernel(c(1, -1), per_input = TRUE), "'sigma'")
  expect_error(rbf_kernel(c(1, NA), per_input = TRUE), "'sigma'")
  expect_error(rbf_kernel(1, per_input = NA), "'per_input'")
  d <- per_input_data()
  expect_error(mfsvr(d$x, d$y, kernel = rbf_kernel(c(1, 2), per_input = TRUE)),
               "'sigma'.*one per input column.*3")
  expect_error(kernel_matrix(rbf_kernel(c(1, 2), per_input = TRUE), d$x), "'sigma'")
  expect_error(plot(rbf_kernel(c(1, 2), per_input = TRUE)), "one input")
})

test_that("a fit with fixed widths per input is the ordinary kernel on inputs divided by them", {
  skip_on_cran()
  d <- per_input_data()
  w <- c(a = 0.8, b = 3, c = 40)
  xn <- matrix(runif(15, -2, 2), 5, dimnames = list(NULL, c("a", "b", "c")))
  fit <- mfsvr(d$x, d$y, kernel = rbf_kernel(w, per_input = TRUE), scale = FALSE)
  by_hand <- mfsvr(sweep(d$x, 2L, w, "/"), d$y, kernel = rbf_kernel(1), scale = FALSE)
  expect_equal(unname(fitted(fit)), unname(fitted(by_hand)), tolerance = 1e-10)
  expect_equal(c(logLik(fit)), c(logLik(by_hand)), tolerance = 1e-10)
  p <- predict(fit, xn, interval = "prediction", se.fit = TRUE)
  q <- predict(by_hand, sweep(xn, 2L, w, "/"), interval = "prediction", se.fit = TRUE)
  expect_equal(unname(p$fit), unname(q$fit), tolerance = 1e-10)
  expect_equal(unname(p$se.fit), unname(q$se.fit), tolerance = 1e-10)
  # derivatives by the chain rule: d/dx_c = (1 / w_c) d/du_c
  for (c in 1:3) {
    dp <- predict(fit, xn, deriv = 1, wrt = c, se.fit = TRUE)
    dq <- predict(by_hand, sweep(xn, 2L, w, "/"), deriv = 1, wrt = c, se.fit = TRUE)
    expect_equal(unname(dp$fit), unname(dq$fit) / w[[c]], tolerance = 1e-9)
    expect_equal(unname(dp$se.fit), unname(dq$se.fit) / w[[c]], tolerance = 1e-9)
  }
  expect_output(print(fit), "a width per input")
  expect_output(print(fit), "Scaling: none")
  # with scaling (the default) the widths act on the standardised inputs
  scaled <- mfsvr(d$x, d$y, C = 5, kernel = rbf_kernel(w, per_input = TRUE))
  xs <- scale(d$x)
  ys <- (d$y - mean(d$y)) / sd(d$y)
  manual <- mfsvr(sweep(xs, 2L, w, "/"), ys, C = 5, kernel = rbf_kernel(1), scale = FALSE)
  expect_equal(unname(fitted(scaled)), mean(d$y) + sd(d$y) * unname(fitted(manual)),
               tolerance = 1e-9)
  un <- sweep(sweep(xn, 2L, attr(xs, "scaled:center")), 2L, attr(xs, "scaled:scale"), "/")
  d2 <- predict(scaled, xn, deriv = 2, wrt = 1)
  d2_manual <- predict(manual, sweep(un, 2L, w, "/"), deriv = 2, wrt = 1)
  expect_equal(unname(d2), sd(d$y) * unname(d2_manual) / (attr(xs, "scaled:scale")[[1]] * w[[1]])^2,
               tolerance = 1e-8)
  expect_output(print(scaled), "Scaling: all 3 input columns and the response centred and scaled")
})

test_that("the other regression models take fixed widths per input too", {
  d <- per_input_data(n = 50)
  w <- c(0.8, 3, 40)
  xd <- sweep(d$x, 2L, w, "/")
  a <- svr(d$x, d$y, kernel = rbf_kernel(w, per_input = TRUE), scale = FALSE)
  b <- svr(xd, d$y, kernel = rbf_kernel(1), scale = FALSE)
  expect_equal(unname(fitted(a)), unname(fitted(b)), tolerance = 1e-10)
  a <- rvm(d$x, d$y, kernel = rbf_kernel(w, per_input = TRUE), scale = FALSE)
  b <- rvm(xd, d$y, kernel = rbf_kernel(1), scale = FALSE)
  expect_equal(unname(fitted(a)), unname(fitted(b)), tolerance = 1e-8)
  expect_error(rvm(d$x, d$y, kernel = rbf_kernel(w, per_input = TRUE), optimize = TRUE),
               "width per input is searched by\\s+mfsvr")
})

test_that("the classifiers take fixed widths per input", {
  d <- per_input_data(n = 70)
  w <- c(a = 0.8, b = 3, c = 40)
  y <- factor(ifelse(d$y > median(d$y), "hi", "lo"))
  xn <- d$x[1:6, ] + 0.1
  for (method in c("tap", "naive")) {
    a <- gpc(d$x, y, kernel = rbf_kernel(w, per_input = TRUE), noise = 0.1, method = method,
             scale = FALSE)
    b <- gpc(sweep(d$x, 2L, w, "/"), y, kernel = rbf_kernel(1), noise = 0.1, method = method,
             scale = FALSE)
    expect_equal(predict(a, xn, type = "prob"), predict(b, sweep(xn, 2L, w, "/"), type = "prob"),
                 tolerance = 1e-8)
  }
  a <- svc(d$x, y, kernel = rbf_kernel(w, per_input = TRUE), scale = FALSE)
  b <- svc(sweep(d$x, 2L, w, "/"), y, kernel = rbf_kernel(1), scale = FALSE)
  expect_equal(predict(a, xn, type = "link"), predict(b, sweep(xn, 2L, w, "/"), type = "link"),
               tolerance = 1e-8)
  # three classes, the default search (the noise; the widths stay), scaled inputs
  y3 <- cut(d$y, 3, labels = c("low", "mid", "high"))
  fit <- gpc(d$x, y3, kernel = rbf_kernel(per_input = TRUE))
  expect_named(fit$models, c("low", "mid", "high"))
  expect_equal(names(fit$models$low$optimization$estimate), "noise")
  p <- predict(fit, xn, type = "prob")
  expect_equal(unname(rowSums(p)), rep(1, 6), tolerance = 1e-12)
  expect_output(print(fit), "a width per input")
  # a long list of widths stays one list on the classifier's kernel line
  wide <- cbind(d$x, d$x + 1, d$x - 1, d$x * 2)
  colnames(wide) <- paste0("input_", seq_len(ncol(wide)))
  printed <- capture.output(print(gpc(wide, y, kernel = rbf_kernel(per_input = TRUE), noise = 0.1)))
  expect_false(any(grepl(",;", printed)))
  expect_true(any(grepl("input_1=.*input_12=", printed)))
  # three classes share one scaling of the inputs: no search over the widths
  expect_error(gpc(d$x, y3, kernel = rbf_kernel(per_input = TRUE), optimize = TRUE),
               "'optimize'.*two classes only")
  expect_error(gpc(d$x, y3, kernel = rbf_kernel(per_input = TRUE), optimize = "sigma"),
               "'optimize'.*two classes only")
})

# Central differences (step h) of at(lw)$log_evidence in each log width.
width_fd_gradient <- function(at, lw, h = 1e-5) {
  vapply(seq_along(lw), function(c) {
    step <- replace(numeric(length(lw)), c, h)
    (at(lw + step)$log_evidence - at(lw - step)$log_evidence) / (2 * h)
  }, numeric(1))
}

test_that("the evidence gradient in each log width matches central differences", {
  d <- per_input_data(n = 60)
  w <- c(0.7, 1.5, 4)
  ctl <- mfsvr_control(tol = 1e-10)
  at <- function(lw) {
    ep_evidence(d$x, d$y, C = 5, epsilon = 0.1,
                kernel = rbf_kernel(exp(lw), per_input = TRUE), control = ctl)
  }
  e <- at(log(w))
  expect_named(e$gradient, c("log_C", "log_epsilon", "log_sigma[a]", "log_sigma[b]",
                             "log_sigma[c]"))
  expect_equal(unname(e$gradient[3:5]), width_fd_gradient(at, log(w)), tolerance = 1e-6)
  # equal widths: the entries add up to the one-width gradient
  same <- ep_evidence(d$x, d$y, kernel = rbf_kernel(1.3, per_input = TRUE), control = ctl)
  one <- ep_evidence(d$x, d$y, kernel = rbf_kernel(1.3), control = ctl)
  expect_equal(same$log_evidence, one$log_evidence, tolerance = 1e-12)
  expect_equal(sum(same$gradient[3:5]), one$gradient[["log_sigma"]], tolerance = 1e-10)
  # a nearly duplicated input: both copies get a finite gradient
  x2 <- cbind(d$x, a2 = d$x[, "a"] + 1e-9)
  dup <- ep_evidence(x2, d$y, kernel = rbf_kernel(c(w, 0.7), per_input = TRUE), control = ctl)
  expect_true(all(is.finite(dup$gradient)))
  expect_equal(dup$gradient[["log_sigma[a]"]], dup$gradient[["log_sigma[a2]"]], tolerance = 1e-6)
})

test_that("the FITC evidence gradient in each log width matches central differences", {
  d <- per_input_data(n = 60)
  w <- c(0.7, 1.5, 4)
  z <- d$x[seq(1, 60, by = 4), ]
  ctl <- mfsvr_control(tol = 1e-10)
  at <- function(lw) {
    ep_evidence(d$x, d$y, C = 5, epsilon = 0.1, inducing = z,
                kernel = rbf_kernel(exp(lw), per_input = TRUE), control = ctl)
  }
  e <- at(log(w))
  expect_equal(unname(e$gradient[3:5]), width_fd_gradient(at, log(w)), tolerance = 1e-6)
  # the inducing inputs are divided by the widths with the data: with every
  # training input inducing, FITC is the dense model
  all_in <- ep_evidence(d$x, d$y, inducing = d$x, control = ctl,
                        kernel = rbf_kernel(w, per_input = TRUE))
  dense <- ep_evidence(d$x, d$y, control = ctl, kernel = rbf_kernel(w, per_input = TRUE))
  expect_equal(all_in$log_evidence, dense$log_evidence, tolerance = 1e-6)
  expect_equal(all_in$gradient, dense$gradient, tolerance = 1e-5)
})

# The TAP classifier's evidence and its gradient (the core's, by width) with
# the unit-width kernel on inputs divided by the widths w, on the dense prior
# or on inducing inputs z (divided the same way).
tap_by_width <- function(x, y, w, noise, z = NULL) {
  ctl <- gpsvm:::.resolve_control(gpc_control(tol = 1e-12, max_iter = 5000), "tap")
  divide <- function(m) if (!is.null(m)) sweep(m, 2L, w, "/")
  model <- list(kernel = rbf_kernel(1), noise = noise, kappa = 0, inducing = divide(z))
  gpsvm:::cpp_gpc_tap_fit(model, divide(x), y, unclass(ctl), list(), TRUE)
}

test_that("the TAP classifier's evidence gradient in each log width matches central differences", {
  d <- per_input_data(n = 50)
  y <- ifelse(d$y > median(d$y), 1, -1)
  w <- c(0.9, 2, 5)
  for (z in list(NULL, d$x[seq(1, 50, by = 3), ])) {
    fit <- tap_by_width(d$x, y, w, 0.2, z)
    expect_true(fit$convergence$converged)
    expect_length(fit$per_input_gradient, 3L)
    expect_equal(sum(fit$per_input_gradient), fit$gradient[1], tolerance = 1e-10)
    at <- function(lw) tap_by_width(d$x, y, exp(lw), 0.2, z)
    expect_equal(fit$per_input_gradient, width_fd_gradient(at, log(w)), tolerance = 1e-6)
  }
})

test_that("gpc() chooses a width per input by its evidence for two classes", {
  # the class depends on a alone; b and c are noise
  set.seed(5)
  n <- 200
  x <- matrix(runif(n * 3, -2, 2), n, dimnames = list(NULL, c("a", "b", "c")))
  y <- factor(ifelse(sin(2 * x[, "a"]) + rnorm(n, sd = 0.2) > 0, "up", "down"))
  train <- 1:120
  test <- 121:200
  ard <- gpc(x[train, ], y[train], kernel = rbf_kernel(per_input = TRUE))
  one <- gpc(x[train, ], y[train])
  o <- ard$optimization
  expect_true(o$convergence$converged)
  expect_named(o$estimate, c("noise", "sigma[a]", "sigma[b]", "sigma[c]"))
  expect_lt(o$estimate[["sigma[a]"]], min(o$estimate[c("sigma[b]", "sigma[c]")]))
  expect_gt(ard$log_evidence, one$log_evidence)
  # held out: at least as accurate, and a smaller log loss
  loss <- function(fit) {
    p <- predict(fit, x[test, ], type = "prob")
    -mean(log(p[cbind(seq_along(test), match(y[test], colnames(p)))]))
  }
  accuracy <- function(fit) mean(predict(fit, x[test, ]) == y[test])
  expect_gte(accuracy(ard), accuracy(one))
  expect_lt(loss(ard), loss(one))
  expect_output(print(ard), "noise and a width per input \\(3\\) by evidence maximisation")
  # the scaling holds the widths found: a fit with them given is the same fit
  w <- gpsvm:::.input_widths(ard$kernel)
  again <- gpc(x[train, ], y[train], kernel = rbf_kernel(w, per_input = TRUE), noise = ard$noise)
  expect_equal(predict(again, x[test, ], type = "prob"), predict(ard, x[test, ], type = "prob"),
               tolerance = 1e-6)
  # on 30 inducing inputs (FITC) the search finds the same input
  sparse <- gpc(x[train, ], y[train], kernel = rbf_kernel(per_input = TRUE), inducing = 30)
  expect_true(sparse$optimization$convergence$converged)
  est <- sparse$optimization$estimate
  expect_lt(est[["sigma[a]"]], min(est[c("sigma[b]", "sigma[c]")]))
  expect_gte(accuracy(sparse), accuracy(one) - 0.05)
  # given the noise, the default search chooses the widths alone
  fixed_noise <- gpc(x[train, ], y[train], kernel = rbf_kernel(per_input = TRUE), noise = 0.1)
  expect_named(fixed_noise$optimization$estimate, c("sigma[a]", "sigma[b]", "sigma[c]"))
})

test_that("mfsvr(optimize = TRUE) with a width per input finds the inputs that matter", {
  skip_on_cran()
  # Friedman's first function: inputs 6 to 10 do not enter y
  set.seed(11)
  n <- 300
  x <- matrix(runif(n * 10), n, dimnames = list(NULL, paste0("x", 1:10)))
  f <- function(x) 10 * sin(pi * x[, 1] * x[, 2]) + 20 * (x[, 3] - 0.5)^2 + 10 * x[, 4] + 5 * x[, 5]
  y <- f(x) + rnorm(n)
  train <- 1:200
  test <- 201:300
  ard <- mfsvr(x[train, ], y[train], optimize = TRUE, kernel = rbf_kernel(per_input = TRUE))
  one <- mfsvr(x[train, ], y[train], optimize = TRUE)
  expect_true(ard$optimization$convergence$converged)
  widths <- ard$optimization$estimate[paste0("sigma[x", 1:10, "]")]
  expect_lt(max(widths[1:5]), min(widths[6:10]))
  # each width counts as estimated: 10 widths, C, epsilon, the offset
  # weighed against none, the widths weighed against the defaults' kernels
  # and the response's centre and scale
  expect_equal(attr(logLik(ard), "df"), 16L)
  expect_gt(diff(ard$width_choice$log_evidence), 10)
  rmse <- function(fit) sqrt(mean((predict(fit, x[test, ]) - f(x[test, ]))^2))
  expect_lt(rmse(ard), 0.75 * rmse(one))
  band <- predict(ard, x[test, ], interval = "prediction")
  expect_gt(mean(y[test] >= band[, "lwr"] & y[test] <= band[, "upr"]), 0.85)
  expect_output(print(ard), "a width per input \\(10\\) by evidence maximisation")
  # the fit's kernel gives the widths found; a refit with them is the same fit
  again <- mfsvr(x[train, ], y[train], C = ard$C, epsilon = ard$epsilon,
                 kernel = rbf_kernel(gpsvm:::.input_widths(ard$kernel), per_input = TRUE))
  expect_equal(unname(fitted(again)), unname(fitted(ard)), tolerance = 1e-6)
  # as another model's kernel, the fit's kernel brings its widths
  w <- gpsvm:::.input_widths(ard$kernel)
  expect_equal(fitted(svr(x[train, ], y[train], kernel = ard$kernel)),
               fitted(svr(x[train, ], y[train], kernel = rbf_kernel(w, per_input = TRUE))),
               tolerance = 1e-12)
  expect_equal(kernel_matrix(ard$kernel, ard$x[1:3, ]),
               exp(-as.matrix(dist(sweep(scale(x[train, ])[1:3, ], 2L, w, "/")))^2 / 2),
               tolerance = 1e-12, ignore_attr = TRUE)
  expect_true(is.na(glance(ard)$kernel.sigma))
  # on 60 inducing inputs (FITC) the search finds the same inputs
  sparse <- mfsvr(x[train, ], y[train], optimize = TRUE, inducing = 60,
                  kernel = rbf_kernel(per_input = TRUE))
  expect_true(sparse$optimization$convergence$converged)
  widths <- sparse$optimization$estimate[paste0("sigma[x", 1:10, "]")]
  expect_lt(max(widths[1:5]), min(widths[6:10]))
  expect_lt(rmse(sparse), 0.75 * rmse(one))
  # the inducing inputs moved with the widths: a refit at the values found,
  # on the same inducing inputs in the original units, is the same fit
  z <- sweep(sparse$inducing, 2L, sparse$scaling$scale, "*")
  z <- sweep(z, 2L, sparse$scaling$center, "+")
  again <- mfsvr(x[train, ], y[train], C = sparse$C, epsilon = sparse$epsilon, inducing = z,
                 kernel = rbf_kernel(gpsvm:::.input_widths(sparse$kernel), per_input = TRUE))
  expect_equal(unname(fitted(again)), unname(fitted(sparse)), tolerance = 1e-6)
})

test_that("a formula fit with widths per input predicts, updates and keeps NA rows", {
  d <- per_input_data(n = 60)
  df <- data.frame(d$x, y = d$y)
  df$a[3] <- NA
  fit <- mfsvr(y ~ ., df, kernel = rbf_kernel(per_input = TRUE), optimize = TRUE,
               na.action = na.exclude)
  expect_length(fitted(fit), 60L)
  expect_true(is.na(fitted(fit)[3]))
  p <- predict(fit, df[1:5, ])
  expect_true(is.na(p[3]) && all(is.finite(p[-3])))
  refit <- update(fit, optimize = FALSE)
  expect_equal(refit$kernel$sigma_rule, "data")
  expect_true(all(is.finite(fitted(refit)[-3])))
})

test_that("a per-input search that makes the fit interpolate says so", {
  # 20 inputs for 40 rows, one of them relevant: the evidence of 20 widths
  # drives the noise to 0.6% of the response's sd
  set.seed(3)
  n <- 40
  p <- 20
  x <- matrix(rnorm(n * p), n)
  y <- x[, 1] + rnorm(n, sd = 0.3)
  messages <- character(0)
  # (the evidence's own maximum; the default hyperprior is checked below)
  fit <- withCallingHandlers(
    mfsvr(x, y, optimize = TRUE, kernel = rbf_kernel(per_input = TRUE),
          search = search_control(hyperprior = FALSE)),
    warning = function(w) {
      messages <<- c(messages, conditionMessage(w))
      invokeRestart("muffleWarning")
    })
  expect_true(any(grepl("nearly interpolate.*20 widths for 40 observations", messages)))
  expect_lt(sigma(fit) / sd(y), 0.01)
  # the warning is deserved: on new data from the same process its
  # intervals hold far fewer than 95% of the targets
  xn <- matrix(rnorm(200 * p), 200)
  yn <- xn[, 1] + rnorm(200, sd = 0.3)
  band <- predict(fit, xn, interval = "prediction")
  cover <- function(band) mean(yn >= band[, "lwr"] & yn <= band[, "upr"])
  expect_lt(cover(band), 0.8)
  # the hyperprior keeps more noise, and its intervals hold more targets
  with_prior <- suppressWarnings(mfsvr(x, y, optimize = TRUE, kernel = rbf_kernel(per_input = TRUE)))
  expect_gt(sigma(with_prior), 3 * sigma(fit))
  expect_gt(cover(predict(with_prior, xn, interval = "prediction")), cover(band) + 0.05)
})

test_that("a width per input asked for on a few nearly linear rows is weighed against the default fit", {
  # 15 rows of stackloss (the issue's example): the widths' search does not
  # beat the defaults' linear kernel by a nat per width, and the fit is the
  # default one, its intervals too (the calibration's refits included)
  set.seed(1004)
  i <- sample(21, 15)
  train <- stackloss[i, ]
  test <- stackloss[-i, ]
  set.seed(3)
  asked <- mfsvr(stack.loss ~ ., train, kernel = rbf_kernel(per_input = TRUE), optimize = TRUE)
  set.seed(3)
  default <- mfsvr(stack.loss ~ ., train)
  expect_identical(default$kernel$candidate, "linear")
  expect_identical(asked$kernel$candidate, "linear")
  expect_equal(predict(asked, test, interval = "prediction"),
               predict(default, test, interval = "prediction"), tolerance = 1e-8)
  # the record: the default fit's log evidence (of the standardised
  # response, logLik's less the scaling's Jacobian) against the search's,
  # which fell short of the margin: on 15 rows 100 / 15 nats per
  # hyperparameter added (3 widths and epsilon)
  record <- asked$width_choice
  expect_identical(record$widths, c("none", "per input"))
  expect_identical(record$parameters, c(1L, 5L))
  expect_equal(record$margin, rep(100 / 15, 2))
  unit <- default$response_scaling$scale
  expect_equal(record$log_evidence[1], c(logLik(default)) + nrow(train) * log(unit),
               tolerance = 1e-8)
  expect_lt(diff(record$log_evidence), 4)
  plan <- gpsvm_plan(asked)
  expect_match(plan$choice[plan$step == "widths"], "none (linear kernel)", fixed = TRUE)
  expect_match(plan$by[plan$step == "widths"], "it must exceed 26.7 (6.67 nat per hyperparameter",
               fixed = TRUE)
  # the search's own fit: its evidence is the record's, and it is what
  # search_control(hyperprior = FALSE) leaves alone, the evidence's maximum
  flat <- suppressWarnings(mfsvr(stack.loss ~ ., train, kernel = rbf_kernel(per_input = TRUE),
                                 optimize = TRUE, search = search_control(hyperprior = FALSE)))
  expect_false(is.null(flat$kernel$input_widths))
  expect_null(flat$width_choice)
})

test_that("a width per input that beats the default fit by the margin is kept", {
  # one input bends the response, one tilts it, one does not enter it
  set.seed(1)
  d <- data.frame(a = runif(20), b = runif(20), c = runif(20))
  d$y <- sin(5 * d$a) + 0.2 * d$b + rnorm(20, sd = 0.1)
  fit <- suppressWarnings(mfsvr(y ~ ., d, kernel = rbf_kernel(per_input = TRUE), optimize = TRUE,
                                calibration_folds = 0))
  default <- mfsvr(y ~ ., d, calibration_folds = 0)
  expect_named(fit$kernel$input_widths, c("a", "b", "c"))
  unit <- fit$response_scaling$scale
  record <- fit$width_choice
  expect_equal(record$log_evidence,
               c(logLik(default), logLik(fit)) + nrow(d) * log(unit), tolerance = 1e-8)
  # one width won the defaults' choice: the margin is a nat per
  # hyperparameter added (two widths and epsilon)
  expect_identical(record$widths[1], "one")
  expect_identical(record$parameters, c(2L, 5L))
  expect_gt(diff(record$log_evidence), 3)
  # a record whose gain falls short of the margin is refused
  bad <- fit
  bad$width_choice$parameters[2] <- 5L + ceiling(diff(record$log_evidence))
  expect_error(predict(bad, d[1:2, ]), "width_choice")
})
