# svr(): the dual solvers against plain-R references and e1071, the evidence
# (eq. 16 and refined) against plain-R evaluation and integrate(), the noise
# variance (eq. 29) against integrate(), error bars, C selection, edge cases.

sigma_paper <- sqrt(0.8)
k_paper <- rbf_kernel(sigma_paper)
tight <- svr_control(tol = 1e-9)

test_that("bias = FALSE solves the dual: objective and KKT against plain-R coordinate descent", {
  d <- svr_sine_data(40)
  K <- svr_rbf_gram(d$x, sigma_paper)
  for (C in c(0.3, 2.1, 50)) {
    fit <- svr(d$x, d$y, C = C, epsilon = 0.4, kernel = k_paper, control = tight, scale = FALSE)
    ref <- svr_cd_reference(K, d$y, C, 0.4)
    obj_ref <- svr_dual_objective(ref, K, d$y, 0.4)
    expect_equal(fit$objective, svr_dual_objective(fit$beta, K, d$y, 0.4), tolerance = 1e-10)
    expect_lt(abs(fit$objective - obj_ref), 1e-6 * max(1, abs(obj_ref)))
    expect_true(all(abs(fit$beta) <= C))
    expect_equal(fit$b, 0)
    r <- d$y - drop(K %*% fit$beta)
    expect_equal(unname(fit$residuals), unname(r), tolerance = 1e-8)
    expect_lt(svr_kkt_violation(fit$beta, r, C, 0.4), 1e-9)
  }
  # the default tolerance 1e-3 holds in the documented sense
  fit <- svr(d$x, d$y, C = 2.1, epsilon = 0.4, kernel = k_paper, scale = FALSE)
  r <- d$y - drop(K %*% fit$beta)
  expect_lt(svr_kkt_violation(fit$beta, r, 2.1, 0.4), 1e-3)
  expect_true(fit$convergence$converged)
})

test_that("bias = TRUE satisfies the equality constraint and the pair KKT condition", {
  d <- svr_sine_data(60, seed = 4)
  K <- svr_rbf_gram(d$x, 1)
  C <- 3
  eps <- 0.2
  for (tol in c(1e-3, 1e-8)) {
    fit <- svr(d$x, d$y, C = C, epsilon = eps, kernel = rbf_kernel(1), bias = TRUE,
               control = svr_control(tol = tol), scale = FALSE)
    expect_equal(sum(fit$beta), 0, tolerance = 1e-10)
    r <- d$y - drop(K %*% fit$beta)  # residual without the bias
    ap <- fit$alpha_plus
    am <- fit$alpha_minus
    up <- c(r[ap < C] - eps, r[am > 0] + eps)
    low <- c(r[ap > 0] - eps, r[am < C] + eps)
    expect_lt(max(up) - min(low), tol)
    expect_equal(fit$objective, svr_dual_objective(fit$beta, K, d$y, eps), tolerance = 1e-10)
  }
  # a tight solution and the plain-R objective of the reference with the
  # constraint: compare with a projected solve through the no-bias reference
  # on centred data is not exact, so check optimality against perturbations:
  fit <- svr(d$x, d$y, C = C, epsilon = eps, kernel = rbf_kernel(1), bias = TRUE, control = tight,
             scale = FALSE)
  obj <- fit$objective
  set.seed(9)
  for (k in 1:50) {
    ij <- sample(length(d$y), 2)
    for (step in c(-1e-3, 1e-3)) {
      b2 <- fit$beta
      b2[ij] <- b2[ij] + c(step, -step)
      if (all(abs(b2) <= C)) expect_gte(svr_dual_objective(b2, K, d$y, eps), obj - 1e-12)
    }
  }
})

test_that("bias = TRUE predictions agree with e1071::svm", {
  skip_if_not_installed("e1071")
  d <- svr_sine_data(80, seed = 2)
  for (C in c(0.5, 2.1, 20)) {
    fit <- svr(d$x, d$y, C = C, epsilon = 0.4, kernel = k_paper, bias = TRUE,
               control = svr_control(tol = 1e-8), scale = FALSE)
    ref <- e1071::svm(d$x, d$y, type = "eps-regression", kernel = "radial",
                      gamma = 1 / (2 * 0.8), cost = C, epsilon = 0.4, scale = FALSE,
                      tolerance = 1e-8)
    xt <- seq(-1, 4 * pi + 1, length.out = 57)
    expect_equal(predict(fit, xt), as.vector(predict(ref, xt)), tolerance = 1e-3)
    expect_equal(fit$b, -ref$rho, tolerance = 1e-3)
  }
})

test_that("eq. (16) evidence equals a plain-R evaluation", {
  d <- svr_sine_data(50, seed = 3)
  K <- svr_rbf_gram(d$x, sigma_paper)
  C <- 2.1
  eps <- 0.4
  fit <- svr(d$x, d$y, C = C, epsilon = eps, kernel = k_paper, control = tight, scale = FALSE)
  beta <- fit$beta
  r <- d$y - drop(K %*% beta)
  a <- abs(beta)
  M <- a > 1e-8 * C & a < C * (1 - 1e-8)
  XC <- a >= C * (1 - 1e-8)
  expect_equal(unname(which(M)), which(fit$partition %in% c("X_M-", "X_M+")))
  # margin vectors sit on the tube edge, with the sign of beta
  expect_equal(unname(r[M]), eps * sign(beta[M]), tolerance = 1e-7)
  n <- length(d$y)
  ref <- -0.5 * sum(beta * (K %*% beta)) -
    0.5 * as.numeric(determinant(2 * pi * K[M, M], logarithm = TRUE)$modulus) +
    n * log(C / (2 * (eps * C + 1))) - C * sum(abs(r[XC]) - eps) +
    sum(log(C / (a[M] * (C - a[M]))))
  expect_equal(evidence(fit, "eq16"), ref, tolerance = 1e-10)
  # logLik() is the model's (EP) evidence, not eq. (16)
  ll <- logLik(fit)
  expect_s3_class(ll, "logLik")
  expect_equal(as.numeric(ll), evidence(fit, "ep"), tolerance = 1e-12)
  expect_gt(ref - as.numeric(ll), 1)
  expect_equal(attr(ll, "nobs"), n)
  expect_true(is.finite(AIC(ll)))
})

