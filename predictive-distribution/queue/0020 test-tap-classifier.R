/work/main/tests/testthat/test-tap-classifier.R
