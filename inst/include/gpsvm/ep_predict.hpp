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

namespace detail {

// The fit views' checks (below) share their wording, so that every view
// reports a damaged fit in the same form.
[[noreturn]] inline void fit_inconsistent(const std::string& what) {
  throw std::invalid_argument("the fit is inconsistent: " + what);
}

// A matrix's size as the messages print it: "rows x cols".
inline std::string rows_by_cols(Index rows, Index cols) {
  return std::to_string(rows) + " x " + std::to_string(cols);
}

// That a fit holds one of `things` per input: "59 weights for 60 training
// inputs" otherwise.
inline void check_fit_length(Index length, const char* things, Index n, const char* inputs) {
  if (length != n)
    fit_inconsistent(std::to_string(length) + " " + things + " for " + std::to_string(n) + " " +
                     inputs);
}

}  // namespace detail

// What a prediction reads from a dense fit: views of the training inputs,
// the weights and site precisions, and chol, the n x n factor of
// B = I + S^1/2 K S^1/2 (see EpPosterior; an inducing-point fit has
// InducingFitView below).
struct EpFitView {
  const Kernel& kernel;
  ConstMatrixRef x;               // training inputs, n x d
  ConstVectorRef weights;         // w, n
  ConstVectorRef site_precision;  // tau >= 0, n
  ConstMatrixRef chol;

  // Every size the prediction indexes, so that a damaged fit (a vector
  // shortened or a factor replaced) is an error, never a read out of bounds.
  void check() const {
    const Index n = x.rows();
    if (n < 1) detail::fit_inconsistent("it has no training inputs");
    detail::check_fit_length(weights.size(), "weights", n, "training inputs");
    detail::check_fit_length(site_precision.size(), "site precisions", n, "training inputs");
    if (!(site_precision.allFinite() && site_precision.minCoeff() >= 0.0))
      detail::fit_inconsistent("site precisions must be finite and >= 0");
    if (chol.rows() != n || chol.cols() != n)
      detail::fit_inconsistent("the Cholesky factor is " +
                               detail::rows_by_cols(chol.rows(), chol.cols()) + ", not " +
                               detail::rows_by_cols(n, n));
  }
};

struct EpPrediction {
  Eigen::VectorXd mean;
  Eigen::VectorXd variance;  // empty unless asked for
};

namespace detail {

// The frame both predictions share.  The new points z go in blocks (of up
// to `largest`, see prediction_block()) over the threads; per block the
// cross-kernel kz = D^n k(z, .) against the fit's basis (ev's inputs) gives
// the mean kz w and, when asked, the prior variances D^n D'^n k(z, z),
// which variance(kz, prior) turns into the posterior's (kz, len x basis, is
// the block's own to overwrite).  A variance that rounding takes below 0 is
// 0; a NaN stays.
template <class Variance>
EpPrediction predict_in_blocks(const KernelEvaluator& ev, const ConstVectorRef& weights,
                               const ConstMatrixRef& z, bool want_variance, int order,
                               Index coord, double per_point, Index largest,
                               const std::function<void()>& interrupt, Variance variance) {
  const Index m = z.rows();
  const Eigen::MatrixXd zt = z.transpose();  // each point's coordinates contiguous
  EpPrediction out;
  out.mean.resize(m);
  if (want_variance) out.variance.resize(m);
  const Index block = prediction_block(per_point, largest);
  InterruptPoll poll(interrupt);
  blocks_in_rounds(m, block, threads_for_work(static_cast<double>(m) * per_point), poll,
                   [&](Index start, Index len, int) {
    Eigen::MatrixXd kz = ev.cross(z.middleRows(start, len), order, coord);
    out.mean.segment(start, len).noalias() = kz * weights;
    if (!want_variance) return;
    Eigen::VectorXd prior(len);
    for (Index i = 0; i < len; ++i)
      prior[i] = ev.kernel().mixed_derivative_diagonal(zt.col(start + i).data(), zt.rows(), order,
                                                       coord);
    const Eigen::VectorXd value = variance(kz, prior);
    for (Index i = 0; i < len; ++i) out.variance[start + i] = value[i] < 0.0 ? 0.0 : value[i];
  });
  return out;
}

}  // namespace detail

