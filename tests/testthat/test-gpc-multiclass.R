# The joint K-class classifier (multiclass.hpp, R/gpc-multiclass.R) against
# independent references: integrate() for the multinomial probit's
# integrals, central differences for its derivatives and for the variational
# bound's gradient, a plain-R implementation of Girolami and Rogers'
# fixed point, and the binary probit's mode for two classes.

site <- function(m, t, v) gpsvm:::cpp_argmax_site(m, t, v)

# log P(class t) = log int phi(u) prod Phi(u + d_j) du, integrated around
# the integrand's mode in logs (so that tiny probabilities keep their digits)
ref_log_z <- function(m, t, s2) {
  d <- (m[t] - m[-t]) / sqrt(s2)
  h <- function(u) stats::dnorm(u, log = TRUE) +
    vapply(u, function(w) sum(stats::pnorm(w + d, log.p = TRUE)), numeric(1))
  mode <- stats::optimize(h, c(-60, 60), maximum = TRUE)$maximum
  top <- h(mode)
  log(stats::integrate(function(u) exp(h(u) - top), mode - 40, mode + 40,
                       rel.tol = 1e-12)$value) + top
}

test_that("the K-class probit's log Z, gradient and noise derivative match quadrature and differences", {
  set.seed(1)
  for (K in c(2L, 3L, 7L, 26L)) {
    m <- stats::rnorm(K, sd = 3)
    for (t in c(1L, K)) {
      v <- 0.3
      a <- site(m, t, v)
      expect_equal(a$log_z, ref_log_z(m, t, v), tolerance = 1e-9)
      h <- 1e-5
      fd <- vapply(seq_len(K), function(j) {
        e <- replace(numeric(K), j, h)
        (site(m + e, t, v)$log_z - site(m - e, t, v)$log_z) / (2 * h)
      }, numeric(1))
      expect_equal(a$gradient, fd, tolerance = 1e-6)
      expect_equal(a$dv, (site(m, t, v + h)$log_z - site(m, t, v - h)$log_z) / (2 * h),
                   tolerance = 1e-6)
    }
  }
  # far tail: two classes are the binary probit Phi(d / sqrt(2 v))
  expect_equal(site(c(0, 30), 1, 0.1)$log_z, stats::pnorm(-30 / sqrt(0.2), log.p = TRUE),
               tolerance = 1e-12)
  expect_equal(site(c(0, 1e-3), 2, 1)$log_z, stats::pnorm(1e-3 / sqrt(2), log.p = TRUE),
               tolerance = 1e-12)
})

test_that("class probabilities sum to one and match quadrature, far tails included", {
  set.seed(2)
  m <- matrix(stats::rnorm(5 * 4, sd = 4), 5, 4)
  m[5, ] <- c(0, 40, -3, 1)
  s2 <- c(0.1, 0.5, 1, 2, 0.05)
  v <- 0.2
  p <- gpsvm:::cpp_multiclass_probabilities(m, s2, v)
  logp <- gpsvm:::cpp_multiclass_probabilities(m, s2, v, TRUE)
  expect_equal(rowSums(p), rep(1, 5), tolerance = 1e-12)
  for (i in 1:5) for (k in 1:4) {
    expect_equal(logp[i, k], ref_log_z(m[i, ], k, s2[i] + v), tolerance = 1e-8)
  }
  expect_true(all(is.finite(logp)))
})

