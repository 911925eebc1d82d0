// Dense matrix products and factorisations of O(m^3) work done in blocks,
// with an interrupt polled between blocks (interrupt.hpp): at m = 3000 one
// Cholesky factorisation and inverse take tens of seconds, which a single
// Eigen call cannot break.  A block's work is about 1e9 flops or less.
// Pure C++17 + Eigen: no R headers.
#ifndef GPSVM_DENSE_HPP
#define GPSVM_DENSE_HPP

#include <Eigen/Dense>

#include <algorithm>
#include <functional>

#include "interrupt.hpp"

namespace gpsvm {

constexpr Eigen::Index kDenseBlock = 128;

// A'A for a tall or square A, forming only the lower triangle (half the
// flops of a general product), in tiles of kDenseBlock^2 entries.
inline Eigen::MatrixXd crossprod(const Eigen::MatrixXd& a,
                                 const std::function<void()>& interrupt = nullptr) {
  using Eigen::Index;
  const Index p = a.cols();
  InterruptPoll poll(interrupt);
  Eigen::MatrixXd out(p, p);
  for (Index j0 = 0; j0 < p; j0 += kDenseBlock) {
    const Index b = std::min(kDenseBlock, p - j0);
    for (Index i0 = j0; i0 < p; i0 += kDenseBlock) {
      poll();
      const Index r = std::min(kDenseBlock, p - i0);
      out.block(i0, j0, r, b).noalias() = a.middleCols(i0, r).transpose() * a.middleCols(j0, b);
    }
  }
  return out.selfadjointView<Eigen::Lower>();
}

// The Cholesky factor L of a symmetric positive definite matrix (a = L L',
// read from its lower triangle), formed in place in the lower triangle a
// block of columns at a time (right-looking: factor the diagonal block,
// solve the panel below it, update the trailing matrix).  The strict upper
// triangle is left as it was.  False when a is not numerically positive
// definite.
inline bool cholesky_in_place(Eigen::MatrixXd& a,
                              const std::function<void()>& interrupt = nullptr) {
  using Eigen::Index;
  const Index m = a.rows();
  InterruptPoll poll(interrupt);
  for (Index k = 0; k < m; k += kDenseBlock) {
    poll();
    const Index b = std::min(kDenseBlock, m - k), rest = m - k - b;
    Eigen::Ref<Eigen::MatrixXd> diagonal = a.block(k, k, b, b);
    Eigen::LLT<Eigen::Ref<Eigen::MatrixXd>> llt(diagonal);  // in place
    if (llt.info() != Eigen::Success) return false;
    if (rest == 0) break;
    auto panel = a.block(k + b, k, rest, b);
    diagonal.triangularView<Eigen::Lower>().adjoint().solveInPlace<Eigen::OnTheRight>(panel);
    a.block(k + b, k + b, rest, rest).selfadjointView<Eigen::Lower>().rankUpdate(panel, -1.0);
  }
  return true;
}

// log|a| from its Cholesky factor (the lower triangle of `l`).
inline double cholesky_logdet(const Eigen::MatrixXd& l) {
  return 2.0 * l.diagonal().array().log().sum();
}

// L^-1 for the lower triangle L of `l`, a block of columns at a time
// (columns j.. of L^-1 vanish above row j).
inline Eigen::MatrixXd lower_inverse(const Eigen::MatrixXd& l,
                                     const std::function<void()>& interrupt = nullptr) {
  using Eigen::Index;
  const Index m = l.rows();
  InterruptPoll poll(interrupt);
  Eigen::MatrixXd out = Eigen::MatrixXd::Zero(m, m);
  for (Index j = 0; j < m; j += kDenseBlock) {
    poll();
    const Index b = std::min(kDenseBlock, m - j);
    auto columns = out.block(j, j, m - j, b);
    columns.topRows(b).setIdentity();
    l.bottomRightCorner(m - j, m - j).triangularView<Eigen::Lower>().solveInPlace(columns);
  }
  return out;
}

}  // namespace gpsvm

#endif  // GPSVM_DENSE_HPP
