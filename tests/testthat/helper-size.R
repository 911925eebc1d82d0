# One switch for the size of the suite's large problems.
#
# The sanitizer stage of the check (tools/sanitize.sh) runs this suite on an
# AddressSanitizer + UBSan build, where every fit is several times slower.  It
# sets GPSVM_TEST_SIZE=small.  Then:
# * test_size(full, small) gives the small size: a test that fits a large
#   problem only to see a statistical property (accuracy against a peer,
#   calibration, a size threshold's switch) fits a smaller one, which runs
#   the same C++ code paths;
# * skip_if_small_tests(why) skips the few tests whose assertion needs the
#   full size; the stage lists them with `why`, and R CMD check runs them at
#   full size (it never sets the switch).
# Unset (the default, and R CMD check), every test runs at full size.
small_tests <- function() identical(Sys.getenv("GPSVM_TEST_SIZE"), "small")

test_size <- function(full, small) if (small_tests()) small else full

skip_if_small_tests <- function(why) {
  skip_if(small_tests(), paste("GPSVM_TEST_SIZE=small:", why))
}