# Girolami and Rogers' updates in plain R on the dense prior: y~ the means
# of the truncated Gaussians (their eqs. for the auxiliary variables), M =
# K (K + v I)^-1 y~, to convergence; and the bound at the fixed point.
ref_joint_fit <- function(K, y, classes, v) {
  n <- nrow(K)
  M <- matrix(0, n, classes)
  S <- solve(K + v * diag(n))
  for (iter in 1:20000) {
    g <- t(vapply(seq_len(n), function(i) site(M[i, ], y[i], v)$gradient, numeric(classes)))
    target <- M + v * g
    M_new <- K %*% S %*% target
    if (max(abs(M_new - M)) < 1e-12) break
    M <- M_new
  }
  W <- S %*% (M + v * t(vapply(seq_len(n), function(i) site(M[i, ], y[i], v)$gradient,
                                numeric(classes))))
  log_z <- sum(vapply(seq_len(n), function(i) site(M[i, ], y[i], v)$log_z, numeric(1)))
  bound <- log_z - 0.5 * sum(W * M) -
    classes / 2 * as.numeric(determinant(diag(n) + K / v)$modulus)
  list(mean = M, weights = W, variance = diag(K - K %*% S %*% K), bound = bound)
}

joint_core <- function(x, y, K, sigma, v, inducing = NULL, gradient = FALSE, tol = 1e-10,
                       loo_gradient = FALSE) {
  k <- rbf_kernel(sigma)
  k$constant <- 1
  gpsvm:::cpp_gpc_multiclass_fit(list(kernel = k, noise = v, inducing = inducing), x,
                                 as.integer(y), K, list(tol = tol, max_iter = 5000L), NULL,
                                 gradient, loo_gradient)
}

test_that("the joint fit reproduces a plain-R implementation of the variational fixed point", {
  set.seed(3)
  x <- matrix(stats::rnorm(40), 20, 2)
  y <- 1L + (x[, 1] > 0) + (x[, 2] > 0.5)
  k <- rbf_kernel(1.2)
  K <- kernel_matrix(k, x) + 1
  ref <- ref_joint_fit(K, y, 3L, 0.2)
  fit <- joint_core(x, y, 3L, 1.2, 0.2)
  expect_true(fit$convergence$converged)
  expect_equal(fit$mean, ref$mean, tolerance = 1e-7)
  expect_equal(fit$weights, ref$weights, tolerance = 1e-7)
  expect_equal(fit$variance, ref$variance, tolerance = 1e-9)
  expect_equal(fit$log_evidence, ref$bound, tolerance = 1e-8)
  # one case, where the fixed point is a two-variable problem
  one <- joint_core(x[1, , drop = FALSE], 2L, 3L, 1, 0.5)
  ref1 <- ref_joint_fit(matrix(2, 1, 1), 2L, 3L, 0.5)
  expect_equal(one$mean, ref1$mean, tolerance = 1e-8)
})

test_that("the bound's gradient in log width and log noise matches central differences", {
  set.seed(4)
  x <- matrix(stats::rnorm(60), 30, 2)
  y <- 1L + (x[, 1] > 0) + (x[, 2] > 0)
  z <- x[seq(1, 30, 3), ]
  for (inducing in list(NULL, z)) {
    fit <- joint_core(x, y, 3L, 1, 0.1, inducing, gradient = TRUE)
    ev <- function(s, v) joint_core(x, y, 3L, s, v, inducing)$log_evidence
    h <- 1e-4
    expect_equal(fit$gradient[1], (ev(exp(h), 0.1) - ev(exp(-h), 0.1)) / (2 * h),
                 tolerance = 1e-5)
    expect_equal(fit$gradient[2], (ev(1, 0.1 * exp(h)) - ev(1, 0.1 * exp(-h))) / (2 * h),
                 tolerance = 1e-5)
  }
})

