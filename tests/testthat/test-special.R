# The core's special functions against R's own pnorm/dnorm, in the far tails.
special <- function(name, x, y = x) core_probe("cpp_special")(name, x, y)

test_that("log Phi matches pnorm(log.p = TRUE) from -1e5 to +40", {
  x <- c(-1e5, -1e3, -200, -40, -38.5, -20, -10, -5, -1, -1e-8, 0, 1e-8, 0.5, 1, 5, 9, 20, 37)
  ref <- pnorm(x, log.p = TRUE)
  expect_equal(special("log_norm_cdf", x), ref, tolerance = 1e-13)
  # relative accuracy of the tiny upper-tail values, not just absolute
  up <- c(9, 20, 37)
  expect_lt(max(abs(special("log_norm_cdf", up) / pnorm(up, log.p = TRUE) - 1)), 1e-12)
  expect_true(all(is.finite(special("log_norm_cdf", c(-1e150, -1e10)))))
  expect_equal(special("log_norm_cdf", 40), pnorm(40, log.p = TRUE))
})

test_that("the Mills ratio phi/Phi is finite and accurate in both tails", {
  # moderate arguments: R's log-scale density and distribution function
  x <- c(-40, -10, -1, 0, 1, 10, 40)
  ref <- exp(dnorm(x, log = TRUE) - pnorm(x, log.p = TRUE))
  expect_equal(special("mills_ratio", x), ref, tolerance = 1e-12)
  # far lower tail, where the log-scale difference above loses digits to
  # cancellation: the asymptotic series -x / (1 - 1/x^2 + 3/x^4 - 15/x^6 + 105/x^8)
  x <- c(-1e6, -1e4, -1e3, -100)
  ref <- -x / (1 - 1 / x^2 + 3 / x^4 - 15 / x^6 + 105 / x^8)
  got <- special("mills_ratio", x)
  expect_true(all(is.finite(got)))
  expect_equal(got, ref, tolerance = 1e-14)
  expect_identical(special("mills_ratio", 60), dnorm(60) / pnorm(60))
})

test_that("log(exp(a) erfc(b)) is finite where the product over- or underflows", {
  # erfc(b) = 2 Phi(-b sqrt 2)
  a <- c(0, 800, 1e4, -5, 0, 1600)
  b <- c(0.5, 28, 100, -3, -40, 40)
  ref <- a + log(2) + pnorm(-b * sqrt(2), log.p = TRUE)
  expect_equal(special("log_exp_erfc", a, b), ref, tolerance = 1e-13)
  expect_equal(special("log_erfc", c(-40, -1, 0, 1, 26, 27, 1e3)),
               log(2) + pnorm(-sqrt(2) * c(-40, -1, 0, 1, 26, 27, 1e3), log.p = TRUE),
               tolerance = 1e-13)
})

test_that("erfcx is continuous across its branch points", {
  z <- c(4 - 1e-12, 4, 4 + 1e-12)
  expect_lt(diff(range(special("erfcx", z))), 1e-13)
  zz <- c(0.1, 2, 3.9, 4.1, 10, 26, 50, 300)
  expect_equal(log(special("erfcx", zz)), zz^2 + log(2) + pnorm(-sqrt(2) * zz, log.p = TRUE),
               tolerance = 1e-12)
  expect_equal(special("erfcx", -1), 2 * exp(1) - exp(1) * 2 * pnorm(-sqrt(2)), tolerance = 1e-14)
})

test_that("the flip Mills ratio and its curvature are right across their branches", {
  sp <- function(name, z, kappa) core_probe("cpp_special")(name, z, rep(kappa, length(z)))
  z <- c(-50, -8, -1, 0, 2, 9)
  for (kappa in c(0, 1e-8, 0.2)) {
    ref <- exp(log1p(-2 * kappa) + dnorm(z, log = TRUE) -
                 log(kappa + (1 - 2 * kappa) * pnorm(z)))
    if (kappa == 0) ref <- exp(dnorm(z, log = TRUE) - pnorm(z, log.p = TRUE))
    expect_equal(sp("flip_mills_ratio", z, kappa), ref, tolerance = 1e-12)
    # -G'(z) by central differences
    h <- 1e-5
    fd <- -(sp("flip_mills_ratio", z + h, kappa) - sp("flip_mills_ratio", z - h, kappa)) / (2 * h)
    expect_equal(sp("flip_mills_curvature", z, kappa), fd, tolerance = 1e-7)
  }
  # continuity where the series takes over
  zz <- c(-1e4 * (1 + 1e-12), -1e4, -1e4 * (1 - 1e-12))
  cz <- sp("flip_mills_curvature", zz, 0)
  expect_lt(diff(range(cz)) / mean(cz), 1e-7)
})
