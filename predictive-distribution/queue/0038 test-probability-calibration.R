/work/main/tests/testthat/test-probability-calibration.R
