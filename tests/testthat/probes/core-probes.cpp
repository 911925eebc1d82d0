// Test-only access to pieces of the C++ core that no user-facing function
// exposes one at a time: the likelihoods' site moments and gradients, the EP
// engine on a given kernel matrix (either schedule, dense or low-rank, with
// Gaussian noise too), the paper's mean-field iteration, and the special
// functions.  The tests compile this file (helper-probes.R) against the
// installed package's headers; it is not part of the package.
// [[Rcpp::depends(RcppEigen, gpsvm)]]
// [[Rcpp::plugins(cpp17)]]
#include <RcppEigen.h>

#include <gpsvm/ep_priors.hpp>
#include <gpsvm/likelihoods.hpp>
#include <gpsvm/mfsvr_paper.hpp>
#include <gpsvm/special.hpp>

#include <string>

namespace {

// The EP engine's and the paper iteration's settings from a plain list with
// algorithm, schedule, max_iter, tol, damping, seed, eta, inner, adaptive_eta;
// first the fields both have.
template <class Control>
Control iteration_control(const Rcpp::List& c) {
  Control out;
  out.max_iter = Rcpp::as<int>(c["max_iter"]);
  out.tol = Rcpp::as<double>(c["tol"]);
  out.seed = Rcpp::as<int>(c["seed"]);
  return out;
}

gpsvm::EpControl ep_control(const Rcpp::List& c) {
  auto out = iteration_control<gpsvm::EpControl>(c);
  out.schedule = Rcpp::as<std::string>(c["schedule"]) == "sequential"
                     ? gpsvm::EpSchedule::sequential
                     : gpsvm::EpSchedule::parallel;
  out.damping = Rcpp::as<double>(c["damping"]);
  return out;
}

gpsvm::MfsvrPaperControl paper_control(const Rcpp::List& c) {
  auto out = iteration_control<gpsvm::MfsvrPaperControl>(c);
  out.eta = Rcpp::as<double>(c["eta"]);
  out.inner = Rcpp::as<int>(c["inner"]);
  out.adaptive = Rcpp::as<bool>(c["adaptive_eta"]);
  return out;
}

Rcpp::List ep_to_r(const gpsvm::EpResult& r) {
  return Rcpp::List::create(
      Rcpp::Named("weights") = r.weights, Rcpp::Named("site_precision") = r.site_precision,
      Rcpp::Named("site_nu") = r.site_nu, Rcpp::Named("mean") = r.mean,
      Rcpp::Named("variance") = r.variance, Rcpp::Named("log_evidence") = r.log_evidence,
      Rcpp::Named("iterations") = static_cast<int>(r.status.iterations),
      Rcpp::Named("converged") = r.status.converged, Rcpp::Named("change") = r.status.change);
}

// EP on the prior K = G G' (the low-rank prior with a zero diagonal).
template <class Likelihood>
gpsvm::EpResult ep_on_factor(const Eigen::MatrixXd& G, const Eigen::VectorXd& t,
                             const Likelihood& lik, const gpsvm::EpControl& control) {
  gpsvm::LowRankPrior prior(G, Eigen::VectorXd::Zero(G.rows()));
  return gpsvm::ep_run(prior, t, lik, control, nullptr);
}

// A site's log Z and its first two derivatives in the mean, into the first
// three columns of row i.
void put_moments(Rcpp::NumericMatrix& out, R_xlen_t i, const gpsvm::SiteMoments& mo) {
  out(i, 0) = mo.log_z;
  out(i, 1) = mo.dlog_z;
  out(i, 2) = mo.d2log_z;
}

}  // namespace

// The epsilon-insensitive likelihood's tilted moments, parameter gradient,
// predictive CDF and density, vectorised.
// [[Rcpp::export]]
Rcpp::NumericMatrix cpp_epsins(Rcpp::NumericVector t, Rcpp::NumericVector m,
                               Rcpp::NumericVector v, double C, double epsilon) {
  const gpsvm::EpsilonInsensitive lik(C, epsilon);
  Rcpp::NumericMatrix out(t.size(), 7);
  for (R_xlen_t i = 0; i < t.size(); ++i) {
    put_moments(out, i, lik.moments(t[i], m[i], v[i]));
    double dC, deps;
    lik.parameter_gradient(t[i], m[i], v[i], &dC, &deps);
    out(i, 3) = dC;
    out(i, 4) = deps;
    out(i, 5) = lik.predictive_cdf(t[i], m[i], v[i]);
    out(i, 6) = lik.predictive_density(t[i], m[i], v[i]);
  }
  Rcpp::colnames(out) =
      Rcpp::CharacterVector::create("log_z", "dlog_z", "d2log_z", "d_C", "d_eps", "cdf", "pdf");
  return out;
}

// The probit-with-flip likelihood's site moments, vectorised.
// [[Rcpp::export]]
Rcpp::NumericMatrix cpp_probit_flip_moments(Rcpp::NumericVector target, Rcpp::NumericVector mean,
                                            Rcpp::NumericVector var, double kappa, double noise) {
  const gpsvm::ProbitFlip lik(kappa, noise);
  Rcpp::NumericMatrix out(target.size(), 3);
  for (R_xlen_t i = 0; i < target.size(); ++i)
    put_moments(out, i, lik.moments(target[i], mean[i], var[i]));
  return out;
}

// EP with the epsilon-insensitive likelihood on a given kernel matrix K, or
// the paper's iteration.
// [[Rcpp::export]]
Rcpp::List cpp_ep_epsins(Eigen::Map<Eigen::MatrixXd> K, Eigen::Map<Eigen::VectorXd> y, double C,
                         double epsilon, Rcpp::List control) {
  const gpsvm::EpsilonInsensitive lik(C, epsilon);
  const Eigen::MatrixXd Km = K;
  const Eigen::VectorXd t = y;
  const std::function<void()> interrupt = [] { Rcpp::checkUserInterrupt(); };
  if (Rcpp::as<std::string>(control["algorithm"]) == "paper")
    return ep_to_r(gpsvm::mfsvr_paper_fit(Km, t, lik, paper_control(control), interrupt));
  return ep_to_r(gpsvm::ep_fit(Km, t, lik, ep_control(control), interrupt));
}

// EP with Gaussian noise (exact GP regression), dense or on a factor.
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
  return ep_to_r(low_rank ? ep_on_factor(Km, t, lik, control)
                          : gpsvm::ep_fit(Km, t, lik, control, nullptr));
}

// The special functions, vectorised; `y` is the second argument where there
// is one.
// [[Rcpp::export]]
Rcpp::NumericVector cpp_special(std::string name, Rcpp::NumericVector x, Rcpp::NumericVector y) {
  Rcpp::NumericVector out(x.size());
  for (R_xlen_t i = 0; i < x.size(); ++i) {
    const double a = x[i];
    if (name == "log_norm_cdf") out[i] = gpsvm::log_norm_cdf(a);
    else if (name == "mills_ratio") out[i] = gpsvm::mills_ratio(a);
    else if (name == "erfcx") out[i] = gpsvm::erfcx(a);
    else if (name == "log_erfc") out[i] = gpsvm::log_erfc(a);
    else if (name == "log_exp_erfc") out[i] = gpsvm::log_exp_erfc(a, y[i]);
    else if (name == "flip_mills_ratio") out[i] = gpsvm::flip_mills_ratio(a, y[i]);
    else if (name == "flip_mills_curvature") out[i] = gpsvm::flip_mills_curvature(a, y[i]);
    else Rcpp::stop("unknown special function '" + name + "'");
  }
  return out;
}
