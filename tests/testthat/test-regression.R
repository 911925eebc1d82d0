# The layer the four regression models share: scaling (against fits to data
# standardised by hand), the data-driven kernel width, the evidence as a
# density of the data as given, the df rule, NA handling (against lm()),
# plots of transformed formulas, update(), sigma(), and every method with
# kernlab and e1071 attached.

# Data in awkward units: inputs around 1000 with spread 300 and around -5
# with spread 0.01, response around 1e4 with spread 50.
awkward_data <- function(n = 40, seed = 1) {
  set.seed(seed)
  u <- runif(n, -2, 2)
  v <- runif(n, -2, 2)
  data.frame(a = 1000 + 300 * u, b = -5 + 0.01 * v,
             y = 1e4 + 50 * (sin(2 * u) + 0.5 * v^2) + rnorm(n, sd = 5))
}

# The same standardisation written out: centre and sd of each column.
by_hand <- function(d) {
  x <- as.matrix(d[c("a", "b")])
  list(x = scale(x), cx = colMeans(x), sx = apply(x, 2, sd),
       y = (d$y - mean(d$y)) / sd(d$y), cy = mean(d$y), sy = sd(d$y))
}

fitters <- list(
  svr = function(x, y, ...) svr(x, y, C = 5, epsilon = 0.1, ...),
  svr_bias = function(x, y, ...) svr(x, y, C = 5, epsilon = 0.1, bias = TRUE, ...),
  mfsvr = function(x, y, ...) mfsvr(x, y, C = 5, epsilon = 0.1, ...),
  # the models' own intervals: the calibration's refits of a fit to data
  # scaled by hand would not know that the response was centred
  # (test-interval-calibration.R holds the calibrated ones to a change of units)
  rvm = function(x, y, ...) rvm(x, y, calibration_folds = 0, ...),
  srvm = function(x, y, ...) srvm(x, y, penalty = roughness_penalty(2), calibration_folds = 0, ...)
)

test_that("scale = TRUE is the model fitted to data standardised by hand, reported in the data's units", {
  d <- awkward_data()
  h <- by_hand(d)
  x <- as.matrix(d[c("a", "b")])
  new <- cbind(a = c(700, 1000, 1350), b = c(-5.01, -4.995, -5.02))
  new_s <- scale(new, h$cx, h$sx)
  for (name in names(fitters)) {
    f1 <- fitters[[name]](x, d$y)
    # srvm() starts from two lambdas on scaled data, from the strong one alone otherwise
    starts <- if (name == "srvm") list(control = srvm_control(lambda_init = c(1e4, 1)))
    f0 <- do.call(fitters[[name]], c(list(h$x, h$y, kernel = f1$kernel, scale = FALSE), starts))
    info <- name
    expect_equal(f1$scaling$center, h$cx, info = info)
    expect_equal(f1$scaling$scale, h$sx, info = info)
    expect_equal(unname(coef(f1)), unname(coef(f0)), tolerance = 1e-10, info = info)
    expect_equal(unname(fitted(f1)), h$cy + h$sy * unname(fitted(f0)), tolerance = 1e-12,
                 info = info)
    expect_equal(unname(residuals(f1)), h$sy * unname(residuals(f0)), tolerance = 1e-8,
                 info = info)
    expect_equal(sigma(f1), h$sy * sigma(f0), tolerance = 1e-10, info = info)
    # the evidence: the same model, with the Jacobian of y -> (y - c) / s
    expect_equal(as.numeric(logLik(f1)), as.numeric(logLik(f0)) - 40 * log(h$sy),
                 tolerance = 1e-10, info = info)
    for (interval in c("confidence", "prediction")) {
      p1 <- predict(f1, new, interval = interval, level = 0.9)
      # the relevance vector machines' noise level counts the mean the
      # scaling estimated: by hand, the fit to centred data told it was centred
      if (name %in% c("rvm", "srvm")) f0$response_scaling <- list(center = 0, scale = 1)
      p0 <- predict(f0, new_s, interval = interval, level = 0.9)
      expect_equal(unname(p1), h$cy + h$sy * unname(p0), tolerance = 1e-10, info = info)
    }
    s1 <- predict(f1, new, se.fit = TRUE)
    s0 <- predict(f0, new_s, se.fit = TRUE)
    expect_equal(unname(s1$se.fit), h$sy * unname(s0$se.fit), tolerance = 1e-10, info = info)
    expect_equal(s1$residual.scale, sigma(f1), info = info)
    # derivatives by the chain rule: d^n y / dx_j^n = s_y / s_j^n d^n f / du_j^n
    for (wrt in 1:2) for (n in 1:2) {
      g1 <- predict(f1, new, deriv = n, wrt = wrt, se.fit = TRUE)
      g0 <- predict(f0, new_s, deriv = n, wrt = wrt, se.fit = TRUE)
      k <- h$sy / h$sx[[wrt]]^n
      expect_equal(unname(g1$fit), k * unname(g0$fit), tolerance = 1e-10, info = info)
      expect_equal(unname(g1$se.fit), k * unname(g0$se.fit), tolerance = 1e-10, info = info)
    }
  }
})

test_that("a penalty's own points are given in the data's units and scaled with the inputs", {
  d <- awkward_data(seed = 19)
  grid <- seq(400, 1600, length.out = 50)
  fit <- srvm(d$a, d$y, penalty = roughness_penalty(2, at = grid))
  xs <- (d$a - mean(d$a)) / sd(d$a)
  ref <- srvm(xs, (d$y - mean(d$y)) / sd(d$y), kernel = fit$kernel, scale = FALSE,
              penalty = roughness_penalty(2, at = (grid - mean(d$a)) / sd(d$a)),
              control = srvm_control(lambda_init = c(1e4, 1)))
  expect_identical(fit$relevance_vectors, ref$relevance_vectors)
  expect_equal(fit$lambda, ref$lambda, tolerance = 1e-8)
  expect_equal(unname(coef(fit)), unname(coef(ref)), tolerance = 1e-8)
})

