# gpc_paper(): the naive mean-field classifier against Algorithm 17.1 written out
# in plain R, the fixed-point equations (17.40), and its predictions.

test_that("Algorithm 17.1 matches a plain-R transcription step for step", {
  d <- two_class_data(40, 11)
  for (setting in list(list(kappa = 0, noise = 0.5), list(kappa = 0.1, noise = 0),
                       list(kappa = 0.02, noise = 1.3))) {
    fit <- gpc_paper(d$x, d$y, rbf_kernel(0.9), noise = setting$noise, kappa = setting$kappa,
                     control = gpc_control(algorithm = "paper"))
    K <- rbf_gram(d$x, 0.9) + diag(setting$noise, 40)
    ref <- naive_mf_r(K, d$y, kappa = setting$kappa)
    expect_identical(fit$convergence$iterations, as.integer(ref$iterations))
    # the core evaluates G(z) in logs and R as a plain ratio; the iteration
    # amplifies that last-digit difference to about 1e-11 over ~40 steps
    expect_equal(unname(fit$alpha), ref$alpha, tolerance = 1e-9)
  }
})

test_that("the converged alpha solves the mean-field equations (17.40)", {
  d <- two_class_data(60, 12)
  fit <- gpc_paper(d$x, d$y, rbf_kernel(1.5), noise = 0.3, kappa = 0.05,
             control = gpc_control(tol = 1e-28, max_iter = 100000))
  expect_true(fit$convergence$converged)
  K <- rbf_gram(d$x, 1.5) + diag(0.3, 60)
  f <- drop(K %*% (d$y * fit$alpha))
  z <- (d$y * f - diag(K) * fit$alpha) / sqrt(diag(K))
  rhs <- 0.9 * dnorm(z) / (0.05 + 0.9 * pnorm(z)) / sqrt(diag(K))
  expect_lt(max(abs(unname(fit$alpha) - rhs)), 1e-12)
  # the posterior mean activation of eq. (17.35), noise-free kernel
  expect_equal(unname(fitted(fit, type = "link")),
               drop(rbf_gram(d$x, 1.5) %*% (d$y * fit$alpha)), tolerance = 1e-12)
})

test_that("points far from the boundary neither overflow nor give NaN", {
  # a mislabelled point deep in the other class sits at z = -30, where
  # phi(z) / Phi(z) must come from the tails, not from 0 / 0
  x <- c(-30, -20, -10, 10, 20, 30, -15)
  y <- c(-1, -1, -1, 1, 1, 1, 1)
  K <- outer(x, x) + diag(1, 7)
  for (algorithm in c("paper", "newton")) {
    fit <- gpc_paper(x, y, linear_kernel(), noise = 1,
                     control = gpc_control(tol = 1e-22, algorithm = algorithm))
    z <- (y * drop(K %*% (y * fit$alpha)) - diag(K) * fit$alpha) / sqrt(diag(K))
    expect_lt(min(z), -25)
    rhs <- exp(dnorm(z, log = TRUE) - pnorm(z, log.p = TRUE)) / sqrt(diag(K))
    # the stopping test is absolute, |delta alpha| < 1e-11
    expect_lt(max(abs(unname(fit$alpha) - rhs)), 1e-11 * 1.01)
    if (algorithm == "paper") expect_lt(max(abs(unname(fit$alpha) - rhs) / rhs), 1e-10)
  }
  # predictions far out: probabilities stay in [0, 1] and follow pnorm
  new <- c(-1e6, -50, 0, 50, 1e6)
  p <- predict(fit, new, type = "prob")
  f <- predict(fit, new, type = "link")
  expect_true(all(is.finite(p)) && all(p >= 0 & p <= 1))
  expect_equal(unname(p[, "1"]), pnorm(f / sqrt(new^2 + 1)), tolerance = 1e-14)
  # the first class's column is computed directly, not as 1 - p
  expect_equal(unname(p[, "-1"]), pnorm(-f / sqrt(new^2 + 1)), tolerance = 1e-14)
  # k(x, x) up to 901 here: the paper's ftol stops at a step of 4% of the
  # largest alpha, which is said
  expect_warning(fk <- gpc_paper(x, y, linear_kernel(), noise = 1, kappa = 0.05), "too coarse")
  expect_true(all(is.finite(fk$alpha)))
  pk <- predict(fk, new, type = "prob")[, "1"]
  expect_equal(unname(pk), 0.05 + 0.9 * pnorm(predict(fk, new, type = "link") / sqrt(new^2 + 1)),
               tolerance = 1e-14)
  expect_true(all(pk >= 0.05 & pk <= 0.95))
})

