// The "naive" mean-field Gaussian process classifier of Opper and Winther
// (2000, section 17.6, Algorithm 17.1).
//
// The posterior mean activation is <f_i> = sum_j k_ij y_j alpha_j (eq. 17.35)
// and the naive mean-field equations (17.40) are
//   alpha_i = G(z_i) / sqrt(k_ii),   z_i = (y_i <f_i> - k_ii alpha_i) / sqrt(k_ii),
//   G(z) = (1 - 2 kappa) phi(z) / (kappa + (1 - 2 kappa) Phi(z)),
// with kappa the output flip probability (eq. 17.17) and k the covariance of
// the noisy process (noise variance on the diagonal, eq. 17.16).  G is
// special.hpp's flip_mills_ratio, evaluated in logs (the Mills ratio for
// kappa = 0), so that far points neither overflow nor give 0/0.
//
// Algorithm 17.1: alpha from 0; all delta alpha_i = G(z_i)/sqrt(k_ii) - alpha_i
// computed in parallel; alpha += eta * delta alpha; eta *= 1.1 when
// sum_i delta alpha_i^2 fell since the previous sweep, eta /= 2 otherwise;
// stop when max_i delta alpha_i^2 < ftol (control.tol).  Here the test is made on the
// delta alpha of the alpha that is returned, so the returned alpha is the one
// whose fixed-point residual was measured.
#ifndef GPSVM_NAIVE_MF_HPP
#define GPSVM_NAIVE_MF_HPP

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "classifier.hpp"
#include "kernel_cache.hpp"
#include "lowrank.hpp"
#include "special.hpp"

namespace gpsvm {

struct NaiveMfControl {
  // No defaults here (see solver_status.hpp): gpc() and gpc_control() hold them.
  double kappa = kUnset;  // output flip probability, in [0, 1/2)
  double tol = kUnset;    // stop when max_i delta alpha_i^2 < tol (the paper's ftol)
  double eta = kUnset;    // initial learning rate
  int max_iter = -1;      // cap on parallel updates, >= 0