test_that("the search's criterion is the cavities' log probability of the labels; its gradient matches differences", {
  # plain R at the plain-R fixed point: with R = (K + v I)^-1 and the
  # auxiliary targets y~ = M + v W, GP regression's leave-one-out (Rasmussen
  # and Williams, eq. 5.12) has means y~_i - [R y~]_i / R_ii and variance
  # 1 / R_ii - v; the criterion is sum_i log P(t_i) under them (quadrature)
  set.seed(8)
  x <- matrix(stats::rnorm(40), 20, 2)
  y <- 1L + (x[, 1] > 0) + (x[, 2] > 0.5)
  v <- 0.2
  K <- kernel_matrix(rbf_kernel(1.2), x) + 1
  ref <- ref_joint_fit(K, y, 3L, v)
  R <- solve(K + v * diag(20))
  target <- ref$mean + v * ref$weights
  mu <- target - (R %*% target) / diag(R)
  r <- 1 / diag(R) - v
  expected <- sum(vapply(1:20, function(i) ref_log_z(mu[i, ], y[i], r[i] + v), numeric(1)))
  fit <- joint_core(x, y, 3L, 1.2, v, loo_gradient = TRUE)
  expect_equal(fit$loo, expected, tolerance = 1e-8)
  cavities <- gpsvm:::cpp_multiclass_loo(fit$mean, fit$weights, fit$variance, v)
  expect_equal(cavities$mean, mu, tolerance = 1e-7, ignore_attr = TRUE)
  expect_equal(cavities$variance, r, tolerance = 1e-8)
  h <- 1e-4
  loo <- function(s, nv) joint_core(x, y, 3L, s, nv)$loo
  expect_equal(fit$loo_gradient[1], (loo(1.2 * exp(h), v) - loo(1.2 * exp(-h), v)) / (2 * h),
               tolerance = 1e-6)
  expect_equal(fit$loo_gradient[2], (loo(1.2, v * exp(h)) - loo(1.2, v * exp(-h))) / (2 * h),
               tolerance = 1e-6)
  # a far smaller noise, where most cases are confident
  small <- joint_core(x, y, 3L, 0.7, 0.01, loo_gradient = TRUE)
  expect_equal(small$loo_gradient[2],
               (loo(0.7, 0.01 * exp(h)) - loo(0.7, 0.01 * exp(-h))) / (2 * h), tolerance = 1e-6)
})

test_that("with two classes the joint mode is the binary probit's mode", {
  # p(t | f) depends on f2 - f1 alone, so at the mode f1 = -f2 = -d/2 and d
  # maximises log Phi(y d / sqrt(2 v)) - d' K^-1 d / 4: the binary probit
  # with kernel 2K and noise 2v, by Newton's method in plain R
  set.seed(5)
  x <- matrix(stats::rnorm(30), 15, 2)
  y <- ifelse(x[, 1] + stats::rnorm(15, sd = 0.5) > 0, 1, -1)
  v <- 0.3
  K <- kernel_matrix(rbf_kernel(1), x) + 1
  K2 <- 2 * K
  f <- numeric(15)
  for (iter in 1:100) {
    z <- y * f / sqrt(2 * v)
    r <- exp(stats::dnorm(z, log = TRUE) - stats::pnorm(z, log.p = TRUE))
    g <- y * r / sqrt(2 * v)
    w <- r * (z + r) / (2 * v)
    f_new <- as.vector(solve(diag(15) + K2 %*% diag(w), K2 %*% (w * f + g)))
    if (max(abs(f_new - f)) < 1e-13) break
    f <- f_new
  }
  fit <- joint_core(x, ifelse(y > 0, 2L, 1L), 2L, 1, v)
  expect_equal(fit$mean[, 2] - fit$mean[, 1], f, tolerance = 1e-7)
  expect_equal(fit$mean[, 1], -fit$mean[, 2], tolerance = 1e-9)
})

