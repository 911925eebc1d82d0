// The threaded loops (threads.hpp) and the priors, greedy choice and dense
// factorisations that use them, each against a plain loop:
//   * for_row_blocks visits every row once, on several threads where the
//     build has OpenMP and the caller asks for them, and calls the interrupt
//     on the calling thread only; an exception in a block reaches the caller;
//   * for_each_item runs every item once, item i on slot i mod threads;
//     an exception in an item reaches the caller;
//   * threads_for_rows() and threads_for_pass() start threads at their
//     thresholds, not below;
//   * sum_over_row_blocks is the plain sum, the same to the last bit on 1,
//     2 and 3 threads;
//   * the low-rank prior's posterior past threads_for_pass()'s threshold against
//     Woodbury's formulas written out row by row, and equal to the last bit
//     across thread counts; at sites 0 (the shortcut) the prior's marginals;
//   * the greedy choice of inducing inputs the same on any number of threads;
//   * the dense Cholesky factor, triangular solve, inverse and its diagonal
//     (dense.hpp) the same to the last bit on 1, 2 and 3 threads, and equal
//     to Eigen's own;
//   * the other block loops on blocks_in_rounds() (A'A, the Gram matrix,
//     kernel sums at new points, predictions, the dense prior's variances
//     and sequential covariance, the gradient in the widths) the same to the
//     last bit on 1, 2 and 3 threads, past the thresholds where they thread,
//     and sum_of_block_terms() the serial loop's sum to the last bit.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <gpsvm/dense.hpp>
#include <gpsvm/ep_gradient.hpp>
#include <gpsvm/ep_predict.hpp>
#include <gpsvm/ep_priors.hpp>
#include <gpsvm/fitc.hpp>
#include <gpsvm/kernels.hpp>
#include <gpsvm/lowrank.hpp>
#include <gpsvm/threads.hpp>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "check.hpp"
#include "reference.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace gpsvm_tests_threads {

namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;

// Restores the thread count a test changed.
struct ThreadCount {
  explicit ThreadCount(int count) : old(gpsvm::thread_count()) { gpsvm::set_thread_count(count); }
  ~ThreadCount() { gpsvm::set_thread_count(old); }
  int old;
};

// The most threads a round may have (OMP_THREAD_LIMIT may cap them, and a
// build without std::thread has one).
int thread_limit() { return gpsvm::thread_limit(); }

std::thread::id this_thread() { return std::this_thread::get_id(); }

}  // namespace

TEST_CASE("for_row_blocks: every row once, threads only on many rows, interrupt on the caller") {
  const Eigen::Index rows[] = {0, 1, 255, 256, 257, 1000, gpsvm::kThreadedRows - 1,
                               gpsvm::kThreadedRows + 300};
  for (int threads : {1, 2, 3}) {
    ThreadCount set(threads);
    for (Eigen::Index n : rows) {
      const std::string note = "n " + std::to_string(n) + ", threads " + std::to_string(threads);
      std::vector<int> visits(static_cast<std::size_t>(n), 0);
      std::vector<std::thread::id> worker(static_cast<std::size_t>(n));
      const std::thread::id caller = std::this_thread::get_id();
      bool interrupt_elsewhere = false;
      int interrupts = 0;
      gpsvm::for_row_blocks(n, 256, gpsvm::threads_for_rows(n), [&](Eigen::Index s, Eigen::Index len) {
        for (Eigen::Index i = s; i < s + len; ++i) {
          ++visits[static_cast<std::size_t>(i)];
          worker[static_cast<std::size_t>(i)] = this_thread();
        }
      }, [&] {
        ++interrupts;
        if (std::this_thread::get_id() != caller) interrupt_elsewhere = true;
      });
      bool once = true, several = false;
      for (Eigen::Index i = 0; i < n; ++i) {
        once = once && visits[static_cast<std::size_t>(i)] == 1;
        several = several || worker[static_cast<std::size_t>(i)] != worker[0];
      }
      CHECK_MSG(once, note);
      CHECK_MSG(!interrupt_elsewhere, note);
      CHECK_MSG(n == 0 || interrupts >= 1, note);
      // more than one thread ran exactly when the build, the setting and
      // the rows allow it
      const bool expected = gpsvm::threads_available() && threads > 1 && thread_limit() > 1 &&
                            n >= gpsvm::kThreadedRows;
      CHECK_MSG(several == expected, note);
    }
  }
  ThreadCount set(2);
  CHECK_THROWS(gpsvm::for_row_blocks(gpsvm::kThreadedRows, 256, 2, [](Eigen::Index s, Eigen::Index) {
                 if (s == 512) throw std::domain_error("block 2");
               }),
               std::domain_error);
}

