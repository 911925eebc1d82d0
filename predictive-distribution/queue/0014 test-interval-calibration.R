/work/main/tests/testthat/test-interval-calibration.R
