# Inducing-point (FITC) fits of mfsvr() and gpc(method = "tap"): the dense
# model when the inducing inputs are the training inputs, a plain-R FITC EP
# where FITC differs, gradients by central differences, predictions against
# the plain-R FITC posterior, and bad input.

# A wiggly function of two inputs: a few inducing points cannot follow it.
wiggly_data <- function(n, seed) {
  set.seed(seed)
  x <- matrix(runif(2 * n, -2, 2), ncol = 2)
  list(x = x, y = sin(3 * x[, 1]) * cos(2 * x[, 2]) + rnorm(n, sd = 0.1))
}

# The FITC prior covariance written out: Q + diag(K - Q), Q = K_nz K_zz^-1
# K_zn with the jitter the package documents (1e-8 times the mean diagonal).
fitc_gram <- function(x, z, sigma, extra = 0, constant = 0) {
  Kzz <- rbf_gram(z, sigma) + constant
  Kzz <- Kzz + diag(1e-8 * mean(diag(Kzz)), nrow(z))
  Knz <- rbf_gram(x, sigma, z) + constant
  Q <- Knz %*% solve(Kzz, t(Knz))
  list(K = Q + diag(1 + constant - diag(Q) + extra), Knz = Knz, Kzz = Kzz)
}

# The step likelihood Theta(y f) on the noisy process: log Z = log Phi(z).
step_moments <- function(y) {
  function(i, m, v) {
    z <- y[i] * m / sqrt(v)
    G <- exp(dnorm(z, log = TRUE) - pnorm(z, log.p = TRUE))
    c(pnorm(z, log.p = TRUE), y[i] * G / sqrt(v), -G * (z + G) / v)
  }
}

# The epsilon-insensitive likelihood's tilted moments by quadrature: log Z
# and, from the tilted mean and variance, d log Z / dm = (E f - m) / v and
# d2 log Z / dm2 = (Var f - v) / v^2.
epsins_moments <- function(t, C, eps) {
  function(i, m, v) {
    s <- sqrt(v)
    g <- function(f, p) epsins_density(t[i], f, C, eps) * dnorm(f, m, s) * f^p
    cuts <- sort(c(m - 12 * s, t[i] - eps, t[i] + eps, m + 12 * s,
                   t[i] - eps - 40 / C, t[i] + eps + 40 / C))
    cuts <- cuts[cuts >= min(m - 12 * s, t[i] - eps) - 40 / C]
    mom <- vapply(0:2, function(p) {
      sum(vapply(seq_len(length(cuts) - 1L), function(k) {
        integrate(g, cuts[k], cuts[k + 1L], p = p, rel.tol = 1e-12, abs.tol = 0)$value
      }, numeric(1)))
    }, numeric(1))
    Ef <- mom[2] / mom[1]; Vf <- mom[3] / mom[1] - Ef^2
    c(log(mom[1]), (Ef - m) / v, (Vf - v) / v^2)
  }
}

tap_control <- function(schedule = "parallel", damping = 1, ...) {
  list(tol = 1e-12, max_iter = 1000L, schedule = schedule, damping = damping, seed = 1, ...)
}

tap_fitc <- function(x, y, z, sigma, noise, kappa, gradient = FALSE, ...) {
  gpsvm:::cpp_gpc_tap_fit(list(kernel = rbf_kernel(sigma), noise = noise, kappa = kappa,
                               inducing = z),
                          x, y, tap_control(...), list(), gradient)
}

mfsvr_fitc <- function(x, y, z, C, eps, sigma, gradient = FALSE) {
  gpsvm:::.mfsvr_fit(x, y, C, eps, rbf_kernel(sigma), mfsvr_control(tol = 1e-12),
                     gradient = gradient, inducing = z)
}

