/work/main/tests/testthat/test-per-input-widths.R
