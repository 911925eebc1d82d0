// The K-class probit likelihood of the joint Gaussian-process classifier:
// class t is the largest of f_k + e_k, with e_k ~ N(0, s^2) independent
// (Girolami and Rogers 2006, the multinomial probit).  With independent
// Gaussian inputs f_k ~ N(m_k, s^2) (the same spread for every class, as
// the joint classifier's posterior has) the probability of class t is one
// integral,
//   P(t) = int phi(u) prod_{j != t} Phi(u + d_j) du,  d_j = (m_t - m_j) / s.
// The integrand is log-concave (log phi and log Phi are), so it is computed
// by Gauss-Hermite quadrature centred at its mode and scaled by its
// curvature there (the Laplace-centred rule of Liu and Pierce 1994), in
// logs: far from the mode the plain rule on phi would miss the mass of a
// class whose probability is 1e-20, and the log loss reads exactly those.
//
// Pure C++17 + Eigen: no R headers.
#ifndef GPSVM_MULTICLASS_PROBIT_HPP
#define GPSVM_MULTICLASS_PROBIT_HPP

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>
#include <vector>

#include "dense.hpp"
#include "special.hpp"

namespace gpsvm {

// Nodes and log weights of the Q-point Gauss-Hermite rule for the weight
// phi(u) (dense.hpp's gauss_rule(); the weights sum to 1 = int phi).
struct HermiteRule {
  Eigen::VectorXd node, log_weight;
};

inline HermiteRule hermite_rule(int q) {
  GaussRule g = gauss_rule(GaussWeight::normal, q);
  HermiteRule r;
  r.node = std::move(g.node);
  r.log_weight = g.weight.array().log();
  return r;
}

// The rule the K-class integrals use: 24 nodes on the mode-centred scale
// reproduce integrate()'s values to about 1e-12 relative on the tests'
// cases (up to 26 classes, probabilities down to 1e-30).
inline const HermiteRule& argmax_rule() {
  static const HermiteRule rule = hermite_rule(24);
  return rule;
}

// Beyond this argument Phi(x) = 1 and phi(x) / Phi(x) = 0 to about 1e-18:
// a class far below the others contributes nothing, and is skipped.
constexpr double kArgmaxNegligible = 9.0;

// log I and, when `mills` is given, E[phi(u + d_j) / Phi(u + d_j)] under the
// normalised integrand, for I = int phi(u) prod_j Phi(u + d_j) du.  Then
// d log I / d d_j = mills[j].  With `second` (count x count, column-major)
// also E[lambda_j lambda_k] off the diagonal and E[-(u + d_j) lambda_j] on
// it (lambda_j = phi / Phi at u + d_j), so that
//   d2 log I / d d_j d d_k = second[j, k] - mills[j] mills[k]
// (Phi'' = -x phi).  `work` is scratch of any size.
inline double log_argmax_integral(const double* d, int count, double* mills,
                                  std::vector<double>& work, double* second = nullptr) {
  const HermiteRule& rule = argmax_rule();
  const int q = static_cast<int>(rule.node.size());
  // the mode of h(u) = log phi(u) + sum log Phi(u + d_j): h' is decreasing,
  // h'(0) >= 0 and h'(u) <= sum_j lambda(d_j) - u for u >= 0
  double hi = 0.0;
  for (int j = 0; j < count; ++j)
    if (d[j] < kArgmaxNegligible) hi += mills_ratio(d[j]);
  double lo = 0.0, u = 0.0, curvature = 1.0;
  for (int iter = 0; iter < 60; ++iter) {
    double slope = -u;
    curvature = 1.0;
    for (int j = 0; j < count; ++j) {
      const double x = u + d[j];
      if (x >= kArgmaxNegligible) continue;
      const double l = mills_ratio(x);
      slope += l;
      curvature += l * (x + l);
    }
    if (slope > 0.0) lo = u;
    else hi = u;
    double next = u + slope / curvature;
    if (!(next > lo && next < hi)) next = 0.5 * (lo + hi);
    const double step = std::fabs(next - u);
    u = next;
    if (step < 1e-4 / std::sqrt(curvature) || hi - lo < 1e-12 * (1.0 + std::fabs(u))) break;
  }
  // the rule on the scale of the curvature at the mode
  const double scale = 1.0 / std::sqrt(curvature);
  work.assign(static_cast<std::size_t>(q), 0.0);
  double largest = -std::numeric_limits<double>::infinity();
  for (int k = 0; k < q; ++k) {
    const double t = rule.node[k], x0 = u + scale * t;
    double h = log_norm_pdf(x0) + 0.5 * t * t + kLogSqrt2Pi;
    for (int j = 0; j < count; ++j) {
      const double x = x0 + d[j];
      if (x < kArgmaxNegligible) h += log_norm_cdf(x);
    }
    work[static_cast<std::size_t>(k)] = rule.log_weight[k] + h;
    largest = std::max(largest, work[static_cast<std::size_t>(k)]);
  }
  double total = 0.0;
  for (int k = 0; k < q; ++k) {
    double& w = work[static_cast<std::size_t>(k)];
    w = std::exp(w - largest);
    total += w;
  }
  if (mills != nullptr) {
    for (int j = 0; j < count; ++j) mills[j] = 0.0;
    if (second != nullptr) std::fill(second, second + count * count, 0.0);
    std::vector<double> lambda(second != nullptr ? static_cast<std::size_t>(count) : 0);
    for (int k = 0; k < q; ++k) {
      const double x0 = u + scale * rule.node[k];
      const double w = work[static_cast<std::size_t>(k)] / total;
      for (int j = 0; j < count; ++j) {
        const double x = x0 + d[j];
        const double l = x < kArgmaxNegligible ? mills_ratio(x) : 0.0;
        mills[j] += w * l;
        if (second != nullptr) {
          lambda[static_cast<std::size_t>(j)] = l;
          second[j + j * count] -= w * x * l;
        }
      }
      if (second == nullptr) continue;
      for (int b = 0; b < count; ++b) {
        const double lb = w * lambda[static_cast<std::size_t>(b)];
        if (lb == 0.0) continue;
        for (int a = 0; a < count; ++a)
          if (a != b) second[a + b * count] += lambda[static_cast<std::size_t>(a)] * lb;
      }
    }
  }
  return std::log(scale) + largest + std::log(total);
}

// One training case of class t (0-based) with latent means m (C of them)
// and noise variance v: log Z = log P(t | m) under noise sd sqrt(v), its
// gradient in m (`grad`, C entries) and its derivative in v.
struct ArgmaxSite {
  double log_z = 0.0;
  double dlog_z_dv = 0.0;
};

// With `curvature`, also an upper bound on the largest eigenvalue of minus
// the Hessian of log Z in m (Gershgorin's, on the Hessian from `second`
// above), at most 1 / v (the truncated Gaussian's variance is positive), and
// with `hessian` (classes x classes, column-major) minus that Hessian.
inline ArgmaxSite argmax_site(const double* m, int classes, int t, double v, double* grad,
                              std::vector<double>& d, std::vector<double>& mills,
                              std::vector<double>& work, double* curvature = nullptr,
                              double* hessian = nullptr) {
  const double s = std::sqrt(v);
  const int count = classes - 1;
  d.resize(static_cast<std::size_t>(std::max(count, 1)));
  mills.resize(d.size());
  for (int j = 0, k = 0; j < classes; ++j)
    if (j != t) d[static_cast<std::size_t>(k++)] = (m[t] - m[j]) / s;
  ArgmaxSite out;
  std::vector<double> second(curvature != nullptr ? static_cast<std::size_t>(count * count) : 0);
  out.log_z = log_argmax_integral(d.data(), count, mills.data(), work,
                                  curvature != nullptr ? second.data() : nullptr);
  if (curvature != nullptr) {
    // X = -(d2 log Z / dd dd') / v, and in m: X[k, l] between classes j_k
    // and j_l, minus its column sums between t and j_l, its total at (t, t)
    double row_t = 0.0, total = 0.0, largest = 0.0;
    std::vector<double> column(static_cast<std::size_t>(count), 0.0);
    for (int l = 0; l < count; ++l) {
      for (int k = 0; k < count; ++k) {
        const double x = -(second[static_cast<std::size_t>(k + l * count)] -
                           mills[static_cast<std::size_t>(k)] * mills[static_cast<std::size_t>(l)]) / v;
        column[static_cast<std::size_t>(l)] += x;
        second[static_cast<std::size_t>(k + l * count)] = x;
      }
      total += column[static_cast<std::size_t>(l)];
    }
    for (int k = 0; k < count; ++k) {
      double row = std::fabs(column[static_cast<std::size_t>(k)]);  // the (j_k, t) entry
      for (int l = 0; l < count; ++l) row += std::fabs(second[static_cast<std::size_t>(k + l * count)]);
      largest = std::max(largest, row);
      row_t += std::fabs(column[static_cast<std::size_t>(k)]);
    }
    largest = std::max(largest, row_t + std::fabs(total));
    *curvature = std::min(largest, 1.0 / v);
    if (hessian != nullptr) {
      std::vector<int> cls;
      for (int j = 0; j < classes; ++j)
        if (j != t) cls.push_back(j);
      hessian[t + t * classes] = total;
      for (int l = 0; l < count; ++l) {
        const int jl = cls[static_cast<std::size_t>(l)];
        hessian[t + jl * classes] = hessian[jl + t * classes] = -column[static_cast<std::size_t>(l)];
        for (int k = 0; k < count; ++k)
          hessian[cls[static_cast<std::size_t>(k)] + jl * classes] =
              second[static_cast<std::size_t>(k + l * count)];
      }
    }
  }
  grad[t] = 0.0;
  for (int j = 0, k = 0; j < classes; ++j) {
    if (j == t) continue;
    const double e = mills[static_cast<std::size_t>(k)];
    grad[j] = -e / s;
    grad[t] += e / s;
    out.dlog_z_dv -= e * d[static_cast<std::size_t>(k)] / (2.0 * v);
    ++k;
  }
  return out;
}

// log P(class k) for every k at one input, the classes' latent means m and
// a common predictive variance (latent variance plus noise) `spread2`.
inline void argmax_log_probabilities(const double* m, int classes, double spread2, double* out,
                                     std::vector<double>& d, std::vector<double>& work) {
  const double s = std::sqrt(spread2);
  d.resize(static_cast<std::size_t>(std::max(classes - 1, 1)));
  for (int k = 0; k < classes; ++k) {
    for (int j = 0, i = 0; j < classes; ++j)
      if (j != k) d[static_cast<std::size_t>(i++)] = (m[k] - m[j]) / s;
    out[k] = log_argmax_integral(d.data(), classes - 1, nullptr, work);
  }
}

}  // namespace gpsvm

#endif  // GPSVM_MULTICLASS_PROBIT_HPP
