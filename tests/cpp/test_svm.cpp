// The support vector solvers at their solutions: SMO for epsilon-SVR
// (smo.hpp, with and without a bias, with and without shrinking, with a
// cache too small to hold two columns' worth of the problem) and the kernel
// adatron for classification (adatron.hpp).  Each solution is checked
// against the Kuhn-Tucker conditions to the solver's tolerance, written out
// here from the primal problem, and against the optimum of the dual found by
// enumerating active sets on problems of 6 or 7 points (reference.hpp).
#include <algorithm>
#include <cmath>
#include <gpsvm/adatron.hpp>
#include <gpsvm/kernels.hpp>
#include <gpsvm/loo.hpp>
#include <gpsvm/naive_mf.hpp>
#include <gpsvm/smo.hpp>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "check.hpp"
#include "fixtures.hpp"
#include "reference.hpp"

namespace gpsvm_tests_svm {

namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;
using gpsvm_test::show;

using fixture::svr_control;

// The Kuhn-Tucker conditions of min 1/2 b'Kb - y'b + eps |b|_1, |b_i| <= C
// (sum b = 0 with a bias b0), in terms of the residual r_i = y_i - (K b)_i - b0:
//   b_i = 0       =>  |r_i| <= eps
//   0 < b_i < C   =>  r_i = eps,   -C < b_i < 0  =>  r_i = -eps
//   b_i = C       =>  r_i >= eps,  b_i = -C      =>  r_i <= -eps
// each to within tol (the solver's gap is the sum of the worst violation on
// each side, so no single one exceeds it).
// Returns the largest violation.
double check_svr_kkt(const MatrixXd& K, const VectorXd& y, const gpsvm::SvrResult& fit,
                     const gpsvm::SvrControl& c, const std::string& note) {
  const VectorXd r = y - K * fit.beta - VectorXd::Constant(y.size(), fit.b);
  const double tol = c.tol + 1e-12 * (1.0 + y.cwiseAbs().maxCoeff());
  double worst = 0.0;
  for (Eigen::Index i = 0; i < y.size(); ++i) {
    const double b = fit.beta[i];
    double v;
    if (b == 0.0)
      v = std::fabs(r[i]) - c.epsilon;
    else if (b == c.C)
      v = c.epsilon - r[i];
    else if (b == -c.C)
      v = r[i] + c.epsilon;
    else if (b > 0.0)
      v = std::fabs(r[i] - c.epsilon);
    else
      v = std::fabs(r[i] + c.epsilon);
    worst = std::max(worst, v);
  }
  CHECK_NEAR_MSG(std::max(worst, 0.0), 0.0, tol, note + ": worst KKT violation");
  CHECK_MSG(fit.beta.cwiseAbs().maxCoeff() <= c.C, note + ": box");
  if (c.bias) CHECK_NEAR_MSG(fit.beta.sum(), 0.0, 1e-12 * c.C * y.size(), note + ": sum beta = 0");
  // the split beta = alpha+ - alpha-, both in [0, C], never both positive when eps > 0
  CHECK_MSG(fit.alpha_plus.minCoeff() >= 0.0 && fit.alpha_minus.minCoeff() >= 0.0 &&
                fit.alpha_plus.maxCoeff() <= c.C && fit.alpha_minus.maxCoeff() <= c.C,
            note + ": alpha box");
  if (c.epsilon > 0.0)
    CHECK_MSG(fit.alpha_plus.cwiseProduct(fit.alpha_minus).maxCoeff() == 0.0,
              note + ": complementarity");
  // the reported fit and objective are those of the returned coefficients
  CHECK_NEAR_MSG(ref::gap(fit.fitted, K * fit.beta + VectorXd::Constant(y.size(), fit.b)), 0.0,
                 1e-12, note);
  CHECK_NEAR_MSG(fit.objective, ref::svr_objective(K, y, fit.beta, c.epsilon),
                 1e-12 * (1.0 + std::fabs(fit.objective)), note + ": reported objective");
  CHECK_MSG(fit.status.converged && fit.status.change < c.tol && fit.status.tol == c.tol, note);
  return worst;
}

// Tiny regression problems: n points in d dimensions, Gaussian kernel.
struct Problem {
  MatrixXd x, K;
  VectorXd y;
};

Problem problem(int n, int d, double sigma, std::uint32_t seed) {
  ref::Random rng(seed);
  Problem p;
  p.x = rng.uniform_matrix(n, d, -3.0, 3.0);
  p.K = gpsvm::kernel_matrix(gpsvm::Kernel::rbf(sigma), p.x);
  p.y.resize(n);
  for (int i = 0; i < n; ++i) p.y[i] = std::sin(p.x.row(i).sum()) + 0.3 * rng.normal();
  return p;
}

}  // namespace

