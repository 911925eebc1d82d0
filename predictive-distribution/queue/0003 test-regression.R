/work/main/tests/testthat/test-regression.R
