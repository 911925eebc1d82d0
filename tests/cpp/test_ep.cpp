// The EP engine (ep_engine.hpp, ep_priors.hpp, ep_predict.hpp, and the
// paper's iteration in mfsvr_paper.hpp): its invariants, each against an
// independent computation.
//   * Dense K and a factor G with K = G G' (full rank, and rank r < n) give
//     the same fit: two algebras, one posterior.
//   * With Gaussian noise EP is exact: the closed-form GP regression.
//   * Parallel, accelerated and sequential schedules, and the paper's
//     iteration, share one fixed point; a warm start changes only the
//     number of sweeps.  The accelerated schedule's Anderson mixing, on a
//     linear map, terminates as GMRES does (against a direct solve).
//   * N = 1 is exact: the posterior is the tilted distribution, the evidence
//     its normaliser (quadrature).
//   * The evidence and the site inverse against their textbook forms with
//     explicit site variances 1/tau, computed with dense inverses.
//   * mfsvr()'s search for C within one EP run ends where a fit at that
//     fixed C does, at a maximum of the evidence (central differences of
//     fits at fixed C), or against a bound it says it hit.
//   * The blocked Cholesky factorisation and what is computed from it
//     against Eigen's dense algebra; the dense posterior's two routes to
//     the variances against long-double algebra.
#include <cfloat>
#include <cmath>
#include <functional>
#include <gpsvm/dense.hpp>
#include <gpsvm/ep_engine.hpp>
#include <gpsvm/ep_predict.hpp>
#include <gpsvm/ep_priors.hpp>
#include <gpsvm/kernels.hpp>
#include <gpsvm/likelihoods.hpp>
#include <gpsvm/lowrank.hpp>
#include <gpsvm/mfsvr.hpp>
#include <gpsvm/mfsvr_paper.hpp>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "check.hpp"
#include "fixtures.hpp"
#include "reference.hpp"

namespace gpsvm_tests_ep {

namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;
using ref::gap;

using fixture::ep_control;  // schedule, then tol, max_iter, damping, seed
const gpsvm::EpSchedule kParallel = gpsvm::EpSchedule::parallel;
const gpsvm::EpSchedule kSequential = gpsvm::EpSchedule::sequential;
const gpsvm::EpSchedule kAccelerated = gpsvm::EpSchedule::accelerated;

// A noisy sinc on [-5, 5]: inputs, Gaussian kernel matrix, targets.
struct Data {
  MatrixXd x;
  MatrixXd K;
  VectorXd y;      // regression targets
  VectorXd label;  // +-1 labels: the sign of sinc(x) - 0.2, one in four flipped
};

Data sinc_data(int n, double sigma, std::uint32_t seed) {
  ref::Random rng(seed);
  Data d;
  d.x = rng.uniform_matrix(n, 1, -5.0, 5.0);
  d.K = gpsvm::kernel_matrix(gpsvm::Kernel::rbf(sigma), d.x);
  d.y.resize(n);
  d.label.resize(n);
  for (int i = 0; i < n; ++i) {
    const double u = d.x(i, 0);
    const double f = u == 0.0 ? 1.0 : std::sin(u) / u;
    d.y[i] = f + 0.1 * rng.normal();
    d.label[i] = (f > 0.2 ? 1.0 : -1.0) * (i % 4 == 3 ? -1.0 : 1.0);
  }
  return d;
}

// EP on the prior K = G G' (the low-rank prior with a zero diagonal).
template <class Likelihood>
gpsvm::EpResult ep_fit_factor(const MatrixXd& G, const VectorXd& targets, const Likelihood& lik,
                              const gpsvm::EpControl& c) {
  gpsvm::LowRankPrior prior(G, VectorXd::Zero(G.rows()));
  return gpsvm::ep_run(prior, targets, lik, c, nullptr);
}

void check_same_fit(const gpsvm::EpResult& a, const gpsvm::EpResult& b, double tol,
                    const std::string& note) {
  CHECK_MSG(a.status.converged && b.status.converged, note);
  CHECK_NEAR_MSG(gap(a.weights, b.weights), 0.0, tol, note + ": weights");
  CHECK_NEAR_MSG(gap(a.mean, b.mean), 0.0, tol, note + ": means");
  CHECK_NEAR_MSG(gap(a.variance, b.variance), 0.0, tol, note + ": variances");
  CHECK_NEAR_MSG(gap(a.site_precision, b.site_precision), 0.0, tol, note + ": site precisions");
  CHECK_NEAR_MSG(a.log_evidence, b.log_evidence, tol * (1.0 + std::fabs(b.log_evidence)),
                 note + ": evidence");
}

// The posterior of given sites by dense inverses with explicit 1/tau
// (all tau > 0): Sigma = K - K (K + S^-1)^-1 K, mu = Sigma nu.
struct DensePosterior {
  MatrixXd sigma;
  VectorXd mu;
};

DensePosterior dense_posterior(const MatrixXd& K, const VectorXd& tau, const VectorXd& nu) {
  MatrixXd ks = K;
  ks.diagonal() += tau.cwiseInverse();
  const MatrixXd inv = ks.inverse();
  DensePosterior p;
  p.sigma = K - K * inv * K;
  p.mu = p.sigma * nu;
  return p;
}

}  // namespace

// A symmetric positive definite n x n matrix, X X' / n + I.
MatrixXd positive_definite(int n, std::uint32_t seed) {
  ref::Random rng(seed);
  const MatrixXd X = rng.uniform_matrix(n, n, -1.0, 1.0);
  MatrixXd A = X * X.transpose() / n;
  A.diagonal().array() += 1.0;
  return A;
}

TEST_CASE("blocked Cholesky: factor, inverse diagonal and inverse against Eigen's") {
  const int n = 300;  // three blocks of columns and a partial one
  const MatrixXd A = positive_definite(n, 3);
  const Eigen::LLT<MatrixXd> llt(A);
  const MatrixXd L = llt.matrixL();
  MatrixXd a = A;
  // (its interrupt polls: test_interrupt.cpp)
  CHECK(gpsvm::cholesky_in_place(a));
  CHECK_NEAR((MatrixXd(a.triangularView<Eigen::Lower>()) - L).cwiseAbs().maxCoeff(), 0.0, 1e-13);
  const MatrixXd inverse = A.inverse();
  CHECK_NEAR(gap(gpsvm::inverse_diagonal_from_cholesky(a), inverse.diagonal()), 0.0, 1e-13);
  const MatrixXd blocked = gpsvm::inverse_from_cholesky(a);
  CHECK_NEAR((blocked - inverse).cwiseAbs().maxCoeff(), 0.0, 1e-13);
  CHECK_NEAR((blocked - blocked.transpose()).cwiseAbs().maxCoeff(), 0.0, 0.0);
  MatrixXd x = positive_definite(n, 4).leftCols(7);
  const MatrixXd want = L.triangularView<Eigen::Lower>().solve(x);
  gpsvm::solve_lower_in_place(a, x);
  CHECK_NEAR((x - want).cwiseAbs().maxCoeff(), 0.0, 1e-13);
  // not positive definite: a negative pivot in the second block
  MatrixXd bad = A;
  bad(200, 200) = -1.0;
  CHECK(!gpsvm::cholesky_in_place(bad));
}

