/work/main/tests/testthat/test-rvm.R
