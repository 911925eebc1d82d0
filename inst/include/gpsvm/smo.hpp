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
// residual without the bias, so the solver needs the residuals only; it keeps
// K beta once per distinct input (see "Points grouped by input" below).
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
// Kernel columns come from an LRU cache (KernelColumnCache, kernel_cache.hpp),
// so the n x n Gram matrix is never formed.  With shrinking, variables that
// sit at a bound and would stay there (libsvm's rule, restated in residual
// form) are left out of the selection and of the update, and only the
// active rows of new kernel columns are computed; K beta on the set-aside
// inputs is rebuilt (from the running contribution of the bounded
// coefficients plus the free ones) before the final check, so the reported
// solution satisfies the tolerance on all n points.  Every step polls the
// interrupt (interrupt.hpp), as do the loops over kernel columns.
#ifndef GPSVM_SMO_HPP
#define GPSVM_SMO_HPP

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "interrupt.hpp"
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
  // Per point, the log of its noise's scale l_i (noise varying with the
  // inputs, mfsvr_noise.hpp): the point's box is C exp(-l_i) and its tube
  // epsilon exp(l_i), the MAP estimate of mfsvr()'s model with those sites.
  // Empty: every point at (C, epsilon).
  Eigen::VectorXd log_noise_scale;

  template <class Self, class Visit>
  static void fields(Self& s, Visit&& v) {
    v("C", s.C, rule::positive_finite);
    v("epsilon", s.epsilon,
      FieldRule{is_finite_nonnegative, "'{}' must be a non-negative finite number", 0.0, kInf});
    v("bias", s.bias, rule::flag);
    v("tol", s.tol, rule::positive);
    v("max_iter", s.max_iter, rule::max_iter("'{}' must be positive"));
    v("cache_mb", s.cache_mb, rule::positive);
    v("shrinking", s.shrinking, rule::flag);
  }

  void validate() const {
    check_fields(*this);
    if (!log_noise_scale.allFinite())
      throw std::invalid_argument("'log_noise_scale' must be finite");
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
  bool polished = false;            // the exact optimum of svr_polish()
};

namespace detail {

constexpr double kInf = std::numeric_limits<double>::infinity();

// ---- Points grouped by input ---------------------------------------------
//
// Points with identical inputs ("twins") have identical kernel columns, and
// without a diagonal shift the same value of K beta.  So the solver keeps
// the field f = K beta once per distinct input (a group), computes kernel
// columns over the groups only, and derives each point's residual
// r_i = y_i - f_g(i) - shift beta_i.  A step then costs O(groups) instead of
// O(n): on many rows of few distinct inputs, tens of thousands of pair
// steps at O(n) each would take minutes.  Within a group the variable that attains a gap extreme is
// the member with the largest or smallest target among those whose alpha can
// still move that way (TwinSets).  With a diagonal shift twins differ, and
// every point is a group of its own.
struct Groups {
  std::vector<Index> point;  // slot -> training point; a group's slots are
                             // contiguous, in decreasing target
  std::vector<Index> first;  // group -> its first slot; first.back() = n
  std::vector<Index> group;  // slot -> group
  Index count() const { return static_cast<Index>(first.size()) - 1; }
  Index begin(Index g) const { return first[static_cast<size_t>(g)]; }  // its slots
  Index end(Index g) const { return first[static_cast<size_t>(g) + 1]; }
  Index size(Index g) const { return end(g) - begin(g); }
};

// `twin` is KernelEvaluator::first_twins() (or the identity); groups are
// numbered in the order of their first points.
inline Groups make_groups(const std::vector<Index>& twin, const ConstVectorRef& y) {
  const size_t n = static_cast<size_t>(y.size());
  std::vector<Index> group_of_first(n, -1), group_of(n), count;
  for (size_t i = 0; i < n; ++i) {
    Index& id = group_of_first[static_cast<size_t>(twin[i])];
    if (id < 0) {
      id = static_cast<Index>(count.size());
      count.push_back(0);
    }
    group_of[i] = id;
    ++count[static_cast<size_t>(id)];
  }
  Groups g;
  g.first.assign(count.size() + 1, 0);
  for (size_t k = 0; k < count.size(); ++k) g.first[k + 1] = g.first[k] + count[k];
  std::vector<Index> next(g.first.begin(), g.first.end() - 1);
  g.point.resize(n);
  for (size_t i = 0; i < n; ++i) {
    Index& slot = next[static_cast<size_t>(group_of[i])];
    g.point[static_cast<size_t>(slot++)] = static_cast<Index>(i);
  }
  g.group.resize(n);
  for (Index k = 0; k < g.count(); ++k) {
    std::stable_sort(g.point.begin() + g.begin(k), g.point.begin() + g.end(k),
                     [&](Index a, Index b) { return y[a] > y[b]; });
    std::fill(g.group.begin() + g.begin(k), g.group.begin() + g.end(k), k);
  }
  return g;
}

// The inputs of each group (its first point's row of x).
inline MatrixXd group_inputs(const Groups& g, const ConstMatrixRef& x) {
  MatrixXd out(g.count(), x.cols());
  for (Index k = 0; k < g.count(); ++k)
    out.row(k) = x.row(g.point[static_cast<size_t>(g.begin(k))]);
  return out;
}

// A group's gap extremes in residual units: the largest -s G over its
// variables in I_up (and which slot and sign attain it), and the smallest
// over those in I_low.
struct Extremes {
  double up = -kInf, low = kInf;
  Index up_slot = -1, low_slot = -1;
  int up_sign = 0, low_sign = 0;
};

// The members of each group of more than one point, by the state of their
// two variables: ordered sets of slots (slot order is decreasing target),
// so that, e.g., the largest target among the members whose alpha+ can
// still rise is the first element of `up_plus`.
class TwinSets {
 public:
  explicit TwinSets(const Groups& g) : index_(static_cast<size_t>(g.count()), -1) {
    for (Index k = 0; k < g.count(); ++k) {
      if (g.size(k) < 2) continue;
      index_[static_cast<size_t>(k)] = static_cast<Index>(sets_.size());
      sets_.emplace_back();
    }
  }