TEST_CASE("EP: the dense posterior's two routes to the variances against long-double algebra") {
  // Sites of every kind: at precision 0 with a linear tilt, with a precision
  // that hardly moves the marginal (tau Sigma ~ 1e-7), and pinning the
  // marginal (tau up to 1e4).  With three in four of the first two kinds,
  // the first posterior takes the inverse route (sites' tau_i Sigma_ii from
  // the diagonal of B^-1, the loose ones by triangular solves) and the next
  // the direct one (V = L^-1 S^1/2 K in full).
  const int n = 300;
  ref::Random rng(17);
  const MatrixXd x = rng.normal_matrix(n, 3);
  const MatrixXd K = gpsvm::kernel_matrix(gpsvm::Kernel::rbf(1.5), x);
  VectorXd tau(n), nu(n);
  for (int i = 0; i < n; ++i) {
    const int kind = i % 4;
    tau[i] = kind == 0 ? 0.0 : kind < 3 ? 1e-7 * rng.uniform(0.5, 2.0)
                                        : std::pow(10.0, rng.uniform(-1.0, 4.0));
    nu[i] = (kind == 0 ? 0.3 : tau[i]) * rng.normal();
  }
  // Sigma = K - K S^1/2 B^-1 S^1/2 K, mu = Sigma nu in long double
  using MatrixL = Eigen::Matrix<long double, Eigen::Dynamic, Eigen::Dynamic>;
  using VectorL = Eigen::Matrix<long double, Eigen::Dynamic, 1>;
  const MatrixL Kl = K.cast<long double>();
  const VectorL sw = tau.cast<long double>().cwiseSqrt();
  MatrixL B = sw.asDiagonal() * Kl * sw.asDiagonal();
  B.diagonal().array() += 1.0L;
  const MatrixL sigma = Kl - Kl * sw.asDiagonal() * B.llt().solve(MatrixL(sw.asDiagonal() * Kl));
  const VectorL mu = sigma * nu.cast<long double>();
  VectorXd want_var(n), want_mean(n);
  for (int i = 0; i < n; ++i) {
    want_var[i] = static_cast<double>(sigma(i, i));
    want_mean[i] = static_cast<double>(mu[i]);
  }
  gpsvm::DensePrior prior(K);
  for (const char* route : {"inverse route", "direct route"}) {
    gpsvm::EpPosterior post;
    // A callback that takes an interrupt period is reached at every poll
    // (interrupt.hpp): one per block of the factorisation (three at n = 300)
    // and at least two in the variances' triangular solves.
    int calls = 0;
    prior.posterior(tau, nu, post, [&calls] {
      ++calls;
      std::this_thread::sleep_for(gpsvm::kInterruptPeriod);
    });
    CHECK_MSG(calls >= 5, route);
    CHECK_NEAR_MSG((post.variance.array() / want_var.array() - 1.0).abs().maxCoeff(), 0.0, 1e-9,
                   route);
    CHECK_NEAR_MSG(((post.mean - want_mean).array() / want_var.array().sqrt()).abs().maxCoeff(),
                   0.0, 1e-9, route);
  }
}

TEST_CASE("mfsvr: moments kept by the search for C are reused only at the same cavity") {
  const gpsvm::EpsilonInsensitive lik(5.0, 0.1);
  gpsvm::mfsvr_detail::RememberedMoments seen(lik);
  gpsvm::SiteMoments marked;  // moments no likelihood gives: a reuse shows
  marked.log_z = 123.0;
  const auto is_marked = [](const gpsvm::SiteMoments& m) { return m.log_z == 123.0; };
  const auto is_lik = [&](const gpsvm::SiteMoments& m, double t, double mu, double v) {
    const gpsvm::SiteMoments r = lik.moments(t, mu, v);
    return m.log_z == r.log_z && m.dlog_z == r.dlog_z && m.d2log_z == r.d2log_z;
  };
  CHECK(is_lik(seen.moments(0.3, 0.1, 0.5), 0.3, 0.1, 0.5));  // nothing kept
  seen.start(3);
  for (std::size_t i = 0; i < 3; ++i) seen.keep(i, 0.1 * i, 0.2, 0.5, marked);
  // in order, at the same target and cavity: kept
  CHECK(is_marked(seen.moments(0.0, 0.2, 0.5)));
  // site 1 at another cavity mean, site 2 at another target: computed
  CHECK(is_lik(seen.moments(0.1, 0.2 + 1e-15, 0.5), 0.1, 0.2 + 1e-15, 0.5));
  CHECK(is_lik(seen.moments(0.3, 0.2, 0.5), 0.3, 0.2, 0.5));
  // out of order (a sequential sweep): site 2's values asked first find
  // site 0's entry and are computed
  CHECK(is_lik(seen.moments(0.2, 0.2, 0.5), 0.2, 0.2, 0.5));
  seen.start(3);
  for (std::size_t i = 0; i < 3; ++i) seen.keep(i, 0.1 * i, 0.2, 0.5, marked);
  seen.forget();  // C moved
  CHECK(is_lik(seen.moments(0.0, 0.2, 0.5), 0.0, 0.2, 0.5));
}

