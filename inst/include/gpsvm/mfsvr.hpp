// Mean-field (TAP = EP) support vector regression: Gao, Gunn and Harris
// (2002).  A zero-mean GP prior with kernel k and the epsilon-insensitive
// likelihood, fitted by the EP engine (ep_engine.hpp) on a dense or FITC
// prior (ep_priors.hpp, fitc.hpp), or by the paper's own iteration (mfsvr_paper.hpp);
// the evidence and its gradient in (log C, log epsilon, log sigma) at the EP
// fixed point.  Predictions are the engine's (ep_predict.hpp).
// Pure C++17 + Eigen: no R headers.
#ifndef GPSVM_MFSVR_HPP
#define GPSVM_MFSVR_HPP

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "ep_engine.hpp"
#include "ep_gradient.hpp"
#include "ep_priors.hpp"
#include "fitc.hpp"
#include "kernels.hpp"
#include "likelihoods.hpp"
#include "mfsvr_paper.hpp"

namespace gpsvm {

enum class MfsvrAlgorithm { ep, paper };


// mfsvr()'s default choice of C by the evidence, made while EP converges
// (an EpAdjust, ep_engine.hpp).  At the EP fixed point the evidence's
// gradient in log C is the explicit one, sum_i d log Z_i / d log C at the
// cavities; away from it that sum is off by about the EP residual per
// observation.  So after every sweep whose residual is below the gradient
// per observation (and below 0.1; it need not be below a tenth of `tol`),
// C moves to where the gradient is predicted to vanish: at first by Newton's
// step on the curvature in log C with the sites held
// (EpsilonInsensitive::log_C_curvature(), summed; at most 1 in log C, and a
// step of 0.5 along the gradient where that curvature is not negative),
// then the secant through the last two such points, kept inside the
// bracket where the gradient changes sign (bisection when the secant leaves
// it); without a bracket the secant's step, from the third on 1.5 times it
// (where the gradient flattens towards its zero, as on nearly noise-free
// data, the secant falls short again and again), at most twice the last step
// or 0.5, and at most 2, within [log_C_lower, log_C_upper].  C stays once the gradient is within `tol` per
// observation (or pushes against a bound), and EP goes on to its own
// tolerance; it moves again should the gradient drift beyond `tol` as EP
// converges; the fixed point, and the test of convergence, are EP's own at
// the final C.  (Waiting for a residual of a tenth of the gradient would
// cost sweeps and find the same C.)  One EP run then does what a search of
// separate fits did, for some sweeps more than one fit at a fixed C (more
// on nearly noise-free data, where the evidence is flat over a wide range
// of large C).  Newton's step with the held curvature makes the first
// move, where the sites are nearest their fixed point at that C and the
// curvature is good; the secant makes the later ones, where they are not
// (Newton's step at every move costs sweeps there).  bench/bench-mfsvr.R
// shows the sweeps and times.
struct MfsvrCSearchControl {
  double log_C_lower = kUnset, log_C_upper = kUnset;
  double tol = kUnset;  // on |d log Z / d log C| per observation
  int max_moves = 0;    // the most moves of C, >= 1

