// Likelihoods for the EP engine (ep_engine.hpp).
//
// A likelihood p(t | f) enters EP only through the log partition function of
// its tilted distribution,
//   log Z(m, v) = log  integral  p(t | f) N(f; m, v) df,
// and its first two derivatives in the cavity mean m (the parameterisation of
// Rasmussen and Williams' GPML code).  The site update follows from them:
//   site precision  = -d2 / (1 + d2 v)   (clamped at 0),
//   posterior mean  = m + v d1.
// Pure C++17: no R headers.
#ifndef GPSVM_LIKELIHOODS_HPP
#define GPSVM_LIKELIHOODS_HPP

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "special.hpp"

namespace gpsvm {

// log Z and its derivatives d/dm, d^2/dm^2 in the cavity mean.
struct SiteMoments {
  double log_z = 0.0;
  double dlog_z = 0.0;
  double d2log_z = 0.0;
  // Optionally, the tilted variance over the cavity variance, 1 + d2 v,
  // formed without that subtraction (0 when not given).  Where the tilted
  // distribution is much narrower than the cavity (a steep likelihood),
  // 1 + d2 v loses log10(1 / (1 + d2 v)) digits, and the site precision
  // -d2 / (1 + d2 v) with them; the engine then uses this instead.
  double variance_ratio = 0.0;
};

// log(Phi(hi) - Phi(lo)) for hi >= lo, accurate in both tails: when both
// arguments are positive the difference is taken between the upper tails.
inline double log_norm_interval(double lo, double hi) {
  if (!(hi > lo)) return -std::numeric_limits<double>::infinity();
  if (lo > 0.0) return log_diff_exp(log_norm_cdf(-lo), log_norm_cdf(-hi));
  return log_diff_exp(log_norm_cdf(hi), log_norm_cdf(lo));
}

// log( exp(C (eps - a) + C^2 v / 2) Phi(g) ),  g = (a - eps - C v) / s,
// the integral of exp(-C (u - eps)) N(u; a, v) over u > eps.  Completing the
// square gives exp(...) = phi((a - eps) / s) / phi(g), so for g < 0 the value
// is log phi((a - eps)/s) - log(phi(g)/Phi(g)), which never forms exp(large)
// times tiny (Gao et al.'s eqs. (3.8)-(3.9) do; see ?gpsvm_corrections,
// item 3).  For g >= 0 the exponent is <= -C^2 v / 2 and the direct form is
// safe.
inline double log_tail_mass(double a, double eps, double C, double v, double s) {
  const double g = (a - eps - C * v) / s;
  if (g < 0.0) return log_norm_pdf((a - eps) / s) - std::log(mills_ratio(g));
  return C * (eps - a) + 0.5 * C * C * v + log_norm_cdf(g);
}

// The same tail's mass as a function of a, through M(g) = phi(g) / Phi(g):
// the mass is phi((a - eps) / s) / M(g), its density at the edge u = eps
// is the mass times mu = M(g) / s, and d log(mass) / d a = -(C - mu) =
// -sigma.  sigma = (C s - M(g)) / s = ((a - eps) / s - (g + M(g))) / s
// takes the second form for g < 0, where C s and M(g) both approach |g|
// and g + M(g) is small (lower_tail() gives it accurately).  The tail's
// tilted distribution is N(a - C v, v) cut to u > eps: (u - eps) / s has
// mean g + M(g) and variance 1 - M(g) (g + M(g)).
// log_mass is log_tail_mass()'s, from the same M(g) where g < 0 (one
// evaluation of the Mills ratio for both: the site moments need both, and
// the special functions are most of their cost).
struct TailShape {
  double mu, sigma;  // as above
  double mean, var;  // of (u - eps) / s
  double log_mass;
};
inline TailShape tail_shape(double a, double eps, double C, double v, double s) {
  const double g = (a - eps - C * v) / s;
  const LowerTail t = lower_tail(g);
  const double mu = t.ratio / s;
  const double sigma = g < 0.0 ? ((a - eps) / s - t.excess) / s : C - mu;
  const double log_mass = g < 0.0 ? log_norm_pdf((a - eps) / s) - std::log(t.ratio)
                                  : log_tail_mass(a, eps, C, v, s);
  return {mu, sigma, t.excess, t.variance, log_mass};
}

// Gaussian noise N(t; f, noise_var): EP is exact after one sweep and gives
// GP regression, an independent check of the engine's linear algebra.
class GaussianNoise {
 public:
  explicit GaussianNoise(double noise_var) : s2_(noise_var) {
    if (!(noise_var > 0.0) || !std::isfinite(noise_var))
      throw std::invalid_argument("noise variance must be positive and finite");
  }
  SiteMoments moments(double target, double cavity_mean, double cavity_var) const {
    const double total = cavity_var + s2_;
    const double r = target - cavity_mean;
    SiteMoments out;
    out.log_z = -0.5 * r * r / total - 0.5 * std::log(total) - kLogSqrt2Pi;
    out.dlog_z = r / total;
    out.d2log_z = -1.0 / total;
    return out;
  }