TEST_CASE("threads_for_pass and threads_for_dense: threads from their thresholds on") {
  ThreadCount set(2);
  const int many = gpsvm::threads_available() ? 2 : 1;
  // 5e7 multiply-adds: 200 x 500^2 is exactly the threshold
  CHECK(gpsvm::threads_for_pass(199, 500) == 1);
  CHECK(gpsvm::threads_for_pass(200, 500) == many);
  CHECK(gpsvm::threads_for_pass(100000, 10) == 1);  // a linear kernel's rank: memory-bound
  CHECK(gpsvm::threads_for_pass(4435, 300) == many);
  CHECK(gpsvm::threads_for_dense(gpsvm::kThreadedDense - 1) == 1);
  CHECK(gpsvm::threads_for_dense(gpsvm::kThreadedDense) == many);
}

TEST_CASE("for_each_item: every item once, item i on slot i mod threads, errors to the caller") {
  for (int threads : {1, 2, 3}) {
    for (int count : {0, 1, 2, 7, 64}) {
      const std::string note = "count " + std::to_string(count) + ", threads " + std::to_string(threads);
      std::vector<std::atomic<int>> visits(static_cast<std::size_t>(count));
      for (auto& v : visits) v = 0;
      std::atomic<bool> slot_out{false};
      const int used = std::max(1, std::min({threads, count, thread_limit()}));
      // the thread that ran each item: one thread a slot, another for each slot
      std::vector<std::thread::id> ran(static_cast<std::size_t>(count));
      gpsvm::for_each_item(count, threads, [&](int i, int slot) {
        ++visits[static_cast<std::size_t>(i)];
        ran[static_cast<std::size_t>(i)] = this_thread();
        if (slot != i % used) slot_out = true;
      });
      bool once = true, own_thread = true;
      for (auto& v : visits) once = once && v == 1;
      for (int i = 0; i < count; ++i)
        for (int j = 0; j < count; ++j)
          own_thread = own_thread && ((i % used == j % used) == (ran[static_cast<std::size_t>(i)] ==
                                                                 ran[static_cast<std::size_t>(j)]));
      CHECK_MSG(once, note);
      CHECK_MSG(!slot_out, note);
      CHECK_MSG(own_thread, note);
    }
  }
  CHECK_THROWS(gpsvm::for_each_item(9, 2, [](int i, int) {
                 if (i == 5) throw std::domain_error("item 5");
               }),
               std::domain_error);
}