test_that("class probabilities follow the naive predictive of the paper's model", {
  d <- two_class_data(50, 13)
  y <- factor(ifelse(d$y > 0, "yes", "no"), levels = c("no", "yes"))
  fit <- gpc_paper(d$x, y, rbf_kernel(1), noise = 0.4, kappa = 0.03)
  z <- matrix(rnorm(30), 15, 2)
  f <- drop(rbf_gram(z, 1, d$x) %*% (d$y * fit$alpha))
  expect_equal(unname(predict(fit, z, type = "link")), f, tolerance = 1e-12)
  p <- predict(fit, z, type = "prob")
  expect_identical(colnames(p), c("no", "yes"))
  expect_equal(unname(p[, "yes"]), 0.03 + 0.94 * pnorm(f / sqrt(1 + 0.4)), tolerance = 1e-12)
  expect_equal(unname(p[, "no"]), 0.03 + 0.94 * pnorm(-f / sqrt(1 + 0.4)), tolerance = 1e-12)
  expect_equal(unname(rowSums(p)), rep(1, 15), tolerance = 1e-14)
  expect_equal(as.character(predict(fit, z)), ifelse(f >= 0, "yes", "no"))
  expect_equal(levels(fitted(fit)), c("no", "yes"))
})

test_that("the formula method matches the matrix method", {
  d <- two_class_data(30, 14)
  df <- data.frame(u = d$x[, 1], v = d$x[, 2], cls = d$y)
  f1 <- gpc_paper(cls ~ u + v, data = df, kernel = rbf_kernel(1), noise = 0.5)
  f2 <- gpc_paper(d$x, d$y, rbf_kernel(1), noise = 0.5)
  expect_equal(unname(f1$alpha), unname(f2$alpha))
  expect_equal(unname(predict(f1, data.frame(u = 0.3, v = -1), type = "prob")),
               unname(predict(f2, cbind(0.3, -1), type = "prob")))
})

test_that("non-convergence is a warning naming the iterations and residual", {
  d <- two_class_data(30, 15)
  expect_warning(fit <- gpc_paper(d$x, d$y, rbf_kernel(1), noise = 0.5,
                            control = gpc_control(max_iter = 3, algorithm = "paper")),
                 "did not converge in 3 iterations \\(change")
  expect_false(fit$convergence$converged)
  expect_warning(fit <- gpc_paper(d$x, d$y, rbf_kernel(1), noise = 0.5,
                                  control = gpc_control(max_iter = 1)),
                 "sweeps|Newton|did not converge in 1 iteration \\(change")
  expect_false(fit$convergence$converged)
})

test_that("the Newton solver converges where Algorithm 17.1 diverges, to the same fixed point", {
  # two overlapping classes, a wide kernel and a bias constant: the kernel
  # matrix has a few very large eigenvalues, and Algorithm 17.1's parallel
  # steps lose the fixed point
  n <- 400
  d <- parabola_classes(n, 42)
  x <- d$x
  y <- d$y
  xs <- scale(x)
  fit <- gpc(xs, y, rbf_kernel(2), noise = 1, bias = 1, method = "naive", scale = FALSE,
             control = gpc_control(tol = 1e-20))
  expect_true(fit$convergence$converged)
  # the fixed point of (17.40), checked in plain R
  K <- rbf_gram(xs, 2) + 1 + diag(1, n)
  f <- drop(K %*% (y * fit$alpha))
  z <- (y * f - diag(K) * fit$alpha) / sqrt(diag(K))
  rhs <- exp(dnorm(z, log = TRUE) - pnorm(z, log.p = TRUE)) / sqrt(diag(K))
  expect_lt(max(abs(unname(fit$alpha) - rhs)), 1e-10)
  # a dense Newton iteration in plain R reaches the same point
  a <- numeric(n)
  for (it in 1:50) {
    h <- drop((K * outer(y, y)) %*% a) - diag(K) * a
    zz <- h / sqrt(diag(K))
    g <- exp(dnorm(zz, log = TRUE) - pnorm(zz, log.p = TRUE))
    delta <- g / sqrt(diag(K)) - a
    if (max(abs(delta)) < 1e-13) break
    w <- g * (zz + g) / diag(K)
    a <- a + solve(diag(n) + w * (K * outer(y, y) - diag(diag(K))), delta)
  }
  expect_equal(unname(fit$alpha), a, tolerance = 1e-8)
  # Algorithm 17.1 from the same start does not get there in its default budget
  paper <- suppressWarnings(gpc(xs, y, rbf_kernel(2), noise = 1, bias = 1, method = "naive",
                                scale = FALSE, control = gpc_control(algorithm = "paper")))
  if (paper$convergence$converged) {
    expect_lt(max(abs(paper$alpha - fit$alpha)), 10 * sqrt(1e-5))
  }
})

