library(testthat)
library(gpsvm)

test_check("gpsvm")