test_that("derivatives on the data's scale match central differences of the predictions", {
  d <- awkward_data(seed = 2)
  fits <- lapply(fitters, function(fit) fit(as.matrix(d[c("a", "b")]), d$y))
  z <- cbind(a = c(800, 1100), b = c(-5.005, -4.99))
  for (name in names(fits)) {
    f <- fits[[name]]
    for (wrt in 1:2) {
      # steps of 1e-3 and 1e-2 input standard deviations
      step <- function(h) {
        e <- matrix(0, 2, 2)
        e[, wrt] <- h
        e
      }
      h1 <- c(0.3, 1e-5)[wrt]
      h2 <- c(3, 1e-4)[wrt]
      fd1 <- (predict(f, z + step(h1)) - predict(f, z - step(h1))) / (2 * h1)
      fd2 <- (predict(f, z + step(h2)) - 2 * predict(f, z) + predict(f, z - step(h2))) / h2^2
      expect_equal(unname(predict(f, z, deriv = 1, wrt = wrt)), unname(fd1), tolerance = 1e-6,
                   info = paste(name, wrt))
      expect_equal(unname(predict(f, z, deriv = 2, wrt = wrt)), unname(fd2), tolerance = 1e-4,
                   info = paste(name, wrt))
    }
  }
})

test_that("scaled fits do not depend on the units of the inputs and the response", {
  d <- awkward_data(seed = 3)
  x <- as.matrix(d[c("a", "b")])
  new <- cbind(a = c(900, 1200), b = c(-5, -4.99))
  for (name in names(fitters)) {
    base <- fitters[[name]](x, d$y)
    for (u in c(1e-6, 1e6)) {
      f <- fitters[[name]](x * u, d$y * u + 7)
      expect_equal(predict(f, new * u, interval = "prediction"),
                   u * predict(base, new, interval = "prediction") + 7, tolerance = 1e-8,
                   info = paste(name, u))
      expect_equal(sigma(f), u * sigma(base), tolerance = 1e-8, info = paste(name, u))
      expect_equal(as.numeric(logLik(f)), as.numeric(logLik(base)) - 40 * log(u),
                   tolerance = 1e-8, info = paste(name, u))
    }
  }
})

test_that("logLik() of a scaled rvm is the Gaussian density of y as given, evaluated directly", {
  d <- awkward_data(seed = 4)
  x <- as.matrix(d[c("a", "b")])
  for (fit in list(rvm(x, d$y), srvm(x, d$y, penalty = roughness_penalty(2)))) {
    xs <- scale(x)
    cy <- mean(d$y)
    sy <- sd(d$y)
    keep <- fit$relevance_vectors
    H <- cbind(1, kernel_matrix(fit$kernel, xs, xs[keep, , drop = FALSE]))
    P <- if (inherits(fit, "gpsvm_srvm")) {
      # the penalty sums the squared second derivatives in each coordinate,
      # at the training inputs
      L1 <- cbind(0, kernel_matrix(fit$kernel, xs, xs[keep, , drop = FALSE], deriv = 2, wrt = 1))
      L2 <- cbind(0, kernel_matrix(fit$kernel, xs, xs[keep, , drop = FALSE], deriv = 2, wrt = 2))
      crossprod(L1) + crossprod(L2)
    } else 0
    prior <- solve(fit$lambda * P + diag(fit$prior_precision, length(fit$prior_precision)))
    # y = c + s (H w + e): normal with mean c and covariance s^2 (sigma2 I + H prior H')
    V <- sy^2 * (fit$noise_variance * diag(40) + H %*% prior %*% t(H))
    R <- chol(V)
    direct <- -0.5 * (40 * log(2 * pi) + 2 * sum(log(diag(R))) +
                        sum(backsolve(R, d$y - cy, transpose = TRUE)^2))
    expect_equal(as.numeric(logLik(fit)), direct, tolerance = 1e-8)
  }
})

test_that("logLik() of a scaled mfsvr is within 1e-3 of the density of y as given, by 2-D quadrature", {
  skip_on_cran()
  # two points (EP is not exact for two): y = c + s (f + e), so
  # p(y) = int prod_i p_eps((y_i - c) / s - f_i) / s N(f; 0, K) df
  x <- c(10, 50)
  y <- c(3000, 3100)
  C <- 3
  eps <- 0.1
  fit <- mfsvr(x, y, C = C, epsilon = eps, kernel = rbf_kernel(1))
  cy <- mean(y)
  sy <- sd(y)
  xs <- (x - mean(x)) / sd(x)
  K <- exp(-outer(xs, xs, "-")^2 / 2)
  t <- (y - cy) / sy
  inner <- function(f1) vapply(f1, function(a) {
    cond_m <- K[2, 1] * a
    cond_v <- 1 - K[2, 1]^2
    integrate(function(b) epsins_density(t[2], b, C, eps) / sy * dnorm(b, cond_m, sqrt(cond_v)),
              -Inf, Inf, rel.tol = 1e-10)$value
  }, 0)
  z <- integrate(function(a) epsins_density(t[1], a, C, eps) / sy * dnorm(a) * inner(a),
                 -Inf, Inf, rel.tol = 1e-10)$value
  expect_lt(abs(as.numeric(logLik(fit)) - log(z)), 1e-3)
  # the Jacobian is not small here: without it the evidence is off by 2 log s
  expect_gt(2 * log(sy), 8)
})

