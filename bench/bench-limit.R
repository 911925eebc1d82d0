# How near the EP engine runs to the machine's own speed: one EP sweep
# against the operation it is built of, both in the engine's code (Eigen,
# blocked) and in this one process.
#
#   make bench BENCH=limit
#   GPSVM_BENCH_LIMIT_NMAX=2000 make bench BENCH=limit        # dense n <= 2000 only
#   GPSVM_BENCH_LIMIT_FITC_NMAX=1e4 make bench BENCH=limit    # FITC N <= 10^4 only
#   GPSVM_BENCH_LIMIT_PARTS=defaults make bench BENCH=limit   # one part: engine, fits, defaults
#   GPSVM_BENCH_LIMIT_PARTS=gpc-defaults make bench BENCH=limit   # gpc()'s part of defaults
#
# Dense prior, n = 700, 2000 and 5000 observations with 4 and 50 inputs
# (x ~ N(0, I), the data-driven width, gpc()'s; given to mfsvr() with
# bias = 0, so that it runs EP once instead of weighing its default's
# other kernels and offset too): one sweep of mfsvr() (C = 5,
# epsilon = 0.1, y = sin(x1) + x2 / 2 + N(0, 0.3^2)) and of gpc()'s TAP
# classifier (noise 0.1, labels the sign of that y), against one Cholesky
# factorisation of an n x n matrix; an EP sweep needs at least one, and the
# engine's takes one and then the posterior variances (see ep_priors.hpp).
# FITC prior, N = 10^4 and 10^5 with all 500 inducing inputs used (x uniform
# on [-5, 5]^2, width 1, scale = FALSE, y = sinc(|x|) + N(0, 0.1^2), where
# the greedy choice takes all 500): one sweep of mfsvr(inducing = ) against
# one N x 500 by 500 x 500 matrix product, which a sweep's two passes over
# the N x 500 factor equal in multiply-adds.
#
# The dense sweep and the Cholesky factorisation both run on gpsvm_threads()
# threads (the package splits the factorisation's tiles between them; see
# ?gpsvm_threads).  The FITC sweep is timed on one thread, against the
# product (Eigen's, on one thread: the package builds Eigen without its own
# threads), and on gpsvm_threads() threads (the fits part uses that number
# too).
#
# A sweep's time is the difference between a fit capped at 1 + k sweeps and
# one capped at 1 (at a tolerance no fit reaches), divided by k: what the
# fit does once (the kernel matrix, the basis, the evidence) cancels.
# The machine's other work shows in every figure; the ratios are what to
# compare.  For reference the dense part also prints R's chol() of the same
# matrix (R's own LAPACK, which this package does not call).
#
# Part "fits": on the same FITC data, the whole fits a user makes,
# mfsvr(x, y, inducing = 500) and gpc(x, sign(y - median(y)), inducing = 500)
# (width 1, scale = FALSE, C and noise at their defaults): seconds, EP
# sweeps, inducing inputs used, and the process's peak resident memory
# since the fit began (Linux: VmHWM of /proc/self/status, reset through
# /proc/self/clear_refs; "-" elsewhere).
#
# Part "defaults": what that speed buys a user, the defaults against their
# peers' on held-out rows (one process; a regression fit's time is the
# median of seven, the three models called in turn after one untimed call
# each (interleaved_seconds()), gpc()'s and its peers' the median of three;
# the data's own scaling everywhere):
#   mfsvr() (C chosen by the evidence) against kernlab::gausspr() and
#   e1071::svm() on mlbench's BostonHousing (354 rows for training, the
#   rest held out) and Friedman 1 (700 and 1000 new rows, 10 inputs):
#   seconds, held-out RMSE, and for mfsvr() the share of held-out targets
#   inside its 95% prediction intervals; and the default search's time
#   against one fit at C = 5 (what optimize = FALSE fits) and their ratio;
#   gpc() (width and noise chosen by the evidence) against
#   e1071::svm(probability = TRUE) and kernlab::ksvm(prob.model = TRUE) on
#   mlbench's Satellite as one class against the rest (the first 4435 rows,
#   the data's own training part, for training and the other 2000 held out;
#   class "red soil") and ringnorm with 50 inputs (3000 rows, 2000 held out):
#   seconds and held-out log loss, and the seconds of one fit of gpc()'s
#   model at the values its search found (optimize = FALSE), the least the
#   default could cost with a search for free.
suppressPackageStartupMessages(library(gpsvm))
nmax <- as.numeric(Sys.getenv("GPSVM_BENCH_LIMIT_NMAX", "5000"))
fitc_nmax <- as.numeric(Sys.getenv("GPSVM_BENCH_LIMIT_FITC_NMAX", "1e5"))
parts <- strsplit(Sys.getenv("GPSVM_BENCH_LIMIT_PARTS", "engine fits defaults"), "[ ,]+")[[1]]

