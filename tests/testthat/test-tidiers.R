# tidy(), glance() and augment(): columns and values against the fit, and
# against plain-R references (the Gaussian kernel written out, the RVM
# posterior from its formula, Gaussian intervals).

# exp(-|a - b|^2 / (2 s^2)) between the rows of a and b, written out
rbf_r <- function(a, b, s) {
  d2 <- outer(rowSums(a^2), rowSums(b^2), "+") - 2 * a %*% t(b)
  exp(-pmax(d2, 0) / (2 * s^2))
}

tidy_data <- function(n = 40, seed = 2) {
  set.seed(seed)
  d <- data.frame(x1 = runif(n, -3, 3), x2 = rnorm(n))
  d$y <- sin(d$x1) + 0.3 * d$x2 + rnorm(n, sd = 0.2)
  d
}

as_df <- function(x) as.data.frame(x)

test_that("glance() of every regression model agrees with the fit's accessors", {
  skip_on_cran()
  d <- tidy_data()
  fits <- list(svr = svr(y ~ x1 + x2, d, optimize = TRUE),
               mfsvr = mfsvr(y ~ x1 + x2, d), rvm = rvm(y ~ x1 + x2, d),
               srvm = srvm(y ~ x1 + x2, d))
  for (name in names(fits)) {
    fit <- fits[[name]]
    g <- as_df(glance(fit))
    expect_equal(nrow(g), 1L)
    ll <- logLik(fit)
    expect_equal(g$logLik, c(ll), info = name)
    # AIC and BIC from their definitions with the fit's df
    expect_equal(g$AIC, -2 * c(ll) + 2 * attr(ll, "df"), info = name)
    expect_equal(g$BIC, -2 * c(ll) + log(nrow(d)) * attr(ll, "df"), info = name)
    expect_equal(g$nobs, nrow(d), info = name)
    expect_equal(g$sigma, sigma(fit), info = name)
    expect_identical(g$kernel, "rbf")
    # (a width per input has no one width to give)
    expect_equal(g$kernel.sigma, if (is.null(fit$kernel$input_widths)) fit$kernel$sigma else NA_real_,
                 info = name)
    expect_identical(g$converged, fit$convergence$converged)
    expect_identical(g$iter, fit$convergence$iterations)
    expect_true(is.finite(g$fit.time) && g$fit.time >= 0)
  }
  expect_equal(as_df(glance(fits$svr))[c("C", "epsilon")],
               data.frame(C = fits$svr$C, epsilon = fits$svr$epsilon))
  expect_true(as_df(glance(fits$svr))$optimized)
  # the default mfsvr() chooses C by evidence; one with C given does not
  expect_true(as_df(glance(fits$mfsvr))$optimized)
  expect_false(as_df(glance(update(fits$mfsvr, C = 5)))$optimized)
  expect_equal(as_df(glance(fits$svr))$n.support, sum(abs(coef(fits$svr)) > 0))
  expect_equal(as_df(glance(fits$rvm))$n.relevance, length(fits$rvm$relevance_vectors))
  expect_equal(as_df(glance(fits$srvm))$lambda, fits$srvm$lambda)
})

test_that("tidy() of svr() gives the expansion's weights, which rebuild the fitted values", {
  d <- tidy_data()
  fit <- svr(y ~ x1 + x2, d, bias = TRUE, C = 2)
  td <- as_df(tidy(fit))
  expect_named(td, c("term", "row", "estimate", "role"))
  expect_equal(nrow(td), nrow(d) + 1L)
  expect_identical(td$term[1], "(Intercept)")
  expect_equal(td$estimate[1], fit$b)
  w <- td$estimate[-1]
  expect_equal(w, unname(coef(fit)))
  # roles from |beta| against C, independently of the solver's partition
  a <- abs(w)
  expected <- ifelse(a < 1e-8 * fit$C, "none", ifelse(a > fit$C * (1 - 1e-8), "bound", "margin"))
  expect_identical(td$role[-1], expected)
  # sum_i beta_i k(x, x_i) + b, on the scaled response, back in y's units
  xs <- scale(as.matrix(d[c("x1", "x2")]))
  f <- rbf_r(xs, xs, fit$kernel$sigma) %*% w + td$estimate[1]
  expect_equal(mean(d$y) + sd(d$y) * drop(f), unname(fitted(fit)), tolerance = 1e-8)
})

