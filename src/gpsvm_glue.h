// Shared helpers for the Rcpp glue: turn R objects into the core's structs.
// No algorithm lives here.
//
// Every entry is exported with rng = false: the core draws no random
// numbers, and without Rcpp's RNG scope a call leaves R's generator alone
// (it would otherwise create .Random.seed in a session that had none, which
// future reports as unexpected random numbers in a fresh worker).
#ifndef GPSVM_GLUE_H
#define GPSVM_GLUE_H

#include <RcppEigen.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <initializer_list>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <gpsvm/kernels.hpp>
#include <gpsvm/solver_status.hpp>
#include <gpsvm/ep_engine.hpp>
#include <gpsvm/fitc.hpp>
#include <gpsvm/rvm_noise.hpp>

namespace gpsvm_glue {

// Every exported function ends in a handler that calls this on
// std::bad_alloc, so that an allocation that fails is an R error that says
// what happened, not Rcpp's bare "std::bad_alloc".  (The core refuses the
// large sizes it can foresee before allocating, with both figures:
// memory.hpp.)
[[noreturn]] inline void stop_out_of_memory() {
  Rcpp::stop("there is not enough memory for this computation (an allocation failed): use fewer "
             "observations, a low-rank or inducing-point fit (the fitters' 'inducing', or "
             "'rank_tol' at its default), or fewer candidate centres ('basis')");
}

// ---- Values from R, checked before any cast ------------------------------
// Every setting the core reads comes through these, so that a hand-made or
// edited control list gives an R error naming the setting, never an
// overflowing cast or an out-of-range value inside the core.

// The element `name` of a list; an absent one is an error naming it.
inline SEXP element(const Rcpp::List& list, const char* name) {
  if (!list.containsElementNamed(name)) Rcpp::stop("'%s' is missing", name);
  return list[name];
}

// A single number (integer or double, not NA/NaN).
inline double single_number(SEXP value, const char* name) {
  if (!(Rf_isReal(value) || Rf_isInteger(value)) || Rf_xlength(value) != 1)
    Rcpp::stop("'%s' must be a single number", name);
  const double v = Rf_asReal(value);
  if (ISNAN(v)) Rcpp::stop("'%s' must be a single number, not NA", name);
  return v;
}

// A number as R prints it (Inf, not inf).
inline std::string format_number(double v) {
  if (std::isinf(v)) return v > 0 ? "Inf" : "-Inf";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.15g", v);
  return buffer;
}

// A number in [lower, upper] (bounds may be infinite).
inline double number_in(SEXP value, const char* name, double lower, double upper) {
  const double v = single_number(value, name);
  if (!(v >= lower && v <= upper))
    Rcpp::stop("'%s' must lie in [%s, %s], not %s", name, format_number(lower),
               format_number(upper), format_number(v));
  return v;
}

// The longest R vector is the core's largest count.
static_assert(R_XLEN_T_MAX == gpsvm::kMaxCount, "R_XLEN_T_MAX is not gpsvm::kMaxCount");

// A whole number in [lower, upper] (within +-R_XLEN_T_MAX), range-checked as
// a double, then cast.  64-bit on every platform: a `long` bound of
// R_XLEN_T_MAX is 0 on Windows.
inline std::int64_t count_in(SEXP value, const char* name, std::int64_t lower,
                             std::int64_t upper) {
  const double v = single_number(value, name);
  if (!gpsvm::is_count_in(v, lower, upper))
    Rcpp::stop("'%s' must be a whole number in [%s, %s], not %s", name, std::to_string(lower),
               std::to_string(upper), format_number(v));
  return static_cast<std::int64_t>(v);
}

inline int int_in(SEXP value, const char* name, int lower, int upper) {
  return static_cast<int>(count_in(value, name, lower, upper));
}

constexpr int kMaxInt = std::numeric_limits<int>::max();

inline bool flag(SEXP value, const char* name) {
  if (!Rf_isLogical(value) || Rf_xlength(value) != 1 || LOGICAL(value)[0] == NA_LOGICAL)
    Rcpp::stop("'%s' must be TRUE or FALSE", name);
  return LOGICAL(value)[0] != 0;
}

// One of `choices`, returned as its position.
inline int choice(SEXP value, const char* name, std::initializer_list<const char*> choices) {
  if (Rf_isString(value) && Rf_xlength(value) == 1 && STRING_ELT(value, 0) != NA_STRING) {
    const std::string v = CHAR(STRING_ELT(value, 0));
    int k = 0;
    for (const char* c : choices) {
      if (v == c) return k;
      ++k;
    }
  }
  std::string all;
  for (const char* c : choices) all += std::string(all.empty() ? "" : ", ") + "\"" + c + "\"";
  Rcpp::stop("'%s' must be one of %s", name, all);
}

// One field of a control's table (solver_status.hpp) from R's list, within
// its rule's range: a number, a switch or a whole number.
inline void field_from_r(SEXP value, const char* name, double& field, const gpsvm::FieldRule& r) {
  field = number_in(value, name, r.lower, r.upper);
}

inline void field_from_r(SEXP value, const char* name, bool& field, const gpsvm::FieldRule&) {
  field = flag(value, name);
}

template <class Count>
void field_from_r(SEXP value, const char* name, Count& field, const gpsvm::FieldRule& r) {
  static_assert(std::is_integral<Count>::value, "a table's field is a number, switch or count");
  field = static_cast<Count>(count_in(value, name, static_cast<std::int64_t>(r.lower),
                                      static_cast<std::int64_t>(r.upper)));
}

// Every field of a control's table from R's control list, in the table's
// order, but the model's parameters (FieldRule::model), which the caller
// sets.
template <class Control>
void fields_from_r(const Rcpp::List& list, Control& control) {
  Control::fields(control, [&list](const char* name, auto& field, const gpsvm::FieldRule& r) {
    if (!r.model) field_from_r(element(list, name), name, field, r);
  });
}

// A solver's status as R's convergence record, with exactly the fields of
// .convergence() in R/validate.R: converged, iterations, change, tol, reason
// (NA when the solver gave none).
inline Rcpp::List convergence_to_r(const gpsvm::SolverStatus& s) {
  return Rcpp::List::create(
      Rcpp::Named("converged") = s.converged,
      Rcpp::Named("iterations") = static_cast<int>(s.iterations),
      Rcpp::Named("change") = s.change, Rcpp::Named("tol") = s.tol,
      Rcpp::Named("reason") = s.reason.empty() ? Rcpp::CharacterVector::create(NA_STRING)
                                               : Rcpp::CharacterVector::create(s.reason));
}

// A numeric vector element of a list, mapped without a copy (the list keeps
// it alive).
inline Eigen::Map<const Eigen::VectorXd> vector_element(const Rcpp::List& list, const char* name) {
  SEXP v = element(list, name);
  if (!Rf_isReal(v)) Rcpp::stop("'%s' must be a numeric vector", name);
  return Eigen::Map<const Eigen::VectorXd>(REAL(v), Rf_xlength(v));
}

// A numeric matrix element of a list, mapped without a copy; NULL or absent
// (when `optional`) is a 0 x 0 matrix.
inline Eigen::Map<const Eigen::MatrixXd> matrix_element(const Rcpp::List& list, const char* name,
                                                       bool optional = false) {
  if (optional && (!list.containsElementNamed(name) || Rf_isNull(list[name])))
    return Eigen::Map<const Eigen::MatrixXd>(nullptr, 0, 0);
  SEXP v = element(list, name);
  if (!Rf_isReal(v) || !Rf_isMatrix(v)) Rcpp::stop("'%s' must be a numeric matrix", name);
  return Eigen::Map<const Eigen::MatrixXd>(REAL(v), Rf_nrows(v), Rf_ncols(v));
}

// A varying-noise fit's noise bases: a list of list(basis, precision).
inline std::vector<gpsvm::NoiseBasis> noise_bases_from_r(const Rcpp::List& bases) {
  std::vector<gpsvm::NoiseBasis> out;
  for (R_xlen_t i = 0; i < bases.size(); ++i) {
    if (!Rf_isNewList(bases[i])) Rcpp::stop("'noise_bases' must be a list of list(basis, precision)");
    const Rcpp::List b(bases[i]);
    out.push_back({matrix_element(b, "basis"), matrix_element(b, "precision")});
  }
  return out;
}

// The rows of a FITC fit's n x m factor kept in memory, which the R layer
// sets from its memory budget (.inducing_held_rows()); absent: all.
inline Eigen::Index inducing_held_rows(const Rcpp::List& list) {
  if (!list.containsElementNamed("inducing_held_rows")) return -1;
  return static_cast<Eigen::Index>(
      count_in(list["inducing_held_rows"], "inducing_held_rows", 0, R_XLEN_T_MAX));
}

// The pivoted Cholesky factor of K whose pivots are the inducing inputs
// model$inducing, when the prior's choice (R/inducing.R) attached it to
// them as attributes "factor" (n x r) and "pivots" (1-based rows); empty
// otherwise, and the basis is FITC's with its jitter.
inline std::optional<gpsvm::PivotedFactor> pivoted_factor(const Rcpp::List& model) {
  if (!model.containsElementNamed("inducing")) return std::nullopt;
  const SEXP z = model["inducing"];
  const SEXP g = Rf_getAttrib(z, Rf_install("factor"));
  const SEXP p = Rf_getAttrib(z, Rf_install("pivots"));
  if (Rf_isNull(g)) return std::nullopt;
  if (!Rf_isReal(g) || !Rf_isMatrix(g) || !Rf_isInteger(p))
    Rcpp::stop("internal: the inducing inputs' factor must be a numeric matrix with integer pivots");
  std::vector<Eigen::Index> pivots(static_cast<std::size_t>(Rf_xlength(p)));
  for (std::size_t k = 0; k < pivots.size(); ++k) pivots[k] = static_cast<Eigen::Index>(INTEGER(p)[k]) - 1;
  return gpsvm::PivotedFactor{Eigen::Map<const Eigen::MatrixXd>(REAL(g), Rf_nrows(g), Rf_ncols(g)),
                              std::move(pivots)};
}

// Training inputs read through an R function, for data in partitions (files
// or data frames) that are never gathered into one matrix: `read(start,
// len)` returns rows start + 1 to start + len (over all partitions, in
// order) on the fit's scale, a len x cols numeric matrix.  The R layer reads
// a partition where the core asks for its rows, and the core sums over
// blocks of rows (ep_priors.hpp), so only O(block) inputs are in C++ at a
// time.  R is single-threaded: concurrent() is false, and every pass reads
// on the calling thread.  An R error in the reader comes back as a C++
// exception (Rcpp::Function evaluates inside R's tryCatch) and so as an R
// error of the fit.
class RReaderRows final : public gpsvm::RowSource {
 public:
  RReaderRows(const Rcpp::Function& read, Eigen::Index rows, Eigen::Index cols)
      : read_(read), rows_(rows), cols_(cols) {}
  Eigen::Index rows() const override { return rows_; }
  Eigen::Index cols() const override { return cols_; }
  gpsvm::FactorBlock block(Eigen::Index start, Eigen::Index len,
                           Eigen::MatrixXd& scratch) const override {
    SEXP v = read_(static_cast<double>(start), static_cast<double>(len));
    if (!Rf_isReal(v) || !Rf_isMatrix(v) || Rf_nrows(v) != len || Rf_ncols(v) != cols_)
      throw std::runtime_error("the reader of the data's partitions returned " +
                               std::string(Rf_isMatrix(v) ? "a matrix of other dimensions"
                                                          : "no numeric matrix"));
    scratch = Eigen::Map<const Eigen::MatrixXd>(REAL(v), len, cols_);
    return gpsvm::row_block(scratch, 0, len);
  }
  bool concurrent() const override { return false; }

