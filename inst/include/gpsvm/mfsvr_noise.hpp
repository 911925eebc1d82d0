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
//
// The latent function's prior amplitude (VaryingNoiseControl::amplitude):
// f ~ GP(0, e^(2 rho) K), rho fitted with (a, theta), as hetGP fits its
// mean process's variance jointly with the noise (Binois, Gramacy and
// Ludkovski 2018).  On a quiet stretch of data a smaller amplitude narrows
// the mean's uncertainty without narrowing the noise, which a fixed
// amplitude cannot.  The fit is EP on the rescaled targets: with f = e^rho g
// the site of row i is the tube of C e^-(l_i - rho), epsilon e^(l_i - rho)
// on y_i e^-rho - g_i, so
//   L(rho, l) = log Z_EP(y e^-rho, K; l - rho) - n rho.
// Its explicit gradient at the EP fixed point, with l held,
//   dL / d rho = sum_i (t_i d log Z_i / d m_i - d log Z_i / d l_i) - n,
// t = y e^-rho (Z_i depends on t_i - m_i; the cavities held).  Its
// curvature with the cavities held is far too large (the cavities do not
// follow the rescaled targets), so Newton's step in rho takes the Fisher
// information of the sites' Gaussian model, 1/2 tr((Sigma^-1 dSigma)^2) with
// Sigma = e^(2 rho) (K + S^-1), dSigma / d rho = 2 e^(2 rho) K:
//   F = 2 tr((R K)^2),  R = (K + S^-1)^-1,
// and neglects the coupling of rho with (a, theta) (the steps are halved
// until the objective rises, and repeated).  On the dense prior F costs
// O(n^3); on a FITC or low-rank prior K = G G' + diag(lambda) (the
// control's inducing inputs, e.g. the pivots of a factor exact to the R
// layer's rank_tol) it is formed from the m x m side in O(n m^2)
// (low_rank_information()), as every EP fit of the search is.  rho is
// profiled in the Laplace evidence, as a is; the constant model it is
// weighed against then has its amplitude and level profiled too
// (theta = 0), so that the comparison is of the noise alone.
// Pure C++17 + Eigen: no R headers.
#ifndef GPSVM_MFSVR_NOISE_HPP
#define GPSVM_MFSVR_NOISE_HPP

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include "mfsvr.hpp"
#include "rvm_noise.hpp"

