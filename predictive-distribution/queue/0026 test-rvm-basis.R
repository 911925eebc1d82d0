/work/main/tests/testthat/test-rvm-basis.R
