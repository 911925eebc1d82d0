# Data in row partitions (gpsvm_partitions()), read one at a time and never
# gathered.  The reference is the in-memory fit to the partitions' rows bound
# together by rbind() in the test: a different computation of every piece
# (one model frame of all rows for the levels and the design, colMeans() and
# sd() for the scaling, the width rule and the greedy choice on rows held in
# memory, the core reading a matrix), which the fit to partitions must
# reproduce to 1e-8: fitted values, evidence, predictions and their
# intervals, on partitions of unequal sizes (one of a single row), of mixed
# kinds (data frames, rds and csv files), with factor levels that appear only
# in a later partition.

# Partitions of a data set with two numbers, text `g` whose level "c" first
# appears in the last partition, a numeric response and two-class labels;
# sizes 1, 120, 2 and the rest, as a data frame, an rds file, a csv file and
# a data frame.  `bound` is rbind() of the partitions as read back.
partition_data <- function(n = 260, seed = 5) {
  set.seed(seed)
  d <- data.frame(x1 = runif(n, -3, 3), x2 = runif(n, -2, 2),
                  g = sample(c("b", "a"), n, replace = TRUE), stringsAsFactors = FALSE)
  d$g[(n - 40):n] <- sample(c("a", "c"), 41, replace = TRUE)
  d$y <- sin(d$x1) + 0.5 * d$x2 + 0.8 * (d$g == "c") + rnorm(n, sd = 0.2)
  d$label <- ifelse(d$y + rnorm(n, sd = 0.3) > 0.3, "up", "down")
  cut <- c(0, 1, 121, 123, n)
  pieces <- lapply(1:4, function(k) d[(cut[k] + 1):cut[k + 1], ])
  files <- tempfile(fileext = c(".rds", ".csv"))
  saveRDS(pieces[[2]], files[1])
  utils::write.csv(pieces[[3]], files[2], row.names = FALSE)
  read_back <- list(pieces[[1]], readRDS(files[1]),
                    utils::read.csv(files[2], stringsAsFactors = FALSE), pieces[[4]])
  bound <- do.call(rbind, read_back)
  rownames(bound) <- NULL
  list(parts = gpsvm_partitions(pieces[[1]], files, pieces[[4]]), bound = bound,
       pieces = read_back, files = files)
}

# Inducing inputs on the model matrix's columns x1, x2, ga, gb, gc (the
# first factor codes every level when there is no intercept).
partition_inducing <- function(m = 18) {
  cbind(x1 = seq(-3, 3, length.out = m), x2 = rep(c(-1.5, 0, 1.5), length.out = m),
        ga = rep(c(1, 0, 0), length.out = m), gb = rep(c(0, 1, 0), length.out = m),
        gc = rep(c(0, 0, 1), length.out = m))
}

test_that("gpsvm_partitions() checks every partition before any fit and prints them", {
  d <- partition_data()
  expect_s3_class(d$parts, "gpsvm_partitions")
  expect_identical(unname(d$parts$kind), c("data frame", "rds", "csv", "data frame"))
  shown <- capture.output(print(d$parts))
  expect_match(shown[1], "4 row partitions \\(2 data frame, 1 rds, 1 csv\\)")
  expect_match(shown[1], "g <text>")
  expect_match(shown[3], basename(d$files[1]), fixed = TRUE)
  absent <- file.path(tempdir(), "no-such-partition.rds")
  expect_error(gpsvm_partitions(d$pieces[[1]], absent), "partition 2 of '...'.*does not exist")
  other <- tempfile(fileext = ".txt")
  writeLines("x", other)
  expect_error(gpsvm_partitions(other), "partition 1 of '...'.*not an .rds, .csv or .parquet")
  broken <- tempfile(fileext = ".rds")
  writeLines("not an rds file", broken)
  expect_error(gpsvm_partitions(d$pieces[[1]], broken),
               "partition 2 of '...' \\(.*\\) cannot be read")
  expect_error(gpsvm_partitions(d$pieces[[1]], d$pieces[[2]][, -2]),
               "partition 2 of '...' has the columns x1, g, y, label, where the first has")
  retyped <- d$pieces[[2]]
  retyped$x2 <- as.character(retyped$x2)
  expect_error(gpsvm_partitions(d$pieces[[1]], retyped),
               "partition 2 of '...' has column\\(s\\) x2 of another type.*text not number")
  expect_error(gpsvm_partitions(), "gives no partitions")
  expect_error(gpsvm_partitions(d$pieces[[1]], 3), "partition 2 of '...' must be a file name")
})

