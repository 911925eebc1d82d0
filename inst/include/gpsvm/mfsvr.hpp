// Mean-field (TAP = EP) support vector regression: Gao, Gunn and Harris
// (2002).  A zero-mean GP prior with kernel k and the epsilon-insensitive
// likelihood, fitted by the TAP / EP engine of tap.hpp; predictions with
// latent and predictive error bars; the evidence and its gradient in
// (log C, log epsilon, log sigma) at the EP fixed point.
// Pure C++17 + Eigen: no R headers.
#ifndef GPSVM_MFSVR_HPP
#define GPSVM_MFSVR_HPP

#include <Eigen/Dense>

#include <cmath>
#include <functional>
#include <stdexcept>

#include "kernels.hpp"
#include "likelihoods.hpp"
#include "tap.hpp"

namespace gpsvm {

enum class MfsvrAlgorithm { ep, paper };

struct MfsvrControl {
  MfsvrAlgorithm algorithm = MfsvrAlgorithm::ep;
  EpControl ep;
  PaperControl paper;
  bool gradient = false;  // also compute the evidence gradient
};

struct MfsvrFit {
  EpResult ep;
  // d log Z_EP / d (log C, log epsilon, log sigma); the last is 0 unless
  // the kernel is Gaussian.  Filled when control.gradient.
  Eigen::Vector3d gradient = Eigen::Vector3d::Zero();
};

namespace mfsvr_detail {

// d log Z_EP / d log sigma of the Gaussian kernel at the EP fixed point:
//   1/2 sum_ij (w_i w_j - R_ij) dK_ij / d log sigma,
//   R = S^1/2 B^-1 S^1/2,  dK_ij / d log sigma = K_ij |x_i - x_j|^2 / sigma^2.
inline double log_sigma_gradient(const Eigen::MatrixXd& K, const ConstMatrixRef& x,
                                 const Kernel& kernel, const EpResult& r) {
  const Eigen::Index n = K.rows();
  const Eigen::VectorXd sw = r.site_precision.cwiseSqrt();
  // B^-1 from the Cholesky factor, then R in place.
  Eigen::MatrixXd binv = Eigen::MatrixXd::Identity(n, n);
  const auto L = r.chol.triangularView<Eigen::Lower>();
  L.solveInPlace(binv);
  L.transpose().solveInPlace(binv);
  const double inv_s2 = 1.0 / (kernel.sigma * kernel.sigma);
  const Eigen::MatrixXd xt = x.transpose();
  double total = 0.0;
  for (Eigen::Index j = 0; j < n; ++j) {
    for (Eigen::Index i = 0; i < n; ++i) {
      const double dist2 = (xt.col(i) - xt.col(j)).squaredNorm();
      const double rij = sw[i] * binv(i, j) * sw[j];
      total += (r.weights[i] * r.weights[j] - rij) * K(i, j) * dist2 * inv_s2;
    }
  }
  return 0.5 * total;
}

}  // namespace mfsvr_detail

inline MfsvrFit mfsvr_fit(const ConstMatrixRef& x, const ConstVectorRef& y, const Kernel& kernel,
                          double C, double epsilon, const MfsvrControl& control,
                          const std::function<void()>& interrupt) {
  if (x.rows() != y.size()) throw std::invalid_argument("'x' and 'y' differ in length");
  const EpsilonInsensitive lik(C, epsilon);
  const Eigen::MatrixXd K = kernel_matrix(kernel, x);
  const Eigen::VectorXd t = y;
  MfsvrFit fit;
  fit.ep = control.algorithm == MfsvrAlgorithm::ep ? ep_fit(K, t, lik, control.ep, interrupt)
                                                   : paper_fit(K, t, lik, control.paper, interrupt);
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
      fit.gradient[2] = mfsvr_detail::log_sigma_gradient(K, x, kernel, fit.ep);
  }
  return fit;
}

// Posterior mean and latent variance at new points z:
//   mean = k_z' w,  var = k(z, z) - |L^-1 S^1/2 k_z|^2  (Gao et al. eq. 5.1).
inline void mfsvr_predict(const ConstMatrixRef& x, const Kernel& kernel,
                          const ConstVectorRef& weights, const ConstVectorRef& site_precision,
                          const ConstMatrixRef& chol, const ConstMatrixRef& z, bool want_var,
                          Eigen::VectorXd& mean, Eigen::VectorXd& var) {
  const KernelEvaluator ev(kernel, x);
  Eigen::MatrixXd kz = ev.cross(z);  // m x n
  mean.noalias() = kz * weights;
  if (!want_var) return;
  const Eigen::VectorXd sw = site_precision.cwiseSqrt();
  // rows of kz scaled by sw, solved: L V = S^1/2 kz'
  Eigen::MatrixXd v = sw.asDiagonal() * kz.transpose();
  kz.resize(0, 0);
  chol.triangularView<Eigen::Lower>().solveInPlace(v);
  var.resize(z.rows());
  const Eigen::MatrixXd zt = z.transpose();
  for (Eigen::Index i = 0; i < z.rows(); ++i) {
    const double kzz = kernel(zt.col(i).data(), zt.col(i).data(), zt.rows());
    const double value = kzz - v.col(i).squaredNorm();
    var[i] = value > 0.0 ? value : 0.0;
  }
}

// The q-quantile of the predictive distribution of a new target (Gaussian
// latent N(mean, var) plus epsilon-insensitive noise), by Newton's method on
// the closed-form CDF, safeguarded by bisection on a bracket.
inline double mfsvr_predictive_quantile(const EpsilonInsensitive& lik, double q, double mean,
                                        double var) {
  if (!(q > 0.0 && q < 1.0)) throw std::invalid_argument("quantile level must lie in (0, 1)");
  const double sd = std::sqrt(var + lik.noise_variance());
  double lo = mean - sd, hi = mean + sd;
  while (lik.predictive_cdf(lo, mean, var) > q) lo -= 2.0 * (hi - lo);
  while (lik.predictive_cdf(hi, mean, var) < q) hi += 2.0 * (hi - lo);
  double x = 0.5 * (lo + hi);
  for (int it = 0; it < 200; ++it) {
    const double f = lik.predictive_cdf(x, mean, var) - q;
    if (f > 0.0) hi = x; else lo = x;
    const double dens = lik.predictive_density(x, mean, var);
    double next = dens > 0.0 ? x - f / dens : 0.5 * (lo + hi);
    if (!(next > lo && next < hi)) next = 0.5 * (lo + hi);
    if (std::fabs(next - x) <= 1e-14 * (1.0 + std::fabs(x)) || hi - lo < 1e-15 * (1.0 + std::fabs(x))) {
      x = next;
      break;
    }
    x = next;
  }
  return x;
}

}  // namespace gpsvm

#endif  // GPSVM_MFSVR_HPP
