// Dual solvers for epsilon-insensitive support vector regression.
//
//   min_beta  1/2 beta' K beta - y' beta + eps sum_i |beta_i|,
//   -C <= beta_i <= C,   and, with a bias, sum_i beta_i = 0.
//
// Written with beta_i = alpha_i^+ - alpha_i^- this is the usual 2n-variable
// QP  min 1/2 a' Q a + p' a,  0 <= a <= C  (s' a = 0 with a bias), where the
// variable t = (i, +) has sign s_t = +1, the variable t = (i, -) has s_t = -1,
// Q_tu = s_t s_u K_{i(t) i(u)} and p_t = eps - s_t y_i.  Its gradient is
// G_(i,+) = eps - r_i and G_(i,-) = eps + r_i with r_i = y_i - (K beta)_i the
// residual without the bias, so the solver stores the n residuals only.
//
// * bias = true: sequential minimal optimisation on the 2n variables with the
//   second-order working-set selection of Fan, Chen and Lin (2005, JMLR 6),
//   derived here in residual form:
//     -s_t G_t = r_i - eps for (i,+),  r_i + eps for (i,-);
//     I_up  = {(i,+): a < C} u {(i,-): a > 0},  I_low = {(i,+): a > 0} u {(i,-): a < C};
//     m = max_{I_up} -s G,  M = min_{I_low} -s G.
//   The KKT conditions hold iff m <= M; the solver stops when m - M < tol,
//   the same test (and meaning of tol) as libsvm's eps.  Working pair: t from
//   I_up attaining m; u from I_low minimising -(m + s_u G_u)^2 / a_tu with
//   a_tu = K_ii + K_jj - 2 K_ij (tau when not positive).  Moving
//   a_t += s_t d, a_u -= s_u d keeps s' a fixed and changes the objective by
//   -d b + d^2 a / 2 with b = m + s_u G_u > 0, so d = b / a clipped to the box.
//   The bias is the average of -s_t G_t over free variables (the midpoint of
//   [M, m] when none is free).
// * bias = false: the same solver with one extra virtual variable whose
//   kernel column is zero and which has no bounds (see solve_smo): pairing
//   with it is an exact single-coordinate step, so the equality constraint
//   disappears and b = 0.  The stopping rule is the same pair gap m - M < tol
//   with the virtual variable's value 0 in both sets, i.e. every point's KKT
//   violation in residual units (|r_k| - eps for beta_k = 0,
//   |r_k - sign(beta_k) eps| for 0 < |beta_k| < C, one-sided at |beta_k| = C)
//   summed over the worst one on each side is below tol.  (Plain coordinate
//   descent needs orders of magnitude more steps on dense Gram matrices.)
//
// Kernel columns come from an LRU cache (KernelColumnCache, kernel_cache.hpp), so the
// n x n Gram matrix is never formed.  With shrinking, variables that sit at a
// bound and would stay there (libsvm's rule, restated in residual form) are
// left out of the selection and of the residual update, and only the active
// rows of new kernel columns are computed; the residuals of the set-aside
// points are rebuilt (from the running contribution of the bounded
// coefficients plus the free ones) before the final check, so the reported
// solution satisfies the tolerance on all n points.
#ifndef GPSVM_SMO_HPP
#define GPSVM_SMO_HPP

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernel_cache.hpp"
#include "kernels.hpp"
#include "solver_status.hpp"

namespace gpsvm {

// Curvature used for a working pair whose a_tu = K_ii + K_jj - 2 K_ij is not
// positive (identical inputs): the step then goes to the box.
constexpr double kSmoCurvatureFloor = 1e-12;

struct SvrControl {
  // No defaults here (see solver_status.hpp): svr() and svr_control() hold them.
  double C = kUnset;
  double epsilon = kUnset;
  bool bias = false;
  double tol = kUnset;     // KKT tolerance (libsvm's eps for bias = true)
  std::int64_t max_iter = 0;  // cap on pair steps
  double cache_mb = kUnset;  // kernel-column cache size
  bool shrinking = true;

