// Glue for the relevance vector machines: convert, call the core, wrap.
#include "gpsvm_glue.h"

#include <gpsvm/rvm.hpp>

// [[Rcpp::depends(RcppEigen)]]

namespace {

gpsvm::RvmControl rvm_control_from_r(const Rcpp::List& c) {
  gpsvm::RvmControl out;
  out.max_iter = Rcpp::as<int>(c["max_iter"]);
  out.tol = Rcpp::as<double>(c["tol"]);
  out.tol_evidence = Rcpp::as<double>(c["tol_evidence"]);
  out.prune_alpha = Rcpp::as<double>(c["prune_alpha"]);
  out.min_alpha = Rcpp::as<double>(c["min_alpha"]);
  out.alpha_init = Rcpp::as<double>(c["alpha_init"]);
  out.lambda_init = Rcpp::as<double>(c["lambda_init"]);
  out.sigma2_init = Rcpp::as<double>(c["sigma2_init"]);
  out.min_sigma2 = Rcpp::as<double>(c["min_sigma2"]);
  out.learn_lambda = Rcpp::as<bool>(c["learn_lambda"]);
  out.learn_sigma2 = Rcpp::as<bool>(c["learn_sigma2"]);
  return out;
}

Rcpp::List rvm_result_to_r(const gpsvm::RvmResult& r) {
  Rcpp::IntegerVector active(r.active.size());
  for (size_t i = 0; i < r.active.size(); ++i) active[i] = static_cast<int>(r.active[i]);
  return Rcpp::List::create(
      Rcpp::Named("active") = active, Rcpp::Named("mu") = r.mu, Rcpp::Named("Sigma") = r.Sigma,
      Rcpp::Named("alpha") = r.alpha, Rcpp::Named("lambda") = r.lambda,
      Rcpp::Named("sigma2") = r.sigma2, Rcpp::Named("log_lik") = r.log_lik,
      Rcpp::Named("convergence") = gpsvm_glue::convergence_to_r(r.status),
      Rcpp::Named("trace_log_lik") = Rcpp::wrap(r.trace_log_lik));
}

}  // namespace

// [[Rcpp::export]]
Rcpp::List cpp_srvm_fit(Rcpp::List kernel, Eigen::Map<Eigen::MatrixXd> x,
                        Eigen::Map<Eigen::VectorXd> y, Eigen::Map<Eigen::MatrixXd> points,
                        Rcpp::IntegerVector orders, Rcpp::NumericVector weights,
                        Rcpp::List control) {
  try {
    gpsvm::RoughnessPenalty pen;
    pen.orders.assign(orders.begin(), orders.end());
    pen.weights.assign(weights.begin(), weights.end());
    const gpsvm::RvmResult r =
        gpsvm::srvm_fit(gpsvm_glue::kernel_from_r(kernel), x, y, points, pen,
                        rvm_control_from_r(control), gpsvm_glue::interrupt_callback());
    return rvm_result_to_r(r);
  } catch (const std::exception& e) {
    Rcpp::stop(e.what());
  }
}

// [[Rcpp::export]]
Rcpp::List cpp_rvm_fast_fit(Rcpp::List kernel, Eigen::Map<Eigen::MatrixXd> x,
                            Eigen::Map<Eigen::VectorXd> y, Rcpp::List control) {
  try {
    const gpsvm::RvmResult r =
        gpsvm::rvm_fast_fit(gpsvm_glue::kernel_from_r(kernel), x, y,
                            rvm_control_from_r(control), gpsvm_glue::interrupt_callback());
    return rvm_result_to_r(r);
  } catch (const std::exception& e) {
    Rcpp::stop(e.what());
  }
}