TEST_CASE("mfsvr: choosing C within one EP run ends at a maximum of the evidence, or at a bound") {
  const int n = 120;
  ref::Random rng(23);
  const MatrixXd x = rng.normal_matrix(n, 3);
  VectorXd y(n);
  for (int i = 0; i < n; ++i) y[i] = std::sin(x(i, 0)) + 0.2 * x(i, 1) + 0.1 * rng.normal();
  const gpsvm::Kernel kernel = gpsvm::Kernel::rbf(1.5);
  gpsvm::MfsvrControl fixed;
  fixed.algorithm = gpsvm::MfsvrAlgorithm::ep;
  fixed.ep = ep_control(kParallel, 1e-11, 2000);
  fixed.gradient = true;
  fixed.width_gradient = false;
  gpsvm::MfsvrControl search = fixed;
  search.choose_C = true;
  search.C_search.log_C_lower = std::log(0.01);
  search.C_search.log_C_upper = std::log(1e4);
  search.C_search.tol = 1e-4;
  search.C_search.max_moves = 50;
  MatrixXd z(30, 3);  // inducing inputs for the FITC prior
  for (int i = 0; i < 30; ++i) z.row(i) = x.row(4 * i);
  for (bool fitc : {false, true}) {
    const std::string note = fitc ? "FITC" : "dense";
    if (fitc) fixed.inducing = search.inducing = z;
    const gpsvm::MfsvrFit f = gpsvm::mfsvr_fit(x, y, kernel, 5.0, 0.1, search, nullptr);
    CHECK_MSG(f.ep.status.converged && f.C_search.settled && f.C_search.moves >= 2, note);
    CHECK_MSG(f.C != 5.0 && f.C_search.points.back().C == f.C, note);
    // the same fixed point as a fit at that C
    const gpsvm::MfsvrFit g = gpsvm::mfsvr_fit(x, y, kernel, f.C, 0.1, fixed, nullptr);
    check_same_fit(f.ep, g.ep, 1e-8, note + ": fit at the C found");
    // a maximum: the evidence's central difference in log C within the
    // search's tolerance, and lower a little either way
    const double h = 1e-3;
    const double up = gpsvm::mfsvr_fit(x, y, kernel, f.C * std::exp(h), 0.1, fixed, nullptr)
                          .ep.log_evidence;
    const double down = gpsvm::mfsvr_fit(x, y, kernel, f.C * std::exp(-h), 0.1, fixed, nullptr)
                            .ep.log_evidence;
    CHECK_MSG(std::fabs(up - down) / (2.0 * h) / n < 1.5e-4, note);
    CHECK_NEAR_MSG(f.gradient[0], (up - down) / (2.0 * h), 1e-5 * n, note + ": the gradient");
    for (double step : {-0.2, 0.2})
      CHECK_MSG(gpsvm::mfsvr_fit(x, y, kernel, f.C * std::exp(step), 0.1, fixed, nullptr)
                        .ep.log_evidence < f.ep.log_evidence,
                note);
  }
  // a range that ends below the maximum: the search stops at its upper end
  search.inducing.resize(0, 0);
  search.C_search.log_C_upper = std::log(6.0);
  const gpsvm::MfsvrFit b = gpsvm::mfsvr_fit(x, y, kernel, 5.0, 0.1, search, nullptr);
  CHECK(b.ep.status.converged && b.C_search.at_upper && !b.C_search.settled);
  CHECK_NEAR(b.C, 6.0, 1e-12);
  CHECK(b.gradient[0] > 0.0);
}

TEST_CASE("EP: a dense K and its factor K = G G' give the same fit, at full and at low rank") {
  ref::Random rng(11);
  const int n = 12;
  for (int rank : {n, 4}) {
    const MatrixXd G = rng.uniform_matrix(n, rank, -1.0, 1.0);
    const MatrixXd K = G * G.transpose();
    const Data d = sinc_data(n, 1.0, 3);
    for (gpsvm::EpSchedule schedule : {kParallel, kSequential}) {
      const std::string note =
          "rank " + std::to_string(rank) + (schedule == kParallel ? ", parallel" : ", sequential");
      const gpsvm::EpControl c = ep_control(schedule);
      const gpsvm::EpsilonInsensitive eps(5.0, 0.1);
      check_same_fit(gpsvm::ep_fit(K, d.y, eps, c, nullptr),
                     ep_fit_factor(G, d.y, eps, c), 1e-9,
                     note + ", eps-insensitive");
      const gpsvm::ProbitFlip probit(0.05, 0.0);
      check_same_fit(gpsvm::ep_fit(K, d.label, probit, c, nullptr),
                     ep_fit_factor(G, d.label, probit, c), 1e-9,
                     note + ", probit");
    }
  }
  // and the pivoted Cholesky factor of a kernel matrix, taken to full rank
  const Data d = sinc_data(15, 0.3, 5);
  const gpsvm::KernelEvaluator ev(gpsvm::Kernel::rbf(0.3), d.x);
  MatrixXd G;
  std::vector<Eigen::Index> pivots;
  gpsvm::pivoted_cholesky(ev, 1e-15, 15, G, pivots);
  CHECK((d.K - G * G.transpose()).cwiseAbs().maxCoeff() < 1e-14);
  const gpsvm::EpsilonInsensitive eps(5.0, 0.1);
  const gpsvm::EpControl c = ep_control(kParallel);
  check_same_fit(gpsvm::ep_fit(d.K, d.y, eps, c, nullptr),
                 ep_fit_factor(G, d.y, eps, c), 1e-9, "pivoted Cholesky");
}