seconds <- function(expr) system.time(expr)[[3]]
best_of <- function(times, f) min(vapply(seq_len(times), function(i) seconds(f()), 0))

# Seconds per sweep of `fit_with(max_iter)`, from fits capped at 1 and 1 + k sweeps.
sweep_seconds <- function(fit_with, k) {
  quiet <- function(cap) suppressWarnings(seconds(fit_with(cap)))
  (quiet(1L + k) - quiet(1L)) / k
}

# The FITC part's data: x uniform on [-5, 5]^2, y = sinc(|x|) + N(0, 0.1^2).
sinc_data <- function(n) {
  set.seed(1)
  x <- matrix(runif(2 * n, -5, 5), ncol = 2)
  r <- sqrt(rowSums(x^2))
  list(x = x, y = ifelse(r == 0, 1, sin(r) / r) + rnorm(n, sd = 0.1))
}

# Peak resident memory in MB since the last reset_peak_memory(); NA where
# /proc does not say.
reset_peak_memory <- function() {
  invisible(tryCatch(writeLines("5", "/proc/self/clear_refs"), error = function(e) NULL,
                     warning = function(w) NULL))
}
peak_memory_mb <- function() {
  status <- tryCatch(readLines("/proc/self/status"), error = function(e) character(0),
                     warning = function(w) character(0))
  line <- grep("^VmHWM:", status, value = TRUE)
  if (length(line) == 0L) return(NA_real_)
  as.numeric(gsub("[^0-9]", "", line)) / 1024
}

engine_part <- function() {
  cat("Dense prior: one EP sweep against one Cholesky factorisation of the same n, both on",
      gpsvm_threads(), "threads\n")
  cat(sprintf("%6s %7s %-10s %10s %12s %8s %12s\n", "n", "inputs", "model", "sweep s",
              "Cholesky s", "ratio", "R chol() s"))
  for (p in c(4L, 50L)) {
    for (n in c(700L, 2000L, 5000L)) {
      if (n > nmax) next
      set.seed(n + p)
      x <- matrix(rnorm(n * p), n, p)
      y <- sin(x[, 1]) + x[, 2] / 2 + rnorm(n, sd = 0.3)
      labels <- factor(y > 0)
      a <- crossprod(matrix(rnorm(n * n), n)) / n + diag(n)
      chol_s <- best_of(if (n >= 5000) 1L else 3L, function() {
        gpsvm:::cpp_dense_operation("cholesky", a, matrix(0, 0, 0))
      })
      r_chol <- if (n <= 2000) best_of(1L, function() chol(a)) else NA_real_
      k <- if (n >= 5000) 2L else 3L
      width <- rbf_kernel(suppressWarnings(gpc(x, labels, noise = 0.1, optimize = FALSE,
                                               control = gpc_control(max_iter = 1L)))$kernel$sigma)
      mf <- sweep_seconds(function(cap) {
        mfsvr(x, y, C = 5, kernel = width, bias = 0,
              control = mfsvr_control(rank_tol = 0, max_iter = cap, tol = 1e-300))
      }, k)
      gp <- sweep_seconds(function(cap) {
        gpc(x, labels, noise = 0.1, optimize = FALSE,
            control = gpc_control(rank_tol = 0, max_iter = cap, tol = 1e-300))
      }, k)
      for (row in list(list("mfsvr", mf), list("gpc (TAP)", gp))) {
        cat(sprintf("%6d %7d %-10s %10.3f %12.3f %8.2f %12s\n", n, p, row[[1]], row[[2]], chol_s,
                    row[[2]] / chol_s, if (is.na(r_chol)) "-" else sprintf("%.3f", r_chol)))
      }
    }
  }

  threads <- gpsvm_threads()
  cat("\nFITC prior, m = 500 inducing inputs all used: one EP sweep (on one thread and on",
      threads, "threads) against one N x m by m x m product (one thread)\n")
  cat(sprintf("%8s %5s %11s %11s %8s %11s %9s\n", "N", "m", "sweep 1 th", "product s", "ratio",
              paste0("sweep ", threads, " th"), "speed-up"))
  for (n in c(1e4, 1e5)) {
    if (n > fitc_nmax) next
    d <- sinc_data(n)
    x <- d$x
    y <- d$y
    kernel <- rbf_kernel(1)
    z <- x[gpsvm:::cpp_greedy_inducing(kernel, x, 500L, 1e-12), , drop = FALSE]
    m <- nrow(z)
    g <- matrix(rnorm(n * m), n, m)
    b <- matrix(rnorm(m * m), m, m)
    product_s <- best_of(2L, function() gpsvm:::cpp_dense_operation("product", g, b))
    rm(g)
    sweep_on <- function(count) {
      old <- gpsvm_threads(count)
      on.exit(gpsvm_threads(old))
      sweep_seconds(function(cap) {
        mfsvr(x, y, C = 5, kernel = kernel, scale = FALSE, inducing = z,
              control = mfsvr_control(max_iter = cap, tol = 1e-300))
      }, 3L)
    }
    one <- sweep_on(1L)
    several <- sweep_on(threads)
    cat(sprintf("%8.0f %5d %11.3f %11.3f %8.2f %11.3f %9.2f\n", n, m, one, product_s,
                one / product_s, several, one / several))
  }
}

