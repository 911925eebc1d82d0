/work/main/tests/testthat/test-split-fit.R
