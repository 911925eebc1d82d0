// The "naive" mean-field Gaussian process classifier of Opper and Winther
// (2000, section 17.6, Algorithm 17.1).
//
// The posterior mean activation is <f_i> = sum_j k_ij y_j alpha_j (eq. 17.35)
// and the naive mean-field equations (17.40) are
//   alpha_i = G(z_i) / sqrt(k_ii),   z_i = (y_i <f_i> - k_ii alpha_i) / sqrt(k_ii),
//   G(z) = (1 - 2 kappa) phi(z) / (kappa + (1 - 2 kappa) Phi(z)),
// with kappa the output flip probability (eq. 17.17) and k the covariance of
// the noisy process (noise variance on the diagonal, eq. 17.16).  G is
// special.hpp's flip_mills_ratio, evaluated in logs (the Mills ratio for
// kappa = 0), so that far points neither overflow nor give 0/0.
//
// Algorithm 17.1: alpha from 0; all delta alpha_i = G(z_i)/sqrt(k_ii) - alpha_i
// computed in parallel; alpha += eta * delta alpha; eta *= 1.1 when
// sum_i delta alpha_i^2 fell since the previous sweep, eta /= 2 otherwise;
// stop when max_i delta alpha_i^2 < ftol (control.tol).  Here the test is made on the
// delta alpha of the alpha that is returned, so the returned alpha is the one
// whose fixed-point residual was measured.
#ifndef GPSVM_NAIVE_MF_HPP
#define GPSVM_NAIVE_MF_HPP

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>

#include "classifier.hpp"
#include "special.hpp"

namespace gpsvm {

struct NaiveMfControl {
  // No defaults here (see solver_status.hpp): gpc() and gpc_control() hold them.
  double kappa = kUnset;  // output flip probability, in [0, 1/2)
  double tol = kUnset;    // stop when max_i delta alpha_i^2 < tol (the paper's ftol)
  double eta = kUnset;    // initial learning rate
  int max_iter = -1;      // cap on parallel updates, >= 0

  void validate() const {
    if (!(kappa >= 0.0 && kappa < 0.5))
      throw std::invalid_argument("'kappa' must lie in [0, 0.5)");
    if (!(tol > 0.0) || !std::isfinite(tol))
      throw std::invalid_argument("'tol' must be a positive finite number");
    if (!(eta > 0.0) || !std::isfinite(eta))
      throw std::invalid_argument("'eta' must be a positive finite number");
    if (max_iter < 0) throw std::invalid_argument("'max_iter' must be >= 0");
  }
};

struct NaiveMfResult {
  VectorXd alpha;   // embedding strengths, >= 0
  VectorXd field;   // <f> = K (y * alpha) with the noisy K
  VectorXd z;       // the z_i of eq. (17.40) at the returned alpha
  double eta = 0.0; // final learning rate
  SolverStatus status;
};

namespace detail {

// delta alpha for the current alpha; fills field, z and delta.
inline void naive_mf_delta(const ConstMatrixRef& k, const ConstVectorRef& y, double kappa,
                           const ConstVectorRef& alpha, VectorXd& field, VectorXd& z,
                           VectorXd& delta) {
  field.noalias() = k * (y.array() * alpha.array()).matrix();
  for (Index i = 0; i < alpha.size(); ++i) {
    const double s = std::sqrt(k(i, i));
    z[i] = (y[i] * field[i] - k(i, i) * alpha[i]) / s;
    delta[i] = flip_mills_ratio(z[i], kappa) / s - alpha[i];
  }
}

}  // namespace detail

// Runs Algorithm 17.1 on the noisy kernel matrix k and labels y in {-1, +1}.
// `start`, if not empty, replaces the tabula-rasa start (used by the exact
// leave-one-out refits).
inline NaiveMfResult naive_mf_fit(const ConstMatrixRef& k, const ConstVectorRef& y,
                                  const NaiveMfControl& control,
                                  const VectorXd& start = VectorXd(),
                                  const std::function<void()>& interrupt = {}) {
  control.validate();
  check_gram(k);
  const Index n = k.rows();
  check_labels(y, n);

  VectorXd alpha = VectorXd::Zero(n);
  if (start.size() == n) {
    alpha = start;
  } else if (start.size() != 0) {
    throw std::invalid_argument("warm start has the wrong length");
  }
  VectorXd field(n), z(n), delta(n);
  double eta = control.eta;
  double previous_error = std::numeric_limits<double>::infinity();
  double worst = 0.0;
  int it = 0;
  for (;;) {
    if (interrupt && it % 16 == 0) interrupt();
    detail::naive_mf_delta(k, y, control.kappa, alpha, field, z, delta);
    worst = delta.cwiseAbs2().maxCoeff();
    if (!std::isfinite(worst))
      throw std::runtime_error("naive mean-field iteration produced a non-finite update");
    if (worst < control.tol || it >= control.max_iter) break;
    const double error = delta.squaredNorm();
    if (it > 0) eta = error < previous_error ? 1.1 * eta : 0.5 * eta;
    previous_error = error;
    alpha += eta * delta;
    ++it;
  }

  NaiveMfResult out;
  out.alpha = alpha;
  out.field = field;
  out.z = z;
  out.eta = eta;
  out.status.converged = worst < control.tol;
  out.status.iterations = it;
  out.status.change = worst;
  out.status.tol = control.tol;
  return out;
}

}  // namespace gpsvm

#endif  // GPSVM_NAIVE_MF_HPP