test_that("refined evidence: per-margin integrals against integrate()", {
  d <- svr_sine_data(50, seed = 3)
  C <- 2.1
  fit <- svr(d$x, d$y, C = C, epsilon = 0.4, kernel = k_paper, control = tight, scale = FALSE)
  M <- fit$partition %in% c("X_M-", "X_M+")
  K <- svr_rbf_gram(d$x, sigma_paper)
  h <- diag(solve(K[M, M]))
  beta <- fit$beta[M]
  terms <- numeric(sum(M))
  for (i in seq_along(beta)) {
    # the paper's integrand: tails exp(-beta d) and exp(-(beta +/- C) d) on the
    # two sides of the kink, with the diagonal quadratic term
    if (beta[i] < 0) {
      left <- function(u) exp(-beta[i] * u - h[i] * u^2 / 2)            # delta < 0
      right <- function(u) exp(-(beta[i] + C) * u - h[i] * u^2 / 2)     # delta > 0
    } else {
      left <- function(u) exp(-(beta[i] - C) * u - h[i] * u^2 / 2)
      right <- function(u) exp(-beta[i] * u - h[i] * u^2 / 2)
    }
    terms[i] <- log(integrate(left, -Inf, 0, rel.tol = 1e-12)$value +
                    integrate(right, 0, Inf, rel.tol = 1e-12)$value)
  }
  a <- abs(beta)
  expect_equal(unname(gpsvm:::.log_margin_integral(a, C - a, h)), unname(terms), tolerance = 1e-9)
  # the whole refined evidence: eq. (16) with those terms instead of log(C / (a (C - a)))
  expect_equal(evidence(fit, "refined"),
               evidence(fit, "eq16") - sum(log(C / (a * (C - a)))) + sum(terms),
               tolerance = 1e-9)
  # tiny h gives back eq. (16)'s term; h = 0-limit at a bound stays finite
  expect_equal(gpsvm:::.log_margin_integral(0.3, C - 0.3, 1e-12), log(1 / 0.3 + 1 / (C - 0.3)),
               tolerance = 1e-6)
  far <- gpsvm:::.log_margin_integral(c(0, 1e-300, 50), c(C, C, 1e4), c(1, 1, 1e-6))
  ref_far <- c(log(sqrt(pi / 2) + integrate(function(u) exp(-C * u - u^2 / 2), 0, Inf)$value),
               log(sqrt(pi / 2) + integrate(function(u) exp(-C * u - u^2 / 2), 0, Inf)$value),
               log(integrate(function(u) exp(-50 * u - 1e-6 * u^2 / 2), 0, 2,
                             rel.tol = 1e-12)$value +
                   integrate(function(u) exp(-1e4 * u - 1e-6 * u^2 / 2), 0, 2e-2,
                             rel.tol = 1e-12)$value))
  expect_equal(far, ref_far, tolerance = 1e-8)
})

test_that("eq. (29) noise variance is the likelihood's second moment", {
  for (pars in list(c(2.1, 0.4), c(0.05, 3), c(100, 0), c(1e3, 0.01))) {
    C <- pars[1]
    eps <- pars[2]
    dens <- function(u) C / (2 * (eps * C + 1)) * exp(-C * pmax(abs(u) - eps, 0))
    # tails integrated over 200 decay lengths (the rest is below 1e-80)
    tail <- 200 / C
    piece <- function(g, lo, hi) integrate(g, lo, hi, rel.tol = 1e-12)$value
    whole <- function(g) {
      piece(g, -eps - tail, -eps) + (if (eps > 0) piece(g, -eps, eps) else 0) +
        piece(g, eps, eps + tail)
    }
    expect_equal(whole(dens), 1, tolerance = 1e-10)
    m2 <- whole(function(u) u^2 * dens(u))
    expect_equal(svr_noise_variance(C, eps), m2, tolerance = 1e-8)
  }
})