test_that("tidy() of rvm() gives posterior means and standard errors from the RVM formulas", {
  d <- tidy_data(60, seed = 5)
  fit <- rvm(y ~ x1 + x2, d)
  td <- as_df(tidy(fit, conf.int = TRUE, conf.level = 0.9))
  expect_named(td, c("term", "row", "estimate", "role", "std.error", "alpha", "conf.low",
                     "conf.high"))
  kept <- td$role == "relevance"
  expect_identical(which(kept) - 1L, fit$relevance_vectors)
  expect_true(all(td$estimate[td$role == "pruned"] == 0 & td$std.error[td$role == "pruned"] == 0))
  # posterior of the kept weights (bias first): Sigma = (A + Phi'Phi / s2)^-1,
  # mu = Sigma Phi' t / s2, on the standardised response
  xs <- scale(as.matrix(d[c("x1", "x2")]))
  t <- (d$y - mean(d$y)) / sd(d$y)
  rv <- fit$relevance_vectors
  Phi <- cbind(1, rbf_r(xs, xs[rv, , drop = FALSE], fit$kernel$sigma))
  A <- diag(td$alpha[c(1L, which(kept))], length(rv) + 1L)
  Sigma <- solve(A + crossprod(Phi) / fit$noise_variance)
  mu <- drop(Sigma %*% crossprod(Phi, t)) / fit$noise_variance
  rows <- c(1L, which(kept))
  expect_equal(td$estimate[rows], mu, tolerance = 1e-6)
  expect_equal(td$std.error[rows], sqrt(diag(Sigma)), tolerance = 1e-6)
  # srvm() fits are tidied the same way
  sm <- srvm(y ~ x1 + x2, d)
  ts <- as_df(tidy(sm))
  expect_equal(ts$estimate[ts$role %in% c("bias", "relevance")], unname(coef(sm)))
  expect_equal(ts$std.error[ts$role %in% c("bias", "relevance")], unname(sqrt(diag(sm$Sigma))))
  z <- qnorm(0.95)
  expect_equal(td$conf.low, td$estimate - z * td$std.error)
  expect_equal(td$conf.high, td$estimate + z * td$std.error)
})

test_that("tidy() of mfsvr() and of the classifiers gives the weights and roles", {
  d <- tidy_data()
  m <- mfsvr(y ~ x1 + x2, d, C = 2)
  tm <- as_df(tidy(m))
  expect_equal(tm$estimate, unname(coef(m)))
  expect_identical(tm$role, ifelse(abs(coef(m)) > 0.99 * 2, "bound", "interior"),
                   ignore_attr = TRUE)
  set.seed(3)
  x <- matrix(rnorm(80), 40, 2)
  y <- factor(ifelse(x[, 1] + x[, 2]^2 > 0.5, "b", "a"))
  g <- gpc(x, y, bias = 0.5)
  tg <- as_df(tidy(g))
  expect_named(tg, c("class", "term", "row", "estimate", "role"))
  expect_true(all(tg$class == "b"))
  # the decision values sum_j (k(x, x_j) + bias) y_j alpha_j, kernel written out
  xs <- scale(x)
  f <- (rbf_r(xs, xs, g$kernel$sigma) + 0.5) %*% tg$estimate
  expect_equal(drop(f), unname(predict(g, x, type = "link")), tolerance = 1e-8)
  s <- svc(Species ~ ., iris, C = 1)
  ts <- as_df(tidy(s))
  expect_equal(nrow(ts), 3L * 150L)
  expect_identical(unique(ts$class), levels(iris$Species))
  a <- abs(ts$estimate)
  expect_identical(ts$role, ifelse(a == 0, "none", ifelse(a >= 1, "bound", "margin")))
  gs <- as_df(glance(s))
  expect_equal(gs$n.support, sum(a > 0))
  expect_equal(gs$n.classes, 3L)
  expect_false("logLik" %in% names(gs))
})

test_that("glance() of gpc() reports the evidence where the model has one", {
  set.seed(4)
  x <- matrix(rnorm(60), 30, 2)
  y <- factor(ifelse(x[, 1] > 0, "up", "down"))
  g <- gpc(x, y)
  gg <- as_df(glance(g))
  expect_equal(gg$logLik, c(logLik(g)))
  expect_equal(gg$AIC, AIC(g))
  expect_equal(gg[c("noise", "kappa", "bias")],
               data.frame(noise = g$optimization$estimate[["noise"]], kappa = 0, bias = 1))
  expect_equal(as_df(glance(gpc(x, y, noise = 0.3)))$noise, 0.3)
  expect_identical(gg$method, "tap")
  naive <- as_df(glance(gpc(x, y, method = "naive")))
  expect_true(is.na(naive$logLik) && is.na(naive$AIC) && is.na(naive$BIC))
  expect_identical(names(naive), names(gg))
  multi_fit <- gpc(Species ~ ., iris)
  multi <- as_df(glance(multi_fit))
  expect_true(is.na(multi$logLik))
  expect_equal(multi$n.classes, 3L)
  # the search chose a width and noise per class: no single value to report
  widths <- vapply(multi_fit$models, function(m) m$kernel$sigma, numeric(1))
  expect_gt(max(widths) / min(widths), 1.01)
  expect_true(is.na(multi$kernel.sigma) && is.na(multi$noise))
  expect_equal(multi$kappa, 0)
  # without a search the classes share them, and glance() gives them
  shared_fit <- gpc(Species ~ ., iris, optimize = FALSE)
  shared <- as_df(glance(shared_fit))
  expect_equal(shared$kernel.sigma, shared_fit$models[[2]]$kernel$sigma)
  expect_equal(shared$noise, 0.1)
})

