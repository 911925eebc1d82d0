/work/main/tests/testthat/test-size-policy.R
