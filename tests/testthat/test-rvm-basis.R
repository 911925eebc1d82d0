# rvm(basis = ) and srvm(basis = ): the models on a subset of candidate
# centres.

# The greedy choice in plain R on a kernel matrix K (helper-mfsvr.R).
greedy_rows_r <- function(K, m) plain_greedy_pivots(function(j) K[, j], diag(K), m)

test_that("the candidate centres are the greedy pivoted-Cholesky choice", {
  d <- rvm_sinc_data(60, seed = 11)
  fit <- rvm(d$x, d$y, kernel = rbf_kernel(0.8), basis = 15, scale = FALSE)
  K <- rbf_deriv_r(d$x, d$x, 0.8, 0)
  expect_identical(fit$basis, sort(greedy_rows_r(K, 15)))
  expect_true(all(fit$relevance_vectors %in% fit$basis))
})

test_that("on its candidates the fit is a stationary point of the evidence", {
  d <- rvm_sinc_data(80, seed = 12)
  g <- rvm(d$x, d$y, kernel = rbf_kernel(1.2), basis = 25, scale = FALSE,
           control = rvm_control(tol = 1e-9, tol_evidence = 0))
  expect_true(g$convergence$converged)
  H <- cbind(1, rbf_deriv_r(d$x, d$x[g$basis], 1.2, 0))
  keep <- c(1L, match(g$relevance_vectors, g$basis) + 1L)
  C <- g$noise_variance * diag(80) +
    H[, keep] %*% diag(1 / g$prior_precision, length(keep)) %*% t(H[, keep])
  Ci <- solve(C)
  for (i in seq_len(ncol(H))) {
    S <- drop(t(H[, i]) %*% Ci %*% H[, i])
    Q <- drop(t(H[, i]) %*% Ci %*% d$y)
    k <- match(i, keep)
    if (is.na(k)) {
      expect_lte(Q^2 - S, 1e-6 * S)  # adding a left-out candidate cannot help
    } else if (i > 1L) {
      s <- g$prior_precision[k] * S / (g$prior_precision[k] - S)
      q <- g$prior_precision[k] * Q / (g$prior_precision[k] - S)
      expect_equal(unname(g$prior_precision[k]), unname(s^2 / (q^2 - s)), tolerance = 1e-5)
    }
  }
  R <- chol(C)
  direct <- -0.5 * (80 * log(2 * pi) + 2 * sum(log(diag(R))) +
                      sum(backsolve(R, d$y, transpose = TRUE)^2))
  expect_equal(as.numeric(logLik(g)), direct, tolerance = 1e-8)
  # predictions use the kept centres: the posterior mean of the weights
  z <- c(-3, 0.5, 7)
  Hz <- cbind(1, rbf_deriv_r(z, d$x[g$relevance_vectors], 1.2, 0))
  Sigma <- solve(crossprod(H[, keep]) / g$noise_variance + diag(g$prior_precision))
  mu <- drop(Sigma %*% crossprod(H[, keep], d$y)) / g$noise_variance
  expect_equal(unname(predict(g, z)), drop(Hz %*% mu), tolerance = 1e-7)
})

test_that("every input as a candidate is the default fit", {
  d <- rvm_sinc_data(50, seed = 13)
  a <- rvm(d$x, d$y)
  b <- rvm(d$x, d$y, basis = 50)
  expect_null(a$basis)
  expect_null(b$basis)
  expect_identical(coef(a), coef(b))
  expect_identical(a$relevance_vectors, b$relevance_vectors)
})

test_that("the default offers every distinct input up to 1000 of them and 1000 beyond", {
  set.seed(14)
  x <- matrix(runif(1500 * 2), ncol = 2)
  k <- rbf_kernel(0.05)
  expect_null(gpsvm:::.rvm_basis_rows(NULL, x[1:1000, ], k))
  rows <- gpsvm:::.rvm_basis_rows(NULL, x[1:1001, ], k)
  expect_length(rows, 1000L)
  expect_false(is.unsorted(rows, strictly = TRUE))
  # one row more swaps at most a candidate: no size changes them abruptly
  expect_lte(length(setdiff(rows, gpsvm:::.rvm_basis_rows(NULL, x[1:1002, ], k))), 1L)
  expect_length(gpsvm:::.rvm_basis_rows(20L, x, k), 20L)
  expect_identical(gpsvm:::.candidate_count(NULL, x), 1000L)
  # the rule counts distinct inputs: 1200 rows holding 700 distinct offer all 700
  dup <- x[c(1:700, 1:500), ]
  expect_identical(gpsvm:::.rvm_basis_rows(NULL, dup, k), 1:700)
  expect_identical(gpsvm:::.candidate_count(NULL, dup), 700L)
  # the rule is the size policy's, for rvm() and srvm() alike
  op <- options(gpsvm.size_policy = list(basis_chosen = 30))
  on.exit(options(op))
  expect_length(gpsvm:::.rvm_basis_rows(NULL, x[1:31, ], k), 30L)
  expect_null(gpsvm:::.rvm_basis_rows(NULL, x[1:30, ], k))
})