test_that("eq. (16) of svr() is evaluated at the exact optimum at the default tolerance", {
  skip_on_cran()
  # references: plain-R coordinate descent (bias = FALSE; checked to reach
  # the optimum, its KKT violation below 1e-10), or the dual solver at
  # tol = 1e-12 (bias = TRUE, and large C where coordinate descent crawls),
  # with eq. (16) evaluated in plain R
  k <- rbf_kernel(sqrt(2))
  exact_eq16 <- function(x, y, C, eps, bias, sweeps = 5000) {
    K <- svr_rbf_gram(x, sqrt(2))
    if (!bias && sweeps > 0) {
      beta <- svr_cd_reference(K, y, C, eps, sweeps = sweeps, tol = 1e-14)
      r <- y - drop(K %*% beta)
      expect_lt(svr_kkt_violation(beta, r, C, eps), 1e-10)
      return(svr_eq16_r(beta, K, y, C, eps))
    }
    ex <- gpsvm:::cpp_svr_fit(k, matrix(x), y, list(C = C, epsilon = eps, bias = bias,
                                                    tol = 1e-12, max_iter = 1e8, cache_mb = 100,
                                                    shrinking = TRUE))
    expect_true(ex$convergence$converged)
    svr_eq16_r(ex$beta, K, y, C, eps, ex$b)
  }
  cases <- list(list(seed = 1, C = 50, sweeps = 0), list(seed = 2, C = 50, sweeps = 2e4),
                list(seed = 3, C = 1e-3), list(seed = 4, C = 0.1), list(seed = 5, C = 5),
                list(seed = 6, C = 1e3, sweeps = 0))
  for (cs in cases) for (bias in c(FALSE, TRUE)) {
    d <- sinc_data(40, seed = cs$seed)
    fit <- svr(d$x, d$y, C = cs$C, epsilon = 0.1, kernel = k, bias = bias, scale = FALSE)
    ref <- exact_eq16(d$x, d$y, cs$C, 0.1, bias, if (is.null(cs$sweeps)) 5000 else cs$sweeps)
    expect_lt(abs(evidence(fit, "eq16") - ref), 1e-6 * abs(ref),
              label = sprintf("seed %d, C = %g, bias = %s", cs$seed, cs$C, bias))
  }
  # duplicated inputs with different targets
  x <- rep(seq(-3, 3, length.out = 12), each = 2)
  set.seed(7)
  y <- sin(x) + rnorm(24, sd = 0.2)
  for (bias in c(FALSE, TRUE)) {
    fit <- svr(x, y, C = 10, epsilon = 0.05, kernel = k, bias = bias, scale = FALSE)
    ref <- exact_eq16(x, y, 10, 0.05, bias)
    expect_lt(abs(evidence(fit, "eq16") - ref), 1e-6 * abs(ref), label = paste("dup", bias))
  }
  # with scaling, on the scaled data
  d <- sinc_data(40, seed = 8)
  fit <- svr(d$x, d$y, C = 50, epsilon = 0.1, kernel = k)
  xs <- (d$x - mean(d$x)) / sd(d$x)
  ys <- (d$y - mean(d$y)) / sd(d$y)
  ref <- exact_eq16(xs, ys, 50, 0.1, FALSE, sweeps = 0) - 40 * log(sd(d$y))
  expect_lt(abs(evidence(fit, "eq16") - ref), 1e-6 * abs(ref))
  expect_equal(evidence(fit), as.numeric(logLik(fit)))
  expect_true(fit$polished)
})

test_that("the polished svr solution satisfies the KKT conditions to rounding", {
  d <- svr_sine_data(60, seed = 9)
  K <- svr_rbf_gram(d$x, sqrt(0.8))
  for (C in c(0.5, 5, 100)) {
    fit <- svr(d$x, d$y, C = C, epsilon = 0.3, kernel = rbf_kernel(sqrt(0.8)), scale = FALSE)
    r <- d$y - drop(K %*% fit$beta)
    expect_lt(svr_kkt_violation(fit$beta, r, C, 0.3), 1e-9)
    expect_lt(fit$convergence$change, 1e-9)
    expect_equal(fit$objective, svr_dual_objective(fit$beta, K, d$y, 0.3), tolerance = 1e-12)
  }
  # dense inputs, where the split at the default tolerance is wrong in
  # several places and the active-set steps move a dozen points
  set.seed(1)
  x <- runif(600, -10, 10)
  y <- sin(x) / x + rnorm(600, sd = 0.1)
  K <- svr_rbf_gram(x, 1)
  for (bias in c(FALSE, TRUE)) {
    fit <- svr(x, y, C = 10, epsilon = 0.05, kernel = rbf_kernel(1), bias = bias, scale = FALSE)
    expect_true(fit$polished)
    r <- y - drop(K %*% fit$beta)
    if (bias) {
      expect_equal(sum(fit$beta), 0, tolerance = 1e-12)
      expect_lt(svr_kkt_violation(fit$beta, r - fit$b, 10, 0.05), 1e-9)
    } else {
      expect_lt(svr_kkt_violation(fit$beta, r, 10, 0.05), 1e-9)
    }
    ex <- gpsvm:::cpp_svr_fit(rbf_kernel(1), matrix(x), y,
                              list(C = 10, epsilon = 0.05, bias = bias, tol = 1e-12, max_iter = 1e8,
                                   cache_mb = 100, shrinking = TRUE))
    ref <- svr_eq16_r(ex$beta, K, y, 10, 0.05, ex$b)
    expect_lt(abs(evidence(fit, "eq16") - ref), 1e-6 * abs(ref))
  }
})

test_that("the df of logLik() counts what was estimated from the response", {
  skip_on_cran()
  d <- sinc_data(30, seed = 10)
  k <- rbf_kernel(sqrt(2))
  df <- function(fit) attr(logLik(fit), "df")
  expect_identical(df(svr(d$x, d$y, kernel = k, scale = FALSE)), 0L)
  expect_identical(df(svr(d$x, d$y, kernel = k, C = 1)), 2L)
  # by default the evidence chooses C on scaled data, and whether to add an
  # offset: two more; with the offset given, one
  expect_identical(df(svr(d$x, d$y, kernel = k)), 4L)
  expect_identical(df(svr(d$x, d$y, kernel = k, bias = 1)), 3L)
  expect_identical(df(svr(d$x, d$y, kernel = k, bias = TRUE, scale = FALSE)), 1L)
  expect_identical(df(svr(d$x, d$y, kernel = k, optimize = TRUE, scale = FALSE)), 1L)
  expect_identical(df(suppressWarnings(svr(d$x, d$y, kernel = k, bias = TRUE, optimize = TRUE,
                                           control = svr_control(C_search = "fixed_point")))), 4L)
  expect_identical(df(mfsvr(d$x, d$y, kernel = k, scale = FALSE)), 0L)
  # at a C given the evidence still weighs the offset against none
  expect_identical(df(mfsvr(d$x, d$y, kernel = k, C = 5)), 3L)
  expect_identical(df(mfsvr(d$x, d$y, kernel = k, C = 5, bias = 1)), 2L)
  # by default the evidence chooses C on scaled data, and whether to add an
  # offset: two more; with the offset given, one
  expect_identical(df(mfsvr(d$x, d$y, kernel = k)), 4L)
  expect_identical(df(mfsvr(d$x, d$y, kernel = k, bias = 0)), 3L)
  expect_identical(df(suppressWarnings(mfsvr(d$x, d$y, kernel = k, optimize = c("C", "epsilon"),
                                             scale = FALSE))), 2L)
  expect_identical(df(suppressWarnings(mfsvr(d$x, d$y, kernel = k, optimize = TRUE))), 6L)
  r <- rvm(d$x, d$y, kernel = k)
  expect_identical(df(r), length(r$prior_precision) + 1L + 2L)
  s <- srvm(d$x, d$y, kernel = k, scale = FALSE)
  expect_identical(df(s), length(s$prior_precision) + 2L)
  s1 <- srvm(d$x, d$y, kernel = k, control = srvm_control(lambda = 0.5), scale = FALSE)
  expect_identical(df(s1), length(s1$prior_precision) + 1L)
  s2 <- srvm(d$x, d$y, kernel = k, control = srvm_control(lambda = 0.5, sigma2 = 0.01))
  expect_identical(df(s2), length(s2$prior_precision) + 2L)
  # AIC() adds 2 df to -2 log L
  expect_equal(AIC(r), -2 * as.numeric(logLik(r)) + 2 * df(r))
})

