// Compiles every header of the C++ core without R, proving the core has no
// R dependency, and runs a few sanity checks on it.  Built by tools/check.sh.
#include <gpsvm/kernels.hpp>
#include <gpsvm/smo.hpp>
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
  // Control structs have no defaults (R's constructors hold them): a core
  // user sets every field, and a forgotten number is an error.
  gpsvm::SvrControl svr;
  svr.C = 10.0;
  svr.epsilon = 0.1;
  svr.bias = false;
  svr.tol = 1e-6;
  svr.max_iter = 1000;
  svr.cache_mb = 1.0;
  svr.shrinking = true;
  Eigen::VectorXd y(3);
  y << 0.0, 1.0, 0.0;
  const gpsvm::SvrResult fit = gpsvm::svr_solve(gpsvm::Kernel::rbf(1.0), x, y, svr);
  expect(fit.status.converged && fit.status.change < 1e-6 && fit.status.tol == 1e-6,
         "svr status");
  // r = y - K beta: every point within eps of the fit or at a bound
  for (Eigen::Index i = 0; i < 3; ++i) {
    const double r = y[i] - (k.row(i) * fit.beta)(0, 0);
    const double b = fit.beta[i];
    const bool ok = (b == 0.0 && std::fabs(r) <= 0.1 + 1e-6) ||
                    (std::fabs(b) == 10.0) || std::fabs(std::fabs(r) - 0.1) <= 1e-6;
    expect(ok, "svr KKT conditions");
  }
  gpsvm::SvrControl unset;
  try {
    gpsvm::svr_solve(gpsvm::Kernel::rbf(1.0), x, y, unset);
    expect(false, "an unset control throws");
  } catch (const std::invalid_argument&) {
  }
  return failures == 0 ? 0 : 1;
}
