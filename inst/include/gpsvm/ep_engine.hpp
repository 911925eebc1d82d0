// The expectation-propagation (EP) engine shared by mfsvr() and the TAP
// classifier: the iteration over Gaussian sites, the site updates from a
// likelihood's tilted moments, and the EP evidence.  It is generic in two
// things: the Likelihood (likelihoods.hpp) and the representation of the
// prior covariance (ep_priors.hpp: dense K, or a low-rank factor K = G G').
//
// TAP mean field (Opper and Winther 2000; Gao, Gunn and Harris 2002, eqs.
// 3.7-3.11) and EP have the same fixed point: with cavity N(m_i, v_i) at
// training point i and a Gaussian site of precision tau_i and
// precision-times-mean nu_i,
//   w_i   = d log Z_i / d m_i            (the TAP weights, posterior mean K w),
//   1/tau_i = -1 / (d2 log Z_i / dm_i^2) - v_i   (Sigma_i of eq. 3.11).
// Sites are stored as (tau_i >= 0, nu_i), never as variances 1/tau_i, which
// are infinite for points deep inside the epsilon tube.
//
// A Likelihood provides
//   SiteMoments moments(double target, double cavity_mean, double cavity_var) const
// returning log Z = log integral p(target | f) N(f; m, v) df and its first
// and second derivatives in m.  A Prior is described in ep_priors.hpp.
//
// Pure C++17 + Eigen: no R headers.
#ifndef GPSVM_EP_ENGINE_HPP
#define GPSVM_EP_ENGINE_HPP

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "interrupt.hpp"
#include "likelihoods.hpp"
#include "solver_status.hpp"

namespace gpsvm {

enum class EpSchedule { parallel, accelerated, sequential };

// The parallel schedules hand over to sequential sweeps once their damping
// falls below this (a property of the algorithm, not a setting).
constexpr double kMinParallelDamping = 0.05;

// The accelerated schedule extrapolates from this many previous sweeps,
// once a sweep has moved no marginal by more than kAndersonStart (in the
// units of the convergence test).  Farther from the fixed point the map is
// far from linear, and extrapolating there sends sites to the 1e300 clamp
// and costs sweeps.  A longer memory, or a later start, does not save
// sweeps on the dense, low-rank and FITC classifiers.
constexpr int kAndersonMemory = 10;
constexpr double kAndersonStart = 0.1;

// The accelerated schedule hands over to the plain parallel one when this
// many sweeps have not halved its lowest residual.  Extrapolation can
// circle a fixed point without reaching it while each sweep still sets a
// marginally new low, which the memory rule above does not catch (two
// interleaved spirals with almost no noise do it, where the parallel
// schedule converges).  A run that converges halves its residual every few
// sweeps.
constexpr int kAcceleratedStall = 30;

// The rounding level of the marginals (rounding_level()) is measured once a
// residual below kProbeBelow has gone kRoundingProbe sweeps without halving,
// and a residual below kRoundingMargin times it counts as converged.  The
// margin: at a fixed point pinned by huge site precisions (large C, little
// input noise, duplicated inputs) the residual of the parallel schedules
// wanders within a few times the measured level, that of sequential sweeps
// up to about ten times it (their rank-one updates round more than one
// factorisation does); a smaller margin stops such runs only at a chance
// low, after thousands of sweeps.
constexpr double kProbeBelow = 1e-6;
constexpr int kRoundingProbe = 5;
constexpr double kRoundingMargin = 16.0;

struct EpControl {
  // parallel: all sites updated from one posterior, then one refactorisation
  // per sweep (damped; the step adapts, see iterate()).  accelerated: the
  // same sweeps at a fixed damping, each extrapolated from the previous ones
  // (Anderson acceleration, see AndersonMixer).  sequential: sites in a
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
  // tol * d), so that small damped steps do not look converged early.  A tol
  // below what double precision resolves for the current posterior counts
  // as that level, once measured (ep_detail::rounding_level(); status.reason
  // then says so).
  double tol = kUnset;
  // The parallel schedule's first step; the accelerated and sequential
  // schedules' step.  In (0, 1].
  double damping = kUnset;
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
  // Optionally, the posterior marginals (means, variances) that the initial
  // sites give on this very prior, when the caller has them: a fit at other
  // likelihood parameters on the same kernel matrix ended with them.  The
  // run then starts without refactorising (one posterior fewer); the
  // sequential schedule, which needs the factor, ignores them.  Marginals of
  // the wrong length, not finite or with a variance <= 0 are ignored.
  Eigen::VectorXd initial_mean;
  Eigen::VectorXd initial_variance;