 private:
  double s2_;
};

// Vapnik's epsilon-insensitive likelihood (Gao, Gunn and Harris 2002, eq. 2.2)
//   p(t | f) = C / (2 (eps C + 1)) exp(-C max(|t - f| - eps, 0)).
//
// With u = t - f ~ N(a, v), a = t - m, the tilted mass splits into three
// pieces: inside the tube (Z1), u > eps (Z2) and u < -eps (Z3), each in closed
// form (see log_tail_mass).  With r_k = Z_k / (Z1 + Z2 + Z3) and
// p = (phi(b0) + phi(b1)) / (s (Z1 + Z2 + Z3)), b1 = (eps - a)/s, b0 = (-eps - a)/s:
//   d log Z / dm   = C (r2 - r3),
//   d2 log Z / dm2 = C^2 [r1 (r2 + r3) + 4 r2 r3] - C p.
// The second form is C^2 (r2 + r3) - C p - (d log Z/dm)^2 rearranged so that
// it does not cancel when one tail holds all the mass.  (The paper's
// eq. 3.12 for this derivative is not shift invariant and is wrong; see
// ?gpsvm_corrections, item 2.)  With tail_shape()'s mu_k, sigma_k for tail
// k (C p = C (r2 mu2 + r3 mu3)) it is
//   C r2 X2 + C r3 X3 + 4 C^2 r2 r3,
//   X_k = C r1 - mu_k = sigma_k - C (r2 + r3),
// and each X_k takes the form whose two terms are smaller.  The first
// cancels when the tube holds nearly all the mass and C is large (C r1 and
// mu_k both near C: an edge of a narrow tilted distribution pressed against
// a steep exponential), the second when tail k holds it.  At C = 1e4 the
// first lost 4 of 16 digits, which 1 / (1 + d2 v) in the site precision
// can multiply by 100 more: the EP iteration then wandered at 1e-9.
class EpsilonInsensitive {
 public:
  EpsilonInsensitive(double C, double epsilon) : C_(C), eps_(epsilon) {
    if (!(C > 0.0) || !std::isfinite(C))
      throw std::invalid_argument("'C' must be a positive finite number");
    if (!(epsilon >= 0.0) || !std::isfinite(epsilon))
      throw std::invalid_argument("'epsilon' must be a non-negative finite number");
  }

  double C() const { return C_; }
  double epsilon() const { return eps_; }

  // log of the normaliser C / (2 (eps C + 1)).
  double log_normaliser() const { return std::log(C_) - kLog2 - std::log1p(eps_ * C_); }

  // Variance of the noise density (Gao et al. 2002b, eq. 29; the
  // mean-field paper's eq. 5.3 is wrong; see ?gpsvm_corrections, item 1).
  double noise_variance() const {
    return 2.0 / (C_ * C_) + eps_ * eps_ * (eps_ * C_ + 3.0) / (3.0 * (eps_ * C_ + 1.0));
  }

  SiteMoments moments(double target, double cavity_mean, double cavity_var) const {
    return moments_of(pieces(target, cavity_mean, cavity_var));
  }

  // The moments and parameter_gradient() at one cavity, for the price of
  // one (the evidence search for C needs both at every sweep), and, when
  // d2_log_C is given, log_C_curvature() there too.
  SiteMoments moments(double target, double cavity_mean, double cavity_var, double* d_C,
                      double* d_eps, double* d2_log_C = nullptr) const {
    const Pieces p = pieces(target, cavity_mean, cavity_var);
    gradient_of(p, target, cavity_mean, cavity_var, d_C, d_eps);
    if (d2_log_C) *d2_log_C = log_C_curvature_of(p, cavity_var, *d_C);
    return moments_of(p);
  }