test_that("relevance vector fits on a polynomial kernel count the alphas the data tell apart", {
  # the rank of the map from the kept alphas to the targets' covariance,
  # from the n^2 entries of each kept function's outer product phi_j phi_j'
  # (the bias among them), in plain R
  covariance_rank <- function(fit) {
    centres <- fit$x[fit$relevance_vectors, , drop = FALSE]
    phi <- cbind(1, kernel_matrix(fit$kernel, fit$x, centres))
    qr(sapply(seq_len(ncol(phi)), function(j) as.vector(tcrossprod(phi[, j]))), tol = 1e-9)$rank
  }
  df <- function(fit) attr(logLik(fit), "df")
  # one input: every linear basis function x x_j is a multiple of x, so the
  # kept alphas move the model through one sum (and the bias's alpha)
  r <- rvm(cars$speed, cars$dist, kernel = linear_kernel(), scale = FALSE)
  s <- srvm(cars$speed, cars$dist, kernel = linear_kernel(), scale = FALSE)
  expect_gt(length(s$prior_precision), 3L)  # srvm() keeps a share of many
  expect_identical(covariance_rank(s), 2L)
  # (+ sigma^2; lambda is not counted: D^2 of a linear function is 0)
  expect_identical(df(r), covariance_rank(r) + 1L)
  expect_identical(df(s), covariance_rank(s) + 1L)
  expect_equal(as.numeric(logLik(s)), as.numeric(logLik(r)), tolerance = 1e-6)
  # four inputs: kept functions in general position count one each
  x <- scale(as.matrix(LifeCycleSavings[-1]))
  s4 <- srvm(x, LifeCycleSavings$sr, kernel = linear_kernel(), scale = FALSE)
  expect_identical(df(s4), covariance_rank(s4) + 1L)
  expect_identical(covariance_rank(s4), length(s4$prior_precision))
  # a penalty on first derivatives acts on linear functions: lambda counts
  s1 <- srvm(cars$speed, cars$dist, kernel = linear_kernel(), penalty = roughness_penalty(1),
             scale = FALSE)
  expect_identical(df(s1), covariance_rank(s1) + 2L)
})

test_that("scale = FALSE gives exactly the fits of the internal fitters on the data as given", {
  d <- sinc_data(40, seed = 11)
  x <- matrix(d$x)
  k <- rbf_kernel(1.5)
  z <- c(-12, -1, 0.3, 8)
  a <- svr(d$x, d$y, C = 3, epsilon = 0.1, kernel = k, bias = TRUE, scale = FALSE)
  b <- gpsvm:::.svr_fit(x, d$y, 3, 0.1, k, TRUE, svr_control())
  for (f in c("beta", "b", "fitted.values", "residuals", "objective", "partition")) {
    expect_identical(a[[f]], b[[f]], info = f)
  }
  expect_identical(as.numeric(logLik(a)), gpsvm:::.svr_log_evidence(b, "ep"))
  expect_identical(predict(a, z), gpsvm:::.svr_mean(b, matrix(z)))
  expect_identical(unname(predict(a, z, se.fit = TRUE)$se.fit),
                   sqrt(gpsvm:::.svr_latent_variance(b, matrix(z))))
  a <- mfsvr(d$x, d$y, C = 3, epsilon = 0.1, kernel = k, scale = FALSE)
  b <- gpsvm:::.mfsvr_fit(x, d$y, 3, 0.1, k, mfsvr_control())
  for (f in c("coefficients", "fitted.values", "residuals", "variance", "site_precision")) {
    expect_identical(a[[f]], b[[f]], info = f)
  }
  expect_identical(as.numeric(logLik(a)), b$log_evidence)
  # the relevance vector machines, against the core called directly
  a <- rvm(d$x, d$y, kernel = k, scale = FALSE)
  # (rvm() allows 10000 steps for fewer than 2500 candidate centres)
  core <- gpsvm:::cpp_rvm_fit(k, x, d$y, unclass(rvm_control(max_iter = 10000)))
  expect_identical(unname(coef(a)), core$mu)
  expect_identical(a$noise_variance, core$sigma2)
  expect_identical(as.numeric(logLik(a)), core$log_lik)
  a <- srvm(d$x, d$y, kernel = k, scale = FALSE)
  core <- gpsvm:::cpp_rvm_fit(k, x, d$y, unclass(srvm_control(lambda_init = 1e4)),
                              list(points = x, orders = 2L, weights = 1))
  expect_identical(unname(coef(a)), core$mu)
  expect_identical(a$lambda, core$lambda)
  expect_identical(as.numeric(logLik(a)), core$log_lik)
})

test_that("input scaling: constant columns warn and are centred, factor dummies stay, y is standardised", {
  set.seed(12)
  d <- data.frame(u = rnorm(30, 100, 20), w = 7, g = factor(rep(c("p", "q", "r"), 10)))
  d$y <- d$u / 10 + as.integer(d$g) + rnorm(30)
  expect_warning(fit <- rvm(y ~ u + w + g, data = d),
                 "constant input column\\(s\\) centred to 0, not scaled: w")
  s <- fit$scaling
  expect_equal(s$center[["u"]], mean(d$u))
  expect_equal(s$scale[["u"]], sd(d$u))
  expect_identical(unname(s$center[c("w", "gp", "gq", "gr")]), c(7, 0, 0, 0))
  expect_identical(unname(fit$x[, "w"]), rep(0, 30))
  expect_identical(unname(s$scale[c("w", "gp", "gq", "gr")]), c(1, 1, 1, 1))
  expect_equal(fit$response_scaling, list(center = mean(d$y), scale = sd(d$y)))
  expect_equal(unname(fit$x[, "gq"]), as.numeric(d$g == "q"))
  # a matrix input: every numeric column is scaled
  x <- cbind(u = d$u, v = rep(0:1, 15))
  f <- svr(x, d$y, kernel = rbf_kernel(1))
  expect_equal(unname(f$scaling$scale), c(sd(d$u), sd(x[, 2])))
  expect_error(svr(x, d$y, scale = NA), "'scale' must be TRUE or FALSE")
  expect_error(rvm(x, d$y, scale = "yes"), "'scale' must be TRUE or FALSE")
})

