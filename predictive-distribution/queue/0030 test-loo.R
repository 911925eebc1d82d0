/work/main/tests/testthat/test-loo.R
