# The classifiers on data as users bring it: input scaling, the bias, three
# or more classes (one-vs-rest) and their leave-one-out errors, R's modelling
# conventions (update, na.action, NA rows of newdata) and bad input.  The
# references are plain-R solvers on hand-built kernel matrices
# (helper-classif.R) and refits by hand.

three_class_data <- function(n, seed) {
  set.seed(seed)
  x <- matrix(rnorm(2 * n), n, 2)
  score <- cbind(x[, 1], -0.5 * x[, 1] + 0.9 * x[, 2], -0.5 * x[, 1] - 0.9 * x[, 2])
  cls <- max.col(score + matrix(rnorm(3 * n, sd = 0.4), n, 3))
  list(x = x, y = factor(c("a", "b", "c")[cls]))
}

# Plain-R naive mean field (Algorithm 17.1 on K + bias + noise) for one
# binary problem, with the class probability of the paper's predictive.
naive_binary_r <- function(x, y, sigma, noise, bias, z) {
  K <- rbf_gram(x, sigma) + bias + diag(noise, nrow(x))
  a <- naive_mf_r(K, y, ftol = 1e-24, maxit = 100000)$alpha
  f <- drop((rbf_gram(z, sigma, x) + bias) %*% (y * a))
  list(alpha = a, f = f, p = pnorm(f / sqrt(1 + bias + noise)))
}

test_that("scale = TRUE is the fit on inputs standardised by hand, applied to new data too", {
  d <- two_class_data(40, 41)
  x <- cbind(d$x[, 1] * 100 + 50, d$x[, 2] / 10)
  centre <- colMeans(x)
  spread <- apply(x, 2, sd)
  z <- cbind(rnorm(7, 50, 100), rnorm(7, 0, 0.1))
  hand <- function(v) sweep(sweep(v, 2, centre), 2, spread, "/")
  for (fitter in list(gpc, svc)) {
    fit <- fitter(x, d$y, rbf_kernel(1.3))
    ref <- fitter(hand(x), d$y, rbf_kernel(1.3), scale = FALSE)
    expect_equal(unname(fit$alpha), unname(ref$alpha), tolerance = 1e-10)
    expect_equal(unname(predict(fit, z, type = "link")), unname(predict(ref, hand(z), type = "link")),
                 tolerance = 1e-10)
    expect_equal(unname(fit$scaling$center), centre)
    expect_equal(unname(fit$scaling$scale), spread)
  }
  # the width chosen from the data is chosen on the scaled inputs
  expect_equal(gpc(x, d$y, optimize = FALSE)$kernel$sigma,
               gpc(hand(x), d$y, scale = FALSE, optimize = FALSE)$kernel$sigma)
  expect_output(print(gpc(x, d$y, optimize = FALSE)), "chosen from the data")
  # by default the evidence moves it from there, on the same scaled inputs
  expect_output(print(gpc(x, d$y)), "sigma and noise by evidence maximisation")
  expect_equal(gpc(x, d$y)$kernel$sigma, gpc(hand(x), d$y, scale = FALSE)$kernel$sigma,
               tolerance = 1e-6)
  expect_output(print(svc(x, d$y)), "input columns centred and scaled")
})

