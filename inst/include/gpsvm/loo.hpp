// Leave-one-out margins for the classifiers of Opper and Winther (2000):
// the linear-response approximations of sections 17.5 and 17.6 and exact
// refits without each point.
//
// Everything returns the leave-one-out margin y_i f^(-i)(x_i) of each point;
// a point counts as a leave-one-out error when its margin is <= 0.  The
// matrix k is the covariance of the noisy process (noise on the diagonal);
// off the diagonal it equals the noise-free kernel, so sums over j != i give
// the noise-free prediction at x_i.
#ifndef GPSVM_LOO_HPP
#define GPSVM_LOO_HPP

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>
#include <vector>

#include "adatron.hpp"
#include "dense.hpp"
#include "classifier.hpp"
#include "naive_mf.hpp"
#include "smo.hpp"
#include "tap_classifier.hpp"

namespace gpsvm {

namespace detail {

// Diagonal of the inverse of a symmetric matrix: by its Cholesky factor
// when positive definite (inverse_diagonal_from_cholesky() in
// dense.hpp), otherwise (the naive mean-field matrix Omega + K
// can be indefinite when kappa > 0) by LU.  Throws when the matrix is
// singular.
//
// The symmetric matrix in a (both triangles) is factored in place: a is
// overwritten.  The Cholesky factor takes the lower triangle and the
// diagonal; the strict upper triangle still holds A for the LU fallback.
inline VectorXd inverse_diagonal_in_place(Eigen::Ref<MatrixXd> a) {
  const Index m = a.rows();
  if (m == 0) return VectorXd();
  const VectorXd diagonal = a.diagonal();
  Eigen::LLT<Eigen::Ref<MatrixXd>, Eigen::Lower> llt(a);
  VectorXd d;
  if (llt.info() == Eigen::Success) {
    d = inverse_diagonal_from_cholesky(a);
  } else {
    MatrixXd full = a.selfadjointView<Eigen::Upper>();
    full.diagonal() = diagonal;
    Eigen::PartialPivLU<MatrixXd> lu(full);
    d = lu.solve(MatrixXd::Identity(m, m)).diagonal();
  }
  if (!d.allFinite() || (d.array() == 0.0).any())
    throw std::runtime_error("leave-one-out matrix is singular");
  return d;
}

}  // namespace detail

// SVM without bias, eqs. (17.26)-(17.31).  Groups by alpha: alpha = 0
// non-support vectors (margin unchanged), 0 < alpha < C margin support
// vectors (eq. 17.29: y_i f_i - alpha_i / [K_mSV^-1]_ii), alpha = C bounded
// ("misclassified") vectors (eq. 17.31: y_i f_i + (k_i' K_mSV^-1 k_i - k_ii)
// alpha_i).  The solvers clip alpha to 0 and C exactly, so the groups are
// read off without a threshold.  Here f = K (y * alpha) with the noisy K.
//
// Only the margin support vectors are inverted: the work is m^3 / 3 for the
// Cholesky factor of K_mSV (m margin support vectors), m^2 per bounded
// vector, and the field.  `entry(i, j)` gives the noisy K_ij and `margin`
// starts as y_i f_i.
namespace detail {

// (K + noise I) (y * alpha) from the columns of the nonzero alpha.
inline VectorXd noisy_field(const KernelEvaluator& k, double noise, const ConstVectorRef& y,
                            const ConstVectorRef& alpha) {
  const Index n = y.size();
  VectorXd field = noise * (y.array() * alpha.array()).matrix(), col(n);
  for (Index j = 0; j < n; ++j) {
    if (alpha[j] == 0.0) continue;
    k.fast_column(j, col.data());
    field += (y[j] * alpha[j]) * col;
  }
  return field;
}

template <class Entry>
VectorXd svc_loo_margins(const Entry& entry, VectorXd margin, const ConstVectorRef& alpha,
                         double C) {
  const Index n = margin.size();
  std::vector<Index> sv, bounded;
  for (Index i = 0; i < n; ++i) {
    if (alpha[i] <= 0.0) continue;
    if (alpha[i] < C) sv.push_back(i); else bounded.push_back(i);
  }
  const Index m = static_cast<Index>(sv.size());
  MatrixXd ks(m, m);
  for (Index b = 0; b < m; ++b)
    for (Index a = 0; a <= b; ++a) ks(a, b) = ks(b, a) = entry(sv[a], sv[b]);
  // (duplicated inputs, common in real data, make K_mSV singular without
  // noise on its diagonal; in the jitter's limit a duplicated point's term
  // alpha_i / [K^-1]_ii goes to 0, the exact answer: its twin takes over when
  // it is left out)
  const JitteredFactor factor =
      jittered_cholesky(ks, 1e-4, 0.0, "kernel matrix of the margin support vectors");
  if (m > 0) {
    const VectorXd dinv = inverse_diagonal_from_cholesky(factor.lower);
    for (Index a = 0; a < m; ++a) margin[sv[a]] -= alpha[sv[a]] / dinv[a];
  }
  VectorXd ki(m);
  for (Index i : bounded) {
    double explained = 0.0;  // k_i' K_mSV^-1 k_i
    if (m > 0) {
      for (Index a = 0; a < m; ++a) ki[a] = entry(sv[a], i);
      explained = factor.lower.triangularView<Eigen::Lower>().solve(ki).squaredNorm();
    }
    margin[i] += (explained - entry(i, i)) * alpha[i];
  }
  return margin;
}

}  // namespace detail

inline VectorXd svc_loo_approx(const ConstMatrixRef& k, const ConstVectorRef& y,
                               const ConstVectorRef& alpha, double C) {
  const Index n = k.rows();
  check_labels(y, n);
  if (alpha.size() != n) throw std::invalid_argument("alpha has the wrong length");
  const VectorXd field = k * (y.array() * alpha.array()).matrix();
  return detail::svc_loo_margins([&](Index i, Index j) { return k(i, j); },
                                 (y.array() * field.array()).matrix(), alpha, C);
}

// The same from the kernel and inputs, without the n x n matrix: the field
// from the support vectors' columns (n evaluations each), K_mSV and the
// bounded vectors' rows from single evaluations.
inline VectorXd svc_loo_approx(const Kernel& kernel, const ConstMatrixRef& x, double noise,
                               const ConstVectorRef& y, const ConstVectorRef& alpha, double C) {
  const Index n = x.rows();
  check_labels(y, n);
  if (alpha.size() != n) throw std::invalid_argument("alpha has the wrong length");
  const KernelEvaluator k(kernel, x);
  const VectorXd field = detail::noisy_field(k, noise, y, alpha);
  return detail::svc_loo_margins(
      [&](Index i, Index j) { return k(i, j) + (i == j ? noise : 0.0); },
      (y.array() * field.array()).matrix(), alpha, C);
}

// Naive mean field, eqs. (17.41)-(17.42):
//   margin_i = y_i <f_i> - (1 / [(Omega + K)^-1]_ii - Omega_i) alpha_i.
// Omega_i is the linear response of the mean-field map alpha_i = G(z_i)/sqrt(k_ii):
// Omega_i = -k_ii (1 + 1/G'(z_i)) = k_ii (1 / (G(z_i) (z_i + G(z_i))) - 1),
// which at the fixed point equals the paper's k_ii (1 / (y_i alpha_i <f_i>) - 1)
// but, unlike it, does not divide by y_i <f_i>, which may vanish before
// convergence.
//
// What can be left out: a point far on the right side has a response
// G (z + G) that vanishes like exp(-z^2 / 2), so Omega_i ~ k_ii / response is
// huge and its row of (Omega + K) decouples: it changes the other points'
// [(Omega + K)^-1]_jj by a relative O(response), and its own term
// (1 / [(Omega + K)^-1]_ii - Omega_i) alpha_i lies between 0 and k_ii alpha_i,
// with alpha_i = G(z_i) / sqrt(k_ii) of the same order.  Points whose
// response is below kNaiveLooResponseFloor (1e-12, z above about 7) are
// therefore left out of the matrix and keep their margin y_i <f_i>.  What
// cannot be left out: every other point.  Unlike the SVM's non-support
// vectors, their alpha is not 0 and their Omega is finite, so on overlapping
// classes (most points within a few units of z of the boundary) the matrix
// stays nearly n x n: the work is one Cholesky factorisation of the m x m
// active block (m^3 / 3 flops) and the diagonal of its inverse (another
// m^3 / 3).
constexpr double kNaiveLooResponseFloor = 1e-12;

namespace detail {

// The margins from y_i <f_i>, z, alpha and the noisy diagonal; `gather(active,
// omega)` returns the m x m matrix (Omega + K) on the active points.
template <class Gather>
VectorXd naive_mf_loo_margins(VectorXd margin, const VectorXd& z, const ConstVectorRef& alpha,
                              const VectorXd& kdiag, double kappa, Gather gather) {
  const Index n = margin.size();
  VectorXd omega(n);
  std::vector<Index> active;
  active.reserve(static_cast<std::size_t>(n));
  for (Index i = 0; i < n; ++i) {
    const double response = flip_mills_curvature(z[i], kappa);  // G (z + G) = -G'(z)
    // kappa > 0: the response can be negative (Omega_i < -k_ii) far on the
    // wrong side; only a vanishing one decouples
    if (std::abs(response) < kNaiveLooResponseFloor) {
      omega[i] = std::numeric_limits<double>::infinity();
      continue;
    }
    omega[i] = kdiag[i] * (1.0 / response - 1.0);
    active.push_back(i);
  }
  auto a = gather(active, omega);
  const Index m = static_cast<Index>(active.size());
  const VectorXd dinv = inverse_diagonal_in_place(a.topLeftCorner(m, m));
  for (Index p = 0; p < m; ++p) {
    const Index i = active[p];
    margin[i] -= (1.0 / dinv[p] - omega[i]) * alpha[i];
  }
  return margin;
}

}  // namespace detail

// The dense form takes k as its workspace (k is overwritten by Omega + K on
// the active points and its factor), so that no other n x n matrix is
// allocated.  The overload below copies k first.
inline VectorXd naive_mf_loo_approx(MatrixXd&& k, const ConstVectorRef& y,
                                    const ConstVectorRef& alpha, double kappa) {
  const Index n = k.rows();
  check_gram(k);
  check_labels(y, n);
  if (alpha.size() != n) throw std::invalid_argument("alpha has the wrong length");
  VectorXd field(n), z(n), delta(n);
  detail::naive_mf_delta(k, y, kappa, alpha, field, z, delta);
  const VectorXd kdiag = k.diagonal();
  auto gather = [&](const std::vector<Index>& active, const VectorXd& omega) -> MatrixXd& {
    // gather the active rows and columns into k's top left corner, in place
    // (column by column, each entry moves up and left: active[p] >= p, so no
    // entry is overwritten before it is read), and add Omega to the diagonal
    const Index m = static_cast<Index>(active.size());
    if (m < n) {
      for (Index q = 0; q < m; ++q)
        for (Index p = 0; p < m; ++p) k(p, q) = k(active[p], active[q]);
    }
    for (Index p = 0; p < m; ++p) k(p, p) += omega[active[p]];
    return k;
  };
  return detail::naive_mf_loo_margins((y.array() * field.array()).matrix(), z, alpha, kdiag,
                                      kappa, gather);
}

inline VectorXd naive_mf_loo_approx(const ConstMatrixRef& k, const ConstVectorRef& y,
                                    const ConstVectorRef& alpha, double kappa) {
  return naive_mf_loo_approx(MatrixXd(k), y, alpha, kappa);
}

// The same from the kernel and inputs: the field from the columns of the
// nonzero alpha (n evaluations each), and only the m x m active block of
// Omega + K is ever formed.
inline VectorXd naive_mf_loo_approx(const Kernel& kernel, const ConstMatrixRef& x, double noise,
                                    const ConstVectorRef& y, const ConstVectorRef& alpha,
                                    double kappa) {
  const Index n = x.rows();
  check_labels(y, n);
  if (alpha.size() != n) throw std::invalid_argument("alpha has the wrong length");
  const KernelEvaluator k(kernel, x);
  const VectorXd kdiag = k.diagonal().array() + noise;
  for (Index i = 0; i < n; ++i)
    if (!(kdiag[i] > 0.0) || !std::isfinite(kdiag[i]))
      throw std::invalid_argument("the kernel (plus noise) must have a positive diagonal");
  const VectorXd field = detail::noisy_field(k, noise, y, alpha);
  VectorXd z(n);
  for (Index i = 0; i < n; ++i)
    z[i] = (y[i] * field[i] - kdiag[i] * alpha[i]) / std::sqrt(kdiag[i]);
  MatrixXd a;
  auto gather = [&](const std::vector<Index>& active, const VectorXd& omega) -> MatrixXd& {
    const Index m = static_cast<Index>(active.size());
    a.resize(m, m);
    for (Index q = 0; q < m; ++q) {
      for (Index p = 0; p < q; ++p) a(p, q) = a(q, p) = k(active[p], active[q]);
      a(q, q) = kdiag[active[q]] + omega[active[q]];
    }
    return a;
  };
  return detail::naive_mf_loo_margins((y.array() * field.array()).matrix(), z, alpha, kdiag,
                                      kappa, gather);
}

// Exact leave-one-out by refitting without each point in `which` (0-based),
// each refit warm-started from the full solution with that point removed
// (the paper's suggestion; for TAP, the full fit's EP sites).
// The margin is y_i sum_{j != i} k_ij y_j alpha_j^(-i).  Returns the margins
// and, in `iterations`, the iterations of each refit; refits that hit the
// iteration cap are counted in `not_converged`.
struct LooRefits {
  VectorXd margin;
  std::vector<int> iterations;
  int not_converged = 0;
};

namespace detail {

// The loop shared by every exact leave-one-out: `refit(i, start, alpha_i,
// status)` fits without point i from `start` (the full alpha without entry
// i); `field(i, alpha_i)` is sum_{j != i} k_ij y_j alpha_j^(-i).
template <typename Refit, typename Field>
LooRefits loo_refit_loop(Index n, const ConstVectorRef& y, const ConstVectorRef& alpha,
                         const std::vector<Index>& which, Refit refit, Field field,
                         const std::function<void()>& interrupt) {
  if (alpha.size() != n || y.size() != n)
    throw std::invalid_argument("alpha and the labels must have one value per case");
  LooRefits out;
  out.margin.resize(static_cast<Index>(which.size()));
  InterruptPoll poll(interrupt);
  for (std::size_t w = 0; w < which.size(); ++w) {
    const Index i = which[w];
    if (i < 0 || i >= n) throw std::invalid_argument("leave-one-out index out of range");
    poll();
    if (n == 1) {  // nothing left to learn from: the prediction is 0
      out.margin[static_cast<Index>(w)] = 0.0;
      out.iterations.push_back(0);
      continue;
    }
    VectorXd alpha_i;
    SolverStatus status;
    refit(i, drop_one(alpha, i), alpha_i, status);
    out.margin[static_cast<Index>(w)] = y[i] * field(i, alpha_i);
    out.iterations.push_back(static_cast<int>(status.iterations));
    if (!status.converged) ++out.not_converged;
  }
  return out;
}

// The same on a dense noisy Gram matrix k: refit(ki, yi, start, alpha_i,
// status) gets k and y without point i.
template <typename Refit>
LooRefits loo_refit_dense(const ConstMatrixRef& k, const ConstVectorRef& y,
                          const ConstVectorRef& alpha, const std::vector<Index>& which,
                          Refit refit, const std::function<void()>& interrupt) {
  const Index n = k.rows();
  auto fit = [&](Index i, const VectorXd& start, VectorXd& alpha_i, SolverStatus& status) {
    refit(i, drop_one(k, i), drop_one(y, i), start, alpha_i, status);
  };
  auto field = [&](Index i, const VectorXd& alpha_i) {
    double f = 0.0;
    for (Index j = 0, jj = 0; j < n; ++j) {
      if (j == i) continue;
      f += k(i, j) * y[j] * alpha_i[jj];
      ++jj;
    }
    return f;
  };
  return loo_refit_loop(n, y, alpha, which, fit, field, interrupt);
}

// The dense refits of a solver on the Gram matrix, solve(ki, yi, control,
// start, interrupt), whose result holds alpha and status (the adatron's and
// Algorithm 17.1's).
template <typename Control, typename Solve>
LooRefits loo_solve_dense(const ConstMatrixRef& k, const ConstVectorRef& y,
                          const ConstVectorRef& alpha, const Control& control,
                          const std::vector<Index>& which, Solve solve,
                          const std::function<void()>& interrupt) {
  control.validate();
  check_labels(y, k.rows());
  auto refit = [&](Index, const MatrixXd& ki, const VectorXd& yi, const VectorXd& start,
                   VectorXd& alpha_i, SolverStatus& status) {
    auto r = solve(ki, yi, control, start, interrupt);
    alpha_i = std::move(r.alpha);
    status = r.status;
  };
  return loo_refit_dense(k, y, alpha, which, refit, interrupt);
}

// The rows of x without row `drop`.
inline MatrixXd drop_row(const ConstMatrixRef& x, Index drop) {
  MatrixXd out(x.rows() - 1, x.cols());
  out.topRows(drop) = x.topRows(drop);
  out.bottomRows(x.rows() - 1 - drop) = x.bottomRows(x.rows() - 1 - drop);
  return out;
}

// The same from the kernel and inputs, for the solvers that never form the
// Gram matrix: solve(i, xi, yi, start) gets the inputs and labels without
// point i and returns a result holding alpha and status (SMO's and the
// Newton iteration's); the prediction at x_i uses its kernel column.
template <typename Solve>
LooRefits loo_solve_points(const Kernel& kernel, const ConstMatrixRef& x,
                           const ConstVectorRef& y, const ConstVectorRef& alpha,
                           const std::vector<Index>& which, Solve solve,
                           const std::function<void()>& interrupt) {
  const Index n = x.rows();
  const KernelEvaluator k(kernel, x);
  VectorXd col(n);
  auto fit = [&](Index i, const VectorXd& start, VectorXd& alpha_i, SolverStatus& status) {
    auto r = solve(i, drop_row(x, i), drop_one(y, i), start);
    alpha_i = std::move(r.alpha);
    status = r.status;
  };
  auto field = [&](Index i, const VectorXd& alpha_i) {
    k.column(i, col.data());
    double f = 0.0;
    for (Index j = 0, jj = 0; j < n; ++j) {
      if (j == i) continue;
      f += col[j] * y[j] * alpha_i[jj];
      ++jj;
    }
    return f;
  };
  return loo_refit_loop(n, y, alpha, which, fit, field, interrupt);
}

// The solver on the Gram matrix each dense control belongs to.
inline auto dense_solver(const AdatronControl&) { return &adatron_fit; }
inline auto dense_solver(const NaiveMfControl&) { return &naive_mf_fit; }

}  // namespace detail

// Refits on the Gram matrix without each point, warm-started, by the dense
// solver of the control: the adatron (svc), Algorithm 17.1 (naive gpc).
template <typename Control>
LooRefits loo_exact_dense(const ConstMatrixRef& k, const ConstVectorRef& y,
                          const ConstVectorRef& alpha, const Control& control,
                          const std::vector<Index>& which,
                          const std::function<void()>& interrupt = {}) {
  return detail::loo_solve_dense(k, y, alpha, control, which, detail::dense_solver(control),
                                 interrupt);
}

// SMO refits on the inputs without each point, warm-started.
inline LooRefits svc_loo_exact(const Kernel& kernel, const ConstMatrixRef& x,
                               const ConstVectorRef& y, const ConstVectorRef& alpha,
                               const SvcControl& control, const std::vector<Index>& which,
                               const std::function<void()>& interrupt = {}) {
  control.validate();
  check_labels(y, x.rows());
  auto solve = [&](Index, const MatrixXd& xi, const VectorXd& yi, const VectorXd& start) {
    return svc_smo_solve(kernel, xi, yi, control, start, interrupt);
  };
  return detail::loo_solve_points(kernel, x, y, alpha, which, solve, interrupt);
}

// Newton refits on the inputs without each point, warm-started.  The
// Jacobian's low-rank factor is computed once: the full kernel matrix's
// factor L (K ~ L L' entrywise) without row i is as good a factor of K
// without point i, and recomputing it was most of a refit's cost.
inline LooRefits naive_mf_loo_exact(const Kernel& kernel, const ConstMatrixRef& x,
                                    const ConstVectorRef& y, const ConstVectorRef& alpha,
                                    const NaiveMfCoordinateControl& control,
                                    const std::vector<Index>& which,
                                    const std::function<void()>& interrupt = {}) {
  control.validate();
  check_labels(y, x.rows());
  const MatrixXd factor = naive_mf_jacobian_factor(KernelEvaluator(kernel, x), interrupt);
  auto solve = [&](Index i, const MatrixXd& xi, const VectorXd& yi, const VectorXd& start) {
    const MatrixXd factor_i = detail::drop_row(factor, i);
    return naive_mf_solve(kernel, xi, yi, control, start, interrupt, &factor_i);
  };
  return detail::loo_solve_points(kernel, x, y, alpha, which, solve, interrupt);
}

// TAP: each refit starts from the full fit's EP sites without point i
// (site_precision and site_nu, as in EpControl; empty vectors mean fresh
// sites, and unusable ones fall back to fresh sites, see EpControl).  The
// fixed point does not depend on the start.  EP converges linearly, so the
// start saves only the first sweeps, those that bring fresh sites near a
// fixed point that differs from the full fit's by one point.  The margin is y_i sum_{j != i} k_ij w_j^(-i).
inline LooRefits tap_loo_exact(const ConstMatrixRef& k, const ConstVectorRef& y, double kappa,
                               const EpControl& control, const ConstVectorRef& site_precision,
                               const ConstVectorRef& site_nu, const std::vector<Index>& which,
                               const std::function<void()>& interrupt = {}) {
  check_labels(y, k.rows());
  const bool warm = site_precision.size() != 0 || site_nu.size() != 0;
  if (warm && (site_precision.size() != k.rows() || site_nu.size() != k.rows()))
    throw std::invalid_argument("EP sites for the warm start have the wrong length");
  auto refit = [&](Index i, const MatrixXd& ki, const VectorXd& yi, const VectorXd&, VectorXd& w,
                   SolverStatus& status) {
    EpControl c = control;
    if (warm) {
      c.initial_precision = drop_one(site_precision, i);
      c.initial_nu = drop_one(site_nu, i);
    }
    EpResult r = tap_classifier_fit(ki, yi, kappa, c, interrupt);
    // weights w play the role of y * alpha; the loop multiplies by y again
    w = (r.weights.array() * yi.array()).matrix();
    status = r.status;
  };
  return detail::loo_refit_dense(k, y, VectorXd::Zero(k.rows()), which, refit, interrupt);
}

}  // namespace gpsvm

#endif  // GPSVM_LOO_HPP
