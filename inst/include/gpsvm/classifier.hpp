// Pieces shared by the kernel classifiers of Opper and Winther (2000):
// label and flip-probability checks, the covariance of the noisy process
// (eq. 17.16) and the kernel matrix without one point.  Pure C++17 + Eigen.
#ifndef GPSVM_CLASSIFIER_HPP
#define GPSVM_CLASSIFIER_HPP

#include <Eigen/Dense>

#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>

#include "kernels.hpp"
#include "solver_status.hpp"

namespace gpsvm {

// Labels must be exactly -1 or +1, one per row of the kernel matrix.
inline void check_labels(const ConstVectorRef& y, Index n) {
  if (y.size() != n)
    throw std::invalid_argument("there are " + std::to_string(y.size()) + " labels for " +
                                std::to_string(n) + " points");
  for (Index i = 0; i < n; ++i) {
    if (y[i] != 1.0 && y[i] != -1.0)
      throw std::invalid_argument("labels must be -1 or +1");
  }
}

// The flip probability kappa of the likelihood (eq. 17.17), in [0, 1/2).
inline bool is_flip_probability(double kappa) { return kappa >= 0.0 && kappa < 0.5; }
constexpr FieldRule kKappaRule{is_flip_probability, "'{}' must lie in [0, 0.5)", 0.0, 0.5};

// A square kernel matrix whose diagonal is positive: every classifier here
// divides by k_ii or needs k_ii > 0 for its local field to have a spread.
inline void check_gram(const ConstMatrixRef& k) {
  if (k.rows() != k.cols()) throw std::invalid_argument("kernel matrix must be square");
  if (k.rows() < 1) throw std::invalid_argument("kernel matrix is empty");
  for (Index i = 0; i < k.rows(); ++i) {
    if (!(k(i, i) > 0.0) || !std::isfinite(k(i, i)))
      throw std::invalid_argument(
          "the kernel (plus noise) must have a positive diagonal; point " +
          std::to_string(i + 1) + " has k_ii = " + std::to_string(k(i, i)) +
          " (add noise > 0)");
  }
}

// The covariance of the noisy process f + xi, xi ~ N(0, v) (eq. 17.16):
// the input noise variance v on the diagonal of the Gram matrix.
inline MatrixXd noisy_gram(const Kernel& kernel, const ConstMatrixRef& x, double noise,
                           const std::function<void()>& interrupt = nullptr) {
  if (!(noise >= 0.0) || !std::isfinite(noise))
    throw std::invalid_argument("noise variance must be a finite number >= 0");
  MatrixXd k = kernel_matrix(kernel, x, interrupt);
  k.diagonal().array() += noise;
  return k;
}

// The kernel matrix with row and column `drop` removed, for refits that
// leave one point out.
inline MatrixXd drop_one(const ConstMatrixRef& k, Index drop) {
  const Index n = k.rows();
  MatrixXd out(n - 1, n - 1);
  const Index a = drop, b = n - 1 - drop;
  out.topLeftCorner(a, a) = k.topLeftCorner(a, a);
  out.topRightCorner(a, b) = k.topRightCorner(a, b);
  out.bottomLeftCorner(b, a) = k.bottomLeftCorner(b, a);
  out.bottomRightCorner(b, b) = k.bottomRightCorner(b, b);
  return out;
}

inline VectorXd drop_one(const ConstVectorRef& v, Index drop) {
  const Index n = v.size();
  VectorXd out(n - 1);
  out.head(drop) = v.head(drop);
  out.tail(n - 1 - drop) = v.tail(n - 1 - drop);
  return out;
}

}  // namespace gpsvm

#endif  // GPSVM_CLASSIFIER_HPP
