// One TAP mean-field / expectation-propagation engine for Gaussian-process
// models with a factorising likelihood, templated on the likelihood.
//
// TAP mean field (Opper and Winther 2000; Gao, Gunn and Harris 2002, eqs.
// 3.7-3.11) and EP have the same fixed point: with cavity N(m_i, v_i) at
// training point i and a Gaussian site of precision tau_i and
// precision-times-mean nu_i,
//   w_i   = d log Z_i / d m_i            (the TAP weights, posterior mean K w),
//   1/tau_i = -1 / (d2 log Z_i / dm_i^2) - v_i   (Sigma_i of eq. 3.11).
// Sites are stored as (tau_i >= 0, nu_i), never as variances 1/tau_i, which
// are infinite for points deep inside the epsilon tube.  The posterior is
// computed from the Cholesky factor L of B = I + S^1/2 K S^1/2, S = diag(tau),
// whose eigenvalues are >= 1, and (K + S^-1)^-1 = S^1/2 B^-1 S^1/2; or,
// when the caller has a factor K = G G' with few columns (lowrank.hpp), from
// the r x r matrix A = I + G' S G (ep_fit_low_rank), O(n r^2) per sweep.
//
// A Likelihood provides
//   SiteMoments moments(double target, double cavity_mean, double cavity_var) const
// returning log Z = log integral p(target | f) N(f; m, v) df and its first
// and second derivatives in m.
//
// Pure C++17 + Eigen: no R headers.
#ifndef GPSVM_TAP_HPP
#define GPSVM_TAP_HPP

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "likelihoods.hpp"
#include "solver_status.hpp"

namespace gpsvm {

enum class EpSchedule { parallel, sequential };

// The parallel schedule hands over to sequential sweeps once its adaptive
// damping falls below this (a property of the algorithm, not a setting).
constexpr double kMinParallelDamping = 0.05;

struct EpControl {
  // parallel: all sites updated from one posterior, then one refactorisation
  // per sweep (damped; the step adapts, see ep_fit).  sequential: sites in a
  // random order (seeded) with rank-one updates of the posterior covariance
  // and a full refactorisation after each sweep.
  // No defaults here (see solver_status.hpp): mfsvr_control() and
  // gpc_control() hold them.
  EpSchedule schedule = EpSchedule::parallel;
  int max_iter = 0;  // cap on sweeps, >= 1
  // Converged when, between two sweeps, no posterior mean at a training point
  // moves by more than tol posterior standard deviations and no posterior
  // variance changes by more than tol relatively.  With a damped step d the
  // change is divided by d before the test (equivalently, tested against
  // tol * d), so that small damped steps do not look converged early.
  double tol = kUnset;
  double damping = kUnset;  // first step of the parallel schedule, in (0, 1]
  std::uint32_t seed = 0;
  // Optional warm start from given sites (precision tau_i, tau_i times mean
  // nu_i), e.g. the sites of a fit at nearby hyperparameters, or of the full
  // data set for a leave-one-out refit; empty vectors mean all sites start
  // at 0 (the prior).  The fixed point does not depend on the start, only
  // the number of sweeps does.  A warm start is a hint, never a risk: sites
  // that are not finite or have a negative precision are ignored, and a run
  // from them that throws (a failed factorisation, non-finite moments) is
  // repeated from the prior; EpResult::warm_start says which start the
  // result came from.  Vectors of the wrong length are an error.
  Eigen::VectorXd initial_precision;
  Eigen::VectorXd initial_nu;
};

struct EpResult {
  Eigen::VectorXd site_precision;  // tau_i >= 0
  Eigen::VectorXd site_nu;         // tau_i * site mean
  Eigen::VectorXd cavity_mean;
  Eigen::VectorXd cavity_var;
  Eigen::VectorXd weights;         // w = (K + S^-1)^-1 S^-1 nu; posterior mean K w
  Eigen::VectorXd mean;            // posterior means at the training points
  Eigen::VectorXd variance;        // posterior variances at the training points
  // Dense prior: lower Cholesky factor of B = I + S^1/2 K S^1/2 (n x n).
  // Low-rank prior K = G G': lower Cholesky factor of A = I + G' S G (r x r),
  // with G in 'factor'.  Upper triangles unused.
  Eigen::MatrixXd chol;
  Eigen::MatrixXd factor;          // G for a low-rank prior; empty when dense
  double log_det_half = 0.0;       // 1/2 log det B (= 1/2 log det A)
  double log_evidence = 0.0;
  // iterations are sweeps; change is the largest standardised change of a
  // posterior marginal in the last sweep, divided by its damping
  SolverStatus status;
  // The damping d of the last sweep: the fraction of the way each site moved
  // towards its update (1 = undamped EP).  The parallel schedule adapts it.
  double last_damping = 1.0;
  bool warm_start = false;         // started from EpControl's initial sites
};

namespace tap_detail {

inline void check_inputs(const Eigen::MatrixXd& K, const Eigen::VectorXd& targets) {
  if (K.rows() != K.cols()) throw std::invalid_argument("kernel matrix must be square");
  if (K.rows() != targets.size())
    throw std::invalid_argument("kernel matrix and targets differ in size");
  if (K.rows() < 1) throw std::invalid_argument("no training points");
  if (!K.allFinite() || !targets.allFinite())
    throw std::invalid_argument("kernel matrix and targets must be finite");
}

}  // namespace tap_detail

// The prior covariance in one of two representations.  Each computes the
// Gaussian posterior N(mu, Sigma), Sigma = (K^-1 + S)^-1, of given sites (the
// weights, means and variances at the training points, 1/2 log det B) and
// supports the sequential schedule through marginal() / update_site().

// K held densely.  Work per posterior: one Cholesky of B and one triangular
// solve with n right-hand sides.
class DensePrior {
 public:
  explicit DensePrior(const Eigen::MatrixXd& K) : K_(K) {}
  Eigen::Index size() const { return K_.rows(); }
  const Eigen::MatrixXd& matrix() const { return K_; }