TEST_CASE("SMO: the KKT conditions hold and the objective is the brute-force optimum") {
  int problems = 0;
  for (int d : {1, 2}) {
    const Problem p = problem(6, d, 1.0, 100 + d);
    const double lambda_min = Eigen::SelfAdjointEigenSolver<MatrixXd>(p.K).eigenvalues().minCoeff();
    for (double C : {0.5, 10.0}) {
      for (double eps : {0.0, 0.1}) {
        for (bool bias : {false, true}) {
          const ref::SvrOptimum best = ref::svr_brute_force(p.K, p.y, C, eps, bias);
          for (bool shrinking : {false, true}) {
            ++problems;
            const gpsvm::SvrControl c = svr_control(C, eps, bias, 1e-10, shrinking);
            const gpsvm::SvrResult fit = gpsvm::svr_solve(gpsvm::Kernel::rbf(1.0), p.x, p.y, c);
            const std::string note = "d = " + std::to_string(d) + ", C = " + show(C) +
                                     ", eps = " + show(eps) + (bias ? ", bias" : "") +
                                     (shrinking ? ", shrinking" : "");
            const double violation = check_svr_kkt(p.K, p.y, fit, c, note);
            // Convexity: obj(b) - obj(b*) <= <g, b - b*> for a subgradient g
            // at b, whose entries are the KKT violations (the bias term
            // vanishes as sum(b - b*) = 0): at most violation * |b - b*|_1.
            const double excess = fit.objective - best.objective;
            const double bound = violation * (fit.beta - best.beta).cwiseAbs().sum() + 1e-12;
            CHECK_MSG(excess >= -1e-12 && excess <= bound,
                      note + ": objective " + show(fit.objective) + " vs optimum " +
                          show(best.objective));
            // and strong convexity, lambda_min |b - b*|^2 / 2 <= excess
            CHECK_NEAR_MSG((fit.beta - best.beta).norm(), 0.0,
                           std::sqrt(2.0 * std::max(bound, 1e-15) / lambda_min), note + ": beta");
          }
        }
      }
    }
  }
  CHECK(problems == 32);
}