test_that("no fixed point (duplicates with opposite labels, no noise) is said clearly", {
  x <- rbind(c(0, 0), c(0, 0), c(2, 2), c(-2, -2))
  y <- c(1, -1, 1, -1)
  # (the absolute test of a coarse tol can be met on the way out, as
  # Algorithm 17.1 would be)
  expect_warning(fit <- gpc_paper(x, y, rbf_kernel(1), noise = 0,
                                  control = gpc_control(tol = 1e-20)), "no fixed point")
  expect_false(fit$convergence$converged)
  expect_true(all(is.finite(fit$alpha)))
  # with noise the fixed point exists and is found
  fit <- gpc_paper(x, y, rbf_kernel(1), noise = 0.1, control = gpc_control(tol = 1e-20))
  K <- rbf_gram(x, 1) + diag(0.1, 4)
  z <- (y * drop(K %*% (y * fit$alpha)) - diag(K) * fit$alpha) / sqrt(diag(K))
  rhs <- exp(dnorm(z, log = TRUE) - pnorm(z, log.p = TRUE)) / sqrt(diag(K))
  expect_lt(max(abs(unname(fit$alpha) - rhs)), 1e-10)
})

test_that("a kernel of large scale: the paper's absolute ftol warns, a smaller one is right", {
  # k(x, x) ~ 1e6: alpha_i ~ 1e-3 and the start alpha = 0 passes ftol = 1e-5
  d <- two_class_data(30, 17)
  kern <- rbf_kernel(1)
  expect_warning(fit <- gpc_paper(d$x, d$y, kern, noise = 1e6), "too coarse for this kernel's scale")
  expect_identical(fit$convergence$iterations, 0L)
  K <- rbf_gram(d$x, 1) + diag(1e6, 30)
  fine <- expect_silent(gpc_paper(d$x, d$y, kern, noise = 1e6,
                                  control = gpc_control(tol = 1e-20, algorithm = "paper")))
  ref <- naive_mf_r(K, d$y, ftol = 1e-20)
  expect_equal(unname(fine$alpha), ref$alpha, tolerance = 1e-10)
  expect_identical(fine$convergence$iterations, as.integer(ref$iterations))
  # the coordinate sweeps reach the same fixed point
  sweeps <- expect_silent(gpc_paper(d$x, d$y, kern, noise = 1e6, control = gpc_control(tol = 1e-24)))
  expect_equal(unname(sweeps$alpha), ref$alpha, tolerance = 1e-7)
  # the paper's setting does not warn
  expect_silent(gpc_paper(d$x, d$y, rbf_kernel(1), noise = 1.3))
})

test_that("print() shows a smallest embedding strength at rounding level as 0", {
  d <- two_class_data(30, 16)
  fit <- gpc(d$x, d$y, rbf_kernel(1), noise = 0.5, method = "tap")
  strengths <- function(f) {
    line <- grep("alpha in", capture.output(print(f)), value = TRUE)
    as.numeric(regmatches(line, regexpr("(?<=\\[)[^,]+", line, perl = TRUE)))
  }
  expect_equal(strengths(fit), signif(min(fit$alpha), 3))
  largest <- max(fit$alpha)
  # within 1e-9 of the largest: rounding, shown as 0; beyond it, as it is
  # (the decision values follow the edit, as the validator checks)
  with_alpha <- function(value) {
    fit$alpha[1] <- value
    fit$fitted.values <- gpsvm:::.classif_link(fit, fit$x)
    fit
  }
  expect_identical(strengths(with_alpha(-1e-11 * largest)), 0)
  expect_equal(strengths(with_alpha(-1e-7 * largest)), signif(-1e-7 * largest, 3))
})

