// predictive.hpp: the Student t against its closed forms on 1 and 2
// degrees of freedom, and the quadrature's integrals of an uncalibrated
// distribution against its moments in closed form (the mean, and the
// latent variance plus the noise's, eq. 29 of Gao et al. 2002b).
#include <cmath>
#include <limits>
#include <gpsvm/predictive.hpp>
#include <string>
#include <vector>

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
  // infinite df: the standard normal (R's qnorm(0.05) and dnorm(-1.3, log = TRUE))
  const double inf = std::numeric_limits<double>::infinity();
  CHECK_REL(gpsvm::student_t_quantile(0.05, inf), -1.644853626951473, 1e-14);
  CHECK_REL(gpsvm::student_t_cdf(-1.644853626951472, inf), 0.05, 1e-13);
  CHECK_REL(gpsvm::student_t_log_density(-1.3, inf), -1.763938533204673, 1e-14);
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
  double mean = 0.0, second = 0.0;
  for (int k = 0; k < 2; ++k) {
    mean += g.weight[k] * g.mean[k];
    second += g.weight[k] * (g.var[k] + g.noise[k].noise_variance() + g.mean[k] * g.mean[k]);
  }
  // the quadrature, and predictive_moments(), which takes the closed forms here
  for (const gpsvm::PredictiveMoments& m :
       {gpsvm::quadrature_moments(g, none), gpsvm::predictive_moments(g, none)}) {
    CHECK_REL(m.mean, g.scale * mean, 1e-11);
    CHECK_REL(m.var, g.scale * g.scale * (second - mean * mean), 1e-11);
  }
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

TEST_CASE("predictive: mixtures of epsilon-insensitive predictives: quantiles invert the weighted CDF") {
  // three components of different C, epsilon, latent means and variances,
  // as a fit's integration over its hyperparameters gives them; a plain
  // bisection of the weighted sum of the components' CDFs (in long double)
  // is the reference
  const std::vector<double> mean{0.3, -0.1, 0.5}, var{0.04, 0.2, 1e-310}, C{1.5, 4.0, 12.0},
      weight{0.2, 0.5, 0.3}, eps{0.1, 0.0, 0.4};
  auto mixture_cdf = [&](double x) {
    long double total = 0.0L;
    for (size_t k = 0; k < C.size(); ++k) {
      total += weight[k] * static_cast<long double>(gpsvm::EpsilonInsensitive(C[k], eps[k])
          .predictive_cdf(x, mean[k], var[k] < 1e-300 ? 1e-300 : var[k]));
    }
    return total;
  };
  for (double p : {1e-12, 1e-6, 0.025, 0.3, 0.5, 0.7, 0.975, 1.0 - 1e-6}) {
    const double q = gpsvm::epsins_mixture_quantile(p, mean, var, C, eps, weight);
    long double lo = -50.0L, hi = 50.0L;
    for (int i = 0; i < 200; ++i) {
      const long double mid = 0.5L * (lo + hi);
      if (mixture_cdf(static_cast<double>(mid)) < p) lo = mid; else hi = mid;
    }
    CHECK_NEAR_MSG(q, static_cast<double>(0.5L * (lo + hi)), 1e-9 * (1.0 + std::fabs(q)),
                   "p = " + gpsvm_test::show(p));
    CHECK_NEAR_MSG(static_cast<double>(mixture_cdf(q)), p, 1e-12, "p = " + gpsvm_test::show(p));
  }
  // far in the upper tail: the mass above the quantile is 1 - p to six
  // digits (p's own 1 - p, which the subtraction gives exactly), computed
  // as the lower tail's mass of the mirrored components at -q; one minus the
  // CDF at q would keep no digit of it
  const double p_far = 1.0 - 1e-12;
  const double far = gpsvm::epsins_mixture_quantile(p_far, mean, var, C, eps, weight);
  double above = 0.0;
  for (size_t k = 0; k < C.size(); ++k) {
    above += weight[k] * gpsvm::EpsilonInsensitive(C[k], eps[k])
        .predictive_cdf(-far, -mean[k], var[k] < 1e-300 ? 1e-300 : var[k]);
  }
  CHECK_REL(above, 1.0 - p_far, 1e-6);
  // one component is that component's predictive
  for (double p : {1e-9, 0.2, 0.9}) {
    CHECK_NEAR(gpsvm::epsins_mixture_quantile(p, {0.4}, {0.3}, {2.0}, {0.1}, {1.0}),
               gpsvm::EpsilonInsensitive(2.0, 0.1).predictive_quantile(p, 0.4, 0.3), 1e-12);
  }
  CHECK_THROWS(gpsvm::epsins_mixture_quantile(0.0, mean, var, C, eps, weight),
               std::invalid_argument);
  CHECK_THROWS(gpsvm::epsins_mixture_quantile(0.5, mean, var, {1.0}, eps, weight),
               std::invalid_argument);
  CHECK_THROWS(gpsvm::epsins_mixture_quantile(0.5, mean, var, C, {0.1}, weight),
               std::invalid_argument);
}

TEST_CASE("predictive: quantiles of the calibrated distribution invert its tails") {
  // a two-component mixture and a Student t, each with and without a
  // calibration: the CDF at the lower tail's quantile is u, the upper tail's
  // mass at the upper one is u, down to u = 1e-15 (predictive_at's tails,
  // each from G's own tail on its side, are the reference)
  gpsvm::TargetDistribution mix;
  mix.mean = {0.4, -1.0};
  mix.var = {0.3, 1e-310};
  mix.weight = {0.7, 0.3};
  mix.noise = {gpsvm::EpsilonInsensitive(3.0, 0.2), gpsvm::EpsilonInsensitive(0.5, 0.0)};
  mix.scale = 2.5;
  gpsvm::TargetDistribution t;
  t.kind = gpsvm::TargetDistribution::Kind::student_t;
  t.mean = {-3.0};
  t.var = {0.5};
  t.weight = {1.0};
  t.noise_var = 0.2;
  t.df = 4.0;
  for (const gpsvm::TargetDistribution& g : {mix, t}) {
    g.validate();
    for (double s : {1.0, 0.45}) {
      gpsvm::CalibrationMap map;
      map.scale = s;
      for (double u : {1e-15, 1e-6, 0.025, 0.3, 0.5}) {
        const double lo = gpsvm::predictive_quantile(g, map, u, false);
        const double hi = gpsvm::predictive_quantile(g, map, u, true);
        CHECK_REL(gpsvm::predictive_at(g, map, lo).lower, u, 1e-9);
        CHECK_REL(gpsvm::predictive_at(g, map, hi).upper, u, 1e-9);
        // at u = 1/2 both are the median, found from either side: equal to rounding
        CHECK(u == 0.5 ? std::fabs(hi - lo) <= 1e-10 * (1.0 + std::fabs(hi)) : lo < hi);
      }
      CHECK(std::isinf(gpsvm::predictive_quantile(g, map, 0.0, false)));
      CHECK_THROWS(gpsvm::predictive_quantile(g, map, 0.6, false), std::invalid_argument);
    }
  }
}

}  // namespace gpsvm_tests_predictive