test_that("error bars: eq. (22), eq. (30) and the eq. (31) bound against plain R", {
  d <- svr_sine_data(50, seed = 5)
  fit <- svr(d$x, d$y, C = 2.1, epsilon = 0.4, kernel = k_paper, control = tight, scale = FALSE,
             calibration_folds = 0)
  z <- c(-2, 0.5, 3.3, 7, 15)
  M <- fit$partition %in% c("X_M-", "X_M+")
  xm <- d$x[M]
  kz <- exp(-outer(z, xm, "-")^2 / 1.6)
  v22 <- 1 - rowSums((kz %*% solve(svr_rbf_gram(xm, sigma_paper))) * kz)
  p <- predict(fit, z, se.fit = TRUE, interval = "prediction", level = 0.9)
  mean_ref <- drop(exp(-outer(z, d$x, "-")^2 / 1.6) %*% fit$beta)
  expect_equal(unname(p$fit[, "fit"]), mean_ref, tolerance = 1e-12)
  expect_equal(unname(p$se.fit), sqrt(pmax(v22, 0)), tolerance = 1e-6)
  noise <- 2 / 2.1^2 + 0.16 * (0.4 * 2.1 + 3) / (3 * (0.4 * 2.1 + 1))
  expect_equal(p$residual.scale, sqrt(noise))
  # the prediction interval: exact eq. (28) quantiles with the eq. (22) variance
  upr_ref <- mapply(function(mu, v) svr_pred_quantile_ref(0.95, mu, sqrt(max(v, 0)), 2.1, 0.4),
                    mean_ref, v22)
  expect_equal(unname(p$fit[, "upr"]), upr_ref, tolerance = 1e-6)
  pc <- predict(fit, z, interval = "confidence")
  expect_equal(unname(pc[, "upr"] - pc[, "fit"]), qnorm(0.975) * sqrt(v22), tolerance = 1e-6)
  expect_true(all(predict(fit, z, se.fit = TRUE, bound = TRUE)$se.fit <= p$se.fit + 1e-8))
  # the bound uses the full kernel matrix; on a well-conditioned problem
  d <- svr_sine_data(15, seed = 5)
  fit <- svr(d$x, d$y, C = 2.1, epsilon = 0.4, kernel = k_paper, control = tight, scale = FALSE,
             calibration_folds = 0)
  Kx <- svr_rbf_gram(d$x, sigma_paper)
  kx <- exp(-outer(z, d$x, "-")^2 / 1.6)
  vb <- 1 - rowSums((kx %*% solve(Kx)) * kx)
  pb <- predict(fit, z, se.fit = TRUE, bound = TRUE, interval = "prediction")
  expect_equal(unname(pb$se.fit^2), pmax(vb, 0), tolerance = 1e-8)
  lwr_ref <- mapply(function(mu, v) svr_pred_quantile_ref(0.025, mu, sqrt(max(v, 0)), 2.1, 0.4),
                    pb$fit[, "fit"], vb)
  expect_equal(unname(pb$fit[, "lwr"]), lwr_ref, tolerance = 1e-8)
  # far from the data the latent variance returns to k(z, z) = 1
  expect_equal(unname(predict(fit, 100, se.fit = TRUE)$se.fit), 1, tolerance = 1e-12)
})

test_that("the margin vectors' jittered factor: singular kernel matrices, and the one a fit keeps", {
  # the factor of K + jitter I with the smallest jitter (0, then 1e-12,
  # 1e-11, ... times the mean diagonal) whose diagonal spans at most 1e7
  factor_ref <- function(K) {
    for (j in c(0, 10^(-12:-2))) {
      R <- tryCatch(chol(K + diag(j * mean(diag(K)), nrow(K))), error = function(e) NULL)
      if (!is.null(R) && min(diag(R)) >= 1e-7 * max(diag(R))) return(R)
    }
    NULL
  }
  # duplicated inputs: singular
  xd <- matrix(c(0.1, 0.5, 0.5, 1.2, 1.2, 1.2, 2))
  L <- gpsvm:::cpp_margin_factor(k_paper, xd)
  K <- svr_rbf_gram(drop(xd), sigma_paper)
  expect_equal(tcrossprod(L), unname(crossprod(factor_ref(K))), tolerance = 1e-12)
  expect_true(all(L[upper.tri(L)] == 0))
  # well conditioned: the plain factor
  xs <- matrix(c(-1, 0, 1.5))
  expect_equal(gpsvm:::cpp_margin_factor(k_paper, xs),
               unname(t(chol(svr_rbf_gram(drop(xs), sigma_paper)))), tolerance = 1e-12)
  # a fit keeps its margin vectors' factor, and a fit without it (a
  # search's intermediate one) computes the same variances
  d <- svr_sine_data(50, seed = 5)
  fit <- svr(d$x, d$y, C = 2.1, epsilon = 0.4, kernel = k_paper, control = tight, scale = FALSE,
             calibration_folds = 0)
  M <- fit$partition %in% c("X_M-", "X_M+")
  expect_equal(unname(tcrossprod(fit$margin_factor)),
               unname(crossprod(factor_ref(svr_rbf_gram(d$x[M], sigma_paper)))), tolerance = 1e-10)
  z <- matrix(c(-1, 0.3, 2.2))
  stripped <- unclass(fit)
  stripped$margin_factor <- NULL
  class(stripped) <- class(fit)
  expect_equal(gpsvm:::.svr_latent_variance(stripped, z), gpsvm:::.svr_latent_variance(fit, z),
               tolerance = 1e-12)
  # an edited factor is refused, not used
  edited <- fit
  edited$margin_factor <- t(edited$margin_factor)
  if (sum(M) > 1L) expect_error(predict(edited, z, se.fit = TRUE), "margin_factor")
})

