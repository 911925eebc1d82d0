# svr(noise = ): the MAP estimate of mfsvr()'s model with the tube's noise
# scale exp(l(x)) (each row's box C exp(-l_i) and tube epsilon exp(l_i))
# against independent references: the dual's optimality (KKT) conditions
# written out in plain R at arbitrary per-row scales, a constant shift of l
# as the plain SVR at the stretched C and epsilon, the prediction interval
# against the CDF of the epsilon-insensitive predictive by integrate() at
# each input's own C and epsilon, and constant-noise data keeping the
# constant fit.

svr_het_data <- function(n, seed = 1) {
  set.seed(seed)
  x <- sort(runif(n, 0, 10))
  s <- 0.1 + 0.09 * x  # noise sd from 0.1 to 1
  list(x = x, y = 2 * sin(x) + rnorm(n, sd = s), sd = s)
}

# The dual's KKT conditions at per-row boxes C_i and tubes epsilon_i (no
# threshold): |beta_i| <= C_i; beta_i = 0 inside the tube; on its edge, with
# beta's sign, between the bounds; beyond it at the bound.  Returns the
# largest violation, in units of the response.
svr_kkt_violation <- function(beta, r, C, epsilon) {
  a <- abs(beta)
  tol <- 1e-7 * max(C)
  box <- max(0, a - C)
  zero <- a <= tol
  bound <- a >= C - tol
  margin <- !zero & !bound
  inside <- if (any(zero)) max(0, abs(r[zero]) - epsilon[zero]) else 0
  edge <- if (any(margin)) max(abs(r[margin] - sign(beta[margin]) * epsilon[margin])) else 0
  beyond <- if (any(bound)) max(0, epsilon[bound] - sign(beta[bound]) * r[bound]) else 0
  max(box / max(C), inside, edge, beyond)
}

test_that("the per-row dual's solution meets its optimality conditions", {
  set.seed(11)
  n <- test_size(80, 40)
  x <- matrix(sort(runif(n, 0, 6)))
  y <- sin(x[, 1]) * (1 + x[, 1]) + rnorm(n, sd = 0.2 + 0.3 * x[, 1])
  kernel <- rbf_kernel(0.8)
  K <- exp(-outer(x[, 1], x[, 1], "-")^2 / (2 * 0.8^2))
  for (l in list(0.6 * sin(x[, 1]), log(0.1 + x[, 1] / 3), rep(-0.4, n))) {
    fit <- gpsvm:::.svr_fit(x, y, 2, 0.15, kernel, FALSE, svr_control(tol = 1e-6),
                            log_noise_scale = l)
    C_i <- 2 * exp(-l)
    eps_i <- 0.15 * exp(l)
    r <- y - drop(K %*% fit$beta)
    expect_lt(svr_kkt_violation(fit$beta, r, C_i, eps_i), 1e-6)
    expect_equal(unname(fit$fitted.values), drop(K %*% fit$beta), tolerance = 1e-8)
    # the objective written out
    expect_equal(fit$objective, 0.5 * sum(fit$beta * (K %*% fit$beta)) - sum(y * fit$beta) +
                   sum(eps_i * abs(fit$beta)), tolerance = 1e-8)
    # the partition reads each row's own box
    expect_identical(fit$partition == "X_C", abs(fit$beta) >= C_i * (1 - 1e-6))
  }
  # a constant shift is the plain SVR at C e^-c and epsilon e^c
  shifted <- gpsvm:::.svr_fit(x, y, 2, 0.15, kernel, FALSE, svr_control(tol = 1e-6),
                              log_noise_scale = rep(0.7, n))
  plain <- gpsvm:::.svr_fit(x, y, 2 * exp(-0.7), 0.15 * exp(0.7), kernel, FALSE,
                            svr_control(tol = 1e-6))
  expect_equal(shifted$beta, plain$beta, tolerance = 1e-8)
  # twins must share their scale (the core's check)
  expect_error(gpsvm:::.svr_fit(rbind(x, x[1, ]), c(y, 0), 2, 0.15, kernel, FALSE, svr_control(),
                                log_noise_scale = c(rep(0, n), 1)), "identical inputs")
})

