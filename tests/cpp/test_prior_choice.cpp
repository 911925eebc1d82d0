// The prior's representation (prior_choice.hpp, choose_prior()) alone:
//   * a kernel matrix of known rank (the quadratic kernel on two inputs has
//     rank 6, its feature space's dimension) is low rank, with a factor
//     that reproduces the dense matrix;
//   * a full-rank one (a narrow Gaussian kernel on scattered points) stays
//     dense up to dense_max_n rows and is FITC beyond, on the greedy rule's
//     rows; the probe's rows decide the same where they have no low rank;
//   * few rows, rank_tol = 0 and a cap below the rank give the dense matrix.
#include <gpsvm/kernels.hpp>
#include <gpsvm/lowrank.hpp>
#include <gpsvm/prior_choice.hpp>
#include <algorithm>
#include <set>
#include <stdexcept>
#include <vector>

#include "check.hpp"
#include "reference.hpp"

namespace gpsvm_tests_prior_choice {

namespace {

using Eigen::MatrixXd;
using gpsvm::PriorForm;
using gpsvm::PriorReason;

gpsvm::PriorRules rules(double rank_tol, Eigen::Index low_rank_min_n, Eigen::Index max_rank,
                        Eigen::Index dense_max_n, Eigen::Index inducing_count) {
  // (the cap at most half the rows, as the R layer asks)
  return {rank_tol, low_rank_min_n, max_rank, true, dense_max_n, inducing_count};
}

}  // namespace

TEST_CASE("prior choice: a kernel matrix of rank 6 is low rank, its factor the matrix") {
  ref::Random rng(31);
  const MatrixXd x = rng.uniform_matrix(200, 2, -1.0, 1.0);
  const gpsvm::Kernel k = gpsvm::Kernel::polynomial(2, 0.5, 1.0);
  // beyond the dense limit too: a low rank comes first
  for (const Eigen::Index dense_max_n : {Eigen::Index(1000), Eigen::Index(50)}) {
    const gpsvm::PriorChoice c =
        gpsvm::choose_prior(k, x, rules(1e-12, 100, 40, dense_max_n, 30));
    CHECK(c.form == PriorForm::low_rank && c.reason == PriorReason::low_rank);
    CHECK_MSG(c.rows.size() == 6, "rank " + std::to_string(c.rows.size()));
    const MatrixXd K = gpsvm::kernel_matrix(k, x);
    CHECK(c.factor.rows() == 200 && c.factor.cols() == 6);
    CHECK_NEAR((K - c.factor * c.factor.transpose()).cwiseAbs().maxCoeff(), 0.0,
               1e-9 * K.diagonal().maxCoeff());
  }
  // a cap below the rank: no low rank, so dense within the limit
  const gpsvm::PriorChoice capped = gpsvm::choose_prior(k, x, rules(1e-12, 100, 5, 1000, 30));
  CHECK(capped.form == PriorForm::dense && capped.reason == PriorReason::no_low_rank);
}

TEST_CASE("prior choice: a full-rank kernel matrix is dense within the limit, FITC beyond") {
  ref::Random rng(37);
  const MatrixXd x = rng.uniform_matrix(240, 5, -2.0, 2.0);
  const gpsvm::Kernel k = gpsvm::Kernel::rbf(0.3);
  const gpsvm::PriorChoice within = gpsvm::choose_prior(k, x, rules(1e-13, 100, 40, 300, 25));
  CHECK(within.form == PriorForm::dense && within.reason == PriorReason::no_low_rank);
  CHECK(within.rows.empty() && within.factor.size() == 0);
  const gpsvm::PriorChoice beyond = gpsvm::choose_prior(k, x, rules(1e-13, 100, 40, 200, 25));
  CHECK(beyond.form == PriorForm::fitc && beyond.reason == PriorReason::no_low_rank_fitc);
  // the greedy rule's first 25 rows, distinct
  CHECK(beyond.rows == gpsvm::greedy_inducing(gpsvm::KernelEvaluator(k, x), 25, gpsvm::kInducingTol));
  CHECK(std::set<Eigen::Index>(beyond.rows.begin(), beyond.rows.end()).size() == 25);
  // more inducing inputs than the test took pivots: the greedy rule goes on
  const gpsvm::PriorChoice more = gpsvm::choose_prior(k, x, rules(1e-13, 100, 40, 200, 60));
  CHECK(more.rows == gpsvm::greedy_inducing(gpsvm::KernelEvaluator(k, x), 60, gpsvm::kInducingTol));
  // beyond greedy_max_rows = 120 rows, the test on 120 evenly spaced rows
  // decides FITC; the greedy rule looks at max(120, 4 * 25) of them
  gpsvm::PriorRules spaced = rules(1e-13, 100, 40, 200, 25);
  spaced.greedy_max_rows = 120;
  const gpsvm::PriorChoice probed = gpsvm::choose_prior(k, x, spaced);
  CHECK(probed.form == PriorForm::fitc && probed.reason == PriorReason::probe_fitc);
  const std::vector<Eigen::Index> among = gpsvm::evenly_spaced_rows(240, 120);
  CHECK(probed.rows == gpsvm::greedy_rows(k, x, among, 25, gpsvm::kInducingTol));
  for (Eigen::Index r : probed.rows) CHECK(std::find(among.begin(), among.end(), r) != among.end());
  // no rank test: FITC beyond dense_max_n on one inducing input per 20 rows
  gpsvm::PriorRules untested = rules(1e-13, 100, 40, 200, 25);
  untested.test_rank = false;
  untested.rows_per_inducing = 20;
  const gpsvm::PriorChoice fitc = gpsvm::choose_prior(k, x, untested);
  CHECK(fitc.form == PriorForm::fitc && fitc.reason == PriorReason::untested_fitc);
  CHECK(fitc.rows == gpsvm::greedy_inducing(gpsvm::KernelEvaluator(k, x), 12, gpsvm::kInducingTol));
  untested.dense_max_n = 240;
  CHECK(gpsvm::choose_prior(k, x, untested).reason == PriorReason::untested_dense);
}

TEST_CASE("prior choice: few rows or rank_tol = 0 keep the dense matrix") {
  ref::Random rng(41);
  const MatrixXd x = rng.uniform_matrix(80, 2, -1.0, 1.0);
  const gpsvm::Kernel k = gpsvm::Kernel::polynomial(2, 0.5, 1.0);  // rank 6
  const gpsvm::PriorChoice few = gpsvm::choose_prior(k, x, rules(1e-12, 100, 40, 50, 30));
  CHECK(few.form == PriorForm::dense && few.reason == PriorReason::few_rows);
  const gpsvm::PriorChoice off = gpsvm::choose_prior(k, x, rules(0.0, 10, 40, 50, 30));
  CHECK(off.form == PriorForm::dense && off.reason == PriorReason::no_rank_test);
  // at most half the rows: 6 pivots of 10 rows are too many
  const gpsvm::PriorChoice half =
      gpsvm::choose_prior(k, x.topRows(10), rules(1e-12, 1, 40, 50, 30));
  CHECK(half.form == PriorForm::dense);
  CHECK_THROWS(gpsvm::choose_prior(k, x, rules(2.0, 10, 40, 50, 30)),
               std::invalid_argument);
}

TEST_CASE("prior choice: evenly spaced rows are the rounded points of an even grid") {
  // against the grid written out: 1 + k (n - 1) / (size - 1), ties to even
  CHECK((gpsvm::evenly_spaced_rows(5, 9) == std::vector<Eigen::Index>{0, 1, 2, 3, 4}));
  CHECK((gpsvm::evenly_spaced_rows(10, 4) == std::vector<Eigen::Index>{0, 3, 6, 9}));
  // 1, 2.5, 4, 5.5, 7: 2.5 -> 2 and 5.5 -> 6 (to even)
  CHECK((gpsvm::evenly_spaced_rows(7, 5) == std::vector<Eigen::Index>{0, 1, 3, 5, 6}));
  CHECK((gpsvm::evenly_spaced_rows(7, 1) == std::vector<Eigen::Index>{0}));
  const std::vector<Eigen::Index> many = gpsvm::evenly_spaced_rows(100003, 20000);
  CHECK(many.size() == 20000 && many.front() == 0 && many.back() == 100002);
  for (std::size_t i = 1; i < many.size(); ++i) CHECK(many[i] > many[i - 1]);
}

}  // namespace gpsvm_tests_prior_choice