TEST_CASE("SMO with a box and tube per point: the whitened problem's brute-force optimum") {
  // Row i's box C exp(-l_i) and tube eps exp(l_i) make the loss
  // C |(y_i - f_i) / s_i|_eps, s_i = exp(l_i): the plain problem on y / s
  // with the kernel S^-1 K S^-1, whose coefficients are S beta.
  for (int d : {1, 2}) {
    const Problem p = problem(7, d, 1.0, 300 + d);
    const VectorXd l = (0.8 * p.x.col(0).array().sin()).matrix();
    const VectorXd s = l.array().exp();
    const MatrixXd Kw = s.cwiseInverse().asDiagonal() * p.K * s.cwiseInverse().asDiagonal();
    const VectorXd yw = p.y.cwiseQuotient(s);
    for (double C : {0.5, 10.0}) {
      for (double eps : {0.0, 0.1}) {
        const ref::SvrOptimum best = ref::svr_brute_force(Kw, yw, C, eps, false);
        for (bool shrinking : {false, true}) {
          gpsvm::SvrControl c = svr_control(C, eps, false, 1e-10, shrinking);
          c.log_noise_scale = l;
          const gpsvm::SvrResult fit = gpsvm::svr_solve(gpsvm::Kernel::rbf(1.0), p.x, p.y, c);
          const std::string note = "per point, d = " + std::to_string(d) + ", C = " + show(C) +
                                   ", eps = " + show(eps) + (shrinking ? ", shrinking" : "");
          CHECK_MSG(fit.status.converged, note);
          CHECK_NEAR_MSG(ref::gap(fit.beta.cwiseProduct(s), best.beta), 0.0, 1e-6, note + ": beta");
          CHECK_NEAR_MSG(fit.objective, best.objective, 1e-8 * (1.0 + std::fabs(best.objective)),
                         note + ": objective");
        }
      }
    }
  }
  // twins must share their scale
  const Problem p = problem(5, 1, 1.0, 310);
  MatrixXd x(6, 1);
  x << p.x, p.x.row(0);
  VectorXd y(6);
  y << p.y, 0.0;
  gpsvm::SvrControl c = svr_control(1.0, 0.1, false, 1e-8);
  c.log_noise_scale = VectorXd::Zero(6);
  c.log_noise_scale[5] = 0.5;
  CHECK_THROWS(gpsvm::svr_solve(gpsvm::Kernel::rbf(1.0), x, y, c), std::invalid_argument);
  // (up to rounding, as a noise function's matrix product gives them, they
  // share the first twin's)
  c.log_noise_scale[5] = 1e-14;
  const gpsvm::SvrResult rounded = gpsvm::svr_solve(gpsvm::Kernel::rbf(1.0), x, y, c);
  c.log_noise_scale[5] = 0.0;
  const gpsvm::SvrResult exact = gpsvm::svr_solve(gpsvm::Kernel::rbf(1.0), x, y, c);
  CHECK_MSG(rounded.status.converged && rounded.beta == exact.beta, "twins' rounding");
  c.log_noise_scale = VectorXd::Zero(3);
  CHECK_THROWS(gpsvm::svr_solve(gpsvm::Kernel::rbf(1.0), x, y, c), std::invalid_argument);
}

TEST_CASE("SMO: a huge C that never binds leaves the coefficients as they are") {
  // The box does not bind at C = 10 here, so every larger C has the same
  // solution, the brute-force one; the coefficients stay of the order of
  // y.  (A cutoff for zero relative to C, 1e-12 C, once emptied them all
  // at C = 1e12.)
  const Problem p = problem(6, 2, 1.0, 102);
  for (bool bias : {false, true}) {
    const ref::SvrOptimum best = ref::svr_brute_force(p.K, p.y, 10.0, 0.1, bias);
    CHECK_MSG(best.beta.cwiseAbs().maxCoeff() < 10.0, "the box does not bind");
    for (double C : {1e6, 1e10, 1e12, 1e15}) {
      const gpsvm::SvrControl c = svr_control(C, 0.1, bias, 1e-10);
      const gpsvm::SvrResult fit = gpsvm::svr_solve(gpsvm::Kernel::rbf(1.0), p.x, p.y, c);
      const std::string note = "C = " + show(C) + (bias ? ", bias" : "");
      check_svr_kkt(p.K, p.y, fit, c, note);
      CHECK_NEAR_MSG((fit.beta - best.beta).cwiseAbs().maxCoeff(), 0.0, 1e-8, note + ": beta");
      CHECK_NEAR_MSG(fit.objective, best.objective, 1e-10, note + ": objective");
    }
  }
}

