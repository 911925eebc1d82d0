/work/main/tests/testthat/test-given-fit.R
