// The plain relevance vector machine (Tipping 2001, lambda = 0) by the fast
// marginal-likelihood algorithm of Tipping and Faul (2003), as derived here.
// The model and the posterior algebra are in rvm_posterior.hpp.
//
// With C the marginal covariance of y and C_-i the same without basis i, the
// marginal likelihood as a function of alpha_i alone is, up to a constant,
//   l(alpha_i) = log alpha_i - log(alpha_i + s_i) + q_i^2 / (alpha_i + s_i)
// (times 1/2), s_i = phi_i' C_-i^-1 phi_i, q_i = phi_i' C_-i^-1 y, maximised
// at alpha_i = s_i^2 / (q_i^2 - s_i) when q_i^2 > s_i and at alpha_i = Inf
// (basis absent, l = 0) otherwise.  With S_i, Q_i the same products with C^-1
// (Woodbury: S_i = beta phi'phi - beta^2 phi'H Sigma H'phi, Q_i = beta phi'y -
// beta (phi'H mu)), s_i = alpha S_i / (alpha - S_i), q_i = alpha Q_i /
// (alpha - S_i) for an active basis and s = S, q = Q for an inactive one.
// Each iteration takes the single add / re-estimate / delete step that
// raises the marginal likelihood most, then re-estimates the noise.
// Pure C++17 + Eigen: no R headers.
#ifndef GPSVM_RVM_FAST_HPP
#define GPSVM_RVM_FAST_HPP

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "kernels.hpp"
#include "rvm_posterior.hpp"

namespace gpsvm {

namespace rvm_fast_detail {

using namespace rvm_detail;

constexpr double kInf = std::numeric_limits<double>::infinity();

// The basis functions in the model: their columns of H, their alphas, and
// G = H' H_active ((n+1) x m), grown and shrunk column by column.
class ActiveSet {
 public:
  explicit ActiveSet(const MatrixXd& h) : h_(h), g_(h.cols(), 0) {}

  void add(Index j, double a) {
    active_.push_back(j);
    g_.conservativeResize(Eigen::NoChange, g_.cols() + 1);
    g_.col(g_.cols() - 1) = h_.transpose() * h_.col(j);
    alpha_.conservativeResize(alpha_.size() + 1);
    alpha_[alpha_.size() - 1] = a;
  }

  void remove(Index k) {  // position k in the active list
    const Index m = size();
    active_.erase(active_.begin() + k);
    for (Index c = k; c + 1 < m; ++c) {
      g_.col(c) = g_.col(c + 1);
      alpha_[c] = alpha_[c + 1];
    }
    g_.conservativeResize(Eigen::NoChange, m - 1);
    alpha_.conservativeResize(m - 1);
  }

  Index size() const { return static_cast<Index>(active_.size()); }
  const std::vector<Index>& columns() const { return active_; }
  const MatrixXd& g() const { return g_; }
  VectorXd& alpha() { return alpha_; }
  const VectorXd& alpha() const { return alpha_; }

  // The position of every column of H in the active list, or -1.
  std::vector<Index> positions() const {
    std::vector<Index> pos(static_cast<size_t>(h_.cols()), -1);
    for (size_t k = 0; k < active_.size(); ++k) pos[active_[k]] = static_cast<Index>(k);
    return pos;
  }

  // The posterior of the active weights at noise variance sigma2.
  Posterior posterior_at(const VectorXd& hty, const VectorXd& y, double sigma2) const {
    const MatrixXd hth = select_rows(g_, active_);  // H_active' H_active
    const VectorXd htya = select(hty, active_);
    const MatrixXd ha = select_cols(h_, active_);
    return posterior(hth, htya, nullptr, ha, y, alpha_, 0.0, 1.0 / sigma2);
  }

