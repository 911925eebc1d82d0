# predict(type = "distribution"): its quantiles against predict()'s
# intervals, its CDF at them against the level, its density against
# integrate() and against the convolution written out here, its draws
# against its quantiles, its moments against se.fit and sigma(), and the
# scores, the distributional vectors and parsnip's quantiles built on it.

levels_checked <- c(0.5, 0.8, 0.9, 0.95, 0.99)

# the fits whose distributions are checked: a C mixture with a calibration,
# a calibration alone, the model's own, the MAP fit, the relevance vector
# machines
distribution_fits <- function() {
  train <- cars[seq(1, 50, by = 2), ]
  list(mixture = mfsvr(dist ~ speed, data = train),
       own = mfsvr(dist ~ speed, data = train, C = 3, calibration_folds = 0),
       calibrated = mfsvr(dist ~ speed, data = train, C = 3),
       svr = svr(dist ~ speed, data = train, C = 3),
       rvm = rvm(dist ~ speed, data = train),
       srvm = srvm(dist ~ speed, data = train, calibration_folds = 0))
}

# The density integrated over the line, in pieces between some of the
# distribution's quantiles (F is smooth; the pieces help integrate() find
# the mass).
integrated_mass <- function(d, i, knots) {
  q <- quantile(d[i], knots)[1L, ]
  q <- sort(q)
  q <- q[c(TRUE, diff(q) > 1e-9 * max(1, abs(q)))]  # (knots equal up to rounding)
  breaks <- c(-Inf, q, Inf)
  sum(vapply(seq_len(length(breaks) - 1L), function(j) {
    integrate(function(t) density(d[rep(i, length(t))], t), breaks[j], breaks[j + 1L],
              rel.tol = 1e-9, subdivisions = 1000L)$value
  }, numeric(1)))
}

test_that("the distribution's quantiles are predict()'s intervals and its CDF their levels", {
  skip_on_cran()
  new <- data.frame(speed = c(4, 11, 18, 25, 40))
  for (name in names(fits <- distribution_fits())) {
    fit <- fits[[name]]
    d <- predict(fit, new, type = "distribution")
    expect_s3_class(d, "gpsvm_predictive")
    expect_length(d, 5L)
    for (level in levels_checked) {
      band <- predict(fit, new, interval = "prediction", level = level)
      q <- quantile(d, c((1 - level) / 2, (1 + level) / 2))
      expect_equal(unname(q), unname(band[, c("lwr", "upr")]), tolerance = 1e-8,
                   label = sprintf("%s at %g", name, level))
      expect_equal(unname(predictive_cdf(d, band[, "lwr"])), rep((1 - level) / 2, 5), tolerance = 1e-8)
      expect_equal(unname(predictive_cdf(d, band[, "upr"])), rep((1 + level) / 2, 5), tolerance = 1e-8)
    }
    # the density integrates to 1
    knots <- c(0.001, 0.01, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99, 0.999)
    for (i in c(1L, 3L, 5L)) {
      expect_equal(integrated_mass(d, i, knots), 1, tolerance = 1e-6, label = name)
    }
    # the CDF is the density's integral: F(b) - F(a) on a piece between knots
    p <- c(0.3, 0.32)
    a <- quantile(d[2], p[1])[1, 1]
    b <- quantile(d[2], p[2])[1, 1]
    expect_equal(integrate(function(t) density(d[rep(2L, length(t))], t), a, b,
                           rel.tol = 1e-10)$value,
                 unname(predictive_cdf(d[2], b) - predictive_cdf(d[2], a)), tolerance = 1e-7)
  }
})