  // mfsvr_fit() words one error for these and C's place between the bounds
  template <class Self, class Visit>
  static void fields(Self& s, Visit&& v) {
    v("log_C_lower", s.log_C_lower, FieldRule{is_set, nullptr, -kInf, kInf});
    v("log_C_upper", s.log_C_upper, FieldRule{is_set, nullptr, -kInf, kInf});
    v("tol", s.tol, FieldRule{is_positive, nullptr, 0.0, kInf});
    v("max_moves", s.max_moves, FieldRule{is_at_least_one, nullptr, 0.0, 1000000.0});
  }
};

// Where C stood when the search moved it, and finally where it stopped.
struct MfsvrCSearchPoint {
  double C = 0.0;
  double gradient = 0.0;      // d log Z_EP / d log C (at the sweep's cavities)
  double log_evidence = 0.0;  // (at the sweep's sites)
  double residual = 0.0;      // EP's residual at that sweep
  int sweeps = 0;             // EP sweeps so far
};

struct MfsvrCSearchRecord {
  std::vector<MfsvrCSearchPoint> points;
  bool settled = false;  // the final gradient is within tol per observation
  bool at_lower = false, at_upper = false;  // and pushes against that bound
  int moves = 0;
};

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
  // Inducing inputs (m x p, rows): EP on the FITC prior (fitc.hpp) instead
  // of the dense K; empty for none.
  Eigen::MatrixXd inducing;
  // With inducing inputs that are the pivots of a pivoted Cholesky factor
  // of K (the R layer's prior choice, prior_choice.hpp): that factor, from
  // which the FITC prior on them is the factor's model without jitter
  // (PivotedFactor), as gpc's low-rank prior.  The fit chooses nothing.
  std::optional<PivotedFactor> inducing_factor;
  // With inducing inputs: the rows of the n x m factor kept in memory, the
  // others recomputed in every pass over them (InducingBasis); < 0 keeps
  // all.  The fit is the same either way (to rounding).
  Eigen::Index inducing_held_rows = -1;
  // Choose C by the evidence while EP converges (mfsvr_detail::CSearch),
  // starting from the C given; needs algorithm = ep and gradient.
  bool choose_C = false;
  MfsvrCSearchControl C_search;
  // Noise that varies with the inputs (mfsvr_noise.hpp): the log of each
  // row's noise scale, l_i, the site of row i the likelihood with
  // C exp(-l_i) and epsilon exp(l_i) (the noise of the given C and epsilon
  // stretched by exp(l_i)); empty for constant noise.  EP only, without a
  // search for C; on the dense prior or with inducing inputs.
  Eigen::VectorXd log_noise_scale;
};

struct MfsvrFit {
  EpResult ep;
  double C = 0.0;  // the C of the fit (chosen when control.choose_C)
  MfsvrCSearchRecord C_search;  // when control.choose_C
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
  // with control.log_noise_scale and control.gradient: d log Z_i / d l_i
  // and d2 log Z_i / d l_i^2 (cavity held) of each row at the cavities
  Eigen::VectorXd row_gradient, row_curvature;
};

namespace mfsvr_detail {

// The epsilon-insensitive likelihood with a noise scale per row, as the EP
// engine reads it: the engine hands each site its target, and here that
// "target" is the row's number (row_labels()), through which the site
// finds its own target and noise.  So the engine, which knows one
// likelihood for all sites, runs unchanged.
class RowEpsilonInsensitive {
 public:
  RowEpsilonInsensitive(const Eigen::VectorXd& y, double C, double epsilon,
                        const Eigen::VectorXd& log_scale)
      : y_(y) {
    if (log_scale.size() != y.size())
      throw std::invalid_argument("the noise scales need one value per observation");
    if (!log_scale.allFinite()) throw std::invalid_argument("the noise scales must be finite");
    sites_.reserve(static_cast<std::size_t>(y.size()));
    for (Eigen::Index i = 0; i < y.size(); ++i)
      sites_.push_back(site(C, epsilon, log_scale[i]));
  }

  static EpsilonInsensitive site(double C, double epsilon, double log_scale) {
    return EpsilonInsensitive(C * std::exp(-log_scale), epsilon * std::exp(log_scale));
  }

  static Eigen::VectorXd row_labels(Eigen::Index n) {
    return Eigen::VectorXd::LinSpaced(n, 0.0, static_cast<double>(n - 1));
  }

  SiteMoments moments(double row, double cavity_mean, double cavity_var) const {
    const std::size_t i = static_cast<std::size_t>(row);
    return sites_[i].moments(y_[static_cast<Eigen::Index>(i)], cavity_mean, cavity_var);
  }

