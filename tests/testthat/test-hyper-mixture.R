# The predictive distribution of svr() and mfsvr() with an evidence-chosen
# C integrated over log C (R/hyper-mixture.R), against plain-R references.

# P(t <= t0) for t = m + s z + e, z standard normal and e the
# epsilon-insensitive noise of scale C (times `unit`, the response's
# scaling), by integrate() split at the noise density's kinks.
plain_epsins_cdf <- function(t0, m, s, C, eps, unit = 1) {
  g <- function(u) pnorm((t0 - m - unit * u) / s) * epsins_density(u, 0, C, eps)
  integrate(g, -Inf, -eps, rel.tol = 1e-10)$value +
    integrate(g, -eps, eps, rel.tol = 1e-10)$value +
    integrate(g, eps, Inf, rel.tol = 1e-10)$value
}

# The mixture's CDF at t0 (with `upper`, P(t > t0), by the symmetry of each
# component) from fits refitted by the user's interface at each C of the
# record, with the record's weights; `...` goes to predict().
plain_mixture_cdf <- function(t0, refit, newdata, mixture, eps, unit, upper = FALSE, ...) {
  sign <- if (upper) -1 else 1
  total <- 0
  for (k in seq_along(mixture$C)) {
    p <- predict(refit(mixture$C[k]), newdata, se.fit = TRUE, ...)
    total <- total + mixture$weight[k] *
      plain_epsins_cdf(sign * t0, sign * p$fit, p$se.fit, mixture$C[k], eps, unit)
  }
  total
}

test_that("Gauss-Hermite nodes integrate polynomials of degree 2k - 1 under the normal exactly", {
  gh <- gpsvm:::.gauss_hermite(5L)
  moments <- vapply(0:9, function(j) sum(gh$weight * gh$node^j), numeric(1))
  expect_equal(moments, c(1, 0, 1, 0, 3, 0, 15, 0, 105, 0), tolerance = 1e-12)
  expect_equal(gpsvm:::.gauss_hermite(1L), list(node = 0, weight = 1))
})

test_that("the predictive integrated over log C matches integrate() over log C", {
  skip_on_cran()
  set.seed(3)
  x <- seq(-2, 2, length.out = 12)
  y <- sin(x) + rnorm(12, sd = 0.4)
  k <- rbf_kernel(1)
  eps <- 0.1
  fit <- mfsvr(x, y, epsilon = eps, kernel = k, optimize = "C", scale = FALSE,
               calibration_folds = 0)
  expect_false(is.null(fit$C_mixture))
  at_C <- function(C) mfsvr(x, y, C = C, epsilon = eps, kernel = k, optimize = FALSE, scale = FALSE,
                            calibration_folds = 0)
  log_z <- function(t) vapply(t, function(u) c(logLik(at_C(exp(u)))), numeric(1))
  t_star <- log(fit$C)
  z_star <- c(logLik(fit))
  # the posterior of log C (flat prior) has no mass beyond 8 Laplace sd here
  span <- t_star + c(-8, 8) * fit$C_mixture$log_C_sd
  expect_lt(max(exp(log_z(span) - z_star)), 1e-6)
  cdf <- function(t0) {
    integrand <- function(t) {
      exp(log_z(t) - z_star) * vapply(t, function(u) {
        p <- predict(at_C(exp(u)), 0.5, se.fit = TRUE)
        plain_epsins_cdf(t0, p$fit, p$se.fit, exp(u), eps)
      }, numeric(1))
    }
    mass <- integrate(function(t) exp(log_z(t) - z_star), span[1], span[2], rel.tol = 1e-8)$value
    integrate(integrand, span[1], span[2], rel.tol = 1e-8)$value / mass
  }
  band <- predict(fit, 0.5, interval = "prediction", level = 0.9)
  # five nodes: within 1e-4 of the integral (measured 6e-5)
  expect_equal(cdf(band[, "lwr"]), 0.05, tolerance = 2e-4 / 0.05)
  expect_equal(cdf(band[, "upr"]), 0.95, tolerance = 2e-4 / 0.95)
  # the point C alone is measurably off the integral
  fixed <- predict(at_C(fit$C), 0.5, interval = "prediction", level = 0.9)
  expect_gt(abs(cdf(fixed[, "upr"]) - 0.95), 1e-3)
})

