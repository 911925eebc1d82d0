// Shared helpers for the Rcpp glue: turn R objects into the core's structs.
// No algorithm lives here.
#ifndef GPSVM_GLUE_H
#define GPSVM_GLUE_H

#include <RcppEigen.h>

#include <functional>
#include <string>

#include <gpsvm/kernels.hpp>
#include <gpsvm/solver_status.hpp>
#include <gpsvm/tap.hpp>

namespace gpsvm_glue {

// A 'gpsvm_kernel' R object (list with 'type' and parameters) as a core Kernel.
inline gpsvm::Kernel kernel_from_r(const Rcpp::List& k) {
  const std::string type = Rcpp::as<std::string>(k["type"]);
  if (type == "rbf") {
    if (Rf_isNull(k["sigma"])) Rcpp::stop("the Gaussian kernel has no width ('sigma')");
    return gpsvm::Kernel::rbf(Rcpp::as<double>(k["sigma"]));
  }
  if (type == "polynomial")
    return gpsvm::Kernel::polynomial(Rcpp::as<int>(k["degree"]), Rcpp::as<double>(k["scale"]),
                                     Rcpp::as<double>(k["offset"]));
  if (type == "linear") return gpsvm::Kernel::linear();
  Rcpp::stop("unknown kernel type '" + type + "'");
}

// The EP engine's settings from an R control list (gpc_control() or
// mfsvr_control()).
inline gpsvm::EpControl ep_control_from_r(const Rcpp::List& c) {
  gpsvm::EpControl out;
  const std::string schedule = Rcpp::as<std::string>(c["schedule"]);
  out.schedule =
      schedule == "sequential" ? gpsvm::EpSchedule::sequential : gpsvm::EpSchedule::parallel;
  out.max_sweeps = Rcpp::as<int>(c["max_iter"]);
  out.tolerance = Rcpp::as<double>(c["tol"]);
  out.damping = Rcpp::as<double>(c["damping"]);
  out.seed = static_cast<std::uint32_t>(Rcpp::as<double>(c["seed"]));
  return out;
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

// The core's long loops call this between iterations so Ctrl-C works.
inline std::function<void()> interrupt_callback() {
  return [] { Rcpp::checkUserInterrupt(); };
}

}  // namespace gpsvm_glue

#endif  // GPSVM_GLUE_H
