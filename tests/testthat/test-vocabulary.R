# One vocabulary across the models: the controls' shared settings, the
# search settings, hyperparameters() and the evidence family.

set.seed(7)
voc_x <- matrix(runif(60, -3, 3), 30, 2)
voc_y <- sin(voc_x[, 1]) + 0.3 * voc_x[, 2] + rnorm(30, sd = 0.1)
voc_class <- factor(ifelse(voc_x[, 1] + rnorm(30, sd = 0.5) > 0, "b", "a"))

test_that("every control takes a shared setting within the same range", {
  controls <- list(svr_control = svr_control, mfsvr_control = mfsvr_control,
                   rvm_control = rvm_control, srvm_control = srvm_control,
                   gpc_control = gpc_control, svc_control = svc_control,
                   search_control = search_control)
  # (not below srvm_control()'s min_alpha, which prune_alpha must exceed)
  probes <- c(-1, 0, 1e-3, 0.05, 0.5, 1, 1.5, 50, 2^31, Inf, NA)
  accepted <- function(constructor, setting, value) {
    args <- stats::setNames(list(value), setting)
    !inherits(tryCatch(do.call(constructor, args), error = function(e) e), "error")
  }
  shared <- c("tol", "max_iter", "cache_mb", "seed", "damping", "rank_tol", "eta",
              "tol_evidence", "prune_alpha", "sigma2_init", "min_sigma2")
  for (setting in shared) {
    having <- Filter(function(f) setting %in% names(formals(f)), controls)
    expect_gt(length(having), 1L)
    verdicts <- vapply(having, function(f) {
      paste(vapply(probes, function(v) accepted(f, setting, v), logical(1)), collapse = "")
    }, character(1))
    expect_length(unique(verdicts), 1L)
  }
  # the ranges themselves: whole iteration caps from 1, positive tolerances
  expect_error(gpc_control(max_iter = 0), "'max_iter' must be a whole number >= 1")
  expect_error(svc_control(max_iter = 0), "'max_iter' must be a whole number >= 1")
  expect_error(gpc_control(eta = 2), "'eta' must lie in \\(0, 1\\]")
  expect_error(search_control(grid = 2), "'grid' must be a whole number >= 3")
  # one default for the kernel cache
  caches <- vapply(Filter(function(f) "cache_mb" %in% names(formals(f)), controls),
                   function(f) f()$cache_mb, numeric(1))
  expect_identical(unname(caches), rep(500, length(caches)))
})

test_that("defaults that depend on the data are resolved at the fit and recorded", {
  n <- length(voc_y)
  s <- svc(voc_x, voc_class)
  expect_null(svc_control()$max_iter)
  expect_identical(s$control$max_iter, as.integer(max(1e5, 100 * n)))
  expect_identical(svc(voc_x, voc_class, control = svc_control(algorithm = "adatron"))$control$max_iter,
                   10000L)
  g <- gpc(voc_x, voc_class, rbf_kernel(1), noise = 0.3, method = "naive")
  expect_identical(g$control[c("tol", "max_iter")], list(tol = 1e-5, max_iter = 1000L))
  tap <- gpc(voc_x, voc_class, rbf_kernel(1), noise = 0.3)
  expect_identical(tap$control[c("tol", "max_iter")], list(tol = 1e-6, max_iter = 500L))
  expect_identical(tap$convergence$tol, tap$control$tol)
  expect_identical(mfsvr(voc_x, voc_y, C = 2)$control$max_rank, as.integer(n %/% 2))
  # rvm(): at least 10000 steps, four per candidate centre (each distinct input)
  r <- rvm(voc_x, voc_y)
  expect_identical(r$control$max_iter, 10000L)
  many <- suppressWarnings(rvm(voc_x, voc_y, control = rvm_control(max_iter = 7)))
  expect_identical(many$control$max_iter, 7L)
  expect_identical(gpsvm:::.candidate_count(NULL, rbind(voc_x, voc_x[1:3, ])), 30L)
  expect_identical(gpsvm:::.candidate_count(12L, voc_x), 12L)
  # srvm(): both starts on scaled data, the paper's strong one as given
  expect_identical(srvm(voc_x, voc_y)$control$lambda_init, c(1e4, 1))
  expect_identical(srvm(voc_x, voc_y, scale = FALSE)$control$lambda_init, 1e4)
  expect_null(srvm_control()$lambda_init)
  # a width search stores the control it was given, resolved
  w <- suppressWarnings(rvm(voc_x, voc_y, optimize = TRUE))
  expect_identical(w$control$max_iter, 10000L)
})

