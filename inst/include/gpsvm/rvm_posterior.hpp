// Relevance vector machines, the pieces both fitters share: the model, the
// settings and result, and the posterior of the weights at given
// hyperparameters.  The fitters are in srvm.hpp (the smooth RVM of ter Borg
// and Rothkrantz 2005) and rvm_fast.hpp (Tipping's 2001 RVM by the fast
// marginal-likelihood algorithm of Tipping and Faul 2003).
// Pure C++17 + Eigen: no R headers.
//
// Model: y = H w + e, e ~ N(0, sigma2 I), H = [1 K] (a bias column and one
// kernel column per training point), prior w ~ N(0, (lambda P + A)^-1) with
// A = diag(alpha) and P = L'L the roughness penalty matrix of a differential
// operator L = sum_n c_n D^n applied to the columns of H (P = 0 for the
// plain RVM).  Only the columns still in the model (the active set) enter.
//
// Numerics.  Every inverse is a Cholesky factor of a unit-diagonal matrix,
// obtained by the Jacobi scaling D = diag(alpha + lambda diag(P))^-1/2 of the
// prior precision Pi = lambda P + A (see Posterior below):
//   Pi~ = D Pi D,  B = D (Pi + beta H'H) D = Pi~ + beta D H'H D,
//   S = Pi^-1 = D Pi~^-1 D,  Sigma = D B^-1 D,
// so that neither the (numerically singular) lambda P + A nor 1/alpha is
// formed; gamma_i = alpha_i (S_ii - Sigma_ii) = alpha_i d_i^2 ([Pi~^-1]_ii -
// [B^-1]_ii), and log|sigma2 I + H Pi^-1 H'| = n log sigma2 + log|B| -
// log|Pi~| (determinant lemma).  The targets are divided by their root mean
// square before fitting, so the pruning threshold on alpha does not depend on
// the units of y; results are scaled back.
#ifndef GPSVM_RVM_POSTERIOR_HPP
#define GPSVM_RVM_POSTERIOR_HPP

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <utility>
#include <stdexcept>
#include <vector>

#include "dense.hpp"
#include "interrupt.hpp"
#include "kernels.hpp"
#include "solver_status.hpp"
#include "special.hpp"

namespace gpsvm {

// Settings of both fitters.  No defaults here (see solver_status.hpp):
// rvm_control() and srvm_control() hold them.
struct RvmControl {
  int max_iter = 0;
  double tol = kUnset;           // on max |change| of log alpha, log lambda, log sigma2
  double tol_evidence = kUnset;  // or: the log evidence moves less than this in a step
  double prune_alpha = kUnset;   // alpha above this (for RMS-scaled y) removes a basis function
  double sigma2_init = kUnset;   // initial noise variance as a fraction of var(y)
  double min_sigma2 = kUnset;    // floor of the noise variance (RMS-scaled y)

