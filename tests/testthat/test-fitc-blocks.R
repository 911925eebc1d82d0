# FITC fits whose n x m cross-kernel factor exceeds the memory budget
# (size rule inducing_factor_mb): the rows beyond it are recomputed in every
# sweep.  The reference is the fit that holds every row, a different
# computation (whole-matrix products over the held factor); the fit must be
# the same to 1e-10, evidence and gradient included, and its plan must say
# which was done.

# 2000 rows and 100 inducing inputs: a factor of 1.5 MB, over a budget of
# 1 MB (1310 rows held, 690 recomputed).
blocks_data <- function(n = 2000, seed = 3) {
  set.seed(seed)
  x <- matrix(runif(3 * n, -2, 2), ncol = 3)
  y <- sin(2 * x[, 1]) + 0.5 * x[, 2] * x[, 3] + rnorm(n, sd = 0.2)
  list(x = x, y = y, z = x[seq(1, n, length.out = 100), ])
}

with_budget <- function(mb, expr) {
  op <- options(gpsvm.size_policy = list(inducing_factor_mb = mb))
  on.exit(options(op))
  expr
}

test_that("the held rows follow the budget; the plan says what was done", {
  expect_null(with_budget(1, gpsvm:::.inducing_held_rows(1000, 100)))
  expect_identical(with_budget(1, gpsvm:::.inducing_held_rows(2000, 100)),
                   as.integer(floor(2^20 / 800)))
  expect_identical(with_budget(1, gpsvm:::.inducing_held_rows(10^6, 500)), 262L)
  expect_null(gpsvm:::.inducing_held_rows(10^5, 500))  # 400 MB, the default holds it
})

test_that("mfsvr(): rows recomputed beyond the budget give the fit that holds them", {
  skip_on_cran()
  d <- blocks_data()
  fit_at <- function(mb) {
    with_budget(mb, gpsvm:::.mfsvr_fit(d$x, d$y, C = 3, epsilon = 0.1, kernel = rbf_kernel(0.8),
                                       control = mfsvr_control(tol = 1e-10), gradient = TRUE,
                                       inducing = d$z))
  }
  held <- fit_at(1000)
  blocks <- fit_at(1)
  expect_null(held$inducing_held_rows)
  expect_identical(blocks$inducing_held_rows, 1310L)
  expect_true(blocks$convergence$converged)
  expect_equal(blocks$site_precision, held$site_precision, tolerance = 1e-10)
  expect_equal(blocks$site_nu, held$site_nu, tolerance = 1e-10)
  expect_equal(blocks$fitted.values, held$fitted.values, tolerance = 1e-10)
  expect_equal(blocks$variance, held$variance, tolerance = 1e-10)
  expect_equal(blocks$inducing_weights, held$inducing_weights, tolerance = 1e-10)
  expect_equal(blocks$log_evidence, held$log_evidence, tolerance = 1e-12)
  expect_equal(blocks$gradient, held$gradient, tolerance = 1e-9)
  # the sweeps are the same sweeps: as many of them
  expect_identical(blocks$convergence$iterations, held$convergence$iterations)
})

test_that("mfsvr() and gpc() with inducing =: the same fit, predictions and plan row", {
  skip_on_cran()
  d <- blocks_data()
  fits <- lapply(c(1000, 1), function(mb) with_budget(mb, suppressMessages(list(
    reg = mfsvr(d$x, d$y, C = 3, epsilon = 0.1, kernel = rbf_kernel(0.8), inducing = d$z),
    cls = gpc(d$x, factor(d$y > 0), kernel = rbf_kernel(0.8), noise = 0.1, kappa = 0,
              optimize = FALSE, inducing = d$z, control = gpc_control(tol = 1e-10))))))
  new <- d$x[1:5, ] + 0.05
  p_held <- predict(fits[[1]]$reg, new, se.fit = TRUE)
  p_blocks <- predict(fits[[2]]$reg, new, se.fit = TRUE)
  expect_equal(p_blocks$fit, p_held$fit, tolerance = 1e-10)
  expect_equal(p_blocks$se.fit, p_held$se.fit, tolerance = 1e-10)
  expect_equal(predict(fits[[2]]$cls, new, type = "prob"),
               predict(fits[[1]]$cls, new, type = "prob"), tolerance = 1e-10)
  expect_equal(logLik(fits[[2]]$cls), logLik(fits[[1]]$cls), tolerance = 1e-12)
  for (k in c("reg", "cls")) {
    plans <- lapply(fits, function(f) gpsvm_plan(f[[k]]))
    rows <- lapply(plans, function(p) p[p$step == "factor", ])
    expect_identical(rows[[1]]$size_rule, "inducing_factor_mb")
    expect_match(rows[[1]]$choice, "held in memory")
    expect_match(rows[[2]]$choice, "first 1310 rows held, the other 690 recomputed")
    expect_match(rows[[2]]$by, "(1.53 MB > 1)", fixed = TRUE)
    expect_true(all(c(rows[[1]]$exact, rows[[2]]$exact)))
  }
})