test_that("prediction intervals are exact eq. (28) quantiles: far levels, tiny and huge C, bound", {
  skip_on_cran()
  d <- svr_sine_data(40, seed = 8)
  z <- c(-3, 1.1, 6.2, 20)
  for (pars in list(c(2.1, 0.4), c(1e-3, 0.4), c(1e4, 0.4), c(50, 0))) {
    C <- pars[1]
    eps <- pars[2]
    fit <- svr(d$x, d$y, C = C, epsilon = eps, kernel = k_paper, control = tight, scale = FALSE,
               calibration_folds = 0)
    for (bound in c(FALSE, TRUE)) {
      # the latent variances (eqs. 22 and 31) are checked against plain R
      # above; here they are the input of the convolution
      s <- predict(fit, z, se.fit = TRUE, bound = bound)
      mu <- s$fit
      for (level in c(0.8, 0.999)) {
        p <- predict(fit, z, interval = "prediction", level = level, bound = bound)
        lwr <- mapply(function(m, sd) svr_pred_quantile_ref((1 - level) / 2, m, sd, C, eps),
                      mu, s$se.fit)
        upr <- mapply(function(m, sd) svr_pred_quantile_ref((1 + level) / 2, m, sd, C, eps),
                      mu, s$se.fit)
        expect_equal(unname(p[, "lwr"]), lwr, tolerance = 1e-10)
        expect_equal(unname(p[, "upr"]), upr, tolerance = 1e-10)
        # sensible: symmetric about the mean, wider than either part alone
        # (Anderson's theorem: both parts are symmetric and unimodal), and
        # within Chebyshev's bound on the eq. (30) variance
        half <- unname(p[, "upr"] - p[, "fit"])
        expect_equal(unname(p[, "fit"] - p[, "lwr"]), half, tolerance = 1e-9)
        k <- 1 / (2 * (eps * C + 1))
        alpha <- (1 - level) / 2
        noise_q <- if (alpha < k) eps + log(k / alpha) / C else (0.5 - alpha) / (C * k)
        expect_true(all(half >= qnorm(1 - alpha) * s$se.fit * (1 - 1e-9)))
        expect_true(all(half >= noise_q * (1 - 1e-9)))
        expect_true(all(half <= sqrt((s$se.fit^2 + svr_noise_variance(C, eps)) / (1 - level))))
      }
    }
  }
  # where the noise dominates, the Gaussian band of eq. (30) misses the
  # exponential tails at 99.9% (and is too wide at 80%)
  fit <- svr(d$x, d$y, C = 0.5, epsilon = 0.1, kernel = k_paper, control = tight, scale = FALSE,
             calibration_folds = 0)
  s <- predict(fit, z, se.fit = TRUE)
  sd_t <- sqrt(s$se.fit^2 + svr_noise_variance(0.5, 0.1))
  far <- predict(fit, z, interval = "prediction", level = 0.999)
  expect_true(all(far[, "upr"] - far[, "fit"] > qnorm(0.9995) * sd_t * 1.05))
  mid <- predict(fit, z, interval = "prediction", level = 0.8)
  expect_true(all(mid[, "upr"] - mid[, "fit"] < qnorm(0.9) * sd_t))
})

test_that("with no latent variance the predictive quantile is the noise quantile", {
  # the noise CDF inverted by hand: k = 1 / (2 (eps C + 1)) of the mass in each tail
  for (pars in list(c(2.1, 0.4), c(1e-3, 0.4), c(1e4, 0.01), c(3, 0))) {
    C <- pars[1]
    eps <- pars[2]
    k <- 1 / (2 * (eps * C + 1))
    p <- c(1e-6, 0.01, 0.3, 0.5, 0.8, 0.9995)
    ref <- ifelse(p < k, -eps - log(k / p) / C,
                  ifelse(p > 1 - k, eps + log(k / (1 - p)) / C, -eps + (p - k) / (C * k)))
    got <- epsins_quantile(p, 1.5, 0, C, eps)
    expect_equal(got, 1.5 + ref, tolerance = 1e-9)
  }
})

test_that("the eq. (17) fixed point follows the plain-R update from plain-R fits", {
  d <- svr_sine_data(30, seed = 6)
  K <- svr_rbf_gram(d$x, sigma_paper)
  eps <- 0.4
  ctl <- svr_control(tol = 1e-10, C_search = "fixed_point")
  four <- search_control(max_iter = 4, tol = 1e-12)
  fp <- suppressWarnings(svr(d$x, d$y, C = 10, epsilon = eps, kernel = k_paper, optimize = TRUE,
                             control = ctl, search = four, scale = FALSE))
  C_path <- fp$optimization$path$C
  expect_equal(C_path[1], 10)
  expect_length(C_path, 5)
  n <- length(d$y)
  for (k in 1:4) {
    C <- C_path[k]
    beta <- svr_cd_reference(K, d$y, C, eps)
    r <- d$y - drop(K %*% beta)
    a <- abs(beta)
    M <- a > 1e-8 * C & a < C * (1 - 1e-8)
    XC <- a >= C * (1 - 1e-8)
    C_new <- (n + sum(M)) / (sum(abs(r[XC]) - eps) + sum(1 / (C - a[M])) + n * eps / (eps * C + 1))
    expect_equal(C_path[k + 1], C_new, tolerance = 1e-6)
  }
  expect_equal(fp$C, C_path[5])
  expect_warning(svr(d$x, d$y, C = 10, epsilon = eps, kernel = k_paper, optimize = TRUE,
                     control = ctl, search = four, scale = FALSE), "did not settle")
  # with the paper's tolerance it settles on this problem
  ok <- svr(d$x, d$y, C = 10, epsilon = eps, kernel = k_paper, optimize = TRUE,
            control = svr_control(C_search = "fixed_point"), scale = FALSE)
  ok_path <- ok$optimization$path$C
  expect_true(ok$optimization$convergence$converged)
  expect_output(print(ok), sprintf("C by the eq. \\(17\\) iteration; settled after %d steps",
                                   length(ok_path) - 1L))
  out <- capture.output(print(summary(ok)))
  expect_length(grep("^C path: ", out), 1L)
  expect_length(grep("^  hyperparameters: C by the eq. \\(17\\) iteration", out), 1L)
  expect_lt(abs(diff(tail(ok_path, 2))), 0.05)
})

