# loo_error(): the linear-response formulas of sections 17.5-17.6 against
# plain-R transcriptions, exact refits against plain-R refit loops, and the
# approximation against the exact answer.

svc_tight <- svc_control(tol = 1e-22, max_iter = 200000)
gpc_tight <- gpc_control(tol = 1e-24, max_iter = 100000)

test_that("svc approximate margins are eqs. (17.29) and (17.31)", {
  d <- two_class_data(60, 21)
  C <- 3
  fit <- svc_paper(d$x, d$y, rbf_kernel(0.8), C = C, noise = 0.2, control = svc_tight)
  a <- unname(fit$alpha)
  K <- rbf_gram(d$x, 0.8) + diag(0.2, 60)
  m <- d$y * drop(K %*% (d$y * a))
  sv <- which(a > 0 & a < C)
  bnd <- which(a == C)
  expect_true(length(sv) > 0 && length(bnd) > 0)
  Kinv <- solve(K[sv, sv])
  ref <- m
  ref[sv] <- m[sv] - a[sv] / diag(Kinv)
  for (i in bnd) ref[i] <- m[i] + (K[i, sv] %*% Kinv %*% K[sv, i] - K[i, i]) * a[i]
  loo <- loo_error(fit)
  expect_equal(unname(loo$margins), ref, tolerance = 1e-10)
  expect_identical(loo$count, sum(ref <= 0))
  expect_equal(loo$error, mean(ref <= 0))
})

test_that("naive mean-field approximate margins are eqs. (17.41) and (17.42)", {
  d <- two_class_data(50, 22)
  for (kappa in c(0, 0.05)) {
    fit <- gpc_paper(d$x, d$y, rbf_kernel(1), noise = 0.5, kappa = kappa, control = gpc_tight)
    a <- unname(fit$alpha)
    K <- rbf_gram(d$x, 1) + diag(0.5, 50)
    f <- drop(K %*% (d$y * a))
    omega <- diag(K) * (1 / (d$y * a * f) - 1)  # eq. (17.42)
    ref <- d$y * f - (1 / diag(solve(diag(omega) + K)) - omega) * a  # eq. (17.41)
    expect_equal(unname(loo_error(fit)$margins), ref, tolerance = 1e-8)
  }
})

test_that("eqs. (17.41)-(17.42) with points whose response underflows, and indefinite Omega + K", {
  # Four points (interleaved with the others) get alpha = 20 in a tight
  # cluster: their z is about 45, G (z + G) underflows to 0, Omega = Inf, so
  # they leave the matrix and keep y_i <f_i>.  The formula is a function of
  # any alpha, so alpha need not be a fixed point here.  With kappa = 0.05
  # some Omega_i + k_ii < 0: the matrix is indefinite (the LU path).
  d <- two_class_data(36, 35)
  base <- gpc_paper(d$x, d$y, rbf_kernel(1), noise = 0.5)
  far <- c(3L, 12L, 25L, 38L)
  x <- matrix(0, 40, 2)
  y <- a <- numeric(40)
  x[-far, ] <- d$x
  y[-far] <- d$y
  a[-far] <- base$alpha
  x[far, ] <- cbind(3 + (1:4) / 100, 3)
  y[far] <- 1
  a[far] <- 20
  K <- rbf_gram(x, 1) + diag(0.5, 40)
  for (kappa in c(0, 0.05)) {
    f <- drop(K %*% (y * a))
    z <- (y * f - diag(K) * a) / sqrt(diag(K))
    G <- (1 - 2 * kappa) * dnorm(z) / (kappa + (1 - 2 * kappa) * pnorm(z))
    omega <- diag(K) * (1 / (G * (z + G)) - 1)
    act <- which(is.finite(omega))
    expect_identical(which(!is.finite(omega)), far)
    if (kappa > 0) expect_true(any(omega[act] + diag(K)[act] < 0))
    ref <- y * f
    ref[act] <- ref[act] -
      (1 / diag(solve(diag(omega[act]) + K[act, act])) - omega[act]) * a[act]
    got <- gpsvm:::cpp_alpha_loo_approx("naive", list(kernel = rbf_kernel(1), noise = 0.5,
                                                      kappa = kappa),
                                        x, y, list(algorithm = "paper"), a)
    expect_equal(got, ref, tolerance = 1e-10)
    # the same without the Gram matrix (the coordinate solver's path)
    got <- gpsvm:::cpp_alpha_loo_approx("naive", list(kernel = rbf_kernel(1), noise = 0.5,
                                                      kappa = kappa),
                                        x, y, list(algorithm = "newton"), a)
    expect_equal(got, ref, tolerance = 1e-10)
  }
})

