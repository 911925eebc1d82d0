// A least-recently-used cache of kernel columns for solvers that cannot
// hold the n x n Gram matrix (SMO on large n).
// Pure C++17 + Eigen: no R headers.
#ifndef GPSVM_KERNEL_CACHE_HPP
#define GPSVM_KERNEL_CACHE_HPP

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <list>
#include <memory>
#include <vector>

#include "kernels.hpp"

namespace gpsvm {

// Least-recently-used cache of kernel columns.  Points with identical inputs
// have identical columns, so the cache is keyed by the first point with the
// same inputs: data with many repeated rows (10^5 copies of one point, say)
// compute each distinct column once.  A returned pointer stays valid until
// two further distinct columns have been requested (capacity is at least 2).
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
      : kernel_(kernel), n_(kernel.size()), first_twin_(kernel.first_twins()),
        slot_of_(static_cast<size_t>(n_), -1) {
    const double bytes_per_column = 8.0 * static_cast<double>(std::max<Index>(n_, 1));
    double cap = std::floor(megabytes * 1048576.0 / bytes_per_column);
    cap = std::max(2.0, std::min(cap, static_cast<double>(n_)));
    capacity_ = static_cast<Index>(cap);
  }

  // The full column j.
  const double* column(Index j) { return column(j, nullptr, 0); }

  // Column j, valid at least on the rows in 'rows' (all rows when null).
  const double* column(Index j, const std::vector<Index>* rows, std::int64_t epoch) {
    j = first_twin_[static_cast<size_t>(j)];
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

  std::int64_t columns_computed() const { return computed_; }
  Index capacity() const { return capacity_; }

 private:
  struct Slot {
    std::unique_ptr<double[]> data;
    Index owner = -1;
    bool full = false;
    std::int64_t epoch = -1;
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
    const int s = slot_of_[static_cast<size_t>(first_twin_[static_cast<size_t>(j)])];
    if (s < 0 || !slots_[static_cast<size_t>(s)].full) return nullptr;
    return slots_[static_cast<size_t>(s)].data.get();
  }

 private:

  const KernelEvaluator& kernel_;
  Index n_;
  std::vector<Index> first_twin_;  // the first point with the same inputs
  Index capacity_ = 2;
  std::vector<int> slot_of_;
  std::vector<Slot> slots_;
  std::list<int> lru_;
  std::int64_t computed_ = 0;
  Eigen::VectorXd buffer_;
};

}  // namespace gpsvm

#endif  // GPSVM_KERNEL_CACHE_HPP
