/work/main/tests/testthat/test-mfsvr-noise.R