test_that("constant columns and a formula's factor columns are not scaled", {
  d <- two_class_data(40, 42)
  df <- data.frame(u = d$x[, 1] * 5, g = factor(rep(c("p", "q", "r", "s"), 10)), k = 2,
                   cls = factor(d$y))
  # (EP run to 1e-12, so that the comparison below does not depend on where
  # each fit's EP started: this one warm, from its evidence search)
  tight <- gpc_control(tol = 1e-12)
  expect_warning(fit <- gpc(cls ~ u + g + k, data = df, control = tight),
                 "constant input column\\(s\\) left unscaled: k")
  s <- fit$scaling
  dummies <- grep("^g", names(s$scale))
  expect_equal(unname(s$scale[dummies]), rep(1, length(dummies)))
  expect_equal(unname(s$center[dummies]), rep(0, length(dummies)))
  expect_equal(unname(s$scale["u"]), sd(df$u))
  expect_equal(unname(s$center[c("k")]), 0)
  # predictions on new data use the stored scaling
  new <- data.frame(u = c(-3, 4), g = factor(c("q", "s"), levels = c("p", "q", "r", "s")), k = 2)
  hand <- gpc(cls ~ u + g + k, data = transform(df, u = (u - mean(u)) / sd(u)),
               kernel = rbf_kernel(fit$kernel$sigma), noise = fit$noise, scale = FALSE,
               control = tight)
  expect_equal(unname(predict(fit, new, type = "link")),
               unname(predict(hand, transform(new, u = (u - mean(df$u)) / sd(df$u)), type = "link")),
               tolerance = 1e-10)
  # a level of a factor input that training never saw: a new direction,
  # or refused on request
  expect_warning(predict(fit, data.frame(u = 1, g = "z", k = 2)), "never saw, in 1 row: g \\(z\\)")
  expect_error(predict(fit, data.frame(u = 1, g = "z", k = 2), new_levels = "error"),
               "'newdata' does not fit the model")
  # a number given as text: the wrong type (as for predict.lm), not new columns
  expect_error(predict(fit, data.frame(u = "1", g = "q", k = 2)),
               "'newdata' does not fit the model: variable 'u' was fitted with type")
  expect_identical(deparse(formula(fit)), "cls ~ u + g + k")
  expect_null(attr(formula(fit), "dataClasses"))
  # the design in the data's units: u as given, g's dummies, k (constant)
  expect_equal(unname(model.matrix(fit)[, "u"]), df$u)
  expect_equal(unname(model.matrix(fit)[, "k"]), df$k)
})

test_that("the bias is a constant added to the kernel: plain-R solvers on K + bias", {
  d <- two_class_data(35, 43)
  z <- matrix(rnorm(16), 8, 2)
  for (bias in c(0.3, 2)) {
    fit <- gpc_paper(d$x, d$y, rbf_kernel(0.9), noise = 0.4, bias = bias,
                     control = gpc_control(tol = 1e-24, max_iter = 100000))
    ref <- naive_binary_r(d$x, d$y, 0.9, 0.4, bias, z)
    expect_equal(unname(fit$alpha), ref$alpha, tolerance = 1e-9)
    expect_equal(unname(predict(fit, z, type = "link")), ref$f, tolerance = 1e-9)
    expect_equal(unname(predict(fit, z, type = "prob")[, "1"]), ref$p, tolerance = 1e-9)
    s <- svc_paper(d$x, d$y, rbf_kernel(0.9), C = 5, noise = 0.2, bias = bias,
                   control = svc_control(tol = 1e-22, max_iter = 200000))
    K <- rbf_gram(d$x, 0.9) + bias + diag(0.2, 35)
    a <- svm_dual_cd(K, d$y, 5)
    expect_lt(max(abs(s$alpha - a)), 1e-6)
    expect_equal(unname(predict(s, z, type = "link")),
                 drop((rbf_gram(z, 0.9, d$x) + bias) %*% (d$y * a)), tolerance = 1e-6)
    # leave-one-out formulas see the same kernel: eq. (17.29) for margin SVs
    sv <- which(a > 1e-8 & a < 5 - 1e-8)
    m <- d$y * drop(K %*% (d$y * a))
    expect_equal(unname(loo_error(s)$margins[sv]), m[sv] - a[sv] / diag(solve(K[sv, sv])),
                 tolerance = 1e-5)
  }
  # the constant does not enter derivatives of the kernel
  k <- gpsvm:::.with_bias(rbf_kernel(0.7), 3)
  expect_equal(kernel_matrix(k, z, d$x), kernel_matrix(rbf_kernel(0.7), z, d$x) + 3)
  expect_equal(kernel_matrix(k, z, d$x, deriv = 2, wrt = 2),
               kernel_matrix(rbf_kernel(0.7), z, d$x, deriv = 2, wrt = 2))
  expect_output(print(k), "plus a constant 3")
})