test_that("the model's own distribution is the latent normal convolved with the tube noise", {
  fit <- mfsvr(dist ~ speed, data = cars, C = 3, calibration_folds = 0)
  new <- data.frame(speed = c(7, 30))
  d <- predict(fit, new, type = "distribution")
  p <- predict(fit, new, se.fit = TRUE)
  s <- fit$response_scaling
  # in model units: N(m, v) * C / (2 (eps C + 1)) exp(-C max(|u| - eps, 0))
  m <- (p$fit - s$center) / s$scale
  v <- (p$se.fit / s$scale)^2
  C <- fit$C
  eps <- fit$epsilon
  noise <- function(u) C / (2 * (eps * C + 1)) * exp(-C * pmax(abs(u) - eps, 0))
  # its CDF: the integral of each piece of the density
  k <- 1 / (2 * (eps * C + 1))
  noise_cdf <- function(u) {
    ifelse(u < -eps, k * exp(C * (u + eps)),
           ifelse(u <= eps, k + C * k * (u + eps), 1 - k * exp(-C * (u - eps))))
  }
  for (i in 1:2) {
    for (t_user in c(p$fit[i] - 30, p$fit[i], p$fit[i] + 12)) {
      t <- (t_user - s$center) / s$scale
      conv <- integrate(function(f) dnorm(f, m[i], sqrt(v[i])) * noise(t - f), -Inf, Inf,
                        rel.tol = 1e-12)$value
      expect_equal(density(d[i], t_user), conv / s$scale, tolerance = 1e-8)
      below <- integrate(function(f) dnorm(f, m[i], sqrt(v[i])) * noise_cdf(t - f), -Inf, Inf,
                         rel.tol = 1e-12)$value
      expect_equal(predictive_cdf(d[i], t_user), below, tolerance = 1e-7)
    }
  }
  # its mean is the prediction, its variance se.fit^2 + sigma()^2 (eq. 29)
  expect_equal(mean(d), unname(p$fit), tolerance = 1e-12)
  expect_equal(predictive_variance(d), unname(p$se.fit^2 + sigma(fit)^2), tolerance = 1e-10)
})

test_that("draws match the quantiles within Monte Carlo error, and the moments the draws", {
  skip_on_cran()
  fit <- mfsvr(dist ~ speed, data = cars)  # a mixture over C, calibrated
  d <- predict(fit, data.frame(speed = c(8, 21)), type = "distribution")
  set.seed(3)
  n <- test_size(20000, 5000)  # (the bounds below shrink with the sample)
  draws <- generate(d, n)
  expect_equal(dim(draws), c(2, n))
  probs <- c(0.01, 0.1, 0.5, 0.9, 0.99)
  q <- quantile(d, probs)
  for (i in 1:2) {
    share <- vapply(q[i, ], function(t) mean(draws[i, ] <= t), numeric(1))
    expect_true(all(abs(share - probs) < 4 * sqrt(probs * (1 - probs) / n)))
  }
  # the moments by numerical integration against the draws
  mu <- mean(d)
  v <- predictive_variance(d)
  expect_true(all(abs(rowMeans(draws) - mu) < 4 * sqrt(v / n)))
  expect_true(all(abs(apply(draws, 1L, var) / v - 1) < 0.05))
})

