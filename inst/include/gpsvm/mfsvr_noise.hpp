// Mean-field SVR with noise that varies with the inputs: the noise of row i
// is the epsilon-insensitive noise of (C, epsilon) stretched by exp(l_i),
// i.e. its site has C exp(-l_i) and epsilon exp(l_i), with
//   l = a + B theta,  theta ~ N(0, P^-1),
// the columns of B smooth functions of the inputs (R passes kernel columns
// on a few centres, as for rvm(); P = K_zz / tau2 makes l - a a low-rank
// Gaussian process) and a the overall level, a free parameter (as C is of
// the constant model), so that theta = 0, a = 0 is the constant-noise fit.
// Stretching both C and epsilon keeps the noise's shape (C epsilon) and
// moves its scale, the quantity that varies in heteroscedastic data; a
// varying C alone could not take the noise below the tube's width.
//
// The EP evidence's gradient in l_i is the site's, d log Z_i / d l_i at the
// cavities (the EP fixed point makes the evidence stationary in the sites;
// ep_gradient.hpp), so its gradient in (a, theta) is J' g, J = [1, B].
// (a, theta) go to the posterior mode by Newton's method on
//   L(a, theta) - theta' P theta / 2
// with the curvature J' W J, W the sites' -d2 log Z_i / d l_i^2 with the
// cavities held (as the search for C uses in log C, mfsvr.hpp), each step
// an EP fit warm-started from the last and halved while it lowers the
// objective.  The choice against constant noise is by the Laplace evidence
// with theta integrated out and a profiled, as for the RVM
// (rvm_noise.hpp's occam_logdet()):
//   log Z = L* - theta*' P theta* / 2 - (log|P + F_s| - log|P|) / 2.
// Pure C++17 + Eigen: no R headers.
#ifndef GPSVM_MFSVR_NOISE_HPP
#define GPSVM_MFSVR_NOISE_HPP

#include <Eigen/Dense>

#include <cmath>
#include <functional>
#include <utility>

#include "mfsvr.hpp"
#include "rvm_noise.hpp"

namespace gpsvm {

struct MfsvrNoiseResult {
  MfsvrFit fit;              // at the mode: its log_noise_scale below
  double constant_log_evidence = 0.0;  // the fit at l = 0 (the constant model)
  Eigen::VectorXd theta;
  double level = 0.0;        // a
  Eigen::VectorXd log_noise_scale;  // a + B theta at the training rows
  double log_marginal = 0.0;  // theta integrated out (Laplace), a at its mode
  SolverStatus status;        // change: the last max |change| of l
};

namespace mfsvr_noise_detail {

// Newton's system at a fit: gradient and curvature in (a, theta) of the
// log posterior, the information J' W J without the prior.
inline void newton_system(const MfsvrFit& fit, const Eigen::MatrixXd& basis,
                          Eigen::VectorXd* gradient, Eigen::MatrixXd* information) {
  const Eigen::Index n = basis.rows(), m = basis.cols();
  Eigen::MatrixXd j(n, m + 1);
  j.col(0).setOnes();
  j.rightCols(m) = basis;
  // (a site whose log Z curves upwards in l_i adds no information)
  const Eigen::VectorXd w = (-fit.row_curvature).cwiseMax(0.0);
  *gradient = j.transpose() * fit.row_gradient;
  *information = j.transpose() * w.asDiagonal() * j;
}

}  // namespace mfsvr_noise_detail

// The fit at (C, epsilon) with the noise scale exp(a + B theta), (a, theta)
// at the posterior mode, and the constant model's evidence beside it.
// `control` as for mfsvr_fit() (EP, no inducing inputs, no search for C).
inline MfsvrNoiseResult mfsvr_varying_noise_fit(const ConstMatrixRef& x, const ConstVectorRef& y,
                                                const Kernel& kernel, double C, double epsilon,
                                                MfsvrControl control,
                                                const Eigen::MatrixXd& basis,
                                                const Eigen::MatrixXd& prec,
                                                const VaryingNoiseControl& nctl,
                                                const std::function<void()>& interrupt) {
  namespace nd = mfsvr_noise_detail;
  const Eigen::Index n = x.rows(), m = basis.cols();
  rvm_noise_detail::check_noise(basis, prec, n, nctl);
  control.gradient = true;
  control.choose_C = false;
  auto fit_at = [&](const Eigen::VectorXd& l, const MfsvrFit* from) {
    control.log_noise_scale = l;
    if (from) {  // warm start from the sites of the last fit
      control.ep.initial_precision = from->ep.site_precision;
      control.ep.initial_nu = from->ep.site_nu;
    }
    return mfsvr_fit(x, y, kernel, C, epsilon, control, interrupt);
  };
  MfsvrNoiseResult out;
  out.theta = Eigen::VectorXd::Zero(m);
  out.log_noise_scale = Eigen::VectorXd::Zero(n);
  MfsvrFit fit = fit_at(out.log_noise_scale, nullptr);
  out.constant_log_evidence = fit.ep.log_evidence;
  double objective = fit.ep.log_evidence;
  out.status.tol = nctl.tol;
  for (int it = 1; it <= nctl.max_iter; ++it) {
    Eigen::VectorXd grad;
    Eigen::MatrixXd a;
    nd::newton_system(fit, basis, &grad, &a);
    grad.tail(m) -= prec * out.theta;
    a.bottomRightCorner(m, m) += prec;
    a.diagonal().array() += 1e-10 * (1.0 + a.diagonal().array().abs());
    Eigen::VectorXd step = Eigen::LDLT<Eigen::MatrixXd>(a).solve(grad);
    if (!step.allFinite()) break;
    // at most a factor e in any noise scale per step
    const double largest = (step[0] + (basis * step.tail(m)).array()).abs().maxCoeff();
    if (largest > 1.0) step /= largest;
    const auto try_step = [&](double fraction, double* change) {
      const Eigen::VectorXd theta = out.theta + fraction * step.tail(m);
      const double level = out.level + fraction * step[0];
      const Eigen::VectorXd l = (basis * theta).array() + level;
      MfsvrFit trial = fit_at(l, &fit);
      if (!trial.ep.status.converged) return false;
      const double value = trial.ep.log_evidence - 0.5 * theta.dot(prec * theta);
      if (!(value >= objective - 1e-10)) return false;
      *change = (l - out.log_noise_scale).cwiseAbs().maxCoeff();
      out.theta = theta;
      out.level = level;
      out.log_noise_scale = l;
      fit = std::move(trial);
      objective = value;
      return true;
    };
    if (rvm_noise_detail::halved_step(try_step, it, out.status)) break;
  }
  Eigen::VectorXd grad;
  Eigen::MatrixXd info;
  nd::newton_system(fit, basis, &grad, &info);
  out.log_marginal = objective - 0.5 * rvm_noise_detail::occam_logdet(info, prec);
  out.fit = std::move(fit);
  return out;
}

}  // namespace gpsvm

#endif  // GPSVM_MFSVR_NOISE_HPP
