// What is computed from a dense Cholesky factor (the factorisation is
// dense.hpp's), in blocks: each block is matrix-matrix work (what the machine does fastest),
// and between blocks the caller's interrupt callback runs, so that Ctrl-C
// stops an O(n^3) step of a large problem within a fraction of a second
// rather than after it.  Pure C++17 + Eigen: no R headers.
#ifndef GPSVM_BLOCKED_CHOLESKY_HPP
#define GPSVM_BLOCKED_CHOLESKY_HPP

#include <Eigen/Dense>

#include <algorithm>
#include <functional>

#include "dense.hpp"

namespace gpsvm {

namespace blocked_detail {

// Columns per block: large enough that the trailing updates run at the speed
// of a matrix product, small enough that one update of a 5000 x 5000
// matrix takes well under a second.
constexpr Eigen::Index kBlock = kDenseBlock;

inline void check(const std::function<void()>& interrupt) {
  if (interrupt) interrupt();
}

}  // namespace blocked_detail

// The factorisation itself, A = L L' in place, is dense.hpp's
// cholesky_in_place().

// x <- L^-1 x for the lower triangle L of `l`, a block of columns of x at a
// time.
inline void solve_lower_in_place(const Eigen::Ref<const Eigen::MatrixXd>& l,
                                 Eigen::Ref<Eigen::MatrixXd> x,
                                 const std::function<void()>& interrupt = nullptr) {
  const Eigen::Index columns = 2 * blocked_detail::kBlock;
  for (Eigen::Index j = 0; j < x.cols(); j += columns) {
    auto block = x.middleCols(j, std::min(columns, x.cols() - j));
    l.triangularView<Eigen::Lower>().solveInPlace(block);
    blocked_detail::check(interrupt);
  }
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

// Diagonal of A^-1 from the lower Cholesky factor L of A (in `l`'s lower
// triangle): [A^-1]_ii is the squared norm of column i of L^-1, a block of
// columns at a time (lower_inverse_columns()): n^3 / 3 flops (as many as
// the factorisation), instead of the n^3 of L^-1 in full or the 2 n^3 of
// solving A X = I.  The blocks share one workspace of 64 columns: large
// temporaries are what costs inside R, whose heap is trimmed and grown again
// around them (page faults, several milliseconds at n = 614).
inline Eigen::VectorXd inverse_diagonal_from_cholesky(
    const Eigen::Ref<const Eigen::MatrixXd>& l, const std::function<void()>& interrupt = nullptr) {
  const Eigen::Index m = l.rows();
  Eigen::VectorXd d(m);
  const Eigen::Index block = 64;
  Eigen::MatrixXd work(m, std::min(block, m));
  for (Eigen::Index j0 = 0; j0 < m; j0 += block) {
    const Eigen::Index b = std::min(block, m - j0);
    auto x = work.topLeftCorner(m - j0, b);
    lower_inverse_columns(l, j0, x);
    d.segment(j0, b) = x.colwise().squaredNorm().transpose();
    if (j0 % (4 * block) == 0) blocked_detail::check(interrupt);
  }
  return d;
}

// A^-1 from the lower Cholesky factor L of A, both triangles: L^-1 a block
// of columns at a time (lower_inverse_columns(), n^3 / 3 flops), then
// A^-1 = L^-T L^-1 a block of columns at a time, only the rows at and below
// each block (2 n^3 / 3 flops) and their mirror.
inline Eigen::MatrixXd inverse_from_cholesky(const Eigen::Ref<const Eigen::MatrixXd>& l,
                                             const std::function<void()>& interrupt = nullptr) {
  const Eigen::Index n = l.rows(), block = blocked_detail::kBlock;
  Eigen::MatrixXd inverse_factor = Eigen::MatrixXd::Zero(n, n);
  for (Eigen::Index j0 = 0; j0 < n; j0 += block) {
    const Eigen::Index b = std::min(block, n - j0);
    lower_inverse_columns(l, j0, inverse_factor.block(j0, j0, n - j0, b));
    blocked_detail::check(interrupt);
  }
  Eigen::MatrixXd out(n, n);
  for (Eigen::Index j0 = 0; j0 < n; j0 += block) {
    const Eigen::Index b = std::min(block, n - j0), rows = n - j0;
    out.block(j0, j0, rows, b).noalias() =
        inverse_factor.bottomRightCorner(rows, rows).transpose() *
        inverse_factor.block(j0, j0, rows, b);
    blocked_detail::check(interrupt);
  }
  out.triangularView<Eigen::StrictlyUpper>() = out.transpose();
  return out;
}

}  // namespace gpsvm

#endif  // GPSVM_BLOCKED_CHOLESKY_HPP