TEST_CASE("dense factorisations: the same bits on 1, 2 and 3 threads, and Eigen's numbers") {
  ref::Random rng(43);
  // orders below, at and past the threshold, ending inside a block and on its edge
  for (Eigen::Index n : {gpsvm::kThreadedDense - 1, gpsvm::kThreadedDense, Eigen::Index(600),
                         Eigen::Index(640)}) {
    const std::string note = "n " + std::to_string(n);
    const MatrixXd a = rng.uniform_matrix(n + 10, n, -1.0, 1.0);
    MatrixXd spd = a.transpose() * a;
    spd.diagonal().array() += 0.5;
    const MatrixXd rhs = rng.uniform_matrix(n, 300, -1.0, 1.0);
    std::vector<MatrixXd> factors, solved, inverses;
    std::vector<VectorXd> diagonals;
    for (int threads : {1, 2, 3}) {
      ThreadCount set(threads);
      MatrixXd l = spd;
      CHECK_MSG(gpsvm::cholesky_in_place(l), note);
      l.triangularView<Eigen::StrictlyUpper>().setZero();
      MatrixXd x = rhs;
      gpsvm::solve_lower_in_place(l, x);
      factors.push_back(l);
      solved.push_back(x);
      diagonals.push_back(gpsvm::inverse_diagonal_from_cholesky(l));
      inverses.push_back(gpsvm::inverse_from_cholesky(l));  // (and lower_inverse())
    }
    CHECK_MSG(factors[0] == factors[1] && factors[0] == factors[2], note);
    CHECK_MSG(solved[0] == solved[1] && solved[0] == solved[2], note);
    CHECK_MSG(diagonals[0] == diagonals[1] && diagonals[0] == diagonals[2], note);
    CHECK_MSG(inverses[0] == inverses[1] && inverses[0] == inverses[2], note);
    const Eigen::LLT<MatrixXd> llt(spd);
    const MatrixXd eigen_l = llt.matrixL();
    const double scale = eigen_l.cwiseAbs().maxCoeff();
    CHECK_NEAR_MSG((factors[0] - eigen_l).cwiseAbs().maxCoeff() / scale, 0.0, 1e-12, note);
    const MatrixXd eigen_x = eigen_l.triangularView<Eigen::Lower>().solve(rhs);
    CHECK_NEAR_MSG((solved[0] - eigen_x).cwiseAbs().maxCoeff() / eigen_x.cwiseAbs().maxCoeff(), 0.0,
                   1e-10, note);
    const MatrixXd eigen_inverse = llt.solve(MatrixXd::Identity(n, n));
    const VectorXd eigen_d = eigen_inverse.diagonal();
    CHECK_NEAR_MSG(((diagonals[0] - eigen_d).array() / eigen_d.array()).abs().maxCoeff(), 0.0,
                   1e-10, note);
    CHECK_NEAR_MSG((inverses[0] - eigen_inverse).cwiseAbs().maxCoeff() /
                       eigen_inverse.cwiseAbs().maxCoeff(),
                   0.0, 1e-10, note);
  }
}

