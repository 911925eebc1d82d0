// Glue for the classifiers of Opper and Winther (2000): svc() (kernel
// adatron), gpc() (naive mean field) and their leave-one-out estimators.
// Converts, calls the core in inst/include/gpsvm/, wraps.  No algorithm here.
#include "gpsvm_glue.h"

#include <gpsvm/adatron.hpp>
#include <gpsvm/classifier.hpp>
#include <gpsvm/loo.hpp>
#include <gpsvm/naive_mf.hpp>

#include <vector>

// [[Rcpp::depends(RcppEigen)]]

namespace {


gpsvm::AdatronControl adatron_control(const Rcpp::List& control, double C) {
  gpsvm::AdatronControl c;
  c.C = C;
  c.ftol = Rcpp::as<double>(control["ftol"]);
  c.maxit = Rcpp::as<int>(control["maxit"]);
  return c;
}

gpsvm::NaiveMfControl naive_control(const Rcpp::List& control, double kappa) {
  gpsvm::NaiveMfControl c;
  c.kappa = kappa;
  c.ftol = Rcpp::as<double>(control["ftol"]);
  c.eta = Rcpp::as<double>(control["eta"]);
  c.maxit = Rcpp::as<int>(control["maxit"]);
  return c;
}

Eigen::VectorXd start_vector(const Rcpp::Nullable<Rcpp::NumericVector>& start) {
  if (start.isNull()) return Eigen::VectorXd();
  return Rcpp::as<Eigen::VectorXd>(start.get());
}

Rcpp::List status_list(const gpsvm::SolverStatus& s) {
  return Rcpp::List::create(Rcpp::Named("converged") = s.converged,
                            Rcpp::Named("iterations") = s.iterations,
                            Rcpp::Named("residual") = s.residual,
                            Rcpp::Named("tolerance") = s.tolerance);
}

std::vector<Eigen::Index> zero_based(const Rcpp::IntegerVector& which) {
  std::vector<Eigen::Index> out;
  out.reserve(which.size());
  for (int w : which) out.push_back(static_cast<Eigen::Index>(w) - 1);
  return out;
}

Rcpp::List refits_list(const gpsvm::LooRefits& r) {
  return Rcpp::List::create(Rcpp::Named("margins") = r.margin,
                            Rcpp::Named("iterations") = Rcpp::wrap(r.iterations),
                            Rcpp::Named("not_converged") = r.not_converged);
}

}  // namespace

// [[Rcpp::export]]
Eigen::MatrixXd cpp_noisy_gram(Rcpp::List kernel, Eigen::Map<Eigen::MatrixXd> x, double noise) {
  return gpsvm::noisy_gram(gpsvm_glue::kernel_from_r(kernel), x, noise);
}

// [[Rcpp::export]]
Rcpp::List cpp_svc_fit(Rcpp::List kernel, Eigen::Map<Eigen::MatrixXd> x, Eigen::Map<Eigen::VectorXd> y, double noise, double C,
                       Rcpp::List control, Rcpp::Nullable<Rcpp::NumericVector> start) {
  const Eigen::MatrixXd k = gpsvm::noisy_gram(gpsvm_glue::kernel_from_r(kernel), x, noise);
  const gpsvm::AdatronResult r = gpsvm::adatron_fit(
      k, y, adatron_control(control, C), start_vector(start), gpsvm_glue::interrupt_callback());
  return Rcpp::List::create(Rcpp::Named("alpha") = r.alpha, Rcpp::Named("field") = r.field,
                            Rcpp::Named("objective") = r.objective, Rcpp::Named("eta") = r.eta,
                            Rcpp::Named("status") = status_list(r.status));
}

// [[Rcpp::export]]
Rcpp::List cpp_gpc_naive_fit(Rcpp::List kernel, Eigen::Map<Eigen::MatrixXd> x, Eigen::Map<Eigen::VectorXd> y, double noise, double kappa,
                             Rcpp::List control, Rcpp::Nullable<Rcpp::NumericVector> start) {
  const Eigen::MatrixXd k = gpsvm::noisy_gram(gpsvm_glue::kernel_from_r(kernel), x, noise);
  const gpsvm::NaiveMfResult r =
      gpsvm::naive_mf_fit(k, y, naive_control(control, kappa), start_vector(start),
                          gpsvm_glue::interrupt_callback());
  return Rcpp::List::create(Rcpp::Named("alpha") = r.alpha, Rcpp::Named("field") = r.field,
                            Rcpp::Named("z") = r.z, Rcpp::Named("eta") = r.eta,
                            Rcpp::Named("status") = status_list(r.status));
}

// [[Rcpp::export]]
Eigen::VectorXd cpp_svc_loo_approx(Rcpp::List kernel, Eigen::Map<Eigen::MatrixXd> x, Eigen::Map<Eigen::VectorXd> y, double noise,
                                   Eigen::Map<Eigen::VectorXd> alpha, double C) {
  const Eigen::MatrixXd k = gpsvm::noisy_gram(gpsvm_glue::kernel_from_r(kernel), x, noise);
  return gpsvm::svc_loo_approx(k, y, alpha, C);
}

// [[Rcpp::export]]
Eigen::VectorXd cpp_gpc_naive_loo_approx(Rcpp::List kernel, Eigen::Map<Eigen::MatrixXd> x, Eigen::Map<Eigen::VectorXd> y, double noise,
                                         Eigen::Map<Eigen::VectorXd> alpha, double kappa) {
  const Eigen::MatrixXd k = gpsvm::noisy_gram(gpsvm_glue::kernel_from_r(kernel), x, noise);
  return gpsvm::naive_mf_loo_approx(k, y, alpha, kappa);
}

// [[Rcpp::export]]
Rcpp::List cpp_svc_loo_exact(Rcpp::List kernel, Eigen::Map<Eigen::MatrixXd> x, Eigen::Map<Eigen::VectorXd> y, double noise, Eigen::Map<Eigen::VectorXd> alpha,
                             double C, Rcpp::List control, Rcpp::IntegerVector which) {
  const Eigen::MatrixXd k = gpsvm::noisy_gram(gpsvm_glue::kernel_from_r(kernel), x, noise);
  return refits_list(gpsvm::svc_loo_exact(k, y, alpha, adatron_control(control, C),
                                          zero_based(which), gpsvm_glue::interrupt_callback()));
}

// [[Rcpp::export]]
Rcpp::List cpp_gpc_naive_loo_exact(Rcpp::List kernel, Eigen::Map<Eigen::MatrixXd> x, Eigen::Map<Eigen::VectorXd> y, double noise,
                                   Eigen::Map<Eigen::VectorXd> alpha, double kappa, Rcpp::List control,
                                   Rcpp::IntegerVector which) {
  const Eigen::MatrixXd k = gpsvm::noisy_gram(gpsvm_glue::kernel_from_r(kernel), x, noise);
  return refits_list(gpsvm::naive_mf_loo_exact(k, y, alpha, naive_control(control, kappa),
                                               zero_based(which),
                                               gpsvm_glue::interrupt_callback()));
}

// k(x_i, x_i) for each row of x: the prior variance of the latent function
// at new points, needed by the class probabilities.
// [[Rcpp::export]]
Eigen::VectorXd cpp_kernel_diagonal(Rcpp::List kernel, Eigen::Map<Eigen::MatrixXd> x) {
  return gpsvm::KernelEvaluator(gpsvm_glue::kernel_from_r(kernel), x).diagonal();
}
