/work/main/tests/testthat/test-prior-choice.R