test_that("the default kernel takes its width from the scaled inputs and says so", {
  d <- awkward_data(seed = 13)
  x <- as.matrix(d[c("a", "b")])
  fit <- mfsvr(x, d$y, C = 5, bias = 0, optimize = FALSE, scale = TRUE)
  # the width rule of ?kernels applied to the inputs standardised by hand
  # (not to the raw inputs, whose width would be about 300)
  sigest <- gpsvm:::.data_driven_width(scale(x))
  # (then the Matern kernels at the winning Gaussian width, after them)
  gaussian <- fit$kernel_choice[!startsWith(fit$kernel_choice$rule, "Matern"), ]
  expect_equal(gaussian$sigma, c(NA, sigest, 1))
  expect_gt(gpsvm:::.data_driven_width(x), 20 * sigest)
  # the evidence chose one of the two rules' widths (the linear kernel, the
  # first candidate of the record, has the lowest evidence here), and
  # print() says which
  expect_identical(which.min(fit$kernel_choice$log_evidence), 1L)
  chosen <- gaussian$log_evidence[3] > gaussian$log_evidence[2]
  width <- gaussian$sigma[2 + chosen]
  expect_equal(fit$kernel$sigma, width * switch(fit$kernel$type, rbf = 1,
                                                matern = c(sqrt(5 / 3), sqrt(3))[3.5 - fit$kernel$nu]))
  if (fit$kernel$type == "rbf") {
    expect_output(print(fit), if (chosen) "sigma = 1 \\(e1071's gamma = 1/p" else
      "sigma = [0-9.]+ \\(chosen from the data\\)")
  }
  expect_identical(rvm(x, d$y)$kernel$sigma, sigest)
  # an explicit width is kept as given
  expect_identical(svr(x, d$y, kernel = rbf_kernel(0.7))$kernel$sigma, 0.7)
})

test_that("na.exclude pads fitted, residuals and predict() as lm() does; NA rows of newdata give NA", {
  skip_on_cran()
  set.seed(14)
  d <- data.frame(u = runif(30, 0, 10), w = runif(30))
  d$y <- sin(d$u) + d$w + rnorm(30, sd = 0.1)
  d$y[c(3, 17)] <- NA
  d$w[25] <- NA
  ref <- lm(y ~ u + w, data = d, na.action = na.exclude)
  glm_out <- capture.output(print(glm(y ~ u + w, data = d)))
  glm_line <- trimws(grep("missingness", glm_out, value = TRUE))
  expect_identical(glm_line, "(3 observations deleted due to missingness)")
  new <- data.frame(u = c(1, NA, 5, 7), w = c(0.5, 0.2, NA, 0.1))
  for (fitter in list(svr, mfsvr, rvm, srvm)) {
    fit <- fitter(y ~ u + w, data = d, na.action = na.exclude)
    expect_identical(nobs(fit), 27L)
    expect_identical(names(fitted(fit)), names(fitted(ref)))
    expect_identical(which(is.na(fitted(fit))), which(is.na(fitted(ref))))
    expect_identical(which(is.na(residuals(fit))), which(is.na(residuals(ref))))
    p <- predict(fit, interval = "prediction")
    expect_identical(dim(p), c(30L, 3L))
    expect_identical(which(is.na(p[, "fit"])), which(is.na(fitted(ref))))
    expect_equal(p[!is.na(p[, 1]), "fit"], fitted(fit)[!is.na(fitted(fit))])
    s <- predict(fit, se.fit = TRUE)
    expect_length(s$se.fit, 30L)
    # newdata: NA where a row has a missing input, the rest as without them
    q <- predict(fit, new, interval = "confidence")
    expect_identical(rownames(q), as.character(1:4))
    expect_true(all(is.na(q[2:3, ])))
    expect_equal(q[c(1, 4), ], predict(fit, new[c(1, 4), ], interval = "confidence"),
                 ignore_attr = TRUE)
    expect_equal(unname(predict(fit, new, se.fit = TRUE)$se.fit[c(1, 4)]),
                 unname(predict(fit, new[c(1, 4), ], se.fit = TRUE)$se.fit))
    expect_true(all(is.na(predict(fit, new[2:3, ]))))
    # na.omit drops the rows, as lm() does
    omit <- fitter(y ~ u + w, data = d)
    expect_length(fitted(omit), 27L)
    expect_length(predict(omit), 27L)
    # print() and summary() say so, in glm()'s words
    for (f in list(fit, omit)) {
      expect_output(print(f), glm_line, fixed = TRUE)
      expect_output(print(summary(f)), paste("27 observations", glm_line), fixed = TRUE)
    }
    expect_false(any(grepl("missingness", capture.output(print(fitter(y ~ u, data = d[-c(3, 17), ]))))))
  }
  # a matrix fit takes NA rows in newdata too
  fit <- svr(cbind(d$u, d$w)[!is.na(d$y) & !is.na(d$w), ], d$y[!is.na(d$y) & !is.na(d$w)])
  expect_identical(is.na(predict(fit, cbind(c(1, NA), c(0.5, 0.5)))), c(FALSE, TRUE))
})

test_that("predict(na.action =) treats NA rows of newdata as predict.lm() does", {
  set.seed(41)
  d <- data.frame(u = runif(30, 0, 10), w = runif(30))
  d$y <- sin(d$u) + d$w + rnorm(30, sd = 0.1)
  new <- data.frame(u = c(1, NA, 5, 7), w = c(0.5, 0.2, NA, 0.1), row.names = c("a", "b", "c", "d"))
  ref <- lm(y ~ u + w, data = d)
  for (fitter in list(svr, mfsvr, rvm, srvm)) {
    fit <- fitter(y ~ u + w, data = d)
    whole <- predict(fit, new[c(1, 4), ], interval = "prediction")
    for (action in list(na.omit, "na.omit")) {
      p <- predict(fit, new, interval = "prediction", na.action = action)
      expect_identical(rownames(p), rownames(predict(ref, new, interval = "prediction",
                                                      na.action = na.omit)))
      expect_equal(p, whole)
    }
    s <- predict(fit, new, se.fit = TRUE, na.action = na.omit)
    expect_identical(names(s$se.fit), c("a", "d"))
    # the default na.pass, and na.exclude (which predict.lm() treats as
    # na.omit for newdata): a row for each row of newdata, NA where an input
    # is missing
    for (action in list(na.exclude, na.pass)) {
      p <- predict(fit, new, na.action = action)
      expect_identical(names(p), names(predict(ref, new, na.action = na.pass)))
      expect_identical(unname(is.na(p)), c(FALSE, TRUE, TRUE, FALSE))
    }
    expect_error(predict(fit, new, na.action = na.fail), "'newdata' has missing values")
    expect_equal(predict(fit, new[c(1, 4), ], na.action = na.fail), whole[, "fit"])
    expect_length(predict(fit, new[2:3, ], na.action = na.omit), 0L)
    expect_error(predict(fit, new, na.action = 1), "'na.action' must be a function")
  }
})

