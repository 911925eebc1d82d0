/work/main/tests/testthat/test-svr-noise.R