// Posterior mean and latent variance at new points z (rows):
//   mean = k_z' w,  var = k(z, z) - k_z' (K + S^-1)^-1 k_z  (Gao et al. eq. 5.1),
// with (K + S^-1)^-1 = S^1/2 B^-1 S^1/2 from the factor L of B.  With order n > 0 the same for
// the n-th derivative in coordinate `coord` (differentiation is linear, so
// the derivative of a GP is a GP): k_z becomes the derivative cross-kernel
// D^n k(z, x_i) and k(z, z) the mixed derivative D^n D'^n k(z, z).  Work per
// point: O(n^2).  A variance that overflows is NaN.
inline EpPrediction ep_predict(const EpFitView& fit, const ConstMatrixRef& z, bool want_variance,
                               int order = 0, Index coord = 0,
                               const std::function<void()>& interrupt = nullptr) {
  fit.check();
  const Eigen::VectorXd sw = fit.site_precision.cwiseSqrt();
  const auto L = fit.chol.triangularView<Eigen::Lower>();
  const double n = static_cast<double>(fit.x.rows());
  const double rank = static_cast<double>(fit.chol.rows());
  const double per_point = n * (static_cast<double>(fit.x.cols()) + (want_variance ? rank : 1.0));
  const auto variance = [&](const Eigen::MatrixXd& kz, const Eigen::VectorXd& prior) {
    // rows (L^-1 S^1/2 k)' = k' S^1/2 L^-T
    Eigen::MatrixXd v = kz * sw.asDiagonal();
    L.transpose().solveInPlace<Eigen::OnTheRight>(v);
    const Eigen::VectorXd reduction = v.rowwise().squaredNorm();
    return Eigen::VectorXd(prior - reduction);
  };
  return detail::predict_in_blocks(KernelEvaluator(fit.kernel, fit.x), fit.weights, z,
                                   want_variance, order, coord, per_point, 512, interrupt,
                                   variance);
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
    if (m < 1) detail::fit_inconsistent("it has no inducing inputs");
    detail::check_fit_length(weights.size(), "weights", m, "inducing inputs");
    if (inducing_chol.rows() != m || inducing_chol.cols() != m || chol.rows() != m ||
        chol.cols() != m)
      detail::fit_inconsistent("its factors are not " + detail::rows_by_cols(m, m));
  }
};

// Posterior mean and latent variance of the FITC model at new points z
// (rows), or of the n-th derivative in coordinate `coord`: with
// a = L^-1 D^n k(Z, z),
//   mean = D^n k(z, Z) c,  var = D^n D'^n k(z, z) - |a|^2 + |L_A^-1 a|^2
// (the prior's conditional variance given the inducing values plus their
// posterior's share).  Work per point O(m^2), memory O(block m).
inline EpPrediction fitc_predict(const InducingFitView& fit, const ConstMatrixRef& z,
                                 bool want_variance, int order = 0, Index coord = 0,
                                 const std::function<void()>& interrupt = nullptr) {
  fit.check();
  const auto Lm = fit.inducing_chol.triangularView<Eigen::Lower>();
  const auto LA = fit.chol.triangularView<Eigen::Lower>();
  const double m = static_cast<double>(fit.inducing.rows());
  const double per_point = m * (static_cast<double>(fit.inducing.cols()) + m);
  const auto variance = [&](Eigen::MatrixXd& kz, const Eigen::VectorXd& prior) {
    Lm.transpose().solveInPlace<Eigen::OnTheRight>(kz);  // rows a'
    const Eigen::VectorXd prior_share = kz.rowwise().squaredNorm();
    LA.transpose().solveInPlace<Eigen::OnTheRight>(kz);  // rows (L_A^-1 a)'
    const Eigen::VectorXd posterior_share = kz.rowwise().squaredNorm();
    return Eigen::VectorXd(prior - prior_share + posterior_share);
  };
  return detail::predict_in_blocks(KernelEvaluator(fit.kernel, fit.inducing), fit.weights, z,
                                   want_variance, order, coord, per_point, 1024, interrupt,
                                   variance);
}

}  // namespace gpsvm

#endif  // GPSVM_EP_PREDICT_HPP
