/work/main/tests/testthat/test-lm-methods.R