test_that("the scores are the log density, the interval score and the CRPS of the targets", {
  skip_on_cran()
  train <- cars[seq(1, 50, by = 2), ]
  test <- cars[seq(2, 50, by = 2), ]
  fit <- mfsvr(dist ~ speed, data = train)
  scores <- predictive_scores(fit, test)
  expect_named(scores, c("log_score", "crps", "interval_score"))
  expect_identical(nrow(scores), nrow(test))
  d <- predict(fit, test, type = "distribution")
  y <- test$dist
  expect_equal(scores$log_score, -log(density(d, y)), tolerance = 1e-12)
  band <- predict(fit, test, interval = "prediction", level = 0.9)
  by_hand <- band[, "upr"] - band[, "lwr"] + 2 / 0.1 * pmax(band[, "lwr"] - y, 0) +
    2 / 0.1 * pmax(y - band[, "upr"], 0)
  expect_equal(predictive_scores(fit, test, level = 0.9)$interval_score, unname(by_hand),
               tolerance = 1e-10)
  # CRPS = E|X - y| - E|X - X'| / 2 by Monte Carlo, for a few rows
  set.seed(4)
  rows <- c(1, 12, 25)
  draws <- test_size(40000, 4000)  # (the bound below is the sample's own)
  a <- generate(d[rows], draws)
  b <- generate(d[rows], draws)
  mc <- rowMeans(abs(a - y[rows])) - rowMeans(abs(a - b)) / 2
  se <- apply(abs(a - y[rows]) - abs(a - b) / 2, 1L, sd) / sqrt(draws)
  expect_true(all(abs(scores$crps[rows] - mc) < 4 * se))
  # a matrix fit takes its targets in y; a distribution takes them directly
  xm <- mfsvr(train$speed, train$dist, C = 3)
  expect_equal(predictive_scores(xm, test$speed, y = test$dist),
               predictive_scores(predict(xm, test$speed, type = "distribution"), y = test$dist))
  expect_error(predictive_scores(xm, test$speed), "'y' must give the held-out targets")
})

# The CRPS by integrate() of the distribution's own CDF: F^2 below the
# target, (1 - F)^2 above, in pieces between the target and the points
# where F or 1 - F is at one of `levels` (found by uniroot() on the CDF,
# from m within sd), on the scale of sd (t = m + sd u), where integrate()
# finds the mass at any scale.
crps_by_integrate <- function(d, y, m, sd, levels = c(1e-4, 0.01, 0.1, 0.3)) {
  F <- function(u) vapply(m + sd * u, function(s) predictive_cdf(d, s), numeric(1))
  kink <- function(p) uniroot(function(u) F(u) - p, c(-1, 1), extendInt = "upX", tol = 1e-12)$root
  at <- (y - m) / sd
  breaks <- c(-Inf, sort(unique(c(vapply(c(levels, 1 - levels), kink, numeric(1)), at))), Inf)
  sd * sum(vapply(seq_len(length(breaks) - 1L), function(j) {
    f <- if (breaks[j] >= at) function(u) (1 - F(u))^2 else function(u) F(u)^2
    integrate(f, breaks[j], breaks[j + 1L], rel.tol = 1e-10, subdivisions = 2000L,
              stop.on.error = FALSE)$value
  }, numeric(1)))
}

test_that("the CRPS stays finite and accurate far in the tails, with a tail below 1e-16", {
  skip_on_cran()
  train <- cars[seq(1, 50, by = 2), ]
  set.seed(3)
  fit <- mfsvr(dist ~ speed, data = train, C = 3)
  expect_false(is.null(fit$interval_calibration))
  # (a calibration tail below the doubles' resolution of 1 - p)
  edited <- fit
  edited$interval_calibration$tail[which.min(edited$interval_calibration$tail)] <- 1e-20
  rows <- cars[c(2, 30), ]
  for (f in list(fit, edited)) {
    d <- predict(f, rows, type = "distribution")
    m <- predict(f, rows)
    sd <- sqrt(predict(f, rows, se.fit = TRUE)$se.fit^2 + sigma(f)^2)
    y <- m + c(30, -30) * sd
    scores <- predictive_scores(d, y = y)
    expect_true(all(is.finite(scores$crps)))
    reference <- vapply(1:2, function(i) crps_by_integrate(d[i], y[i], m[i], sd[i]), numeric(1))
    expect_equal(scores$crps, reference, tolerance = 1e-6)
  }
})

test_that("the core's Student t is R's pt() and dt(), far in the tails too", {
  z <- c(-1e4, -300, -40, -5, -1, -1e-8, 0, 1e-8, 0.5, 3, 60)
  for (df in c(1.5, 3, 12.5, 400, 1e5)) {
    g <- list(kind = "t", mean = matrix(0, length(z)), var = matrix(0.25, length(z)), weight = 1,
              noise = 0.75, df = df)
    at <- gpsvm:::cpp_predictive_at(g, NULL, z)
    expect_equal(at$lower, pt(z, df), tolerance = 1e-12, label = paste("df", df))
    expect_equal(at$upper, pt(-z, df), tolerance = 1e-12)
    expect_equal(at$log_density, dt(z, df, log = TRUE), tolerance = 1e-12)
  }
})