test_that("mfsvr() on partitions is the fit to their bound rows, predictions included", {
  skip_on_cran()
  d <- partition_data()
  z <- partition_inducing()
  ref <- mfsvr(y ~ x1 + x2 + g, data = d$bound, C = 3, kernel = rbf_kernel(1.2), inducing = z,
               bias = 0)
  fit <- mfsvr(y ~ x1 + x2 + g, data = d$parts, C = 3, kernel = rbf_kernel(1.2), inducing = z)
  expect_equal(unname(fitted(fit)), unname(fitted(ref)), tolerance = 1e-8)
  expect_equal(as.numeric(logLik(fit)), as.numeric(logLik(ref)), tolerance = 1e-8)
  expect_equal(fit$scaling[c("center", "scale")], ref$scaling[c("center", "scale")],
               tolerance = 1e-12)
  expect_equal(fit$inducing, ref$inducing, tolerance = 1e-12)
  # predictions on partitions: in the order of their rows
  expect_equal(unname(predict(fit, d$parts, interval = "prediction")),
               unname(predict(ref, d$bound, interval = "prediction")), tolerance = 1e-8)
  se <- predict(fit, d$parts, se.fit = TRUE)
  se_ref <- predict(ref, d$bound, se.fit = TRUE)
  expect_equal(unname(se$se.fit), unname(se_ref$se.fit), tolerance = 1e-8)
  expect_equal(se$residual.scale, se_ref$residual.scale, tolerance = 1e-8)
  expect_equal(interval_coverage(fit, newdata = d$parts), interval_coverage(ref, newdata = d$bound),
               tolerance = 1e-8, ignore_attr = TRUE)
  # the plan says how the data were read
  expect_match(fit$plan$choice[fit$plan$step == "data"], "4 partitions of 260 rows")
  expect_error(predict(fit), "keeps no inputs: give them as 'newdata'")
  expect_error(predict(fit, d$parts, type = "distribution"), "not available for data in partitions")
  expect_error(plot(fit), "plot\\(\\) reads the training inputs, which a fit to data in partitions")
  expect_error(tidy(fit), "tidy\\(\\) reads the training inputs")
  expect_match(fit$plan$by[fit$plan$step == "calibration"], "data in partitions")
  expect_error(interval_coverage(fit), "not cross-validated")
  # a fit edited by hand
  edited <- fit
  edited$partitions$rows[2] <- 3
  expect_error(predict(edited, d$parts), "fit\\$partitions\\$rows must count the fit's 260 rows")
  edited <- fit
  edited$fitted.values <- edited$fitted.values[-1]
  expect_error(predict(edited, d$parts), "was the object edited")
})

test_that("mfsvr() on partitions without C: the default's on evenly spaced rows read from them", {
  d <- partition_data()
  z <- partition_inducing()
  # the rule lowered so that the search sees a subset (10000 by default)
  op <- options(gpsvm.size_policy = list(search_max_n = 100))
  on.exit(options(op))
  expect_message(fit <- mfsvr(y ~ x1 + x2 + g, data = d$parts, inducing = z),
                 "hyperparameters: searched on 100 evenly spaced rows")
  # the default in memory on those rows of the bound data, without an offset
  rows <- unique(round(seq(1, nrow(d$bound), length.out = 100)))
  some <- d$bound[rows, ]
  expect_setequal(unique(some$g), c("a", "b", "c"))
  ref <- suppressMessages(mfsvr(y ~ x1 + x2 + g, data = some, inducing = z, bias = 0,
                                calibration_folds = 0))
  expect_equal(fit$C, ref$C, tolerance = 1e-10)
  expect_equal(fit$kernel$sigma, ref$kernel$sigma, tolerance = 1e-12)
  expect_identical(fit$optimization$search_rows, 100L)
  # then every row at that C and width
  at <- suppressMessages(mfsvr(y ~ x1 + x2 + g, data = d$parts, inducing = z, C = ref$C,
                               kernel = rbf_kernel(ref$kernel$sigma)))
  expect_equal(unname(fitted(fit)), unname(fitted(at)), tolerance = 1e-10)
  plan <- gpsvm_plan(fit)
  expect_identical(plan$size_rule[plan$step == "hyperparameters"], "search_max_n")
  expect_false(plan$exact[plan$step == "hyperparameters"])
  # confint() and evidence_curve() refit the model on inputs the fit does not keep
  expect_error(confint(fit), "confint\\(\\) reads the training inputs")
  expect_error(evidence_curve(fit, C = c(1, 2)), "evidence_curve\\(\\) reads the training inputs")
})