test_that("augment() of a regression fit equals predict() with its intervals", {
  d <- tidy_data()
  fit <- rvm(y ~ x1 + x2, d)
  nd <- data.frame(x1 = c(-1, 0, 2, NA), x2 = c(0, 1, -1, 0), y = c(0, 1, 1, 2))
  a <- as_df(augment(fit, newdata = nd))
  expect_named(a, c("x1", "x2", "y", ".fitted", ".se.fit", ".lower", ".upper", ".resid"))
  p <- predict(fit, nd, interval = "prediction", se.fit = TRUE)
  expect_equal(a$.fitted, unname(p$fit[, "fit"]))
  expect_equal(a$.lower, unname(p$fit[, "lwr"]))
  expect_equal(a$.upper, unname(p$fit[, "upr"]))
  expect_equal(a$.se.fit, unname(p$se.fit))
  expect_equal(a$.resid, nd$y - a$.fitted)
  expect_true(all(is.na(a[4, c(".fitted", ".se.fit", ".lower", ".upper", ".resid")])))
  # Gaussian noise of estimated variance: the prediction band is mean +- t
  # sqrt(se^2 + s^2), the noise integrated out (test-rvm.R holds s^2 and
  # the t's degrees of freedom to the evidence), at the level the
  # cross-validated calibration asks for (test-interval-calibration.R holds
  # it to refits)
  noise <- gpsvm:::.rvm_target_noise(fit)
  level <- gpsvm:::.calibrated_level(fit, 0.95)
  expect_gt(level, 0.5)
  half <- qt((1 + level) / 2, noise$df) *
    sqrt(a$.se.fit^2 + noise$variance * fit$response_scaling$scale^2)
  expect_equal(a$.upper[1:3], a$.fitted[1:3] + half[1:3])
  conf <- as_df(augment(fit, newdata = nd, interval = "confidence", conf.level = 0.8))
  half <- qnorm(0.9) * conf$.se.fit
  expect_equal(conf$.lower[1:3], conf$.fitted[1:3] - half[1:3])
  bare <- as_df(augment(fit, newdata = nd[1:2], interval = "none", se_fit = FALSE))
  expect_named(bare, c("x1", "x2", ".fitted"))
})

test_that("augment() at the training rows lines up with the data and na.action", {
  skip_on_cran()
  d <- tidy_data()
  d$x2[c(3, 10)] <- NA
  ex <- mfsvr(y ~ x1 + x2, d, na.action = na.exclude)
  a <- as_df(augment(ex, data = d))
  expect_equal(nrow(a), nrow(d))
  expect_equal(a$.fitted, unname(fitted(ex)))
  expect_equal(a$.resid, unname(residuals(ex)))
  expect_true(all(is.na(a$.fitted[c(3, 10)])))
  expect_equal(a$.resid[-c(3, 10)], d$y[-c(3, 10)] - a$.fitted[-c(3, 10)])
  om <- svr(y ~ x1 + x2, d)
  b <- as_df(augment(om, data = d, interval = "confidence"))
  expect_equal(nrow(b), nrow(d) - 2L)
  expect_equal(b$y, d$y[-c(3, 10)])
  p <- predict(om, d[-c(3, 10), ], interval = "confidence")
  expect_equal(b$.lower, unname(p[, "lwr"]))
  # default data: the fit's response and inputs in their own units
  def <- as_df(augment(om))
  expect_named(def, c(".rownames", "y", "x1", "x2", ".fitted", ".se.fit", ".lower", ".upper",
                      ".resid"))
  expect_identical(def$.rownames, rownames(d)[-c(3, 10)])
  expect_equal(def$x1, d$x1[-c(3, 10)])
  # row names that are not row numbers become .rownames
  r <- as_df(augment(rvm(mpg ~ wt, mtcars), data = mtcars))
  expect_identical(r$.rownames, rownames(mtcars))
  # a formula's variables are shown as the data gave them: a factor as the
  # factor (not its dummy columns), log(wt) as wt
  cars <- transform(mtcars, cyl = factor(cyl))
  cars$wt[3] <- NA
  used <- cars[-3, c("mpg", "wt", "cyl")]
  for (fitter in list(svr, mfsvr, rvm)) {
    a <- as_df(augment(fitter(mpg ~ log(wt) + cyl, cars)))
    expect_named(a, c(".rownames", names(used), ".fitted", ".se.fit", ".lower", ".upper",
                      ".resid"))
    expect_identical(a[names(used)], `rownames<-`(used, NULL))
    expect_identical(a$.rownames, rownames(used))
  }
  g <- as_df(augment(gpc(Species ~ ., iris)))
  expect_identical(g[names(iris)], iris)
  # iris's rows are R's automatic numbers: no .rownames, as broom's lm() tidier
  expect_false(".rownames" %in% names(g))
  skip_if_not_installed("broom")
  expect_false(".rownames" %in% names(broom::augment(lm(Sepal.Length ~ Species, iris))))
})

