/work/main/tests/testthat/test-matern.R
