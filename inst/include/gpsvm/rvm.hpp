// Relevance vector machines: the smooth RVM of ter Borg and Rothkrantz (2005)
// and the plain RVM (Tipping 2001) by the fast marginal-likelihood algorithm
// (Tipping and Faul 2003).  Pure C++17 + Eigen: no R headers.
//
// Model: y = H w + e, e ~ N(0, sigma2 I), H = [1 K] (a bias column and one
// kernel column per training point), prior w ~ N(0, (lambda P + A)^-1) with
// A = diag(alpha) and P = L'L the roughness penalty matrix of a differential
// operator L = sum_n c_n D^n applied to the columns of H.
//
// Numerics.  Every inverse is a Cholesky factor of a matrix of the form
// I + (PSD), obtained by scaling with A^-1/2:
//   Sigma = A^-1/2 B^-1 A^-1/2,  B = I + A^-1/2 (beta H'H + lambda P) A^-1/2
//   S     = A^-1/2 C^-1 A^-1/2,  C = I + A^-1/2 (lambda P) A^-1/2
// so that neither the (numerically singular) lambda P + A nor 1/alpha is
// formed.  gamma_i = alpha_i (S_ii - Sigma_ii) = [C^-1]_ii - [B^-1]_ii, and
// log|sigma2 I + H S H'| = N log sigma2 + log|B| - log|C| (determinant lemma).
// The targets are divided by their root mean square before fitting, so the
// pruning threshold on alpha does not depend on the units of y; results are
// scaled back.
#ifndef GPSVM_RVM_HPP
#define GPSVM_RVM_HPP

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels.hpp"
#include "solver_status.hpp"

