# Kernel values and derivatives against plain-R formulas, R's symbolic D(),
# central finite differences and the Hermite recurrence.

rbf_r <- function(x, y, sigma) {
  outer(seq_len(nrow(x)), seq_len(nrow(y)),
        Vectorize(function(i, j) exp(-sum((x[i, ] - y[j, ])^2) / (2 * sigma^2))))
}
poly_r <- function(x, y, degree, scale, offset) (scale * x %*% t(y) + offset)^degree

set.seed(1)
x2 <- matrix(rnorm(14), 7, 2)
y2 <- matrix(rnorm(10), 5, 2)

test_that("kernel values match plain-R formulas", {
  expect_equal(kernel_matrix(rbf_kernel(0.7), x2), rbf_r(x2, x2, 0.7), tolerance = 1e-14)
  expect_equal(kernel_matrix(rbf_kernel(1.3), x2, y2), rbf_r(x2, y2, 1.3), tolerance = 1e-14)
  expect_equal(kernel_matrix(poly_kernel(3, 0.5, 2), x2, y2), poly_r(x2, y2, 3, 0.5, 2),
               tolerance = 1e-14)
  expect_equal(kernel_matrix(linear_kernel(), x2, y2), x2 %*% t(y2), tolerance = 1e-14)
  expect_equal(kernel_matrix(poly_kernel(2), x2), poly_r(x2, x2, 2, 1, 1), tolerance = 1e-14)
})

test_that("vectors, matrices and data frames give the same matrix", {
  v <- c(-1, 0.2, 3)
  k <- rbf_kernel(2)
  expect_equal(kernel_matrix(k, v), kernel_matrix(k, matrix(v)))
  expect_equal(kernel_matrix(k, data.frame(a = v)), kernel_matrix(k, matrix(v)))
  expect_equal(dim(kernel_matrix(k, v, c(1, 2))), c(3L, 2L))
  expect_equal(kernel_matrix(rbf_kernel(1), 1:3),
               exp(-outer(1:3, 1:3, "-")^2 / 2), tolerance = 1e-15)
})

test_that("Gram matrices are symmetric and positive semi-definite", {
  set.seed(2)
  x <- matrix(runif(60), 30, 2)
  for (k in list(rbf_kernel(0.3), poly_kernel(3, 1, 1), linear_kernel())) {
    K <- kernel_matrix(k, x)
    expect_identical(K, t(K))
    ev <- eigen(K, symmetric = TRUE, only.values = TRUE)$values
    expect_gt(min(ev), -1e-10 * max(ev))
  }
  # duplicated inputs: still symmetric PSD, with identical rows
  xd <- rbind(x, x[1:3, ])
  K <- kernel_matrix(rbf_kernel(1), xd)
  expect_identical(K[1, ], K[31, ])
  expect_gt(min(eigen(K, symmetric = TRUE, only.values = TRUE)$values), -1e-10)
})

# n-th symbolic derivative of an expression in 'var'
d_n <- function(expr, var, n) {
  for (i in seq_len(n)) expr <- D(expr, var)
  expr
}

test_that("RBF derivatives of orders 1-4 match D() and finite differences", {
  s <- 0.8
  e <- quote(exp(-((x1 - y1)^2 + (x2 - y2)^2) / (2 * s^2)))
  x <- matrix(c(0.3, -1.1, 0.9, 0.4), 2, 2)
  y <- matrix(c(-0.5, 0.7, 1.2, 0.1, -0.3, 0.8), 3, 2)
  env_at <- function(i, j) list(x1 = x[i, 1], x2 = x[i, 2], y1 = y[j, 1], y2 = y[j, 2], s = s)
  for (wrt in 1:2) {
    for (n in 1:4) {
      sym <- d_n(e, paste0("x", wrt), n)
      ref <- outer(1:2, 1:3, Vectorize(function(i, j) eval(sym, env_at(i, j))))
      got <- kernel_matrix(rbf_kernel(s), x, y, deriv = n, wrt = wrt)
      expect_equal(got, ref, tolerance = 1e-12, label = sprintf("order %d wrt %d", n, wrt))
      # central difference of the (n-1)-th derivative, step h
      h <- 1e-5
      shift <- matrix(0, 2, 2); shift[, wrt] <- h
      fd <- (kernel_matrix(rbf_kernel(s), x + shift, y, deriv = n - 1, wrt = wrt) -
               kernel_matrix(rbf_kernel(s), x - shift, y, deriv = n - 1, wrt = wrt)) / (2 * h)
      expect_equal(got, fd, tolerance = 1e-7)
    }
  }
  # first derivative against a difference of the plain-R kernel itself
  h <- 1e-6
  fd1 <- (rbf_r(x + c(h, h, 0, 0), y, s) - rbf_r(x - c(h, h, 0, 0), y, s)) / (2 * h)
  expect_equal(kernel_matrix(rbf_kernel(s), x, y, deriv = 1), fd1, tolerance = 1e-8)
})

