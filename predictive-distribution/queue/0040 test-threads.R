/work/main/tests/testthat/test-threads.R