TEST_CASE("SMO: shrinking and a two-column cache change the work, not the solution") {
  const Problem p = problem(300, 2, 0.7, 7);
  for (bool bias : {false, true}) {
    const gpsvm::SvrControl plain = svr_control(5.0, 0.1, bias, 1e-8, false, 100.0);
    const gpsvm::SvrControl lean = svr_control(5.0, 0.1, bias, 1e-8, true, 1e-6);
    const gpsvm::SvrResult a = gpsvm::svr_solve(gpsvm::Kernel::rbf(0.7), p.x, p.y, plain);
    const gpsvm::SvrResult b = gpsvm::svr_solve(gpsvm::Kernel::rbf(0.7), p.x, p.y, lean);
    const std::string note = bias ? "bias" : "no bias";
    const double va = check_svr_kkt(p.K, p.y, a, plain, note + ", plain");
    const double vb = check_svr_kkt(p.K, p.y, b, lean, note + ", shrinking, tiny cache");
    // both within their violations of one optimum
    const double bound = (va + vb) * (a.beta - b.beta).cwiseAbs().sum() + 1e-10;
    CHECK_NEAR_MSG(a.objective, b.objective, bound, note);
    CHECK_MSG(b.kernel_columns > a.kernel_columns, note + ": the tiny cache recomputes columns");
  }
}

TEST_CASE("SMO: duplicate inputs, one point, and a capped run") {
  // 40 rows, only 5 distinct inputs: K is singular, the KKT conditions still hold
  ref::Random rng(3);
  MatrixXd x(40, 1);
  VectorXd y(40);
  for (int i = 0; i < 40; ++i) {
    x(i, 0) = static_cast<double>(i % 5);
    y[i] = std::sin(x(i, 0)) + 0.5 * rng.normal();
  }
  const MatrixXd K = gpsvm::kernel_matrix(gpsvm::Kernel::rbf(1.0), x);
  for (bool bias : {false, true}) {
    const gpsvm::SvrControl c = svr_control(2.0, 0.05, bias, 1e-9);
    check_svr_kkt(K, y, gpsvm::svr_solve(gpsvm::Kernel::rbf(1.0), x, y, c), c,
                  bias ? "duplicates, bias" : "duplicates");
  }
  // one point without a bias: beta = clip(y - eps sign(y), +-C) / k(x, x) with k = 1
  MatrixXd x1 = MatrixXd::Constant(1, 1, 0.5);
  for (double t : {0.05, 0.7, -3.0, 40.0}) {
    const gpsvm::SvrControl c = svr_control(2.0, 0.1, false, 1e-12);
    const gpsvm::SvrResult fit =
        gpsvm::svr_solve(gpsvm::Kernel::rbf(1.0), x1, VectorXd::Constant(1, t), c);
    const double shrunk = std::fabs(t) <= 0.1 ? 0.0 : t - 0.1 * (t > 0 ? 1.0 : -1.0);
    CHECK_NEAR_MSG(fit.beta[0], std::max(-2.0, std::min(2.0, shrunk)), 1e-12, "t = " + show(t));
  }
  // a capped run says so
  const Problem p = problem(50, 1, 0.5, 9);
  gpsvm::SvrControl c = svr_control(100.0, 0.01, true, 1e-12);
  c.max_iter = 3;
  const gpsvm::SvrResult capped = gpsvm::svr_solve(gpsvm::Kernel::rbf(0.5), p.x, p.y, c);
  CHECK(!capped.status.converged && capped.status.iterations == 3 && capped.status.change >= c.tol);
  CHECK_THROWS(gpsvm::svr_solve(gpsvm::Kernel::rbf(0.5), p.x, VectorXd(p.y.head(10)), c),
               std::invalid_argument);
}

// The optimum of the SVR dual when every input is the same (K = 1): with B
// the sum of beta, the objective is B^2 / 2 + h(B), where h(B), the least
// -y'beta + eps |beta|_1 over the box with that sum, is piecewise linear:
// each point contributes a piece of length C with slope -y_i - eps (beta_i
// from -C to 0) and one with slope -y_i + eps (from 0 to C), taken in
// increasing slope from B = -n C.  With a bias B = 0; without one B
// minimises B^2 / 2 + h(B), where the slope of h reaches -B.
double identical_inputs_optimum(const VectorXd& y, double C, double eps, bool bias) {
  const Eigen::Index n = y.size();
  std::vector<double> slope;
  double h = 0.0;  // h(-n C): every beta_i = -C
  for (Eigen::Index i = 0; i < n; ++i) {
    slope.push_back(-y[i] - eps);
    slope.push_back(-y[i] + eps);
    h += C * y[i] + C * eps;
  }
  std::sort(slope.begin(), slope.end());
  double t = -static_cast<double>(n) * C;
  for (double s : slope) {
    // on [t, t + C] the objective's derivative is B + s
    const double end = t + C;
    const double stop = bias ? std::min(end, 0.0) : std::min(std::max(-s, t), end);
    h += s * (stop - t);
    if (stop < end) return 0.5 * stop * stop + h;
    t = end;
  }
  return 0.5 * t * t + h;
}