test_that("without a C, svr() chooses it by the model's evidence, as mfsvr() does", {
  skip_on_cran()
  d <- svr_sine_data(60, seed = 12)
  s <- svr(d$x, d$y)
  m <- mfsvr(d$x, d$y)
  expect_identical(s$optimization$evidence, "ep")
  expect_equal(s$C, m$C, tolerance = 1e-10)
  expect_equal(c(logLik(s)), c(logLik(m)), tolerance = 1e-10)
  # C, the offset (weighed against none), the width (sigest's against
  # gamma = 1/p's, which differ here), the response's centre and scale
  expect_false(is.null(s$kernel_choice))
  expect_identical(attr(logLik(s), "df"), 5L)
  expect_equal(s$kernel_choice, m$kernel_choice, tolerance = 1e-10)
  expect_identical(s$bias_variance, m$bias_variance)
  expect_equal(s$bias_choice, m$bias_choice, tolerance = 1e-10)
  # the C found is a maximum of the evidence along C, by independent fits
  # (of the kernel chosen, without the offset's constant, which `bias` adds)
  kernel <- s$kernel
  kernel$constant <- NULL
  at <- function(C) {
    c(logLik(mfsvr(d$x, d$y, C = C, optimize = FALSE, bias = s$bias_variance, kernel = kernel)))
  }
  expect_gt(c(logLik(s)), at(s$C * 1.2))
  expect_gt(c(logLik(s)), at(s$C / 1.2))
  # the fit is the MAP estimate at that C
  expect_equal(coef(s), coef(svr(d$x, d$y, C = s$C, kernel = kernel, bias = s$bias_variance)),
               tolerance = 1e-12)
  # a C given is kept, and so is e1071's 1 without a search
  expect_identical(svr(d$x, d$y, C = 2)$C, 2)
  expect_identical(svr(d$x, d$y, optimize = FALSE)$C, 1)
  expect_identical(svr(d$x, d$y, scale = FALSE)$C, 1)
  # beyond the size rule search_max_n (lowered here from 10000) the default
  # searches on that many evenly spaced rows, as mfsvr()'s, and says so
  op <- options(gpsvm.size_policy = list(search_max_n = 100))
  on.exit(options(op), add = TRUE)
  u <- seq_len(101) / 101
  expect_message(beyond <- svr(u, sin(10 * u)),
                 "svr\\(\\): 101 observations: hyperparameters: searched on 100 evenly spaced rows")
  rows <- unique(round(seq(1, 101, length.out = 100)))
  sub <- suppressMessages(svr(u[rows], sin(10 * u[rows])))
  expect_identical(beyond$C, sub$C)
  expect_false(beyond$C == 5)
  expect_equal(coef(beyond), coef(suppressMessages(
    svr(u, sin(10 * u), C = sub$C, kernel = rbf_kernel(sub$kernel$sigma), bias = sub$bias_variance))),
    tolerance = 1e-12)
  options(op)
  # with a threshold, the grid search: every point refits b, and the fit's
  # evidence is the largest the search saw
  b <- svr(d$x, d$y, bias = TRUE, search = search_control(grid = 9))
  expect_identical(b$optimization$method, "grid and golden section")
  expect_identical(b$optimization$evidence, "ep")
  expect_equal(c(logLik(b)), max(b$optimization$path$log_evidence) - 60 * log(sd(d$y)),
               tolerance = 1e-10)
  expect_output(print(s), "hyperparameters: C by evidence maximisation; converged")
})

test_that("evidence maximisation returns the best evidence it saw; evidence_curve averages", {
  d <- svr_sine_data(40, seed = 7)
  fe <- svr(d$x, d$y, C = 2, epsilon = 0.4, kernel = k_paper, optimize = TRUE,
            control = svr_control(C_interval = c(0.2, 20)), search = search_control(grid = 15),
            scale = FALSE)
  seen <- fe$optimization$path
  expect_equal(evidence(fe), max(seen$log_evidence), tolerance = 1e-8)
  expect_true(fe$C >= 0.2 && fe$C <= 20)
  sets <- list(svr_sine_data(30, 1), svr_sine_data(30, 2), svr_sine_data(30, 3))
  Cs <- c(0.5, 2, 8)
  ec <- evidence_curve(sets, C = Cs, epsilon = 0.4, kernel = k_paper,
                       method = c("eq16", "refined"))
  expect_equal(nrow(ec), 6)
  each <- sapply(sets, function(s) {
    sapply(Cs, function(C) evidence(svr(s$x, s$y, C = C, epsilon = 0.4, kernel = k_paper,
                                        scale = FALSE), "eq16"))
  })
  expect_equal(ec$log_evidence[ec$method == "eq16"], rowMeans(each), tolerance = 1e-10)
  expect_equal(ec$se[ec$method == "eq16"], apply(each, 1, sd) / sqrt(3), tolerance = 1e-10)
})