  // The fields rvm() and srvm() share (SrvmControl's table starts with them).
  template <class Self, class Visit>
  static void shared_fields(Self& s, Visit&& v) {
    v("max_iter", s.max_iter, rule::max_iter("'{}' must be >= 1"));
    v("tol", s.tol, rule::above_zero);
    v("tol_evidence", s.tol_evidence, rule::at_least_zero);
    v("prune_alpha", s.prune_alpha, rule::above_zero);
    v("sigma2_init", s.sigma2_init, rule::above_zero);
    v("min_sigma2", s.min_sigma2, rule::above_zero);
  }
  // rvm()'s: the shared fields, then those the RVM alone reads.
  template <class Self, class Visit>
  static void fields(Self& s, Visit&& v) {
    shared_fields(s, v);
  }
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

namespace rvm_detail {


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

// The design of n rows on m candidate centres, n x (m + 1), its first
// column (the bias's) set to ones.  It is held with about its size again in
// the products the fits form from it (H'H and G = H'H_active of the fast
// algorithm, the penalty): refused before it is formed when they do not fit.
inline MatrixXd design_with_bias(Index n, Index m) {
  require_matrices(static_cast<double>(n), static_cast<double>(m + 1), 2.0,
                   "the " + std::to_string(n) + " x " + std::to_string(m + 1) +
                       " design of the relevance vector machine");
  MatrixXd h(n, m + 1);
  h.col(0).setOnes();
  return h;
}

// The design H = [1 K] of the training inputs, filled in place: assigning
// ev.gram() would hold a second n x n matrix at the peak (16 n^2 bytes in
// all instead of 8 n^2).  Same values as gram(): each k(x_i, x_j) is
// evaluated once and mirrored.  The interrupt is polled once per column.
inline MatrixXd design(const KernelEvaluator& ev,
                       const std::function<void()>& interrupt = nullptr) {
  const Index n = ev.size();
  MatrixXd h = design_with_bias(n, n);
  InterruptPoll poll(interrupt);
  for (Index j = 0; j < n; ++j) {
    poll();
    for (Index i = 0; i <= j; ++i) {
      const double v = ev(i, j);
      h(i, j + 1) = v;
      h(j, i + 1) = v;
    }
  }
  return h;
}

// The design H = [1 K(X, X_c)] on the candidate centres X_c (rows
// `centres` of the training inputs): n x (m + 1) instead of n x (n + 1),
// which is what lets rvm() run at large n.
inline MatrixXd design(const KernelEvaluator& ev, const std::vector<Index>& centres,
                       const std::function<void()>& interrupt = nullptr) {
  const Index n = ev.size();
  const Index m = static_cast<Index>(centres.size());
  MatrixXd h = design_with_bias(n, m);
  InterruptPoll poll(interrupt);
  for (Index c = 0; c < m; ++c) {
    poll();
    if (centres[c] < 0 || centres[c] >= n)
      throw std::invalid_argument("a basis centre is not a row of 'x'");
    ev.column(centres[c], h.col(c + 1).data());
  }
  return h;
}

// What the result calls column j of H: 0 for the bias, else 1 + the
// training row of its centre (every row, or the candidate `centres`).
inline std::vector<Index> column_labels(Index columns, const std::vector<Index>* centres) {
  std::vector<Index> label(static_cast<size_t>(columns));
  for (Index j = 0; j < columns; ++j)
    label[j] = (j == 0 || centres == nullptr) ? j : (*centres)[j - 1] + 1;
  return label;
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
  check_fields(c);
}


// Everything the updates need about the posterior at given hyperparameters,
// on the active columns only.  With Pi = lambda P + A the prior precision and
// the Jacobi scaling D = diag(alpha + lambda diag(P))^-1/2,
//   Pi~ = D Pi D (unit diagonal),  B = D (Pi + beta H'H) D = Pi~ + beta D H'H D,
//   S = D Pi~^-1 D,  Sigma = D B^-1 D.
// Both factorisations are of unit-diagonal SPD matrices, so neither a tiny
// alpha (a weight left to the penalty alone) nor a huge one (a weight on its
// way out) spoils them; 1/alpha is never formed.  B^-1 whole is formed only
// when asked (the fit's covariance); the updates need its diagonal and
// tr(Sigma P) alone, which come from blocks of columns of L^-1 (L the factor
// of B) without forming it (inverse_column_norms() in dense.hpp).
struct Posterior {
  VectorXd mu;
  VectorXd d;          // the scaling D
  MatrixXd Binv;       // B^-1, when asked for; else empty
  VectorXd binv_diag;  // diag(B^-1)
  VectorXd pinv_diag;  // diag(Pi~^-1)
  double logdet_b = 0.0, logdet_pi = 0.0;
  double rss = 0.0;    // |y - H mu|^2
  double pen = 0.0;    // mu' P mu
  double trace_sigma_p = 0.0;  // tr(Sigma P)
  double log_lik = 0.0;
};

// The scaled prior precision Pi~ = D (lambda P + A) D, unit diagonal, and
// the scaling D itself (in post.d).
inline MatrixXd scaled_prior_precision(const MatrixXd* p, const VectorXd& alpha, double lambda,
                                       bool penalised, Posterior& post) {
  const Index m = alpha.size();
  VectorXd prior_diag = alpha;
  if (penalised) prior_diag += lambda * p->diagonal();
  post.d = prior_diag.array().rsqrt().matrix();
  MatrixXd pi_s(m, m);
  if (penalised) {
    const auto dd = post.d.asDiagonal();
    pi_s = lambda * (dd * (*p) * dd);
    pi_s.diagonal() = (alpha.array() * post.d.array().square() +
                       lambda * p->diagonal().array() * post.d.array().square()).matrix();
  } else {
    pi_s.setIdentity();
  }
  return pi_s;
}

// The penalty's share of the posterior: log|Pi~|, diag(Pi~^-1), mu' P mu and
// tr(Sigma P), from the factor chol_b of B.  Since lambda D P D = Pi~ - D A D,
//   lambda tr(Sigma P) = tr(B^-1 Pi~) - sum_i alpha_i d_i^2 [B^-1]_ii,
// and tr(B^-1 Pi~) = |L_B^-1 L_Pi|_F^2 for the factor L_Pi of Pi~; its
// rounding, about 1e-16 m in absolute terms, is that of m - tr(S A), which
// the lambda update subtracts it from.
inline void penalty_terms(MatrixXd pi_s, const MatrixXd& p, const MatrixXd& chol_b,
                          const VectorXd& alpha, double lambda, Posterior& post,
                          const std::function<void()>& interrupt) {
  if (!cholesky_in_place(pi_s, interrupt))
    throw std::runtime_error("Cholesky factorisation of the prior precision failed");
  post.logdet_pi = cholesky_logdet(pi_s);
  post.pinv_diag = inverse_diagonal_from_cholesky(pi_s, interrupt);
  post.pen = post.mu.dot(p * post.mu);
  const double trace_b_pi = inverse_column_norms(chol_b, &pi_s, interrupt).col(1).sum();
  const double trace_b_a =
      (alpha.array() * post.d.array().square() * post.binv_diag.array()).sum();
  post.trace_sigma_p = (trace_b_pi - trace_b_a) / lambda;
}

// Posterior given alpha (active), lambda, beta.  hth, hty, p are restricted
// to the active columns; h_active is the n x m design of those columns; p
// is null for the plain RVM.  B^-1 whole (Binv) only with `covariance`.
// The factorisations poll the interrupt (dense.hpp): a posterior is O(m^3)
// flops, too long at thousands of kept functions for one Eigen call.
inline Posterior posterior(const MatrixXd& hth, const VectorXd& hty, const MatrixXd* p,
                           const MatrixXd& h_active, const VectorXd& y, const VectorXd& alpha,
                           double lambda, double beta,
                           const std::function<void()>& interrupt = nullptr,
                           bool covariance = true) {
  const Index m = alpha.size();
  const bool penalised = p != nullptr && lambda > 0.0;
  Posterior out;
  const MatrixXd pi_s = scaled_prior_precision(p, alpha, lambda, penalised, out);
  const auto dd = out.d.asDiagonal();
  MatrixXd chol_b = pi_s + beta * (dd * hth * dd);
  if (!cholesky_in_place(chol_b, interrupt))
    throw std::runtime_error("Cholesky factorisation of the posterior precision failed");
  out.logdet_b = cholesky_logdet(chol_b);
  if (covariance) {
    out.Binv = inverse_from_cholesky(chol_b, interrupt);
    out.binv_diag = out.Binv.diagonal();
  } else {
    out.binv_diag = inverse_diagonal_from_cholesky(chol_b, interrupt);
  }
  // mu = beta Sigma H'y = beta D B^-1 D H'y
  const auto l = chol_b.triangularView<Eigen::Lower>();
  out.mu = beta * (dd * l.adjoint().solve(l.solve(dd * hty)));
  if (penalised) {
    penalty_terms(pi_s, *p, chol_b, alpha, lambda, out, interrupt);
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
  out.log_lik = -0.5 * (2.0 * n * kLogSqrt2Pi - n * std::log(beta) + out.logdet_b -
                        out.logdet_pi + beta * out.rss + prior_quad);
  return out;
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

// Whether the log evidence moved less than tol_evidence in the last step.
inline bool evidence_flat(const std::vector<double>& trace, double tol_evidence) {
  const size_t nt = trace.size();
  return nt >= 2 && std::fabs(trace[nt - 1] - trace[nt - 2]) < tol_evidence;
}

// The reason an RVM fit converged with its change still above tol.
inline constexpr const char* kEvidenceFlat =
    "the log evidence changed by less than tol_evidence in the last iteration";

inline MatrixXd sigma_from(const Posterior& post) {
  return post.d.asDiagonal() * post.Binv * post.d.asDiagonal();
}

// The log evidence at given hyperparameters and its gradient in their logs,
// for the curvature behind confint(): the kept weights' alphas, the noise
// variance sigma2 and (penalised) lambda.  With M = Pi^-1 - Sigma - mu mu'
// (Pi the prior precision, Sigma the posterior covariance):
//   dL/dlog alpha_i = alpha_i M_ii / 2,
//   dL/dlog sigma2  = (rss / sigma2 - n + tr(Sigma H'H) / sigma2) / 2,
//   dL/dlog lambda  = lambda tr(M P) / 2,
// all from the Jacobi-scaled factors of posterior() (Pi^-1 = D Pi~^-1 D,
// Sigma = D B^-1 D), never an inverse of the unscaled precision.
struct EvidenceGradient {
  double value = 0.0;
  VectorXd log_alpha;  // one per kept weight
  double log_sigma2 = 0.0;
  double log_lambda = 0.0;
};

inline EvidenceGradient evidence_gradient(const MatrixXd& design, const VectorXd& y,
                                          const MatrixXd* p, const VectorXd& alpha, double lambda,
                                          double sigma2,
                                          const std::function<void()>& interrupt = nullptr) {
  if (design.rows() != y.size() || design.cols() != alpha.size() ||
      (p != nullptr && (p->rows() != alpha.size() || p->cols() != alpha.size())))
    throw std::invalid_argument("evidence_gradient: the design, y, alpha and penalty disagree");
  if (!(sigma2 > 0.0) || !(lambda >= 0.0) || !((alpha.array() > 0.0).all()))
    throw std::invalid_argument("evidence_gradient: sigma2 and alpha must be positive, lambda >= 0");
  const MatrixXd hth = crossprod(design, interrupt);
  const VectorXd hty = design.transpose() * y;
  const Posterior post = posterior(hth, hty, p, design, y, alpha, lambda, 1.0 / sigma2, interrupt);
  const bool penalised = p != nullptr && lambda > 0.0;
  const auto dd = post.d.asDiagonal();
  const MatrixXd sigma = dd * post.Binv * dd;
  EvidenceGradient g;
  g.value = post.log_lik;
  const VectorXd d2 = post.d.array().square();
  const VectorXd m_diag = (d2.array() * (post.pinv_diag.array() - post.Binv.diagonal().array()) -
                           post.mu.array().square()).matrix();
  g.log_alpha = (0.5 * alpha.array() * m_diag.array()).matrix();
  const double n = static_cast<double>(y.size());
  g.log_sigma2 = 0.5 * (post.rss / sigma2 - n + (sigma.array() * hth.array()).sum() / sigma2);
  if (penalised) {
    // tr(Pi^-1 P) needs the whole scaled inverse, not only its diagonal
    Posterior scaling;
    MatrixXd pi_s = scaled_prior_precision(p, alpha, lambda, true, scaling);
    if (!cholesky_in_place(pi_s, interrupt))
      throw std::runtime_error("Cholesky factorisation of the prior precision failed");
    const MatrixXd prior_inverse = dd * inverse_from_cholesky(pi_s, interrupt) * dd;
    g.log_lambda = 0.5 * lambda *
                   (((prior_inverse - sigma).array() * p->array()).sum() - post.mu.dot(*p * post.mu));
  }
  return g;
}

}  // namespace rvm_detail

// The kernel choice of rvm() and srvm(): the log evidence
// log N(y - mean(y); 0, a K + s2 I) of a Gaussian process with the kernel
// (matrix K on the rows x), at the amplitude a and noise variance s2 that
// maximise it.  Two hyperparameters, where the relevance vector machines
// fit one per basis function and so reward the more flexible basis.
// With K = U diag(l) U' and z = U'y, and v_i = a l_i + s2,
//   -2 log evidence = sum(log v_i + z_i^2 / v_i) + n log(2 pi).
// The linear kernel (polynomial of degree 1, no offset or constant) has
// K = scale X X': its spectrum comes from the singular values of X, the
// null space one term of its multiplicity.  With c = max(mean(y^2), eps),
// log a lies in log c +- 20 and log s2 in log c + [log 1e-6, 5] (s2 kept
// from 0 on an exactly linear response).  The search: with r = a / s2,
// w_i = r l_i + 1 and S(r) = sum z_i^2 / w_i, the best s2 at given r is
// S / n, clamped to the box, so the evidence is a function of log r
// alone, continuously differentiable; its maximum is located on a grid of
// log r and refined by the safeguarded Newton root of its derivative
// (invert_increasing(), special.hpp) on every bracket where the derivative
// changes sign, the best of those and of the range's ends taken.
struct GpKernelEvidence {
  double log_evidence = 0.0;
  double amplitude = 0.0;  // a
  double noise = 0.0;      // s2
};

namespace gp_evidence_detail {

// The profile's value, derivative and second derivative in t = log r at
// one t (the minus log evidence, without n log(2 pi) / 2).
struct Profile {
  double value, slope, curvature, log_s2;
};

class ProfileSearch {
 public:
  ProfileSearch(VectorXd l, VectorXd z2, VectorXd mult, double log_c)
      : l_(std::move(l)), z2_(std::move(z2)), mult_(std::move(mult)), n_(mult_.sum()),
        a_lo_(log_c - 20.0), a_hi_(log_c + 20.0), s_lo_(log_c + std::log(1e-6)),
        s_hi_(log_c + 5.0) {}

  double lower() const { return a_lo_ - s_hi_; }
  double upper() const { return a_hi_ - s_lo_; }

  // g(t, b) = (n b + sum m log w + exp(-b) S) / 2 with b = log s2; b the
  // clamped minimiser, so that p(t) = g(t, b(t)) and (chain rule, with
  // db/dt = 0 inside or at an s2 bound and -1 at an amplitude bound)
  //   p' = g_t + g_b b',  p'' = g_tt - g_tb^2 / g_bb inside,
  //   g_tt at an s2 bound, g_tt - 2 g_tb + g_bb at an amplitude bound.
  Profile at(double t) const {
    const double r = std::exp(t);
    double s = 0.0, s1 = 0.0, s2 = 0.0, d = 0.0, d1 = 0.0, d2 = 0.0;
    for (Index i = 0; i < l_.size(); ++i) {
      const double u = r * l_[i], w = u + 1.0;
      s += z2_[i] / w;
      s1 -= z2_[i] * u / (w * w);
      s2 -= z2_[i] * u * (1.0 - u) / (w * w * w);
      d += mult_[i] * std::log(w);
      d1 += mult_[i] * u / w;
      d2 += mult_[i] * u / (w * w);
    }
    const double lo = std::max(s_lo_, a_lo_ - t), hi = std::min(s_hi_, a_hi_ - t);
    const double inside = s > 0.0 ? std::log(s / n_) : -std::numeric_limits<double>::infinity();
    const double b = std::min(std::max(inside, lo), hi);
    const double e = std::exp(-b);
    const double g_t = 0.5 * (d1 + e * s1), g_b = 0.5 * (n_ - e * s);
    const double g_tt = 0.5 * (d2 + e * s2), g_tb = -0.5 * e * s1, g_bb = 0.5 * e * s;
    Profile p{0.5 * (n_ * b + d + e * s), g_t, g_tt, b};
    if (b == inside) {
      p.curvature = g_bb > 0.0 ? g_tt - g_tb * g_tb / g_bb : g_tt;
    } else if (b == a_lo_ - t || b == a_hi_ - t) {
      p.slope = g_t - g_b;
      p.curvature = g_tt - 2.0 * g_tb + g_bb;
    }
    return p;
  }

 private:
  VectorXd l_, z2_, mult_;
  double n_, a_lo_, a_hi_, s_lo_, s_hi_;
};

}  // namespace gp_evidence_detail

inline GpKernelEvidence gp_kernel_evidence(const Kernel& kernel, const ConstMatrixRef& x,
                                           const ConstVectorRef& y_in,
                                           const std::function<void()>& interrupt = nullptr) {
  const Index n = y_in.size();
  if (n < 1 || x.rows() != n)
    throw std::invalid_argument("gp_kernel_evidence: x and y must have the same rows, at least one");
  const VectorXd y = y_in.array() - y_in.mean();
  VectorXd l, z2, mult;
  if (kernel.family == KernelFamily::polynomial && kernel.degree == 1 && kernel.offset == 0.0 &&
      kernel.constant == 0.0) {
    const Eigen::BDCSVD<MatrixXd> svd(x, Eigen::ComputeThinU);
    const VectorXd& sv = svd.singularValues();
    const double cut = (sv.size() > 0 ? sv.maxCoeff() : 0.0) * 1e-10;
    Index rank = 0;
    while (rank < sv.size() && sv[rank] > cut) ++rank;
    const Index terms = rank + (n > rank ? 1 : 0);
    l.setZero(terms);
    z2.setZero(terms);
    mult.setOnes(terms);
    const VectorXd z = svd.matrixU().leftCols(rank).transpose() * y;
    l.head(rank) = kernel.scale * sv.head(rank).array().square();
    z2.head(rank) = z.array().square();
    if (n > rank) {  // the null space: eigenvalue 0, n - rank times
      z2[rank] = std::max(y.squaredNorm() - z2.head(rank).sum(), 0.0);
      mult[rank] = static_cast<double>(n - rank);
    }
  } else {
    const Eigen::SelfAdjointEigenSolver<MatrixXd> eig(kernel_matrix(kernel, x, interrupt));
    if (eig.info() != Eigen::Success)
      throw std::runtime_error("gp_kernel_evidence: the eigen decomposition failed");
    l = eig.eigenvalues().cwiseMax(0.0);
    z2 = (eig.eigenvectors().transpose() * y).array().square();
    mult.setOnes(n);
  }
  const double c = std::max(y.squaredNorm() / static_cast<double>(n),
                            std::numeric_limits<double>::epsilon());
  const gp_evidence_detail::ProfileSearch search(l, z2, mult, std::log(c));
  InterruptPoll poll(interrupt);
  constexpr double kStep = 0.25;  // the grid in log r
  const double lo = search.lower(), hi = search.upper();
  const int steps = static_cast<int>(std::ceil((hi - lo) / kStep));
  auto grid = [&](int k) { return k == steps ? hi : lo + k * kStep; };
  gp_evidence_detail::Profile best = search.at(lo), previous = best;
  double best_t = lo;
  auto consider = [&](double t, const gp_evidence_detail::Profile& p) {
    if (p.value < best.value) {
      best = p;
      best_t = t;
    }
  };
  for (int k = 1; k <= steps; ++k) {
    poll();
    const gp_evidence_detail::Profile p = search.at(grid(k));
    consider(grid(k), p);
    if (previous.slope < 0.0 && p.slope >= 0.0) {
      const double t = invert_increasing(
          0.0, grid(k - 1), grid(k), [&](double s) { return search.at(s).slope; },
          [&](double s) { return search.at(s).curvature; });
      consider(t, search.at(t));
    }
    previous = p;
  }
  GpKernelEvidence out;
  out.log_evidence = -best.value - static_cast<double>(n) * kLogSqrt2Pi;
  out.noise = std::exp(best.log_s2);
  out.amplitude = std::exp(best_t + best.log_s2);
  return out;
}

}  // namespace gpsvm

#endif  // GPSVM_RVM_POSTERIOR_HPP
