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

// A 'gpsvm_kernel' R object (list with 'type' and parameters) as a core Kernel;
// an optional element 'constant' is added to every entry (the classifiers'
// bias).
inline gpsvm::Kernel kernel_from_r(const Rcpp::List& k) {
  const std::string type = Rcpp::as<std::string>(k["type"]);
  gpsvm::Kernel out;
  if (type == "rbf") {
    if (Rf_isNull(k["sigma"])) Rcpp::stop("the Gaussian kernel has no width ('sigma')");
    out = gpsvm::Kernel::rbf(Rcpp::as<double>(k["sigma"]));
  } else if (type == "polynomial") {
    out = gpsvm::Kernel::polynomial(Rcpp::as<int>(k["degree"]), Rcpp::as<double>(k["scale"]),
                                    Rcpp::as<double>(k["offset"]));
  } else if (type == "linear") {
    out = gpsvm::Kernel::linear();
  } else {
    Rcpp::stop("unknown kernel type '" + type + "'");
  }
  if (k.containsElementNamed("constant") && !Rf_isNull(k["constant"])) {
    out.constant = Rcpp::as<double>(k["constant"]);
    out.validate();
  }
  return out;
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

// The core's long loops call this between iterations so Ctrl-C works.
inline std::function<void()> interrupt_callback() {
  return [] { Rcpp::checkUserInterrupt(); };
}

}  // namespace gpsvm_glue

#endif  // GPSVM_GLUE_H
