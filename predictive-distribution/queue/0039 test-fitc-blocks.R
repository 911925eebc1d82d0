/work/main/tests/testthat/test-fitc-blocks.R
