// How an iterative solver stopped: the one record every solver of the core
// returns (EP, the paper's mean-field iteration, SMO, the kernel adatron,
// the naive mean-field iteration, the RVM and sRVM updates).
// Pure C++17: no R headers.
#ifndef GPSVM_SOLVER_STATUS_HPP
#define GPSVM_SOLVER_STATUS_HPP

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

namespace gpsvm {

// Control structs (EpControl, SvrControl, ...) carry no defaults: the
// defaults live in one place, the R constructors (mfsvr_control(),
// svr_control(), ...), and the glue copies every field from R.  A C++ caller
// sets every field itself (tests/cpp/test_controls.cpp shows how).  Numbers
// start unset (kUnset, or an impossible count) and each solver's checks
// reject them, so a forgotten field is an error, never a silent second
// default.  Switches (schedules, flags) have no unset state.
constexpr double kUnset = std::numeric_limits<double>::quiet_NaN();

// Counts (iterations, ranks, cache misses) are int or std::int64_t, never
// long, which has 32 bits on Windows.  kMaxCount, the largest count a caller
// can ask for, is the longest vector R allows (R_XLEN_T_MAX, 2^52): every
// count up to it is exact as a double.
constexpr std::int64_t kMaxCount = std::int64_t{1} << 52;

// Whether v is a whole number in [lower, upper], bounds within +-kMaxCount,
// so that static_cast<std::int64_t>(v) is exact: the check a number from the
// caller passes before it becomes a count.
inline bool is_count_in(double v, std::int64_t lower, std::int64_t upper) {
  return v >= static_cast<double>(lower) && v <= static_cast<double>(upper) &&
         v == std::floor(v);
}

// The rules the control structs' validate() share, each with its one
// wording: a field `name` that breaks one is an std::invalid_argument that
// names it ("'tol' must be a positive finite number").  An unset field
// (kUnset, a NaN) breaks each of them.
inline void require_positive(double v, const char* name) {
  if (!(v > 0.0)) throw std::invalid_argument(std::string("'") + name + "' must be positive");
}

inline void require_positive_finite(double v, const char* name) {
  if (!(v > 0.0) || !std::isfinite(v))
    throw std::invalid_argument(std::string("'") + name + "' must be a positive finite number");
}

inline void require_finite_nonnegative(double v, const char* name) {
  if (!(v >= 0.0) || !std::isfinite(v))
    throw std::invalid_argument(std::string("'") + name + "' must be a finite number >= 0");
}

struct SolverStatus {
  bool converged = false;
  // Iterations taken, in the solver's own unit (EP sweeps, SMO pair steps,
  // outer iterations of the paper's scheme, ...).
  std::int64_t iterations = 0;
  // The solver's own stopping measure at the last iteration (EP: largest
  // standardised change of a marginal; SMO: the KKT gap; RVM: the largest
  // change of a log hyperparameter; ...), compared with `tol`.
  double change = 0.0;
  double tol = 0.0;
  // Why the solver stopped early for a reason other than its iteration cap
  // (e.g. a diverging iteration, a work cap), or why it counts as converged
  // with `change` still above `tol` (the RVMs: the evidence stopped rising);
  // empty when it converged by `tol` or simply ran out of iterations.
  std::string reason;
};

// The status of a solver that stops when its measure falls below tol, or at
// its iteration cap.
inline SolverStatus status_by_tol(std::int64_t iterations, double change, double tol) {
  SolverStatus s;
  s.converged = change < tol;
  s.iterations = iterations;
  s.change = change;
  s.tol = tol;
  return s;
}

}  // namespace gpsvm

#endif  // GPSVM_SOLVER_STATUS_HPP
