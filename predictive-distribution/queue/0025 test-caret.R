/work/main/tests/testthat/test-caret.R
