// predictive.hpp: the Student t against its closed forms on 1 and 2
// degrees of freedom, and the quadrature's integrals of an uncalibrated
// distribution against its moments in closed form (the mean, and the
// latent variance plus the noise's, eq. 29 of Gao et al. 2002b).
#include <cmath>
#include <gpsvm/predictive.hpp>
#include <string>

#include "check.hpp"

namespace gpsvm_tests_predictive {

TEST_CASE("predictive: the Student t's CDF, density and quantile on 1 and 2 df") {
  const double pi = 3.14159265358979323846;
  for (double z : {-1e6, -30.0, -2.5, -0.1, 0.0, 0.7, 40.0}) {
    // Cauchy: 1/2 + atan(z) / pi, written for the lower tail as atan(-1/z) / pi
    const double cauchy = z < 0.0 ? std::atan(-1.0 / z) / pi : 0.5 + std::atan(z) / pi;
    CHECK_REL(gpsvm::student_t_cdf(z, 1.0), cauchy, 1e-13);
    CHECK_REL(gpsvm::student_t_log_density(z, 1.0), -std::log(pi * (1.0 + z * z)), 1e-13);
    // two df: 1/2 + z / (2 sqrt(2 + z^2))
    const double two = 0.5 + z / (2.0 * std::sqrt(2.0 + z * z));
    if (z > -10.0) CHECK_REL(gpsvm::student_t_cdf(z, 2.0), two, 1e-13);
  }
  for (double p : {1e-12, 0.01, 0.3}) {
    CHECK_REL(gpsvm::student_t_cdf(gpsvm::student_t_quantile(p, 1.0), 1.0), p, 1e-12);
    CHECK_REL(gpsvm::student_t_quantile(p, 1.0), -1.0 / std::tan(pi * p), 1e-12);
  }
}

TEST_CASE("predictive: the quadrature's moments of an uncalibrated mixture are its closed forms") {
  gpsvm::TargetDistribution g;
  g.mean = {0.4, -1.0};
  g.var = {0.3, 2.0};
  g.weight = {0.7, 0.3};
  g.noise = {gpsvm::EpsilonInsensitive(3.0, 0.2), gpsvm::EpsilonInsensitive(0.5, 0.0)};
  g.scale = 1e-5;
  g.validate();
  const gpsvm::CalibrationMap none;
  const gpsvm::PredictiveMoments m = gpsvm::predictive_moments(g, none);
  double mean = 0.0, second = 0.0;
  for (int k = 0; k < 2; ++k) {
    mean += g.weight[k] * g.mean[k];
    second += g.weight[k] * (g.var[k] + g.noise[k].noise_variance() + g.mean[k] * g.mean[k]);
  }
  CHECK_REL(m.mean, g.scale * mean, 1e-11);
  CHECK_REL(m.var, g.scale * g.scale * (second - mean * mean), 1e-11);
  // the CRPS of a target at the median of a point-like distribution is
  // E|X - y| - E|X - X'| / 2 > 0, and grows like |y - mean| far out
  const double far = gpsvm::predictive_crps(g, none, g.scale * 1e3);
  CHECK_REL(far, g.scale * (1e3 - mean), 1e-3);
}

}  // namespace gpsvm_tests_predictive
