# Hyperparameters by evidence: the TAP classifier's evidence gradient against
# central differences, and the searches of mfsvr(), gpc(method = "tap"),
# rvm() and srvm(): stationary points or maxima checked by independent
# evidence evaluations, failures and flat evidences reported, the record in
# fit$optimization.

tap_evidence <- function(x, y, sigma, noise, kappa, kernel = rbf_kernel(sigma), tol = 1e-12) {
  ctl <- gpsvm:::.resolve_control(gpc_control(tol = tol, max_iter = 5000), "tap")
  model <- list(kernel = kernel, noise = noise, kappa = kappa)
  gpsvm:::cpp_gpc_tap_fit(model, x, y, unclass(ctl), list(), TRUE)
}

# central differences of the TAP evidence in (log sigma, log noise, kappa),
# components `which`
tap_fd_gradient <- function(x, y, sigma, noise, kappa, h = 1e-5, kernel_of = rbf_kernel,
                            which = 1:3) {
  at <- function(p) {
    tap_evidence(x, y, exp(p[1]), exp(p[2]), p[3], kernel = kernel_of(exp(p[1])))$log_evidence
  }
  p0 <- c(log(sigma), log(noise), kappa)
  vapply(which, function(j) {
    e <- replace(numeric(3), j, h)
    (at(p0 + e) - at(p0 - e)) / (2 * h)
  }, numeric(1))
}

test_that("the TAP evidence gradient equals central differences where no site is clamped", {
  d <- two_class_data(40, 11, noise = 0.5)
  settings <- list(c(sigma = 1, noise = 0.3, kappa = 0), c(sigma = 0.3, noise = 1e-3, kappa = 0),
                   c(sigma = 5, noise = 2, kappa = 0), c(sigma = 1.5, noise = 0.05, kappa = 0),
                   c(sigma = 2, noise = 1, kappa = 0.02), c(sigma = 3, noise = 1, kappa = 0.1))
  for (s in settings) {
    fit <- tap_evidence(d$x, d$y, s[["sigma"]], s[["noise"]], s[["kappa"]])
    expect_true(fit$convergence$converged)
    expect_identical(fit$clamped_sites, 0L)
    fd <- tap_fd_gradient(d$x, d$y, s[["sigma"]], s[["noise"]], s[["kappa"]], which = 1:2)
    expect_equal(fit$gradient[1:2], fd, tolerance = 1e-6)
    # kappa = 0 is the edge of its range: its component is compared at
    # kappa = 1e-4, where no site is clamped either
    k <- max(s[["kappa"]], 1e-4)
    g <- tap_evidence(d$x, d$y, s[["sigma"]], s[["noise"]], k)
    expect_identical(g$clamped_sites, 0L)
    fd3 <- tap_fd_gradient(d$x, d$y, s[["sigma"]], s[["noise"]], k, h = k / 1e3, which = 3)
    expect_equal(g$gradient[3], fd3, tolerance = 1e-6)
  }
  # a kernel without a width: the noise gradient alone, sigma's is 0
  k <- poly_kernel(2, scale = 0.5)
  fit <- tap_evidence(d$x, d$y, 1, 0.5, 0, kernel = k)
  fd <- tap_fd_gradient(d$x, d$y, 1, 0.5, 0, kernel_of = function(s) k, which = 2)
  expect_identical(fit$gradient[1], 0)
  expect_equal(fit$gradient[2], fd, tolerance = 1e-6)
})

test_that("the kappa gradient is finite and right in the far tails", {
  # well-separated classes and a tiny noise: cavity margins y m / sqrt(v) of
  # order 10-40 on both sides, where Phi underflows on the wrong side
  x <- matrix(c(-6, -5, -4, 4, 5, 6, 5.5), ncol = 1)
  y <- c(-1, -1, -1, 1, 1, 1, -1)
  for (kappa in c(1e-8, 1e-3)) {
    fit <- tap_evidence(x, y, 1, 1e-4, kappa)
    expect_true(all(is.finite(fit$gradient)))
    if (fit$clamped_sites == 0L) {
      fd <- tap_fd_gradient(x, y, 1, 1e-4, kappa, h = min(kappa / 100, 1e-6), which = 3)
      expect_equal(fit$gradient[3], fd, tolerance = 1e-4)
    }
  }
})