  template <class Self, class Visit>
  static void fields(Self& s, Visit&& v) {
    v("kappa", s.kappa, rule::of_model(kKappaRule));
    v("tol", s.tol, rule::positive_finite);
    v("eta", s.eta, rule::positive_finite);
    v("max_iter", s.max_iter, FieldRule{is_nonnegative, "'{}' must be >= 0", 1.0, kIntMax});
  }
  void validate() const { check_fields(*this); }
};

struct NaiveMfResult {
  VectorXd alpha;   // embedding strengths, >= 0
  VectorXd field;   // <f> = K (y * alpha) with the noisy K
  VectorXd z;       // the z_i of eq. (17.40) at the returned alpha
  double eta = 0.0; // Algorithm 17.1: its final learning rate
  SolverStatus status;
};

namespace detail {

// delta alpha for the current alpha; fills field, z and delta.
inline void naive_mf_delta(const ConstMatrixRef& k, const ConstVectorRef& y, double kappa,
                           const ConstVectorRef& alpha, VectorXd& field, VectorXd& z,
                           VectorXd& delta) {
  field.noalias() = k * (y.array() * alpha.array()).matrix();
  for (Index i = 0; i < alpha.size(); ++i) {
    const double s = std::sqrt(k(i, i));
    z[i] = (y[i] * field[i] - k(i, i) * alpha[i]) / s;
    delta[i] = flip_mills_ratio(z[i], kappa) / s - alpha[i];
  }
}

}  // namespace detail

// Runs Algorithm 17.1 on the noisy kernel matrix k and labels y in {-1, +1}.
// `start`, if not empty, replaces the tabula-rasa start (used by the exact
// leave-one-out refits).
inline NaiveMfResult naive_mf_fit(const ConstMatrixRef& k, const ConstVectorRef& y,
                                  const NaiveMfControl& control,
                                  const VectorXd& start = VectorXd(),
                                  const std::function<void()>& interrupt = {}) {
  control.validate();
  check_gram(k);
  const Index n = k.rows();
  check_labels(y, n);

  VectorXd alpha = VectorXd::Zero(n);
  if (start.size() == n) {
    alpha = start;
  } else if (start.size() != 0) {
    throw std::invalid_argument("warm start has the wrong length");
  }
  VectorXd field(n), z(n), delta(n);
  double eta = control.eta;
  double previous_error = std::numeric_limits<double>::infinity();
  double worst = 0.0;
  int it = 0;
  InterruptPoll poll(interrupt);
  for (;;) {
    poll();
    detail::naive_mf_delta(k, y, control.kappa, alpha, field, z, delta);
    worst = delta.cwiseAbs2().maxCoeff();
    if (!std::isfinite(worst))
      throw std::runtime_error("naive mean-field iteration produced a non-finite update");
    if (worst < control.tol || it >= control.max_iter) break;
    const double error = delta.squaredNorm();
    if (it > 0) eta = error < previous_error ? 1.1 * eta : 0.5 * eta;
    previous_error = error;
    alpha += eta * delta;
    ++it;
  }

  return {std::move(alpha), std::move(field), std::move(z), eta,
          status_by_tol(it, worst, control.tol)};
}

// ---- The same equations by a quasi-Newton iteration --------------------------
//
// Write h_i = y_i <f_i> - k_ii alpha_i = sum_{j != i} y_i y_j k_ij alpha_j (the
// field without point i's own term) and s_i = sqrt(k_ii).  Equation i of
// (17.40) is alpha_i = g_i(h_i) = G(h_i / s_i) / s_i; the residual is
// delta = g(h(alpha)) - alpha, Algorithm 17.1's delta alpha.
//
// Existence (kappa = 0): g_i decreases (G is the Mills ratio), so it has an
// inverse phi_i, and the fixed points are the stationary points of
//   E(alpha) = sum_i Psi_i(alpha_i) - 1/2 alpha' (Q - D) alpha,
// with Psi_i' = phi_i, Q = diag(y) K diag(y) and D = diag(k_ii).  E's Hessian
// is -(Omega + Q) with Omega_i = -1 / g_i' - k_ii = k_ii (1 / (G (z + G)) - 1)
// >= 0, the matrix of the leave-one-out estimate (17.41): with kappa = 0,
// 0 < G (z + G) < 1 (one minus a truncated normal variance), so E is
// strictly concave wherever K (with its noise) is positive definite, and the
// fixed point exists and is unique.  Algorithm 17.1's parallel update has no
// such guarantee; its learning-rate rule can lose the fixed point and
// diverge.  With kappa > 0, G (z + G) turns negative far on the wrong side, E
// is no longer concave and several fixed points may exist.
//
// Solver: quasi-Newton steps on delta (NaiveMfNewton below) with the exact
// residual and a low-rank Jacobian, backtracking on |delta|^2.  Where no
// step length reduces it, a Gauss-Seidel sweep instead: setting alpha_i to
// g_i(h_i) solves equation i given the others (h_i does not depend on
// alpha_i) and maximises E over alpha_i exactly (A = Q - D has a zero
// diagonal), so the sweeps alone converge for kappa = 0, if slowly when K has
// a few large eigenvalues (a bias constant, a wide kernel), which is what
// the Newton steps are for.
//
// Cost per iteration: the exact residual needs the field K (y * alpha):
// with K held whole when it fits in control.cache_mb (computed once, n^2 / 2
// kernel evaluations), else n^2 / 2 kernel evaluations each time (the
// coordinate-sweep fallback then takes columns from the LRU cache of
// kernel_cache.hpp); the Jacobian solve is O(n r^2).  The stopping test is
// Algorithm 17.1's, max_i delta_i^2 < tol, measured at the alpha returned.

struct NaiveMfCoordinateControl {
  // No defaults here (see solver_status.hpp): gpc() and gpc_control() hold them.
  double kappa = kUnset;     // output flip probability, in [0, 1/2)
  double noise = kUnset;     // added to the kernel's diagonal (eq. 17.16)
  double tol = kUnset;       // stop when max_i delta_i^2 < tol (the paper's ftol)
  int max_iter = -1;         // cap on Newton steps (or sweeps), >= 0
  double cache_mb = kUnset;  // memory for K whole, else for a kernel-column cache

