// Gao, Gunn and Harris' (2002) section-4 iteration for mean-field SVR,
// kept beside EP for comparison (mfsvr_control(algorithm = "paper")): inner
// updates w_i += eta (F_i / G_i - w_i) of all weights at once from the
// cavity means <y_i>_i = (K w)_i - sigma_i^2 w_i, and every M inner steps an
// outer update of Sigma_i and the cavity variances sigma_i^2 (eq. 3.11).  The
// learning rate adapts as in Opper and Winther's algorithm (times 1.1 when
// the error sum_i (F_i/G_i - w_i)^2 fell, halved otherwise), since the fixed
// eta = 0.05 diverges on the paper's own example for C >= 2 (see
// ?gpsvm_corrections, item 8).  Its fixed point is EP's; the result is
// reported in the EP engine's terms (sites, cavities, evidence, posterior
// marginals), with the paper's own weights.
// Pure C++17 + Eigen: no R headers.
#ifndef GPSVM_MFSVR_PAPER_HPP
#define GPSVM_MFSVR_PAPER_HPP

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>

#include "ep_engine.hpp"
#include "ep_priors.hpp"

namespace gpsvm {

// The most inner steps per outer one (the paper uses M = 30): with the cap
// on outer iterations it bounds the work of a run, which is
// max_iter * inner * O(n^2).
constexpr int kMaxPaperInner = 10000;

struct MfsvrPaperControl {
  // No defaults here (see solver_status.hpp): mfsvr_control() holds them.
  double eta = kUnset;      // first learning rate, in (0, 1]
  int inner = 0;            // M, inner steps per outer one
  int max_iter = 0;         // cap on outer iterations
  double tol = kUnset;      // on max_i |F_i/G_i - w_i| / (1 + max |y|) and on sigma^2
  bool adaptive = true;     // eta x 1.1 / 2 as the error falls / rises
  std::uint32_t seed = 0;   // of the random starting weights