test_that("summary() prints the confusion table, or each class's errors where it would wrap", {
  d <- two_class_data(45, 7)
  y <- factor(ifelse(d$x[, 1] > 0.4, "third", as.character(d$y)))
  old <- options(width = 80)
  on.exit(options(old))
  fit <- gpc(d$x, y, rbf_kernel(1), noise = 0.1)
  out <- capture.output(print(summary(fit)))
  expect_false(any(grepl("By class", out)))
  expect_true(any(grepl("observed", out)))
  # class names that make the table wider than the console: one line per
  # class, its cases and errors counted here from fitted()
  levels(y) <- paste0("a_class_name_of_thirty_letters_", 1:3)
  fit <- gpc(d$x, y, rbf_kernel(1), noise = 0.1)
  truth <- fit$classes
  out <- capture.output(print(summary(fit)))
  start <- grep("By class", out)
  expect_length(start, 1L)
  expect_lte(max(nchar(out[start + 1:4])), 80L)
  rows <- read.table(text = out[start + 1:4], header = TRUE, stringsAsFactors = FALSE)
  expect_identical(rows$observed, levels(truth))
  expect_equal(rows$cases, as.vector(table(truth)))
  expect_equal(rows$errors, as.vector(tapply(fitted(fit) != truth, truth, sum)))
  expect_equal(rows$error, round(rows$errors / rows$cases, 4))
})

test_that("print, summary and plot work", {
  d <- two_class_data(30, 16)
  fit <- gpc_paper(d$x, d$y, rbf_kernel(1), noise = 0.5)
  expect_output(expect_identical(print(fit), fit), "naive mean field")
  expect_output(print(summary(fit)), "leave-one-out")
  expect_identical(nobs(fit), 30L)
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  expect_identical(plot(fit, grid = 15), fit)
})

test_that("bad input gives clear errors", {
  d <- two_class_data(20, 17)
  expect_error(gpc_paper(d$x, d$y, kappa = 0.5), "'kappa'")
  expect_error(gpc_paper(d$x, d$y, kappa = -0.1), "'kappa'")
  expect_error(gpc_paper(d$x, d$y, noise = NA), "'noise'")
  expect_error(gpc_paper(d$x, d$y, method = "exact"), "'method' must be one of")
  expect_error(gpc_paper(d$x, d$y, control = svc_control()), "gpc_control")
  expect_error(gpc_control(eta = 0), "'eta'")
  expect_error(gpc_paper(d$x, c("a", "b")), "'y' has 2 labels")
  expect_error(gpc_paper(d$x, d$y, foo = 1), "unknown argument")
  expect_error(gpc(d$x, d$y, bias = NA), "'bias'")
  expect_error(gpc(d$x, d$y, scale = "yes"), "'scale'")
  expect_error(gpc(d$x, rep(TRUE, 20)), "'y' has one class only \\('TRUE'\\)")
  expect_error(gpc(d$x, factor(d$y, levels = c(-1, 0, 1))), "no cases of level\\(s\\) '0'")
  expect_error(gpc(d$x, d$y + 5), "only 0 and 1, or -1 and \\+1")
  fit <- gpc_paper(d$x, d$y, rbf_kernel(1), noise = 0.5)
  expect_error(predict(fit, type = "response"), "'type' must be one of")
  expect_error(fitted(fit, type = "x"), "'type' must be one of")
})