  // d log Z_i / d l_i at a cavity: the site's derivatives in log C and
  // log epsilon, of opposite signs.
  static double log_scale_gradient(const EpsilonInsensitive& s, double t, double m, double v) {
    double dC, deps;
    s.parameter_gradient(t, m, v, &dC, &deps);
    return -s.C() * dC + s.epsilon() * deps;
  }

 private:
  const Eigen::VectorXd& y_;
  std::vector<EpsilonInsensitive> sites_;
};

// Each row's d log Z_i / d l_i and its derivative in l_i (a central
// difference of the closed-form gradient at the cavity held) at the
// cavities (m, v).
inline void row_log_scale_gradient(const Eigen::VectorXd& y, double C, double epsilon,
                                   const Eigen::VectorXd& l, const Eigen::VectorXd& m,
                                   const Eigen::VectorXd& v, Eigen::VectorXd* g,
                                   Eigen::VectorXd* d2) {
  using R = RowEpsilonInsensitive;
  constexpr double h = 1e-4;
  g->resize(y.size());
  d2->resize(y.size());
  for (Eigen::Index i = 0; i < y.size(); ++i) {
    (*g)[i] = R::log_scale_gradient(R::site(C, epsilon, l[i]), y[i], m[i], v[i]);
    const double up = R::log_scale_gradient(R::site(C, epsilon, l[i] + h), y[i], m[i], v[i]);
    const double down = R::log_scale_gradient(R::site(C, epsilon, l[i] - h), y[i], m[i], v[i]);
    (*d2)[i] = (up - down) / (2.0 * h);
  }
}

// The epsilon-insensitive likelihood `lik` as the EP run of the search for
// C reads it (the C the search has reached), with the site moments the
// search computed together with the evidence's gradient at the run's current
// cavities (CSearch) handed to the next sweep, which asks for the moments
// at those very cavities: without it each sweep computed them twice, a
// tenth of a sweep's time at 354 observations and most of it on a low-rank
// prior.  A kept moment is used only for the same target and cavity,
// compared exactly, so that the result is lik.moments()'s to the bit;
// sites are looked up in the order the parallel sweep visits them, and any
// other order (a sequential sweep) finds nothing and computes.  One thread
// at a time: the engine asks for a sweep's moments from one.
class RememberedMoments {
 public:
  explicit RememberedMoments(const EpsilonInsensitive& lik) : lik_(lik) {}

  SiteMoments moments(double target, double cavity_mean, double cavity_var) const {
    const std::size_t i = next_;
    next_ = i + 1 < kept_.size() ? i + 1 : 0;
    if (i < kept_.size()) {
      const Kept& k = kept_[i];
      if (k.target == target && k.cavity_mean == cavity_mean && k.cavity_var == cavity_var)
        return k.moments;
    }
    return lik_.moments(target, cavity_mean, cavity_var);
  }

  // The moments of site i, computed by lik at (target, mean, var); sites
  // 0 .. n - 1 are kept in turn after a start().
  void start(std::size_t n) {
    kept_.resize(n);
    next_ = 0;
  }
  void keep(std::size_t i, double target, double mean, double var, const SiteMoments& moments) {
    kept_[i] = {target, mean, var, moments};
  }
  // After C moved: what was kept is the old likelihood's.
  void forget() {
    kept_.clear();
    next_ = 0;
  }