TEST_CASE("block loops on blocks_in_rounds: the same bits on 1, 2 and 3 threads") {
  ref::Random rng(53);
  const int many = gpsvm::threads_available() && thread_limit() > 1 ? 2 : 1;
  // sum_of_block_terms: the serial loop's sum, whatever the threads
  const MatrixXd terms = rng.uniform_matrix(3, 1000, -1.0, 1.0);
  VectorXd serial = VectorXd::Zero(3);
  for (Eigen::Index s = 0; s < 1000; s += 64)
    serial += terms.middleCols(s, std::min<Eigen::Index>(64, 1000 - s)).rowwise().sum();
  // A'A, the Gram matrix, kernel sums at new points
  const MatrixXd a = rng.uniform_matrix(1000, 320, -1.0, 1.0);
  const MatrixXd xg = rng.uniform_matrix(600, 2, -3.0, 3.0);
  const gpsvm::Kernel rbf = gpsvm::Kernel::rbf(0.7);
  const gpsvm::KernelEvaluator evg(rbf, xg);
  const MatrixXd xc = rng.uniform_matrix(4000, 2, -3.0, 3.0), zc = rng.uniform_matrix(5000, 2, -3.0, 3.0);
  const VectorXd wc = rng.uniform_matrix(4000, 1, -1.0, 1.0);
  const gpsvm::KernelEvaluator evc(rbf, xc);
  // the dense prior: sites of every kind (0, loose, pinned), its posterior,
  // the sequential schedule's covariance, predictions at 400 new points
  const MatrixXd K = evg.fast_gram();
  VectorXd tau(600), nu(600);
  for (Eigen::Index i = 0; i < 600; ++i) {
    tau[i] = i % 7 == 0 ? 0.0 : std::exp(6.0 * rng.uniform(-1.0, 1.0));
    nu[i] = rng.normal();
  }
  const MatrixXd zp = rng.uniform_matrix(400, 2, -3.0, 3.0);
  // the gradient in the widths: 1200 points of 40 inputs
  const MatrixXd xw = rng.uniform_matrix(1200, 40, -1.0, 1.0);
  const MatrixXd R = [&] {
    MatrixXd f = rng.uniform_matrix(1200, 1200, -0.01, 0.01);
    return MatrixXd(f * f.transpose());
  }();
  const MatrixXd w1 = rng.uniform_matrix(1200, 1, -1.0, 1.0);
  const gpsvm::Kernel wide = gpsvm::Kernel::rbf(6.0);
  std::vector<VectorXd> sums, crossed, variances, means, gradients;
  std::vector<MatrixXd> products, grams, sigmas;
  for (int threads : {1, 2, 3}) {
    ThreadCount set(threads);
    CHECK(threads == 1 || many == 1 || gpsvm::threads_for_dense(600) > 1);  // threads used
    gpsvm::InterruptPoll none(nullptr);
    sums.push_back(gpsvm::sum_of_block_terms(1000, 64, threads, 3, none,
                                             [&](Eigen::Index s, Eigen::Index len) {
      return VectorXd(terms.middleCols(s, len).rowwise().sum());
    }));
    products.push_back(gpsvm::crossprod(a));
    grams.push_back(evg.fast_gram());
    crossed.push_back(evc.cross_times(zc, wc));
    gpsvm::DensePrior prior(K);
    gpsvm::EpResult r;
    prior.posterior(VectorXd::Constant(600, 1.0), nu, r);  // loose sites: the direct route next
    prior.posterior(tau, nu, r);
    variances.push_back(r.variance);
    prior.begin_sequential(r, nu);
    MatrixXd sigma(600, 1);
    for (Eigen::Index i = 0; i < 600; ++i) {
      double v, m;
      prior.marginal(i, &v, &m);
      sigma(i, 0) = v;
    }
    prior.end_sequential();
    sigmas.push_back(sigma);
    const gpsvm::EpFitView view{rbf, xg, r.weights, tau, r.chol};
    const gpsvm::EpPrediction p = gpsvm::ep_predict(view, zp, true);
    means.push_back(p.mean);
    means.push_back(p.variance);
    gradients.push_back(gpsvm::ep_per_input_log_width_gradient(xw, wide, w1, R, 1.0));
  }
  CHECK(sums[0] == serial && sums[1] == serial && sums[2] == serial);
  const MatrixXd ata = a.transpose() * a;
  CHECK_NEAR((products[0] - ata).cwiseAbs().maxCoeff() / ata.cwiseAbs().maxCoeff(), 0.0, 1e-13);
  CHECK(products[0] == products[1] && products[0] == products[2]);
  CHECK(grams[0] == grams[1] && grams[0] == grams[2]);
  CHECK_NEAR(grams[0](3, 17), std::exp(-(xg.row(3) - xg.row(17)).squaredNorm() / (2.0 * 0.49)),
             1e-12);
  CHECK(crossed[0] == crossed[1] && crossed[0] == crossed[2]);
  double plain = 0.0;
  for (Eigen::Index j = 0; j < 4000; ++j)
    plain += wc[j] * std::exp(-(zc.row(11) - xc.row(j)).squaredNorm() / (2.0 * 0.49));
  CHECK_NEAR(crossed[0][11], plain, 1e-10 * (1.0 + std::fabs(plain)));
  CHECK(variances[0] == variances[1] && variances[0] == variances[2]);
  CHECK(sigmas[0] == sigmas[1] && sigmas[0] == sigmas[2]);
  CHECK_NEAR((sigmas[0] - variances[0]).cwiseAbs().maxCoeff(), 0.0, 1e-8);
  for (int k = 0; k < 2; ++k)
    CHECK_MSG(means[k] == means[2 + k] && means[k] == means[4 + k], k ? "variance" : "mean");
  CHECK(gradients[0] == gradients[1] && gradients[0] == gradients[2]);
}

