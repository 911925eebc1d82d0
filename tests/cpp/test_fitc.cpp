// The inducing-point (FITC) prior (fitc.hpp, LowRankPrior with a diagonal in
// ep_priors.hpp, fitc_predict in ep_predict.hpp), each against an
// independent computation:
//   * K = G G' + diag(lambda) given densely and as a factor with a diagonal
//     give the same fit (both schedules, two likelihoods);
//   * with the training inputs as inducing inputs FITC is the dense model
//     (up to the documented jitter);
//   * predictions against the FITC conditional written with dense inverses;
//   * the kernel part of the evidence gradient against central differences
//     (one block of rows and several, with and without a constant in K);
//   * the pivoted Cholesky factor grows only as far as the rank it reaches,
//     and the greedy choice never takes a duplicate;
//   * FITC on a factor's pivots made from the factor is the dense model.
#include <cmath>
#include <gpsvm/ep_engine.hpp>
#include <gpsvm/ep_predict.hpp>
#include <gpsvm/ep_priors.hpp>
#include <gpsvm/fitc.hpp>
#include <gpsvm/kernels.hpp>
#include <gpsvm/likelihoods.hpp>
#include <gpsvm/lowrank.hpp>
#include <limits>
#include <string>
#include <vector>

#include "check.hpp"
#include "fixtures.hpp"
#include "reference.hpp"

namespace gpsvm_tests_fitc {

namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;
using fixture::ep_control;
using ref::gap;

const gpsvm::EpSchedule kParallel = gpsvm::EpSchedule::parallel;
const gpsvm::EpSchedule kSequential = gpsvm::EpSchedule::sequential;

// A wiggly function of two inputs on [-2, 2]^2, with +-1 labels of its sign.
using Data = fixture::LabelledSample;

Data wiggly(int n, std::uint32_t seed) {
  return fixture::with_sign_labels(
      fixture::sample(n, 2, -2.0, 2.0, seed, [](const auto& u, ref::Random& rng) {
        return std::sin(3.0 * u(0)) * std::cos(2.0 * u(1)) + 0.1 * rng.normal();
      }));
}

// The FITC covariance written out densely from a basis.
MatrixXd fitc_dense(const gpsvm::InducingBasis& b) {
  MatrixXd K = b.G * b.G.transpose();
  K.diagonal() += b.lambda;
  return K;
}

}  // namespace

TEST_CASE("FITC: a factor with a diagonal gives the dense fit of G G' + diag(lambda)") {
  const gpsvm::Kernel kernel = gpsvm::Kernel::rbf(0.7);
  const Data d = wiggly(25, 3);
  const MatrixXd z = d.x.topRows(5);
  for (double extra : {0.0, 0.3}) {
    const gpsvm::InducingBasis b = gpsvm::inducing_basis(kernel, d.x, z, extra);
    CHECK(b.lambda.minCoeff() >= 0.0);
    const MatrixXd K = fitc_dense(b);
    for (gpsvm::EpSchedule schedule : {kParallel, kSequential}) {
      const std::string note = std::string(schedule == kParallel ? "parallel" : "sequential") +
                               ", extra " + std::to_string(extra);
      const gpsvm::EpControl c = ep_control(schedule);
      const gpsvm::EpsilonInsensitive eps(5.0, 0.1);
      const gpsvm::EpResult dense = gpsvm::ep_fit(K, d.y, eps, c, nullptr);
      const gpsvm::EpResult sparse = gpsvm::ep_fit_inducing(b, d.y, eps, c, nullptr);
      CHECK_MSG(dense.status.converged && sparse.status.converged, note);
      CHECK_NEAR_MSG(gap(sparse.weights, dense.weights), 0.0, 1e-9, note + ": weights");
      CHECK_NEAR_MSG(gap(sparse.mean, dense.mean), 0.0, 1e-9, note + ": means");
      CHECK_NEAR_MSG(gap(sparse.variance, dense.variance), 0.0, 1e-9, note + ": variances");
      CHECK_NEAR_MSG(sparse.log_evidence, dense.log_evidence, 1e-9, note + ": evidence");
      CHECK_MSG(sparse.chol.rows() == 5, note + ": m x m only");
      const gpsvm::ProbitFlip probit(0.05, 0.0);
      const gpsvm::EpResult dp = gpsvm::ep_fit(K, d.label, probit, c, nullptr);
      const gpsvm::EpResult sp = gpsvm::ep_fit_inducing(b, d.label, probit, c, nullptr);
      CHECK_NEAR_MSG(gap(sp.mean, dp.mean), 0.0, 1e-9, note + ": probit means");
      CHECK_NEAR_MSG(sp.log_evidence, dp.log_evidence, 1e-9, note + ": probit evidence");
    }
  }
}