TEST_CASE("mfsvr: FITC made from a pivoted factor of K is the dense matrix's fit") {
  // a linear kernel on two inputs: K = x x' exactly, of rank 2
  ref::Random rng(29);
  const int n = 40;
  const MatrixXd x = rng.uniform_matrix(n, 2, -1.0, 1.0);
  VectorXd y(n);
  for (int i = 0; i < n; ++i) y[i] = x(i, 0) - 0.5 * x(i, 1) + 0.1 * rng.normal();
  const gpsvm::Kernel kernel = gpsvm::Kernel::linear();
  gpsvm::MfsvrControl dense;
  dense.algorithm = gpsvm::MfsvrAlgorithm::ep;
  dense.ep = ep_control(kParallel, 1e-11, 2000);
  dense.gradient = true;
  dense.choose_C = true;
  dense.C_search.log_C_lower = std::log(0.01);
  dense.C_search.log_C_upper = std::log(1e4);
  dense.C_search.tol = 1e-4;
  dense.C_search.max_moves = 50;
  MatrixXd G;
  std::vector<Eigen::Index> pivots;
  gpsvm::pivoted_cholesky(gpsvm::KernelEvaluator(kernel, x), 1e-13, n, G, pivots);
  CHECK(G.cols() == 2);
  gpsvm::MfsvrControl low = dense;
  low.inducing.resize(2, 2);
  for (int k = 0; k < 2; ++k) low.inducing.row(k) = x.row(pivots[static_cast<std::size_t>(k)]);
  low.inducing_factor.emplace(gpsvm::PivotedFactor{G, pivots});
  const gpsvm::MfsvrFit a = gpsvm::mfsvr_fit(x, y, kernel, 5.0, 0.1, dense, nullptr);
  const gpsvm::MfsvrFit b = gpsvm::mfsvr_fit(x, y, kernel, 5.0, 0.1, low, nullptr);
  CHECK(b.ep.chol.rows() == 2 && b.inducing_chol.rows() == 2);
  CHECK_NEAR(b.C, a.C, 1e-6 * a.C);
  check_same_fit(a.ep, b.ep, 1e-7, "the C search on a factor");
  CHECK_NEAR(b.gradient[0], a.gradient[0], 1e-6);
  // with noise scales per row too
  gpsvm::MfsvrControl rows = dense, rows_low = low;
  rows.choose_C = rows_low.choose_C = false;
  rows.log_noise_scale = rows_low.log_noise_scale = 0.3 * x.col(0);
  check_same_fit(gpsvm::mfsvr_fit(x, y, kernel, 5.0, 0.1, rows, nullptr).ep,
                 gpsvm::mfsvr_fit(x, y, kernel, 5.0, 0.1, rows_low, nullptr).ep, 1e-7,
                 "noise scales per row on a factor");
  // a factor of other rows is refused
  gpsvm::MfsvrControl wrong = low;
  wrong.inducing_factor.emplace(gpsvm::PivotedFactor{G.topRows(n - 1), pivots});
  CHECK_THROWS(gpsvm::mfsvr_fit(x, y, kernel, 5.0, 0.1, wrong, nullptr), std::invalid_argument);
}

TEST_CASE("EP: with Gaussian noise it is GP regression in closed form (dense and low rank)") {
  const int n = 14;
  const Data d = sinc_data(n, 1.2, 7);
  const double s2 = 0.04;
  // the closed form: A = K + s2 I, w = A^-1 y, mean K w, variance diag(K - K A^-1 K),
  // evidence log N(y; 0, A)
  MatrixXd A = d.K;
  A.diagonal().array() += s2;
  const MatrixXd Ainv = A.inverse();
  const VectorXd w = Ainv * d.y;
  const VectorXd mean = d.K * w;
  const VectorXd var = (d.K - d.K * Ainv * d.K).diagonal();
  const double evidence = ref::log_gauss(d.y, A);
  const Eigen::LLT<MatrixXd> llt(d.K + 1e-10 * MatrixXd::Identity(n, n));
  const MatrixXd G = llt.matrixL();
  const gpsvm::GaussianNoise lik(s2);
  for (bool low_rank : {false, true}) {
    for (gpsvm::EpSchedule schedule : {kParallel, kSequential}) {
      const gpsvm::EpControl c = ep_control(schedule);
      // G G' = K + 1e-10 I: compare the low-rank fit with that matrix's closed form
      const MatrixXd Kf = low_rank ? MatrixXd(G * G.transpose()) : d.K;
      MatrixXd Af = Kf;
      Af.diagonal().array() += s2;
      const MatrixXd Afinv = Af.inverse();
      const gpsvm::EpResult r = low_rank ? ep_fit_factor(G, d.y, lik, c)
                                         : gpsvm::ep_fit(d.K, d.y, lik, c, nullptr);
      const std::string note = std::string(low_rank ? "low rank" : "dense") +
                               (schedule == kParallel ? ", parallel" : ", sequential");
      CHECK_MSG(r.status.converged && r.status.iterations <= 2, note);  // exact after one sweep
      CHECK_NEAR_MSG(gap(r.weights, Afinv * d.y), 0.0, 1e-10, note);
      CHECK_NEAR_MSG(gap(r.mean, Kf * Afinv * d.y), 0.0, 1e-10, note);
      CHECK_NEAR_MSG(gap(r.variance, (Kf - Kf * Afinv * Kf).diagonal()), 0.0, 1e-10, note);
      CHECK_NEAR_MSG(r.log_evidence, ref::log_gauss(d.y, Af), 1e-9, note);
      // every site is the likelihood itself: precision 1/s2, mean y
      CHECK_NEAR_MSG(gap(r.site_precision, VectorXd::Constant(n, 1.0 / s2)), 0.0, 1e-12, note);
      CHECK_NEAR_MSG(gap(r.site_nu, d.y / s2), 0.0, 1e-12, note);
    }
  }
  // the two closed forms agree (the jitter is negligible)
  CHECK_NEAR(gap(mean, d.K * w), 0.0, 0.0);
  CHECK(var.minCoeff() > 0.0 && std::isfinite(evidence));
}

TEST_CASE(
    "EP: sites that pin the posterior (tiny noise) give variances right to the problem's "
    "conditioning") {
  // Sigma = (K^-1 + S)^-1 = s2 I - s2^2 (K + s2 I)^-1 (Woodbury), free of
  // cancellation.  EP itself cannot do better than its cavities allow: the
  // cavity precision 1/Sigma_ii - tau_i cancels to a fraction s2 / K_ii, so
  // the sites, and with them the variances, carry a relative error of about
  // eps K_ii / s2.
  MatrixXd x(5, 1);
  x << 0.0, 1.0, 2.0, 3.5, 4.0;
  const MatrixXd K = gpsvm::kernel_matrix(gpsvm::Kernel::rbf(1.0), x);
  VectorXd y(5);
  y << 0.3, -0.1, 0.8, 0.2, 0.25;
  for (double s2 : {1e-3, 1e-6, 1e-10}) {
    MatrixXd A = K;
    A.diagonal().array() += s2;
    const VectorXd want = (VectorXd::Constant(5, s2) - s2 * s2 * A.inverse().diagonal());
    const gpsvm::EpResult r =
        gpsvm::ep_fit(K, y, gpsvm::GaussianNoise(s2), ep_control(kParallel), nullptr);
    const std::string note = "noise " + gpsvm_test::show(s2);
    const double tol = 8.0 * DBL_EPSILON * (1.0 + 1.0 / s2);
    CHECK_NEAR_MSG((r.variance.array() / want.array() - 1.0).abs().maxCoeff(), 0.0, tol, note);
    CHECK_NEAR_MSG(gap(r.mean, K * A.inverse() * y), 0.0, tol, note);
  }
}

