// Gradients of the EP (TAP) log evidence in the hyperparameters, at the EP
// fixed point.
//
// At the fixed point the sites make log Z_EP stationary, so its total
// derivative in a hyperparameter theta is the explicit one (Seeger 2005;
// Rasmussen and Williams 2006, eq. 5.23 for the kernel part):
//   d log Z_EP / d theta = 1/2 tr((w w' - R) dK / d theta)
//                          + sum_i d log Z_i / d theta  (cavities held fixed),
// with w the EP weights (posterior mean K w) and R = (K + S^-1)^-1
// (ep_site_inverse, ep_priors.hpp).  The kernel part covers the Gaussian kernel's
// width and a variance added to the diagonal of K (the noisy process of the
// TAP classifier, dK / dv = I); the likelihood part is the model's own (the
// epsilon-insensitive likelihood's in likelihoods.hpp, the flip probability's
// here).
//
// Pure C++17 + Eigen: no R headers.
#ifndef GPSVM_EP_GRADIENT_HPP
#define GPSVM_EP_GRADIENT_HPP

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>

#include "kernels.hpp"
#include "likelihoods.hpp"
#include "special.hpp"
#include "ep_engine.hpp"
#include "ep_priors.hpp"
#include "threads.hpp"

namespace gpsvm {

// 1/2 sum_ij (sum_k w_ik w_jk - c R_ij) dK_ij / d log sigma_c for a kernel
// with a width (Gaussian or Matern), split by input coordinate c (log_width_contraction() in
// kernels.hpp): entry c is the derivative in log sigma_c when each
// coordinate has a width of its own, evaluated at the kernel's common width.
// `weights` has one column per latent function sharing K (one for EP; K for
// the joint classifier of multiclass.hpp, whose K functions also count R
// `copies` times).  dK_ij / d log sigma_c is zero on the diagonal, so a
// variance added there does not change it.  O(n^2 p).
inline Eigen::VectorXd ep_per_input_log_width_gradient(
    const ConstMatrixRef& x, const Kernel& kernel, const ConstMatrixRef& weights,
    const Eigen::MatrixXd& R, double copies, const std::function<void()>& interrupt = nullptr) {
  if (!kernel.radial())
    throw std::invalid_argument("only the Gaussian and Matern kernels have a width");
  // W W' - c R a block of columns at a time (memory O(n block) a thread
  // beyond R), O(n (k + p)) multiply-adds a column
  const Eigen::Index n = x.rows(), block = 256;
  const double work = static_cast<double>(n) * static_cast<double>(n) *
                      static_cast<double>(weights.cols() + x.cols());
  InterruptPoll poll(interrupt);
  return 0.5 * sum_of_block_terms(n, block, threads_for_work(work), x.cols(), poll,
                                  [&](Eigen::Index s, Eigen::Index len) {
    const Eigen::MatrixXd coefficient =
        weights * weights.middleRows(s, len).transpose() - copies * R.middleCols(s, len);
    return Eigen::VectorXd(log_width_contraction(kernel, coefficient, x.middleRows(s, len), x));
  });
}

// EP's: one latent function.
inline Eigen::VectorXd ep_per_input_log_width_gradient(
    const ConstMatrixRef& x, const Kernel& kernel, const EpResult& r, const Eigen::MatrixXd& R,
    const std::function<void()>& interrupt = nullptr) {
  const Eigen::Map<const Eigen::MatrixXd> w(r.weights.data(), r.weights.size(), 1);
  return ep_per_input_log_width_gradient(x, kernel, w, R, 1.0, interrupt);
}

// 1/2 (w'w - tr R): the derivative in a variance v added to the diagonal of
// K (dK / dv = I).
inline double ep_diagonal_gradient(const EpResult& r, const Eigen::MatrixXd& R) {
  return 0.5 * (r.weights.squaredNorm() - R.trace());
}

// sum_i d log Z_i / d kappa at the cavities for the flip-noise step
// likelihood kappa + (1 - 2 kappa) Theta(y f) on a noisy process (the TAP
// classifier's ProbitFlip(kappa, 0)): with z_i = y_i m_i / sqrt(v_i),
//   log Z_i = log(kappa + (1 - 2 kappa) Phi(z_i)),
//   d log Z_i / d kappa = (1 - 2 Phi(z_i)) / (kappa + (1 - 2 kappa) Phi(z_i)),
// where 1 - 2 Phi(z) = Phi(-z) - Phi(z) is formed without cancellation from
// the smaller tail, and the quotient in logs (Phi(z) may underflow when
// kappa > 0).
inline double flip_kappa_gradient(const ConstVectorRef& y, const EpResult& r, double kappa) {
  double total = 0.0;
  for (Eigen::Index i = 0; i < y.size(); ++i) {
    const double z = y[i] * r.cavity_mean[i] / std::sqrt(r.cavity_var[i]);
    const double log_den =
        kappa > 0.0 ? log_sum_exp(std::log(kappa), std::log1p(-2.0 * kappa) + log_norm_cdf(z))
                    : log_norm_cdf(z);
    // |1 - 2 Phi(z)| = Phi(|z|) - Phi(-|z|) = 1 - 2 Phi(-|z|)
    const double log_num = std::log1p(-2.0 * norm_cdf(-std::fabs(z)));
    const double term = std::exp(log_num - log_den);
    total += z > 0.0 ? -term : term;
  }
  return total;
}

// The number of sites the engine holds at precision 0 although EP asked for
// a negative one: the tilted distribution of such a site curves upwards
// (d2 log Z_i / dm_i^2 > 0, possible for likelihoods that are not
// log-concave, such as flip noise with kappa > 0), and tap.hpp clamps its
// precision at 0.  At a fixed point with clamped sites the evidence is not
// stationary in them, and the explicit gradient is only an approximation.
template <class Likelihood>
int ep_clamped_sites(const Likelihood& lik, const ConstVectorRef& targets, const EpResult& r) {
  int count = 0;
  for (Eigen::Index i = 0; i < targets.size(); ++i) {
    if (r.site_precision[i] == 0.0 &&
        lik.moments(targets[i], r.cavity_mean[i], r.cavity_var[i]).d2log_z > 0.0)
      ++count;
  }
  return count;
}

// d log Z_EP / d (log sigma, log noise, kappa) of the TAP classifier, EP on
// K + noise I with the flip-noise step likelihood, and the first entry
// split by input coordinate (the derivatives in a width per input); for
// kernels other than the Gaussian the first entry is 0 and the split empty.
struct TapGradient {
  Eigen::Vector3d hyper = Eigen::Vector3d::Zero();
  Eigen::VectorXd per_input_log_width;
};

// The dense prior's: one O(n^3) inverse and an O(n^2 p) pass.
inline TapGradient tap_classifier_gradient(const ConstMatrixRef& x, const ConstVectorRef& y,
                                           const Kernel& kernel, double noise, double kappa,
                                           const EpResult& r,
                                           const std::function<void()>& interrupt = nullptr) {
  const Eigen::MatrixXd R = ep_site_inverse(r, interrupt);
  TapGradient g;
  if (kernel.radial()) {
    g.per_input_log_width = ep_per_input_log_width_gradient(x, kernel, r, R, interrupt);
    g.hyper[0] = g.per_input_log_width.sum();
  }
  g.hyper[1] = noise * ep_diagonal_gradient(r, R);
  g.hyper[2] = flip_kappa_gradient(y, r, kappa);
  return g;
}

}  // namespace gpsvm

#endif  // GPSVM_EP_GRADIENT_HPP
