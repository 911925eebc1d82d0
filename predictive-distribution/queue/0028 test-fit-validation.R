/work/main/tests/testthat/test-fit-validation.R
