// The EP schedules (ep_engine.hpp) share one fixed point: parallel,
// accelerated and sequential sweeps (two random orders) end at the same
// posterior means, variances and log evidence, to 1e-8, on random problems
// built to be hard: targets with almost no noise, inputs that occur twice,
// the tube likelihood from C = 0.01 to 300 (and 1e4 in part), the
// classifier's likelihood at tiny and large input noise; on the dense prior
// and on FITC.  No schedule
// is the reference: each must agree with every other, and each must have
// converged (a capped run is a failure, not a loose match).
#include <cmath>
#include <gpsvm/ep_engine.hpp>
#include <gpsvm/ep_priors.hpp>
#include <gpsvm/fitc.hpp>
#include <gpsvm/kernels.hpp>
#include <gpsvm/likelihoods.hpp>
#include <string>
#include <vector>

#include "check.hpp"
#include "fixtures.hpp"
#include "reference.hpp"

namespace gpsvm_tests_ep_schedules {

namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;
using fixture::ep_control;

// Inputs uniform on [-2, 2]^2, every fifth row a copy of the row before it
// (a singular kernel matrix); targets a smooth surface plus N(0, sd^2),
// labels its sign with one in seven flipped (a copied row keeps its twin's
// label: a noise-free classifier cannot fit two labels at one input).
struct Problem {
  MatrixXd x;
  VectorXd y, label;
};

Problem hard_problem(int n, double noise_sd, std::uint32_t seed) {
  ref::Random rng(seed);
  Problem p;
  p.x = rng.uniform_matrix(n, 2, -2.0, 2.0);
  p.y.resize(n);
  p.label.resize(n);
  for (int i = 0; i < n; ++i) {
    const bool copy = i % 5 == 4;
    if (copy) p.x.row(i) = p.x.row(i - 1);
    const double f = std::sin(2.0 * p.x(i, 0)) * std::cos(p.x(i, 1)) + 0.3 * p.x(i, 1);
    p.y[i] = f + noise_sd * rng.normal();
    p.label[i] = copy ? p.label[i - 1] : (f > 0.0 ? 1.0 : -1.0) * (i % 7 == 3 ? -1.0 : 1.0);
  }
  return p;
}

// The prior covariance, dense or FITC on every fourth input (the copies
// included, so that K_mm needs its jitter), plus `diagonal` on every point.
struct Prior {
  bool fitc;
  MatrixXd K;                  // dense
  gpsvm::InducingBasis basis;  // FITC
};

Prior make_prior(bool fitc, const MatrixXd& x, double diagonal) {
  const gpsvm::Kernel kernel = gpsvm::Kernel::rbf(1.0);
  Prior p;
  p.fitc = fitc;
  if (fitc) {
    MatrixXd z(x.rows() / 4, x.cols());
    for (Eigen::Index j = 0; j < z.rows(); ++j) z.row(j) = x.row(4 * j + 3);
    p.basis = gpsvm::inducing_basis(kernel, x, z, diagonal);
  } else {
    p.K = gpsvm::kernel_matrix(kernel, x);
    p.K.diagonal().array() += diagonal;
  }
  return p;
}

template <class Likelihood>
gpsvm::EpResult fit(const Prior& prior, const VectorXd& t, const Likelihood& lik,
                    const gpsvm::EpControl& c) {
  return prior.fitc ? gpsvm::ep_fit_inducing(prior.basis, t, lik, c, nullptr)
                    : gpsvm::ep_fit(prior.K, t, lik, c, nullptr);
}

struct Schedule {
  const char* name;
  gpsvm::EpControl control;
};

// Each at its defaults in mfsvr_control() / gpc_control() (parallel from
// damping 1, accelerated at 0.7) and the sequential one in two orders.
std::vector<Schedule> schedules() {
  const double tol = 1e-12;
  const int max_iter = 5000;
  return {{"parallel", ep_control(gpsvm::EpSchedule::parallel, tol, max_iter, 1.0)},
          {"accelerated", ep_control(gpsvm::EpSchedule::accelerated, tol, max_iter, 0.7)},
          {"sequential (seed 1)", ep_control(gpsvm::EpSchedule::sequential, tol, max_iter, 1.0, 1)},
          {"sequential (seed 7)", ep_control(gpsvm::EpSchedule::sequential, tol, max_iter, 1.0, 7)}};
}

// Means to 1e-8 absolutely (the targets are of order 1), variances to 1e-8
// relatively (they span orders of magnitude: a point pinned by a tiny noise
// has a tiny one), the evidence to 1e-8 relatively (absolutely below 1).
void check_same_fixed_point(const gpsvm::EpResult& a, const gpsvm::EpResult& b,
                            const std::string& note) {
  const double tol = 1e-8;
  CHECK_NEAR_MSG(ref::gap(a.mean, b.mean), 0.0, tol, note + ": means");
  const double relative_variance =
      (a.variance.array() / b.variance.array() - 1.0).abs().maxCoeff();
  CHECK_NEAR_MSG(relative_variance, 0.0, tol, note + ": variances");
  CHECK_NEAR_MSG(a.log_evidence, b.log_evidence, tol * (1.0 + std::fabs(b.log_evidence)),
                 note + ": log evidence");
}

template <class Likelihood>
void check_schedules_agree(const Prior& prior, const VectorXd& t, const Likelihood& lik,
                           const std::string& problem) {
  std::vector<gpsvm::EpResult> fits;
  const std::vector<Schedule> all = schedules();
  for (const Schedule& s : all) {
    fits.push_back(fit(prior, t, lik, s.control));
    const gpsvm::SolverStatus& status = fits.back().status;
    CHECK_MSG(status.converged && fits.back().mean.allFinite(),
              problem + ", " + s.name + ": converged in " + std::to_string(status.iterations) +
                  " sweeps");
    // a run that ends above tol (at the rounding level it measured) says so
    CHECK_MSG(status.change < s.control.tol || !status.reason.empty(),
              problem + ", " + s.name + ": reason for a change of " +
                  gpsvm_test::show(status.change));
  }
  for (std::size_t i = 0; i < fits.size(); ++i)
    for (std::size_t j = i + 1; j < fits.size(); ++j)
      check_same_fixed_point(fits[i], fits[j],
                             problem + ", " + all[i].name + " vs " + all[j].name);
}

}  // namespace

