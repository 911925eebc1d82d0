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
  expect(std::fabs(gpsvm::log_norm_cdf(-40.0) + 804.6084420137538) < 1e-9, "log Phi(-40)");
  try {
    gpsvm::Kernel::rbf(-1.0);
    expect(false, "negative sigma throws");
  } catch (const std::invalid_argument&) {
  }
  return failures == 0 ? 0 : 1;
}