  // d2 log Z / d (log C)^2 at a fixed cavity.  With e = max(|t - f| - eps, 0)
  // under the tilted distribution, d log Z / dC = 1/C - eps/(1 + C eps) -
  // E[e] and d2 log Z / dC^2 = -1/C^2 + eps^2/(1 + C eps)^2 + Var[e], so
  //   d2 log Z / d(log C)^2 = C^2 Var[e] - 1 + (C eps / (1 + C eps))^2
  //                           + C d log Z / dC.
  // Summed over the sites it is the evidence's curvature in log C with the
  // sites held; the sites' own response adds little (on 354 rows of Boston
  // housing at C = 5, -124.4 held against -118.8 in all), so the search's
  // Newton step lands near the maximum (mfsvr.hpp).
  double log_C_curvature(double target, double cavity_mean, double cavity_var) const {
    const Pieces p = pieces(target, cavity_mean, cavity_var);
    double d_C = 0.0, d_eps = 0.0;
    gradient_of(p, target, cavity_mean, cavity_var, &d_C, &d_eps);
    return log_C_curvature_of(p, cavity_var, d_C);
  }

  // d log Z / dC and d log Z / d eps at a fixed cavity: the evidence
  // gradient in the likelihood's parameters at the EP fixed point.
  void parameter_gradient(double target, double cavity_mean, double cavity_var, double* d_C,
                          double* d_eps) const {
    gradient_of(pieces(target, cavity_mean, cavity_var), target, cavity_mean, cavity_var, d_C,
                d_eps);
  }

  // P(T <= q) for a new target T = f + e, f ~ N(mean, var), e the noise.
  // With x = q - f ~ N(a, v) and k = 1 / (2 (eps C + 1)) the noise CDF is
  // k e^{C(x + eps)} below -eps, k + c (x + eps) inside the tube and
  // 1 - k e^{-C(x - eps)} above eps, so its Gaussian average is
  //   k Z3 + (k + c (a + eps)) Z1 + c s (phi(b0) - phi(b1)) + Phi(-b1) - k Z2.
  double predictive_cdf(double q, double mean, double var) const {
    const double s = std::sqrt(var);
    const double a = q - mean;
    const double k = 0.5 / (eps_ * C_ + 1.0);
    const double c = C_ * k;
    const double b1 = (eps_ - a) / s, b0 = (-eps_ - a) / s;
    const double z1 = std::exp(log_norm_interval(b0, b1));
    const double z2 = std::exp(log_tail_mass(a, eps_, C_, var, s));
    const double z3 = std::exp(log_tail_mass(-a, eps_, C_, var, s));
    const double inside = (k + c * (a + eps_)) * z1 +
                          c * s * (std::exp(log_norm_pdf(b0)) - std::exp(log_norm_pdf(b1)));
    const double value = k * z3 + inside + norm_cdf(-b1) - k * z2;
    return value < 0.0 ? 0.0 : (value > 1.0 ? 1.0 : value);
  }

  // The predictive density at q: the tilted normaliser with target q.
  double predictive_density(double q, double mean, double var) const {
    return std::exp(moments(q, mean, var).log_z);
  }

  // The level-p quantile of that predictive distribution (Gao et al. 2002b,
  // eq. 28: the Gaussian latent convolved with this noise), by Newton's
  // method on the closed-form CDF, safeguarded by bisection on a bracket.  A
  // latent variance of 0 (a prediction at a margin vector) is floored at
  // 1e-300, which leaves the noise quantile shifted by the mean.
  double predictive_quantile(double p, double mean, double var) const {
    if (!(p > 0.0 && p < 1.0)) throw std::invalid_argument("quantile level must lie in (0, 1)");
    if (!(var >= 0.0) || !std::isfinite(var))
      throw std::invalid_argument("latent variance must be non-negative and finite");
    if (var < 1e-300) var = 1e-300;
    const double sd = std::sqrt(var + noise_variance());
    return invert_increasing(p, mean - sd, mean + sd,
                             [&](double x) { return predictive_cdf(x, mean, var); },
                             [&](double x) { return predictive_density(x, mean, var); });
  }

 private:
  struct Pieces {
    double log_total, r1, r2, r3, p, x2, x3, variance_ratio;
    double excess_var;  // Var[max(|u| - eps, 0)] / v in the tilted distribution
  };

