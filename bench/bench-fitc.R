# Benchmark of the inducing-point (FITC) fits: mfsvr(inducing = 500) and
# gpc(method = "tap", inducing = 200) at large N, against the full model
# and against gplite's FITC-EP classifier.  The full model at N = 5000 is
# mfsvr()'s default fit: EP on a pivoted Cholesky factor of K accurate to
# 1e-13 (the dense model to rounding; EP on the dense 5000 x 5000 matrix,
# rank_tol = 0, gives the same numbers in minutes).
#
#   make bench BENCH=fitc
#   GPSVM_BENCH_FITC_NMAX=20000 make bench BENCH=fitc     # skip the N = 10^5 runs
#   GPSVM_BENCH_GPLITE=0 make bench BENCH=fitc            # without gplite
#
# Every case runs in a fresh R process, which prints its elapsed seconds and
# its peak resident memory (VmHWM from /proc/self/status: everything R and
# the C++ core allocated).  Data, 2-D inputs:
#   regression: x uniform on [-3, 3]^2, y = sin(2 x1) cos(x2) + N(0, 0.2^2);
#     held-out RMSE against the noise-free function at 10^4 new points,
#     where the same fit also gives its 10^4 standard errors (timed);
#   classification (as in the package's scaling notes): x ~ N(0, I_2),
#     y = sign(x1 + 0.7 x2^2 + N(0, 0.7^2) - 0.5); held-out log loss and
#     error rate at 10^4 new points.
# gplite (CRAN) is installed by this script, if missing, into its own library
# .lib-peers/ (it needs a newer Rcpp than gpsvm's processes load), and fits
# a classifier the way its documentation shows: probit likelihood,
# squared-exponential kernel with the width gpc() chose from the data and
# magnitude 1, FITC with 200 inducing points, EP, hyperparameters fixed
# (gp_fit), probabilities Phi(mean / sqrt(1 + var)) from its latent
# predictions; gpc() runs with its defaults (noise 0.1, bias variance 1), so
# the two models are alike, not identical: the comparison is of time and
# held-out log loss at the same inducing count.

nmax <- as.numeric(Sys.getenv("GPSVM_BENCH_FITC_NMAX", "1e5"))
want_gplite <- Sys.getenv("GPSVM_BENCH_GPLITE", "1") != "0"
peer_lib <- normalizePath(file.path(getwd(), ".lib-peers"), mustWork = FALSE)

if (want_gplite) {
  dir.create(peer_lib, showWarnings = FALSE)
  ok <- suppressWarnings(requireNamespace("gplite", lib.loc = c(peer_lib, .libPaths()),
                                          quietly = TRUE))
  if (!ok) {
    cat("installing gplite from CRAN into", peer_lib, "\n")
    utils::install.packages("gplite", lib = peer_lib, repos = "https://cloud.r-project.org",
                            quiet = TRUE)
  }
}

# Runs `code` (R source, which must cat() one line of numbers last) in a
# fresh process; returns those numbers.
fresh <- function(code, libs = NULL) {
  prefix <- paste(
    "hwm <- function() { s <- readLines('/proc/self/status');",
    "as.numeric(sub('[^0-9]*([0-9]+).*', '\\\\1', s[grep('^VmHWM', s)])) / 1024 };",
    "regression <- function(n, seed) { set.seed(seed); x <- matrix(runif(2 * n, -3, 3), ncol = 2);",
    "f <- sin(2 * x[, 1]) * cos(x[, 2]); list(x = x, f = f, y = f + rnorm(n, sd = 0.2)) };",
    "classes <- function(n, seed) { set.seed(seed); x <- matrix(rnorm(2 * n), ncol = 2);",
    "y <- factor(ifelse(x[, 1] + 0.7 * x[, 2]^2 + rnorm(n, sd = 0.7) - 0.5 > 0, 'b', 'a'));",
    "list(x = x, y = y) };")
  env <- if (is.null(libs)) character(0) else
    paste0("R_LIBS=", paste(c(libs, .libPaths()), collapse = ":"))
  out <- system2(file.path(R.home("bin"), "Rscript"), c("--vanilla", "-e",
                 shQuote(paste(prefix, code))), stdout = TRUE, env = env)
  suppressWarnings(as.numeric(strsplit(trimws(out[length(out)]), " +")[[1]]))  # "NA" fields
}

# ---- regression ------------------------------------------------------------
mfsvr_case <- function(n, inducing) {
  fresh(sprintf(paste(
    "suppressPackageStartupMessages(library(gpsvm)); d <- regression(%d, 1);",
    "te <- regression(10000, 2);",
    "t0 <- proc.time()[[3]]; fit <- mfsvr(d$x, d$y, C = 5%s);",
    "t1 <- proc.time()[[3]]; p <- predict(fit, te$x, se.fit = TRUE); t2 <- proc.time()[[3]];",
    "cat(t1 - t0, t2 - t1, sqrt(mean((p$fit - te$f)^2)), mean(p$se.fit),",
    "fit$convergence$iterations, hwm(), '\\n')"), n,
    if (is.null(inducing)) "" else sprintf(", inducing = %d", inducing)))
}

