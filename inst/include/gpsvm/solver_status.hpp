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
// sets every field itself (the C++ tests' fixtures start from R's defaults,
// written out by tools/control-defaults.R).  Numbers
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

// ---- Field tables ----------------------------------------------------------
// Each control struct lists its plain fields (numbers, counts, switches)
// once, in `template <class Self, class Visit> static void fields(Self& s,
// Visit&& visit)`, which calls visit(name, field, rule) per field, named as
// R's control list names it.  That table is the one source of validate()'s
// check of those fields (check_fields()), of the glue's reader of R's list
// (gpsvm_glue::fields_from_r()) and of the C++ tests' fields left unset and
// filled from R's defaults.  Fields that are no plain value (schedules,
// matrices, optional values) stay outside it, read and checked by hand.
struct FieldRule {
  bool (*ok)(double);  // validate()'s test; a field's unset value fails it
  // validate()'s error, "{}" standing for the field's name; nullptr when the
  // struct's own check words it (one error for several fields)
  const char* wording;
  double lower, upper;  // the closed range a value read from R must lie in
  // a parameter of the model that the caller sets (the classifiers' C,
  // kappa, noise), not a setting of R's control list
  bool model = false;
};

inline bool is_positive(double v) { return v > 0.0; }
inline bool is_positive_finite(double v) { return v > 0.0 && std::isfinite(v); }
inline bool is_nonnegative(double v) { return v >= 0.0; }
inline bool is_finite_nonnegative(double v) { return v >= 0.0 && std::isfinite(v); }
inline bool is_at_least_one(double v) { return v >= 1.0; }
inline bool is_step(double v) { return v > 0.0 && v <= 1.0; }
inline bool is_set(double v) { return !std::isnan(v); }
inline bool is_any(double) { return true; }

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kIntMax = std::numeric_limits<int>::max();

// The rules several structs share, each with its one wording; R gives their
// values in [0, Inf].
namespace rule {
constexpr FieldRule positive{is_positive, "'{}' must be positive", 0.0, kInf};
constexpr FieldRule positive_finite{is_positive_finite, "'{}' must be a positive finite number",
                                    0.0, kInf};
constexpr FieldRule finite_nonnegative{is_finite_nonnegative, "'{}' must be a finite number >= 0",
                                       0.0, kInf};
constexpr FieldRule above_zero{is_positive, "'{}' must be > 0", 0.0, kInf};
constexpr FieldRule at_least_zero{is_nonnegative, "'{}' must be >= 0", 0.0, kInf};
// a switch (TRUE or FALSE from R), which has no unset state
constexpr FieldRule flag{is_any, nullptr, 0.0, 1.0};
// the seed of a seeded schedule, a whole number in [0, 2^31 - 1]
constexpr FieldRule seed{is_any, nullptr, 0.0, kIntMax};
// an iteration cap of at least 1, with validate()'s wording
constexpr FieldRule max_iter(const char* wording) {
  return FieldRule{is_at_least_one, wording, 1.0, kIntMax};
}
// `r` for a field that the caller sets from the model's arguments
constexpr FieldRule of_model(FieldRule r) {
  r.model = true;
  return r;
}
}  // namespace rule

// The error of a field `name` that breaks `rule`.
inline std::invalid_argument field_error(const FieldRule& rule, const char* name) {
  const char* at = rule.wording;
  while (*at != '\0' && !(at[0] == '{' && at[1] == '}')) ++at;
  std::string text(rule.wording, at);
  if (*at != '\0') text.append(name).append(at + 2);
  return std::invalid_argument(text);
}

// validate()'s check of a control's table: the first field that breaks its
// rule throws, in the table's order.
template <class Control>
void check_fields(const Control& c) {
  Control::fields(c, [](const char* name, const auto& value, const FieldRule& r) {
    if (r.wording && !r.ok(static_cast<double>(value))) throw field_error(r, name);
  });
}

// Whether every field of the table passes its rule (for a struct that words
// one error for several fields).
template <class Control>
bool fields_ok(const Control& c) {
  bool ok = true;
  Control::fields(c, [&ok](const char*, const auto& value, const FieldRule& r) {
    ok = ok && r.ok(static_cast<double>(value));
  });
  return ok;
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
