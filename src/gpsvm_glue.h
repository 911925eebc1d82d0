// Shared helpers for the Rcpp glue: turn R objects into the core's structs.
// No algorithm lives here.
#ifndef GPSVM_GLUE_H
#define GPSVM_GLUE_H

#include <RcppEigen.h>

#include <functional>
#include <string>

#include <gpsvm/kernels.hpp>

namespace gpsvm_glue {

// A 'gpsvm_kernel' R object (list with 'type' and parameters) as a core Kernel.
inline gpsvm::Kernel kernel_from_r(const Rcpp::List& k) {
  const std::string type = Rcpp::as<std::string>(k["type"]);
  if (type == "rbf") return gpsvm::Kernel::rbf(Rcpp::as<double>(k["sigma"]));
  if (type == "polynomial")
    return gpsvm::Kernel::polynomial(Rcpp::as<int>(k["degree"]), Rcpp::as<double>(k["scale"]),
                                     Rcpp::as<double>(k["offset"]));
  if (type == "linear") return gpsvm::Kernel::linear();
  Rcpp::stop("unknown kernel type '" + type + "'");
}

// The core's long loops call this between iterations so Ctrl-C works.
inline std::function<void()> interrupt_callback() {
  return [] { Rcpp::checkUserInterrupt(); };
}

}  // namespace gpsvm_glue

#endif  // GPSVM_GLUE_H
