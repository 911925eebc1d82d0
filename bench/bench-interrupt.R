# Benchmark: how fast Ctrl-C stops a long fit.  Each fit runs in a child R
# process; two seconds (`GPSVM_BENCH_INTERRUPT_AFTER`) after the fit starts
# the child is sent SIGINT (what Ctrl-C sends), and the latency is the time
# from the signal to the moment
# the child's R code regains control (an interrupt handler around the fit
# writes the time; both processes read the same clock).  The target is
# within one second.  A fit that ends before the signal is reported as
# such (then there was nothing to stop); one that ignores the signal for
# `GPSVM_BENCH_INTERRUPT_WAIT` seconds (default 120) is killed and reported
# as "> wait".  `GPSVM_BENCH_INTERRUPT_CASES` picks cases by name.
#
# Run: make bench BENCH=interrupt (or R_LIBS=... Rscript bench/bench-interrupt.R)

# Set-up code: n inputs uniform on [-3, 3]^2 and the targets y (code in x
# and n); n standard normal inputs in two columns and two classes by the sign
# of x1 x2 plus N(0, 1).
uniform_setup <- function(n, y) {
  sprintf("n <- %d; x <- matrix(runif(n * 2, -3, 3), ncol = 2); y <- %s", n, y)
}
product_sign_setup <- function(n) {
  sprintf(paste("n <- %d; x <- matrix(rnorm(n * 2), ncol = 2);",
                "y <- factor(ifelse(x[, 1] * x[, 2] + rnorm(n) > 0, 'a', 'b'))"), n)
}
cases <- list(
  srvm_wide = c("x <- matrix(rnorm(50 * 5000), 50); y <- rnorm(50)",
                "srvm(x, y)"),
  # the penalty on 2000 input columns (one block of penalty points at a time)
  srvm_penalty_2000 = c("x <- matrix(rnorm(300 * 2000), 300); y <- x[, 1] + rnorm(300)",
                        "srvm(x, y, calibration_folds = 0)"),
  mfsvr_dense4000 = c(uniform_setup(4000, "sin(x[, 1]) + rnorm(n, sd = 0.1)"),
                      paste("mfsvr(x, y, C = 5, kernel = rbf_kernel(1), bias = 0,",
                            "control = mfsvr_control(rank_tol = 0))")),
  gpc_dense4000 = c(uniform_setup(4000, "factor(sin(x[, 1]) + rnorm(n, sd = 0.3) > 0)"),
                    paste("gpc(x, y, kernel = rbf_kernel(1), noise = 0.5,",
                          "control = gpc_control(rank_tol = 0))")),
  # standard errors of a dense fit on 3000 rows at 50000 new points
  # (blocks of new points between polls)
  predict_dense = c(paste(uniform_setup(3000, "sin(x[, 1]) + rnorm(n, sd = 0.1);"),
                          "f <- mfsvr(x, y, C = 5, kernel = rbf_kernel(1), bias = 0,",
                          "control = mfsvr_control(rank_tol = 0));",
                          "z <- matrix(runif(50000 * 2, -3, 3), ncol = 2)"),
                    "predict(f, z, se.fit = TRUE)"),
  srvm_basis3000 = c(uniform_setup(3000, "sin(x[, 1]) + rnorm(n)"), "srvm(x, y, basis = 3000)"),
  rvm_n5000 = c(uniform_setup(5000, "sin(x[, 1]) + rnorm(n)"), "rvm(x, y)"),
  rvm_basis15000 = c(uniform_setup(15000, "sin(x[, 1]) + rnorm(n)"), "rvm(x, y, basis = 15000)"),
  svr_n60000 = c(uniform_setup(60000, "sin(x[, 1]) * cos(x[, 2]) + rnorm(n, sd = 0.1)"),
                 "svr(x, y, C = 10, epsilon = 0.01)"),
  kernel_matrix = c("x <- matrix(rnorm(10000 * 500), ncol = 500)",
                    "kernel_matrix(rbf_kernel(20), x)"),
  svc_smo = c(product_sign_setup(40000), "svc(x, y, rbf_kernel(0.3), C = 100, noise = 0)"),
  svc_adatron = c(product_sign_setup(6000),
                  paste("svc(x, y, rbf_kernel(1), C = 100, noise = 0.01,",
                        "control = svc_control(algorithm = 'adatron'))"))
)
wanted <- strsplit(Sys.getenv("GPSVM_BENCH_INTERRUPT_CASES", ""), "[ ,]+")[[1]]
if (length(wanted) > 0L) cases <- cases[names(cases) %in% wanted]
wait <- as.numeric(Sys.getenv("GPSVM_BENCH_INTERRUPT_WAIT", "120"))
after <- as.numeric(Sys.getenv("GPSVM_BENCH_INTERRUPT_AFTER", "2"))
rscript <- file.path(R.home("bin"), "Rscript")

# The child: set up, say "started" with its pid and the time, fit, and
# write the time at which the interrupt reached R (or "finished").
child_script <- function(setup, fit, status) {
  sprintf(paste(
    "suppressPackageStartupMessages(library(gpsvm)); set.seed(1); %s",
    "writeLines(c('started', Sys.getpid(), format(as.numeric(Sys.time()), digits = 17)), '%s')",
    "out <- tryCatch({ %s; 'finished' }, interrupt = function(e) format(as.numeric(Sys.time()), digits = 17))",
    "writeLines(c('done', out), '%s.done')", sep = "\n"),
    setup, status, fit, status)
}

measure <- function(name, setup, fit) {
  status <- tempfile(name)
  script <- tempfile(name, fileext = ".R")
  writeLines(child_script(setup, fit, status), script)
  system2(rscript, c("--vanilla", shQuote(script)), wait = FALSE, stdout = FALSE, stderr = FALSE)
  repeat {  # until the child has set up (loading and data can take seconds)
    Sys.sleep(0.05)
    if (file.exists(status) && length(s <- readLines(status, warn = FALSE)) == 3L) break
  }
  pid <- as.integer(s[2])
  Sys.sleep(after)
  sent <- as.numeric(Sys.time())
  tools::pskill(pid, tools::SIGINT)
  done <- paste0(status, ".done")
  while (!file.exists(done) && as.numeric(Sys.time()) - sent < wait) Sys.sleep(0.01)
  if (!file.exists(done)) {
    tools::pskill(pid, tools::SIGKILL)
    return(data.frame(fit = name, latency_s = NA_real_, note = sprintf("> %g s, killed", wait)))
  }
  Sys.sleep(0.05)  # the file is written in one call; let it land
  out <- readLines(done, warn = FALSE)[2]
  if (identical(out, "finished")) {
    return(data.frame(fit = name, latency_s = NA_real_, note = "ended before the signal"))
  }
  data.frame(fit = name, latency_s = as.numeric(out) - sent, note = "")
}

load <- if (file.exists("/proc/loadavg")) readLines("/proc/loadavg", warn = FALSE) else "unknown"
cat(sprintf("SIGINT %g s after each fit starts; load average %s\n", after, load))
results <- do.call(rbind, lapply(names(cases), function(nm) {
  r <- measure(nm, cases[[nm]][1], cases[[nm]][2])
  cat(sprintf("%-14s %s\n", nm, if (is.na(r$latency_s)) r$note else sprintf("%.3f s", r$latency_s)))
  r
}))
print(results, digits = 3, row.names = FALSE)
