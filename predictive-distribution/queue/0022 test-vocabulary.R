/work/main/tests/testthat/test-vocabulary.R
