// Threads for the row-block loops of the low-rank and inducing-point (FITC)
// priors, whose every EP sweep is two passes over an n x m factor, of
// the greedy choice of inducing inputs (lowrank.hpp), for the tiles of
// the dense Cholesky factorisation and what is computed from it (dense.hpp),
// and for every other loop over blocks of rows or columns (the Gram matrix,
// A'A, predictions at new points, gradients in the kernel's widths): work
// that Eigen does not run on several cores itself (its symmetric rank
// updates, triangular solves and matrix-vector products are
// single-threaded).  Every such loop goes through blocks_in_rounds(), which
// also polls the interrupt between rounds.
//
// Through std::thread: each parallel round starts its helper threads and
// joins them, so that a thread waiting for the others sleeps.  (OpenMP's
// threads spin while they wait, and on a machine busy with other work,
// where a round's threads cannot all run at once, the spinning ones take
// the processors the working ones need; starting threads costs tens of
// microseconds a round, and the thresholds below keep rounds far longer
// than that.)  The
// number of threads is one process-wide setting (set_thread_count(), as
// Eigen::setNbThreads() is), read only by the thread that runs a fit; it
// starts at 1, and a program (R's glue, when the package loads) sets it.
// Where OpenMP is there, its thread limit (OMP_THREAD_LIMIT) caps it.
//
// Results do not depend on the number of threads, to the last bit: loops
// whose rows are independent (a row's variance, a row of a triangular
// solve) write disjoint rows, and sums over rows (G' W G) go into
// kSumSlots partial sums, slot s taking blocks s, s + kSumSlots, ... in
// order whatever thread runs it, added in slot order at the end.
//
// The interrupt callback (which may throw, e.g. R's Ctrl-C check) is polled
// (InterruptPoll, interrupt.hpp) only on the calling thread, between rounds
// of blocks, never inside a block's work: R's API, which R's callback calls,
// may be used from R's main thread alone.  So a block's work must not poll
// the interrupt or call anything that does.  An exception thrown by a
// block's work inside a parallel region is carried out of it and rethrown
// on the calling thread.
//
// Pure C++17 + Eigen: no R headers.
#ifndef GPSVM_THREADS_HPP
#define GPSVM_THREADS_HPP

#include <Eigen/Dense>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <functional>
#include <system_error>
#include <vector>

// std::thread, where the standard library has it (not libstdc++ built for
// Windows' own thread model, as a cross-compiler's default may be: there
// everything runs on the calling thread).
#if defined(__GLIBCXX__) && !defined(_GLIBCXX_HAS_GTHREADS)
#define GPSVM_STD_THREADS 0
#else
#define GPSVM_STD_THREADS 1
#include <thread>
#endif

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
// multiply-adds), and other compute-bound loops, of fewer than this many
// multiply-adds stay on one thread: a few milliseconds of work, where
// starting threads for each round would cost a sizeable part of the gain;
// above it the threads pay (bench/bench-threads.R).
constexpr double kThreadedPassWork = 5e7;

namespace threads_detail {
inline int& thread_count_setting() {
  static int count = 1;
  return count;
}
inline bool& load_adaptive_setting() {
  static bool adaptive = false;
  return adaptive;
}
}  // namespace threads_detail

// Whether this build runs threads at all.
inline bool threads_available() { return GPSVM_STD_THREADS != 0; }

// The most threads a round may have: OpenMP's thread limit where OpenMP
// is there (OMP_THREAD_LIMIT), one without std::thread.
inline int thread_limit() {
  if (!threads_available()) return 1;
#ifdef _OPENMP
  return std::max(1, omp_get_thread_limit());
#else
  return 1 << 20;
#endif
}

// The threads the row-block loops use: the setting, within that limit.
inline int thread_count() {
  return std::min(threads_detail::thread_count_setting(), thread_limit());
}

// The processors this process may run on (OpenMP's count, which follows
// the affinity mask, where OpenMP is there; else the hardware's).
inline int available_processors() {
#if defined(_OPENMP)
  return std::max(1, omp_get_num_procs());
#elif GPSVM_STD_THREADS
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
#else
  return 1;
#endif
}

// Sets them (values below 1 count as 1).  A program should not ask for
// more than available_processors(): more threads than processors only wait
// for each other, each round waiting for threads that have no processor
// (R's glue caps the setting there).  Eigen's own products
// stay on one thread (EIGEN_DONT_PARALLELIZE, in the package's build
// flags): threads start only where this file decides.
inline void set_thread_count(int count) {
  threads_detail::thread_count_setting() = std::max(1, count);
}

// Whether the threads below follow the machine's load (off by default, so
// that the C++ suite sees fixed counts; R's glue turns it on).
inline void set_load_adaptive(bool adaptive) {
  threads_detail::load_adaptive_setting() = adaptive;
}

// The processors not running other work at this moment, as far as the
// system says: on Linux the processors less the other runnable threads
// (/proc/loadavg's count, less the caller's own); elsewhere the processors.
// A round of threads waits for the slowest of them, and a thread that must
// wait for a processor held by other work holds up the round, so that on
// a busy machine two threads can take longer than one.
// The system's figure is read at most every 10 ms (a read costs tens of
// microseconds, a round of a small factorisation not many more); only the
// thread that runs a fit asks.
inline int idle_processors() {
  using Clock = std::chrono::steady_clock;
  static Clock::time_point read_at;
  static int last = 0;
  const Clock::time_point now = Clock::now();
  if (last > 0 && now - read_at < std::chrono::milliseconds(10)) return last;
  read_at = now;
  int idle = available_processors();
#if defined(__linux__)
  std::FILE* f = std::fopen("/proc/loadavg", "r");
  if (f) {
    double one = 0.0, five = 0.0, fifteen = 0.0;
    int running = 0, total = 0;
    if (std::fscanf(f, "%lf %lf %lf %d/%d", &one, &five, &fifteen, &running, &total) == 5)
      idle -= std::max(0, running - 1);
    std::fclose(f);
  }
#endif
  last = std::max(1, idle);
  return last;
}