  template <class Self, class Visit>
  static void fields(Self& s, Visit&& v) {
    v("max_iter", s.max_iter, rule::max_iter("EP's '{}' must be >= 1"));
    v("tol", s.tol, FieldRule{is_positive, "EP's '{}' must be positive", 0.0, kInf});
    v("damping", s.damping, FieldRule{is_step, "EP damping must lie in (0, 1]", 0.0, 1.0});
    v("seed", s.seed, rule::seed);
  }
};

// The Gaussian posterior N(mu, Sigma), Sigma = (K^-1 + S)^-1, mu = Sigma nu,
// of given sites, at the training points: what a prior representation
// computes (ep_priors.hpp), and what predictions need (ep_predict.hpp).
struct EpPosterior {
  Eigen::VectorXd weights;   // w = (K + S^-1)^-1 S^-1 nu; posterior mean K w
  Eigen::VectorXd mean;      // posterior means at the training points
  Eigen::VectorXd variance;  // posterior variances at the training points
  // Dense prior: lower Cholesky factor of B = I + S^1/2 K S^1/2 (n x n).
  // Low-rank prior K = G G' + diag(lambda): lower Cholesky factor of
  // A = I + G' W G (r x r).  Upper triangles unused.
  Eigen::MatrixXd chol;
  // FITC prior (K = G G' + diag(lambda), lambda != 0): the posterior mean of
  // the whitened inducing values u, beta = A^-1 G' (t nu) (ep_priors.hpp);
  // empty otherwise.  chol is then A's factor, m x m.
  Eigen::VectorXd low_rank_mean;
  // FITC prior: q_i = |L_A^-1 g_i|^2 for every row, the part of the
  // posterior variance the inducing inputs carry, Sigma_ii = d_i + t_i^2 q_i
  // (ep_priors.hpp); the predictive variances at the training inputs need it
  // again (inducing_summary(), fitc.hpp).  Empty otherwise.
  Eigen::VectorXd low_rank_variance;
  // FITC prior: G beta at every row, the mean of the part the inducing
  // inputs carry (the fitted values, inducing_summary()), kept from the
  // pass that forms the marginals so that no further pass recomputes G's
  // rows.  Empty otherwise, and where the posterior came from elsewhere.
  Eigen::VectorXd low_rank_fitted;
  double log_det_half = 0.0; // 1/2 log det B (= 1/2 log det A)
};

struct EpResult : EpPosterior {
  Eigen::VectorXd site_precision;  // tau_i >= 0
  Eigen::VectorXd site_nu;         // tau_i * site mean
  Eigen::VectorXd cavity_mean;
  Eigen::VectorXd cavity_var;
  double log_evidence = 0.0;
  // iterations are sweeps; change is the largest standardised change of a
  // posterior marginal in the last sweep, divided by its damping
  SolverStatus status;
  // The damping d of the last sweep: the fraction of the way each site moved
  // towards its update (1 = undamped EP).  The parallel schedule adapts it.
  double last_damping = 1.0;
  bool warm_start = false;         // started from EpControl's initial sites
};

// A caller's hook between sweeps, for a search over the likelihood's
// parameters that converges together with the sites (mfsvr.hpp): called
// after every sweep with the sites and their posterior and the sweep's
// residual (EpResult::status.change), it may replace the likelihood object
// the engine reads (the one the caller passed in) and returns whether it
// did.  A run ends only after a sweep at which it did not.
using EpAdjust = std::function<bool(const EpResult&, double)>;

namespace ep_detail {

// Rounding can only make a variance <= 0 when the posterior is pinned by
// its site; keep it positive.
inline void floor_variances(EpPosterior& post) {
  for (Eigen::Index i = 0; i < post.variance.size(); ++i)
    if (!(post.variance[i] > 1e-300)) post.variance[i] = 1e-300;
}

// The cavity N(m, v) of site i, from its posterior marginal (s2, mu) and its
// site (tau, nu): precisions and precision-means subtract.
inline void cavity(double s2, double mu, double tau, double nu, double* m, double* v) {
  double denom = 1.0 - tau * s2;  // tau_cavity * s2
  if (denom < 1e-12) denom = 1e-12;
  *v = s2 / denom;
  *m = (mu - s2 * nu) / denom;  // nu_cavity / tau_cavity, nu_cavity = mu / s2 - nu
}

inline void cavities(const EpPosterior& post, const Eigen::VectorXd& tau, const Eigen::VectorXd& nu,
                     Eigen::VectorXd& m, Eigen::VectorXd& v) {
  const Eigen::Index n = tau.size();
  m.resize(n);
  v.resize(n);
  for (Eigen::Index i = 0; i < n; ++i)
    cavity(post.variance[i], post.mean[i], tau[i], nu[i], &m[i], &v[i]);
}

// New site (tau, nu) for one cavity: the precision from the curvature,
// clamped at 0, and nu such that the posterior mean m + v d1 is matched
// whatever the clamping did.  The precision is 1 / v_tilted - 1 / v =
// -d2 / rho with rho = v_tilted / v = 1 + d2 v; where the likelihood gives
// rho directly and it is below kDirectRatio, (1 - rho) / (v rho) replaces
// -d2 / (1 + d2 v), whose denominator cancels there.
constexpr double kDirectRatio = 0.5;
inline void site_from_moments(const SiteMoments& mo, double m, double v, double* tau,
                              double* nu) {
  const double rho = mo.variance_ratio;
  double t = rho > 0.0 && rho < kDirectRatio ? (1.0 - rho) / (v * rho)
                                             : -mo.d2log_z / (1.0 + mo.d2log_z * v);
  if (!(t >= 0.0) || !std::isfinite(t)) t = t > 0.0 ? 1e300 : 0.0;
  *tau = t;
  *nu = t * m + mo.dlog_z * (1.0 + t * v);
}

// Largest standardised change of the posterior marginals; infinite when a
// marginal is not finite (std::max would silently drop a NaN, and a run
// whose means had become NaN would look converged).
inline double marginal_change(const EpPosterior& a, const Eigen::VectorXd& old_mean,
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

inline std::vector<Eigen::Index> random_order(Eigen::Index n, std::mt19937& rng) {
  std::vector<Eigen::Index> order(n);
  for (Eigen::Index i = 0; i < n; ++i) order[i] = i;
  for (Eigen::Index i = n - 1; i > 0; --i) {  // Fisher-Yates, portable
    const Eigen::Index j = static_cast<Eigen::Index>(rng() % static_cast<std::uint32_t>(i + 1));
    std::swap(order[i], order[j]);
  }
  return order;
}

// Sites a run can start from: finite, with precisions >= 0.
inline bool usable_sites(const Eigen::VectorXd& tau, const Eigen::VectorXd& nu) {
  return tau.allFinite() && nu.allFinite() && (tau.size() == 0 || tau.minCoeff() >= 0.0);
}

// Marginals a run can start from: n finite means and positive variances.
inline bool usable_marginals(const Eigen::VectorXd& mean, const Eigen::VectorXd& variance,
                             Eigen::Index n) {
  return mean.size() == n && variance.size() == n && mean.allFinite() && variance.allFinite() &&
         (n == 0 || variance.minCoeff() > 0.0);
}

// Moves site i a fraction d of the way to its update from cavity (m, v).
template <class Likelihood>
void damped_site_update(const Likelihood& lik, double target, double m, double v, double d,
                        double* tau, double* nu) {
  double t, u;
  site_from_moments(lik.moments(target, m, v), m, v, &t, &u);
  *tau = (1.0 - d) * *tau + d * t;
  *nu = (1.0 - d) * *nu + d * u;
}

// Anderson acceleration of the fixed-point iteration x -> g(x) on the sites
// x = (tau, nu) (type II, Walker and Ni 2011, SIAM J. Numer. Anal. 49(4)).
// With f = g(x) - x and the differences dF, dG of the last few f and g, the
// next iterate is g_k - dG gamma, gamma minimising |f_k - dF gamma|: the
// secant model of the map that the last sweeps saw, solved for its fixed
// point.  It changes the path to the fixed point, never the fixed point: a
// run ends only on a plain sweep that passes the convergence test.
class AndersonMixer {
 public:
  explicit AndersonMixer(int memory) : memory_(memory) {}

  void reset() {
    dg_.clear();
    df_.clear();
    last_g_.resize(0);
    last_f_.resize(0);
    undo_ = Undo();
  }

  // Records the pair (x, g = g(x)) and returns the extrapolated iterate
  // (g itself while there is no history).
  Eigen::VectorXd mix(const Eigen::VectorXd& x, const Eigen::VectorXd& g) {
    const Eigen::MatrixXd normal = record(x, g);
    if (normal.rows() == 0) return g;
    const Eigen::VectorXd gamma = coefficients(normal);
    if (!gamma.allFinite()) {
      reset();
      return g;
    }
    return combination(gamma);
  }

  // The steps of mix(), for sites held in parts (ep_split.hpp): each part
  // records its rows' pair and replies its rows' terms of the normal
  // equations; the driver solves their sum for gamma; each part forms its
  // rows of the iterate.
  // record(): the pair added to the history; returns [dF'dF | dF'f]
  // (k x (k + 1), k the history's length, sums over x's entries).
  // `undoable`: what the pair displaces is kept until the next record() or
  // reset(), so that unrecord() can put the history back as it was (a part
  // that recorded a sweep ahead the driver then did not take).
  Eigen::MatrixXd record(const Eigen::VectorXd& x, const Eigen::VectorXd& g,
                         bool undoable = false) {
    const Eigen::VectorXd f = g - x;
    undo_ = Undo();
    undo_.valid = undoable;
    if (last_f_.size() == f.size()) {
      if (static_cast<int>(df_.size()) == memory_) {
        if (undoable) {
          undo_.evicted = true;
          undo_.dg = std::move(dg_.front());
          undo_.df = std::move(df_.front());
        }
        dg_.erase(dg_.begin());
        df_.erase(df_.begin());
      }
      dg_.push_back(g - last_g_);
      df_.push_back(f - last_f_);
      undo_.pushed = true;
    }
    if (undoable) {
      undo_.last_g = std::move(last_g_);
      undo_.last_f = std::move(last_f_);
    }
    last_g_ = g;
    last_f_ = f;
    const Eigen::Index k = static_cast<Eigen::Index>(df_.size());
    Eigen::MatrixXd normal(k, k + 1);
    for (Eigen::Index a = 0; a < k; ++a) {
      normal(a, k) = df_[a].dot(f);
      for (Eigen::Index b = 0; b <= a; ++b) normal(a, b) = normal(b, a) = df_[a].dot(df_[b]);
    }
    return normal;
  }

  // gamma from the normal equations [dF'dF | dF'f] (not finite when they
  // cannot be solved: the caller then resets).
  static Eigen::VectorXd coefficients(const Eigen::MatrixXd& equations) {
    const Eigen::Index k = equations.rows();
    Eigen::MatrixXd normal = equations.leftCols(k);
    // A small ridge: consecutive differences become nearly collinear as the
    // iteration converges.
    normal.diagonal().array() += 1e-10 * normal.trace() + 1e-300;
    return normal.ldlt().solve(equations.col(k));
  }

  // The iterate g - dG gamma of the last recorded pair.
  Eigen::VectorXd combination(const Eigen::VectorXd& gamma) const {
    if (gamma.size() != static_cast<Eigen::Index>(dg_.size()))
      throw std::logic_error("Anderson coefficients differ in number from the history");
    Eigen::VectorXd next = last_g_;
    for (Eigen::Index a = 0; a < gamma.size(); ++a) next -= gamma[a] * dg_[a];
    return next;
  }

  // The history as before the last record(x, g, true).
  void unrecord() {
    if (!undo_.valid) throw std::logic_error("no undoable record to undo");
    if (undo_.pushed) {
      dg_.pop_back();
      df_.pop_back();
    }
    if (undo_.evicted) {
      dg_.insert(dg_.begin(), std::move(undo_.dg));
      df_.insert(df_.begin(), std::move(undo_.df));
    }
    last_g_ = std::move(undo_.last_g);
    last_f_ = std::move(undo_.last_f);
    undo_ = Undo();
  }

  // Whether the last mix() extrapolated (had a history).
  bool extrapolating() const { return !df_.empty(); }

 private:
  // what an undoable record() displaced
  struct Undo {
    bool valid = false, pushed = false, evicted = false;
    Eigen::VectorXd dg, df, last_g, last_f;
  };
  int memory_;
  std::vector<Eigen::VectorXd> dg_, df_;
  Eigen::VectorXd last_g_, last_f_;
  Undo undo_;
};

// One parallel sweep: every site from the cavities of the current posterior.
template <class Likelihood>
void parallel_sweep(const Eigen::VectorXd& targets, const Likelihood& lik, double d,
                    EpResult& r) {
  Eigen::VectorXd m, v;
  cavities(r, r.site_precision, r.site_nu, m, v);
  for (Eigen::Index i = 0; i < targets.size(); ++i)
    damped_site_update(lik, targets[i], m[i], v[i], d, &r.site_precision[i], &r.site_nu[i]);
}

// One sequential sweep in a random order, the prior keeping the posterior
// current by rank-one updates.
template <class Likelihood, class Prior>
void sequential_sweep(Prior& prior, const Eigen::VectorXd& targets, const Likelihood& lik,
                      double d, std::mt19937& rng, const std::function<void()>& interrupt,
                      EpResult& r) {
  const Eigen::Index n = targets.size();
  prior.begin_sequential(r, r.site_nu, interrupt);
  const std::vector<Eigen::Index> order = random_order(n, rng);
  InterruptPoll poll(interrupt);
  for (Eigen::Index k = 0; k < n; ++k) {
    poll();
    const Eigen::Index i = order[k];
    double s2, mu, m, v;
    prior.marginal(i, &s2, &mu);
    cavity(std::max(s2, 1e-300), mu, r.site_precision[i], r.site_nu[i], &m, &v);
    const double old_tau = r.site_precision[i], old_nu = r.site_nu[i];
    damped_site_update(lik, targets[i], m, v, d, &r.site_precision[i], &r.site_nu[i]);
    prior.update_site(i, r.site_precision[i] - old_tau, r.site_nu[i] - old_nu, r.site_nu);
  }
  prior.end_sequential();
}

// The posterior of the current sites, from a fresh factorisation.
template <class Prior>
void refresh_posterior(Prior& prior, EpResult& r, const std::function<void()>& interrupt) {
  prior.posterior(r.site_precision, r.site_nu, r, interrupt);
  floor_variances(r);
}

// How far rounding alone moves the marginals of the sites in r: the
// standardised change of the posterior when every site is moved by one unit
// of rounding (relative machine epsilon, signs alternating), which is what
// a factorisation's own backward error does to the matrix it factors.  At
// site precisions of 1e4 to 1e8 (huge C, duplicated inputs, noise-free
// targets) this is 1e-11 to 1e-8, and sweeps at the fixed point move the
// marginals by a few times that: no tolerance below it can be met.  Costs
// two posteriors (the probe's and r's own again, which leaves the prior's
// state as the sweep left it).
// Sites moved by one unit of rounding, signs alternating by row number
// (`first` the number of the first row: rows held apart move as together).
inline void perturb_by_rounding(Eigen::VectorXd& tau, Eigen::VectorXd& nu, Eigen::Index first) {
  const double unit = std::numeric_limits<double>::epsilon();
  for (Eigen::Index i = 0; i < tau.size(); ++i) {
    const double sign = (first + i) % 2 == 0 ? 1.0 : -1.0;
    tau[i] *= 1.0 + sign * unit;
    nu[i] *= 1.0 - sign * unit;
  }
}

template <class Prior>
double rounding_level(Prior& prior, EpResult& r, const std::function<void()>& interrupt) {
  Eigen::VectorXd tau = r.site_precision, nu = r.site_nu;
  perturb_by_rounding(tau, nu, 0);
  EpPosterior probe;
  prior.posterior(tau, nu, probe, interrupt);
  floor_variances(probe);
  refresh_posterior(prior, r, interrupt);
  const double level = marginal_change(probe, r.mean, r.variance);
  return std::isfinite(level) ? level : 0.0;
}

inline std::string rounding_reason(double level) {
  char text[128];
  std::snprintf(text, sizeof text,
                "at the rounding level of its posterior (%.2g), above the tolerance", level);
  return text;
}

// The EP log evidence of a fit whose sites, posterior and cavities are set,
//   log Z_EP = sum_i log Z_i - sum_i log L_ii + 1/2 sum_i log(1 + tau_i v_i)
//              + 1/2 nu' mu + sum_i (tau_i m_i^2 - 2 m_i nu_i - nu_i^2 v_i) / (2 (1 + tau_i v_i)),
// Rasmussen and Williams' eq. (3.65) with the 1/tau_i terms cancelled
// analytically (nu' Sigma nu = nu' mu), so tau_i = 0 needs no special case.
// (cavities m, v of the sites in r)
// Every term but - r.log_det_half is a sum over rows: rows held apart (the
// parts of a split run, ep_split.hpp) add their evidence_terms().
template <class Likelihood>
double evidence_terms(const Eigen::VectorXd& targets, const Likelihood& lik, const EpResult& r,
                      const Eigen::VectorXd& cavity_mean, const Eigen::VectorXd& cavity_var) {
  double lz = 0.0, quad = 0.0, logterm = 0.0;
  for (Eigen::Index i = 0; i < targets.size(); ++i) {
    const double m = cavity_mean[i], v = cavity_var[i];
    const double tau = r.site_precision[i], nu = r.site_nu[i];
    lz += lik.moments(targets[i], m, v).log_z;
    logterm += 0.5 * std::log1p(tau * v);
    quad += (tau * m * m - 2.0 * m * nu - nu * nu * v) / (2.0 * (1.0 + tau * v));
  }
  return lz + logterm + 0.5 * r.site_nu.dot(r.mean) + quad;
}
template <class Likelihood>
double log_evidence(const Eigen::VectorXd& targets, const Likelihood& lik, const EpResult& r,
                    const Eigen::VectorXd& cavity_mean, const Eigen::VectorXd& cavity_var) {
  return evidence_terms(targets, lik, r, cavity_mean, cavity_var) - r.log_det_half;
}

// The cavities and the evidence of a fit whose sites and posterior are set.
template <class Likelihood>
void add_cavities_and_evidence(const Eigen::VectorXd& targets, const Likelihood& lik,
                               EpResult& r) {
  cavities(r, r.site_precision, r.site_nu, r.cavity_mean, r.cavity_var);
  r.log_evidence = log_evidence(targets, lik, r, r.cavity_mean, r.cavity_var);
}

// Sites as one vector (tau, nu), the state the accelerated schedule mixes.
inline Eigen::VectorXd stacked_sites(const EpResult& r) {
  Eigen::VectorXd x(2 * r.site_precision.size());
  x << r.site_precision, r.site_nu;
  return x;
}

// The accelerated schedule's step after a parallel sweep from sites x has
// left its update g in r: records (x, g) and, when 'extrapolate', replaces
// g by the extrapolated sites (precisions kept >= 0).  Sites at the 1e300
// clamp (points pinned by their likelihood) are not extrapolated: the
// history restarts.  Returns whether the sites differ from the plain step.
// (sites at or beyond the clamp, or not finite, restart the history)
inline bool extrapolable(const Eigen::VectorXd& g) { return g.cwiseAbs().maxCoeff() < 1e100; }

// Sites from the stacked vector (tau, nu), precisions kept >= 0.
inline void set_stacked_sites(const Eigen::VectorXd& x, EpResult& r) {
  const Eigen::Index n = r.site_precision.size();
  r.site_precision = x.head(n).cwiseMax(0.0);
  r.site_nu = x.tail(n);
}

inline bool anderson_step(AndersonMixer& mixer, const Eigen::VectorXd& x, bool extrapolate,
                          EpResult& r) {
  const Eigen::VectorXd g = stacked_sites(r);
  if (!extrapolable(g)) {
    mixer.reset();
    return false;
  }
  const Eigen::VectorXd next = mixer.mix(x, g);
  if (!extrapolate || !mixer.extrapolating()) return false;
  set_stacked_sites(next, r);
  return true;
}

// The steps of an EP run that touch the rows: the sites, their posterior
// marginals and the extrapolation's history.  iterate() holds the schedule's
// rules and asks these steps of a "sweeps" object: LocalSweeps below, every
// row in this process; or SplitSweeps (ep_split.hpp), the rows held in
// parts elsewhere, which exchange only the prior's r x r and r sums.
//   refresh()            the posterior of the current sites (r's status,
//                        chol, low_rank_mean and log_det_half set; for
//                        LocalSweeps r's marginals too)
//   keep_marginals()     remember the marginals, for change()
//   change()             the largest standardised change since then
//   parallel(d)          every site moved a fraction d towards its update
//   accelerated(d, x)    the same, then the Anderson step (extrapolating
//                        when x); whether the sites differ from the plain step
//   reset_history()      forget the extrapolation's history
//   sequential(d, rng)   one sequential sweep
//   rounding_level()     as ep_detail::rounding_level()
//   finish()             cavities and the evidence
template <class Likelihood, class Prior>
class LocalSweeps {
 public:
  LocalSweeps(Prior& prior, const Eigen::VectorXd& targets, const Likelihood& lik,
              const std::function<void()>& interrupt, EpResult& r)
      : prior_(prior), targets_(targets), lik_(lik), interrupt_(interrupt), r_(r),
        mixer_(kAndersonMemory) {}
  void refresh() { refresh_posterior(prior_, r_, interrupt_); }
  void keep_marginals() {
    old_mean_ = r_.mean;
    old_var_ = r_.variance;
  }
  double change() const { return marginal_change(r_, old_mean_, old_var_); }
  void parallel(double d) { parallel_sweep(targets_, lik_, d, r_); }
  bool accelerated(double d, bool extrapolate) {
    const Eigen::VectorXd x = stacked_sites(r_);  // the sweep's start, for the mixer
    parallel_sweep(targets_, lik_, d, r_);
    return anderson_step(mixer_, x, extrapolate, r_);
  }
  void reset_history() { mixer_.reset(); }
  void sequential(double d, std::mt19937& rng) {
    sequential_sweep(prior_, targets_, lik_, d, rng, interrupt_, r_);
  }
  double rounding_level() { return ep_detail::rounding_level(prior_, r_, interrupt_); }
  void finish() { add_cavities_and_evidence(targets_, lik_, r_); }

 private:
  Prior& prior_;
  const Eigen::VectorXd& targets_;
  const Likelihood& lik_;
  const std::function<void()>& interrupt_;
  EpResult& r_;
  Eigen::VectorXd old_mean_, old_var_;
  AndersonMixer mixer_;
};

// The EP iteration from the sites in r (site_precision and site_nu set).
//
// parallel schedule: every sweep computes all cavities from the current
// posterior, moves each site a fraction d of the way to its update, and
// refactors once.  d starts at control.damping, grows by 1.1 (up to 1)
// after a sweep that reduced the residual (change / d) and halves after one
// that did not, so the undamped (fastest) step is used whenever it is stable;
// once d falls below kMinParallelDamping the fit continues with sequential
// sweeps (same fixed point; they do not oscillate).
//
// accelerated schedule: the same sweeps at d = control.damping, each
// followed (once the residual is below kAndersonStart) by an Anderson
// extrapolation from the last kAndersonMemory sweeps (which it keeps: 40 n
// doubles).  Its residuals are not monotone, so the rules differ: a
// residual more than twice the previous one restarts the history (the
// secant model no longer holds); kAndersonMemory sweeps without a new
// lowest residual halve d and restart (and below kMinParallelDamping hand
// over to sequential sweeps, as above); kAcceleratedStall sweeps that do
// not halve the lowest residual hand over to the parallel schedule.  An
// extrapolated step that passes the convergence test is confirmed by a
// plain sweep, so that a run converges on the test's own terms.
//
// sequential schedule: sites updated one at a time in a seeded random order,
// the posterior covariance kept by rank-one updates, and recomputed from a
// fresh factorisation after each sweep (long chains of rank-one updates lose
// precision).
//
// `fresh`: r's marginals are those of its sites (a caller that set them
// saves the first posterior).
// The parallel schedule's next step after a sweep that reduced the residual
// (see iterate()); SplitSweeps guesses it to sweep ahead.
inline double grown_damping(double d) { return std::min(1.0, d * 1.1); }

template <class Sweeps>
void iterate(Sweeps& sweeps, const EpControl& control, const std::function<void()>& interrupt,
             EpResult& r, const EpAdjust& adjust, bool fresh) {
  r.status.tol = control.tol;
  if (!fresh || control.schedule == EpSchedule::sequential) sweeps.refresh();
  double d = control.damping;
  double previous_residual = std::numeric_limits<double>::infinity();
  double lowest_residual = previous_residual;
  int since_lowest = 0;
  double stall_mark = previous_residual;  // the residual to halve
  int since_mark = 0;
  bool confirm = false;  // the last extrapolated step passed the test
  double stall_floor_mark = std::numeric_limits<double>::infinity();
  int since_floor_mark = 0;
  double resolution = 0.0;  // the measured rounding level, once measured
  std::mt19937 rng(control.seed);
  EpSchedule schedule = control.schedule;
  InterruptPoll poll(interrupt);
  for (int sweep = 1; sweep <= control.max_iter; ++sweep) {
    poll();
    sweeps.keep_marginals();
    bool extrapolated = false;
    if (schedule == EpSchedule::sequential) {
      sweeps.sequential(d, rng);
    } else if (schedule == EpSchedule::parallel) {
      sweeps.parallel(d);
    } else {
      extrapolated = sweeps.accelerated(d, !confirm && previous_residual < kAndersonStart);
    }
    sweeps.refresh();
    const double change = sweeps.change();
    r.status.iterations = sweep;
    r.last_damping = d;
    if (!std::isfinite(change))
      throw std::runtime_error("EP produced non-finite posterior moments");
    // A damped sweep moves the marginals by about d times the undamped
    // update; residual = change / d estimates the latter, so that neither
    // the convergence test nor the step rule is fooled by small steps.
    const double residual = change / d;
    r.status.change = residual;
    const bool moved = adjust && adjust(r, residual);
    // A run whose residual has stopped halving near the rounding level
    // measures that level (again after each kRoundingProbe sweeps without
    // halving) and counts a residual within kRoundingMargin of it as
    // converged: status.reason says so.
    if (residual < stall_floor_mark) {
      stall_floor_mark = 0.5 * residual;
      since_floor_mark = 0;
    } else if (residual < kProbeBelow && residual >= control.tol && !moved &&
               ++since_floor_mark >= kRoundingProbe) {
      resolution = kRoundingMargin * sweeps.rounding_level();
      since_floor_mark = 0;
    }
    // (the level is a change of the marginals; the residual is change / d)
    const double tol = std::max(control.tol, resolution / d);
    confirm = extrapolated && residual < tol && !moved;
    if (residual < tol && !extrapolated && !moved) {
      r.status.converged = true;
      if (residual >= control.tol) r.status.reason = rounding_reason(resolution / d);
      break;
    }
    if (moved) {
      // a new map: its step rules start afresh (a residual that grows
      // because the likelihood moved is no oscillation)
      previous_residual = lowest_residual = stall_mark = std::numeric_limits<double>::infinity();
      since_lowest = since_mark = 0;
      sweeps.reset_history();
      continue;
    }
    if (schedule == EpSchedule::parallel) {
      d = residual < previous_residual ? grown_damping(d) : d * 0.5;
    } else if (schedule == EpSchedule::accelerated) {
      if (residual > 2.0 * previous_residual) sweeps.reset_history();
      if (residual < lowest_residual) {
        lowest_residual = residual;
        since_lowest = 0;
      } else if (++since_lowest >= kAndersonMemory) {
        d *= 0.5;
        sweeps.reset_history();
        lowest_residual = std::numeric_limits<double>::infinity();
        since_lowest = 0;
      }
      if (residual < 0.5 * stall_mark) {
        stall_mark = residual;
        since_mark = 0;
      } else if (++since_mark >= kAcceleratedStall) {
        schedule = EpSchedule::parallel;
      }
    }
    // Parallel updates that need heavy damping are oscillating (a nearly
    // box-shaped likelihood, huge C): finish with sequential sweeps, which
    // have the same fixed point and do not oscillate.
    if (schedule != EpSchedule::sequential && d < kMinParallelDamping) {
      schedule = EpSchedule::sequential;
      d = control.damping;
    }
    previous_residual = residual;
  }
  sweeps.finish();
}

template <class Likelihood, class Prior>
void iterate(Prior& prior, const Eigen::VectorXd& targets, const Likelihood& lik,
             const EpControl& control, const std::function<void()>& interrupt, EpResult& r,
             const EpAdjust& adjust) {
  LocalSweeps<Likelihood, Prior> sweeps(prior, targets, lik, interrupt, r);
  iterate(sweeps, control, interrupt, r, adjust, r.mean.size() == r.site_precision.size());
}

inline void check_control(const EpControl& control, Eigen::Index n) {
  check_fields(control);
  const bool given = control.initial_precision.size() != 0 || control.initial_nu.size() != 0;
  if (given && (control.initial_precision.size() != n || control.initial_nu.size() != n))
    throw std::invalid_argument("initial EP sites differ in size from the data");
}

}  // namespace ep_detail

// EP with the prior covariance represented by `prior` (ep_priors.hpp), from
// the warm start in `control` when it has one, else from sites at 0.
template <class Likelihood, class Prior>
EpResult ep_run(Prior& prior, const Eigen::VectorXd& targets, const Likelihood& lik,
                const EpControl& control, const std::function<void()>& interrupt,
                const EpAdjust& adjust = {}) {
  if (prior.size() != targets.size())
    throw std::invalid_argument("kernel matrix and targets differ in size");
  if (!targets.allFinite()) throw std::invalid_argument("targets must be finite");
  const Eigen::Index n = prior.size();
  ep_detail::check_control(control, n);
  if (control.initial_precision.size() == n &&
      ep_detail::usable_sites(control.initial_precision, control.initial_nu)) {
    EpResult warm;
    warm.site_precision = control.initial_precision;
    warm.site_nu = control.initial_nu;
    warm.warm_start = true;
    if (ep_detail::usable_marginals(control.initial_mean, control.initial_variance, n)) {
      warm.mean = control.initial_mean;
      warm.variance = control.initial_variance;
    }
    try {
      ep_detail::iterate(prior, targets, lik, control, interrupt, warm, adjust);
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
  ep_detail::iterate(prior, targets, lik, control, interrupt, r, adjust);
  return r;
}

}  // namespace gpsvm

#endif  // GPSVM_EP_ENGINE_HPP