test_that("mfsvr: with the training inputs as inducing inputs FITC is the dense model", {
  d <- wiggly_data(40, 1)
  k <- rbf_kernel(0.5)
  ctl <- mfsvr_control(rank_tol = 0, tol = 1e-12)
  dense <- mfsvr(d$x, d$y, C = 5, epsilon = 0.1, kernel = k, control = ctl, scale = FALSE)
  fitc <- mfsvr(d$x, d$y, C = 5, epsilon = 0.1, kernel = k, control = ctl, scale = FALSE,
                inducing = d$x)
  # the jitter 1e-8 on K_zz is the only difference
  expect_equal(fitc$log_evidence, dense$log_evidence, tolerance = 1e-7)
  expect_equal(unname(coef(fitc)), unname(coef(dense)), tolerance = 1e-6)
  expect_equal(fitc$variance, dense$variance, tolerance = 1e-6)
  expect_equal(fitted(fitc), fitted(dense), tolerance = 1e-6)
  new <- matrix(runif(30, -2.5, 2.5), ncol = 2)
  pd <- predict(dense, new, se.fit = TRUE)
  pf <- predict(fitc, new, se.fit = TRUE)
  expect_equal(pf$fit, pd$fit, tolerance = 1e-6)
  expect_equal(pf$se.fit, pd$se.fit, tolerance = 1e-6)
  # derivatives too
  expect_equal(predict(fitc, new, deriv = 1, wrt = 2), predict(dense, new, deriv = 1, wrt = 2),
               tolerance = 1e-6)
  gd <- gpsvm:::.mfsvr_fit(d$x, d$y, 5, 0.1, k, ctl, gradient = TRUE)$gradient
  gf <- gpsvm:::.mfsvr_fit(d$x, d$y, 5, 0.1, k, ctl, gradient = TRUE, inducing = d$x)$gradient
  expect_equal(gf, gd, tolerance = 1e-6)
  expect_match(paste(capture.output(print(fitc)), collapse = "\n"),
               "sparse: FITC prior with 40 inducing inputs")
})

test_that("gpc TAP: with the training inputs as inducing inputs FITC is the dense model", {
  # a width at which K_zz is well conditioned: the jitter 1e-8 on it then
  # moves the predictions by far less than 1e-6 (with a wide kernel, whose
  # matrix has eigenvalues below the jitter, FITC's Q_*n = K_*z (K_zz +
  # jI)^-1 K_zn and the dense K_*n part by up to 1e-5 here)
  d <- two_class_data(50, 3)
  for (kappa in c(0, 0.05)) {
    dense <- gpc(d$x, d$y, kernel = rbf_kernel(0.5), noise = 0.3, kappa = kappa, scale = FALSE,
                 control = gpc_control(tol = 1e-12))
    fitc <- gpc(d$x, d$y, kernel = rbf_kernel(0.5), noise = 0.3, kappa = kappa, scale = FALSE,
                control = gpc_control(tol = 1e-12), inducing = d$x)
    expect_equal(fitc$log_evidence, dense$log_evidence, tolerance = 1e-7)
    expect_equal(fitc$alpha, dense$alpha, tolerance = 1e-6)
    expect_equal(fitted(fitc, type = "link"), fitted(dense, type = "link"), tolerance = 1e-6)
    new <- matrix(rnorm(20), ncol = 2)
    expect_equal(predict(fitc, new, type = "prob"), predict(dense, new, type = "prob"),
                 tolerance = 1e-6)
    expect_equal(predict(fitc, new, type = "link", se.fit = TRUE),
                 predict(dense, new, type = "link", se.fit = TRUE), tolerance = 1e-6)
  }
  # the evidence gradient in (log sigma, log noise, kappa) of the two
  y <- ifelse(d$y == levels(factor(d$y))[2], 1, -1)
  gf <- tap_fitc(d$x, y, d$x, 0.5, 0.3, 0.05, gradient = TRUE)$gradient
  gd <- gpsvm:::cpp_gpc_tap_fit(list(kernel = rbf_kernel(0.5), noise = 0.3, kappa = 0.05), d$x,
                                y, tap_control(), list(), TRUE)$gradient
  expect_equal(gf, gd, tolerance = 1e-6)
})