 private:
  struct Kept {
    double target, cavity_mean, cavity_var;
    SiteMoments moments;
  };
  const EpsilonInsensitive& lik_;
  std::vector<Kept> kept_;
  mutable std::size_t next_ = 0;
};

// The fit itself: EP on the FITC prior when the control holds inducing
// inputs (its basis and rows kept in `prior` for the gradient), else on the
// dense matrix, or the paper's iteration.  EP reads the likelihood `lik`
// through `seen`.
struct InducingPrior {
  std::unique_ptr<InducingBasis> basis;
  std::unique_ptr<InducingRows> rows;
};

template <class Sites>
void fit_sites(const Kernel& kernel, const RowSource& source, const Eigen::VectorXd& t,
               const EpsilonInsensitive& lik, const Sites& seen, const MfsvrControl& control,
               const std::function<void()>& interrupt, const EpAdjust& adjust, MfsvrFit& fit,
               InducingPrior& prior) {
  if (control.inducing.size() > 0) {
    if (control.algorithm != MfsvrAlgorithm::ep)
      throw std::invalid_argument("inducing inputs need the EP algorithm");
    prior.basis.reset(new InducingBasis(inducing_basis(
        kernel, source, control.inducing, 0.0, interrupt, control.inducing_held_rows,
        control.inducing_factor ? &*control.inducing_factor : nullptr)));
    prior.rows.reset(new InducingRows(kernel, source, *prior.basis));
    fit.ep = ep_fit_inducing(*prior.rows, t, seen, control.ep, interrupt, adjust);
    fit.inducing_chol = prior.basis->chol;
    fit.inducing = inducing_summary(*prior.basis, *prior.rows, fit.ep);
    return;
  }
  const Eigen::MatrixXd K = KernelEvaluator(kernel, *source.held()).gram();
  if (control.algorithm == MfsvrAlgorithm::ep) {
    fit.ep = ep_fit(K, t, seen, control.ep, interrupt, adjust);
  } else {
    fit.ep = mfsvr_paper_fit(K, t, lik, control.paper, interrupt);
  }
}

// d log Z_EP / d (log C, log epsilon) at cavities (m, v), in the first two
// entries (the third, the width's, is the prior's).
inline Eigen::Vector3d likelihood_gradient(const Eigen::VectorXd& t, const EpsilonInsensitive& lik,
                                           const Eigen::VectorXd& m, const Eigen::VectorXd& v) {
  double gC = 0.0, geps = 0.0;
  for (Eigen::Index i = 0; i < t.size(); ++i) {
    double dC, deps;
    lik.parameter_gradient(t[i], m[i], v[i], &dC, &deps);
    gC += dC;
    geps += deps;
  }
  return Eigen::Vector3d(lik.C() * gC, lik.epsilon() * geps, 0.0);
}

// The search itself (see MfsvrCSearchControl), an EpAdjust that replaces the
// likelihood `lik` the EP run reads.
class CSearch {
 public:
  CSearch(const MfsvrCSearchControl& control, const Eigen::VectorXd& targets,
          EpsilonInsensitive& lik, RememberedMoments& seen)
      : control_(control), targets_(targets), lik_(lik), seen_(seen) {}

  bool operator()(const EpResult& r, double residual) {
    ++sweeps_;
    // (C never moves at a residual above kLoosest: the gradient, n site
    // moments, would be computed for nothing)
    if (residual > kLoosest) return false;
    ep_detail::cavities(r, r.site_precision, r.site_nu, m_, v_);
    // (the held curvature only for the first move, the one Newton's step makes)
    double curvature = 0.0;
    const double g = gradient_keeping_moments(tried_.empty() ? &curvature : nullptr);
    const double per = std::fabs(g) / static_cast<double>(targets_.size());
    const double accuracy = std::min(std::max(per, 0.1 * control_.tol), kLoosest);
    const double theta = std::log(lik_.C());
    if (residual > accuracy || per <= control_.tol || pushes_out(theta, g) ||
        record_.moves >= control_.max_moves)
      return false;
    record_.points.push_back(
        {lik_.C(), g, ep_detail::log_evidence(targets_, lik_, r, m_, v_), residual, sweeps_});
    const double next = propose(theta, g, curvature);
    if (next == theta) return false;
    seen_.forget();
    lik_ = EpsilonInsensitive(std::exp(next), lik_.epsilon());
    ++record_.moves;
    return true;
  }

  // The record, closed by the fit's final state (its evidence) and the
  // gradient `g` in log C at its cavities.
  MfsvrCSearchRecord finish(const EpResult& r, double g) {
    record_.points.push_back({lik_.C(), g, r.log_evidence, r.status.change, sweeps_});
    const double theta = std::log(lik_.C());
    record_.settled =
        std::fabs(g) / static_cast<double>(targets_.size()) <= control_.tol;
    record_.at_lower = theta <= control_.log_C_lower && g < 0.0;
    record_.at_upper = theta >= control_.log_C_upper && g > 0.0;
    return record_;
  }