TEST_CASE("FITC: with the training inputs as inducing inputs it is the dense model") {
  const Data d = wiggly(20, 5);
  const gpsvm::Kernel kernel = gpsvm::Kernel::rbf(0.5);
  const gpsvm::InducingBasis b = gpsvm::inducing_basis(kernel, d.x, d.x);
  const MatrixXd K = gpsvm::kernel_matrix(kernel, d.x);
  // the jitter 1e-8 (mean diagonal 1) moves K by about that much
  CHECK_NEAR((fitc_dense(b) - K).cwiseAbs().maxCoeff(), 0.0, 2e-8);
  const gpsvm::EpsilonInsensitive eps(5.0, 0.1);
  const gpsvm::EpResult dense = gpsvm::ep_fit(K, d.y, eps, ep_control(kParallel), nullptr);
  const gpsvm::EpResult sparse = gpsvm::ep_fit_inducing(b, d.y, eps, ep_control(kParallel), nullptr);
  CHECK_NEAR(gap(sparse.mean, dense.mean), 0.0, 1e-6);
  CHECK_NEAR(sparse.log_evidence, dense.log_evidence, 1e-6);
}

TEST_CASE("FITC: predictions are the FITC conditional, by dense inverses") {
  const Data d = wiggly(18, 7);
  const gpsvm::Kernel kernel = gpsvm::Kernel::rbf(0.6);
  const MatrixXd z = d.x.middleRows(3, 4);
  const gpsvm::InducingBasis b = gpsvm::inducing_basis(kernel, d.x, z, 0.2);
  const gpsvm::ProbitFlip probit(0.0, 0.0);
  const gpsvm::EpResult r = gpsvm::ep_fit_inducing(b, d.label, probit, ep_control(kParallel), nullptr);
  const gpsvm::InducingSummary s = gpsvm::inducing_summary(b, r);
  const gpsvm::InducingFitView view{kernel, b.inducing, s.weights, b.chol, r.chol};
  ref::Random rng(9);
  const MatrixXd xs = rng.uniform_matrix(6, 2, -2.5, 2.5);
  const gpsvm::EpPrediction p = gpsvm::fitc_predict(view, xs, true);
  // Q_*n = K_*z (K_zz + jI)^-1 K_zn; mean Q_*n (K + S^-1)^-1 S^-1 nu,
  // variance k** - Q_*n (K + S^-1)^-1 Q_n*
  MatrixXd Kzz = gpsvm::kernel_matrix(kernel, z);
  Kzz.diagonal().array() += b.jitter;
  const MatrixXd Ksz = gpsvm::kernel_matrix(kernel, xs, z);
  const MatrixXd Knz = gpsvm::kernel_matrix(kernel, d.x, z);
  const MatrixXd Qsn = Ksz * Kzz.inverse() * Knz.transpose();
  MatrixXd A = fitc_dense(b);
  A.diagonal() += r.site_precision.cwiseInverse();
  const MatrixXd Ainv = A.inverse();
  const VectorXd mean = Qsn * Ainv * r.site_nu.cwiseQuotient(r.site_precision);
  const VectorXd var = (MatrixXd::Ones(6, 1)).col(0) - (Qsn * Ainv * Qsn.transpose()).diagonal();
  CHECK_NEAR(gap(p.mean, mean), 0.0, 1e-9);
  CHECK_NEAR(gap(p.variance, var), 0.0, 1e-9);
  // at the training inputs, the summary's fitted values are the same formula
  const gpsvm::EpPrediction at_x = gpsvm::fitc_predict(view, d.x, true);
  CHECK_NEAR(gap(at_x.mean, s.fitted), 0.0, 1e-10);
  CHECK_NEAR(gap(at_x.variance, s.fitted_variance), 0.0, 1e-10);
  // the summary reads the posterior's q_i: a result without them is refused
  gpsvm::EpResult without_q = r;
  without_q.low_rank_variance.resize(0);
  CHECK_THROWS(gpsvm::inducing_summary(b, without_q), std::logic_error);
  // a damaged fit is an error
  const VectorXd short_w = s.weights.head(2);
  const gpsvm::InducingFitView bad{kernel, b.inducing, short_w, b.chol, r.chol};
  CHECK_THROWS(gpsvm::fitc_predict(bad, xs, true), std::invalid_argument);
}

