# The methods an lm user reaches for: confint(), anova(), extractAIC(),
# deviance(), df.residual(), drop1()/add1()/step(), R^2, plot(which = ),
# predictions at factor levels training never saw, and print()'s wording;
# against lm's method shapes, posteriors recomputed in plain R and numerical
# second derivatives of the log evidence.

noisy_sinc <- function(n = 40, seed = 3, sd = 0.3) {
  set.seed(seed)
  x <- runif(n, -10, 10)
  data.frame(x = x, y = sin(x) / x + rnorm(n, sd = sd))
}

# The Hessian of f at theta by second differences with step h (the
# off-diagonal by the four-point rule, the diagonal by it too, so at step 2h).
numeric_hessian <- function(f, theta, h) {
  p <- length(theta)
  H <- matrix(0, p, p)
  for (j in seq_len(p)) for (k in seq_len(j)) {
    ej <- h * (seq_len(p) == j)
    ek <- h * (seq_len(p) == k)
    H[j, k] <- H[k, j] <- (f(theta + ej + ek) - f(theta + ej - ek) - f(theta - ej + ek) +
                             f(theta - ej - ek)) / (4 * h^2)
  }
  H
}

# Laplace intervals from a Hessian in log values: exp(log estimate -+ z sd).
log_scale_intervals <- function(estimate, H, level = 0.95, keep = seq_along(estimate)) {
  sd <- sqrt(diag(solve(-H))[keep])
  z <- qnorm((1 + level) / 2)
  cbind(estimate[keep] * exp(-z * sd), estimate[keep] * exp(z * sd))
}

test_that("confint() of mfsvr()'s searched hyperparameters follows the curvature of the log evidence", {
  skip_on_cran()
  # epsilon = 0 stays 0 (the Laplace likelihood), where C sets the noise
  # level and the evidence pins it down
  # (the search of the evidence itself, without the hyperprior, see ?mfsvr)
  flat <- search_control(hyperprior = FALSE)
  d <- noisy_sinc()
  fit <- mfsvr(d$x, d$y, epsilon = 0, kernel = rbf_kernel(), optimize = TRUE, search = flat)
  est <- unlist(fit$optimization$estimate)
  expect_named(est, c("C", "sigma"))
  expect_length(fit$optimization$at_bound, 0L)
  # the log evidence of public refits at other values (the same scaled data)
  loglik <- function(t) {
    v <- exp(t)
    c(logLik(mfsvr(d$x, d$y, C = v[[1]], epsilon = 0, kernel = rbf_kernel(v[[2]]),
                   bias = fit$bias_variance, optimize = FALSE)))
  }
  H <- numeric_hessian(loglik, log(est), 0.02)
  ci <- confint(fit)
  expect_identical(dimnames(ci), list(c("C", "sigma"), c("2.5 %", "97.5 %")))
  expect_null(attr(ci, "curvature"))  # (the evidence's: a plain matrix, as lm's)
  expect_equal(unname(ci), unname(log_scale_intervals(est, H)), tolerance = 2e-3)
  # other levels and one row by name or number
  expect_equal(unname(confint(fit, "sigma", level = 0.5)),
               unname(log_scale_intervals(est, H, 0.5, 2)), tolerance = 2e-3)
  expect_identical(confint(fit, 2), ci["sigma", , drop = FALSE])
  expect_error(confint(fit, "lambda"), "'parm' names 'lambda', which the fit has no interval for")
  # a width per input, each refitted at other values
  set.seed(2)
  X <- matrix(runif(100), 50, dimnames = list(NULL, c("a", "b")))
  y <- sin(3 * X[, 1]) + X[, 2] + rnorm(50, sd = 0.2)
  fit <- mfsvr(X, y, C = 5, kernel = rbf_kernel(per_input = TRUE), optimize = "sigma",
               search = flat)
  est <- unlist(fit$optimization$estimate)
  expect_named(est, c("sigma[a]", "sigma[b]"))
  loglik <- function(t) {
    c(logLik(mfsvr(X, y, C = 5, kernel = rbf_kernel(exp(t), per_input = TRUE), optimize = FALSE)))
  }
  H <- numeric_hessian(loglik, log(est), 0.02)
  expect_equal(unname(confint(fit)), unname(log_scale_intervals(est, H)), tolerance = 2e-3)
  expect_error(confint(fit, level = 1), "'level' must lie in \\(0, 1\\)")
  # C, epsilon and the width searched together, on a formula fit (the
  # differences of the reference converge to confint()'s: 6e-3 at step
  # 0.04, 1.4e-3 at 0.02, 2e-4 at 0.01)
  fit <- mfsvr(mpg ~ wt + hp + qsec, data = mtcars, kernel = rbf_kernel(), optimize = TRUE,
               search = flat)
  expect_length(fit$optimization$at_bound, 0L)
  est <- hyperparameters(fit)[c("C", "epsilon", "sigma")]
  loglik <- function(t) {
    v <- exp(t)
    c(logLik(mfsvr(mpg ~ wt + hp + qsec, data = mtcars, C = v[[1]], epsilon = v[[2]],
                   kernel = rbf_kernel(v[[3]]), bias = fit$bias_variance)))
  }
  H <- numeric_hessian(loglik, log(est), 0.01)
  expect_equal(confint(fit)[names(est), ], log_scale_intervals(est, H), tolerance = 1e-3,
               ignore_attr = TRUE)
})

