// The predictive distribution of a new target at one input, as the R
// layer's predict(type = "distribution") describes it: the model's own
// distribution G (a mixture of epsilon-insensitive predictives, or a
// Student t), widened by the interval calibration's map, and the integrals
// over it that its moments and its CRPS need.  Each tail is computed from
// G's own tail on that side, so that targets far out keep their precision.
#ifndef GPSVM_PREDICTIVE_HPP
#define GPSVM_PREDICTIVE_HPP

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>
#include <vector>

#include "dense.hpp"
#include "likelihoods.hpp"
#include "special.hpp"

namespace gpsvm {

// ---- Student t --------------------------------------------------------------

// log Gamma(x + b) - log Gamma(x), b >= 0: for x >= 15 by the difference of
// Stirling's series, whose leading terms are taken together so that they do
// not cancel (lgamma's own difference loses lgamma(x)'s magnitude times the
// rounding: 1e-10 at x = 5e4, a Student t on 1e5 degrees of freedom).
inline double log_gamma_ratio(double x, double b) {
  if (x < 15.0) return std::lgamma(x + b) - std::lgamma(x);
  const auto series = [](double y) {
    const double r = 1.0 / (y * y);
    return (1.0 / 12.0 - r * (1.0 / 360.0 - r * (1.0 / 1260.0 - r / 1680.0))) / y;
  };
  return (x - 0.5) * std::log1p(b / x) + b * std::log(x + b) - b + (series(x + b) - series(x));
}

// log B(a, b) through the ratio above, the larger argument as x.
inline double log_beta(double a, double b) {
  const double lo = std::min(a, b), hi = std::max(a, b);
  return std::lgamma(lo) - log_gamma_ratio(hi, lo);
}

// The regularised incomplete beta function I_x(a, b) by its continued
// fraction (DLMF 8.17.22), evaluated by the modified Lentz method, where it
// converges fast (x < (a + 1) / (a + b + 2)); elsewhere 1 - I_{1-x}(b, a),
// with 1 - x given as `xc` so that it keeps its digits.
inline double incomplete_beta_fraction(double x, double xc, double a, double b) {
  const double tiny = 1e-300;
  double c = 1.0, d = 0.0, f = 1.0;
  for (int m = 0; m < 100000; ++m) {
    for (int half = 0; half < 2; ++half) {
      if (m == 0 && half == 0) continue;
      const double mm = static_cast<double>(m);
      // d_{2m} = m (b - m) x / ((a + 2m - 1)(a + 2m)),
      // d_{2m+1} = -(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1))
      const double coef = half == 0
                              ? mm * (b - mm) * x / ((a + 2.0 * mm - 1.0) * (a + 2.0 * mm))
                              : -(a + mm) * (a + b + mm) * x / ((a + 2.0 * mm) * (a + 2.0 * mm + 1.0));
      d = 1.0 + coef * d;
      if (std::fabs(d) < tiny) d = tiny;
      c = 1.0 + coef / c;
      if (std::fabs(c) < tiny) c = tiny;
      d = 1.0 / d;
      f *= c * d;
      if (std::fabs(c * d - 1.0) < 1e-16) {
        const double log_front = a * std::log(x) + b * std::log(xc) - std::log(a) - log_beta(a, b);
        return std::exp(log_front) / f;
      }
    }
  }
  throw std::runtime_error("the incomplete beta function's continued fraction did not converge");
}

inline double incomplete_beta(double x, double xc, double a, double b) {
  if (x <= 0.0) return 0.0;
  if (xc <= 0.0) return 1.0;
  if (x < (a + 1.0) / (a + b + 2.0)) return incomplete_beta_fraction(x, xc, a, b);
  return 1.0 - incomplete_beta_fraction(xc, x, b, a);
}

// P(T <= z) for T a Student t on df degrees of freedom: for z < 0,
// I_{df / (df + z^2)}(df / 2, 1 / 2) / 2.  Infinite df (a noise variance
// given, not estimated) is the standard normal, here and below.
inline double student_t_cdf(double z, double df) {
  if (std::isinf(df)) return norm_cdf(z);
  const double r = z * z;
  const double tail = 0.5 * incomplete_beta(df / (df + r), r / (df + r), 0.5 * df, 0.5);
  return z <= 0.0 ? tail : 1.0 - tail;
}

inline double student_t_log_density(double z, double df) {
  if (std::isinf(df)) return log_norm_pdf(z);
  return log_gamma_ratio(0.5 * df, 0.5) - 0.5 * std::log(df * 3.14159265358979323846) -
         0.5 * (df + 1.0) * std::log1p(z * z / df);
}

// The level-p quantile, p < 1/2 (the upper ones by symmetry).
inline double student_t_quantile(double p, double df) {
  if (std::isinf(df)) return normal_quantile(p);
  return invert_increasing(p, -1.0, 0.0, [&](double z) { return student_t_cdf(z, df); },
                           [&](double z) { return std::exp(student_t_log_density(z, df)); });
}

// The level-p quantile of a mixture of epsilon-insensitive predictives:
// weight[k] times the predictive of a new target with latent mean mean[k],
// variance var[k], scale C[k] and tube half-width epsilon[k] (the prediction
// intervals of a fit that integrates over C, or over C and epsilon).  It lies
// between the components' own quantiles.  Above the median it is found as
// the mirror of the lower tail (F(t; m) = 1 - F(-t; -m), the noise being
// symmetric), so that far levels near 1 keep their precision as those
// near 0 do.
inline double epsins_mixture_quantile(double p, const std::vector<double>& mean,
                                      const std::vector<double>& var,
                                      const std::vector<double>& C,
                                      const std::vector<double>& epsilon,
                                      const std::vector<double>& weight) {
  if (!(p > 0.0 && p < 1.0)) throw std::invalid_argument("quantile level must lie in (0, 1)");
  const std::size_t k = C.size();
  if (k == 0 || mean.size() != k || var.size() != k || weight.size() != k ||
      epsilon.size() != k)
    throw std::invalid_argument(
        "a mixture needs one mean, variance, C, epsilon and weight per component");
  const double sign = p > 0.5 ? -1.0 : 1.0;
  const double level = p > 0.5 ? 1.0 - p : p;
  std::vector<EpsilonInsensitive> noise;
  std::vector<double> m(k), v(k);
  double lo = 0.0, hi = 0.0;
  for (std::size_t j = 0; j < k; ++j) {
    noise.emplace_back(C[j], epsilon[j]);
    m[j] = sign * mean[j];
    v[j] = var[j] < 1e-300 ? 1e-300 : var[j];
    const double q = noise[j].predictive_quantile(level, m[j], v[j]);
    lo = j == 0 ? q : std::min(lo, q);
    hi = j == 0 ? q : std::max(hi, q);
  }
  if (hi - lo <= 1e-15 * (1.0 + std::fabs(lo))) return sign * lo;
  const auto cdf = [&](double x) {
    double total = 0.0;
    for (std::size_t j = 0; j < k; ++j) total += weight[j] * noise[j].predictive_cdf(x, m[j], v[j]);
    return total;
  };
  const auto density = [&](double x) {
    double total = 0.0;
    for (std::size_t j = 0; j < k; ++j)
      total += weight[j] * noise[j].predictive_density(x, m[j], v[j]);
    return total;
  };
  return sign * invert_increasing(level, lo, hi, cdf, density);
}

// ---- the model's own distribution G -----------------------------------------

// G at one input, in model units.  Epsilon-insensitive: components k of
// weight w_k, latent N(mean_k, var_k) plus noise k, all of t / scale (noise
// that varies with the inputs stretches the whole distribution by scale).
// Student t: mean[0] + sqrt(var[0] + noise) T, T on df degrees of freedom.
struct TargetDistribution {
  enum class Kind { epsilon_insensitive, student_t };
  Kind kind = Kind::epsilon_insensitive;
  std::vector<double> mean, var, weight;
  std::vector<EpsilonInsensitive> noise;
  double noise_var = 0.0, df = 0.0, scale = 1.0;