test_that("a cache too small for the columns gives the same fixed point (blocked products)", {
  # 300 points: the blocked product's last block is partial (128 + 128 + 44)
  set.seed(3)
  n <- 300
  x <- matrix(rnorm(2 * n), n, 2)
  y <- ifelse(x[, 1] + rnorm(n) > 0, 1, -1)
  ctl <- function(mb) gpc_control(tol = 1e-20, cache_mb = mb)
  cached <- gpc(x, y, rbf_kernel(1.5), noise = 0.5, bias = 0.5, method = "naive",
                control = ctl(500))
  blocked <- gpc(x, y, rbf_kernel(1.5), noise = 0.5, bias = 0.5, method = "naive",
                 control = ctl(0.1))
  expect_equal(blocked$alpha, cached$alpha, tolerance = 1e-12)
  K <- rbf_gram(blocked$x, 1.5) + 0.5 + diag(0.5, n)
  f <- drop(K %*% (blocked$y * blocked$alpha))
  z <- (blocked$y * f - diag(K) * blocked$alpha) / sqrt(diag(K))
  rhs <- exp(dnorm(z, log = TRUE) - pnorm(z, log.p = TRUE)) / sqrt(diag(K))
  expect_lt(max(abs(unname(blocked$alpha) - rhs)), 1e-9)
  expect_equal(unname(fitted(blocked, type = "link")),
               drop((K - diag(0.5, n)) %*% (blocked$y * blocked$alpha)), tolerance = 1e-10)
})

test_that("by default the evidence chooses the width and noise the call leaves open", {
  d <- two_class_data(60, 71)
  fit <- gpc(d$x, d$y)
  expect_named(fit$optimization$estimate, c("sigma", "noise"))
  expect_equal(fit$alpha, gpc(d$x, d$y, optimize = c("sigma", "noise"))$alpha)
  # the answer is a maximum of the evidence: a step either way along each
  # parameter (factor 1.05, fits at fixed values) does not raise it
  at <- function(sigma, noise) gpc(d$x, d$y, rbf_kernel(sigma), noise = noise)$log_evidence
  s <- fit$kernel$sigma
  v <- fit$noise
  for (f in c(1 / 1.05, 1.05)) {
    expect_lt(at(s * f, v), fit$log_evidence + 1e-6)
    expect_lt(at(s, v * f), fit$log_evidence + 1e-6)
  }
  # a noise given is kept and the width alone is searched, and the other way round
  width_only <- gpc(d$x, d$y, noise = 0.3)
  expect_named(width_only$optimization$estimate, "sigma")
  expect_identical(width_only$noise, 0.3)
  expect_equal(update(fit, noise = 0.3)$alpha, width_only$alpha)
  noise_only <- gpc(d$x, d$y, rbf_kernel(1.5))
  expect_named(noise_only$optimization$estimate, "noise")
  expect_identical(noise_only$kernel$sigma, 1.5)
  # nothing left open, the naive method, or optimize = FALSE: no search, and
  # the noise not given is 0.1 with the width of the rule
  fixed <- gpc(d$x, d$y, rbf_kernel(1.5), noise = 0.1)
  expect_null(fixed$optimization)
  expect_equal(fixed$alpha, gpc(d$x, d$y, rbf_kernel(1.5), optimize = FALSE)$alpha)
  expect_null(gpc(d$x, d$y, method = "naive")$optimization)
  plain <- gpc(d$x, d$y, optimize = FALSE)
  expect_null(plain$optimization)
  expect_identical(plain$noise, 0.1)
  expect_identical(plain$kernel$sigma_rule, "data")
  # beyond gpc_search_max_n (2000) observations the default searches on
  # 2000 evenly spaced rows, from the first to the last
  beyond <- gpsvm:::.gpc_automatic_search(NULL, "tap", rbf_kernel(), FALSE, 10001L)
  expect_identical(as.vector(beyond), c("sigma", "noise"))
  rows <- attr(beyond, "rows")
  expect_length(rows, 2000L)
  expect_identical(range(rows), c(1, 10001))
  expect_lte(max(diff(rows)), 6)
  expect_gte(min(diff(rows)), 5)
  expect_identical(gpsvm:::.gpc_automatic_search(NULL, "tap", rbf_kernel(1), TRUE, 10001L), FALSE)
  expect_identical(gpsvm:::.gpc_automatic_search(NULL, "tap", rbf_kernel(), FALSE, 2000L),
                   c("sigma", "noise"))
  expect_length(attr(gpsvm:::.gpc_automatic_search(NULL, "tap", rbf_kernel(), FALSE, 2001L),
                     "rows"), 2000L)
  expect_error(gpc(d$x, d$y, noise = -1), "noise")
  expect_error(gpc(d$x, d$y, noise = "a"), "noise")
})