  void validate() const {
    if (!(C > 0.0) || !std::isfinite(C)) throw std::invalid_argument("'C' must be a positive finite number");
    if (!(epsilon >= 0.0) || !std::isfinite(epsilon))
      throw std::invalid_argument("'epsilon' must be a non-negative finite number");
    if (!(tol > 0.0)) throw std::invalid_argument("'tol' must be positive");
    if (max_iter < 1) throw std::invalid_argument("'max_iter' must be positive");
    if (!(cache_mb > 0.0)) throw std::invalid_argument("'cache_mb' must be positive");
  }
};

struct SvrResult {
  Eigen::VectorXd alpha_plus, alpha_minus, beta;
  Eigen::VectorXd fitted;   // (K beta)_i + b
  double b = 0.0;
  double objective = 0.0;   // 1/2 beta' K beta - y' beta + eps |beta|_1
  // iterations are pair steps; change is the final KKT gap m - M
  SolverStatus status;
  std::int64_t kernel_columns = 0;  // kernel columns computed (cache misses)
};

namespace detail {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Shared state: the two halves of alpha with their upper bounds, the
// residuals r = y - (K + shift I) beta and the diagonal of K + shift I.
//
// The bounds are per point: 0 <= a+_k <= cap_p[k], 0 <= a-_k <= cap_m[k].
// SVR has C for both; the bias-free SVM classifier (svc_smo_solve) is the
// same problem with epsilon = 0, targets y_k = +-1 and one half fixed at 0
// (cap 0) so that beta_k has the sign of y_k.  A cap may be infinite (no
// linear slack).  `shift` is a constant added to the diagonal of the
// kernel matrix only (the classifiers' input-noise variance); the cached
// columns are the plain kernel's, so twins still share them, and the shift
// is applied to the point's own row where a column is used.
struct SvrState {
  const ConstVectorRef& y;
  const SvrControl& ctl;
  KernelColumnCache& cache;
  Eigen::VectorXd ap, am, r, kdiag, cap_p, cap_m;
  double shift = 0.0;
  std::vector<Index> active;  // indices of points still in play
  std::int64_t epoch = 0;     // bumped whenever the active set grows back
  std::vector<double> zeros;  // the virtual variable's kernel column

  // Kernel column of point j on (at least) the active points.
  const double* active_column(Index j) { return cache.column(j, &active, epoch); }

  SvrState(const ConstVectorRef& y_, const SvrControl& ctl_, KernelColumnCache& cache_,
           const KernelEvaluator& k, double shift_ = 0.0)
      : y(y_), ctl(ctl_), cache(cache_), ap(Eigen::VectorXd::Zero(y_.size())),
        am(Eigen::VectorXd::Zero(y_.size())), r(y_),
        kdiag(k.diagonal().array() + shift_),
        cap_p(Eigen::VectorXd::Constant(y_.size(), ctl_.C)),
        cap_m(Eigen::VectorXd::Constant(y_.size(), ctl_.C)), shift(shift_),
        zeros(static_cast<size_t>(y_.size()), 0.0) {
    active.resize(static_cast<size_t>(y_.size()));
    for (Index i = 0; i < y_.size(); ++i) active[static_cast<size_t>(i)] = i;
  }

  // Starts from beta = ap - am instead of 0 (each half within its cap):
  // r = y - (K + shift I) beta from the columns of the nonzero entries.
  void warm_start(const Eigen::VectorXd& ap0, const Eigen::VectorXd& am0) {
    ap = ap0;
    am = am0;
    r = y;
    for (Index j = 0; j < n(); ++j) {
      const double bj = ap[j] - am[j];
      if (bj == 0.0) continue;
      const double* col = cache.column(j);
      r -= bj * Eigen::Map<const Eigen::VectorXd>(col, n());
      r[j] -= bj * shift;
    }
  }

  Index n() const { return y.size(); }

  // The part of beta_k held at a bound, C (1[a+ = C] - 1[a- = C]), and the
  // residual contribution of all such parts, rbound = K (bound parts), kept
  // current on every point (libsvm's G_bar).  Rebuilding stale residuals
  // then needs only the columns of the free coefficients.
  Eigen::VectorXd rbound;
  bool track_bound = false;

