// The relevance vector machine with noise that varies with the inputs:
// y_i = H_i w + e_i, e_i ~ N(0, sigma2 exp(eta_i)), eta = B theta, where the
// columns of B are smooth functions of the inputs (R passes kernel columns
// k(x, z_j) on a few centres z_j) and theta has the Gaussian prior
// N(0, P^-1) (P = K_zz / tau2 makes eta a low-rank Gaussian process of
// amplitude tau2 on the centres).  sigma2 stays the model's free noise
// level, so theta = 0 is the constant-noise RVM.
//
// At given eta the model is the plain RVM on whitened data: with
// v = exp(eta), the rows of H and y divided by sqrt(v), and
//   log p(y | eta) = log p(y / sqrt(v) | H / sqrt(v)) - sum(eta) / 2,
// so the fast algorithm (rvm_fast.hpp) fits alpha and sigma2 unchanged.
// theta follows by Fisher scoring on the evidence plus its log prior, at the
// alphas of the last fit:
//   dL/deta_i = (e_i / s_i - 1) / 2,  e_i = r_i^2 + (H Sigma H')_ii,
//   s_i = sigma2 v_i (the gradient of the evidence, by Fisher's identity the
//   expected complete-data one), and the Fisher information in eta is
//   F = (I - S) o (I - S) / 2 with S the whitened hat matrix
//   D^-1/2 H Sigma H' D^-1/2, D = diag(s).
// Each step is followed by a refit of the alphas and sigma2 at the new
// weights, and halved while that lowers the objective L(theta) -
// theta' P theta / 2 (the refit is greedy, so a step can).
//
// The choice against constant noise (rvm()'s noise = "auto") is by the
// evidence with theta integrated out by Laplace's method, log sigma2
// profiled (it is the constant model's parameter too):
//   log Z = L(theta*) - theta*' P theta* / 2 - (log|P + F_s| - log|P|) / 2,
// F_s the information in theta with log sigma2 eliminated (a Schur
// complement).  Compared with L(0), the constant model's evidence, it is a
// Bayes factor: a varying noise must raise the fit by more than the volume
// its prior gives up.
// Pure C++17 + Eigen: no R headers.
#ifndef GPSVM_RVM_NOISE_HPP
#define GPSVM_RVM_NOISE_HPP

#include <Eigen/Dense>

#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>
#include <vector>

#include "dense.hpp"
#include "interrupt.hpp"
#include "kernels.hpp"
#include "rvm_fast.hpp"

namespace gpsvm {

struct VaryingNoiseControl {
  int max_iter = 0;   // scoring steps
  double tol = kUnset;  // on max |change| of eta over the training rows
  // mfsvr_varying_noise_fit() only: also fit the amplitude of the latent
  // function's prior with the noise (mfsvr_noise.hpp); the RVM ignores it
  bool amplitude = false;
  // Where the log Bayes factor that Newton's first step from constant noise
  // predicts (first_step_log_bf()) is below this, the search stops there
  // and the result is the constant model's; -infinity searches always.
  double screen_log_bf = kUnset;