TEST_CASE("SMO: thousands of rows with a few distinct inputs: KKT and the exact optimum") {
  ref::Random rng(17);
  for (int distinct : {1, 3}) {
    const int n = 3001;
    MatrixXd x(n, 1);
    VectorXd y(n);
    for (int i = 0; i < n; ++i) {
      x(i, 0) = 0.5 + (i % distinct);
      y[i] = 0.3 * x(i, 0) + rng.normal();
    }
    const MatrixXd K = gpsvm::kernel_matrix(gpsvm::Kernel::rbf(1.0), x);
    for (bool bias : {false, true}) {
      for (bool shrinking : {false, true}) {
        const gpsvm::SvrControl c = svr_control(1.0, 0.1, bias, 1e-9, shrinking);
        const gpsvm::SvrResult fit = gpsvm::svr_solve(gpsvm::Kernel::rbf(1.0), x, y, c);
        const std::string note = std::to_string(distinct) + " distinct inputs" +
                                 (bias ? ", bias" : "") + (shrinking ? ", shrinking" : "");
        check_svr_kkt(K, y, fit, c, note);
        // columns per distinct input, not per row
        CHECK_MSG(fit.kernel_columns < n / 100,
                  note + ": " + std::to_string(fit.kernel_columns) + " columns");
        // within the KKT tolerance times |beta - beta*|_1 <= 2 n C (convexity)
        if (distinct == 1)
          CHECK_NEAR_MSG(fit.objective, identical_inputs_optimum(y, 1.0, 0.1, bias),
                         2.0 * c.tol * n, note + ": the piecewise-linear optimum");
      }
    }
  }
}

TEST_CASE("SMO: three points, to a loose tolerance: KKT, status and the brute-force solution") {
  MatrixXd x(3, 1);
  x << 0.0, 1.0, 2.0;
  VectorXd y(3);
  y << 0.0, 1.0, 0.0;
  const gpsvm::SvrControl c = svr_control(10.0, 0.1, false, 1e-6, true, 1.0);
  const gpsvm::SvrResult fit = gpsvm::svr_solve(gpsvm::Kernel::rbf(1.0), x, y, c);
  const MatrixXd K = gpsvm::kernel_matrix(gpsvm::Kernel::rbf(1.0), x);
  check_svr_kkt(K, y, fit, c, "three points");
  const ref::SvrOptimum best = ref::svr_brute_force(K, y, 10.0, 0.1, false);
  CHECK_NEAR(ref::gap(fit.beta, best.beta), 0.0, 1e-5);
}

// ---- the kernel adatron -----------------------------------------------------

using fixture::adatron_control;