test_that("gpc TAP with few inducing points: the evidence and posterior of a plain-R FITC EP", {
  d <- wiggly_data(30, 2)
  y <- ifelse(d$y > 0, 1, -1)
  z <- d$x[c(3, 9, 17, 25), ]
  prior <- fitc_gram(d$x, z, 0.6, extra = 0.2)
  ref <- ep_plain(prior$K, step_moments(y))
  # every schedule reaches the one fixed point (accelerated: the default)
  for (schedule in c("accelerated", "sequential", "parallel")) {
    fit <- tap_fitc(d$x, y, z, 0.6, 0.2, 0, schedule = schedule, damping = 0.7)
    expect_true(fit$convergence$converged)
    expect_equal(fit$log_evidence, ref$evidence, tolerance = 1e-8)
    expect_equal(fit$site_precision, ref$tau, tolerance = 1e-7)
    expect_equal(fit$mean, ref$mean, tolerance = 1e-8)
    expect_equal(fit$variance, diag(ref$Sigma), tolerance = 1e-8)
  }
  # FITC does differ from the dense model here
  dense <- ep_plain(rbf_gram(d$x, 0.6) + diag(0.2, 30), step_moments(y))
  expect_gt(abs(dense$evidence - ref$evidence), 1)
  # predictions: the FITC posterior of f(x*) given the sites, written out
  # as the Gaussian conditional with cross covariance Q_*n (noise-free)
  new <- matrix(runif(16, -2.5, 2.5), ncol = 2)
  Ksz <- rbf_gram(new, 0.6, z)
  Qsn <- Ksz %*% solve(prior$Kzz, t(prior$Knz))
  Qss <- rowSums((Ksz %*% solve(prior$Kzz)) * Ksz)
  A <- prior$K + diag(1 / ref$tau)
  mean_ref <- drop(Qsn %*% solve(A, ref$nu / ref$tau))
  # the test point keeps its own prior variance k(x*, x*) = 1
  var_ref <- 1 - rowSums((Qsn %*% solve(A)) * Qsn)
  got <- gpsvm:::cpp_ep_predict(list(kernel = rbf_kernel(0.6), inducing = z,
                                     inducing_weights = fit$inducing_weights,
                                     inducing_chol = fit$inducing_chol, chol = fit$chol),
                                new, TRUE, 0L, 1L)
  expect_equal(got$mean, mean_ref, tolerance = 1e-8)
  expect_equal(got$variance, var_ref, tolerance = 1e-8)
})

test_that("mfsvr with few inducing points: the evidence of a plain-R FITC EP", {
  d <- wiggly_data(20, 4)
  z <- d$x[c(2, 7, 11, 19), ]
  C <- 4; eps <- 0.1
  fit <- mfsvr_fitc(d$x, d$y, z, C, eps, 0.7)
  prior <- fitc_gram(d$x, z, 0.7)
  ref <- ep_plain(prior$K, epsins_moments(d$y, C, eps))
  expect_equal(fit$log_evidence, ref$evidence, tolerance = 1e-7)
  expect_equal(fit$site_precision, ref$tau, tolerance = 1e-6)
  dense <- mfsvr(d$x, d$y, C = C, epsilon = eps, kernel = rbf_kernel(0.7), scale = FALSE,
                 control = mfsvr_control(rank_tol = 0))
  expect_gt(abs(dense$log_evidence - fit$log_evidence), 1)
})

test_that("FITC evidence gradients match central differences", {
  d <- wiggly_data(40, 5)
  z <- d$x[seq(1, 40, by = 5), ]
  h <- 1e-4
  central <- function(f, p) {
    vapply(seq_along(p), function(k) {
      e <- replace(numeric(length(p)), k, h)
      (f(p + e) - f(p - e)) / (2 * h)
    }, numeric(1))
  }
  # mfsvr in (log C, log epsilon, log sigma)
  p0 <- log(c(5, 0.1, 0.6))
  ev <- function(p) mfsvr_fitc(d$x, d$y, z, exp(p[1]), exp(p[2]), exp(p[3]))$log_evidence
  g <- mfsvr_fitc(d$x, d$y, z, 5, 0.1, 0.6, gradient = TRUE)$gradient
  expect_equal(g, central(ev, p0), tolerance = 1e-6)
  # evidence(gradient = TRUE) gives the same with the inducing argument
  e <- ep_evidence(d$x, d$y, 5, 0.1, rbf_kernel(0.6), mfsvr_control(tol = 1e-12), inducing = z)
  expect_equal(unname(e$gradient), g, tolerance = 1e-10)
  expect_equal(e$log_evidence, ev(p0), tolerance = 1e-12)
  # the TAP classifier in (log sigma, log noise, kappa)
  y <- ifelse(d$y > 0, 1, -1)
  p1 <- c(log(0.8), log(0.3), 0.02)
  ev2 <- function(p) tap_fitc(d$x, y, z, exp(p[1]), exp(p[2]), p[3])$log_evidence
  res <- tap_fitc(d$x, y, z, 0.8, 0.3, 0.02, gradient = TRUE)
  expect_equal(res$clamped_sites, 0L)
  expect_equal(res$gradient, central(ev2, p1), tolerance = 1e-6)
})

test_that("optimize = TRUE runs on the FITC evidence with the inducing inputs fixed", {
  d <- wiggly_data(80, 6)
  fit <- mfsvr(d$x, d$y, inducing = 15, optimize = TRUE,
               search = search_control(hyperprior = FALSE))
  expect_true(fit$optimization$convergence$converged)
  expect_equal(nrow(fit$inducing), 15L)
  # at the optimum the FITC gradient (the search's) is small per observation
  expect_lt(max(abs(fit$gradient)) / 80, 1e-3)
  y <- factor(d$y > 0)
  g <- gpc(d$x, y, inducing = 15, optimize = TRUE)
  expect_true(g$optimization$convergence$converged)
  expect_match(paste(capture.output(print(g)), collapse = "\n"), "15 inducing inputs")
})