test_that("plot() draws a transformed formula against its variable, through the formula", {
  skip_on_cran()
  set.seed(15)
  d <- data.frame(x = runif(40, 1, 100))
  d$y <- 3 * log(d$x) + rnorm(40, sd = 0.2)
  pdf(NULL)
  on.exit(dev.off())
  for (fitter in list(svr, mfsvr, rvm, srvm)) {
    fit <- fitter(y ~ log(x), data = d)
    axis <- gpsvm:::.plot_axis(fit, 0L)
    expect_identical(axis$name, "x")
    expect_identical(axis$values, d$x)
    grid <- c(20, 50, 90)
    # the curve at x is the fit at log(x), closer to the truth than the fit
    # at log(log(x)) that was drawn before
    p <- gpsvm:::.predict_rows(fit, axis$inputs(grid)$x, list(deriv = 0L, wrt = 1L), FALSE)
    expect_equal(unname(p$fit), unname(predict(fit, data.frame(x = grid))))
    wrong <- predict(fit, data.frame(x = log(grid)))
    expect_true(all(abs(p$fit - 3 * log(grid)) < abs(wrong - 3 * log(grid))))
    expect_invisible(plot(fit))
    # a derivative is in log(x), drawn against log(x)
    expect_identical(gpsvm:::.plot_axis(fit, 1L)$name, "log(x)")
    expect_equal(range(gpsvm:::.plot_axis(fit, 1L)$values), range(log(d$x)))
    expect_invisible(plot(fit, deriv = 1, truth = function(u) rep(3, length(u))))
  }
  # several design columns from one variable: drawn against it
  expect_invisible(plot(rvm(y ~ poly(x, 2), data = d)))
  expect_error(plot(rvm(y ~ poly(x, 2), data = d), deriv = 1), "one input column")
  expect_invisible(plot(svr(d$x, d$y), bound = TRUE, level = 0.8))
  expect_invisible(plot(mfsvr(d$x, d$y), level = NA, legend = NULL))
  # several inputs: observed against fitted, with the training points'
  # prediction intervals in the data's units
  two <- data.frame(x1 = d$x, x2 = sqrt(d$x), y = d$y)
  for (fitter in list(svr, mfsvr, rvm, srvm)) {
    fit <- fitter(y ~ x1 + x2, data = two)
    expect_invisible(plot(fit))
    expect_invisible(plot(fit, level = NA, legend = NULL))
    drawn <- gpsvm:::.predict_rows(fit, fit$x, list(deriv = 0L, wrt = 1L), TRUE, "prediction", 0.95)
    expected <- predict(fit, two, interval = "prediction")
    expect_equal(unname(drawn$lower), unname(expected[, "lwr"]))
    expect_equal(unname(drawn$fit), unname(fitted(fit)))
    expect_error(plot(fit, deriv = 1), "one input column")
  }
})

test_that("update() refits every model with changed arguments, data or formula", {
  skip_on_cran()
  set.seed(16)
  d <- data.frame(u = runif(30, -3, 3), w = runif(30))
  d$y <- sin(d$u) + d$w + rnorm(30, sd = 0.1)
  x <- as.matrix(d[c("u", "w")])
  y <- d$y
  fits <- list(svr(y ~ u + w, data = d), svr(x, y), mfsvr(y ~ u + w, data = d), mfsvr(x, y),
               rvm(y ~ u + w, data = d), rvm(x, y), srvm(y ~ u + w, data = d), srvm(x, y))
  for (fit in fits) {
    model <- class(fit)[1]
    formula_fit <- !is.null(fit$terms)
    expect_identical(update(fit, kernel = rbf_kernel(0.5), evaluate = FALSE)$kernel,
                     quote(rbf_kernel(0.5)))
    k2 <- update(fit, kernel = rbf_kernel(0.5))
    expect_identical(k2$kernel$sigma, 0.5)
    expect_identical(deparse(k2$call$kernel), "rbf_kernel(0.5)")
    if (model %in% c("gpsvm_svr", "gpsvm_mfsvr")) {
      c10 <- update(fit, C = 10)
      direct <- if (formula_fit) {
        get(sub("gpsvm_", "", model))(y ~ u + w, data = d, C = 10)
      } else get(sub("gpsvm_", "", model))(x, y, C = 10)
      expect_identical(coef(c10), coef(direct), info = model)
    }
    if (formula_fit) {
      # formula() as lm's: the formula alone, not the terms' attributes
      expect_identical(attributes(formula(fit)), attributes(formula(lm(y ~ u + w, d))))
      expect_identical(deparse(formula(fit)), "y ~ u + w")
      expect_equal(model.matrix(fit), as.matrix(d[c("u", "w")]), ignore_attr = TRUE)
      expect_identical(colnames(model.matrix(fit)), c("u", "w"))
      # a number given as text is the wrong type, as for predict.lm
      expect_error(predict(fit, transform(d, w = as.character(w))),
                   "'newdata' does not fit the model: variable 'w' was fitted with type")
      sub_fit <- update(fit, data = d[1:20, ])
      expect_identical(nobs(sub_fit), 20L)
      one <- update(fit, . ~ . - w)
      expect_identical(colnames(one$x), "u")
      expect_equal(unname(coef(one)), unname(coef(update(fit, y ~ u))))
    } else {
      expect_error(formula(fit), "the fit has no formula: it was fitted to a matrix")
    }
  }
})