  static double at_cap(double a, double cap) {
    return (a == cap && std::isfinite(cap)) ? cap : 0.0;
  }
  double bound_part(Index k) const { return at_cap(ap[k], cap_p[k]) - at_cap(am[k], cap_m[k]); }

  void update_bound(Index k, double old_part) {
    const double delta = bound_part(k) - old_part;
    if (!track_bound || delta == 0.0) return;
    const double* col = cache.column(k);
    for (Index i = 0; i < n(); ++i) rbound[i] += delta * col[i];
    rbound[k] += delta * shift;
  }

  // Recompute the residuals of the inactive points (the active ones are
  // current): r = y - rbound - K (free parts), on the stale rows only.
  void rebuild_residuals() {
    if (active.size() == static_cast<size_t>(n())) return;
    std::vector<Index> stale;
    stale.reserve(static_cast<size_t>(n()) - active.size());
    {
      std::vector<char> is_active(static_cast<size_t>(n()), 0);
      for (Index k : active) is_active[static_cast<size_t>(k)] = 1;
      for (Index k = 0; k < n(); ++k)
        if (!is_active[static_cast<size_t>(k)]) stale.push_back(k);
    }
    const Index m = static_cast<Index>(stale.size());
    Eigen::VectorXd acc(m), col(m);
    for (Index t = 0; t < m; ++t) {
      const Index k = stale[static_cast<size_t>(t)];
      acc[t] = y[k] - (track_bound ? rbound[k] : 0.0);
    }
    for (Index j = 0; j < n(); ++j) {
      const double bj = ap[j] - am[j] - (track_bound ? bound_part(j) : 0.0);
      if (bj == 0.0) continue;
      if (const double* kj = cache.cached_full(j)) {
        for (Index t = 0; t < m; ++t) acc[t] -= bj * kj[stale[static_cast<size_t>(t)]];
      } else {
        cache.kernel_rows(j, stale, col.data());
        acc -= bj * col;
      }
    }
    for (Index t = 0; t < m; ++t) {
      const Index k = stale[static_cast<size_t>(t)];
      r[k] = acc[t] - shift * (ap[k] - am[k] - (track_bound ? bound_part(k) : 0.0));
    }
  }

  void restore_active() {
    ++epoch;
    active.resize(static_cast<size_t>(n()));
    for (Index i = 0; i < n(); ++i) active[static_cast<size_t>(i)] = i;
  }
};

// ---- SMO on the 2n variables ---------------------------------------------
//
// With bias = false the equality constraint is absent.  The solver then
// carries one extra, virtual variable with a zero kernel column, zero linear
// term and no bounds; it sits in both I_up and I_low with -s G = 0 whatever
// its value.  Pairing a real variable with it is a single-coordinate move, so
// the equality constraint it "balances" is void and the bias stays 0, while
// real pairs still give the long correlated steps that make SMO fast on dense
// Gram matrices.  The stopping rule m - M < tol then says that every real
// variable violates its KKT condition by less than tol (m >= 0 >= M).

constexpr Index kVirtual = -2;  // the virtual variable of the bias-free problem

struct PairGap {
  double m = -kInf, M = kInf;
  Index t_point = -1;
  int t_sign = 0;

  explicit PairGap(bool fixed_bias = false) {
    if (fixed_bias) { m = 0.0; M = 0.0; t_point = kVirtual; t_sign = +1; }
  }