TEST_CASE("adatron: the KKT conditions hold and W is the brute-force maximum") {
  for (std::uint32_t seed : {1u, 2u, 3u}) {
    ref::Random rng(seed);
    const int n = 7;
    const MatrixXd x = rng.uniform_matrix(n, 2, -2.0, 2.0);
    VectorXd y(n);
    for (int i = 0; i < n; ++i)
      y[i] = (x(i, 0) + 0.5 * x(i, 1) + 0.4 * rng.normal() > 0.0) ? 1.0 : -1.0;
    y[0] = 1.0;
    y[1] = -1.0;  // both classes
    for (double noise : {0.0, 0.3}) {
      MatrixXd K = gpsvm::kernel_matrix(gpsvm::Kernel::rbf(1.0), x);
      K.diagonal().array() += noise;
      for (double C : {0.3, 5.0, std::numeric_limits<double>::infinity()}) {
        const gpsvm::AdatronControl c = adatron_control(C, 1e-20);
        const gpsvm::AdatronResult fit = gpsvm::adatron_fit(K, y, c);
        const std::string note =
            "seed " + std::to_string(seed) + ", noise " + show(noise) + ", C = " + show(C);
        CHECK_MSG(fit.status.converged, note);
        // g_i = 1 - y_i f_i: alpha_i = 0 => g_i <= 0, alpha_i = C => g_i >= 0,
        // free => g_i = 0, each to sqrt(tol) in units of min(1, C)
        const VectorXd g = VectorXd::Ones(n) - y.cwiseProduct(K * y.cwiseProduct(fit.alpha));
        const double unit = std::min(1.0, C), allowed = std::sqrt(c.tol) * unit + 1e-12;
        double worst = 0.0;
        for (int i = 0; i < n; ++i) {
          const double a = fit.alpha[i];
          const double v = a == 0.0 ? g[i] : (a == C ? -g[i] : std::fabs(g[i]));
          worst = std::max(worst, v);
          CHECK_MSG(a >= 0.0 && a <= C, note + ": box");
        }
        CHECK_NEAR_MSG(std::max(worst, 0.0), 0.0, allowed, note + ": worst KKT violation");
        CHECK_NEAR_MSG(ref::gap(fit.field, K * y.cwiseProduct(fit.alpha)), 0.0, 1e-12,
                       note + ": field");
        // concavity: W* - W <= <g, a* - a> <= worst |a* - a|_1
        const ref::AdatronOptimum best = ref::adatron_brute_force(K, y, C);
        const double shortfall = best.objective - fit.objective;
        CHECK_MSG(
            shortfall >= -1e-12 * (1.0 + best.objective) &&
                shortfall <= std::max(worst, 0.0) * (best.alpha - fit.alpha).cwiseAbs().sum() +
                                 1e-12 * (1.0 + best.objective),
            note + ": W " + show(fit.objective) + " vs maximum " + show(best.objective));
        CHECK_NEAR_MSG(fit.objective,
                       ref::adatron_objective(y.asDiagonal() * K * y.asDiagonal(), fit.alpha),
                       1e-12 * (1.0 + std::fabs(fit.objective)), note + ": reported W");
      }
    }
  }
}

TEST_CASE("adatron: a warm start reaches the same solution; C < 1 is judged in units of C") {
  ref::Random rng(5);
  const int n = 30;
  const MatrixXd x = rng.uniform_matrix(n, 2, -2.0, 2.0);
  VectorXd y(n);
  for (int i = 0; i < n; ++i) y[i] = x(i, 0) * x(i, 1) > 0.0 ? 1.0 : -1.0;
  MatrixXd K = gpsvm::kernel_matrix(gpsvm::Kernel::rbf(0.8), x);
  K.diagonal().array() += 0.1;
  const gpsvm::AdatronControl c = adatron_control(2.0, 1e-22);
  const gpsvm::AdatronResult cold = gpsvm::adatron_fit(K, y, c);
  const gpsvm::AdatronResult warm = gpsvm::adatron_fit(K, y, c, cold.alpha * 0.9);
  CHECK(cold.status.converged && warm.status.converged);
  CHECK_NEAR(ref::gap(warm.alpha, cold.alpha), 0.0, 1e-9);
  // with C = 1e-6 every alpha belongs at C (the margin cannot be met); an
  // absolute test on alpha^2 would accept alpha = 0 at once
  const gpsvm::AdatronResult tiny = gpsvm::adatron_fit(K, y, adatron_control(1e-6, 1e-10));
  CHECK(tiny.status.converged && tiny.alpha.minCoeff() == 1e-6);
  CHECK_THROWS(gpsvm::adatron_fit(K, y, c, VectorXd::Zero(3)), std::invalid_argument);
  VectorXd bad = y;
  bad[0] = 0.5;
  CHECK_THROWS(gpsvm::adatron_fit(K, bad, c), std::invalid_argument);
}

// ---- SMO on the adatron's dual, and the naive mean field without the Gram matrix

