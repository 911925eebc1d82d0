// Pivoted (incomplete) Cholesky factorisation of a kernel matrix,
// K ~ G G' with G n x r, from r columns of K chosen greedily by the largest
// residual diagonal.  Smooth kernels on dense inputs (the Gaussian kernel on
// a 1-D interval, say) have a numerical rank far below n, and every EP sweep
// on G costs O(n r^2) instead of O(n^3).  Pure C++17 + Eigen: no R headers.
#ifndef GPSVM_LOWRANK_HPP
#define GPSVM_LOWRANK_HPP

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "kernels.hpp"
#include "threads.hpp"

namespace gpsvm {

namespace lowrank_detail {

// Rows per piece of the column update below, on many rows.
constexpr Eigen::Index kProjectionRows = 4096;

// column -= G[, 0:k] G[p, 0:k]': the step's O(n k) work, which reads all of
// G's first k columns from memory.  On kThreadedRows rows or more it runs in
// pieces of kProjectionRows rows, split between threads; the pieces do not
// depend on the number of threads, nor therefore do the results.
inline void subtract_projection(const Eigen::MatrixXd& G, Eigen::Index k, Eigen::Index p,
                                Eigen::VectorXd& column) {
  const Eigen::Index n = G.rows();
  const Eigen::VectorXd g = G.row(p).head(k).transpose();
  if (n < kThreadedRows) {
    column.noalias() -= G.leftCols(k) * g;
    return;
  }
  for_row_blocks(n, kProjectionRows, threads_for_rows(n), [&](Eigen::Index s, Eigen::Index len) {
    column.segment(s, len).noalias() -= G.block(s, 0, len, k) * g;
  });
}

}  // namespace lowrank_detail

// Stops when the largest residual diagonal is <= tol * max_i K_ii (then
// every entry of K - G G' is at most that in absolute value, by the
// positive semi-definiteness of the residual) and returns true; returns false
// (G unspecified) when max_rank columns are not enough.  Work O(n r^2) and
// n r kernel evaluations; K is never formed.  G grows as columns are added
// (doubling its capacity), so memory follows the rank reached, not max_rank.
inline bool pivoted_cholesky(const KernelEvaluator& ev, double tol, Eigen::Index max_rank,
                             Eigen::MatrixXd& G, std::vector<Eigen::Index>& pivots,
                             const std::function<void()>& interrupt = nullptr) {
  const Eigen::Index n = ev.size();
  if (max_rank > n) max_rank = n;
  Eigen::VectorXd d = ev.diagonal();
  const double threshold = tol * d.maxCoeff();
  G.resize(n, std::min<Eigen::Index>(max_rank, 64));
  pivots.clear();
  Eigen::VectorXd column(n);
  InterruptPoll poll(interrupt);
  for (Eigen::Index k = 0; k < max_rank; ++k) {
    Eigen::Index p;
    const double dmax = d.maxCoeff(&p);
    if (dmax <= threshold) {
      G.conservativeResize(n, k);
      return k > 0 || n == 0;
    }
    poll();
    if (k == G.cols()) G.conservativeResize(n, std::min<Eigen::Index>(max_rank, 2 * k));
    ev.column(p, column.data());
    if (k > 0) lowrank_detail::subtract_projection(G, k, p, column);
    const double pivot = std::sqrt(dmax);
    G.col(k) = column / pivot;
    G(p, k) = pivot;
    d -= G.col(k).cwiseAbs2();
    d[p] = 0.0;
    pivots.push_back(p);
  }
  G.conservativeResize(n, max_rank);
  // max_rank columns: low rank only if the residual is already small
  if (d.maxCoeff() <= threshold) return true;
  return false;
}

// Up to `count` inputs chosen greedily by the pivoted Cholesky
// factorisation above: each is the input whose kernel value is worst
// explained by those chosen before (the largest residual variance
// k(x, x) - Q(x, x)), so the choice greedily shrinks tr(K - Q), the
// variance that an inducing-point (FITC) prior moves from Q to its diagonal.
// Deterministic (ties go to the lowest index); stops early once every input
// is explained to `tol` relative (duplicates are never chosen twice).
// Returns 0-based indices in the order chosen.
inline std::vector<Eigen::Index> greedy_inducing(const KernelEvaluator& ev, Eigen::Index count,
                                                 double tol,
                                                 const std::function<void()>& interrupt = nullptr) {
  Eigen::MatrixXd G;
  std::vector<Eigen::Index> pivots;
  pivoted_cholesky(ev, tol, count, G, pivots, interrupt);
  return pivots;
}

}  // namespace gpsvm

#endif  // GPSVM_LOWRANK_HPP
