// Shared helpers for the Rcpp glue: turn R objects into the core's structs.
// No algorithm lives here.
#ifndef GPSVM_GLUE_H
#define GPSVM_GLUE_H

#include <RcppEigen.h>

#include <functional>
#include <string>

#include <gpsvm/kernels.hpp>
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
  // internal warm start: the sites of an earlier fit (evidence searches)
  if (c.containsElementNamed("start_precision") && !Rf_isNull(c["start_precision"])) {
    out.initial_precision = Rcpp::as<Eigen::VectorXd>(c["start_precision"]);
    out.initial_nu = Rcpp::as<Eigen::VectorXd>(c["start_nu"]);
  }
  return out;
}

// The core's long loops call this between iterations so Ctrl-C works.
inline std::function<void()> interrupt_callback() {
  return [] { Rcpp::checkUserInterrupt(); };
}

}  // namespace gpsvm_glue

#endif  // GPSVM_GLUE_H
