# testthat is a suggested package: a check without the suggested packages
# (as CRAN runs one) has no tests to run.
if (requireNamespace("testthat", quietly = TRUE)) {
  library(testthat)
  library(gpsvm)
  test_check("gpsvm")
}