test_that("every formula method evaluates its 'data' expression once", {
  # an expression such as read.csv(...) as `data` must run once: the
  # partition check, the model frame, the raw variables and the response's
  # levels all take the value evaluated first
  calls <- new.env()
  calls$n <- 0L
  counted <- function(d) {
    calls$n <- calls$n + 1L
    d
  }
  set.seed(3)
  d <- data.frame(u = seq(-2, 2, length.out = 24), w = runif(24))
  d$y <- sin(d$u) + d$w / 4
  d$class <- factor(ifelse(d$y > 0.2, "a", "b"), levels = c("a", "b", "unused"))
  k <- rbf_kernel(1)
  # the calls as a user types them, `data` standing for the data argument
  fits <- list(
    mfsvr = quote(mfsvr(y ~ log(w) + u, data = data, C = 5, kernel = k, bias = 0,
                        calibration_folds = FALSE, subset = u < 1.9)),
    svr = quote(svr(y ~ u + w, data = data, C = 5, kernel = k, calibration_folds = FALSE)),
    rvm = quote(rvm(y ~ u + w, data = data, kernel = k, calibration_folds = FALSE)),
    srvm = quote(srvm(y ~ u, data = data, kernel = k, calibration_folds = FALSE)),
    gpc = quote(gpc(class ~ u + w, data = data, kernel = k, noise = 0.1)),
    svc = quote(svc(class ~ u + w, data = data, kernel = k)))
  for (model in names(fits)) {
    calls$n <- 0L
    fit <- eval(do.call(substitute, list(fits[[model]], list(data = quote(counted(d))))))
    expect_identical(calls$n, 1L, info = model)
    # the same fit as with the data frame named, and the call as typed
    plain <- eval(do.call(substitute, list(fits[[model]], list(data = quote(d)))))
    expect_identical(fitted(fit), fitted(plain), info = model)
    expect_identical(fit$variables, plain$variables, info = model)
    expect_identical(deparse(fit$call$data), "counted(d)", info = model)
    if (inherits(fit, "gpsvm_classifier")) {
      expect_identical(levels(fitted(fit)), c("a", "b", "unused"), info = model)
    }
  }
})

test_that("sigma() is the noise sd in the response's units", {
  d <- awkward_data(seed = 17)
  x <- as.matrix(d[c("a", "b")])
  C <- 4
  eps <- 0.2
  for (fit in list(svr(x, d$y, C = C, epsilon = eps), mfsvr(x, d$y, C = C, epsilon = eps))) {
    # the eq. (29) variance written out, on the scaled response
    v <- 2 / C^2 + eps^2 * (eps * C + 3) / (3 * (eps * C + 1))
    expect_equal(sigma(fit), sd(d$y) * sqrt(v))
  }
  r <- rvm(x, d$y)
  expect_equal(sigma(r), sd(d$y) * sqrt(r$noise_variance))
  r0 <- rvm(x, d$y, scale = FALSE)
  expect_equal(sigma(r0), sqrt(r0$noise_variance))
})

test_that("hard cases with scaling: one point, constant response, duplicates, an all-NA newdata", {
  for (fitter in list(svr, mfsvr, rvm, srvm)) {
    one <- fitter(2, 5)
    expect_identical(one$response_scaling, list(center = 5, scale = 1))
    expect_true(is.finite(logLik(one)))
    # one observation has no spread to set the response's units from:
    # standard errors and intervals are refused, the point prediction stays
    expect_identical(unname(predict(one, c(1, 2, 3))), c(5, 5, 5))
    expect_error(predict(one, c(1, 2, 3), interval = "confidence"),
                 "no spread \\(one observation\\).* scale = FALSE")
    expect_true(all(is.finite(predict(fitter(2, 5, scale = FALSE), c(1, 2, 3),
                                      interval = "confidence"))))
    cst <- fitter(1:10, rep(3, 10))
    expect_equal(unname(predict(cst, c(2.5, 20))), c(3, 3), tolerance = 1e-6)
    expect_error(predict(cst, 2, se.fit = TRUE), "all 10 values are 3")
    x <- rep(1:5, each = 3)
    dup <- fitter(x, sin(x) + rep(c(-0.1, 0, 0.1), 5))
    expect_true(all(is.finite(predict(dup, c(1.5, 3), se.fit = TRUE)$se.fit)))
  }
  fit <- svr(y ~ x, data = data.frame(x = 1:10, y = sin(1:10)))
  none <- predict(fit, data.frame(x = c(NA_real_, NA_real_)), interval = "prediction")
  expect_identical(dim(none), c(2L, 3L))
  expect_true(all(is.na(none)))
  expect_error(predict(fit, data.frame(x = NA_real_), bound = NA), "'bound'")
  expect_error(predict(mfsvr(1:5, 1:5), 2, bound = TRUE), "unknown argument")
})

test_that("a factor input left with one level is an error that names it, for every fitter", {
  d <- data.frame(x = 1:12, g = factor(rep(c("a", "b"), c(10, 2))), y = sin(1:12),
                  cls = factor(rep(c("u", "v"), 6)))
  for (fitter in list(svr, mfsvr, rvm, srvm)) {
    expect_error(fitter(y ~ x + g, data = d, subset = x <= 10), "input 'g' has a single level")
    # y is noise-free: the relevance vector machines warn that they interpolate
    expect_s3_class(suppressWarnings(fitter(y ~ x + g, data = d)), "gpsvm_regression")
  }
  for (fitter in list(gpc, svc)) {
    expect_error(fitter(cls ~ x + g, data = d, subset = x <= 10), "input 'g' has a single level")
  }
})

test_that("a variable the formula removes (Class ~ . - Id) is not needed by predict() or checked", {
  set.seed(3)
  n <- 40
  d <- data.frame(id = factor(sprintf("case%02d", seq_len(n))), x = runif(n, -2, 2),
                  a = factor(sample(c("p", "q"), n, TRUE)), b = factor(sample(c("r", "s", "t"), n, TRUE)),
                  const = factor(rep("one", n)))
  d$y <- sin(d$x) + 0.3 * (d$a == "q") * (d$b == "t") + rnorm(n, sd = 0.1)
  d$cls <- factor(ifelse(d$y > 0, "up", "down"))
  train <- d[1:30, ]
  test <- d[31:40, ]
  # every test row's identifier is a level the training data never had
  expect_false(any(test$id %in% train$id))
  # the reference: the same model on the data without the removed columns
  for (fitter in list(svr, mfsvr, rvm, srvm)) {
    fit <- fitter(y ~ . - id - const - cls, data = train)
    same <- fitter(y ~ ., data = train[c("x", "a", "b", "y")])
    expect_identical(names(fit$xlevels), c("a", "b"))
    expect_equal(predict(fit, test, interval = "prediction"),
                 predict(same, test, interval = "prediction"), tolerance = 1e-10)
    expect_equal(predict(fit, test[c("x", "a", "b")]), predict(same, test), tolerance = 1e-10)
  }
  for (fitter in list(gpc, svc)) {
    fit <- fitter(cls ~ . - id - const - y, data = train)
    same <- fitter(cls ~ ., data = train[c("x", "a", "b", "cls")])
    expect_equal(predict(fit, test, type = "link"), predict(same, test, type = "link"),
                 tolerance = 1e-10)
  }
  # the variables kept are reordered when the formula is rebuilt (x, b, a
  # here); the factors' interaction is coded alike in training and
  # prediction, and a poly() basis keeps the coefficients of the training data
  fit <- mfsvr(y ~ id + poly(x, 2) + b + a + a:b - b - id, data = train, C = 5)
  same <- mfsvr(y ~ poly(x, 2) + a + a:b, data = train[c("x", "a", "b", "y")], C = 5)
  expect_equal(predict(fit, test, se.fit = TRUE), predict(same, test, se.fit = TRUE),
               tolerance = 1e-10)
  expect_equal(fitted(fit), fitted(same), tolerance = 1e-10)
  expect_identical(all.vars(formula(fit)), c("y", "x", "a", "b"))
  # a removed variable's NA still drops its row, as in lm() (which refuses
  # the one-level factor even when the formula removes it)
  train$id[2] <- NA
  expect_identical(nobs(svr(y ~ . - id - const - cls, data = train)), 29L)
  expect_identical(nobs(lm(y ~ . - id - cls, data = train[names(train) != "const"])), 29L)
})

