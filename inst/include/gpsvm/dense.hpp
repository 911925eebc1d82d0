// Dense matrix products and factorisations of O(m^3) work, and what is
// computed from a Cholesky factor (triangular solves, the inverse and its
// diagonal), done in blocks of columns: each block is matrix-matrix work
// (what the machine does fastest), and an interrupt is polled between blocks
// (interrupt.hpp): at thousands of rows one factorisation and inverse take
// long enough to need it, and a single Eigen call cannot be broken.  A
// block's work is about 1e9 flops or less.
// Pure C++17 + Eigen: no R headers.
#ifndef GPSVM_DENSE_HPP
#define GPSVM_DENSE_HPP

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "interrupt.hpp"
#include "threads.hpp"

namespace gpsvm {

constexpr Eigen::Index kDenseBlock = 128;

// A' diag(w) A for a tall or square A (w empty: A'A), forming only the
// lower triangle (half the flops of a general product), in tiles of
// kDenseBlock^2 entries; a block of columns is its own tiles, the blocks
// split between threads.
inline Eigen::MatrixXd crossprod(const Eigen::MatrixXd& a, const Eigen::VectorXd& w,
                                 const std::function<void()>& interrupt = nullptr) {
  using Eigen::Index;
  const Index p = a.cols();
  if (w.size() != 0 && w.size() != a.rows())
    throw std::invalid_argument("crossprod: the weights and the rows differ in number");
  InterruptPoll poll(interrupt);
  const Eigen::MatrixXd weighted = w.size() == 0 ? Eigen::MatrixXd() : w.asDiagonal() * a;
  const Eigen::MatrixXd& left = w.size() == 0 ? a : weighted;
  Eigen::MatrixXd out(p, p);
  const double work = 0.5 * static_cast<double>(a.rows()) * static_cast<double>(p) *
                      static_cast<double>(p);
  blocks_in_rounds(p, kDenseBlock, threads_for_work(work), poll, [&](Index j0, Index b, int) {
    for (Index i0 = j0; i0 < p; i0 += kDenseBlock) {
      const Index r = std::min(kDenseBlock, p - i0);
      out.block(i0, j0, r, b).noalias() = left.middleCols(i0, r).transpose() * a.middleCols(j0, b);
    }
  });
  return out.selfadjointView<Eigen::Lower>();
}

inline Eigen::MatrixXd crossprod(const Eigen::MatrixXd& a,
                                 const std::function<void()>& interrupt = nullptr) {
  return crossprod(a, Eigen::VectorXd(), interrupt);
}

// The Cholesky factor L of a symmetric positive definite matrix (a = L L',
// read from its lower triangle), formed in place in the lower triangle a
// block of columns at a time (right-looking: factor the diagonal block,
// solve the panel below it, update the trailing matrix).  The panel's rows
// and the trailing matrix's lower tiles of kDenseBlock^2 are independent
// pieces of work, split between threads (threads_for_dense()); each tile is
// the same product on any number of threads, so the factor does not depend
// on it.  The strict upper triangle is left as it was.  False when a is not
// numerically positive definite.
inline bool cholesky_in_place(Eigen::Ref<Eigen::MatrixXd> a,
                              const std::function<void()>& interrupt = nullptr) {
  using Eigen::Index;
  const Index m = a.rows();
  const int threads = threads_for_dense(m);
  InterruptPoll poll(interrupt);
  std::vector<std::pair<Index, Index>> tiles;
  for (Index k = 0; k < m; k += kDenseBlock) {
    poll();
    const Index b = std::min(kDenseBlock, m - k), rest = m - k - b;
    Eigen::Ref<Eigen::MatrixXd> diagonal = a.block(k, k, b, b);
    Eigen::LLT<Eigen::Ref<Eigen::MatrixXd>> llt(diagonal);  // in place
    if (llt.info() != Eigen::Success) return false;
    if (rest == 0) break;
    auto panel = a.block(k + b, k, rest, b);
    const Index pieces = (rest + kDenseBlock - 1) / kDenseBlock;
    blocks_in_rounds(rest, kDenseBlock, threads, poll, [&](Index r0, Index len, int) {
      auto rows = panel.middleRows(r0, len);
      diagonal.triangularView<Eigen::Lower>().adjoint().solveInPlace<Eigen::OnTheRight>(rows);
    });
    poll();
    // trailing lower tiles (i, j), i >= j, of the rest x rest matrix
    tiles.clear();
    for (Index j = 0; j < pieces; ++j)
      for (Index i = j; i < pieces; ++i) tiles.emplace_back(i, j);
    auto trailing = a.block(k + b, k + b, rest, rest);
    for_each_item(static_cast<int>(tiles.size()), threads, [&](int t, int) {
      const Index r0 = tiles[static_cast<std::size_t>(t)].first * kDenseBlock;
      const Index c0 = tiles[static_cast<std::size_t>(t)].second * kDenseBlock;
      const Index rows = std::min(kDenseBlock, rest - r0), cols = std::min(kDenseBlock, rest - c0);
      if (r0 == c0) {
        trailing.block(r0, c0, rows, cols).selfadjointView<Eigen::Lower>().rankUpdate(
            panel.middleRows(r0, rows), -1.0);
      } else {
        trailing.block(r0, c0, rows, cols).noalias() -=
            panel.middleRows(r0, rows) * panel.middleRows(c0, cols).transpose();
      }
    });
  }
  return true;
}

// log|a| from its Cholesky factor (the lower triangle of `l`).
inline double cholesky_logdet(const Eigen::MatrixXd& l) {
  return 2.0 * l.diagonal().array().log().sum();
}

// x <- L^-1 x for the lower triangle L of `l`, a block of kDenseBlock
// columns of x at a time, the blocks split between threads
// (threads_for_dense()).
inline void solve_lower_in_place(const Eigen::Ref<const Eigen::MatrixXd>& l,
                                 Eigen::Ref<Eigen::MatrixXd> x,
                                 const std::function<void()>& interrupt = nullptr) {
  using Eigen::Index;
  InterruptPoll poll(interrupt);
  blocks_in_rounds(x.cols(), kDenseBlock, threads_for_dense(l.rows()), poll,
                   [&](Index j, Index b, int) {
                     auto block = x.middleCols(j, b);
                     l.triangularView<Eigen::Lower>().solveInPlace(block);
                   });
}

// Columns j0 .. j0 + b - 1 of L^-1 for the lower triangle L of `l`: they are
// zero above row j0, so they come from a triangular solve with the trailing
// block of L only; x ((n - j0) x b) receives their rows j0 .. n - 1.
inline void lower_inverse_columns(const Eigen::Ref<const Eigen::MatrixXd>& l, Eigen::Index j0,
                                  Eigen::Ref<Eigen::MatrixXd> x) {
  const Eigen::Index rows = l.rows() - j0;
  x.setIdentity();
  l.bottomRightCorner(rows, rows).triangularView<Eigen::Lower>().solveInPlace(x);
}

// L^-1 for the lower triangle L of `l`, a block of columns at a time
// (lower_inverse_columns(): n^3 / 3 flops), the blocks split between
// threads (threads_for_dense()).
inline Eigen::MatrixXd lower_inverse(const Eigen::Ref<const Eigen::MatrixXd>& l,
                                     const std::function<void()>& interrupt = nullptr) {
  using Eigen::Index;
  const Index m = l.rows();
  InterruptPoll poll(interrupt);
  Eigen::MatrixXd out = Eigen::MatrixXd::Zero(m, m);
  blocks_in_rounds(m, kDenseBlock, threads_for_dense(m), poll, [&](Index j, Index b, int) {
    lower_inverse_columns(l, j, out.block(j, j, m - j, b));
  });
  return out;
}

// Diagonal of A^-1 from the lower Cholesky factor L of A (in `l`'s lower
// triangle): [A^-1]_ii is the squared norm of column i of L^-1, a block of
// columns at a time (lower_inverse_columns()): n^3 / 3 flops (as many as
// the factorisation), instead of the n^3 of L^-1 in full or the 2 n^3 of
// solving A X = I.  The blocks are split between threads
// (threads_for_dense()), each thread reusing one workspace of 64 columns:
// large temporaries are what costs inside R, whose heap is trimmed and
// grown again around them (page faults).
//
// With `right`, the lower triangle of a second factor R (R R' = C), also
// the squared column norms of L^-1 R, whose sum is tr(A^-1 C): column j of
// L^-1 R is zero above row j too, so it comes from the same trailing block
// of L, solved together with the block of L^-1 (twice the flops).  Returns
// them as the columns of an n x 1 (or n x 2) matrix: column 0 the diagonal
// of A^-1, column 1 the norms of L^-1 R.
inline Eigen::MatrixXd inverse_column_norms(const Eigen::Ref<const Eigen::MatrixXd>& l,
                                            const Eigen::MatrixXd* right,
                                            const std::function<void()>& interrupt = nullptr) {
  using Eigen::Index;
  const Index m = l.rows(), block = 64, parts = right ? 2 : 1;
  const int threads = threads_for_dense(m);
  InterruptPoll poll(interrupt);
  Eigen::MatrixXd d(m, parts);
  std::vector<Eigen::MatrixXd> work(static_cast<std::size_t>(threads),
                                    Eigen::MatrixXd(m, parts * std::min(block, m)));
  blocks_in_rounds(m, block, threads, poll, [&](Index j0, Index b, int slot) {
    Eigen::MatrixXd& w = work[static_cast<std::size_t>(slot)];
    auto x = w.topLeftCorner(m - j0, b);
    if (!right) {
      lower_inverse_columns(l, j0, x);
    } else {
      x.setIdentity();
      auto y = w.block(0, b, m - j0, b);
      y = right->block(j0, j0, m - j0, b);
      y.topRows(b).triangularView<Eigen::StrictlyUpper>().setZero();
      auto both = w.topLeftCorner(m - j0, 2 * b);
      l.bottomRightCorner(m - j0, m - j0).triangularView<Eigen::Lower>().solveInPlace(both);
      d.col(1).segment(j0, b) = y.colwise().squaredNorm().transpose();
    }
    d.col(0).segment(j0, b) = x.colwise().squaredNorm().transpose();
  });
  return d;
}

inline Eigen::VectorXd inverse_diagonal_from_cholesky(
    const Eigen::Ref<const Eigen::MatrixXd>& l, const std::function<void()>& interrupt = nullptr) {
  return inverse_column_norms(l, nullptr, interrupt).col(0);
}

// k(z, z) - k_z' A^-1 k_z for each column k_z of `cross` (A's rows x
// points), given the points' prior variances and A's lower Cholesky factor
// L: the variance left once A's points are known, floored at 0 where
// rounding takes it below.
inline Eigen::VectorXd conditional_variance(const Eigen::Ref<const Eigen::MatrixXd>& l,
                                            Eigen::MatrixXd cross, const Eigen::VectorXd& prior,
                                            const std::function<void()>& interrupt = nullptr) {
  solve_lower_in_place(l, cross, interrupt);
  return (prior - cross.colwise().squaredNorm().transpose()).cwiseMax(0.0);
}

// A^-1 = L^-T L^-1 from the lower Cholesky factor L of A, both triangles:
// L^-1 (lower_inverse(), n^3 / 3 flops), then the product a block of
// columns at a time (split between threads), only the rows at and below
// each block, where L^-1's zeros leave the trailing rows (n^3 / 3 flops),
// and their mirror.
inline Eigen::MatrixXd inverse_from_cholesky(const Eigen::Ref<const Eigen::MatrixXd>& l,
                                             const std::function<void()>& interrupt = nullptr) {
  using Eigen::Index;
  const Index n = l.rows();
  const Eigen::MatrixXd inverse_factor = lower_inverse(l, interrupt);
  InterruptPoll poll(interrupt);
  Eigen::MatrixXd out(n, n);
  blocks_in_rounds(n, kDenseBlock, threads_for_dense(n), poll, [&](Index j0, Index b, int) {
    const Index rows = n - j0;
    out.block(j0, j0, rows, b).noalias() =
        inverse_factor.bottomRightCorner(rows, rows).transpose() *
        inverse_factor.block(j0, j0, rows, b);
  });
  out.triangularView<Eigen::StrictlyUpper>() = out.transpose();
  return out;
}

// The lower Cholesky factor of a kernel matrix a (read from its lower
// triangle) with the smallest jitter, j times its mean diagonal for j in
// 0, 1e-12, 1e-11, ..., up to max_relative_jitter, that makes it positive
// definite.  Duplicated inputs make a kernel matrix without noise on its
// diagonal singular; the jitter's limit is the exact answer there (a twin
// takes over the other's part).  With min_diagonal_ratio > 0 a factor whose
// diagonal spans more than 1 / min_diagonal_ratio (a condition number
// beyond its square) counts as failed too: what is computed from it would
// be rounding.  Throws std::runtime_error naming `what` when no jitter in
// the range works.
struct JitteredFactor {
  Eigen::MatrixXd lower;  // L with L L' = a + jitter I; zero above the diagonal
  double jitter = 0.0;
};

inline JitteredFactor jittered_cholesky(const Eigen::MatrixXd& a, double max_relative_jitter,
                                        double min_diagonal_ratio, const std::string& what,
                                        const std::function<void()>& interrupt = nullptr) {
  JitteredFactor f;
  const Eigen::Index m = a.rows();
  if (m == 0) return f;
  double scale = a.diagonal().mean();
  if (!(scale > 0.0) || !std::isfinite(scale)) scale = 1.0;
  for (int step = -1;; ++step) {
    const double relative = step < 0 ? 0.0 : std::pow(10.0, step - 12);
    if (relative > max_relative_jitter * (1.0 + 1e-9)) break;
    f.lower = a;
    f.jitter = relative * scale;
    f.lower.diagonal().array() += f.jitter;
    if (!cholesky_in_place(f.lower, interrupt)) continue;
    f.lower.triangularView<Eigen::StrictlyUpper>().setZero();
    const Eigen::VectorXd d = f.lower.diagonal();
    if (min_diagonal_ratio > 0.0 && d.minCoeff() < min_diagonal_ratio * d.maxCoeff()) continue;
    return f;
  }
  throw std::runtime_error(what + " is not positive definite, even with a jitter of " +
                           std::to_string(max_relative_jitter) + " times its mean diagonal");
}

// Gauss quadrature by Golub and Welsch: the nodes are the eigenvalues of the
// symmetric tridiagonal Jacobi matrix of the weight's orthogonal
// polynomials, the weights the weight's total mass times the squared first
// components of its eigenvectors.  Two weights: the standard normal
// density (probabilists' Hermite polynomials, off-diagonal sqrt(k), mass
// 1) and 1 on [-1, 1] (Legendre, k / sqrt(4 k^2 - 1), mass 2).  Nodes
// ascending.
enum class GaussWeight { normal, uniform };

struct GaussRule {
  Eigen::VectorXd node, weight;
};

inline GaussRule gauss_rule(GaussWeight kind, int q) {
  if (q < 1) throw std::invalid_argument("a quadrature rule needs a node");
  Eigen::MatrixXd j = Eigen::MatrixXd::Zero(q, q);
  for (int k = 1; k < q; ++k) {
    const double kk = static_cast<double>(k);
    j(k, k - 1) = j(k - 1, k) =
        kind == GaussWeight::normal ? std::sqrt(kk) : kk / std::sqrt(4.0 * kk * kk - 1.0);
  }
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(j);
  GaussRule r;
  r.node = eig.eigenvalues();
  r.weight = (kind == GaussWeight::normal ? 1.0 : 2.0) *
             eig.eigenvectors().row(0).transpose().array().square();
  return r;
}

}  // namespace gpsvm

#endif  // GPSVM_DENSE_HPP
