// The TAP mean-field Gaussian process classifier (Opper and Winther 2000,
// section 17.6 footnote; Opper and Winther 1999), on the shared EP engine
// (ep_engine.hpp) with a dense prior (ep_priors.hpp); its predictions are
// the engine's (ep_predict.hpp).  The noisy process of eq. (17.16) carries the input
// noise on the kernel's diagonal, and the likelihood is the flip-noise step
// kappa + (1 - 2 kappa) Theta(y f) (eq. 17.17), i.e. ProbitFlip(kappa, 0).
// Pure C++17 + Eigen.
#ifndef GPSVM_TAP_CLASSIFIER_HPP
#define GPSVM_TAP_CLASSIFIER_HPP

#include <Eigen/Dense>

#include <functional>
#include <stdexcept>
#include <string>

#include "classifier.hpp"
#include "likelihoods.hpp"
#include "ep_engine.hpp"
#include "ep_gradient.hpp"
#include "ep_priors.hpp"
#include "fitc.hpp"

namespace gpsvm {

// EP fit on the noisy kernel matrix k (noise already on the diagonal).
// The TAP approximation to the leave-one-out predictive of point i is its
// cavity N(cavity_mean_i, cavity_var_i), so y_i cavity_mean_i is its
// leave-one-out margin.
inline EpResult tap_classifier_fit(const ConstMatrixRef& k, const ConstVectorRef& y,
                                   double kappa, const EpControl& control,
                                   const std::function<void()>& interrupt = {}) {
  check_gram(k);
  check_labels(y, k.rows());
  const ProbitFlip lik(kappa, 0.0);
  try {
    return ep_fit(MatrixXd(k), VectorXd(y), lik, control, interrupt);
  } catch (const std::runtime_error& e) {
    // Seen with (nearly) identical inputs carrying both labels and no noise:
    // the data then have (almost) zero likelihood, the sites that pin the
    // activations grow without bound and B = I + S^1/2 K S^1/2 stops being
    // numerically positive definite.  Say what the user can change.
    throw std::runtime_error(
        std::string(e.what()) +
        "; the kernel matrix may be (nearly) singular, e.g. identical inputs with different "
        "labels, which a noise-free model cannot fit: add input noise ('noise' > 0) or a "
        "flip probability ('kappa' > 0)");
  }
}

// The same model with the FITC prior on its noisy process: inducing inputs
// z (rows), K + noise I ~ Q + diag(K - Q) + noise I (fitc.hpp).  Memory
// O(n m), time O(n m^2) per sweep.  With `gradient`, also the evidence's
// gradient as tap_classifier_gradient() gives it for the dense prior
// (inducing inputs fixed).
struct TapInducingFit {
  EpResult ep;
  Eigen::MatrixXd inducing_chol;
  InducingSummary inducing;
  TapGradient gradient;
};

// `held_rows`: the rows of the n x m factor kept in memory (all when < 0;
// InducingBasis); `factor`: z are the pivots of this factor of K
// (inducing_basis()).  The inputs x are read a block of rows at a time (from
// memory, files or partitions of the data).
inline TapInducingFit tap_classifier_fit_inducing(const Kernel& kernel, const RowSource& x,
                                                  const ConstVectorRef& y, double noise,
                                                  double kappa, const ConstMatrixRef& z,
                                                  const EpControl& control, bool gradient,
                                                  const std::function<void()>& interrupt = {},
                                                  Eigen::Index held_rows = -1,
                                                  const PivotedFactor* factor = nullptr) {
  check_labels(y, x.rows());
  if (!(noise >= 0.0) || !std::isfinite(noise))
    throw std::invalid_argument("noise variance must be a finite number >= 0");
  const InducingBasis basis = inducing_basis(kernel, x, z, noise, interrupt, held_rows, factor);
  const InducingRows rows(kernel, x, basis);
  const ProbitFlip lik(kappa, 0.0);
  TapInducingFit out;
  out.ep = ep_fit_inducing(rows, VectorXd(y), lik, control, interrupt);
  out.inducing_chol = basis.chol;
  out.inducing = inducing_summary(basis, rows, out.ep);
  if (gradient) {
    const InducingKernelGradient g = inducing_kernel_gradient(kernel, rows, out.ep, interrupt);
    out.gradient.hyper << g.log_width, noise * g.diagonal, flip_kappa_gradient(y, out.ep, kappa);
    out.gradient.per_input_log_width = g.per_input_log_width;
  }
  return out;
}

}  // namespace gpsvm

#endif  // GPSVM_TAP_CLASSIFIER_HPP
