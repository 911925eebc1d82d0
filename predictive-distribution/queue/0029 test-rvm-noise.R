/work/main/tests/testthat/test-rvm-noise.R