test_that("gpc(multiclass = 'joint') predicts the argmax of its probabilities and has an evidence", {
  fit <- gpc(Species ~ ., iris, multiclass = "joint", kernel = rbf_kernel(2), noise = 0.05)
  expect_s3_class(fit, "gpsvm_gpc_joint")
  p <- predict(fit, iris, type = "prob")
  expect_equal(rowSums(p), rep(1, 150), tolerance = 1e-12, ignore_attr = TRUE)
  expect_identical(as.character(predict(fit, iris)), colnames(p)[max.col(p, "first")])
  expect_gt(mean(predict(fit, iris) == iris$Species), 0.9)
  ll <- logLik(fit)
  expect_equal(c(ll), fit$log_evidence)
  expect_equal(attr(ll, "df"), 0)
  expect_equal(AIC(fit), -2 * c(ll))
  if (requireNamespace("broom", quietly = TRUE)) expect_equal(broom::glance(fit)$logLik, c(ll))
  other <- update(fit, noise = 0.2)
  tab <- anova(fit, other)
  expect_equal(tab[["log BF"]][2], c(logLik(other)) - c(ll))
  # new data: the probabilities at the training rows agree with predict()'s
  expect_equal(predict(fit, iris[1:5, ], type = "prob"), p[1:5, ], ignore_attr = TRUE)
  expect_output(print(fit), "one joint model")
})

test_that("one-vs-rest has no joint likelihood: logLik() says so, glance() gives NA", {
  fit <- gpc(Species ~ ., iris, kernel = rbf_kernel(2), noise = 0.05)
  expect_error(logLik(fit), "multiclass = \"joint\"")
  g <- glance(fit)
  expect_true(all(is.na(unlist(g[c("logLik", "AIC", "BIC")]))))
  expect_identical(g$n.classes, 3L)
})

test_that("joint leave-one-out: cavities close to exact refits on a small problem", {
  skip_on_cran()
  set.seed(6)
  i <- c(1:10, 51:60, 101:110)
  fit <- gpc(Species ~ ., iris[i, ], multiclass = "joint", kernel = rbf_kernel(1.5),
             noise = 0.1)
  approx <- loo_error(fit)
  exact <- loo_error(fit, "exact")
  expect_equal(approx$estimator, "variational cavities")
  # refits without case j by the plain-R fixed point: means K[j, -j] W
  K <- kernel_matrix(rbf_kernel(1.5), fit$x) + 1
  y <- as.integer(fit$classes)
  for (j in c(1, 15, 30)) {
    ref <- ref_joint_fit(K[-j, -j], y[-j], 3L, 0.1)
    # (the refits stop at the fit's tol = 1e-6 posterior sds)
    expect_equal(unname(exact$decision[j, ]), as.vector(K[j, -j] %*% ref$weights),
                 tolerance = 1e-5)
  }
  # the cavities hold the other cases' auxiliary targets fixed (linear
  # response): the same cases misclassified, the margins not the same
  expect_equal(sign(approx$margins), sign(exact$margins))
})

test_that("one-vs-rest predicts the argmax of its probabilities (the issue's fgl split)", {
  skip_on_cran()
  skip_if_not_installed("MASS")
  set.seed(1001)
  i <- sample(214, 143)
  g <- gpc(type ~ ., MASS::fgl[i, ])
  te <- MASS::fgl[-i, ]
  p <- predict(g, te, type = "prob")
  expect_identical(as.character(predict(g, te)), colnames(p)[max.col(p, "first")])
})

test_that("the joint model's searched fit chooses width and noise and records its plan", {
  skip_on_cran()
  fit <- gpc(Species ~ ., iris, multiclass = "joint")
  expect_true(fit$optimization$convergence$converged)
  expect_setequal(names(fit$optimization$estimate), c("sigma", "noise"))
  expect_gte(fit$noise, 0.01 * 2 * (1 - 1e-8))
  plan <- gpsvm_plan(fit)
  expect_identical(plan$step, c("multiclass", "kernel", "hyperparameters", "prior"))
  expect_identical(plan$by[1], "the call")
  expect_match(plan$by[2], "its width by the search")
  expect_match(plan$choice[3], "sigma and noise by maximising the approximate leave-one-out log predictive probability")
  p <- predict(fit, iris, type = "prob")
  expect_identical(as.character(predict(fit, iris)), colnames(p)[max.col(p, "first")])
})

