/work/main/tests/testthat/test-classif-data.R
