// Glue for mean-field support vector regression: convert, call, wrap.
#include "gpsvm_glue.h"

#include <gpsvm/likelihoods.hpp>
#include <gpsvm/mfsvr.hpp>
#include <gpsvm/tap.hpp>

#include <algorithm>
#include <string>

// [[Rcpp::depends(RcppEigen)]]

namespace {

gpsvm::MfsvrControl control_from_r(const Rcpp::List& c) {
  gpsvm::MfsvrControl out;
  const std::string algorithm = Rcpp::as<std::string>(c["algorithm"]);
  out.algorithm = algorithm == "paper" ? gpsvm::MfsvrAlgorithm::paper : gpsvm::MfsvrAlgorithm::ep;
  out.ep = gpsvm_glue::ep_control_from_r(c);
  out.paper.eta = Rcpp::as<double>(c["eta"]);
  out.paper.inner = Rcpp::as<int>(c["inner"]);
  out.paper.max_outer = Rcpp::as<int>(c["max_iter"]);
  out.paper.tolerance = Rcpp::as<double>(c["tol"]);
  out.paper.adaptive = Rcpp::as<bool>(c["adaptive_eta"]);
  out.paper.seed = out.ep.seed;
  out.rank_tol = Rcpp::as<double>(c["rank_tol"]);
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
      Rcpp::Named("iterations") = r.sweeps, Rcpp::Named("converged") = r.converged,
      Rcpp::Named("change") = r.change, Rcpp::Named("final_step") = r.final_damping,
      Rcpp::Named("gradient") = Eigen::VectorXd(fit.gradient));
}

// [[Rcpp::export]]
Rcpp::List cpp_mfsvr_predict(Rcpp::List kernel, Eigen::Map<Eigen::MatrixXd> x,
                             Eigen::Map<Eigen::VectorXd> weights,
                             Eigen::Map<Eigen::VectorXd> site_precision,
                             Eigen::Map<Eigen::MatrixXd> chol, Eigen::Map<Eigen::MatrixXd> factor,
                             Eigen::Map<Eigen::MatrixXd> z, bool want_var, int deriv = 0,
                             int wrt = 1) {
  const gpsvm::Kernel k = gpsvm_glue::kernel_from_r(kernel);
  Eigen::VectorXd mean, var;
  gpsvm::mfsvr_predict(x, k, weights, site_precision, chol, factor, z, want_var, mean, var,
                       deriv, wrt - 1);
  if (!want_var) return Rcpp::List::create(Rcpp::Named("mean") = mean);
  return Rcpp::List::create(Rcpp::Named("mean") = mean, Rcpp::Named("var") = var);
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
          ? gpsvm::paper_fit(Km, t, lik, ctrl.paper, interrupt)
          : gpsvm::ep_fit(Km, t, lik, ctrl.ep, interrupt);
  return Rcpp::List::create(
      Rcpp::Named("weights") = r.weights, Rcpp::Named("site_precision") = r.site_precision,
      Rcpp::Named("site_nu") = r.site_nu, Rcpp::Named("mean") = r.mean,
      Rcpp::Named("variance") = r.variance, Rcpp::Named("log_evidence") = r.log_evidence,
      Rcpp::Named("iterations") = r.sweeps, Rcpp::Named("converged") = r.converged,
      Rcpp::Named("change") = r.change);
}

// The engine with Gaussian noise (exact GP regression), for the tests.
// [[Rcpp::export]]
Rcpp::List cpp_ep_gaussian(Eigen::Map<Eigen::MatrixXd> K, Eigen::Map<Eigen::VectorXd> y,
                           double noise_var, bool low_rank = false) {
  const gpsvm::GaussianNoise lik(noise_var);
  gpsvm::EpControl control;
  control.tolerance = 1e-12;
  const Eigen::MatrixXd Km = K;
  const Eigen::VectorXd t = y;
  const auto interrupt = gpsvm_glue::interrupt_callback();
  const gpsvm::EpResult r = low_rank ? gpsvm::ep_fit_low_rank(Km, t, lik, control, interrupt)
                                     : gpsvm::ep_fit(Km, t, lik, control, interrupt);
  return Rcpp::List::create(
      Rcpp::Named("weights") = r.weights, Rcpp::Named("mean") = r.mean,
      Rcpp::Named("variance") = r.variance, Rcpp::Named("log_evidence") = r.log_evidence,
      Rcpp::Named("iterations") = r.sweeps, Rcpp::Named("converged") = r.converged);
}