test_that("a one-sided class structure needs the bias: far points follow the prior mean", {
  # class "in" compact at the origin, "out" scattered far away: without a
  # bias, a new point far from all training points has f = 0 and is called
  # "out" only by the tie rule; with one, the offset learned makes it "out"
  set.seed(44)
  inner <- matrix(rnorm(60, sd = 0.5), 30, 2)
  outer <- matrix(runif(60, -8, 8), 30, 2)
  outer <- outer[rowSums(outer^2) > 9, ]
  x <- rbind(inner, outer)
  y <- factor(c(rep("in", 30), rep("out", nrow(outer))), levels = c("out", "in"))
  fit <- gpc(x, y, rbf_kernel(0.5), scale = FALSE)
  far <- rbind(c(20, 20), c(-20, 5))
  expect_true(all(predict(fit, far, type = "link") < 0))
  expect_identical(as.character(predict(fit, far)), c("out", "out"))
  flat <- gpc(x, y, rbf_kernel(0.5), bias = 0, scale = FALSE)
  expect_equal(unname(predict(flat, far, type = "link")), c(0, 0), tolerance = 1e-12)
})

test_that("three classes: one-vs-rest naive models against plain R, normalised probabilities", {
  d <- three_class_data(45, 45)
  z <- matrix(rnorm(20), 10, 2)
  fit <- gpc_paper(d$x, d$y, rbf_kernel(1), noise = 0.3, bias = 0.5,
                   control = gpc_control(tol = 1e-24, max_iter = 100000))
  expect_named(fit$models, c("a", "b", "c"))
  ref <- lapply(levels(d$y), function(l)
    naive_binary_r(d$x, ifelse(d$y == l, 1, -1), 1, 0.3, 0.5, z))
  f_ref <- sapply(ref, `[[`, "f")
  p_ref <- sapply(ref, `[[`, "p")
  link <- predict(fit, z, type = "link")
  expect_identical(dim(link), c(10L, 3L))
  expect_identical(colnames(link), c("a", "b", "c"))
  expect_equal(unname(link), f_ref, tolerance = 1e-9)
  p <- predict(fit, z, type = "prob")
  expect_identical(colnames(p), c("a", "b", "c"))
  expect_equal(unname(p), p_ref / rowSums(p_ref), tolerance = 1e-9)
  cls <- predict(fit, z)
  expect_identical(levels(cls), c("a", "b", "c"))
  expect_identical(as.character(cls), c("a", "b", "c")[max.col(f_ref)])
  expect_identical(dim(fitted(fit, type = "link")), c(45L, 3L))
  expect_identical(nobs(fit), 45L)
  # the same through the formula interface and a character response
  df <- data.frame(u = d$x[, 1], v = d$x[, 2], cls = as.character(d$y))
  f2 <- gpc_paper(cls ~ u + v, data = df, kernel = rbf_kernel(1), noise = 0.3, bias = 0.5,
                  control = gpc_control(tol = 1e-24, max_iter = 100000))
  expect_equal(unname(predict(f2, data.frame(u = z[, 1], v = z[, 2]), type = "prob")),
               unname(p), tolerance = 1e-12)
})