  template <class Self, class Visit>
  static void fields(Self& s, Visit&& v) {
    v("kappa", s.kappa, rule::of_model(kKappaRule));
    v("noise", s.noise, rule::of_model(rule::finite_nonnegative));
    v("tol", s.tol, rule::positive_finite);
    v("max_iter", s.max_iter, FieldRule{is_nonnegative, "'{}' must be >= 0", 1.0, kIntMax});
    v("cache_mb", s.cache_mb, rule::positive);
  }
  void validate() const { check_fields(*this); }
};

namespace detail {

// The kernel's columns come from `gram` (the whole matrix, when it fits in
// the cache's budget) or else from the column cache.
struct NaiveMfSweeper {
  const ConstVectorRef& y;
  const NaiveMfCoordinateControl& c;
  const MatrixXd& gram;
  KernelColumnCache& cache;
  const KernelEvaluator& evaluator;
  VectorXd kdiag, s, alpha, field;

  NaiveMfSweeper(const ConstVectorRef& y_, const NaiveMfCoordinateControl& c_,
                 const MatrixXd& gram_, KernelColumnCache& cache_,
                 const KernelEvaluator& evaluator_, const VectorXd& kdiag_)
      : y(y_), c(c_), gram(gram_), cache(cache_), evaluator(evaluator_), kdiag(kdiag_),
        s(kdiag_.cwiseSqrt()), alpha(VectorXd::Zero(y_.size())),
        field(VectorXd::Zero(y_.size())) {}

  Index n() const { return y.size(); }
  bool dense() const { return gram.size() != 0; }
  const double* column(Index i) { return dense() ? gram.col(i).data() : cache.column(i); }

  double delta(Index i) const {
    const double h = y[i] * field[i] - kdiag[i] * alpha[i];
    return flip_mills_ratio(h / s[i], c.kappa) / s[i] - alpha[i];
  }

  // alpha_i += step, and the field with it (the noise on row i only).
  void move(Index i, double step) {
    alpha[i] += step;
    const double w = y[i] * step;
    field += w * Eigen::Map<const VectorXd>(column(i), n());
    field[i] += w * c.noise;
  }

  // One sweep; returns the largest and the total squared change seen.
  std::pair<double, double> sweep(double omega, double skip) {
    double worst = 0.0, total = 0.0;
    for (Index i = 0; i < n(); ++i) {
      const double d = delta(i), d2 = d * d;
      if (!(d2 < worst)) worst = d2;  // NaN propagates
      total += d2;
      if (d2 >= skip) move(i, omega * d);
    }
    return {worst, total};
  }

  // alpha set outright, the field recomputed: n^2 multiply-adds with the
  // whole matrix, else n^2 / 2 kernel evaluations in blocks.
  void set_alpha(const VectorXd& a) {
    alpha = a;
    const VectorXd w = (y.array() * alpha.array()).matrix();
    if (dense()) field.noalias() = gram * w;
    else evaluator.multiply(w, field);
    field += c.noise * w;
  }

  VectorXd deltas() const {
    VectorXd d(n());
    for (Index i = 0; i < n(); ++i) d[i] = delta(i);
    return d;
  }

};

// The quasi-Newton step on F(alpha) = alpha - g(h(alpha)) = -delta:
// F' = I + W A with W = diag(-g_i'(h_i)) = diag(G (z + G) / k_ii) and
// A = Q - D.  With the kernel's pivoted Cholesky factor K ~ L L' (exact
// diagonal kept), A ~ U U' - diag(c), U = diag(y) L, c_i = |L_i|^2, so
// F' ~ B + W U U' with B = diag(1 - W_i c_i), solved by the Woodbury
// identity in O(n r^2).  The residual F is always the exact one, so the
// iteration converges to the exact fixed point; the low rank only slows it
// (linearly, by the size of the neglected part of K).
struct NaiveMfNewton {
  const ConstVectorRef& y;
  const VectorXd& kdiag;
  MatrixXd u;   // diag(y) L
  VectorXd c;   // |L_i|^2
  double kappa;