TEST_CASE("FITC: the kernel part of the evidence gradient by central differences") {
  const Data d = wiggly(30, 11);
  const MatrixXd z = d.x.topRows(6);
  const gpsvm::ProbitFlip probit(0.0, 0.0);
  const gpsvm::EpControl c = ep_control(kParallel, 1e-13);
  const auto evidence = [&](double sigma, double noise) {
    const gpsvm::InducingBasis b = gpsvm::inducing_basis(gpsvm::Kernel::rbf(sigma), d.x, z, noise);
    return gpsvm::ep_fit_inducing(b, d.label, probit, c, nullptr).log_evidence;
  };
  const double sigma = 0.8, noise = 0.3, h = 1e-5;
  const gpsvm::Kernel kernel = gpsvm::Kernel::rbf(sigma);
  const gpsvm::InducingBasis b = gpsvm::inducing_basis(kernel, d.x, z, noise);
  const gpsvm::EpResult r = gpsvm::ep_fit_inducing(b, d.label, probit, c, nullptr);
  const gpsvm::InducingKernelGradient g = gpsvm::inducing_kernel_gradient(kernel, d.x, b, r);
  const double fd_width =
      (evidence(sigma * std::exp(h), noise) - evidence(sigma * std::exp(-h), noise)) / (2 * h);
  const double fd_noise = (evidence(sigma, noise + h) - evidence(sigma, noise - h)) / (2 * h);
  CHECK_NEAR(g.log_width, fd_width, 1e-6 * (1.0 + std::fabs(fd_width)));
  CHECK_NEAR(g.diagonal, fd_noise, 1e-6 * (1.0 + std::fabs(fd_noise)));
}

TEST_CASE("FITC evidence gradient split by input column matches differences in each width") {
  // A width per input column c is the common width on inputs whose column c
  // is divided by exp(t_c): the derivative in t_c is the entry for column c.
  const Data d = wiggly(30, 12);
  const MatrixXd& x = d.x;
  const MatrixXd z0 = x.topRows(7);
  const gpsvm::ProbitFlip probit(0.0, 0.0);
  const gpsvm::EpControl c = ep_control(kParallel, 1e-13);
  const gpsvm::Kernel kernel = gpsvm::Kernel::rbf(0.7);
  const double noise = 0.2, h = 1e-5;
  const auto evidence = [&](Eigen::Index col, double t) {
    MatrixXd xs = x, zs = z0;
    xs.col(col) *= std::exp(-t);
    zs.col(col) *= std::exp(-t);
    const gpsvm::InducingBasis b = gpsvm::inducing_basis(kernel, xs, zs, noise);
    return gpsvm::ep_fit_inducing(b, d.label, probit, c, nullptr).log_evidence;
  };
  const gpsvm::InducingBasis b = gpsvm::inducing_basis(kernel, x, z0, noise);
  const gpsvm::EpResult r = gpsvm::ep_fit_inducing(b, d.label, probit, c, nullptr);
  const gpsvm::InducingKernelGradient g = gpsvm::inducing_kernel_gradient(kernel, x, b, r);
  CHECK(g.per_input_log_width.size() == 2);
  if (g.per_input_log_width.size() != 2) return;
  for (Eigen::Index col = 0; col < 2; ++col) {
    const double fd = (evidence(col, h) - evidence(col, -h)) / (2 * h);
    CHECK_NEAR(g.per_input_log_width[col], fd, 1e-6 * (1.0 + std::fabs(fd)));
  }
  CHECK_NEAR(g.per_input_log_width.sum(), g.log_width, 1e-12 * (1.0 + std::fabs(g.log_width)));
}