test_that("an evidence for C that is largest at the interval's end is a warning", {
  skip_on_cran()
  # nearly noise-free data: at C = 100 (the default interval's end) no
  # multiplier is at C, every residual is within epsilon, and a larger C
  # leaves the fit as it is while the evidence still rises, towards a limit
  set.seed(2)
  x <- seq(-3, 3, length.out = 40)
  y <- sin(x) + rnorm(40, sd = 0.01)
  eq16 <- svr_control(evidence = "eq16")
  expect_warning(f <- svr(x, y, C = 1, optimize = TRUE, control = eq16),
                 "largest, at the upper end of its search interval \\(C = 100\\): no multiplier is at C")
  expect_identical(f$optimization$at_bound, "C:upper")
  expect_output(print(f), sprintf(paste0("C by evidence maximisation \\(eq. 16\\) over \\[0.01, 100\\]; ",
                                         "%d evaluations, at the upper end of the interval"),
                                  nrow(f$optimization$path)))
  expect_equal(f$C, 100, tolerance = 0.01)
  expect_false(any(abs(f$beta) >= f$C * (1 - 1e-8)))
  expect_lte(max(abs(f$residuals[abs(f$beta) > 0])), 0.1 * sd(y) * (1 + 1e-6))
  larger <- lapply(c(1e3, 1e5, 1e7, 1e8), function(C) svr(x, y, C = C))
  for (g in larger) expect_equal(unname(g$beta), unname(f$beta), tolerance = 1e-8)
  ev <- vapply(larger, evidence, numeric(1), method = "eq16")
  expect_gt(ev[1], evidence(f, "eq16"))
  expect_true(all(diff(ev) > 0))
  expect_lt(ev[4] - ev[3], 1e-3)  # a limit
  # the partition at C = 1e8 is still the margin's, not zero
  expect_identical(table(larger[[4]]$partition), table(f$partition))
  # and the solver keeps the coefficients (of the order of y) at any C: a
  # cutoff for zero relative to C emptied them all at C = 1e12
  for (C in c(1e10, 1e12, 1e15)) {
    huge <- svr(x, y, C = C)
    expect_equal(unname(huge$beta), unname(f$beta), tolerance = 1e-8, info = paste("C =", C))
    expect_equal(evidence(huge, "eq16"), ev[4], tolerance = 1e-6, info = paste("C =", C))
  }
  # an interior maximum gives no warning, and a lower end does
  d <- svr_sine_data(40, seed = 7)
  expect_silent(fe <- svr(d$x, d$y, C = 2, epsilon = 0.4, kernel = k_paper, optimize = TRUE,
                          control = svr_control(C_interval = c(0.2, 20), evidence = "eq16"),
                          search = search_control(grid = 15),
                          scale = FALSE))
  expect_length(fe$optimization$at_bound, 0)
  out <- capture.output(print(fe))
  expect_true(any(grepl("^  hyperparameters: C by evidence maximisation \\(eq. 16\\) over \\[0.2, 20\\]; \\d+ evaluations$", out)))
  # summary() gives the same line, not the search's grid as a path
  out <- capture.output(print(summary(fe)))
  expect_length(grep("^  hyperparameters: C by evidence maximisation", out), 1L)
  expect_length(grep("^C path", out), 0L)
  expect_warning(lo <- svr(d$x, d$y, C = 2, epsilon = 0.4, kernel = k_paper, optimize = TRUE,
                           control = svr_control(C_interval = c(2 * fe$C, 20 * fe$C),
                                                 evidence = "eq16"),
                           search = search_control(grid = 15), scale = FALSE),
                 "at the lower end")
  expect_identical(lo$optimization$at_bound, "C:lower")
})

test_that("singular evidence cases stay finite: |beta| near 0 or C, tiny and huge C", {
  skip_on_cran()
  d <- svr_sine_data(40, seed = 8)
  for (C in exp(seq(log(1e-4), log(1e4), length.out = 30))) {
    fit <- svr(d$x, d$y, C = C, epsilon = 0.4, kernel = k_paper, scale = FALSE)
    e16 <- evidence(fit, "eq16")
    ref <- evidence(fit, "refined")
    expect_true(is.finite(e16), info = paste("C =", C))
    expect_true(is.finite(ref), info = paste("C =", C))
    p <- predict(fit, c(0, 5), se.fit = TRUE, interval = "prediction")
    expect_false(anyNA(unlist(p)))
  }
  # a margin coefficient forced next to a bound: eq. (16) large but finite
  fit <- svr(d$x, d$y, C = 2, epsilon = 0.4, kernel = k_paper, control = tight, scale = FALSE)
  M <- which(fit$partition %in% c("X_M-", "X_M+"))
  fit$beta[M[1]] <- sign(fit$beta[M[1]]) * 2 * (1 - 1e-7)
  # (with the fitted values it gives, which the validator checks)
  fit$fitted.values[] <- drop(kernel_matrix(fit$kernel, fit$x) %*% fit$beta) + fit$b
  fit$residuals[] <- fit$y - fit$fitted.values
  expect_true(is.finite(evidence(fit, "eq16")))
  expect_true(is.finite(evidence(fit, "refined")))
  expect_gt(evidence(fit, "eq16"), evidence(fit, "refined"))
})