TEST_CASE("Anderson mixing: on a linear map it reaches the fixed point as GMRES would") {
  // x = A x + b with A of spectral radius about 0.95: plain iteration gains
  // a factor 0.95 a step; type II Anderson mixing with a memory of at
  // least the dimension is GMRES on (I - A) x = b, exact after n + 1 steps
  // (up to rounding).  The reference is the direct solve.
  ref::Random rng(5);
  const int n = 6;
  const Eigen::HouseholderQR<MatrixXd> qr(rng.normal_matrix(n, n));
  const MatrixXd basis = qr.householderQ();
  VectorXd eig(n);
  eig << 0.95, -0.9, 0.5, -0.3, 0.1, 0.0;
  const MatrixXd A = basis * eig.asDiagonal() * basis.transpose();
  VectorXd b(n);
  for (int i = 0; i < n; ++i) b[i] = rng.normal();
  b += 0.1 * basis.col(0);  // a fixed point well along the slow direction
  const VectorXd want = (MatrixXd::Identity(n, n) - A).partialPivLu().solve(b);
  gpsvm::ep_detail::AndersonMixer mixer(gpsvm::kAndersonMemory);
  CHECK(gpsvm::kAndersonMemory >= n);
  VectorXd x = VectorXd::Zero(n), plain = x;
  for (int k = 0; k <= n + 1; ++k) {
    x = mixer.mix(x, A * x + b);
    plain = A * plain + b;
  }
  CHECK(mixer.extrapolating());
  // gap(): largest difference relative to 1 + the largest entry
  CHECK_NEAR(gap(x, want), 0.0, 1e-9);
  CHECK_NEAR(gap(A * x + b, x), 0.0, 1e-9);
  CHECK(gap(plain, want) > 0.1);  // plain iteration is far from it
  // a reset forgets the history: the next step is the plain one
  mixer.reset();
  CHECK(!mixer.extrapolating());
  CHECK_NEAR(gap(mixer.mix(plain, A * plain + b), A * plain + b), 0.0, 0.0);
}

TEST_CASE("EP: an undoable Anderson record, undone, leaves the history as without it") {
  // (a part of a split fit records a sweep ahead the driver may not take)
  // Every pair is followed by an undone record of another pair, past the
  // memory so that undoing puts back the pair the record evicted; the
  // reference is a mixer that never saw those records.
  ref::Random rng(8);
  const int n = gpsvm::kAndersonMemory + 2;
  gpsvm::ep_detail::AndersonMixer mixer(gpsvm::kAndersonMemory), plain(gpsvm::kAndersonMemory);
  const auto random_vector = [&]() {
    VectorXd v(n);
    for (int i = 0; i < n; ++i) v[i] = rng.normal();
    return v;
  };
  for (int k = 0; k < gpsvm::kAndersonMemory + 4; ++k) {
    const VectorXd x = random_vector(), g = random_vector();
    const MatrixXd want = plain.record(x, g);
    const MatrixXd got = mixer.record(x, g, k % 2 == 0);
    CHECK(got.rows() == want.rows() && got.cols() == want.cols() && got == want);
    const MatrixXd junk = mixer.record(random_vector(), random_vector(), true);
    CHECK(junk.rows() == std::min(k + 1, gpsvm::kAndersonMemory));
    mixer.unrecord();
    if (want.rows() > 0) {
      const VectorXd gamma = random_vector().head(want.rows());
      CHECK_NEAR(gap(mixer.combination(gamma), plain.combination(gamma)), 0.0, 0.0);
    }
  }
  CHECK_THROWS(mixer.unrecord(), std::logic_error);
  mixer.record(random_vector(), random_vector(), true);
  mixer.reset();
  CHECK_THROWS(mixer.unrecord(), std::logic_error);
}

TEST_CASE("EP: parallel, accelerated, sequential (two seeds) and the paper's iteration agree") {
  const Data d = sinc_data(20, 1.4, 21);
  for (double C : {0.5, 5.0, 50.0}) {
    const gpsvm::EpsilonInsensitive lik(C, 0.1);
    const gpsvm::EpResult par = gpsvm::ep_fit(d.K, d.y, lik, ep_control(kParallel), nullptr);
    for (double damping : {0.7, 1.0}) {
      check_same_fit(
          gpsvm::ep_fit(d.K, d.y, lik, ep_control(kAccelerated, 1e-12, 2000, damping), nullptr),
          par, 1e-8, "C = " + gpsvm_test::show(C) + ", accelerated (damping " +
                         gpsvm_test::show(damping) + ") vs parallel");
    }
    const gpsvm::EpResult seq1 =
        gpsvm::ep_fit(d.K, d.y, lik, ep_control(kSequential, 1e-12, 2000, 1.0, 1), nullptr);
    const gpsvm::EpResult seq2 =
        gpsvm::ep_fit(d.K, d.y, lik, ep_control(kSequential, 1e-12, 2000, 1.0, 99), nullptr);
    const std::string note = "C = " + gpsvm_test::show(C);
    check_same_fit(par, seq1, 1e-8, note + ", parallel vs sequential");
    check_same_fit(seq1, seq2, 1e-8, note + ", two seeds");
    if (C > 10.0) continue;  // the paper's iteration converges up to about C = 10 here
    const gpsvm::EpResult paper =
        gpsvm::mfsvr_paper_fit(d.K, d.y, lik, fixture::paper_control(1e-11, 5000), nullptr);
    CHECK_MSG(paper.status.converged, note + ", paper");
    CHECK_NEAR_MSG(gap(paper.weights, par.weights), 0.0, 1e-7, note + ", paper's weights");
    CHECK_NEAR_MSG(paper.log_evidence, par.log_evidence,
                   1e-7 * (1.0 + std::fabs(par.log_evidence)), note + ", paper's evidence");
  }
  // the classifier's likelihood too
  const gpsvm::ProbitFlip probit(0.1, 0.0);
  MatrixXd Kn = d.K;
  Kn.diagonal().array() += 0.1;
  const gpsvm::EpResult par = gpsvm::ep_fit(Kn, d.label, probit, ep_control(kParallel), nullptr);
  check_same_fit(par, gpsvm::ep_fit(Kn, d.label, probit, ep_control(kSequential), nullptr), 1e-8,
                 "probit, parallel vs sequential");
  check_same_fit(par,
                 gpsvm::ep_fit(Kn, d.label, probit, ep_control(kAccelerated, 1e-12, 2000, 0.7),
                               nullptr),
                 1e-8, "probit, parallel vs accelerated");
}