test_that("mfsvr() on partitions: the width rule, the greedy inducing inputs and rows read again", {
  skip_on_cran()
  # 9000 rows: with 15 inducing inputs the factor's budget of 1 MB holds
  # 8738 rows, and the other rows are read again through the partitions in
  # every sweep; evenly spaced candidates and width rows over all partitions
  # (the rules lowered so that they sample)
  d <- partition_data(9000)
  op <- options(gpsvm.size_policy = list(greedy_max_rows = 70, width_rule_max_n = 90,
                                         inducing_factor_mb = 1))
  on.exit(options(op))
  ref <- mfsvr(y ~ ., data = d$bound[c("x1", "x2", "g", "y")], C = 2, inducing = 15, bias = 0)
  fit <- mfsvr(y ~ x1 + x2 + g, data = d$parts, C = 2, inducing = 15)
  expect_equal(fit$kernel$sigma, ref$kernel$sigma, tolerance = 1e-12)
  expect_equal(fit$inducing, ref$inducing, tolerance = 1e-12, ignore_attr = TRUE)
  expect_identical(fit$inducing_held_rows, 8738L)
  expect_equal(unname(fitted(fit)), unname(fitted(ref)), tolerance = 1e-8)
  expect_equal(as.numeric(logLik(fit)), as.numeric(logLik(ref)), tolerance = 1e-8)
  expect_match(fit$plan$by[fit$plan$step == "data"], "greedy choice on evenly spaced rows")
})

test_that("gpc() on partitions is the fit to their bound rows: two classes, one against the rest", {
  skip_on_cran()
  d <- partition_data()
  z <- partition_inducing(15)
  ref <- gpc(factor(label) ~ x1 + x2 + g, data = d$bound, kernel = rbf_kernel(1), noise = 0.2,
             inducing = z)
  fit <- gpc(factor(label) ~ x1 + x2 + g, data = d$parts, kernel = rbf_kernel(1), noise = 0.2,
             inducing = z)
  expect_equal(unname(fit$fitted.values), unname(ref$fitted.values), tolerance = 1e-8)
  expect_equal(fit$log_evidence, ref$log_evidence, tolerance = 1e-8)
  expect_equal(unname(predict(fit, d$parts, type = "prob")),
               unname(predict(ref, d$bound, type = "prob")), tolerance = 1e-8)
  expect_identical(as.character(predict(fit, d$parts)), as.character(predict(ref, d$bound)))
  # three classes, one model per class against the rest
  three <- function(data) transform(data, label = ifelse(x2 > 1, "high", label))
  pieces <- lapply(d$pieces, three)
  parts <- gpsvm_partitions(pieces)
  ref3 <- gpc(factor(label) ~ x1 + x2, data = three(d$bound), kernel = rbf_kernel(1),
              noise = 0.2, inducing = 12)
  fit3 <- gpc(factor(label) ~ x1 + x2, data = parts, kernel = rbf_kernel(1), noise = 0.2,
              inducing = 12)
  expect_equal(unname(predict(fit3, parts, type = "prob")),
               unname(predict(ref3, three(d$bound), type = "prob")), tolerance = 1e-8)
  expect_error(fitted(fit3), "keeps no inputs")
  # the default: each class's search on the rows read back (all 260 up to
  # gpc_search_max_n), as in memory; the fits on every row then start from
  # the prior instead of the search's sites, so they agree to EP's tolerance
  fit4 <- gpc(factor(label) ~ x1 + x2, data = parts, inducing = 12)
  ref4 <- gpc(factor(label) ~ x1 + x2, data = three(d$bound), inducing = 12)
  for (k in names(ref4$models)) {
    expect_equal(fit4$models[[k]]$kernel$sigma, ref4$models[[k]]$kernel$sigma, tolerance = 1e-10)
    expect_equal(fit4$models[[k]]$noise, ref4$models[[k]]$noise, tolerance = 1e-10)
  }
  expect_equal(unname(predict(fit4, parts, type = "prob")),
               unname(predict(ref4, three(d$bound), type = "prob")), tolerance = 1e-6)
  expect_match(fit4$plan$by[fit4$plan$step == "multiclass"], "data in partitions take one model")
  expect_output(print(summary(fit4)), "Training error: not computed")
  # beyond gpc_search_max_n (lowered here) on search_subset_n evenly spaced rows
  op <- options(gpsvm.size_policy = list(gpc_search_max_n = 100, search_subset_n = 80))
  on.exit(options(op))
  expect_message(fit5 <- gpc(factor(label) ~ x1 + x2, data = parts, inducing = 12),
                 "hyperparameters: searched on 80 evenly spaced rows")
  rows <- unique(round(seq(1, 260, length.out = 80)))
  ref5 <- suppressMessages(gpc(factor(label) ~ x1 + x2, data = three(d$bound)[rows, ],
                               inducing = 12))
  for (k in names(ref5$models)) {
    expect_equal(fit5$models[[k]]$kernel$sigma, ref5$models[[k]]$kernel$sigma, tolerance = 1e-10)
    expect_equal(fit5$models[[k]]$noise, ref5$models[[k]]$noise, tolerance = 1e-10)
  }
  expect_identical(fit5$plan$size_rule[fit5$plan$step == "hyperparameters"], "gpc_search_max_n")
  # optimize = FALSE: the defaults' starting noise and width
  fit6 <- gpc(factor(label) ~ x1 + x2, data = parts, inducing = 12, optimize = FALSE)
  expect_identical(fit6$models[[1]]$noise, 0.1)
  expect_identical(fit6$plan$choice[fit6$plan$step == "hyperparameters"], "fixed")
})