  void posterior(const Eigen::VectorXd& tau, const Eigen::VectorXd& nu, EpResult& r) {
    const Eigen::Index n = K_.rows();
    const Eigen::VectorXd sw = tau.cwiseSqrt();
    r.factor.resize(0, 0);
    r.chol.resize(n, n);
    r.chol.triangularView<Eigen::Lower>() =
        (sw.asDiagonal() * K_ * sw.asDiagonal()).triangularView<Eigen::Lower>();
    r.chol.diagonal().array() += 1.0;
    Eigen::LLT<Eigen::Ref<Eigen::MatrixXd>, Eigen::Lower> llt(r.chol);
    if (llt.info() != Eigen::Success)
      throw std::runtime_error("Cholesky factorisation of I + S^1/2 K S^1/2 failed");
    // w = (K + S^-1)^-1 S^-1 nu = S^1/2 B^-1 S^-1/2 nu for sites with
    // tau > 0: no cancellation however large tau is (the textbook form
    // nu - S^1/2 B^-1 S^1/2 K nu subtracts numbers of size tau).  Sites
    // clamped at tau = 0 with nu != 0 (a pure linear tilt) take the textbook
    // form, which is exact for them and small.
    Eigen::VectorXd b = Eigen::VectorXd::Zero(n), tilt = Eigen::VectorXd::Zero(n);
    bool any_tilt = false;
    for (Eigen::Index i = 0; i < n; ++i) {
      if (sw[i] > 0.0) {
        b[i] = nu[i] / sw[i];
      } else if (nu[i] != 0.0) {
        tilt[i] = nu[i];
        any_tilt = true;
      }
    }
    llt.solveInPlace(b);
    r.weights = sw.cwiseProduct(b);
    if (any_tilt) {
      Eigen::VectorXd tmp = sw.cwiseProduct(K_ * tilt);
      llt.solveInPlace(tmp);
      r.weights += tilt - sw.cwiseProduct(tmp);
    }
    r.mean.noalias() = K_ * r.weights;
    // V = L^-1 S^1/2 K; Sigma_ii = K_ii - |V_i|^2.
    work_ = sw.asDiagonal() * K_;
    r.chol.triangularView<Eigen::Lower>().solveInPlace(work_);
    r.variance.resize(n);
    for (Eigen::Index i = 0; i < n; ++i) r.variance[i] = K_(i, i) - work_.col(i).squaredNorm();
    refine_tight_variances(tau, r);
    r.log_det_half = r.chol.diagonal().array().log().sum();
  }

