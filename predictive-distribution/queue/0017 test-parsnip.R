/work/main/tests/testthat/test-parsnip.R
