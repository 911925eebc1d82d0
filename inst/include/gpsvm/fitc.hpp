// The inducing-point (FITC) prior for the EP engine (Snelson and Ghahramani
// 2006; for EP, Naish-Guzman and Holden 2008): with m inducing inputs Z,
//   K ~ Q + diag(K - Q),  Q = K_nm K_mm^-1 K_mn,
// exact on the diagonal, of rank m elsewhere.  Written as G G' + diag(lambda)
// with G = K_nm L^-T (L L' = K_mm + jitter I) it is a LowRankPrior
// (ep_priors.hpp) with a diagonal, so EP on it costs O(n m^2) time and
// O(n m) memory per sweep, on the same engine as the dense and low-rank
// priors.  Also here: the basis, the quantities predictions need
// (ep_predict.hpp's fitc_predict), and the kernel part of the evidence
// gradient in O(n m^2).
//
// Numerics, compared with GPML's infFITC_EP (Rasmussen and Nickisch):
// - jitter on K_mm: GPML adds 1e-6 times its mean diagonal; here 1e-8.  With
//   Z the training inputs FITC is the dense model, and 1e-6 would show as an
//   error of 1e-6 in the prior; 1e-8 still bounds the condition number of L
//   by 1e4, so G keeps about 12 digits.  The jitter is part of the model: the
//   diagonal lambda = diag(K) - |g_i|^2 absorbs it, as GPML's does.
// - the representation: GPML keeps the posterior as diag(d) + P R' R P' and
//   updates a Cholesky factor by rank one per site; LowRankPrior keeps
//   A^-1 = (I + G' W G)^-1 and G' (t nu) (the same O(m^2) per site), and
//   both recompute from scratch after every sweep.
// - the evidence is the engine's (no 1/tau terms), with
//   1/2 log det(I + S^1/2 K S^1/2) = sum log diag L_A + 1/2 sum log(1 + lambda_i tau_i).
//
// Pure C++17 + Eigen: no R headers.
#ifndef GPSVM_FITC_HPP
#define GPSVM_FITC_HPP

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>

#include "ep_engine.hpp"
#include "ep_priors.hpp"
#include "kernels.hpp"

