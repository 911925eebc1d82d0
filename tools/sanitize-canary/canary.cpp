// The sanitizer stage's self-test (tools/sanitize.sh): a heap read one
// element past the end of an array, a signed overflow and a read of freed
// memory, each behind its own entry point, built with the stage's flags.
// The stage runs each and fails unless each gives the report it should.
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

// A read of an array freed before 8 MB more were allocated and freed: the
// stage's quarantine (ASAN_OPTIONS quarantine_size_mb) must still hold it.
extern "C" SEXP canary_use_after_free(SEXP n_) {
  const int n = Rf_asInteger(n_);
  double* v = new double[n];
  v[0] = 1.0;
  delete[] v;
  for (int i = 0; i < 8; ++i) {
    std::vector<double> scratch(131072, 0.0);  // 1 MB
    volatile double* q = scratch.data();
    q[0] = 2.0;
  }
  volatile const double* p = v;
  return Rf_ScalarReal(p[0]);
}
