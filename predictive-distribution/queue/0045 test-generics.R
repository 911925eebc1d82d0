/work/main/tests/testthat/test-generics.R
