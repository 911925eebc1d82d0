// The likelihoods' site moments (likelihoods.hpp): log Z = log integral
// p(t | f) N(f; m, v) df and its first two derivatives in the cavity mean m,
// against
//   * quadrature of the tilted density in long double (reference.hpp): with
//     E, Var its mean and variance, d log Z/dm = (E f - m)/v and
//     d2 log Z/dm2 = Var f / v^2 - 1/v;
//   * central finite differences of the code's own log Z (and of its first
//     derivative), which tie the three outputs to each other.
// The cases reach the far tails: |t - m| / s = 40 and 1000, C s = 50 and
// 1000, probit arguments z = t m / sqrt(v + noise) = +-40, tiny and huge
// cavity variances.
#include <cmath>
#include <functional>
#include <gpsvm/likelihoods.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "check.hpp"
#include "reference.hpp"

namespace gpsvm_tests_likelihoods {

namespace {

using gpsvm_test::show;

struct Site {
  double t, m, v;
};

std::string describe(const Site& s, const std::string& params) {
  return "t = " + show(s.t) + ", m = " + show(s.m) + ", v = " + show(s.v) + ", " + params;
}

// The moments against quadrature.  Tolerances: log Z to 1e-12 (1 + |log Z|);
// d log Z/dm to 1e-10 in units of 1/s plus its size; d2 log Z/dm2 to 1e-9
// in units of 1/v plus its size (each a few hundred times double rounding,
// far below any error of the formulas, which would show at 1e-3 or more).
// `loss` widens the derivatives' tolerances where the formulas lose digits
// by design (see the case that uses it).
template <class Likelihood>
void check_against_quadrature(const Likelihood& lik, const Site& s, const ref::Tilted& q,
                              const std::string& note, double loss = 1.0) {
  const gpsvm::SiteMoments mo = lik.moments(s.t, s.m, s.v);
  const double lz = static_cast<double>(q.log_z);
  const double d1 = static_cast<double>(q.d1(s.m, s.v));
  const double d2 = static_cast<double>(q.d2(s.v));
  CHECK_NEAR_MSG(mo.log_z, lz, 1e-12 * (1.0 + std::fabs(lz)), note);
  CHECK_NEAR_MSG(mo.dlog_z, d1, loss * 1e-10 * (std::fabs(d1) + 1.0 / std::sqrt(s.v)), note);
  CHECK_NEAR_MSG(mo.d2log_z, d2, loss * 1e-9 * (std::fabs(d2) + 1.0 / s.v), note);
  // the tilted variance over the cavity's, where the likelihood forms it
  // itself (the site precision's digits where 1 + d2 v cancels), relatively:
  // the quadrature's variance is good to a few 1e-9 relatively (t = 40,
  // C = 50, where the code's ratio and 1 + d2 v agree to 2e-12)
  if (mo.variance_ratio > 0.0) {
    const double ratio = static_cast<double>(q.var / s.v);
    CHECK_NEAR_MSG(mo.variance_ratio, ratio, loss * 1e-8 * ratio, note + ": variance ratio");
  }
}

// d log Z / dC and d2 log Z / d(log C)^2 against the quadrature's tilted
// mean and variance of the excess e = max(|t - f| - eps, 0):
//   d log Z / dC = 1/C - eps/(1 + C eps) - E[e],
//   d2 log Z / d(log C)^2 = C^2 Var[e] - 1 + (C eps/(1 + C eps))^2 + C d log Z / dC,
// each relative to the size of its terms (the code's d log Z / dC sums
// terms of the size of C v and |t - m|, whose rounding stays in it: at
// C = 1e4, v = 0.03 it is 3.6e-11, 1/C - E[e] to 2e-13).
void check_C_derivatives_against_quadrature(const gpsvm::EpsilonInsensitive& lik, const Site& s,
                                            const ref::Tilted& q, const std::string& note,
                                            double loss) {
  const double C = lik.C(), eps = lik.epsilon();
  double dC = 0.0, deps = 0.0, curvature = 0.0;
  lik.moments(s.t, s.m, s.v, &dC, &deps, &curvature);
  const double mean_e = static_cast<double>(q.feature_mean);
  const double var_e = static_cast<double>(q.feature_var);
  const double share = C * eps / (1.0 + C * eps);
  const double ref_dC = 1.0 / C - eps / (1.0 + C * eps) - mean_e;
  const double ref_curvature = C * C * var_e - 1.0 + share * share + C * ref_dC;
  const double terms = 1.0 / C + eps + C * s.v + std::fabs(s.t - s.m) + mean_e;
  CHECK_NEAR_MSG(dC, ref_dC, loss * 1e-12 * terms, note + ": d/dC");
  CHECK_NEAR_MSG(curvature, ref_curvature, loss * 1e-8 * (C * C * var_e + 2.0 + C * mean_e),
                 note + ": d2/d(log C)2");
  CHECK_MSG(curvature == lik.log_C_curvature(s.t, s.m, s.v), note);
}

// The moments against central differences in m of the code's log Z (and d1):
// step h = 1e-4 s; truncation error h^2 |f'''| / 6 and rounding
// eps |log Z| / h set the tolerances.
template <class Likelihood>
void check_against_differences(const Likelihood& lik, const Site& s, const std::string& note) {
  const double sd = std::sqrt(s.v), h = 1e-4 * sd;
  const gpsvm::SiteMoments mo = lik.moments(s.t, s.m, s.v);
  const gpsvm::SiteMoments up = lik.moments(s.t, s.m + h, s.v);
  const gpsvm::SiteMoments down = lik.moments(s.t, s.m - h, s.v);
  const double fd1 = (up.log_z - down.log_z) / (2.0 * h);
  const double fd2 = (up.dlog_z - down.dlog_z) / (2.0 * h);
  const double round1 = 4e-16 * (1.0 + std::fabs(mo.log_z)) / h;
  const double round2 = 4e-16 * (std::fabs(mo.dlog_z) + 1.0 / sd) / h;
  CHECK_NEAR_MSG(mo.dlog_z, fd1, 1e-7 * (std::fabs(mo.dlog_z) + 1.0 / sd) + round1, note);
  CHECK_NEAR_MSG(mo.d2log_z, fd2, 1e-7 * (std::fabs(mo.d2log_z) + 1.0 / s.v) + round2, note);
  // the second difference of log Z itself, with its larger rounding error
  const double h2 = 1e-3 * sd;
  const double lz_up = lik.moments(s.t, s.m + h2, s.v).log_z;
  const double lz_down = lik.moments(s.t, s.m - h2, s.v).log_z;
  const double sd2 = (lz_up - 2.0 * mo.log_z + lz_down) / (h2 * h2);
  CHECK_NEAR_MSG(
      mo.d2log_z, sd2,
      1e-5 * (std::fabs(mo.d2log_z) + 1.0 / s.v) + 8e-16 * (1.0 + std::fabs(mo.log_z)) / (h2 * h2),
      note);
}

}  // namespace

TEST_CASE("epsilon-insensitive: log Z and its m-derivatives against quadrature and differences") {
  struct Case {
    Site s;
    double C, eps;
    double loss = 1.0;
  };
  const std::vector<Case> cases = {
      {{0.3, 0.1, 0.5}, 2.0, 0.1},     // moderate
      {{0.0, 0.05, 0.01}, 5.0, 0.5},   // cavity deep inside the tube
      {{0.5, 0.0, 1.0}, 3.0, 0.0},     // no tube
      {{0.1, 0.0, 1.0}, 50.0, 0.1},    // C s = 50
      {{40.0, 0.0, 1.0}, 1.0, 0.1},    // |t - m| / s = 40
      {{-20.0, 0.0, 0.25}, 2.0, 0.1},  // |t - m| / s = 40 below
      {{40.0, 0.0, 1.0}, 50.0, 0.1},   // both
      // |t - m| / s = 1000, C s = 1000: the tilted mass sits at the tube's
      // edge, split between the tube and the tail; the pieces' logs are
      // about -5e5, so their ratios keep 5.7 fewer digits than double's 16,
      // and d2 = C^2 r1 (r2 + r3) + ... - C p cancels terms 1e3 times its
      // size: 1e-7 relative at best.  Differences of log Z are useless here
      // (its rounding, 1e-10, over any step that resolves the curvature).
      {{500.0, 0.0, 0.25}, 2000.0, 0.1, 1e3},
      {{0.2, 0.0, 1e-8}, 3.0, 0.1},    // tiny cavity variance
      {{30.0, 0.0, 1e4}, 0.5, 1.0},    // huge cavity variance
      {{1.0, 1.05, 0.3}, 10.0, 0.05},  // cavity just outside the tube's edge
      // sites of EP fits at large C (test_ep_schedules.cpp): a tilted
      // variance 1e-2 and 7e-4 of the cavity's, where 1 + d2 v cancels and
      // C^2 r1 r3 - C p lost 4 digits (so that EP stalled at 1e-9)
      {{0.4843269657, 0.6630619657, 0.0774427}, 1e4, 0.05},
      {{0.4843270468, 0.5993780468, 0.03256}, 300.0, 0.0},
      {{0.4843270468, 0.5993780468, 0.03256}, 1e4, 0.0},
  };
  for (const Case& c : cases) {
    const gpsvm::EpsilonInsensitive lik(c.C, c.eps);
    const std::string note = describe(c.s, "C = " + show(c.C) + ", eps = " + show(c.eps));
    const ref::Tilted q = ref::tilted_epsins(c.s.t, c.s.m, c.s.v, c.C, c.eps);
    check_against_quadrature(lik, c.s, q, note, c.loss);
    check_C_derivatives_against_quadrature(lik, c.s, q, note, c.loss);
    if (c.loss == 1.0) check_against_differences(lik, c.s, note);
    // log-concave: the second derivative is never positive
    CHECK_MSG(lik.moments(c.s.t, c.s.m, c.s.v).d2log_z <= 0.0, note);
  }
}

TEST_CASE("epsilon-insensitive: shifting t and m together changes nothing (eq. 3.12 fails this)") {
  const gpsvm::EpsilonInsensitive lik(5.0, 0.1);
  const gpsvm::SiteMoments a = lik.moments(0.4, 0.1, 0.3), b = lik.moments(10.4, 10.1, 0.3);
  CHECK_NEAR(a.log_z, b.log_z, 1e-13);
  CHECK_NEAR(a.dlog_z, b.dlog_z, 1e-12);
  CHECK_NEAR(a.d2log_z, b.d2log_z, 1e-12);
}

TEST_CASE("epsilon-insensitive: the moments with the gradient are those of the separate calls") {
  // (the evidence search for C takes both from one evaluation; every bit
  // must be the same, in the far tails too)
  for (const Site& s : std::vector<Site>{{0.3, 0.1, 0.5},
                                         {40.0, 0.0, 1.0},
                                         {-1000.0, 0.0, 1.0},
                                         {0.0, 0.05, 1e-8},
                                         {0.1, 0.0, 1e6},
                                         {5.0, -3.0, 0.01}}) {
    for (double C : {0.01, 2.0, 50.0, 1000.0}) {
      for (double eps : {0.0, 0.1, 2.0}) {
        const gpsvm::EpsilonInsensitive lik(C, eps);
        double dC = 0.0, deps = 0.0, sep_C = 0.0, sep_eps = 0.0, curvature = 0.0;
        const gpsvm::SiteMoments both = lik.moments(s.t, s.m, s.v, &dC, &deps, &curvature);
        const gpsvm::SiteMoments alone = lik.moments(s.t, s.m, s.v);
        lik.parameter_gradient(s.t, s.m, s.v, &sep_C, &sep_eps);
        const std::string note = describe(s, "C = " + show(C) + ", eps = " + show(eps));
        CHECK_MSG(both.log_z == alone.log_z && both.dlog_z == alone.dlog_z &&
                      both.d2log_z == alone.d2log_z &&
                      both.variance_ratio == alone.variance_ratio,
                  note);
        CHECK_MSG(dC == sep_C && deps == sep_eps && std::isfinite(dC) && std::isfinite(deps),
                  note);
        CHECK_MSG(std::isfinite(curvature) && curvature == lik.log_C_curvature(s.t, s.m, s.v),
                  note);
      }
    }
  }
}

TEST_CASE("epsilon-insensitive: d log Z / dC and d log Z / d eps against central differences") {
  struct Case {
    Site s;
    double C, eps;
  };
  for (const Case& c : std::vector<Case>{{{0.3, 0.1, 0.5}, 2.0, 0.1},
                                         {{40.0, 0.0, 1.0}, 1.0, 0.1},
                                         {{0.0, 0.05, 0.01}, 5.0, 0.5},
                                         {{0.1, 0.0, 1.0}, 50.0, 0.2}}) {
    const gpsvm::EpsilonInsensitive lik(c.C, c.eps);
    double dC = 0.0, deps = 0.0;
    lik.parameter_gradient(c.s.t, c.s.m, c.s.v, &dC, &deps);
    auto lz = [&](double C, double eps) {
      return gpsvm::EpsilonInsensitive(C, eps).moments(c.s.t, c.s.m, c.s.v).log_z;
    };
    const double hC = 1e-5 * c.C, he = 1e-5 * c.eps;
    const double fdC = (lz(c.C + hC, c.eps) - lz(c.C - hC, c.eps)) / (2.0 * hC);
    const double fde = (lz(c.C, c.eps + he) - lz(c.C, c.eps - he)) / (2.0 * he);
    const std::string note = describe(c.s, "C = " + show(c.C) + ", eps = " + show(c.eps));
    CHECK_NEAR_MSG(dC, fdC, 1e-6 * (std::fabs(dC) + 1.0 / c.C), note);
    CHECK_NEAR_MSG(deps, fde, 1e-6 * (std::fabs(deps) + c.C), note);
    // the curvature in log C: the difference of C d log Z / dC
    auto slope = [&](double log_C) {
      double d_C = 0.0, d_eps = 0.0;
      gpsvm::EpsilonInsensitive(std::exp(log_C), c.eps).parameter_gradient(c.s.t, c.s.m, c.s.v,
                                                                           &d_C, &d_eps);
      return std::exp(log_C) * d_C;
    };
    const double h = 1e-5, at = std::log(c.C);
    const double fd_curvature = (slope(at + h) - slope(at - h)) / (2.0 * h);
    const double curvature = lik.log_C_curvature(c.s.t, c.s.m, c.s.v);
    CHECK_NEAR_MSG(curvature, fd_curvature, 1e-6 * (std::fabs(curvature) + 1.0 + c.C * std::fabs(dC)),
                   note + ": d2/d(log C)2");
  }
}

TEST_CASE(
    "epsilon-insensitive: the noise variance is eq. (29), by quadrature of the noise density") {
  for (double C : {0.5, 2.0, 40.0}) {
    for (double eps : {0.0, 0.1, 1.5}) {
      // E[u^2] under C / (2 (eps C + 1)) exp(-C max(|u| - eps, 0)), both halves
      const ref::Rule r = ref::make_rule(0.0L, eps + 80.0L / C, {eps}, 0.01L / C, 0.25L / C);
      ref::ld second = 0.0L, mass = 0.0L;
      for (size_t i = 0; i < r.x.size(); ++i) {
        const ref::ld u = r.x[i];
        const ref::ld out = u > eps ? u - eps : 0.0L;
        const ref::ld p = C / (2.0L * (eps * C + 1.0L)) * std::exp(-C * out);
        mass += 2.0L * r.w[i] * p;
        second += 2.0L * r.w[i] * p * u * u;
      }
      const std::string note = "C = " + show(C) + ", eps = " + show(eps);
      CHECK_NEAR_MSG(static_cast<double>(mass), 1.0, 1e-14, note);
      CHECK_REL_MSG(gpsvm::EpsilonInsensitive(C, eps).noise_variance(), static_cast<double>(second),
                    1e-13, note);
    }
  }
}

TEST_CASE(
    "epsilon-insensitive: predictive CDF, density and quantiles against the convolution by "
    "quadrature") {
  struct Case {
    double mean, var, C, eps;
  };
  for (const Case c : {Case{0.1, 0.05, 5.0, 0.1}, Case{0.0, 2.0, 1.0, 0.5},
                       Case{0.0, 1e-4, 20.0, 0.1}, Case{3.0, 0.3, 0.5, 0.0}}) {
    const gpsvm::EpsilonInsensitive lik(c.C, c.eps);
    const std::string note = "mean " + show(c.mean) + ", var " + show(c.var) +
                             ", C = " + show(c.C) + ", eps = " + show(c.eps);
    for (double q :
         {c.mean - 3.0, c.mean - 0.2, c.mean, c.mean + 0.05, c.mean + 1.0, c.mean + 6.0}) {
      // P(f + e <= q) = integral F_e(q - f) N(f; mean, var) df, F_e the noise CDF
      // (k e^{C(x + eps)} below -eps, k + C k (x + eps) in the tube, 1 - k e^{-C(x - eps)}
      // above, k = 1 / (2 (eps C + 1)))
      const ref::ld k = 0.5L / (c.eps * c.C + 1.0L), s = std::sqrt(static_cast<ref::ld>(c.var));
      auto noise_cdf = [&](ref::ld x) -> ref::ld {
        if (x < -c.eps) return k * std::exp(c.C * (x + c.eps));
        if (x > c.eps) return 1.0L - k * std::exp(-c.C * (x - c.eps));
        return k + c.C * k * (x + c.eps);
      };
      const ref::Rule r = ref::make_rule(c.mean - 40.0L * s, c.mean + 40.0L * s,
                                         {q - c.eps, q + c.eps}, s / 64.0L, s / 8.0L);
      ref::ld cdf = 0.0L;
      for (size_t i = 0; i < r.x.size(); ++i) {
        const ref::ld d = r.x[i] - c.mean;
        cdf += r.w[i] * noise_cdf(q - r.x[i]) * std::exp(-0.5L * d * d / c.var) /
               (s * std::sqrt(2.0L * ref::kPi));
      }
      CHECK_NEAR_MSG(lik.predictive_cdf(q, c.mean, c.var), static_cast<double>(cdf), 1e-12,
                     note + ", q = " + show(q));
      // the density is the tilted normaliser with target q
      const ref::Tilted t = ref::tilted_epsins(q, c.mean, c.var, c.C, c.eps);
      CHECK_REL_MSG(lik.predictive_density(q, c.mean, c.var),
                    static_cast<double>(std::exp(t.log_z)), 1e-12, note + ", q = " + show(q));
    }
    // quantiles invert the CDF
    for (double p : {1e-6, 0.025, 0.5, 0.975, 1.0 - 1e-6}) {
      const double x = lik.predictive_quantile(p, c.mean, c.var);
      CHECK_NEAR_MSG(lik.predictive_cdf(x, c.mean, c.var), p, 1e-12, note + ", p = " + show(p));
    }
  }
  CHECK_THROWS(gpsvm::EpsilonInsensitive(1.0, 0.1).predictive_quantile(1.0, 0.0, 1.0),
               std::invalid_argument);
}

TEST_CASE(
    "probit with flip noise: log Z and its m-derivatives against quadrature and differences") {
  for (double kappa : {0.0, 1e-8, 0.2}) {
    for (double noise : {0.0, 0.5}) {
      for (double v : {1.0, 0.01}) {
        for (double z : {-40.0, -10.0, -1.0, 0.0, 1.0, 10.0, 40.0}) {
          for (double t : {1.0, -1.0}) {
            // the cavity mean giving t m / sqrt(v + noise) = z
            const Site s{t, t * z * std::sqrt(v + noise), v};
            const gpsvm::ProbitFlip lik(kappa, noise);
            const std::string note = describe(
                s, "kappa = " + show(kappa) + ", noise = " + show(noise) + ", z = " + show(z));
            const ref::Tilted q = ref::tilted_probit(s.t, s.m, s.v, kappa, noise);
            check_against_quadrature(lik, s, q, note);
            // the step likelihood (noise 0) is log-concave only for kappa = 0;
            // differences need a smooth log Z, which it has for every kappa
            check_against_differences(lik, s, note);
          }
        }
      }
    }
  }
}

TEST_CASE(
    "probit: log Z = log(kappa + (1 - 2 kappa) Phi(z)) exactly, checked at mpmath constants") {
  // kappa = 0, z = -40: log Phi(-40) (mpmath, 40 digits)
  const gpsvm::ProbitFlip step(0.0, 0.0);
  CHECK_REL(step.moments(1.0, -40.0, 1.0).log_z, -804.60844201375379, 1e-15);
  // d log Z / dm = a G(z), G(-40) = 40.024968847207264 (mpmath)
  CHECK_REL(step.moments(1.0, -40.0, 1.0).dlog_z, 40.024968847207264, 1e-14);
  // a flip probability caps the penalty of a wrong label at log kappa
  const gpsvm::ProbitFlip flip(0.05, 0.0);
  CHECK_REL(flip.moments(1.0, -1e3, 1.0).log_z, std::log(0.05), 1e-15);
  CHECK_NEAR(flip.moments(1.0, -1e3, 1.0).dlog_z, 0.0, 1e-300);
}

TEST_CASE("Gaussian noise: log Z, d1 and d2 against quadrature and differences") {
  for (const Site& s : std::vector<Site>{
           {0.3, 0.1, 0.5}, {40.0, 0.0, 1.0}, {-3.0, 2.0, 1e-6}, {1.0, -5.0, 100.0}}) {
    for (double noise : {1e-4, 0.1, 10.0}) {
      const gpsvm::GaussianNoise lik(noise);
      const std::string note = describe(s, "noise = " + show(noise));
      check_against_quadrature(lik, s, ref::tilted_gaussian(s.t, s.m, s.v, noise), note);
      check_against_differences(lik, s, note);
    }
  }
}

TEST_CASE("likelihoods reject parameters outside their domain") {
  CHECK_THROWS(gpsvm::EpsilonInsensitive(0.0, 0.1), std::invalid_argument);
  CHECK_THROWS(gpsvm::EpsilonInsensitive(INFINITY, 0.1), std::invalid_argument);
  CHECK_THROWS(gpsvm::EpsilonInsensitive(1.0, -0.1), std::invalid_argument);
  CHECK_THROWS(gpsvm::EpsilonInsensitive(1.0, NAN), std::invalid_argument);
  CHECK_THROWS(gpsvm::EpsilonInsensitive(1.0, 0.1).moments(0.0, 0.0, 0.0), std::invalid_argument);
  CHECK_THROWS(gpsvm::EpsilonInsensitive(1.0, 0.1).moments(0.0, 0.0, INFINITY),
               std::invalid_argument);
  CHECK_THROWS(gpsvm::ProbitFlip(0.5, 0.0), std::invalid_argument);
  CHECK_THROWS(gpsvm::ProbitFlip(-0.1, 0.0), std::invalid_argument);
  CHECK_THROWS(gpsvm::ProbitFlip(0.1, -1.0), std::invalid_argument);
  CHECK_THROWS(gpsvm::ProbitFlip(0.0, 0.0).moments(1.0, 0.0, 0.0), std::invalid_argument);
  CHECK_THROWS(gpsvm::GaussianNoise(0.0), std::invalid_argument);
  CHECK_THROWS(gpsvm::GaussianNoise(NAN), std::invalid_argument);
}

}  // namespace gpsvm_tests_likelihoods
