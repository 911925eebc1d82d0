# svc_paper(): the kernel adatron against independent QP solutions of the same
# dual problem, Kuhn-Tucker conditions, predictions and methods.

tight <- svc_control(tol = 1e-22, max_iter = 200000)

test_that("the adatron reaches the dual optimum of a plain-R coordinate-ascent solver", {
  d <- two_class_data(40, 1)
  for (setting in list(list(C = Inf, noise = 0.5), list(C = 2, noise = 0),
                       list(C = 1e-3, noise = 0), list(C = 1e6, noise = 0.1),
                       list(C = 5, noise = 1.3))) {
    fit <- svc_paper(d$x, d$y, rbf_kernel(0.8), C = setting$C, noise = setting$noise, control = tight)
    K <- rbf_gram(d$x, 0.8) + diag(setting$noise, 40)
    ref <- svm_dual_cd(K, d$y, setting$C)
    w_ref <- svm_dual_objective(ref, K, d$y)
    expect_equal(fit$objective, w_ref, tolerance = 1e-6)
    expect_equal(svm_dual_objective(fit$alpha, K, d$y), w_ref, tolerance = 1e-6)
    expect_lt(max(abs(fit$alpha - ref)), 1e-5 * max(1, max(ref)))
  }
})

test_that("a tiny C at the default tolerance reaches the box, not alpha = 0", {
  # with C^2 below ftol an absolute stopping test accepts the start alpha = 0
  d <- two_class_data(40, 1)
  K <- rbf_gram(d$x, 0.8)
  for (C in c(1e-8, 1e-4, 0.05)) {
    fit <- svc_paper(d$x, d$y, rbf_kernel(0.8), C = C)
    ref <- svm_dual_cd(K, d$y, C)
    expect_true(fit$convergence$converged)
    expect_lt(max(abs(fit$alpha - ref)), 1e-2 * C)
    expect_equal(fit$objective, svm_dual_objective(ref, K, d$y), tolerance = 1e-4)
  }
  # the leave-one-out margins follow: no case has margin 0 from alpha = 0
  expect_true(all(loo_error(svc_paper(d$x, d$y, rbf_kernel(0.8), C = 1e-6))$margins != 0))
})

test_that("the adatron matches kernlab::ipop on the same QP", {
  skip_if_not_installed("kernlab")
  d <- two_class_data(30, 2)
  K <- rbf_gram(d$x, 1.2) + diag(0.2, 30)
  C <- 3
  H <- K * outer(d$y, d$y)
  # no equality constraint in the bias-free dual: a slack row 0 <= sum(a) <= 1e6
  qp <- kernlab::ipop(c = rep(-1, 30), H = H, A = matrix(1, 1, 30), b = 0, l = rep(0, 30),
                      u = rep(C, 30), r = 1e6, sigf = 10)
  expect_identical(kernlab::how(qp), "converged")
  a_ref <- pmin(pmax(kernlab::primal(qp), 0), C)
  fit <- svc_paper(d$x, d$y, rbf_kernel(1.2), C = C, noise = 0.2, control = tight)
  expect_equal(fit$objective, svm_dual_objective(a_ref, K, d$y), tolerance = 1e-6)
})

test_that("the solution satisfies the Kuhn-Tucker conditions", {
  d <- two_class_data(50, 3)
  fit <- svc_paper(d$x, d$y, rbf_kernel(1), C = 4, noise = 0.3, control = tight)
  K <- rbf_gram(d$x, 1) + diag(0.3, 50)
  m <- d$y * drop(K %*% (d$y * fit$alpha))
  a <- fit$alpha
  expect_true(all(a >= 0 & a <= 4))
  expect_lt(max(abs(m[a > 0 & a < 4] - 1)), 1e-9)
  expect_true(all(m[a == 0] >= 1 - 1e-9))
  expect_true(all(m[a == 4] <= 1 + 1e-9))
  expect_true(any(a == 0) && any(a == 4) && any(a > 0 & a < 4))
})

test_that("duplicate inputs with opposite labels are handled with a finite C", {
  x <- rbind(c(0, 0), c(0, 0), c(1, 1), c(-1, -1), c(1, 1))
  y <- c(1, -1, 1, -1, 1)
  fit <- svc_paper(x, y, rbf_kernel(1), C = 1, control = tight)
  K <- rbf_gram(x, 1)
  ref <- svm_dual_cd(K, y, 1)
  expect_equal(fit$objective, svm_dual_objective(ref, K, y), tolerance = 1e-8)
  expect_true(fit$convergence$converged)
})