test_that("confint() of a two-class gpc() search follows the curvature of its evidence", {
  skip_on_cran()
  d <- two_class_data(40, 2, noise = 1)
  y <- factor(d$y)
  fit <- gpc(d$x, y)
  est <- unlist(fit$optimization$estimate)
  expect_named(est, c("sigma", "noise"))
  loglik <- function(t) {
    c(logLik(gpc(d$x, y, kernel = rbf_kernel(exp(t[[1]])), noise = exp(t[[2]]), optimize = FALSE)))
  }
  # (confint()'s second differences at step 0.05 differ from the reference's
  # by O(0.05^2): the ends agree to 6.5e-3 at the reference's step 0.05,
  # 3.0e-3 at 0.02, 2.4e-3 at 0.01)
  H <- numeric_hessian(loglik, log(est), 0.02)
  expect_equal(unname(confint(fit)), unname(log_scale_intervals(est, H)), tolerance = 5e-3)
  # three classes: one block per one-vs-rest model, named by its class
  multi <- gpc(Species ~ Petal.Length + Petal.Width, iris)
  expect_identical(rownames(confint(multi)),
                   paste0(rep(levels(iris$Species), each = 2), ": ", c("sigma", "noise")))
})

# The relevance vector machines' evidence in plain R: the Gaussian density
# of the model-unit response with covariance sigma2 I + Phi Pi^-1 Phi'.
rvm_log_evidence <- function(y, Phi, prior, sigma2) {
  C <- sigma2 * diag(length(y)) + Phi %*% solve(prior, t(Phi))
  R <- chol(C)
  -0.5 * (length(y) * log(2 * pi) + 2 * sum(log(diag(R))) +
            sum(backsolve(R, y, transpose = TRUE)^2))
}

test_that("confint() of rvm() gives the weights and the noise variance with the alphas eliminated", {
  d <- noisy_sinc(40, seed = 4, sd = 0.2)
  fit <- rvm(d$x, d$y)
  ci <- confint(fit)
  # the weights as stats::confint.default() gives them from coef() and vcov()
  weights <- names(coef(fit))
  expect_identical(rownames(ci), c(weights, "noise_variance"))
  expect_equal(ci[weights, ], confint.default(fit), tolerance = 1e-12)
  # the evidence recomputed in plain R at the fit is logLik() less the
  # Jacobian of the response's scaling
  s <- fit$response_scaling
  y <- (d$y - s$center) / s$scale
  Phi <- cbind(1, rbf_gram(fit$x, fit$kernel$sigma, fit$x[fit$relevance_vectors, , drop = FALSE]))
  alpha <- unname(fit$prior_precision)
  expect_equal(rvm_log_evidence(y, Phi, diag(alpha), fit$noise_variance),
               c(logLik(fit)) + length(y) * log(s$scale), tolerance = 1e-9)
  # numerical second derivatives in the log alphas and log sigma^2; the
  # marginal of the joint Laplace approximation for sigma^2
  m <- length(alpha)
  f <- function(t) rvm_log_evidence(y, Phi, diag(exp(t[1:m]), m), exp(t[[m + 1]]))
  H <- numeric_hessian(f, c(log(alpha), log(fit$noise_variance)), 1e-3)
  expect_equal(unname(ci["noise_variance", ]),
               c(log_scale_intervals(c(alpha, fit$noise_variance), H, keep = m + 1)),
               tolerance = 1e-5)
  # the interval of sigma^2 given the alphas would be narrower
  conditional <- fit$noise_variance * exp(c(-1, 1) * qnorm(0.975) / sqrt(-H[m + 1, m + 1]))
  expect_lt(diff(conditional), diff(ci["noise_variance", ]))
})