TEST_CASE("sum_over_row_blocks: the plain sum, the same bits on 1, 2 and 3 threads") {
  ref::Random rng(31);
  for (Eigen::Index n : {Eigen::Index(300), gpsvm::kThreadedRows + 777}) {
    const MatrixXd X = rng.uniform_matrix(n, 6, -1.0, 1.0);
    MatrixXd plain = MatrixXd::Identity(6, 6);
    for (Eigen::Index i = 0; i < n; ++i) plain += X.row(i).transpose() * X.row(i);
    std::vector<MatrixXd> sums;
    for (int threads : {1, 2, 3}) {
      ThreadCount set(threads);
      MatrixXd total = MatrixXd::Identity(6, 6);
      gpsvm::sum_over_row_blocks(n, 256, gpsvm::threads_for_rows(n), total, [&](Eigen::Index s, Eigen::Index len,
                                                    MatrixXd& partial) {
        partial.noalias() += X.middleRows(s, len).transpose() * X.middleRows(s, len);
      });
      CHECK_NEAR_MSG((total - plain).cwiseAbs().maxCoeff() / plain.cwiseAbs().maxCoeff(), 0.0,
                     1e-13, "n " + std::to_string(n));
      sums.push_back(total);
    }
    CHECK(sums[0] == sums[1] && sums[0] == sums[2]);
  }
}