  // K_ii - |V_i|^2 loses log10(K_ii / Sigma_ii) digits, which matters for
  // sites that pin the posterior (huge C: Sigma_ii ~ 1e-6 K_ii).  For those,
  // Sigma_ii = (1 - (B^-1)_ii) / tau_i, from (K^-1 + S)^-1 = S^-1/2 (I - B^-1)
  // S^-1/2, loses only log10(1 / (tau_i Sigma_ii)) digits; it is used where
  // that is the smaller loss.  Work: one triangular solve per such site.
  void refine_tight_variances(const Eigen::VectorXd& tau, EpResult& r) const {
    std::vector<Eigen::Index> tight;
    for (Eigen::Index i = 0; i < tau.size(); ++i) {
      const double s2 = r.variance[i];
      if (tau[i] > 0.0 && s2 > 0.0 && K_(i, i) > 1e3 * s2 && tau[i] * s2 > 1e-2 &&
          (1.0 - tau[i] * s2) / (tau[i] * s2) < K_(i, i) / s2)
        tight.push_back(i);
    }
    if (tight.empty()) return;
    const Eigen::Index n = tau.size();
    Eigen::MatrixXd e = Eigen::MatrixXd::Zero(n, static_cast<Eigen::Index>(tight.size()));
    for (std::size_t j = 0; j < tight.size(); ++j) e(tight[j], static_cast<Eigen::Index>(j)) = 1.0;
    r.chol.triangularView<Eigen::Lower>().solveInPlace(e);
    for (std::size_t j = 0; j < tight.size(); ++j) {
      const Eigen::Index i = tight[j];
      const double binv = e.col(static_cast<Eigen::Index>(j)).squaredNorm();
      r.variance[i] = (1.0 - binv) / tau[i];
    }
  }

  // Sequential schedule: Sigma = K - V'V from the last posterior, then
  // rank-one updates.
  void begin_sequential(const EpResult& r) {
    sigma_ = K_;
    sigma_.noalias() -= work_.transpose() * work_;
    mu_ = r.mean;
  }
  void marginal(Eigen::Index i, double* var, double* mean) const {
    *var = sigma_(i, i);
    *mean = mu_[i];
  }
  void update_site(Eigen::Index i, double dtau, double /*dnu*/, const Eigen::VectorXd& nu) {
    const Eigen::VectorXd si = sigma_.col(i);
    const double scale = dtau / (1.0 + dtau * si[i]);
    sigma_.noalias() -= scale * si * si.transpose();
    mu_.noalias() = sigma_ * nu;
  }
  void end_sequential() {
    sigma_.resize(0, 0);
  }

 private:
  const Eigen::MatrixXd& K_;
  Eigen::MatrixXd work_, sigma_;
  Eigen::VectorXd mu_;
};

// K = G G' with G n x r (a pivoted Cholesky factor, lowrank.hpp).  With
// f = G u, u ~ N(0, I), the posterior of u has precision A = I + G' S G, so
// Sigma = G A^-1 G' and, by Woodbury, B^-1 = I - S^1/2 G A^-1 G' S^1/2 and
// det B = det A.  Work per posterior: O(n r^2); per sequential site update
// O(r^2).
class LowRankPrior {
 public:
  explicit LowRankPrior(const Eigen::MatrixXd& G) : G_(G) {}
  Eigen::Index size() const { return G_.rows(); }

  void posterior(const Eigen::VectorXd& tau, const Eigen::VectorXd& nu, EpResult& r) {
    const Eigen::Index n = G_.rows(), rank = G_.cols();
    r.factor = G_;
    r.chol = Eigen::MatrixXd::Identity(rank, rank);
    r.chol.selfadjointView<Eigen::Lower>().rankUpdate(
        (tau.cwiseSqrt().asDiagonal() * G_).transpose());
    Eigen::LLT<Eigen::Ref<Eigen::MatrixXd>, Eigen::Lower> llt(r.chol);
    if (llt.info() != Eigen::Success)
      throw std::runtime_error("Cholesky factorisation of I + G' S G failed");
    const auto L = r.chol.triangularView<Eigen::Lower>();
    // V = L^-1 G' (r x n): Sigma_ii = |V_i|^2, mu = V' V nu.
    work_ = G_.transpose();
    L.solveInPlace(work_);
    r.variance = work_.colwise().squaredNorm().transpose();
    const Eigen::VectorXd Vnu = work_ * nu;
    r.mean.noalias() = work_.transpose() * Vnu;
    // w = nu - S^1/2 B^-1 S^1/2 K nu, with B^-1 z = z - S^1/2 G A^-1 G' S^1/2 z
    const Eigen::VectorXd sw = tau.cwiseSqrt();
    const Eigen::VectorXd z = sw.cwiseProduct(G_ * (G_.transpose() * nu));
    Eigen::VectorXd h = G_.transpose() * sw.cwiseProduct(z);
    llt.solveInPlace(h);
    const Eigen::VectorXd binv_z = z - sw.cwiseProduct(G_ * h);
    r.weights = nu - sw.cwiseProduct(binv_z);
    r.log_det_half = r.chol.diagonal().array().log().sum();
    (void)n;
  }