test_that("the joint search stops at an optimum of its criterion", {
  skip_on_cran()
  fit <- gpc(Species ~ ., iris, multiclass = "joint")
  # at the optimum, by central differences of the criterion refitted from
  # scratch: flat in log sigma (within the search's 1e-3 per observation),
  # and falling in log noise where the noise sits at its lower bound
  k <- fit$kernel
  crit <- function(s, v) {
    k$sigma <- s
    gpsvm:::cpp_gpc_multiclass_fit(list(kernel = k, noise = v, inducing = NULL), fit$x,
                                   as.integer(fit$classes), 3L,
                                   list(tol = 1e-10, max_iter = 5000L), NULL)$loo
  }
  expect_equal(crit(k$sigma, fit$noise), fit$optimization$loo_log_predictive, tolerance = 1e-6)
  h <- 1e-3
  expect_lt(abs(crit(k$sigma * exp(h), fit$noise) - crit(k$sigma * exp(-h), fit$noise)) / (2 * h),
            1e-3 * 150)
  if (fit$noise < 0.02 * 1.001) {
    expect_lt(crit(k$sigma, fit$noise * exp(h)) - crit(k$sigma, fit$noise * exp(-h)), 0)
  }
  # print() says where an estimate sits at an end of its range (no warning:
  # separable classes legitimately ask for the least noise), and only there
  at_lower <- fit$noise <= fit$optimization$lower[["noise"]] * (1 + 1e-8)
  shown <- capture.output(print(fit))
  expect_identical(any(grepl("noise at the lower end of its range", shown, fixed = TRUE)), at_lower)
  inside <- gpc(Species ~ ., iris, multiclass = "joint", noise = 0.5)
  expect_false(any(grepl("end of its range", capture.output(print(inside)), fixed = TRUE)))
})

test_that("beyond joint_search_max_n the joint search runs on evenly spaced rows, then one full fit", {
  skip_on_cran()
  op <- options(gpsvm.size_policy = list(joint_search_max_n = 60))
  on.exit(options(op), add = TRUE)
  expect_message(fit <- gpc(Species ~ ., iris, multiclass = "joint"),
                 "searched on 60 evenly spaced rows")
  expect_equal(fit$optimization$search_rows, 60)
  plan <- gpsvm_plan(fit)
  expect_identical(plan$size_rule[3], "joint_search_max_n")
  expect_false(plan$exact[3])
  # the final fit, warm-started from the search's means carried to every
  # row, is the fit at the values found started from zero
  given <- gpc(Species ~ ., iris, multiclass = "joint", kernel = rbf_kernel(fit$kernel$sigma),
               noise = fit$noise, optimize = FALSE)
  expect_equal(fitted(fit), fitted(given), tolerance = 1e-4)
  p <- predict(fit, iris, type = "prob")
  expect_identical(as.character(predict(fit, iris)), colnames(p)[max.col(p, "first")])
})

test_that("the joint search on inducing inputs the call gives (central differences) converges", {
  skip_on_cran()
  fit <- gpc(Species ~ ., iris, multiclass = "joint", inducing = 30)
  expect_true(fit$optimization$convergence$converged)
  expect_equal(nrow(fit$inducing), 30)
  p <- predict(fit, iris, type = "prob")
  expect_identical(as.character(predict(fit, iris)), colnames(p)[max.col(p, "first")])
  expect_gt(mean(predict(fit, iris) == iris$Species), 0.9)
})

test_that("the joint model refuses what it does not have", {
  expect_error(gpc(Species ~ ., iris, multiclass = "joint", kappa = 0.1), "kappa")
  expect_error(gpc(Species ~ ., iris, multiclass = "joint", noise = 0, optimize = FALSE),
               "noise")
  expect_error(gpc(Species ~ ., iris, multiclass = "both"), "multiclass")
})