test_that("inducing = m: a deterministic greedy choice of distinct training inputs", {
  d <- wiggly_data(60, 7)
  a <- mfsvr(d$x, d$y, inducing = 12)
  set.seed(99)
  b <- mfsvr(d$x, d$y, inducing = 12)
  expect_identical(a$inducing, b$inducing)
  expect_equal(nrow(unique(a$inducing)), 12L)
  # the inducing inputs are training inputs (on the scaled inputs)
  expect_true(all(duplicated(rbind(a$x, a$inducing))[61:72]))
  # every input twice: at most the distinct inputs are used, never twice
  x2 <- rbind(d$x[1:5, ], d$x[1:5, ])
  y2 <- c(d$y[1:5], d$y[1:5] + 0.1)
  f <- mfsvr(x2, y2, inducing = 8)
  expect_equal(nrow(f$inducing), 5L)
  expect_true(all(is.finite(predict(f, x2, se.fit = TRUE)$se.fit)))
})

test_that("beyond 20000 observations the greedy choice runs on 20000 evenly spaced rows", {
  # the greedy choice in plain R (helper-mfsvr.R), a Gaussian kernel column
  # at a time
  greedy_columns_r <- function(x, sigma, m) {
    plain_greedy_pivots(function(j) exp(-(x - x[j])^2 / (2 * sigma^2)), rep(1, length(x)), m)
  }
  set.seed(14)
  n <- 20100L
  x <- runif(n, -3, 3)
  rows <- unique(round(seq(1, n, length.out = 20000L)))
  expect_length(rows, 20000L)
  # an isolated input on a row left out, which the choice among all rows takes
  lone <- setdiff(seq_len(n), rows)[50]
  x[lone] <- 10
  y <- sin(2 * x) + rnorm(n, sd = 0.1)
  expect_true(lone %in% greedy_columns_r(x, 0.7, 6))
  fit <- mfsvr(x, y, C = 5, kernel = rbf_kernel(0.7), scale = FALSE, inducing = 6,
               optimize = FALSE)
  expected <- rows[greedy_columns_r(x[rows], 0.7, 6)]
  expect_equal(c(fit$inducing), x[expected], tolerance = 0)
  expect_false(10 %in% fit$inducing)
  expect_length(fitted(fit), n)  # the fit itself uses every row
  # up to 20000 observations every row is a candidate
  small <- mfsvr(x[1:300], y[1:300], C = 5, kernel = rbf_kernel(0.7), scale = FALSE,
                 inducing = 6, optimize = FALSE)
  expect_equal(c(small$inducing), x[greedy_columns_r(x[1:300], 0.7, 6)], tolerance = 0)
})

test_that("beyond 20000 observations the default's low-rank test probes 20000 rows first", {
  skip_if_small_tests(paste("factors 20000 rows to 1001 pivots to cross the 20000-row switch;",
                            "the greedy choice's C++ code runs at small size above"))
  # no low rank (a narrow width on 6 inputs): the probe of 20000 evenly
  # spaced rows needs more than 1000 pivots, and the approximation takes the
  # inducing inputs that inducing = 500 takes
  set.seed(15)
  n <- 20100L
  x <- matrix(rnorm(6 * n), n)
  kernel <- rbf_kernel(0.4)
  z <- gpsvm:::.choose_prior(x, kernel, 1e-13)
  expect_true(isTRUE(attr(z, "approximation")))
  expect_equal(c(z), c(gpsvm:::.inducing_inputs(500, x, kernel, NULL)), tolerance = 0)
  # a low rank (one input, a wide width): every row is tested, and the
  # pivots are those of all rows
  u <- matrix(runif(n, -1, 1))
  low <- gpsvm:::.choose_prior(u, rbf_kernel(1), 1e-13)
  expect_true(isTRUE(attr(low, "low_rank")))
  expect_equal(c(low), u[gpsvm:::cpp_greedy_inducing(rbf_kernel(1), u, 1001L, 1e-13)],
               tolerance = 0)
})

