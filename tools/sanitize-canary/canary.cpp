// The sanitizer stage's self-test (tools/sanitize.sh): a heap read one
// element past the end of an array and a signed overflow, each behind its
// own entry point, built with the stage's flags.  The stage runs both and
// fails unless each gives the report it should.
#include <R.h>
#include <Rinternals.h>
#include <climits>
#include <vector>

extern "C" SEXP canary_heap_overflow(SEXP n_) {
  const int n = Rf_asInteger(n_);
  std::vector<double> v(n, 1.0);
  volatile const double* p = v.data();
  return Rf_ScalarReal(p[n]);  // one past the end
}

extern "C" SEXP canary_signed_overflow(SEXP n_) {
  volatile int big = INT_MAX;
  return Rf_ScalarInteger(big + Rf_asInteger(n_));  // INT_MAX + 1
}