  struct Tails {
    double lower, upper;  // G(t) and 1 - G(t)
  };

  void validate() const {
    const std::size_t k = mean.size();
    if (k == 0 || var.size() != k || weight.size() != k)
      throw std::invalid_argument("a predictive distribution needs a mean, variance and weight per component");
    for (std::size_t j = 0; j < k; ++j)
      if (!std::isfinite(mean[j]) || !(var[j] >= 0.0) || !std::isfinite(var[j]) || !(weight[j] >= 0.0))
        throw std::invalid_argument("a component's mean must be finite, its variance and weight >= 0");
    if (!(scale > 0.0) || !std::isfinite(scale))
      throw std::invalid_argument("a predictive distribution's scale must be positive and finite");
    if (kind == Kind::student_t) {
      if (k != 1) throw std::invalid_argument("a Student t predictive has one component");
      if (!(df > 0.0) || !(var[0] + noise_var > 0.0) || !std::isfinite(noise_var))
        throw std::invalid_argument("a Student t predictive needs df > 0 and a positive scale");
    } else if (noise.size() != k) {
      throw std::invalid_argument("an epsilon-insensitive predictive needs a noise per component");
    }
  }

  double t_scale() const { return std::sqrt(var[0] + noise_var); }
  double floored(double v) const { return v < 1e-300 ? 1e-300 : v; }