namespace gpsvm {

struct MfsvrNoiseResult {
  // at the mode: EP on the targets y e^-rho with the noise scales
  // log_noise_scale - rho (the same as log_noise_scale when rho = 0)
  MfsvrFit fit;
  // the constant model (l = 0; with the amplitude fitted, its rho and a
  // at their maximum with theta = 0)
  double constant_log_evidence = 0.0;
  Eigen::VectorXd theta;
  double level = 0.0;        // a
  Eigen::VectorXd log_noise_scale;  // a + B theta at the training rows
  double log_amplitude = 0.0;  // rho (0 unless the amplitude is fitted)
  double log_evidence = 0.0;   // L(rho, l) at the mode
  double log_marginal = 0.0;  // theta integrated out (Laplace), a and rho at their mode
  double first_step_log_bf = 0.0;  // rvm_noise_detail::first_step_log_bf() at theta = 0
  bool screened = false;      // stopped at theta = 0 by the screen
  SolverStatus status;        // change: the last max |change| of l and rho
};

namespace mfsvr_noise_detail {

// The EP sweeps a warm-started trial step of the noise search may take: a
// few times the cold fit's, and at least kTrialSweeps.
constexpr int kTrialSweeps = 20;
constexpr int kTrialSweepFactor = 4;

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

// The Fisher information 2 tr((R K)^2), R = (K + S^-1)^-1, of EP's sites
// (precisions tau >= 0) on the prior K = G G' + diag(lambda), G n x m read
// through `rows`, from L_A, the factor of A = I + G' W G the fit left
// (W = tau / (1 + lambda tau)).  Woodbury gives R = W - W G P G' W with
// P = A^-1, so (with G' W G = A - I) G' R G = I - P and R G = W G P, and
//   tr((R K)^2) = |I - P|_F^2 + 2 sum_i lambda_i W_i^2 |P g_i|^2
//               + sum_{i,j} lambda_i lambda_j R_ij^2,
// the last sum_i lambda_i^2 W_i^2 (1 - 2 W_i q_i) + tr(P E P E) with
// q_i = g_i' P g_i and E = G' diag(lambda W^2) G.  A site at tau_i = 0 has
// W_i = 0: R's row and column i vanish and so does its part of every term.
// Each per-row term is at most of order one (lambda_i W_i < 1,
// W_i |P g_i|^2 <= W_i q_i < 1), so nothing large cancels.  One pass over
// G's rows, O(n m^2); memory O(m^2 + block m) beyond them.
inline double low_rank_information(const RowSource& rows, const Eigen::VectorXd& lambda,
                                   const Eigen::VectorXd& tau, const Eigen::MatrixXd& chol_a,
                                   const std::function<void()>& interrupt) {
  const Eigen::Index n = rows.rows(), m = rows.cols();
  if (lambda.size() != n || tau.size() != n || chol_a.rows() != m || chol_a.cols() != m)
    throw std::invalid_argument("the low-rank prior, the sites and L_A differ in size");
  const auto LA = chol_a.triangularView<Eigen::Lower>();
  Eigen::MatrixXd P = Eigen::MatrixXd::Identity(m, m);
  LA.solveInPlace(P);
  P = (P.transpose() * P).eval();
  const Eigen::VectorXd W = tau.cwiseQuotient((1.0 + lambda.array() * tau.array()).matrix());
  const Eigen::VectorXd a = lambda.cwiseProduct(W.cwiseAbs2());  // lambda W^2
  Eigen::MatrixXd E = Eigen::MatrixXd::Zero(m, m);
  double per_row = 0.0;
  InterruptPoll poll(interrupt);
  const Eigen::Index block = 1024;
  Eigen::MatrixXd scratch;
  // (one thread: the blocks add to the same sums, in row order)
  blocks_in_rounds(n, block, 1, poll, [&](Eigen::Index s, Eigen::Index len, int) {
    const FactorBlock Gb = rows.block(s, len, scratch);
    const Eigen::MatrixXd V = Gb * P;  // rows (P g_i)'
    const Eigen::ArrayXd q = Gb.cwiseProduct(V).rowwise().sum().array();
    const Eigen::ArrayXd pg2 = V.rowwise().squaredNorm().array();
    const Eigen::ArrayXd lw = lambda.segment(s, len).array() * W.segment(s, len).array();
    const Eigen::ArrayXd w = W.segment(s, len).array();
    per_row += (2.0 * a.segment(s, len).array() * pg2 + lw.square() * (1.0 - 2.0 * w * q)).sum();
    add_weighted_gram(E, Gb, a.segment(s, len));
  });
  // tr(P E P E) = |L_A^-1 E L_A^-T|_F^2
  Eigen::MatrixXd M = E.selfadjointView<Eigen::Lower>();
  LA.solveInPlace(M);
  M.transposeInPlace();
  LA.solveInPlace(M);
  const double i_minus_p = (Eigen::MatrixXd::Identity(m, m) - P).squaredNorm();
  return 2.0 * (i_minus_p + per_row + M.squaredNorm());
}

// The inducing-point prior the search's fits run on when the control has
// inducing inputs (and perhaps their factor), made once for the amplitude's
// information: the fits change the sites, never the prior.  Not movable
// (the rows refer to the basis and the inputs); held by a shared pointer.
struct InducingPriorRows {
  HeldRows source;
  InducingBasis basis;
  InducingRows rows;
  InducingPriorRows(const Kernel& kernel, const ConstMatrixRef& x, const MfsvrControl& control,
                    const std::function<void()>& interrupt)
      : source(x),
        basis(inducing_basis(kernel, source, control.inducing, 0.0, interrupt,
                             control.inducing_held_rows,
                             control.inducing_factor ? &*control.inducing_factor : nullptr)),
        rows(kernel, source, basis) {}
  InducingPriorRows(const InducingPriorRows&) = delete;
  InducingPriorRows& operator=(const InducingPriorRows&) = delete;
};

// 2 tr((R K)^2) at a fit: densely, O(n^3), or on the inducing-point prior
// `low_rank` the fit ran on (which an inducing-point fit needs: its EP
// result keeps L_A and the sites, not G and lambda).
inline double amplitude_information(const MfsvrFit& fit, const ConstMatrixRef& x,
                                    const Kernel& kernel, const InducingPriorRows* low_rank,
                                    const std::function<void()>& interrupt) {
  if (fit.ep.low_rank_mean.size() > 0) {
    if (!low_rank) throw std::logic_error("an inducing-point fit needs its prior's rows");
    return low_rank_information(low_rank->rows, low_rank->basis.lambda, fit.ep.site_precision,
                                fit.ep.chol, interrupt);
  }
  const Eigen::MatrixXd rk = ep_site_inverse(fit.ep, interrupt) * KernelEvaluator(kernel, x).gram();
  return 2.0 * rk.cwiseProduct(rk.transpose()).sum();
}

// dL / d rho at a fit on the targets t = y e^-rho with noise scales
// `scaled` = l - rho (the fit's row_gradient at them), and, when
// `information` is given, the Fisher information 2 tr((R K)^2) (see the top
// of the file), on the dense prior or, for an inducing-point fit, on
// `low_rank`.
inline double amplitude_gradient(const MfsvrFit& fit, const ConstMatrixRef& x,
                                 const Eigen::VectorXd& t, const Kernel& kernel, double C,
                                 double epsilon, const Eigen::VectorXd& scaled,
                                 double* information, const std::function<void()>& interrupt,
                                 const InducingPriorRows* low_rank = nullptr) {
  using R = mfsvr_detail::RowEpsilonInsensitive;
  const Eigen::Index n = t.size();
  double g = -static_cast<double>(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const SiteMoments mo =
        R::site(C, epsilon, scaled[i]).moments(t[i], fit.ep.cavity_mean[i], fit.ep.cavity_var[i]);
    g += t[i] * mo.dlog_z - fit.row_gradient[i];
  }
  if (information) *information = amplitude_information(fit, x, kernel, low_rank, interrupt);
  return g;
}

// The fit at log amplitude rho and noise scales l (model units): EP on
// y e^-rho with the scales l - rho, warm-started from `from` (at `from_rho`),
// whose sites are moved to the new scale of the targets; and L(rho, l).
struct AmplitudePoint {
  MfsvrFit fit;
  double log_evidence = 0.0;
};

inline AmplitudePoint fit_at(const ConstMatrixRef& x, const Eigen::VectorXd& y,
                             const Kernel& kernel, double C, double epsilon,
                             MfsvrControl control, double rho, const Eigen::VectorXd& l,
                             const MfsvrFit* from, double from_rho,
                             const std::function<void()>& interrupt) {
  control.log_noise_scale = l.array() - rho;
  if (from) {
    // g_new = c g_old, c = e^(from_rho - rho): a Gaussian site's precision
    // over c^2, its precision times mean over c
    const double c = std::exp(from_rho - rho);
    control.ep.initial_precision = from->ep.site_precision / (c * c);
    control.ep.initial_nu = from->ep.site_nu / c;
  }
  const Eigen::VectorXd t = y * std::exp(-rho);
  AmplitudePoint p;
  p.fit = mfsvr_fit(x, t, kernel, C, epsilon, control, interrupt);
  p.log_evidence = p.fit.ep.log_evidence - static_cast<double>(y.size()) * rho;
  return p;
}

// What every noise basis's search shares: the data, the settings, and the
// constant model's point (theta = 0; with the amplitude fitted, rho and a at
// their maximum), from which each search starts.
struct NoiseSearch {
  const ConstMatrixRef& x;
  Eigen::VectorXd y;
  const Kernel& kernel;
  double C, epsilon;
  MfsvrControl trial_control;
  VaryingNoiseControl nctl;
  const std::function<void()>& interrupt;
  // with inducing inputs in the control: the prior the fits run on
  std::shared_ptr<const InducingPriorRows> low_rank;
  // the search's state: at the constant point before any basis's search
  AmplitudePoint at;
  double objective = 0.0;
  double level = 0.0, log_amplitude = 0.0;
  double constant_log_evidence = 0.0;
};

// Newton's steps in (rho, a, theta) from the state in `s` and `out`, or in
// (rho, a) alone for the constant model (with_theta false; the basis then
// only sizes the system); rho moves only with nctl.amplitude.
inline void newton(NoiseSearch& s, const Eigen::MatrixXd& basis, const Eigen::MatrixXd& prec,
                   bool with_theta, MfsvrNoiseResult& out) {
  const Eigen::Index m = basis.cols();
  out.status = SolverStatus();
  out.status.tol = s.nctl.tol;
  for (int it = 1; it <= s.nctl.max_iter; ++it) {
    Eigen::VectorXd grad;
    Eigen::MatrixXd a;
    newton_system(s.at.fit, basis, &grad, &a);
    grad.tail(m) -= prec * out.theta;
    a.bottomRightCorner(m, m) += prec;
    a.diagonal().array() += 1e-10 * (1.0 + a.diagonal().array().abs());
    Eigen::VectorXd step = Eigen::VectorXd::Zero(m + 1);
    if (with_theta) {
      step = Eigen::LDLT<Eigen::MatrixXd>(a).solve(grad);
    } else {
      step[0] = grad[0] / a(0, 0);
    }
    double rho_step = 0.0;
    if (s.nctl.amplitude) {
      double information = 0.0;
      const double g = amplitude_gradient(
          s.at.fit, s.x, s.y * std::exp(-out.log_amplitude), s.kernel, s.C, s.epsilon,
          (out.log_noise_scale.array() - out.log_amplitude).matrix(), &information, s.interrupt,
          s.low_rank.get());
      rho_step = g / (information + 1e-10 * (1.0 + information));
    }
    if (!step.allFinite() || !std::isfinite(rho_step)) break;
    // at most a factor e in any noise scale, and in the amplitude, per step
    const double largest = std::max(
        (step[0] + (basis * step.tail(m)).array()).abs().maxCoeff(), std::fabs(rho_step));
    if (largest > 1.0) {
      step /= largest;
      rho_step /= largest;
    }
    const auto try_step = [&](double fraction, double* change) {
      const Eigen::VectorXd theta = out.theta + fraction * step.tail(m);
      const double level = out.level + fraction * step[0];
      const double rho = out.log_amplitude + fraction * rho_step;
      const Eigen::VectorXd l = (basis * theta).array() + level;
      AmplitudePoint trial = fit_at(s.x, s.y, s.kernel, s.C, s.epsilon, s.trial_control, rho, l,
                                    &s.at.fit, out.log_amplitude, s.interrupt);
      if (!trial.fit.ep.status.converged) return false;
      const double value = trial.log_evidence - 0.5 * theta.dot(prec * theta);
      if (!(value >= s.objective - 1e-10)) return false;
      *change = std::max((l - out.log_noise_scale).cwiseAbs().maxCoeff(),
                         std::fabs(rho - out.log_amplitude));
      out.theta = theta;
      out.level = level;
      out.log_amplitude = rho;
      out.log_noise_scale = l;
      s.at = std::move(trial);
      s.objective = value;
      return true;
    };
    if (rvm_noise_detail::halved_step(try_step, it, out.status)) break;
  }
}

// A result at the search's current point, theta = 0 for a basis of m columns.
inline MfsvrNoiseResult at_constant(const NoiseSearch& s, Eigen::Index m) {
  MfsvrNoiseResult out;
  out.theta = Eigen::VectorXd::Zero(m);
  out.level = s.level;
  out.log_amplitude = s.log_amplitude;
  out.log_noise_scale = Eigen::VectorXd::Constant(s.x.rows(), s.level);
  out.constant_log_evidence = s.constant_log_evidence;
  return out;
}

}  // namespace mfsvr_noise_detail

// The fits at (C, epsilon) with the noise scale exp(a + B theta), one per
// noise basis B, (a, theta) (and rho, with nctl.amplitude) at the posterior
// mode, and the constant model's evidence beside each.  The constant model
// does not depend on B, so it is fitted once and every search starts from
// it.  Where the log Bayes factor Newton's first step predicts
// (rvm_noise_detail::first_step_log_bf()) is below nctl.screen_log_bf for
// every basis, no search is made: each result is the constant model's, with
// that prediction as its factor.  `control` as for mfsvr_fit() (EP, no
// search for C; with inducing inputs, and perhaps their pivoted factor,
// every fit runs on that prior, in O(n m^2) a fit).
inline std::vector<MfsvrNoiseResult> mfsvr_varying_noise_fits(
    const ConstMatrixRef& x, const ConstVectorRef& y_in, const Kernel& kernel, double C,
    double epsilon, MfsvrControl control, const std::vector<NoiseBasis>& bases,
    const VaryingNoiseControl& nctl, const std::function<void()>& interrupt) {
  namespace nd = mfsvr_noise_detail;
  const Eigen::Index n = x.rows();
  if (bases.empty()) throw std::invalid_argument("no noise basis was given");
  for (const NoiseBasis& b : bases) rvm_noise_detail::check_noise(b.basis, b.precision, n, nctl);
  if (y_in.size() != n) throw std::invalid_argument("'x' and 'y' differ in length");
  control.gradient = true;
  control.choose_C = false;
  nd::NoiseSearch s{x, y_in, kernel, C, epsilon, control, nctl, interrupt, nullptr, {}};
  if (nctl.amplitude && control.inducing.size() > 0)
    s.low_rank = std::make_shared<const nd::InducingPriorRows>(kernel, x, control, interrupt);
  s.at = nd::fit_at(x, s.y, kernel, C, epsilon, control, 0.0, Eigen::VectorXd::Zero(n), nullptr,
                    0.0, interrupt);
  s.objective = s.constant_log_evidence = s.at.log_evidence;
  // A trial warm-started a small step away converges in fewer sweeps than
  // the cold fit; one that has not within a few times as many is treated
  // as a failed step and halved (near the mode such trials stall at the
  // rounding level, and each would otherwise run EP's whole sweep budget).
  s.trial_control.ep.max_iter = static_cast<int>(std::min<std::int64_t>(
      control.ep.max_iter,
      std::max<std::int64_t>(nd::kTrialSweeps, nd::kTrialSweepFactor * s.at.fit.ep.status.iterations)));
  if (nctl.amplitude) {
    MfsvrNoiseResult constant = nd::at_constant(s, bases.front().basis.cols());
    nd::newton(s, bases.front().basis, bases.front().precision, false, constant);
    s.level = constant.level;
    s.log_amplitude = constant.log_amplitude;
    s.constant_log_evidence = s.objective;
  }
  std::vector<MfsvrNoiseResult> out;
  bool screened = true;
  for (const NoiseBasis& b : bases) {
    Eigen::VectorXd grad;
    Eigen::MatrixXd info;
    nd::newton_system(s.at.fit, b.basis, &grad, &info);
    out.push_back(nd::at_constant(s, b.basis.cols()));
    out.back().first_step_log_bf = rvm_noise_detail::first_step_log_bf(grad, info, b.precision);
    screened = screened && out.back().first_step_log_bf < nctl.screen_log_bf;
  }
  for (size_t i = 0; i < bases.size(); ++i) {
    MfsvrNoiseResult& r = out[i];
    r.log_evidence = s.at.log_evidence;
    if (screened) {
      r.screened = true;
      r.status = SolverStatus();
      r.status.tol = nctl.tol;
      r.status.converged = true;
      r.status.reason = "stopped at constant noise: the first step's log Bayes factor is below the screen";
      r.log_marginal = s.objective + r.first_step_log_bf;
      r.fit = s.at.fit;
      continue;
    }
    nd::NoiseSearch from = s;  // every basis's search starts at the constant point
    nd::newton(from, bases[i].basis, bases[i].precision, true, r);
    Eigen::VectorXd grad;
    Eigen::MatrixXd info;
    nd::newton_system(from.at.fit, bases[i].basis, &grad, &info);
    r.log_evidence = from.at.log_evidence;
    r.log_marginal = from.objective - 0.5 * rvm_noise_detail::occam_logdet(info, bases[i].precision);
    r.fit = std::move(from.at.fit);
  }
  return out;
}

// The same for one noise basis.
inline MfsvrNoiseResult mfsvr_varying_noise_fit(const ConstMatrixRef& x, const ConstVectorRef& y,
                                                const Kernel& kernel, double C, double epsilon,
                                                const MfsvrControl& control,
                                                const Eigen::MatrixXd& basis,
                                                const Eigen::MatrixXd& prec,
                                                const VaryingNoiseControl& nctl,
                                                const std::function<void()>& interrupt) {
  return std::move(mfsvr_varying_noise_fits(x, y, kernel, C, epsilon, control, {{basis, prec}},
                                            nctl, interrupt).front());
}

}  // namespace gpsvm

#endif  // GPSVM_MFSVR_NOISE_HPP
