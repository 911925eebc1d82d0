// Glue for mean-field support vector regression: convert, call, wrap.
#include "gpsvm_glue.h"

#include <gpsvm/likelihoods.hpp>
#include <gpsvm/mfsvr.hpp>
#include <gpsvm/ep_priors.hpp>

#include <algorithm>
#include <string>

// [[Rcpp::depends(RcppEigen)]]

namespace {

gpsvm::MfsvrControl control_from_r(const Rcpp::List& c) {
  using gpsvm_glue::element;
  gpsvm::MfsvrControl out;
  out.algorithm = gpsvm_glue::choice(element(c, "algorithm"), "algorithm", {"ep", "paper"}) == 1
                      ? gpsvm::MfsvrAlgorithm::paper
                      : gpsvm::MfsvrAlgorithm::ep;
  out.ep = gpsvm_glue::ep_control_from_r(c);
  out.paper.eta = gpsvm_glue::number_in(element(c, "eta"), "eta", 0.0, 1.0);
  out.paper.inner = gpsvm_glue::int_in(element(c, "inner"), "inner", 1, gpsvm_glue::kMaxInt);
  out.paper.max_iter = out.ep.max_iter;
  out.paper.tol = out.ep.tol;
  out.paper.adaptive = gpsvm_glue::flag(element(c, "adaptive_eta"), "adaptive_eta");
  out.paper.seed = out.ep.seed;
  out.rank_tol = gpsvm_glue::number_in(element(c, "rank_tol"), "rank_tol", 0.0, 1.0);
  return out;
}

}  // namespace

// [[Rcpp::export]]
Rcpp::List cpp_mfsvr_fit(Rcpp::List kernel, Eigen::Map<Eigen::MatrixXd> x,
                         Eigen::Map<Eigen::VectorXd> y, double C, double epsilon,
                         Rcpp::List control, bool gradient) {
  const gpsvm::Kernel k = gpsvm_glue::kernel_from_r(kernel);
  gpsvm::MfsvrControl ctrl = control_from_r(control);
  ctrl.gradient = gradient;
  const gpsvm::MfsvrFit fit =
      gpsvm::mfsvr_fit(x, y, k, C, epsilon, ctrl, gpsvm_glue::interrupt_callback());
  const gpsvm::EpResult& r = fit.ep;
  return Rcpp::List::create(
      Rcpp::Named("weights") = r.weights, Rcpp::Named("site_precision") = r.site_precision,
      Rcpp::Named("site_nu") = r.site_nu, Rcpp::Named("cavity_mean") = r.cavity_mean,
      Rcpp::Named("cavity_var") = r.cavity_var, Rcpp::Named("mean") = r.mean,
      Rcpp::Named("variance") = r.variance, Rcpp::Named("chol") = r.chol,
      Rcpp::Named("factor") = r.factor, Rcpp::Named("log_evidence") = r.log_evidence,
      Rcpp::Named("convergence") = gpsvm_glue::convergence_to_r(r.status),
      Rcpp::Named("gradient") = Eigen::VectorXd(fit.gradient));
}

// The likelihood's tilted moments, parameter gradient, predictive CDF and
// density, vectorised for the tests.
// [[Rcpp::export]]
Rcpp::NumericMatrix cpp_epsins(Rcpp::NumericVector t, Rcpp::NumericVector m,
                               Rcpp::NumericVector v, double C, double epsilon) {
  const gpsvm::EpsilonInsensitive lik(C, epsilon);
  Rcpp::NumericMatrix out(t.size(), 7);
  for (R_xlen_t i = 0; i < t.size(); ++i) {
    const gpsvm::SiteMoments mo = lik.moments(t[i], m[i], v[i]);
    double dC, deps;
    lik.parameter_gradient(t[i], m[i], v[i], &dC, &deps);
    out(i, 0) = mo.log_z;
    out(i, 1) = mo.dlog_z;
    out(i, 2) = mo.d2log_z;
    out(i, 3) = dC;
    out(i, 4) = deps;
    out(i, 5) = lik.predictive_cdf(t[i], m[i], v[i]);
    out(i, 6) = lik.predictive_density(t[i], m[i], v[i]);
  }
  Rcpp::colnames(out) =
      Rcpp::CharacterVector::create("log_z", "dlog_z", "d2log_z", "d_C", "d_eps", "cdf", "pdf");
  return out;
}

// The generic engine on a given kernel matrix K, or on a factor G with
// K = G G' when low_rank (tests compare schedules and representations).
// [[Rcpp::export]]
Rcpp::List cpp_ep_epsins(Eigen::Map<Eigen::MatrixXd> K, Eigen::Map<Eigen::VectorXd> y, double C,
                         double epsilon, Rcpp::List control, bool low_rank = false) {
  const gpsvm::EpsilonInsensitive lik(C, epsilon);
  const gpsvm::MfsvrControl ctrl = control_from_r(control);
  const Eigen::MatrixXd Km = K;
  const Eigen::VectorXd t = y;
  const auto interrupt = gpsvm_glue::interrupt_callback();
  const gpsvm::EpResult r =
      low_rank ? gpsvm::ep_fit_low_rank(Km, t, lik, ctrl.ep, interrupt)
      : ctrl.algorithm == gpsvm::MfsvrAlgorithm::paper
          ? gpsvm::mfsvr_paper_fit(Km, t, lik, ctrl.paper, interrupt).ep
          : gpsvm::ep_fit(Km, t, lik, ctrl.ep, interrupt);
  return Rcpp::List::create(
      Rcpp::Named("weights") = r.weights, Rcpp::Named("site_precision") = r.site_precision,
      Rcpp::Named("site_nu") = r.site_nu, Rcpp::Named("mean") = r.mean,
      Rcpp::Named("variance") = r.variance, Rcpp::Named("log_evidence") = r.log_evidence,
      Rcpp::Named("iterations") = r.status.iterations, Rcpp::Named("converged") = r.status.converged,
      Rcpp::Named("change") = r.status.change);
}

// The engine with Gaussian noise (exact GP regression), for the tests.
// [[Rcpp::export]]
Rcpp::List cpp_ep_gaussian(Eigen::Map<Eigen::MatrixXd> K, Eigen::Map<Eigen::VectorXd> y,
                           double noise_var, bool low_rank = false) {
  const gpsvm::GaussianNoise lik(noise_var);
  gpsvm::EpControl control;
  control.schedule = gpsvm::EpSchedule::parallel;
  control.max_iter = 500;
  control.tol = 1e-12;
  control.damping = 1.0;
  control.seed = 1;
  const Eigen::MatrixXd Km = K;
  const Eigen::VectorXd t = y;
  const auto interrupt = gpsvm_glue::interrupt_callback();
  const gpsvm::EpResult r = low_rank ? gpsvm::ep_fit_low_rank(Km, t, lik, control, interrupt)
                                     : gpsvm::ep_fit(Km, t, lik, control, interrupt);
  return Rcpp::List::create(
      Rcpp::Named("weights") = r.weights, Rcpp::Named("mean") = r.mean,
      Rcpp::Named("variance") = r.variance, Rcpp::Named("log_evidence") = r.log_evidence,
      Rcpp::Named("iterations") = r.status.iterations, Rcpp::Named("converged") = r.status.converged);
}
