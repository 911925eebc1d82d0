// Compiles every header of the C++ core without R, proving the core has no
// R dependency, and runs a few sanity checks on it.  Built by tools/check.sh.
#include <gpsvm/kernels.hpp>
#include <gpsvm/special.hpp>

#include <cmath>
#include <cstdio>

int main() {
  int failures = 0;
  auto expect = [&failures](bool ok, const char* what) {
    if (!ok) {
      std::printf("core-standalone: FAILED %s\n", what);
      ++failures;
    }
  };
  Eigen::MatrixXd x(3, 1);
  x << 0.0, 1.0, 2.0;
  const Eigen::MatrixXd k = gpsvm::kernel_matrix(gpsvm::Kernel::rbf(1.0), x);
  expect(std::fabs(k(0, 1) - std::exp(-0.5)) < 1e-15, "rbf kernel value");
  // The fast Gaussian column (norm expansion) against the direct one.
  Eigen::MatrixXd pts = Eigen::MatrixXd::Random(50, 3);
  const gpsvm::KernelEvaluator ev(gpsvm::Kernel::rbf(0.7), pts);
  Eigen::VectorXd fast(50), direct(50);
  ev.fast_column(7, fast.data());
  ev.column(7, direct.data());
  expect((fast - direct).cwiseAbs().maxCoeff() < 1e-14, "fast Gaussian column");
  const Eigen::Index rows[3] = {0, 7, 49};
  double part[3];
  ev.fast_rows(7, rows, 3, part);
  expect(std::fabs(part[2] - direct[49]) < 1e-14 && std::fabs(part[1] - 1.0) < 1e-14, "fast Gaussian rows");
  expect(std::fabs(gpsvm::log_norm_cdf(-40.0) + 804.6084420137538) < 1e-9, "log Phi(-40)");
  try {
    gpsvm::Kernel::rbf(-1.0);
    expect(false, "negative sigma throws");
  } catch (const std::invalid_argument&) {
  }
  return failures == 0 ? 0 : 1;
}