test_that("a matrix of inducing inputs is given in the data's units and scaled", {
  d <- wiggly_data(50, 8)
  x <- d$x * 100 + 7
  z <- x[c(1, 10, 20, 30, 40), ]
  f <- mfsvr(x, d$y, inducing = z)
  expect_equal(unname(f$inducing), unname(scale(x)[c(1, 10, 20, 30, 40), ]), tolerance = 1e-12)
  # the same fit as with the count's points given explicitly
  g <- mfsvr(x, d$y, inducing = 9)
  zz <- sweep(sweep(g$inducing, 2, g$scaling$scale, "*"), 2, g$scaling$center, "+")
  h <- mfsvr(x, d$y, inducing = zz)
  expect_equal(h$log_evidence, g$log_evidence, tolerance = 1e-10)
})

test_that("bad inducing inputs: clear errors, never NaN", {
  d <- wiggly_data(20, 9)
  expect_error(mfsvr(d$x, d$y, inducing = 21), "'inducing' = 21 exceeds the number of observations")
  expect_error(mfsvr(d$x, d$y, inducing = 0), "'inducing' must be a whole number >= 1")
  expect_error(mfsvr(d$x, d$y, inducing = 2.5), "'inducing' must be a whole number")
  expect_error(mfsvr(d$x, d$y, inducing = "a"), "'inducing' must be a count or a numeric matrix")
  expect_error(mfsvr(d$x, d$y, inducing = matrix(0, 3, 3)), "'inducing' has 3 column")
  expect_error(mfsvr(d$x, d$y, inducing = d$x[c(1, 2, 1), ]), "'inducing' has duplicated rows")
  expect_error(mfsvr(d$x, d$y, inducing = rbind(d$x[1:2, ], c(NA, 1))), "missing values")
  expect_error(mfsvr(d$x, d$y, inducing = 5, control = mfsvr_control(algorithm = "paper")),
               "'inducing' needs mfsvr_control")
  y <- factor(d$y > 0)
  expect_error(gpc(d$x, y, method = "naive", inducing = 5), "'inducing' needs method = \"tap\"")
  expect_error(gpc(d$x, y, inducing = 25), "exceeds the number of observations")
  fit <- gpc(d$x, y, inducing = 5)
  expect_error(loo_error(fit, "exact"), "not available")
  # one inducing point, and one observation
  one <- mfsvr(d$x, d$y, inducing = 1)
  expect_true(all(is.finite(predict(one, d$x, se.fit = TRUE)$se.fit)))
  single <- mfsvr(d$x[1, , drop = FALSE], d$y[1], inducing = 1, scale = FALSE)
  expect_true(is.finite(single$log_evidence))
  # non-convergence of sparse EP warns with the shared warning
  expect_warning(mfsvr(d$x, d$y, C = 5, inducing = 5, control = mfsvr_control(max_iter = 1)),
                 "did not converge")
  expect_warning(gpc(d$x, y, inducing = 5, optimize = FALSE, control = gpc_control(max_iter = 1)),
                 "did not converge")
})

test_that("the low-rank path's cap is the user's: max_rank below the rank means dense", {
  d <- wiggly_data(60, 10)
  k <- rbf_kernel(1)
  dense <- mfsvr(d$x, d$y, kernel = k, control = mfsvr_control(rank_tol = 0))
  capped <- mfsvr(d$x, d$y, kernel = k, control = mfsvr_control(max_rank = 3))
  expect_null(capped$inducing)
  expect_equal(capped$log_evidence, dense$log_evidence, tolerance = 1e-12)
  low <- mfsvr(d$x, d$y, kernel = k, control = mfsvr_control(rank_tol = 1e-10, max_rank = 60))
  expect_true(isTRUE(attr(low$inducing, "low_rank")))
  expect_equal(low$log_evidence, dense$log_evidence, tolerance = 1e-6)
  expect_error(mfsvr_control(max_rank = 0), "'max_rank' must be a whole number >= 1")
})