test_that("newdata without rows gives empty predictions, and one without a variable an error", {
  skip_on_cran()
  set.seed(5)
  d <- data.frame(u = runif(30, -2, 2), v = runif(30))
  d$y <- sin(d$u) + d$v + rnorm(30, sd = 0.1)
  d$cls <- factor(ifelse(d$y > 0.5, "up", "down"))
  # a vector named like an input, of the training length, in the formula's
  # environment: model.frame() would take it for the absent column
  v <- rev(d$v)
  for (fitter in list(svr, mfsvr, rvm, srvm)) {
    fit <- fitter(y ~ u + v, data = d)
    # as predict.lm(): no rows in, none out
    reference <- predict(lm(y ~ u + v, data = d), d[0, ], interval = "prediction")
    expect_identical(unname(predict(fit, d[0, ])), numeric(0))
    expect_identical(dim(predict(fit, d[0, ], interval = "prediction")), dim(reference))
    expect_length(predict(fit, d[0, ], se.fit = TRUE)$se.fit, 0L)
    expect_length(predict(fit, d[0, ], deriv = 1, wrt = "u"), 0L)
    expect_identical(nrow(augment(fit, newdata = d[0, ])), 0L)
    expect_error(predict(fit, d["u"]), "'newdata' lacks the variable\\(s\\) v that the model uses")
    matrix_fit <- fitter(as.matrix(d[c("u", "v")]), d$y)
    expect_length(predict(matrix_fit, matrix(numeric(0), 0, 2)), 0L)
  }
  for (fitter in list(gpc, svc)) {
    fit <- fitter(cls ~ u + v, data = d)
    expect_identical(predict(fit, d[0, ]), factor(character(0), levels = c("down", "up")))
    expect_length(predict(fit, d[0, ], type = "link"), 0L)
    expect_identical(nrow(augment(fit, newdata = d[0, ])), 0L)
    expect_error(predict(fit, d["u"]), "'newdata' lacks the variable\\(s\\) v that the model uses")
  }
  expect_identical(dim(predict(gpc(cls ~ u + v, data = d), d[0, ], type = "prob")), c(0L, 2L))
  three <- gpc(Species ~ ., data = iris)
  expect_identical(dim(predict(three, iris[0, ], type = "prob")), c(0L, 3L))
  expect_identical(dim(predict(three, iris[0, ], type = "link")), c(0L, 3L))
  expect_length(predict(three, iris[0, ]), 0L)
})

test_that("every method works with kernlab and e1071 attached", {
  skip_on_cran()
  skip_if_not_installed("kernlab")
  skip_if_not_installed("e1071")
  attached <- setdiff(c("kernlab", "e1071"), sub("package:", "", search()))
  for (pkg in attached) suppressPackageStartupMessages(library(pkg, character.only = TRUE))
  on.exit(for (pkg in attached) detach(paste0("package:", pkg), character.only = TRUE),
          add = TRUE)
  d <- data.frame(u = seq(-3, 3, length.out = 25))
  d$y <- sin(d$u) + 0.1 * cos(7 * d$u)
  pdf(NULL)
  on.exit(dev.off(), add = TRUE)
  # kernlab's rvm() now masks gpsvm's: call gpsvm's by name
  for (fitter in list(gpsvm::svr, gpsvm::mfsvr, gpsvm::rvm, gpsvm::srvm)) {
    fit <- fitter(y ~ u, data = d)
    expect_output(print(fit), "Log evidence")
    expect_output(print(summary(fit)), "Residuals")
    expect_s3_class(summary(fit), "summary.gpsvm_regression")
    expect_length(predict(fit), 25L)
    expect_identical(dim(predict(fit, d, interval = "prediction")), c(25L, 3L))
    expect_length(fitted(fit), 25L)
    expect_length(residuals(fit), 25L)
    expect_equal(unname(fitted(fit) + residuals(fit)), d$y)
    expect_true(is.numeric(coef(fit)))
    expect_identical(nobs(fit), 25L)
    expect_s3_class(logLik(fit), "logLik")
    expect_true(is.finite(AIC(fit)) && is.finite(BIC(fit)))
    expect_true(sigma(fit) > 0)
    expect_invisible(plot(fit))
    # (y is noise-free, and srvm() on 20 of its points warns that it interpolates)
    expect_s3_class(suppressWarnings(update(fit, data = d[1:20, ])), class(fit)[1])
  }
})

test_that("on real data the default fits beat the mean and their 95% intervals cover", {
  skip_if_small_tests("a statistical property of the defaults on 354 rows of BostonHousing")
  skip_if_not_installed("mlbench")
  data(BostonHousing, package = "mlbench", envir = environment())
  set.seed(18)
  idx <- sample(nrow(BostonHousing), 354)
  train <- BostonHousing[idx, ]
  test <- BostonHousing[-idx, ]
  for (fitter in list(svr, mfsvr, rvm, srvm)) {
    fit <- fitter(medv ~ ., data = train)
    p <- predict(fit, test, interval = "prediction")
    # predicting the training mean gives about sd(medv) = 9; unscaled
    # defaults gave 24
    expect_lt(sqrt(mean((test$medv - p[, "fit"])^2)), 0.5 * sd(test$medv))
    expect_gt(mean(test$medv >= p[, "lwr"] & test$medv <= p[, "upr"]), 0.75)
  }
})
