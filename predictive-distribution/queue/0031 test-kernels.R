/work/main/tests/testthat/test-kernels.R
