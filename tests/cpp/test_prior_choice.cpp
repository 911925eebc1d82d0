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

const std::vector<Eigen::Index> kAll;

}  // namespace

TEST_CASE("prior choice: a kernel matrix of rank 6 is low rank, its factor the matrix") {
  ref::Random rng(31);
  const MatrixXd x = rng.uniform_matrix(200, 2, -1.0, 1.0);
  const gpsvm::Kernel k = gpsvm::Kernel::polynomial(2, 0.5, 1.0);
  // beyond the dense limit too: a low rank comes first
  for (const Eigen::Index dense_max_n : {Eigen::Index(1000), Eigen::Index(50)}) {
    const gpsvm::PriorChoice c =
        gpsvm::choose_prior(k, x, rules(1e-12, 100, 40, dense_max_n, 30), kAll, kAll);
    CHECK(c.form == PriorForm::low_rank && c.reason == PriorReason::low_rank);
    CHECK_MSG(c.rows.size() == 6, "rank " + std::to_string(c.rows.size()));
    const MatrixXd K = gpsvm::kernel_matrix(k, x);
    CHECK(c.factor.rows() == 200 && c.factor.cols() == 6);
    CHECK_NEAR((K - c.factor * c.factor.transpose()).cwiseAbs().maxCoeff(), 0.0,
               1e-9 * K.diagonal().maxCoeff());
  }
  // a cap below the rank: no low rank, so dense within the limit
  const gpsvm::PriorChoice capped = gpsvm::choose_prior(k, x, rules(1e-12, 100, 5, 1000, 30), kAll, kAll);
  CHECK(capped.form == PriorForm::dense && capped.reason == PriorReason::no_low_rank);
}

TEST_CASE("prior choice: a full-rank kernel matrix is dense within the limit, FITC beyond") {
  ref::Random rng(37);
  const MatrixXd x = rng.uniform_matrix(240, 5, -2.0, 2.0);
  const gpsvm::Kernel k = gpsvm::Kernel::rbf(0.3);
  const gpsvm::PriorChoice within = gpsvm::choose_prior(k, x, rules(1e-13, 100, 40, 300, 25), kAll, kAll);
  CHECK(within.form == PriorForm::dense && within.reason == PriorReason::no_low_rank);
  CHECK(within.rows.empty() && within.factor.size() == 0);
  const gpsvm::PriorChoice beyond = gpsvm::choose_prior(k, x, rules(1e-13, 100, 40, 200, 25), kAll, kAll);
  CHECK(beyond.form == PriorForm::fitc && beyond.reason == PriorReason::no_low_rank_fitc);
  // the greedy rule's first 25 rows, distinct
  CHECK(beyond.rows == gpsvm::greedy_inducing(gpsvm::KernelEvaluator(k, x), 25, gpsvm::kInducingTol));
  CHECK(std::set<Eigen::Index>(beyond.rows.begin(), beyond.rows.end()).size() == 25);
  // more inducing inputs than the test took pivots: the greedy rule goes on
  const gpsvm::PriorChoice more = gpsvm::choose_prior(k, x, rules(1e-13, 100, 40, 200, 60), kAll, kAll);
  CHECK(more.rows == gpsvm::greedy_inducing(gpsvm::KernelEvaluator(k, x), 60, gpsvm::kInducingTol));
  // a probe of every other row without a low rank decides FITC, among candidates
  std::vector<Eigen::Index> probe, candidates;
  for (Eigen::Index i = 0; i < 240; i += 2) probe.push_back(i);
  for (Eigen::Index i = 1; i < 240; i += 3) candidates.push_back(i);
  const gpsvm::PriorChoice probed =
      gpsvm::choose_prior(k, x, rules(1e-13, 100, 40, 200, 25), probe, candidates);
  CHECK(probed.form == PriorForm::fitc && probed.reason == PriorReason::probe_fitc);
  CHECK(probed.rows.size() == 25);
  for (Eigen::Index r : probed.rows) CHECK(r % 3 == 1);
}

TEST_CASE("prior choice: few rows or rank_tol = 0 keep the dense matrix") {
  ref::Random rng(41);
  const MatrixXd x = rng.uniform_matrix(80, 2, -1.0, 1.0);
  const gpsvm::Kernel k = gpsvm::Kernel::polynomial(2, 0.5, 1.0);  // rank 6
  const gpsvm::PriorChoice few = gpsvm::choose_prior(k, x, rules(1e-12, 100, 40, 50, 30), kAll, kAll);
  CHECK(few.form == PriorForm::dense && few.reason == PriorReason::few_rows);
  const gpsvm::PriorChoice off = gpsvm::choose_prior(k, x, rules(0.0, 10, 40, 50, 30), kAll, kAll);
  CHECK(off.form == PriorForm::dense && off.reason == PriorReason::no_rank_test);
  // at most half the rows: 6 pivots of 10 rows are too many
  const gpsvm::PriorChoice half =
      gpsvm::choose_prior(k, x.topRows(10), rules(1e-12, 1, 40, 50, 30), kAll, kAll);
  CHECK(half.form == PriorForm::dense);
  CHECK_THROWS(gpsvm::choose_prior(k, x, rules(2.0, 10, 40, 50, 30), kAll, kAll),
               std::invalid_argument);
}

}  // namespace gpsvm_tests_prior_choice