test_that("three classes: TAP and svc columns are the binary fits of each class against the rest", {
  d <- three_class_data(40, 46)
  z <- matrix(rnorm(12), 6, 2)
  tap <- gpc(d$x, d$y, rbf_kernel(1), scale = FALSE)
  s <- svc_paper(d$x, d$y, rbf_kernel(1), C = 3, noise = 0.2, bias = 1,
                 control = svc_control(tol = 1e-22, max_iter = 200000))
  K <- rbf_gram(d$x, 1) + 1 + diag(0.2, 40)
  for (l in levels(d$y)) {
    yl <- ifelse(d$y == l, 1, -1)
    one <- gpc(d$x, factor(yl), rbf_kernel(1), scale = FALSE)
    expect_equal(predict(tap, z, type = "link")[, l], predict(one, z, type = "link"),
                 tolerance = 1e-12)
    expect_equal(predict(tap, z, type = "link", se.fit = TRUE)$se.fit[, l],
                 predict(one, z, type = "link", se.fit = TRUE)$se.fit, tolerance = 1e-12)
    a <- svm_dual_cd(K, yl, 3)
    expect_equal(unname(predict(s, z, type = "link")[, l]),
                 drop((rbf_gram(z, 1, d$x) + 1) %*% (yl * a)), tolerance = 1e-6)
  }
  p <- predict(tap, z, type = "prob")
  expect_equal(unname(rowSums(p)), rep(1, 6), tolerance = 1e-14)
  expect_error(logLik(tap), "two-class or a joint fit")
  expect_error(predict(s, z, type = "prob"), "no class probabilities")
})

test_that("three-class probabilities do not underflow far from every class", {
  d <- three_class_data(30, 47)
  fit <- gpc_paper(d$x, d$y, linear_kernel(), noise = 0.01, method = "tap")
  p <- predict(fit, rbind(c(1e4, 1e4), c(-1e5, 3e4)), type = "prob")
  expect_true(all(is.finite(p)))
  expect_equal(unname(rowSums(p)), c(1, 1), tolerance = 1e-14)
})

# Exact multi-class leave-one-out by hand: refit without case i with the
# user-level function and take the argmax of the decision values at x_i.
loo_by_refits <- function(fitter, x, y, ...) {
  t(vapply(seq_len(nrow(x)), function(i) {
    refit <- fitter(x[-i, ], droplevels(y[-i]), ...)
    f <- predict(refit, x[i, , drop = FALSE], type = "link")
    out <- stats::setNames(rep(NA_real_, nlevels(y)), levels(y))
    out[colnames(f)] <- f
    out
  }, numeric(nlevels(y))))
}

test_that("three classes: exact leave-one-out equals refits by hand, approx is close", {
  skip_on_cran()
  d <- three_class_data(36, 48)
  tight <- gpc_control(tol = 1e-20, max_iter = 100000)
  fits <- list(naive = function(x, y) gpc_paper(x, y, rbf_kernel(1), noise = 0.3, bias = 0.5,
                                                control = tight),
               tap = function(x, y) gpc(x, y, rbf_kernel(1), noise = 0.1, scale = FALSE,
                                        control = gpc_control(tol = 1e-11)),
               svc = function(x, y) svc_paper(x, y, rbf_kernel(1), C = 4, noise = 0.2, bias = 0.5,
                                              control = svc_control(tol = 1e-22, max_iter = 200000)))
  truth <- as.integer(d$y)
  for (name in names(fits)) {
    fit <- fits[[name]](d$x, d$y)
    exact <- loo_error(fit, "exact")
    ref <- loo_by_refits(fits[[name]], d$x, d$y)
    expect_equal(unname(exact$decision), unname(ref), tolerance = 1e-6, info = name)
    own <- ref[cbind(1:36, truth)]
    other <- apply(replace(ref, cbind(1:36, truth), -Inf), 1, max)
    expect_equal(unname(exact$margins), own - other, tolerance = 1e-6, info = name)
    expect_identical(exact$count, sum(max.col(ref, ties.method = "first") != truth), info = name)
    expect_identical(dim(exact$iterations), c(36L, 3L))
    approx <- loo_error(fit)
    expect_lte(abs(approx$count - exact$count), 2)
    # the SVM's approximation (section 17.5) assumes that no other case
    # changes group when one is left out; here a few do, and their decision
    # values move by up to 3
    expect_gt(cor(as.vector(approx$decision), as.vector(exact$decision)),
              if (name == "svc") 0.9 else 0.98)
  }
  expect_output(print(exact), "3 classes one-vs-rest, exact")
})