 private:
  const MatrixXd& h_;
  std::vector<Index> active_;
  MatrixXd g_;
  VectorXd alpha_;
};

inline double ell(double a, double s, double q) {
  return std::log(a) - std::log(a + s) + q * q / (a + s);
}

// The step that raises the marginal likelihood most, and what the scan saw.
struct Step {
  double gain = 0.0;
  Index column = -1;
  double alpha = 0.0;       // the new alpha of `column`; Inf deletes it
  bool structural = false;  // any add or delete still possible
  double change = 0.0;      // largest change of a kept log alpha
};

// Scans every basis function given S and Q (big_s, big_q).
inline Step best_step(const VectorXd& big_s, const VectorXd& big_q, const ActiveSet& set,
                      double prune_alpha) {
  const std::vector<Index> pos = set.positions();
  const VectorXd& alpha = set.alpha();
  Step best;
  for (Index i = 0; i < big_s.size(); ++i) {
    double s = big_s[i], q = big_q[i];
    const Index k = pos[i];
    if (k >= 0) {
      const double a = alpha[k];
      const double den = a - s;
      if (den > 0.0) {
        s = a * big_s[i] / den;
        q = a * big_q[i] / den;
      } else {  // rounding: fall back to the tiny-denominator limit
        s = kInf;
        q = 0.0;
      }
    }
    const double theta = q * q - s;
    double a_new = (theta > 0.0 && std::isfinite(s)) ? s * s / theta : kInf;
    if (a_new > prune_alpha) a_new = kInf;
    double gain = 0.0;
    if (k < 0) {
      if (!std::isfinite(a_new)) continue;
      gain = ell(a_new, s, q);
      best.structural = true;
    } else if (std::isfinite(a_new)) {
      gain = std::isfinite(s) ? ell(a_new, s, q) - ell(alpha[k], s, q) : 0.0;
      best.change = std::max(best.change, std::fabs(std::log(a_new / alpha[k])));
    } else if (i == 0) {
      // the bias is kept: park its alpha at the threshold
      a_new = prune_alpha;
      gain = std::isfinite(s) ? ell(a_new, s, q) - ell(alpha[k], s, q) : 0.0;
      best.change = std::max(best.change, std::fabs(std::log(a_new / alpha[k])));
    } else {
      gain = std::isfinite(s) ? -ell(alpha[k], s, q) : 1.0;
      best.structural = true;
    }
    if (gain > best.gain) {
      best.gain = gain;
      best.column = i;
      best.alpha = a_new;
    }
  }
  return best;
}

// The noise re-estimate sigma2 = rss / (n - sum_i gamma_i), gamma_i = 1 -
// alpha_i Sigma_ii (with lambda = 0, D = A^-1/2 and alpha_i Sigma_ii =
// [B^-1]_ii), at least min_sigma2.
inline double noise_update(const Posterior& post, Index active, Index n, double sigma2,
                           double min_sigma2) {
  const double gamma_sum = static_cast<double>(active) - post.Binv.diagonal().sum();
  const double dof = static_cast<double>(n) - gamma_sum;
  return dof > 0.0 ? std::max(post.rss / dof, min_sigma2) : sigma2;
}

inline void apply(const Step& step, ActiveSet& set) {
  if (step.column < 0) return;
  const Index k = set.positions()[step.column];
  if (k < 0) set.add(step.column, step.alpha);
  else if (std::isfinite(step.alpha)) set.alpha()[k] = step.alpha;
  else set.remove(k);
}

// The result at the final state, the active set in the order of its labels.
inline void fill_result(const ActiveSet& set, const Posterior& post, double sigma2,
                        const std::vector<Index>& label, RvmResult& res) {
  std::vector<Index> active = set.columns();
  for (Index& j : active) j = label[j];
  std::vector<Index> order(active.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = static_cast<Index>(k);
  std::sort(order.begin(), order.end(), [&](Index a, Index b) { return active[a] < active[b]; });
  const MatrixXd sigma = sigma_from(post);
  const size_t m = order.size();
  res.active.resize(m);
  res.mu.resize(m);
  res.alpha.resize(m);
  res.Sigma.resize(m, m);
  for (size_t a = 0; a < m; ++a) {
    res.active[a] = active[order[a]];
    res.mu[a] = post.mu[order[a]];
    res.alpha[a] = set.alpha()[order[a]];
    for (size_t b = 0; b < m; ++b) res.Sigma(a, b) = sigma(order[a], order[b]);
  }
  res.lambda = 0.0;
  res.sigma2 = sigma2;
  res.log_lik = post.log_lik;
}

}  // namespace rvm_fast_detail

// Stops when no basis function can enter or leave and alpha, sigma2 settle
// (change < tol); or when no step can raise the evidence by tol_evidence
// (e.g. the bias alone fitting constant targets, where alpha_0 is free); or
// when nothing can enter or leave and the evidence has stopped moving (two
// nearly collinear kept columns can trade weight for thousands of steps,
// each raising the evidence by ~1e-9).  `centres` (rows of x, 0-based)
// restricts the candidate basis functions to those inputs; nullptr: all.
// The memory is that of H, 8 n (m + 1) bytes for m candidates.
inline RvmResult rvm_fast_fit(const Kernel& kernel, const ConstMatrixRef& x, const ConstVectorRef& y_in,
                              const RvmControl& ctl, const std::function<void()>& interrupt,
                              const std::vector<Index>* centres = nullptr) {
  namespace fd = rvm_fast_detail;
  rvm_detail::check_data(x, y_in);
  rvm_detail::check_control(ctl);
  const KernelEvaluator ev(kernel, x);
  const Index n = ev.size();
  const double scale = rvm_detail::rms(y_in);
  const VectorXd y = y_in / scale;
  const MatrixXd h = centres ? rvm_detail::design(ev, *centres) : rvm_detail::design(ev);
  const VectorXd hty = h.transpose() * y;
  const VectorXd hh = h.colwise().squaredNorm().transpose();
  double sigma2 = rvm_detail::initial_noise(y, ctl);
  fd::ActiveSet set(h);
  {
    // start from the bias: alpha maximising l for it alone (C_-0 = sigma2 I)
    const double s = hh[0] / sigma2, q = hty[0] / sigma2;
    const double theta = q * q - s;
    set.add(0, theta > 0.0 ? std::min(s * s / theta, ctl.prune_alpha) : ctl.prune_alpha);
  }
  RvmResult res;
  res.status.tol = ctl.tol;
  for (int it = 1; it <= ctl.max_iter; ++it) {
    if (interrupt) interrupt();  // cheap next to the factorisations of each step
    const double beta = 1.0 / sigma2;
    const rvm_detail::Posterior post = set.posterior_at(hty, y, sigma2);
    res.trace_log_lik.push_back(post.log_lik);
    // S and Q for every basis function
    const MatrixXd gs = set.g() * rvm_detail::sigma_from(post);
    const VectorXd big_s =
        beta * hh - beta * beta * (gs.array() * set.g().array()).rowwise().sum().matrix();
    const VectorXd big_q = beta * hty - beta * (set.g() * post.mu);
    const fd::Step step = fd::best_step(big_s, big_q, set, ctl.prune_alpha);
    const double sigma2_new = fd::noise_update(post, set.size(), n, sigma2, ctl.min_sigma2);
    const double sigma_change = std::fabs(std::log(sigma2_new / sigma2));
    const double change = std::max(step.change, sigma_change);
    res.status.iterations = it;
    res.status.change = change;
    const bool flat = rvm_detail::evidence_flat(res.trace_log_lik, ctl.tol_evidence);
    if ((!step.structural && (change < ctl.tol || flat)) ||
        (step.gain < ctl.tol_evidence && sigma_change < ctl.tol)) {
      res.status.converged = true;
      if (!(change < ctl.tol)) {
        res.status.reason = flat ? rvm_detail::kEvidenceFlat
                                 : "no basis function can be added, removed or re-estimated "
                                   "with a gain above tol_evidence";
      }
      break;
    }
    fd::apply(step, set);
    sigma2 = sigma2_new;
  }
  fd::fill_result(set, set.posterior_at(hty, y, sigma2), sigma2,
                  rvm_detail::column_labels(h.cols(), centres), res);
  rvm_detail::unscale(res, scale, n);
  return res;
}

}  // namespace gpsvm

#endif  // GPSVM_RVM_FAST_HPP