test_that("confint() of srvm() gives lambda and sigma^2 from the closed-form evidence", {
  d <- noisy_sinc(30, seed = 4, sd = 0.2)
  fit <- srvm(d$x, d$y, penalty = roughness_penalty(2))
  expect_gt(fit$lambda, 0)
  s <- fit$response_scaling
  y <- (d$y - s$center) / s$scale
  rv <- fit$relevance_vectors
  sigma <- fit$kernel$sigma
  Phi <- cbind(1, rbf_gram(fit$x, sigma, fit$x[rv, , drop = FALSE]))
  # L H for L = D^2 at the training inputs, from the Gaussian kernel's second
  # derivative written out: d^2/dx^2 k = ((x - c)^2 / sigma^4 - 1 / sigma^2) k
  u <- outer(fit$x[, 1], fit$x[rv, 1], "-")
  LH <- cbind(0, (u^2 / sigma^4 - 1 / sigma^2) * exp(-u^2 / (2 * sigma^2)))
  P <- crossprod(LH)
  alpha <- unname(fit$prior_precision)
  expect_equal(rvm_log_evidence(y, Phi, diag(alpha) + fit$lambda * P, fit$noise_variance),
               c(logLik(fit)) + length(y) * log(s$scale), tolerance = 1e-8)
  floor <- fit$control$min_alpha / mean(y^2)
  free <- which(alpha > floor * (1 + 1e-6))
  m <- length(free)
  f <- function(t) {
    a <- replace(alpha, free, exp(t[seq_len(m)]))
    rvm_log_evidence(y, Phi, diag(a) + exp(t[[m + 2]]) * P, exp(t[[m + 1]]))
  }
  H <- numeric_hessian(f, c(log(alpha[free]), log(fit$noise_variance), log(fit$lambda)), 1e-3)
  # alphas the evidence leaves flat (weights all but pruned, or held by the
  # penalty alone) are held, as documented
  flat <- which(diag(H)[seq_len(m)] > -1e-6)
  expect_gt(length(flat), 0L)
  ci <- confint(fit)
  expect_identical(tail(rownames(ci), 2), c("noise_variance", "lambda"))
  expect_equal(unname(ci[c("noise_variance", "lambda"), ]),
               unname(log_scale_intervals(c(alpha[free][-flat], fit$noise_variance, fit$lambda),
                                          H[-flat, -flat], keep = m - length(flat) + 1:2)),
               tolerance = 1e-4)
})

test_that("confint() of svr()'s C chosen by its evidence follows the curvature of logLik()", {
  d <- noisy_sinc()
  fit <- svr(d$x, d$y)
  expect_named(fit$optimization$estimate, "C")
  est <- hyperparameters(fit)[["C"]]
  # second differences of the log evidence of public refits at other C
  # (they converge: -27.130 at step 0.1, -27.122 at 0.02, -27.1215 at 0.01)
  # (at the fit's kernel and offset, which the default chose)
  kernel <- fit$kernel
  kernel$constant <- NULL
  loglik <- function(t) {
    c(logLik(svr(d$x, d$y, C = exp(t), kernel = kernel, bias = fit$bias_variance)))
  }
  H <- (loglik(log(est) + 0.01) - 2 * loglik(log(est)) + loglik(log(est) - 0.01)) / 0.01^2
  expect_equal(unname(confint(fit)), log_scale_intervals(est, matrix(H)), tolerance = 1e-4,
               ignore_attr = TRUE)
})

test_that("confint() says when there is no interval: nothing estimated, a bound, a rough evidence", {
  skip_on_cran()
  d <- noisy_sinc()
  expect_error(confint(mfsvr(d$x, d$y, C = 5)),
               "this mfsvr\\(\\) fit estimated no hyperparameters by its evidence")
  expect_error(confint(svr(d$x, d$y, C = 1)), "this svr\\(\\) fit estimated no hyperparameters")
  # a C chosen by another criterion is not at the maximum of logLik()'s
  # evidence, where the approximation is made
  eq16 <- svr(d$x, d$y, optimize = TRUE, control = svr_control(evidence = "eq16"))
  expect_gt(abs(eq16$C - svr(d$x, d$y)$C), 0.1)
  expect_error(confint(eq16), "chose C by the eq. \\(16\\) evidence, not by the maximum")
  expect_error(confint(svr(d$x, d$y, optimize = TRUE, control = svr_control(C_search = "fixed_point"))),
               "chose C by the eq. \\(17\\) fixed point")
  labels <- factor(d$y > 0.2)
  expect_error(confint(svc(d$x, labels)), "svc\\(\\) fits have no evidence")
  expect_error(confint(gpc(d$x, labels, method = "naive")), "naive mean field gives no evidence")
  # an evidence whose second differences over h and 2h disagree (a kink at
  # the estimate, as eq. (16) of svr() has logarithmic spikes in C) is rough
  kinked <- function(t) list(value = -t^2 / 2 - 3 * abs(t))
  expect_identical(attr(gpsvm:::.hessian(kinked, 0), "rough"), TRUE)
  smooth <- function(t) list(value = -2 * t^2 + t^3)
  expect_identical(attr(gpsvm:::.hessian(smooth, 0), "rough"), FALSE)
  # a search that stopped at the end of its range is not at a maximum
  fit <- suppressWarnings(svr(d$x, d$y, optimize = TRUE,
                              control = svr_control(C_interval = c(0.01, 0.02))))
  expect_identical(fit$optimization$at_bound, "C:upper")
  expect_warning(ci <- confint(fit), "C is at the end of its range")
  expect_true(all(is.na(ci["C", ])))
})

