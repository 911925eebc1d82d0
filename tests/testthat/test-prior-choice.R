# The choices the evidence makes for mfsvr() and svr() by default: the
# offset f(x) = c + g(x) with c ~ N(0, bias), a constant added to the
# kernel, and the width between the sigest and gamma = 1/p rules.

# log of the integral of N(f; 0, K) p(y_1 | f_1) p(y_2 | f_2) over f, for two
# points, by nested integrate(): f_1 from its prior, f_2 given f_1 (each to
# 1e-9, six orders below the tolerance the tests assert).
two_point_log_evidence <- function(K, y, C, eps) {
  slope <- K[2, 1] / K[1, 1]
  sd2 <- sqrt(K[2, 2] - K[2, 1]^2 / K[1, 1])
  inner <- function(a) vapply(a, function(f1) {
    integrate(function(f2) epsins_density(y[2], f2, C, eps) * dnorm(f2, slope * f1, sd2),
              -Inf, Inf, rel.tol = 1e-9)$value
  }, numeric(1))
  log(integrate(function(f1) epsins_density(y[1], f1, C, eps) * dnorm(f1, 0, sqrt(K[1, 1])) *
                  inner(f1), -Inf, Inf, rel.tol = 1e-9)$value)
}

# A log evidence from a default search for C (no offset) against the
# maximum over C, found by a search to 1e-7 of the gradient per
# observation: at most what the default's stopping rule (1e-3 of it per
# observation) leaves below the maximum, (n 1e-3)^2 / (2 |curvature|), with
# the curvature in log C by a central difference there.
expect_within_search_of_max <- function(value, formula, data, kernel) {
  fit_at <- function(...) suppressWarnings(mfsvr(formula, data, bias = 0, kernel = kernel, ...))
  best <- fit_at(search = search_control(tol = 1e-7))
  h <- 0.05
  curvature <- (fit_at(C = best$C * exp(h))$log_evidence - 2 * fit_at(C = best$C)$log_evidence +
                  fit_at(C = best$C * exp(-h))$log_evidence) / h^2
  expect_lt(curvature, 0)
  gap <- (nrow(data) * 1e-3)^2 / (2 * abs(curvature))
  expect_lte(value, best$log_evidence + 1e-8)
  expect_gte(value, best$log_evidence - gap)
}

test_that("the data-driven width answers for the inputs asked about, remembered or not", {
  plain <- function(x, q = c(0.1, 0.9)) {
    d2 <- as.vector(dist(x))^2
    d2 <- d2[d2 > 0]
    1 / sqrt(2 * mean(1 / quantile(d2, q)))
  }
  set.seed(21)
  x <- matrix(rnorm(300), 100)
  width <- gpsvm:::.data_driven_width
  expect_equal(width(x), plain(x), tolerance = 1e-12)
  x2 <- x
  x2[7, 2] <- 40  # one entry changed: another width
  expect_equal(width(x2), plain(x2), tolerance = 1e-12)
  expect_gt(abs(width(x2) - width(x)), 1e-3)
  expect_equal(width(x), plain(x), tolerance = 1e-12)
  expect_equal(width(x, 0.5), plain(x, 0.5), tolerance = 1e-12)  # the quantiles too
  expect_equal(width(x), plain(x), tolerance = 1e-12)
  # beyond 1000 rows, the 1000 evenly spaced ones
  big <- matrix(rnorm(2 * 2500), 2500)
  rows <- unique(round(seq(1, 2500, length.out = 1000)))
  expect_equal(width(big), plain(big[rows, ]), tolerance = 1e-12)
  # inputs wider than the memory keeps: the same answers
  wide <- matrix(rnorm(20 * 60000), 20)
  expect_equal(width(wide), plain(wide), tolerance = 1e-12)
  wide[3, 5] <- 100
  expect_equal(width(wide), plain(wide), tolerance = 1e-12)
  expect_equal(width(matrix(1, 5, 2)), 1)  # one distinct input
})

test_that("the offset's evidence is the integral over the prior with the constant", {
  skip_on_cran()
  x <- c(-0.4, 0.5)
  y <- c(1.3, 1.1)  # both far above the zero-mean prior's mean
  for (b in c(0.3, 4)) {
    K <- exp(-outer(x, x, "-")^2 / 2) + b
    exact <- two_point_log_evidence(K, y, C = 3, eps = 0.1)
    fit <- mfsvr(x, y, C = 3, epsilon = 0.1, kernel = rbf_kernel(1), bias = b, scale = FALSE)
    expect_identical(fit$kernel$constant, b)
    expect_identical(fit$bias_variance, b)
    expect_lt(abs(c(logLik(fit)) - exact), 0.005)
    # the model without the offset is another one: its evidence is not this
    expect_gt(abs(two_point_log_evidence(K - b, y, C = 3, eps = 0.1) - exact), 0.05)
    # svr()'s fit of the same model reports the same evidence
    s <- svr(x, y, C = 3, epsilon = 0.1, kernel = rbf_kernel(1), bias = b, scale = FALSE)
    expect_equal(c(logLik(s)), c(logLik(fit)), tolerance = 1e-8)
  }
  # one point: EP is exact, so the evidence is the integral itself
  one <- mfsvr(0.2, 2, C = 2, epsilon = 0.05, kernel = rbf_kernel(1), bias = 3, scale = FALSE)
  exact <- log(integrate(function(f) epsins_density(2, f, 2, 0.05) * dnorm(f, 0, 2),
                         -Inf, Inf, rel.tol = 1e-12)$value)
  expect_equal(c(logLik(one)), exact, tolerance = 1e-8)
})

test_that("far from the data the prediction is the offset's posterior, by plain R", {
  d <- sinc_data(30, seed = 4)
  y <- d$y + 2  # a floor at 2
  b <- 1.5
  fit <- mfsvr(d$x, y, C = 5, epsilon = 0.1, kernel = rbf_kernel(1), bias = b, scale = FALSE)
  far <- 1e3
  p <- predict(fit, far, se.fit = TRUE)
  # the mean: sum_i (k(far, x_i) + b) w_i, with every k(far, x_i) = 0
  expect_equal(unname(p$fit), b * sum(fit$coefficients), tolerance = 1e-10)
  # the variance: 1 + b - b^2 1' S^1/2 (I + S^1/2 (K + b) S^1/2)^-1 S^1/2 1,
  # from the sites' precisions S
  K <- exp(-outer(d$x, d$x, "-")^2 / 2) + b
  s <- sqrt(fit$site_precision)
  v <- 1 + b - b^2 * sum(s * solve(diag(30) + outer(s, s) * K, s))
  expect_equal(unname(p$se.fit)^2, v, tolerance = 1e-8)
  # and the offset brings the far prediction near the floor, where the
  # zero-mean model's falls to 0
  expect_lt(abs(p$fit - 2), 0.5)
  plain <- mfsvr(d$x, y, C = 5, epsilon = 0.1, kernel = rbf_kernel(1), bias = 0, scale = FALSE)
  expect_lt(abs(predict(plain, far)), 1e-8)
})