TEST_CASE("FITC evidence gradient over several blocks of rows, with a constant in the kernel") {
  // 1100 rows: the gradient's passes run over two blocks of rows (1024 at a
  // time); the constant (a bias's prior variance) is in K but not in its
  // width derivative.
  const Data d = wiggly(1100, 21);
  const MatrixXd z = d.x.topRows(8);
  const gpsvm::ProbitFlip probit(0.0, 0.0);
  const gpsvm::EpControl c = ep_control(kParallel, 1e-13);
  const auto rbf = [](double sigma) {
    gpsvm::Kernel k = gpsvm::Kernel::rbf(sigma);
    k.constant = 0.5;
    return k;
  };
  const double sigma = 0.6, noise = 0.25, h = 1e-5;
  const auto evidence = [&](double s, double v, Eigen::Index col, double t) {
    MatrixXd xs = d.x, zs = z;
    if (col >= 0) {
      xs.col(col) *= std::exp(-t);
      zs.col(col) *= std::exp(-t);
    }
    const gpsvm::InducingBasis b = gpsvm::inducing_basis(rbf(s), xs, zs, v);
    return gpsvm::ep_fit_inducing(b, d.label, probit, c, nullptr).log_evidence;
  };
  const gpsvm::InducingBasis b = gpsvm::inducing_basis(rbf(sigma), d.x, z, noise);
  const gpsvm::EpResult r = gpsvm::ep_fit_inducing(b, d.label, probit, c, nullptr);
  CHECK(r.status.converged);
  const gpsvm::InducingKernelGradient g = gpsvm::inducing_kernel_gradient(rbf(sigma), d.x, b, r);
  const double fd_width = (evidence(sigma * std::exp(h), noise, -1, 0.0) -
                           evidence(sigma * std::exp(-h), noise, -1, 0.0)) / (2 * h);
  const double fd_noise =
      (evidence(sigma, noise + h, -1, 0.0) - evidence(sigma, noise - h, -1, 0.0)) / (2 * h);
  CHECK_NEAR(g.log_width, fd_width, 1e-6 * (1.0 + std::fabs(fd_width)));
  CHECK_NEAR(g.diagonal, fd_noise, 1e-6 * (1.0 + std::fabs(fd_noise)));
  CHECK(g.per_input_log_width.size() == 2);
  if (g.per_input_log_width.size() != 2) return;
  for (Eigen::Index col = 0; col < 2; ++col) {
    const double fd =
        (evidence(sigma, noise, col, h) - evidence(sigma, noise, col, -h)) / (2 * h);
    CHECK_NEAR(g.per_input_log_width[col], fd, 1e-6 * (1.0 + std::fabs(fd)));
  }
}

TEST_CASE("add_weighted_gram: X' diag(d) X for weights of either sign") {
  ref::Random rng(23);
  const MatrixXd X = rng.uniform_matrix(9, 4, -1.0, 1.0);
  for (const double shift : {0.5, -0.5}) {  // all >= 0; some < 0
    VectorXd d(9);
    for (Eigen::Index i = 0; i < 9; ++i) d[i] = rng.normal() + shift + 0.5;
    MatrixXd A = MatrixXd::Identity(4, 4);
    gpsvm::add_weighted_gram(A, X, d);
    const MatrixXd full = A.selfadjointView<Eigen::Lower>();
    const MatrixXd expected = MatrixXd::Identity(4, 4) + X.transpose() * d.asDiagonal() * X;
    CHECK_NEAR((full - expected).cwiseAbs().maxCoeff(), 0.0, 1e-13);
  }
}