fits_part <- function() {
  cat("\nFITC fits at m = 500 (width 1, scale = FALSE): seconds, sweeps, inputs used, peak MB\n")
  cat(sprintf("%8s %-6s %9s %7s %6s %9s\n", "N", "model", "seconds", "sweeps", "m", "peak MB"))
  for (n in c(1e4, 1e5)) {
    if (n > fitc_nmax) next
    d <- sinc_data(n)
    models <- list(
      mfsvr = function() mfsvr(d$x, d$y, kernel = rbf_kernel(1), scale = FALSE, inducing = 500),
      gpc = function() gpc(d$x, factor(sign(d$y - stats::median(d$y))), kernel = rbf_kernel(1),
                           scale = FALSE, inducing = 500))
    for (m in names(models)) {
      invisible(gc())
      reset_peak_memory()
      fit <- NULL
      seconds <- system.time(fit <- suppressWarnings(suppressMessages(models[[m]]())))[[3]]
      peak <- peak_memory_mb()
      cat(sprintf("%8.0f %-6s %9.1f %7d %6d %9s\n", n, m, seconds,
                  as.integer(fit$convergence$iterations), NROW(fit$inducing),
                  if (is.na(peak)) "-" else sprintf("%.0f", peak)))
    }
  }
}

median_seconds <- function(f, times = 3L) {
  runs <- lapply(seq_len(times), function(i) {
    t <- system.time(value <- suppressWarnings(suppressMessages(f())))[[3]]
    list(value = value, time = t)
  })
  list(value = runs[[1]]$value, time = stats::median(vapply(runs, `[[`, 0, "time")))
}

# The median seconds of each of `models` (functions of no arguments) over
# `rounds` rounds that call each in turn, after one untimed call of each
# (the first call loads what it needs): the machine's drift from minute to
# minute then touches every model alike.  The value kept is that of the
# first timed call, made with the random stream as it was before the
# untimed ones (kernlab's width is sampled).
interleaved_seconds <- function(models, rounds = 7L) {
  seed <- .Random.seed
  for (f in models) invisible(suppressWarnings(suppressMessages(f())))
  assign(".Random.seed", seed, envir = globalenv())
  values <- list()
  times <- matrix(NA_real_, rounds, length(models), dimnames = list(NULL, names(models)))
  for (r in seq_len(rounds)) {
    for (m in names(models)) {
      times[r, m] <- system.time(value <- suppressWarnings(suppressMessages(models[[m]]())),
                                 gcFirst = FALSE)[[3]]
      if (r == 1L) values[[m]] <- value
    }
  }
  sapply(names(models), function(m) list(value = values[[m]], time = stats::median(times[, m])),
         simplify = FALSE)
}

need_peers <- function() {
  for (p in c("mlbench", "e1071", "kernlab")) {
    if (!requireNamespace(p, quietly = TRUE)) stop("bench-limit.R's defaults need ", p)
  }
}