test_that("svr() with a large offset variance approaches the free threshold", {
  d <- svr_sine_data(40, seed = 6)
  y <- d$y + 3
  k <- rbf_kernel(1)
  free <- svr(d$x, y, C = 2, epsilon = 0.1, kernel = k, bias = TRUE, scale = FALSE)
  z <- seq(0, 4 * pi, length.out = 25)
  gap <- vapply(c(1e1, 1e3, 1e5), function(b) {
    fit <- svr(d$x, y, C = 2, epsilon = 0.1, kernel = k, bias = b, scale = FALSE,
               control = svr_control(tol = 1e-10))
    max(abs(predict(fit, z) - predict(free, z)))
  }, numeric(1))
  # the penalty b^2 / (2 bias) on the offset fades as 1 / bias
  expect_lt(gap[3], 1e-3)
  expect_true(all(diff(log(gap)) < -log(10)))
  # without an offset the fit is far from the free threshold's
  none <- svr(d$x, y, C = 2, epsilon = 0.1, kernel = k, bias = FALSE, scale = FALSE)
  expect_gt(max(abs(predict(none, z) - predict(free, z))), 0.1)
})

test_that("the offset on FITC with every input inducing is the dense fit", {
  d <- sinc_data(25, seed = 8)
  y <- d$y + 1
  # (a width at which K_zz is well conditioned: its jitter 1e-8 then moves
  # nothing by 1e-6)
  ctl <- mfsvr_control(rank_tol = 0, tol = 1e-12)
  dense <- mfsvr(d$x, y, C = 4, kernel = rbf_kernel(0.6), bias = 2, scale = FALSE, control = ctl)
  sparse <- mfsvr(d$x, y, C = 4, kernel = rbf_kernel(0.6), bias = 2, scale = FALSE, control = ctl,
                  inducing = as.matrix(d$x))
  z <- c(-12, -3, 0.4, 7, 30)
  a <- predict(dense, z, se.fit = TRUE)
  b <- predict(sparse, z, se.fit = TRUE)
  expect_equal(b$fit, a$fit, tolerance = 1e-6)
  expect_equal(b$se.fit, a$se.fit, tolerance = 1e-6)
  expect_equal(c(logLik(sparse)), c(logLik(dense)), tolerance = 1e-6)
  # a derivative does not see the constant: central differences of the mean
  h <- 1e-5
  slope <- (predict(dense, z + h) - predict(dense, z - h)) / (2 * h)
  expect_equal(unname(predict(dense, z, deriv = 1)), unname(slope), tolerance = 1e-6)
})

test_that("by default the evidence weighs an offset against none, on scaled data", {
  skip_if_not_installed("mlbench")
  # (in six inputs 100 rows leave most of the space empty, where the
  # function is its floor)
  # (the offset is weighed on one width: no width per input weighed after)
  old <- options(gpsvm.size_policy = list(per_input_min_n = 1000))
  on.exit(options(old))
  set.seed(11)
  p <- mlbench::mlbench.peak(150, d = 6)
  d <- data.frame(p$x, y = p$y)
  train <- d[1:100, ]
  test <- d[101:150, ]
  fit <- suppressWarnings(mfsvr(y ~ ., data = train))
  choice <- fit$bias_choice
  expect_identical(choice$bias, c(0, 1))
  expect_identical(choice$fitted, c(TRUE, TRUE))
  # a peak on a flat floor: the offset wins, by many nats
  expect_identical(fit$bias_variance, 1)
  expect_identical(fit$kernel$constant, 1)
  expect_gt(diff(choice$log_evidence), 5)
  # each log evidence is a fit's at its own C: refitted there, the same
  without <- suppressWarnings(mfsvr(y ~ ., data = train, bias = 0))
  expect_equal(choice$log_evidence[1], without$log_evidence, tolerance = 1e-6)
  expect_equal(choice$log_evidence[2], fit$log_evidence)
  # and the held-out error is far lower with it
  rmse <- function(f) sqrt(mean((predict(f, test) - test$y)^2))
  expect_lt(rmse(fit), 0.5 * rmse(without))
  expect_output(print(fit), "offset: a constant offset of prior variance 1; the evidence")
  expect_identical(hyperparameters(fit)[["bias"]], 1)
  # svr() makes the same choice, and its MAP fit has the offset
  s <- suppressWarnings(svr(y ~ ., data = train))
  expect_equal(s$bias_choice, choice, tolerance = 1e-8)
  expect_identical(s$kernel$constant, 1)
  expect_output(print(s), "offset of prior variance 1")
  # a C given still weighs the two (update() refits the same pair)
  again <- suppressWarnings(update(fit, C = 50))
  expect_identical(nrow(again$bias_choice), 2L)
  # where the offset's gain at the sites is clearly negative it is not
  # refitted, and print() says its evidence is the estimate (a response
  # with no floor: a sine, centred by the scaling)
  set.seed(3)
  xs <- runif(120, -3, 3)
  plain <- mfsvr(xs, sin(2 * xs) + rnorm(120, sd = 0.2))
  expect_identical(plain$bias_variance, 0)
  expect_identical(plain$bias_choice$fitted, c(TRUE, FALSE))
  expect_lt(diff(plain$bias_choice$log_evidence), -gpsvm:::.offset_refit_margin)
  expect_output(print(plain), "offset: no offset; the evidence.*estimated without refitting")
  # on the data as given, no offset unless asked for
  raw <- mfsvr(y ~ ., data = train, scale = FALSE)
  expect_null(raw$bias_choice)
  expect_identical(raw$bias_variance, 0)
  expect_null(raw$kernel$constant)
})

# log N(t; 0, Sigma) in plain R
gaussian_log_density <- function(t, Sigma) {
  R <- chol(Sigma)
  -sum(log(diag(R))) - length(t) / 2 * log(2 * pi) - sum(backsolve(R, t, transpose = TRUE)^2) / 2
}

