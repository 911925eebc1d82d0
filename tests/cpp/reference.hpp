// Independent references for the core's tests: slow, plain computations in
// long double that share no code with the package.
//
// * Gauss-Legendre quadrature (nodes from Newton's method on the Legendre
//   polynomials) on panels that grade geometrically towards break points.
// * The normal tail through Mills' integral
//     R(x) = (1 - Phi(x)) / phi(x) = integral_0^Inf exp(-x t - t^2/2) dt,  x >= 0,
//   (substitute u = x + t in the tail integral of phi), by quadrature, and
//   through its asymptotic series R(x) ~ (1/x) sum_k (-1)^k (2k-1)!! / x^(2k)
//   (repeated integration by parts) for large x.
// * Tilted moments: log integral p(t | f) N(f; m, v) df, and the mean and
//   variance of f under the tilted density, by quadrature of the log
//   integrand shifted by its maximum (no underflow in the far tails).
// * Dense linear algebra for posteriors and evidences, and brute-force
//   solutions of tiny quadratic programmes by enumerating active sets.
#ifndef GPSVM_TESTS_REFERENCE_HPP
#define GPSVM_TESTS_REFERENCE_HPP

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <utility>
#include <vector>

namespace ref {

using ld = long double;

constexpr ld kPi = 3.141592653589793238462643383279502884L;

// ---- quadrature ----------------------------------------------------------

struct GaussLegendre {
  std::vector<ld> node, weight;  // on [-1, 1]
  explicit GaussLegendre(int n) : node(n), weight(n) {
    for (int i = 0; i < n; ++i) {
      ld x = std::cos(kPi * (i + 0.75L) / (n + 0.5L));
      ld dp = 0.0L;
      for (int it = 0; it < 100; ++it) {
        ld p0 = 1.0L, p1 = x;  // P_0, P_1; recurrence to P_n
        for (int k = 2; k <= n; ++k) {
          const ld p2 = ((2 * k - 1) * x * p1 - (k - 1) * p0) / k;
          p0 = p1;
          p1 = p2;
        }
        dp = n * (x * p1 - p0) / (x * x - 1.0L);
        const ld dx = p1 / dp;
        x -= dx;
        if (std::fabs(dx) < 1e-21L) break;
      }
      node[i] = x;
      weight[i] = 2.0L / ((1.0L - x * x) * dp * dp);
    }
  }
};

inline const GaussLegendre& gauss20() {
  static const GaussLegendre g(20);
  return g;
}

// Cut points of [a, b]: panels of width h0 next to each end, growing by 1.5
// per panel up to hmax (geometric grading resolves kinks and exponential
// decay at the ends without many panels).
inline std::vector<ld> graded_cuts(ld a, ld b, ld h0, ld hmax) {
  std::vector<ld> left{a}, right{b};
  ld h = h0;
  while (true) {
    const ld gap = right.back() - left.back();
    if (gap <= 2.0L * h) break;
    left.push_back(left.back() + h);
    right.push_back(right.back() - h);
    h = std::min(h * 1.5L, hmax);
  }
  // the middle: whole panels of width <= h
  const ld gap = right.back() - left.back();
  const int pieces = std::max(1, static_cast<int>(std::ceil(gap / h)));
  const ld start = left.back();
  for (int k = 1; k < pieces; ++k) left.push_back(start + gap * k / pieces);
  for (auto it = right.rbegin(); it != right.rend(); ++it) left.push_back(*it);
  return left;
}

// Quadrature nodes and weights for [lo, hi] with the given break points.
struct Rule {
  std::vector<ld> x, w;
};

inline Rule make_rule(ld lo, ld hi, std::vector<ld> breaks, ld h0, ld hmax) {
  breaks.push_back(lo);
  breaks.push_back(hi);
  std::sort(breaks.begin(), breaks.end());
  const GaussLegendre& g = gauss20();
  Rule r;
  for (size_t k = 0; k + 1 < breaks.size(); ++k) {
    const ld a = std::max(lo, breaks[k]), b = std::min(hi, breaks[k + 1]);
    if (!(b > a)) continue;
    const std::vector<ld> cuts = graded_cuts(a, b, h0, hmax);
    for (size_t c = 0; c + 1 < cuts.size(); ++c) {
      const ld mid = 0.5L * (cuts[c] + cuts[c + 1]), half = 0.5L * (cuts[c + 1] - cuts[c]);
      for (size_t i = 0; i < g.node.size(); ++i) {
        r.x.push_back(mid + half * g.node[i]);
        r.w.push_back(half * g.weight[i]);
      }
    }
  }
  return r;
}

// ---- the normal distribution ----------------------------------------------

// Mills' ratio R(x) = (1 - Phi(x)) / phi(x) for x >= 0 by quadrature of
// integral_0^Inf exp(-x t - t^2/2) dt.  With t = u / (1 + x) the integrand
// decays like exp(-u^2/2) for small x and like exp(-u) for large x, so
// u in [0, 60] leaves out less than 1e-26 of it.
inline ld mills_tail(ld x) {
  const ld c = 1.0L + x;
  const Rule r = make_rule(0.0L, 60.0L, {}, 0.25L, 0.25L);
  ld sum = 0.0L;
  for (size_t i = 0; i < r.x.size(); ++i) {
    const ld t = r.x[i] / c;
    sum += r.w[i] * std::exp(-x * t - 0.5L * t * t);
  }
  return sum / c;
}

// The same by its asymptotic series, for x >= 37 (the first omitted term,
// 13!! / x^14, is below 2e-17 relative there).
inline ld mills_tail_series(ld x) {
  const ld u = 1.0L / (x * x);
  return (1.0L -
          u * (1.0L - u * (3.0L - u * (15.0L - u * (105.0L - u * (945.0L - u * 10395.0L)))))) /
         x;
}

inline ld log_phi_density(ld x) { return -0.5L * x * x - 0.5L * std::log(2.0L * kPi); }

// log Phi(x).
inline ld log_norm_cdf(ld x) {
  if (x < 0.0L) return log_phi_density(x) + std::log(mills_tail(-x));
  return std::log1p(-std::exp(log_phi_density(x)) * mills_tail(x));
}

// phi(x) / Phi(x).
inline ld mills_ratio(ld x) {
  if (x < 0.0L) return 1.0L / mills_tail(-x);
  return std::exp(log_phi_density(x) - log_norm_cdf(x));
}

// erfcx(z) = exp(z^2) erfc(z) = sqrt(2/pi) R(z sqrt 2) for z >= 0
// (erfc(z) = 2 (1 - Phi(z sqrt 2))); for z < 0, 2 exp(z^2) - erfcx(-z).
inline ld erfcx(ld z) {
  const ld sqrt2 = std::sqrt(2.0L);
  if (z >= 0.0L) return std::sqrt(2.0L / kPi) * mills_tail(sqrt2 * z);
  return 2.0L * std::exp(z * z) - std::sqrt(2.0L / kPi) * mills_tail(-sqrt2 * z);
}

// log erfc(z).
inline ld log_erfc(ld z) {
  const ld sqrt2 = std::sqrt(2.0L);
  if (z >= 0.0L)
    return std::log(2.0L) + log_phi_density(sqrt2 * z) + std::log(mills_tail(sqrt2 * z));
  return std::log(2.0L - std::exp(log_phi_density(sqrt2 * z)) * 2.0L * mills_tail(-sqrt2 * z));
}

// A cheaper log Phi for use inside other quadratures: the C library's
// erfc (long double) above x = -37, where it does not underflow even when
// long double is double, and the asymptotic series of R below.
inline ld log_norm_cdf_fast(ld x) {
  if (x < -37.0L) return log_phi_density(x) + std::log(mills_tail_series(-x));
  return std::log(0.5L * std::erfc(-x / std::sqrt(2.0L)));
}

// ---- tilted moments -------------------------------------------------------

struct Tilted {
  ld log_z = 0.0L;  // log integral p(t | f) N(f; m, v) df
  ld mean = 0.0L;   // of f under the tilted density
  ld var = 0.0L;
  // of feature(f) under it, when tilted() is given a feature
  ld feature_mean = 0.0L;
  ld feature_var = 0.0L;
  // d log Z / dm and d2 log Z / dm2 from the moments:
  //   d log Z/dm = (E f - m) / v,  d2 log Z/dm2 = Var f / v^2 - 1/v.
  ld d1(ld m, ld v) const { return (mean - m) / v; }
  ld d2(ld v) const { return var / (v * v) - 1.0L / v; }
};

// log_lik(f) = log p(t | f); the integral is over [lo, hi] with panels of at
// most hmax, graded from h0 at the break points and the ends.
inline Tilted tilted(const std::function<ld(ld)>& log_lik, ld m, ld v, ld lo, ld hi,
                     const std::vector<ld>& breaks, ld h0, ld hmax,
                     const std::function<ld(ld)>& feature = nullptr) {
  const Rule r = make_rule(lo, hi, breaks, h0, hmax);
  const size_t n = r.x.size();
  std::vector<ld> l(n);
  ld top = -std::numeric_limits<ld>::infinity();
  for (size_t i = 0; i < n; ++i) {
    const ld d = r.x[i] - m;
    l[i] = log_lik(r.x[i]) - 0.5L * d * d / v - 0.5L * std::log(2.0L * kPi * v);
    top = std::max(top, l[i]);
  }
  ld z = 0.0L, first = 0.0L;
  for (size_t i = 0; i < n; ++i) {
    const ld e = r.w[i] * std::exp(l[i] - top);
    z += e;
    first += e * r.x[i];
  }
  Tilted out;
  out.log_z = top + std::log(z);
  out.mean = first / z;
  ld second = 0.0L;
  for (size_t i = 0; i < n; ++i) {
    const ld d = r.x[i] - out.mean;
    second += r.w[i] * std::exp(l[i] - top) * d * d;
  }
  out.var = second / z;
  if (feature) {
    ld f1 = 0.0L, f2 = 0.0L;
    for (size_t i = 0; i < n; ++i) f1 += r.w[i] * std::exp(l[i] - top) * feature(r.x[i]);
    out.feature_mean = f1 / z;
    for (size_t i = 0; i < n; ++i) {
      const ld d = feature(r.x[i]) - out.feature_mean;
      f2 += r.w[i] * std::exp(l[i] - top) * d * d;
    }
    out.feature_var = f2 / z;
  }
  return out;
}

// The epsilon-insensitive likelihood C / (2 (eps C + 1)) exp(-C max(|t - f| - eps, 0)).
// The log integrand is concave, so the tilted density lies within 40
// standard deviations of its mode (strong concavity from the Gaussian
// factor); the mode is where the supergradient changes sign.
inline Tilted tilted_epsins(ld t, ld m, ld v, ld C, ld eps) {
  const ld s = std::sqrt(v);
  ld mode;
  if (m < t - eps)
    mode = std::min(m + C * v, t - eps);
  else if (m > t + eps)
    mode = std::max(m - C * v, t + eps);
  else
    mode = m;
  const ld log_norm = std::log(C) - std::log(2.0L * (eps * C + 1.0L));
  auto log_lik = [=](ld f) {
    const ld out = std::fabs(t - f) - eps;
    return log_norm - C * (out > 0.0L ? out : 0.0L);
  };
  // the feature: the excess max(|t - f| - eps, 0), whose tilted mean and
  // variance are the C-derivatives of log Z
  auto excess = [=](ld f) { return std::max(std::fabs(t - f) - eps, 0.0L); };
  const ld h0 = std::min(s, 1.0L / C) / 8.0L;
  return tilted(log_lik, m, v, mode - 40.0L * s, mode + 40.0L * s, {t - eps, t + eps}, h0,
                s / 4.0L, excess);
}

// The probit likelihood with label flips kappa + (1 - 2 kappa) Phi(t f / sqrt(noise)),
// or the step kappa + (1 - 2 kappa) Theta(t f) when noise = 0.  The mass
// lies between the cavity mean and 0 (the likelihood's transition), within
// 40 standard deviations.
inline Tilted tilted_probit(ld t, ld m, ld v, ld kappa, ld noise) {
  const ld s = std::sqrt(v);
  auto log_lik = [=](ld f) {
    const ld lp = noise > 0.0L ? log_norm_cdf_fast(t * f / std::sqrt(noise))
                               : (t * f > 0.0L ? 0.0L : -std::numeric_limits<ld>::infinity());
    if (kappa == 0.0L) return lp;
    const ld mix = kappa + (1.0L - 2.0L * kappa) * std::exp(lp);
    return std::log(mix);
  };
  const ld scale = noise > 0.0L ? std::min(s, std::sqrt(noise)) : s;
  return tilted(log_lik, m, v, std::min(m, 0.0L) - 40.0L * s, std::max(m, 0.0L) + 40.0L * s, {0.0L},
                scale / 8.0L, scale / 4.0L);
}

// Gaussian noise N(t; f, noise): the tilted density is Gaussian, centred
// between m and t with variance 1 / (1/v + 1/noise).
inline Tilted tilted_gaussian(ld t, ld m, ld v, ld noise) {
  auto log_lik = [=](ld f) {
    return -0.5L * (t - f) * (t - f) / noise - 0.5L * std::log(2.0L * kPi * noise);
  };
  const ld vp = 1.0L / (1.0L / v + 1.0L / noise), sp = std::sqrt(vp);
  const ld centre = vp * (m / v + t / noise);
  return tilted(log_lik, m, v, centre - 40.0L * sp, centre + 40.0L * sp, {}, sp / 4.0L, sp / 4.0L);
}

// ---- dense linear algebra -------------------------------------------------

// log N(y; 0, cov) by a Cholesky factorisation.
inline double log_gauss(const Eigen::VectorXd& y, const Eigen::MatrixXd& cov) {
  const Eigen::LLT<Eigen::MatrixXd> llt(cov);
  const Eigen::VectorXd a = llt.matrixL().solve(y);
  const double logdet = 2.0 * llt.matrixLLT().diagonal().array().log().sum();
  return -0.5 * (a.squaredNorm() + logdet + static_cast<double>(y.size()) * std::log(2.0 * static_cast<double>(kPi)));
}

// The largest absolute difference of two vectors, relative to 1 + the
// largest entry of the second.
inline double gap(const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
  if (a.size() != b.size()) return std::numeric_limits<double>::infinity();
  if (a.size() == 0) return 0.0;
  return (a - b).cwiseAbs().maxCoeff() / (1.0 + b.cwiseAbs().maxCoeff());
}

// ---- brute-force quadratic programmes --------------------------------------

// min 1/2 b'Kb - y'b + eps |b|_1 over -C <= b_i <= C (and sum b = 0 with a
// bias), by enumerating each point's state: 0, +C, -C, free > 0, free < 0.
// The free coefficients of a state solve the stationarity equations
//   K_FF b_F (+ bias) = y_F - eps sign_F - K_FB b_B  (and 1'b_F = -1'b_B);
// a state whose solution has the assumed signs and lies in the box is a
// feasible point, and the optimum (whose own state passes) is the feasible
// point of least objective.  5^n states: for n <= 7.
struct SvrOptimum {
  Eigen::VectorXd beta;
  double bias = 0.0;
  double objective = std::numeric_limits<double>::infinity();
};

inline double svr_objective(const Eigen::MatrixXd& K, const Eigen::VectorXd& y,
                            const Eigen::VectorXd& b, double eps) {
  return 0.5 * b.dot(K * b) - y.dot(b) + eps * b.cwiseAbs().sum();
}

inline SvrOptimum svr_brute_force(const Eigen::MatrixXd& K, const Eigen::VectorXd& y, double C,
                                  double eps, bool bias) {
  const int n = static_cast<int>(y.size());
  long states = 1;
  for (int i = 0; i < n; ++i) states *= 5;
  SvrOptimum best;
  std::vector<int> st(n);
  for (long code = 0; code < states; ++code) {
    long c = code;
    std::vector<int> free_idx;
    Eigen::VectorXd b = Eigen::VectorXd::Zero(n), sign = Eigen::VectorXd::Zero(n);
    for (int i = 0; i < n; ++i) {
      st[i] = static_cast<int>(c % 5);
      c /= 5;
      if (st[i] == 1) b[i] = C;
      if (st[i] == 2) b[i] = -C;
      if (st[i] == 3) {
        free_idx.push_back(i);
        sign[i] = 1.0;
      }
      if (st[i] == 4) {
        free_idx.push_back(i);
        sign[i] = -1.0;
      }
    }
    const int f = static_cast<int>(free_idx.size());
    double b0 = 0.0;
    if (f == 0) {
      // every coefficient at 0 or a bound: with a bias they must sum to 0
      // (C and -C in pairs), and the bias is then any value in an interval
      if (bias && b.sum() != 0.0) continue;
    } else {
      const int dim = f + (bias ? 1 : 0);
      Eigen::MatrixXd A = Eigen::MatrixXd::Zero(dim, dim);
      Eigen::VectorXd rhs(dim);
      const Eigen::VectorXd kb = K * b;  // bound part only (free entries are 0)
      for (int r = 0; r < f; ++r) {
        const int i = free_idx[r];
        for (int q = 0; q < f; ++q) A(r, q) = K(i, free_idx[q]);
        if (bias) A(r, f) = 1.0;
        rhs[r] = y[i] - eps * sign[i] - kb[i];
      }
      if (bias) {
        for (int q = 0; q < f; ++q) A(f, q) = 1.0;
        rhs[f] = -b.sum();
      }
      const Eigen::FullPivLU<Eigen::MatrixXd> lu(A);
      if (!lu.isInvertible()) continue;
      const Eigen::VectorXd sol = lu.solve(rhs);
      bool ok = true;
      for (int r = 0; r < f; ++r) {
        const double v = sol[r];
        if (sign[free_idx[r]] * v < 0.0 || std::fabs(v) > C) ok = false;
        b[free_idx[r]] = v;
      }
      if (!ok) continue;
      if (bias) b0 = sol[f];
    }
    const double obj = svr_objective(K, y, b, eps);
    if (obj < best.objective) {
      best.objective = obj;
      best.beta = b;
      best.bias = b0;
    }
  }
  return best;
}

// max W(a) = sum a - 1/2 a'Qa, Q = diag(y) K diag(y), 0 <= a <= C, by
// enumerating the states 0, C and free (3^n, or 2^n when C is infinite).
struct AdatronOptimum {
  Eigen::VectorXd alpha;
  double objective = -std::numeric_limits<double>::infinity();
};

inline double adatron_objective(const Eigen::MatrixXd& Q, const Eigen::VectorXd& a) {
  return a.sum() - 0.5 * a.dot(Q * a);
}

inline AdatronOptimum adatron_brute_force(const Eigen::MatrixXd& K, const Eigen::VectorXd& y,
                                          double C) {
  const int n = static_cast<int>(y.size());
  const Eigen::MatrixXd Q = y.asDiagonal() * K * y.asDiagonal();
  const int base = std::isfinite(C) ? 3 : 2;
  long states = 1;
  for (int i = 0; i < n; ++i) states *= base;
  AdatronOptimum best;
  for (long code = 0; code < states; ++code) {
    long c = code;
    std::vector<int> free_idx;
    Eigen::VectorXd a = Eigen::VectorXd::Zero(n);
    for (int i = 0; i < n; ++i) {
      const int s = static_cast<int>(c % base);
      c /= base;
      if (s == 1) free_idx.push_back(i);
      if (s == 2) a[i] = C;
    }
    const int f = static_cast<int>(free_idx.size());
    if (f > 0) {
      Eigen::MatrixXd A(f, f);
      Eigen::VectorXd rhs(f);
      const Eigen::VectorXd qa = Q * a;
      for (int r = 0; r < f; ++r) {
        for (int q = 0; q < f; ++q) A(r, q) = Q(free_idx[r], free_idx[q]);
        rhs[r] = 1.0 - qa[free_idx[r]];
      }
      const Eigen::FullPivLU<Eigen::MatrixXd> lu(A);
      if (!lu.isInvertible()) continue;
      const Eigen::VectorXd sol = lu.solve(rhs);
      bool ok = true;
      for (int r = 0; r < f; ++r) {
        if (sol[r] < 0.0 || sol[r] > C) ok = false;
        a[free_idx[r]] = sol[r];
      }
      if (!ok) continue;
    }
    const double w = adatron_objective(Q, a);
    if (w > best.objective) {
      best.objective = w;
      best.alpha = a;
    }
  }
  return best;
}

// ---- data -----------------------------------------------------------------

// Reproducible uniform and normal draws that do not depend on the standard
// library's distributions (whose algorithms differ between implementations).
class Random {
 public:
  explicit Random(std::uint32_t seed) : gen_(seed) {}
  double uniform(double lo = 0.0, double hi = 1.0) {
    return lo + (hi - lo) * (static_cast<double>(gen_()) + 0.5) / 4294967296.0;
  }
  double normal() {  // Box-Muller
    const double u = uniform(), w = uniform();
    return std::sqrt(-2.0 * std::log(u)) * std::cos(2.0 * static_cast<double>(kPi) * w);
  }
  Eigen::MatrixXd uniform_matrix(Eigen::Index r, Eigen::Index c, double lo, double hi) {
    Eigen::MatrixXd m(r, c);
    for (Eigen::Index j = 0; j < c; ++j)
      for (Eigen::Index i = 0; i < r; ++i) m(i, j) = uniform(lo, hi);
    return m;
  }
  // Standard normal draws, filled row by row.
  Eigen::MatrixXd normal_matrix(Eigen::Index r, Eigen::Index c) {
    Eigen::MatrixXd m(r, c);
    for (Eigen::Index i = 0; i < r; ++i)
      for (Eigen::Index j = 0; j < c; ++j) m(i, j) = normal();
    return m;
  }

 private:
  std::mt19937 gen_;
};

}  // namespace ref

#endif  // GPSVM_TESTS_REFERENCE_HPP