test_that("anova() tabulates log evidences and log Bayes factors of fits of the same data", {
  small <- mfsvr(mpg ~ wt, data = mtcars)
  large <- rvm(mpg ~ wt + hp, data = mtcars)
  a <- anova(small, large)
  expect_s3_class(a, c("anova", "data.frame"))
  expect_identical(rownames(a), c("Model 1", "Model 2"))
  expect_equal(a[["Df"]], c(attr(logLik(small), "df"), attr(logLik(large), "df")))
  expect_identical(a[["Log evidence"]], c(c(logLik(small)), c(logLik(large))))
  expect_identical(a$AIC, c(AIC(small), AIC(large)))
  expect_identical(a[["log BF"]], c(NA, c(logLik(large)) - c(logLik(small))))
  expect_output(print(a), "Model 2: rvm\\(formula = mpg ~ wt \\+ hp, data = mtcars\\)")
  # refused: one fit, other data, another scale of the response, a mix
  expect_error(anova(small), "anova\\(\\) compares two or more fits")
  expect_error(anova(small, mfsvr(mpg ~ wt, data = mtcars[-1, ])),
               "fit 2 has 31 observations and fit 1 has 32")
  expect_error(anova(small, mfsvr(log(mpg) ~ wt, data = mtcars)),
               "the response of fit 2 \\(log\\(mpg\\)\\) is that of fit 1 \\(mpg\\) on another scale")
  expect_error(anova(small, mfsvr(I(mpg / 100) ~ wt, data = mtcars)), "on another scale")
  shuffled <- transform(mtcars, mpg = rev(mpg))
  expect_error(anova(small, mfsvr(mpg ~ wt, data = shuffled)),
               "the responses of fits 1 and 2 differ in 32 of 32 observations")
  expect_error(anova(small, gpc(factor(am) ~ wt, mtcars)), "argument 2 of anova\\(\\) is not a gpsvm regression fit")
  # classifiers compare by their label evidence
  g1 <- gpc(factor(am) ~ wt, mtcars)
  g2 <- gpc(factor(am) ~ wt + hp, mtcars)
  expect_identical(anova(g1, g2)[["log BF"]][2], c(logLik(g2)) - c(logLik(g1)))
})

test_that("extractAIC(), deviance() and df.residual() have lm's shapes and logLik()'s df", {
  fit <- mfsvr(mpg ~ wt + hp, data = mtcars)
  ll <- logLik(fit)
  ref <- lm(mpg ~ wt + hp, data = mtcars)
  expect_identical(length(extractAIC(fit)), length(extractAIC(ref)))
  expect_identical(extractAIC(fit), c(attr(ll, "df"), AIC(fit)))
  expect_identical(extractAIC(fit, k = log(32))[2], BIC(fit))
  expect_identical(deviance(fit), -2 * c(ll))
  expect_identical(extractAIC(fit, k = 0)[2], deviance(fit))
  expect_identical(df.residual(fit), nobs(fit) - attr(ll, "df"))
  expect_type(deviance(fit), typeof(deviance(ref)))
  expect_error(extractAIC(fit, scale = 2), "'scale' must be 0")
  g <- gpc(factor(am) ~ wt, mtcars)
  expect_identical(extractAIC(g), c(attr(logLik(g), "df"), AIC(g)))
  expect_error(deviance(svc(factor(am) ~ wt, mtcars)), "svc\\(\\) fits have no evidence")
})