test_that("the offset's gain at the sites is the Gaussian one, and near the refitted one", {
  d <- sinc_data(40, seed = 5)
  y <- d$y + 1.5
  k <- rbf_kernel(1.3)
  # epsilon = 0: every site has a positive precision, so the sites'
  # pseudo-targets t = nu / s and variances 1 / s exist
  fit <- mfsvr(d$x, y, C = 4, epsilon = 0, kernel = k, bias = 0, scale = FALSE)
  s <- fit$site_precision
  expect_true(all(s > 0))
  K <- exp(-outer(d$x, d$x, "-")^2 / (2 * 1.3^2))
  t <- fit$site_nu / s
  for (b in c(0.2, 1, 7)) {
    direct <- gaussian_log_density(t, K + b + diag(1 / s)) - gaussian_log_density(t, K + diag(1 / s))
    expect_equal(gpsvm:::.offset_gain_at_sites(fit, b), direct, tolerance = 1e-8)
    # and the evidence refitted with the offset moves from it by little
    with <- mfsvr(d$x, y, C = 4, epsilon = 0, kernel = k, bias = b, scale = FALSE)
    expect_lt(abs(with$log_evidence - fit$log_evidence - direct), 0.1)
  }
  # on FITC with every input inducing, the same gain by the Woodbury identity
  ctl <- mfsvr_control(tol = 1e-12)
  dense <- mfsvr(d$x, y, C = 4, kernel = rbf_kernel(0.8), bias = 0, scale = FALSE,
                 control = mfsvr_control(rank_tol = 0, tol = 1e-12))
  sparse <- mfsvr(d$x, y, C = 4, kernel = rbf_kernel(0.8), bias = 0, scale = FALSE,
                  control = ctl, inducing = as.matrix(d$x))
  expect_equal(gpsvm:::.offset_gain_at_sites(sparse, 1), gpsvm:::.offset_gain_at_sites(dense, 1),
               tolerance = 1e-6)
  # the gain from B = I + diag(a) K diag(a) at the sites, a = sqrt(precision)
  gain_from_B <- function(fit, K) {
    a <- sqrt(fit$site_precision)
    u <- ifelse(a > 0, fit$site_nu / a, 0)
    B <- diag(length(a)) + outer(a, a) * K
    q <- sum(a * solve(B, a))
    r <- sum(a * solve(B, u))
    (r^2 / (1 + q) - log1p(q)) / 2
  }
  # on the dense prior by the fit's own factor of B, or without it by one
  # formed anew
  by_B <- gain_from_B(dense, kernel_matrix(dense$kernel, dense$x))
  expect_equal(gpsvm:::.offset_gain_at_sites(dense, 1), by_B, tolerance = 1e-8)
  unfactored <- dense
  unfactored$chol <- NULL
  expect_equal(gpsvm:::.offset_gain_at_sites(unfactored, 1), by_B, tolerance = 1e-8)
  # with half the inputs inducing, the FITC prior's own: by its dense matrix
  # V'V + diag(lambda)
  half <- mfsvr(d$x, y, C = 4, kernel = rbf_kernel(0.8), bias = 0, scale = FALSE,
                control = ctl, inducing = as.matrix(d$x[seq(1, 40, 2)]))
  z <- half$inducing
  V <- forwardsolve(half$inducing_chol, kernel_matrix(half$kernel, z, half$x))
  K_fitc <- crossprod(V) + diag(pmax(1 - colSums(V^2), 0))
  expect_equal(gpsvm:::.offset_gain_at_sites(half, 1), gain_from_B(half, K_fitc), tolerance = 1e-8)
})

test_that("a bad bias is an error that names it, and an edited one is caught", {
  d <- sinc_data(20, seed = 2)
  for (bad in list(-1, NA, "a", c(1, 2), Inf)) {
    expect_error(mfsvr(d$x, d$y, C = 5, bias = bad), "'bias'")
    expect_error(svr(d$x, d$y, C = 5, bias = bad), "'bias'")
  }
  fit <- mfsvr(d$x, d$y, C = 5, bias = 0.5)
  fit$bias_variance <- 2
  expect_error(predict(fit, 0), "fit\\$bias_variance is 2 but the kernel's constant is 0.5")
  fit <- mfsvr(d$x, d$y)
  fit$bias_choice$fitted <- NULL
  expect_error(predict(fit, 0), "fit\\$bias_choice must be the two biases weighed")
})

test_that("by default the evidence weighs the sigest width against gamma = 1/p and a linear kernel", {
  set.seed(4)
  rows <- sample(nrow(faithful), 190)
  train <- faithful[rows, ]
  test <- faithful[-rows, ]
  fit <- mfsvr(eruptions ~ waiting, data = train)
  choice <- fit$kernel_choice
  # (then Matern 5/2 at the winner's width carried over, which lost here, so
  # that 3/2 was not weighed)
  expect_identical(choice$rule, c("linear", "sigest", "gamma = 1/p", "Matern 5/2, gamma = 1/p"))
  expect_identical(choice$sigma[1], NA_real_)
  expect_equal(choice$sigma[4], sqrt(5 / 3) * sqrt(1 / 2), tolerance = 1e-15)
  expect_lt(choice$log_evidence[4], choice$log_evidence[3])
  matern <- mfsvr(eruptions ~ waiting, data = train, bias = 0,
                  kernel = matern_kernel(5/2, choice$sigma[4]))$log_evidence
  expect_equal(choice$log_evidence[4], matern, tolerance = 1e-6)
  choice <- choice[c(2, 3, 1), ]  # (the widths first, as below)
  # the two widths by plain R: kernlab's sigest rule on the scaled input
  # (10% and 90% quantiles of the squared distances), and sqrt(p / 2)
  z <- (train$waiting - mean(train$waiting)) / sd(train$waiting)
  d2 <- as.vector(dist(z))^2
  d2 <- d2[d2 > 0]
  expect_equal(choice$sigma[1], 1 / sqrt(2 * mean(1 / quantile(d2, c(0.1, 0.9)))), tolerance = 1e-12)
  expect_identical(choice$sigma[2], sqrt(1 / 2))
  # each log evidence is that of a fit at its width (no offset), at the C
  # its own search finds
  at <- function(kernel) mfsvr(eruptions ~ waiting, data = train, bias = 0,
                               kernel = kernel)$log_evidence
  expect_equal(choice$log_evidence, c(at(rbf_kernel(choice$sigma[1])), at(rbf_kernel(choice$sigma[2])),
                                      at(poly_kernel(1, scale = 1, offset = 0))), tolerance = 1e-6)
  # one input puts many pairs close: the sigest width is narrow, and the
  # evidence prefers the wider one by far; so does the held-out error.  The
  # eruptions' two clusters are no line.
  expect_gt(choice$log_evidence[2] - choice$log_evidence[1], 10)
  expect_gt(choice$log_evidence[2] - choice$log_evidence[3], 10)
  expect_identical(fit$kernel$sigma, choice$sigma[2])
  expect_identical(fit$kernel$sigma_rule, "inputs")
  rmse <- function(f) sqrt(mean((predict(f, test) - test$eruptions)^2))
  narrow <- mfsvr(eruptions ~ waiting, data = train, kernel = rbf_kernel(choice$sigma[1]))
  expect_lt(rmse(fit), 0.95 * rmse(narrow))
  expect_output(print(fit), "kernel: Gaussian at the gamma = 1/p rule's width; the evidence")
  expect_output(print(fit), "e1071's gamma = 1/p for the p input columns")
  # svr() makes the same choice
  s <- svr(eruptions ~ waiting, data = train)
  expect_equal(s$kernel_choice, fit$kernel_choice, tolerance = 1e-8)
  expect_identical(s$kernel$sigma, fit$kernel$sigma)
  # no choice where the width is given, one per input, or on the data as
  # given; a search of the width starts from the kernel chosen so
  expect_null(narrow$kernel_choice)
  searched <- suppressWarnings(mfsvr(eruptions ~ waiting, data = train, kernel = rbf_kernel(),
                                     optimize = TRUE))
  expect_equal(searched$optimization$start[["sigma"]],
               searched$kernel_choice$sigma[which.max(searched$kernel_choice$log_evidence)])
  expect_null(mfsvr(eruptions ~ waiting, data = train,
                    kernel = rbf_kernel(per_input = TRUE))$kernel_choice)
  expect_null(mfsvr(eruptions ~ waiting, data = train, scale = FALSE)$kernel_choice)
  # a kernel given stays Gaussian: only the widths are weighed
  given <- mfsvr(eruptions ~ waiting, data = train, kernel = rbf_kernel())
  expect_identical(given$kernel_choice, fit$kernel_choice[2:3, ], ignore_attr = TRUE)
  # an edited record is caught
  bad <- fit
  bad$kernel_choice$sigma <- c(NA, 1, 2, 3)
  expect_error(predict(bad, test), "fit\\$kernel_choice must be the kernels weighed")
  bad$kernel_choice <- fit$kernel_choice[1:2, ]
  expect_error(predict(bad, test), "fit\\$kernel_choice must be the kernels weighed")
  bad <- fit
  bad$kernel$sigma <- 1.5 * fit$kernel$sigma
  expect_error(predict(bad, test), "fit\\$kernel_choice must have the fit's kernel among")
})