// Up to `count` threads, no more than the processors idle now when the load
// is followed.
inline int idle_threads(int count) {
  if (count <= 1 || !threads_detail::load_adaptive_setting()) return count;
  return std::min(count, idle_processors());
}

// The threads to start now: the setting, within idle_threads().
inline int threads_now() { return idle_threads(thread_count()); }

// The threads a memory-bound loop over n rows uses.
inline int threads_for_rows(Eigen::Index n) { return n < kThreadedRows ? 1 : threads_now(); }

// The threads a compute-bound loop of this many multiply-adds in all uses.
inline int threads_for_work(double multiply_adds) {
  return multiply_adds < kThreadedPassWork ? 1 : threads_now();
}

// The threads a pass over an n x m factor uses, m^2 multiply-adds a row.
inline int threads_for_pass(Eigen::Index n, Eigen::Index m) {
  return threads_for_work(static_cast<double>(n) * static_cast<double>(m) *
                          static_cast<double>(m));
}

// Dense factorisations of order below this stay on one thread: below it
// one takes a few milliseconds, in rounds of tens of microseconds, and
// starting threads for each round costs a sizeable part of that, enough to
// make small fits slower on two threads than on one (bench-threads.R).
constexpr Eigen::Index kThreadedDense = 512;

// The threads a dense factorisation of order n uses.
inline int threads_for_dense(Eigen::Index n) { return n < kThreadedDense ? 1 : threads_now(); }

// Calls work(i, slot) for i in [0, count) on up to `threads` threads, the
// items dealt out in turn (item i to thread i mod threads: a round of as
// many items as threads puts one on each, and blocks of decreasing work
// balance); slot in [0, threads) is the running thread's, for a workspace
// of its own.  work(i, .) must compute the same numbers whatever slot runs
// it.  The first exception any item throws is rethrown here.
// (Slot s runs on helper thread s, slot 0 on the caller; a helper the
// system cannot start leaves its slot to the caller, after its own.)
template <class Work>
void for_each_item(int count, int threads, Work&& work) {
  threads = std::max(1, std::min({threads, count, thread_limit()}));
  if (threads == 1) {
    for (int i = 0; i < count; ++i) work(i, 0);
    return;
  }
#if GPSVM_STD_THREADS
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(count));
  const auto run_slot = [&](int slot) {
    for (int i = slot; i < count; i += threads) {
      try {
        work(i, slot);
      } catch (...) {
        errors[static_cast<std::size_t>(i)] = std::current_exception();
      }
    }
  };
  std::vector<std::thread> helpers;
  helpers.reserve(static_cast<std::size_t>(threads - 1));
  try {
    for (int slot = 1; slot < threads; ++slot) helpers.emplace_back(run_slot, slot);
  } catch (const std::system_error&) {
    // no more threads to be had: the caller runs the slots left
  }
  run_slot(0);
  for (int slot = static_cast<int>(helpers.size()) + 1; slot < threads; ++slot) run_slot(slot);
  for (std::thread& helper : helpers) helper.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
#endif
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
    // (the load is looked at again each round: other work that starts
    // during a long factorisation takes processors from it)
    for_each_item(static_cast<int>(count), idle_threads(threads), [&](int i, int slot) {
      const Eigen::Index start = (first + i) * block;
      work(start, std::min(block, n - start), slot);
    });
  }
}

// The sum over the blocks of `block` rows covering [0, n) of term(start,
// length), a vector of `size` entries, the blocks split between up to
// `threads` threads (blocks_in_rounds()).  The terms are kept and added in
// block order at the end, so the sum is the serial loop's to the last bit,
// on any number of threads.
template <class Term>
Eigen::VectorXd sum_of_block_terms(Eigen::Index n, Eigen::Index block, int threads,
                                   Eigen::Index size, InterruptPoll& poll, Term&& term) {
  std::vector<Eigen::VectorXd> terms(static_cast<std::size_t>((n + block - 1) / block));
  blocks_in_rounds(n, block, threads, poll, [&](Eigen::Index start, Eigen::Index length, int) {
    terms[static_cast<std::size_t>(start / block)] = term(start, length);
  });
  Eigen::VectorXd total = Eigen::VectorXd::Zero(size);
  for (const Eigen::VectorXd& t : terms) total += t;
  return total;
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
  InterruptPoll poll(interrupt);
  for (Eigen::Index first = 0; first < blocks; first += slots) {
    poll();
    const int round = static_cast<int>(std::min<Eigen::Index>(slots, blocks - first));
    for_each_item(round, idle_threads(threads), [&](int s, int) {
      const Eigen::Index start = (first + s) * block;
      work(start, std::min(block, n - start),
           s == 0 ? total : partial[static_cast<std::size_t>(s - 1)]);
    });
  }
  for (const Eigen::MatrixXd& p : partial) total += p;
}

}  // namespace gpsvm

#endif  // GPSVM_THREADS_HPP