  // Fold in point k's two variables, given its residual, alphas and caps.
  void add(Index k, double r, double ap, double am, double cp, double cm, double eps) {
    const double vp = r - eps, vm = r + eps;
    if (ap < cp && vp > m) { m = vp; t_point = k; t_sign = +1; }
    if (am > 0.0 && vm > m) { m = vm; t_point = k; t_sign = -1; }
    if (ap > 0.0 && vp < M) M = vp;
    if (am < cm && vm < M) M = vm;
  }
};

// m over I_up (with its maximiser) and M over I_low, on the active points.
inline PairGap pair_gap(const SvrState& st) {
  const double eps = st.ctl.epsilon;
  PairGap g(!st.ctl.bias);
  for (Index k : st.active) g.add(k, st.r[k], st.ap[k], st.am[k], st.cap_p[k], st.cap_m[k], eps);
  return g;
}

// libsvm's shrinking rule in residual form: a variable at a bound whose
// gradient pushes it further into the bound, beyond the current [M, m]
// window, is frozen.  A point leaves the active set when both its variables
// are frozen.
inline void shrink(SvrState& st, double m, double M) {
  const double eps = st.ctl.epsilon;
  auto frozen = [&](double a, double v, int s, double C) {
    // s = +1 variable: in I_up only if a < C, in I_low only if a > 0.
    const bool up = (s > 0) ? (a < C) : (a > 0.0);
    const bool low = (s > 0) ? (a > 0.0) : (a < C);
    if (up && low) return false;  // free
    if (!up && !low) return true; // a cap of 0: fixed at 0
    if (up) return v < M;         // only in I_up, and below the window
    return v > m;                 // only in I_low, and above the window
  };
  std::vector<Index> keep;
  keep.reserve(st.active.size());
  for (Index k : st.active) {
    const bool fp = frozen(st.ap[k], st.r[k] - eps, +1, st.cap_p[k]);
    const bool fm = frozen(st.am[k], st.r[k] + eps, -1, st.cap_m[k]);
    if (!(fp && fm)) keep.push_back(k);
  }
  st.active.swap(keep);
}

// The working pair: variable t = (i, si) from I_up attaining m, and its
// partner u = (j, sj) from I_low chosen by second-order information, with
// b = m + s_u G_u > 0 and the curvature a = a_tu.  kVirtual stands for the
// virtual variable of the bias-free problem; j = -1 means no partner.
struct WorkingPair {
  Index i = -1, j = -1;
  int si = 0, sj = 0;
  double b = 0.0, a = 1.0;
};

// The kernel column and diagonal of a real variable, or zeros for the
// virtual one.
inline const double* column_of(SvrState& st, Index p) {
  return p == kVirtual ? st.zeros.data() : st.active_column(p);
}
inline double kdiag_of(const SvrState& st, Index p) { return p == kVirtual ? 0.0 : st.kdiag[p]; }

// Fan, Chen and Lin's second-order choice of the partner of g.t_point among
// the active points (and, without a bias, the virtual variable).
inline WorkingPair select_pair(SvrState& st, const PairGap& g) {
  const double eps = st.ctl.epsilon, m = g.m;
  WorkingPair p;
  p.i = g.t_point;
  p.si = g.t_sign;
  const double* ki = column_of(st, p.i);
  const double kii = kdiag_of(st, p.i);
  double best = kInf;
  auto consider = [&](Index k, int sk, double b, double curv) {
    const double v = -b * b / curv;
    if (v <= best) { best = v; p.j = k; p.sj = sk; p.b = b; p.a = curv; }
  };
  for (Index k : st.active) {
    // the cached column is the plain kernel's: the shift sits on row i only
    const double kik = k == p.i ? ki[k] + st.shift : ki[k];
    const double curv = std::max(kii + st.kdiag[k] - 2.0 * kik, kSmoCurvatureFloor);
    if (st.ap[k] > 0.0) {
      const double b = m - (st.r[k] - eps);
      if (b > 0.0) consider(k, +1, b, curv);
    }
    if (st.am[k] < st.cap_m[k]) {
      const double b = m - (st.r[k] + eps);
      if (b > 0.0) consider(k, -1, b, curv);
    }
  }
  if (!st.ctl.bias && p.i != kVirtual && m > 0.0)  // the virtual partner: a move of t alone
    consider(kVirtual, +1, m, std::max(kii, kSmoCurvatureFloor));
  return p;
}

// An alpha within 1e-12 of its cap (relative) is snapped to it, and one
// below 1e-12 min(cap, 1) to 0, so that set membership is exact.  The zero
// test is not relative to a large cap: coefficients stay of the order of
// the targets however large C is, and with C = 1e12 a cutoff of 1e-12 C
// zeroed every one of them.  Under an infinite cap a step that empties a
// variable ends at exactly 0 already (d is clipped to its value).
inline void snap(double& a, double cap) {
  if (!std::isfinite(cap)) return;
  if (a > cap - 1e-12 * cap) a = cap;
  if (a < 1e-12 * std::min(cap, 1.0)) a = 0.0;
}

// The step d >= 0 along a_t += s_t d, a_u -= s_u d, clipped to the box and
// taken.
inline double take_step(SvrState& st, const WorkingPair& p) {
  double d = p.b / p.a;
  if (p.i != kVirtual) d = std::min(d, p.si > 0 ? st.cap_p[p.i] - st.ap[p.i] : st.am[p.i]);
  if (p.j != kVirtual) d = std::min(d, p.sj > 0 ? st.ap[p.j] : st.cap_m[p.j] - st.am[p.j]);
  if (p.i != kVirtual) { if (p.si > 0) st.ap[p.i] += d; else st.am[p.i] -= d; }
  if (p.j != kVirtual) { if (p.sj > 0) st.ap[p.j] -= d; else st.am[p.j] += d; }
  for (Index k : {p.i, p.j}) {
    if (k == kVirtual) continue;
    snap(st.ap[k], st.cap_p[k]);
    snap(st.am[k], st.cap_m[k]);
  }
  return d;
}

// beta_i rose by d and beta_j fell by d (whatever the signs), so
// r -= d (K_i - K_j) on the active points; the next gap is gathered in the
// same pass.
inline PairGap move_residuals(SvrState& st, const WorkingPair& p, double d) {
  const double* kj = column_of(st, p.j);
  const double* ki = column_of(st, p.i);  // still cached: capacity >= 2
  if (st.shift != 0.0) {  // the diagonal shift, on the two points' own rows
    if (p.i != kVirtual) st.r[p.i] -= d * st.shift;
    if (p.j != kVirtual) st.r[p.j] += d * st.shift;
  }
  PairGap h(!st.ctl.bias);
  for (Index k : st.active) {
    const double rk = st.r[k] - d * (ki[k] - kj[k]);
    st.r[k] = rk;
    h.add(k, rk, st.ap[k], st.am[k], st.cap_p[k], st.cap_m[k], st.ctl.epsilon);
  }
  return h;
}

// Every point back in play, with exact residuals.
inline void unshrink(SvrState& st) {
  st.rebuild_residuals();
  st.restore_active();
}

// libsvm's shrinking schedule: every min(n, 1000) steps, set aside the
// points that sit at a bound and would stay there; the first time the gap
// is within 10 tol, bring every point back once first.
struct ShrinkSchedule {
  Index every = 1, counter = 1;
  bool unshrunk = false;

