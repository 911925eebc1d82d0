# The sinc experiment of ter Borg and Rothkrantz (2005), section 4: 50 inputs
# uniform on [-10, 10], y = sin(x)/x + N(0, 0.1^2) noise (0.1 is the standard
# deviation: see vignette("srvm")), Gaussian kernel with sigma = 1.6, the
# smooth RVM penalising the 10th derivative only, 1000 repetitions; and, on
# the same data, gpsvm's svr() and mfsvr() (srvm_experiment_methods()).
#
# Run from the package source directory (writes inst/extdata/):
#   Rscript inst/scripts/srvm-experiment.R [repetitions] [workers]
# Sourcing the file only defines the functions (the vignette does that).
#
# The repetitions go through future.apply, so they run wherever
# future::plan() says (run as a script: forked workers where available, else
# background R sessions, as many as asked); each repetition sets its own
# seed, so results do not depend on the plan or the number of workers.

# n-th derivative of sinc(x) = sin(x)/x: the closed form from D() away from 0
# and its Taylor series sum_k (-1)^k x^(2k) / (2k+1)! near 0, where the closed
# form cancels catastrophically.
sinc_deriv <- function(x, n = 0) {
  e <- quote(sin(x) / x)
  for (i in seq_len(n)) e <- stats::D(e, "x")
  out <- eval(e, list(x = x))
  small <- abs(x) < 0.5
  if (any(small)) {
    xs <- x[small]
    k <- seq(ceiling(n / 2), 30)
    terms <- outer(xs, k, function(x, k) {
      (-1)^k * exp(lfactorial(2 * k) - lfactorial(2 * k - n) - lfactorial(2 * k + 1)) *
        x^(2 * k - n)
    })
    out[small] <- rowSums(terms)
  }
  out
}

# The methods of the table, each a function of (x, y) returning a fit.  All
# use the paper's kernel, rbf_kernel(1.6).  Beside the paper's RVM and SRVM:
# svr() with C chosen by its eq. (16) evidence (optimize = TRUE, from C = 10;
# epsilon = 0.1, the noise sd), in the role of the paper's SVR rows; mfsvr()
# with C and epsilon chosen by the EP evidence; and mfsvr() choosing the
# kernel width as well, which leaves the paper's protocol (sigma = 1.6 for
# all) and is labelled so.
srvm_experiment_methods <- function(sigma = 1.6, order = 10, control = gpsvm::srvm_control()) {
  kernel <- gpsvm::rbf_kernel(sigma)
  list(
    RVM = function(x, y) gpsvm::rvm(x, y, kernel = kernel, scale = FALSE),
    SRVM = function(x, y) {
      gpsvm::srvm(x, y, kernel = kernel, penalty = gpsvm::roughness_penalty(order),
                  control = control, scale = FALSE)
    },
    SVR = function(x, y) {
      gpsvm::svr(x, y, C = 10, epsilon = 0.1, kernel = kernel, optimize = TRUE, scale = FALSE,
                 control = gpsvm::svr_control(evidence = "eq16"))
    },
    "MF-SVR" = function(x, y) {
      gpsvm::mfsvr(x, y, C = 10, epsilon = 0.1, kernel = kernel, optimize = c("C", "epsilon"),
                   scale = FALSE)
    },
    "MF-SVR, sigma by evidence" = function(x, y) {
      gpsvm::mfsvr(x, y, C = 10, epsilon = 0.1, kernel = kernel, optimize = TRUE, scale = FALSE)
    }
  )
}

# Basis vectors: kernel columns kept (the bias, always kept, not counted):
# relevance vectors, support vectors (beta != 0), or every training point for
# the mean-field SVR, whose weights are all non-zero.
srvm_experiment_bvs <- function(fit) {
  if (inherits(fit, "gpsvm_rvm")) return(length(fit$relevance_vectors))
  if (inherits(fit, "gpsvm_svr")) return(sum(fit$beta != 0))
  length(fit$y)
}

# One repetition: data from 'seed', the fits of 'methods', basis vectors and
# RMSE of the 0th, 2nd and 4th derivatives over a fine grid and at the
# training inputs.  A fit that warns (e.g. an evidence search stopped by its
# iteration cap) or reports non-convergence is flagged, not dropped.
srvm_experiment_rep <- function(seed, n = 50, noise_sd = 0.1, sigma = 1.6, order = 10,
                                grid = seq(-10, 10, length.out = 1001),
                                control = gpsvm::srvm_control(), methods = c("RVM", "SRVM")) {
  set.seed(seed)
  x <- stats::runif(n, -10, 10)
  y <- sinc_deriv(x) + stats::rnorm(n, sd = noise_sd)
  makers <- srvm_experiment_methods(sigma, order, control)[methods]
  rows <- lapply(methods, function(m) {
    warned <- FALSE
    # gcFirst = FALSE: a full garbage collection per fit would cost more
    # than the fits themselves
    seconds <- system.time(f <- withCallingHandlers(makers[[m]](x, y), warning = function(w) {
      warned <<- TRUE
      invokeRestart("muffleWarning")
    }), gcFirst = FALSE)[["elapsed"]]
    rmse <- function(z, d) sqrt(mean((stats::predict(f, z, deriv = d) - sinc_deriv(z, d))^2))
    field <- function(v) if (is.null(v)) NA_real_ else as.numeric(v)
    data.frame(seed = seed, method = m, bvs = srvm_experiment_bvs(f),
               d0 = rmse(grid, 0), d2 = rmse(grid, 2), d4 = rmse(grid, 4),
               d0_train = rmse(x, 0), d2_train = rmse(x, 2), d4_train = rmse(x, 4),
               log_lik = as.numeric(stats::logLik(f)), lambda = field(f$lambda),
               sigma2 = field(f$noise_variance), C = field(f$C), epsilon = field(f$epsilon),
               kernel_sigma = f$kernel$sigma,
               converged = !warned && !isFALSE(f$convergence$converged),
               iterations = field(f$convergence$iterations), seconds = seconds)
  })
  do.call(rbind, rows)
}

