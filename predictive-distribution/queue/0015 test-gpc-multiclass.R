/work/main/tests/testthat/test-gpc-multiclass.R
