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
// raises the marginal likelihood most.  At fixed noise such a step changes
// one alpha, and the posterior and every S_i, Q_i follow by a rank-one
// update in O(n m) for m kept functions (Tipping and Faul 2003, appendix),
// where computing them afresh costs O(n m^2).  A new noise variance changes
// all of them, so it is re-estimated only when it would move by more than
// kNoiseMove, at every kNoiseEvery-th iteration, or when no alpha step is
// left; everything is computed afresh after it, which also keeps the
// rank-one updates from drifting.
// Pure C++17 + Eigen: no R headers.
#ifndef GPSVM_RVM_FAST_HPP
#define GPSVM_RVM_FAST_HPP

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "interrupt.hpp"
#include "kernels.hpp"
#include "rvm_posterior.hpp"

namespace gpsvm {

namespace rvm_fast_detail {

using namespace rvm_detail;

constexpr double kInf = std::numeric_limits<double>::infinity();

// Remove column, row or entry k; the later ones move up by one.
inline void erase_column(MatrixXd& m, Index k) {
  const Index later = m.cols() - k - 1;
  m.middleCols(k, later) = m.rightCols(later).eval();
  m.conservativeResize(Eigen::NoChange, m.cols() - 1);
}

inline void erase_row(MatrixXd& m, Index k) {
  const Index later = m.rows() - k - 1;
  m.middleRows(k, later) = m.bottomRows(later).eval();
  m.conservativeResize(m.rows() - 1, Eigen::NoChange);
}

inline void erase_entry(VectorXd& v, Index k) {
  const Index later = v.size() - k - 1;
  v.segment(k, later) = v.tail(later).eval();
  v.conservativeResize(v.size() - 1);
}

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
    active_.erase(active_.begin() + k);
    erase_column(g_, k);
    erase_entry(alpha_, k);
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

  // |y - H_active w|^2, without copying the active columns.
  double residual_ss(const VectorXd& y, const VectorXd& w) const {
    VectorXd r = y;
    for (size_t k = 0; k < active_.size(); ++k) r -= w[static_cast<Index>(k)] * h_.col(active_[k]);
    return r.squaredNorm();
  }

