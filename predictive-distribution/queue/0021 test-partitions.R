/work/main/tests/testthat/test-partitions.R