namespace gpsvm {

// Jitter on K_mm, relative to its mean diagonal (see above).
constexpr double kInducingJitter = 1e-8;

// The FITC prior of a kernel at training inputs x and inducing inputs z,
// plus `extra_diagonal` (a noise variance on every point, the TAP
// classifier's input noise).
struct InducingBasis {
  Eigen::MatrixXd inducing;  // m x p
  Eigen::MatrixXd chol;      // lower factor L of K_mm + jitter I
  double jitter = 0.0;
  Eigen::MatrixXd G;         // n x m, K_nm L^-T (so Q = G G')
  Eigen::VectorXd lambda;    // diag(K - G G') + extra_diagonal, >= 0
  double extra_diagonal = 0.0;
};

inline InducingBasis inducing_basis(const Kernel& kernel, const ConstMatrixRef& x,
                                    const ConstMatrixRef& z, double extra_diagonal = 0.0) {
  if (z.rows() < 1) throw std::invalid_argument("no inducing inputs");
  if (z.cols() != x.cols())
    throw std::invalid_argument("the inducing inputs have " + std::to_string(z.cols()) +
                                " columns but the training inputs have " +
                                std::to_string(x.cols()));
  if (!z.allFinite() || !x.allFinite()) throw std::invalid_argument("inputs must be finite");
  if (!(extra_diagonal >= 0.0 && std::isfinite(extra_diagonal)))
    throw std::invalid_argument("the extra diagonal must be finite and >= 0");
  InducingBasis b;
  b.inducing = z;
  b.extra_diagonal = extra_diagonal;
  const KernelEvaluator at_z(kernel, z);
  b.chol = at_z.gram();
  const double mean_diagonal = b.chol.diagonal().mean();
  if (!(mean_diagonal > 0.0))
    throw std::invalid_argument("the kernel vanishes at the inducing inputs");
  b.jitter = kInducingJitter * mean_diagonal;
  b.chol.diagonal().array() += b.jitter;
  Eigen::LLT<Eigen::Ref<Eigen::MatrixXd>, Eigen::Lower> llt(b.chol);
  if (llt.info() != Eigen::Success)
    throw std::runtime_error(
        "the kernel matrix of the inducing inputs is not positive definite even with jitter");
  b.chol.triangularView<Eigen::StrictlyUpper>().setZero();
  b.G = at_z.cross(x);  // n x m
  b.chol.triangularView<Eigen::Lower>().transpose().solveInPlace<Eigen::OnTheRight>(b.G);
  b.lambda = KernelEvaluator(kernel, x).diagonal() - b.G.rowwise().squaredNorm();
  b.lambda = b.lambda.cwiseMax(0.0).array() + extra_diagonal;  // rounding below 0
  return b;
}

// EP with the FITC prior.  result.chol is the m x m factor of
// A = I + G' W G and result.low_rank_mean the posterior mean beta of the
// whitened inducing values; result.factor stays empty.
template <class Likelihood>
EpResult ep_fit_inducing(const InducingBasis& b, const Eigen::VectorXd& targets,
                         const Likelihood& lik, const EpControl& control,
                         const std::function<void()>& interrupt) {
  LowRankPrior prior(b.G, b.lambda);
  return ep_run(prior, targets, lik, control, interrupt);
}

// What predictions read, and the fit's own values at the training inputs
// as at new ones: a new input x has latent mean a' beta and variance
// k(x, x) - |a|^2 + |L_A^-1 a|^2 with a = L^-1 k_m(x), so the mean is
// k_m(x)' c with c = L^-T beta.
struct InducingSummary {
  Eigen::VectorXd weights;        // c = L^-T beta: mean = sum_j k(x, z_j) c_j
  Eigen::VectorXd fitted;         // predictive means at the training inputs, G beta
  Eigen::VectorXd fitted_variance;  // predictive latent variances there
};

inline InducingSummary inducing_summary(const InducingBasis& b, const EpResult& r) {
  InducingSummary out;
  out.weights = b.chol.triangularView<Eigen::Lower>().transpose().solve(r.low_rank_mean);
  out.fitted = b.G * r.low_rank_mean;
  const Eigen::Index n = b.G.rows();
  out.fitted_variance.resize(n);
  const auto LA = r.chol.triangularView<Eigen::Lower>();
  const Eigen::Index block = 2048;
  for (Eigen::Index s = 0; s < n; s += block) {
    const Eigen::Index len = std::min(block, n - s);
    Eigen::MatrixXd v = b.G.middleRows(s, len).transpose();
    LA.solveInPlace(v);
    out.fitted_variance.segment(s, len) =
        (b.lambda.segment(s, len).array() - b.extra_diagonal).max(0.0).matrix() +
        v.colwise().squaredNorm().transpose();
  }
  return out;
}

// The kernel part of the evidence gradient of a FITC fit,
//   1/2 tr(M dK_fitc / d theta),  M = w w' - R,  R = (K_fitc + S^-1)^-1,
// for theta = log sigma (Gaussian kernel, inducing inputs fixed; also split
// by input coordinate, as for the dense prior in ep_gradient.hpp) and for a
// variance v added to every diagonal entry (dK / dv = I).
//   With B = (K_mm + jI)^-1 K_mn = L^-T G', Q = K_nm B, and the jitter held
// fixed (it scales with the mean diagonal of K_mm, which the width does not
// change), dQ = dK_nm B + B' dK_mn - B' dK_mm B, and since the diagonal of
// K_fitc is K's own (d k_ii / d log sigma = 0), dK_fitc is dQ without its
// diagonal; so with M~ = M with a zero diagonal
//   tr(M dK_fitc) = 2 tr(B M~ dK_nm) - tr(B M~ B' dK_mm).
// R = W - (W G) P (W G)' (P = A^-1, W = tau / (1 + lambda tau)), so
// M~ = w w' + (W G) P (W G)' - diag(e), e_i = w_i^2 + W_i^2 g_i' P g_i, and
// B M~ and B M~ B' are formed in blocks of rows in O(n m^2) time and
// O(m^2 + block m) memory; dK_nm is evaluated a block at a time.
struct InducingKernelGradient {
  double log_width = 0.0;  // 0 unless the kernel is Gaussian
  // the same split by input coordinate c: the derivative in log sigma_c
  // when each coordinate has a width of its own, at the kernel's common
  // width (sums to log_width; empty unless the kernel is Gaussian)
  Eigen::VectorXd per_input_log_width;
  double diagonal = 0.0;  // 1/2 (w'w - tr R)
};

inline InducingKernelGradient inducing_kernel_gradient(const Kernel& kernel,
                                                       const ConstMatrixRef& x,
                                                       const InducingBasis& b,
                                                       const EpResult& r) {
  const Eigen::Index n = b.G.rows(), m = b.G.cols();
  const Eigen::VectorXd& tau = r.site_precision;
  const Eigen::VectorXd& w = r.weights;
  const Eigen::VectorXd W =
      tau.cwiseQuotient((1.0 + b.lambda.array() * tau.array()).matrix());
  Eigen::MatrixXd P = Eigen::MatrixXd::Identity(m, m);
  r.chol.triangularView<Eigen::Lower>().solveInPlace(P);
  P = (P.transpose() * P).eval();
  const auto Lt = b.chol.triangularView<Eigen::Lower>().transpose();
  const Eigen::Index block = 1024;
  // pass 1: B w, B W G, B diag(e) B', tr R
  Eigen::VectorXd Bw = Eigen::VectorXd::Zero(m), e(n);
  Eigen::MatrixXd BWG = Eigen::MatrixXd::Zero(m, m), BeB = Eigen::MatrixXd::Zero(m, m);
  double trace_r = 0.0;
  for (Eigen::Index s = 0; s < n; s += block) {
    const Eigen::Index len = std::min(block, n - s);
    const auto Gb = b.G.middleRows(s, len);
    const Eigen::MatrixXd GP = Gb * P;
    const Eigen::VectorXd q = GP.cwiseProduct(Gb).rowwise().sum();
    const Eigen::MatrixXd Bb = Lt.solve(Gb.transpose());  // m x len
    for (Eigen::Index i = 0; i < len; ++i) {
      const double Wi = W[s + i];
      e[s + i] = w[s + i] * w[s + i] + Wi * Wi * q[i];
      trace_r += Wi - Wi * Wi * q[i];
    }
    Bw.noalias() += Bb * w.segment(s, len);
    BWG.noalias() += Bb * (W.segment(s, len).asDiagonal() * Gb);
    BeB.noalias() += Bb * e.segment(s, len).asDiagonal() * Bb.transpose();
  }
  InducingKernelGradient out;
  out.diagonal = 0.5 * (w.squaredNorm() - trace_r);
  if (kernel.family != KernelFamily::rbf) return out;
  const double inv_s2 = 1.0 / (kernel.sigma * kernel.sigma);
  const Eigen::MatrixXd zt = b.inducing.transpose(), xt = x.transpose();
  const Eigen::Index p = x.cols();
  // d k(a, b) / d log sigma_c = (k(a, b) - constant) (a_c - b_c)^2 / sigma^2,
  // times `coefficient`, added to `total` for every coordinate c
  Eigen::VectorXd diff2(p);
  const auto add_dk = [&](double coefficient, const double* a, const double* c,
                          Eigen::VectorXd& total) {
    for (Eigen::Index k = 0; k < p; ++k) diff2[k] = (a[k] - c[k]) * (a[k] - c[k]);
    total += (coefficient * std::exp(-0.5 * diff2.sum() * inv_s2) * inv_s2) * diff2;
  };
  const Eigen::MatrixXd BWGP = BWG * P;
  // tr(B M~ B' dK_mm)
  const Eigen::MatrixXd C = Bw * Bw.transpose() + BWGP * BWG.transpose() - BeB;
  Eigen::VectorXd t2 = Eigen::VectorXd::Zero(p);
  for (Eigen::Index j = 0; j < m; ++j)
    for (Eigen::Index k = 0; k < m; ++k) add_dk(C(j, k), zt.col(j).data(), zt.col(k).data(), t2);
  // pass 2: tr(B M~ dK_nm)
  Eigen::VectorXd t1 = Eigen::VectorXd::Zero(p);
  for (Eigen::Index s = 0; s < n; s += block) {
    const Eigen::Index len = std::min(block, n - s);
    const auto Gb = b.G.middleRows(s, len);
    Eigen::MatrixXd BM = Lt.solve(Gb.transpose());  // B_b, m x len
    BM = -(BM * e.segment(s, len).asDiagonal());
    BM.noalias() += Bw * w.segment(s, len).transpose();
    BM.noalias() += BWGP * (W.segment(s, len).asDiagonal() * Gb).transpose();
    for (Eigen::Index i = 0; i < len; ++i) {
      const double* xi = xt.col(s + i).data();
      for (Eigen::Index j = 0; j < m; ++j) add_dk(BM(j, i), xi, zt.col(j).data(), t1);
    }
  }
  out.per_input_log_width = 0.5 * (2.0 * t1 - t2);
  out.log_width = out.per_input_log_width.sum();
  return out;
}

}  // namespace gpsvm

#endif  // GPSVM_FITC_HPP
