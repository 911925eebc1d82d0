// Predictions from an EP fit (ep_engine.hpp), for every model on the engine
// (mfsvr() and the TAP classifier): the posterior mean and latent variance
// of the function, or of one of its derivatives, at new inputs.
// Pure C++17 + Eigen: no R headers.
#ifndef GPSVM_EP_PREDICT_HPP
#define GPSVM_EP_PREDICT_HPP

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "interrupt.hpp"
#include "kernels.hpp"
#include "threads.hpp"

namespace gpsvm {

// New points go through a prediction in blocks of up to `largest`, fewer
// when each costs `work_per_point` multiply-adds (O(n^2) for a dense
// variance), so that a block takes a few tens of milliseconds and the
// interrupt, polled between blocks, acts promptly, whatever the size of
// the fit.
inline Index prediction_block(double work_per_point, Index largest) {
  const double points = 2e7 / std::max(work_per_point, 1.0);
  return std::max<Index>(1, std::min<Index>(largest, static_cast<Index>(points)));
}

// What a prediction reads from a fit: views of the training inputs, the
// weights and site precisions, and the factors the prior representation
// left (see EpPosterior): dense, chol is the n x n factor of
// B = I + S^1/2 K S^1/2 and factor is empty; low rank, factor is G (n x r)
// and chol the r x r factor of A = I + G' S G.
struct EpFitView {
  const Kernel& kernel;
  ConstMatrixRef x;               // training inputs, n x d
  ConstVectorRef weights;         // w, n
  ConstVectorRef site_precision;  // tau >= 0, n
  ConstMatrixRef chol;
  ConstMatrixRef factor;

  bool low_rank() const { return factor.size() > 0; }

  // Every size the prediction indexes, so that a damaged fit (a vector
  // shortened or a factor replaced) is an error, never a read out of bounds.
  void check() const {
    const Index n = x.rows();
    auto fail = [](const std::string& what) {
      throw std::invalid_argument("the fit is inconsistent: " + what);
    };
    if (n < 1) fail("it has no training inputs");
    if (weights.size() != n)
      fail(std::to_string(weights.size()) + " weights for " + std::to_string(n) +
           " training inputs");
    if (site_precision.size() != n)
      fail(std::to_string(site_precision.size()) + " site precisions for " +
           std::to_string(n) + " training inputs");
    if (!(site_precision.allFinite() && site_precision.minCoeff() >= 0.0))
      fail("site precisions must be finite and >= 0");
    const Index r = low_rank() ? factor.cols() : n;
    if (low_rank() && factor.rows() != n)
      fail("the low-rank factor has " + std::to_string(factor.rows()) + " rows for " +
           std::to_string(n) + " training inputs");
    if (chol.rows() != r || chol.cols() != r)
      fail("the Cholesky factor is " + std::to_string(chol.rows()) + " x " +
           std::to_string(chol.cols()) + ", not " + std::to_string(r) + " x " +
           std::to_string(r));
  }
};

struct EpPrediction {
  Eigen::VectorXd mean;
  Eigen::VectorXd variance;  // empty unless asked for
};

// Posterior mean and latent variance at new points z (rows):
//   mean = k_z' w,  var = k(z, z) - k_z' (K + S^-1)^-1 k_z  (Gao et al. eq. 5.1),
// with (K + S^-1)^-1 = S^1/2 B^-1 S^1/2 from the dense factor L of B, or
// S - S G A^-1 G' S from the low-rank factor.  With order n > 0 the same for
// the n-th derivative in coordinate `coord` (differentiation is linear, so
// the derivative of a GP is a GP): k_z becomes the derivative cross-kernel
// D^n k(z, x_i) and k(z, z) the mixed derivative D^n D'^n k(z, z).  Work per
// point: O(n^2) dense, O(n r) low-rank.  A variance that overflows is NaN.
inline EpPrediction ep_predict(const EpFitView& fit, const ConstMatrixRef& z, bool want_variance,
                               int order = 0, Index coord = 0,
                               const std::function<void()>& interrupt = nullptr) {
  fit.check();
  const KernelEvaluator ev(fit.kernel, fit.x);
  const Index m = z.rows();
  const Eigen::MatrixXd zt = z.transpose();
  EpPrediction out;
  out.mean.resize(m);
  if (want_variance) out.variance.resize(m);
  const Eigen::VectorXd sw = fit.site_precision.cwiseSqrt();
  const auto L = fit.chol.triangularView<Eigen::Lower>();
  const Eigen::MatrixXd sg = fit.low_rank()
                                 ? Eigen::MatrixXd(fit.site_precision.asDiagonal() * fit.factor)
                                 : Eigen::MatrixXd();
  // blocks of new points keep the cross-kernel matrix small
  const double n = static_cast<double>(fit.x.rows());
  const double rank = static_cast<double>(fit.chol.rows());
  const double per_point = n * (static_cast<double>(fit.x.cols()) + (want_variance ? rank : 1.0));
  const Index block = prediction_block(per_point, 512);
  InterruptPoll poll(interrupt);
  blocks_in_rounds(m, block, threads_for_work(static_cast<double>(m) * per_point), poll,
                   [&](Index start, Index len, int) {
    Eigen::MatrixXd kz = ev.cross(z.middleRows(start, len), order, coord);  // len x n
    out.mean.segment(start, len).noalias() = kz * fit.weights;
    if (!want_variance) return;
    Eigen::VectorXd reduction(len);
    if (fit.low_rank()) {
      // k' S k - |L_A^-1 G' S k|^2, as row operations on kz (no transposes)
      Eigen::MatrixXd u = kz * sg;  // len x r: rows (G' S k)'
      L.transpose().solveInPlace<Eigen::OnTheRight>(u);  // rows (L_A^-1 G' S k)'
      reduction = kz.cwiseAbs2() * fit.site_precision - u.rowwise().squaredNorm();
    } else {
      // rows (L^-1 S^1/2 k)' = k' S^1/2 L^-T
      Eigen::MatrixXd v = kz * sw.asDiagonal();
      L.transpose().solveInPlace<Eigen::OnTheRight>(v);
      reduction = v.rowwise().squaredNorm();
    }
    for (Index i = 0; i < len; ++i) {
      const double* zi = zt.col(start + i).data();
      const double value =
          fit.kernel.mixed_derivative_diagonal(zi, zt.rows(), order, coord) - reduction[i];
      out.variance[start + i] = value < 0.0 ? 0.0 : value;  // rounding below 0; NaN stays
    }
  });
  return out;
}

// What a prediction reads from an inducing-point (FITC) fit (fitc.hpp):
// the inducing inputs Z (m x p), the weights c (mean = sum_j k(x, z_j) c_j),
// the lower factor L of K_mm + jitter I and the m x m factor of
// A = I + G' W G.
struct InducingFitView {
  const Kernel& kernel;
  ConstMatrixRef inducing;
  ConstVectorRef weights;
  ConstMatrixRef inducing_chol;
  ConstMatrixRef chol;

