# Runs one testthat file against the installed gpsvm (the sanitizer build of
# tools/sanitize.sh, or the development build of tools/test.sh) and ends
# with its time, its counts and the tests it skipped:
#   sanitize-skip: <test>: <reason>          (one line per skipped test)
#   sanitize-time: <cpu> s CPU, <elapsed> s elapsed
#   sanitize-result: <passed> passed, <failed> failed, <skipped> skipped
# counting expectations as testthat's summary does (an error inside a test
# counts as a failure).  Usage: Rscript test-file.R tests/testthat/test-x.R
args <- commandArgs(TRUE)
if (length(args) != 1L || !file.exists(args[1])) stop("usage: test-file.R TEST_FILE")
suppressPackageStartupMessages({
  library(testthat)
  library(gpsvm)
})
started <- proc.time()
results <- testthat::test_file(args[1], reporter = "summary", package = "gpsvm",
                               load_package = "installed", stop_on_failure = FALSE)
table <- as.data.frame(results)
failed <- sum(table$failed) + sum(table$error)
passed <- sum(table$passed)
skip_reason <- function(test) {
  skips <- Filter(function(e) inherits(e, "expectation_skip"), test$results)
  if (length(skips)) sub("^Reason: ", "", conditionMessage(skips[[1]])) else "skipped"
}
skipped <- Filter(function(test) any(vapply(test$results, inherits, logical(1), "expectation_skip")),
                  results)
cat("\n")
for (test in skipped) cat(sprintf("sanitize-skip: %s: %s\n", test$test, skip_reason(test)))
took <- proc.time() - started
cat(sprintf("sanitize-time: %.1f s CPU, %.1f s elapsed\n", sum(took[c(1, 2, 4, 5)], na.rm = TRUE),
            took[[3]]))
cat(sprintf("sanitize-result: %d passed, %d failed, %d skipped\n", as.integer(passed),
            as.integer(failed), length(skipped)))