TEST_CASE("EP: a warm start changes the number of sweeps, not the fixed point") {
  const Data d = sinc_data(20, 1.4, 31);
  const gpsvm::EpsilonInsensitive lik(5.0, 0.1), nearby(5.25, 0.105);
  for (gpsvm::EpSchedule schedule : {kParallel, kAccelerated, kSequential}) {
    const std::string note = schedule == kParallel      ? "parallel"
                             : schedule == kAccelerated ? "accelerated"
                                                        : "sequential";
    const gpsvm::EpControl cold = ep_control(schedule, 1e-11, 2000, 0.5);
    const gpsvm::EpResult a = gpsvm::ep_fit(d.K, d.y, lik, cold, nullptr);
    CHECK_MSG(!a.warm_start && a.status.converged, note);
    // from nearby hyperparameters' sites
    const gpsvm::EpResult b = gpsvm::ep_fit(d.K, d.y, nearby, cold, nullptr);
    gpsvm::EpControl warm = cold;
    warm.initial_precision = b.site_precision;
    warm.initial_nu = b.site_nu;
    const gpsvm::EpResult c = gpsvm::ep_fit(d.K, d.y, lik, warm, nullptr);
    CHECK_MSG(c.warm_start, note);
    check_same_fit(c, a, 1e-8, note + ", warm from nearby");
    CHECK_MSG(c.status.iterations < a.status.iterations,
              note + ": " + std::to_string(c.status.iterations) + " vs " +
                  std::to_string(a.status.iterations) + " sweeps");
    // from its own fixed point: one sweep that changes nothing
    warm.initial_precision = a.site_precision;
    warm.initial_nu = a.site_nu;
    const gpsvm::EpResult e = gpsvm::ep_fit(d.K, d.y, lik, warm, nullptr);
    CHECK_MSG(e.status.iterations == 1, note);
    check_same_fit(e, a, 1e-10, note + ", warm from the fixed point");
    // unusable sites are ignored: a cold start
    warm.initial_precision[3] = std::numeric_limits<double>::quiet_NaN();
    const gpsvm::EpResult f = gpsvm::ep_fit(d.K, d.y, lik, warm, nullptr);
    CHECK_MSG(!f.warm_start && f.status.iterations == a.status.iterations, note);
    check_same_fit(f, a, 0.0, note + ", NaN sites");
    warm.initial_precision = -a.site_precision;
    CHECK_MSG(!gpsvm::ep_fit(d.K, d.y, lik, warm, nullptr).warm_start,
              note + ", negative precisions");
    // sites of the wrong length are an error
    warm.initial_precision = a.site_precision.head(5);
    warm.initial_nu = a.site_nu.head(5);
    CHECK_THROWS(gpsvm::ep_fit(d.K, d.y, lik, warm, nullptr), std::invalid_argument);
  }
}

TEST_CASE("EP: for one data point the fit is exact (quadrature of the tilted distribution)") {
  struct Case {
    double k, t, C, eps;
  };
  for (const Case c :
       {Case{1.0, 0.3, 5.0, 0.1}, Case{2.0, 3.0, 1.0, 0.5}, Case{0.5, 0.05, 10.0, 0.1},
        Case{1.0, 40.0, 1.0, 0.1}, Case{1e-4, 0.5, 100.0, 0.0}}) {
    const MatrixXd K = MatrixXd::Constant(1, 1, c.k);
    const VectorXd y = VectorXd::Constant(1, c.t);
    const gpsvm::EpResult r = gpsvm::ep_fit(K, y, gpsvm::EpsilonInsensitive(c.C, c.eps),
                                            ep_control(kParallel, 1e-13), nullptr);
    const ref::Tilted q = ref::tilted_epsins(c.t, 0.0, c.k, c.C, c.eps);
    const std::string note = "k = " + gpsvm_test::show(c.k) + ", t = " + gpsvm_test::show(c.t) +
                             ", C = " + gpsvm_test::show(c.C) +
                             ", eps = " + gpsvm_test::show(c.eps);
    CHECK_MSG(r.status.converged, note);
    CHECK_NEAR_MSG(r.mean[0], static_cast<double>(q.mean), 1e-10 * (1.0 + std::fabs(c.t)), note);
    CHECK_REL_MSG(r.variance[0], static_cast<double>(q.var), 1e-9, note);
    CHECK_NEAR_MSG(r.log_evidence, static_cast<double>(q.log_z), 1e-10 * (1.0 + std::fabs(q.log_z)),
                   note);
  }
  for (double kappa : {0.0, 0.1}) {
    for (double m_label : {1.0, -1.0}) {
      const MatrixXd K = MatrixXd::Constant(1, 1, 2.0);
      const VectorXd y = VectorXd::Constant(1, m_label);
      const gpsvm::EpResult r = gpsvm::ep_fit(K, y, gpsvm::ProbitFlip(kappa, 0.0),
                                              ep_control(kSequential, 1e-13), nullptr);
      const ref::Tilted q = ref::tilted_probit(m_label, 0.0, 2.0, kappa, 0.0);
      const std::string note = "probit, kappa = " + gpsvm_test::show(kappa);
      CHECK_NEAR_MSG(r.mean[0], static_cast<double>(q.mean), 1e-10, note);
      CHECK_REL_MSG(r.variance[0], static_cast<double>(q.var), 1e-9, note);
      CHECK_NEAR_MSG(r.log_evidence, static_cast<double>(q.log_z), 1e-10, note);
    }
  }
}

TEST_CASE("EP: for two data points the evidence is within 1e-3 of 2-D quadrature") {
  // Z = integral p(t1 | f1) N(f1; 0, k11) Z2(f1) df1, where Z2(f1) is the
  // normaliser of site 2 under the conditional prior N(k12 / k11 f1,
  // k22 - k12^2 / k11): the one-dimensional log Z whose accuracy the
  // likelihood tests establish against quadrature.
  MatrixXd x(2, 1);
  x << -0.3, 0.4;
  const MatrixXd K = gpsvm::kernel_matrix(gpsvm::Kernel::rbf(1.0), x);
  VectorXd y(2);
  y << 0.5, 0.1;
  const double C = 3.0, eps = 0.1;
  const gpsvm::EpsilonInsensitive lik(C, eps);
  const gpsvm::EpResult r = gpsvm::ep_fit(K, y, lik, ep_control(kParallel, 1e-13), nullptr);
  const double slope = K(0, 1) / K(0, 0), cond_var = K(1, 1) - K(0, 1) * slope;
  const ref::ld log_norm = std::log(C) - std::log(2.0L * (eps * C + 1.0L));
  auto log_lik = [&](ref::ld f1) {
    const ref::ld out = std::fabs(y[0] - f1) - eps;
    return log_norm - C * (out > 0.0L ? out : 0.0L) +
           lik.moments(y[1], static_cast<double>(slope * f1), cond_var).log_z;
  };
  const double s = std::sqrt(K(0, 0));
  const ref::Tilted q = ref::tilted(log_lik, 0.0L, K(0, 0), -12.0L * s, 12.0L * s,
                                    {y[0] - eps, y[0] + eps}, s / 16.0L, s / 8.0L);
  CHECK(r.status.converged);
  CHECK_NEAR(r.log_evidence, static_cast<double>(q.log_z), 1e-3);
  // not trivially exact: the posterior variances are below the prior's
  CHECK(r.variance[0] < K(0, 0) && r.variance[1] < K(1, 1));
  // while the first marginal's mean is close to the exact one
  CHECK_NEAR(r.mean[0], static_cast<double>(q.mean), 1e-2);
}