test_that("with clamped sites the explicit gradient is flagged and the search differences", {
  d <- two_class_data(60, 3, noise = 0.8)
  fit <- tap_evidence(d$x, d$y, exp(0.5), 0.05, 0.1)
  expect_gt(fit$clamped_sites, 0L)
  fd <- tap_fd_gradient(d$x, d$y, exp(0.5), 0.05, 0.1, h = 1e-4)
  # the explicit gradient is off there ...
  expect_gt(max(abs(fit$gradient - fd)), 0.05)
  # ... and the search's central differences are not (search scale: log
  # sigma, log noise, logit(2 kappa))
  spec <- gpsvm:::.gpc_search_spec(d$x, rbf_kernel(1), 0.1, 0.1, c("sigma", "noise", "kappa"))
  par <- c(0.5, log(0.05), qlogis(0.2))
  at <- function(p) {
    h <- as.list(spec$natural(p))
    list(kernel = rbf_kernel(h$sigma), noise = h$noise, kappa = h$kappa)
  }
  ctl <- unclass(gpsvm:::.resolve_control(gpc_control(tol = 1e-6), "tap"))
  ep_at <- function(h, ctl, warm, gradient) {
    model <- list(kernel = h$kernel, noise = h$noise, kappa = h$kappa)
    gpsvm:::cpp_gpc_tap_fit(model, d$x, d$y, ctl, warm[c("site_precision", "site_nu")], gradient)
  }
  num <- gpsvm:::.gpc_numeric_gradient(par, at, ep_at, ctl, fit)
  expect_equal(num, fd * c(1, 1, 0.1 * (1 - 0.2)), tolerance = 1e-3)
})

test_that("gpc(method = \"tap\", optimize = TRUE) reaches a maximum of the evidence", {
  d <- two_class_data(80, 5, noise = 0.5)
  start <- gpc(d$x, d$y, rbf_kernel(1), noise = 0.1, method = "tap")
  opt <- gpc(d$x, d$y, rbf_kernel(1), noise = 0.1, method = "tap", optimize = TRUE)
  o <- opt$optimization
  expect_true(o$convergence$converged)
  expect_named(o$estimate, c("sigma", "noise"))
  expect_equal(opt$kernel$sigma, o$estimate[["sigma"]])
  expect_equal(opt$noise, o$estimate[["noise"]])
  expect_gt(opt$log_evidence, start$log_evidence)
  expect_lt(max(abs(o$gradient)) / 80, 1e-3)
  # a maximum along each coordinate, by independent fits
  for (j in 1:2) for (step in c(-0.05, 0.05)) {
    p <- log(o$estimate)
    p[j] <- p[j] + step
    e <- gpc(d$x, d$y, rbf_kernel(exp(p[1])), noise = exp(p[2]), method = "tap")$log_evidence
    expect_lt(e, opt$log_evidence)
  }
  # the path: the start first, the evidence at the estimate the best seen
  expect_equal(unlist(o$path[1, c("sigma", "noise")]), c(sigma = 1, noise = 0.1))
  expect_equal(max(o$path$log_evidence, na.rm = TRUE), opt$log_evidence, tolerance = 1e-6)
  expect_identical(o$evaluations, nrow(o$path))
  # a width left to the data starts at the median heuristic of the scaled
  # inputs, sqrt(median squared distance / 2), above the fit's own width rule
  auto <- gpc(d$x, d$y, optimize = TRUE)
  z <- scale(d$x)
  d2 <- as.vector(dist(z))^2
  expect_equal(auto$optimization$path$sigma[1], sqrt(median(d2) / 2))
  expect_gt(auto$optimization$path$sigma[1], gpc(d$x, d$y, optimize = FALSE)$kernel$sigma)
  # kappa as well: a zero kappa starts at 0.05
  k3 <- gpc(d$x, d$y, rbf_kernel(1), noise = 0.1, method = "tap",
            optimize = c("sigma", "noise", "kappa"))
  expect_named(k3$optimization$estimate, c("sigma", "noise", "kappa"))
  expect_equal(k3$optimization$path$kappa[1], 0.05)
  # a free kappa cannot lower the maximum, within the stopping rule's reach:
  # on the logit scale the gradient fades as kappa -> 0, and the search
  # stops where it is below 1e-3 per observation (80 here), which can leave
  # some 0.1 of evidence on the way to kappa = 0
  expect_gte(k3$log_evidence, opt$log_evidence - 0.1)
  expect_true(k3$optimization$convergence$converged)
})

test_that("with three classes each one-vs-rest model is searched on its own, and print() says so", {
  fit <- gpc(Species ~ ., data = iris, optimize = TRUE)
  sigmas <- vapply(fit$models, function(m) m$kernel$sigma, numeric(1))
  expect_gt(diff(range(sigmas)), 0.1)
  # each model is the binary classifier of its class against the rest at the
  # width and noise its search chose
  for (l in levels(iris$Species)) {
    m <- fit$models[[l]]
    d <- data.frame(iris[1:4], y = factor(ifelse(iris$Species == l, "in", "out"), c("out", "in")))
    binary <- gpc(y ~ ., data = d, kernel = rbf_kernel(m$kernel$sigma), noise = m$noise,
                  kappa = m$kappa)
    expect_equal(unname(predict(fit, iris, type = "link")[, l]),
                 unname(predict(binary, d, type = "link")), tolerance = 1e-6)
  }
  out <- capture.output(print(fit))
  expect_true(any(grepl("sigma chosen per model", out)))
  for (l in levels(iris$Species)) {
    expect_true(any(grepl(sprintf("^%s vs rest: sigma = %s, noise = %s", l,
                                  sprintf("%.4g", fit$models[[l]]$kernel$sigma),
                                  sprintf("%.4g", fit$models[[l]]$noise)), out)))
  }
  expect_false(any(grepl("^noise variance = ", out)))
})