test_that("gpc() beyond ep_start_subset_n starts from a fit on every tenth row: the same fixed point", {
  skip_on_cran()
  d <- blocks_data()
  fit_at <- function(policy) {
    op <- options(gpsvm.size_policy = policy)
    on.exit(options(op))
    suppressMessages(gpc(d$x, factor(d$y > 0), kernel = rbf_kernel(0.8), noise = 0.1, kappa = 0,
                         optimize = FALSE, inducing = d$z, control = gpc_control(tol = 1e-10)))
  }
  prior <- fit_at(NULL)
  started <- fit_at(list(ep_start_subset_n = 1000))
  blocks <- fit_at(list(ep_start_subset_n = 1000, inducing_factor_mb = 1))
  expect_null(prior$ep_start_rows)
  expect_identical(started$ep_start_rows, 200L)
  expect_true(started$convergence$converged)
  # the run from the prior is the reference: another start, the same fixed point
  for (field in c("site_precision", "site_nu", "fitted.values")) {
    expect_equal(started[[field]], prior[[field]], tolerance = 1e-8)
  }
  expect_equal(started$log_evidence, prior$log_evidence, tolerance = 1e-10)
  # rows recomputed beyond the budget: the same start, the same sweeps
  expect_identical(blocks$ep_start_rows, 200L)
  expect_equal(blocks$fitted.values, started$fitted.values, tolerance = 1e-10)
  expect_identical(blocks$convergence$iterations, started$convergence$iterations)
  rows <- lapply(list(prior, started), function(f) {
    p <- gpsvm_plan(f)
    p[p$step == "EP start", ]
  })
  expect_identical(rows[[1]]$choice, "from the prior")
  expect_match(rows[[1]]$by, "(n = 2000 <= 100000)", fixed = TRUE)
  expect_identical(rows[[2]]$choice, "from the sites of the same fit on 200 evenly spaced rows")
  expect_match(rows[[2]]$by, "(n = 2000 > 1000)", fixed = TRUE)
  expect_true(all(c(rows[[1]]$exact, rows[[2]]$exact)))
})

test_that("a low-rank gpc() beyond ep_start_subset_n starts from its subset's own pivots", {
  skip_on_cran()
  set.seed(11)
  x <- matrix(stats::runif(1500) * 10)
  y <- factor(sin(x[, 1]) + stats::rnorm(1500, sd = 0.3) > 0)
  fit_at <- function(policy) {
    op <- options(gpsvm.size_policy = policy)
    on.exit(options(op))
    gpc(x, y, kernel = rbf_kernel(1), noise = 0.1, optimize = FALSE,
        control = gpc_control(tol = 1e-10))
  }
  prior <- fit_at(NULL)
  started <- fit_at(list(ep_start_subset_n = 1000))
  # the full data's pivoted factor is not the subset's: the start must not
  # hand it on (it did: "the low-rank factor does not match the inputs")
  expect_true(isTRUE(attr(started$inducing, "low_rank")))
  expect_identical(started$ep_start_rows, 150L)
  expect_equal(started$fitted.values, prior$fitted.values, tolerance = 1e-8)
  expect_equal(started$log_evidence, prior$log_evidence, tolerance = 1e-10)
})
