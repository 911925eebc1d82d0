// Mean-field (TAP = EP) support vector regression: Gao, Gunn and Harris
// (2002).  A zero-mean GP prior with kernel k and the epsilon-insensitive
// likelihood, fitted by the TAP / EP engine of tap.hpp; predictions with
// latent and predictive error bars; the evidence and its gradient in
// (log C, log epsilon, log sigma) at the EP fixed point.
// Pure C++17 + Eigen: no R headers.
#ifndef GPSVM_MFSVR_HPP
#define GPSVM_MFSVR_HPP

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>
#include <stdexcept>

#include "ep_gradient.hpp"
#include "kernels.hpp"
#include "likelihoods.hpp"
#include "lowrank.hpp"
#include "tap.hpp"

namespace gpsvm {

enum class MfsvrAlgorithm { ep, paper };

struct MfsvrControl {
  MfsvrAlgorithm algorithm = MfsvrAlgorithm::ep;
  EpControl ep;
  PaperControl paper;
  bool gradient = false;  // also compute the evidence gradient
  // EP on a pivoted Cholesky factor K ~ G G' when the kernel matrix has
  // numerical rank <= max_rank_fraction * n at relative tolerance rank_tol
  // (every entry of K - G G' at most rank_tol * max K_ii); rank_tol = 0
  // always uses the dense K.
  double rank_tol = 1e-13;
  double max_rank_fraction = 0.5;
};

struct MfsvrFit {
  EpResult ep;
  // d log Z_EP / d (log C, log epsilon, log sigma); the last is 0 unless
  // the kernel is Gaussian.  Filled when control.gradient.
  Eigen::Vector3d gradient = Eigen::Vector3d::Zero();
};

inline MfsvrFit mfsvr_fit(const ConstMatrixRef& x, const ConstVectorRef& y, const Kernel& kernel,
                          double C, double epsilon, const MfsvrControl& control,
                          const std::function<void()>& interrupt) {
  if (x.rows() != y.size()) throw std::invalid_argument("'x' and 'y' differ in length");
  const EpsilonInsensitive lik(C, epsilon);
  const KernelEvaluator ev(kernel, x);
  const Eigen::VectorXd t = y;
  MfsvrFit fit;
  bool done = false;
  if (control.algorithm == MfsvrAlgorithm::ep && control.rank_tol > 0.0) {
    Eigen::MatrixXd G;
    std::vector<Eigen::Index> pivots;
    const auto max_rank =
        static_cast<Eigen::Index>(control.max_rank_fraction * static_cast<double>(x.rows()));
    if (max_rank >= 1 && pivoted_cholesky(ev, control.rank_tol, max_rank, G, pivots, interrupt)) {
      fit.ep = ep_fit_low_rank(G, t, lik, control.ep, interrupt);
      done = true;
    }
  }
  if (!done) {
    const Eigen::MatrixXd K = ev.gram();
    fit.ep = control.algorithm == MfsvrAlgorithm::ep ? ep_fit(K, t, lik, control.ep, interrupt)
                                                     : paper_fit(K, t, lik, control.paper, interrupt);
  }
  if (control.gradient) {
    double gC = 0.0, geps = 0.0;
    for (Eigen::Index i = 0; i < t.size(); ++i) {
      double dC, deps;
      lik.parameter_gradient(t[i], fit.ep.cavity_mean[i], fit.ep.cavity_var[i], &dC, &deps);
      gC += dC;
      geps += deps;
    }
    fit.gradient[0] = C * gC;
    fit.gradient[1] = epsilon * geps;
    if (kernel.family == KernelFamily::rbf)
      fit.gradient[2] = ep_log_width_gradient(x, kernel, fit.ep, ep_site_inverse(fit.ep));
  }
  return fit;
}

// Posterior mean and latent variance at new points z:
//   mean = k_z' w,  var = k(z, z) - k_z' (K + S^-1)^-1 k_z  (Gao et al. eq. 5.1),
// with (K + S^-1)^-1 = S^1/2 B^-1 S^1/2 from the dense factor L of B, or
// S - S G A^-1 G' S from the low-rank factor (factor = G, chol = L_A).
// With order n > 0 the same for the n-th derivative in coordinate `coord`
// (differentiation is linear, so the derivative of a GP is a GP): k_z
// becomes the derivative cross-kernel D^n k(z, x_i) and k(z, z) the mixed
// derivative D^n D'^n k(z, z).  Work per point: O(n^2) dense, O(n r) low-rank.
inline void mfsvr_predict(const ConstMatrixRef& x, const Kernel& kernel,
                          const ConstVectorRef& weights, const ConstVectorRef& site_precision,
                          const ConstMatrixRef& chol, const ConstMatrixRef& factor,
                          const ConstMatrixRef& z, bool want_var, Eigen::VectorXd& mean,
                          Eigen::VectorXd& var, int order = 0, Eigen::Index coord = 0) {
  const KernelEvaluator ev(kernel, x);
  const Eigen::Index m = z.rows();
  const Eigen::MatrixXd zt = z.transpose();
  mean.resize(m);
  if (want_var) var.resize(m);
  const Eigen::VectorXd sw = site_precision.cwiseSqrt();
  const auto L = chol.triangularView<Eigen::Lower>();
  const bool low_rank = factor.size() > 0;
  const Eigen::MatrixXd sg =
      low_rank ? Eigen::MatrixXd(site_precision.asDiagonal() * factor) : Eigen::MatrixXd();
  // blocks of new points keep the cross-kernel matrix small
  const Eigen::Index block = 512;
  for (Eigen::Index start = 0; start < m; start += block) {
    const Eigen::Index len = std::min(block, m - start);
    Eigen::MatrixXd kz = ev.cross(z.middleRows(start, len), order, coord);  // len x n
    mean.segment(start, len).noalias() = kz * weights;
    if (!want_var) continue;
    Eigen::VectorXd reduction(len);
    if (low_rank) {
      // k' S k - |L_A^-1 G' S k|^2, as row operations on kz (no transposes)
      Eigen::MatrixXd u = kz * sg;  // len x r: rows (G' S k)'
      L.transpose().solveInPlace<Eigen::OnTheRight>(u);  // rows (L_A^-1 G' S k)'
      reduction = kz.cwiseAbs2() * site_precision - u.rowwise().squaredNorm();
    } else {
      // rows (L^-1 S^1/2 k)' = k' S^1/2 L^-T
      Eigen::MatrixXd v = kz * sw.asDiagonal();
      L.transpose().solveInPlace<Eigen::OnTheRight>(v);
      reduction = v.rowwise().squaredNorm();
    }
    for (Eigen::Index i = 0; i < len; ++i) {
      const double* zi = zt.col(start + i).data();
      const double value =
          kernel.mixed_derivative_diagonal(zi, zt.rows(), order, coord) - reduction[i];
      var[start + i] = value < 0.0 ? 0.0 : value;  // rounding below 0; NaN (overflow) stays
    }
  }
}

}  // namespace gpsvm

#endif  // GPSVM_MFSVR_HPP
