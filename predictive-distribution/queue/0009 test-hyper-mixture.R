/work/main/tests/testthat/test-hyper-mixture.R