test_that("a class with one case: its leave-one-out refit sees one class and still works", {
  d <- three_class_data(30, 49)
  y <- factor(as.character(d$y), levels = c("a", "b", "c", "d"))
  y[7] <- "d"
  fit <- svc_paper(d$x, y, rbf_kernel(1), C = 2, noise = 0.2,
                   control = svc_control(tol = 1e-22, max_iter = 200000))
  exact <- loo_error(fit, "exact")
  # without case 7 the model "d against the rest" has only -1 labels; its
  # plain-R refit is the same dual problem
  K <- rbf_gram(d$x, 1) + diag(0.2, 30)
  yd <- ifelse(y == "d", 1, -1)
  a <- svm_dual_cd(K[-7, -7], yd[-7], 2)
  expect_equal(unname(exact$decision[7, "d"]), sum(K[7, -7] * yd[-7] * a), tolerance = 1e-7)
  expect_true(all(is.finite(exact$margins)))
  g <- gpc_paper(d$x, y, rbf_kernel(1), noise = 0.3, method = "tap")
  expect_true(all(is.finite(loo_error(g, "exact")$margins)))
})

test_that("update() works for both fitters and both interfaces", {
  d <- two_class_data(30, 50)
  df <- data.frame(u = d$x[, 1], v = d$x[, 2], w = rnorm(30), cls = factor(d$y))
  for (fitter in c("gpc", "svc")) {
    f <- get(fitter)
    m1 <- f(d$x, d$y, noise = 0.5)
    u1 <- update(m1, noise = 0.2)
    expect_identical(u1$call[[1]], as.name(fitter))
    expect_equal(u1$alpha, f(d$x, d$y, noise = 0.2)$alpha)
    m2 <- f(cls ~ u + v + w, data = df)
    u2 <- update(m2, . ~ . - w)
    expect_equal(u2$alpha, f(cls ~ u + v, data = df)$alpha)
    expect_identical(colnames(u2$x), c("u", "v"))
    u3 <- update(m2, scale = FALSE, bias = 0)
    expect_null(u3$scaling)
    expect_identical(u3$bias_variance, 0)
  }
})

test_that("predict(na.action = na.omit) leaves out NA rows of newdata, as e1071's predict.svm()", {
  skip_if_not_installed("e1071")
  d <- three_class_data(40, 52)
  df <- data.frame(u = d$x[, 1], v = d$x[, 2], cls = d$y)
  new <- data.frame(u = c(0.1, NA, -1, 0.4), v = c(0.5, 0.2, NA, -0.3))
  ref <- e1071::svm(cls ~ u + v, data = df)
  for (fitter in list(gpc, svc)) {
    fit <- fitter(cls ~ u + v, data = df)
    p <- predict(fit, new, na.action = na.omit)
    # e1071's default na.action is na.omit: the same rows, by name
    expect_identical(names(p), names(predict(ref, new)))
    expect_identical(levels(p), levels(predict(ref, new)))
    expect_identical(p, predict(fit, new[c(1, 4), ]))
    link <- predict(fit, new, type = "link", na.action = na.omit)
    expect_identical(rownames(link), c("1", "4"))
    expect_equal(link, predict(fit, new, type = "link")[c(1, 4), ])
    expect_identical(predict(fit, new, na.action = na.exclude), predict(fit, new))
    expect_error(predict(fit, new, na.action = na.fail), "'newdata' has missing values")
  }
  g <- gpc(cls ~ u + v, data = df)
  pr <- predict(g, new, type = "prob", na.action = na.omit)
  expect_identical(dim(pr), c(2L, 3L))
  expect_equal(pr, predict(g, new, type = "prob")[c(1, 4), ])
})