  Tails tails(double t) const {
    if (kind == Kind::student_t) {
      const double z = (t - mean[0]) / t_scale();
      return {student_t_cdf(z, df), student_t_cdf(-z, df)};
    }
    const double u = t / scale;
    Tails out{0.0, 0.0};
    for (std::size_t k = 0; k < mean.size(); ++k) {
      out.lower += weight[k] * noise[k].predictive_cdf(u, mean[k], floored(var[k]));
      out.upper += weight[k] * noise[k].predictive_cdf(-u, -mean[k], floored(var[k]));
    }
    return out;
  }

  double log_density(double t) const {
    if (kind == Kind::student_t) {
      const double s = t_scale();
      return student_t_log_density((t - mean[0]) / s, df) - std::log(s);
    }
    const double u = t / scale;
    double out = -std::numeric_limits<double>::infinity();
    for (std::size_t k = 0; k < mean.size(); ++k) {
      const double term = std::log(weight[k]) + noise[k].moments(u, mean[k], floored(var[k])).log_z;
      out = log_sum_exp(out, term);
    }
    return out - std::log(scale);
  }

  // The level-u quantile, u < 1/2, of G (upper = false) or of the mirrored
  // G, -t in place of t (upper = true), whose negative is G's level 1 - u
  // with u's precision.
  double tail_quantile(double u, bool upper) const {
    const double sign = upper ? -1.0 : 1.0;
    if (kind == Kind::student_t)
      return sign * mean[0] + t_scale() * student_t_quantile(u, df);
    std::vector<double> m(mean.size()), eps(mean.size()), c(mean.size());
    for (std::size_t k = 0; k < mean.size(); ++k) {
      m[k] = sign * mean[k];
      c[k] = noise[k].C();
      eps[k] = noise[k].epsilon();
    }
    return scale * epsins_mixture_quantile(u, m, var, c, eps, weight);
  }

  // G's mean and variance in closed form: each component's noise has mean 0
  // and its own variance (eq. 29 of Gao et al. 2002b); the t's variance is
  // its scale squared times df / (df - 2), infinite for df <= 2.
  std::pair<double, double> moments() const {
    if (kind == Kind::student_t) {
      const double s2 = var[0] + noise_var;
      if (std::isinf(df)) return {mean[0], s2};
      return {mean[0], df > 2.0 ? s2 * df / (df - 2.0) : std::numeric_limits<double>::infinity()};
    }
    double second = 0.0, total = 0.0, first = 0.0;
    for (std::size_t k = 0; k < mean.size(); ++k) {
      total += weight[k];
      first += weight[k] * mean[k];
      second += weight[k] * (var[k] + noise[k].noise_variance() + mean[k] * mean[k]);
    }
    first /= total;
    return {scale * first, scale * scale * std::max(second / total - first * first, 0.0)};
  }

  // A length on G's scale: its standard deviation (the t's scale).
  double spread() const {
    if (kind == Kind::student_t) return t_scale();
    return std::max(std::sqrt(moments().second), scale * 1e-150);
  }
};

// ---- the calibration ------------------------------------------------------

// The calibration widens G on the normal-score scale: a target whose nearer
// tail under G is u (normal score z = -Phi^-1(u) >= 0) has the nearer tail
// Phi(-s z) under F, s in (0, 1]; s = 1 is G itself.  The map is smooth,
// so F's density is g(t) times its slope, s phi(s z) / phi(z), everywhere.
struct CalibrationMap {
  double scale = 1.0;

  struct Point {
    double tail, log_slope;
  };

  void validate() const {
    if (!(scale > 0.0 && scale <= 1.0))
      throw std::invalid_argument("a calibration's scale must lie in (0, 1]");
  }

  // F's nearer tail u (at most 1/2) -> G's: the inverse of widen()'s tail.
  // One that underflows is taken as the smallest positive double, as there.
  double own_tail(double u) const {
    if (scale == 1.0 || u == 0.0) return u;
    return std::max(norm_cdf(normal_quantile(u) / scale), std::numeric_limits<double>::min());
  }