  double log_C_curvature_of(const Pieces& p, double cavity_var, double d_C) const {
    const double share = eps_ * C_ / (1.0 + eps_ * C_);
    return C_ * C_ * cavity_var * p.excess_var - 1.0 + share * share + C_ * d_C;
  }

  SiteMoments moments_of(const Pieces& p) const {
    SiteMoments out;
    out.log_z = log_normaliser() + p.log_total;
    out.dlog_z = C_ * (p.r2 - p.r3);
    out.d2log_z = C_ * (p.r2 * p.x2 + p.r3 * p.x3) + 4.0 * C_ * C_ * p.r2 * p.r3;
    if (out.d2log_z > 0.0) out.d2log_z = 0.0;  // log-concave: only rounding can make it > 0
    out.variance_ratio = p.variance_ratio;
    return out;
  }

  void gradient_of(const Pieces& p, double target, double cavity_mean, double cavity_var,
                   double* d_C, double* d_eps) const {
    const double a = target - cavity_mean;
    const double denom = eps_ * C_ + 1.0;
    *d_eps = -C_ / denom + C_ * (p.r2 + p.r3);
    *d_C = 1.0 / C_ - eps_ / denom + (eps_ + C_ * cavity_var) * (p.r2 + p.r3) -
           a * (p.r2 - p.r3) - cavity_var * p.p;
  }

  // Mean and variance of u = t - f, in units of s, in one piece of the
  // tilted distribution.
  struct Piece {
    double weight, mean, var;
  };

  // The tilted variance of u over the cavity's, Var = sum_k r_k var_k +
  // sum_{j<k} r_j r_k (mean_j - mean_k)^2 (all terms >= 0): the tails'
  // shapes from tail_shape() (tail 3 the mirror of tail 2), the tube piece
  // N(a, v) cut to [-eps, eps].  Near 0 (large C, a narrow tilted
  // distribution) this keeps its digits where 1 + d2 v does not.
  double tilted_variance_ratio(const TailShape& t2, const TailShape& t3, double a, double s,
                               double b0, double b1, double l1, double r1, double r2,
                               double r3) const {
    const double edge = eps_ / s;
    Piece pieces[3] = {
        {r2, edge + t2.mean, t2.var}, {r3, -edge - t3.mean, t3.var}, {r1, 0.0, 0.0}};
    if (r1 > 0.0) {
      // N(0, 1) cut to [b0, b1], shifted by a / s
      const double q0 = std::exp(log_norm_pdf(b0) - l1), q1 = std::exp(log_norm_pdf(b1) - l1);
      const double shift = q0 - q1;
      const double width = b1 - b0;
      double var = 1.0 + b0 * q0 - b1 * q1 - shift * shift;
      var = std::min(std::max(var, 0.0), std::min(1.0, 0.25 * width * width));
      pieces[2] = {r1, a / s + shift, var};
    }
    double out = 0.0;
    for (int j = 0; j < 3; ++j) {
      out += pieces[j].weight * pieces[j].var;
      for (int k = j + 1; k < 3; ++k) {
        const double gap = pieces[j].mean - pieces[k].mean;
        out += pieces[j].weight * pieces[k].weight * gap * gap;
      }
    }
    return out;
  }

  // X_k of the curvature (see the class comment) for a tail of shape t.
  double curvature_factor(const TailShape& t, double r1, double r_tails) const {
    const double tube_form = C_ * r1 - t.mu, tail_form = t.sigma - C_ * r_tails;
    return std::max(C_ * r1, t.mu) <= std::max(std::fabs(t.sigma), C_ * r_tails) ? tube_form
                                                                                  : tail_form;
  }

  Pieces pieces(double t, double m, double v) const {
    if (!(v > 0.0) || !std::isfinite(v))
      throw std::invalid_argument("cavity variance must be positive and finite");
    const double s = std::sqrt(v);
    const double a = t - m;
    const double b1 = (eps_ - a) / s, b0 = (-eps_ - a) / s;
    const double l1 = log_norm_interval(b0, b1);
    const TailShape t2 = tail_shape(a, eps_, C_, v, s), t3 = tail_shape(-a, eps_, C_, v, s);
    const double l2 = t2.log_mass, l3 = t3.log_mass;
    const double total = log_sum_exp(log_sum_exp(l1, l2), l3);
    Pieces out;
    out.log_total = total;
    out.r1 = std::exp(l1 - total);
    out.r2 = std::exp(l2 - total);
    out.r3 = std::exp(l3 - total);
    const double log_s = std::log(s);
    out.p = std::exp(log_norm_pdf(b0) - log_s - total) + std::exp(log_norm_pdf(b1) - log_s - total);
    out.x2 = curvature_factor(t2, out.r1, out.r2 + out.r3);
    out.x3 = curvature_factor(t3, out.r1, out.r2 + out.r3);
    out.variance_ratio = tilted_variance_ratio(t2, t3, a, s, b0, b1, l1, out.r1, out.r2, out.r3);
    out.excess_var = excess_variance_ratio(t2, t3, out.r1, out.r2, out.r3);
    return out;
  }