test_that("search_control() sets the searches' tolerance, budget and grid", {
  # the width search: its grid, then golden sections to the bracket tol
  w <- suppressWarnings(rvm(voc_x, voc_y, optimize = TRUE, search = search_control(grid = 5)))
  width <- gpsvm:::.data_driven_width(gpsvm:::.scale_inputs(voc_x, w$scaling))
  path <- w$optimization$path
  # (the start, the data-driven width, is the grid's middle point)
  grid <- exp(seq(log(width / 4), log(4 * width), length.out = 5))
  expect_equal(sort(path$sigma[1:5]), grid, tolerance = 1e-12)
  expect_lte(w$optimization$convergence$change, 0.05)
  coarse <- suppressWarnings(rvm(voc_x, voc_y, optimize = TRUE, search = search_control(tol = 0.5)))
  expect_lt(coarse$optimization$evaluations, w$optimization$evaluations + 5L)
  expect_lte(coarse$optimization$convergence$change, 0.5)
  expect_identical(coarse$optimization$convergence$tol, 0.5)
  # a budget of one golden-section step stops there, and says so
  expect_warning(short <- rvm(voc_x, voc_y, optimize = TRUE,
                              search = search_control(max_iter = 1, tol = 1e-6)),
                 "iteration limit \\(1\\)")
  expect_false(short$optimization$convergence$converged)
  # L-BFGS-B: its tolerance per observation and its iteration cap
  m <- mfsvr(voc_x, voc_y, optimize = "C", search = search_control(tol = 1e-5))
  expect_identical(m$optimization$convergence$tol, 1e-5)
  expect_lte(m$optimization$convergence$change, 1e-5)
  expect_warning(capped <- mfsvr(voc_x, voc_y, optimize = TRUE,
                                 search = search_control(max_iter = 1, tol = 1e-12)),
                 "iteration limit \\(1\\) was reached")
  expect_false(capped$optimization$convergence$converged)
  expect_identical(gpc(voc_x, voc_class, search = search_control(tol = 2e-3))$optimization$convergence$tol,
                   2e-3)
  # svr()'s grid search (for the paper's eq. 16): its grid over the interval
  # (the start, C = 1, is the grid's middle point, evaluated once)
  s <- suppressWarnings(svr(voc_x, voc_y, C = 1, optimize = TRUE, search = search_control(grid = 7),
                            control = svr_control(evidence = "eq16")))
  expect_equal(sort(s$optimization$path$C[1:7]), exp(seq(log(0.01), log(100), length.out = 7)),
               tolerance = 1e-12)
  expect_error(svr(voc_x, voc_y, optimize = TRUE, search = list(tol = 1)),
               "'search' must come from search_control\\(\\)")
})