test_that("mfsvr()'s default intervals are the mixture of its component fits' predictives", {
  d <- datasets::attitude
  set.seed(1)
  train <- d[sample(nrow(d), 21), ]
  test <- d[setdiff(seq_len(nrow(d)), as.integer(rownames(train))), ][1:4, ]
  fit <- mfsvr(rating ~ ., data = train, calibration_folds = 0)
  mix <- fit$C_mixture
  expect_length(mix$C, 5L)
  expect_equal(sum(mix$weight), 1)
  expect_true(fit$C %in% mix$C)
  refit <- function(C) mfsvr(rating ~ ., data = train, C = C, kernel = fit$kernel, optimize = FALSE,
                             calibration_folds = 0)
  unit <- fit$response_scaling$scale
  band <- predict(fit, test, interval = "prediction", level = 0.95)
  # the point prediction is the chosen fit's
  expect_equal(band[, "fit"], predict(refit(fit$C), test), tolerance = 1e-8)
  for (i in seq_len(nrow(test))) {
    F <- function(t0) plain_mixture_cdf(t0, refit, test[i, ], mix, fit$epsilon, unit)
    expect_equal(F(band[i, "lwr"]), 0.025, tolerance = 1e-6 / 0.025)
    expect_equal(F(band[i, "upr"]), 0.975, tolerance = 1e-6)
  }
  # the weights are the evidence's: each node's log evidence is that fit's
  ll <- vapply(mix$C, function(C) c(logLik(refit(C))), numeric(1))
  jacobian <- nrow(train) * log(unit)
  expect_equal(mix$log_evidence, ll + jacobian, tolerance = 1e-6)
  expect_output(print(fit), sprintf("integrate over 5 values of C from %.3g to %.3g",
                                    min(mix$C), max(mix$C)), fixed = TRUE)
  # wider than the interval at the chosen C alone, by what C's uncertainty adds
  alone <- predict(refit(fit$C), test, interval = "prediction", level = 0.95)
  expect_true(all(band[, "upr"] - band[, "lwr"] > alone[, "upr"] - alone[, "lwr"]))
})

test_that("svr()'s default intervals mix its MAP fits at mfsvr()'s nodes and weights", {
  fit <- svr(mpg ~ wt + hp, data = mtcars, calibration_folds = 0)
  ep <- mfsvr(mpg ~ wt + hp, data = mtcars, calibration_folds = 0)
  expect_equal(fit$C_mixture$C, ep$C_mixture$C)
  expect_equal(fit$C_mixture$weight, ep$C_mixture$weight)
  refit <- function(C) svr(mpg ~ wt + hp, data = mtcars, C = C, kernel = fit$kernel,
                           optimize = FALSE, calibration_folds = 0)
  new <- data.frame(wt = c(2, 3.5, 5.5), hp = c(80, 150, 300))
  band <- predict(fit, new, interval = "prediction", level = 0.8)
  expect_equal(band[, "fit"], predict(refit(fit$C), new), tolerance = 1e-8)
  unit <- fit$response_scaling$scale
  for (i in seq_len(nrow(new))) {
    F <- function(t0) plain_mixture_cdf(t0, refit, new[i, ], fit$C_mixture, fit$epsilon, unit)
    expect_equal(F(band[i, "lwr"]), 0.1, tolerance = 1e-6 / 0.1)
    expect_equal(F(band[i, "upr"]), 0.9, tolerance = 1e-6)
  }
  # bound = TRUE reaches the components' latent variances (eq. 31) too
  bounded <- predict(fit, new, interval = "prediction", level = 0.8, bound = TRUE)
  expect_equal(plain_mixture_cdf(bounded[1, "upr"], refit, new[1, ], fit$C_mixture, fit$epsilon,
                                 unit, bound = TRUE), 0.9, tolerance = 1e-6)
})