# A distribution made by hand (model units, no response scaling): the
# model's own g with a calibration's scale s.
hand_distribution <- function(g, s) {
  structure(list(g = g, calibration = s, center = 0, scale = 1, names = NULL),
            class = "gpsvm_predictive")
}

# The cases of a tube, a tube mixture and a Student t on df degrees of
# freedom, at scale s.
hand_cases <- function(s, df = 6.5) {
  list(tube = gpsvm:::.epsins_distribution(s * c(0.3, -2), s^2 * c(0.5, 2), C = 4 / s,
                                           epsilon = 0.1 * s),
       mixture = gpsvm:::.epsins_distribution(s * rbind(c(1, 1.2, 0.8)),
                                              s^2 * rbind(c(0.2, 0.3, 1)),
                                              C = c(1, 5, 20) / s, epsilon = c(0, 0.2, 0.5) * s,
                                              weight = c(0.2, 0.5, 0.3)),
       t = list(kind = "t", mean = matrix(s * 2), var = matrix(s^2 * 0.3), weight = 1,
                noise = s^2 * 0.7, df = df))
}

test_that("the calibrated CDF and density are the own ones mapped on the normal-score scale", {
  # plain R: F(t) = Phi(s Phi^-1(G(t))), f(t) = g(t) s phi(s z) / phi(z)
  for (name in names(cases <- hand_cases(1))) {
    for (s in c(0.3, 0.8)) {
      d <- hand_distribution(cases[[name]], s)
      own <- hand_distribution(cases[[name]], 1)
      for (i in seq_along(d)) {
        m <- mean(own[i])
        sd <- sqrt(predictive_variance(own[i]))
        t <- m + sd * c(-9, -2, -0.3, 0, 0.2, 1.5, 7)
        # (G's normal score from its nearer tail)
        tails <- gpsvm:::.d_tails(own[rep(i, length(t))], t)
        z <- ifelse(tails$lower <= tails$upper, qnorm(tails$lower), -qnorm(tails$upper))
        label <- sprintf("%s, s = %g, row %d", name, s, i)
        expect_equal(unname(predictive_cdf(d[rep(i, length(t))], t)), pnorm(s * z),
                     tolerance = 1e-10, label = label)
        expect_equal(unname(density(d[rep(i, length(t))], t, log = TRUE)),
                     unname(density(own[rep(i, length(t))], t, log = TRUE)) + log(s) +
                       dnorm(s * z, log = TRUE) - dnorm(z, log = TRUE),
                     tolerance = 1e-10, label = label)
        # and its quantiles are the own distribution's at the mapped levels
        p <- c(0.001, 0.2, 0.5, 0.9)
        expect_equal(quantile(d[i], p)[1L, ], quantile(own[i], pnorm(qnorm(p) / s))[1L, ],
                     tolerance = 1e-10, ignore_attr = TRUE, label = label)
      }
    }
  }
  # an edited scale is a clear error wherever the distribution is read
  for (bad in list(1.5, 0, NULL, NA_real_, c(0.5, 0.6))) {
    edited <- hand_distribution(cases$t, 0.5)
    edited["calibration"] <- list(bad)
    expect_error(mean(edited), "calibration must be a scale in \\(0, 1\\]")
    expect_error(quantile(edited, 0.3), "calibration must be a scale")
    expect_error(predictive_cdf(edited, 1), "calibration must be a scale")
  }
  expect_error(gpsvm:::cpp_predictive_at(cases$t, 1.5, 0), "scale must lie in \\(0, 1\\]")
  # a t's tails raised to the power s^2: on 6.5 df at s = 0.5 (index 1.6)
  # no variance, at s = 0.35 (index 0.8) no mean
  expect_identical(predictive_variance(hand_distribution(cases$t, 0.5)), Inf)
  expect_error(mean(hand_distribution(cases$t, 0.35)), "no mean")
})

