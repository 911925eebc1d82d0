/work/main/tests/testthat/test-deriv-predict.R