test_that("print() of a fit with a search per class: one line when all converged, else one each", {
  fit <- gpc(Species ~ ., iris)
  out <- capture.output(print(fit))
  line <- grep("evidence maximisation", out, value = TRUE)
  expect_length(line, 1L)
  steps <- vapply(fit$models, function(m) m$optimization$convergence$iterations, numeric(1))
  expect_match(line, sprintf("one search per class\\); all 3 converged, after %d to %d iterations",
                             min(steps), max(steps)))
  stuck <- suppressWarnings(gpc(Species ~ ., iris, control = gpc_control(max_iter = 3)))
  out <- capture.output(print(stuck))
  expect_length(grep("evidence maximisation \\((setosa|versicolor|virginica) vs rest\\); NOT converged",
                     out), 3L)
})

# 400 points of two classes split by a parabola in two inputs
parabola_data <- function() {
  d <- parabola_classes(400, 3, noise = 0.5)
  d$y <- factor(d$y)
  d
}

test_that("a search beyond 300 observations on the full prior evaluates on K's pivots where they represent it", {
  skip_on_cran()
  d <- parabola_data()
  x <- d$x
  y <- d$y
  fit <- gpc(x, y, control = gpc_control(search_inducing = 0))
  expect_null(fit$optimization$search_inducing)
  # the pivots are used at the values found (and so, near them, by the search)
  expect_false(is.null(gpsvm:::.choose_prior(fit$x, fit$kernel, gpc_control()$rank_tol, "search")))
  # the same search on the dense matrix throughout (rank_tol = 0)
  dense <- gpc(x, y, control = gpc_control(rank_tol = 0, search_inducing = 0))
  expect_equal(fit$optimization$estimate, dense$optimization$estimate, tolerance = 1e-5)
  expect_equal(fit$log_evidence, dense$log_evidence, tolerance = 1e-8)
  expect_null(fit$inducing)  # the final fit is dense up to 1000 observations
})

test_that("beyond 300 observations the default search runs on a third of them as inducing inputs", {
  skip_on_cran()
  d <- parabola_data()
  x <- d$x
  y <- d$y
  fit <- gpc(x, y)
  expect_identical(fit$optimization$search_inducing, 134L)
  expect_true(fit$optimization$convergence$converged)
  expect_null(fit$inducing)  # the final fit is the full model
  expect_match(paste(capture.output(print(fit)), collapse = "\n"), "FITC evidence on 134 inducing inputs")
  # against the search on the full prior: the full evidence at the values
  # found is within a small fraction of a nat of its maximum, and the class
  # probabilities on new inputs nearly agree
  full <- gpc(x, y, control = gpc_control(search_inducing = 0))
  expect_lte(fit$log_evidence, full$log_evidence + 1e-3)
  expect_gt(fit$log_evidence, full$log_evidence - 0.01)
  xt <- matrix(rnorm(600), ncol = 2)
  expect_lt(max(abs(predict(fit, xt, type = "prob") - predict(full, xt, type = "prob"))), 1e-3)
  # 300 observations or fewer: the full prior
  small <- gpc(x[1:300, ], y[1:300])
  expect_null(small$optimization$search_inducing)
})

test_that("the fit after a search starts EP from the best point's sites", {
  d <- two_class_data(80, 73)
  fit <- gpc(d$x, d$y)
  cold <- gpc(d$x, d$y, rbf_kernel(fit$kernel$sigma), noise = fit$noise)
  expect_null(cold$optimization)
  expect_lt(fit$convergence$iterations, cold$convergence$iterations)
  # the same fixed point, to the default tolerance
  expect_equal(fit$log_evidence, cold$log_evidence, tolerance = 1e-9)
  expect_equal(predict(fit, d$x, type = "prob"), predict(cold, d$x, type = "prob"),
               tolerance = 1e-6)
})

test_that("the default search says so when the labels carry no signal", {
  # each input carries both labels equally often: no width explains them
  d <- data.frame(x = rep(1:5, 8), y = factor(rep(c("a", "b"), 20)))
  expect_warning(fit <- gpc(y ~ x, d), "upper bound of its range for noise .*finds no signal")
  # and the probabilities are then those of the labels' frequencies
  expect_equal(unname(predict(fit, d, type = "prob")[, "b"]), rep(0.5, 40), tolerance = 0.01)
})