TEST_CASE("low-rank prior on threads: Woodbury row by row, the same bits on any threads") {
  const Eigen::Index n = 8000, m = 80;  // n m^2 past kThreadedPassWork
  CHECK(static_cast<double>(n) * m * m >= gpsvm::kThreadedPassWork);
  ref::Random rng(37);
  const MatrixXd x = rng.uniform_matrix(n, 2, -3.0, 3.0);
  const MatrixXd z = rng.uniform_matrix(m, 2, -3.0, 3.0);
  const gpsvm::InducingBasis b = gpsvm::inducing_basis(gpsvm::Kernel::rbf(1.2), x, z, 0.05);
  VectorXd tau(n), nu(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    tau[i] = i % 97 == 0 ? 0.0 : std::exp(3.0 * rng.uniform(-1.0, 1.0));
    nu[i] = rng.normal();
  }
  // Woodbury: t = 1 / (1 + lambda tau), W = tau t, A = I + sum_i W_i g_i g_i',
  // Sigma_ii = lambda_i t_i + t_i^2 g_i' A^-1 g_i, mu = t (G A^-1 G' (t nu)) + lambda t nu
  const VectorXd t = (1.0 + b.lambda.array() * tau.array()).inverse().matrix();
  MatrixXd A = MatrixXd::Identity(m, m);
  VectorXd h = VectorXd::Zero(m);
  for (Eigen::Index i = 0; i < n; ++i) {
    A += tau[i] * t[i] * b.G.row(i).transpose() * b.G.row(i);
    h += t[i] * nu[i] * b.G.row(i).transpose();
  }
  const MatrixXd P = A.inverse();
  const VectorXd beta = P * h;
  std::vector<gpsvm::EpPosterior> posts;
  for (int threads : {1, 2}) {
    ThreadCount set(threads);
    gpsvm::LowRankPrior prior(b.G, b.lambda);
    gpsvm::EpPosterior post;
    prior.posterior(tau, nu, post);
    double var_gap = 0.0, mean_gap = 0.0, q_gap = 0.0;
    for (Eigen::Index i = 0; i < n; ++i) {
      const VectorXd g = b.G.row(i).transpose();
      const double q = g.dot(P * g);  // kept in low_rank_variance
      const double var = b.lambda[i] * t[i] + t[i] * t[i] * q;
      const double mean = t[i] * g.dot(beta) + b.lambda[i] * t[i] * nu[i];
      var_gap = std::max(var_gap, std::fabs(post.variance[i] - var) / var);
      mean_gap = std::max(mean_gap, std::fabs(post.mean[i] - mean) / (1.0 + std::fabs(mean)));
      q_gap = std::max(q_gap, std::fabs(post.low_rank_variance[i] - q) / q);
    }
    CHECK_NEAR_MSG(var_gap, 0.0, 1e-10, "threads " + std::to_string(threads));
    CHECK_NEAR_MSG(mean_gap, 0.0, 1e-10, "threads " + std::to_string(threads));
    CHECK_NEAR_MSG(q_gap, 0.0, 1e-10, "threads " + std::to_string(threads));
    posts.push_back(post);
  }
  CHECK(posts[0].variance == posts[1].variance && posts[0].mean == posts[1].mean &&
        posts[0].weights == posts[1].weights && posts[0].chol == posts[1].chol &&
        posts[0].log_det_half == posts[1].log_det_half &&
        posts[0].low_rank_variance == posts[1].low_rank_variance);
  // all sites at 0: the prior's marginals, |g_i|^2 + lambda_i, and nothing else
  gpsvm::LowRankPrior prior(b.G, b.lambda);
  gpsvm::EpPosterior at_zero;
  prior.posterior(VectorXd::Zero(n), VectorXd::Zero(n), at_zero);
  CHECK_NEAR((at_zero.variance - (b.G.rowwise().squaredNorm() + b.lambda)).cwiseAbs().maxCoeff(),
             0.0, 1e-14);
  CHECK_NEAR((at_zero.low_rank_variance - b.G.rowwise().squaredNorm()).cwiseAbs().maxCoeff(), 0.0,
             1e-14);
  CHECK(at_zero.mean.isZero(0.0) && at_zero.weights.isZero(0.0) &&
        at_zero.low_rank_mean.size() == m && at_zero.low_rank_mean.isZero(0.0) &&
        at_zero.log_det_half == 0.0 && at_zero.chol.isIdentity(0.0));
}

TEST_CASE("greedy inducing inputs: the same choice and factor on any number of threads") {
  const Eigen::Index n = 2 * gpsvm::kThreadedRows + 5;
  ref::Random rng(41);
  const MatrixXd x = rng.uniform_matrix(n, 3, -2.0, 2.0);
  const gpsvm::KernelEvaluator ev(gpsvm::Kernel::rbf(0.8), x);
  std::vector<MatrixXd> factors;
  std::vector<std::vector<Eigen::Index>> chosen;
  for (int threads : {1, 2, 3}) {
    ThreadCount set(threads);
    MatrixXd G;
    std::vector<Eigen::Index> pivots;
    gpsvm::pivoted_cholesky(ev, 1e-12, 40, G, pivots);
    factors.push_back(G);
    chosen.push_back(pivots);
  }
  CHECK(chosen[0].size() == 40);
  CHECK(chosen[0] == chosen[1] && chosen[0] == chosen[2]);
  CHECK(factors[0] == factors[1] && factors[0] == factors[2]);
  // and the factor is K's at the pivots: G G' reproduces those columns
  const MatrixXd K_np =
      gpsvm::KernelEvaluator(gpsvm::Kernel::rbf(0.8), ev.points(chosen[0])).cross(x);
  MatrixXd at_pivots(40, 40);
  for (int j = 0; j < 40; ++j) at_pivots.row(j) = factors[0].row(chosen[0][static_cast<std::size_t>(j)]);
  CHECK_NEAR((factors[0] * at_pivots.transpose() - K_np).cwiseAbs().maxCoeff(), 0.0, 1e-10);
}

}  // namespace gpsvm_tests_threads