test_that("edge cases: one point, duplicated inputs, tiny and huge C", {
  one <- svr(1, 2, C = 1, epsilon = 0.1, kernel = rbf_kernel(1), scale = FALSE)
  # one point: beta = min(C, y - eps) with K = 1
  expect_equal(unname(one$beta), 1)
  # one point: the EP evidence is exact
  expect_equal(evidence(one), epsins_log_z_quad(2, 0, 1, 1, 0.1), tolerance = 1e-9)
  expect_true(is.finite(evidence(one, "eq16")))
  one_b <- svr(1, 2, C = 1, epsilon = 0.1, bias = TRUE, scale = FALSE)
  expect_equal(unname(one_b$beta), 0)
  expect_equal(unname(fitted(one_b)), 2)
  one_s <- svr(1, 0.5, C = 10, epsilon = 0.1, scale = FALSE)
  expect_equal(unname(one_s$beta), 0.4, tolerance = 1e-12)
  expect_equal(as.character(one_s$partition), "X_M+")
  expect_true(is.finite(evidence(one_s, "refined")))
  # duplicated inputs: the Gram matrix is singular
  x <- c(1, 1, 2, 2, 3, 3, 4)
  y <- c(0.1, 1.5, 0.2, -1, 0.3, 0.9, 0)
  K <- svr_rbf_gram(x, 1)
  for (bias in c(FALSE, TRUE)) {
    fit <- svr(x, y, C = 5, epsilon = 0.1, kernel = rbf_kernel(1), bias = bias, control = tight,
               scale = FALSE)
    expect_true(fit$convergence$converged)
    expect_true(is.finite(evidence(fit)) && is.finite(evidence(fit, "refined")))
    expect_false(anyNA(predict(fit, c(1, 1.5), interval = "prediction", bound = TRUE)))
  }
  fit <- svr(x, y, C = 5, epsilon = 0.1, kernel = rbf_kernel(1), control = tight, scale = FALSE)
  ref <- svr_cd_reference(K, y, 5, 0.1)
  expect_equal(fit$objective, svr_dual_objective(ref, K, y, 0.1), tolerance = 1e-8)
  # tiny C: every point outside the tube sits at the bound
  tiny <- svr(x, y, C = 1e-8, epsilon = 0.1, kernel = rbf_kernel(1), scale = FALSE)
  expect_true(all(abs(tiny$beta) <= 1e-8))
  expect_true(all(tiny$partition[abs(y) > 0.1 + 1e-6] == "X_C"))
  # huge C: interpolation within the tube where possible
  d <- svr_sine_data(20, seed = 10)
  huge <- svr(d$x, d$y, C = 1e6, epsilon = 0.4, kernel = k_paper, control = tight, scale = FALSE)
  expect_true(all(abs(residuals(huge)) <= 0.4 + 1e-6))
  expect_true(is.finite(evidence(huge, "eq16")))
  # a nearly hard tube, where EP converges slowly or not at all: the model's
  # evidence is a number with a warning that it did not converge, or NA with
  # one that says there is none; never NaN, Inf or an error
  said <- character(0)
  ep <- withCallingHandlers(evidence(huge), warning = function(w) {
    said <<- c(said, conditionMessage(w))
    invokeRestart("muffleWarning")
  })
  expect_true(all(grepl("^svr\\(\\): (no EP evidence|the EP evidence) at C = 1e\\+06", said)))
  expect_false(is.nan(ep) || isTRUE(is.infinite(ep)))
  expect_true(is.finite(ep) || length(said) > 0L)
})

test_that("many rows on a few distinct inputs: the optima of plain R and e1071", {
  # the solver works per distinct input; the solution is still the dual's
  set.seed(21)
  x <- rep(c(-1, 0, 1.5), each = 40)
  y <- sin(x) + rnorm(120, sd = 0.5)
  K <- svr_rbf_gram(x, 1)
  fit <- svr(x, y, C = 2, epsilon = 0.1, kernel = rbf_kernel(1), control = tight, scale = FALSE)
  ref <- svr_cd_reference(K, y, 2, 0.1)
  expect_equal(fit$objective, svr_dual_objective(ref, K, y, 0.1), tolerance = 1e-9)
  # K beta is unique at the optimum even though beta is not
  expect_equal(unname(fitted(fit)), unname(drop(K %*% ref)), tolerance = 1e-6)
  # every row on one input: the piecewise-linear optimum, with and without bias
  y1 <- rnorm(2001)
  for (bias in c(FALSE, TRUE)) {
    one <- svr(rep(0.5, 2001), y1, C = 1, epsilon = 0.1, kernel = rbf_kernel(1), bias = bias,
               control = tight, scale = FALSE)
    expect_true(one$convergence$converged)
    expect_equal(one$objective, svr_identical_inputs_optimum(y1, 1, 0.1, bias),
                 tolerance = 1e-9)
  }
  skip_if_not_installed("e1071")
  fit_b <- svr(x, y, C = 2, epsilon = 0.1, kernel = rbf_kernel(1), bias = TRUE,
               control = svr_control(tol = 1e-8), scale = FALSE)
  lib <- e1071::svm(x, y, type = "eps-regression", kernel = "radial", gamma = 0.5, cost = 2,
                    epsilon = 0.1, scale = FALSE, tolerance = 1e-8)
  xt <- c(-1, 0, 1.5, 0.7)
  expect_equal(predict(fit_b, xt), as.vector(predict(lib, xt)), tolerance = 1e-6)
  expect_equal(fit_b$b, -lib$rho, tolerance = 1e-6)
})

test_that("methods, formula interface and partition", {
  d <- svr_sine_data(40, seed = 11)
  df <- data.frame(t = d$x, y = d$y)
  f1 <- svr(y ~ t, data = df, C = 2, epsilon = 0.4, kernel = k_paper, scale = FALSE)
  f2 <- svr(d$x, d$y, C = 2, epsilon = 0.4, kernel = k_paper, scale = FALSE)
  expect_equal(unname(coef(f1)), unname(coef(f2)))
  expect_equal(unname(predict(f1, data.frame(t = c(1, 2)))), unname(predict(f2, c(1, 2))))
  expect_equal(unname(fitted(f2) + residuals(f2)), d$y)
  expect_equal(nobs(f2), 40L)
  expect_equal(levels(f2$partition), c("X_0", "X_C", "X_M-", "X_M+"))
  expect_equal(unname(f2$partition == "X_0"), unname(coef(f2) == 0))
  expect_output(print(f2), "Support vectors")
  expect_output(print(summary(f2)), "Log evidence")
  expect_output(expect_invisible(print(f2)))
  pdf(NULL)
  on.exit(dev.off())
  expect_silent(plot(f1, bound = TRUE))
  p <- predict(f2, interval = "confidence")
  expect_equal(dim(p), c(40L, 3L))
  expect_equal(unname(p[, "fit"]), unname(fitted(f2)), tolerance = 1e-10)
})