  // Sequential schedule: keep P = A^-1 and h = G' nu; Sigma_ii = g_i' P g_i,
  // mu_i = g_i' P h.
  void begin_sequential(const EpResult& r) {
    const Eigen::Index rank = G_.cols();
    const auto L = r.chol.triangularView<Eigen::Lower>();
    p_ = Eigen::MatrixXd::Identity(rank, rank);
    L.solveInPlace(p_);
    p_ = (p_.transpose() * p_).eval();
    h_ = G_.transpose() * r.site_nu;
  }
  void marginal(Eigen::Index i, double* var, double* mean) const {
    const Eigen::VectorXd pg = p_ * G_.row(i).transpose();
    *var = G_.row(i).dot(pg);
    *mean = pg.dot(h_);
  }
  void update_site(Eigen::Index i, double dtau, double dnu, const Eigen::VectorXd& /*nu*/) {
    const Eigen::VectorXd g = G_.row(i).transpose();
    const Eigen::VectorXd pg = p_ * g;
    const double scale = dtau / (1.0 + dtau * g.dot(pg));
    p_.noalias() -= scale * pg * pg.transpose();
    h_ += dnu * g;
  }
  void end_sequential() {}

 private:
  const Eigen::MatrixXd& G_;
  Eigen::MatrixXd work_, p_;
  Eigen::VectorXd h_;
};

namespace tap_detail {

inline void floor_variances(EpResult& r) {
  // rounding can only matter when the posterior is pinned by the site
  for (Eigen::Index i = 0; i < r.variance.size(); ++i)
    if (!(r.variance[i] > 1e-300)) r.variance[i] = 1e-300;
}

// Cavity of each site from the posterior marginals.
inline void cavities(const EpResult& post, const Eigen::VectorXd& tau, const Eigen::VectorXd& nu,
                     Eigen::VectorXd& m, Eigen::VectorXd& v) {
  const Eigen::Index n = tau.size();
  m.resize(n);
  v.resize(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const double s2 = post.variance[i];
    double denom = 1.0 - tau[i] * s2;  // tau_cavity * s2
    if (denom < 1e-12) denom = 1e-12;
    v[i] = s2 / denom;
    // m = nu_cavity / tau_cavity with nu_cavity = mu / s2 - nu
    m[i] = (post.mean[i] - s2 * nu[i]) / denom;
  }
}

// New site (tau, nu) for one cavity: the precision from the curvature,
// clamped at 0, and nu such that the posterior mean m + v d1 is matched
// whatever the clamping did.
inline void site_from_moments(const SiteMoments& mo, double m, double v, double* tau,
                              double* nu) {
  double t = -mo.d2log_z / (1.0 + mo.d2log_z * v);
  if (!(t >= 0.0) || !std::isfinite(t)) t = t > 0.0 ? 1e300 : 0.0;
  *tau = t;
  *nu = t * m + mo.dlog_z * (1.0 + t * v);
}

// Largest standardised change of the posterior marginals; infinite when a
// marginal is not finite (std::max would silently drop a NaN, and a run
// whose means had become NaN would look converged).
inline double marginal_change(const EpResult& a, const Eigen::VectorXd& old_mean,
                              const Eigen::VectorXd& old_var) {
  double change = 0.0;
  for (Eigen::Index i = 0; i < a.mean.size(); ++i) {
    const double dm = std::fabs(a.mean[i] - old_mean[i]) / std::sqrt(a.variance[i]);
    const double dv = std::fabs(a.variance[i] / old_var[i] - 1.0);
    if (!std::isfinite(dm) || !std::isfinite(dv)) return std::numeric_limits<double>::infinity();
    change = std::max(change, std::max(dm, dv));
  }
  return change;
}

// Cavities, the EP log evidence and the final bookkeeping.  The evidence
//   log Z_EP = sum_i log Z_i - sum_i log L_ii + 1/2 sum_i log(1 + tau_i v_i)
//              + 1/2 nu' mu + sum_i (tau_i m_i^2 - 2 m_i nu_i - nu_i^2 v_i) / (2 (1 + tau_i v_i))
// is Rasmussen and Williams' eq. (3.65) with the 1/tau_i terms cancelled
// analytically (nu' Sigma nu = nu' mu), so tau_i = 0 needs no special case.
template <class Likelihood>
void finish(const Eigen::VectorXd& targets, const Likelihood& lik, EpResult& r) {
  cavities(r, r.site_precision, r.site_nu, r.cavity_mean, r.cavity_var);
  double lz = 0.0, quad = 0.0, logterm = 0.0;
  for (Eigen::Index i = 0; i < targets.size(); ++i) {
    const double m = r.cavity_mean[i], v = r.cavity_var[i];
    const double tau = r.site_precision[i], nu = r.site_nu[i];
    lz += lik.moments(targets[i], m, v).log_z;
    logterm += 0.5 * std::log1p(tau * v);
    quad += (tau * m * m - 2.0 * m * nu - nu * nu * v) / (2.0 * (1.0 + tau * v));
  }
  r.log_evidence = lz - r.log_det_half + logterm + 0.5 * r.site_nu.dot(r.mean) + quad;
}

inline std::vector<Eigen::Index> random_order(Eigen::Index n, std::mt19937& rng) {
  std::vector<Eigen::Index> order(n);
  for (Eigen::Index i = 0; i < n; ++i) order[i] = i;
  for (Eigen::Index i = n - 1; i > 0; --i) {  // Fisher-Yates, portable
    const Eigen::Index j = static_cast<Eigen::Index>(rng() % static_cast<std::uint32_t>(i + 1));
    std::swap(order[i], order[j]);
  }
  return order;
}

}  // namespace tap_detail

namespace tap_detail {

// Sites a run can start from: finite, with precisions >= 0.
inline bool usable_sites(const Eigen::VectorXd& tau, const Eigen::VectorXd& nu) {
  return tau.allFinite() && nu.allFinite() && (tau.size() == 0 || tau.minCoeff() >= 0.0);
}

// The EP iteration from the sites in r (site_precision and site_nu set).
template <class Likelihood, class Prior>
void ep_iterate(Prior& prior, const Eigen::VectorXd& targets, const Likelihood& lik,
                const EpControl& control, const std::function<void()>& interrupt, EpResult& r) {
  const Eigen::Index n = prior.size();
  r.status.tol = control.tol;
  prior.posterior(r.site_precision, r.site_nu, r);
  floor_variances(r);

  Eigen::VectorXd m, v, old_mean, old_var;
  double d = control.damping;
  double previous_change = std::numeric_limits<double>::infinity();
  std::mt19937 rng(control.seed);
  EpSchedule schedule = control.schedule;

  for (int sweep = 1; sweep <= control.max_iter; ++sweep) {
    if (interrupt) interrupt();
    old_mean = r.mean;
    old_var = r.variance;
    if (schedule == EpSchedule::parallel) {
      cavities(r, r.site_precision, r.site_nu, m, v);
      for (Eigen::Index i = 0; i < n; ++i) {
        double tau, nu;
        site_from_moments(lik.moments(targets[i], m[i], v[i]), m[i], v[i], &tau, &nu);
        r.site_precision[i] = (1.0 - d) * r.site_precision[i] + d * tau;
        r.site_nu[i] = (1.0 - d) * r.site_nu[i] + d * nu;
      }
    } else {
      prior.begin_sequential(r);
      const std::vector<Eigen::Index> order = random_order(n, rng);
      for (Eigen::Index k = 0; k < n; ++k) {
        if (interrupt && k % 256 == 255) interrupt();
        const Eigen::Index i = order[k];
        double s2, mu;
        prior.marginal(i, &s2, &mu);
        s2 = std::max(s2, 1e-300);
        const double denom = std::max(1.0 - r.site_precision[i] * s2, 1e-12);
        const double vi = s2 / denom;
        const double mi = (mu - s2 * r.site_nu[i]) / denom;
        double tau, nu;
        site_from_moments(lik.moments(targets[i], mi, vi), mi, vi, &tau, &nu);
        tau = (1.0 - d) * r.site_precision[i] + d * tau;
        nu = (1.0 - d) * r.site_nu[i] + d * nu;
        const double dtau = tau - r.site_precision[i];
        const double dnu = nu - r.site_nu[i];
        r.site_precision[i] = tau;
        r.site_nu[i] = nu;
        prior.update_site(i, dtau, dnu, r.site_nu);
      }
      prior.end_sequential();
    }
    prior.posterior(r.site_precision, r.site_nu, r);
    floor_variances(r);
    const double change = marginal_change(r, old_mean, old_var);
    r.status.iterations = sweep;
    r.last_damping = d;
    if (!std::isfinite(change))
      throw std::runtime_error("EP produced non-finite posterior moments");
    // A damped sweep moves the marginals by about d times the undamped
    // update; residual = change / d estimates the latter, so that neither
    // the convergence test nor the step rule is fooled by small steps.
    const double residual = change / d;
    r.status.change = residual;
    if (residual < control.tol) {
      r.status.converged = true;
      break;
    }
    if (schedule == EpSchedule::parallel) {
      d = residual < previous_change ? std::min(1.0, d * 1.1) : d * 0.5;
      // Parallel updates that need heavy damping are oscillating (a nearly
      // box-shaped likelihood, huge C): finish with sequential sweeps, which
      // have the same fixed point and do not oscillate.
      if (d < kMinParallelDamping) {
        schedule = EpSchedule::sequential;
        d = control.damping;
      }
    }
    previous_change = residual;
  }
  finish(targets, lik, r);
}

template <class Likelihood, class Prior>
EpResult ep_run(Prior& prior, const Eigen::VectorXd& targets, const Likelihood& lik,
                const EpControl& control, const std::function<void()>& interrupt) {
  if (prior.size() != targets.size())
    throw std::invalid_argument("kernel matrix and targets differ in size");
  if (!targets.allFinite()) throw std::invalid_argument("targets must be finite");
  if (!(control.damping > 0.0 && control.damping <= 1.0))
    throw std::invalid_argument("EP damping must lie in (0, 1]");
  if (!(control.tol > 0.0)) throw std::invalid_argument("EP's 'tol' must be positive");
  if (control.max_iter < 1) throw std::invalid_argument("EP's 'max_iter' must be >= 1");
  const Eigen::Index n = prior.size();
  const bool given = control.initial_precision.size() != 0 || control.initial_nu.size() != 0;
  if (given && (control.initial_precision.size() != n || control.initial_nu.size() != n))
    throw std::invalid_argument("initial EP sites differ in size from the data");
  if (given && usable_sites(control.initial_precision, control.initial_nu)) {
    EpResult warm;
    warm.site_precision = control.initial_precision;
    warm.site_nu = control.initial_nu;
    warm.warm_start = true;
    try {
      ep_iterate(prior, targets, lik, control, interrupt, warm);
      return warm;
    } catch (const std::exception&) {
      // The given sites led where the posterior or a site's moments cannot
      // be formed (extreme sites: precisions near the 1e300 clamp, huge
      // means).  The inputs were checked above, so start again from the
      // prior; a failure there is reported.  (R's interrupt is not a
      // std::exception and passes through.)
    }
  }
  EpResult r;
  r.site_precision = Eigen::VectorXd::Zero(n);
  r.site_nu = Eigen::VectorXd::Zero(n);
  ep_iterate(prior, targets, lik, control, interrupt, r);
  return r;
}

}  // namespace tap_detail

// EP / TAP fit of a zero-mean GP with kernel matrix K.
//
// parallel schedule: every sweep computes all cavities from the current
// posterior, moves each site a fraction d of the way to its update, and
// refactors B once.  d starts at control.damping, grows by 1.1 (up to 1)
// after a sweep that reduced the residual (change / d) and halves after one
// that did not, so the undamped (fastest) step is used whenever it is stable;
// once d falls below kMinParallelDamping the fit continues with
// sequential sweeps (same fixed point; they do not oscillate).
//
// sequential schedule: sites updated one at a time in a seeded random order,
// the posterior covariance kept by rank-one updates, and recomputed from a
// fresh factorisation after each sweep (long chains of rank-one updates lose
// precision).
template <class Likelihood>
EpResult ep_fit(const Eigen::MatrixXd& K, const Eigen::VectorXd& targets, const Likelihood& lik,
                const EpControl& control, const std::function<void()>& interrupt) {
  tap_detail::check_inputs(K, targets);
  DensePrior prior(K);
  return tap_detail::ep_run(prior, targets, lik, control, interrupt);
}

// The same fit with the prior covariance given as K = G G' (G n x r, e.g. a
// pivoted Cholesky factor from lowrank.hpp): every sweep costs O(n r^2)
// instead of O(n^3).  result.factor holds G and result.chol the factor of
// A = I + G' S G.
template <class Likelihood>
EpResult ep_fit_low_rank(const Eigen::MatrixXd& G, const Eigen::VectorXd& targets,
                         const Likelihood& lik, const EpControl& control,
                         const std::function<void()>& interrupt) {
  if (G.rows() < 1 || G.cols() < 1) throw std::invalid_argument("empty low-rank factor");
  if (!G.allFinite()) throw std::invalid_argument("low-rank factor must be finite");
  LowRankPrior prior(G);
  return tap_detail::ep_run(prior, targets, lik, control, interrupt);
}

// (K + S^-1)^-1 = S^1/2 B^-1 S^1/2 from a fit (dense or low-rank), the
// matrix R of the evidence gradient 1/2 tr((w w' - R) dK/dtheta).  O(n^3) or
// O(n^2 r); used only for hyperparameter gradients.
inline Eigen::MatrixXd ep_site_inverse(const EpResult& r) {
  const Eigen::Index n = r.site_precision.size();
  const Eigen::VectorXd sw = r.site_precision.cwiseSqrt();
  const auto L = r.chol.triangularView<Eigen::Lower>();
  if (r.factor.size() == 0) {
    Eigen::MatrixXd m = sw.asDiagonal();  // L^-1 S^1/2
    L.solveInPlace(m);
    Eigen::MatrixXd out(n, n);
    out.setZero();
    out.selfadjointView<Eigen::Lower>().rankUpdate(m.transpose());
    return out.selfadjointView<Eigen::Lower>();
  }
  // R = S - S G A^-1 G' S
  Eigen::MatrixXd m = r.factor.transpose() * r.site_precision.asDiagonal();
  L.solveInPlace(m);
  Eigen::MatrixXd out = -(m.transpose() * m);
  out.diagonal() += r.site_precision;
  return out;
}

// Gao, Gunn and Harris' section 4 iteration, kept for comparison: inner
// updates w_i += eta (F_i / G_i - w_i) of all weights at once from the
// cavity means <y_i>_i = (K w)_i - sigma_i^2 w_i, and every M inner steps an
// outer update of Sigma_i and the cavity variances sigma_i^2 (eq. 3.11).  The
// learning rate adapts as in Opper and Winther's algorithm (times 1.1 when the
// error sum_i (F_i/G_i - w_i)^2 fell, halved otherwise), since the fixed eta = 0.05
// diverges on the paper's own example for C >= 2 (DESIGN.md errata 8).
struct PaperControl {
  // No defaults here (see solver_status.hpp): mfsvr_control() holds them.
  double eta = kUnset;      // first learning rate, in (0, 1]
  int inner = 0;            // M, inner steps per outer one
  int max_iter = 0;         // cap on outer iterations
  double tol = kUnset;      // on max_i |F_i/G_i - w_i| / (1 + max |y|) and on sigma^2
  bool adaptive = true;     // eta x 1.1 / 2 as the error falls / rises
  std::uint32_t seed = 0;   // of the random starting weights
};

// The result: the EP record at the paper's weights (its sites, evidence and
// posterior marginals), and the learning rate eta the iteration ended with.
struct PaperFit {
  EpResult ep;
  double eta = 0.0;
};

template <class Likelihood>
PaperFit paper_fit(const Eigen::MatrixXd& K, const Eigen::VectorXd& targets, const Likelihood& lik,
                   const PaperControl& control, const std::function<void()>& interrupt) {
  tap_detail::check_inputs(K, targets);
  if (!(control.eta > 0.0 && control.eta <= 1.0) || control.inner < 1 || control.max_iter < 1 ||
      !(control.tol > 0.0))
    throw std::invalid_argument(
        "the paper's iteration needs 'eta' in (0, 1], 'inner' >= 1, 'max_iter' >= 1 and "
        "'tol' > 0");
  const Eigen::Index n = K.rows();
  std::mt19937 rng(control.seed);
  std::uniform_real_distribution<double> unif(-1e-3, 1e-3);
  Eigen::VectorXd w(n);
  for (Eigen::Index i = 0; i < n; ++i) w[i] = unif(rng);
  Eigen::VectorXd sigma2 = K.diagonal();
  Eigen::VectorXd tau = Eigen::VectorXd::Zero(n), cav(n), alpha(n);
  double eta = control.eta;
  double previous_sq = std::numeric_limits<double>::infinity();
  EpResult r;
  DensePrior prior(K);
  double scale = 0.0;  // size of the weights, for a relative test
  for (Eigen::Index i = 0; i < n; ++i) scale = std::max(scale, std::fabs(targets[i]));
  for (int outer = 1; outer <= control.max_iter; ++outer) {
    if (interrupt) interrupt();
    double step = 0.0;
    // each outer update moves the fixed point of the inner iteration, so
    // the error is compared within one inner cycle only
    previous_sq = std::numeric_limits<double>::infinity();
    for (int it = 0; it < control.inner; ++it) {
      cav.noalias() = K * w;
      cav -= sigma2.cwiseProduct(w);
      for (Eigen::Index i = 0; i < n; ++i)
        alpha[i] = lik.moments(targets[i], cav[i], sigma2[i]).dlog_z;
      const Eigen::VectorXd delta = alpha - w;
      step = delta.cwiseAbs().maxCoeff();
      w += eta * delta;
      const double sq = delta.squaredNorm();  // Opper and Winther's error
      if (control.adaptive) {
        eta = sq < previous_sq ? std::min(1.0, eta * 1.1) : std::max(eta * 0.5, 1e-6);
        previous_sq = sq;
      }
    }
    // outer update: Sigma_i from the curvature, then sigma_i^2 (eq. 3.11)
    cav.noalias() = K * w;
    cav -= sigma2.cwiseProduct(w);
    Eigen::VectorXd nu(n);
    for (Eigen::Index i = 0; i < n; ++i) {
      const SiteMoments mo = lik.moments(targets[i], cav[i], sigma2[i]);
      tap_detail::site_from_moments(mo, cav[i], sigma2[i], &tau[i], &nu[i]);
    }
    prior.posterior(tau, nu, r);
    tap_detail::floor_variances(r);
    double var_change = 0.0;
    for (Eigen::Index i = 0; i < n; ++i) {
      const double s2 = r.variance[i];
      const double denom = std::max(1.0 - tau[i] * s2, 1e-12);
      const double updated = s2 / denom;
      var_change = std::max(var_change, std::fabs(updated / sigma2[i] - 1.0));
      sigma2[i] = updated;
    }
    r.status.iterations = outer;
    r.status.change = std::max(step / (1.0 + scale), var_change);
    if (!std::isfinite(r.status.change)) {
      r.status.reason = "the iteration diverged (non-finite weights or variances)";
      break;
    }
    if (r.status.change < control.tol) {
      r.status.converged = true;
      break;
    }
  }
  r.status.tol = control.tol;
  // Report the paper's own weights; the sites reproduce them at the fixed
  // point, and the evidence and posterior marginals are computed from them.
  cav.noalias() = K * w;
  cav -= sigma2.cwiseProduct(w);
  Eigen::VectorXd nu(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const SiteMoments mo = lik.moments(targets[i], cav[i], sigma2[i]);
    tap_detail::site_from_moments(mo, cav[i], sigma2[i], &tau[i], &nu[i]);
  }
  r.site_precision = tau;
  r.site_nu = nu;
  prior.posterior(tau, nu, r);
  tap_detail::floor_variances(r);
  tap_detail::finish(targets, lik, r);
  r.weights = w;
  r.mean.noalias() = K * w;
  PaperFit out;
  out.ep = std::move(r);
  out.eta = eta;
  return out;
}

}  // namespace gpsvm

#endif  // GPSVM_TAP_HPP