test_that("drop1(), add1() and step() choose inputs by AIC, in lm's shapes", {
  skip_on_cran()
  d <- mtcars[, c("mpg", "wt", "hp", "qsec", "drat")]
  full <- mfsvr(mpg ~ wt + hp + qsec, data = d)
  ref <- lm(mpg ~ wt + hp + qsec, data = d)
  dropped <- drop1(full)
  lm_dropped <- drop1(ref)
  expect_s3_class(dropped, class(lm_dropped))
  expect_identical(rownames(dropped), rownames(lm_dropped))
  expect_identical(names(dropped), c("Df", "AIC"))
  expect_identical(attr(dropped, "heading")[1], attr(lm_dropped, "heading")[1])
  # each row is the AIC of the model refitted without the term
  refit_aic <- function(f) AIC(mfsvr(f, data = d))
  expect_equal(dropped$AIC, c(AIC(full), refit_aic(mpg ~ hp + qsec), refit_aic(mpg ~ wt + qsec),
                              refit_aic(mpg ~ wt + hp)), tolerance = 1e-12)
  expect_identical(dropped$Df, c(NA, 1, 1, 1))
  added <- add1(mfsvr(mpg ~ wt, data = d), ~ . + hp + drat)
  expect_identical(rownames(added), rownames(add1(lm(mpg ~ wt, data = d), ~ . + hp + drat)))
  expect_equal(added$AIC[2], refit_aic(mpg ~ wt + hp), tolerance = 1e-12)
  expect_error(drop1(full, test = "Chisq"), "'test' must be \"none\"")
  expect_error(drop1(mfsvr(d$wt, d$mpg)), "drop1\\(\\) needs a fit made with a formula")
  # step(): backward elimination by AIC, checked by hand: from the full
  # model drop the term whose removal lowers the AIC most, while one does
  chosen <- step(full, trace = 0)
  current <- c("wt", "hp", "qsec")
  repeat {
    aic_now <- refit_aic(reformulate(current, "mpg"))
    if (length(current) == 1L) break
    without <- vapply(current, function(v) refit_aic(reformulate(setdiff(current, v), "mpg")),
                      numeric(1))
    if (min(without) >= aic_now) break
    current <- setdiff(current, names(which.min(without)))
  }
  expect_setequal(attr(terms(chosen), "term.labels"), current)
  expect_identical(names(chosen$anova), names(step(ref, trace = 0)$anova))
  expect_equal(tail(chosen$anova$AIC, 1), AIC(chosen), tolerance = 1e-12)
  # one input: dropping it would leave no kernel model; step() keeps it
  single <- mfsvr(mpg ~ wt, data = d)
  one <- drop1(single)
  expect_identical(rownames(one), c("<none>", "wt"))
  expect_equal(one$AIC[1], AIC(single))
  expect_true(is.na(one$AIC[2]))
  expect_identical(one$Df, c(NA, 1))
  expect_identical(formula(step(single, trace = 0)), mpg ~ wt)
})

test_that("R^2 in summary() and glance(): training, and leave-one-out where it is cheap", {
  skip_on_cran()
  d <- noisy_sinc(30, seed = 6, sd = 0.2)
  r2 <- function(y, pred) 1 - sum((y - pred)^2) / sum((y - mean(y))^2)
  # rvm: leave-one-out at the fitted hyperparameters, recomputed in plain R
  fit <- rvm(d$x, d$y)
  s <- fit$response_scaling
  y <- (d$y - s$center) / s$scale
  Phi <- cbind(1, rbf_gram(fit$x, fit$kernel$sigma, fit$x[fit$relevance_vectors, , drop = FALSE]))
  A <- diag(unname(fit$prior_precision))
  loo <- vapply(seq_along(y), function(i) {
    Sigma <- solve(A + crossprod(Phi[-i, ]) / fit$noise_variance)
    sum(Phi[i, ] * (Sigma %*% crossprod(Phi[-i, ], y[-i]))) / fit$noise_variance
  }, numeric(1))
  sm <- summary(fit)
  expect_equal(sm$r_squared[["training"]], r2(d$y, fitted(fit)), tolerance = 1e-12)
  expect_equal(sm$r_squared[["loo"]], r2(d$y, s$center + s$scale * loo), tolerance = 1e-10)
  expect_output(print(sm), "R-squared: [0-9.]+ \\(training\\), [0-9.]+ \\(leave-one-out\\)")
  g <- glance(fit)
  expect_identical(c(g$r.squared, g$loo.r.squared), unname(sm$r_squared))
  # mfsvr: EP's cavities against refits without each point (EP on n - 1
  # points is not the cavity exactly: on 80 points they agree to 0.005)
  e <- noisy_sinc(80, seed = 6, sd = 0.2)
  fit <- mfsvr(e$x, e$y, C = 4, kernel = rbf_kernel(1.5), scale = FALSE)
  refit <- vapply(seq_along(e$y), function(i) {
    predict(mfsvr(e$x[-i], e$y[-i], C = 4, kernel = rbf_kernel(1.5), scale = FALSE), e$x[i])
  }, numeric(1))
  expect_lt(abs(summary(fit)$r_squared[["loo"]] - r2(e$y, refit)), 0.01)
  expect_lt(summary(fit)$r_squared[["loo"]], summary(fit)$r_squared[["training"]])
  # svr has none; a constant response has no R^2
  expect_true(is.na(summary(svr(d$x, d$y))$r_squared[["loo"]]))
  expect_true(is.na(glance(svr(d$x, d$y))$loo.r.squared))
  expect_output(print(summary(svr(d$x, d$y))), "R-squared: [0-9.]+ \\(training\\)\n")
})