  bool shared(Index group) const { return index_[static_cast<size_t>(group)] >= 0; }

  // Files slot s of `group` by its variables' state.
  void file(Index group, Index s, double ap, double am, double cap_p, double cap_m) {
    if (!shared(group)) return;
    Sets& t = sets_[static_cast<size_t>(index_[static_cast<size_t>(group)])];
    place(t.up_plus, s, ap < cap_p);
    place(t.up_minus, s, am > 0.0);
    place(t.low_plus, s, ap > 0.0);
    place(t.low_minus, s, am < cap_m);
  }

  // The extremes of a shared group whose members' residuals are
  // y_s - field (no diagonal shift).
  Extremes extremes(Index group, const Eigen::VectorXd& y, double field, double eps) const {
    const Sets& t = sets_[static_cast<size_t>(index_[static_cast<size_t>(group)])];
    Extremes e;
    if (!t.up_plus.empty()) take_up(e, *t.up_plus.begin(), y, field + eps, +1);
    if (!t.up_minus.empty()) take_up(e, *t.up_minus.begin(), y, field - eps, -1);
    if (!t.low_plus.empty()) take_low(e, *t.low_plus.rbegin(), y, field + eps, +1);
    if (!t.low_minus.empty()) take_low(e, *t.low_minus.rbegin(), y, field - eps, -1);
    return e;
  }

 private:
  struct Sets {
    std::set<Index> up_plus, up_minus, low_plus, low_minus;
  };

  static void place(std::set<Index>& set, Index s, bool in) {
    if (in) set.insert(s); else set.erase(s);
  }
  // y_s - (field +- eps) = r_s -+ eps
  static void take_up(Extremes& e, Index s, const Eigen::VectorXd& y, double minus, int sign) {
    const double v = y[s] - minus;
    if (v > e.up) { e.up = v; e.up_slot = s; e.up_sign = sign; }
  }
  static void take_low(Extremes& e, Index s, const Eigen::VectorXd& y, double minus, int sign) {
    const double v = y[s] - minus;
    if (v < e.low) { e.low = v; e.low_slot = s; e.low_sign = sign; }
  }

  std::vector<Index> index_;  // group -> its sets, or -1 for a single point
  std::vector<Sets> sets_;
};

// Shared state, in slots (points in group order, see Groups): the two halves
// of alpha with their upper bounds and the targets per slot; the field
// f = K B (B the groups' sums of beta) and the diagonal of K + shift I per
// group.
//
// The bounds are per point: 0 <= a+_k <= cap_p[k], 0 <= a-_k <= cap_m[k].
// SVR has C for both; the bias-free SVM classifier (svc_smo_solve) is the
// same problem with epsilon = 0, targets y_k = +-1 and one half fixed at 0
// (cap 0) so that beta_k has the sign of y_k.  A cap may be infinite (no
// linear slack).  `shift` is a constant added to the diagonal of the
// kernel matrix only (the classifiers' input-noise variance): it enters a
// point's residual through its own beta, and the cached columns are the
// plain kernel's.
struct SvrState {
  const SvrControl& ctl;
  const Groups& groups;
  KernelColumnCache& cache;  // columns over the groups
  Eigen::VectorXd y, ap, am, cap_p, cap_m, eps;  // per slot
  Eigen::VectorXd field, kdiag;             // per group
  double shift = 0.0;
  TwinSets twins;
  bool all_single = false;         // no twins: slot s is group s
  std::vector<Index> active;       // groups still in play
  std::int64_t epoch = 0;          // bumped whenever the active set grows back
  std::vector<double> zeros;       // the virtual variable's kernel column
  InterruptPoll& poll;

  SvrState(const ConstVectorRef& y_points, const SvrControl& ctl_, const Groups& groups_,
           KernelColumnCache& cache_, const KernelEvaluator& group_kernel, double shift_,
           InterruptPoll& poll_)
      : ctl(ctl_), groups(groups_), cache(cache_), y(y_points.size()),
        ap(Eigen::VectorXd::Zero(y_points.size())), am(Eigen::VectorXd::Zero(y_points.size())),
        cap_p(Eigen::VectorXd::Constant(y_points.size(), ctl_.C)),
        cap_m(Eigen::VectorXd::Constant(y_points.size(), ctl_.C)),
        eps(Eigen::VectorXd::Constant(y_points.size(), ctl_.epsilon)),
        field(Eigen::VectorXd::Zero(groups_.count())),
        kdiag(group_kernel.diagonal().array() + shift_), shift(shift_), twins(groups_),
        zeros(static_cast<size_t>(groups_.count()), 0.0), poll(poll_) {
    for (Index s = 0; s < n(); ++s) y[s] = y_points[point(s)];
    if (ctl_.log_noise_scale.size() > 0) {
      for (Index s = 0; s < n(); ++s) {
        const double scale = std::exp(ctl_.log_noise_scale[point(s)]);
        cap_p[s] = cap_m[s] = ctl_.C / scale;
        eps[s] = ctl_.epsilon * scale;
      }
    }
    all_single = groups_.count() == n();
    restore_active();
  }