test_that("on a response linear in its inputs the evidence chooses the linear kernel", {
  skip_on_cran()
  # calories are nearly 4 protein + 9 fat + 4 carbohydrate: a line in the
  # inputs, which no Gaussian width extrapolates from 45 rows
  skip_if_not_installed("MASS")
  cereal <- MASS::UScereal
  f <- calories ~ protein + fat + sodium + fibre + carbo + sugars + shelf + mfr
  split <- function(seed) {
    set.seed(seed)
    rows <- sample(nrow(cereal), 45)
    test <- cereal[-rows, ]
    list(train = cereal[rows, ], test = test[test$mfr %in% cereal$mfr[rows], ])  # (lm() cannot predict a new level)
  }
  d <- split(1)
  fit <- suppressWarnings(mfsvr(f, d$train))
  choice <- fit$kernel_choice
  expect_identical(choice$rule[1], "linear")
  expect_identical(which.max(choice$log_evidence), 1L)
  expect_gt(choice$log_evidence[1] - max(choice$log_evidence[-1]), 5)
  # the kernel is scale <x, x'> with scale 1/p on the p scaled columns
  p <- ncol(model.matrix(fit))
  expect_identical(fit$kernel$type, "polynomial")
  expect_identical(c(fit$kernel$degree, fit$kernel$scale, fit$kernel$offset), c(1, 1 / p, 0))
  expect_identical(fit$kernel$candidate, "linear")
  expect_output(print(fit), "kernel: linear; the evidence, log Bayes factor [0-9.]+ against")
  expect_output(print(fit), "linear, scale 1/p for the p input columns")
  # its log evidence is that of the fit given this kernel (no offset) at the
  # C its own search found, within that search's tolerance of the maximum
  expect_within_search_of_max(choice$log_evidence[1], f, d$train,
                              poly_kernel(1, scale = 1 / p, offset = 0))
  # the predictions are an affine function of the inputs: lm() of them on
  # the design reproduces them
  both <- rbind(d$train, d$test)
  design <- model.matrix(delete.response(terms(f)), both)
  predicted <- predict(fit, both)
  expect_lt(max(abs(residuals(lm(predicted ~ design - 1)))), 1e-6 * sd(predicted))
  # svr() weighs the same kernels; a kernel given stays Gaussian
  s <- suppressWarnings(svr(f, d$train))
  expect_equal(s$kernel_choice, choice, tolerance = 1e-8)
  expect_identical(s$kernel$candidate, "linear")
  gaussian <- suppressWarnings(svr(f, d$train, kernel = rbf_kernel()))
  expect_identical(gaussian$kernel$type, "rbf")
  expect_false("linear" %in% gaussian$kernel_choice$rule)
  # on four splits the default predicts like lm(), far better than the
  # Gaussian kernel at the better of the two widths
  rmse <- function(fit, test) sqrt(mean((predict(fit, test) - test$calories)^2))
  errors <- vapply(1:4, function(seed) {
    d <- split(seed)
    fit <- suppressWarnings(mfsvr(f, d$train))
    choice <- fit$kernel_choice
    gaussian <- choice$rule != "linear"
    width <- choice$sigma[gaussian][which.max(choice$log_evidence[gaussian])]
    c(default = rmse(fit, d$test), lm = rmse(lm(f, d$train), d$test),
      gaussian = rmse(suppressWarnings(mfsvr(f, d$train, kernel = rbf_kernel(width))), d$test))
  }, numeric(3))
  means <- rowMeans(errors)
  expect_lt(means[["default"]], 0.5 * means[["gaussian"]])
  expect_lt(means[["default"]], 1.2 * means[["lm"]])
})