# P(Y <= t) for Y = f + e, f ~ N(m, v), e epsilon-insensitive, by quadrature.
epsins_predictive_cdf <- function(t, m, v, C, eps) {
  k <- 1 / (2 * (eps * C + 1))
  noise_cdf <- function(u) ifelse(u < -eps, k * exp(C * (u + eps)),
                                  ifelse(u <= eps, k + C * k * (u + eps),
                                         1 - k * exp(-C * (u - eps))))
  ends <- c(m - 12 * sqrt(v), m + 12 * sqrt(v))
  cuts <- sort(c(ends, t - eps, t + eps))
  cuts <- cuts[cuts >= ends[1] & cuts <= ends[2]]
  sum(vapply(seq_len(length(cuts) - 1L), function(k) {
    integrate(function(f) dnorm(f, m, sqrt(v)) * noise_cdf(t - f), cuts[k], cuts[k + 1L],
              rel.tol = 1e-12, subdivisions = 1000L)$value
  }, numeric(1)))
}

test_that("plot(which = ) draws plot.lm's panels on standardised residuals recomputed in plain R", {
  skip_on_cran()
  d <- noisy_sinc(30, seed = 6, sd = 0.2)
  pdf(NULL)
  on.exit(dev.off())
  for (fit in list(mfsvr(d$x, d$y), svr(d$x, d$y), rvm(d$x, d$y), srvm(d$x, d$y))) {
    expect_invisible(plot(fit, which = 1:4))
    expect_invisible(plot(fit, which = c("qq", "fit", "observed")))
  }
  fit <- rvm(d$x, d$y)
  expect_error(plot(fit, which = 5), "'which' must name panels among fit \\(by name\\), residuals \\(1\\), qq \\(2\\), scale \\(3\\), observed \\(4\\)")
  expect_error(plot(fit, which = "calibrate"), "'which' must name panels")
  expect_error(plot(fit, which = 1, deriv = 1), "'deriv' is drawn by the panel which = \"fit\" alone")
  # rvm: the normal scores of the leave-one-out residuals under the t
  # predictive of a new target: the linear smoother's latent variance
  # sigma^2 h / (1 - h) plus the integrated noise's (test-rvm.R holds its
  # scale and degrees of freedom to the evidence)
  v <- gpsvm:::.diagnostic_values(fit)
  expect_identical(v$predictive, "leave-one-out")
  Phi <- cbind(1, rbf_gram(fit$x, fit$kernel$sigma, fit$x[fit$relevance_vectors, , drop = FALSE]))
  h <- rowSums((Phi %*% fit$Sigma) * Phi) / fit$noise_variance
  r <- residuals(fit) / fit$response_scaling$scale
  noise <- gpsvm:::.rvm_target_noise(fit)
  z <- r / (1 - h) / sqrt(fit$noise_variance * h / (1 - h) + noise$variance)
  expect_equal(v$scores, unname(qnorm(pt(z, noise$df))), tolerance = 1e-10)
  # mfsvr: normal scores of the exact predictive CDF under the EP cavity
  fit <- mfsvr(d$x, d$y, C = 5, scale = FALSE, kernel = rbf_kernel(1.5))
  v <- gpsvm:::.diagnostic_values(fit)
  pit <- vapply(c(1, 7, 19), function(i) {
    epsins_predictive_cdf(d$y[i], fit$cavity_mean[i], fit$cavity_var[i], 5, 0.1)
  }, numeric(1))
  expect_equal(v$scores[c(1, 7, 19)], qnorm(pit), tolerance = 1e-7)
  # svr: the in-sample predictive, said on the axis
  expect_identical(gpsvm:::.diagnostic_values(svr(d$x, d$y))$predictive, "in-sample")
})