  Index n() const { return y.size(); }
  Index point(Index s) const { return groups.point[static_cast<size_t>(s)]; }
  Index group(Index s) const { return groups.group[static_cast<size_t>(s)]; }
  double beta(Index s) const { return ap[s] - am[s]; }
  double residual(Index s) const { return y[s] - field[group(s)] - shift * beta(s); }

  // Kernel column of group g on (at least) the active groups.
  const double* active_column(Index g) { return cache.column(g, &active, epoch); }

  // Files every slot in the twin sets: after the caps and alphas are set.
  void file_all() {
    for (Index s = 0; s < n(); ++s) file(s);
  }
  void file(Index s) { twins.file(group(s), s, ap[s], am[s], cap_p[s], cap_m[s]); }

  // The group's extremes from its current field and alphas.  A group of
  // one point (the usual case) reads its own slot directly.  Forced inline:
  // this is the body of the loops over all groups that make up a step, and
  // left to itself the compiler calls it (1.6 times the time of a step).
  EIGEN_ALWAYS_INLINE Extremes group_extremes(Index g) const {
    const Index s = all_single ? g : groups.begin(g);
    // (twins share their inputs, hence their tube)
    if (!all_single && groups.end(g) - s > 1) return twins.extremes(g, y, field[g], eps[s]);
    return point_extremes(s, y[s] - field[g] - shift * (ap[s] - am[s]));
  }

  // The extremes of slot s's two variables, given its residual.
  EIGEN_ALWAYS_INLINE Extremes point_extremes(Index s, double r) const {
    const double vp = r - eps[s], vm = r + eps[s];
    Extremes e;
    e.up_slot = e.low_slot = s;
    if (ap[s] < cap_p[s]) { e.up = vp; e.up_sign = +1; }
    if (am[s] > 0.0 && vm > e.up) { e.up = vm; e.up_sign = -1; }
    if (ap[s] > 0.0) { e.low = vp; e.low_sign = +1; }
    if (am[s] < cap_m[s] && vm < e.low) { e.low = vm; e.low_sign = -1; }
    return e;
  }

  // The sum of beta over each group's slots for which `part` is nonzero,
  // by group: {group, sum} pairs.
  template <class Part>
  std::vector<std::pair<Index, double>> group_sums(Part part) const {
    std::vector<std::pair<Index, double>> out;
    for (Index g = 0; g < groups.count(); ++g) {
      double sum = 0.0;
      for (Index s = groups.begin(g); s < groups.end(g); ++s) sum += part(s);
      if (sum != 0.0) out.emplace_back(g, sum);
    }
    return out;
  }

  // Starts from beta = ap - am (per point, each half within its cap):
  // field = K B from the columns of the groups with nonzero sums.
  void warm_start(const Eigen::VectorXd& ap0, const Eigen::VectorXd& am0) {
    for (Index s = 0; s < n(); ++s) {
      ap[s] = ap0[point(s)];
      am[s] = am0[point(s)];
    }
    field.setZero();
    for (const auto& gs : group_sums([&](Index s) { return beta(s); })) {
      poll();
      field += gs.second * Eigen::Map<const Eigen::VectorXd>(cache.column(gs.first), field.size());
    }
  }

  // The part of beta_k held at a bound, C (1[a+ = C] - 1[a- = C]), and the
  // field of all such parts, rbound = K (bound parts), kept current on
  // every group (libsvm's G_bar).  Rebuilding stale fields then needs only
  // the columns of the groups with free coefficients.
  Eigen::VectorXd rbound;
  bool track_bound = false;

  static double at_cap(double a, double cap) {
    return (a == cap && std::isfinite(cap)) ? cap : 0.0;
  }
  double bound_part(Index s) const { return at_cap(ap[s], cap_p[s]) - at_cap(am[s], cap_m[s]); }

  void start_bound_tracking() {
    track_bound = true;
    rbound = Eigen::VectorXd::Zero(field.size());
    for (const auto& gs : group_sums([&](Index s) { return bound_part(s); })) {
      poll();
      rbound += gs.second * Eigen::Map<const Eigen::VectorXd>(cache.column(gs.first), field.size());
    }
  }

  void update_bound(Index s, double old_part) {
    const double delta = bound_part(s) - old_part;
    if (!track_bound || delta == 0.0) return;
    const double* col = cache.column(group(s));
    for (Index g = 0; g < field.size(); ++g) rbound[g] += delta * col[g];
  }

  // Recompute the fields of the inactive groups (the active ones are
  // current): f = rbound + K (free parts), on the stale groups only.
  void rebuild_fields() {
    const Index groups_n = field.size();
    if (static_cast<Index>(active.size()) == groups_n) return;
    std::vector<Index> stale;
    {
      std::vector<char> is_active(static_cast<size_t>(groups_n), 0);
      for (Index g : active) is_active[static_cast<size_t>(g)] = 1;
      for (Index g = 0; g < groups_n; ++g)
        if (!is_active[static_cast<size_t>(g)]) stale.push_back(g);
    }
    const Index m = static_cast<Index>(stale.size());
    Eigen::VectorXd acc(m), col(m);
    for (Index t = 0; t < m; ++t)
      acc[t] = track_bound ? rbound[stale[static_cast<size_t>(t)]] : 0.0;
    const auto free_part = [&](Index s) { return beta(s) - (track_bound ? bound_part(s) : 0.0); };
    for (const auto& gs : group_sums(free_part)) {
      poll();
      if (const double* kj = cache.cached_full(gs.first)) {
        for (Index t = 0; t < m; ++t) acc[t] += gs.second * kj[stale[static_cast<size_t>(t)]];
      } else {
        cache.kernel_rows(gs.first, stale, col.data());
        acc += gs.second * col;
      }
    }
    for (Index t = 0; t < m; ++t) field[stale[static_cast<size_t>(t)]] = acc[t];
  }

