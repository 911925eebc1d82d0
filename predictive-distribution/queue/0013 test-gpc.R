/work/main/tests/testthat/test-gpc.R
