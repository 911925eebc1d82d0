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
// Kernel columns come from an LRU cache (KernelColumnCache below), so the
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
#include <functional>
#include <limits>
#include <list>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

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
  long max_iter = 0;       // cap on pair steps
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
  long kernel_columns = 0;  // kernel columns computed (cache misses)
};

// Least-recently-used cache of kernel columns, keyed by the data index.  A
// returned pointer stays valid until two further distinct columns have been
// requested (capacity is at least 2).
//
// A column may be requested for a subset of rows only (the active set of a
// shrinking solver): then only those rows are computed, and the column is
// tagged with the caller's epoch.  Within one epoch the active set only
// shrinks, so such a partial column stays valid until the epoch changes; a
// full column is valid for ever.
//
// Columns come from KernelEvaluator's fast forms (a matrix-vector product and
// a vectorised exp for the Gaussian kernel).
class KernelColumnCache {
 public:
  KernelColumnCache(const KernelEvaluator& kernel, double megabytes)
      : kernel_(kernel), n_(kernel.size()), slot_of_(static_cast<size_t>(n_), -1) {
    const double bytes_per_column = 8.0 * static_cast<double>(std::max<Index>(n_, 1));
    double cap = std::floor(megabytes * 1048576.0 / bytes_per_column);
    cap = std::max(2.0, std::min(cap, static_cast<double>(n_)));
    capacity_ = static_cast<Index>(cap);
  }

  // The full column j.
  const double* column(Index j) { return column(j, nullptr, 0); }

  // Column j, valid at least on the rows in 'rows' (all rows when null).
  const double* column(Index j, const std::vector<Index>* rows, long epoch) {
    const bool want_full = rows == nullptr || static_cast<Index>(rows->size()) == n_;
    int s = slot_of_[static_cast<size_t>(j)];
    if (s >= 0) {
      Slot& sl = slots_[static_cast<size_t>(s)];
      lru_.splice(lru_.begin(), lru_, sl.where);
      if (sl.full || (!want_full && sl.epoch == epoch)) return sl.data.get();
    } else if (static_cast<Index>(slots_.size()) < capacity_) {
      s = static_cast<int>(slots_.size());
      slots_.emplace_back();
      Slot& sl = slots_.back();
      sl.data.reset(new double[static_cast<size_t>(n_)]);  // uninitialised until computed
      lru_.push_front(s);
      sl.where = lru_.begin();
    } else {
      s = lru_.back();
      Slot& sl = slots_[static_cast<size_t>(s)];
      slot_of_[static_cast<size_t>(sl.owner)] = -1;
      lru_.splice(lru_.begin(), lru_, sl.where);
    }
    Slot& sl = slots_[static_cast<size_t>(s)];
    sl.owner = j;
    sl.full = want_full;
    sl.epoch = epoch;
    slot_of_[static_cast<size_t>(j)] = s;
    if (want_full) compute_full(j, sl.data.get()); else compute_rows(j, *rows, sl.data.get());
    ++computed_;
    return sl.data.get();
  }

  long columns_computed() const { return computed_; }

 private:
  struct Slot {
    std::unique_ptr<double[]> data;
    Index owner = -1;
    bool full = false;
    long epoch = -1;
    std::list<int>::iterator where;
  };

  void compute_full(Index j, double* out) const { kernel_.fast_column(j, out); }

  void compute_rows(Index j, const std::vector<Index>& rows, double* out) {
    const Index m = static_cast<Index>(rows.size());
    if (buffer_.size() < m) buffer_.resize(m);
    kernel_rows(j, rows, buffer_.data());
    for (Index t = 0; t < m; ++t) out[rows[static_cast<size_t>(t)]] = buffer_[t];
  }

 public:
  // out[t] = k(x_rows[t], x_j), bypassing the cache.
  void kernel_rows(Index j, const std::vector<Index>& rows, double* out) const {
    kernel_.fast_rows(j, rows.data(), static_cast<Index>(rows.size()), out);
  }

  // The cached column j when it is complete, else null.
  const double* cached_full(Index j) const {
    const int s = slot_of_[static_cast<size_t>(j)];
    if (s < 0 || !slots_[static_cast<size_t>(s)].full) return nullptr;
    return slots_[static_cast<size_t>(s)].data.get();
  }

 private:

  const KernelEvaluator& kernel_;
  Index n_;
  Index capacity_ = 2;
  std::vector<int> slot_of_;
  std::vector<Slot> slots_;
  std::list<int> lru_;
  long computed_ = 0;
  Eigen::VectorXd buffer_;
};

namespace detail {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Shared state: the two halves of alpha, the residuals r = y - K beta and the
// kernel diagonal.
struct SvrState {
  const ConstVectorRef& y;
  const SvrControl& ctl;
  KernelColumnCache& cache;
  Eigen::VectorXd ap, am, r, kdiag;
  std::vector<Index> active;  // indices of points still in play
  long epoch = 0;             // bumped whenever the active set grows back

  // Kernel column of point j on (at least) the active points.
  const double* active_column(Index j) { return cache.column(j, &active, epoch); }

