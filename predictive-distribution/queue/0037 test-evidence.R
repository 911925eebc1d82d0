/work/main/tests/testthat/test-evidence.R
