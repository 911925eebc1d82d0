/work/main/tests/testthat/test-predictive-distribution.R
