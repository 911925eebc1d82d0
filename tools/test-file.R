# Runs testthat files against the installed gpsvm (the sanitizer build of
# tools/sanitize.sh, or the development build of tools/test.sh) and ends
# each with its time, its counts and the tests it skipped:
#   sanitize-skip: <test>: <reason>          (one line per skipped test)
#   sanitize-time: <cpu> s CPU, <elapsed> s elapsed
#   sanitize-result: <passed> passed, <failed> failed, <skipped> skipped
# counting expectations as testthat's summary does (an error inside a test
# counts as a failure).
#
#   Rscript test-file.R tests/testthat/test-x.R
#     one file, its report on standard output;
#   Rscript test-file.R --queue QUEUE_DIR LOG_DIR
#     the files named in QUEUE_DIR, one after another, each taken by moving
#     its name out of the queue (a rename, which one process wins), so that
#     several such processes share the queue; each file's report goes to
#     LOG_DIR/<file>.log and its end to LOG_DIR/<file>.status.  One R process
#     for many files spares a start of R and of the packages per file.  With
#     GPSVM_REPORT_DIR set (the sanitizer stage's ASan log_path directory),
#     the reports that appeared there while a file ran (from processes it
#     started: a report in this process ends it, and the caller finds the
#     file by its .taken without a .status) are moved to
#     LOG_DIR/<file>.reports/.
args <- commandArgs(TRUE)
suppressPackageStartupMessages({
  library(testthat)
  library(gpsvm)
})

run_test_file <- function(path) {
  started <- proc.time()
  results <- testthat::test_file(path, reporter = "summary", package = "gpsvm",
                                 load_package = "installed", stop_on_failure = FALSE)
  table <- as.data.frame(results)
  failed <- sum(table$failed) + sum(table$error)
  passed <- sum(table$passed)
  skip_reason <- function(test) {
    skips <- Filter(function(e) inherits(e, "expectation_skip"), test$results)
    if (length(skips)) sub("^Reason: ", "", conditionMessage(skips[[1]])) else "skipped"
  }
  skipped <- Filter(function(test) {
    any(vapply(test$results, inherits, logical(1), "expectation_skip"))
  }, results)
  cat("\n")
  for (test in skipped) cat(sprintf("sanitize-skip: %s: %s\n", test$test, skip_reason(test)))
  took <- proc.time() - started
  cat(sprintf("sanitize-time: %.1f s CPU, %.1f s elapsed\n", sum(took[c(1, 2, 4, 5)], na.rm = TRUE),
              took[[3]]))
  cat(sprintf("sanitize-result: %d passed, %d failed, %d skipped\n", as.integer(passed),
              as.integer(failed), length(skipped)))
}

# Each file as in its own process as far as R allows: the caller's options,
# random stream and working directory restored after it.
run_queued_file <- function(path, log_dir) {
  name <- basename(path)
  log <- file(file.path(log_dir, paste0(name, ".log")), open = "wt")
  sink(log)
  sink(log, type = "message")
  options_before <- options()
  wd <- getwd()
  # (a fresh process's random stream: seeded from the clock at first use)
  if (exists(".Random.seed", envir = globalenv())) rm(".Random.seed", envir = globalenv())
  status <- tryCatch({
    run_test_file(path)
    0L
  }, error = function(e) {
    cat("test-file: ", conditionMessage(e), "\n", sep = "")
    1L
  })
  sink(type = "message")
  sink()
  close(log)
  setwd(wd)
  options(options_before)
  claim_reports(file.path(log_dir, paste0(name, ".reports")))
  writeLines(as.character(status), file.path(log_dir, paste0(name, ".status")))
}

claim_reports <- function(destination) {
  report_dir <- Sys.getenv("GPSVM_REPORT_DIR")
  reports <- if (nzchar(report_dir)) list.files(report_dir, full.names = TRUE) else character(0)
  if (length(reports) == 0L) return(invisible())
  dir.create(destination, showWarnings = FALSE)
  file.rename(reports, file.path(destination, basename(reports)))
}

if (length(args) == 3L && args[1] == "--queue") {
  queue <- args[2]
  log_dir <- args[3]
  repeat {
    waiting <- sort(list.files(queue, pattern = "^[0-9]+ "))
    if (length(waiting) == 0L) break
    mine <- file.path(log_dir, paste0(waiting[1], ".taken"))
    if (!file.rename(file.path(queue, waiting[1]), mine)) next
    run_queued_file(readLines(mine, n = 1L), log_dir)
  }
} else {
  if (length(args) != 1L || !file.exists(args[1])) {
    stop("usage: test-file.R TEST_FILE, or test-file.R --queue QUEUE_DIR LOG_DIR")
  }
  run_test_file(args[1])
}