TEST_CASE("pivoted Cholesky: the factor grows to the rank reached; no duplicate is chosen") {
  ref::Random rng(13);
  MatrixXd x = rng.uniform_matrix(12, 2, -1.0, 1.0);
  MatrixXd twice(24, 2);
  twice << x, x;
  const gpsvm::KernelEvaluator ev(gpsvm::Kernel::rbf(0.4), twice);
  MatrixXd G;
  std::vector<Eigen::Index> pivots;
  // a cap far above n costs nothing: the factor stops at the rank, <= 12
  CHECK(gpsvm::pivoted_cholesky(ev, 1e-12, std::numeric_limits<Eigen::Index>::max() / 16, G,
                                pivots));
  CHECK(G.cols() <= 12 && G.rows() == 24);
  const std::vector<Eigen::Index> chosen = gpsvm::greedy_inducing(ev, 20, 1e-12);
  CHECK(chosen.size() <= 12);
  std::vector<bool> seen(12, false);
  for (Eigen::Index i : chosen) {
    CHECK(!seen[static_cast<std::size_t>(i % 12)]);
    seen[static_cast<std::size_t>(i % 12)] = true;
  }
  // inducing inputs that do not match the data, or repeat, are errors
  CHECK_THROWS(gpsvm::inducing_basis(gpsvm::Kernel::rbf(1.0), x, MatrixXd::Zero(2, 3)),
               std::invalid_argument);
  CHECK_THROWS(gpsvm::inducing_basis(gpsvm::Kernel::rbf(1.0), x, MatrixXd(0, 2)),
               std::invalid_argument);
}

// The pivoted Cholesky factor of the kernel matrix on x, to 1e-13.
struct Pivoted {
  MatrixXd G;
  std::vector<Eigen::Index> pivots;
};
static Pivoted pivoted_factor_of(const gpsvm::Kernel& kernel, const MatrixXd& x) {
  Pivoted p;
  const gpsvm::KernelEvaluator ev(kernel, x);
  CHECK(gpsvm::pivoted_cholesky(ev, 1e-13, x.rows(), p.G, p.pivots));
  return p;
}

TEST_CASE("low-rank fits (FITC made from the pivoted factor): predictions as the dense fit's") {
  const Data d = wiggly(120, 17);
  const gpsvm::Kernel kernel = gpsvm::Kernel::rbf(2.5);
  const auto [G, pivots] = pivoted_factor_of(kernel, d.x);
  CHECK_MSG(G.cols() < 100, "rank " + std::to_string(G.cols()));  // 68 here
  MatrixXd pivot_inputs(G.cols(), 2);
  for (std::size_t k = 0; k < pivots.size(); ++k)
    pivot_inputs.row(static_cast<Eigen::Index>(k)) = d.x.row(pivots[k]);
  const gpsvm::PivotedFactor factor{G, pivots};
  const gpsvm::InducingBasis b = gpsvm::inducing_basis(kernel, d.x, pivot_inputs, 0.0, nullptr, -1, &factor);
  const gpsvm::EpsilonInsensitive lik(5.0, 0.1);
  const gpsvm::EpResult low = gpsvm::ep_fit_inducing(b, d.y, lik, ep_control(kParallel), nullptr);
  const MatrixXd K = gpsvm::KernelEvaluator(kernel, d.x).gram();
  const gpsvm::EpResult dense = gpsvm::ep_fit(K, d.y, lik, ep_control(kParallel), nullptr);
  const gpsvm::InducingSummary s = gpsvm::inducing_summary(b, low);
  const gpsvm::InducingFitView low_view{kernel, pivot_inputs, s.weights, b.chol, low.chol};
  const gpsvm::EpFitView dense_view{kernel, d.x, dense.weights, dense.site_precision, dense.chol};
  ref::Random rng(19);
  MatrixXd z(30, 2);
  z << rng.uniform_matrix(25, 2, -2.0, 2.0), rng.uniform_matrix(5, 2, 4.0, 9.0);  // 5 far out
  const gpsvm::EpPrediction fitc = gpsvm::fitc_predict(low_view, z, true);
  const gpsvm::EpPrediction exact = gpsvm::ep_predict(dense_view, z, true);
  // each entry of k_z - G g_z is at most sqrt(r(z) max_i r_i) by positive
  // semi-definiteness (r the residual variances, r_i <= 1e-13 at the
  // training inputs, r(z) <= k(z, z) = 1), so the means differ by at most
  // that times |w|_1, plus the fits' own difference (K's entries off by 1e-13)
  const double entry = std::sqrt(1e-13);
  CHECK_NEAR(gap(fitc.mean, exact.mean), 0.0, entry * dense.weights.lpNorm<1>() + 1e-9);
  CHECK_NEAR(gap(fitc.variance, exact.variance), 0.0, 1e-6);
  CHECK_NEAR(gap(fitc.mean.head(25), exact.mean.head(25)), 0.0, 1e-8);
  CHECK_NEAR(gap(fitc.variance.head(25), exact.variance.head(25)), 0.0, 1e-8);
}

