// Threads for the row-block loops of the low-rank and inducing-point (FITC)
// priors, whose every EP sweep is two passes over an n x m factor, of
// the greedy choice of inducing inputs (lowrank.hpp), and for the tiles of
// the dense Cholesky factorisation and what is computed from it (dense.hpp):
// work that Eigen does not run on several cores itself (its symmetric rank
// updates, triangular solves and matrix-vector products are
// single-threaded).
//
// Through OpenMP where the compiler has it (R's SHLIB_OPENMP_CXXFLAGS); the
// same code runs on one thread without it.  The number of threads is one
// process-wide setting (set_thread_count(), as Eigen::setNbThreads() is),
// read only by the thread that runs a fit; it starts at 1, and a program
// (R's glue, when the package loads) sets it.
//
// Results do not depend on the number of threads, to the last bit: loops
// whose rows are independent (a row's variance, a row of a triangular
// solve) write disjoint rows, and sums over rows (G' W G) go into
// kSumSlots partial sums, slot s taking blocks s, s + kSumSlots, ... in
// order whatever thread runs it, added in slot order at the end.
//
// The interrupt callback (which may throw, e.g. R's Ctrl-C check) is called
// only on the calling thread, between rounds of blocks; an exception thrown
// by a block's work inside a parallel region is carried out of it and
// rethrown on the calling thread.
//
// Pure C++17 + Eigen: no R headers.
#ifndef GPSVM_THREADS_HPP
#define GPSVM_THREADS_HPP

#include <Eigen/Dense>

#include <algorithm>
#include <exception>
#include <functional>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "interrupt.hpp"