  // G's nearer tail u (at most 1/2) -> F's, and log dF/dG there.  A u that
  // underflows is taken at the smallest positive double's normal score
  // (about 37), far beyond any target a fit sees.
  Point widen(double u) const {
    if (scale == 1.0) return {u, 0.0};
    const double z = -normal_quantile(std::max(u, std::numeric_limits<double>::min()));
    return {norm_cdf(-scale * z), std::log(scale) + 0.5 * z * z * (1.0 - scale * scale)};
  }
};

// ---- the calibrated distribution F -------------------------------------------

struct PredictivePoint {
  double lower, upper, log_density;  // F(t), 1 - F(t), log f(t)
};

inline PredictivePoint predictive_at(const TargetDistribution& g, const CalibrationMap& map,
                                     double t) {
  const TargetDistribution::Tails tails = g.tails(t);
  const bool below = tails.lower <= tails.upper;
  const CalibrationMap::Point p = map.widen(std::min(std::min(tails.lower, tails.upper), 0.5));
  return {below ? p.tail : 1.0 - p.tail, below ? 1.0 - p.tail : p.tail,
          g.log_density(t) + p.log_slope};
}

// F's quantile at the nearer tail u in [0, 1/2]: the lower tail's (level
// u), or with `upper` the upper tail's (level 1 - u, found from G's mirror
// so that it keeps u's precision); u = 0 is the infinite end.  The ends of
// predict()'s prediction intervals.
inline double predictive_quantile(const TargetDistribution& g, const CalibrationMap& map,
                                  double u, bool upper) {
  if (!(u >= 0.0 && u <= 0.5)) throw std::invalid_argument("a tail probability must lie in [0, 1/2]");
  if (u == 0.0) return upper ? std::numeric_limits<double>::infinity()
                             : -std::numeric_limits<double>::infinity();
  const double q = g.tail_quantile(map.own_tail(u), upper);
  return upper ? -q : q;
}

// int h(t) dt over the line, h's values an array of N (the moments' three
// integrands share each evaluation of F).  Gauss-Legendre quadrature on
// each piece between a few quantiles of G (and `extra`, where h may jump:
// the CRPS's target), where F's shape changes fastest; beyond
// the outermost, where h is smooth, t = edge +- spread x / (1 - x) maps
// each tail onto [0, 1).  A piece whose rule disagrees with the rule of
// half as many nodes by more than 1e-12 of int |h| between the knots is
// halved: the piece from a target far out to the nearest knot is long,
// with F's rise at one end.
template <int N>
using PredictiveValues = Eigen::Array<double, N, 1>;

class PredictiveQuadrature {
 public:
  PredictiveQuadrature(const TargetDistribution& g, const CalibrationMap& map, int nodes = 16)
      : fine_(gauss_rule(GaussWeight::uniform, nodes)),
        coarse_(gauss_rule(GaussWeight::uniform, nodes / 2)),
        spread_(g.spread() / map.scale) {
    for (double v : {1e-4, 0.01, 0.1, 0.3, 0.5}) {
      knots_.push_back(g.tail_quantile(v, false));
      knots_.push_back(-g.tail_quantile(v, true));
    }
    std::sort(knots_.begin(), knots_.end());
  }

  template <int N, class H>
  PredictiveValues<N> integral(const H& h,
                               double extra = std::numeric_limits<double>::quiet_NaN()) const {
    std::vector<double> at = knots_;
    if (std::isfinite(extra)) at.insert(std::upper_bound(at.begin(), at.end(), extra), extra);
    const std::size_t pieces = at.size() - 1;
    std::vector<PredictiveValues<N>> piece(pieces);
    PredictiveValues<N> size = PredictiveValues<N>::Zero();
    for (std::size_t j = 0; j < pieces; ++j) piece[j] = rule_on<N>(fine_, h, at[j], at[j + 1], &size);
    const PredictiveValues<N> tol = 1e-12 * size + 1e-300;
    PredictiveValues<N> out = PredictiveValues<N>::Zero();
    for (std::size_t j = 0; j < pieces; ++j) out += refine<N>(h, at[j], at[j + 1], piece[j], tol, kMaxHalvings);
    return out + tail<N>(h, at.front(), -1.0, tol) + tail<N>(h, at.back(), 1.0, tol);
  }

 private:
  template <int N, class G>
  PredictiveValues<N> rule_on(const GaussRule& rule, const G& g, double a, double b,
                              PredictiveValues<N>* size = nullptr) const {
    const double mid = 0.5 * (a + b), half = 0.5 * (b - a);
    PredictiveValues<N> out = PredictiveValues<N>::Zero();
    for (Eigen::Index k = 0; k < rule.node.size(); ++k) {
      const PredictiveValues<N> v = rule.weight[k] * half * g(mid + half * rule.node[k]);
      out += v;
      if (size) *size += v.abs();
    }
    return out;
  }

