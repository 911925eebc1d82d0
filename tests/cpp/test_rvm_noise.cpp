// Mean-field SVR with a noise scale per row (mfsvr.hpp, mfsvr_noise.hpp):
// EP with the row-labelled likelihood against EP with the plain
// likelihood at the stretched C and epsilon, the gradient in the noise by
// central differences of the EP evidence, and the varying fit's mode.
// The RVM with noise that varies (rvm_noise.hpp) against dense formulas:
// the evidence log N(y; 0, H A^-1 H' + diag(sigma2 exp(B theta))) at the
// fit, the constant-noise fit beside it equal to rvm_fast_fit(), and the
// Laplace evidence over theta with the Fisher information written as
// 1/2 tr(C^-1 dC_j C^-1 dC_k) with a plain inverse.
#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>
#include <gpsvm/kernels.hpp>
#include <gpsvm/lowrank.hpp>
#include <gpsvm/mfsvr_noise.hpp>
#include <gpsvm/rvm_fast.hpp>
#include <gpsvm/rvm_noise.hpp>
#include <string>
#include <vector>

#include "check.hpp"
#include "fixtures.hpp"
#include "reference.hpp"

namespace gpsvm_tests_rvm_noise {

namespace {

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

const std::function<void()> kNoInterrupt = [] {};

// y = 2 sin(x) + N(0, s(x)^2), s from 0.1 to 1 over [0, 10].
using Data = fixture::Sample;

Data loud_right(int n, std::uint32_t seed) {
  return fixture::sample(n, 1, 0.0, 10.0, seed, [](const auto& x, ref::Random& rng) {
    const double u = x(0);
    return 2.0 * std::sin(u) + (0.1 + 0.9 * u * u / 100.0) * rng.normal();
  });
}

// The noise functions of a Gaussian kernel of width 4 on centres z at the
// rows of x, and their weights' prior precision K_zz / 4 (R/rvm-noise.R's form).
struct NoisePrior {
  MatrixXd basis, prec;
};

NoisePrior noise_prior(const MatrixXd& x, const MatrixXd& z) {
  const gpsvm::Kernel noise_kernel = gpsvm::Kernel::rbf(4.0);
  NoisePrior p;
  p.basis = gpsvm::kernel_matrix(noise_kernel, x, z);
  p.prec = gpsvm::kernel_matrix(noise_kernel, z, z) / 4.0;
  p.prec.diagonal().array() += 1e-8;
  return p;
}

// mfsvr's EP on the dense prior, the parallel schedule.
gpsvm::MfsvrControl dense_ep_control(double tol, int max_iter) {
  gpsvm::MfsvrControl c;  // no factor handed in: the dense kernel matrix
  c.algorithm = gpsvm::MfsvrAlgorithm::ep;
  c.ep = fixture::ep_control(gpsvm::EpSchedule::parallel, tol, max_iter);
  return c;
}

gpsvm::VaryingNoiseControl noise_control(double tol) {
  gpsvm::VaryingNoiseControl c;
  c.max_iter = 50;
  c.tol = tol;
  c.screen_log_bf = -std::numeric_limits<double>::infinity();  // search always
  return c;
}


// 2 tr((R K)^2), R = (K + S^-1)^-1 = S^1/2 B^-1 S^1/2 with a plain inverse of
// B = I + S^1/2 K S^1/2 (sites at tau = 0 allowed).
double dense_information(const MatrixXd& K, const VectorXd& tau) {
  const VectorXd sw = tau.cwiseSqrt();
  MatrixXd b = sw.asDiagonal() * K * sw.asDiagonal();
  b.diagonal().array() += 1.0;
  const MatrixXd rk = sw.asDiagonal() * b.inverse() * sw.asDiagonal() * K;
  return 2.0 * (rk * rk).trace();
}

// y = 2 sin(x) + N(0, s(x)^2) at `levels` inputs 0, 1, ... each taken
// `copies` times: a Gaussian kernel matrix of rank `levels` exactly.
Data replicated(int levels, int copies, std::uint32_t seed) {
  ref::Random rng(seed);
  Data d;
  d.x.resize(levels * copies, 1);
  d.y.resize(levels * copies);
  for (int i = 0; i < levels * copies; ++i) {
    const double u = static_cast<double>(i % levels);
    d.x(i, 0) = u;
    d.y[i] = 2.0 * std::sin(u) + (0.1 + 0.9 * u * u / 100.0) * rng.normal();
  }
  return d;
}
}  // namespace

TEST_CASE("varying-noise RVM: evidence, constant fit and Laplace evidence against dense formulas") {
  const Data d = loud_right(50, 21);
  const gpsvm::Kernel kernel = gpsvm::Kernel::rbf(1.5);
  std::vector<Index> centre_rows = {0, 12, 25, 37, 49};
  MatrixXd z(5, 1);
  for (Index j = 0; j < 5; ++j) z(j, 0) = d.x(centre_rows[j], 0);
  const NoisePrior np = noise_prior(d.x, z);
  const MatrixXd& basis = np.basis;
  const MatrixXd& prec = np.prec;
  const gpsvm::VaryingNoiseControl nctl = noise_control(1e-4);
  const gpsvm::RvmControl ctl = fixture::rvm_control(1e-8);
  const gpsvm::VaryingNoiseResult r =
      gpsvm::rvm_varying_noise_fit(kernel, d.x, d.y, ctl, basis, prec, nctl, kNoInterrupt);
  CHECK(r.status.converged);
  // the constant fit is rvm_fast_fit()'s
  const gpsvm::RvmResult c = gpsvm::rvm_fast_fit(kernel, d.x, d.y, ctl, kNoInterrupt);
  CHECK(c.active == r.constant.active);
  CHECK_NEAR(r.constant.log_lik, c.log_lik, 1e-10 * (1.0 + std::fabs(c.log_lik)));
  // the evidence at the fitted noise function
  const Index n = d.x.rows();
  MatrixXd h(n, n + 1);
  h.col(0).setOnes();
  h.rightCols(n) = gpsvm::kernel_matrix(kernel, d.x);
  const VectorXd s = (r.fit.sigma2 * (basis * r.theta).array().exp()).matrix();
  MatrixXd cov = MatrixXd(s.asDiagonal());
  for (size_t k = 0; k < r.fit.active.size(); ++k)
    cov += h.col(r.fit.active[k]) * h.col(r.fit.active[k]).transpose() / r.fit.alpha[static_cast<Index>(k)];
  CHECK_NEAR(r.fit.log_lik, ref::log_gauss(d.y, cov), 1e-8 * (1.0 + std::fabs(r.fit.log_lik)));
  CHECK_MSG(r.fit.log_lik > c.log_lik + 5.0, "varying noise fits these data better");
  // Laplace: Fisher information in (log sigma2, theta), Schur complement
  const MatrixXd ci = cov.inverse();
  MatrixXd j(n, 6);
  j.col(0).setOnes();
  j.rightCols(5) = basis;
  MatrixXd info(6, 6);
  for (Index a = 0; a < 6; ++a)
    for (Index b = 0; b < 6; ++b) {
      const MatrixXd da = (s.array() * j.col(a).array()).matrix().asDiagonal();
      const MatrixXd db = (s.array() * j.col(b).array()).matrix().asDiagonal();
      info(a, b) = 0.5 * (ci * da * ci * db).trace();
    }
  const MatrixXd fs = info.bottomRightCorner(5, 5) -
                      info.bottomLeftCorner(5, 1) * info.topRightCorner(1, 5) / info(0, 0);
  const double laplace = r.fit.log_lik - 0.5 * r.theta.dot(prec * r.theta) -
                         0.5 * (std::log((prec + fs).determinant()) - std::log(prec.determinant()));
  CHECK_NEAR(r.log_marginal, laplace, 1e-6 * (1.0 + std::fabs(laplace)));
}

TEST_CASE("varying-noise RVM: the screen's first-step log Bayes factor against dense formulas") {
  // at theta = 0 (the constant fit, its alphas held): the gradient of
  // log N(y | 0, C) in (log sigma2, theta) written out, 1/2 y' C^-1 D_a C^-1 y
  // - 1/2 tr(C^-1 D_a), D_a = diag(s o j_a), and the information
  // 1/2 tr(C^-1 D_a C^-1 D_b); the quadratic model's gain beyond the level's
  // own, less the Occam term
  const Data d = loud_right(40, 5);
  const gpsvm::Kernel kernel = gpsvm::Kernel::rbf(1.5);
  MatrixXd z(4, 1);
  z << 1.0, 4.0, 6.5, 9.0;
  const NoisePrior np = noise_prior(d.x, z);
  gpsvm::VaryingNoiseControl nctl = noise_control(1e-4);
  nctl.screen_log_bf = std::numeric_limits<double>::infinity();  // stop at the first step
  const gpsvm::RvmControl ctl = fixture::rvm_control(1e-8);
  const gpsvm::VaryingNoiseResult r =
      gpsvm::rvm_varying_noise_fit(kernel, d.x, d.y, ctl, np.basis, np.prec, nctl, kNoInterrupt);
  CHECK(r.screened);
  CHECK(r.status.converged);
  CHECK(r.theta.cwiseAbs().maxCoeff() == 0.0);
  CHECK(r.fit.active == r.constant.active);
  CHECK(r.fit.log_lik == r.constant.log_lik);
  CHECK_NEAR(r.log_marginal, r.constant.log_lik + r.first_step_log_bf, 1e-12);
  const Index n = d.x.rows(), m = 4;
  MatrixXd h(n, n + 1);
  h.col(0).setOnes();
  h.rightCols(n) = gpsvm::kernel_matrix(kernel, d.x);
  const VectorXd s = VectorXd::Constant(n, r.constant.sigma2);
  MatrixXd cov = MatrixXd(s.asDiagonal());
  for (size_t k = 0; k < r.constant.active.size(); ++k)
    cov += h.col(r.constant.active[k]) * h.col(r.constant.active[k]).transpose() /
           r.constant.alpha[static_cast<Index>(k)];
  const MatrixXd ci = cov.inverse();
  const VectorXd ciy = ci * d.y;
  MatrixXd j(n, m + 1);
  j.col(0).setOnes();
  j.rightCols(m) = np.basis;
  VectorXd g(m + 1);
  MatrixXd info(m + 1, m + 1);
  for (Index a = 0; a <= m; ++a) {
    const VectorXd da = s.cwiseProduct(j.col(a));
    g[a] = 0.5 * (ciy.array().square() * da.array()).sum() - 0.5 * (ci.diagonal().array() * da.array()).sum();
    for (Index b = 0; b <= m; ++b) {
      const MatrixXd db = s.cwiseProduct(j.col(b)).asDiagonal();
      info(a, b) = 0.5 * (ci * da.asDiagonal() * ci * db).trace();
    }
  }
  MatrixXd a = info;
  a.bottomRightCorner(m, m) += np.prec;
  const double gain = 0.5 * g.dot(a.inverse() * g) - 0.5 * g[0] * g[0] / a(0, 0);
  const MatrixXd fs = info.bottomRightCorner(m, m) -
                      info.bottomLeftCorner(m, 1) * info.topRightCorner(1, m) / info(0, 0);
  const double expected =
      gain - 0.5 * (std::log((np.prec + fs).determinant()) - std::log(np.prec.determinant()));
  CHECK_NEAR(r.first_step_log_bf, expected, 1e-6 * (1.0 + std::fabs(expected)));
  // the noise of these data grows tenfold: the first step's factor is
  // positive, and the search (no screen) gives the same first step and a
  // factor above 3
  CHECK(r.first_step_log_bf > 0.0);
  nctl.screen_log_bf = -std::numeric_limits<double>::infinity();
  const gpsvm::VaryingNoiseResult full =
      gpsvm::rvm_varying_noise_fit(kernel, d.x, d.y, ctl, np.basis, np.prec, nctl, kNoInterrupt);
  CHECK(!full.screened);
  CHECK(full.first_step_log_bf == r.first_step_log_bf);
  CHECK(full.log_marginal - full.constant.log_lik > 3.0);
  // constant noise (sd 0.3): both factors negative
  const Data flat = fixture::sample(40, 1, 0.0, 10.0, 5, [](const auto& x, ref::Random& rng) {
    return 2.0 * std::sin(x(0)) + 0.3 * rng.normal();
  });
  const NoisePrior fp = noise_prior(flat.x, z);
  const gpsvm::VaryingNoiseResult quiet =
      gpsvm::rvm_varying_noise_fit(kernel, flat.x, flat.y, ctl, fp.basis, fp.prec, nctl, kNoInterrupt);
  CHECK(quiet.first_step_log_bf < 0.0);
  CHECK(quiet.log_marginal - quiet.constant.log_lik < 0.0);
}

TEST_CASE("varying-noise fits over several bases: the constant fit shared, the screen for all") {
  // each basis's fit in one call equals its fit alone; a screen above one
  // basis's first step and below another's searches both
  const Data d = loud_right(40, 6);
  const gpsvm::Kernel kernel = gpsvm::Kernel::rbf(1.5);
  MatrixXd z1(3, 1), z2(5, 1);
  z1 << 1.0, 5.0, 9.0;
  z2 << 0.5, 2.5, 5.0, 7.5, 9.5;
  const NoisePrior p1 = noise_prior(d.x, z1), p2 = noise_prior(d.x, z2);
  const std::vector<gpsvm::NoiseBasis> bases = {{p1.basis, p1.prec}, {p2.basis, p2.prec}};
  gpsvm::VaryingNoiseControl nctl = noise_control(1e-6);
  const gpsvm::RvmControl ctl = fixture::rvm_control(1e-8);
  const auto both = gpsvm::rvm_varying_noise_fits(kernel, d.x, d.y, ctl, bases, nctl, kNoInterrupt);
  for (size_t i = 0; i < 2; ++i) {
    const gpsvm::VaryingNoiseResult one = gpsvm::rvm_varying_noise_fit(
        kernel, d.x, d.y, ctl, bases[i].basis, bases[i].precision, nctl, kNoInterrupt);
    CHECK(both[i].log_marginal == one.log_marginal);
    CHECK(both[i].theta == one.theta);
    CHECK(both[i].fit.active == one.fit.active);
    CHECK(both[i].first_step_log_bf == one.first_step_log_bf);
  }
  nctl.screen_log_bf = std::min(both[0].first_step_log_bf, both[1].first_step_log_bf) + 1e-9;
  const auto screen = gpsvm::rvm_varying_noise_fits(kernel, d.x, d.y, ctl, bases, nctl, kNoInterrupt);
  CHECK(!screen[0].screened && !screen[1].screened);
  CHECK(screen[0].log_marginal == both[0].log_marginal);
  nctl.screen_log_bf = std::max(both[0].first_step_log_bf, both[1].first_step_log_bf) + 1e-9;
  const auto stopped = gpsvm::rvm_varying_noise_fits(kernel, d.x, d.y, ctl, bases, nctl, kNoInterrupt);
  CHECK(stopped[0].screened && stopped[1].screened);
  CHECK(stopped[1].log_marginal == both[1].constant.log_lik + both[1].first_step_log_bf);
  // mfsvr's: the same sharing, with the amplitude fitted
  gpsvm::MfsvrControl mctl = dense_ep_control(1e-10, 500);
  gpsvm::VaryingNoiseControl mn = noise_control(1e-6);
  mn.amplitude = true;
  const VectorXd ys = d.y / std::sqrt(d.y.squaredNorm() / static_cast<double>(d.y.size()));
  const auto mboth = gpsvm::mfsvr_varying_noise_fits(d.x, ys, kernel, 3.0, 0.05, mctl, bases, mn, kNoInterrupt);
  for (size_t i = 0; i < 2; ++i) {
    const gpsvm::MfsvrNoiseResult one = gpsvm::mfsvr_varying_noise_fit(
        d.x, ys, kernel, 3.0, 0.05, mctl, bases[i].basis, bases[i].precision, mn, kNoInterrupt);
    CHECK(mboth[i].log_marginal == one.log_marginal);
    CHECK(mboth[i].theta == one.theta);
    CHECK(mboth[i].constant_log_evidence == one.constant_log_evidence);
  }
  mn.screen_log_bf = std::numeric_limits<double>::infinity();
  const auto mstop = gpsvm::mfsvr_varying_noise_fits(d.x, ys, kernel, 3.0, 0.05, mctl, bases, mn, kNoInterrupt);
  for (size_t i = 0; i < 2; ++i) {
    CHECK(mstop[i].screened);
    CHECK(mstop[i].theta.cwiseAbs().maxCoeff() == 0.0);
    CHECK(mstop[i].first_step_log_bf == mboth[i].first_step_log_bf);
    CHECK(mstop[i].log_marginal == mstop[i].constant_log_evidence + mstop[i].first_step_log_bf);
  }
}

TEST_CASE("varying-noise RVM: a mismatched basis or prior is refused") {
  const Data d = loud_right(10, 3);
  const gpsvm::Kernel kernel = gpsvm::Kernel::rbf(1.5);
  gpsvm::VaryingNoiseControl nctl = noise_control(1e-3);
  nctl.max_iter = 5;
  const gpsvm::RvmControl ctl = fixture::rvm_control(1e-6);
  const auto refused = [&](const MatrixXd& b, const MatrixXd& p) {
    try {
      gpsvm::rvm_varying_noise_fit(kernel, d.x, d.y, ctl, b, p, nctl, kNoInterrupt);
    } catch (const std::invalid_argument&) {
      return true;
    }
    return false;
  };
  CHECK(refused(MatrixXd::Ones(9, 2), MatrixXd::Identity(2, 2)));
  CHECK(refused(MatrixXd::Ones(10, 2), MatrixXd::Identity(3, 3)));
  CHECK(refused(MatrixXd::Ones(10, 0), MatrixXd::Identity(0, 0)));
  MatrixXd bad = MatrixXd::Ones(10, 2);
  bad(3, 1) = std::nan("");
  CHECK(refused(bad, MatrixXd::Identity(2, 2)));
}

TEST_CASE("varying-noise mfsvr: per-row sites, the evidence's gradient and the mode") {
  const Data d = loud_right(40, 8);
  const Index n = d.x.rows();
  const gpsvm::Kernel kernel = gpsvm::Kernel::rbf(1.5);
  const gpsvm::MfsvrControl ctl = dense_ep_control(1e-11, 2000);
  const double C = 3.0, eps = 0.1;
  // one scale for all rows: the plain likelihood at C e^-l, epsilon e^l,
  // also on the sequential schedule (sites in a random order)
  for (gpsvm::EpSchedule schedule : {gpsvm::EpSchedule::parallel, gpsvm::EpSchedule::sequential}) {
    gpsvm::MfsvrControl c = ctl;
    c.ep.schedule = schedule;
    c.ep.damping = schedule == gpsvm::EpSchedule::parallel ? 1.0 : 0.7;
    const gpsvm::MfsvrFit plain =
        gpsvm::mfsvr_fit(d.x, d.y, kernel, C * std::exp(-0.4), eps * std::exp(0.4), c, kNoInterrupt);
    c.log_noise_scale = VectorXd::Constant(n, 0.4);
    const gpsvm::MfsvrFit rows = gpsvm::mfsvr_fit(d.x, d.y, kernel, C, eps, c, kNoInterrupt);
    CHECK_NEAR(rows.ep.log_evidence, plain.ep.log_evidence, 1e-8);
    CHECK((rows.ep.mean - plain.ep.mean).cwiseAbs().maxCoeff() < 1e-7);
  }
  // a scale that varies: d log Z / d l_i against central differences of
  // the evidence in the direction of one smooth function of the inputs
  VectorXd l(n), dir(n);
  for (Index i = 0; i < n; ++i) {
    l[i] = -1.0 + 0.2 * d.x(i, 0);
    dir[i] = std::cos(d.x(i, 0));
  }
  gpsvm::MfsvrControl c = ctl;
  c.gradient = true;
  c.log_noise_scale = l;
  const gpsvm::MfsvrFit at = gpsvm::mfsvr_fit(d.x, d.y, kernel, C, eps, c, kNoInterrupt);
  const double h = 1e-4;
  c.log_noise_scale = l + h * dir;
  const double up = gpsvm::mfsvr_fit(d.x, d.y, kernel, C, eps, c, kNoInterrupt).ep.log_evidence;
  c.log_noise_scale = l - h * dir;
  const double down = gpsvm::mfsvr_fit(d.x, d.y, kernel, C, eps, c, kNoInterrupt).ep.log_evidence;
  const double analytic = at.row_gradient.dot(dir);
  CHECK_NEAR(analytic, (up - down) / (2.0 * h), 1e-5 * (1.0 + std::fabs(analytic)));
  // the varying fit: the log posterior's gradient at its mode is small,
  // and these data favour it over constant noise
  MatrixXd z(5, 1);
  for (Index j = 0; j < 5; ++j) z(j, 0) = 2.0 * static_cast<double>(j) + 1.0;
  const NoisePrior np = noise_prior(d.x, z);
  const gpsvm::MfsvrNoiseResult r = gpsvm::mfsvr_varying_noise_fit(
      d.x, d.y, kernel, C, eps, ctl, np.basis, np.prec, noise_control(1e-5), kNoInterrupt);
  const MatrixXd& basis = np.basis;
  const MatrixXd& prec = np.prec;
  CHECK(r.status.converged);
  const VectorXd g = basis.transpose() * r.fit.row_gradient - prec * r.theta;
  CHECK_MSG(g.cwiseAbs().maxCoeff() < 1e-2, "the noise weights at the posterior mode");
  CHECK_NEAR(r.fit.row_gradient.sum(), 0.0, 1e-2);
  CHECK_MSG(r.log_marginal > r.constant_log_evidence, "varying noise fits these data better");
  // refused: no per-row scales with a search for C
  c.choose_C = true;
  bool refused = false;
  try {
    gpsvm::mfsvr_fit(d.x, d.y, kernel, C, eps, c, kNoInterrupt);
  } catch (const std::invalid_argument&) {
    refused = true;
  }
  CHECK(refused);
}

TEST_CASE("varying-noise mfsvr with the mean's amplitude: its gradient and the mode") {
  namespace nd = gpsvm::mfsvr_noise_detail;
  const Data d = loud_right(40, 9);
  const Index n = d.x.rows();
  const gpsvm::Kernel kernel = gpsvm::Kernel::rbf(1.5);
  const gpsvm::MfsvrControl ctl = dense_ep_control(1e-12, 4000);
  const double C = 3.0, eps = 0.1;
  VectorXd l(n);
  for (Index i = 0; i < n; ++i) l[i] = -1.0 + 0.2 * d.x(i, 0);
  const VectorXd y = d.y;
  gpsvm::MfsvrControl c = ctl;
  c.gradient = true;
  for (double rho : {-0.7, 0.0, 0.4}) {
    const nd::AmplitudePoint at =
        nd::fit_at(d.x, y, kernel, C, eps, c, rho, l, nullptr, 0.0, kNoInterrupt);
    const VectorXd t = y * std::exp(-rho);
    const VectorXd scaled = (l.array() - rho).matrix();
    double information = 0.0;
    const double analytic = nd::amplitude_gradient(at.fit, d.x, t, kernel, C, eps, scaled,
                                                   &information, kNoInterrupt);
    // central differences of L(rho, l), l held
    const double h = 1e-4;
    const double up = nd::fit_at(d.x, y, kernel, C, eps, c, rho + h, l, nullptr, 0.0, kNoInterrupt)
                          .log_evidence;
    const double down = nd::fit_at(d.x, y, kernel, C, eps, c, rho - h, l, nullptr, 0.0, kNoInterrupt)
                            .log_evidence;
    CHECK_NEAR(analytic, (up - down) / (2.0 * h), 1e-5 * (1.0 + std::fabs(analytic)));
    // the same derivative from the prior's side, d K / d rho = 2 e^(2 rho) K
    // on the original scale: w' K w - tr(R K) with the rescaled fit's w and
    // R = (K + S^-1)^-1 by a plain inverse of B = I + S^1/2 K S^1/2
    const MatrixXd K = gpsvm::kernel_matrix(kernel, d.x, d.x);
    const VectorXd sw = at.fit.ep.site_precision.cwiseSqrt();
    MatrixXd b = sw.asDiagonal() * K * sw.asDiagonal();
    b.diagonal().array() += 1.0;
    const MatrixXd r = sw.asDiagonal() * b.inverse() * sw.asDiagonal();
    const VectorXd& w = at.fit.ep.weights;
    CHECK_NEAR(analytic, w.dot(K * w) - (r * K).trace(), 1e-6 * (1.0 + std::fabs(analytic)));
    const MatrixXd rk = r * K;
    CHECK_NEAR(information, 2.0 * (rk * rk).trace(), 1e-8 * (1.0 + information));
  }
  // the fit: at the mode the gradient in (rho, a, theta) is small, rho
  // moved, and the constant model beside it has its own rho and a at their
  // maximum (above the fit at rho = 0, l = 0)
  MatrixXd z(5, 1);
  for (Index j = 0; j < 5; ++j) z(j, 0) = 2.0 * static_cast<double>(j) + 1.0;
  const NoisePrior np = noise_prior(d.x, z);
  gpsvm::VaryingNoiseControl nctl = noise_control(1e-6);
  nctl.max_iter = 200;
  nctl.amplitude = true;
  const gpsvm::MfsvrNoiseResult r = gpsvm::mfsvr_varying_noise_fit(
      d.x, d.y, kernel, C, eps, ctl, np.basis, np.prec, nctl, kNoInterrupt);
  CHECK(r.status.converged);
  CHECK(std::fabs(r.log_amplitude) > 0.05);
  const double rho = r.log_amplitude;
  const VectorXd scaled = (r.log_noise_scale.array() - rho).matrix();
  const double g_rho = nd::amplitude_gradient(r.fit, d.x, y * std::exp(-rho), kernel, C, eps,
                                              scaled, nullptr, kNoInterrupt);
  CHECK_MSG(std::fabs(g_rho) < 1e-2, "the amplitude at the mode");
  const VectorXd g = np.basis.transpose() * r.fit.row_gradient - np.prec * r.theta;
  CHECK_MSG(g.cwiseAbs().maxCoeff() < 1e-2, "the noise weights at the mode");
  CHECK_NEAR(r.fit.row_gradient.sum(), 0.0, 1e-2);
  CHECK_NEAR(r.log_evidence,
             nd::fit_at(d.x, y, kernel, C, eps, ctl, rho, r.log_noise_scale, nullptr, 0.0,
                        kNoInterrupt).log_evidence, 1e-6);
  const gpsvm::MfsvrNoiseResult fixed = gpsvm::mfsvr_varying_noise_fit(
      d.x, d.y, kernel, C, eps, ctl, np.basis, np.prec, noise_control(1e-6), kNoInterrupt);
  CHECK(fixed.log_amplitude == 0.0);
  CHECK(r.constant_log_evidence > fixed.constant_log_evidence);
  CHECK(r.log_marginal > fixed.log_marginal - 1e-6);
  CHECK_MSG(r.log_marginal > r.constant_log_evidence, "varying noise fits these data better");
}

TEST_CASE("varying-noise mfsvr: the amplitude's information on a low-rank prior") {
  // 2 tr((R K)^2) from the m x m side against the dense formula on the same
  // K = G G' + diag(lambda), with sites at tau = 0 and a large one
  namespace nd = gpsvm::mfsvr_noise_detail;
  ref::Random rng(31);
  const Index n = 30, m = 5;
  const MatrixXd G = rng.uniform_matrix(n, m, -1.0, 1.0);
  VectorXd tau = rng.uniform_matrix(n, 1, 0.0, 3.0).col(0);
  tau[3] = 0.0;
  tau[17] = 0.0;
  tau[8] = 1e4;
  for (const double scale : {0.0, 1e-3, 0.5}) {
    VectorXd lambda = scale * rng.uniform_matrix(n, 1, 0.0, 1.0).col(0);
    lambda[5] = 0.0;
    const VectorXd W = tau.cwiseQuotient((1.0 + lambda.array() * tau.array()).matrix());
    MatrixXd a = G.transpose() * W.asDiagonal() * G;
    a.diagonal().array() += 1.0;
    const MatrixXd chol_a = Eigen::LLT<MatrixXd>(a).matrixL();
    const gpsvm::HeldRows rows(G);
    const double low = nd::low_rank_information(rows, lambda, tau, chol_a, kNoInterrupt);
    MatrixXd K = G * G.transpose();
    K.diagonal() += lambda;
    CHECK_REL_MSG(low, dense_information(K, tau), 1e-8, "lambda scale " + std::to_string(scale));
  }
  // a site at tau = 0 adds nothing: the same without its row
  const VectorXd lambda = VectorXd::Constant(n, 0.01);
  const auto information = [&](const MatrixXd& g, const VectorXd& lam, const VectorXd& t) {
    MatrixXd a = g.transpose() * t.cwiseQuotient((1.0 + lam.array() * t.array()).matrix())
                                     .asDiagonal() * g;
    a.diagonal().array() += 1.0;
    return nd::low_rank_information(gpsvm::HeldRows(g), lam, t,
                                    Eigen::LLT<MatrixXd>(a).matrixL(), kNoInterrupt);
  };
  std::vector<Index> keep;
  for (Index i = 0; i < n; ++i)
    if (tau[i] > 0.0) keep.push_back(i);
  MatrixXd g_kept(static_cast<Index>(keep.size()), m);
  VectorXd lam_kept(g_kept.rows()), tau_kept(g_kept.rows());
  for (Index k = 0; k < g_kept.rows(); ++k) {
    g_kept.row(k) = G.row(keep[static_cast<std::size_t>(k)]);
    lam_kept[k] = lambda[keep[static_cast<std::size_t>(k)]];
    tau_kept[k] = tau[keep[static_cast<std::size_t>(k)]];
  }
  CHECK_REL(information(G, lambda, tau), information(g_kept, lam_kept, tau_kept), 1e-12);
}

TEST_CASE("varying-noise mfsvr with the amplitude: the same search on an exact low-rank factor") {
  // 12 inputs, 5 copies each: K has rank 12, and the pivoted factor exact
  // to 1e-13 makes FITC on its pivots K itself, so the search on it (EP
  // and the amplitude's information in O(n m^2)) must find the dense one
  namespace nd = gpsvm::mfsvr_noise_detail;
  const Data d = replicated(12, 5, 44);
  const Index n = d.x.rows();
  const gpsvm::Kernel kernel = gpsvm::Kernel::rbf(1.5);
  const gpsvm::MfsvrControl dense = dense_ep_control(1e-10, 2000);
  MatrixXd G;
  std::vector<Index> pivots;
  CHECK(gpsvm::pivoted_cholesky(gpsvm::KernelEvaluator(kernel, d.x), 1e-13, n, G, pivots));
  CHECK(G.cols() == 12);
  gpsvm::MfsvrControl low = dense;
  low.inducing.resize(G.cols(), 1);
  for (Index k = 0; k < G.cols(); ++k) low.inducing.row(k) = d.x.row(pivots[static_cast<std::size_t>(k)]);
  low.inducing_factor.emplace(gpsvm::PivotedFactor{G, pivots});
  MatrixXd z(4, 1);
  z << 0.5, 4.0, 7.5, 11.0;
  const NoisePrior np = noise_prior(d.x, z);
  gpsvm::VaryingNoiseControl nctl = noise_control(1e-6);
  nctl.max_iter = 200;
  nctl.amplitude = true;
  const VectorXd ys = d.y / std::sqrt(d.y.squaredNorm() / static_cast<double>(n));
  const double C = 3.0, eps = 0.05;
  const gpsvm::MfsvrNoiseResult a =
      gpsvm::mfsvr_varying_noise_fit(d.x, ys, kernel, C, eps, dense, np.basis, np.prec, nctl, kNoInterrupt);
  const gpsvm::MfsvrNoiseResult b =
      gpsvm::mfsvr_varying_noise_fit(d.x, ys, kernel, C, eps, low, np.basis, np.prec, nctl, kNoInterrupt);
  CHECK(a.status.converged && b.status.converged);
  CHECK(a.fit.ep.low_rank_mean.size() == 0 && b.fit.ep.low_rank_mean.size() == 12);
  CHECK(std::fabs(a.log_amplitude) > 0.05);
  // The factor changes K by at most 1e-13 of its diagonal, below EP's tol
  // (1e-10), so each EP fit of one search is the other's to about that tol
  // in its sites (the evidence, stationary in them, closer still), both
  // searches take the same Newton steps (their accept tests have a margin
  // of 1e-10 in the objective), and the mode moves with the fits' error
  // through Newton's system: a hundred times EP's tol bounds it.
  const double tol = 100.0 * dense.ep.tol;
  CHECK(a.status.iterations == b.status.iterations);
  CHECK_NEAR(b.log_marginal, a.log_marginal, tol * (1.0 + std::fabs(a.log_marginal)));
  CHECK_NEAR(b.constant_log_evidence, a.constant_log_evidence,
             tol * (1.0 + std::fabs(a.constant_log_evidence)));
  CHECK_NEAR(b.log_amplitude, a.log_amplitude, tol);
  CHECK_NEAR((b.theta - a.theta).cwiseAbs().maxCoeff(), 0.0, tol * (1.0 + a.theta.cwiseAbs().maxCoeff()));
  CHECK_NEAR(b.level, a.level, tol);
  // a step's fit on the factor starts from the last fit's sites, and
  // from the mode's own it stays there
  gpsvm::MfsvrControl warm = low;
  warm.gradient = true;
  const nd::AmplitudePoint again =
      nd::fit_at(d.x, ys, kernel, C, eps, warm, b.log_amplitude, b.log_noise_scale, &b.fit,
                 b.log_amplitude, kNoInterrupt);
  CHECK(again.fit.ep.warm_start);
  CHECK(again.fit.ep.status.iterations <= 2);
  CHECK_NEAR(again.log_evidence, b.log_evidence, 1e-8);
  // and the information at the low-rank fit equals the dense formula at its sites
  const double rho = b.log_amplitude;
  const VectorXd t = ys * std::exp(-rho);
  const VectorXd scaled = (b.log_noise_scale.array() - rho).matrix();
  const nd::InducingPriorRows prior(kernel, d.x, low, kNoInterrupt);
  double low_info = 0.0;
  nd::amplitude_gradient(b.fit, d.x, t, kernel, C, eps, scaled, &low_info, kNoInterrupt, &prior);
  CHECK_REL(low_info, dense_information(gpsvm::kernel_matrix(kernel, d.x, d.x), b.fit.ep.site_precision), 1e-8);
  CHECK_THROWS(nd::amplitude_gradient(b.fit, d.x, t, kernel, C, eps, scaled, &low_info, kNoInterrupt),
               std::logic_error);
}

}  // namespace gpsvm_tests_rvm_noise