test_that("factor levels first seen in later partitions are ordered as rbind() orders them", {
  skip_on_cran()
  set.seed(8)
  n <- 150
  d <- data.frame(x = runif(n, -2, 2),
                  f = factor(sample(c("q", "p"), n, TRUE), levels = c("q", "p", "r", "s")))
  d$f[121:150] <- sample(c("s", "r"), 30, TRUE)
  d$y <- cos(d$x) + as.integer(d$f) / 2 + rnorm(n, sd = 0.1)
  # each partition's factor declares only its own levels, in its own order
  pieces <- list(d[1:60, ], d[61:61, ], d[62:120, ], d[121:150, ])
  own_levels <- function(f) factor(as.character(f), levels = rev(unique(as.character(f))))
  pieces <- lapply(pieces, function(p) transform(p, f = own_levels(f)))
  bound <- do.call(rbind, pieces)
  ref <- mfsvr(y ~ x + f, data = bound, C = 2, kernel = rbf_kernel(1), inducing = 12, bias = 0)
  fit <- mfsvr(y ~ x + f, data = gpsvm_partitions(pieces), C = 2, kernel = rbf_kernel(1),
               inducing = 12)
  expect_identical(fit$xlevels, ref$xlevels)
  expect_identical(colnames(fit$inducing), colnames(ref$inducing))
  expect_equal(unname(fitted(fit)), unname(fitted(ref)), tolerance = 1e-8)
  expect_equal(unname(predict(fit, gpsvm_partitions(rev(pieces)))),
               unname(predict(ref, do.call(rbind, rev(pieces)))), tolerance = 1e-8)
})

test_that("a fit to partitions says what it cannot take, before any fitting", {
  d <- partition_data()
  expect_error(mfsvr(y ~ x1 + x2, data = d$parts), "needs inducing inputs: give 'inducing'")
  expect_error(gpc(factor(label) ~ x1, data = d$parts, noise = 0.1),
               "gpc\\(\\) on data in partitions .* needs inducing inputs")
  expect_error(svr(y ~ x1, data = d$parts), "svr\\(\\) does not fit data in partitions")
  expect_error(mfsvr(y ~ x1, data = d$parts, inducing = 5, optimize = TRUE),
               "'optimize' not available for data in partitions")
  expect_error(mfsvr(y ~ x1, data = d$parts, inducing = 5, subset = x1 > 0),
               "'subset' and 'na.action' are not available")
  expect_error(mfsvr(y ~ poly(x1, 2), data = gpsvm_partitions(d$pieces[2:4]), inducing = 5),
               "terms fitted to the data")
  # (a partition of one row fails poly() itself: the error names it)
  expect_error(mfsvr(y ~ poly(x1, 2), data = d$parts, inducing = 5),
               "partition 1 of 'data' does not fit 'formula'")
  with_na <- d$pieces
  with_na[[2]]$x1[5] <- NA
  expect_error(mfsvr(y ~ x1, data = gpsvm_partitions(with_na), inducing = 5),
               "partition 2 of 'data' does not fit 'formula'")
})

test_that("parquet partitions are read through arrow", {
  skip_if_not_installed("arrow")
  d <- partition_data(60)
  file <- tempfile(fileext = ".parquet")
  arrow::write_parquet(d$pieces[[2]], file)
  parts <- gpsvm_partitions(d$pieces[[1]], file)
  expect_identical(unname(parts$kind), c("data frame", "parquet"))
  expect_equal(gpsvm:::.read_partition(parts, 2), d$pieces[[2]], ignore_attr = TRUE)
})