  // mfsvr_paper_fit() words one error for the four numbers
  template <class Self, class Visit>
  static void fields(Self& s, Visit&& v) {
    v("eta", s.eta, FieldRule{is_step, nullptr, 0.0, 1.0});
    v("inner", s.inner, FieldRule{is_at_least_one, nullptr, 1.0, kMaxPaperInner});
    v("max_iter", s.max_iter, rule::max_iter(nullptr));
    v("tol", s.tol, FieldRule{is_positive, nullptr, 0.0, kInf});
    v("adaptive_eta", s.adaptive, rule::flag);
    v("seed", s.seed, rule::seed);
  }
};

namespace mfsvr_paper_detail {

// The state of the iteration: weights w, cavity variances sigma_i^2 and the
// current learning rate.
struct State {
  Eigen::VectorXd w, sigma2;
  double eta = 0.0;
};

// Cavity means <y_i>_i = (K w)_i - sigma_i^2 w_i (eq. 3.7's argument).
inline Eigen::VectorXd cavity_means(const Eigen::MatrixXd& K, const State& s) {
  Eigen::VectorXd cav = K * s.w;
  cav -= s.sigma2.cwiseProduct(s.w);
  return cav;
}

// M inner steps on w with sigma^2 fixed; returns the last max_i |F_i/G_i - w_i|.
// Each outer update moves the fixed point of the inner iteration, so the
// error is compared within one inner cycle only.
template <class Likelihood>
double inner_steps(const Eigen::MatrixXd& K, const Eigen::VectorXd& targets, const Likelihood& lik,
                   const MfsvrPaperControl& control, const std::function<void()>& interrupt,
                   State& s) {
  const Eigen::Index n = K.rows();
  Eigen::VectorXd alpha(n);
  double previous_sq = std::numeric_limits<double>::infinity();
  double step = 0.0;
  InterruptPoll poll(interrupt);
  for (int it = 0; it < control.inner; ++it) {
    poll();
    const Eigen::VectorXd cav = cavity_means(K, s);
    for (Eigen::Index i = 0; i < n; ++i)
      alpha[i] = lik.moments(targets[i], cav[i], s.sigma2[i]).dlog_z;
    const Eigen::VectorXd delta = alpha - s.w;
    step = delta.cwiseAbs().maxCoeff();
    s.w += s.eta * delta;
    const double sq = delta.squaredNorm();  // Opper and Winther's error
    if (control.adaptive) {
      s.eta = sq < previous_sq ? std::min(1.0, s.eta * 1.1) : std::max(s.eta * 0.5, 1e-6);
      previous_sq = sq;
    }
  }
  return step;
}

// The sites (tau, nu) that the current weights and cavity variances imply.
template <class Likelihood>
void sites_of(const Eigen::MatrixXd& K, const Eigen::VectorXd& targets, const Likelihood& lik,
              const State& s, Eigen::VectorXd& tau, Eigen::VectorXd& nu) {
  const Eigen::VectorXd cav = cavity_means(K, s);
  for (Eigen::Index i = 0; i < K.rows(); ++i) {
    const SiteMoments mo = lik.moments(targets[i], cav[i], s.sigma2[i]);
    ep_detail::site_from_moments(mo, cav[i], s.sigma2[i], &tau[i], &nu[i]);
  }
}

// Outer update: Sigma_i from the curvature, then sigma_i^2 (eq. 3.11);
// returns the largest relative change of a sigma_i^2.
template <class Likelihood>
double outer_update(DensePrior& prior, const Eigen::MatrixXd& K, const Eigen::VectorXd& targets,
                    const Likelihood& lik, State& s, EpResult& r,
                    const std::function<void()>& interrupt) {
  const Eigen::Index n = K.rows();
  Eigen::VectorXd tau(n), nu(n);
  sites_of(K, targets, lik, s, tau, nu);
  prior.posterior(tau, nu, r, interrupt);
  ep_detail::floor_variances(r);
  double var_change = 0.0;
  for (Eigen::Index i = 0; i < n; ++i) {
    const double s2 = r.variance[i];
    const double denom = std::max(1.0 - tau[i] * s2, 1e-12);
    const double updated = s2 / denom;
    var_change = std::max(var_change, std::fabs(updated / s.sigma2[i] - 1.0));
    s.sigma2[i] = updated;
  }
  return var_change;
}

// The EP record at the final state: the sites reproduce the paper's weights
// at the fixed point, and the evidence and posterior marginals are computed
// from them; the weights and means reported are the paper's own.
template <class Likelihood>
void finish_record(DensePrior& prior, const Eigen::MatrixXd& K, const Eigen::VectorXd& targets,
                   const Likelihood& lik, const State& s, EpResult& r,
                   const std::function<void()>& interrupt) {
  const Eigen::Index n = K.rows();
  r.site_precision.resize(n);
  r.site_nu.resize(n);
  sites_of(K, targets, lik, s, r.site_precision, r.site_nu);
  ep_detail::refresh_posterior(prior, r, interrupt);
  ep_detail::add_cavities_and_evidence(targets, lik, r);
  r.weights = s.w;
  r.mean.noalias() = K * s.w;
}

}  // namespace mfsvr_paper_detail

template <class Likelihood>
EpResult mfsvr_paper_fit(const Eigen::MatrixXd& K, const Eigen::VectorXd& targets,
                         const Likelihood& lik, const MfsvrPaperControl& control,
                         const std::function<void()>& interrupt) {
  if (K.rows() != K.cols() || K.rows() != targets.size() || K.rows() < 1)
    throw std::invalid_argument("kernel matrix and targets differ in size or are empty");
  if (!K.allFinite() || !targets.allFinite())
    throw std::invalid_argument("kernel matrix and targets must be finite");
  if (!fields_ok(control) || control.inner > kMaxPaperInner)
    throw std::invalid_argument("the paper's iteration needs 'eta' in (0, 1], 'inner' in [1, " +
                                std::to_string(kMaxPaperInner) +
                                "], 'max_iter' >= 1 and 'tol' > 0");
  const Eigen::Index n = K.rows();
  namespace pd = mfsvr_paper_detail;
  pd::State s;
  std::mt19937 rng(control.seed);
  std::uniform_real_distribution<double> unif(-1e-3, 1e-3);
  s.w.resize(n);
  for (Eigen::Index i = 0; i < n; ++i) s.w[i] = unif(rng);
  s.sigma2 = K.diagonal();
  s.eta = control.eta;
  const double scale = targets.cwiseAbs().maxCoeff();  // size of the weights, for a relative test
  EpResult r;
  r.status.tol = control.tol;
  DensePrior prior(K);
  InterruptPoll poll(interrupt);
  for (int outer = 1; outer <= control.max_iter; ++outer) {
    poll();
    const double step = pd::inner_steps(K, targets, lik, control, interrupt, s);
    const double var_change = pd::outer_update(prior, K, targets, lik, s, r, interrupt);
    r.status.iterations = outer;
    r.status.change = std::max(step / (1.0 + scale), var_change);
    if (!std::isfinite(r.status.change)) {
      r.status.reason = "the iteration diverged (non-finite weights or variances)";
      break;
    }
    if (r.status.change < control.tol) {
      r.status.converged = true;
      break;
    }
  }
  pd::finish_record(prior, K, targets, lik, s, r, interrupt);
  return r;
}

}  // namespace gpsvm

#endif  // GPSVM_MFSVR_PAPER_HPP
