/work/main/tests/testthat/test-svr.R
