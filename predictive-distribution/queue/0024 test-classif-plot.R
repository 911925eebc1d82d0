/work/main/tests/testthat/test-classif-plot.R
