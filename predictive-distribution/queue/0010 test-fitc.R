/work/main/tests/testthat/test-fitc.R