test_that("by default the classes are fitted against the rest up to ovr_max_nk / 2, jointly from it", {
  small <- gpc(Species ~ ., iris, kernel = rbf_kernel(2), noise = 0.05)
  expect_null(small$multiclass)
  plan <- gpsvm_plan(small)
  row <- plan[plan$step == "multiclass", ]
  expect_identical(row$size_rule, "ovr_max_nk")
  expect_true(row$exact)
  expect_match(row$by, "n x K = 150 x 3 <= 5000", fixed = TRUE)
  # from the rule the joint model alone
  op <- options(gpsvm.size_policy = list(ovr_max_nk = 450))
  on.exit(options(op), add = TRUE)
  expect_message(big <- gpc(Species ~ ., iris, kernel = rbf_kernel(2), noise = 0.05),
                 "multiclass: one joint model of the 3 classes")
  expect_s3_class(big, "gpsvm_gpc_joint")
  row <- gpsvm_plan(big)[gpsvm_plan(big)$step == "multiclass", ]
  expect_false(row$exact)
  expect_match(row$by, "150 x 3 >= 450", fixed = TRUE)
  asked <- gpc(Species ~ ., iris, kernel = rbf_kernel(2), noise = 0.05, multiclass = "joint")
  expect_equal(predict(big, iris, type = "prob"), predict(asked, iris, type = "prob"))
  row <- gpsvm_plan(asked)[gpsvm_plan(asked)$step == "multiclass", ]
  expect_identical(c(row$by, row$size_rule), c("the call", NA))
  expect_true(row$exact)
  # the joint model has no flip noise: a kappa keeps one-vs-rest, and the plan says why
  flip <- gpc(Species ~ ., iris, kernel = rbf_kernel(2), noise = 0.05, kappa = 0.01,
              optimize = FALSE)
  expect_null(flip$multiclass)
  row <- gpsvm_plan(flip)[gpsvm_plan(flip)$step == "multiclass", ]
  expect_match(row$choice, "one model per class against the rest (3 models)", fixed = TRUE)
  expect_match(row$by, "kappa = 0", fixed = TRUE)
  expect_output(print(big), "one joint model")
})

test_that("between half ovr_max_nk and it the two models' probabilities are pooled", {
  args <- list(Species ~ ., iris, kernel = rbf_kernel(2), noise = 0.05)
  ovr <- do.call(gpc, c(args, multiclass = "ovr"))
  joint <- do.call(gpc, c(args, multiclass = "joint"))
  new <- iris[c(1, 51, 71, 84, 120, 150), ]
  p_ovr <- predict(ovr, new, type = "prob")
  p_joint <- predict(joint, new, type = "prob")
  op <- options(gpsvm.size_policy = list(ovr_max_nk = 600))
  on.exit(options(op), add = TRUE)
  expect_message(pooled <- do.call(gpc, args), "pooled with a joint model's \\(weight 0.500\\)")
  # 2 n K / rule - 1 = 900 / 600 - 1 on the joint model
  expect_identical(pooled$joint_pool$weight, 0.5)
  p <- predict(pooled, new, type = "prob")
  expect_equal(p, 0.5 * p_ovr + 0.5 * p_joint, tolerance = 1e-10)
  expect_equal(unname(rowSums(p)), rep(1, 6), tolerance = 1e-12)
  expect_identical(as.character(predict(pooled, new)), colnames(p)[max.col(p, "first")])
  expect_equal(fitted(pooled, type = "prob"), 0.5 * fitted(ovr, type = "prob") +
                 0.5 * fitted(joint, type = "prob"), tolerance = 1e-10)
  # the activations are one-vs-rest's
  expect_equal(predict(pooled, new, type = "link"), predict(ovr, new, type = "link"))
  row <- gpsvm_plan(pooled)[gpsvm_plan(pooled)$step == "multiclass", ]
  expect_false(row$exact)
  expect_match(row$by, "150 x 3 between 300 and 600", fixed = TRUE)
  expect_output(print(pooled), "pooled with a joint model")
  expect_output(print(pooled), "pooled with one joint model (weight 0.500): sigma = 2, noise variance = 0.05",
                fixed = TRUE)
  expect_output(print(summary(pooled)), "pooled")
  expect_match(loo_error(pooled)$model, "without the joint model")
  expect_error(logLik(pooled), "one-vs-rest")
  expect_error(gpsvm_settings(pooled), "pools one-vs-rest models with a joint model")
  expect_identical(update(pooled)$joint_pool$weight, 0.5)
  # just past half the rule the pool is one-vs-rest to within its weight
  options(gpsvm.size_policy = list(ovr_max_nk = 898))
  near <- do.call(gpc, c(args, list(optimize = FALSE)))
  w <- 900 / 898 - 1
  expect_equal(near$joint_pool$weight, w)
  expect_lte(max(abs(predict(near, new, type = "prob") - p_ovr)),
             w * max(abs(p_joint - p_ovr)) + 1e-12)
  # a hand-edited pool is caught
  bad <- unclass(pooled)
  bad$joint_pool$weight <- 1.5
  class(bad) <- class(pooled)
  expect_error(predict(bad, new), "fit\\$joint_pool\\$weight must be one number strictly between 0 and 1")
  bad$joint_pool <- list(fit = ovr, weight = 0.5)
  expect_error(predict(bad, new), "joint_pool\\$fit must be a joint gpc\\(\\) model")
})

