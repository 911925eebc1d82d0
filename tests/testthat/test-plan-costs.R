# The plan's fits and seconds: each step's cost, counted where the core's
# fit routines are called.  The independent count is trace() on those
# routines, which sees every call the package makes in this session.

# `code` evaluated while the core routines `routines` count their calls;
# returns its value with attribute "calls".
count_core_calls <- function(routines, code) {
  calls <- 0
  ns <- asNamespace("gpsvm")
  for (routine in routines) {
    suppressMessages(trace(routine, tracer = function() calls <<- calls + 1, where = ns,
                           print = FALSE))
  }
  on.exit(for (routine in routines) suppressMessages(untrace(routine, where = ns)), add = TRUE)
  value <- code
  structure(list(value), calls = calls)
}

test_that("a fit at given settings charges only its calibration, one core fit per fold", {
  fit <- mfsvr(dist ~ speed, cars, kernel = rbf_kernel(1), C = 2, epsilon = 0.1, bias = 0,
               optimize = FALSE, noise = "constant", calibration_folds = 4)
  plan <- gpsvm_plan(fit)
  expect_identical(plan$fits[plan$step == "calibration"], 4)
  # (the prior's choice factorises the kernel matrix: seconds, no fit)
  expect_identical(plan$fits[plan$step == "prior"], 0)
  expect_true(all(is.na(plan$fits[!plan$step %in% c("calibration", "prior")])))
  expect_true(all(is.na(plan$seconds) == is.na(plan$fits)))
  own <- mfsvr(dist ~ speed, cars, kernel = rbf_kernel(1), C = 2, epsilon = 0.1, bias = 0,
               optimize = FALSE, noise = "constant", calibration_folds = 0)
  expect_true(all(is.na(gpsvm_plan(own)$fits[gpsvm_plan(own)$step != "prior"])))
})

test_that("the plan's fits add up to the core's calls, and its seconds to no more than the call's", {
  routines <- c("cpp_mfsvr_fit", "cpp_svr_fit", "cpp_rvm_fit", "cpp_gp_kernel_evidence",
                "cpp_gpc_tap_fit")
  set.seed(4)
  d <- data.frame(x1 = runif(60), x2 = runif(60))
  d$y <- sin(4 * d$x1) + d$x2 + rnorm(60, sd = 0.2)
  for (fitter in list(mfsvr, svr, rvm)) {
    time <- system.time(counted <- count_core_calls(routines, fitter(y ~ ., d)))[["elapsed"]]
    plan <- gpsvm_plan(counted[[1]])
    expect_equal(sum(plan$fits, na.rm = TRUE), attr(counted, "calls"))
    expect_true(sum(plan$seconds, na.rm = TRUE) <= time + 0.05)
  }
  # beyond search_max_n: the search on some rows and the fit on all are
  # fitters of their own, whose plans the outer one adds up
  withr::with_options(list(gpsvm.size_policy = list(search_max_n = 40)), {
    counted <- count_core_calls(routines, suppressMessages(svr(y ~ ., d)))
  })
  plan <- gpsvm_plan(counted[[1]])
  expect_equal(sum(plan$fits, na.rm = TRUE), attr(counted, "calls"))
  expect_false(is.na(plan$fits[plan$step == "hyperparameters"]))
  counted <- count_core_calls(routines, gpc(Species ~ ., iris))
  plan <- gpsvm_plan(counted[[1]])
  expect_equal(sum(plan$fits, na.rm = TRUE), attr(counted, "calls"))
  expect_gt(plan$fits[plan$step == "hyperparameters"], 3)  # three searches, each a few steps
})

test_that("fits on future's workers are counted once, as in this session", {
  skip_on_cran()
  skip_if_not(requireNamespace("gpsvm", quietly = TRUE) &&
                length(find.package("gpsvm", lib.loc = .libPaths(), quiet = TRUE)) > 0L,
              "gpsvm is not installed for background sessions")
  skip_if(nzchar(Sys.getenv("R_COVR")), "covr instruments only this session")
  sequential <- gpsvm_plan(gpc(Species ~ ., iris))$fits
  old <- future::plan(future::multisession, workers = 2)
  on.exit(future::plan(old), add = TRUE)
  expect_identical(gpsvm_plan(gpc(Species ~ ., iris))$fits, sequential)
})