defaults_part <- function() {
  need_peers()
  cat("\nmfsvr() defaults against kernlab::gausspr() and e1071::svm()\n")
  cat(sprintf("%-16s %-8s %8s %9s %9s\n", "data", "model", "seconds", "RMSE", "cover 95"))
  e <- new.env()
  utils::data("BostonHousing", package = "mlbench", envir = e)
  set.seed(1)
  f1 <- mlbench::mlbench.friedman1(1700)
  f1 <- data.frame(f1$x, y = f1$y)
  searched <- list()
  sets <- list(BostonHousing = list(data = e$BostonHousing, formula = medv ~ ., train = 1:354),
               `Friedman 1` = list(data = f1, formula = y ~ ., train = 1:700))
  for (name in names(sets)) {
    set <- sets[[name]]
    train <- set$data[set$train, ]
    test <- set$data[-set$train, ]
    truth <- test[[all.vars(set$formula)[1]]]
    models <- list(
      mfsvr = function() mfsvr(set$formula, train),
      gausspr = function() kernlab::gausspr(set$formula, train),
      svm = function() e1071::svm(set$formula, train))
    timed <- interleaved_seconds(models)
    for (m in names(models)) {
      fit <- timed[[m]]
      cover <- NA_real_
      if (m == "mfsvr") {
        pr <- predict(fit$value, test, interval = "prediction")
        mean_pred <- pr[, "fit"]
        cover <- mean(truth >= pr[, "lwr"] & truth <= pr[, "upr"])
      } else if (m == "gausspr") {
        mean_pred <- drop(kernlab::predict(fit$value, test))
      } else {
        mean_pred <- predict(fit$value, test)
      }
      cat(sprintf("%-16s %-8s %8.3f %9.4f %9s\n", name, m, fit$time,
                  sqrt(mean((truth - mean_pred)^2)),
                  if (is.na(cover)) "-" else sprintf("%.3f", cover)))
      if (m == "mfsvr") searched[[name]] <- list(time = fit$time, C = fit$value$C, set = set,
                                                 train = train)
    }
  }
  cat("\nmfsvr()'s default search for C against one fit (median of 5 each)\n")
  cat(sprintf("%-16s %9s %9s %11s %9s %13s\n", "data", "C found", "search s", "fit C=5 s",
              "ratio", "fit at C s"))
  for (name in names(searched)) {
    s <- searched[[name]]
    fixed <- median_seconds(function() mfsvr(s$set$formula, s$train, C = 5), 5L)$time
    at_found <- median_seconds(function() mfsvr(s$set$formula, s$train, C = s$C), 5L)$time
    search <- median_seconds(function() mfsvr(s$set$formula, s$train), 5L)$time
    cat(sprintf("%-16s %9.3g %9.3f %11.3f %9.2f %13.3f\n", name, s$C, search, fixed,
                search / fixed, at_found))
  }
}

gpc_defaults_part <- function() {
  need_peers()
  e <- new.env()
  cat("\ngpc() defaults against e1071::svm(probability = TRUE) and kernlab::ksvm(prob.model = TRUE)\n")
  cat(sprintf("%-22s %-6s %8s %9s\n", "data", "model", "seconds", "log loss"))
  utils::data("Satellite", package = "mlbench", envir = e)
  sat <- e$Satellite
  sat$classes <- factor(ifelse(sat$classes == "red soil", "red soil", "other"))
  set.seed(2)
  ring <- mlbench::mlbench.ringnorm(5000, d = 50)
  ring <- data.frame(ring$x, classes = ring$classes)
  sets <- list(`Satellite red soil` = list(data = sat, train = 1:4435),
               `ringnorm, 50 inputs` = list(data = ring, train = 1:3000))
  for (name in names(sets)) {
    set <- sets[[name]]
    train <- set$data[set$train, ]
    test <- set$data[-set$train, ]
    truth <- test$classes
    models <- list(
      gpc = function() gpc(classes ~ ., train),
      e1071 = function() e1071::svm(classes ~ ., train, probability = TRUE),
      ksvm = function() kernlab::ksvm(classes ~ ., train, prob.model = TRUE))
    found <- NULL
    for (m in names(models)) {
      fit <- median_seconds(models[[m]], if (m == "gpc") 1L else 3L)
      if (m == "gpc") found <- fit$value
      p <- switch(m,
        gpc = predict(fit$value, test, type = "prob"),
        e1071 = attr(predict(fit$value, test, probability = TRUE), "probabilities"),
        ksvm = kernlab::predict(fit$value, test, type = "probabilities"))
      p <- p[, levels(truth), drop = FALSE]
      loss <- -mean(log(pmax(p[cbind(seq_along(truth), as.integer(truth))], 1e-15)))
      cat(sprintf("%-22s %-6s %8.2f %9.4f\n", name, m, fit$time, loss))
    }
    # what the search adds: one fit of the same model at the values it found
    at_found <- median_seconds(function() {
      gpc(classes ~ ., train, kernel = rbf_kernel(found$kernel$sigma), noise = found$noise,
          optimize = FALSE)
    }, 1L)
    cat(sprintf("%-22s %-6s %8.2f %9s   (gpc's model at the values found, no search)\n", name,
                "fit", at_found$time, "-"))
  }
}

if ("engine" %in% parts) engine_part()
if ("fits" %in% parts) fits_part()
if ("defaults" %in% parts) defaults_part()
if (any(c("defaults", "gpc-defaults") %in% parts)) gpc_defaults_part()