  void restore_active() {
    ++epoch;
    active.resize(static_cast<size_t>(field.size()));
    for (Index g = 0; g < field.size(); ++g) active[static_cast<size_t>(g)] = g;
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
  Index t_slot = -1;
  int t_sign = 0;

  explicit PairGap(bool fixed_bias = false) {
    if (fixed_bias) { m = 0.0; M = 0.0; t_slot = kVirtual; t_sign = +1; }
  }

  void add(const Extremes& e) {
    if (e.up > m) { m = e.up; t_slot = e.up_slot; t_sign = e.up_sign; }
    if (e.low < M) M = e.low;
  }
};

// m over I_up (with its maximiser) and M over I_low, on the active groups.
inline PairGap pair_gap(const SvrState& st) {
  PairGap g(!st.ctl.bias);
  for (Index k : st.active) g.add(st.group_extremes(k));
  return g;
}

// libsvm's shrinking rule in residual form: a variable at a bound whose
// gradient pushes it further into the bound, beyond the current [M, m]
// window, is frozen.  A variable in I_up is not frozen iff its -s G >= M
// (free ones included: they lie in [M, m]), one in I_low iff its -s G <= m;
// a group leaves the active set when all its variables are frozen, so it
// stays iff its extremes reach into the window.
inline void shrink(SvrState& st, double m, double M) {
  std::vector<Index> keep;
  keep.reserve(st.active.size());
  for (Index k : st.active) {
    const Extremes e = st.group_extremes(k);
    if (e.up >= M || e.low <= m) keep.push_back(k);
  }
  st.active.swap(keep);
}

// The working pair: variable t = (slot i, sign si) from I_up attaining m,
// and its partner u = (j, sj) from I_low chosen by second-order
// information, with b = m + s_u G_u > 0 and the curvature a = a_tu.
// kVirtual stands for the virtual variable of the bias-free problem; j = -1
// means no partner.
struct WorkingPair {
  Index i = -1, j = -1;
  int si = 0, sj = 0;
  double b = 0.0, a = 1.0;
};

// The kernel column (over groups) and diagonal of a real variable's group,
// or zeros for the virtual one.
inline const double* column_of(SvrState& st, Index slot) {
  return slot == kVirtual ? st.zeros.data() : st.active_column(st.group(slot));
}
inline double kdiag_of(const SvrState& st, Index slot) {
  return slot == kVirtual ? 0.0 : st.kdiag[st.group(slot)];
}

// Fan, Chen and Lin's second-order choice of the partner of g.t_slot among
// the active groups (and, without a bias, the virtual variable).  Within a
// group the curvature is the same for every member, so the best partner
// there is its I_low extreme; twins of t have curvature 0 (the floor) and
// are taken whenever one can improve the objective.
inline WorkingPair select_pair(SvrState& st, const PairGap& g) {
  const double m = g.m;
  WorkingPair p;
  p.i = g.t_slot;
  p.si = g.t_sign;
  const double* ki = column_of(st, p.i);
  const double kii = kdiag_of(st, p.i);
  const Index gi = p.i == kVirtual ? kVirtual : st.group(p.i);
  double best = kInf;
  auto consider = [&](Index slot, int sign, double b, double curv) {
    const double v = -b * b / curv;
    if (v <= best) { best = v; p.j = slot; p.sj = sign; p.b = b; p.a = curv; }
  };
  for (Index k : st.active) {
    const Extremes e = st.group_extremes(k);
    const double b = m - e.low;
    if (!(b > 0.0)) continue;
    // the cached column is the plain kernel's: the shift sits on t's own row
    const double kik = k == gi ? ki[k] + st.shift : ki[k];
    const double curvature = std::max(kii + st.kdiag[k] - 2.0 * kik, kSmoCurvatureFloor);
    consider(e.low_slot, e.low_sign, b, curvature);
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
  for (Index s : {p.i, p.j}) {
    if (s == kVirtual) continue;
    snap(st.ap[s], st.cap_p[s]);
    snap(st.am[s], st.cap_m[s]);
    st.file(s);
  }
  return d;
}

// beta_i rose by d and beta_j fell by d (whatever the signs), so
// f += d (K_i - K_j) on the active groups (nothing for twins); the next gap
// is gathered in the same pass.  The diagonal shift follows through the
// two points' own beta.
inline PairGap move_fields(SvrState& st, const WorkingPair& p, double d) {
  const double* kj = column_of(st, p.j);
  const double* ki = column_of(st, p.i);  // still cached: capacity >= 2
  PairGap h(!st.ctl.bias);
  const bool same_group = p.i != kVirtual && p.j != kVirtual && st.group(p.i) == st.group(p.j);
  for (Index k : st.active) {
    if (!same_group) st.field[k] += d * (ki[k] - kj[k]);
    h.add(st.group_extremes(k));
  }
  return h;
}

// Every group back in play, with exact fields.
inline void unshrink(SvrState& st) {
  st.rebuild_fields();
  st.restore_active();
}

// libsvm's shrinking schedule: every min(n, 1000) steps, set aside the
// groups whose variables sit at a bound and would stay there; the first
// time the gap is within 10 tol, bring every group back once first.
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

inline bool gap_closed(const PairGap& g, double tol) { return g.t_slot == -1 || !(g.m - g.M >= tol); }

// Whether the KKT conditions hold within tol: on the active set, then, if
// groups were set aside, on all of them with exact fields.
inline bool optimal(SvrState& st, PairGap& g, ShrinkSchedule& sched) {
  if (!gap_closed(g, st.ctl.tol)) return false;
  if (static_cast<Index>(st.active.size()) == st.field.size()) return true;
  unshrink(st);
  sched.counter = sched.every;
  g = pair_gap(st);
  return gap_closed(g, st.ctl.tol);
}

// The bias: the average of -s_t G_t over free variables, else the midpoint
// of [M, m].
inline double free_bias(const SvrState& st, const PairGap& g) {
  double sum = 0.0;
  Index nfree = 0;
  for (Index s = 0; s < st.n(); ++s) {
    const double r = st.residual(s);
    if (st.ap[s] > 0.0 && st.ap[s] < st.cap_p[s]) { sum += r - st.eps[s]; ++nfree; }
    if (st.am[s] > 0.0 && st.am[s] < st.cap_m[s]) { sum += r + st.eps[s]; ++nfree; }
  }
  if (nfree > 0) return sum / static_cast<double>(nfree);
  const double lo = std::isfinite(g.M) ? g.M : g.m, hi = std::isfinite(g.m) ? g.m : g.M;
  return std::isfinite(lo) && std::isfinite(hi) ? 0.5 * (lo + hi) : 0.0;
}

// The final KKT check on all points, the status and the bias.
inline void final_status_and_bias(SvrState& st, std::int64_t iterations, SvrResult& res) {
  if (static_cast<Index>(st.active.size()) != st.field.size()) unshrink(st);
  const PairGap g = pair_gap(st);
  res.status = status_by_tol(iterations, (g.t_slot == -1) ? 0.0 : std::max(0.0, g.m - g.M),
                             st.ctl.tol);
  res.b = st.ctl.bias ? free_bias(st, g) : 0.0;
}

inline void solve_smo(SvrState& st, SvrResult& res) {
  ShrinkSchedule sched(st.n());
  st.file_all();
  // a warm start may hold coefficients at their caps already
  if (st.ctl.shrinking) st.start_bound_tracking();
  PairGap g(!st.ctl.bias);
  bool fresh = false;  // g already holds the gap of the current state
  std::int64_t iter = 0;
  while (true) {
    if (st.ctl.shrinking && sched.tick(st, g)) fresh = false;
    if (!fresh) g = pair_gap(st);
    fresh = false;
    if (optimal(st, g, sched) || iter >= st.ctl.max_iter) break;
    st.poll();
    ++iter;
    const WorkingPair p = select_pair(st, g);
    if (p.j == -1) {  // cannot happen when m - M >= tol > 0; rounding only
      res.status.reason = "no working pair could improve the objective";
      break;
    }
    const double old_bound_i = p.i == kVirtual ? 0.0 : st.bound_part(p.i);
    const double old_bound_j = p.j == kVirtual ? 0.0 : st.bound_part(p.j);
    const double d = take_step(st, p);
    g = move_fields(st, p, d);
    fresh = true;
    if (st.track_bound) {
      if (p.i != kVirtual) st.update_bound(p.i, old_bound_i);
      if (p.j != kVirtual && p.j != p.i) st.update_bound(p.j, old_bound_j);
    }
  }
  final_status_and_bias(st, iter, res);
}

// The solution in the order of the training points: beta and the
// residuals r = y - (K + shift I) beta.
inline void point_order(const SvrState& st, Eigen::VectorXd& ap, Eigen::VectorXd& am,
                        Eigen::VectorXd& residual) {
  ap.resize(st.n());
  am.resize(st.n());
  residual.resize(st.n());
  for (Index s = 0; s < st.n(); ++s) {
    ap[st.point(s)] = st.ap[s];
    am[st.point(s)] = st.am[s];
    residual[st.point(s)] = st.residual(s);
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
  if (ctl.log_noise_scale.size() != 0 && ctl.log_noise_scale.size() != x.rows())
    throw std::invalid_argument("'log_noise_scale' must have one value per row of 'x'");
  InterruptPoll poll(interrupt);
  const std::vector<Index> first = KernelEvaluator(kernel, x).first_twins();
  // Twins share one tube (the twin sets order them by target alone): each
  // takes its first twin's scale, which a smooth noise function gives them
  // up to rounding (a matrix product's, row by row).
  SvrControl rows = ctl;
  Eigen::VectorXd& l = rows.log_noise_scale;
  for (Index i = 0; i < l.size(); ++i) {
    const double l0 = l[first[static_cast<size_t>(i)]];
    if (!(std::fabs(l[i] - l0) <= 1e-8 * (1.0 + std::fabs(l0))))
      throw std::invalid_argument("rows with identical inputs must have the same 'log_noise_scale'");
    l[i] = l0;
  }
  const detail::Groups groups = detail::make_groups(first, y);
  const KernelEvaluator k(kernel, detail::group_inputs(groups, x));
  KernelColumnCache cache(k, ctl.cache_mb);
  detail::SvrState st(y, rows, groups, cache, k, 0.0, poll);
  SvrResult res;
  detail::solve_smo(st, res);
  Eigen::VectorXd r;
  detail::point_order(st, res.alpha_plus, res.alpha_minus, r);
  res.beta = res.alpha_plus - res.alpha_minus;
  // r = y - K beta, so 1/2 beta'K beta - y'beta = -1/2 beta'(y + r)
  double tube = 0.0;  // sum_i epsilon_i |beta_i|
  for (Index s = 0; s < st.n(); ++s) tube += st.eps[s] * std::abs(st.beta(s));
  res.objective = -0.5 * res.beta.dot(y + r) + tube;
  res.kernel_columns = cache.columns_computed();
  res.fitted = y - r + Eigen::VectorXd::Constant(y.size(), res.b);
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

  // shrinking is no setting of svc(): the glue always shrinks
  template <class Self, class Visit>
  static void fields(Self& s, Visit&& v) {
    v("C", s.C, rule::of_model({is_positive, "'{}' must be positive (Inf allowed)", 0.0, kInf}));
    v("noise", s.noise, rule::of_model(rule::finite_nonnegative));
    v("tol", s.tol, rule::positive_finite);
    v("max_iter", s.max_iter, rule::max_iter("'{}' must be positive"));
    v("cache_mb", s.cache_mb, rule::positive);
  }
  void validate() const { check_fields(*this); }

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
// `first` is KernelEvaluator::first_twins().
inline void share_among_twins(const std::vector<Index>& first, const ConstVectorRef& y,
                              double C, Eigen::VectorXd& alpha) {
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
  InterruptPoll poll(interrupt);
  // noise on the diagonal tells twins apart: then every point is a group
  std::vector<Index> twins(static_cast<size_t>(n));
  if (control.noise == 0.0) {
    twins = k.first_twins();
  } else {
    for (Index i = 0; i < n; ++i) twins[static_cast<size_t>(i)] = i;
  }
  const detail::Groups groups = detail::make_groups(twins, y);
  const KernelEvaluator kg(kernel, detail::group_inputs(groups, x));
  KernelColumnCache cache(kg, control.cache_mb);
  detail::SvrState st(y, smo, groups, cache, kg, control.noise, poll);
  for (Index s = 0; s < n; ++s) {
    if (st.y[s] > 0) st.cap_m[s] = 0.0; else st.cap_p[s] = 0.0;
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
  detail::solve_smo(st, res);
  SvcResult out;
  Eigen::VectorXd ap, am, r;
  detail::point_order(st, ap, am, r);
  const Eigen::VectorXd beta = ap - am;
  out.alpha = (y.array() * beta.array()).matrix();
  if (control.noise == 0.0) detail::share_among_twins(twins, y, control.C, out.alpha);
  out.field = y - r;
  // 1/2 beta' (K + noise I) beta - y' beta = -1/2 beta' (y + r) = -W
  out.objective = 0.5 * beta.dot(y + r);
  out.status = res.status;
  const double unit = control.unit();
  out.status.change = (res.status.change / unit) * (res.status.change / unit);
  out.status.tol = control.tol;
  out.status.converged = res.status.converged && out.status.change < control.tol;
  out.kernel_columns = cache.columns_computed();
  return out;
}

// The margin vectors' coefficients beta_M (and b, with a bias) that put
// their residuals exactly on the tube's edges, the exact optimum once the
// split into X_0, X_C and the margin is known:
//   K_MM beta_M + b 1 = rhs,  and with a bias 1' beta_M = -fixed_sum
// (the other points' coefficients' sum).  False when K_MM is numerically
// singular (a pivot of its Cholesky factor below 1e-7 of the largest:
// duplicated margin inputs), where the split has no unique solution.
inline bool svr_margin_solve(const Eigen::MatrixXd& k_mm, const Eigen::VectorXd& rhs, bool bias,
                             double fixed_sum, Eigen::VectorXd& beta, double& b) {
  const Eigen::LLT<Eigen::MatrixXd> llt(k_mm);
  if (llt.info() != Eigen::Success) return false;
  const Eigen::VectorXd pivots = llt.matrixLLT().diagonal();
  if (!(pivots.minCoeff() >= 1e-7 * pivots.maxCoeff())) return false;
  beta = llt.solve(rhs);
  b = 0.0;
  if (!bias) return true;
  const Eigen::VectorXd k_one = llt.solve(Eigen::VectorXd::Ones(rhs.size()));
  b = (beta.sum() + fixed_sum) / k_one.sum();
  beta -= b * k_one;
  return true;
}

// ---- The exact optimum from an approximate one ------------------------------
//
// svr()'s split of the training points (eqs. 8-11 of the paper): X_0
// (beta = 0), X_C (|beta| = C) and the margin vectors X_M- (beta < 0) and
// X_M+ (beta > 0) in between, with a relative tolerance on the bounds (C
// each row's).  Zero is judged against the largest |beta| when no
// coefficient comes near C: with C = 1e8 and a hard epsilon-tube (every
// |beta| about 1), a tolerance relative to C would call the margin vectors
// zero.
enum SvrSplit { kSvrZero = 0, kSvrBound = 1, kSvrBelow = 2, kSvrAbove = 3 };

inline std::vector<int> svr_partition(const Eigen::VectorXd& beta, const Eigen::VectorXd& C,
                                      double tol) {
  const double largest = beta.size() > 0 ? std::max(beta.cwiseAbs().maxCoeff(), 0.0) : 0.0;
  std::vector<int> out(static_cast<size_t>(beta.size()));
  for (Index i = 0; i < beta.size(); ++i) {
    const double a = std::fabs(beta[i]);
    out[static_cast<size_t>(i)] = a <= tol * std::min(C[i], largest) ? kSvrZero
                                  : a >= C[i] * (1.0 - tol)          ? kSvrBound
                                  : beta[i] < 0.0                    ? kSvrBelow
                                                                     : kSvrAbove;
  }
  return out;
}

// The solver's stopping measure (svr_control(tol)) at a solution, with
// residuals r = y - K beta that leave out the bias: the largest violation
// m - M of the pair conditions (without a bias, 0 is in both extremes).
inline double svr_kkt_gap(const Eigen::VectorXd& beta, const Eigen::VectorXd& r,
                          const Eigen::VectorXd& C, const Eigen::VectorXd& eps, bool bias) {
  double m = bias ? -detail::kInf : 0.0, M = bias ? detail::kInf : 0.0;
  for (Index i = 0; i < beta.size(); ++i) {
    const double ap = std::max(beta[i], 0.0), am = std::max(-beta[i], 0.0);
    if (ap < C[i]) m = std::max(m, r[i] - eps[i]);
    if (am > 0.0) m = std::max(m, r[i] + eps[i]);
    if (ap > 0.0) M = std::min(M, r[i] - eps[i]);
    if (am < C[i]) M = std::min(M, r[i] + eps[i]);
  }
  return m - M;
}

namespace detail {

// K(z, x_j) w_j summed over the rows `cols` of x (none: zeros).
inline Eigen::VectorXd expansion(const Kernel& kernel, const ConstMatrixRef& z,
                                 const ConstMatrixRef& x, const std::vector<Index>& cols,
                                 const Eigen::VectorXd& w,
                                 const std::function<void()>& interrupt) {
  if (cols.empty()) return Eigen::VectorXd::Zero(z.rows());
  Eigen::MatrixXd xs(static_cast<Index>(cols.size()), x.cols());
  Eigen::VectorXd ws(xs.rows());
  for (size_t j = 0; j < cols.size(); ++j) {
    xs.row(static_cast<Index>(j)) = x.row(cols[j]);
    ws[static_cast<Index>(j)] = w[cols[j]];
  }
  return KernelEvaluator(kernel, xs).cross_times(z, ws, interrupt);
}

}  // namespace detail

// Given the split into X_0, X_C and the margin vectors M, optimality says
// the margin vectors' residuals are exactly +-epsilon:
//   K_MM beta_M + b 1 = y_M - epsilon sign(beta_M) - K_MC beta_C,
// with, for a bias, sum(beta_M) = -sum(beta_C) as well (svr_margin_solve());
// with the signs fixed this is the minimum of the dual objective over
// beta_M.  Its solution is the optimum when it keeps the split (margin
// coefficients inside (0, C) with their signs) and the other points
// satisfy their KKT conditions (|r| <= epsilon in X_0, r beyond the tube on
// beta's side in X_C), both to rounding.  Otherwise a primal active-set
// method takes over from the solver's split, as Lawson and Hanson's for
// non-negative least squares: it steps from the current coefficients
// towards the solution until the first margin coefficient reaches 0 or C,
// which then leaves the margin; when the solution is inside, the point
// furthest on the wrong side of the tube joins the margin.  Each step lowers
// the dual objective, and near the optimum a few steps suffice.  On success
// `res` has beta, b, fitted, objective and the KKT gap replaced and
// `polished` set; false (res unchanged) when `rounds` are not enough or
// K_MM is numerically singular.  C and eps are each row's box and tube.
inline bool svr_polish(const Kernel& kernel, const ConstMatrixRef& x, const ConstVectorRef& y,
                       const Eigen::VectorXd& C, const Eigen::VectorXd& eps, bool bias,
                       double margin_tol, SvrResult& res,
                       const std::function<void()>& interrupt = nullptr, int rounds = 50) {
  const Index n = y.size();
  InterruptPoll poll(interrupt);
  const std::vector<int> part = svr_partition(res.beta, C, margin_tol);
  Eigen::VectorXd side(n), beta(n);
  std::vector<bool> margin(static_cast<size_t>(n));
  for (Index i = 0; i < n; ++i) {
    const int p = part[static_cast<size_t>(i)];
    side[i] = res.beta[i] > 0.0 ? 1.0 : (res.beta[i] < 0.0 ? -1.0 : 0.0);
    margin[static_cast<size_t>(i)] = p == kSvrBelow || p == kSvrAbove;
    beta[i] = p == kSvrBound ? side[i] * C[i] : (margin[static_cast<size_t>(i)] ? res.beta[i] : 0.0);
  }
  double b = res.b;
  const double slack = std::sqrt(std::numeric_limits<double>::epsilon()) *
                       std::max(1.0, y.size() > 0 ? y.cwiseAbs().maxCoeff() : 0.0);
  // K beta from the solver's, updated by the coefficients that change
  const Eigen::VectorXd start_latent = res.fitted.array() - res.b;
  for (int round = 0; round < rounds; ++round) {
    poll();
    std::vector<Index> M, fixed;
    for (Index i = 0; i < n; ++i) {
      if (margin[static_cast<size_t>(i)]) M.push_back(i);
      else if (beta[i] != 0.0) fixed.push_back(i);
    }
    if (!M.empty()) {
      const Index m = static_cast<Index>(M.size());
      Eigen::MatrixXd xm(m, x.cols());
      Eigen::VectorXd rhs(m);
      for (Index j = 0; j < m; ++j) {
        xm.row(j) = x.row(M[j]);
        rhs[j] = y[M[j]] - eps[M[j]] * side[M[j]];
      }
      rhs -= detail::expansion(kernel, xm, x, fixed, beta, interrupt);
      double fixed_sum = 0.0;
      for (Index i : fixed) fixed_sum += beta[i];
      Eigen::VectorXd step;
      double step_b = 0.0;
      if (!svr_margin_solve(KernelEvaluator(kernel, xm).gram(interrupt), rhs, bias, fixed_sum, step,
                            step_b))
        return false;
      // the largest step in [0, 1] that keeps 0 <= side * beta <= C
      Eigen::VectorXd t_zero(m), t_bound(m);
      double t = 1.0;
      for (Index j = 0; j < m; ++j) {
        const Index i = M[j];
        const double now = side[i] * beta[i], target = side[i] * step[j];
        t_zero[j] = target < 0.0 ? now / (now - target) : detail::kInf;
        t_bound[j] = target > C[i] ? (C[i] - now) / (target - now) : detail::kInf;
        t = std::min({t, t_zero[j], t_bound[j]});
      }
      if (t < 1.0) {
        for (Index j = 0; j < m; ++j) beta[M[j]] += t * (step[j] - beta[M[j]]);
        for (Index j = 0; j < m; ++j) {
          const Index i = M[j];
          if (t_zero[j] == t) {
            beta[i] = 0.0;
            margin[static_cast<size_t>(i)] = false;
          } else if (t_bound[j] == t) {
            beta[i] = side[i] * C[i];
            margin[static_cast<size_t>(i)] = false;
          }
        }
        continue;
      }
      for (Index j = 0; j < m; ++j) beta[M[j]] = step[j];
      b = step_b;
    }
    std::vector<Index> moved;
    for (Index i = 0; i < n; ++i)
      if (beta[i] != res.beta[i]) moved.push_back(i);
    const Eigen::VectorXd change = beta - res.beta;
    const Eigen::VectorXd latent = start_latent + detail::expansion(kernel, x, x, moved, change, interrupt);
    const Eigen::VectorXd r = y - latent - Eigen::VectorXd::Constant(n, b);
    Index worst = -1;
    double most = -detail::kInf;
    bool worst_at_c = false;
    for (Index i = 0; i < n; ++i) {
      if (margin[static_cast<size_t>(i)]) continue;
      const bool at_c = beta[i] != 0.0;
      const double wrong = at_c ? eps[i] - side[i] * r[i] : std::fabs(r[i]) - eps[i];
      if (wrong > most) {
        most = wrong;
        worst = i;
        worst_at_c = at_c;
      }
    }
    if (worst < 0 || most <= slack) {
      res.beta = beta;
      res.alpha_plus = beta.cwiseMax(0.0);
      res.alpha_minus = (-beta).cwiseMax(0.0);
      res.b = b;
      res.fitted = latent.array() + b;
      res.objective = 0.5 * beta.dot(latent) - y.dot(beta) + eps.dot(beta.cwiseAbs());
      res.status.change = svr_kkt_gap(beta, y - latent, C, eps, bias);
      res.polished = true;
      return true;
    }
    if (!worst_at_c) side[worst] = r[worst] > 0.0 ? 1.0 : (r[worst] < 0.0 ? -1.0 : 0.0);
    margin[static_cast<size_t>(worst)] = true;
  }
  return false;
}

// svr()'s fit at given settings: the dual by SMO (svr_solve()) and, when
// it converged, the exact optimum from its split (svr_polish()); when the
// active-set steps cannot finish from that split, the dual solved again at
// tolerance 1e-10 (the status keeps the tolerance asked for) and polished
// from there.  margin_tol: svr_partition()'s tolerance.
inline SvrResult svr_fit(const Kernel& kernel, const ConstMatrixRef& x, const ConstVectorRef& y,
                         const SvrControl& ctl, double margin_tol,
                         const std::function<void()>& interrupt = nullptr) {
  SvrResult res = svr_solve(kernel, x, y, ctl, interrupt);
  if (!res.status.converged) return res;
  // each row's box and tube (noise varying with the inputs: C exp(-l_i),
  // epsilon exp(l_i))
  Eigen::VectorXd C = Eigen::VectorXd::Constant(y.size(), ctl.C);
  Eigen::VectorXd eps = Eigen::VectorXd::Constant(y.size(), ctl.epsilon);
  if (ctl.log_noise_scale.size() > 0) {
    const Eigen::VectorXd scale = ctl.log_noise_scale.array().exp();
    C = C.cwiseQuotient(scale);
    eps = eps.cwiseProduct(scale);
  }
  if (svr_polish(kernel, x, y, C, eps, ctl.bias, margin_tol, res, interrupt) || !(ctl.tol > 1e-10))
    return res;
  SvrControl tight = ctl;
  tight.tol = 1e-10;
  SvrResult again = svr_solve(kernel, x, y, tight, interrupt);
  again.status.tol = ctl.tol;
  if (again.status.converged) svr_polish(kernel, x, y, C, eps, ctl.bias, margin_tol, again, interrupt);
  return again;
}

}  // namespace gpsvm

#endif  // GPSVM_SMO_HPP