 private:
  static constexpr double kFirstStep = 0.5, kLongestStep = 2.0, kOvershoot = 1.5, kLoosest = 0.1;
  static constexpr double kNewtonStep = 1.0;

  // d log Z / d log C at the cavities m_, v_ (likelihood_gradient()'s
  // first entry) and, when `curvature` is given, d2 log Z / d(log C)^2
  // there with the sites held in it; keeps the site moments computed with
  // them for the next sweep (RememberedMoments).
  double gradient_keeping_moments(double* curvature) {
    const Eigen::Index n = targets_.size();
    seen_.start(static_cast<std::size_t>(n));
    double gC = 0.0, h = 0.0;
    for (Eigen::Index i = 0; i < n; ++i) {
      double dC, deps, d2 = 0.0;
      const SiteMoments mo =
          lik_.moments(targets_[i], m_[i], v_[i], &dC, &deps, curvature ? &d2 : nullptr);
      seen_.keep(static_cast<std::size_t>(i), targets_[i], m_[i], v_[i], mo);
      gC += dC;
      h += d2;
    }
    if (curvature) *curvature = h;
    return lik_.C() * gC;
  }

  bool pushes_out(double theta, double g) const {
    return (theta >= control_.log_C_upper && g > 0.0) || (theta <= control_.log_C_lower && g < 0.0);
  }

  double propose(double theta, double g, double curvature) {
    double next;
    if (tried_.empty()) {
      // the first move: Newton's step on the curvature with the sites held,
      // where that is concave; at most kNewtonStep
      next = curvature < 0.0
                 ? theta + std::copysign(std::min(std::fabs(g / curvature), kNewtonStep), g)
                 : theta + std::copysign(kFirstStep, g);
    } else {
      const std::pair<double, double> last = tried_.back();
      const double slope = (g - last.second) / (theta - last.first);
      const double secant = slope < 0.0 ? theta - g / slope : std::nan("");
      double lo = -std::numeric_limits<double>::infinity(), hi = -lo;  // g > 0 below, < 0 above
      for (const auto& p : tried_) update_bracket(p.first, p.second, &lo, &hi);
      update_bracket(theta, g, &lo, &hi);
      if (lo < hi && std::isfinite(lo) && std::isfinite(hi)) {
        next = secant > lo && secant < hi ? secant : 0.5 * (lo + hi);
      } else {
        const double longest =
            std::min(kLongestStep, std::max(kFirstStep, 2.0 * std::fabs(theta - last.first)));
        // (past the second secant step, which has fallen short)
        const double reach = tried_.size() >= 2 ? kOvershoot : 1.0;
        next = std::isfinite(secant) && (secant - theta) * g > 0.0
                   ? theta + std::copysign(std::min(reach * std::fabs(secant - theta), longest), g)
                   : theta + std::copysign(longest, g);
      }
    }
    tried_.emplace_back(theta, g);
    return std::min(std::max(next, control_.log_C_lower), control_.log_C_upper);
  }

  static void update_bracket(double theta, double g, double* lo, double* hi) {
    if (g > 0.0) *lo = std::max(*lo, theta);
    if (g < 0.0) *hi = std::min(*hi, theta);
  }

  const MfsvrCSearchControl& control_;
  const Eigen::VectorXd& targets_;
  EpsilonInsensitive& lik_;
  RememberedMoments& seen_;
  Eigen::VectorXd m_, v_;
  std::vector<std::pair<double, double>> tried_;  // (log C, gradient) where C moved
  MfsvrCSearchRecord record_;
  int sweeps_ = 0;
};

}  // namespace mfsvr_detail

