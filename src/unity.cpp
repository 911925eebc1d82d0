// One translation unit for the whole shared object (a "unity build").
//
// Every glue file includes gpsvm_glue.h, and through it the core's inline
// functions, whose Eigen expressions are instantiated in each translation
// unit that sees them: compiled one file at a time, most of the work was
// the same headers again, once per glue file.  src/Makevars therefore builds this file
// alone (OBJECTS), and names the files it includes as its dependencies, so
// that an in-place build notices an edit to any of them.  A glue file added
// to src/ must be added here too: otherwise its functions are missing at
// link time, and the build says so.
//
// RcppExports.cpp comes last: its `using namespace Rcpp` then reaches no
// other file.
#include "rcpp_classif.cpp"
#include "rcpp_ep.cpp"
#include "rcpp_kernels.cpp"
#include "rcpp_mfsvr.cpp"
#include "rcpp_multiclass.cpp"
#include "rcpp_noise.cpp"
#include "rcpp_rvm.cpp"
#include "rcpp_split.cpp"
#include "rcpp_svr.cpp"
#include "RcppExports.cpp"