TEST_CASE("SMO for the classifier: the brute-force maximum of W, twins shared, a warm start") {
  for (std::uint32_t seed : {1u, 2u, 3u}) {
    ref::Random rng(seed);
    const int n = 7;
    MatrixXd x = rng.uniform_matrix(n, 2, -2.0, 2.0);
    x.row(6) = x.row(2);  // a twin
    VectorXd y(n);
    for (int i = 0; i < n; ++i)
      y[i] = (x(i, 0) + 0.5 * x(i, 1) + 0.4 * rng.normal() > 0.0) ? 1.0 : -1.0;
    y[0] = 1.0;
    y[1] = -1.0;
    y[6] = y[2];
    for (double noise : {0.0, 0.3}) {
      MatrixXd K = gpsvm::kernel_matrix(gpsvm::Kernel::rbf(1.0), x);
      K.diagonal().array() += noise;
      for (double C : {0.3, 5.0, std::numeric_limits<double>::infinity()}) {
        const std::string note =
            "seed " + std::to_string(seed) + ", noise " + show(noise) + ", C = " + show(C);
        const gpsvm::SvcControl c = fixture::svc_control(C, noise, 1e-22);
        const gpsvm::SvcResult fit = gpsvm::svc_smo_solve(gpsvm::Kernel::rbf(1.0), x, y, c);
        const ref::AdatronOptimum best = ref::adatron_brute_force(K, y, C);
        CHECK_MSG(fit.status.converged, note);
        CHECK_NEAR_MSG(fit.objective, best.objective, 1e-9 * (1.0 + std::fabs(best.objective)),
                       note + ": W");
        CHECK_NEAR_MSG(ref::gap(fit.field, K * y.cwiseProduct(fit.alpha)), 0.0, 1e-12,
                       note + ": field");
        CHECK_MSG(fit.alpha.minCoeff() >= 0.0 && fit.alpha.maxCoeff() <= C, note + ": box");
        // without noise the twins' split is set equal; with noise the optimum
        // is unique and has them equal, reached to the solver's tolerance
        CHECK_NEAR_MSG(fit.alpha[6] - fit.alpha[2], 0.0, noise == 0.0 ? 1e-12 : 1e-9,
                       note + ": twins");
        const gpsvm::SvcResult warm =
            gpsvm::svc_smo_solve(gpsvm::Kernel::rbf(1.0), x, y, c, fit.alpha * 0.5);
        CHECK_NEAR_MSG(warm.objective, fit.objective, 1e-9 * (1.0 + std::fabs(fit.objective)),
                       note + ": warm start");
      }
    }
  }
}