  void check() const {
    const Index m = inducing.rows();
    auto fail = [](const std::string& what) {
      throw std::invalid_argument("the fit is inconsistent: " + what);
    };
    if (m < 1) fail("it has no inducing inputs");
    if (weights.size() != m)
      fail(std::to_string(weights.size()) + " weights for " + std::to_string(m) +
           " inducing inputs");
    if (inducing_chol.rows() != m || inducing_chol.cols() != m || chol.rows() != m ||
        chol.cols() != m)
      fail("its factors are not " + std::to_string(m) + " x " + std::to_string(m));
  }
};

// Posterior mean and latent variance of the FITC model at new points z
// (rows), or of the n-th derivative in coordinate `coord`: with
// a = L^-1 D^n k(Z, z),
//   mean = D^n k(z, Z) c,  var = D^n D'^n k(z, z) - |a|^2 + |L_A^-1 a|^2
// (the prior's conditional variance given the inducing values plus their
// posterior's share).  Work per point O(m^2), memory O(block m).  With
// `conditional` non-null it also receives k(z, z) - |a|^2 (order 0): the
// prior variance at z left unexplained by the inducing values.
inline EpPrediction fitc_predict(const InducingFitView& fit, const ConstMatrixRef& z,
                                 bool want_variance, int order = 0, Index coord = 0,
                                 Eigen::VectorXd* conditional = nullptr,
                                 const std::function<void()>& interrupt = nullptr) {
  fit.check();
  const KernelEvaluator ev(fit.kernel, fit.inducing);
  const Index n = z.rows();
  const Eigen::MatrixXd zt = z.transpose();
  EpPrediction out;
  out.mean.resize(n);
  if (want_variance) out.variance.resize(n);
  if (conditional) conditional->resize(n);
  const auto Lm = fit.inducing_chol.triangularView<Eigen::Lower>();
  const auto LA = fit.chol.triangularView<Eigen::Lower>();
  const double m = static_cast<double>(fit.inducing.rows());
  const double per_point = m * (static_cast<double>(fit.inducing.cols()) + m);
  const Index block = prediction_block(per_point, 1024);
  InterruptPoll poll(interrupt);
  blocks_in_rounds(n, block, threads_for_work(static_cast<double>(n) * per_point), poll,
                   [&](Index start, Index len, int) {
    Eigen::MatrixXd kz = ev.cross(z.middleRows(start, len), order, coord);  // len x m
    out.mean.segment(start, len).noalias() = kz * fit.weights;
    if (!want_variance && !conditional) return;
    Lm.transpose().solveInPlace<Eigen::OnTheRight>(kz);  // rows a'
    const Eigen::VectorXd prior_share = kz.rowwise().squaredNorm();
    Eigen::VectorXd prior(len);
    for (Index i = 0; i < len; ++i)
      prior[i] = fit.kernel.mixed_derivative_diagonal(zt.col(start + i).data(), zt.rows(), order,
                                                      coord);
    if (conditional) conditional->segment(start, len) = prior - prior_share;
    if (!want_variance) return;
    LA.transpose().solveInPlace<Eigen::OnTheRight>(kz);  // rows (L_A^-1 a)'
    const Eigen::VectorXd posterior_share = kz.rowwise().squaredNorm();
    for (Index i = 0; i < len; ++i) {
      const double value = prior[i] - prior_share[i] + posterior_share[i];
      out.variance[start + i] = value < 0.0 ? 0.0 : value;  // rounding below 0; NaN stays
    }
  });
  return out;
}

// Predictions of a low-rank fit whose factor G is the pivoted Cholesky
// factor of K (lowrank.hpp) with pivots p (0-based, in order), through the
// pivot inputs as inducing inputs: with L_p = G[p, ] (lower triangular) and
// g_z = L_p^-1 k_p(z) the factor's row for z (the Nystrom extension),
//   mean = g_z' G' w,  var = k(z, z) - |g_z|^2 + |L_A^-1 g_z|^2,
// which is ep_predict()'s formula with k_z replaced by G g_z.  By positive
// semi-definiteness each entry of k_z - G g_z is at most sqrt(r(z) max_i r_i)
// in size, r the residual variances (r_i <= rank_tol max K_ii at the
// training inputs, r(z) = k(z, z) - |g_z|^2): tiny where the pivots explain
// z, up to sqrt(rank_tol) far from the inputs.  Points with
// r(z) > kNystromResidual k(z, z) are therefore recomputed by ep_predict(),
// so every point agrees with it to about sqrt(kNystromResidual rank_tol).
// Work per point O(r^2) instead of O(n r) (O(n r) for the recomputed
// ones).  Order 0 only: derivatives take ep_predict().
constexpr double kNystromResidual = 1e-12;

inline EpPrediction low_rank_predict(const EpFitView& fit, const std::vector<Index>& pivots,
                                     const ConstMatrixRef& z, bool want_variance,
                                     const std::function<void()>& interrupt = nullptr) {
  fit.check();
  if (!fit.low_rank()) throw std::invalid_argument("the fit is not low-rank");
  const Index r = fit.factor.cols(), n = fit.x.rows();
  if (static_cast<Index>(pivots.size()) != r)
    throw std::invalid_argument("the fit is inconsistent: " + std::to_string(pivots.size()) +
                                " pivots for a factor of rank " + std::to_string(r));
  Eigen::MatrixXd inputs(r, fit.x.cols());
  Eigen::MatrixXd Lp = Eigen::MatrixXd::Zero(r, r);
  for (Index k = 0; k < r; ++k) {
    const Index p = pivots[static_cast<std::size_t>(k)];
    if (p < 0 || p >= n) throw std::invalid_argument("the fit is inconsistent: a pivot is out of range");
    inputs.row(k) = fit.x.row(p);
    Lp.row(k).head(k + 1) = fit.factor.row(p).head(k + 1);
  }
  const Eigen::VectorXd c =
      Lp.triangularView<Eigen::Lower>().transpose().solve(fit.factor.transpose() * fit.weights);
  const InducingFitView view{fit.kernel, inputs, c, Lp, fit.chol};
  Eigen::VectorXd residual;
  EpPrediction out = fitc_predict(view, z, want_variance, 0, 0, &residual, interrupt);
  std::vector<Index> far;
  for (Index i = 0; i < z.rows(); ++i) {
    const double prior = fit.kernel.mixed_derivative_diagonal(z.row(i).transpose().eval().data(),
                                                              z.cols(), 0, 0);
    if (!(residual[i] <= kNystromResidual * prior)) far.push_back(i);
  }
  if (far.empty()) return out;
  Eigen::MatrixXd zf(static_cast<Index>(far.size()), z.cols());
  for (std::size_t k = 0; k < far.size(); ++k) zf.row(static_cast<Index>(k)) = z.row(far[k]);
  const EpPrediction exact = ep_predict(fit, zf, want_variance, 0, 0, interrupt);
  for (std::size_t k = 0; k < far.size(); ++k) {
    out.mean[far[k]] = exact.mean[static_cast<Index>(k)];
    if (want_variance) out.variance[far[k]] = exact.variance[static_cast<Index>(k)];
  }
  return out;
}

}  // namespace gpsvm

#endif  // GPSVM_EP_PREDICT_HPP
