// special.hpp against references in long double (reference.hpp: Mills'
// integral by quadrature, its asymptotic series) and against constants
// computed with mpmath at 40 significant digits (quoted to 17).
//
// Tolerances follow from the conditioning of each function, not from what
// the code happens to achieve: a double argument x carries a rounding of
// eps |x| (eps = 2^-52), which moves exp(-x^2/2) by eps x^2 relatively, so
// upper-tail quantities get a relative tolerance of a few eps (1 + x^2) and
// log-scale quantities an absolute one of a few eps (1 + x^2).
#include <cfloat>
#include <cmath>
#include <gpsvm/special.hpp>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "check.hpp"
#include "reference.hpp"

namespace gpsvm_tests_special {

namespace {

constexpr double kEps = DBL_EPSILON;
const double kInf = std::numeric_limits<double>::infinity();

std::string at(double x) { return "x = " + gpsvm_test::show(x); }
std::string at(double x, double y) { return at(x) + ", y = " + gpsvm_test::show(y); }

}  // namespace

TEST_CASE("reference: Mills' integral agrees with its asymptotic series and with mpmath") {
  // the two references against each other where both hold: the series'
  // truncation error is below 2e-17 from x = 37 on, the quadrature's ~4e-18
  for (double x : {37.0, 40.0, 100.0, 1e3}) {
    const ref::ld a = ref::mills_tail(x), b = ref::mills_tail_series(x);
    CHECK_MSG(std::fabs(a / b - 1.0L) < 3e-17L, at(x));
  }
  // and against mpmath: log Phi(-40), phi(-40) / Phi(-40), erfcx(26)
  CHECK_REL(static_cast<double>(ref::log_norm_cdf(-40.0L)), -804.60844201375379, 1e-17);
  CHECK_REL(static_cast<double>(ref::mills_ratio(-40.0L)), 40.024968847207264, 1e-17);
  CHECK_REL(static_cast<double>(ref::erfcx(26.0L)), 0.021683584850562907, 1e-17);
}

TEST_CASE("log Phi in both tails, from -1e8 to +40") {
  const std::vector<double> xs = {-1e8, -1e5, -1e3,  -200.0, -40.0, -38.5, -20.0, -10.0,
                                  -5.0, -1.0, -1e-8, 0.0,    1e-8,  0.5,   1.0,   5.0};
  for (double x : xs) {
    const double want = static_cast<double>(ref::log_norm_cdf(x));
    CHECK_NEAR_MSG(gpsvm::log_norm_cdf(x), want,
                   8.0 * kEps * (1.0 + x * x) * 0.5 + 4.0 * kEps * std::fabs(want), at(x));
  }
  // constants (mpmath): log Phi(-40), log Phi(-1e3), log Phi(-1e5)
  CHECK_REL(gpsvm::log_norm_cdf(-40.0), -804.60844201375379, 4.0 * kEps);
  CHECK_REL(gpsvm::log_norm_cdf(-1e3), -500007.82669481218, 4.0 * kEps);
  CHECK_REL(gpsvm::log_norm_cdf(-1e5), -5000000012.4318640, 4.0 * kEps);
  // the upper tail keeps its relative accuracy although log Phi is tiny:
  // log Phi(x) = -(1 - Phi(x)) to first order
  for (double x : {9.0, 20.0, 30.0, 37.0}) {
    const double want = static_cast<double>(ref::log_norm_cdf(x));
    CHECK_REL_MSG(gpsvm::log_norm_cdf(x), want, 8.0 * kEps * (1.0 + x * x), at(x));
  }
  // beyond x = 38.5, 1 - Phi(x) underflows: log Phi(x) is 0 or a denormal
  CHECK(std::fabs(gpsvm::log_norm_cdf(40.0)) < 1e-300);
  CHECK(gpsvm::log_norm_cdf(1e300) == 0.0);
  CHECK(std::isfinite(gpsvm::log_norm_cdf(-1e150)) && gpsvm::log_norm_cdf(-1e150) < -1e299);
  CHECK(gpsvm::log_norm_cdf(-kInf) == -kInf);
  CHECK(std::isnan(gpsvm::log_norm_cdf(std::numeric_limits<double>::quiet_NaN())));
}

TEST_CASE("Phi itself in the lower tail") {
  for (double x : {-37.0, -20.0, -5.0, -0.5, 0.0, 3.0}) {
    const double want = static_cast<double>(std::exp(ref::log_norm_cdf(x)));
    CHECK_REL_MSG(gpsvm::norm_cdf(x), want, 8.0 * kEps * (1.0 + x * x), at(x));
  }
  CHECK(gpsvm::norm_cdf(-40.0) >= 0.0 && gpsvm::norm_cdf(-40.0) < 1e-300);
  CHECK(gpsvm::norm_cdf(40.0) == 1.0);
}

TEST_CASE("erfcx on both branches, across the branch points, and at its limits") {
  for (double z : {0.0, 0.1, 1.0, 2.0, 3.9, 4.0, 4.1, 10.0, 26.0, 40.0, 300.0, 1e4, 1e7, 9.9e7}) {
    const double want = static_cast<double>(ref::erfcx(z));
    // below z = 4 erfcx is exp(z^2) erfc(z), conditioned like exp(z^2)
    CHECK_REL_MSG(gpsvm::erfcx(z), want, 8.0 * kEps * (1.0 + (z < 4.0 ? z * z : 1.0)), at(z));
  }
  // continuity where the continued fraction takes over
  const double below = gpsvm::erfcx(std::nextafter(4.0, 0.0)), above = gpsvm::erfcx(4.0);
  CHECK_REL(below, above, 1e-14);
  // z > 1e8: the leading term of 1/(sqrt(pi) z) (1 - 1/(2 z^2) + ...)
  for (double z : {1.0000001e8, 1e10, 1e300}) {
    CHECK_REL_MSG(gpsvm::erfcx(z), 1.0 / (std::sqrt(static_cast<double>(ref::kPi)) * z), 2.0 * kEps, at(z));
  }
  // negative z: 2 exp(z^2) - erfcx(-z), finite down to about -26.6
  for (double z : {-0.5, -1.0, -5.0, -26.0}) {
    const double want = static_cast<double>(ref::erfcx(z));
    CHECK_REL_MSG(gpsvm::erfcx(z), want, 8.0 * kEps * (1.0 + z * z), at(z));
  }
  CHECK(gpsvm::erfcx(-27.0) == kInf);
  CHECK(std::isnan(gpsvm::erfcx(std::numeric_limits<double>::quiet_NaN())));
}

TEST_CASE("log erfc and log(exp(a) erfc(b)) where the product over- or underflows") {
  for (double z : {-40.0, -3.0, -1.0, 0.0, 1.0, 26.0, 27.0, 40.0, 1e3, 1e6}) {
    const double want = static_cast<double>(ref::log_erfc(z));
    CHECK_NEAR_MSG(gpsvm::log_erfc(z), want, 8.0 * kEps * (1.0 + z * z), at(z));
  }
  CHECK_REL(gpsvm::log_erfc(40.0), -1604.2615566532736, 4.0 * kEps);  // mpmath
  CHECK(gpsvm::log_erfc(-40.0) == std::log(2.0));
  // exp(a) overflows (a > 709.8) while erfc(b) underflows (b > 26.6)
  struct Case {
    double a, b;
  };
  for (const Case c : {Case{0.0, 0.5}, Case{800.0, 28.0}, Case{1600.0, 40.0}, Case{1e4, 100.0},
                       Case{-5.0, -3.0}, Case{1e5, 316.0}, Case{-700.0, 40.0}}) {
    const double want = static_cast<double>(c.a + ref::log_erfc(c.b));
    CHECK_NEAR_MSG(gpsvm::log_exp_erfc(c.a, c.b), want,
                   8.0 * kEps * (1.0 + c.b * c.b + std::fabs(c.a)), at(c.a, c.b));
  }
}

TEST_CASE("the Mills ratio phi/Phi from -1e10 to +40") {
  for (double x : {-1e10, -1e6, -1e3, -100.0, -40.0, -10.0, -1.0, 0.0, 1.0, 10.0, 30.0, 37.0}) {
    const double want = x < -37.0 ? static_cast<double>(1.0L / ref::mills_tail_series(-x))
                                  : static_cast<double>(ref::mills_ratio(x));
    // for x > 0 the ratio is about phi(x), conditioned like exp(-x^2/2)
    CHECK_REL_MSG(gpsvm::mills_ratio(x), want, 8.0 * kEps * (1.0 + (x > 0.0 ? x * x : 1.0)), at(x));
  }
  CHECK_REL(gpsvm::mills_ratio(-1e3), 1000.0009999980000, 4.0 * kEps);  // mpmath
  CHECK_REL(gpsvm::mills_ratio(37.0), 2.1200065515246056e-298, 8.0 * kEps * 37.0 * 37.0);
  // phi(40) underflows; the ratio is 0 (or a denormal), never NaN
  CHECK(gpsvm::mills_ratio(40.0) >= 0.0 && gpsvm::mills_ratio(40.0) < 1e-300);
  // below -1e154 x^2 overflows, but the ratio is still about -x
  CHECK_REL(gpsvm::mills_ratio(-1e200), 1e200, 4.0 * kEps);
}

TEST_CASE("log-sum-exp and log-diff-exp at their edges") {
  const double a = 1000.0;
  CHECK_REL(gpsvm::log_sum_exp(a, a), a + std::log(2.0), kEps);
  CHECK(gpsvm::log_sum_exp(-kInf, 3.0) == 3.0 && gpsvm::log_sum_exp(3.0, -kInf) == 3.0);
  CHECK_REL(gpsvm::log_sum_exp(-800.0, -1e4), -800.0, kEps);
  CHECK(gpsvm::log_diff_exp(5.0, 5.0) == -kInf);
  CHECK(gpsvm::log_diff_exp(5.0, -kInf) == 5.0);
  // log(1 - exp(-1e-20)) = log(1e-20) - 5e-21: the expm1 branch
  CHECK_REL(gpsvm::log_diff_exp(0.0, -1e-20), std::log(1e-20), 2.0 * kEps);
  // log(exp(0) - exp(-50)) = log1p(-exp(-50))
  CHECK_REL(gpsvm::log_diff_exp(0.0, -50.0), -std::exp(-50.0), 2.0 * kEps);
  CHECK_REL(gpsvm::log_diff_exp(-700.0, -701.0),
            static_cast<double>(-700.0L + std::log1p(-std::exp(-1.0L))), 4.0 * kEps);
}

TEST_CASE("the flip Mills ratio G(z) and its curvature G(z)(z + G(z))") {
  for (double kappa : {0.0, 1e-8, 0.05, 0.2, 0.49}) {
    for (double z : {-1e3, -50.0, -40.0, -8.0, -1.0, 0.0, 2.0, 9.0, 30.0}) {
      // G and its curvature in long double from the reference Phi
      const ref::ld phi = std::exp(ref::log_phi_density(z));
      const ref::ld cdf = std::exp(ref::log_norm_cdf(z));
      const ref::ld g = kappa == 0.0
                            ? ref::mills_ratio(z)
                            : (1.0L - 2.0L * kappa) * phi / (kappa + (1.0L - 2.0L * kappa) * cdf);
      ref::ld curvature = g * (z + g);
      if (kappa == 0.0 && z <= -100.0) {
        // z + G cancels: with x = -z, S = x R(x) = 1 - u + 3u^2 - ..., u = 1/x^2,
        // G = x / S and G (z + G) = x^2 (1 - S) / S^2, 1 - S summed directly
        const ref::ld x = -z, u = 1.0L / (x * x);
        const ref::ld one_minus_s =
            u * (1.0L - u * (3.0L - u * (15.0L - u * (105.0L - u * 945.0L))));
        const ref::ld s = 1.0L - one_minus_s;
        curvature = x * x * one_minus_s / (s * s);
      }
      const std::string note = at(z) + ", kappa = " + gpsvm_test::show(kappa);
      const double tol_g = 16.0 * kEps * (1.0 + z * z);
      if (std::fabs(g) > 1e-290L)
        CHECK_REL_MSG(gpsvm::flip_mills_ratio(z, kappa), static_cast<double>(g), tol_g, note);
      else
        CHECK_NEAR_MSG(gpsvm::flip_mills_ratio(z, kappa), static_cast<double>(g), 1e-290, note);
      // kappa = 0, z < 0: z + G cancels by a factor z^2 (the code uses the
      // series below z = -1e4); otherwise G is conditioned like exp(-z^2/2)
      const double tol_c = 16.0 * kEps * (1.0 + z * z);
      if (std::fabs(curvature) > 1e-290L)
        CHECK_REL_MSG(gpsvm::flip_mills_curvature(z, kappa), static_cast<double>(curvature), tol_c,
                      note);
      else
        CHECK_NEAR_MSG(gpsvm::flip_mills_curvature(z, kappa), static_cast<double>(curvature),
                       1e-290, note);
    }
  }
  // the series branch (kappa = 0, z < -1e4) against the same reference
  for (double z : {-1e4 * (1.0 + 1e-12), -1e5, -1e8}) {
    const ref::ld x = -z, u = 1.0L / (x * x);
    const ref::ld one_minus_s = u * (1.0L - u * (3.0L - u * 15.0L));
    const ref::ld s = 1.0L - one_minus_s;
    CHECK_REL_MSG(gpsvm::flip_mills_curvature(z, 0.0),
                  static_cast<double>(x * x * one_minus_s / (s * s)), 8.0 * kEps, at(z));
  }
  // G' = -G (z + G) by central differences of G, for kappa > 0 too
  for (double kappa : {0.0, 0.2}) {
    for (double z : {-5.0, -1.0, 0.5, 3.0}) {
      const double h = 1e-4;
      const double fd =
          -(gpsvm::flip_mills_ratio(z + h, kappa) - gpsvm::flip_mills_ratio(z - h, kappa)) /
          (2 * h);
      // central differences: error h^2 |G'''| / 6 < 1e-8 here
      CHECK_NEAR_MSG(gpsvm::flip_mills_curvature(z, kappa), fd, 1e-8, at(z, kappa));
    }
  }
}

// z + G(z) and 1 - G(z) (z + G(z)) (G = phi / Phi) are the mean of z - u
// and the variance of u for u ~ N(0, 1) cut to u <= z: with x = -z and
// u = z - t, t >= 0 has density proportional to exp(-x t - t^2 / 2), whose
// moments quadrature gives in long double without the cancellation of the
// closed forms (the substitution of ref::mills_tail).
TEST_CASE("mills_excess and truncated_variance against quadrature, into the far tail") {
  for (double z : {-1e6, -1e4, -300.0, -40.0, -8.0, -4.01, -4.0, -2.0, -1.0, -0.1}) {
    const ref::ld x = -z, c = 1.0L + x;
    const ref::Rule r = ref::make_rule(0.0L, 60.0L, {}, 0.25L, 0.25L);
    ref::ld m0 = 0.0L, m1 = 0.0L;
    std::vector<ref::ld> t(r.x.size()), w(r.x.size());
    for (std::size_t i = 0; i < r.x.size(); ++i) {
      t[i] = r.x[i] / c;
      w[i] = r.w[i] * std::exp(-x * t[i] - 0.5L * t[i] * t[i]);
      m0 += w[i];
      m1 += w[i] * t[i];
    }
    const ref::ld mean = m1 / m0;
    ref::ld m2 = 0.0L;
    for (std::size_t i = 0; i < r.x.size(); ++i) m2 += w[i] * (t[i] - mean) * (t[i] - mean);
    // (from z = -4 up the closed forms, which lose up to 3 digits there)
    const double loss = z < -4.0 ? 1.0 : 64.0;
    CHECK_REL_MSG(gpsvm::mills_excess(z), static_cast<double>(mean), loss * 16.0 * kEps, at(z));
    CHECK_REL_MSG(gpsvm::truncated_variance(z), static_cast<double>(m2 / m0), loss * 32.0 * kEps,
                  at(z));
  }
  // above the tail the closed forms, from the long double Mills ratio
  for (double z : {0.0, 2.0, 9.0}) {
    const ref::ld g = ref::mills_ratio(z);
    CHECK_REL_MSG(gpsvm::mills_excess(z), static_cast<double>(z + g), 8.0 * kEps, at(z));
    CHECK_REL_MSG(gpsvm::truncated_variance(z), static_cast<double>(1.0L - g * (z + g)),
                  8.0 * kEps, at(z));
  }
}

TEST_CASE("invert_increasing: normal quantiles, a bracket of no width, an f that never reaches p") {
  // N(c, s^2)'s quantiles are c + s z_p (z_p to 16 digits; the finder
  // stops at 1e-14 relative); the bracket guess [c - s, c + s] at c = 1e20
  // and s = 1e-6 has no width in double, which once looped for ever
  const double z975 = 1.959963984540054;  // qnorm(0.975)
  for (double c : {0.0, 3.5, -1e3, 1e20}) {
    for (double s : {1e-6, 1.0, 1e4}) {
      const auto cdf = [&](double x) { return gpsvm::norm_cdf((x - c) / s); };
      const auto pdf = [&](double x) {
        return std::exp(gpsvm::log_norm_pdf((x - c) / s)) / s;
      };
      for (double p : {0.025, 0.5, 0.975}) {
        const double want = c + s * (p == 0.5 ? 0.0 : (p > 0.5 ? z975 : -z975));
        const double got = gpsvm::invert_increasing(p, c - s, c + s, cdf, pdf);
        CHECK_MSG(std::fabs(got - want) <= 1e-9 * s + 1e-14 * (1.0 + std::fabs(c)),
                  "c = " + gpsvm_test::show(c) + ", s = " + gpsvm_test::show(s));
      }
    }
  }
  const auto bounded = [](double x) { return 0.5 + 0.25 * std::tanh(x); };  // in (0.25, 0.75)
  const auto slope = [](double x) { return 0.25 / (std::cosh(x) * std::cosh(x)); };
  CHECK_THROWS(gpsvm::invert_increasing(0.9, -1.0, 1.0, bounded, slope), std::domain_error);
  CHECK_THROWS(gpsvm::invert_increasing(0.1, -1.0, 1.0, bounded, slope), std::domain_error);
  CHECK_REL(gpsvm::invert_increasing(0.6, 5.0, 5.0, bounded, slope), std::atanh(0.4), 1e-12);
}

}  // namespace gpsvm_tests_special
