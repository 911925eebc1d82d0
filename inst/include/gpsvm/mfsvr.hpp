// Mean-field (TAP = EP) support vector regression: Gao, Gunn and Harris
// (2002).  A zero-mean GP prior with kernel k and the epsilon-insensitive
// likelihood, fitted by the EP engine (ep_engine.hpp) on a dense or low-rank
// prior (ep_priors.hpp), or by the paper's own iteration (mfsvr_paper.hpp);
// the evidence and its gradient in (log C, log epsilon, log sigma) at the EP
// fixed point.  Predictions are the engine's (ep_predict.hpp).
// Pure C++17 + Eigen: no R headers.
#ifndef GPSVM_MFSVR_HPP
#define GPSVM_MFSVR_HPP

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>
#include <stdexcept>

#include "ep_engine.hpp"
#include "ep_gradient.hpp"
#include "ep_priors.hpp"
#include "fitc.hpp"
#include "kernels.hpp"
#include "likelihoods.hpp"
#include "lowrank.hpp"
#include "mfsvr_paper.hpp"

namespace gpsvm {

enum class MfsvrAlgorithm { ep, paper };


struct MfsvrControl {
  // No defaults here (see solver_status.hpp): mfsvr_control() holds them.
  MfsvrAlgorithm algorithm = MfsvrAlgorithm::ep;
  EpControl ep;
  MfsvrPaperControl paper;
  bool gradient = false;  // also compute the evidence gradient
  // with gradient: also its entry in the Gaussian kernel's log width (an
  // O(n^3) step on the dense prior, which a search over C alone skips)
  bool width_gradient = true;
  // with gradient: also the derivatives in the log width of each input
  // coordinate
  bool per_input_gradient = false;
  // EP on a pivoted Cholesky factor K ~ G G' when the kernel matrix has
  // numerical rank <= max_rank at relative tolerance rank_tol (every entry
  // of K - G G' at most rank_tol * max K_ii); rank_tol = 0 always uses the
  // dense K.  The factor grows as columns are added, so a high rank costs
  // memory only when it is reached (mfsvr_control() sets max_rank to n / 2 by
  // default: above it the dense form is as cheap).
  double rank_tol = kUnset;
  Eigen::Index max_rank = -1;
  // Inducing inputs (m x p, rows): EP on the FITC prior (fitc.hpp) instead;
  // empty for none.
  Eigen::MatrixXd inducing;
};

struct MfsvrFit {
  EpResult ep;
  // d log Z_EP / d (log C, log epsilon, log sigma); the last is 0 unless
  // the kernel is Gaussian and control.width_gradient.  Filled when
  // control.gradient.
  Eigen::Vector3d gradient = Eigen::Vector3d::Zero();
  // d log Z_EP / d log sigma_c for each input coordinate c, when
  // control.per_input_gradient (sums to gradient[2])
  Eigen::VectorXd per_input_gradient;
  // FITC fits: the factor of K_mm + jitter I, and what predictions and the
  // fitted values read (fitc.hpp)
  Eigen::MatrixXd inducing_chol;
  InducingSummary inducing;
  // low-rank fits: the pivots of the factor (0-based, in order), which
  // predictions use (low_rank_predict in ep_predict.hpp)
  std::vector<Eigen::Index> pivots;
};

namespace mfsvr_detail {

// The fit itself: EP on a low-rank factor when the kernel matrix has a small
// numerical rank, else on the dense matrix, or the paper's iteration.
inline void fit_sites(const KernelEvaluator& ev, const Eigen::VectorXd& t,
                      const EpsilonInsensitive& lik, const MfsvrControl& control,
                      const std::function<void()>& interrupt, MfsvrFit& fit) {
  if (control.algorithm == MfsvrAlgorithm::ep && control.rank_tol > 0.0) {
    Eigen::MatrixXd G;
    std::vector<Eigen::Index> pivots;
    const Eigen::Index max_rank = control.max_rank;
    if (max_rank >= 1 && pivoted_cholesky(ev, control.rank_tol, max_rank, G, pivots, interrupt)) {
      fit.ep = ep_fit_low_rank(G, t, lik, control.ep, interrupt);
      fit.pivots = std::move(pivots);
      return;
    }
  }
  const Eigen::MatrixXd K = ev.gram();
  if (control.algorithm == MfsvrAlgorithm::ep) {
    fit.ep = ep_fit(K, t, lik, control.ep, interrupt);
  } else {
    fit.ep = mfsvr_paper_fit(K, t, lik, control.paper, interrupt);
  }
}

// d log Z_EP / d (log C, log epsilon) at the fit's cavities, in the first
// two entries (the third, the width's, is the prior's).
inline Eigen::Vector3d likelihood_gradient(const Eigen::VectorXd& t, const EpsilonInsensitive& lik,
                                           const EpResult& r, double C, double epsilon) {
  double gC = 0.0, geps = 0.0;
  for (Eigen::Index i = 0; i < t.size(); ++i) {
    double dC, deps;
    lik.parameter_gradient(t[i], r.cavity_mean[i], r.cavity_var[i], &dC, &deps);
    gC += dC;
    geps += deps;
  }
  return Eigen::Vector3d(C * gC, epsilon * geps, 0.0);
}

}  // namespace mfsvr_detail

inline MfsvrFit mfsvr_fit(const ConstMatrixRef& x, const ConstVectorRef& y, const Kernel& kernel,
                          double C, double epsilon, const MfsvrControl& control,
                          const std::function<void()>& interrupt) {
  if (x.rows() != y.size()) throw std::invalid_argument("'x' and 'y' differ in length");
  if (!(control.rank_tol >= 0.0 && control.rank_tol <= 1.0))
    throw std::invalid_argument("'rank_tol' must lie in [0, 1]");
  if (control.algorithm == MfsvrAlgorithm::ep && control.rank_tol > 0.0 &&
      control.inducing.size() == 0 && control.max_rank < 0)
    throw std::invalid_argument("'max_rank' is not set");
  const EpsilonInsensitive lik(C, epsilon);
  const Eigen::VectorXd t = y;
  MfsvrFit fit;
  if (control.inducing.size() > 0) {
    if (control.algorithm != MfsvrAlgorithm::ep)
      throw std::invalid_argument("inducing inputs need the EP algorithm");
    const InducingBasis basis = inducing_basis(kernel, x, control.inducing, 0.0, interrupt);
    fit.ep = ep_fit_inducing(basis, t, lik, control.ep, interrupt);
    fit.inducing_chol = basis.chol;
    fit.inducing = inducing_summary(basis, fit.ep, interrupt);
    if (control.gradient) {
      fit.gradient = mfsvr_detail::likelihood_gradient(t, lik, fit.ep, C, epsilon);
      if (control.width_gradient) {
        InducingKernelGradient g = inducing_kernel_gradient(kernel, x, basis, fit.ep, interrupt);
        fit.gradient[2] = g.log_width;
        if (control.per_input_gradient) fit.per_input_gradient = std::move(g.per_input_log_width);
      }
    }
    return fit;
  }
  const KernelEvaluator ev(kernel, x);
  mfsvr_detail::fit_sites(ev, t, lik, control, interrupt, fit);
  if (control.gradient) {
    fit.gradient = mfsvr_detail::likelihood_gradient(t, lik, fit.ep, C, epsilon);
    if (kernel.family == KernelFamily::rbf && control.width_gradient) {
      Eigen::VectorXd by_input = ep_per_input_log_width_gradient(
          x, kernel, fit.ep, ep_site_inverse(fit.ep, interrupt), interrupt);
      fit.gradient[2] = by_input.sum();
      if (control.per_input_gradient) fit.per_input_gradient = std::move(by_input);
    }
  }
  return fit;
}

}  // namespace gpsvm

#endif  // GPSVM_MFSVR_HPP