test_that("augment() of a matrix-interface fit names its input columns", {
  set.seed(6)
  x <- runif(30, -3, 3)
  y <- sin(x) + rnorm(30, sd = 0.1)
  one <- rvm(x, y)
  a <- as_df(augment(one))
  expect_named(a, c("y", "x", ".fitted", ".se.fit", ".lower", ".upper", ".resid"))
  expect_equal(a$x, x)
  b <- as_df(augment(one, newdata = c(0, 1, NA)))
  expect_named(b, c("x", ".fitted", ".se.fit", ".lower", ".upper"))
  expect_equal(b$.fitted, unname(predict(one, c(0, 1, NA))))
  two <- svr(unname(cbind(x, x^2)), y)
  expect_named(as_df(augment(two)), c("y", "x1", "x2", ".fitted", ".se.fit", ".lower", ".upper",
                                      ".resid"))
  # a vector of length 2 is one point of a two-column model, as in predict()
  p <- as_df(augment(two, newdata = c(1, 1)))
  expect_equal(nrow(p), 1L)
  expect_equal(p$.fitted, unname(predict(two, c(1, 1))))
})

test_that("augment() of a classifier gives classes and probabilities as predict()", {
  g <- gpc(Species ~ Petal.Length + Sepal.Width, iris)
  a <- as_df(augment(g, data = iris))
  expect_named(a, c(names(iris), ".pred_class", ".pred_setosa", ".pred_versicolor",
                    ".pred_virginica"))
  expect_identical(a$.pred_class, unname(predict(g, type = "class")))
  prob <- predict(g, iris, type = "prob")
  expect_equal(as.matrix(a[, 7:9]), unname(prob), ignore_attr = TRUE)
  expect_equal(rowSums(a[, 7:9]), rep(1, 150))
  s <- svc(Species ~ Petal.Length + Sepal.Width, iris)
  nd <- iris[c(1, 51, 101), c("Petal.Length", "Sepal.Width")]
  b <- as_df(augment(s, newdata = nd))
  expect_named(b, c(".rownames", "Petal.Length", "Sepal.Width", ".pred_class"))
  expect_identical(b$.pred_class, unname(predict(s, nd)))
})

test_that("tidiers give clear errors on incomplete fits and bad arguments", {
  d <- tidy_data()
  fit <- rvm(y ~ x1 + x2, d)
  broken <- fit
  broken$Sigma <- NULL
  expect_error(tidy(broken), "fit\\$Sigma is missing: was the object edited\\?")
  broken <- fit
  broken$convergence <- NULL
  expect_error(glance(broken), "fit\\$convergence is missing: was the object edited\\?")
  m <- mfsvr(y ~ x1 + x2, d)
  m$log_evidence <- NULL
  expect_error(glance(m), "fit\\$log_evidence is missing: was the object edited\\?")
  s <- svr(as.matrix(d[c("x1", "x2")]), d$y)
  expect_error(augment(s, newdata = d["x1"]), "'newdata' must have 2 column")
  g <- gpc(Species ~ ., iris)
  g$levels <- NULL
  expect_error(augment(g), "fit\\$levels is missing: was the object edited\\?")
  expect_error(augment(fit, newdata = data.frame(x1 = 1)),
               "'newdata' lacks the variable\\(s\\) x2")
  expect_error(augment(fit, data = d[1:10, ]), "'data' has 10 rows but the model was fitted to 40")
  expect_error(augment(fit, interval = "band"), "'interval' must be one of")
  expect_error(tidy(fit, conf.level = 1.5), "'conf.level'")
  expect_error(tidy(fit, conf.int = NA), "'conf.int' must be TRUE or FALSE")
  expect_error(glance(fit, extra = 1), "unknown argument")
  expect_error(tidy(svr(y ~ x1, d), conf.int = TRUE), "unknown argument")
})

test_that("the methods are found through generics and broom alike", {
  fit <- mfsvr(dist ~ speed, cars)
  expect_identical(generics::glance(fit)$logLik, c(logLik(fit)))
  skip_if_not_installed("broom")
  expect_identical(broom::tidy(fit), tidy(fit))
  expect_equal(broom::augment(fit)$.fitted, unname(fitted(fit)))
})
