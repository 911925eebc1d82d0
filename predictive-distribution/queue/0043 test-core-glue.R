/work/main/tests/testthat/test-core-glue.R