test_that("gpc(optimize) needs the TAP method and a width to choose", {
  d <- two_class_data(20, 2)
  expect_error(gpc(d$x, d$y, rbf_kernel(1), method = "naive", optimize = TRUE),
               "method = \"tap\"")
  expect_error(gpc(d$x, d$y, poly_kernel(2), noise = 0.5, method = "tap", optimize = "sigma"),
               "only they\\s+have a width")
  expect_error(gpc(d$x, d$y, method = "tap", optimize = "width"), "'optimize' must be")
  # TRUE with a polynomial kernel chooses the noise alone
  p <- gpc(d$x, d$y, poly_kernel(2, scale = 0.5), noise = 0.5, method = "tap", optimize = TRUE)
  expect_named(p$optimization$estimate, "noise")
})

test_that("mfsvr(optimize = TRUE) never returns its start silently", {
  skip_on_cran()
  # a start where EP needs far more than 60 sweeps (a small first damping;
  # the search once capped EP at 60 sweeps everywhere and stopped at such a
  # start without a word, as it did for y around 100 and C = 10)
  set.seed(7)
  x <- scale(matrix(rnorm(60 * 3), 60, 3))
  y <- drop(scale(100 + 5 * x[, 1] + 3 * sin(x[, 2]) + rnorm(60)))
  ctl <- mfsvr_control(damping = 0.04)
  # (the search alone: no calibration's refits)
  fit <- suppressWarnings(mfsvr(x, y, C = 10, epsilon = 0.05, kernel = rbf_kernel(1),
                                optimize = TRUE, control = ctl, calibration_folds = 0))
  o <- fit$optimization
  expect_gt(o$path$iterations[1], 60L)
  expect_identical(o$path$status[1], "ok")
  expect_gt(o$evaluations, 1L)
  expect_false(isTRUE(all.equal(unname(o$estimate), c(10, 0.05, 1))))
  expect_gt(fit$log_evidence, o$path$log_evidence[1])
  # a start where EP cannot converge: the search does not start, and says so
  expect_warning(expect_warning(
    f <- mfsvr(x, y, C = 10, epsilon = 0.05, kernel = rbf_kernel(1), optimize = TRUE,
               control = mfsvr_control(max_iter = 3), calibration_folds = 0),
    "could not be evaluated at the start: EP did not converge in 3 iterations"),
    "mfsvr\\(\\) did not converge in 3 iterations")
  expect_false(f$optimization$convergence$converged)
  expect_identical(f$optimization$evaluations, 1L)
  expect_equal(f$C, 10)
})

test_that("mfsvr's search on scaled data converges, with the record of its path", {
  set.seed(3)
  x <- scale(matrix(rnorm(80 * 2), 80, 2))
  y <- drop(scale(sin(2 * x[, 1]) + x[, 2]^2 + rnorm(80, sd = 0.3)))
  # (bias = 0: one search, from the start given)
  fit <- mfsvr(x, y, C = 1, epsilon = 0.1, kernel = rbf_kernel(), optimize = TRUE, bias = 0)
  o <- fit$optimization
  expect_true(o$convergence$converged)
  expect_identical(o$method, "L-BFGS-B")
  expect_named(o$path, c("C", "epsilon", "sigma", "log_evidence", "log_prior", "grad_log_C",
                         "grad_log_epsilon", "grad_log_sigma", "accuracy", "iterations",
                         "status"))
  # each point to the EP tolerance the search asked for there: a tenth of
  # the last gradient per observation, between 1e-4 and 1e-2
  expect_true(all(o$path$accuracy >= 1e-4 - 1e-15 & o$path$accuracy <= 1e-2))
  expect_identical(o$path$accuracy[1], 1e-2)
  # (from the width of the two rules' the evidence weighed first)
  expect_true(any(abs(o$start[["sigma"]] - c(gpsvm:::.data_driven_width(x), 1)) < 1e-12))
  expect_equal(o$estimate, c(C = fit$C, epsilon = fit$epsilon, sigma = fit$kernel$sigma))
  expect_lte(o$convergence$change, 1e-3)
  expect_match(o$stopped, "no gradient component exceeds 0.001 per observation")
  # the recorded gradient is the evidence's at the estimate
  g <- ep_evidence(x, y, fit$C, fit$epsilon, fit$kernel)$gradient
  expect_lt(max(abs(o$gradient - g)) / 80, 1e-4)
  # every usable point of the path has a lower evidence times hyperprior
  # (on scaled data, see ?mfsvr) than the estimate
  expect_true(all(o$path$log_evidence + o$path$log_prior <= fit$log_evidence + o$log_prior + 1e-6,
                  na.rm = TRUE))
  expect_output(print(summary(fit)), "evidence maximisation; converged after")
})