  // amplitude, mfsvr()'s alone, is read by hand where R's list has it
  template <class Self, class Visit>
  static void fields(Self& s, Visit&& v) {
    v("max_iter", s.max_iter, rule::max_iter("the noise fit's '{}' must be >= 1"));
    v("tol", s.tol, FieldRule{is_positive, "the noise fit's '{}' must be > 0", 0.0, kInf});
    v("screen_log_bf", s.screen_log_bf,
      FieldRule{is_set, "the noise fit's '{}' is unset", -kInf, kInf});
  }
};

// One noise basis: its columns at the training rows, and its weights' prior
// precision.
struct NoiseBasis {
  MatrixXd basis, precision;
};

struct VaryingNoiseResult {
  RvmResult fit;            // at theta: sigma2 is the level, log_lik L(theta)
  RvmResult constant;       // theta = 0, the constant-noise RVM
  VectorXd theta;
  VectorXd eta;             // B theta at the training rows
  double log_marginal = 0;  // L(theta*) with theta integrated out (Laplace)
  double first_step_log_bf = 0;  // first_step_log_bf() at theta = 0
  bool screened = false;    // stopped at theta = 0 by the screen
  SolverStatus status;      // change: the last max |change| of eta
};

namespace rvm_noise_detail {

// The kept columns of h (result labels are columns of h here).
inline MatrixXd kept_columns(const MatrixXd& h, const RvmResult& r) {
  MatrixXd out(h.rows(), static_cast<Index>(r.active.size()));
  for (size_t j = 0; j < r.active.size(); ++j) out.col(static_cast<Index>(j)) = h.col(r.active[j]);
  return out;
}

// The fit at log noise weights eta: the plain RVM on the whitened rows, its
// evidence moved back to y's density.
inline RvmResult fit_at(const MatrixXd& h, const VectorXd& y, const VectorXd& eta,
                        const RvmControl& ctl, const std::function<void()>& interrupt) {
  const VectorXd root = (-0.5 * eta.array()).exp().matrix();  // 1 / sqrt(v)
  const MatrixXd hw = root.asDiagonal() * h;
  RvmResult r = rvm_fast_detail::fit_on_design(hw, root.cwiseProduct(y), ctl, interrupt);
  const double shift = 0.5 * eta.sum();
  r.log_lik -= shift;
  for (double& v : r.trace_log_lik) v -= shift;
  return r;
}

// Gradient and Fisher information of the evidence in (log sigma2, theta) at
// the fit r (whose alphas are held), basis j = [1, B].
struct Score {
  VectorXd gradient;
  MatrixXd information;
};

inline Score score_at(const MatrixXd& h, const VectorXd& y, const MatrixXd& basis,
                      const VectorXd& eta, const RvmResult& r,
                      const std::function<void()>& interrupt) {
  const Index n = h.rows(), m = basis.cols();
  require_matrices(static_cast<double>(n), static_cast<double>(n), 1.0,
                   "the hat matrix of the varying-noise fit");
  const MatrixXd phi = kept_columns(h, r);
  const VectorXd s = (r.sigma2 * eta.array().exp()).matrix();
  const VectorXd root = s.array().rsqrt().matrix();
  const MatrixXd phi_w = root.asDiagonal() * phi;
  const MatrixXd hat = phi_w * r.Sigma * phi_w.transpose();  // S, n x n
  const VectorXd resid = y - phi * r.mu;
  const VectorXd spread = ((phi * r.Sigma).array() * phi.array()).rowwise().sum().matrix();
  const VectorXd g_eta = 0.5 * ((resid.array().square() + spread.array()) / s.array() - 1.0).matrix();
  MatrixXd j(n, m + 1);
  j.col(0).setOnes();
  j.rightCols(m) = basis;
  MatrixXd f_eta = -hat;
  f_eta.diagonal().array() += 1.0;
  f_eta = 0.5 * f_eta.cwiseProduct(f_eta);
  if (interrupt) interrupt();
  Score out;
  out.gradient = j.transpose() * g_eta;
  out.information = j.transpose() * f_eta * j;
  return out;
}

// log|P + F_s| - log|P|, F_s the information in theta with log sigma2
// eliminated; NaN if either is not positive definite.
inline double occam_logdet(const MatrixXd& info, const MatrixXd& prec) {
  const Index m = prec.rows();
  const MatrixXd f_s = info.bottomRightCorner(m, m) -
                       info.bottomLeftCorner(m, 1) * info.topRightCorner(1, m) / info(0, 0);
  const Eigen::LLT<MatrixXd> a(prec + f_s), b(prec);
  if (a.info() != Eigen::Success || b.info() != Eigen::Success)
    return std::numeric_limits<double>::quiet_NaN();
  return 2.0 * (a.matrixLLT().diagonal().array().log().sum() -
                b.matrixLLT().diagonal().array().log().sum());
}

// The log Bayes factor of varying against constant noise that one Newton
// step from theta = 0 predicts, from the gradient g and information F in
// (level, theta) there: the objective's quadratic model maximised, less
// what the level alone gains (the constant model moves its level too), less
// the Occam term at F.  It costs no fit.  Where the noise is constant it
// lies near the search's own factor, which is negative on most such data;
// where the noise varies the search raises the factor well beyond it.  So
// a search whose outcome is plain from it can stop (noise = "auto").
inline double first_step_log_bf(const VectorXd& g, const MatrixXd& info, const MatrixXd& prec) {
  const Index m = prec.rows();
  MatrixXd a = info;
  a.bottomRightCorner(m, m) += prec;
  a.diagonal().array() += 1e-10 * (1.0 + a.diagonal().array().abs());
  const double gain = 0.5 * g.dot(Eigen::LDLT<MatrixXd>(a).solve(g)) - 0.5 * g[0] * g[0] / a(0, 0);
  return gain - 0.5 * occam_logdet(info, prec);
}

inline void check_noise(const MatrixXd& basis, const MatrixXd& prec, Index n,
                        const VaryingNoiseControl& c) {
  if (basis.rows() != n) throw std::invalid_argument("the noise basis must have one row per observation");
  if (basis.cols() < 1) throw std::invalid_argument("the noise basis has no columns");
  if (prec.rows() != basis.cols() || prec.cols() != basis.cols())
    throw std::invalid_argument("the noise prior's precision must be square, one row per basis column");
  if (!basis.allFinite() || !prec.allFinite())
    throw std::invalid_argument("the noise basis and its prior must be finite");
  check_fields(c);
}

// A step on the noise weights, halved (at most 7 times) until
// try_step(fraction, &change) accepts it (the objective did not drop);
// records iteration `it` in `status` and says whether to stop: no step
// was accepted, or the noise changed by less than status.tol.
template <class TryStep>
bool halved_step(const TryStep& try_step, int it, SolverStatus& status) {
  bool accepted = false;
  double change = 0.0, fraction = 1.0;
  for (int half = 0; half < 8 && !accepted; ++half, fraction *= 0.5)
    accepted = try_step(fraction, &change);
  status.iterations = it;
  status.change = accepted ? change : 0.0;
  if (accepted && change >= status.tol) return false;
  status.converged = true;
  if (!accepted) status.reason = "no step on the noise function raised the evidence";
  return true;
}

// The search for theta on one basis from the constant fit `constant` (the
// design h, targets y), whose score at theta = 0 the screen has already
// computed (`first`); fills `out` (theta, eta, fit, status, log_marginal).
inline void search_noise(const MatrixXd& h, const VectorXd& y, const NoiseBasis& b,
                         const RvmControl& ctl, const VaryingNoiseControl& nctl,
                         const RvmResult& constant, Score first, VaryingNoiseResult& out,
                         const std::function<void()>& interrupt) {
  const MatrixXd& basis = b.basis;
  const MatrixXd& prec = b.precision;
  const Index m = basis.cols();
  RvmResult fit = constant;
  double objective = fit.log_lik;
  out.status.tol = nctl.tol;
  for (int it = 1; it <= nctl.max_iter; ++it) {
    const Score sc = it == 1 ? std::move(first) : score_at(h, y, basis, out.eta, fit, interrupt);
    VectorXd grad = sc.gradient;
    grad.tail(m) -= prec * out.theta;
    MatrixXd a = sc.information;
    a.bottomRightCorner(m, m) += prec;
    const Eigen::LDLT<MatrixXd> solver(a);
    VectorXd step = solver.solve(grad).tail(m);
    if (!step.allFinite()) break;
    // at most a factor e in any noise variance per step
    const double largest = (basis * step).cwiseAbs().maxCoeff();
    if (largest > 1.0) step /= largest;
    const auto try_step = [&](double fraction, double* change) {
      const VectorXd theta = out.theta + fraction * step;
      const VectorXd eta = basis * theta;
      RvmResult trial = fit_at(h, y, eta, ctl, interrupt);
      const double value = trial.log_lik - 0.5 * theta.dot(prec * theta);
      if (!(value >= objective - 1e-10)) return false;
      *change = (eta - out.eta).cwiseAbs().maxCoeff();
      out.theta = theta;
      out.eta = eta;
      fit = std::move(trial);
      objective = value;
      return true;
    };
    if (halved_step(try_step, it, out.status)) break;
  }
  const Score sc = score_at(h, y, basis, out.eta, fit, interrupt);
  out.log_marginal = fit.log_lik - 0.5 * out.theta.dot(prec * out.theta) -
                     0.5 * occam_logdet(sc.information, prec);
  out.fit = std::move(fit);
}

}  // namespace rvm_noise_detail

// The RVM with noise sigma2 exp(B theta), theta at its posterior mode, one
// fit per noise basis B, and the constant-noise fit beside each (see the top
// of this file).  The constant fit does not depend on B: it is made once,
// and each search starts from it.  Where the log Bayes factor Newton's first
// step predicts (first_step_log_bf()) is below nctl.screen_log_bf for every
// basis, no search is made: each result is the constant fit, with that
// prediction as its factor.  `centres` as for rvm_fast_fit(); the results'
// active sets are labelled as there.
inline std::vector<VaryingNoiseResult> rvm_varying_noise_fits(
    const Kernel& kernel, const ConstMatrixRef& x, const ConstVectorRef& y_in,
    const RvmControl& ctl, const std::vector<NoiseBasis>& bases, const VaryingNoiseControl& nctl,
    const std::function<void()>& interrupt, const std::vector<Index>* centres = nullptr) {
  namespace nd = rvm_noise_detail;
  rvm_detail::check_data(x, y_in);
  rvm_detail::check_control(ctl);
  const Index n = x.rows();
  if (bases.empty()) throw std::invalid_argument("no noise basis was given");
  for (const NoiseBasis& b : bases) nd::check_noise(b.basis, b.precision, n, nctl);
  const KernelEvaluator ev(kernel, x);
  const MatrixXd h =
      centres ? rvm_detail::design(ev, *centres, interrupt) : rvm_detail::design(ev, interrupt);
  const VectorXd y = y_in;
  const RvmResult constant = nd::fit_at(h, y, VectorXd::Zero(n), ctl, interrupt);
  std::vector<VaryingNoiseResult> out(bases.size());
  std::vector<nd::Score> first(bases.size());
  bool screened = true;
  for (size_t i = 0; i < bases.size(); ++i) {
    VaryingNoiseResult& r = out[i];
    r.theta = VectorXd::Zero(bases[i].basis.cols());
    r.eta = VectorXd::Zero(n);
    first[i] = nd::score_at(h, y, bases[i].basis, r.eta, constant, interrupt);
    r.first_step_log_bf =
        nd::first_step_log_bf(first[i].gradient, first[i].information, bases[i].precision);
    screened = screened && r.first_step_log_bf < nctl.screen_log_bf;
  }
  for (size_t i = 0; i < bases.size(); ++i) {
    VaryingNoiseResult& r = out[i];
    r.constant = constant;
    if (screened) {
      r.screened = true;
      r.status.tol = nctl.tol;
      r.status.converged = true;
      r.status.reason = "stopped at constant noise: the first step's log Bayes factor is below the screen";
      r.log_marginal = constant.log_lik + r.first_step_log_bf;
      r.fit = constant;
    } else {
      nd::search_noise(h, y, bases[i], ctl, nctl, constant, std::move(first[i]), r, interrupt);
    }
    rvm_fast_detail::relabel(r.fit, h.cols(), centres);
    rvm_fast_detail::relabel(r.constant, h.cols(), centres);
  }
  return out;
}

// The same for one noise basis.
inline VaryingNoiseResult rvm_varying_noise_fit(const Kernel& kernel, const ConstMatrixRef& x,
                                                const ConstVectorRef& y, const RvmControl& ctl,
                                                const MatrixXd& basis, const MatrixXd& prec,
                                                const VaryingNoiseControl& nctl,
                                                const std::function<void()>& interrupt,
                                                const std::vector<Index>* centres = nullptr) {
  return std::move(
      rvm_varying_noise_fits(kernel, x, y, ctl, {{basis, prec}}, nctl, interrupt, centres).front());
}

}  // namespace gpsvm

#endif  // GPSVM_RVM_NOISE_HPP
