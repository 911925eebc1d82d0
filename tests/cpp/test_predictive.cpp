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

TEST_CASE("predictive: the normal quantile inverts Phi down to the smallest doubles") {
  // R's qnorm(): 0.025, 1e-10 and 1e-300
  CHECK_REL(gpsvm::normal_quantile(0.025), -1.959963984540054, 1e-14);
  CHECK_REL(gpsvm::normal_quantile(1e-10), -6.361340902404056, 1e-13);
  CHECK_REL(gpsvm::normal_quantile(1e-300), -37.0470962993612, 1e-13);
  CHECK_REL(gpsvm::normal_quantile(1e-200), -30.20559417957963, 1e-13);
  CHECK_REL(gpsvm::normal_quantile(0.975), 1.959963984540054, 1e-14);
  CHECK(std::fabs(gpsvm::normal_quantile(0.5)) < 1e-15);
  for (double p : {1e-20, 0.01, 0.3})
    CHECK_REL(gpsvm::norm_cdf(gpsvm::normal_quantile(p)), p, 1e-13);
}

TEST_CASE("predictive: a calibrated Gaussian is the Gaussian widened by 1 / scale") {
  // G a Student t on 1e7 df, nearly N(m, v): F is then nearly N(m, v / s^2),
  // F(t) = Phi(s z) exactly with z G's normal score
  gpsvm::TargetDistribution g;
  g.kind = gpsvm::TargetDistribution::Kind::student_t;
  g.mean = {2.0};
  g.var = {0.5};
  g.weight = {1.0};
  g.noise_var = 0.25;
  g.df = 1e7;
  g.validate();
  gpsvm::CalibrationMap map;
  map.scale = 0.6;
  map.validate();
  const double sd = std::sqrt(0.75);
  for (double t : {-6.0, -1.0, 1.9, 2.0, 3.5, 12.0}) {
    const gpsvm::PredictivePoint p = gpsvm::predictive_at(g, map, t);
    const double z = gpsvm::normal_quantile(gpsvm::student_t_cdf(-std::fabs(t - 2.0) / sd, g.df));
    const double lower = t <= 2.0 ? gpsvm::norm_cdf(0.6 * z) : 1.0 - gpsvm::norm_cdf(0.6 * z);
    CHECK_REL(p.lower, lower, 1e-12);
    CHECK_REL(p.lower + p.upper, 1.0, 1e-15);
    // the density of N(2, 0.75 / 0.36) to the t's distance from the normal
    const double u = 0.6 * (t - 2.0) / sd;
    if (std::fabs(t - 2.0) < 10.0)
      CHECK_REL(p.log_density, std::log(0.6 / sd) + gpsvm::log_norm_pdf(u), 1e-5);
  }
  const gpsvm::PredictiveMoments m = gpsvm::predictive_moments(g, map);
  CHECK_REL(m.mean, 2.0, 1e-10);
  CHECK_REL(m.var, 0.75 / 0.36, 1e-5);
  gpsvm::CalibrationMap bad;
  bad.scale = 1.5;
  CHECK_THROWS(bad.validate(), std::invalid_argument);
}

}  // namespace gpsvm_tests_predictive