test_that("the Matern kernels are weighed when the linear kernel leads: the joint maximum over kernel and C", {
  skip_on_cran()
  skip_if_not_installed("MASS")
  # MASS's cpus: the linear kernel beats both Gaussian widths, a rough
  # kernel at the better width beats the linear one (each at its own C)
  cpus <- MASS::cpus
  d <- data.frame(cpus[2:7], lperf = log10(cpus$perf))
  set.seed(77)
  train <- d[sample(nrow(d), 140), ]
  old <- options(gpsvm.size_policy = list(per_input_min_n = 1000L))  # (one width)
  on.exit(options(old))
  fit <- mfsvr(lperf ~ ., train)
  choice <- fit$kernel_choice
  gaussian <- startsWith(choice$rule, "sigest") | startsWith(choice$rule, "gamma")
  matern <- startsWith(choice$rule, "Matern")
  expect_identical(choice$rule[1], "linear")
  expect_gt(choice$log_evidence[1], max(choice$log_evidence[gaussian]))
  expect_true(any(matern))
  # each Matern row is the fit given that kernel (no offset) at its own C,
  # at the better Gaussian width carried over by -k''(0)
  width <- choice$sigma[gaussian][which.max(choice$log_evidence[gaussian])]
  nu <- c("Matern 5/2" = 2.5, "Matern 3/2" = 1.5)
  for (i in which(matern)) {
    v <- nu[[sub(",.*", "", choice$rule[i])]]
    expect_equal(choice$sigma[i], width * sqrt(2 * v / (2 * v - 2)), tolerance = 1e-12)
    expect_within_search_of_max(choice$log_evidence[i], lperf ~ ., train, matern_kernel(v, choice$sigma[i]))
  }
  # the kernel is the best of all the rows; none of them, at any C, beats
  # the default: C = 5, where the choice of the last build went wrong, and
  # the linear kernel's own C
  expect_identical(gpsvm:::.kernel_rule(fit$kernel), choice$rule[which.max(choice$log_evidence)])
  for (C in c(5, fit$C / 2, fit$C * 2)) {
    expect_gte(fit$log_evidence, update(fit, C = C)$log_evidence - 1e-6)
  }
  expect_gt(fit$log_evidence, choice$log_evidence[1])
  # a near tie (within a nat) keeps the linear kernel that led: trees, whose
  # volume grows with girth beyond the training range
  options(old)
  d <- data.frame(Girth = trees$Girth, Height = trees$Height, y = trees$Volume)
  won <- vapply(1:12, function(seed) {
    set.seed(1000 + seed)
    fit <- mfsvr(y ~ ., d[sample(31, 22), ])
    choice <- fit$kernel_choice
    matern <- startsWith(choice$rule, "Matern")
    lead <- choice$log_evidence[!matern]
    expect_identical(choice$rule[1], "linear")
    # the rule written out: the best row, unless the linear kernel led the
    # Gaussian ones and a Matern kernel beats it by a nat or less
    best <- which.max(choice$log_evidence)
    tie <- which.max(lead) == 1L && matern[best] &&
      choice$log_evidence[best] - choice$log_evidence[1] <= 1
    expected <- if (tie) "linear" else choice$rule[best]
    expect_identical(gpsvm:::.kernel_rule(fit$kernel), expected)
    if (tie) expect_output(print(fit), "kept on a near tie")
    tie
  }, logical(1))
  expect_true(any(won))
})

test_that("the linear candidate's search starts at the C of its least-squares residuals", {
  set.seed(5)
  x <- scale(matrix(rnorm(120), 40, 3))
  y <- drop(x %*% c(1, -0.5, 0.2)) + rnorm(40, sd = 0.3)
  y <- (y - mean(y)) / sd(y)
  rms <- sqrt(mean(residuals(lm(y ~ x))^2))
  expect_equal(gpsvm:::.linear_start_C(x, y, 5), sqrt(2) / rms, tolerance = 1e-12)
  # no residual to go by (as many columns as rows, or an exact line): the
  # C it was given; far beyond the search's range: its end
  wide <- matrix(rnorm(40 * 39), 40, 39)
  expect_identical(gpsvm:::.linear_start_C(wide, y, 5), 5)
  expect_identical(gpsvm:::.linear_start_C(x, drop(x %*% c(1, 2, 3)), 7), 7)
  # residuals of root mean square 1.2e-4 sd(y): C = sqrt(2) / rms lies
  # beyond the search's end 1e4 / sd(y)
  line <- drop(x %*% c(1, 2, 3))
  noise <- residuals(lm(rnorm(40) ~ x))  # (orthogonal to the columns and 1)
  nearly <- line + noise * 1.2e-4 * sd(line) / sqrt(mean(noise^2))
  expect_equal(gpsvm:::.linear_start_C(x, nearly, 7), 1e4 / sd(nearly))
  # the default fit's linear candidate reaches the maximum over C
  d <- data.frame(x, y = y)
  fit <- mfsvr(y ~ ., d)
  expect_identical(fit$kernel_choice$rule[1], "linear")
  expect_within_search_of_max(fit$kernel_choice$log_evidence[1], y ~ ., d,
                              poly_kernel(1, scale = 1 / 3, offset = 0))
})