test_that("RBF derivative of order 10 matches the Hermite recurrence in R", {
  hermite <- function(n, u) {
    h0 <- 1; h1 <- u
    if (n == 0) return(h0)
    for (k in seq_len(n - 1)) { h2 <- u * h1 - k * h0; h0 <- h1; h1 <- h2 }
    h1
  }
  s <- 1.6
  x <- seq(-4, 4, by = 0.5)
  y <- c(-1, 0, 2.5)
  u <- outer(x, y, "-") / s
  ref <- (-1 / s)^10 * hermite(10, u) * exp(-u^2 / 2)
  expect_equal(kernel_matrix(rbf_kernel(s), x, y, deriv = 10), ref, tolerance = 1e-12)
  # order 10 at x = y: (-1/s)^10 He_10(0) = -945 / s^10
  expect_equal(kernel_matrix(rbf_kernel(s), 0, 0, deriv = 10)[1, 1], -945 / s^10)
})

test_that("polynomial derivatives match D() and vanish past the degree", {
  e <- quote((sc * (x1 * y1 + x2 * y2) + of)^3)
  x <- matrix(c(0.3, -1.1, 0.9, 0.4), 2, 2)
  y <- matrix(c(-0.5, 0.7, 1.2, 0.1, -0.3, 0.8), 3, 2)
  k <- poly_kernel(3, scale = 0.7, offset = 1.5)
  for (wrt in 1:2) for (n in 1:4) {
    sym <- d_n(e, paste0("x", wrt), n)
    ref <- outer(1:2, 1:3, Vectorize(function(i, j) {
      eval(sym, list(x1 = x[i, 1], x2 = x[i, 2], y1 = y[j, 1], y2 = y[j, 2], sc = 0.7, of = 1.5))
    }))
    ref <- ref + 0 * x[, 1]  # D() of a constant gives a scalar
    expect_equal(kernel_matrix(k, x, y, deriv = n, wrt = wrt), ref, tolerance = 1e-12)
  }
  expect_true(all(kernel_matrix(k, x, y, deriv = 4) == 0))
  expect_equal(kernel_matrix(linear_kernel(), x, y, deriv = 1, wrt = 2),
               matrix(y[, 2], 2, 3, byrow = TRUE))
})

test_that("kernels print their formula and parameters", {
  expect_output(print(rbf_kernel(0.5)), "exp\\(-\\|x - x'\\|\\^2 / \\(2 sigma\\^2\\)\\)")
  expect_output(print(rbf_kernel(0.5)), "sigma = 0.5")
  expect_output(print(poly_kernel(3, 2, 0)), "degree = 3, scale = 2, offset = 0")
  expect_output(print(linear_kernel()), "<x, x'>")
})

test_that("bad input gives clear errors naming the argument", {
  expect_error(rbf_kernel(-1), "'sigma' must lie in \\(0")
  expect_error(rbf_kernel(0), "'sigma'")
  expect_error(rbf_kernel(NA), "'sigma' must be a single number")
  expect_error(rbf_kernel(c(1, 2)), "'sigma' must be a single number")
  expect_error(poly_kernel(2.5), "'degree' must be a whole number")
  expect_error(poly_kernel(0), "'degree'")
  expect_error(kernel_matrix(rbf_kernel(1), c(1, NA)), "'x' contains missing values")
  expect_error(kernel_matrix(rbf_kernel(1), c(1, Inf)), "'x' contains infinite values")
  expect_error(kernel_matrix(rbf_kernel(1), letters), "'x' must be numeric")
  expect_error(kernel_matrix(rbf_kernel(1), data.frame(a = 1, b = "u")),
               "'x' must contain only numeric columns; not numeric: b")
  expect_error(kernel_matrix(rbf_kernel(1), x2, matrix(1, 2, 3)),
               "'y' must have as many columns as 'x' \\(2\\), not 3")
  expect_error(kernel_matrix(rbf_kernel(1), x2, deriv = -1), "'deriv'")
  expect_error(kernel_matrix(rbf_kernel(1), x2, deriv = 1, wrt = 3), "'wrt' must be a column")
  expect_error(kernel_matrix("rbf", x2), "'kernel' must be a kernel")
  expect_error(kernel_matrix(rbf_kernel(1), numeric(0)), "'x' has no data")
})