namespace gpsvm {

// Partial sums over row blocks (see above): up to this many threads share a
// sum, each slot an m x m matrix.
constexpr int kSumSlots = 4;

// Memory-bound loops over fewer rows than this (the greedy choice's column
// updates, O(n) work a row) stay on one thread: below it a pass takes a
// fraction of a millisecond, and on a machine busy with other work idle
// threads waiting for the next round cost more than they gain.
constexpr Eigen::Index kThreadedRows = 8192;

// Passes over an n x m factor (the low-rank and FITC priors' sweeps, O(n m^2)
// multiply-adds) of fewer than this many multiply-adds stay on one thread:
// about 5 ms of work here.  Above it two threads took 0.6-0.7 times as long
// on 2-core machines: gpc()'s default on 4435 rows of mlbench's Satellite
// (FITC on 300 inputs) 13.0 s on one thread, 8.5 s on two.
constexpr double kThreadedPassWork = 5e7;

namespace threads_detail {
inline int& thread_count_setting() {
  static int count = 1;
  return count;
}
}  // namespace threads_detail

// Whether this build runs threads at all.
inline bool threads_available() {
#ifdef _OPENMP
  return true;
#else
  return false;
#endif
}

// The threads the row-block loops use (1 in a build without OpenMP).
inline int thread_count() {
  return threads_available() ? threads_detail::thread_count_setting() : 1;
}

// Sets them (values below 1 count as 1).  Eigen's own products stay on one
// thread (EIGEN_DONT_PARALLELIZE, in the package's build flags): threads
// start only where this file decides.
inline void set_thread_count(int count) {
  threads_detail::thread_count_setting() = std::max(1, count);
}

// The threads a memory-bound loop over n rows uses.
inline int threads_for_rows(Eigen::Index n) { return n < kThreadedRows ? 1 : thread_count(); }

// The threads a pass over an n x m factor uses, m^2 multiply-adds a row.
inline int threads_for_pass(Eigen::Index n, Eigen::Index m) {
  const double work = static_cast<double>(n) * static_cast<double>(m) * static_cast<double>(m);
  return work < kThreadedPassWork ? 1 : thread_count();
}

// Dense factorisations of order below this stay on one thread: below it
// one takes a millisecond or less, and starting threads costs a sizeable
// part of that (measured in bench/bench-limit.R's engine part).
constexpr Eigen::Index kThreadedDense = 256;

// The threads a dense factorisation of order n uses.
inline int threads_for_dense(Eigen::Index n) { return n < kThreadedDense ? 1 : thread_count(); }

// Calls work(i, slot) for i in [0, count) on up to `threads` threads, the
// items dealt out in turn (item i to thread i mod threads: a round of as
// many items as threads puts one on each, and blocks of decreasing work
// balance); slot in [0, threads) is the running thread's, for a workspace
// of its own.  work(i, .) must compute the same numbers whatever slot runs
// it.  The first exception any item throws is rethrown here.
template <class Work>
void for_each_item(int count, int threads, Work&& work) {
  threads = std::max(1, std::min(threads, count));
  if (threads == 1) {
    for (int i = 0; i < count; ++i) work(i, 0);
    return;
  }
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(count));
#ifdef _OPENMP
#pragma omp parallel for schedule(static, 1) num_threads(threads)
#endif
  for (int i = 0; i < count; ++i) {
    int slot = 0;
#ifdef _OPENMP
    slot = omp_get_thread_num();
#endif
    try {
      work(i, slot);
    } catch (...) {
      errors[static_cast<std::size_t>(i)] = std::current_exception();
    }
  }
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

// Calls work(start, length, slot) for the independent blocks of `block`
// indices (rows or columns) that cover [0, n), split between `threads`
// (for_each_item()), in rounds of a few blocks a thread with a poll of the
// interrupt (on the calling thread) before each round.
template <class Work>
void blocks_in_rounds(Eigen::Index n, Eigen::Index block, int threads, InterruptPoll& poll,
                      Work&& work) {
  const Eigen::Index blocks = (n + block - 1) / block;
  const Eigen::Index round = 4 * static_cast<Eigen::Index>(std::max(1, threads));
  for (Eigen::Index first = 0; first < blocks; first += round) {
    poll();
    const Eigen::Index count = std::min(round, blocks - first);
    for_each_item(static_cast<int>(count), threads, [&](int i, int slot) {
      const Eigen::Index start = (first + i) * block;
      work(start, std::min(block, n - start), slot);
    });
  }
}

// Calls work(start, length) for the blocks of `block` rows that cover
// [0, n), split between up to `threads` threads (blocks_in_rounds()), the
// interrupt (may be empty) polled before each round.  work must only write
// rows of its own block.
template <class Work>
void for_row_blocks(Eigen::Index n, Eigen::Index block, int threads, Work&& work,
                    const std::function<void()>& interrupt = nullptr) {
  InterruptPoll poll(interrupt);
  blocks_in_rounds(n, block, threads, poll,
                   [&](Eigen::Index start, Eigen::Index length, int) { work(start, length); });
}

// sum over the blocks of `block` rows covering [0, n) of work(start, length,
// partial), where work adds its block's term to the m x m matrix `partial`
// (as it likes: a rank update of the lower triangle, say).  Returns the sum
// in `total`, which must be m x m; its previous contents are kept and
// added to.  The blocks go to kSumSlots partial sums as described above, so
// that the result is the same on any number of threads (up to `threads`).
template <class Work>
void sum_over_row_blocks(Eigen::Index n, Eigen::Index block, int threads, Eigen::MatrixXd& total,
                         Work&& work, const std::function<void()>& interrupt = nullptr) {
  const Eigen::Index blocks = (n + block - 1) / block;
  const int slots = static_cast<int>(std::min<Eigen::Index>(kSumSlots, blocks));
  std::vector<Eigen::MatrixXd> partial(static_cast<std::size_t>(std::max(0, slots - 1)),
                                       Eigen::MatrixXd::Zero(total.rows(), total.cols()));
  threads = std::max(1, std::min(threads, slots));
  for (Eigen::Index first = 0; first < blocks; first += slots) {
    const int round = static_cast<int>(std::min<Eigen::Index>(slots, blocks - first));
    for_each_item(round, threads, [&](int s, int) {
      const Eigen::Index start = (first + s) * block;
      work(start, std::min(block, n - start),
           s == 0 ? total : partial[static_cast<std::size_t>(s - 1)]);
    });
    if (interrupt) interrupt();
  }
  for (const Eigen::MatrixXd& p : partial) total += p;
}

}  // namespace gpsvm

#endif  // GPSVM_THREADS_HPP