test_that("mfsvr() by default chooses C by evidence on scaled data, and only then", {
  skip_on_cran()
  set.seed(21)
  x <- runif(150, -3, 3)
  y <- sin(x) + rnorm(150)
  # one search, from the default start: no offset, and the sigest width
  # (not weighed against gamma = 1/p's)
  k <- rbf_kernel(gpsvm:::.data_driven_width(scale(x)))
  fit <- mfsvr(x, y, bias = 0, kernel = k)
  o <- fit$optimization
  expect_true(o$convergence$converged)
  expect_named(o$estimate, "C")
  expect_equal(o$start[["C"]], 5)
  expect_identical(fit$C, o$estimate[["C"]])
  # one EP run that moves C as it converges: the record says how, and
  # where C stood at each move
  expect_identical(o$method, "one EP run, C by a Newton step, then secant steps, on the evidence's gradient")
  expect_identical(o$path$C[nrow(o$path)], fit$C)
  expect_identical(sum(o$path$iterations), fit$convergence$iterations)
  expect_lte(abs(o$gradient[["log_C"]]) / 150, 1e-3)
  # search_control(max_iter) caps the moves of C: cut short, the run says
  # so in a warning and its record, and ends at the C it last moved to
  moves <- nrow(o$path) - 1L
  expect_gte(moves, 3L)
  expect_warning(capped <- mfsvr(x, y, search = search_control(max_iter = 2), bias = 0, kernel = k),
                 "max_iter = 2 moves of C")
  co <- capped$optimization
  expect_identical(co$method, o$method)
  expect_false(co$convergence$converged)
  expect_identical(nrow(co$path), 3L)
  expect_identical(co$path$C[1:3], o$path$C[1:3])
  expect_identical(capped$C, co$path$C[3])
  expect_gt(abs(co$gradient[["log_C"]]) / 150, 1e-3)
  # a cap it does not reach changes nothing
  roomy <- mfsvr(x, y, search = search_control(max_iter = moves), bias = 0, kernel = k)
  expect_identical(roomy$C, fit$C)
  expect_true(roomy$optimization$convergence$converged)
  # the maximum the search of separate fits finds, within its tolerance
  asked <- mfsvr(x, y, optimize = "C", bias = 0, kernel = k)
  expect_identical(asked$optimization$method, "L-BFGS-B")
  expect_equal(asked$C, fit$C, tolerance = 0.02)
  expect_equal(asked$log_evidence, fit$log_evidence, tolerance = 1e-6)
  # a maximum: fits at fixed C either side have a lower evidence
  ev <- function(C) mfsvr(x, y, C = C, bias = 0, kernel = k)$log_evidence
  expect_gt(fit$log_evidence, ev(1.05 * fit$C))
  expect_gt(fit$log_evidence, ev(fit$C / 1.05))
  expect_output(print(fit), "hyperparameters: C by evidence maximisation; converged")
  # the evidence reads the noise (sd 1 against sd(y) = 1.2): C = 5 claims a
  # noise sd of sqrt(2) / 5 = 0.28 sd(y), and its 95% intervals miss
  x_new <- runif(4000, -3, 3)
  y_new <- sin(x_new) + rnorm(4000)
  covered <- function(f) {
    p <- predict(f, x_new, interval = "prediction")
    mean(y_new >= p[, "lwr"] & y_new <= p[, "upr"])
  }
  expect_gt(covered(fit), 0.93)
  expect_lt(covered(fit), 0.97)
  expect_lt(covered(mfsvr(x, y, C = 5, calibration_folds = 0)), 0.8)
  # (where the calibration's refits on 100 of the rows widen them)
  expect_gt(covered(mfsvr(x, y, C = 5)), 0.85)
  # no search when the call gives C, optimize = FALSE, the data as given or
  # the paper's algorithm; C = 5 is the value kept
  kept <- list(mfsvr(x, y, C = 2), mfsvr(x, y, optimize = FALSE), mfsvr(x, y, scale = FALSE),
               mfsvr(x, y, control = mfsvr_control(algorithm = "paper")))
  expect_identical(vapply(kept, `[[`, numeric(1), "C"), c(2, 5, 5, 5))
  expect_true(all(vapply(kept, function(f) is.null(f$optimization), logical(1))))
  expect_null(update(fit, C = 3)$optimization)
  # with inducing inputs too, on the FITC evidence
  sparse <- mfsvr(x, y, inducing = 20, bias = 0, kernel = k)
  expect_true(sparse$optimization$convergence$converged)
  expect_lte(abs(sparse$optimization$gradient[["log_C"]]) / 150, 1e-3)
  # a search asked for keeps working as before
  expect_named(mfsvr(x, y, optimize = "epsilon")$optimization$estimate, "epsilon")
})