test_that("a factor level training never saw is a new direction of the input space", {
  d <- data.frame(y = c(1.2, 2.1, 2.9, 4.2, 5.1, 5.8, 7.2, 8.1, 8.8, 10.3), x = 1:10,
                  f = factor(rep(c("a", "b"), 5)), g = factor(rep(c("u", "v", "w", "u", "v"), 2)))
  fit <- mfsvr(y ~ x + f + g, d, C = 5, kernel = rbf_kernel(2), scale = FALSE)
  nd <- data.frame(x = c(3, 3, 3, 3), f = c("a", "c", "a", "c"), g = c("u", "u", "z", "z"))
  expect_warning(p <- predict(fit, nd, se.fit = TRUE),
                 "factor levels training never saw, in 3 rows: f \\(c\\); g \\(z\\)")
  # the same as the matrix interface with one more input column per new
  # level, 0 in training, and the factor's own columns 0 in the new rows
  # (on the data as given: the matrix interface would scale the indicators)
  X <- model.matrix(~ x + f + g - 1, d)
  Xa <- cbind(X, f_c = 0, g_z = 0)
  aug <- mfsvr(Xa, d$y, C = 5, kernel = rbf_kernel(2), scale = FALSE)
  at <- rbind(c(3, 1, 0, 0, 0, 0, 0), c(3, 0, 0, 0, 0, 1, 0), c(3, 1, 0, 0, 0, 0, 1),
              c(3, 0, 0, 0, 0, 1, 1))
  colnames(at) <- colnames(Xa)
  q <- predict(aug, at, se.fit = TRUE)
  expect_equal(unname(p$fit), unname(q$fit), tolerance = 1e-10)
  expect_equal(unname(p$se.fit), unname(q$se.fit), tolerance = 1e-10)
  # toward the prior mean (0 on the data as given), with wider error bars
  expect_true(all(abs(p$fit[2:4]) < abs(p$fit[1])))
  expect_true(all(p$se.fit[2:4] > p$se.fit[1]))
  expect_gt(p$se.fit[4], max(p$se.fit[2:3]))
  # lm's refusal on request, naming every factor
  expect_error(predict(fit, nd, new_levels = "error"),
               "factor levels training never saw, in 3 rows: f \\(c\\); g \\(z\\)")
  expect_error(predict(fit, nd, new_levels = "drop"), "'new_levels' must be one of")
  # a row with a missing value is NA whatever its levels, and not counted
  nd$x[4] <- NA
  expect_warning(p <- predict(fit, nd), "in 2 rows")
  expect_true(is.na(p[4]))
  # classifiers: the same construction
  dc <- transform(d, cls = factor(y > 5))
  g <- gpc(cls ~ x + f + g, dc, kernel = rbf_kernel(2), noise = 0.3, scale = FALSE)
  ga <- gpc(Xa, dc$cls, kernel = rbf_kernel(2), noise = 0.3, scale = FALSE)
  expect_warning(pg <- predict(g, nd[1:3, ], type = "prob"), "f \\(c\\); g \\(z\\)")
  expect_equal(unname(pg), unname(predict(ga, at[1:3, ], type = "prob")), tolerance = 1e-10)
  expect_warning(predict(svc(cls ~ x + f + g, dc), nd[1:3, ]), "never saw")
})

test_that("newdata is coded with the fit's contrasts, as predict.lm() codes it", {
  set.seed(1)
  lv <- c("lo", "mid", "hi")
  d <- data.frame(g = sample(c("a", "b", "c"), 40, TRUE), x = runif(40),
                  lvl = factor(sample(lv, 40, TRUE), levels = lv, ordered = TRUE))
  d$y <- as.numeric(d$lvl) + (d$g == "b") + sin(6 * d$x) + rnorm(40, sd = 0.2)
  fit <- mfsvr(y ~ g + lvl + x, d, C = 5, kernel = rbf_kernel(2), scale = FALSE)
  # an ordered factor takes polynomial contrasts (after the first factor's
  # indicator columns), as in lm
  expect_identical(colnames(model.matrix(fit)), c("ga", "gb", "gc", "lvl.L", "lvl.Q", "x"))
  as_factor <- data.frame(g = "b", lvl = factor(lv, levels = lv, ordered = TRUE), x = 0.5)
  as_text <- data.frame(g = "b", lvl = lv, x = 0.5)
  plain <- data.frame(g = "b", lvl = factor(lv), x = 0.5)
  # the same inputs, by the matrix interface on lm's own model matrix
  X <- model.matrix(lm(y ~ g + lvl + x - 1, d))
  ref <- predict(mfsvr(X, d$y, C = 5, kernel = rbf_kernel(2), scale = FALSE),
                 model.matrix(~ g + lvl + x - 1, transform(as_factor, g = factor(g, c("a", "b", "c")))))
  for (nd in list(as_factor, as_text, plain)) {
    expect_equal(unname(predict(fit, nd)), unname(ref), tolerance = 1e-10)
  }
  # the session's contrasts at predict time do not matter either
  old <- options(contrasts = c("contr.sum", "contr.helmert"))
  on.exit(options(old))
  expect_equal(unname(predict(fit, as_text)), unname(ref), tolerance = 1e-10)
  # a fit edited to other contrasts: the columns no longer match, which is
  # an error, not a prediction from misplaced columns
  fit$contrasts$lvl <- "contr.treatment"
  expect_error(predict(fit, as_text), "'newdata' codes to the columns .*lvlmid.* where the fit has")
})