test_that("predictions are the kernel expansion of eq. (17.20)", {
  d <- two_class_data(40, 4)
  fit <- svc_paper(d$x, factor(ifelse(d$y > 0, "pos", "neg"), levels = c("neg", "pos")),
             rbf_kernel(0.7), noise = 0.4)
  z <- matrix(rnorm(20), 10, 2)
  f_ref <- drop(rbf_gram(z, 0.7, d$x) %*% (d$y * fit$alpha))
  expect_equal(predict(fit, z, type = "link"), f_ref, tolerance = 1e-12)
  expect_equal(as.character(predict(fit, z)), ifelse(f_ref >= 0, "pos", "neg"))
  # at the training points, noise-free kernel: field minus the diagonal noise term
  expect_equal(unname(fitted(fit, type = "link")),
               drop(rbf_gram(d$x, 0.7) %*% (d$y * fit$alpha)), tolerance = 1e-12)
  expect_equal(levels(predict(fit, z)), c("neg", "pos"))
  expect_identical(nobs(fit), 40L)
})

test_that("the formula method matches the matrix method", {
  d <- two_class_data(30, 5)
  df <- data.frame(a = d$x[, 1], b = d$x[, 2], cls = factor(d$y))
  f1 <- svc_paper(cls ~ a + b, data = df, kernel = rbf_kernel(1), noise = 0.5)
  f2 <- svc_paper(d$x, factor(d$y), rbf_kernel(1), noise = 0.5)
  expect_equal(unname(f1$alpha), unname(f2$alpha))
  new <- data.frame(a = c(0, 1), b = c(1, -1))
  expect_equal(unname(predict(f1, new, type = "link")),
               unname(predict(f2, as.matrix(new), type = "link")))
  expect_error(predict(f1, data.frame(a = 1)), "newdata")
})

test_that("a hard margin on non-separable data warns instead of hanging", {
  x <- rbind(c(0, 0), c(0, 0))
  expect_warning(fit <- svc_paper(x, c(1, -1), rbf_kernel(1), noise = 0,
                            control = svc_control(max_iter = 50)),
                 "did not converge in 50 iterations")
  expect_false(fit$convergence$converged)
})

test_that("print, summary and plot work and return what they should", {
  d <- two_class_data(30, 6)
  fit <- svc_paper(d$x, d$y, rbf_kernel(1), C = 10, noise = 0.1)
  expect_output(expect_identical(print(fit), fit), "support vectors")
  s <- summary(fit)
  expect_s3_class(s, "summary.gpsvm_svc")
  expect_output(print(s), "leave-one-out")
  expect_equal(s$loo$error, loo_error(fit)$error)
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  expect_identical(plot(fit, grid = 20), fit)
})

test_that("bad input gives clear errors", {
  d <- two_class_data(20, 7)
  expect_error(svc_paper(d$x, d$y[-1]), "'y' has 19 labels")
  expect_error(svc(d$x, d$y * 2), "only 0 and 1, or -1 and \\+1")
  expect_error(svc(d$x, rep(1:4, 5)), "use a factor")
  expect_error(svc(d$x, factor(rep("a", 20))), "'y' has one class only \\('a'\\)")
  expect_error(svc(d$x, rep(1, 20)), "'y' has one class only")
  expect_error(svc(d$x, factor(rep(c("a", "b"), 10), levels = c("a", "b", "c"))),
               "'y' has no cases of level\\(s\\) 'c'")
  expect_error(svc(d$x, d$y, bias = -1), "'bias'")
  expect_error(svc(d$x, d$y, scale = NA), "'scale'")
  expect_error(svc_paper(d$x, rep(c(TRUE, FALSE, NA), length.out = 20)), "missing")
  expect_error(svc_paper(d$x, replace(d$y, 3, NA)), "missing")
  expect_error(svc_paper(d$x, d$y, C = 0), "'C'")
  expect_error(svc_paper(d$x, d$y, C = -1), "'C'")
  expect_error(svc_paper(d$x, d$y, noise = -1), "'noise'")
  expect_error(svc_paper(d$x, d$y, kernel = "rbf"), "'kernel'")
  expect_error(svc_paper(d$x, d$y, control = list(tol = 1)), "svc_control")
  expect_error(svc_paper(d$x, d$y, cost = 1), "unknown argument")
  expect_error(svc_control(tol = 0), "'tol'")
  expect_error(svc_control(max_iter = 0.5), "'max_iter'")
  expect_error(svc_paper(replace(d$x, 1, NA), d$y), "missing")
  fit <- svc_paper(d$x, d$y, rbf_kernel(1), noise = 0.5)
  expect_error(predict(fit, d$x, type = "prob"), "no class probabilities")
  expect_error(predict(fit, matrix(0, 2, 3)), "2 column")
  expect_error(predict(fit, d$x, se.fit = TRUE), "unknown argument")
  # more than two inputs are drawn on a slice (test-classif-plot.R); one is too few
  expect_error(plot(svc_paper(d$x[, 1, drop = FALSE], d$y, noise = 0.5)), "two numeric inputs")
  # a zero input row gives k_ii = 0 for the linear kernel
  expect_error(svc_paper(rbind(0, d$x[-1, ]), d$y, linear_kernel()), "positive diagonal")
})