test_that("the calibrated moments and CRPS are integrate()'s, at tiny and huge scales", {
  skip_on_cran()
  levels <- c(1e-6, 0.002, 0.015, 0.1, 0.3)
  # (integrate()'s breaks, G's quantiles, are found to 1e-14 absolute: at
  # scales below 1e-4 they move the reference more than the tolerance)
  for (s in c(1e-4, 1, 1e6)) {
    cases <- hand_cases(s, df = 40)
    for (name in names(cases)) {
      d <- hand_distribution(cases[[name]], 0.4)
      for (i in seq_along(d)) {
        di <- d[i]
        q <- sort(quantile(di, c(levels, 1 - levels))[1L, ])
        q <- q[is.finite(q)]
        q <- q[c(TRUE, diff(q) > 1e-9 * max(abs(q)))]
        breaks <- c(-Inf, q, Inf)
        piecewise <- function(h) {
          sum(vapply(seq_len(length(breaks) - 1L), function(j) {
            integrate(h, breaks[j], breaks[j + 1L], rel.tol = 1e-11, subdivisions = 2000L)$value
          }, numeric(1)))
        }
        # (on the scale's units: integrate() misses mass at 1e-7)
        f <- function(u) s * density(di[rep(1L, length(u))], s * u)
        breaks <- breaks / s
        m0 <- piecewise(f)
        m1 <- s * piecewise(function(u) u * f(u)) / m0
        m2 <- s^2 * piecewise(function(u) (u - m1 / s)^2 * f(u)) / m0
        label <- sprintf("%s, row %d, scale %g", name, i, s)
        expect_equal(m0, 1, tolerance = 1e-7, label = label)
        expect_equal(mean(di), m1, tolerance = 1e-8, scale = s, label = label)
        expect_equal(predictive_variance(di), m2, tolerance = 1e-7, label = label)
        # the CRPS of a target near, and of one 40 standard deviations out
        for (y in c(m1 + 0.3 * sqrt(m2), m1 - 40 * sqrt(m2))) {
          reference <- crps_by_integrate(di, y, m1, sqrt(m2), levels)
          expect_equal(predictive_scores(di, y = y)$crps, reference, tolerance = 1e-7,
                       label = label)
        }
      }
    }
  }
})

test_that("a symmetric calibrated distribution's mean is its centre at any scale", {
  for (s in c(1e-12, 1e-7, 1, 1e9)) {
    g <- gpsvm:::.epsins_distribution(s * 0.3, s^2 * 0.5, C = 4 / s, epsilon = 0.1 * s)
    expect_equal(mean(hand_distribution(g, 0.3)), 0.3 * s, tolerance = 1e-10, label = s)
    g <- list(kind = "t", mean = matrix(s * 2), var = matrix(s^2 * 0.3), weight = 1,
              noise = s^2 * 0.7, df = 4)
    # (df s^2 = 2.56: a mean, a variance)
    expect_equal(mean(hand_distribution(g, 0.8)), 2 * s, tolerance = 1e-10, label = s)
  }
})