test_that("duplicated inputs are never offered twice, and one point works", {
  d <- rvm_sin_data(20, seed = 15)
  x <- rep(d$x[1:10], 2)
  fit <- rvm(x, d$y, basis = 15)
  expect_length(fit$basis, 10L)
  expect_false(anyDuplicated(x[fit$basis]) > 0)
  expect_true(all(is.finite(predict(fit, c(-2, 0, 2)))))
  one <- rvm(2, 1, basis = 1)
  expect_true(is.finite(predict(one, 2)))
})

test_that("by default each distinct input is offered once", {
  skip_on_cran()
  set.seed(1)
  x <- round(runif(200, 0, 10), 1)  # 83 distinct values
  y <- sin(x) + rnorm(200, sd = 0.3)
  distinct <- which(!duplicated(x))
  # rvm(): equal columns make the same model, so the evidence and the fit
  # are those of all 200 candidates, with no input kept twice
  fit <- rvm(x, y)
  all_rows <- rvm(x, y, basis = 200)
  expect_identical(fit$basis, distinct)
  expect_null(all_rows$basis)
  expect_equal(as.numeric(logLik(fit)), as.numeric(logLik(all_rows)), tolerance = 1e-10)
  expect_equal(fitted(fit), fitted(all_rows), tolerance = 1e-10)
  expect_false(anyDuplicated(x[fit$relevance_vectors]) > 0)
  expect_true(any(grepl("chosen among 83 candidate centres \\(basis, each distinct input once\\)",
                        capture.output(print(fit)))))
  # srvm() moves every alpha at once and drifts along the flat direction of
  # equal columns: from all 200 its hyperparameters are still moving when it
  # stops, after 1000 steps or where the evidence stops moving (which of
  # the two comes first is a matter of rounding)
  drift <- suppressWarnings(srvm(x, y, basis = 200, control = srvm_control(max_iter = 1000)))
  expect_gt(drift$convergence$change, 1e4 * drift$convergence$tol)
  smooth <- expect_silent(srvm(x, y, control = srvm_control(max_iter = 1000)))
  expect_identical(smooth$basis, distinct)
  expect_true(smooth$convergence$converged)
  # on 1600 rows the rule counts the 83 distinct inputs and offers each; a
  # greedy choice of more than there are offers no input twice either (it
  # stops when the rest are explained)
  many <- rep(x, 8)
  expect_identical(gpsvm:::.rvm_basis_rows(NULL, matrix(many), rbf_kernel(1)), distinct)
  rows <- gpsvm:::.rvm_basis_rows(150L, matrix(many), rbf_kernel(1))
  expect_false(anyDuplicated(many[rows]) > 0)
  expect_lte(length(rows), 83L)
})

test_that("print() says the relevance vectors were chosen among candidates", {
  d <- rvm_sinc_data(60, seed = 16)
  out <- capture.output(print(rvm(d$x, d$y, basis = 12)))
  expect_true(any(grepl("chosen among 12 candidate centres", out)))
  every <- capture.output(print(rvm(d$x, d$y)))
  expect_false(any(grepl("chosen among", every)))
  expect_true(any(grepl("basis: every distinct input \\(60 candidate centres\\)", every)))
  expect_true(any(grepl("basis: 12 candidate centres; the call", out)))
})

test_that("bad 'basis' gives clear errors", {
  d <- rvm_sinc_data(30, seed = 17)
  expect_error(rvm(d$x, d$y, basis = 0), "basis")
  expect_error(rvm(d$x, d$y, basis = 2.5), "basis")
  expect_error(rvm(d$x, d$y, basis = "a"), "basis")
  expect_error(rvm(d$x, d$y, basis = c(3, 4)), "basis")
  expect_error(rvm(d$x, d$y, basis = 31), "'basis' = 31 exceeds the number of observations")
  expect_error(gpsvm:::cpp_rvm_fit(rbf_kernel(1), matrix(d$x), d$y, unclass(rvm_control(max_iter = 100)),
                                   basis = c(1L, 40L)), "basis")
})