test_that("a factor level unseen in training is named in the refusal where its row can be predicted", {
  # mlbench's Soybean: a test row with a level of ext.decay that no training
  # row had was reported as "'newdata' has missing values and 'na.action'
  # refuses them", since the design was first built inside na.action's call
  d <- three_class_data(40, 53)
  df <- data.frame(u = d$x[, 1], f = factor(rep(c("a", "b"), 20)), cls = d$y)
  new <- data.frame(u = c(0.1, NA, 0.3, 0.2), f = factor(c("a", "b", NA, "c")))
  for (fitter in list(gpc, svc)) {
    fit <- fitter(cls ~ u + f, data = df)
    for (act in list(stats::na.pass, stats::na.omit, stats::na.fail)) {
      err <- tryCatch(predict(fit, new, na.action = act, new_levels = "error"),
                      error = conditionMessage)
      expect_match(err, "'newdata' does not fit the model: factor levels training never saw, in 1 row: f (c)",
                   fixed = TRUE)
      expect_false(grepl("missing values", err))
    }
    # a row with a missing value is predicted NA whatever its levels, so a
    # new level there is no error (mlbench's Ozone: no complete row falls on
    # some days of the week); the other rows are predicted as on their own
    held_out <- data.frame(u = c(0.1, NA, 0.3), f = factor(c("a", "c", "b")))
    link <- predict(fit, held_out, type = "link")
    expect_true(all(is.na(link[2L, ])))
    expect_equal(link[-2L, ], predict(fit, held_out[-2L, ], type = "link"), ignore_attr = TRUE)
    expect_identical(as.character(predict(fit, held_out)[c(1L, 3L)]),
                     as.character(predict(fit, held_out[-2L, ])))
  }
  fit <- mfsvr(u ~ f, data = df)
  expect_error(predict(fit, new, new_levels = "error"), "f (c)", fixed = TRUE)
})

test_that("na.action: na.exclude pads fitted() and predict(), NA rows of newdata give NA", {
  d <- three_class_data(40, 51)
  df <- data.frame(u = d$x[, 1], v = d$x[, 2], cls = d$y)
  df$u[c(4, 17)] <- NA
  for (fitter in list(gpc, svc)) {
    ex <- fitter(cls ~ u + v, data = df, na.action = na.exclude)
    om <- fitter(cls ~ u + v, data = df)
    expect_identical(nobs(ex), 38L)
    # print() and summary() say rows were left out, as print.glm() does
    ref <- capture.output(print(glm(I(cls == "b") ~ u + v, binomial, df)))
    line <- trimws(grep("missingness", ref, value = TRUE))
    expect_identical(line, "(2 observations deleted due to missingness)")
    for (f in list(ex, om)) {
      expect_output(print(f), line, fixed = TRUE)
      expect_output(print(summary(f)), line, fixed = TRUE)
    }
    # and without missing rows nothing is said, not even an empty line
    complete <- capture.output(print(fitter(cls ~ u + v, data = df[-c(4, 17), ])))
    expect_false(any(grepl("missingness", complete)))
    expect_false(any(complete == ""))
    cls <- fitted(ex)
    expect_length(cls, 40)
    expect_identical(unname(which(is.na(cls))), c(4L, 17L))
    expect_identical(as.character(cls[-c(4, 17)]), as.character(fitted(om)))
    link <- predict(ex, type = "link")
    expect_identical(dim(link), c(40L, 3L))
    expect_true(all(is.na(link[c(4, 17), ])))
    expect_length(fitted(om), 38)
    # newdata with missing values: NA rows, the others as without them
    new <- data.frame(u = c(0.1, NA, -1), v = c(0.5, 0.2, NA))
    p <- predict(om, new, type = "link")
    expect_identical(dim(p), c(3L, 3L))
    expect_true(all(is.na(p[2:3, ])))
    expect_equal(p[1, ], predict(om, new[1, ], type = "link")[1, ])
    expect_identical(unname(is.na(predict(om, new))), c(FALSE, TRUE, TRUE))
    all_na <- predict(om, new[2:3, ])
    expect_true(all(is.na(all_na)) && length(all_na) == 2L && is.factor(all_na))
  }
  g <- gpc(cls ~ u + v, data = df, na.action = na.exclude)
  p <- fitted(g, type = "prob")
  expect_identical(dim(p), c(40L, 3L))
  expect_true(all(is.na(p[c(4, 17), ])))
  two <- gpc(d$x, d$y == "a")
  pr <- predict(two, rbind(c(0, 0), c(NA, 1)), type = "prob")
  expect_identical(colnames(pr), c("FALSE", "TRUE"))
  expect_true(all(is.na(pr[2, ])) && all(!is.na(pr[1, ])))
  se <- predict(two, rbind(c(0, 0), c(NA, 1)), type = "link", se.fit = TRUE)
  expect_true(is.na(se$se.fit[2]) && is.finite(se$se.fit[1]))
})