test_that("rvm() and srvm() weigh the linear kernel against the Gaussian one by a GP's evidence", {
  skip_on_cran()
  set.seed(2)
  rows <- sample(nrow(trees), 21)
  train <- trees[rows, ]
  fit <- rvm(Volume ~ ., data = train)
  choice <- fit$kernel_choice
  # the linear kernel and the sigest width (by plain R on the scaled
  # inputs), not e1071's second width
  expect_identical(choice$rule, c("linear", "sigest"))
  z <- scale(as.matrix(train[c("Girth", "Height")]))
  d2 <- as.vector(dist(z))^2
  d2 <- d2[d2 > 0]
  expect_equal(choice$sigma, c(NA, 1 / sqrt(2 * mean(1 / quantile(d2, c(0.1, 0.9))))),
               tolerance = 1e-12)
  # each log evidence is that of a Gaussian process with the kernel, its
  # amplitude and noise variance at their maximum, for the scaled response
  y <- (train$Volume - mean(train$Volume)) / sd(train$Volume)
  kernels <- list(tcrossprod(z) / 2, exp(-as.matrix(dist(z))^2 / (2 * choice$sigma[2]^2)))
  expect_equal(choice$log_evidence, vapply(kernels, plain_gp_evidence, numeric(1), y = y),
               tolerance = 1e-6)
  # the fit is the model's fit with the kernel chosen
  linear <- poly_kernel(1, scale = 1 / 2, offset = 0)
  given <- list(rvm(Volume ~ ., data = train, kernel = linear),
                rvm(Volume ~ ., data = train, kernel = rbf_kernel(choice$sigma[2])))
  expect_equal(fit$log_evidence, given[[1]]$log_evidence, tolerance = 1e-12)
  # the chosen kernel is the one of higher evidence; here the linear one,
  # whose predictions are an affine function of the inputs
  expect_identical(which.max(choice$log_evidence), 1L)
  expect_identical(fit$kernel$candidate, "linear")
  expect_equal(fitted(fit), fitted(given[[1]]), tolerance = 1e-12)
  predicted <- predict(fit, trees)
  expect_lt(max(abs(residuals(lm(predicted ~ Girth + Height, data = trees)))), 1e-6 * sd(predicted))
  expect_output(print(fit), paste("kernel: linear; a Gaussian process's evidence,",
                                  "log Bayes factor [0-9.]+ against the sigest"))
  # logLik() counts the choice as one estimated parameter
  expect_identical(attr(logLik(fit), "df"), attr(logLik(given[[1]]), "df") + 1L)
  # srvm() weighs the same two kernels; on the linear one a penalty on
  # second derivatives vanishes, and the fit is rvm()'s
  smooth <- srvm(Volume ~ ., data = train)
  expect_identical(smooth$kernel_choice$rule, c("linear", "sigest"))
  expect_equal(smooth$kernel_choice, choice, tolerance = 1e-12)
  expect_identical(smooth$kernel$candidate, "linear")
  expect_identical(smooth$lambda, 0)
  expect_equal(fitted(smooth), fitted(fit), tolerance = 1e-6)
  # fitted from the first start alone: the other start ends in the same fit
  expect_identical(smooth$control$lambda_init, 1e4)
  other_start <- srvm(Volume ~ ., data = train, kernel = linear,
                      control = srvm_control(lambda_init = 1))
  expect_equal(fitted(other_start), fitted(smooth), tolerance = 1e-6)
  expect_equal(other_start$log_evidence, smooth$log_evidence, tolerance = 1e-8)
  # on a response far from linear the Gaussian kernel is kept
  set.seed(3)
  x <- runif(60, -8, 8)
  y <- sin(x) / x + rnorm(60, sd = 0.05)
  wavy <- rvm(x, y)
  expect_identical(wavy$kernel_choice$rule, c("linear", "sigest"))
  expect_gt(wavy$kernel_choice$log_evidence[2] - wavy$kernel_choice$log_evidence[1], 10)
  expect_identical(wavy$kernel$type, "rbf")
  # no choice where a kernel is given, the width searched, the data as
  # given, or a line through the observations would fit them all
  expect_null(given[[2]]$kernel_choice)
  expect_null(rvm(Volume ~ ., data = train, kernel = rbf_kernel())$kernel_choice)
  expect_null(suppressWarnings(rvm(Volume ~ ., data = train, optimize = TRUE))$kernel_choice)
  expect_null(rvm(Volume ~ ., data = train, scale = FALSE)$kernel_choice)
  expect_null(rvm(Volume ~ ., data = train[1:4, ])$kernel_choice)
  expect_identical(rvm(Volume ~ ., data = train[1:5, ])$kernel_choice$rule, c("linear", "sigest"))
  # the held-out error over eight splits of mtcars (22 training rows, ten
  # inputs): the choice beats the Gaussian kernel alone, and lm() too
  rmse <- function(f, test) sqrt(mean((predict(f, test) - test$mpg)^2))
  errors <- vapply(1:8, function(seed) {
    set.seed(seed)
    rows <- sample(nrow(mtcars), 22)
    train <- mtcars[rows, ]
    test <- mtcars[-rows, ]
    c(default = rmse(rvm(mpg ~ ., data = train), test),
      gaussian = rmse(rvm(mpg ~ ., data = train, kernel = rbf_kernel()), test),
      lm = rmse(lm(mpg ~ ., data = train), test))
  }, numeric(3))
  means <- rowMeans(errors)
  expect_lt(means[["default"]], 0.9 * means[["gaussian"]])
  expect_lt(means[["default"]], means[["lm"]])
  # trees on ten splits of 22 rows: the relevance vector machine's own
  # evidence, maximised over a precision per basis function, kept the
  # Gaussian kernel on four of them, at about twice the linear kernel's
  # held-out error; the Gaussian process's choice does not
  errors <- vapply(1:10, function(seed) {
    set.seed(seed)
    rows <- sort(sample(nrow(trees), 22))
    fits <- list(default = rvm(Volume ~ ., data = trees[rows, ]),
                 linear = rvm(Volume ~ ., data = trees[rows, ], kernel = linear),
                 gaussian = rvm(Volume ~ ., data = trees[rows, ], kernel = rbf_kernel()))
    vapply(fits, function(f) sqrt(mean((predict(f, trees[-rows, ]) - trees$Volume[-rows])^2)),
           numeric(1))
  }, numeric(3))
  means <- rowMeans(errors)
  expect_lt(means[["default"]], 1.05 * means[["linear"]])
  expect_lt(means[["default"]], 0.6 * means[["gaussian"]])
  # an edited record is caught: three rows (the second width) are not
  # what these models weigh
  bad <- fit
  bad$kernel_choice <- rbind(choice, data.frame(rule = "gamma = 1/p", sigma = 1, log_evidence = -70))
  expect_error(predict(bad, trees), "fit\\$kernel_choice must be the kernels weighed")
})

test_that("beyond kernel_choice_max_n observations the kernels are weighed on that many evenly spaced rows", {
  skip_on_cran()
  # (the rule's 500 rows at the full size; at the small size the rule is
  # lowered to 100, the same code on fewer rows)
  limit <- test_size(500L, 100L)
  if (limit != gpsvm_size_policy()$value[gpsvm_size_policy()$name == "kernel_choice_max_n"]) {
    op <- options(gpsvm.size_policy = list(kernel_choice_max_n = limit))
    on.exit(options(op), add = TRUE)
  }
  n <- limit + 10L
  set.seed(4)
  x <- sort(runif(n, -3, 3))
  y <- x + 0.3 * sin(3 * x) + rnorm(n, sd = 0.2)
  fit <- rvm(x, y, calibration_folds = 0)
  rows <- unique(round(seq(1, n, length.out = limit)))
  z <- scale(x)[rows, , drop = FALSE]
  ys <- ((y - mean(y)) / sd(y))[rows]
  kernels <- list(tcrossprod(z), exp(-as.matrix(dist(z))^2 / (2 * fit$kernel_choice$sigma[2]^2)))
  expect_equal(fit$kernel_choice$log_evidence,
               vapply(kernels, plain_gp_evidence, numeric(1), y = ys), tolerance = 1e-6)
})

test_that("the Gaussian process's evidence that weighs the kernels stays finite on hard data", {
  set.seed(1)
  x <- matrix(rnorm(60), 30)
  # an exactly linear response: the noise variance stops at its floor, and
  # the linear kernel wins by far
  exact <- rvm(x, drop(x %*% c(1, -2)))$kernel_choice
  expect_true(all(is.finite(exact$log_evidence)))
  expect_gt(exact$log_evidence[1] - exact$log_evidence[2], 50)
  # each input three times: singular kernel matrices
  twice <- rvm(x[rep(1:10, 3), ], rnorm(30))$kernel_choice
  expect_true(all(is.finite(twice$log_evidence)))
  # the smallest data the linear kernel is weighed on: p + 3 rows
  few <- suppressWarnings(rvm(x[1:5, ], rnorm(5)))$kernel_choice
  expect_identical(few$rule, c("linear", "sigest"))
  expect_true(all(is.finite(few$log_evidence)))
  # a response of huge scale in one input and a discrete other
  d <- data.frame(a = rep(1:5, 6), b = rnorm(30))
  d$y <- 1e8 * d$b + rnorm(30)
  huge <- rvm(y ~ ., data = d)
  expect_identical(huge$kernel$candidate, "linear")
  expect_true(all(is.finite(huge$kernel_choice$log_evidence)))
})