srvm_experiment_run <- function(reps = 1000, ...) {
  # future.seed = NULL: each repetition calls set.seed() itself (with the
  # session's generator, as a serial loop would), so no streams are handed out
  out <- future.apply::future_lapply(seq_len(reps), function(s) srvm_experiment_rep(s, ...),
                                     future.seed = NULL)
  do.call(rbind, out)
}

# Forked workers where the platform has them, else background R sessions.
srvm_experiment_plan <- function(workers) {
  if (future::supportsMulticore()) {
    future::plan(future::multicore, workers = workers)
  } else {
    future::plan(future::multisession, workers = workers)
  }
}

# mean +- sd per method, in the paper's columns
srvm_experiment_table <- function(results, cols = c("bvs", "d0", "d2", "d4")) {
  out <- lapply(split(results, results$method), function(r) {
    vapply(cols, function(v) sprintf(if (v == "bvs") "%.1f +- %.1f" else "%.3f +- %.3f",
                                     mean(r[[v]]), stats::sd(r[[v]])), character(1))
  })
  do.call(rbind, out)
}

# What moves the SRVM row: the starting lambda (relative, see srvm_control())
# and where the penalty is evaluated (training inputs or a dense grid).
srvm_experiment_ablation <- function(reps = 200) {
  variants <- list(
    "lambda_init = 1" = list(control = gpsvm::srvm_control(lambda_init = 1)),
    "lambda_init = 100" = list(control = gpsvm::srvm_control(lambda_init = 100)),
    "lambda_init = 1e4 (default)" = list(control = gpsvm::srvm_control(lambda_init = 1e4)),
    "lambda_init = 1e6" = list(control = gpsvm::srvm_control(lambda_init = 1e6)),
    "lambda_init = 1e4, penalty on a 201-point grid" = list(control = gpsvm::srvm_control(),
                                                           at = seq(-10, 10, length.out = 201))
  )
  rows <- lapply(names(variants), function(v) {
    args <- variants[[v]]
    one <- function(seed) {
      set.seed(seed)
      x <- stats::runif(50, -10, 10)
      y <- sinc_deriv(x) + stats::rnorm(50, sd = 0.1)
      f <- gpsvm::srvm(x, y, kernel = gpsvm::rbf_kernel(1.6),
                       penalty = gpsvm::roughness_penalty(10, at = args$at),
                       control = args$control, scale = FALSE)
      rm <- function(z, d) sqrt(mean((stats::predict(f, z, deriv = d) - sinc_deriv(z, d))^2))
      c(bvs = length(f$relevance_vectors), d0_train = rm(x, 0), d2_train = rm(x, 2),
        d4_train = rm(x, 4), log_lik = f$log_evidence)
    }
    r <- do.call(rbind, future.apply::future_lapply(seq_len(reps), one, future.seed = NULL))
    data.frame(variant = v, t(colMeans(r)), check.names = FALSE)
  })
  do.call(rbind, rows)
}

if (sys.nframe() == 0L) {
  args <- commandArgs(trailingOnly = TRUE)
  reps <- if (length(args) >= 1L) as.integer(args[1]) else 1000L
  cores <- if (length(args) >= 2L) as.integer(args[2]) else 2L
  srvm_experiment_plan(cores)
  # the paper's experiment (RVM and SRVM) timed on its own: the issue's
  # target is 1000 repetitions in under a minute on two cores
  elapsed <- system.time(results <- srvm_experiment_run(reps))[["elapsed"]]
  others <- setdiff(names(srvm_experiment_methods()), c("RVM", "SRVM"))
  elapsed_others <- system.time(
    results_others <- srvm_experiment_run(reps, methods = others))[["elapsed"]]
  results <- rbind(results, results_others)
  ablation <- srvm_experiment_ablation(200)
  # (stored to four significant digits: the tables print three decimals of
  # errors near 0.05, and the file, installed with the package, is then a
  # third of the size)
  stored <- results
  digits <- vapply(stored, is.double, logical(1))
  stored[digits] <- lapply(stored[digits], signif, 4)
  out <- list(results = stored, ablation = ablation, reps = reps, cores = cores, elapsed = elapsed,
              elapsed_others = elapsed_others,
              settings = list(n = 50, noise_sd = 0.1, sigma = 1.6, order = 10,
                              grid = "1001 points on [-10, 10]",
                              control = unclass(gpsvm::srvm_control())),
              gpsvm_version = as.character(utils::packageVersion("gpsvm")),
              date = format(Sys.time(), "%Y-%m-%d %H:%M %Z"))
  dir.create("inst/extdata", showWarnings = FALSE, recursive = TRUE)
  saveRDS(out, "inst/extdata/srvm-experiment.rds", compress = "xz")
  cat(sprintf("%d repetitions on %d cores: RVM and SRVM %.1f s, the SVR rows %.1f s\n", reps,
              cores, elapsed, elapsed_others))
  print(srvm_experiment_table(results))
  print(srvm_experiment_table(results, c("d0_train", "d2_train", "d4_train")))
  cat("non-converged or warned fits per method:\n")
  print(tapply(!results$converged, results$method, sum))
  print(ablation, digits = 3)
}