test_that("gpc() beyond 1000 observations runs on the kernel matrix's pivots when it has a low rank", {
  skip_if_small_tests("fits 1100 rows to cross the 1000-row switch; the low-rank path's C++ code runs at small size above")
  d <- parabola_classes(1100, 41, labels = c("a", "b"))
  x <- d$x
  y <- factor(d$y)
  auto <- gpc(x, y)
  dense <- gpc(x, y, control = gpc_control(rank_tol = 0))
  expect_null(dense$inducing)
  expect_true(isTRUE(attr(auto$inducing, "low_rank")))
  # the pivots are training inputs, and with the kernel (and its bias
  # constant) written out in plain R they represent K: the Nystrom
  # approximation on them is K to far below the model's scale
  z <- auto$inducing
  expect_true(all(apply(z, 1, function(p) any(colSums(abs(t(auto$x) - p)) == 0))))
  s <- auto$kernel$sigma
  gauss <- function(a, b) exp(-outer(rowSums(a^2), rowSums(b^2), "+") / (2 * s^2) +
                                 tcrossprod(a, b) / s^2) + 1
  Knz <- gauss(auto$x, z)
  Q <- Knz %*% solve(gauss(z, z) + diag(1e-10, nrow(z)), t(Knz))
  expect_lt(max(abs(Q - gauss(auto$x, auto$x))), 1e-6)
  # the same model as the dense fit (each at its own searched values, so to
  # the search's tolerance; at the same values, to rounding: see above)
  xt <- matrix(rnorm(400), ncol = 2)
  expect_equal(predict(auto, xt, type = "prob"), predict(dense, xt, type = "prob"),
               tolerance = 1e-4)
  expect_equal(as.numeric(logLik(auto)), as.numeric(logLik(dense)), tolerance = 1e-6)
  expect_identical(loo_error(auto)$count, loo_error(dense)$count)
  expect_true(any(grepl("low rank: the kernel matrix to rank_tol", capture.output(print(auto)))))
  expect_error(loo_error(auto, "exact"), "gpc_control\\(rank_tol = 0\\)")
  # when it is not used: at most 1000 observations, rank_tol = 0, or a rank
  # above min(n / 2, 1000) (many inputs and a narrow kernel)
  k <- auto$kernel
  expect_null(gpsvm:::.choose_prior(auto$x[1:1000, ], k, 1e-13))
  expect_null(gpsvm:::.choose_prior(auto$x, k, 0))
  wide <- matrix(rnorm(1100 * 10), ncol = 10)
  expect_null(gpsvm:::.choose_prior(wide, rbf_kernel(0.5), 1e-13))
  expect_equal(nrow(gpsvm:::.choose_prior(auto$x, k, 1e-13)), nrow(z))
  expect_error(gpc_control(rank_tol = -1), "rank_tol")
  expect_error(gpc_control(rank_tol = 2), "rank_tol")
})

test_that("gpc()'s low-rank fit is the dense model to rounding: FITC on the factor's pivots without jitter", {
  # (the low-rank switch moved to 20 rows, so that it runs at small size)
  withr::local_options(gpsvm.size_policy = list(low_rank_min_n = 20))
  set.seed(7)
  n <- 80
  x <- matrix(runif(n, -3, 3))
  y <- factor(ifelse(sin(2 * x[, 1]) + rnorm(n, sd = 0.4) > 0, "b", "a"))
  low <- gpc(x, y, kernel = rbf_kernel(0.8), noise = 0.1, scale = FALSE)
  dense <- gpc(x, y, kernel = rbf_kernel(0.8), noise = 0.1, scale = FALSE,
               control = gpc_control(rank_tol = 0))
  z <- low$inducing
  expect_true(isTRUE(attr(z, "low_rank")))
  expect_null(dense$inducing)
  expect_lt(nrow(z), n / 2)
  # the fit keeps the pivots, not the n x r factor they came with
  expect_null(attr(z, "factor"))
  # the kernel with the bias constant, in plain R: the pivots' factor is the
  # Cholesky factor of K_PP itself (no jitter on its diagonal)
  K <- rbf_gram(x, 0.8) + low$kernel$constant
  Kzz <- rbf_gram(z, 0.8) + low$kernel$constant
  expect_equal(tcrossprod(low$inducing_chol), Kzz, tolerance = 1e-13)
  # EP in plain R on the dense noisy kernel matrix: the low-rank fit's
  # evidence and latent means, and the dense fit's, to EP's tolerance
  ref <- ep_plain(K + diag(0.1, n), step_moments(low$y))
  expect_equal(low$log_evidence, ref$evidence, tolerance = 1e-7)
  expect_equal(dense$log_evidence, ref$evidence, tolerance = 1e-7)
  expect_equal(unname(low$fitted.values), drop(K %*% solve(K + diag(0.1, n) + diag(1 / ref$tau),
                                                           ref$nu / ref$tau)), tolerance = 1e-6)
  # the two fits run EP on the same matrix to rounding: their sweeps agree
  # far below EP's tolerance (with FITC's jitter they differed by about 1e-6)
  expect_equal(low$log_evidence, dense$log_evidence, tolerance = 1e-11)
  expect_equal(low$fitted.values, dense$fitted.values, tolerance = 1e-10)
  new <- matrix(runif(50, -3, 3))
  expect_equal(predict(low, new, type = "prob"), predict(dense, new, type = "prob"),
               tolerance = 1e-10)
  # the same for the joint model of three classes
  y3 <- cut(x[, 1] + rnorm(n, sd = 0.3), c(-Inf, -1, 1, Inf), labels = c("a", "b", "c"))
  low3 <- gpc(x, y3, kernel = rbf_kernel(0.8), noise = 0.1, scale = FALSE, multiclass = "joint")
  dense3 <- gpc(x, y3, kernel = rbf_kernel(0.8), noise = 0.1, scale = FALSE, multiclass = "joint",
                control = gpc_control(rank_tol = 0))
  expect_true(isTRUE(attr(low3$inducing, "low_rank")))
  expect_equal(as.numeric(logLik(low3)), as.numeric(logLik(dense3)), tolerance = 1e-11)
  expect_equal(predict(low3, new, type = "prob"), predict(dense3, new, type = "prob"),
               tolerance = 1e-9)
  # a factor of another kernel is refused, not fitted
  bad <- gpsvm:::.choose_prior(x, low$kernel, 1e-13)
  expect_error(gpsvm:::cpp_gpc_tap_fit(list(kernel = gpsvm:::.with_width(low$kernel, 1.6),
                                            noise = 0.1, kappa = 0,
                                            inducing = bad), x, low$y, unclass(low$control),
                                       list()),
               "another kernel or other inputs")
})