cat("mfsvr(): 2-D regression, C = 5, epsilon = 0.1, data-driven width, scale = TRUE\n")
cat(sprintf("%-28s %8s %10s %9s %9s %6s %9s\n", "fit", "fit s", "predict s", "RMSE",
            "mean se", "sweeps", "peak MB"))
rows <- list(c("default (low rank), N = 5000", 5000, NA), c("inducing = 500, N = 5000", 5000, 500),
             c("inducing = 500, N = 20000", 20000, 500),
             c("inducing = 500, N = 1e5", 1e5, 500))
res <- list()
for (r in rows) {
  n <- as.numeric(r[2])
  if (n > nmax) next
  v <- mfsvr_case(n, if (is.na(r[3])) NULL else as.integer(r[3]))
  res[[r[1]]] <- v
  cat(sprintf("%-28s %8.2f %10.2f %9.4f %9.4f %6d %9.0f\n", r[1], v[1], v[2], v[3], v[4],
              as.integer(v[5]), v[6]))
}
if (!is.null(res[["default (low rank), N = 5000"]]) && !is.null(res[["inducing = 500, N = 5000"]])) {
  cat(sprintf("held-out RMSE at N = 5000, inducing = 500 / full model: %.4f\n",
              res[["inducing = 500, N = 5000"]][3] / res[["default (low rank), N = 5000"]][3]))
}

# ---- classification --------------------------------------------------------
gpc_case <- function(n, inducing) {
  fresh(sprintf(paste(
    "suppressPackageStartupMessages(library(gpsvm)); d <- classes(%d, 1); te <- classes(10000, 2);",
    "t0 <- proc.time()[[3]]; fit <- gpc(d$x, d$y, inducing = %d); t1 <- proc.time()[[3]];",
    "p <- predict(fit, te$x, type = 'prob'); t2 <- proc.time()[[3]];",
    "pr <- pmax(p[cbind(seq_len(nrow(p)), as.integer(te$y))], 1e-300);",
    "cat(t1 - t0, t2 - t1, -mean(log(pr)), mean(colnames(p)[max.col(p)] != te$y),",
    "fit$convergence$iterations, hwm(), fit$kernel$sigma, '\\n')"), n, inducing))
}

gplite_case <- function(n, sigma) {
  fresh(sprintf(paste(
    "suppressPackageStartupMessages(library(gplite)); d <- classes(%d, 1); te <- classes(10000, 2);",
    "x <- scale(d$x); xt <- scale(te$x, attr(x, 'scaled:center'), attr(x, 'scaled:scale'));",
    "yb <- as.integer(d$y == 'b'); set.seed(1);",
    "t0 <- proc.time()[[3]];",
    "gp <- gp_init(cfs = cf_sexp(lscale = %.10g, magn = 1), lik = lik_bernoulli('probit'),",
    "method = method_fitc(num_inducing = 200), approx = approx_ep());",
    "gp <- suppressWarnings(gp_fit(gp, x, yb)); t1 <- proc.time()[[3]];",
    "lat <- gp_pred(gp, xt, var = TRUE); pb <- pnorm(lat$mean / sqrt(1 + lat$var));",
    "t2 <- proc.time()[[3]];",
    "pr <- pmax(ifelse(te$y == 'b', pb, 1 - pb), 1e-300);",
    "cat(t1 - t0, t2 - t1, -mean(log(pr)), mean(ifelse(pb > 0.5, 'b', 'a') != te$y), NA,",
    "hwm(), '\\n')"), n, sigma), libs = peer_lib)
}

cat("\ngpc(method = \"tap\", inducing = 200): x ~ N(0, I_2), y = sign(x1 + 0.7 x2^2 + e - 0.5)\n")
cat(sprintf("%-34s %8s %10s %9s %7s %6s %9s\n", "fit", "fit s", "predict s", "log loss",
            "error", "sweeps", "peak MB"))
show <- function(label, v) {
  cat(sprintf("%-34s %8.2f %10.2f %9.4f %7.4f %6s %9.0f\n", label, v[1], v[2], v[3], v[4],
              if (is.na(v[5])) "-" else as.character(as.integer(v[5])), v[6]))
}
have_gplite <- want_gplite &&
  suppressWarnings(requireNamespace("gplite", lib.loc = c(peer_lib, .libPaths()), quietly = TRUE))
for (n in c(5000, 20000, 1e5)) {
  if (n > nmax) next
  g <- gpc_case(n, 200)
  show(sprintf("gpsvm gpc, N = %g", n), g)
  if (have_gplite && n <= 20000) {
    p <- gplite_case(n, g[7])
    show(sprintf("gplite FITC-EP, N = %g", n), p)
    cat(sprintf("  time gplite / gpsvm: %.1fx; log loss gpsvm - gplite: %+.4f\n", p[1] / g[1],
                g[3] - p[3]))
  }
}