test_that("every classifier method works with kernlab and e1071 attached", {
  skip_on_cran()
  skip_if_not_installed("kernlab")
  skip_if_not_installed("e1071")
  suppressPackageStartupMessages({
    library(kernlab)
    library(e1071)
  })
  on.exit(detach("package:kernlab"), add = TRUE)
  on.exit(detach("package:e1071"), add = TRUE)
  d2 <- two_class_data(40, 52)
  d3 <- three_class_data(45, 53)
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  for (fit in list(gpc(d2$x, d2$y), gpc(d2$x, d2$y, method = "naive"), svc(d2$x, d2$y),
                   gpc(d3$x, d3$y), gpc(d3$x, d3$y, method = "naive"), svc(d3$x, d3$y))) {
    k <- length(fit$levels)
    expect_s3_class(fit, "gpsvm_classifier")
    expect_length(predict(fit), nrow(fit$x))
    expect_length(fitted(fit), nrow(fit$x))
    expect_identical(NROW(predict(fit, d3$x[1:5, ], type = "link")), 5L)
    if (inherits(fit, "gpsvm_gpc")) {
      expect_identical(dim(predict(fit, d3$x[1:5, ], type = "prob")), c(5L, k))
    }
    expect_output(print(fit), "classes")
    expect_output(print(summary(fit)), "leave-one-out")
    expect_identical(nobs(fit), nrow(fit$x))
    expect_s3_class(loo_error(fit), "gpsvm_loo")
    expect_identical(plot(fit, grid = 10), fit)
    expect_s3_class(update(fit), class(fit)[1])
  }
  ll <- logLik(gpc(d2$x, d2$y, optimize = FALSE))
  expect_identical(attr(ll, "df"), 0L)
  # the df rule of every model: the hyperparameters a search by evidence
  # chose, by default the width and the noise, or the width alone
  expect_identical(attr(logLik(gpc(d2$x, d2$y)), "df"), 2L)
  expect_identical(attr(logLik(gpc(d2$x, d2$y, noise = 0.1)), "df"), 1L)
  expect_true(is.finite(AIC(ll)))
})

test_that("labels in every form, and subsets through the formula", {
  d <- two_class_data(30, 54)
  ref <- gpc(d$x, factor(d$y))
  expect_identical(ref$levels, c("-1", "1"))
  expect_equal(gpc(d$x, d$y)$alpha, ref$alpha)
  expect_equal(gpc(d$x, (d$y + 1) / 2)$alpha, ref$alpha)
  expect_equal(gpc(d$x, d$y > 0)$alpha, ref$alpha)
  expect_equal(gpc(d$x, ifelse(d$y > 0, "yes", "no"))$alpha, ref$alpha)
  # an ordered factor is a set of classes
  expect_equal(gpc(d$x, factor(d$y, ordered = TRUE))$alpha, ref$alpha)
  # a subset leaving out a class drops its level, as model.frame() does
  sub <- gpc(Species ~ ., data = iris, subset = Species != "setosa")
  expect_identical(sub$levels, c("versicolor", "virginica"))
  expect_null(sub$models)
  two <- factor(rep(c("setosa", "virginica"), 75), levels = levels(iris$Species))
  expect_error(gpc(iris[, 1:4], two), "no cases of level\\(s\\) 'versicolor'")
})