  explicit ShrinkSchedule(Index n) : every(std::min<Index>(n, 1000)), counter(every) {}

  // Returns true when it ran (and left the current gap in g).
  bool tick(SvrState& st, PairGap& g) {
    if (--counter != 0) return false;
    counter = every;
    g = pair_gap(st);
    if (!unshrunk && g.m - g.M <= 10.0 * st.ctl.tol) {
      unshrunk = true;
      unshrink(st);
      g = pair_gap(st);
    }
    shrink(st, g.m, g.M);
    return true;
  }
};

inline bool gap_closed(const PairGap& g, double tol) { return g.t_point == -1 || !(g.m - g.M >= tol); }

// Whether the KKT conditions hold within tol: on the active set, then, if
// points were set aside, on all of them with exact residuals.
inline bool optimal(SvrState& st, PairGap& g, ShrinkSchedule& sched) {
  if (!gap_closed(g, st.ctl.tol)) return false;
  if (st.active.size() == static_cast<size_t>(st.n())) return true;
  unshrink(st);
  sched.counter = sched.every;
  g = pair_gap(st);
  return gap_closed(g, st.ctl.tol);
}

// The bias: the average of -s_t G_t over free variables, else the midpoint
// of [M, m].
inline double free_bias(const SvrState& st, const PairGap& g) {
  const double eps = st.ctl.epsilon;
  double sum = 0.0;
  Index nfree = 0;
  for (Index k = 0; k < st.n(); ++k) {
    if (st.ap[k] > 0.0 && st.ap[k] < st.cap_p[k]) { sum += st.r[k] - eps; ++nfree; }
    if (st.am[k] > 0.0 && st.am[k] < st.cap_m[k]) { sum += st.r[k] + eps; ++nfree; }
  }
  if (nfree > 0) return sum / static_cast<double>(nfree);
  const double lo = std::isfinite(g.M) ? g.M : g.m, hi = std::isfinite(g.m) ? g.m : g.M;
  return std::isfinite(lo) && std::isfinite(hi) ? 0.5 * (lo + hi) : 0.0;
}

// The final KKT check on all points, the status and the bias.
inline void final_status_and_bias(SvrState& st, std::int64_t iterations, SvrResult& res) {
  if (st.active.size() != static_cast<size_t>(st.n())) unshrink(st);
  const PairGap g = pair_gap(st);
  res.status.change = (g.t_point == -1) ? 0.0 : std::max(0.0, g.m - g.M);
  res.status.converged = res.status.change < st.ctl.tol;
  res.status.iterations = iterations;
  res.status.tol = st.ctl.tol;
  res.b = st.ctl.bias ? free_bias(st, g) : 0.0;
}

inline void solve_smo(SvrState& st, SvrResult& res, const std::function<void()>& interrupt) {
  ShrinkSchedule sched(st.n());
  st.track_bound = st.ctl.shrinking;
  if (st.track_bound) {  // a warm start may hold coefficients at their caps already
    st.rbound = Eigen::VectorXd::Zero(st.n());
    for (Index k = 0; k < st.n(); ++k) {
      const double part = st.bound_part(k);
      if (part == 0.0) continue;
      st.rbound += part * Eigen::Map<const Eigen::VectorXd>(st.cache.column(k), st.n());
      st.rbound[k] += part * st.shift;
    }
  }
  PairGap g(!st.ctl.bias);
  bool fresh = false;  // g already holds the gap of the current state
  std::int64_t iter = 0;
  while (true) {
    if (st.ctl.shrinking && sched.tick(st, g)) fresh = false;
    if (!fresh) g = pair_gap(st);
    fresh = false;
    if (optimal(st, g, sched) || iter >= st.ctl.max_iter) break;
    if ((iter & 1023) == 0 && interrupt) interrupt();
    ++iter;
    const WorkingPair p = select_pair(st, g);
    if (p.j == -1) {  // cannot happen when m - M >= tol > 0; rounding only
      res.status.reason = "no working pair could improve the objective";
      break;
    }
    const double old_bound_i = p.i == kVirtual ? 0.0 : st.bound_part(p.i);
    const double old_bound_j = p.j == kVirtual ? 0.0 : st.bound_part(p.j);
    const double d = take_step(st, p);
    if (p.i != p.j) {
      g = move_residuals(st, p, d);
      fresh = true;
    }
    if (st.track_bound) {
      if (p.i != kVirtual) st.update_bound(p.i, old_bound_i);
      if (p.j != kVirtual && p.j != p.i) st.update_bound(p.j, old_bound_j);
    }
  }
  final_status_and_bias(st, iter, res);
}

}  // namespace detail

// Fit epsilon-SVR on the rows of x with targets y.
inline SvrResult svr_solve(const Kernel& kernel, const ConstMatrixRef& x, const ConstVectorRef& y,
                           const SvrControl& ctl,
                           const std::function<void()>& interrupt = nullptr) {
  ctl.validate();
  if (x.rows() != y.size())
    throw std::invalid_argument("'x' has " + std::to_string(x.rows()) + " rows but 'y' has " +
                                std::to_string(y.size()) + " values");
  if (x.rows() < 1) throw std::invalid_argument("no data");
  const KernelEvaluator k(kernel, x);
  KernelColumnCache cache(k, ctl.cache_mb);
  detail::SvrState st(y, ctl, cache, k);
  SvrResult res;
  detail::solve_smo(st, res, interrupt);
  res.alpha_plus = st.ap;
  res.alpha_minus = st.am;
  res.beta = st.ap - st.am;
  // r = y - K beta, so 1/2 beta'K beta - y'beta = -1/2 beta'(y + r)
  res.objective = -0.5 * res.beta.dot(y + st.r) + ctl.epsilon * res.beta.cwiseAbs().sum();
  res.kernel_columns = cache.columns_computed();
  res.fitted = y - st.r + Eigen::VectorXd::Constant(y.size(), res.b);
  return res;
}

// ---- The bias-free SVM classifier ------------------------------------------
//
// The kernel adatron's problem (adatron.hpp): maximise
//   W(alpha) = sum_i alpha_i - 1/2 alpha' Q alpha,   0 <= alpha_i <= C,
// with Q = diag(y) (K + noise I) diag(y).  With beta_i = y_i alpha_i it is the
// SVR dual above with epsilon = 0, targets y and beta_i confined to [0, C]
// for y_i = +1 and to [-C, 0] for y_i = -1 (one half of each point capped at
// 0): 1/2 beta' K beta - y' beta = -W.  So the same SMO solves it, with its
// column cache, shrinking and second-order working-set selection, at O(n)
// kernel evaluations per step instead of the adatron's n^2.
//
// The residual is r_i = y_i - f_i and the gradient of W is y_i r_i, so the
// pair gap m - M is the sum of the largest violations of the Kuhn-Tucker
// conditions in each direction, in the units of the adatron's unit-rate step
// clip(alpha_i + 1 - y_i f_i) - alpha_i, which it bounds from above.  The
// adatron's test max_i step_i^2 < tol (steps in units of min(1, C)) is met
// by stopping at m - M < sqrt(tol) min(1, C); the status reports
// ((m - M) / min(1, C))^2 against tol.

struct SvcControl {
  // No defaults here (see solver_status.hpp): svc() and svc_control() hold them.
  double C = kUnset;       // box bound on alpha (Inf: no linear slack)
  double noise = kUnset;   // added to the kernel's diagonal (eq. 17.16)
  double tol = kUnset;     // the adatron's tol (squared unit-rate step)
  std::int64_t max_iter = 0;  // cap on pair steps
  double cache_mb = kUnset;
  bool shrinking = true;