TEST_CASE(
    "EP: the fixed point solves the TAP equations, cavities by dense algebra, moments by "
    "quadrature") {
  const Data d = sinc_data(12, std::sqrt(2.0), 3);
  const double C = 5.0, eps = 0.1;
  const gpsvm::EpResult r =
      gpsvm::ep_fit(d.K, d.y, gpsvm::EpsilonInsensitive(C, eps), ep_control(kParallel), nullptr);
  CHECK(r.status.converged);
  // Sigma = K - K S^1/2 (I + S^1/2 K S^1/2)^-1 S^1/2 K, defined for tau = 0 too
  const Eigen::Index n = d.K.rows();
  const VectorXd sw = r.site_precision.cwiseSqrt();
  const MatrixXd B = MatrixXd::Identity(n, n) + sw.asDiagonal() * d.K * sw.asDiagonal();
  const MatrixXd sigma = d.K - d.K * sw.asDiagonal() * B.inverse() * sw.asDiagonal() * d.K;
  const VectorXd mu = sigma * r.site_nu;
  CHECK_NEAR(gap(r.mean, mu), 0.0, 1e-10);
  CHECK_NEAR(gap(r.variance, sigma.diagonal()), 0.0, 1e-10);
  int clamped = 0;
  for (Eigen::Index i = 0; i < n; ++i) {
    // the cavity: precisions and precision-means subtract
    const double v = 1.0 / (1.0 / sigma(i, i) - r.site_precision[i]);
    const double m = v * (mu[i] / sigma(i, i) - r.site_nu[i]);
    const ref::Tilted q = ref::tilted_epsins(d.y[i], m, v, C, eps);
    const double d1 = static_cast<double>(q.d1(m, v)), d2 = static_cast<double>(q.d2(v));
    const std::string note = "site " + std::to_string(i);
    // eq. 3.7: w_i = d log Z_i / dm at the cavity; eq. 3.11: 1/Sigma_i = -d2 / (1 + d2 v)
    CHECK_NEAR_MSG(r.weights[i], d1, 1e-8 * (1.0 + std::fabs(d1)), note);
    CHECK_NEAR_MSG(r.site_precision[i], std::max(0.0, -d2 / (1.0 + d2 * v)),
                   1e-7 * (r.site_precision[i] + 1.0 / v), note);
    if (r.site_precision[i] == 0.0) ++clamped;
  }
  CHECK(clamped < n);
}

TEST_CASE(
    "EP: converges at C = 100 (the paper's iteration does not), with duplicate inputs, and in a "
    "wide tube") {
  const Data d = sinc_data(40, std::sqrt(2.0), 1);
  const gpsvm::EpResult a = gpsvm::ep_fit(d.K, d.y, gpsvm::EpsilonInsensitive(100.0, 0.1),
                                          ep_control(kParallel, 1e-9, 500), nullptr);
  CHECK(a.status.converged && a.weights.allFinite());
  // duplicated inputs make K singular; B = I + S^1/2 K S^1/2 is not
  MatrixXd x2(20, 1);
  x2 << d.x.topRows(10), d.x.topRows(10);
  VectorXd y2(20);
  y2 << d.y.head(10), (d.y.head(10).array() + 0.05).matrix();
  const MatrixXd K2 = gpsvm::kernel_matrix(gpsvm::Kernel::rbf(std::sqrt(2.0)), x2);
  const gpsvm::EpResult b = gpsvm::ep_fit(K2, y2, gpsvm::EpsilonInsensitive(5.0, 0.1),
                                          ep_control(kParallel, 1e-9, 500), nullptr);
  CHECK(b.status.converged && b.weights.allFinite() && b.variance.minCoeff() > 0.0);
  // a tube far wider than the prior: every site stays at precision 0, the
  // posterior is the prior, and the evidence is the constant likelihood's
  const Data w = sinc_data(15, 1.0, 2);
  const double C = 2.0, eps = 100.0;
  const gpsvm::EpResult t = gpsvm::ep_fit(w.K, w.y, gpsvm::EpsilonInsensitive(C, eps),
                                          ep_control(kParallel, 1e-9, 500), nullptr);
  CHECK(t.status.converged && t.site_precision.cwiseAbs().maxCoeff() == 0.0);
  CHECK_NEAR(t.mean.cwiseAbs().maxCoeff(), 0.0, 1e-12);
  CHECK_NEAR((t.variance.array() - 1.0).abs().maxCoeff(), 0.0, 1e-12);
  CHECK_REL(t.log_evidence, 15.0 * std::log(C / (2.0 * (eps * C + 1.0))), 1e-12);
}