test_that("beyond search_max_n mfsvr()'s default searches on evenly spaced rows, and says so", {
  # the rule lowered for the test (10000 by default): the same switch
  op <- options(gpsvm.size_policy = list(search_max_n = 300))
  on.exit(options(op), add = TRUE)
  set.seed(22)
  x <- runif(301, -3, 3)
  y <- sin(x) + rnorm(301, sd = 0.3)
  expect_message(big <- mfsvr(x, y),
                 paste("mfsvr\\(\\): 301 observations: hyperparameters: searched on 300 evenly",
                       "spaced rows"))
  # the default on 300 rows spread evenly over the data, written out here
  rows <- unique(round(seq(1, 301, length.out = 300)))
  expect_length(rows, 300)
  sub <- suppressMessages(mfsvr(x[rows], y[rows]))
  expect_identical(big$C, sub$C)
  expect_identical(big$kernel$sigma, sub$kernel$sigma)
  expect_identical(big$bias_variance, sub$bias_variance)
  expect_identical(big$optimization$search_rows, 300L)
  # then every row at what it chose: the fit at those settings given
  at <- suppressMessages(mfsvr(x, y, C = sub$C, kernel = rbf_kernel(sub$kernel$sigma),
                               bias = sub$bias_variance))
  expect_equal(fitted(big), fitted(at), tolerance = 1e-12)
  expect_equal(c(logLik(big)), c(logLik(at)), tolerance = 1e-12)
  # (what the search chose from the response counts in the df, as on all rows)
  expect_identical(attr(logLik(big), "df"), attr(logLik(suppressMessages(mfsvr(x[-1], y[-1]))), "df"))
  plan <- gpsvm_plan(big)
  expect_identical(plan$size_rule[plan$step == "hyperparameters"], "search_max_n")
  expect_false(plan$exact[plan$step == "hyperparameters"])
  expect_output(print(big), "hyperparameters: searched on 300 evenly spaced rows; C by evidence")
  expect_identical(suppressMessages(update(big))$C, big$C)
  expect_message(searched <- mfsvr(x[-1], y[-1]), "C mixture: not integrated over C")
  expect_named(searched$optimization$estimate, "C")
  expect_null(searched$optimization$search_rows)
  expect_true(gpsvm_plan(searched)$exact[gpsvm_plan(searched)$step == "hyperparameters"])
  # a C given: no search to leave out; the option and suppressMessages()
  # silence what remains (the intervals' rules beyond 200 and 100 rows)
  given <- suppressMessages(mfsvr(x, y, C = 5))
  expect_identical(gpsvm_plan(given)$by[gpsvm_plan(given)$step == "hyperparameters"],
                   "the call and the defaults")
  options(gpsvm.quiet = TRUE)
  expect_silent(mfsvr(x, y))
  options(gpsvm.quiet = NULL)
  expect_silent(suppressMessages(mfsvr(x, y)))
})

test_that("gpc()'s default search beyond gpc_search_max_n sees search_subset_n evenly spaced rows", {
  # the rules lowered for the test (2000 and 2000 by default): the same switch
  op <- options(gpsvm.size_policy = list(gpc_search_max_n = 1000, search_subset_n = 200))
  on.exit(options(op), add = TRUE)
  # one input: the kernel matrix has a low rank, and the fits are quick
  set.seed(23)
  n <- 1001
  x <- runif(n, -3, 3)
  y <- factor(ifelse(sin(x) + rnorm(n, sd = 0.5) > 0, "b", "a"))
  expect_message(big <- gpc(x, y),
                 "gpc\\(\\): 1001 observations: hyperparameters: searched on 200 evenly spaced rows")
  expect_named(big$optimization$estimate, c("sigma", "noise"))
  expect_identical(big$optimization$search_rows, 200L)
  expect_output(print(big), "by evidence maximisation \\(on 200 evenly spaced rows[;)]")
  expect_output(print(big), "hyperparameters: searched on 200 evenly spaced rows")
  plan <- gpsvm_plan(big)
  expect_identical(plan$size_rule[plan$step == "hyperparameters"], "gpc_search_max_n")
  # the fit is the model at the values found, on every row (EP from the
  # search's sites on its rows, and from the prior: the same fixed point, to
  # the sweeps' tolerance 1e-6)
  at_values <- gpc(x, y, rbf_kernel(big$kernel$sigma), noise = big$noise, optimize = FALSE)
  expect_equal(predict(big, x[1:50], type = "prob"), predict(at_values, x[1:50], type = "prob"),
               tolerance = 1e-7)
  # only what the call left open is searched and named; nothing left open,
  # no message
  expect_message(one <- gpc(x, y, rbf_kernel(1)), "searched on 200 evenly spaced rows")
  expect_named(one$optimization$estimate, "noise")
  expect_silent(gpc(x, y, rbf_kernel(1), noise = 0.1))
  expect_silent(fixed <- gpc(x, y, optimize = FALSE))
  expect_null(fixed$optimization)
  expect_identical(fixed$noise, 0.1)
})