test_that("bad requests for a distribution are clear errors", {
  fit <- mfsvr(dist ~ speed, data = cars, C = 3, calibration_folds = 0)
  expect_error(predict(fit, cars[1:2, ], type = "distribution", interval = "prediction"),
               "do not apply")
  expect_error(predict(fit, cars[1:2, ], type = "distribution", deriv = 1), "do not apply")
  d <- predict(fit, data.frame(speed = c(1, NA, 3)), type = "distribution")
  expect_length(d, 2L)  # the row with a missing value is left out
  expect_error(predictive_cdf(d, c(1, 2, 3)), "'q' must be finite numbers, one per prediction")
  expect_error(predictive_cdf(d, NA), "'q'")
  expect_error(quantile(d, 1.5), "'probs'")
  expect_error(predictive_cdf(1, 2), "'d' must be a predictive distribution")
  expect_equal(quantile(d, c(0, 1))[1, ], c(`0%` = -Inf, `100%` = Inf))
  expect_output(print(d), "Predictive distributions of 2 new target")
})

test_that("as_distribution() gives distributional vectors of the same distributions", {
  skip_if_not_installed("distributional")
  fit <- mfsvr(dist ~ speed, data = cars)
  d <- predict(fit, data.frame(speed = c(8, 21)), type = "distribution")
  v <- as_distribution(d)
  expect_s3_class(v, "distribution")
  expect_length(v, 2L)
  expect_equal(unlist(quantile(v, 0.9)), unname(quantile(d, 0.9)[, 1]), tolerance = 1e-12)
  expect_equal(unlist(distributional::cdf(v, 40)), predictive_cdf(d, 40), tolerance = 1e-12)
  expect_equal(unlist(density(v, 40)), density(d, 40), tolerance = 1e-12)
  expect_equal(mean(v), mean(d), tolerance = 1e-12)
  expect_equal(distributional::variance(v), predictive_variance(d), tolerance = 1e-10)
})

test_that("parsnip's quantile predictions are the distribution's quantiles", {
  skip_if_not_installed("parsnip")
  skip_if_not(is.character(gpsvm:::.parsnip_quantile_type()), "parsnip without quantile predictions")
  spec <- parsnip::set_mode(parsnip::set_engine(parsnip::svm_rbf(cost = 3), "gpsvm"), "regression")
  pfit <- parsnip::fit(spec, dist ~ speed, data = cars)
  new <- data.frame(speed = c(8, NA, 21))
  out <- predict(pfit, new, type = "quantile", quantile_levels = c(0.1, 0.5, 0.9))
  expect_named(out, ".pred_quantile")
  got <- as.matrix(out$.pred_quantile)
  d <- predict(parsnip::extract_fit_engine(pfit), new, type = "distribution")
  expect_equal(unname(got[c(1, 3), ]), unname(quantile(d, c(0.1, 0.5, 0.9))), tolerance = 1e-12)
  expect_true(all(is.na(got[2, ])))
})

test_that("svr_noise_variance() of a fit is sigma()^2, eq. (29) in the response's units", {
  eq29 <- function(C, eps) 2 / C^2 + eps^2 * (eps * C + 3) / (3 * (eps * C + 1))
  for (fitter in list(mfsvr, svr)) {
    for (scale in c(TRUE, FALSE)) {
      fit <- fitter(dist ~ speed, data = cars, C = 3, epsilon = 0.2, scale = scale)
      spread <- if (scale) sd(cars$dist) else 1
      expect_equal(svr_noise_variance(fit), eq29(3, 0.2) * spread^2, tolerance = 1e-12)
      expect_equal(svr_noise_variance(fit), sigma(fit)^2, tolerance = 1e-12)
    }
  }
  expect_equal(svr_noise_variance(2.1, 0.4), eq29(2.1, 0.4), tolerance = 1e-12)
  expect_equal(svr_noise_variance(C = 10, epsilon = 0), 0.02, tolerance = 1e-12)
  fit <- mfsvr(dist ~ speed, data = cars, C = 3)
  expect_error(svr_noise_variance(fit, 0.1), "'epsilon' goes with a number C")
  expect_error(svr_noise_variance(rvm(dist ~ speed, data = cars)), "sigma\\(fit\\)\\^2 is its noise")
  expect_error(svr_noise_variance(2), "'epsilon' is missing")
  expect_error(svr_noise_variance("a", 1), "'C'")
})