  // The posterior of the active weights at noise variance sigma2.
  Posterior posterior_at(const VectorXd& hty, const VectorXd& y, double sigma2,
                         const std::function<void()>& interrupt = nullptr) const {
    const MatrixXd hth = select_rows(g_, active_);  // H_active' H_active
    const VectorXd htya = select(hty, active_);
    const MatrixXd ha = select_cols(h_, active_);
    return posterior(hth, htya, nullptr, ha, y, alpha_, 0.0, 1.0 / sigma2, interrupt);
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
  bool drifted = false;     // a kept function's S_i >= alpha_i, impossible but for rounding
};

// Scans every basis function given S and Q (big_s, big_q) and the posterior
// variances and means of the kept weights (sigma_diag, mu).
//
// For a kept function, s_i and q_i follow from S_i and Q_i through alpha_i -
// S_i, which is alpha_i^2 Sigma_ii and so tiny beside S_i when the weight is
// well determined (s_i >> alpha_i).  S_i itself is a difference of two terms
// of order beta phi'phi, so there a rounding error of 1e-10 relative can
// make alpha_i - S_i negative.  The function is then dropped and re-enters
// with a large gain a few steps later: two nearly collinear columns can go
// out and back in until the fit stops at max_iter.  The identities Sigma_ii = 1 / (alpha_i + s_i) and mu_i = q_i
// Sigma_ii give s_i and q_i there without the cancellation; where s_i <
// alpha_i (a weight near pruning) 1 / Sigma_ii - alpha_i would cancel
// instead, and the S_i route is kept.
inline Step best_step(const VectorXd& big_s, const VectorXd& big_q, const VectorXd& sigma_diag,
                      const VectorXd& mu, const ActiveSet& set, double prune_alpha) {
  const std::vector<Index> pos = set.positions();
  const VectorXd& alpha = set.alpha();
  Step best;
  for (Index i = 0; i < big_s.size(); ++i) {
    double s = big_s[i], q = big_q[i];
    const Index k = pos[i];
    if (k >= 0 && alpha[k] * sigma_diag[k] < 0.5) {
      s = 1.0 / sigma_diag[k] - alpha[k];
      q = mu[k] / sigma_diag[k];
    } else if (k >= 0) {
      const double a = alpha[k];
      const double den = a - s;
      if (den > 0.0) {
        s = a * big_s[i] / den;
        q = a * big_q[i] / den;
      } else {  // rounding: fall back to the tiny-denominator limit
        s = kInf;
        q = 0.0;
        best.drifted = true;
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

// When to re-estimate the noise (above).  Tipping and Faul do it at every
// fifth iteration after a start; the relative move of 0.1% stands in for
// their start, and keeps the path near that of re-estimating it at every
// iteration, at a fraction of its cost (a re-estimate refactorises).  The
// convergence
// test looks at the noise re-estimate at every iteration, so a stale noise
// can delay the fit but never end it.
constexpr int kNoiseEvery = 5;
constexpr double kNoiseMove = 1e-3;  // on |log(sigma2_new / sigma2)|

// The posterior of the active weights at one noise variance, and S, Q of
// every column of H.
struct Moments {
  double beta = 0.0;
  MatrixXd sigma;  // posterior covariance of the active weights
  VectorXd mu;     // their posterior mean
  VectorXd big_s, big_q;
  double log_lik = 0.0;  // exact after moments_at(), then advanced by the steps' gains
};

// Whether the moments are still those of a posterior: finite, with every
// kept weight's variance positive and below its prior variance 1 / alpha.
// On a nearly singular problem (a tiny noise variance and nearly collinear
// columns) the rank-one updates below can lose this within a few steps, and
// then give NaN; the fit computes the moments afresh instead.
inline bool moments_sane(const Moments& mo, const VectorXd& alpha) {
  if (!std::isfinite(mo.log_lik) || !mo.mu.allFinite() || !mo.big_s.allFinite() ||
      !mo.big_q.allFinite())
    return false;
  for (Index k = 0; k < alpha.size(); ++k) {
    const double v = mo.sigma(k, k);
    if (!(v > 0.0) || !(alpha[k] * v < 1.0)) return false;
  }
  return true;
}

// Everything afresh: O(n m^2), the S_i in blocks of rows so that the
// interrupt is polled between them (n = 20000 candidates and m = 1000 kept
// functions are 2e10 flops).
inline Moments moments_at(const ActiveSet& set, const VectorXd& hty, const VectorXd& hh,
                          const VectorXd& y, double sigma2,
                          const std::function<void()>& interrupt = nullptr) {
  constexpr Index kRows = 256;
  const Posterior post = set.posterior_at(hty, y, sigma2, interrupt);
  Moments mo;
  mo.beta = 1.0 / sigma2;
  mo.sigma = sigma_from(post);
  mo.mu = post.mu;
  const MatrixXd& g = set.g();
  mo.big_s.resize(g.rows());
  InterruptPoll poll(interrupt);
  MatrixXd gs;
  for (Index i0 = 0; i0 < g.rows(); i0 += kRows) {
    poll();
    const Index r = std::min(kRows, g.rows() - i0);
    gs.noalias() = g.middleRows(i0, r) * mo.sigma;
    mo.big_s.segment(i0, r) =
        mo.beta * hh.segment(i0, r) -
        mo.beta * mo.beta * (gs.array() * g.middleRows(i0, r).array()).rowwise().sum().matrix();
  }
  mo.big_q = mo.beta * hty - mo.beta * (g * mo.mu);
  mo.log_lik = post.log_lik;
  return mo;
}

// Active weight k's prior precision changes by delta: Sigma' = Sigma - kappa
// Sigma_k Sigma_k' with kappa = delta / (1 + delta Sigma_kk), and kappa =
// 1 / Sigma_kk for delta = Inf (a deletion, after which weight k is exactly
// zero with zero variance).  With v = beta H' H_active Sigma_k,
// S' = S + kappa v^2 and Q' = Q + kappa mu_k v.
inline void shift_alpha(Moments& mo, const MatrixXd& g, Index k, double kappa) {
  const VectorXd sk = mo.sigma.col(k);
  const VectorXd v = mo.beta * (g * sk);
  const double mk = mo.mu[k];
  mo.big_s.array() += kappa * v.array().square();
  mo.big_q += (kappa * mk) * v;
  mo.mu -= (kappa * mk) * sk;
  mo.sigma.noalias() -= kappa * sk * sk.transpose();
}

// Removes row and column k of Sigma and entry k of mu.
inline void drop_weight(Moments& mo, Index k) {
  erase_column(mo.sigma, k);
  erase_row(mo.sigma, k);
  erase_entry(mo.mu, k);
}

// Column i enters with precision a; g is H' H_active with its column last.
// The new weight has variance 1 / (a + S_i) and mean Q_i / (a + S_i); with
// c = beta Sigma H_active' h_i and e = beta H' h_i - beta H' H_active c,
// S' = S - Sigma_ii e^2 and Q' = Q - mu_i e.
inline void add_weight(Moments& mo, const MatrixXd& g, Index i, double a) {
  const Index m = mo.mu.size();
  const auto g_old = g.leftCols(m);
  const double s_ii = 1.0 / (a + mo.big_s[i]);
  const double mu_i = s_ii * mo.big_q[i];
  const VectorXd c = mo.beta * (mo.sigma * g_old.row(i).transpose());
  const VectorXd e = mo.beta * (g.col(m) - g_old * c);
  mo.big_s.array() -= s_ii * e.array().square();
  mo.big_q -= mu_i * e;
  mo.sigma.noalias() += s_ii * c * c.transpose();
  mo.sigma.conservativeResize(m + 1, m + 1);
  mo.sigma.col(m).head(m) = -s_ii * c;
  mo.sigma.row(m).head(m) = -s_ii * c.transpose();
  mo.sigma(m, m) = s_ii;
  mo.mu -= mu_i * c;
  mo.mu.conservativeResize(m + 1);
  mo.mu[m] = mu_i;
}

// Takes the step in the set and follows it in the moments.
inline void apply(const Step& step, ActiveSet& set, Moments& mo) {
  if (step.column < 0) return;
  const Index k = set.positions()[step.column];
  if (k < 0) {
    set.add(step.column, step.alpha);
    add_weight(mo, set.g(), step.column, step.alpha);
  } else if (std::isfinite(step.alpha)) {
    const double delta = step.alpha - set.alpha()[k];
    shift_alpha(mo, set.g(), k, delta / (1.0 + delta * mo.sigma(k, k)));
    set.alpha()[k] = step.alpha;
  } else {
    shift_alpha(mo, set.g(), k, 1.0 / mo.sigma(k, k));
    drop_weight(mo, k);
    set.remove(k);
  }
  mo.log_lik += 0.5 * step.gain;  // the gain is on the scale of 2 log L
}

// The noise re-estimate sigma2 = rss / (n - sum_i gamma_i), gamma_i = 1 -
// alpha_i Sigma_ii, at least min_sigma2.
inline double noise_update(const Moments& mo, const ActiveSet& set, const VectorXd& y,
                           double sigma2, double min_sigma2) {
  const double gamma_sum =
      static_cast<double>(set.size()) - set.alpha().dot(mo.sigma.diagonal());
  const double dof = static_cast<double>(y.size()) - gamma_sum;
  return dof > 0.0 ? std::max(set.residual_ss(y, mo.mu) / dof, min_sigma2) : sigma2;
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

namespace rvm_fast_detail {

// The fit on a given design h = [bias, candidate columns] and targets y (in
// their units); the result's active set names columns of h.  Stops when no
// basis function can enter or leave and alpha, sigma2 settle (change <
// tol); or when no step can raise the evidence by tol_evidence (e.g. the
// bias alone fitting constant targets, where alpha_0 is free); or when
// nothing can enter or leave and the evidence has stopped moving (two
// nearly collinear kept columns can trade weight for thousands of steps,
// each raising the evidence by ~1e-9).
inline RvmResult fit_on_design(const MatrixXd& h, const VectorXd& y_in, const RvmControl& ctl,
                               const std::function<void()>& interrupt) {
  namespace fd = rvm_fast_detail;
  const Index n = h.rows();
  const double scale = rvm_detail::rms(y_in);
  const VectorXd y = y_in / scale;
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
  fd::Moments mo = fd::moments_at(set, hty, hh, y, sigma2, interrupt);
  bool noise_moved = true;  // whether the last iteration re-estimated the noise
  bool fresh = true;        // whether mo was computed afresh since the last step
  const auto refresh = [&]() {
    mo = fd::moments_at(set, hty, hh, y, sigma2, interrupt);
    fresh = true;
  };
  const auto scan = [&]() {
    return fd::best_step(mo.big_s, mo.big_q, mo.sigma.diagonal(), mo.mu, set, ctl.prune_alpha);
  };
  InterruptPoll poll(interrupt);
  for (int it = 1; it <= ctl.max_iter; ++it) {
    poll();
    if (!fresh && !fd::moments_sane(mo, set.alpha())) refresh();
    fd::Step step = scan();
    if (step.drifted && !fresh) {
      refresh();
      step = scan();
    }
    res.trace_log_lik.push_back(mo.log_lik);
    const double sigma2_new = fd::noise_update(mo, set, y, sigma2, ctl.min_sigma2);
    const double sigma_change = std::fabs(std::log(sigma2_new / sigma2));
    const double change = std::max(step.change, sigma_change);
    res.status.iterations = it;
    res.status.change = change;
    // a flat evidence counts only across a step that moved the noise too
    const bool flat = noise_moved && rvm_detail::evidence_flat(res.trace_log_lik, ctl.tol_evidence);
    if ((!step.structural && (change < ctl.tol || flat)) ||
        (step.gain <= ctl.tol_evidence && sigma_change < ctl.tol)) {
      res.status.converged = true;
      if (!(change < ctl.tol)) {
        res.status.reason = flat ? rvm_detail::kEvidenceFlat
                                 : "no basis function can be added, removed or re-estimated "
                                   "with a gain above tol_evidence";
      }
      break;
    }
    fd::apply(step, set, mo);
    fresh = false;
    noise_moved = it % fd::kNoiseEvery == 0 || step.column < 0 || sigma_change > fd::kNoiseMove;
    if (noise_moved) {
      sigma2 = sigma2_new;
      refresh();
    }
  }
  std::vector<Index> identity(static_cast<size_t>(h.cols()));
  for (Index j = 0; j < h.cols(); ++j) identity[j] = j;
  fd::fill_result(set, set.posterior_at(hty, y, sigma2, interrupt), sigma2, identity, res);
  rvm_detail::unscale(res, scale, n);
  return res;
}

// The result's columns of H as the labels the user sees (0 = bias, else 1
// + the training row of the centre), the kept weights reordered so that
// the labels increase (candidate centres may come in any order).
inline void relabel(RvmResult& res, Index columns, const std::vector<Index>* centres) {
  const std::vector<Index> label = rvm_detail::column_labels(columns, centres);
  const size_t m = res.active.size();
  std::vector<size_t> order(m);
  for (size_t k = 0; k < m; ++k) order[k] = k;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return label[res.active[a]] < label[res.active[b]]; });
  RvmResult out = res;
  for (size_t a = 0; a < m; ++a) {
    out.active[a] = label[res.active[order[a]]];
    out.mu[a] = res.mu[order[a]];
    out.alpha[a] = res.alpha[order[a]];
    for (size_t b = 0; b < m; ++b) out.Sigma(a, b) = res.Sigma(order[a], order[b]);
  }
  res = std::move(out);
}

}  // namespace rvm_fast_detail

// Tipping's RVM by the fast algorithm (see fit_on_design() for when it
// stops).  `centres` (rows of x, 0-based) restricts the candidate basis
// functions to those inputs; nullptr: all.  The memory is that of H,
// 8 n (m + 1) bytes for m candidates.
inline RvmResult rvm_fast_fit(const Kernel& kernel, const ConstMatrixRef& x, const ConstVectorRef& y_in,
                              const RvmControl& ctl, const std::function<void()>& interrupt,
                              const std::vector<Index>* centres = nullptr) {
  rvm_detail::check_data(x, y_in);
  rvm_detail::check_control(ctl);
  const KernelEvaluator ev(kernel, x);
  const MatrixXd h =
      centres ? rvm_detail::design(ev, *centres, interrupt) : rvm_detail::design(ev, interrupt);
  RvmResult res = rvm_fast_detail::fit_on_design(h, y_in, ctl, interrupt);
  rvm_fast_detail::relabel(res, h.cols(), centres);
  return res;
}

}  // namespace gpsvm

#endif  // GPSVM_RVM_FAST_HPP