test_that("exact svc refits match a plain-R refit loop", {
  d <- two_class_data(30, 23)
  fit <- svc_paper(d$x, d$y, rbf_kernel(1), C = 5, noise = 0.3, control = svc_tight)
  K <- rbf_gram(d$x, 1) + diag(0.3, 30)
  ref <- vapply(seq_len(30), function(i) {
    a <- svm_dual_cd(K[-i, -i], d$y[-i], 5)
    d$y[i] * sum(K[i, -i] * d$y[-i] * a)
  }, numeric(1))
  loo <- loo_error(fit, "exact")
  expect_equal(unname(loo$margins), ref, tolerance = 1e-7)
  expect_identical(loo$count, sum(ref <= 0))
  expect_identical(loo$not_converged, 0)
})

test_that("exact naive mean-field refits match plain-R Algorithm 17.1 from scratch", {
  d <- two_class_data(30, 24)
  fit <- gpc_paper(d$x, d$y, rbf_kernel(1), noise = 0.5, kappa = 0.02, control = gpc_tight)
  K <- rbf_gram(d$x, 1) + diag(0.5, 30)
  ref <- vapply(seq_len(30), function(i) {
    a <- naive_mf_r(K[-i, -i], d$y[-i], kappa = 0.02, ftol = 1e-24, maxit = 100000)$alpha
    d$y[i] * sum(K[i, -i] * d$y[-i] * a)
  }, numeric(1))
  loo <- loo_error(fit, "exact")
  expect_equal(unname(loo$margins), ref, tolerance = 1e-8)
})

test_that("the svc approximation is exact where no other point changes group", {
  skip_on_cran()
  d <- two_class_data(50, 25)
  C <- 2
  fit <- svc_paper(d$x, d$y, rbf_kernel(1.2), C = C, noise = 0.2, control = svc_tight)
  K <- rbf_gram(d$x, 1.2) + diag(0.2, 50)
  group <- function(a) ifelse(a == 0, 0L, ifelse(a >= C, 2L, 1L))
  g <- group(unname(fit$alpha))
  same <- vapply(seq_len(50), function(i) {
    a <- svm_dual_cd(K[-i, -i], d$y[-i], C)
    identical(group(a), g[-i])
  }, logical(1))
  expect_gt(sum(same), 25)  # the assumption of section 17.5 holds for most points
  approx <- loo_error(fit)$margins
  exact <- loo_error(fit, "exact")$margins
  expect_equal(unname(approx[same]), unname(exact[same]), tolerance = 1e-7)
})

test_that("approximate and exact leave-one-out agree on small data", {
  d <- two_class_data(80, 26, noise = 0.6)
  s <- svc_paper(d$x, d$y, rbf_kernel(1), noise = 0.8)
  g <- gpc_paper(d$x, d$y, rbf_kernel(1), noise = 0.8)
  for (fit in list(s, g)) {
    approx <- loo_error(fit)
    exact <- loo_error(fit, "exact")
    expect_gt(exact$count, 3)  # a test with errors to count
    expect_lte(abs(approx$count - exact$count), 1)
    expect_gt(cor(approx$margins, exact$margins), 0.99)
  }
})

test_that("exact leave-one-out prints as refits", {
  # (plans, chunks and progress: test-parallel.R)
  d <- two_class_data(40, 27)
  fit <- gpc_paper(d$x, d$y, rbf_kernel(1), noise = 0.5)
  serial <- loo_error(fit, "exact")
  expect_output(print(serial), "exact \\(refits\\)")
  expect_s3_class(serial, "gpsvm_loo")
})

