/work/main/tests/testthat/test-mfsvr.R
