/work/main/tests/testthat/test-parallel.R