// C = 300 pins many sites (precisions 1e4 to 2e5, duplicated inputs with
// different targets): sweeps at the fixed point move the marginals by
// 1e-11 to 1e-9, above tol = 1e-12, and the runs end at the rounding level
// they measure (ep_engine.hpp).  Not yet covered: C = 1e4 with epsilon = 0,
// or with noise sd 0.1 (site precisions 1e6 to 1e8): the runs end, but
// their variances differ by 1e-7 to 2e-5 relatively (the log evidence by
// 1e-7) and the measured rounding level is not always reached in 5000
// sweeps; only the cases below pass there.
void check_tube(bool fitc, double noise_sd, std::uint32_t seed, double C, double eps) {
  const Problem p = hard_problem(fitc ? 160 : 60, noise_sd, seed);
  const Prior prior = make_prior(fitc, p.x, 0.0);
  const std::string problem = std::string(fitc ? "FITC" : "dense") + ", noise sd " +
                              gpsvm_test::show(noise_sd) + ", seed " + std::to_string(seed) +
                              ", C " + gpsvm_test::show(C) + ", epsilon " + gpsvm_test::show(eps);
  check_schedules_agree(prior, p.y, gpsvm::EpsilonInsensitive(C, eps), problem);
}

TEST_CASE("EP schedules: one fixed point for the tube likelihood, C from 0.01 to 300") {
  for (bool fitc : {false, true})
    for (double noise_sd : {1e-6, 0.1})
      for (std::uint32_t seed : {1u, 2u})
        for (double C : {0.01, 0.3, 3.0, 10.0, 300.0})
          for (double eps : {0.0, 0.05}) check_tube(fitc, noise_sd, seed, C, eps);
}

TEST_CASE("EP schedules: one fixed point for the tube likelihood at C = 1e4, a tube, tiny noise") {
  for (bool fitc : {false, true})
    for (std::uint32_t seed : {1u, 2u}) check_tube(fitc, 1e-6, seed, 1e4, 0.05);
}

TEST_CASE("EP schedules: one fixed point for the classifier, tiny to large input noise") {
  for (bool fitc : {false, true}) {
    for (std::uint32_t seed : {1u, 2u}) {
      const Problem p = hard_problem(fitc ? 160 : 60, 0.0, seed);
      for (double noise : {1e-6, 1e-2, 1.0, 100.0}) {
        const Prior prior = make_prior(fitc, p.x, noise);
        for (double kappa : {0.0, 0.1}) {
          const std::string problem = std::string(fitc ? "FITC" : "dense") + ", noise " +
                                      gpsvm_test::show(noise) + ", seed " +
                                      std::to_string(seed) + ", kappa " + gpsvm_test::show(kappa);
          check_schedules_agree(prior, p.label, gpsvm::ProbitFlip(kappa, 0.0), problem);
        }
      }
    }
  }
}

}  // namespace gpsvm_tests_ep_schedules