 private:
  Rcpp::Function read_;
  Eigen::Index rows_, cols_;
};

// The inputs of a fit as the core reads them: a numeric matrix (held, not
// copied), or a reader of rows, list(read = function(start, len), rows =,
// cols =), the R layer's for partitioned data (.partition_reader()).
inline std::unique_ptr<gpsvm::RowSource> input_rows(SEXP x) {
  if (Rf_isReal(x) && Rf_isMatrix(x))
    return std::unique_ptr<gpsvm::RowSource>(new gpsvm::HeldRows(
        Eigen::Map<const Eigen::MatrixXd>(REAL(x), Rf_nrows(x), Rf_ncols(x))));
  if (!Rf_isNewList(x)) Rcpp::stop("'x' must be a numeric matrix or a reader of rows");
  const Rcpp::List reader(x);
  return std::unique_ptr<gpsvm::RowSource>(new RReaderRows(
      Rcpp::Function(element(reader, "read")),
      static_cast<Eigen::Index>(count_in(element(reader, "rows"), "rows", 1, R_XLEN_T_MAX)),
      static_cast<Eigen::Index>(count_in(element(reader, "cols"), "cols", 1, R_XLEN_T_MAX))));
}

inline Eigen::VectorXd optional_vector(const Rcpp::List& list, const char* name) {
  if (!list.containsElementNamed(name) || Rf_isNull(list[name])) return Eigen::VectorXd();
  return vector_element(list, name);
}

// A 'gpsvm_kernel' R object (a list with 'type' and its parameters) as a
// core Kernel; parameters are range-checked here (the degree within the
// core's kMaxPolynomialDegree) and the Kernel checks the rest.
// An optional element 'constant' is added to every entry (the classifiers'
// bias).
inline gpsvm::Kernel kernel_from_r(const Rcpp::List& k) {
  if (!Rf_inherits(k, "gpsvm_kernel")) Rcpp::stop("'kernel' must be a kernel from rbf_kernel(), matern_kernel(), poly_kernel() or linear_kernel()");
  const int type = choice(element(k, "type"), "type", {"rbf", "polynomial", "linear", "matern"});
  gpsvm::Kernel out;
  if (type == 0 || type == 3) {
    if (!k.containsElementNamed("sigma") || Rf_isNull(k["sigma"]))
      Rcpp::stop("the kernel has no width ('sigma')");
    const double sigma = number_in(k["sigma"], "sigma", 0.0, R_PosInf);
    if (type == 0) {
      out = gpsvm::Kernel::rbf(sigma);
    } else {
      // nu = p + 1/2: 2 nu is 1, 3 or 5
      const double nu = number_in(element(k, "nu"), "nu", 0.5, 2.5);
      if (nu != 0.5 && nu != 1.5 && nu != 2.5) Rcpp::stop("'nu' must be 0.5, 1.5 or 2.5");
      out = gpsvm::Kernel::matern(static_cast<int>(nu - 0.5), sigma);
    }
  } else if (type == 1) {
    out = gpsvm::Kernel::polynomial(
        int_in(element(k, "degree"), "degree", 1, gpsvm::kMaxPolynomialDegree),
        number_in(element(k, "scale"), "scale", R_NegInf, R_PosInf),
        number_in(element(k, "offset"), "offset", R_NegInf, R_PosInf));
  } else {
    out = gpsvm::Kernel::linear();
  }
  if (k.containsElementNamed("constant") && !Rf_isNull(k["constant"])) {
    out.constant = number_in(k["constant"], "constant", 0.0, R_PosInf);
    out.validate();
  }
  return out;
}

// A derivative order from R, within the core's limit.
inline int derivative_order(SEXP value, const char* name) {
  return int_in(value, name, 0, gpsvm::kMaxDerivativeOrder);
}

// An EP fit (mfsvr() or the TAP classifier) as the list the R layer reads.
inline Rcpp::List ep_result_to_r(const gpsvm::EpResult& r) {
  return Rcpp::List::create(
      Rcpp::Named("weights") = r.weights, Rcpp::Named("site_precision") = r.site_precision,
      Rcpp::Named("site_nu") = r.site_nu, Rcpp::Named("cavity_mean") = r.cavity_mean,
      Rcpp::Named("cavity_var") = r.cavity_var, Rcpp::Named("mean") = r.mean,
      Rcpp::Named("variance") = r.variance, Rcpp::Named("chol") = r.chol,
      Rcpp::Named("log_evidence") = r.log_evidence,
      Rcpp::Named("convergence") = convergence_to_r(r.status));
}

// What an inducing-point (FITC) fit adds to ep_result_to_r()'s list: the
// factor of K_mm + jitter I, the weights of the inducing inputs' kernel
// columns, and the predictive means and latent variances at the training
// inputs.
inline void add_inducing_to_r(const Eigen::MatrixXd& inducing_chol,
                              const gpsvm::InducingSummary& s, Rcpp::List& out) {
  out["inducing_chol"] = inducing_chol;
  out["inducing_weights"] = s.weights;
  out["fitted"] = s.fitted;
  out["fitted_variance"] = s.fitted_variance;
}

// The EP engine's settings from an R control list (gpc_control() or
// mfsvr_control(), which name them alike).
inline gpsvm::EpControl ep_control_from_r(const Rcpp::List& c) {
  gpsvm::EpControl out;
  static const gpsvm::EpSchedule schedules[] = {gpsvm::EpSchedule::parallel,
                                                gpsvm::EpSchedule::accelerated,
                                                gpsvm::EpSchedule::sequential};
  out.schedule = schedules[choice(element(c, "schedule"), "schedule",
                                  {"parallel", "accelerated", "sequential"})];
  fields_from_r(c, out);
  return out;
}

// A varying-noise fit's search settings (rvm() and mfsvr() name them alike;
// `amplitude` is mfsvr()'s alone and read only where present).
inline gpsvm::VaryingNoiseControl varying_noise_control_from_r(const Rcpp::List& c) {
  gpsvm::VaryingNoiseControl out;
  fields_from_r(c, out);
  if (c.containsElementNamed("amplitude")) out.amplitude = flag(element(c, "amplitude"), "amplitude");
  return out;
}

// The core's long loops poll this (through gpsvm::InterruptPoll, at most
// every gpsvm::kInterruptPeriod) so that Ctrl-C stops them.
inline std::function<void()> interrupt_callback() {
  return [] { Rcpp::checkUserInterrupt(); };
}

}  // namespace gpsvm_glue

#endif  // GPSVM_GLUE_H