namespace gpsvm {

// L = sum_n weights[n] D^orders[n], in each input coordinate.
struct RoughnessPenalty {
  std::vector<int> orders;
  std::vector<double> weights;
};

// Settings of both fitters.  No defaults here (see solver_status.hpp):
// rvm_control() and srvm_control() hold them.
struct RvmControl {
  int max_iter = 0;
  double tol = kUnset;           // on max |change| of log alpha, log lambda, log sigma2
  double tol_evidence = kUnset;  // or: the log evidence moves less than this in a step
  double prune_alpha = kUnset;   // alpha above this (for RMS-scaled y) removes a basis function
  double sigma2_init = kUnset;   // initial noise variance as a fraction of var(y)
  double min_sigma2 = kUnset;    // floor of the noise variance (RMS-scaled y)
};

// The smooth RVM's further settings.
struct SrvmControl : RvmControl {
  double min_alpha = kUnset;     // floor of alpha (a weight left to the penalty alone)
  double alpha_init = kUnset;    // initial alpha (RMS-scaled y)
  double lambda_init = kUnset;   // initial lambda when it is learned, relative (see srvm_fit)
  std::optional<double> lambda;  // a fixed lambda in the units of y; empty: learn it
  std::optional<double> sigma2;  // a fixed noise variance in the units of y; empty: learn it
};

struct RvmResult {
  std::vector<Index> active;   // columns of H kept: 0 = bias, j = training point j - 1
  VectorXd mu;                 // posterior mean of the kept weights
  MatrixXd Sigma;              // posterior covariance of the kept weights
  VectorXd alpha;              // their ARD precisions
  double lambda = 0.0;
  double sigma2 = 0.0;
  double log_lik = 0.0;        // log marginal likelihood of y
  // change is the last largest change of a log hyperparameter
  SolverStatus status;
  std::vector<double> trace_log_lik;
};

namespace detail {

inline double rms(const VectorXd& y) {
  const double s = std::sqrt(y.squaredNorm() / static_cast<double>(y.size()));
  return (s > 0.0 && std::isfinite(s)) ? s : 1.0;
}

inline double variance(const VectorXd& y) {
  const double m = y.mean();
  return (y.array() - m).square().sum() / std::max<double>(1.0, y.size() - 1.0);
}

// The starting noise variance for RMS-scaled targets y: sigma2_init times
// their variance (1 when they have none), at least min_sigma2.
inline double initial_noise(const VectorXd& y, const RvmControl& ctl) {
  const double var_y = variance(y);
  return std::max(ctl.sigma2_init * (var_y > 0.0 ? var_y : 1.0), ctl.min_sigma2);
}

// The design H = [1 K] of the training inputs.
inline MatrixXd design(const KernelEvaluator& ev) {
  const Index n = ev.size();
  MatrixXd h(n, n + 1);
  h.col(0).setOnes();
  h.rightCols(n) = ev.gram();
  return h;
}

// Put the scaled results back in the units of y.
inline void unscale(RvmResult& r, double s, Index n) {
  r.mu *= s;
  r.Sigma *= s * s;
  r.alpha /= s * s;
  r.lambda /= s * s;
  r.sigma2 *= s * s;
  r.log_lik -= static_cast<double>(n) * std::log(s);
  for (double& v : r.trace_log_lik) v -= static_cast<double>(n) * std::log(s);
}

inline void check_data(const ConstMatrixRef& x, const ConstVectorRef& y) {
  if (x.rows() < 1) throw std::invalid_argument("no training data");
  if (y.size() != x.rows())
    throw std::invalid_argument("'y' must have one value per row of 'x'");
  if (!x.allFinite() || !y.allFinite())
    throw std::invalid_argument("'x' and 'y' must be finite");
}

inline void check_control(const RvmControl& c) {
  if (c.max_iter < 1) throw std::invalid_argument("'max_iter' must be >= 1");
  if (!(c.tol > 0.0)) throw std::invalid_argument("'tol' must be > 0");
  if (!(c.tol_evidence >= 0.0)) throw std::invalid_argument("'tol_evidence' must be >= 0");
  if (!(c.prune_alpha > 0.0)) throw std::invalid_argument("'prune_alpha' must be > 0");
  if (!(c.sigma2_init > 0.0)) throw std::invalid_argument("'sigma2_init' must be > 0");
  if (!(c.min_sigma2 > 0.0)) throw std::invalid_argument("'min_sigma2' must be > 0");
}

inline void check_control(const SrvmControl& c) {
  check_control(static_cast<const RvmControl&>(c));
  if (!(c.min_alpha > 0.0) || !(c.min_alpha < c.prune_alpha))
    throw std::invalid_argument("'min_alpha' must be > 0 and below 'prune_alpha'");
  if (!(c.alpha_init > 0.0)) throw std::invalid_argument("'alpha_init' must be > 0");
  if (!(c.lambda_init >= 0.0)) throw std::invalid_argument("'lambda_init' must be >= 0");
  if (c.lambda && !(*c.lambda >= 0.0 && std::isfinite(*c.lambda)))
    throw std::invalid_argument("a fixed 'lambda' must be finite and >= 0");
  if (c.sigma2 && !(*c.sigma2 > 0.0 && std::isfinite(*c.sigma2)))
    throw std::invalid_argument("a fixed 'sigma2' must be finite and > 0");
}

// Everything the updates need about the posterior at given hyperparameters,
// on the active columns only.  With Pi = lambda P + A the prior precision and
// the Jacobi scaling D = diag(alpha + lambda diag(P))^-1/2,
//   Pi~ = D Pi D (unit diagonal),  B = D (Pi + beta H'H) D = Pi~ + beta D H'H D,
//   S = D Pi~^-1 D,  Sigma = D B^-1 D.
// Both factorisations are of unit-diagonal SPD matrices, so neither a tiny
// alpha (a weight left to the penalty alone) nor a huge one (a weight on its
// way out) spoils them; 1/alpha is never formed.
struct Posterior {
  VectorXd mu;
  VectorXd d;          // the scaling D
  MatrixXd Binv;       // B^-1
  VectorXd pinv_diag;  // diag(Pi~^-1)
  double logdet_b = 0.0, logdet_pi = 0.0;
  double rss = 0.0;    // |y - H mu|^2
  double pen = 0.0;    // mu' P mu
  double trace_sigma_p = 0.0;  // tr(Sigma P)
  double log_lik = 0.0;
};

inline double logdet_from_llt(const Eigen::LLT<MatrixXd>& llt) {
  return 2.0 * llt.matrixLLT().diagonal().array().log().sum();
}

// Posterior given alpha (active), lambda, beta.  hth, hty, p are restricted
// to the active columns; h_active is the n x m design of those columns.
inline Posterior posterior(const MatrixXd& hth, const VectorXd& hty, const MatrixXd* p,
                           const MatrixXd& h_active, const VectorXd& y, const VectorXd& alpha,
                           double lambda, double beta) {
  const Index m = alpha.size();
  const bool penalised = p != nullptr && lambda > 0.0;
  Posterior out;
  VectorXd prior_diag = alpha;
  if (penalised) prior_diag += lambda * p->diagonal();
  out.d = prior_diag.array().rsqrt().matrix();
  const auto dd = out.d.asDiagonal();
  MatrixXd pi_s(m, m);
  if (penalised) {
    pi_s = lambda * (dd * (*p) * dd);
    pi_s.diagonal() = (alpha.array() * out.d.array().square() +
                       lambda * p->diagonal().array() * out.d.array().square()).matrix();
  } else {
    pi_s.setIdentity();
  }
  MatrixXd b = pi_s + beta * (dd * hth * dd);
  Eigen::LLT<MatrixXd> llt_b(b);
  if (llt_b.info() != Eigen::Success)
    throw std::runtime_error("Cholesky factorisation of the posterior precision failed");
  out.logdet_b = logdet_from_llt(llt_b);
  out.Binv = llt_b.solve(MatrixXd::Identity(m, m));
  // mu = beta Sigma H'y = beta D B^-1 D H'y
  out.mu = beta * (dd * llt_b.solve(dd * hty));
  if (penalised) {
    Eigen::LLT<MatrixXd> llt_p(pi_s);
    if (llt_p.info() != Eigen::Success)
      throw std::runtime_error("Cholesky factorisation of the prior precision failed");
    out.logdet_pi = logdet_from_llt(llt_p);
    // diag(Pi~^-1) = squared column norms of L^-1 (Pi~ = L L')
    const MatrixXd linv = llt_p.matrixL().solve(MatrixXd::Identity(m, m));
    out.pinv_diag = linv.colwise().squaredNorm().transpose();
    out.pen = out.mu.dot((*p) * out.mu);
    out.trace_sigma_p = ((dd * out.Binv * dd).array() * p->array()).sum();
  } else {
    out.pinv_diag = VectorXd::Ones(m);
    out.logdet_pi = 0.0;
    if (p != nullptr) out.pen = out.mu.dot((*p) * out.mu);
  }
  out.rss = (y - h_active * out.mu).squaredNorm();
  const double n = static_cast<double>(y.size());
  const double prior_quad =
      (penalised ? lambda * out.pen : 0.0) + (alpha.array() * out.mu.array().square()).sum();
  // log|sigma2 I + H Pi^-1 H'| = n log sigma2 + log|Pi + beta H'H| - log|Pi|
  //                            = n log sigma2 + log|B| - log|Pi~|
  out.log_lik = -0.5 * (n * std::log(2.0 * M_PI) - n * std::log(beta) + out.logdet_b -
                        out.logdet_pi + beta * out.rss + prior_quad);
  return out;
}

// A'A for a tall or square A, forming only one triangle (half the flops of
// a general product).
inline MatrixXd crossprod(const MatrixXd& a) {
  MatrixXd out = MatrixXd::Zero(a.cols(), a.cols());
  out.selfadjointView<Eigen::Lower>().rankUpdate(a.transpose());
  return out.selfadjointView<Eigen::Lower>();
}

inline MatrixXd select(const MatrixXd& m, const std::vector<Index>& idx) {
  MatrixXd out(idx.size(), idx.size());
  for (size_t j = 0; j < idx.size(); ++j)
    for (size_t i = 0; i < idx.size(); ++i) out(i, j) = m(idx[i], idx[j]);
  return out;
}

inline VectorXd select(const VectorXd& v, const std::vector<Index>& idx) {
  VectorXd out(idx.size());
  for (size_t i = 0; i < idx.size(); ++i) out[i] = v[idx[i]];
  return out;
}

inline MatrixXd select_rows(const MatrixXd& m, const std::vector<Index>& idx) {
  MatrixXd out(idx.size(), m.cols());
  for (size_t i = 0; i < idx.size(); ++i) out.row(i) = m.row(idx[i]);
  return out;
}

inline MatrixXd select_cols(const MatrixXd& m, const std::vector<Index>& idx) {
  MatrixXd out(m.rows(), idx.size());
  for (size_t j = 0; j < idx.size(); ++j) out.col(j) = m.col(idx[j]);
  return out;
}

inline MatrixXd sigma_from(const Posterior& post) {
  return post.d.asDiagonal() * post.Binv * post.d.asDiagonal();
}

}  // namespace detail

// The roughness operator applied to the design: the rows of L H evaluated at
// the penalty points z (m x d), stacked over the input coordinates, as an
// (m d) x (n + 1) matrix whose first column is the bias column.
inline MatrixXd roughness_design(const KernelEvaluator& ev, const ConstMatrixRef& z,
                                 const RoughnessPenalty& pen) {
  if (pen.orders.size() != pen.weights.size() || pen.orders.empty())
    throw std::invalid_argument("penalty 'orders' and 'weights' must have the same positive length");
  const Index m = z.rows(), n = ev.size(), dim = ev.dimension();
  MatrixXd out = MatrixXd::Zero(m * dim, n + 1);
  for (Index c = 0; c < dim; ++c) {
    for (size_t k = 0; k < pen.orders.size(); ++k) {
      const int order = pen.orders[k];
      if (order < 0) throw std::invalid_argument("penalty orders must be >= 0");
      out.block(c * m, 1, m, n) += pen.weights[k] * ev.cross(z, order, c);
      if (order == 0) out.block(c * m, 0, m, 1).array() += pen.weights[k];
    }
  }
  return out;
}

// Smooth RVM by the type-II maximum likelihood updates (7)-(9) of ter Borg
// and Rothkrantz, started from all n + 1 basis functions.  With
// a fixed lambda = 0 it is Tipping's (2001) RVM.
//
// When lambda is learned, lambda_init is relative: the starting lambda is
// lambda_init * tr(A) / tr(P), i.e. lambda_init times the value that gives
// the two parts of the prior precision equal traces, whatever the scale of
// the penalty.  A fixed lambda or sigma2 is given in the units of y.
inline RvmResult srvm_fit(const Kernel& kernel, const ConstMatrixRef& x, const ConstVectorRef& y_in,
                          const ConstMatrixRef& penalty_points, const RoughnessPenalty& pen,
                          const SrvmControl& ctl, const std::function<void()>& interrupt) {
  detail::check_data(x, y_in);
  detail::check_control(ctl);
  const KernelEvaluator ev(kernel, x);
  const Index n = ev.size();
  const double scale = detail::rms(y_in);
  const VectorXd y = y_in / scale;

  const MatrixXd h = detail::design(ev);
  const MatrixXd hth_full = detail::crossprod(h);
  const VectorXd hty_full = h.transpose() * y;
  const MatrixXd lh = roughness_design(ev, penalty_points, pen);
  const MatrixXd p_full = detail::crossprod(lh);

  std::vector<Index> active(n + 1);
  for (Index i = 0; i <= n; ++i) active[i] = i;
  VectorXd alpha = VectorXd::Constant(n + 1, ctl.alpha_init);
  double lambda = 0.0;
  const double tr_p = p_full.trace();
  if (ctl.lambda) {
    lambda = *ctl.lambda * scale * scale;  // the scaled targets' lambda
  } else if (ctl.lambda_init > 0.0 && tr_p > 0.0) {
    lambda = ctl.lambda_init * alpha.sum() / tr_p;
  }
  double sigma2 = ctl.sigma2 ? std::max(*ctl.sigma2 / (scale * scale), ctl.min_sigma2)
                            : detail::initial_noise(y, ctl);

  RvmResult res;
  res.status.tol = ctl.tol;
  for (int it = 1; it <= ctl.max_iter; ++it) {
    interrupt();  // cheap next to the factorisations of each step
    const MatrixXd hth = detail::select(hth_full, active);
    const VectorXd hty = detail::select(hty_full, active);
    const MatrixXd p = detail::select(p_full, active);
    const MatrixXd ha = detail::select_cols(h, active);
    const double beta = 1.0 / sigma2;
    const detail::Posterior post = detail::posterior(hth, hty, &p, ha, y, alpha, lambda, beta);
    res.trace_log_lik.push_back(post.log_lik);

    const Index m = static_cast<Index>(active.size());
    // gamma_i = alpha_i (S_ii - Sigma_ii) = alpha_i d_i^2 ([Pi~^-1]_ii - [B^-1]_ii) >= 0
    const VectorXd ad2 = (alpha.array() * post.d.array().square()).matrix();
    const VectorXd gamma =
        (ad2.array() * (post.pinv_diag - post.Binv.diagonal()).array()).cwiseMax(0.0).matrix();
    double change = 0.0;
    VectorXd alpha_new(m);
    for (Index i = 0; i < m; ++i) {
      const double mu2 = post.mu[i] * post.mu[i];
      double a = (mu2 > 0.0) ? gamma[i] / mu2 : std::numeric_limits<double>::infinity();
      if (std::isnan(a)) a = std::numeric_limits<double>::infinity();
      a = std::max(a, ctl.min_alpha);
      alpha_new[i] = a;
      // a weight past the pruning threshold leaves; it counts as converged
      if (!(a > ctl.prune_alpha)) change = std::max(change, std::fabs(std::log(a / alpha[i])));
    }
    double lambda_new = lambda;
    // tr(S A) = sum alpha_i S_ii; tr(S lambda P) = m - tr(S A)
    const double tr_sa = (ad2.array() * post.pinv_diag.array()).sum();
    const double tr_sigma_a = (ad2.array() * post.Binv.diagonal().array()).sum();
    const double tr_s_lp = static_cast<double>(m) - tr_sa;
    const double tr_sigma_lp = lambda * post.trace_sigma_p;
    if (!ctl.lambda && lambda > 0.0) {
      const double num = std::max(tr_s_lp - tr_sigma_lp, 0.0);
      lambda_new = (post.pen > 0.0) ? num / post.pen : lambda;
      if (!(lambda_new > 0.0) || !std::isfinite(lambda_new)) lambda_new = lambda * 1e-3;
      change = std::max(change, std::fabs(std::log(lambda_new / lambda)));
    }
    double sigma2_new = sigma2;
    if (!ctl.sigma2) {
      // tr(Sigma beta H'H) = m - tr(Sigma A) - tr(Sigma lambda P)
      const double well = static_cast<double>(m) - tr_sigma_a - tr_sigma_lp;
      const double dof = static_cast<double>(n) - well;
      sigma2_new = (dof > 0.0) ? post.rss / dof : sigma2;
      sigma2_new = std::max(sigma2_new, ctl.min_sigma2);
      change = std::max(change, std::fabs(std::log(sigma2_new / sigma2)));
    }
    res.status.iterations = it;
    res.status.change = change;

    // prune (never the bias, column 0)
    std::vector<Index> keep_active;
    std::vector<double> keep_alpha;
    for (Index i = 0; i < m; ++i) {
      if (active[i] == 0 || alpha_new[i] <= ctl.prune_alpha) {
        keep_active.push_back(active[i]);
        keep_alpha.push_back(std::min(alpha_new[i], ctl.prune_alpha));
      }
    }
    const bool pruned = keep_active.size() != active.size();
    active = keep_active;
    alpha = Eigen::Map<VectorXd>(keep_alpha.data(), keep_alpha.size());
    lambda = lambda_new;
    sigma2 = sigma2_new;
    // stop when the hyperparameters settle, or when the evidence no longer
    // moves: a weight whose alpha crawls towards the pruning threshold
    // (log alpha rising by ~1e-3 per step for thousands of steps) changes
    // neither the evidence nor the fit
    const size_t nt = res.trace_log_lik.size();
    const bool flat = nt >= 2 && std::fabs(res.trace_log_lik[nt - 1] - res.trace_log_lik[nt - 2]) <
                                     ctl.tol_evidence;
    if (!pruned && (change < ctl.tol || flat)) {
      res.status.converged = true;
      break;
    }
  }

  // the posterior at the final hyperparameters
  const MatrixXd hth = detail::select(hth_full, active);
  const VectorXd hty = detail::select(hty_full, active);
  const MatrixXd p = detail::select(p_full, active);
  const MatrixXd ha = detail::select_cols(h, active);
  const detail::Posterior post = detail::posterior(hth, hty, &p, ha, y, alpha, lambda, 1.0 / sigma2);
  res.active = active;
  res.mu = post.mu;
  res.Sigma = detail::sigma_from(post);
  res.alpha = alpha;
  res.lambda = lambda;
  res.sigma2 = sigma2;
  res.log_lik = post.log_lik;
  detail::unscale(res, scale, n);
  return res;
}

// Plain RVM (lambda = 0) by the fast marginal-likelihood algorithm of
// Tipping and Faul (2003), as derived here.  With C the marginal covariance
// of y and C_-i the same without basis i, the marginal likelihood as a
// function of alpha_i alone is, up to a constant,
//   l(alpha_i) = log alpha_i - log(alpha_i + s_i) + q_i^2 / (alpha_i + s_i)
// (times 1/2), s_i = phi_i' C_-i^-1 phi_i, q_i = phi_i' C_-i^-1 y, maximised
// at alpha_i = s_i^2 / (q_i^2 - s_i) when q_i^2 > s_i and at alpha_i = Inf
// (basis absent, l = 0) otherwise.  With S_i, Q_i the same products with C^-1
// (Woodbury: S_i = beta phi'phi - beta^2 phi'H Sigma H'phi, Q_i = beta phi'y -
// beta (phi'H mu)), s_i = alpha S_i / (alpha - S_i), q_i = alpha Q_i /
// (alpha - S_i) for an active basis and s = S, q = Q for an inactive one.
// Each iteration takes the single add / re-estimate / delete step that
// raises the marginal likelihood most, then re-estimates the noise.
inline RvmResult rvm_fast_fit(const Kernel& kernel, const ConstMatrixRef& x, const ConstVectorRef& y_in,
                              const RvmControl& ctl, const std::function<void()>& interrupt) {
  detail::check_data(x, y_in);
  detail::check_control(ctl);
  const KernelEvaluator ev(kernel, x);
  const Index n = ev.size();
  const double scale = detail::rms(y_in);
  const VectorXd y = y_in / scale;
  const MatrixXd h = detail::design(ev);  // n x (n + 1)
  const VectorXd hty = h.transpose() * y;
  const VectorXd hh = h.colwise().squaredNorm().transpose();
  double sigma2 = detail::initial_noise(y, ctl);

  // Active set: its columns of H, and G = H' H_active ((n+1) x m), grown
  // and shrunk column by column.
  std::vector<Index> active;
  std::vector<char> is_active(n + 1, 0);
  MatrixXd g(n + 1, 0);
  VectorXd alpha(0);
  auto add = [&](Index j, double a) {
    active.push_back(j);
    is_active[j] = 1;
    g.conservativeResize(Eigen::NoChange, g.cols() + 1);
    g.col(g.cols() - 1) = h.transpose() * h.col(j);
    alpha.conservativeResize(alpha.size() + 1);
    alpha[alpha.size() - 1] = a;
  };
  auto remove = [&](Index k) {  // position k in the active list
    is_active[active[k]] = 0;
    const Index m = static_cast<Index>(active.size());
    active.erase(active.begin() + k);
    for (Index c = k; c + 1 < m; ++c) {
      g.col(c) = g.col(c + 1);
      alpha[c] = alpha[c + 1];
    }
    g.conservativeResize(Eigen::NoChange, m - 1);
    alpha.conservativeResize(m - 1);
  };
  {
    // start from the bias: alpha maximising l for it alone (C_-0 = sigma2 I)
    const double s = hh[0] / sigma2, q = hty[0] / sigma2;
    const double theta = q * q - s;
    add(0, theta > 0.0 ? std::min(s * s / theta, ctl.prune_alpha) : ctl.prune_alpha);
  }

  auto ell = [](double a, double s, double q) {
    return std::log(a) - std::log(a + s) + q * q / (a + s);
  };

  RvmResult res;
  res.status.tol = ctl.tol;
  detail::Posterior post;
  for (int it = 1; it <= ctl.max_iter; ++it) {
    interrupt();  // cheap next to the factorisations of each step
    const double beta = 1.0 / sigma2;
    const MatrixXd hth = detail::select_rows(g, active);  // H_active' H_active
    const VectorXd htya = detail::select(hty, active);
    const MatrixXd ha = detail::select_cols(h, active);
    post = detail::posterior(hth, htya, nullptr, ha, y, alpha, 0.0, beta);
    res.trace_log_lik.push_back(post.log_lik);
    const MatrixXd sigma = detail::sigma_from(post);

    // S and Q for every basis function
    const MatrixXd gs = g * sigma;
    const VectorXd big_s = beta * hh - beta * beta * (gs.array() * g.array()).rowwise().sum().matrix();
    const VectorXd big_q = beta * hty - beta * (g * post.mu);

    std::vector<Index> pos(n + 1, -1);
    for (size_t k = 0; k < active.size(); ++k) pos[active[k]] = static_cast<Index>(k);

    double best_gain = 0.0;
    Index best = -1;
    double best_alpha = 0.0;
    bool structural = false;  // any add or delete still possible
    double change = 0.0;
    for (Index i = 0; i <= n; ++i) {
      double s = big_s[i], q = big_q[i];
      const Index k = pos[i];
      if (k >= 0) {
        const double a = alpha[k];
        const double den = a - s;
        if (den > 0.0) {
          s = a * big_s[i] / den;
          q = a * big_q[i] / den;
        } else {  // rounding: fall back to the tiny-denominator limit
          s = std::numeric_limits<double>::infinity();
          q = 0.0;
        }
      }
      const double theta = q * q - s;
      double a_new = (theta > 0.0 && std::isfinite(s)) ? s * s / theta
                                                      : std::numeric_limits<double>::infinity();
      if (a_new > ctl.prune_alpha) a_new = std::numeric_limits<double>::infinity();
      double gain = 0.0;
      if (k < 0) {
        if (!std::isfinite(a_new)) continue;
        gain = ell(a_new, s, q);
        structural = true;
      } else if (std::isfinite(a_new)) {
        gain = std::isfinite(s) ? ell(a_new, s, q) - ell(alpha[k], s, q) : 0.0;
        change = std::max(change, std::fabs(std::log(a_new / alpha[k])));
      } else if (i == 0) {
        // the bias is kept: park its alpha at the threshold
        a_new = ctl.prune_alpha;
        gain = std::isfinite(s) ? ell(a_new, s, q) - ell(alpha[k], s, q) : 0.0;
        change = std::max(change, std::fabs(std::log(a_new / alpha[k])));
      } else {
        gain = std::isfinite(s) ? -ell(alpha[k], s, q) : 1.0;
        structural = true;
      }
      if (gain > best_gain) {
        best_gain = gain;
        best = i;
        best_alpha = a_new;
      }
    }

    // gamma_i = 1 - alpha_i Sigma_ii
    const double gamma_sum = static_cast<double>(active.size()) - post.Binv.diagonal().sum();
    // (with lambda = 0, D = A^-1/2 and alpha_i Sigma_ii = [B^-1]_ii)
    const double dof = static_cast<double>(n) - gamma_sum;
    const double sigma2_new = dof > 0.0 ? std::max(post.rss / dof, ctl.min_sigma2) : sigma2;
    change = std::max(change, std::fabs(std::log(sigma2_new / sigma2)));
    res.status.iterations = it;
    res.status.change = change;
    // stop when no basis function can enter or leave and alpha, sigma2
    // settle, or when no step can raise the evidence by tol_evidence (e.g.
    // the bias alone fitting constant targets, where alpha_0 is free)
    const double sigma_change = std::fabs(std::log(sigma2_new / sigma2));
    // (or when nothing can enter or leave and the evidence has stopped
    // moving: two nearly collinear kept columns can trade weight for
    // thousands of steps, each raising the evidence by ~1e-9)
    const size_t nt = res.trace_log_lik.size();
    const bool flat = nt >= 2 && std::fabs(res.trace_log_lik[nt - 1] - res.trace_log_lik[nt - 2]) <
                                     ctl.tol_evidence;
    if ((!structural && (change < ctl.tol || flat)) ||
        (best_gain < ctl.tol_evidence && sigma_change < ctl.tol)) {
      res.status.converged = true;
      break;
    }
    if (best >= 0) {
      const Index k = pos[best];
      if (k < 0) add(best, best_alpha);
      else if (std::isfinite(best_alpha)) alpha[k] = best_alpha;
      else remove(k);
    }
    sigma2 = sigma2_new;
  }

  const MatrixXd hth = detail::select_rows(g, active);
  const VectorXd htya = detail::select(hty, active);
  const MatrixXd ha = detail::select_cols(h, active);
  post = detail::posterior(hth, htya, nullptr, ha, y, alpha, 0.0, 1.0 / sigma2);
  // report the active set in column order
  std::vector<Index> order(active.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = static_cast<Index>(k);
  std::sort(order.begin(), order.end(), [&](Index a, Index b) { return active[a] < active[b]; });
  const MatrixXd sigma = detail::sigma_from(post);
  res.active.resize(order.size());
  res.mu.resize(order.size());
  res.alpha.resize(order.size());
  res.Sigma.resize(order.size(), order.size());
  for (size_t a = 0; a < order.size(); ++a) {
    res.active[a] = active[order[a]];
    res.mu[a] = post.mu[order[a]];
    res.alpha[a] = alpha[order[a]];
    for (size_t b = 0; b < order.size(); ++b) res.Sigma(a, b) = sigma(order[a], order[b]);
  }
  res.lambda = 0.0;
  res.sigma2 = sigma2;
  res.log_lik = post.log_lik;
  detail::unscale(res, scale, n);
  return res;
}

}  // namespace gpsvm

#endif  // GPSVM_RVM_HPP