// The inputs x arrive through a RowSource: a fit with inducing inputs reads
// them a block of rows at a time (they may be read from files or partitions
// of the data), the others need them held in memory.
inline MfsvrFit mfsvr_fit(const RowSource& source, const ConstVectorRef& y, const Kernel& kernel,
                          double C, double epsilon, const MfsvrControl& control,
                          const std::function<void()>& interrupt) {
  if (source.rows() != y.size()) throw std::invalid_argument("'x' and 'y' differ in length");
  if (control.inducing.size() == 0 && !source.held())
    throw std::invalid_argument("a fit without inducing inputs needs its inputs in memory");
  if (control.choose_C) {
    const MfsvrCSearchControl& c = control.C_search;
    if (control.algorithm != MfsvrAlgorithm::ep || !control.gradient)
      throw std::invalid_argument("choosing C needs the EP algorithm and the gradient");
    if (!fields_ok(c) || !(c.log_C_lower <= std::log(C) && std::log(C) <= c.log_C_upper))
      throw std::invalid_argument("the search for C needs C in its range, tol > 0, max_moves >= 1");
  }
  EpsilonInsensitive lik(C, epsilon);  // C moves when control.choose_C
  const Eigen::VectorXd t = y;
  MfsvrFit fit;
  if (control.log_noise_scale.size() > 0) {
    if (control.choose_C || control.algorithm != MfsvrAlgorithm::ep)
      throw std::invalid_argument("noise scales per row need the EP algorithm and a given C");
    const mfsvr_detail::RowEpsilonInsensitive rows_lik(t, C, epsilon, control.log_noise_scale);
    mfsvr_detail::InducingPrior prior;
    mfsvr_detail::fit_sites(kernel, source, rows_lik.row_labels(t.size()), lik, rows_lik, control,
                            interrupt, EpAdjust(), fit, prior);
    fit.C = C;
    if (!control.gradient) return fit;
    mfsvr_detail::row_log_scale_gradient(t, C, epsilon, control.log_noise_scale,
                                         fit.ep.cavity_mean, fit.ep.cavity_var,
                                         &fit.row_gradient, &fit.row_curvature);
    return fit;
  }
  mfsvr_detail::RememberedMoments seen(lik);
  mfsvr_detail::CSearch search(control.C_search, t, lik, seen);
  EpAdjust adjust;
  if (control.choose_C) adjust = [&search](const EpResult& r, double residual) {
    return search(r, residual);
  };
  mfsvr_detail::InducingPrior prior;
  mfsvr_detail::fit_sites(kernel, source, t, lik, seen, control, interrupt, adjust, fit, prior);
  fit.C = lik.C();
  if (!control.gradient) return fit;  // (choose_C needs the gradient)
  fit.gradient = mfsvr_detail::likelihood_gradient(t, lik, fit.ep.cavity_mean, fit.ep.cavity_var);
  if (control.choose_C) fit.C_search = search.finish(fit.ep, fit.gradient[0]);
  if (!kernel.radial() || !control.width_gradient) return fit;
  if (prior.rows) {
    InducingKernelGradient g = inducing_kernel_gradient(kernel, *prior.rows, fit.ep, interrupt);
    fit.gradient[2] = g.log_width;
    if (control.per_input_gradient) fit.per_input_gradient = std::move(g.per_input_log_width);
  } else {
    Eigen::VectorXd by_input = ep_per_input_log_width_gradient(
        *source.held(), kernel, fit.ep, ep_site_inverse(fit.ep, interrupt), interrupt);
    fit.gradient[2] = by_input.sum();
    if (control.per_input_gradient) fit.per_input_gradient = std::move(by_input);
  }
  return fit;
}

inline MfsvrFit mfsvr_fit(const ConstMatrixRef& x, const ConstVectorRef& y, const Kernel& kernel,
                          double C, double epsilon, const MfsvrControl& control,
                          const std::function<void()>& interrupt) {
  return mfsvr_fit(HeldRows(x), y, kernel, C, epsilon, control, interrupt);
}

}  // namespace gpsvm

#endif  // GPSVM_MFSVR_HPP