  // Var[e] / v for e = max(|u| - eps, 0): 0 in the tube, (u - eps) / s of
  // tail_shape()'s mean and variance in tail 2, its mirror in tail 3; as in
  // tilted_variance_ratio(), a sum of terms >= 0.
  static double excess_variance_ratio(const TailShape& t2, const TailShape& t3, double r1,
                                      double r2, double r3) {
    const double gap = t2.mean - t3.mean;
    return r2 * t2.var + r3 * t3.var + r1 * (r2 * t2.mean * t2.mean + r3 * t3.mean * t3.mean) +
           r2 * r3 * gap * gap;
  }

  double C_;
  double eps_;
};

// Probit likelihood with label flips (Opper and Winther 2000, eqs. 17.15 and
// 17.17) for labels t in {-1, +1}:
//   p(t | f) = kappa + (1 - 2 kappa) Phi(t f / sqrt(noise)),
// kappa the flip probability in [0, 1/2) and noise the variance of Gaussian
// input noise; noise = 0 is the step kappa + (1 - 2 kappa) Theta(t f).  The
// same model is the noisy process f + xi with noise on the kernel's diagonal
// (eq. 17.16) and the step likelihood; gpc() uses that form (noise = 0 here).
//
// With cavity N(m, v) and a = 1 / sqrt(noise + v), z = t m a:
//   log Z = log(kappa + (1 - 2 kappa) Phi(z)),
//   d log Z / dm   = t a G(z),
//   d2 log Z / dm2 = -a^2 G(z) (z + G(z)),
// G = flip_mills_ratio (special.hpp), the curvature from flip_mills_curvature,
// which stays accurate where z + G(z) cancels; for kappa = 0 also the
// tilted variance ratio 1 + d2 v (SiteMoments), from lower_tail().
class ProbitFlip {
 public:
  ProbitFlip(double kappa, double noise) : kappa_(kappa), noise_(noise) {
    if (!(kappa >= 0.0 && kappa < 0.5))
      throw std::invalid_argument("'kappa' must lie in [0, 0.5)");
    if (!(noise >= 0.0) || !std::isfinite(noise))
      throw std::invalid_argument("'noise' must be a non-negative finite number");
  }

  double kappa() const { return kappa_; }
  double noise() const { return noise_; }

  SiteMoments moments(double target, double cavity_mean, double cavity_var) const {
    const double total = noise_ + cavity_var;
    if (!(total > 0.0) || !std::isfinite(total))
      throw std::invalid_argument("cavity variance plus noise must be positive and finite");
    const double a = 1.0 / std::sqrt(total);
    const double z = target * cavity_mean * a;
    SiteMoments out;
    out.log_z = log_mix(z);
    if (kappa_ == 0.0) {
      const LowerTail tail = lower_tail(z);
      out.dlog_z = target * a * tail.ratio;
      out.d2log_z = -a * a * tail.ratio * tail.excess;  // flip_mills_curvature(z, 0)
      // 1 + d2 v = (noise + v Var[u | u <= z]) / (noise + v), u ~ N(0, 1):
      // near 0 for a point far on the wrong side of a sharp boundary
      out.variance_ratio = (noise_ + cavity_var * tail.variance) / total;
    } else {
      out.dlog_z = target * a * flip_mills_ratio(z, kappa_);
      out.d2log_z = -a * a * flip_mills_curvature(z, kappa_);
    }
    return out;
  }

 private:
  // log(kappa + (1 - 2 kappa) Phi(z)).
  double log_mix(double z) const {
    if (kappa_ == 0.0) return log_norm_cdf(z);
    return log_sum_exp(std::log(kappa_), std::log1p(-2.0 * kappa_) + log_norm_cdf(z));
  }

  double kappa_;
  double noise_;
};

}  // namespace gpsvm

#endif  // GPSVM_LIKELIHOODS_HPP
