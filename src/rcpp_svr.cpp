// Glue for support vector regression: control list -> SvrControl, call the
// core solver, wrap the result.
#include "gpsvm_glue.h"

#include <gpsvm/smo.hpp>

// [[Rcpp::depends(RcppEigen)]]

// [[Rcpp::export]]
Rcpp::List cpp_svr_fit(Rcpp::List kernel, Eigen::Map<Eigen::MatrixXd> x,
                       Eigen::Map<Eigen::VectorXd> y, Rcpp::List control) {
  gpsvm::SvrControl ctl;
  ctl.C = Rcpp::as<double>(control["C"]);
  ctl.epsilon = Rcpp::as<double>(control["epsilon"]);
  ctl.bias = Rcpp::as<bool>(control["bias"]);
  ctl.tolerance = Rcpp::as<double>(control["tol"]);
  ctl.max_iterations = static_cast<long>(Rcpp::as<double>(control["max_iter"]));
  ctl.cache_mb = Rcpp::as<double>(control["cache_mb"]);
  ctl.shrinking = Rcpp::as<bool>(control["shrinking"]);
  const gpsvm::Kernel k = gpsvm_glue::kernel_from_r(kernel);
  gpsvm::SvrResult res;
  try {
    res = gpsvm::svr_solve(k, x, y, ctl, gpsvm_glue::interrupt_callback());
  } catch (const std::invalid_argument& e) {
    Rcpp::stop(e.what());
  }
  return Rcpp::List::create(
      Rcpp::Named("alpha_plus") = res.alpha_plus, Rcpp::Named("alpha_minus") = res.alpha_minus,
      Rcpp::Named("beta") = res.beta, Rcpp::Named("b") = res.b,
      Rcpp::Named("fitted") = res.fitted, Rcpp::Named("objective") = res.objective,
      Rcpp::Named("convergence") = gpsvm_glue::convergence_to_r(res.status),
      Rcpp::Named("kernel_columns") = static_cast<double>(res.kernel_columns));
}