test_that("hyperparameters() names each model's settings as the arguments that set them", {
  s <- svr(voc_x, voc_y, C = 2, epsilon = 0.2, kernel = rbf_kernel(1.5))
  # the offset's prior variance is `bias`, as in gpc() and svc()
  expect_identical(hyperparameters(s), c(sigma = 1.5, C = 2, epsilon = 0.2, bias = 0))
  m <- mfsvr(voc_x, voc_y, C = 3, kernel = poly_kernel(2), bias = 0.5)
  expect_identical(hyperparameters(m), c(C = 3, epsilon = 0.1, bias = 0.5))
  r <- srvm(voc_x, voc_y, kernel = rbf_kernel(1))
  expect_identical(hyperparameters(r), c(sigma = 1, lambda = r$lambda,
                                         noise_variance = r$noise_variance))
  expect_identical(sigma(r), sqrt(r$noise_variance) * r$response_scaling$scale)
  g <- gpc(voc_x, voc_class, rbf_kernel(1), noise = 0.2, kappa = 0.01, bias = 2)
  expect_identical(hyperparameters(g), c(sigma = 1, noise = 0.2, kappa = 0.01, bias = 2))
  v <- svc(voc_x, voc_class, C = 4, noise = 0.1, bias = 0)
  expect_identical(hyperparameters(v)[c("C", "noise", "bias")], c(C = 4, noise = 0.1, bias = 0))
  # three classes, each model's own search: one row per class
  three <- factor(cut(voc_x[, 1], c(-Inf, -1, 1, Inf), labels = c("l", "m", "h")))
  g3 <- gpc(voc_x, three)
  h3 <- hyperparameters(g3)
  expect_identical(dim(h3), c(3L, 4L))
  expect_identical(rownames(h3), c("l", "m", "h"))
  expect_identical(unname(h3[, "noise"]), unname(vapply(g3$models, `[[`, numeric(1), "noise")))
  # a width per input: one sigma[<column>] per input column
  colnames(voc_x) <- c("p", "q")
  a <- mfsvr(voc_x, voc_y, C = 2, kernel = rbf_kernel(c(1, 4), per_input = TRUE), scale = FALSE)
  expect_equal(hyperparameters(a)[c("sigma[p]", "sigma[q]")], c(`sigma[p]` = 1, `sigma[q]` = 4))
  expect_error(hyperparameters(a, 1), "unknown argument")
})

test_that("evidence() is every model's log evidence; evidence_curve() refits a fit over C", {
  fits <- list(svr(voc_x, voc_y), mfsvr(voc_x, voc_y, C = 2), rvm(voc_x, voc_y),
               srvm(voc_x, voc_y), gpc(voc_x, voc_class))
  for (fit in fits) expect_identical(evidence(fit), c(logLik(fit)))
  expect_error(evidence(gpc(voc_x, voc_class, method = "naive")), "no evidence")
  # a curve through a fit is the evidence of the fits at each C
  Cs <- c(0.5, 2, 8)
  # (its width and offset given: update() at another C then refits the
  # same model, where mfsvr() would weigh them again)
  m <- mfsvr(voc_x, voc_y, C = 2, bias = 0, kernel = rbf_kernel(1))
  curve <- evidence_curve(m, C = Cs)
  expect_identical(curve$method, rep("ep", 3))
  expect_equal(curve$log_evidence, vapply(Cs, function(C) evidence(update(m, C = C)), numeric(1)),
               tolerance = 1e-8)
  # (svr() at a C given makes no choice of width or offset: the reference
  # refits take the ones the default fit chose)
  s <- svr(voc_x, voc_y)
  same <- function(C) svr(voc_x, voc_y, C = C, bias = s$bias_variance,
                          kernel = rbf_kernel(s$kernel$sigma))
  curve <- evidence_curve(s, C = Cs, method = c("eq16", "refined"))
  expect_equal(curve$log_evidence[curve$method == "refined"],
               vapply(Cs, function(C) evidence(same(C), "refined"), numeric(1)),
               tolerance = 1e-10)
  expect_error(evidence_curve(rvm(voc_x, voc_y), C = Cs), "varies C, which a rvm\\(\\) fit")
  expect_error(evidence_curve(m, C = -1), "'C' must lie in \\[1.49e-154, 1.34e\\+154\\], .* not -1")
  # the gradient of the EP evidence against central differences in log C
  e <- evidence(m, gradient = TRUE)
  h <- 1e-4
  up <- evidence(update(m, C = 2 * exp(h), control = mfsvr_control(tol = 1e-12)))
  down <- evidence(update(m, C = 2 * exp(-h), control = mfsvr_control(tol = 1e-12)))
  expect_equal(attr(e, "gradient")[["log_C"]], (up - down) / (2 * h), tolerance = 1e-4)
})
