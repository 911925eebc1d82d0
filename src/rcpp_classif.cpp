// Glue for the classifiers of Opper and Winther (2000): svc() (kernel
// adatron), gpc() (naive mean field) and their leave-one-out estimators.
// Converts, calls the core in inst/include/gpsvm/, wraps.  No algorithm here.
#include <gpsvm/adatron.hpp>
#include <gpsvm/classifier.hpp>
#include <gpsvm/ep_gradient.hpp>
#include <gpsvm/loo.hpp>
#include <gpsvm/naive_mf.hpp>
#include <gpsvm/tap_classifier.hpp>
#include <vector>

#include "gpsvm_glue.h"

// [[Rcpp::depends(RcppEigen)]]

namespace {

using gpsvm_glue::element;

gpsvm::AdatronControl adatron_control(const Rcpp::List& control, double C) {
  gpsvm::AdatronControl c;
  c.C = C;
  c.tol = gpsvm_glue::number_in(element(control, "tol"), "tol", 0.0, R_PosInf);
  c.max_iter = gpsvm_glue::int_in(element(control, "max_iter"), "max_iter", 1, gpsvm_glue::kMaxInt);
  return c;
}

gpsvm::NaiveMfControl naive_control(const Rcpp::List& control, double kappa) {
  gpsvm::NaiveMfControl c;
  c.kappa = kappa;
  c.tol = gpsvm_glue::number_in(element(control, "tol"), "tol", 0.0, R_PosInf);
  c.eta = gpsvm_glue::number_in(element(control, "eta"), "eta", 0.0, R_PosInf);
  c.max_iter = gpsvm_glue::int_in(element(control, "max_iter"), "max_iter", 0, gpsvm_glue::kMaxInt);
  return c;
}

gpsvm::EpControl ep_control(const Rcpp::List& control) {
  return gpsvm_glue::ep_control_from_r(control);
}

Eigen::VectorXd start_vector(const Rcpp::Nullable<Rcpp::NumericVector>& start) {
  if (start.isNull()) return Eigen::VectorXd();
  return Rcpp::as<Eigen::VectorXd>(start.get());
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
Rcpp::List cpp_svc_fit(Rcpp::List kernel, Eigen::Map<Eigen::MatrixXd> x,
                       Eigen::Map<Eigen::VectorXd> y, double noise, double C, Rcpp::List control,
                       Rcpp::Nullable<Rcpp::NumericVector> start) {
  const Eigen::MatrixXd k = gpsvm::noisy_gram(gpsvm_glue::kernel_from_r(kernel), x, noise);
  const gpsvm::AdatronResult r = gpsvm::adatron_fit(
      k, y, adatron_control(control, C), start_vector(start), gpsvm_glue::interrupt_callback());
  return Rcpp::List::create(Rcpp::Named("alpha") = r.alpha, Rcpp::Named("field") = r.field,
                            Rcpp::Named("objective") = r.objective, Rcpp::Named("eta") = r.eta,
                            Rcpp::Named("convergence") = gpsvm_glue::convergence_to_r(r.status));
}

// [[Rcpp::export]]
Rcpp::List cpp_gpc_naive_fit(Rcpp::List kernel, Eigen::Map<Eigen::MatrixXd> x,
                             Eigen::Map<Eigen::VectorXd> y, double noise, double kappa,
                             Rcpp::List control, Rcpp::Nullable<Rcpp::NumericVector> start) {
  const Eigen::MatrixXd k = gpsvm::noisy_gram(gpsvm_glue::kernel_from_r(kernel), x, noise);
  const gpsvm::NaiveMfResult r = gpsvm::naive_mf_fit(
      k, y, naive_control(control, kappa), start_vector(start), gpsvm_glue::interrupt_callback());
  return Rcpp::List::create(Rcpp::Named("alpha") = r.alpha, Rcpp::Named("field") = r.field,
                            Rcpp::Named("z") = r.z, Rcpp::Named("eta") = r.eta,
                            Rcpp::Named("convergence") = gpsvm_glue::convergence_to_r(r.status));
}

// [[Rcpp::export]]
Eigen::VectorXd cpp_svc_loo_approx(Rcpp::List kernel, Eigen::Map<Eigen::MatrixXd> x,
                                   Eigen::Map<Eigen::VectorXd> y, double noise,
                                   Eigen::Map<Eigen::VectorXd> alpha, double C) {
  const Eigen::MatrixXd k = gpsvm::noisy_gram(gpsvm_glue::kernel_from_r(kernel), x, noise);
  return gpsvm::svc_loo_approx(k, y, alpha, C);
}

// [[Rcpp::export]]
Eigen::VectorXd cpp_gpc_naive_loo_approx(Rcpp::List kernel, Eigen::Map<Eigen::MatrixXd> x,
                                         Eigen::Map<Eigen::VectorXd> y, double noise,
                                         Eigen::Map<Eigen::VectorXd> alpha, double kappa) {
  // the Gram matrix is the computation's workspace: passed as a temporary
  return gpsvm::naive_mf_loo_approx(
      gpsvm::noisy_gram(gpsvm_glue::kernel_from_r(kernel), x, noise), y, alpha, kappa);
}

// [[Rcpp::export]]
Rcpp::List cpp_svc_loo_exact(Rcpp::List kernel, Eigen::Map<Eigen::MatrixXd> x,
                             Eigen::Map<Eigen::VectorXd> y, double noise,
                             Eigen::Map<Eigen::VectorXd> alpha, double C, Rcpp::List control,
                             Rcpp::IntegerVector which) {
  const Eigen::MatrixXd k = gpsvm::noisy_gram(gpsvm_glue::kernel_from_r(kernel), x, noise);
  return refits_list(gpsvm::svc_loo_exact(k, y, alpha, adatron_control(control, C),
                                          zero_based(which), gpsvm_glue::interrupt_callback()));
}

// [[Rcpp::export]]
Rcpp::List cpp_gpc_naive_loo_exact(Rcpp::List kernel, Eigen::Map<Eigen::MatrixXd> x,
                                   Eigen::Map<Eigen::VectorXd> y, double noise,
                                   Eigen::Map<Eigen::VectorXd> alpha, double kappa,
                                   Rcpp::List control, Rcpp::IntegerVector which) {
  const Eigen::MatrixXd k = gpsvm::noisy_gram(gpsvm_glue::kernel_from_r(kernel), x, noise);
  return refits_list(gpsvm::naive_mf_loo_exact(k, y, alpha, naive_control(control, kappa),
                                               zero_based(which),
                                               gpsvm_glue::interrupt_callback()));
}

// With gradient = TRUE also d log Z_EP / d (log sigma, log noise, kappa) and
// the number of clamped sites (where that gradient is approximate);
// control may carry warm-start sites (start_precision, start_nu).
// [[Rcpp::export]]
Rcpp::List cpp_gpc_tap_fit(Rcpp::List kernel, Eigen::Map<Eigen::MatrixXd> x,
                           Eigen::Map<Eigen::VectorXd> y, double noise, double kappa,
                           Rcpp::List control, bool gradient = false) {
  const gpsvm::Kernel kern = gpsvm_glue::kernel_from_r(kernel);
  const Eigen::MatrixXd k = gpsvm::noisy_gram(kern, x, noise);
  const gpsvm::EpControl c = ep_control(control);
  const gpsvm::EpResult r =
      gpsvm::tap_classifier_fit(k, y, kappa, c, gpsvm_glue::interrupt_callback());
  const Eigen::VectorXd grad =
      gradient ? Eigen::VectorXd(gpsvm::tap_classifier_gradient(x, y, kern, noise, kappa, r))
               : Eigen::VectorXd();
  const int clamped = gradient ? gpsvm::ep_clamped_sites(gpsvm::ProbitFlip(kappa, 0.0), y, r) : 0;
  return Rcpp::List::create(
      Rcpp::Named("weights") = r.weights, Rcpp::Named("site_precision") = r.site_precision,
      Rcpp::Named("site_nu") = r.site_nu, Rcpp::Named("cavity_mean") = r.cavity_mean,
      Rcpp::Named("cavity_var") = r.cavity_var, Rcpp::Named("mean") = r.mean,
      Rcpp::Named("variance") = r.variance, Rcpp::Named("chol") = r.chol,
      Rcpp::Named("log_evidence") = r.log_evidence,
      Rcpp::Named("convergence") = gpsvm_glue::convergence_to_r(r.status),
      Rcpp::Named("gradient") = grad, Rcpp::Named("clamped_sites") = clamped);
}

// Refits warm-started from the full fit's sites (site_precision, site_nu),
// or from fresh sites when they are NULL.
// [[Rcpp::export]]
Rcpp::List cpp_gpc_tap_loo_exact(Rcpp::List kernel, Eigen::Map<Eigen::MatrixXd> x,
                                 Eigen::Map<Eigen::VectorXd> y, double noise, double kappa,
                                 Rcpp::List control, Rcpp::IntegerVector which,
                                 Rcpp::Nullable<Rcpp::NumericVector> site_precision,
                                 Rcpp::Nullable<Rcpp::NumericVector> site_nu) {
  const Eigen::MatrixXd k = gpsvm::noisy_gram(gpsvm_glue::kernel_from_r(kernel), x, noise);
  return refits_list(gpsvm::tap_loo_exact(k, y, kappa, ep_control(control),
                                          start_vector(site_precision), start_vector(site_nu),
                                          zero_based(which), gpsvm_glue::interrupt_callback()));
}

// Site moments of the probit-with-flip likelihood, for the tests.
// [[Rcpp::export]]
Rcpp::NumericMatrix cpp_probit_flip_moments(Rcpp::NumericVector target, Rcpp::NumericVector mean,
                                            Rcpp::NumericVector var, double kappa, double noise) {
  const gpsvm::ProbitFlip lik(kappa, noise);
  Rcpp::NumericMatrix out(target.size(), 3);
  for (R_xlen_t i = 0; i < target.size(); ++i) {
    const gpsvm::SiteMoments m = lik.moments(target[i], mean[i], var[i]);
    out(i, 0) = m.log_z;
    out(i, 1) = m.dlog_z;
    out(i, 2) = m.d2log_z;
  }
  return out;
}