test_that("kernlab's ticdata: every test row is predicted, one warning names every new level", {
  skip_on_cran()
  skip_if_not_installed("kernlab")
  data(ticdata, package = "kernlab", envir = environment())
  train <- ticdata[1:5822, ]
  test <- ticdata[-(1:5822), ]
  # the levels of the test rows that the full training set never saw,
  # found in plain R: 16 rows, 9 factors
  factors <- names(ticdata)[vapply(ticdata, is.factor, logical(1))]
  factors <- setdiff(factors, "CARAVAN")
  unseen <- lapply(setNames(factors, factors), function(v) {
    setdiff(unique(as.character(test[[v]])), unique(as.character(train[[v]])))
  })
  unseen <- unseen[lengths(unseen) > 0L]
  rows <- Reduce(`|`, lapply(names(unseen), function(v) test[[v]] %in% unseen[[v]]))
  expect_identical(c(length(unseen), sum(rows)), c(9L, 16L))
  tt <- delete.response(terms(CARAVAN ~ ., data = train))
  xlevels <- .getXlevels(tt, model.frame(tt, train, drop.unused.levels = TRUE))
  mf <- model.frame(tt, test)
  expect_warning(coded <- gpsvm:::.code_training_levels(mf, xlevels, "predict"),
                 "in 16 rows")
  expect_setequal(names(coded$unseen), names(unseen))
  for (v in names(unseen)) expect_setequal(coded$unseen[[v]]$levels, unseen[[v]])
  # a fit on part of the training rows (all of them take half a minute):
  # predictions for all 4000 test rows, error bars wider where levels are new
  m <- test_size(1000, 400)
  part <- ticdata[seq_len(m), ]
  # (a factor with one level in the rows used cannot enter the formula, and
  # a constant column says nothing)
  single <- names(part)[vapply(part, function(v) length(unique(v)) < 2L, logical(1))]
  factors <- setdiff(factors, single)
  formula <- reformulate(setdiff(names(ticdata), c("CARAVAN", single)), "CARAVAN")
  fit <- gpc(formula, part)
  warned <- NULL
  se <- withCallingHandlers(predict(fit, test, type = "link", se.fit = TRUE)$se.fit,
                            warning = function(w) {
                              warned <<- c(warned, conditionMessage(w))
                              invokeRestart("muffleWarning")
                            })
  expect_length(warned, 1L)
  expect_true(all(is.finite(se)))
  new_rows <- Reduce(`|`, lapply(factors, function(v) {
    !(as.character(test[[v]]) %in% as.character(unique(part[[v]])))
  }))
  expect_match(warned, sprintf("in %d rows", sum(new_rows)), fixed = TRUE)
  expect_gt(median(se[new_rows]), median(se[!new_rows]))
  prob <- suppressWarnings(predict(fit, test, type = "prob"))
  expect_true(all(is.finite(prob)))
  # as good as e1071's probability model on the same rows (the classes are
  # 6% / 94%, so compare log losses)
  skip_if_not_installed("e1071")
  y <- test$CARAVAN == levels(test$CARAVAN)[2]
  log_loss <- function(p) -mean(ifelse(y, log(p), log(1 - p)))
  peer <- e1071::svm(formula, part, probability = TRUE)
  pp <- attr(predict(peer, test, probability = TRUE), "probabilities")[, levels(test$CARAVAN)[2]]
  expect_lt(log_loss(prob[, 2]), 1.05 * log_loss(pp))
})

test_that("print() says what was scaled, counts in the right number, and each model's convergence", {
  d <- data.frame(y = c(1.2, 2.1, 2.9, 4.2, 5.1, 5.8), f = factor(c("a", "b", "c", "a", "b", "c")))
  expect_output(print(mfsvr(y ~ f, d, C = 5)),
                "Scaling: the response centred and scaled \\(left as they are: 3 columns coding factors\\)")
  expect_output(print(gpc(factor(y > 3) ~ f, d, noise = 0.5)),
                "Scaling: none \\(left as they are: 3 columns coding factors\\)")
  x <- cbind(u = 1:6, k = 1)
  expect_warning(fit <- mfsvr(x, d$y, C = 5), "constant input")
  expect_output(print(fit), "Scaling: 1 of 2 input columns and the response centred and scaled \\(centred only: the constant column k\\)")
  expect_output(print(mfsvr(1:6, d$y, C = 5)), "Scaling: the input column and the response centred")
  expect_output(print(mfsvr(cbind(1:6, c(2, 7, 1, 8, 2, 8)), d$y, C = 5)),
                "Scaling: both input columns and the response centred")
  expect_output(print(mfsvr(1:6, d$y, C = 5, scale = FALSE)), "Scaling: none \\(scale = FALSE\\)")
  fit <- suppressWarnings(mfsvr(1:6, d$y, C = 5, control = mfsvr_control(max_iter = 1)))
  expect_output(print(fit), "after 1 iteration \\(")
  multi <- svc(Species ~ ., iris)
  out <- capture.output(print(multi))
  expect_true(all(sprintf("  %s: %s", levels(iris$Species),
                          vapply(multi$models, function(m) gpsvm:::.format_convergence(m$convergence),
                                 character(1))) %in% out))
})