test_that("the default weighs a width per input by the evidence, a nat per width added", {
  # the second input is irrelevant: a width per input can widen it away
  set.seed(64)
  n <- test_size(200, 80)
  x <- cbind(a = runif(n + 200, -2, 2), b = runif(n + 200, -2, 2))
  y <- sin(2 * x[, "a"]) + rnorm(n + 200, sd = 0.2)
  train <- seq_len(n)
  old <- options(gpsvm.size_policy = list(per_input_min_n = 50))
  on.exit(options(old))
  fit <- mfsvr(x[train, ], y[train], calibration_folds = 0)
  record <- fit$width_choice
  expect_identical(record$widths, c("one", "per input"))
  # the rule in plain R: more than one nat for the one width added
  gain <- record$log_evidence[2] - record$log_evidence[1]
  expect_gt(gain, 1)
  widths <- fit$kernel$sigma * fit$kernel$input_widths
  expect_named(widths, c("a", "b"))
  expect_gt(widths[["b"]] / widths[["a"]], 5)
  # the one-width record is the best kernel weighed before
  expect_equal(record$log_evidence[1], max(fit$kernel_choice$log_evidence))
  # the widths predict the held-out rows better than the one width does
  options(gpsvm.size_policy = list(per_input_min_n = 1e6))
  one <- mfsvr(x[train, ], y[train], calibration_folds = 0)
  expect_null(one$width_choice)
  expect_null(one$kernel$input_widths)
  rmse <- function(f) sqrt(mean((predict(f, x[-train, ]) - sin(2 * x[-train, "a"]))^2))
  expect_lt(rmse(fit), 0.8 * rmse(one))
  plan <- fit$plan
  expect_identical(plan$step[2], "widths")
  expect_identical(plan$size_rule[2], "per_input_min_n")
  expect_match(plan$choice[2], "a width per input")
  expect_identical(one$plan$size_rule[1], "per_input_min_n")
  # the settings reproduce the fit
  again <- gpsvm_fit(x[train, ], y[train], gpsvm_settings(fit))
  expect_equal(fitted(again), fitted(fit), tolerance = 1e-6)
  # a record edited by hand is refused before it is used
  bad <- fit
  bad$width_choice$log_evidence <- rev(bad$width_choice$log_evidence)
  expect_error(predict(bad, x[1:2, ]), "width_choice")
})

test_that("below per_input_min_n a width per input must win by per_input_min_n / n nats a width", {
  set.seed(65)
  make <- function(n) {
    x <- cbind(a = runif(n, -2, 2), b = runif(n, -2, 2), c = runif(n, -2, 2))
    list(x = x, y = sin(2 * x[, "a"]) + 0.5 * x[, "b"] + rnorm(n, sd = 0.2))
  }
  d <- make(60)
  fit <- mfsvr(d$x, d$y, calibration_folds = 0)
  record <- fit$width_choice
  expect_equal(record$margin, rep(100 / 60, 2))
  # the rule in plain R: the gain against 100 / 60 nats for each of the
  # three widths that replace the one
  gain <- record$log_evidence[2] - record$log_evidence[1]
  expect_identical(!is.null(fit$kernel$input_widths), gain > 100 / 60 * 2)
  expect_match(fit$plan$by[fit$plan$step == "widths"], "it must exceed 3.33 (1.67 nat", fixed = TRUE)
  # no abrupt switch: the rule at the data's size and one above it weigh alike
  at <- function(min_n) {
    withr::with_options(list(gpsvm.size_policy = list(per_input_min_n = min_n)),
                        mfsvr(d$x, d$y, calibration_folds = 0))
  }
  same <- at(60)
  above <- at(61)
  expect_equal(same$width_choice$margin[1], 1)
  expect_equal(above$width_choice$margin[1], 61 / 60)
  expect_equal(predict(same, d$x[1:5, ]), predict(above, d$x[1:5, ]), tolerance = 1e-8)
  # below a quarter of the rule no search is made
  small <- make(24)
  expect_null(mfsvr(small$x, small$y, calibration_folds = 0)$width_choice)
  # a margin edited by hand is refused
  bad <- fit
  bad$width_choice$margin <- c(0.5, 0.5)
  expect_error(predict(bad, d$x[1:2, ]), "width_choice")
})

test_that("a width per input is not weighed for one input, a kernel given; against a linear winner only by the margin", {
  old <- options(gpsvm.size_policy = list(per_input_min_n = 20))
  on.exit(options(old))
  one_input <- mfsvr(dist ~ speed, cars, calibration_folds = 0)
  expect_null(one_input$width_choice)
  set.seed(3)
  x <- cbind(runif(40), runif(40))
  given <- mfsvr(x, sin(4 * x[, 1]) + rnorm(40, sd = 0.1), kernel = rbf_kernel(),
                 calibration_folds = 0)
  expect_null(given$width_choice)
  # a response linear in its inputs keeps the linear kernel: the widths
  # weighed against it gain less than a nat each
  linear <- mfsvr(x, 2 * x[, 1] - x[, 2] + rnorm(40, sd = 0.05), calibration_folds = 0)
  expect_identical(linear$kernel$candidate, "linear")
  record <- linear$width_choice
  expect_identical(record$widths, c("none", "per input"))
  expect_lte(record$log_evidence[2] - record$log_evidence[1], 2)
  expect_match(linear$plan$by[linear$plan$step == "widths"], "against the linear kernel")
})

test_that("a width per input is weighed against a linear kernel that won", {
  # quakes' magnitude is nearly linear in its inputs, but smooth in the
  # position: the linear kernel beats every one-width kernel, widths per
  # input beat it once the rows pin them
  set.seed(7)
  rows <- sample(nrow(quakes), 300)
  train <- quakes[rows, ]
  test <- quakes[-rows, ]
  fit <- mfsvr(mag ~ ., train, calibration_folds = 0)
  choice <- fit$kernel_choice
  expect_identical(choice$rule[which.max(choice$log_evidence)], "linear")
  record <- fit$width_choice
  expect_identical(record$widths, c("none", "per input"))
  expect_equal(record$log_evidence[1], choice$log_evidence[choice$rule == "linear"])
  # the rule in plain R: a nat for each of the four widths added
  expect_gt(record$log_evidence[2] - record$log_evidence[1], 4)
  expect_length(fit$kernel$input_widths, 4)
  expect_match(fit$plan$by[fit$plan$step == "widths"],
               "against the linear kernel; it must exceed 4 (1 nat per hyperparameter", fixed = TRUE)
  # the widths' intervals score better on the held-out rows than the
  # linear kernel's, which the evidence ranked below them
  old <- options(gpsvm.size_policy = list(per_input_max_n = 10))
  on.exit(options(old))
  kept <- suppressMessages(mfsvr(mag ~ ., train, calibration_folds = 0))
  expect_identical(kept$kernel$candidate, "linear")
  score <- function(f) mean(predictive_scores(f, test)$interval_score)
  expect_lt(score(fit), score(kept))
  # a record that claims one width where the linear kernel won is refused
  bad <- fit
  bad$width_choice$widths[1] <- "one"
  expect_error(predict(bad, test[1:2, ]), "width_choice")
  # a linear kernel kept on a near tie with a Matern kernel (within a nat)
  # starts the widths too: the rule of the choice in plain R
  options(old)
  set.seed(9)
  tie <- mfsvr(mag ~ ., quakes[sample(nrow(quakes), 300), ], calibration_folds = 0)
  e <- tie$kernel_choice$log_evidence
  linear <- tie$kernel_choice$rule == "linear"
  gaussian <- !linear & !startsWith(tie$kernel_choice$rule, "Matern")
  kept <- e[linear] >= max(e[gaussian]) && max(e) - e[linear] <= 1
  expect_identical(tie$width_choice$widths[1] == "none", kept)
  expect_length(predict(tie, test[1:2, ]), 2)
})