test_that("far levels keep their precision, and the mixture is only where C was chosen", {
  # (a search tolerance of 1e-6 takes EP to 1e-9, as the fits at a given C
  # below, so that they compare to 1e-8)
  fit <- mfsvr(dist ~ speed, data = cars, calibration_folds = 0,
               search = search_control(tol = 1e-6))
  new <- data.frame(speed = c(4, 15, 40))
  far <- predict(fit, new, interval = "prediction", level = 1 - 1e-10)
  mid <- predict(fit, new, interval = "prediction", level = 0.5)
  expect_true(all(is.finite(far)))
  expect_true(all(far[, "lwr"] < mid[, "lwr"] & mid[, "upr"] < far[, "upr"]))
  # the upper tail is solved on its own side: 1 - F there is 5e-11, not 0
  unit <- fit$response_scaling$scale
  refit <- function(C) mfsvr(dist ~ speed, data = cars, C = C, kernel = fit$kernel,
                             optimize = FALSE, calibration_folds = 0)
  upper_tail <- plain_mixture_cdf(far[2, "upr"], refit, new[2, , drop = FALSE], fit$C_mixture,
                                  fit$epsilon, unit, upper = TRUE)
  expect_equal(upper_tail, 5e-11, tolerance = 1e-3)
  # no search for C, no mixture; confidence bands and derivatives stay the fit's
  expect_null(mfsvr(dist ~ speed, data = cars, C = 3)$C_mixture)
  expect_null(svr(dist ~ speed, data = cars, C = 3)$C_mixture)
  expect_null(mfsvr(dist ~ speed, data = cars, scale = FALSE)$C_mixture)
  plain <- refit(fit$C)
  expect_equal(predict(fit, new, interval = "confidence"),
               predict(plain, new, interval = "confidence"), tolerance = 1e-8)
  expect_equal(predict(fit, new, deriv = 1, se.fit = TRUE),
               predict(plain, new, deriv = 1, se.fit = TRUE), tolerance = 1e-8)
})

test_that("beyond the size limit, and with C at an end of its range, there is no mixture", {
  set.seed(4)
  n <- gpsvm_size_policy()["C_mixture_max_n", "value"] + 1L
  x <- runif(n)
  expect_message(big <- mfsvr(x, sin(6 * x) + rnorm(n, sd = 0.3)),
                 "C mixture: not integrated over C")
  expect_null(big$C_mixture)
  expect_identical(gpsvm_plan(big)$size_rule[gpsvm_plan(big)$step == "C mixture"],
                   "C_mixture_max_n")
  # noise-free data: the evidence rises with C to the range's end
  x <- seq(0, 1, length.out = 30)
  exact <- mfsvr(x, sin(6 * x), epsilon = 0.01)
  expect_null(exact$C_mixture)
})

test_that("an edited mixture record is a clear error", {
  fit <- mfsvr(dist ~ speed, data = cars, calibration_folds = 0)
  bad <- fit
  bad$C_mixture$weight[1] <- bad$C_mixture$weight[1] + 0.5
  expect_error(predict(bad, data.frame(speed = 10)), "C_mixture\\$weight must sum to 1")
  bad <- fit
  bad$C_mixture$C <- bad$C_mixture$C[-1]
  expect_error(predict(bad, data.frame(speed = 10)), "C_mixture\\$C has 4 elements")
})

test_that("one observation and duplicated inputs give finite intervals around the fit", {
  # (on the data as given: scaled, one observation has no units for an interval)
  one <- mfsvr(0.3, 1.2, scale = FALSE)
  band <- predict(one, c(0.3, 5), interval = "prediction")
  expect_true(all(is.finite(band)))
  expect_true(all(band[, "lwr"] < band[, "fit"] & band[, "fit"] < band[, "upr"]))
  set.seed(5)
  x <- rep(c(0.1, 0.5, 0.9), each = 8)
  y <- sin(3 * x) + rnorm(24, sd = 0.2)
  for (fit in list(mfsvr(x, y, calibration_folds = 0), svr(x, y, calibration_folds = 0))) {
    expect_length(fit$C_mixture$C, 5L)
    band <- predict(fit, c(0.1, 2), interval = "prediction", level = 0.99)
    expect_true(all(is.finite(band)))
    expect_true(all(band[, "lwr"] < band[, "fit"] & band[, "fit"] < band[, "upr"]))
  }
})