test_that("a one-vs-rest plan gives the range of the widths its class models chose", {
  fit <- gpc(Species ~ ., iris, multiclass = "ovr")
  sigma <- vapply(fit$models, function(m) m$kernel$sigma, numeric(1))
  expect_gt(diff(range(sigma)), 0)
  row <- gpsvm_plan(fit)[gpsvm_plan(fit)$step == "kernel", ]
  expect_identical(row$choice, sprintf("Gaussian (sigma per class model, %s to %s)",
                                       format(min(sigma), digits = 4),
                                       format(max(sigma), digits = 4)))
  # one width given for all classes: that width
  given <- gpc(Species ~ ., iris, multiclass = "ovr", kernel = rbf_kernel(2), optimize = FALSE)
  row <- gpsvm_plan(given)[gpsvm_plan(given)$step == "kernel", ]
  expect_identical(row$choice, "Gaussian (sigma = 2)")
})

test_that("a binary gpc() search records its plan", {
  set.seed(7)
  x <- matrix(stats::rnorm(120), 60, 2)
  y <- factor(ifelse(x[, 1] + stats::rnorm(60, sd = 0.5) > 0, "b", "a"))
  fit <- gpc(x, y)
  plan <- gpsvm_plan(fit)
  expect_identical(plan$step, c("kernel", "hyperparameters", "prior"))
  # on all 60 rows and the dense prior: no size rule changed the search
  expect_true(all(plan$exact))
  expect_identical(plan$choice[3], "the dense kernel matrix")
  # beyond search_dense_max_n (lowered here) the search ran on FITC
  op <- options(gpsvm.size_policy = list(search_dense_max_n = 30))
  on.exit(options(op), add = TRUE)
  expect_message(fitc <- gpc(x, y), "searched on the FITC evidence of 20 inducing inputs")
  plan <- gpsvm_plan(fitc)
  expect_identical(plan$size_rule[2], "search_dense_max_n")
})

test_that("the joint search signals one progress step per evaluation, shown only when asked", {
  skip_on_cran()
  old <- options(progressr.enable = TRUE)
  on.exit(options(old), add = TRUE)
  steps <- character()
  fit <- withCallingHandlers(gpc(Species ~ ., iris, multiclass = "joint"),
                             progression = function(cond) steps <<- c(steps, cond$type))
  expect_identical(sum(steps == "update"), as.integer(fit$optimization$evaluations))
  expect_identical(sum(steps == "initiate"), 1L)
  expect_identical(sum(steps == "finish"), 1L)
  expect_silent(gpc(Species ~ ., iris, multiclass = "joint"))
})