# The offset's gain at the sites, against the two Gaussian evidences in
# plain R: log N(t; 0, K + S^-1 + b 1 1') - log N(t; 0, K + S^-1) over the
# sites of positive precision, t = nu / s, with K the prior the fit ran on.
plain_offset_gain <- function(K, s, nu, b) {
  keep <- s > 0
  A <- K[keep, keep] + diag(1 / s[keep], sum(keep))
  t <- nu[keep] / s[keep]
  log_normal <- function(S) {
    R <- chol(S)
    -sum(log(diag(R))) - sum(backsolve(R, t, transpose = TRUE)^2) / 2
  }
  log_normal(A + b) - log_normal(A)
}

test_that("the offset's gain at the sites is the difference of two Gaussian evidences", {
  set.seed(12)
  x <- matrix(runif(80, -2, 2), 40)
  y <- sin(x[, 1]) + x[, 2] / 2 + rnorm(40, sd = 0.2)
  gain <- function(fit) gpsvm:::.offset_gain_at_sites(fit, 1.7)
  dense <- mfsvr(x, y, C = 3, epsilon = 0.1, bias = 0, optimize = FALSE,
                 kernel = rbf_kernel(sigma = 0.5))
  expect_identical(dim(dense$chol), c(40L, 40L))  # B's factor, kept by the fit
  K <- kernel_matrix(dense$kernel, dense$x)
  expect_equal(gain(dense), plain_offset_gain(K, dense$site_precision, dense$site_nu, 1.7),
               tolerance = 1e-10)
  # without the fit's factor of B: formed from the kernel matrix
  unfactored <- dense
  unfactored$chol <- NULL
  expect_equal(gain(unfactored), gain(dense), tolerance = 1e-10)
  expect_equal(gain(unfactored), plain_offset_gain(K, dense$site_precision, dense$site_nu, 1.7),
               tolerance = 1e-10)
  # other priors at sites set here, of moderate precision (EP's own can be
  # 1e-20, where the plain reference's K + S^-1 has no accurate inverse)
  at_sites <- function(fit) {
    fit$site_precision <- runif(40, 0.5, 5)
    fit$site_nu <- rnorm(40) * fit$site_precision
    fit$chol <- NULL
    fit
  }
  # a low-rank prior (a linear kernel: rank 2), FITC on its factor's two
  # pivots: the kernel matrix itself
  low <- at_sites(mfsvr(x, y, C = 3, epsilon = 0.1, bias = 0, optimize = FALSE,
                        kernel = linear_kernel()))
  expect_identical(nrow(low$inducing), 2L)
  expect_equal(gain(low), plain_offset_gain(kernel_matrix(low$kernel, low$x), low$site_precision,
                                            low$site_nu, 1.7), tolerance = 1e-10)
  # FITC: Q + diag(K - Q), Q from the fit's factor of K_zz (with its jitter)
  fitc <- at_sites(mfsvr(x, y, C = 3, epsilon = 0.1, bias = 0, optimize = FALSE, inducing = 8))
  V <- forwardsolve(fitc$inducing_chol, kernel_matrix(fitc$kernel, fitc$inducing, fitc$x))
  Q <- crossprod(V)
  Kf <- Q + diag(diag(kernel_matrix(fitc$kernel, fitc$x)) - diag(Q))
  expect_equal(gain(fitc), plain_offset_gain(Kf, fitc$site_precision, fitc$site_nu, 1.7),
               tolerance = 1e-10)
  # a site of precision 0 drops out
  zero <- at_sites(dense)
  zero$site_precision[3] <- 0
  expect_equal(gain(zero), plain_offset_gain(K, zero$site_precision, zero$site_nu, 1.7),
               tolerance = 1e-10)
})

test_that("the prior chooser tests the rank and chooses inducing rows on evenly spaced rows", {
  # beyond greedy_max_rows: the rank test on that many evenly spaced rows, then
  # the greedy pivots among max(greedy_max_rows, 4 m) of them, the rows
  # round(seq(1, n, length.out = size)) (ties to even)
  withr::local_options(gpsvm.size_policy = list(greedy_max_rows = 37, dense_max_n = 50,
                                                 low_rank_min_n = 20,
                                                 automatic_inducing_count = 12))
  set.seed(3)
  x <- matrix(runif(406, -3, 3), 203)
  k <- rbf_kernel(sigma = 4)
  z <- gpsvm:::.choose_prior(x, k, 1e-13)
  expect_true(isTRUE(attr(z, "approximation")))
  among <- unique(round(seq(1, 203, length.out = 48)))
  K <- kernel_matrix(k, x[among, ])
  expect_equal(unname(z[, , drop = FALSE]),
               x[among[plain_greedy_pivots(function(j) K[, j], diag(K), 12)], ],
               ignore_attr = TRUE)
  # the evidence search's FITC prior: one inducing input per
  # search_rows_per_inducing rows, no rank test (a quadratic kernel of rank
  # 6: the greedy rule stops at its pivots)
  withr::local_options(gpsvm.size_policy = list(search_dense_max_n = 30,
                                                 search_rows_per_inducing = 10,
                                                 search_inducing_count = 100))
  s <- gpsvm:::.choose_prior(x[1:95, ], k, 1e-13, "search_fitc")
  K <- kernel_matrix(k, x[1:95, ])
  expect_equal(unname(s), x[plain_greedy_pivots(function(j) K[, j], diag(K), 10), ],
               ignore_attr = TRUE)
  expect_null(gpsvm:::.choose_prior(x[1:30, ], k, 1e-13, "search_fitc"))
  quad <- poly_kernel(degree = 2)
  expect_identical(nrow(gpsvm:::.choose_prior(x[1:95, ], quad, 1e-13, "search_fitc")), 6L)
})