  SvrState(const ConstVectorRef& y_, const SvrControl& ctl_, KernelColumnCache& cache_,
           const KernelEvaluator& k)
      : y(y_), ctl(ctl_), cache(cache_), ap(Eigen::VectorXd::Zero(y_.size())),
        am(Eigen::VectorXd::Zero(y_.size())), r(y_), kdiag(k.diagonal()) {
    active.resize(static_cast<size_t>(y_.size()));
    for (Index i = 0; i < y_.size(); ++i) active[static_cast<size_t>(i)] = i;
  }

  Index n() const { return y.size(); }

  // The part of beta_k held at a bound, C (1[a+ = C] - 1[a- = C]), and the
  // residual contribution of all such parts, rbound = K (bound parts), kept
  // current on every point (libsvm's G_bar).  Rebuilding stale residuals
  // then needs only the columns of the free coefficients.
  Eigen::VectorXd rbound;
  bool track_bound = false;

  double bound_part(Index k) const {
    const double C = ctl.C;
    return C * ((ap[k] == C ? 1.0 : 0.0) - (am[k] == C ? 1.0 : 0.0));
  }

  void update_bound(Index k, double old_part) {
    const double delta = bound_part(k) - old_part;
    if (!track_bound || delta == 0.0) return;
    const double* col = cache.column(k);
    for (Index i = 0; i < n(); ++i) rbound[i] += delta * col[i];
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
    for (Index t = 0; t < m; ++t) r[stale[static_cast<size_t>(t)]] = acc[t];
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

  // Fold in point k's two variables, given its residual and alphas.
  void add(Index k, double r, double ap, double am, double C, double eps) {
    const double vp = r - eps, vm = r + eps;
    if (ap < C && vp > m) { m = vp; t_point = k; t_sign = +1; }
    if (am > 0.0 && vm > m) { m = vm; t_point = k; t_sign = -1; }
    if (ap > 0.0 && vp < M) M = vp;
    if (am < C && vm < M) M = vm;
  }
};

// m over I_up (with its maximiser) and M over I_low, on the active points.
inline PairGap pair_gap(const SvrState& st) {
  const double C = st.ctl.C, eps = st.ctl.epsilon;
  PairGap g(!st.ctl.bias);
  for (Index k : st.active) g.add(k, st.r[k], st.ap[k], st.am[k], C, eps);
  return g;
}

// libsvm's shrinking rule in residual form: a variable at a bound whose
// gradient pushes it further into the bound, beyond the current [M, m]
// window, is frozen.  A point leaves the active set when both its variables
// are frozen.
inline void shrink(SvrState& st, double m, double M) {
  const double C = st.ctl.C, eps = st.ctl.epsilon;
  auto frozen = [&](double a, double v, int s) {
    // s = +1 variable: in I_up only if a < C, in I_low only if a > 0.
    const bool up = (s > 0) ? (a < C) : (a > 0.0);
    const bool low = (s > 0) ? (a > 0.0) : (a < C);
    if (up && low) return false;  // free
    if (up) return v < M;         // only in I_up, and below the window
    return v > m;                 // only in I_low, and above the window
  };
  std::vector<Index> keep;
  keep.reserve(st.active.size());
  for (Index k : st.active) {
    const bool fp = frozen(st.ap[k], st.r[k] - eps, +1);
    const bool fm = frozen(st.am[k], st.r[k] + eps, -1);
    if (!(fp && fm)) keep.push_back(k);
  }
  st.active.swap(keep);
}

inline void solve_smo(SvrState& st, SvrResult& res, const std::function<void()>& interrupt) {
  const double C = st.ctl.C, eps = st.ctl.epsilon, tol = st.ctl.tol, tau = kSmoCurvatureFloor;
  const bool fixed_bias = !st.ctl.bias;
  const Index n = st.n();
  const std::vector<double> zeros(static_cast<size_t>(n), 0.0);  // the virtual column
  long iter = 0;
  bool unshrunk = false;
  const long shrink_every = std::min<long>(static_cast<long>(n), 1000);
  long counter = shrink_every;
  st.track_bound = st.ctl.shrinking;
  if (st.track_bound) st.rbound = Eigen::VectorXd::Zero(n);
  PairGap g(fixed_bias);
  bool fresh = false;  // g already holds the gap of the current state
  auto column = [&](Index p) { return p == kVirtual ? zeros.data() : st.active_column(p); };
  auto kdiag = [&](Index p) { return p == kVirtual ? 0.0 : st.kdiag[p]; };
  while (true) {
    if (st.ctl.shrinking && --counter == 0) {
      counter = shrink_every;
      g = pair_gap(st);
      if (!unshrunk && g.m - g.M <= 10.0 * tol) {
        // near the end: bring every point back once, with exact residuals
        unshrunk = true;
        st.rebuild_residuals();
        st.restore_active();
        g = pair_gap(st);
      }
      shrink(st, g.m, g.M);
      fresh = false;
    }
    if (fresh) fresh = false; else g = pair_gap(st);
    if (g.t_point == -1 || !(g.m - g.M >= tol)) {
      if (st.active.size() == static_cast<size_t>(n)) break;
      // converged on the active set: check all points with exact residuals
      st.rebuild_residuals();
      st.restore_active();
      counter = shrink_every;
      g = pair_gap(st);
      if (g.t_point == -1 || !(g.m - g.M >= tol)) break;
    }
    if (iter >= st.ctl.max_iter) break;
    if ((iter & 1023) == 0 && interrupt) interrupt();
    ++iter;

    const double m = g.m;
    const Index i = g.t_point;
    const int si = g.t_sign;
    const double old_bound_i = i == kVirtual ? 0.0 : st.bound_part(i);
    const double* ki = column(i);
    const double kii = kdiag(i);
    // second-order choice of the partner u in I_low
    Index j = -1;
    int sj = 0;
    double best = kInf, best_b = 0.0, best_a = 1.0;
    for (Index k : st.active) {
      const double curv = std::max(kii + st.kdiag[k] - 2.0 * ki[k], tau);
      if (st.ap[k] > 0.0) {
        const double b = m - (st.r[k] - eps);
        if (b > 0.0) {
          const double v = -b * b / curv;
          if (v <= best) { best = v; j = k; sj = +1; best_b = b; best_a = curv; }
        }
      }
      if (st.am[k] < C) {
        const double b = m - (st.r[k] + eps);
        if (b > 0.0) {
          const double v = -b * b / curv;
          if (v <= best) { best = v; j = k; sj = -1; best_b = b; best_a = curv; }
        }
      }
    }
    if (fixed_bias && i != kVirtual && m > 0.0) {
      // the virtual partner: a move of variable t alone
      const double curv = std::max(kii, tau);
      const double v = -m * m / curv;
      if (v <= best) { best = v; j = kVirtual; sj = +1; best_b = m; best_a = curv; }
    }
    if (j == -1) {  // cannot happen when m - M >= tol > 0; rounding only
      res.status.reason = "no working pair could improve the objective";
      break;
    }
    const double old_bound_j = j == kVirtual ? 0.0 : st.bound_part(j);
    // step d >= 0 along a_t += s_t d, a_u -= s_u d, clipped to the box
    double d = best_b / best_a;
    if (i != kVirtual) d = std::min(d, si > 0 ? C - st.ap[i] : st.am[i]);
    if (j != kVirtual) d = std::min(d, sj > 0 ? st.ap[j] : C - st.am[j]);
    if (i != kVirtual) { if (si > 0) st.ap[i] += d; else st.am[i] -= d; }
    if (j != kVirtual) { if (sj > 0) st.ap[j] -= d; else st.am[j] += d; }
    // snap to the bounds so that set membership is exact
    for (Index k : {i, j}) {
      if (k == kVirtual) continue;
      if (st.ap[k] > C - 1e-12 * C) st.ap[k] = C;
      if (st.am[k] > C - 1e-12 * C) st.am[k] = C;
      if (st.ap[k] < 1e-12 * C) st.ap[k] = 0.0;
      if (st.am[k] < 1e-12 * C) st.am[k] = 0.0;
    }
    // beta_i rises by d and beta_j falls by d (whatever the signs), so
    // r -= d (K_i - K_j); the next gap is gathered in the same pass
    if (i != j) {
      const double* kj = column(j);
      ki = column(i);  // still cached: capacity >= 2
      PairGap h(fixed_bias);
      for (Index k : st.active) {
        const double rk = st.r[k] - d * (ki[k] - kj[k]);
        st.r[k] = rk;
        h.add(k, rk, st.ap[k], st.am[k], C, eps);
      }
      g = h;
      fresh = true;
    }
    if (st.track_bound) {
      if (i != kVirtual) st.update_bound(i, old_bound_i);
      if (j != kVirtual && j != i) st.update_bound(j, old_bound_j);
    }
  }
  if (st.active.size() != static_cast<size_t>(n)) {
    st.rebuild_residuals();
    st.restore_active();
  }
  g = pair_gap(st);
  res.status.change = (g.t_point == -1) ? 0.0 : std::max(0.0, g.m - g.M);
  res.status.converged = res.status.change < tol;
  res.status.iterations = iter;
  res.status.tol = tol;
  if (fixed_bias) {
    res.b = 0.0;
    return;
  }
  // bias: average over free variables, else the midpoint of [M, m]
  double sum = 0.0;
  long nfree = 0;
  for (Index k = 0; k < n; ++k) {
    if (st.ap[k] > 0.0 && st.ap[k] < C) { sum += st.r[k] - eps; ++nfree; }
    if (st.am[k] > 0.0 && st.am[k] < C) { sum += st.r[k] + eps; ++nfree; }
  }
  if (nfree > 0) {
    res.b = sum / static_cast<double>(nfree);
  } else {
    const double lo = std::isfinite(g.M) ? g.M : g.m, hi = std::isfinite(g.m) ? g.m : g.M;
    res.b = std::isfinite(lo) && std::isfinite(hi) ? 0.5 * (lo + hi) : 0.0;
  }
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

}  // namespace gpsvm

#endif  // GPSVM_SMO_HPP