  NaiveMfNewton(const ConstVectorRef& y_, const VectorXd& kdiag_, const MatrixXd& l, double kappa_)
      : y(y_), kdiag(kdiag_), u(y_.asDiagonal() * l), c(l.rowwise().squaredNorm()),
        kappa(kappa_) {}

  VectorXd step(const VectorXd& alpha, const VectorXd& field, const VectorXd& delta) const {
    const Index n = alpha.size(), r = u.cols();
    VectorXd w(n), b(n);
    for (Index i = 0; i < n; ++i) {
      const double s = std::sqrt(kdiag[i]);
      const double z = (y[i] * field[i] - kdiag[i] * alpha[i]) / s;
      w[i] = flip_mills_curvature(z, kappa) / kdiag[i];
      b[i] = 1.0 - w[i] * c[i];
      if (!(std::abs(b[i]) > 1e-12)) b[i] = b[i] < 0 ? -1e-12 : 1e-12;
    }
    // F' step = -F = delta
    const VectorXd binv_delta = delta.cwiseQuotient(b);
    if (r == 0) return binv_delta;
    const VectorXd v = w.cwiseQuotient(b);  // B^-1 W
    MatrixXd small = MatrixXd::Identity(r, r);
    small.noalias() += u.transpose() * v.asDiagonal() * u;
    const VectorXd rhs = u.transpose() * binv_delta;
    const VectorXd sol = small.partialPivLu().solve(rhs);
    return binv_delta - v.cwiseProduct(u * sol);
  }
};

}  // namespace detail

// The Jacobian's low rank: columns until the residual diagonal is below 1e-8
// of the largest, at most 300 (O(n r^2) per iteration).
constexpr double kJacobianRankTol = 1e-8;
constexpr Index kJacobianMaxRank = 300;
constexpr double kNaiveMfDivergence = 1e6;

// The Jacobian's kernel part: a pivoted Cholesky factor L, K ~ L L'.
inline MatrixXd naive_mf_jacobian_factor(const KernelEvaluator& k,
                                         const std::function<void()>& interrupt) {
  MatrixXd lowrank;
  std::vector<Index> pivots;
  pivoted_cholesky(k, kJacobianRankTol, std::min<Index>(k.size(), kJacobianMaxRank), lowrank,
                   pivots, interrupt);
  return lowrank;
}

// Solves (17.40) on the rows of x (noise on the kernel's diagonal) and labels
// y in {-1, +1}; `start`, if not empty, replaces alpha = 0; `factor`, if
// given, is the Jacobian's factor of the kernel matrix (one row per row of
// x), else it is computed.
// status.iterations counts Newton steps (or the sweeps that replaced them).
inline NaiveMfResult naive_mf_solve(const Kernel& kernel, const ConstMatrixRef& x,
                                    const ConstVectorRef& y,
                                    const NaiveMfCoordinateControl& control,
                                    const VectorXd& start = VectorXd(),
                                    const std::function<void()>& interrupt = {},
                                    const MatrixXd* factor = nullptr) {
  control.validate();
  const Index n = x.rows();
  if (n < 1) throw std::invalid_argument("no data");
  check_labels(y, n);
  if (start.size() != 0 && start.size() != n)
    throw std::invalid_argument("warm start has the wrong length");
  const KernelEvaluator k(kernel, x);
  const VectorXd kdiag = k.diagonal().array() + control.noise;
  for (Index i = 0; i < n; ++i) {
    if (!(kdiag[i] > 0.0) || !std::isfinite(kdiag[i]))
      throw std::invalid_argument(
          "the kernel (plus noise) must have a positive diagonal; point " + std::to_string(i + 1) +
          " has k_ii = " + std::to_string(kdiag[i]) + " (add noise > 0)");
  }
  // K whole when it fits in the cache's budget: n^2 / 2 evaluations once,
  // then every product is a matrix-vector product (a column cache filled
  // column by column costs n^2 evaluations to fill)
  const double n_d = static_cast<double>(n);
  const MatrixXd gram = (8.0 * n_d * n_d <= control.cache_mb * 1048576.0) ? k.fast_gram() : MatrixXd();
  KernelColumnCache cache(k, gram.size() != 0 ? 0.0 : control.cache_mb);
  detail::NaiveMfSweeper sw(y, control, gram, cache, k, kdiag);
  if (start.size() == n) sw.set_alpha(start);

  // The Jacobian's kernel part, once: K ~ G G' on the pivots' columns.
  if (factor && factor->rows() != n)
    throw std::invalid_argument("the Jacobian factor has the wrong number of rows");
  const MatrixXd lowrank = factor ? *factor : naive_mf_jacobian_factor(k, interrupt);
  detail::NaiveMfNewton newton(y, kdiag, lowrank, control.kappa);

  int it = 0, stalls = 0;
  VectorXd delta = sw.deltas();
  double worst = delta.cwiseAbs2().maxCoeff();
  std::vector<double> history;  // the largest squared change after each iteration
  bool converged = worst < control.tol;
  std::string reason;
  InterruptPoll poll(interrupt);
  while (!converged && it < control.max_iter) {
    poll();
    ++it;
    // A quasi-Newton step with backtracking on sum delta^2; when it cannot
    // reduce it (far from the fixed point with kappa > 0, or a poor low-rank
    // Jacobian), one relaxed coordinate sweep instead.
    const VectorXd step = newton.step(sw.alpha, sw.field, delta);
    const double before = delta.squaredNorm();
    const VectorXd alpha0 = sw.alpha, field0 = sw.field;
    bool accepted = false;
    double t = 1.0;
    for (int trial = 0; trial < 8 && step.allFinite(); ++trial, t *= 0.5) {
      sw.set_alpha(alpha0 + t * step);
      delta = sw.deltas();
      if (delta.allFinite() && delta.squaredNorm() < before) { accepted = true; break; }
    }
    if (!accepted) {
      sw.alpha = alpha0;
      sw.field = field0;
      sw.sweep(stalls++ < 4 ? 1.0 : 0.5, 0.01 * control.tol);
      delta = sw.deltas();
    }
    worst = delta.cwiseAbs2().maxCoeff();
    history.push_back(worst);
    if (!std::isfinite(worst) || !sw.alpha.allFinite()) {
      reason = "the updates became non-finite";
      break;
    }
    // alpha_i s_i = G(z_i) ~ |z_i| on the wrong side: a point 1e6 prior
    // standard deviations on the wrong side is a solution running off to
    // infinity, along which the residual falls like 1 / |z| (so a small tol
    // could even be met on the way)
    if (sw.alpha.cwiseProduct(sw.s).cwiseAbs().maxCoeff() > kNaiveMfDivergence) {
      reason = "alpha grows without bound: the mean-field equations have no fixed point here "
               "(a singular kernel matrix, e.g. duplicated inputs with different labels and "
               "noise = 0)";
      break;
    }
    converged = worst < control.tol;
  }
  if (!converged && reason.empty()) {
    // Still falling by a factor 2 over the last half of the iterations: it
    // ran out of iterations; otherwise it does not settle.
    const std::size_t m = history.size();
    if (m >= 8 && !(history[m - 1] < 0.5 * history[m / 2]))
      reason = "the updates stopped shrinking: the mean-field equations have no fixed point "
               "it can reach here (a singular kernel matrix, e.g. duplicated inputs with "
               "different labels and noise = 0, or kappa > 0 with several fixed points)";
  }
  NaiveMfResult out;
  out.alpha = sw.alpha;
  out.field = sw.field;
  out.z.resize(n);
  for (Index i = 0; i < n; ++i)
    out.z[i] = (y[i] * sw.field[i] - kdiag[i] * sw.alpha[i]) / sw.s[i];
  out.status.converged = converged;
  out.status.iterations = it;
  out.status.change = worst;
  out.status.tol = control.tol;
  out.status.reason = reason;
  return out;
}

}  // namespace gpsvm

#endif  // GPSVM_NAIVE_MF_HPP