test_that("a search on some rows has its own count of inducing inputs; the plan counts its sweeps", {
  skip_on_cran()
  # the rules lowered for the test: beyond 500 rows the search sees 400, on
  # the FITC evidence of 40 inducing inputs; on all rows (up to 500) of 90
  op <- options(gpsvm.size_policy = list(gpc_search_max_n = 500, search_subset_n = 400,
                                         search_dense_max_n = 100, search_inducing_count = 90,
                                         subset_search_inducing_count = 40))
  on.exit(options(op), add = TRUE)
  set.seed(25)
  n <- 501
  x <- cbind(u = runif(n, -3, 3), v = rnorm(n), w = rnorm(n))
  y <- factor(ifelse(sin(x[, "u"]) + x[, "v"] + rnorm(n, sd = 0.5) > 0, "b", "a"))
  big <- suppressMessages(gpc(x, y))
  expect_identical(big$optimization$search_rows, 400L)
  expect_identical(big$optimization$search_inducing, 40L)
  all_rows <- suppressMessages(gpc(x[-n, ], y[-n]))
  expect_null(all_rows$optimization$search_rows)
  expect_identical(all_rows$optimization$search_inducing, 90L)
  # the plan's row: the evaluations and sweeps of the search's path, and the
  # final fit's sweeps
  plan <- gpsvm_plan(big)
  path <- big$optimization$path
  expect_match(plan$by[plan$step == "hyperparameters"],
               sprintf("%d evaluations of the evidence, %d EP sweeps; the fit on every row %d sweeps",
                       nrow(path), sum(path$iterations), big$convergence$iterations), fixed = TRUE)
})

test_that("a search on some rows is the search on those rows, then the fit on all of them", {
  skip_on_cran()
  # gpc()'s default beyond gpc_search_max_n observations, on 600 rows of two inputs
  # (as a fit sees them: unscaled here, with the bias in the kernel)
  set.seed(24)
  n <- 600
  x <- cbind(u = runif(n, -3, 3), v = rnorm(n))
  y <- ifelse(sin(x[, "u"]) + rnorm(n, sd = 0.5) > 0, 1, -1)
  rows <- gpsvm:::.evenly_spaced_rows(n, 300L)
  expect_identical(rows, unique(round(seq(1, n, length.out = 300))))
  control <- gpsvm:::.resolve_control(gpc_control(), "tap")
  settings <- gpsvm:::.search_settings(search_control(), "gradient")
  for (kernel in list(rbf_kernel(), rbf_kernel(c(1, 2), per_input = TRUE))) {
    inputs <- gpsvm:::.model_inputs(gpsvm:::.input_matrix(x), kernel, FALSE)
    k <- gpsvm:::.with_bias(inputs$kernel, 1)
    search <- function(x, y, rows = NULL) {
      gpsvm:::.gpc_optimize(x, y, k, 0.1, 0, "tap", control, c("sigma", "noise"), NULL, settings,
                            rows)
    }
    some <- search(inputs$x, y, rows)
    on_rows <- search(inputs$x[rows, ], y[rows])
    expect_identical(some$optimization$estimate, on_rows$optimization$estimate)
    expect_identical(some$optimization$search_rows, 300L)
    expect_identical(some$optimization$search_inducing, on_rows$optimization$search_inducing)
    # every row at the values found, from the prior (for a width per input,
    # the inputs divided by the widths' change, as the search's own points)
    h <- as.list(some$optimization$estimate)
    point <- if (isTRUE(kernel$per_input)) {
      gpsvm:::.per_input_point(h, k, inputs$x)
    } else {
      list(kernel = gpsvm:::.with_width(k, h$sigma), inputs$x)
    }
    full <- gpsvm:::.gpc_fit(point[[2]], y, point$kernel, h$noise, 0, "tap", control)
    expect_equal(some$alpha, full$alpha, tolerance = 1e-7)
    expect_equal(some$log_evidence, full$log_evidence, tolerance = 1e-9)
    expect_equal(some$optimization$log_evidence, full$log_evidence, tolerance = 1e-9)
  }
})

test_that("on noise-free data the default search takes a large C without a warning", {
  # the evidence rises without end as C grows; asked for, the search warns
  d <- data.frame(u = seq(-3, 3, length.out = 25))
  d$y <- sin(d$u) + 0.1 * cos(7 * d$u)
  # (at the sigest width: at gamma = 1/p's, wider, the evidence takes the
  # fast wiggle for noise, and prefers that by 5.5 nats)
  k <- rbf_kernel(gpsvm:::.data_driven_width(scale(d$u)))
  expect_no_warning(fit <- mfsvr(y ~ u, data = d, kernel = k))
  expect_gt(fit$C, 100)
  expect_lt(max(abs(residuals(fit))), 0.1 * sd(d$y) * 1.01)
  expect_warning(mfsvr(y ~ u, data = d, optimize = "C", kernel = k), "slow rise")
})

# The gradient search with search_control()'s defaults.
gradient_search <- function(spec, evaluate, n) {
  settings <- gpsvm:::.search_settings(search_control(), "gradient")
  gpsvm:::.gradient_search(spec, evaluate, n = n, tol = settings$tol, max_iter = settings$max_iter)
}

