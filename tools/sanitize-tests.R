# Runs one testthat file against the installed gpsvm (the sanitizer build,
# see tools/sanitize.sh) and ends with one line
#   sanitize-result: <passed> passed, <failed> failed
# counting expectations as testthat's summary does (an error inside a test
# counts as a failure).  Usage: Rscript sanitize-tests.R tests/testthat/test-x.R
args <- commandArgs(TRUE)
if (length(args) != 1L || !file.exists(args[1])) stop("usage: sanitize-tests.R TEST_FILE")
suppressPackageStartupMessages({
  library(testthat)
  library(gpsvm)
})
results <- as.data.frame(testthat::test_file(args[1], reporter = "summary", package = "gpsvm",
                                             load_package = "installed",
                                             stop_on_failure = FALSE))
failed <- sum(results$failed) + sum(results$error)
passed <- sum(results$passed)
cat(sprintf("\nsanitize-result: %d passed, %d failed\n", as.integer(passed), as.integer(failed)))
