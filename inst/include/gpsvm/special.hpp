// Stable special functions for the mean-field models.
//
// Everything is built on the scaled complementary error function
// erfcx(z) = exp(z^2) erfc(z), which stays of order 1/z for large z, so that
// products such as exp(a) * erfc(b) and ratios such as phi(z) / Phi(z) never
// form exp(large) * tiny.  Pure C++17: no R headers.
#ifndef GPSVM_SPECIAL_HPP
#define GPSVM_SPECIAL_HPP

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace gpsvm {

constexpr double kSqrt2 = 1.41421356237309504880;
constexpr double kSqrtPi = 1.77245385090551602730;
constexpr double kLogSqrt2Pi = 0.918938533204672741780;  // log(sqrt(2 pi))
constexpr double kLog2 = 0.693147180559945309417;
constexpr double kSqrt2OverPi = 0.797884560802865355880;  // sqrt(2 / pi)

// Laplace's continued fraction for the Mills ratio R(x) = (1 - Phi(x)) /
// phi(x) of x >= 4 (at most 37 terms from k = 4 on),
//   R(x) = 1 / (x + 1 / (x + 2 / (x + 3 / (x + ...)))),
// from its k-th partial numerator on: x + k / (x + (k + 1) / (x + ...))
// (modified Lentz method).  Every term is positive: no
// cancellation.
inline double laplace_fraction(double x, int k) {
  if (x > 1e8) return x;  // the next term, k / x, is below double precision
  const double tiny = 1e-300;
  double f = x, c = x, d = 0.0;
  for (int j = k; j < k + 2000; ++j) {
    d = x + j * d;
    if (std::fabs(d) < tiny) d = tiny;
    c = x + j / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1.0 / d;
    const double delta = c * d;
    f *= delta;
    if (std::fabs(delta - 1.0) < 1e-16) break;
  }
  return f;
}

// erfcx(z) = exp(z^2) erfc(z).
//
// For 0 <= z < 4 the direct product is accurate (z^2 <= 16 keeps the rounding
// of the exponent below 4e-15 relative).  For z >= 4, erfc(z) = 2 (1 -
// Phi(z sqrt 2)) gives erfcx(z) = sqrt(2 / pi) R(z sqrt 2), R the Mills
// ratio, from Laplace's continued fraction (laplace_fraction(), a few dozen
// terms).  For z < 0, erfcx(z) = 2 exp(z^2) - erfcx(-z), which overflows to
// +Inf below about z = -26.6, correctly.
inline double erfcx(double z) {
  if (std::isnan(z)) return z;
  if (z < 0.0) return 2.0 * std::exp(z * z) - erfcx(-z);
  if (z < 4.0) return std::exp(z * z) * std::erfc(z);
  return kSqrt2OverPi / laplace_fraction(kSqrt2 * z, 1);
}

// log(erfc(z)) for any real z, finite down to the double range of z^2.
inline double log_erfc(double z) {
  if (z <= 0.0) return std::log(std::erfc(z));  // erfc in [1, 2]
  return -z * z + std::log(erfcx(z));
}

// log(exp(a) * erfc(b)), without forming either factor.
inline double log_exp_erfc(double a, double b) { return a + log_erfc(b); }

// log Phi(x), Phi the standard normal distribution function.
// Lower tail through erfcx; upper tail through log1p of the small complement,
// so that log Phi(9) = -1.1e-19 keeps its relative accuracy.
inline double log_norm_cdf(double x) {
  if (x < 0.0) {
    const double t = -x / kSqrt2;
    return -kLog2 - t * t + std::log(erfcx(t));
  }
  return std::log1p(-0.5 * std::erfc(x / kSqrt2));
}

// Phi(x), the standard normal distribution function.
inline double norm_cdf(double x) { return 0.5 * std::erfc(-x / kSqrt2); }

// log phi(x), phi the standard normal density.
inline double log_norm_pdf(double x) { return -0.5 * x * x - kLogSqrt2Pi; }

// The inverse Mills ratio phi(x) / Phi(x).  With Phi(x) = exp(-x^2/2)
// erfcx(-x/sqrt 2) / 2 the Gaussian factors cancel exactly, leaving
// sqrt(2/pi) / erfcx(-x/sqrt 2): about -x for x -> -Inf, 0 for x -> +Inf.
inline double mills_ratio(double x) {
  return kSqrt2OverPi / erfcx(-x / kSqrt2);
}

// log(exp(a) + exp(b)).
inline double log_sum_exp(double a, double b) {
  if (a == -std::numeric_limits<double>::infinity()) return b;
  if (b == -std::numeric_limits<double>::infinity()) return a;
  const double m = a > b ? a : b;
  return m + std::log1p(std::exp(-std::fabs(a - b)));
}

// log(exp(a) - exp(b)) for a >= b; -Inf when a == b.
inline double log_diff_exp(double a, double b) {
  if (b == -std::numeric_limits<double>::infinity()) return a;
  const double d = b - a;  // <= 0
  // log1p(-exp(d)) loses accuracy for d near 0; log(-expm1(d)) does not.
  return a + (d > -kLog2 ? std::log(-std::expm1(d)) : std::log1p(-std::exp(d)));
}

// The flip-noise Mills ratio G(z) = (1 - 2 kappa) phi(z) / (kappa + (1 - 2 kappa) Phi(z)),
// kappa in [0, 1/2): d/dz log(kappa + (1 - 2 kappa) Phi(z)), the "embedding
// function" of Opper and Winther's eq. (17.40).  kappa = 0 is the Mills
// ratio phi/Phi; otherwise the ratio is formed in logs, so that it decays to
// 0 in both tails without 0/0.
inline double flip_mills_ratio(double z, double kappa) {
  if (kappa == 0.0) return mills_ratio(z);
  const double log_w = std::log1p(-2.0 * kappa);
  const double log_den = log_sum_exp(std::log(kappa), log_w + log_norm_cdf(z));
  return std::exp(log_w + log_norm_pdf(z) - log_den);
}

// The standard normal cut to u <= z, through G = phi(z) / Phi(z):
//   ratio    G,
//   excess   z + G = E[z - u], in (0, 1) for z < 0 and -> z for z -> +Inf,
//   variance 1 - G (z + G) = Var[u], in (0, 1), about 1 / z^2 for z -> -Inf.
// For z < 0 the direct forms cancel: z + G loses log10(z^2) digits (12 at
// z = -1e6) and the variance about as many (3 at z = -4).  Below z = -4,
// with x = -z and K_k = laplace_fraction(x, k), 1 / R(x) = x + 1 / K_2
// gives G = x + 1 / K_2 and z + G = 1 / K_2, and with K_2 = x + 2 / K_3,
// K_3 = x + 3 / K_4 (so 1 - x / K_2 = (2 / K_3) / K_2)
//   1 - G (z + G) = (2 K_2 - K_3) / (K_2^2 K_3),  2 K_2 - K_3 = x + 4 / K_3 - 3 / K_4,
// positive terms only; one continued fraction gives all three.
struct LowerTail {
  double ratio, excess, variance;
};
inline LowerTail lower_tail(double z) {
  if (!(z < -4.0)) {  // (the fraction needs 37 terms at z = -4, 108 at z = -2)
    const double g = mills_ratio(z);
    return {g, z + g, 1.0 - g * (z + g)};
  }
  const double x = -z;
  const double k4 = laplace_fraction(x, 4), k3 = x + 3.0 / k4, k2 = x + 2.0 / k3;
  return {x + 1.0 / k2, 1.0 / k2, (x + 4.0 / k3 - 3.0 / k4) / (k2 * k2 * k3)};
}

inline double mills_excess(double z) { return lower_tail(z).excess; }
inline double truncated_variance(double z) { return lower_tail(z).variance; }

// G(z) (z + G(z)) = -G'(z): phi' = -z phi and the denominator's derivative is
// (1 - 2 kappa) phi, so G' = -z G - G^2 for every kappa.  For kappa = 0 it is
// 1 - Var[u | u <= z], u ~ N(0, 1), so it lies in (0, 1); z + G(z) then
// cancels for z < 0 and comes from mills_excess().
inline double flip_mills_curvature(double z, double kappa) {
  const double g = flip_mills_ratio(z, kappa);
  if (kappa == 0.0) return g * mills_excess(z);
  return g * (z + g);
}

// The x where the increasing function f equals p (a quantile, f a CDF, or
// a stationary point, f a derivative), from the bracket guess [lo, hi]
// (widened until it holds it), with df the derivative of f: Newton's
// method safeguarded by bisection, which needs only f's sign change on the
// bracket.  A guess of no width (a spread below the rounding of a large
// centre) is widened to a few ulps so that widening moves it; an f that
// stays below or above p up to infinity is an error, not a loop.
template <class F, class DF>
double invert_increasing(double p, double lo, double hi, const F& f, const DF& df) {
  if (!(hi - lo > 0.0)) {
    const double half = std::max(4.0 * std::numeric_limits<double>::epsilon() * std::fabs(lo), 1e-300);
    hi = lo + half;
    lo -= half;
  }
  while (f(lo) > p) {
    lo -= 2.0 * (hi - lo);
    if (!std::isfinite(lo)) throw std::domain_error("invert_increasing: f stays above p");
  }
  while (f(hi) < p) {
    hi += 2.0 * (hi - lo);
    if (!std::isfinite(hi)) throw std::domain_error("invert_increasing: f stays below p");
  }
  double x = 0.5 * (lo + hi);
  for (int it = 0; it < 200; ++it) {
    const double gap = f(x) - p;
    if (gap > 0.0) hi = x; else lo = x;
    const double slope = df(x);
    double next = slope > 0.0 ? x - gap / slope : 0.5 * (lo + hi);
    if (!(next > lo && next < hi)) next = 0.5 * (lo + hi);
    if (std::fabs(next - x) <= 1e-14 * (1.0 + std::fabs(x)) ||
        hi - lo < 1e-15 * (1.0 + std::fabs(x))) {
      x = next;
      break;
    }
    x = next;
  }
  return x;
}

// Phi^-1(p), p in (0, 1): Newton on log Phi, nearly quadratic in the lower
// tail (on Phi itself each step gains only about 1/|z| there), so that p
// down to the smallest double keeps its relative precision; the upper tail
// by symmetry.
inline double normal_quantile(double p) {
  if (!(p > 0.0 && p < 1.0)) throw std::domain_error("normal_quantile: p must lie in (0, 1)");
  if (p > 0.5) return -normal_quantile(1.0 - p);
  return invert_increasing(std::log(p), -1.0, 0.0, log_norm_cdf, mills_ratio);
}

}  // namespace gpsvm

#endif  // GPSVM_SPECIAL_HPP