test_that("every model refuses a kernel argument that is no kernel, naming it", {
  x <- as.matrix(mtcars[, 2:4])
  for (model in c("mfsvr", "svr", "rvm", "srvm", "gpc", "svc")) {
    y <- if (model %in% c("gpc", "svc")) factor(mtcars$am) else mtcars$mpg
    for (kernel in list("linear", 3, NA, NULL, list(type = "rbf"))) {
      expect_error(get(model)(x, y, kernel = kernel), "'kernel' must be a kernel such as",
                   info = paste(model, deparse(kernel)))
    }
  }
})

test_that("one data point and far-apart points are handled", {
  expect_equal(kernel_matrix(rbf_kernel(1), 2), matrix(1))
  expect_identical(kernel_matrix(rbf_kernel(0.01), c(0, 100))[1, 2], 0)
  expect_false(anyNA(kernel_matrix(rbf_kernel(0.01), c(0, 100), deriv = 10)))
})

test_that("plot() draws the kernel and its derivatives", {
  pdf(NULL)
  on.exit(dev.off())
  v <- plot(rbf_kernel(2), deriv = c(0, 4), n = 11)
  z <- seq(-8, 8, length.out = 11)
  expect_equal(v[, 1], exp(-z^2 / 8), tolerance = 1e-14)
  expect_equal(v[, 2], (z^4 / 16 - 6 * z^2 / 4 + 3) / 16 * exp(-z^2 / 8), tolerance = 1e-12)
  expect_error(plot(rbf_kernel(1), from = 1, to = 0), "'to' must be greater")
})

test_that(".match_choice() names the argument and takes defaults from the caller", {
  f <- function(interval = c("none", "confidence")) gpsvm:::.match_choice(interval)
  expect_identical(f(), "none")
  expect_identical(f("conf"), "confidence")
  expect_error(f("bogus"), "'interval' must be one of \"none\", \"confidence\"")
})

test_that("high Gaussian derivatives match the Hermite recursion until they overflow, then error", {
  # d^n/dx^n exp(-(x - x')^2 / (2 s^2)) = (-1/s)^n He_n(u) k, u = (x - x') / s;
  # He_{n+1}(u) = u He_n(u) - n He_{n-1}(u), in plain R
  hermite <- function(n, u) {
    h <- c(1, u)
    if (n < 2) return(h[n + 1])
    for (j in 1:(n - 1)) h <- c(h[2], u * h[2] - j * h[1])
    h[2]
  }
  s <- 0.8
  u <- (0.7 - 0.1) / s
  for (n in c(20, 90, 140)) {
    expected <- (-1 / s)^n * hermite(n, u) * exp(-u^2 / 2)
    expect_equal(kernel_matrix(rbf_kernel(s), 0.7, 0.1, deriv = n)[1, 1], expected,
                 tolerance = 1e-10)
  }
  expect_error(kernel_matrix(rbf_kernel(s), 0.7, 0.1, deriv = 400),
               "derivative of order 400 overflows double precision")
  expect_error(kernel_matrix(poly_kernel(100), 1e5, 1e5), "the kernel is not finite")
})

test_that("kernel expansions at new inputs match plain-R sums, across blocks", {
  set.seed(31)
  xs <- matrix(rnorm(120), 60, 2)
  z <- matrix(rnorm(2 * 9000), 9000, 2)  # more rows than one block
  w <- rnorm(60)
  w[c(3, 9, 40)] <- 0
  d2 <- outer(rowSums(z^2), rowSums(xs^2), "+") - 2 * z %*% t(xs)
  expect_equal(gpsvm:::.kernel_expansion(rbf_kernel(0.8), z, xs, w),
               drop(exp(-pmax(d2, 0) / (2 * 0.64)) %*% w), tolerance = 1e-12)
  expect_equal(gpsvm:::.kernel_expansion(poly_kernel(2, scale = 0.5, offset = 1), z, xs, w),
               drop((0.5 * z %*% t(xs) + 1)^2 %*% w), tolerance = 1e-12)
  # derivatives: the derivative of the plain-R sum in the first column
  d1 <- gpsvm:::.kernel_expansion(rbf_kernel(0.8), z[1:5, ], xs, w, deriv = 1L, wrt = 1L)
  k <- exp(-pmax(d2[1:5, ], 0) / (2 * 0.64))
  expect_equal(d1, drop((-outer(z[1:5, 1], xs[, 1], "-") / 0.64 * k) %*% w), tolerance = 1e-10)
  expect_identical(gpsvm:::.kernel_expansion(rbf_kernel(1), z, xs[0, , drop = FALSE], numeric(0)),
                   numeric(9000))
})
