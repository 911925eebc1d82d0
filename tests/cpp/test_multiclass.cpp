// The joint K-class classifier's leave-one-out criterion (multiclass.hpp),
// against independent computations:
//   * the cavities against the GP-regression leave-one-out identity written
//     with the dense inverse R = (K + v I)^-1 on the auxiliary targets
//     y~ = M + v W (mean y~_i - [R y~]_i / R_ii, variance 1 / R_ii - v);
//   * the criterion's analytic gradient in (log sigma, log v) against
//     central differences of refits, for Gaussian and Matern kernels with a
//     bias, small and large noise, duplicated inputs and one case; the
//     noise derivative alone for a linear kernel.
#include <cmath>
#include <gpsvm/kernels.hpp>
#include <gpsvm/multiclass.hpp>
#include <string>

#include "check.hpp"
#include "fixtures.hpp"
#include "reference.hpp"

namespace gpsvm_tests_multiclass {

namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;
using Eigen::VectorXi;

struct Data {
  MatrixXd x;
  VectorXi y;
};

// Three classes from the signs of two noisy inputs.
Data three_classes(int n, std::uint32_t seed) {
  const fixture::Sample s =
      fixture::sample(n, 2, -2.0, 2.0, seed, [](const auto& u, ref::Random& rng) {
        const double a = u(0) + 0.3 * rng.normal(), b = u(1) + 0.3 * rng.normal();
        return (a > 0.0 ? 1.0 : 0.0) + (b > 0.5 ? 1.0 : 0.0);
      });
  return {s.x, s.y.cast<int>()};
}

gpsvm::MulticlassControl tight() {
  gpsvm::MulticlassControl c;
  c.tol = 1e-11;
  c.max_iter = 5000;
  return c;
}

gpsvm::MulticlassResult fit_at(gpsvm::Kernel kernel, const Data& d, double v, bool gradient) {
  return gpsvm::multiclass_fit(kernel, d.x, d.y, 3, v, MatrixXd(), tight(), false, {}, gradient);
}

// The criterion's gradient in (log sigma, log v) against central
// differences of refits.
void check_gradient(const gpsvm::Kernel& kernel, const Data& d, double v, const std::string& what) {
  const gpsvm::MulticlassResult fit = fit_at(kernel, d, v, true);
  CHECK_MSG(fit.status.converged, what);
  CHECK_MSG(fit.loo.gradient.size() == 2, what);
  if (fit.loo.gradient.size() != 2) return;
  const double h = 1e-4;
  const double scale = 1.0 + std::fabs(fit.loo.value);
  if (kernel.radial()) {
    gpsvm::Kernel up = kernel, down = kernel;
    up.sigma *= std::exp(h);
    down.sigma *= std::exp(-h);
    const double fd = (fit_at(up, d, v, false).loo.value - fit_at(down, d, v, false).loo.value) /
                      (2.0 * h);
    CHECK_NEAR_MSG(fit.loo.gradient[0], fd, 1e-6 * scale, what + ": log sigma");
  } else {
    CHECK_MSG(fit.loo.gradient[0] == 0.0, what + ": no width");
  }
  const double fd_v = (fit_at(kernel, d, v * std::exp(h), false).loo.value -
                       fit_at(kernel, d, v * std::exp(-h), false).loo.value) /
                      (2.0 * h);
  CHECK_NEAR_MSG(fit.loo.gradient[1], fd_v, 1e-6 * scale, what + ": log v");
}

}  // namespace

TEST_CASE("multiclass: the cavities are GP regression's leave-one-out on the auxiliary targets") {
  const Data d = three_classes(25, 11);
  gpsvm::Kernel kernel = gpsvm::Kernel::rbf(1.3);
  kernel.constant = 1.0;
  for (double v : {0.02, 0.5, 4.0}) {
    const gpsvm::MulticlassResult fit = fit_at(kernel, d, v, false);
    const MatrixXd K = gpsvm::kernel_matrix(kernel, d.x);
    const MatrixXd R = (K + v * MatrixXd::Identity(25, 25)).inverse();
    const MatrixXd target = fit.mean + v * fit.weights;
    const MatrixXd Ry = R * target;
    for (int i = 0; i < 25; ++i) {
      CHECK_REL(fit.loo.spread2[i], 1.0 / R(i, i), 1e-9);
      for (int k = 0; k < 3; ++k)
        CHECK_NEAR(fit.loo.mean(i, k), target(i, k) - Ry(i, k) / R(i, i), 1e-8);
    }
    // and the criterion is the sum of the cases' log probabilities of their
    // own class under those predictives
    const MatrixXd logp = gpsvm::multiclass_probabilities(
        fit.loo.mean, (fit.loo.spread2.array() - v).matrix(), v, true);
    double total = 0.0;
    for (int i = 0; i < 25; ++i) total += logp(i, d.y[i]);
    CHECK_NEAR(fit.loo.value, total, 1e-9 * (1.0 + std::fabs(total)));
  }
}

TEST_CASE("multiclass: the leave-one-out gradient matches central differences") {
  const Data d = three_classes(30, 7);
  for (double v : {0.02, 0.3, 3.0}) {
    gpsvm::Kernel rbf = gpsvm::Kernel::rbf(0.8);
    rbf.constant = 1.0;
    check_gradient(rbf, d, v, "rbf v = " + std::to_string(v));
    gpsvm::Kernel matern = gpsvm::Kernel::matern(1, 1.5);
    matern.constant = 0.5;
    check_gradient(matern, d, v, "matern v = " + std::to_string(v));
  }
  gpsvm::Kernel wide = gpsvm::Kernel::rbf(20.0);
  wide.constant = 1.0;
  check_gradient(wide, d, 0.1, "a nearly constant kernel");
  check_gradient(gpsvm::Kernel::linear(), d, 0.2, "linear");
}

TEST_CASE("multiclass: the leave-one-out gradient with duplicated inputs and one case") {
  Data d = three_classes(12, 3);
  Data twice;
  twice.x.resize(24, 2);
  twice.x << d.x, d.x;
  twice.y.resize(24);
  twice.y << d.y, d.y;
  gpsvm::Kernel kernel = gpsvm::Kernel::rbf(1.0);
  kernel.constant = 1.0;
  check_gradient(kernel, twice, 0.1, "duplicated inputs");
  Data one;
  one.x = d.x.topRows(1);
  one.y = d.y.head(1);
  check_gradient(kernel, one, 0.1, "one case");
}

}  // namespace gpsvm_tests_multiclass
