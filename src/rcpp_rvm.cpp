// Glue for the relevance vector machines: convert, call the core, wrap.
#include "gpsvm_glue.h"

#include <gpsvm/rvm_fast.hpp>
#include <gpsvm/srvm.hpp>

#include <optional>

// [[Rcpp::depends(RcppEigen)]]

namespace {

using gpsvm_glue::element;
using gpsvm_glue::number_in;

// rvm_control()'s settings (shared by srvm_control()).
gpsvm::RvmControl rvm_control_from_r(const Rcpp::List& c) {
  gpsvm::RvmControl out;
  out.max_iter = gpsvm_glue::int_in(element(c, "max_iter"), "max_iter", 1, gpsvm_glue::kMaxInt);
  out.tol = number_in(element(c, "tol"), "tol", 0.0, R_PosInf);
  out.tol_evidence = number_in(element(c, "tol_evidence"), "tol_evidence", 0.0, R_PosInf);
  out.prune_alpha = number_in(element(c, "prune_alpha"), "prune_alpha", 0.0, R_PosInf);
  out.sigma2_init = number_in(element(c, "sigma2_init"), "sigma2_init", 0.0, R_PosInf);
  out.min_sigma2 = number_in(element(c, "min_sigma2"), "min_sigma2", 0.0, R_PosInf);
  return out;
}

// NULL (learn it) or a fixed value.
std::optional<double> fixed_from_r(const Rcpp::List& c, const char* name, double lower) {
  SEXP value = element(c, name);
  if (Rf_isNull(value)) return std::nullopt;
  return number_in(value, name, lower, R_PosInf);
}

// srvm_control()'s settings.
gpsvm::SrvmControl srvm_control_from_r(const Rcpp::List& c) {
  gpsvm::SrvmControl out;
  static_cast<gpsvm::RvmControl&>(out) = rvm_control_from_r(c);
  out.min_alpha = number_in(element(c, "min_alpha"), "min_alpha", 0.0, R_PosInf);
  out.alpha_init = number_in(element(c, "alpha_init"), "alpha_init", 0.0, R_PosInf);
  out.lambda_init = number_in(element(c, "lambda_init"), "lambda_init", 0.0, R_PosInf);
  out.lambda = fixed_from_r(c, "lambda", 0.0);
  out.sigma2 = fixed_from_r(c, "sigma2", 0.0);
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
                        srvm_control_from_r(control), gpsvm_glue::interrupt_callback());
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
