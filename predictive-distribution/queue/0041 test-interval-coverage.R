/work/main/tests/testthat/test-interval-coverage.R