test_that("svr()'s varying noise is mfsvr()'s, and its intervals the predictive at each input", {
  d <- svr_het_data(test_size(120, 60), seed = 5)
  fit <- svr(d$x, d$y, noise = "varying", calibration_folds = 0)
  expect_identical(fit$noise_model$type, "varying")
  # the MAP at each row's box and tube (plain-R KKT, in model units)
  nm <- fit$noise_model
  l <- drop(kernel_matrix(nm$kernel, fit$x, nm$centres) %*% nm$theta + nm$offset) / 2
  yy <- (fit$y - fit$response_scaling$center) / fit$response_scaling$scale
  K <- kernel_matrix(fit$kernel, fit$x)
  expect_lt(svr_kkt_violation(fit$beta, yy - drop(K %*% fit$beta), fit$C * exp(-l),
                              fit$epsilon * exp(l)), 1e-5)
  # the interval: F(upper) = 0.95 and F(lower) = 0.05 for the epsilon-
  # insensitive noise at the input's own C_i, epsilon_i, by integrate()
  new <- c(0.3, 4.2, 9.7)
  p <- predict(fit, new, interval = "prediction", level = 0.9, se.fit = TRUE)
  z <- matrix((new - fit$scaling$center) / fit$scaling$scale)
  lz <- drop(kernel_matrix(nm$kernel, z, nm$centres) %*% nm$theta + nm$offset) / 2
  s <- fit$response_scaling
  m <- (p$fit[, "fit"] - s$center) / s$scale
  sd <- p$se.fit / s$scale
  for (i in seq_along(new)) {
    C <- fit$C * exp(-lz[i])
    eps <- fit$epsilon * exp(lz[i])
    noise <- function(e) C / (2 * (eps * C + 1)) * exp(-C * pmax(abs(e) - eps, 0))
    cdf <- function(t) {
      stats::integrate(function(e) noise(e) * stats::pnorm(t - m[i] - e, sd = sd[i]),
                       -Inf, Inf, rel.tol = 1e-11)$value
    }
    ends <- (p$fit[i, c("lwr", "upr")] - s$center) / s$scale
    expect_equal(c(cdf(ends[[1]]), cdf(ends[[2]])), c(0.05, 0.95), tolerance = 1e-7)
  }
  w <- p$fit[, "upr"] - p$fit[, "lwr"]
  expect_gt(w[3] / w[1], 2)
  # the distribution's quantiles are the interval's ends
  dist <- predict(fit, new, type = "distribution")
  expect_equal(unname(quantile(dist, 0.95)[, 1]), unname(p$fit[, "upr"]), tolerance = 1e-8)
  # print() and the plan say which noise
  expect_match(paste(capture.output(print(fit)), collapse = " "), "varying with the inputs")
  expect_match(fit$plan$choice[fit$plan$step == "noise"], "varying")
  # summary() leaves out the paper's evidences (the constant model's), which
  # evidence() refuses for this fit, and keeps the rest
  expect_error(evidence(fit, "eq16"), "noise = \"varying\"")
  out <- paste(capture.output(print(summary(fit))), collapse = " ")
  expect_no_match(out, "eq\\. 16")
  expect_match(out, "Dual objective")
  expect_match(paste(capture.output(print(summary(update(fit, noise = "constant")))), collapse = " "),
               "eq\\. 16")
})

test_that("calibration refits of svr() and mfsvr() keep the noise function", {
  skip_on_cran()
  d <- svr_het_data(60, seed = 8)
  for (model in c("svr", "mfsvr")) {
    # what each refit's noise is: the fitted noise function at its rows
    rec <- new.env()
    rec$kept <- list()
    suppressMessages(trace(".kept_tube_noise", where = asNamespace("gpsvm"), print = FALSE,
                           exit = bquote(assign("kept", c(get("kept", .(rec)),
                                                          list(c(returnValue(), list(x = x)))),
                                                envir = .(rec)))))
    fit <- tryCatch(match.fun(model)(d$x, d$y, noise = "varying", calibration_folds = 4),
                    finally = suppressMessages(untrace(".kept_tube_noise", where = asNamespace("gpsvm"))))
    expect_false(is.null(fit$interval_calibration))
    expect_length(rec$kept, 4L)
    nm <- fit$noise_model
    for (k in rec$kept) {
      expect_identical(k$model, nm)
      expect_identical(c(k$C, k$epsilon), c(fit$C, fit$epsilon))
      # l at the refit's rows, written out: half the log variance factor
      d2 <- outer(k$x[, 1], nm$centres[, 1], "-")^2
      expect_equal(k$l, drop(exp(-d2 / (2 * nm$kernel$sigma^2)) %*% nm$theta + nm$offset) / 2,
                   tolerance = 1e-10)
    }
    p <- predict(fit, c(0.5, 9.5), interval = "prediction")
    w <- p[, "upr"] - p[, "lwr"]
    expect_gt(w[2] / w[1], 2)
  }
  # mfsvr()'s refits search nothing: the constant-noise searches (of C, or
  # of more) run as often with the calibration as without it
  searches <- function(folds) {
    rec <- new.env()
    rec$n <- 0L
    ns <- asNamespace("gpsvm")
    fns <- c(".mfsvr_choose_C", ".mfsvr_optimize")
    for (f in fns) {
      suppressMessages(trace(f, where = ns, print = FALSE,
                             tracer = bquote(assign("n", get("n", .(rec)) + 1L, envir = .(rec)))))
    }
    on.exit(for (f in fns) suppressMessages(untrace(f, where = ns)))
    fit <- mfsvr(d$x, d$y, noise = "varying", calibration_folds = folds)
    expect_identical(fit$noise_model$type, "varying")
    rec$n
  }
  own <- searches(0)
  expect_gt(own, 0L)
  expect_identical(searches(4), own)
})

test_that("svr()'s bad noise arguments, refusals and hand-edited noise models are errors", {
  d <- svr_het_data(30, seed = 9)
  expect_error(svr(d$x, d$y, noise = "hetero"), "'noise'")
  expect_error(svr(d$x, d$y, noise = "varying", bias = TRUE), "free threshold")
  fit <- svr(d$x, d$y, noise = "varying", calibration_folds = 0)
  expect_error(confint(fit), "noise = \"varying\"")
  expect_error(evidence(fit, method = "eq16"), "noise = \"varying\"")
  expect_equal(c(logLik(fit)), c(evidence(fit)))
  bad <- fit
  bad$noise_model$theta[1] <- Inf
  expect_error(predict(bad, 1, interval = "prediction"), "noise_model")
  bad <- fit
  bad$beta[which.max(abs(bad$beta))] <- 1e6
  expect_error(predict(bad, 1), "beta")
  # duplicated inputs whose noise scales differ by rounding (mcycle's times)
  if (requireNamespace("MASS", quietly = TRUE)) {
    mc <- svr(accel ~ times, MASS::mcycle, noise = "varying", calibration_folds = 0)
    expect_true(all(is.finite(predict(mc, data.frame(times = c(10, 30)), interval = "prediction"))))
  }
  # four rows, two of them duplicated inputs: a finite fit
  tiny <- svr(c(1, 1, 2, 3), c(0.1, 0.3, 1, 0.2), noise = "varying", calibration_folds = 0)
  expect_true(all(is.finite(predict(tiny, c(1, 2.5), interval = "prediction"))))
})
