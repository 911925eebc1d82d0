# The suite's three sizes.
#
# * Full (NOT_CRAN=true, GPSVM_TEST_SIZE unset): every test at its full size.
#   `make check` runs the suite so.
# * Small (GPSVM_TEST_SIZE=small): the edit-test loop (`make test`) and the
#   sanitizer stage of the check, where every fit is several times slower.
#   test_size(full, small) gives the small size: a test that fits a large
#   problem only to see a statistical property (accuracy against a peer,
#   calibration, a size threshold's switch) fits a smaller one, which runs
#   the same C++ code paths; skip_if_small_tests(why) skips the few tests
#   whose assertion needs the full size (the sanitizer stage lists them).
# * CRAN (NOT_CRAN unset, as on CRAN's machines and in `make cran`): the small
#   sizes, without the tests that call skip_on_cran() (each took over a
#   second at the small size; they run in the two sizes above) and without
#   those that compile test-only C++ (helper-probes.R), so that a check of
#   the package takes a few minutes.
small_tests <- function() {
  identical(Sys.getenv("GPSVM_TEST_SIZE"), "small") || !identical(Sys.getenv("NOT_CRAN"), "true")
}

test_size <- function(full, small) if (small_tests()) small else full

skip_if_small_tests <- function(why) {
  skip_if(small_tests(), paste("GPSVM_TEST_SIZE=small:", why))
}