TEST_CASE("EP: posterior, evidence and site inverse against their forms with explicit 1/tau") {
  // probit sites all have tau > 0, so the textbook forms apply
  const Data d = sinc_data(10, 1.0, 41);
  MatrixXd K = d.K;
  K.diagonal().array() += 0.05;
  const gpsvm::ProbitFlip lik(0.0, 0.0);
  for (bool low_rank : {false, true}) {
    const Eigen::LLT<MatrixXd> llt(K);
    const MatrixXd G = llt.matrixL();
    const gpsvm::EpResult r =
        low_rank ? ep_fit_factor(G, d.label, lik, ep_control(kParallel))
                 : gpsvm::ep_fit(K, d.label, lik, ep_control(kParallel), nullptr);
    const std::string note = low_rank ? "low rank" : "dense";
    CHECK_MSG(r.status.converged && r.site_precision.minCoeff() > 0.0, note);
    const DensePosterior p = dense_posterior(K, r.site_precision, r.site_nu);
    CHECK_NEAR_MSG(gap(r.mean, p.mu), 0.0, 1e-10, note);
    CHECK_NEAR_MSG(gap(r.variance, p.sigma.diagonal()), 0.0, 1e-10, note);
    // the weights: posterior mean = K w
    CHECK_NEAR_MSG(gap(K * r.weights, p.mu), 0.0, 1e-10, note);
    // evidence, Rasmussen and Williams' (3.65) as written: with site means
    // mt = nu / tau and cavities from the dense posterior,
    //   sum_i [log Z_i + 1/2 log(2 pi (v_i + 1/tau_i)) + (m_i - mt_i)^2 / (2 (v_i + 1/tau_i))]
    //   + log N(mt; 0, K + S^-1)
    const Eigen::Index n = K.rows();
    double evidence = 0.0;
    VectorXd mt(n);
    MatrixXd ks = K;
    for (Eigen::Index i = 0; i < n; ++i) {
      const double tau = r.site_precision[i], nu = r.site_nu[i];
      const double s2 = p.sigma(i, i);
      const double v = 1.0 / (1.0 / s2 - tau);
      const double m = v * (p.mu[i] / s2 - nu);
      mt[i] = nu / tau;
      ks(i, i) += 1.0 / tau;
      const double lz = lik.moments(d.label[i], m, v).log_z;
      evidence += lz + 0.5 * std::log(2.0 * static_cast<double>(ref::kPi) * (v + 1.0 / tau)) +
                  (m - mt[i]) * (m - mt[i]) / (2.0 * (v + 1.0 / tau));
      CHECK_NEAR_MSG(r.cavity_mean[i], m, 1e-9 * (1.0 + std::fabs(m)), note + ": cavity mean");
      CHECK_REL_MSG(r.cavity_var[i], v, 1e-9, note + ": cavity variance");
    }
    evidence += ref::log_gauss(mt, ks);
    CHECK_NEAR_MSG(r.log_evidence, evidence, 1e-9 * (1.0 + std::fabs(evidence)),
                   note + ": evidence");
    // (K + S^-1)^-1 from the dense fit's factor (a low-rank one has its own
    // gradients, fitc.hpp)
    if (low_rank) continue;
    const MatrixXd R = gpsvm::ep_site_inverse(r);
    CHECK_NEAR_MSG((R - ks.inverse()).cwiseAbs().maxCoeff(), 0.0,
                   1e-9 * ks.inverse().cwiseAbs().maxCoeff(), note + ": site inverse");
  }
}

TEST_CASE(
    "EP: predictions at the training inputs are the fit's marginals; derivatives by differences") {
  const Data d = sinc_data(16, 1.1, 51);
  const gpsvm::Kernel kernel = gpsvm::Kernel::rbf(1.1);
  const gpsvm::EpsilonInsensitive lik(5.0, 0.1);
  {
    const gpsvm::EpResult r = gpsvm::ep_fit(d.K, d.y, lik, ep_control(kParallel), nullptr);
    const gpsvm::EpFitView view{kernel, d.x, r.weights, r.site_precision, r.chol};
    const gpsvm::EpPrediction at_x = gpsvm::ep_predict(view, d.x, true);
    CHECK_NEAR(gap(at_x.mean, r.mean), 0.0, 1e-11);
    CHECK_NEAR(gap(at_x.variance, r.variance), 0.0, 1e-9);
    // the first derivative's mean against central differences of the mean
    MatrixXd z(3, 1);
    z << -2.3, 0.1, 3.7;
    const double h = 1e-5;
    const VectorXd up = gpsvm::ep_predict(view, (z.array() + h).matrix(), false).mean;
    const VectorXd down = gpsvm::ep_predict(view, (z.array() - h).matrix(), false).mean;
    const VectorXd slope = gpsvm::ep_predict(view, z, true, 1, 0).mean;
    CHECK_NEAR(gap(slope, (up - down) / (2.0 * h)), 0.0, 1e-8);
  }
  // a damaged fit is an error, never a read out of bounds
  const gpsvm::EpResult r = gpsvm::ep_fit(d.K, d.y, lik, ep_control(kParallel), nullptr);
  const VectorXd short_w = r.weights.head(10);
  const gpsvm::EpFitView bad{kernel, d.x, short_w, r.site_precision, r.chol};
  CHECK_THROWS(gpsvm::ep_predict(bad, d.x, true), std::invalid_argument);
}

TEST_CASE("EP: status when capped, interrupts, and bad input") {
  const Data d = sinc_data(12, 1.0, 61);
  const gpsvm::EpsilonInsensitive lik(5.0, 0.1);
  const gpsvm::EpResult capped =
      gpsvm::ep_fit(d.K, d.y, lik, ep_control(kParallel, 1e-12, 1), nullptr);
  CHECK(!capped.status.converged && capped.status.iterations == 1);
  CHECK(capped.status.change >= capped.status.tol && capped.status.tol == 1e-12);
  CHECK(std::isfinite(capped.log_evidence));
  // the interrupt callback is called at every sweep, and what it throws
  // (R's interrupt is not a std::exception) passes through, warm start or not
  int calls = 0;
  const gpsvm::EpResult counted =
      gpsvm::ep_fit(d.K, d.y, lik, ep_control(kSequential), [&calls] { ++calls; });
  CHECK(calls >= counted.status.iterations);
  struct Stop {};
  bool stopped = false;
  gpsvm::EpControl warm = ep_control(kParallel);
  warm.initial_precision = counted.site_precision;
  warm.initial_nu = counted.site_nu;
  try {
    gpsvm::ep_fit(d.K, d.y, lik, warm, [] { throw Stop(); });
  } catch (const Stop&) {
    stopped = true;
  }
  CHECK(stopped);
  CHECK_THROWS(gpsvm::ep_fit(MatrixXd(d.K.topRows(5)), d.y, lik, ep_control(kParallel), nullptr),
               std::invalid_argument);
  CHECK_THROWS(gpsvm::ep_fit(d.K, VectorXd(d.y.head(5)), lik, ep_control(kParallel), nullptr),
               std::invalid_argument);
  VectorXd bad_y = d.y;
  bad_y[2] = std::numeric_limits<double>::infinity();
  CHECK_THROWS(gpsvm::ep_fit(d.K, bad_y, lik, ep_control(kParallel), nullptr),
               std::invalid_argument);
}

}  // namespace gpsvm_tests_ep