# The drivers on known functions: a concave quadratic (maximum at `top`) on
# the search scale, failing where fail(par) is TRUE.
toy_search <- function(top, lower, upper, start, fail = function(p) FALSE, n = 10) {
  names(start) <- names(lower) <- names(upper) <- paste0("log_", c("a", "b"))[seq_along(start)]
  spec <- gpsvm:::.search_spec(start, lower, upper, natural = exp,
                               natural_names = c("a", "b")[seq_along(start)])
  evaluate <- function(par, first, warm, accuracy) {
    if (fail(par)) return(gpsvm:::.search_point(list(), NA, NULL, FALSE, 99L, "toy"))
    gpsvm:::.search_point(list(), -n * sum((par - top)^2), -2 * n * (par - top), TRUE, 1L)
  }
  list(spec = spec, outcome = gradient_search(spec, evaluate, n = n))
}

test_that("the gradient search: interior maximum, bounds, failed points, flat evidence", {
  inside <- toy_search(c(0.3, -0.2), c(-2, -2), c(2, 2), c(1, 1))$outcome
  expect_true(inside$record$convergence$converged)
  expect_equal(unname(log(inside$record$estimate)), c(0.3, -0.2), tolerance = 1e-3)
  expect_identical(inside$record$at_bound, character(0))
  # the maximum beyond the upper bound of b: stops there, converged, and warns
  edge <- toy_search(c(0.3, 5), c(-2, -2), c(2, 2), c(0, 0))
  expect_true(edge$outcome$record$convergence$converged)
  expect_identical(edge$outcome$record$at_bound, "b:upper")
  expect_warning(gpsvm:::.warn_search("toy():", edge$outcome$record, edge$spec),
                 "stopped at the upper bound of its range for b \\(b = 7.389\\)")
  # points beyond 0.5 in a fail (a solver that does not converge there): the
  # line search steps back; the best usable point is returned and the stop
  # is explained
  wall <- toy_search(c(1, 0), c(-2, -2), c(2, 2), c(-1, 0), fail = function(p) p[1] > 0.5)
  r <- wall$outcome$record
  expect_lte(log(r$estimate[["a"]]), 0.5)
  expect_gt(log(r$estimate[["a"]]), 0.3)
  expect_true(any(r$path$status == "toy did not converge in 99 iterations"))
  expect_false(r$convergence$converged)
  expect_match(r$convergence$reason, "evaluations failed \\(toy did not converge in 99 iterations\\)")
  expect_identical(r$stopped, r$convergence$reason)
  expect_warning(gpsvm:::.warn_search("toy():", r, wall$spec), "the evidence search did not converge")
  # a flat evidence: the search cannot move and says why
  spec <- gpsvm:::.search_spec(c(log_a = 0), c(log_a = -3), c(log_a = 3), exp, "a")
  flat <- gradient_search(spec, function(par, first, warm, accuracy) {
    gpsvm:::.search_point(list(), 2, 0, TRUE, 1L)
  }, n = 10)
  expect_false(flat$record$convergence$converged)
  expect_match(flat$record$convergence$reason, "the evidence is flat around the start")
  # a start at the maximum is an answer: the neighbours are lower (the
  # start, evaluated at the coarsest accuracy, is evaluated again at the
  # finest before the search decides on it)
  at_top <- toy_search(0.5, -2, 2, 0.5)$outcome$record
  expect_true(at_top$convergence$converged)
  expect_identical(at_top$evaluations, 4L)
  expect_identical(at_top$path$accuracy[1:2], c(1e-2, 1e-4))
})

# sinc data, standardised (so that a fit's own scaling leaves them alone)
sinc_rvm_data <- function(seed = 4) {
  set.seed(seed)
  x <- runif(50, -10, 10)
  y <- sin(x) / x + rnorm(50, sd = 0.1)
  list(x = drop(scale(x)), y = drop(scale(y)))
}

test_that("rvm(optimize = TRUE) finds a maximum of the evidence over the width", {
  skip_on_cran()
  d <- sinc_rvm_data()
  fit <- rvm(d$x, d$y, kernel = rbf_kernel(), optimize = TRUE)
  o <- fit$optimization
  expect_true(o$convergence$converged)
  expect_identical(o$method, "grid and golden section")
  expect_output(print(fit), sprintf("sigma by evidence maximisation; converged after %d iterations",
                                    o$convergence$iterations))
  expect_equal(fit$kernel$sigma, o$estimate[["sigma"]])
  expect_equal(fit$log_evidence, o$log_evidence)
  w <- gpsvm:::.data_driven_width(matrix(d$x))
  # at least every point of its own grid, by independent fits
  grid <- exp(seq(log(w / 4), log(4 * w), length.out = 9))
  evidence_at <- function(s) suppressWarnings(rvm(d$x, d$y, kernel = rbf_kernel(s)))$log_evidence
  ev <- vapply(grid, evidence_at, numeric(1))
  expect_gte(fit$log_evidence, max(ev))
  # against a fine grid over the whole range: within the evidence's jumps.
  # Here they reach 1.5 between widths 4% apart (basis functions entering
  # and leaving), so the fine grid's best (0.15 higher, at another local
  # maximum) is within 0.25
  fine <- exp(seq(log(w / 4), log(4 * w), length.out = 61))
  ev <- vapply(fine, evidence_at, numeric(1))
  expect_gte(fit$log_evidence, max(ev) - 0.25)
  # and a maximum nearby: 5% either way is lower
  for (f in c(1 / 1.05, 1.05)) {
    expect_lt(evidence_at(fit$kernel$sigma * f), fit$log_evidence)
  }
})

