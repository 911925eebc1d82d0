// The choice of a Gaussian-process prior's representation for EP, made in
// one place for every model: the dense kernel matrix, a pivoted Cholesky
// factor of it (the same matrix to a relative `rank_tol`), or the FITC
// approximation on inducing inputs where the matrix has no low rank and a
// dense sweep, O(n^3), would be too slow.  The thresholds come from the
// caller (the R layer's size policy); the choice says which rule made it.
// Pure C++17 + Eigen: no R headers.
#ifndef GPSVM_PRIOR_CHOICE_HPP
#define GPSVM_PRIOR_CHOICE_HPP

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>
#include <vector>

#include "kernels.hpp"
#include "lowrank.hpp"

namespace gpsvm {

enum class PriorForm { dense, low_rank, fitc };

// Which rule made the choice.
enum class PriorReason {
  no_rank_test,      // rank_tol = 0: the dense matrix, as asked
  few_rows,          // n <= low_rank_min_n: no test of the rank
  low_rank,          // at most the cap of pivots represent K to rank_tol
  no_low_rank,       // they do not, and n <= dense_max_n
  no_low_rank_fitc,  // they do not, and n > dense_max_n: FITC
  probe_fitc,        // the probe's rows have no low rank, n > dense_max_n: FITC
  untested_dense,    // no rank test asked, n <= dense_max_n
  untested_fitc      // no rank test asked, n > dense_max_n: FITC
};

struct PriorRules {
  double rank_tol = 0.0;  // in [0, 1]; 0: always dense
  // up to this many rows no rank is tested (dense)
  Eigen::Index low_rank_min_n = 0;
  // the most pivots of a low-rank factor; with half_rows_at_most also at
  // most half the rows tested (at least 1): beyond that the dense form is as cheap
  Eigen::Index max_rank = 0;
  bool half_rows_at_most = false;
  // beyond this many rows a matrix without low rank is replaced by FITC on
  // inducing_count of its pivots
  Eigen::Index dense_max_n = std::numeric_limits<Eigen::Index>::max();
  Eigen::Index inducing_count = 0;
  // at least this many rows per inducing input: FITC takes
  // min(inducing_count, ceil(n / rows_per_inducing)) of them
  Eigen::Index rows_per_inducing = 1;
  // beyond this many rows the rank is tested first on that many evenly
  // spaced rows, and the greedy choice looks at max(greedy_max_rows, 4 m)
  // evenly spaced rows (each pivot is a pass over the factor so far, bound
  // by memory; evenly spaced rows cover the inputs' range as all rows do);
  // 0: every row
  Eigen::Index greedy_max_rows = 0;
  // false: no rank test, FITC beyond dense_max_n on the greedy rule's rows.
  // An approximation for an evidence search: where K has a low rank the
  // greedy rule stops at its pivots, so FITC is then the low-rank factor.
  bool test_rank = true;
};

struct PriorChoice {
  PriorForm form = PriorForm::dense;
  PriorReason reason = PriorReason::no_rank_test;
  // low_rank: the pivots (0-based, in order); fitc: the inducing rows
  std::vector<Eigen::Index> rows;
  Eigen::MatrixXd factor;  // low_rank: G with K ~ G G' (n x rows.size())
};

namespace prior_choice_detail {

inline Eigen::Index pivot_cap(const PriorRules& rules, Eigen::Index n) {
  return rules.half_rows_at_most ? std::min(rules.max_rank, std::max<Eigen::Index>(1, n / 2))
                                 : rules.max_rank;
}

// The greedy pivots of the rows' kernel matrix, one more than the cap at
// most; low rank when the factor stopped within the cap.
inline bool has_low_rank(const KernelEvaluator& ev, const PriorRules& rules, Eigen::MatrixXd& G,
                         std::vector<Eigen::Index>& pivots,
                         const std::function<void()>& interrupt) {
  const Eigen::Index cap = pivot_cap(rules, ev.size());
  if (cap < 1) return false;
  const bool stopped = pivoted_cholesky(ev, rules.rank_tol, cap + 1, G, pivots, interrupt);
  return stopped && static_cast<Eigen::Index>(pivots.size()) <= cap;
}

// The inducing inputs FITC takes on n rows.
inline Eigen::Index inducing_size(const PriorRules& rules, Eigen::Index n) {
  const Eigen::Index per = std::max<Eigen::Index>(1, rules.rows_per_inducing);
  return std::min({rules.inducing_count, (n + per - 1) / per, n});
}

inline Eigen::MatrixXd rows_of(const ConstMatrixRef& x, const std::vector<Eigen::Index>& rows) {
  Eigen::MatrixXd out(static_cast<Eigen::Index>(rows.size()), x.cols());
  for (std::size_t i = 0; i < rows.size(); ++i) out.row(static_cast<Eigen::Index>(i)) = x.row(rows[i]);
  return out;
}

}  // namespace prior_choice_detail

// `count` inducing rows of x by the greedy rule (greedy_inducing(), at the
// relative tolerance `tol`) among the candidate rows `candidates` (0-based,
// all rows when empty); returns rows of x in the order chosen.
inline std::vector<Eigen::Index> greedy_rows(const Kernel& kernel, const ConstMatrixRef& x,
                                             const std::vector<Eigen::Index>& candidates,
                                             Eigen::Index count, double tol,
                                             const std::function<void()>& interrupt = nullptr) {
  if (candidates.empty()) return greedy_inducing(KernelEvaluator(kernel, x), count, tol, interrupt);
  const Eigen::MatrixXd sub = prior_choice_detail::rows_of(x, candidates);
  std::vector<Eigen::Index> chosen = greedy_inducing(KernelEvaluator(kernel, sub), count, tol, interrupt);
  for (Eigen::Index& r : chosen) r = candidates[static_cast<std::size_t>(r)];
  return chosen;
}

// `size` rows of n evenly spaced (0-based, first and last included, in
// order, without repeats; all rows when n <= size): the rounded points
// 1 + k (n - 1) / (size - 1), k = 0, ..., size - 1, of 1-based rows, ties
// to even, which the R layer's own evenly spaced rows are too.
inline std::vector<Eigen::Index> evenly_spaced_rows(Eigen::Index n, Eigen::Index size) {
  std::vector<Eigen::Index> out;
  if (n <= size || size < 2) {
    const Eigen::Index count = n <= size ? n : std::min<Eigen::Index>(size, n);
    for (Eigen::Index i = 0; i < count; ++i) out.push_back(i);
    return out;
  }
  const double step = (static_cast<double>(n) - 1.0) / static_cast<double>(size - 1);
  for (Eigen::Index k = 0; k < size; ++k) {
    const double at = k == size - 1 ? static_cast<double>(n) : 1.0 + static_cast<double>(k) * step;
    const Eigen::Index row = static_cast<Eigen::Index>(std::nearbyint(at)) - 1;
    if (out.empty() || out.back() != row) out.push_back(row);
  }
  return out;
}

// The relative residual below which the greedy choice of inducing inputs
// stops: inputs explained that well add nothing (duplicates never twice).
constexpr double kInducingTol = 1e-12;

// The representation of the prior on the rows of x:
//   0. without a rank test (test_rank false): dense up to dense_max_n rows,
//      FITC beyond on the greedy rule's rows;
//   1. rank_tol = 0, or n <= low_rank_min_n: dense;
//   2. beyond greedy_max_rows (> 0) and dense_max_n rows, the low-rank test
//      on greedy_max_rows evenly spaced rows first: a principal submatrix
//      has no larger numerical rank than K (their eigenvalues interlace),
//      so when they need more than the cap of pivots K does too, and the
//      fit is FITC on the greedy rule's rows;
//   3. the test on every row: low rank when at most the cap of pivots
//      represent K to rank_tol (every entry of K - G G' at most rank_tol
//      max K_ii);
//   4. else dense up to dense_max_n rows, and FITC beyond, on the first
//      pivots (what the greedy choice takes; beyond the pivots the test
//      took, the greedy choice goes on).
// FITC takes inducing_size() rows; the greedy rule looks at the candidate
// rows of PriorRules::greedy_max_rows.  The factor of step 3 is kept for a
// caller that runs EP on it.
inline PriorChoice choose_prior(const Kernel& kernel, const ConstMatrixRef& x,
                                const PriorRules& rules,
                                const std::function<void()>& interrupt = nullptr) {
  if (!(rules.rank_tol >= 0.0 && rules.rank_tol <= 1.0))
    throw std::invalid_argument("'rank_tol' must lie in [0, 1]");
  const Eigen::Index n = x.rows();
  const bool beyond_dense = n > rules.dense_max_n;
  if (beyond_dense && rules.inducing_count < 1)
    throw std::invalid_argument("'inducing_count' must be at least 1 beyond dense_max_n");
  const Eigen::Index m = prior_choice_detail::inducing_size(rules, n);
  const bool spaced = rules.greedy_max_rows > 0 && n > rules.greedy_max_rows;
  const auto fitc_rows = [&]() {
    const std::vector<Eigen::Index> candidates =
        rules.greedy_max_rows > 0
            ? evenly_spaced_rows(n, std::max(rules.greedy_max_rows, 4 * m))
            : std::vector<Eigen::Index>();
    return greedy_rows(kernel, x, candidates, m, kInducingTol, interrupt);
  };
  PriorChoice out;
  if (!rules.test_rank) {
    out.reason = PriorReason::untested_dense;
    if (beyond_dense) {
      out.form = PriorForm::fitc;
      out.reason = PriorReason::untested_fitc;
      out.rows = fitc_rows();
    }
    return out;
  }
  if (rules.rank_tol == 0.0) return out;
  if (n <= rules.low_rank_min_n) {
    out.reason = PriorReason::few_rows;
    return out;
  }
  Eigen::MatrixXd G;
  std::vector<Eigen::Index> pivots;
  if (beyond_dense && spaced) {
    const Eigen::MatrixXd sub =
        prior_choice_detail::rows_of(x, evenly_spaced_rows(n, rules.greedy_max_rows));
    if (!prior_choice_detail::has_low_rank(KernelEvaluator(kernel, sub), rules, G, pivots,
                                           interrupt)) {
      out.form = PriorForm::fitc;
      out.reason = PriorReason::probe_fitc;
      out.rows = fitc_rows();
      return out;
    }
  }
  if (prior_choice_detail::has_low_rank(KernelEvaluator(kernel, x), rules, G, pivots, interrupt)) {
    out.form = PriorForm::low_rank;
    out.reason = PriorReason::low_rank;
    out.rows = std::move(pivots);
    out.factor = std::move(G);
    return out;
  }
  if (!beyond_dense) {
    out.reason = PriorReason::no_low_rank;
    return out;
  }
  out.form = PriorForm::fitc;
  out.reason = PriorReason::no_low_rank_fitc;
  if (m <= static_cast<Eigen::Index>(pivots.size())) {
    out.rows.assign(pivots.begin(), pivots.begin() + m);
  } else {
    out.rows = fitc_rows();
  }
  return out;
}

}  // namespace gpsvm

#endif  // GPSVM_PRIOR_CHOICE_HPP