test_that("optimize beyond 1000 observations searches a FITC evidence, then fits the full model", {
  skip_if_small_tests("fits 1100 rows to cross the 1000-row switch; the FITC search's C++ code runs at small size below")
  d <- parabola_classes(1100, 43, labels = c("a", "b"))
  x <- d$x
  y <- factor(d$y)
  fit <- gpc(x, y, optimize = TRUE, scale = FALSE)
  o <- fit$optimization
  expect_true(o$convergence$converged)
  expect_identical(o$search_inducing, 300L)
  expect_match(paste(capture.output(print(fit)), collapse = "\n"),
               "FITC evidence on 300 inducing inputs")
  # the search ran on the FITC prior of the greedy 300 at the starting
  # (data-driven) width: that prior, fitted on its own at the values found,
  # has the best evidence of the path
  start <- gpc(x, y, inducing = 300, scale = FALSE)
  sigma <- o$estimate[["sigma"]]
  noise <- o$estimate[["noise"]]
  on_z <- gpc(x, y, rbf_kernel(sigma), noise = noise, inducing = start$inducing, scale = FALSE)
  expect_equal(max(o$path$log_evidence, na.rm = TRUE), on_z$log_evidence, tolerance = 1e-6)
  # the fit itself is the full model at those values: the dense fit's
  # evidence and probabilities (the low-rank path's accuracy, see above)
  dense <- gpc(x, y, rbf_kernel(sigma), noise = noise, scale = FALSE,
               control = gpc_control(rank_tol = 0))
  expect_null(dense$inducing)
  expect_equal(fit$log_evidence, dense$log_evidence, tolerance = 1e-6)
  xt <- matrix(rnorm(400), ncol = 2)
  expect_equal(predict(fit, xt, type = "prob"), predict(dense, xt, type = "prob"),
               tolerance = 1e-4)
})

test_that("gpc_control(search_inducing): a FITC search at any n, or none; bad counts are errors", {
  skip_on_cran()
  d <- two_class_data(150, 12, noise = 0.6)
  full <- gpc(d$x, d$y, optimize = TRUE)
  expect_null(full$optimization$search_inducing)  # up to 1000 observations: the full prior
  fitc <- gpc(d$x, d$y, optimize = TRUE, control = gpc_control(search_inducing = 40))
  expect_identical(fitc$optimization$search_inducing, 40L)
  expect_null(fitc$inducing)
  # the full evidence at the values the FITC search found, against its
  # maximum, found independently by Nelder-Mead on dense fits from the full
  # search's answer (the searches stop at a gradient of 1e-3 per observation,
  # not at the maximum itself)
  evidence <- function(p) {
    gpc(d$x, d$y, rbf_kernel(exp(p[1])), noise = exp(p[2]),
        control = gpc_control(tol = 1e-10))$log_evidence
  }
  top <- stats::optim(log(full$optimization$estimate[c("sigma", "noise")]), evidence,
                      control = list(fnscale = -1, reltol = 1e-12))$value
  expect_lte(full$log_evidence, top + 1e-6)
  expect_gt(full$log_evidence, top - 0.01)
  expect_lte(fitc$log_evidence, top + 1e-6)
  expect_gt(fitc$log_evidence, top - 0.05)
  expect_error(gpc_control(search_inducing = -1), "search_inducing")
  expect_error(gpc_control(search_inducing = 2.5), "search_inducing")
  expect_error(gpc(d$x, d$y, optimize = TRUE, control = gpc_control(search_inducing = 151)),
               "search_inducing = 151\\) exceeds the number of observations \\(150\\)")
})