test_that("input validation gives clear errors", {
  d <- svr_sine_data(10)
  expect_error(svr(d$x, d$y, C = -1, scale = FALSE), "'C'")
  expect_error(svr(d$x, d$y, C = Inf, scale = FALSE), "'C'")
  expect_error(svr(d$x, d$y, epsilon = -0.1, scale = FALSE), "'epsilon'")
  expect_error(svr(d$x, d$y[-1], scale = FALSE), "'y' has 9 values")
  expect_error(svr(d$x, d$y, kernel = "rbf", scale = FALSE), "'kernel'")
  expect_error(svr(d$x, d$y, bias = NA, scale = FALSE), "'bias'")
  expect_error(svr(d$x, d$y, optimize = "cv", scale = FALSE), "'optimize' must be TRUE, FALSE")
  # select_C, which chose C before optimize, is gone before any release
  expect_error(svr(d$x, d$y, select_C = "evidence", scale = FALSE), "select_C")
  expect_error(svr(d$x, d$y, control = list(), scale = FALSE), "'control'")
  expect_error(svr(d$x, d$y, foo = 1, scale = FALSE), "unknown argument")
  # lm()'s weights = <column> is named, not evaluated (the column is not
  # an object); unnamed extras are counted
  frame <- data.frame(y = d$y, x = d$x, w = 1)
  expect_error(svr(y ~ x, frame, weights = w), "unknown argument\\(s\\): 'weights'$")
  expect_error(gpsvm:::.check_dots_empty(1, foo = undefined_object),
               "unknown argument\\(s\\): \\(unnamed\\), 'foo'$")
  expect_error(svr(c(d$x[-1], NA), d$y, scale = FALSE), "missing")
  expect_error(svr_control(tol = 0), "'tol'")
  expect_error(svr_control(C_interval = c(2, 1)), "'C_interval'")
  fit <- svr(d$x, d$y, scale = FALSE)
  expect_error(predict(fit, interval = "both"), "'interval'")
  expect_error(predict(fit, level = 1.5), "'level'")
  expect_error(predict(fit, matrix(1, 2, 2)), "'newdata'")
  expect_error(evidence(fit, method = "laplace"), "'method'")
  expect_error(evidence_curve(d$x, d$y, C = -1), "'C'")
  expect_error(evidence_curve(d$x, d$y, C = 1, progress = NA), "'progress'")
  expect_error(evidence_curve(list(list(x = 1:3)), C = 1), "data set 1")
})

test_that("the solver stops at its iteration cap with a warning", {
  d <- svr_sine_data(60)
  expect_warning(fit <- svr(d$x, d$y, C = 10, epsilon = 0.01, kernel = k_paper,
                            control = svr_control(max_iter = 5), scale = FALSE),
                 "did not converge in 5 iterations")
  expect_false(fit$convergence$converged)
  expect_warning(svr(d$x, d$y, C = 10, epsilon = 0.01, kernel = k_paper, bias = TRUE,
                     control = svr_control(max_iter = 5), scale = FALSE),
                 "did not converge in 5 iterations")
})

test_that("large n uses the column cache without the Gram matrix and matches a small cache", {
  # a cache of a few columns either way (GPSVM_TEST_SIZE, helper-size.R)
  n <- test_size(3000, 600)
  set.seed(12)
  x <- matrix(runif(n * 2, -3, 3), ncol = 2)
  y <- sin(x[, 1]) * cos(x[, 2]) + rnorm(n, sd = 0.1)
  a <- svr(x, y, C = 5, epsilon = 0.05, kernel = rbf_kernel(1), bias = TRUE,
           control = svr_control(tol = 1e-6, cache_mb = test_size(0.1, 0.02)), scale = FALSE)
  b <- svr(x, y, C = 5, epsilon = 0.05, kernel = rbf_kernel(1), bias = TRUE,
           control = svr_control(tol = 1e-6, shrinking = FALSE), scale = FALSE)
  expect_equal(a$objective, b$objective, tolerance = 1e-7)
  expect_equal(unname(fitted(a)), unname(fitted(b)), tolerance = 1e-4)
})

test_that("bias = FALSE with shrinking and a small cache reaches the unshrunk optimum", {
  n <- test_size(2500, 500)
  set.seed(13)
  x <- matrix(runif(n * 2, -3, 3), ncol = 2)
  y <- sin(x[, 1]) * cos(x[, 2]) + rnorm(n, sd = 0.1)
  a <- svr(x, y, C = 5, epsilon = 0.05, kernel = rbf_kernel(1),
           control = svr_control(tol = 1e-6, cache_mb = test_size(0.1, 0.02)), scale = FALSE)
  b <- svr(x, y, C = 5, epsilon = 0.05, kernel = rbf_kernel(1),
           control = svr_control(tol = 1e-6, shrinking = FALSE), scale = FALSE)
  expect_true(a$convergence$converged)
  expect_equal(a$objective, b$objective, tolerance = 1e-8)
  expect_equal(unname(fitted(a)), unname(fitted(b)), tolerance = 1e-4)
  # the reported residuals are exact on every point, shrunk or not
  r <- y - drop(kernel_matrix(rbf_kernel(1), x, x[a$beta != 0, , drop = FALSE]) %*%
                  a$beta[a$beta != 0])
  expect_equal(unname(residuals(a)), r, tolerance = 1e-9)
  expect_lt(svr_kkt_violation(a$beta, r, 5, 0.05), 1e-6)
})