test_that("bad input to loo_error() gives clear errors", {
  d <- two_class_data(20, 28)
  fit <- svc_paper(d$x, d$y, rbf_kernel(1), noise = 0.5)
  expect_error(loo_error(lm(d$y ~ d$x)), "svc\\(\\) or gpc\\(\\)")
  expect_error(loo_error(fit, "jackknife"), "'method' must be one of")
  expect_error(loo_error(fit, cores = 0), "'cores'")
  expect_error(loo_error(fit, progress = NA), "'progress'")
  expect_error(loo_error(fit, cl = 2), "'cl'")
  expect_error(loo_error(fit, seed = 1), "unknown argument")
})

test_that("duplicated inputs without noise: a singular K_mSV is handled in the limit", {
  d <- two_class_data(30, 29)
  ctl <- svc_control(tol = 1e-22, max_iter = 200000)
  base <- svc_paper(d$x, d$y, rbf_kernel(1), control = ctl)
  twins <- which(base$alpha > 0)[1:3]
  x <- rbind(d$x, d$x[twins, ])  # exact duplicates of three support vectors
  y <- c(d$y, d$y[twins])
  # hard margin (C = Inf): the twin can take over the whole alpha of the
  # point left out; with a finite C it may hit the bound instead
  fit <- svc_paper(x, y, rbf_kernel(1), control = ctl)
  approx <- loo_error(fit)
  exact <- loo_error(fit, "exact")
  expect_true(all(is.finite(approx$margins)))
  # a duplicated margin support vector keeps margin 1 when left out: its
  # twin takes over, exactly as the refit finds
  dup <- c(twins, 31:33)
  on_margin <- dup[fit$alpha[dup] > 0]
  expect_gt(length(on_margin), 0)
  expect_equal(unname(approx$margins[on_margin]), rep(1, length(on_margin)), tolerance = 1e-6)
  expect_equal(unname(exact$margins[on_margin]), rep(1, length(on_margin)), tolerance = 1e-6)
  expect_lte(abs(approx$count - exact$count), 1)
})

test_that("refits that hit the iteration cap are counted and warned about", {
  d <- two_class_data(20, 30)
  fit <- svc_paper(d$x, d$y, rbf_kernel(1), noise = 0.5,
             control = svc_control(tol = 1e-22, max_iter = 500))
  capped <- fit
  capped$control <- svc_control(tol = 1e-30, max_iter = 2)
  expect_warning(loo <- loo_error(capped, "exact"),
                 "did not converge within max_iter = 2")
  expect_gt(loo$not_converged, 0)
})

test_that("loo_error() names the solver that fitted the svc, as print() does", {
  d <- data.frame(x1 = c(-2, -1, -0.5, 0.5, 1, 2), x2 = c(1, -1, 0.5, -0.5, 1, -1),
                  y = factor(c("a", "a", "a", "b", "b", "b")))
  smo <- svc(y ~ ., data = d)
  adatron <- svc(y ~ ., data = d, control = svc_control(algorithm = "adatron"))
  expect_output(print(loo_error(smo)), "error of svc \\(SMO\\)")
  expect_output(print(smo), "Support vector classifier \\(SMO\\)")
  expect_output(print(loo_error(adatron)), "error of svc \\(kernel adatron\\)")
  expect_output(print(adatron), "Support vector classifier \\(kernel adatron\\)")
})

test_that("exact leave-one-out of gpc()'s default fit keeps the values its evidence search found", {
  d <- two_class_data(30, 61)
  fit <- gpc(d$x, d$y, control = gpc_control(tol = 1e-11))
  expect_named(fit$optimization$estimate, c("sigma", "noise"))
  exact <- loo_error(fit, "exact")
  # refits by hand at the values found, on the inputs as the fit scaled them
  link <- vapply(seq_len(30), function(i) {
    refit <- gpc(fit$x[-i, ], d$y[-i], rbf_kernel(fit$kernel$sigma), noise = fit$noise,
                 scale = FALSE, control = gpc_control(tol = 1e-11))
    predict(refit, fit$x[i, , drop = FALSE], type = "link")
  }, numeric(1))
  expect_equal(unname(exact$margins), unname(d$y * link), tolerance = 1e-8)
})
