// The kernel evaluators (kernels.hpp): values, the fast Gaussian forms that
// SMO uses against the direct ones, derivatives against central
// differences, and argument checks.
#include <cmath>
#include <gpsvm/kernels.hpp>
#include <stdexcept>
#include <string>

#include "check.hpp"
#include "reference.hpp"

namespace gpsvm_tests_kernels {

using Eigen::MatrixXd;
using Eigen::VectorXd;

namespace {

// The order-th derivative cross-kernel at z in coordinate `coord` by central
// differences of step h of the (order - 1)-th: d^n/dz^n k(z, x) =
// (d^(n-1)/dz^(n-1) k(z + h e, x) - ... (z - h e)) / 2h.
MatrixXd central_difference(const gpsvm::KernelEvaluator& ev, const MatrixXd& z, int order,
                            Eigen::Index coord, double h) {
  MatrixXd up = z, down = z;
  up.col(coord).array() += h;
  down.col(coord).array() -= h;
  return (ev.cross(up, order - 1, coord) - ev.cross(down, order - 1, coord)) / (2.0 * h);
}

}  // namespace

TEST_CASE("kernels: values of the Gaussian, polynomial and linear kernels") {
  MatrixXd x(3, 2);
  x << 0.0, 0.0, 1.0, 0.5, -2.0, 1.0;
  const MatrixXd k = gpsvm::kernel_matrix(gpsvm::Kernel::rbf(1.0), x);
  // exp(-|x - y|^2 / (2 sigma^2)), |x1 - x2|^2 = 1.25
  CHECK_REL(k(0, 1), std::exp(-0.625), 1e-15);
  CHECK_REL(k(1, 2), std::exp(-(9.0 + 0.25) / 2.0), 1e-15);
  CHECK(k(2, 2) == 1.0 && (k - k.transpose()).cwiseAbs().maxCoeff() == 0.0);
  const MatrixXd p = gpsvm::kernel_matrix(gpsvm::Kernel::polynomial(3, 0.5, 1.0), x);
  CHECK_REL(p(1, 2), std::pow(0.5 * (-2.0 + 0.5) + 1.0, 3), 1e-15);
  const MatrixXd l = gpsvm::kernel_matrix(gpsvm::Kernel::linear(), x);
  CHECK_REL(l(1, 2), -1.5, 1e-15);
}

TEST_CASE("kernels: the fast Gaussian column and rows against the direct ones") {
  ref::Random rng(17);
  const MatrixXd pts = rng.uniform_matrix(50, 3, -1.0, 1.0);
  const gpsvm::KernelEvaluator ev(gpsvm::Kernel::rbf(0.7), pts);
  VectorXd fast(50), direct(50);
  for (Eigen::Index j : {0, 7, 49}) {
    ev.fast_column(j, fast.data());
    ev.column(j, direct.data());
    // the norm expansion rounds |x_i|^2 + |x_j|^2 (here <= 6) to ~1e-15
    CHECK_NEAR((fast - direct).cwiseAbs().maxCoeff(), 0.0, 1e-14);
  }
  const Eigen::Index rows[3] = {0, 7, 49};
  double part[3];
  ev.fast_rows(7, rows, 3, part);
  ev.column(7, direct.data());
  CHECK_NEAR(part[0], direct[0], 1e-14);
  CHECK_NEAR(part[1], 1.0, 1e-14);
  CHECK_NEAR(part[2], direct[49], 1e-14);
}

TEST_CASE("kernels: cross_times against the cross matrix times the weights") {
  ref::Random rng(23);
  // 1300 training points span two column tiles, 600 new points three row tiles
  const MatrixXd x = rng.uniform_matrix(1300, 2, -2.0, 2.0);
  const MatrixXd z = rng.uniform_matrix(600, 2, -3.0, 3.0);
  VectorXd w = rng.uniform_matrix(1300, 1, -1.0, 1.0).col(0);
  for (Eigen::Index j = 0; j < 1300; j += 3) w[j] = 0.0;  // skipped points
  for (const gpsvm::Kernel& k :
       {gpsvm::Kernel::rbf(0.6), gpsvm::Kernel::polynomial(3, 0.5, 1.0), gpsvm::Kernel::linear()}) {
    const gpsvm::KernelEvaluator ev(k, x);
    const VectorXd direct = ev.cross(z) * w;
    const VectorXd fast = ev.cross_times(z, w);
    CHECK_NEAR((fast - direct).cwiseAbs().maxCoeff(), 0.0, 1e-11 * (1.0 + direct.cwiseAbs().maxCoeff()));
  }
  // a new point equal to a training point: distance 0, not a tiny negative
  const gpsvm::KernelEvaluator ev(gpsvm::Kernel::rbf(0.6), x);
  VectorXd e = VectorXd::Zero(1300);
  e[5] = 1.0;
  CHECK_NEAR(ev.cross_times(x.row(5), e)[0], 1.0, 1e-14);
  bool threw = false;
  try {
    ev.cross_times(z, e.head(10));
  } catch (const std::invalid_argument&) {
    threw = true;
  }
  CHECK(threw);
}

TEST_CASE("kernels: multiply() and fast_gram() against the exact Gram matrix") {
  ref::Random rng(29);
  // 1300 points: several 512-row tiles below each 128-column block, the last
  // block partial (1300 = 10 x 128 + 20)
  const MatrixXd x = rng.uniform_matrix(1300, 2, -2.0, 2.0);
  const VectorXd v = rng.uniform_matrix(1300, 1, -1.0, 1.0).col(0);
  gpsvm::Kernel with_offset = gpsvm::Kernel::rbf(0.7);
  with_offset.constant = 0.3;
  for (const gpsvm::Kernel& k : {gpsvm::Kernel::rbf(0.7), with_offset, gpsvm::Kernel::polynomial(2, 0.5, 1.0)}) {
    const gpsvm::KernelEvaluator ev(k, x);
    const MatrixXd exact = ev.gram();
    const MatrixXd fast = ev.fast_gram();
    CHECK_NEAR((fast - exact).cwiseAbs().maxCoeff(), 0.0, 1e-13 * exact.cwiseAbs().maxCoeff());
    CHECK_NEAR((fast - fast.transpose()).cwiseAbs().maxCoeff(), 0.0, 0.0);
    VectorXd kv;
    ev.multiply(v, kv);
    const VectorXd direct = exact * v;
    CHECK_NEAR((kv - direct).cwiseAbs().maxCoeff(), 0.0, 1e-12 * (1.0 + direct.cwiseAbs().maxCoeff()));
  }
  // far from the origin, a narrow kernel: the fast forms keep the digits of
  // small distances (the points are centred first), and duplicates give 1
  MatrixXd far(3, 2);
  far << 1e3, -2e3, 1e3, -2e3, 1e3 + 0.05, -2e3 + 0.02;
  const gpsvm::KernelEvaluator ev(gpsvm::Kernel::rbf(0.1), far);
  const MatrixXd g = ev.fast_gram();
  const MatrixXd exact = ev.gram();
  CHECK_NEAR((g - exact).cwiseAbs().maxCoeff(), 0.0, 1e-12);
  CHECK_NEAR(g(0, 1), 1.0, 0.0);
  VectorXd gv;
  ev.multiply(VectorXd::Ones(3), gv);
  CHECK_NEAR((gv - exact.rowwise().sum()).cwiseAbs().maxCoeff(), 0.0, 1e-12);
  CHECK_NEAR((ev.cross_times(far, VectorXd::Ones(3)) - exact.rowwise().sum()).cwiseAbs().maxCoeff(),
             0.0, 1e-12);
}

TEST_CASE("kernels: derivatives in one coordinate against central differences") {
  MatrixXd x(4, 2);
  x << 0.3, -0.2, 1.1, 0.4, -0.7, 0.9, 0.0, 0.0;
  MatrixXd z(2, 2);
  z << 0.5, 0.1, -0.4, 0.6;
  for (const gpsvm::Kernel kernel :
       {gpsvm::Kernel::rbf(0.8), gpsvm::Kernel::polynomial(3, 0.7, 1.0)}) {
    const gpsvm::KernelEvaluator ev(kernel, x);
    for (Eigen::Index coord : {0, 1}) {
      for (int order : {1, 2, 3}) {
        const MatrixXd fd = central_difference(ev, z, order, coord, 1e-5);
        const MatrixXd got = ev.cross(z, order, coord);
        CHECK_NEAR_MSG((got - fd).cwiseAbs().maxCoeff(), 0.0,
                       1e-7 * (1.0 + got.cwiseAbs().maxCoeff()),
                       "order " + std::to_string(order) + ", coordinate " + std::to_string(coord));
      }
    }
  }
  // the prior variance of the first derivative of the Gaussian kernel: 1 / sigma^2
  const gpsvm::KernelEvaluator ev(gpsvm::Kernel::rbf(0.8), x);
  CHECK_REL(ev.diagonal(1, 0)[2], 1.0 / 0.64, 1e-14);
  // (2n - 1)!! / sigma^(2n) for n = 3: 15 / sigma^6
  CHECK_REL(ev.diagonal(3, 1)[0], 15.0 / std::pow(0.8, 6), 1e-14);
}

TEST_CASE("kernels: Gaussian derivatives from shared values are those of cross()") {
  ref::Random rng(23);
  const MatrixXd pts = rng.uniform_matrix(9, 4, -2.0, 2.0), z = rng.uniform_matrix(6, 4, -2.0, 2.0);
  gpsvm::Kernel k = gpsvm::Kernel::rbf(0.8);
  k.constant = 0.3;  // derivatives of order >= 1 do not see it
  const gpsvm::KernelEvaluator ev(k, pts);
  const MatrixXd values = ev.cross(z).array() - k.constant;
  for (int order : {0, 1, 2, 5}) {
    for (Eigen::Index c = 0; c < 4; ++c) {
      const MatrixXd shared = ev.rbf_cross(z, values, order, c);
      CHECK_MSG((shared - ev.cross(z, order, c)).cwiseAbs().maxCoeff() == 0.0,
                "order " + std::to_string(order) + ", coordinate " + std::to_string(c));
    }
  }
  CHECK_THROWS(gpsvm::KernelEvaluator(gpsvm::Kernel::linear(), pts).rbf_cross(z, values, 1, 0),
               std::invalid_argument);
  CHECK_THROWS(ev.rbf_cross(z, MatrixXd(values.leftCols(3)), 1, 0), std::invalid_argument);
}

TEST_CASE("kernels: invalid widths, degrees, orders and coordinates are errors") {
  CHECK_THROWS(gpsvm::Kernel::rbf(-1.0), std::invalid_argument);
  CHECK_THROWS(gpsvm::Kernel::rbf(0.0), std::invalid_argument);
  CHECK_THROWS(gpsvm::Kernel::rbf(NAN), std::invalid_argument);
  CHECK_THROWS(gpsvm::Kernel::polynomial(0, 1.0, 0.0), std::invalid_argument);
  CHECK_THROWS(gpsvm::Kernel::polynomial(gpsvm::kMaxPolynomialDegree + 1, 1.0, 0.0),
               std::invalid_argument);
  CHECK_THROWS(gpsvm::Kernel::polynomial(2, INFINITY, 0.0), std::invalid_argument);
  MatrixXd x(2, 1);
  x << 0.0, 1.0;
  const gpsvm::KernelEvaluator ev(gpsvm::Kernel::rbf(1.0), x);
  CHECK_THROWS(ev.cross(x, gpsvm::kMaxDerivativeOrder + 1, 0), std::invalid_argument);
  CHECK_THROWS(ev.cross(x, -1, 0), std::invalid_argument);
  CHECK_THROWS(ev.cross(x, 1, 1), std::invalid_argument);
  CHECK_THROWS(ev.diagonal(1, 3), std::invalid_argument);
}


// The Matern kernels written out from their textbook forms (Rasmussen and
// Williams 2006, eq. 4.17), r = |x - y| / sigma.
double matern_reference(int p, double r) {
  if (p == 0) return std::exp(-r);
  if (p == 1) return (1.0 + std::sqrt(3.0) * r) * std::exp(-std::sqrt(3.0) * r);
  return (1.0 + std::sqrt(5.0) * r + 5.0 * r * r / 3.0) * std::exp(-std::sqrt(5.0) * r);
}

TEST_CASE("kernels: Matern values, fast forms and the width gradient's weights") {
  ref::Random rng(31);
  const MatrixXd x = rng.uniform_matrix(700, 3, -2.0, 2.0);
  const VectorXd v = rng.uniform_matrix(700, 1, -1.0, 1.0).col(0);
  for (int p : {0, 1, 2}) {
    gpsvm::Kernel k = gpsvm::Kernel::matern(p, 0.9);
    k.constant = 0.2;
    const gpsvm::KernelEvaluator ev(k, x);
    const MatrixXd exact = ev.gram();
    for (Eigen::Index i : {0, 5, 699}) {
      for (Eigen::Index j : {0, 3, 400}) {
        const double r = (x.row(i) - x.row(j)).norm() / 0.9;
        CHECK_NEAR_MSG(exact(i, j), matern_reference(p, r) + 0.2, 1e-14, "p = " + std::to_string(p));
      }
    }
    // the tiled forms against the direct differences (nu = 1/2 falls back to them)
    CHECK_NEAR((ev.fast_gram() - exact).cwiseAbs().maxCoeff(), 0.0, 1e-12);
    VectorXd kv, col(700);
    ev.multiply(v, kv);
    CHECK_NEAR((kv - exact * v).cwiseAbs().maxCoeff(), 0.0, 1e-10);
    ev.fast_column(3, col.data());
    CHECK_NEAR((col - exact.col(3)).cwiseAbs().maxCoeff(), 0.0, 1e-12);
    const MatrixXd z = rng.uniform_matrix(300, 3, -2.0, 2.0);
    CHECK_NEAR((ev.cross_times(z, v) - ev.cross(z) * v).cwiseAbs().maxCoeff(), 0.0, 1e-10);
    // dk / d log sigma_c by central differences of a width per coordinate
    // (the kernel on coordinates divided by exp(l_c), at l = log 0.9)
    const MatrixXd a = x.topRows(5), b = x.middleRows(5, 4);
    const MatrixXd coefficient = rng.uniform_matrix(4, 5, -1.0, 1.0);
    const VectorXd got = gpsvm::log_width_contraction(k, coefficient, a, b);
    for (Eigen::Index c = 0; c < 3; ++c) {
      const double h = 1e-6;
      auto total = [&](double step) {
        MatrixXd as = a, bs = b;
        as.col(c) /= std::exp(step);
        bs.col(c) /= std::exp(step);
        const MatrixXd kab = gpsvm::kernel_matrix(k, as, bs);
        return (coefficient.transpose().array() * kab.array()).sum();
      };
      CHECK_NEAR_MSG(got[c], (total(h) - total(-h)) / (2.0 * h), 1e-7,
                     "p = " + std::to_string(p) + ", coordinate " + std::to_string(c));
    }
  }
}

TEST_CASE("kernels: log_width_contraction's matrix products against the sum term by term") {
  // points far from the origin (the products move them by z's mean), a
  // signed coefficient; the sum over (i, j, c) written out directly
  ref::Random rng(63);
  MatrixXd a = rng.uniform_matrix(37, 4, -2.0, 2.0), z = rng.uniform_matrix(23, 4, -2.0, 2.0);
  a.array() += 1e3;
  z.array() += 1e3;
  const MatrixXd coefficient = rng.uniform_matrix(23, 37, -1.0, 1.0);
  auto reference = [&](const gpsvm::Kernel& k) {
    VectorXd out = VectorXd::Zero(4);
    for (Eigen::Index i = 0; i < a.rows(); ++i) {
      for (Eigen::Index j = 0; j < z.rows(); ++j) {
        const Eigen::ArrayXd d2 = (a.row(i) - z.row(j)).array().square().transpose();
        Eigen::ArrayXd q(1);
        q[0] = d2.sum() / (k.sigma * k.sigma);
        const double g = k.width_weights(q)[0];
        out += (coefficient(j, i) * g / (k.sigma * k.sigma)) * d2.matrix();
      }
    }
    return out;
  };
  // the products (Gaussian, Matern 3/2 and 5/2 at sigma 1.3), and the direct
  // differences (Matern 1/2; a width so small that the expansion would lose
  // the distances' digits, with near neighbours so that the sum is not 0)
  MatrixXd near = a.topRows(23);
  near.array() += 1e-7;
  for (const gpsvm::Kernel& k : {gpsvm::Kernel::rbf(1.3), gpsvm::Kernel::matern(1, 1.3),
                                 gpsvm::Kernel::matern(2, 1.3), gpsvm::Kernel::matern(0, 1.3)}) {
    const VectorXd want = reference(k), got = gpsvm::log_width_contraction(k, coefficient, a, z);
    CHECK_NEAR((got - want).cwiseAbs().maxCoeff() / want.cwiseAbs().maxCoeff(), 0.0, 1e-12);
  }
  const gpsvm::Kernel tiny = gpsvm::Kernel::rbf(1e-6);
  z = near;
  const VectorXd want = reference(tiny), got = gpsvm::log_width_contraction(tiny, coefficient, a, z);
  CHECK(want.cwiseAbs().maxCoeff() > 0.0);
  CHECK_NEAR((got - want).cwiseAbs().maxCoeff() / want.cwiseAbs().maxCoeff(), 0.0, 1e-12);
}

TEST_CASE("kernels: Matern derivatives, their variances, and orders past the smoothness") {
  MatrixXd x(4, 2);
  x << 0.3, -0.2, 1.1, 0.4, -0.7, 0.9, 0.0, 0.0;
  MatrixXd z(3, 2);
  z << 0.5, 0.1, -0.4, 0.6, 0.3, -0.2;  // the last one on a training point
  for (int p : {1, 2}) {
    const gpsvm::KernelEvaluator ev(gpsvm::Kernel::matern(p, 0.8), x);
    for (Eigen::Index coord : {0, 1}) {
      for (int order = 1; order <= p; ++order) {
        const MatrixXd fd = central_difference(ev, z, order, coord, 1e-6);
        CHECK_NEAR_MSG((ev.cross(z, order, coord) - fd).cwiseAbs().maxCoeff(), 0.0, 1e-6,
                       "p = " + std::to_string(p) + ", order " + std::to_string(order));
      }
    }
    // the variance of the derivative, -d^2 k / dt^2 at 0 by a second
    // difference (nu = 3/2's |t|^3 term makes its error about 7 h)
    const double h = 1e-5;
    const double second = (matern_reference(p, h / 0.8) - 2.0 + matern_reference(p, h / 0.8)) /
                          (h * h);
    CHECK_NEAR(ev.diagonal(1, 0)[1], -second, 2e-5 * -second);
    CHECK_THROWS(ev.cross(z, p + 1, 0), std::invalid_argument);
    CHECK_THROWS(ev.diagonal(p + 1, 0), std::invalid_argument);
  }
  // nu = 5/2: d^4 k / dt^4 at 0 by fourth differences, whose error is
  // linear in h (k's |t|^5 term), extrapolated from h and h / 2
  const gpsvm::KernelEvaluator ev(gpsvm::Kernel::matern(2, 0.8), x);
  auto k1 = [](double t) { return matern_reference(2, std::fabs(t) / 0.8); };
  auto fourth = [&](double h) {
    return (k1(2 * h) - 4 * k1(h) + 6 * k1(0) - 4 * k1(-h) + k1(-2 * h)) / std::pow(h, 4);
  };
  const double extrapolated = 2.0 * fourth(1e-3) - fourth(2e-3);
  CHECK_NEAR(ev.diagonal(2, 1)[0], extrapolated, 1e-3 * extrapolated);
  CHECK_REL(ev.diagonal(2, 1)[0], 25.0 / std::pow(0.8, 4), 1e-14);
  const gpsvm::KernelEvaluator exponential(gpsvm::Kernel::matern(0, 0.8), x);
  CHECK_THROWS(exponential.cross(z, 1, 0), std::invalid_argument);
  CHECK_THROWS(gpsvm::Kernel::matern(3, 1.0), std::invalid_argument);
  CHECK_THROWS(gpsvm::Kernel::matern(1, 0.0), std::invalid_argument);
}

}  // namespace gpsvm_tests_kernels
