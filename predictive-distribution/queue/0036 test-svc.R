/work/main/tests/testthat/test-svc.R