test_that("a fitter inside another keeps its own count, and the outer one charges it", {
  fit <- gpc(Species ~ ., iris, multiclass = "ovr")
  withr::local_options(gpsvm.size_policy = list(ovr_max_nk = 600))  # 150 x 3 in the pool's band
  pooled <- suppressMessages(gpc(Species ~ ., iris))
  plan <- gpsvm_plan(pooled)
  expect_false(is.na(plan$fits[plan$step == "multiclass"]))
  # the one-vs-rest part costs what a one-vs-rest fit costs
  expect_identical(plan$fits[plan$step == "hyperparameters"],
                   gpsvm_plan(fit)$fits[gpsvm_plan(fit)$step == "hyperparameters"])
})

test_that("a plan whose costs were edited by hand is refused", {
  fit <- mfsvr(dist ~ speed, cars)
  bad <- fit
  bad$plan$fits[1] <- -1
  expect_error(predict(bad, cars[1:2, ]), "fits and seconds that are numbers >= 0")
  bad <- fit
  bad$plan$seconds[nrow(bad$plan)] <- NaN
  expect_error(summary(bad), "fits and seconds that are numbers >= 0")
  bad <- fit
  bad$plan$seconds <- NULL
  expect_error(predict(bad, cars[1:2, ]), "must be a data frame with the columns")
  # a fit saved before plans had costs
  old <- fit
  old$plan$fits <- old$plan$seconds <- NULL
  expect_equal(predict(old, cars[1:2, ]), predict(fit, cars[1:2, ]))
  expect_false(any(grepl("Cost of the choices", capture.output(summary(old)))))
})

test_that("summary() says what the choices cost, print() does not", {
  fit <- mfsvr(dist ~ speed, cars)
  plan <- gpsvm_plan(fit)
  text <- capture.output(summary(fit))
  line <- grep("^Cost of the choices:", text, value = TRUE)
  expect_length(line, 1L)
  charged <- plan$step[!is.na(plan$fits)]
  expect_match(line, sprintf("calibration %d fits", as.integer(plan$fits[plan$step == "calibration"])),
               fixed = TRUE)
  for (step in charged) expect_match(line, paste0(step, " "), fixed = TRUE)
  expect_false(any(grepl("Cost of the choices", capture.output(print(fit)))))
  g <- gpc(Species ~ ., iris)
  expect_match(capture.output(summary(g)), "^Cost of the choices: hyperparameters \\d+ fits",
               all = FALSE)
})

test_that("every fitter closes the ledger it opened, when it returns and when it fails", {
  # (.open_ledger() registers its close on the fitter's exit: an on.exit()
  # without add = TRUE later in a default method would drop it, and every
  # later fit would charge its costs to a ledger nobody reads)
  open_ledgers <- function() length(get(".costs", asNamespace("gpsvm"))$ledgers)
  set.seed(5)
  x <- matrix(runif(60), 30, 2)
  y <- x[, 1] + rnorm(30, sd = 0.1)
  classes <- factor(ifelse(x[, 1] + rnorm(30, sd = 0.2) > 0.5, "a", "b"))
  for (fit in list(function() mfsvr(x, y), function() svr(x, y), function() rvm(x, y),
                   function() srvm(x, y), function() gpc(x, classes), function() svc(x, classes))) {
    suppressWarnings(fit())
    expect_identical(open_ledgers(), 0L)
  }
  for (fails in list(function() mfsvr(x, y, C = -1), function() svr(x, y[-1]),
                     function() gpc(x, classes, noise = -1), function() rvm(x, y, kernel = "rbf"))) {
    expect_error(fails())
    expect_identical(open_ledgers(), 0L)
  }
})