TEST_CASE("FITC on a pivoted factor's pivots, made from the factor: the dense model, no jitter") {
  const Data d = wiggly(120, 23);
  const gpsvm::Kernel kernel = gpsvm::Kernel::rbf(2.5);
  const auto [G, pivots] = pivoted_factor_of(kernel, d.x);
  MatrixXd z(static_cast<Eigen::Index>(pivots.size()), 2);
  for (std::size_t k = 0; k < pivots.size(); ++k) z.row(static_cast<Eigen::Index>(k)) = d.x.row(pivots[k]);
  const gpsvm::PivotedFactor factor{G, pivots};
  const double noise = 0.2;
  const gpsvm::InducingBasis b = gpsvm::inducing_basis(kernel, d.x, z, noise, nullptr, -1, &factor);
  // L L' is K_PP itself, and the prior K + noise I to the factor's tolerance
  const MatrixXd K = gpsvm::KernelEvaluator(kernel, d.x).gram();
  CHECK(b.jitter == 0.0);
  CHECK_NEAR((b.chol * b.chol.transpose() - gpsvm::KernelEvaluator(kernel, z).gram()).cwiseAbs().maxCoeff(),
             0.0, 1e-14);
  MatrixXd noisy = K;
  noisy.diagonal().array() += noise;
  CHECK_NEAR((fitc_dense(b) - noisy).cwiseAbs().maxCoeff(), 0.0, 1e-12);
  // EP on it is EP on the dense matrix to rounding; FITC with its jitter on
  // the same pivots is not (its jitter drops K_PP's smallest directions)
  const gpsvm::ProbitFlip lik(0.0, 0.0);
  const gpsvm::EpControl ctl = ep_control(kParallel);
  const gpsvm::EpResult on_factor = gpsvm::ep_fit_inducing(b, d.label, lik, ctl, nullptr);
  const gpsvm::EpResult dense = gpsvm::ep_fit(noisy, d.label, lik, ctl, nullptr);
  CHECK_NEAR(on_factor.log_evidence - dense.log_evidence, 0.0, 1e-9);
  const gpsvm::InducingBasis jittered = gpsvm::inducing_basis(kernel, d.x, z, noise);
  CHECK((fitc_dense(jittered) - noisy).cwiseAbs().maxCoeff() > 1e-9);
  // a factor of another kernel, or of other rows, is refused
  CHECK_THROWS(gpsvm::inducing_basis(gpsvm::Kernel::rbf(1.0), d.x, z, noise, nullptr, -1, &factor),
               std::invalid_argument);
  const gpsvm::PivotedFactor short_factor{G.topRows(60), pivots};
  CHECK_THROWS(gpsvm::inducing_basis(kernel, d.x, z, noise, nullptr, -1, &short_factor),
               std::invalid_argument);
}

}  // namespace gpsvm_tests_fitc