  template <int N, class G>
  PredictiveValues<N> refine(const G& g, double a, double b, const PredictiveValues<N>& whole,
                             const PredictiveValues<N>& tol, int depth) const {
    if (depth == 0 || ((whole - rule_on<N>(coarse_, g, a, b)).abs() <= tol).all()) return whole;
    const double mid = 0.5 * (a + b);
    return refine<N>(g, a, mid, rule_on<N>(fine_, g, a, mid), tol, depth - 1) +
           refine<N>(g, mid, b, rule_on<N>(fine_, g, mid, b), tol, depth - 1);
  }

  // int_0^inf h(edge + sign s) ds; the first pieces halve towards the edge,
  // where the tail's mass is.
  template <int N, class H>
  PredictiveValues<N> tail(const H& h, double edge, double sign,
                           const PredictiveValues<N>& tol) const {
    const auto g = [&](double x) -> PredictiveValues<N> {
      const double rest = 1.0 - x;
      return h(edge + sign * spread_ * x / rest) * (spread_ / (rest * rest));
    };
    PredictiveValues<N> out = PredictiveValues<N>::Zero();
    double hi = 1.0;
    for (int piece = 0; piece <= 10; ++piece) {
      const double lo = piece == 10 ? 0.0 : 0.5 * hi;
      out += refine<N>(g, lo, hi, rule_on<N>(fine_, g, lo, hi), tol, kMaxHalvings);
      hi = lo;
    }
    return out;
  }

  // A piece is halved at most this often (to 1e-6 of its length): a
  // quadrature that cannot settle, on an integrand whose rounding noise
  // exceeds the tolerance, ends after a bounded count of evaluations
  // instead of 2^depth.
  static constexpr int kMaxHalvings = 20;
  GaussRule fine_, coarse_;
  double spread_;
  std::vector<double> knots_;
};

struct PredictiveMoments {
  double mean, var;
};

// F's tails fall as |t|^-index: a Student t on df degrees of freedom has
// index df, and the calibration's map raises a tail to the power s^2 (up to
// a logarithmic factor), index df s^2; the tube's tails are exponential.
inline double tail_index(const TargetDistribution& g, const CalibrationMap& map) {
  if (g.kind != TargetDistribution::Kind::student_t) return std::numeric_limits<double>::infinity();
  return g.df * map.scale * map.scale;
}

// E_F T and Var_F T by the quadrature (divided by its total mass, which
// absorbs the quadrature's error in it).  Tails of index <= 2 leave no
// variance, of index <= 1 no mean.
inline PredictiveMoments quadrature_moments(const TargetDistribution& g, const CalibrationMap& map) {
  const double index = tail_index(g, map);
  if (index <= 1.0)
    throw std::invalid_argument("a predictive whose tails fall as |t|^-1 or slower has no mean");
  const PredictiveQuadrature quad(g, map);
  const PredictiveValues<3> m = quad.integral<3>([&](double t) {
    const double f = std::exp(predictive_at(g, map, t).log_density);
    return PredictiveValues<3>(f, t * f, t * t * f);
  });
  const double mean = m[1] / m[0];
  if (index <= 2.0) return {mean, std::numeric_limits<double>::infinity()};
  return {mean, std::max(m[2] / m[0] - mean * mean, 0.0)};
}

// E_F T and Var_F T: G's closed forms where the calibration leaves G as it is.
inline PredictiveMoments predictive_moments(const TargetDistribution& g, const CalibrationMap& map) {
  if (map.scale != 1.0) return quadrature_moments(g, map);
  const std::pair<double, double> m = g.moments();
  if (g.kind == TargetDistribution::Kind::student_t && g.df <= 1.0)
    throw std::invalid_argument("a predictive whose tails fall as |t|^-1 or slower has no mean");
  return {m.first, m.second};
}

// The CRPS of target y: int_-inf^y F^2 + int_y^inf (1 - F)^2, infinite for
// tails of index <= 1/2.
inline double predictive_crps(const TargetDistribution& g, const CalibrationMap& map, double y) {
  if (tail_index(g, map) <= 0.5) return std::numeric_limits<double>::infinity();
  const PredictiveQuadrature quad(g, map);
  return quad.integral<1>(
      [&](double t) {
        const PredictivePoint p = predictive_at(g, map, t);
        return PredictiveValues<1>::Constant(t < y ? p.lower * p.lower : p.upper * p.upper);
      },
      y)[0];
}

}  // namespace gpsvm

#endif  // GPSVM_PREDICTIVE_HPP