test_that("beyond 2000 observations a kernel matrix without a low rank gets the FITC approximation", {
  skip_if_small_tests("fits 2100 rows to cross the 2000-row switch; FITC's C++ code runs at small size above")
  # ten inputs and a narrow width: no 1000 pivots represent K
  set.seed(44)
  n <- 2100
  x <- matrix(rnorm(10 * n), n, 10)
  y <- factor(ifelse(x[, 1] + x[, 2]^2 - 1 + rnorm(n, sd = 0.5) > 0, "b", "a"))
  k <- rbf_kernel(1.5)
  # (width and noise given: no evidence search)
  auto <- gpc(x, y, k, noise = 0.1, scale = FALSE)
  expect_true(isTRUE(attr(auto$inducing, "approximation")))
  expect_identical(nrow(auto$inducing), 500L)
  # the model inducing = 500 fits: the same greedy inputs, the same fit
  explicit <- gpc(x, y, k, noise = 0.1, inducing = 500, scale = FALSE)
  expect_equal(unclass(auto$inducing)[, ], unclass(explicit$inducing)[, ], ignore_attr = TRUE)
  expect_equal(auto$log_evidence, explicit$log_evidence, tolerance = 1e-10)
  out <- capture.output(print(auto))
  expect_true(any(grepl("no low rank, so beyond 2000 observations the FITC prior on 500", out)))
  expect_error(loo_error(auto, "exact"), "a FITC approximation of it: refit with")
  # not used: up to 2000 observations (dense), or with rank_tol = 0
  expect_null(gpsvm:::.choose_prior(x[1:2000, ], k, 1e-13))
  expect_null(gpsvm:::.choose_prior(x, k, 0))
})

test_that("mfsvr() beyond 2000 observations without a low rank fits the FITC approximation", {
  skip_if_small_tests("fits 2100 rows to cross the 2000-row switch; FITC's C++ code runs at small size above")
  set.seed(45)
  n <- 2100
  x <- matrix(rnorm(10 * n), n, 10)
  y <- sin(x[, 1]) + x[, 2] / 2 + rnorm(n, sd = 0.3)
  k <- rbf_kernel(1.5)
  auto <- mfsvr(x, y, kernel = k, scale = FALSE)
  expect_true(isTRUE(attr(auto$inducing, "approximation")))
  expect_identical(nrow(auto$inducing), 500L)
  # the model inducing = 500 fits: the same greedy inputs, the same fit
  explicit <- mfsvr(x, y, kernel = k, inducing = 500, scale = FALSE)
  expect_equal(unclass(auto$inducing)[, ], unclass(explicit$inducing)[, ], ignore_attr = TRUE)
  expect_equal(auto$log_evidence, explicit$log_evidence, tolerance = 1e-10)
  expect_equal(predict(auto, x[1:5, ]), predict(explicit, x[1:5, ]), tolerance = 1e-10)
  out <- capture.output(print(auto))
  expect_true(any(grepl("FITC prior on 500 inducing inputs \\(mfsvr_control\\(rank_tol = 0\\)", out)))
  # not used: up to 2000 observations, with rank_tol = 0, or where pivots
  # represent K (one input: FITC made from the core's low-rank factor)
  expect_null(gpsvm:::.mfsvr_approximation(x[1:2000, ], k, mfsvr_control()))
  expect_null(gpsvm:::.mfsvr_approximation(x, k, mfsvr_control(rank_tol = 0)))
  one <- matrix(seq(-3, 3, length.out = n))
  expect_null(gpsvm:::.mfsvr_approximation(one, k, mfsvr_control()))
  low <- mfsvr(one, sin(one[, 1]) + rnorm(n, sd = 0.1), kernel = k, scale = FALSE)
  expect_true(isTRUE(attr(low$inducing, "low_rank")))
  expect_lt(nrow(low$inducing), 100L)
  # a width search takes the pivots at the width found: the fit returned is
  # the one optimize = FALSE makes there
  searched <- mfsvr(x, y, kernel = k, optimize = "sigma", scale = FALSE)
  expect_false(isTRUE(all.equal(searched$kernel$sigma, 1.5)))
  again <- mfsvr(x, y, kernel = rbf_kernel(searched$kernel$sigma), scale = FALSE)
  expect_equal(unclass(searched$inducing)[, ], unclass(again$inducing)[, ], ignore_attr = TRUE)
  expect_equal(searched$log_evidence, again$log_evidence, tolerance = 1e-8)
})