test_that("srvm(optimize = TRUE) finds a maximum of the evidence over the width", {
  skip_on_cran()
  d <- sinc_rvm_data(3)
  pen <- roughness_penalty(10)
  fit <- srvm(d$x, d$y, kernel = rbf_kernel(), penalty = pen, optimize = TRUE)
  expect_true(fit$optimization$convergence$converged)
  expect_s3_class(fit, "gpsvm_srvm")
  w <- gpsvm:::.data_driven_width(matrix(d$x))
  grid <- exp(seq(log(w / 4), log(4 * w), length.out = 41))
  ev <- vapply(grid, function(s) {
    suppressWarnings(srvm(d$x, d$y, kernel = rbf_kernel(s), penalty = pen))$log_evidence
  }, numeric(1))
  # the smooth RVM's evidence jitters by up to a nat between widths 2%
  # apart (the penalty and the pruning move together) over a range of about
  # 23 (50 from the strong lambda start alone, whose optima at some widths
  # lie far below the weak start's)
  expect_gt(max(ev) - min(ev), 20)
  expect_gte(fit$log_evidence, max(ev) - 0.5)
})

test_that("rvm(optimize = TRUE) warns when the evidence's width makes the fit interpolate", {
  skip_on_cran()
  # rounded noise (see rounded_noise_data())
  set.seed(3)
  d <- rounded_noise_data(80)
  new <- rounded_noise_data(2000)
  expect_warning(fit <- rvm(d$x, d$y, optimize = TRUE),
                 "of 80 observations are relevance vectors")
  kept <- length(fit$relevance_vectors)
  expect_gt(kept, 40)
  # the figures the warning gives are the fit's own (the noise sd over y's)
  ratio <- sigma(fit) / sd(d$y)
  expect_warning(rvm(d$x, d$y, optimize = TRUE),
                 sprintf("\\(sigma = %.3g\\) %d of 80 .* noise sd is %.3g times", fit$kernel$sigma,
                         kept, ratio))
  # and the warning is borne out on new draws: the intervals hold too few of
  # them (0.72 of their 95%), while the data-driven width's hold most
  coverage <- function(f) {
    band <- predict(f, new$x, interval = "prediction")
    mean(new$y >= band[, "lwr"] & new$y <= band[, "upr"])
  }
  expect_lt(coverage(fit), 0.8)
  default <- expect_silent(rvm(d$x, d$y))
  expect_lte(length(default$relevance_vectors), 40)
  expect_gt(coverage(default), 0.85)
})

test_that("a flat evidence is reported, not returned as an answer", {
  # constant targets: the bias fits them whatever the width
  x <- seq(0, 1, length.out = 20)
  expect_warning(f <- rvm(x, rep(3, 20), kernel = rbf_kernel(), optimize = TRUE),
                 "the evidence is flat")
  expect_false(f$optimization$convergence$converged)
  expect_error(rvm(x, rep(3, 20), kernel = poly_kernel(2), optimize = TRUE),
               "chooses the width of rbf_kernel")
  expect_error(rvm(x, rep(3, 20), optimize = "C"), "'optimize' must be TRUE, FALSE or a subset")
})

test_that("rvm() with no relevance vector left predicts with the bias alone", {
  # a kernel so wide that every column is nearly constant: only the bias stays
  set.seed(1)
  x <- runif(30)
  y <- 2 + rnorm(30, sd = 0.1)
  fit <- rvm(x, y, kernel = rbf_kernel(1e3))
  expect_length(fit$relevance_vectors, 0L)
  expect_length(fitted(fit), 30L)
  expect_equal(unname(fitted(fit)), rep(unname(fitted(fit)[1]), 30))
  expect_equal(unname(predict(fit, c(0.2, 0.7))), rep(unname(fitted(fit)[1]), 2))
})

test_that("a search evaluation warm-starts from the nearer of the best and the last point", {
  spec <- gpsvm:::.search_spec(start = c(a = 0), lower = -10, upper = 10, natural = identity,
                               natural_names = "a")
  warm_seen <- list()
  evaluate <- function(par, first, warm, accuracy) {
    warm_seen[[length(warm_seen) + 1L]] <<- if (is.null(warm)) NA_real_ else warm$at
    gpsvm:::.search_point(list(at = par[[1]]), -par[[1]]^2, -2 * par[[1]])
  }
  state <- gpsvm:::.search_state(spec, evaluate)
  for (p in c(0, 5, 0.1, 4.9, 4.8)) state$at(c(a = p))
  # 0 is the best throughout, the last usable point the one before: 0.1
  # starts from 0 (not 5), 4.9 from 0.1 and 4.8 from 4.9 (not 0)
  expect_equal(unlist(warm_seen), c(NA, 0, 0, 0.1, 4.9))
})