test_that("srvm on candidate centres follows updates (7)-(9) in plain R", {
  d <- rvm_sinc_data(60, seed = 18)
  s <- 1.6
  rows <- sort(greedy_rows_r(rbf_deriv_r(d$x, d$x, s, 0), 20))
  centres <- d$x[rows]
  H <- cbind(1, rbf_deriv_r(d$x, centres, s, 0))
  # the penalty acts on the kept basis functions, at the training inputs
  P <- crossprod(cbind(0, rbf_deriv_r(d$x, centres, s, 2)))
  ctl <- srvm_control(lambda_init = 10, alpha_init = 0.5, sigma2_init = 0.2)
  s2 <- mean(d$y^2)
  alpha0 <- rep(0.5 / s2, 21)
  lambda0 <- 10 * sum(alpha0) / sum(diag(P))
  sigma0 <- 0.2 * var(d$y)
  for (iters in c(1, 4, 30)) {
    ctl$max_iter <- as.integer(iters)
    fit <- suppressWarnings(srvm(d$x, d$y, kernel = rbf_kernel(s), basis = 20,
                                 control = ctl, scale = FALSE))
    ref <- srvm_updates_r(H, P, d$y, alpha0, lambda0, sigma0, iters, prune = 1e9 / s2)
    expect_identical(fit$basis, rows)
    expect_equal(c(1L, match(fit$relevance_vectors, rows) + 1L), ref$active)
    expect_equal(unname(fit$prior_precision), ref$alpha, tolerance = 1e-7)
    expect_equal(fit$lambda, ref$lambda, tolerance = 1e-7)
    expect_equal(fit$noise_variance, ref$sigma2, tolerance = 1e-7)
  }
  # the evidence, and predictions with the posterior of those hyperparameters
  act <- ref$active
  expect_equal(as.numeric(logLik(fit)),
               log_marginal_r(H[, act], P[act, act], d$y, ref$alpha, ref$lambda, ref$sigma2),
               tolerance = 1e-8)
  Ha <- H[, act]
  Sigma <- solve(crossprod(Ha) / ref$sigma2 + ref$lambda * P[act, act] + diag(ref$alpha))
  mu <- drop(Sigma %*% crossprod(Ha, d$y)) / ref$sigma2
  z <- c(-4, 0.3, 6)
  Hz <- cbind(1, rbf_deriv_r(z, centres[act[-1] - 1], s, 0))
  expect_equal(unname(predict(fit, z)), drop(Hz %*% mu), tolerance = 1e-7)
})

test_that("srvm() chooses its candidates, prints them and checks 'basis'", {
  d <- rvm_sinc_data(40, seed = 19)
  expect_null(srvm(d$x, d$y)$basis)
  fit <- srvm(d$x, d$y, basis = 12)
  expect_length(fit$basis, 12L)
  expect_true(all(fit$relevance_vectors %in% fit$basis))
  expect_true(any(grepl("chosen among 12 candidate centres", capture.output(print(fit)))))
  expect_error(srvm(d$x, d$y, basis = 0), "basis")
  expect_error(srvm(d$x, d$y, basis = 1.5), "basis")
  expect_error(srvm(d$x, d$y, basis = 41), "'basis' = 41 exceeds the number of observations")
  # duplicated inputs are offered once; one point works
  x <- rep(d$x[1:10], 2)
  dup <- srvm(x, d$y[1:20], basis = 15)
  expect_length(dup$basis, 10L)
  expect_true(all(is.finite(predict(dup, c(-2, 0, 2)))))
  expect_true(is.finite(predict(srvm(2, 1, basis = 1), 2)))
  # the formula method passes it on, and update() keeps it
  df <- data.frame(x = d$x, y = d$y)
  f <- srvm(y ~ x, df, basis = 12)
  expect_identical(f$basis, fit$basis)
  expect_identical(update(f, basis = 10)$basis, srvm(y ~ x, df, basis = 10)$basis)
})

test_that("a fit that stopped because the evidence stopped rising says so", {
  skip_on_cran()
  set.seed(1)
  x <- runif(300, -10, 10)
  y <- sin(x) / x + rnorm(300, sd = 0.1)
  fits <- list(srvm(x, y, kernel = rbf_kernel(1.6), basis = 60, scale = FALSE),
               srvm(x, y, kernel = rbf_kernel(1.6), scale = FALSE),
               rvm(x, y, kernel = rbf_kernel(1.6), scale = FALSE),
               rvm(x, y, kernel = rbf_kernel(0.5), basis = 80, scale = FALSE))
  by_evidence <- 0
  for (f in fits) {
    cv <- f$convergence
    expect_true(cv$converged)
    if (cv$change >= cv$tol) {
      by_evidence <- by_evidence + 1
      expect_match(cv$reason, "tol_evidence")
      expect_true(any(grepl("tol_evidence", capture.output(print(f)))))
    } else {
      expect_true(is.na(cv$reason))
    }
  }
  expect_gt(by_evidence, 0)  # the first fit stops this way
  # without the evidence test, only the change can stop it
  strict <- srvm(x, y, kernel = rbf_kernel(1.6), basis = 60, scale = FALSE,
                 control = srvm_control(tol_evidence = 0, max_iter = 20000))
  expect_true(strict$convergence$converged)
  expect_lt(strict$convergence$change, strict$convergence$tol)
  expect_true(is.na(strict$convergence$reason))
})