TEST_CASE("naive mean field: the Newton solver reaches Algorithm 17.1's fixed point") {
  ref::Random rng(11);
  const int n = 60;
  const MatrixXd x = rng.uniform_matrix(n, 2, -2.0, 2.0);
  VectorXd y(n);
  for (int i = 0; i < n; ++i) y[i] = x(i, 0) + 0.3 * rng.normal() > 0.0 ? 1.0 : -1.0;
  gpsvm::Kernel kernel = gpsvm::Kernel::rbf(1.2);
  kernel.constant = 0.5;
  for (double kappa : {0.0, 0.05}) {
    for (double cache_mb : {100.0, 0.01}) {  // cached columns, and blocked products
      const std::string note = "kappa " + show(kappa) + ", cache " + show(cache_mb);
      MatrixXd K = gpsvm::kernel_matrix(kernel, x);
      K.diagonal().array() += 0.4;
      const gpsvm::NaiveMfResult paper =
          gpsvm::naive_mf_fit(K, y, fixture::naive_mf_control(kappa, 1e-26));
      const gpsvm::NaiveMfResult fast = gpsvm::naive_mf_solve(
          kernel, x, y, fixture::naive_mf_newton_control(kappa, 0.4, 1e-26, cache_mb));
      CHECK_MSG(paper.status.converged && fast.status.converged, note);
      CHECK_NEAR_MSG(ref::gap(fast.alpha, paper.alpha), 0.0, 1e-11, note + ": alpha");
      CHECK_NEAR_MSG(ref::gap(fast.field, K * y.cwiseProduct(fast.alpha)), 0.0, 1e-11,
                     note + ": field");
    }
  }
  // a given Jacobian factor (the full data's, without one row, as the exact
  // leave-one-out refits use it) changes the path, not the fixed point
  {
    const auto ctl = fixture::naive_mf_newton_control(0.0, 0.4, 1e-26, 100.0);
    const MatrixXd full_factor = gpsvm::naive_mf_jacobian_factor(gpsvm::KernelEvaluator(kernel, x), {});
    const MatrixXd x_i = gpsvm::detail::drop_row(x, 7);
    VectorXd y_i(n - 1);
    y_i << y.head(7), y.tail(n - 8);
    const MatrixXd factor_i = gpsvm::detail::drop_row(full_factor, 7);
    const gpsvm::NaiveMfResult own = gpsvm::naive_mf_solve(kernel, x_i, y_i, ctl);
    const gpsvm::NaiveMfResult given =
        gpsvm::naive_mf_solve(kernel, x_i, y_i, ctl, VectorXd(), {}, &factor_i);
    CHECK(own.status.converged && given.status.converged);
    CHECK_NEAR(ref::gap(own.alpha, given.alpha), 0.0, 1e-11);
    bool threw = false;
    try {
      gpsvm::naive_mf_solve(kernel, x_i, y_i, ctl, VectorXd(), {}, &full_factor);
    } catch (const std::invalid_argument&) {
      threw = true;
    }
    CHECK(threw);
  }
  // the blocked product against the dense one, n not a multiple of the block
  const MatrixXd xb = rng.uniform_matrix(300, 3, -1.0, 1.0);
  const gpsvm::KernelEvaluator ev(kernel, xb);
  const VectorXd v = rng.uniform_matrix(300, 1, -1.0, 1.0).col(0);
  VectorXd kv;
  ev.multiply(v, kv);
  CHECK_NEAR(ref::gap(kv, gpsvm::kernel_matrix(kernel, xb) * v), 0.0, 1e-12);
}

TEST_CASE("svr_fit: the polished optimum from a loose SMO split satisfies the KKT conditions to rounding") {
  // at tolerance 1e-2 the SMO's split is wrong in places: the active-set
  // steps must move points between X_0, X_C and the margin
  for (bool bias : {false, true}) {
    for (double C : {0.5, 20.0}) {
      const Problem p = problem(80, 1, 0.6, 31);
      const gpsvm::SvrControl loose = svr_control(C, 0.05, bias, 1e-2);
      gpsvm::SvrResult fit = gpsvm::svr_fit(gpsvm::Kernel::rbf(0.6), p.x, p.y, loose, 1e-8);
      const std::string note = "C = " + show(C) + (bias ? ", bias" : "");
      CHECK_MSG(fit.polished, note);
      CHECK_MSG(fit.status.tol == loose.tol && fit.status.change < 1e-9, note);
      gpsvm::SvrControl strict = loose;
      strict.tol = 1e-9;
      fit.status.tol = strict.tol;
      check_svr_kkt(p.K, p.y, fit, strict, note + ", polished");
      // the same optimum as the SMO run to a tight tolerance
      const gpsvm::SvrResult tight =
          gpsvm::svr_solve(gpsvm::Kernel::rbf(0.6), p.x, p.y, svr_control(C, 0.05, bias, 1e-12));
      CHECK_NEAR_MSG(ref::gap(fit.beta, tight.beta), 0.0, 1e-8 * C, note);
      // its split: the bound points exactly at +-C
      const std::vector<int> split = gpsvm::svr_partition(fit.beta, VectorXd::Constant(80, C), 1e-8);
      for (Eigen::Index i = 0; i < 80; ++i)
        if (split[static_cast<size_t>(i)] == gpsvm::kSvrBound) CHECK(std::fabs(fit.beta[i]) == C);
    }
  }
}

}  // namespace gpsvm_tests_svm
