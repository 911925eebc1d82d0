/work/main/tests/testthat/test-tidiers.R