  void validate() const {
    if (!(C > 0.0)) throw std::invalid_argument("'C' must be positive (Inf allowed)");
    if (!(noise >= 0.0) || !std::isfinite(noise))
      throw std::invalid_argument("'noise' must be a finite number >= 0");
    if (!(tol > 0.0) || !std::isfinite(tol))
      throw std::invalid_argument("'tol' must be a positive finite number");
    if (max_iter < 1) throw std::invalid_argument("'max_iter' must be positive");
    if (!(cache_mb > 0.0)) throw std::invalid_argument("'cache_mb' must be positive");
  }

  double unit() const { return std::min(1.0, C); }
};

struct SvcResult {
  Eigen::VectorXd alpha;   // in [0, C]
  Eigen::VectorXd field;   // (K + noise I) (y * alpha)
  double objective = 0.0;  // W(alpha)
  SolverStatus status;     // iterations are pair steps
  std::int64_t kernel_columns = 0;
};

namespace detail {

// Without noise, points with the same inputs and label have the same column
// of Q, so W depends only on the sum of their alphas: SMO leaves that sum
// split arbitrarily (often all on one twin), while the adatron's parallel
// steps keep it equal.  The equal split is also a Kuhn-Tucker point (a group
// with one twin at C and one at 0 has margin exactly 1, so the average is a
// free margin vector), and it is the one the leave-one-out estimate needs:
// a twin left at 0 looks like a non-support vector although it takes over
// when its twin is left out.
inline void share_among_twins(const KernelEvaluator& k, const ConstVectorRef& y,
                              double C, Eigen::VectorXd& alpha) {
  const std::vector<Index> first = k.first_twins();
  const Index n = alpha.size();
  std::vector<double> sum(static_cast<size_t>(2 * n), 0.0);
  std::vector<int> count(static_cast<size_t>(2 * n), 0);
  auto group = [&](Index i) { return static_cast<size_t>(2 * first[static_cast<size_t>(i)] + (y[i] > 0 ? 1 : 0)); };
  for (Index i = 0; i < n; ++i) { sum[group(i)] += alpha[i]; ++count[group(i)]; }
  for (Index i = 0; i < n; ++i)
    if (count[group(i)] > 1) {
      alpha[i] = sum[group(i)] / count[group(i)];
      snap(alpha[i], C);  // an average of values at C is C
    }
}

}  // namespace detail

// Fits the classifier on the rows of x with labels y in {-1, +1}; `start`,
// if not empty, is a warm start for alpha (clipped to [0, C]).
inline SvcResult svc_smo_solve(const Kernel& kernel, const ConstMatrixRef& x,
                               const ConstVectorRef& y, const SvcControl& control,
                               const Eigen::VectorXd& start = Eigen::VectorXd(),
                               const std::function<void()>& interrupt = nullptr) {
  control.validate();
  const Index n = x.rows();
  if (n < 1) throw std::invalid_argument("no data");
  if (y.size() != n)
    throw std::invalid_argument("there are " + std::to_string(y.size()) + " labels for " +
                                std::to_string(n) + " points");
  for (Index i = 0; i < n; ++i)
    if (y[i] != 1.0 && y[i] != -1.0) throw std::invalid_argument("labels must be -1 or +1");
  if (start.size() != 0 && start.size() != n)
    throw std::invalid_argument("warm start has the wrong length");
  const KernelEvaluator k(kernel, x);
  const Eigen::VectorXd diag = k.diagonal();
  for (Index i = 0; i < n; ++i) {
    if (!(diag[i] + control.noise > 0.0) || !std::isfinite(diag[i]))
      throw std::invalid_argument(
          "the kernel (plus noise) must have a positive diagonal; point " + std::to_string(i + 1) +
          " has k_ii = " + std::to_string(diag[i] + control.noise) + " (add noise > 0)");
  }
  SvrControl smo;
  smo.C = control.C;
  smo.epsilon = 0.0;
  smo.bias = false;
  smo.tol = std::sqrt(control.tol) * control.unit();
  smo.max_iter = control.max_iter;
  smo.cache_mb = control.cache_mb;
  smo.shrinking = control.shrinking;
  KernelColumnCache cache(k, control.cache_mb);
  detail::SvrState st(y, smo, cache, k, control.noise);
  for (Index i = 0; i < n; ++i) {
    if (y[i] > 0) st.cap_m[i] = 0.0; else st.cap_p[i] = 0.0;
  }
  if (start.size() == n) {
    Eigen::VectorXd ap = Eigen::VectorXd::Zero(n), am = Eigen::VectorXd::Zero(n);
    for (Index i = 0; i < n; ++i) {
      const double a = std::min(std::max(start[i], 0.0), control.C);
      if (y[i] > 0) ap[i] = a; else am[i] = a;
    }
    st.warm_start(ap, am);
  }
  SvrResult res;
  detail::solve_smo(st, res, interrupt);
  SvcResult out;
  const Eigen::VectorXd beta = st.ap - st.am;
  out.alpha = (y.array() * beta.array()).matrix();
  if (control.noise == 0.0) detail::share_among_twins(k, y, control.C, out.alpha);
  out.field = y - st.r;
  // 1/2 beta' (K + noise I) beta - y' beta = -1/2 beta' (y + r) = -W
  out.objective = 0.5 * beta.dot(y + st.r);
  out.status = res.status;
  const double unit = control.unit();
  out.status.change = (res.status.change / unit) * (res.status.change / unit);
  out.status.tol = control.tol;
  out.status.converged = res.status.converged && out.status.change < control.tol;
  out.kernel_columns = cache.columns_computed();
  return out;
}

}  // namespace gpsvm

#endif  // GPSVM_SMO_HPP
