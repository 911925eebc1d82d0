/work/main/tests/testthat/test-hostile-input.R