test_that("a formula fit's predicted classes keep the levels no training case has, as e1071's", {
  skip_if_not_installed("e1071")
  # a random training sample of mlbench's Zoo can miss a rare class: as
  # here, with a class of iris left out of four
  d <- iris
  d$Species <- factor(d$Species, levels = c(levels(iris$Species), "unseen"))
  train <- d[d$Species != "setosa", ]
  for (fitter in list(gpc, svc)) {
    fit <- fitter(Species ~ ., data = train)
    expect_identical(fit$levels, c("versicolor", "virginica"))
    pred <- predict(fit, d)
    reference <- predict(e1071::svm(Species ~ ., data = train), d)
    expect_identical(levels(pred), levels(reference))
    expect_identical(levels(pred), levels(d$Species))
    # the comparison a user makes with the data's factor works; setosa is
    # never predicted, and the classes predicted are those of the
    # two-level fit
    expect_equal(sum(pred == d$Species), sum(as.character(pred) == as.character(d$Species)))
    expect_false(any(pred %in% c("setosa", "unseen")))
    expect_identical(levels(fitted(fit)), levels(d$Species))
    expect_identical(as.character(fitted(fit)), as.character(predict(fit, train)))
    # the training table stays over the classes fitted
    s <- summary(fit)
    expect_identical(dimnames(s$training$table)$observed, fit$levels)
    expect_identical(dimnames(s$training$table)$predicted, fit$levels)
    expect_equal(s$training$error, mean(as.character(fitted(fit)) != train$Species))
    expect_output(print(fit), "no training case of level\\(s\\) 'setosa', 'unseen': never predicted")
  }
  # probabilities: the classes fitted only
  expect_identical(colnames(predict(gpc(Species ~ ., data = train), d, type = "prob")),
                   c("versicolor", "virginica"))
  # every level used: nothing is kept, nothing printed
  full <- gpc(Species ~ ., data = iris)
  expect_null(full$response_levels)
  expect_false(any(grepl("never predicted", capture.output(print(full)))))
})

test_that("defaults on real data: calibrated, not degenerate, and near e1071's accuracy", {
  skip_if_not_installed("mlbench")
  skip_if_not_installed("e1071")
  data(PimaIndiansDiabetes, package = "mlbench", envir = environment())
  pima <- PimaIndiansDiabetes
  set.seed(3)
  train <- sample(nrow(pima), 512)
  fit <- gpc(diabetes ~ ., data = pima[train, ])
  p <- predict(fit, pima[-train, ], type = "prob")
  # not every probability 0.5, and not every training case a support vector
  expect_gt(sd(p[, "pos"]), 0.1)
  expect_lt(mean(fitted(fit) == pima$diabetes[train]), 0.95)
  acc_gpc <- mean(predict(fit, pima[-train, ]) == pima$diabetes[-train])
  acc_svc <- mean(predict(svc(diabetes ~ ., data = pima[train, ]), pima[-train, ]) ==
                    pima$diabetes[-train])
  e <- e1071::svm(diabetes ~ ., data = pima[train, ])
  acc_e <- mean(predict(e, pima[-train, ]) == pima$diabetes[-train])
  expect_gt(acc_gpc, acc_e - 0.03)
  expect_gt(acc_svc, acc_e - 0.03)
  # the log loss of the probabilities beats the prevalence alone
  truth <- pima$diabetes[-train]
  base <- mean(truth == "pos")
  expect_lt(-mean(log(p[cbind(seq_along(truth), as.integer(truth))])),
            -mean(ifelse(truth == "pos", log(base), log(1 - base))) - 0.1)
})
