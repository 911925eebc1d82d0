/work/main/tests/testthat/test-evidence-search.R
