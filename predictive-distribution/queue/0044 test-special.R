/work/main/tests/testthat/test-special.R
