// The relevance vector machines (rvm_posterior.hpp, srvm.hpp, rvm_fast.hpp)
// against dense direct formulas on small problems, written from the model
//   y = H w + e, e ~ N(0, sigma2 I), w ~ N(0, (lambda P + A)^-1), H = [1 K]:
//   Sigma = (lambda P + A + H'H / sigma2)^-1, mu = Sigma H'y / sigma2,
//   log p(y) = log N(y; 0, sigma2 I + H (lambda P + A)^-1 H'),
// with plain matrix inverses, which the code avoids (it works with scaled
// Cholesky factors and trace identities).
#include <algorithm>
#include <cmath>
#include <functional>
#include <gpsvm/kernels.hpp>
#include <gpsvm/rvm_fast.hpp>
#include <gpsvm/rvm_posterior.hpp>
#include <gpsvm/srvm.hpp>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "check.hpp"
#include "fixtures.hpp"
#include "reference.hpp"

namespace gpsvm_tests_rvm {

namespace {

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;
using gpsvm_test::show;

const double kInf = std::numeric_limits<double>::infinity();

// A noisy sinc on [-8, 8].
using Data = fixture::Sample;

Data sinc(int n, std::uint32_t seed, double noise = 0.1) {
  return fixture::sample(n, 1, -8.0, 8.0, seed, [noise](const auto& x, ref::Random& rng) {
    const double u = x(0);
    return (u == 0.0 ? 1.0 : std::sin(u) / u) + noise * rng.normal();
  });
}

MatrixXd design(const gpsvm::Kernel& kernel, const MatrixXd& x) {
  const Index n = x.rows();
  MatrixXd h(n, n + 1);
  h.col(0).setOnes();
  h.rightCols(n) = gpsvm::kernel_matrix(kernel, x);
  return h;
}

MatrixXd columns(const MatrixXd& m, const std::vector<Index>& idx) {
  MatrixXd out(m.rows(), static_cast<Index>(idx.size()));
  for (size_t j = 0; j < idx.size(); ++j) out.col(static_cast<Index>(j)) = m.col(idx[j]);
  return out;
}

MatrixXd block(const MatrixXd& m, const std::vector<Index>& idx) {
  const Index k = static_cast<Index>(idx.size());
  MatrixXd out(k, k);
  for (Index a = 0; a < k; ++a)
    for (Index b = 0; b < k; ++b) out(a, b) = m(idx[a], idx[b]);
  return out;
}

// The dense posterior and evidence of the active columns h at alpha,
// lambda, sigma2 (p: the penalty on those columns, or empty).
struct Dense {
  MatrixXd S;      // (lambda P + A)^-1
  MatrixXd Sigma;  // posterior covariance
  VectorXd mu;
  double log_lik;
};

Dense dense(const MatrixXd& h, const VectorXd& y, const VectorXd& alpha, double lambda,
            const MatrixXd& p, double sigma2) {
  MatrixXd prior = MatrixXd(alpha.asDiagonal());
  if (p.size() > 0) prior += lambda * p;
  Dense out;
  out.S = prior.inverse();
  out.Sigma = (prior + h.transpose() * h / sigma2).inverse();
  out.mu = out.Sigma * h.transpose() * y / sigma2;
  MatrixXd cov = h * out.S * h.transpose();
  cov.diagonal().array() += sigma2;
  out.log_lik = ref::log_gauss(y, cov);
  return out;
}

// The root mean square the fitters divide the targets by: their alpha
// thresholds hold for the scaled targets.
double rms(const VectorXd& y) { return std::sqrt(y.squaredNorm() / static_cast<double>(y.size())); }

double max_log_ratio(const VectorXd& a, const VectorXd& b) {
  return (a.array() / b.array()).log().abs().maxCoeff();
}

// The sRVM's problem in the tests: a noisy sinc, a Gaussian kernel of the
// given width on it, and the roughness penalty on an evenly spaced grid
// over [-half_range, half_range].
struct SincProblem {
  Data d;
  gpsvm::Kernel kernel;
  gpsvm::KernelEvaluator ev;
  MatrixXd z;
  gpsvm::RoughnessPenalty pen;
};

SincProblem sinc_problem(int n, std::uint32_t seed, double width, int grid_points,
                         double half_range, gpsvm::RoughnessPenalty pen) {
  Data d = sinc(n, seed);
  const gpsvm::Kernel kernel = gpsvm::Kernel::rbf(width);
  gpsvm::KernelEvaluator ev(kernel, d.x);
  return {std::move(d), kernel, std::move(ev), fixture::grid(grid_points, -half_range, half_range),
          std::move(pen)};
}

}  // namespace

TEST_CASE("RVM posterior: mean, covariance, evidence and penalty terms against dense inverses") {
  const auto [d, kernel, ev, z, pen] = sinc_problem(10, 1, 1.5, 15, 8.0, {{2}, {1.0}});
  const MatrixXd h = design(kernel, d.x);
  const MatrixXd lh = gpsvm::roughness_design(ev, z, pen);
  const MatrixXd p_all = lh.transpose() * lh;
  const std::vector<Index> active = {0, 2, 3, 5, 7, 8, 10};
  const MatrixXd ha = columns(h, active), pa = block(p_all, active);
  ref::Random rng(2);
  struct Setting {
    double alpha_lo, alpha_hi, lambda;
  };
  for (const Setting s : {Setting{1e-3, 1e3, 0.0}, Setting{1e-3, 1e3, 0.7}, Setting{1e-8, 1e8, 0.0},
                          Setting{0.1, 10.0, 50.0}}) {
    VectorXd alpha(static_cast<Index>(active.size()));
    for (Index i = 0; i < alpha.size(); ++i)
      alpha[i] = std::exp(rng.uniform(std::log(s.alpha_lo), std::log(s.alpha_hi)));
    const double sigma2 = 0.02;
    const bool penalised = s.lambda > 0.0;
    const gpsvm::rvm_detail::Posterior post = gpsvm::rvm_detail::posterior(
        ha.transpose() * ha, ha.transpose() * d.y, &pa, ha, d.y, alpha, s.lambda, 1.0 / sigma2);
    const Dense ref = dense(ha, d.y, alpha, s.lambda, penalised ? pa : MatrixXd(), sigma2);
    const std::string note =
        "alpha in [" + show(s.alpha_lo) + ", " + show(s.alpha_hi) + "], lambda = " + show(s.lambda);
    // the dense inverse of a matrix with condition number up to ~1e16 keeps
    // ~1e-16 cond digits; the settings keep it below 1e9 where compared tightly
    const double tol = s.alpha_hi > 1e5 ? 1e-6 : 1e-9;
    CHECK_NEAR_MSG(ref::gap(post.mu, ref.mu), 0.0, tol, note + ": mean");
    const MatrixXd sigma = gpsvm::rvm_detail::sigma_from(post);
    CHECK_NEAR_MSG((sigma - ref.Sigma).cwiseAbs().maxCoeff(), 0.0,
                   tol * ref.Sigma.cwiseAbs().maxCoeff(), note + ": covariance");
    CHECK_NEAR_MSG(post.log_lik, ref.log_lik, tol * (1.0 + std::fabs(ref.log_lik)),
                   note + ": evidence");
    CHECK_NEAR_MSG(post.rss, (d.y - ha * ref.mu).squaredNorm(), tol * d.y.squaredNorm(),
                   note + ": rss");
    CHECK_NEAR_MSG(post.pen, ref.mu.dot(pa * ref.mu), tol * (1.0 + std::fabs(post.pen)),
                   note + ": mu'P mu");
    if (penalised)
      CHECK_NEAR_MSG(post.trace_sigma_p, (ref.Sigma * pa).trace(), tol * (1.0 + post.trace_sigma_p),
                     note + ": tr(Sigma P)");
  }
}

TEST_CASE("sRVM: the updates (7)-(9) against their dense direct formulas") {
  const auto [d, kernel, ev, z, pen] = sinc_problem(12, 3, 1.5, 20, 8.0, {{1, 2}, {0.5, 1.0}});
  namespace sd = gpsvm::srvm_detail;
  const sd::Problem pb = sd::make_problem(ev, d.y, z, pen);
  gpsvm::SrvmControl ctl = fixture::srvm_control(1e-8);
  ctl.min_alpha = 1e-12;
  ctl.prune_alpha = 1e12;
  ref::Random rng(4);
  for (double lambda : {0.0, 0.3, 20.0}) {
    for (bool fixed : {false, true}) {
      sd::State st;
      st.active = {0, 1, 3, 4, 6, 8, 9, 12};
      st.alpha.resize(static_cast<Index>(st.active.size()));
      for (Index i = 0; i < st.alpha.size(); ++i) st.alpha[i] = std::exp(rng.uniform(-2.0, 2.0));
      st.lambda = lambda;
      st.sigma2 = 0.05;
      ctl.lambda.reset();
      ctl.sigma2.reset();
      if (fixed) {
        ctl.lambda = lambda;
        ctl.sigma2 = 0.05;
      }
      const gpsvm::rvm_detail::Posterior post = sd::posterior_of(pb, st, false);
      VectorXd alpha_new;
      sd::State next;
      sd::update(post, st, ctl, ev.size(), alpha_new, next);
      // dense: S = (lambda P + A)^-1, Sigma = (S^-1 + H'H / sigma2)^-1
      const MatrixXd ha = columns(pb.h, st.active), pa = block(pb.p, st.active);
      const Dense ref = dense(ha, pb.y, st.alpha, lambda, pa, st.sigma2);
      const std::string note = "lambda = " + show(lambda) + (fixed ? ", fixed" : ", learned");
      // (7): alpha_i <- alpha_i (S_ii - Sigma_ii) / mu_i^2
      VectorXd want(st.alpha.size());
      for (Index i = 0; i < want.size(); ++i)
        want[i] = st.alpha[i] * (ref.S(i, i) - ref.Sigma(i, i)) / (ref.mu[i] * ref.mu[i]);
      CHECK_NEAR_MSG(max_log_ratio(alpha_new, want), 0.0, 1e-8, note + ": alpha (7)");
      // (8): lambda <- (tr(S lambda P) - tr(Sigma lambda P)) / mu'P mu
      const double lambda_want =
          lambda * ((ref.S * pa).trace() - (ref.Sigma * pa).trace()) / ref.mu.dot(pa * ref.mu);
      if (lambda > 0.0 && !fixed)
        CHECK_REL_MSG(next.lambda, lambda_want, 1e-8, note + ": lambda (8)");
      else
        CHECK_MSG(next.lambda == lambda, note + ": lambda kept");
      // (9): sigma2 <- |y - H mu|^2 / (N - tr(Sigma H'H / sigma2)), N the number of data
      const double dof =
          static_cast<double>(pb.y.size()) - (ref.Sigma * ha.transpose() * ha).trace() / st.sigma2;
      const double sigma2_want = (pb.y - ha * ref.mu).squaredNorm() / dof;
      if (!fixed)
        CHECK_REL_MSG(next.sigma2, sigma2_want, 1e-8, note + ": sigma2 (9)");
      else
        CHECK_MSG(next.sigma2 == st.sigma2, note + ": sigma2 kept");
    }
  }
}

// The posterior without its covariance whole (what the sRVM's iterations
// use): diag(B^-1) and tr(Sigma P) against the whole inverse's B^-1 and
// sum_ij Sigma_ij P_ij, with alphas from 1e-6 to 1e8 and lambdas from 1e-6
// to 1e3 (ill-conditioned prior precisions and posteriors); the trace to the
// rounding of the identity it comes from, about 1e-16 m tr(B^-1 Pi~) / lambda.
TEST_CASE("sRVM: the iterations' diagonal and trace without the whole inverse") {
  const auto [d, kernel, ev, z, pen] = sinc_problem(40, 7, 1.0, 60, 10.0, {{2}, {1.0}});
  namespace sd = gpsvm::srvm_detail;
  const sd::Problem pb = sd::make_problem(ev, d.y, z, pen);
  ref::Random rng(9);
  for (double lambda : {1e-6, 1e-2, 1.0, 1e3}) {
    sd::State st;
    for (Index j = 0; j < pb.h.cols(); ++j) st.active.push_back(j);
    st.alpha.resize(pb.h.cols());
    for (Index i = 0; i < st.alpha.size(); ++i)
      st.alpha[i] = std::pow(10.0, rng.uniform(-6.0, 8.0));
    st.lambda = lambda;
    st.sigma2 = 1e-3;
    const gpsvm::rvm_detail::Posterior lean = sd::posterior_of(pb, st, false);
    const gpsvm::rvm_detail::Posterior whole = sd::posterior_of(pb, st, true);
    const std::string note = "lambda = " + show(lambda);
    CHECK_MSG(lean.Binv.size() == 0, note + ": no whole inverse");
    const VectorXd want_diag = whole.Binv.diagonal();
    CHECK_NEAR_MSG(((lean.binv_diag - want_diag).array() / want_diag.array()).abs().maxCoeff(),
                   0.0, 1e-8, note + ": diag(B^-1)");
    const MatrixXd p = block(pb.p, st.active);
    const MatrixXd sigma = gpsvm::rvm_detail::sigma_from(whole);
    const double want_trace = (sigma.array() * p.array()).sum();
    const double trace_b_pi =
        (st.alpha.array() * lean.d.array().square() * lean.binv_diag.array()).sum() +
        lambda * lean.trace_sigma_p;
    const double rounding = 1e-13 * static_cast<double>(st.alpha.size()) * trace_b_pi / lambda;
    CHECK_NEAR_MSG(lean.trace_sigma_p, want_trace, 1e-8 * std::fabs(want_trace) + rounding,
                   note + ": tr(Sigma P)");
    CHECK_MSG(lean.log_lik == whole.log_lik && lean.mu == whole.mu, note + ": the rest unchanged");
  }
}

namespace {

using fixture::rvm_control;
using fixture::srvm_control;

const std::function<void()> kNoInterrupt = [] {};

}  // namespace

TEST_CASE("sRVM fit: a fixed point of (7)-(9), with the closed-form evidence, in the units of y") {
  const auto [d, kernel, ev, z, pen] = sinc_problem(25, 5, 1.6, 30, 8.0, {{2}, {1.0}});
  for (double scale : {1.0, 1e3}) {
    const VectorXd y = d.y * scale;
    const gpsvm::SrvmControl ctl = srvm_control(1e-7);
    const gpsvm::RvmResult r = gpsvm::srvm_fit(kernel, d.x, y, z, pen, ctl, kNoInterrupt);
    const std::string note = "y scaled by " + show(scale);
    CHECK_MSG(r.status.converged,
              note + ": " + std::to_string(r.status.iterations) + " iterations");
    const MatrixXd ha = columns(design(kernel, d.x), r.active);
    const MatrixXd lh = gpsvm::roughness_design(ev, z, pen);
    const MatrixXd pa = block(lh.transpose() * lh, r.active);
    const Dense ref = dense(ha, y, r.alpha, r.lambda, pa, r.sigma2);
    CHECK_NEAR_MSG(r.log_lik, ref.log_lik, 1e-8 * (1.0 + std::fabs(ref.log_lik)),
                   note + ": evidence");
    CHECK_NEAR_MSG(ref::gap(r.mu, ref.mu), 0.0, 1e-7, note + ": mean");
    CHECK_NEAR_MSG((r.Sigma - ref.Sigma).cwiseAbs().maxCoeff(), 0.0,
                   1e-7 * ref.Sigma.cwiseAbs().maxCoeff(), note + ": covariance");
    // one more round of (7)-(9) moves nothing by more than the last step did
    const double step = std::max(r.status.change, 1e-12);
    for (Index i = 0; i < r.alpha.size(); ++i) {
      const double a = r.alpha[i] * (ref.S(i, i) - ref.Sigma(i, i)) / (ref.mu[i] * ref.mu[i]);
      if (r.alpha[i] <= ctl.min_alpha / (rms(y) * rms(y)) * 1.0000001)
        continue;  // held at the floor
      CHECK_NEAR_MSG(std::log(a / r.alpha[i]), 0.0, 2.0 * step,
                     note + ": alpha " + std::to_string(i));
    }
    const double lambda =
        r.lambda * ((ref.S * pa).trace() - (ref.Sigma * pa).trace()) / ref.mu.dot(pa * ref.mu);
    CHECK_NEAR_MSG(std::log(lambda / r.lambda), 0.0, 2.0 * step, note + ": lambda");
    const double dof =
        static_cast<double>(y.size()) - (ref.Sigma * ha.transpose() * ha).trace() / r.sigma2;
    CHECK_NEAR_MSG(std::log((y - ha * ref.mu).squaredNorm() / dof / r.sigma2), 0.0, 2.0 * step,
                   note + ": sigma2");
  }
}

TEST_CASE("fast RVM: each candidate step is the dense single-alpha optimum s^2 / (q^2 - s)") {
  const Data d = sinc(12, 7);
  const gpsvm::Kernel kernel = gpsvm::Kernel::rbf(1.5);
  const MatrixXd h = design(kernel, d.x);
  const double sigma2 = 0.02, prune = 1e12;
  namespace fd = gpsvm::rvm_fast_detail;
  struct Start {
    std::vector<Index> active;
    std::vector<double> alpha;
  };
  for (const Start& start : {Start{{0}, {5.0}}, Start{{0, 3, 7}, {2.0, 0.5, 40.0}},
                             Start{{0, 1, 2, 5, 9, 12}, {0.1, 1e-3, 3.0, 0.2, 1e4, 0.05}}}) {
    fd::ActiveSet set(h);
    for (size_t k = 0; k < start.active.size(); ++k) set.add(start.active[k], start.alpha[k]);
    // the marginal covariance C = sigma2 I + sum_active phi phi' / alpha
    MatrixXd C = sigma2 * MatrixXd::Identity(h.rows(), h.rows());
    for (size_t k = 0; k < start.active.size(); ++k)
      C += h.col(start.active[k]) * h.col(start.active[k]).transpose() / start.alpha[k];
    const MatrixXd Cinv = C.inverse();
    const VectorXd big_s = (h.transpose() * Cinv * h).diagonal();
    const VectorXd big_q = h.transpose() * Cinv * d.y;
    // the posterior of the kept weights, Sigma = (A + H_a' H_a / sigma2)^-1
    const Index m = static_cast<Index>(start.active.size());
    MatrixXd h_a(h.rows(), m);
    VectorXd a_diag(m);
    for (Index k = 0; k < m; ++k) {
      h_a.col(k) = h.col(start.active[static_cast<size_t>(k)]);
      a_diag[k] = start.alpha[static_cast<size_t>(k)];
    }
    const MatrixXd post_cov =
        (MatrixXd(a_diag.asDiagonal()) + h_a.transpose() * h_a / sigma2).inverse();
    const VectorXd post_mean = post_cov * h_a.transpose() * d.y / sigma2;
    const fd::Step step =
        fd::best_step(big_s, big_q, post_cov.diagonal(), post_mean, set, prune);
    // every column's best move, from C_-i alone
    const double l_now = ref::log_gauss(d.y, C);
    double best_gain = 0.0, best_alpha = 0.0;
    Index best_col = -1;
    for (Index i = 0; i < h.cols(); ++i) {
      const auto it = std::find(start.active.begin(), start.active.end(), i);
      const bool active = it != start.active.end();
      const VectorXd phi = h.col(i);
      MatrixXd c_minus = C;
      if (active)
        c_minus -=
            phi * phi.transpose() / start.alpha[static_cast<size_t>(it - start.active.begin())];
      const MatrixXd cm_inv = c_minus.inverse();
      const double s = phi.dot(cm_inv * phi), q = phi.dot(cm_inv * d.y);
      const auto l_at = [&](double a) {
        return std::isfinite(a) ? ref::log_gauss(d.y, c_minus + phi * phi.transpose() / a)
                                : ref::log_gauss(d.y, c_minus);
      };
      double a_opt = q * q > s ? s * s / (q * q - s) : kInf;
      if (!std::isfinite(a_opt) && i == 0) a_opt = prune;  // the bias stays, parked
      if (std::isfinite(a_opt) && q * q > s) {
        // the formula is the maximiser of L(alpha_i): L falls on both sides
        const double l_opt = l_at(a_opt);
        CHECK_MSG(l_at(a_opt * 1.01) < l_opt && l_at(a_opt / 1.01) < l_opt,
                  "column " + std::to_string(i) + ": s^2/(q^2 - s) maximises L");
      }
      if (!active && !std::isfinite(a_opt)) continue;
      const double gain = l_at(a_opt) - l_now;
      if (gain > best_gain) {
        best_gain = gain;
        best_col = i;
        best_alpha = a_opt;
      }
    }
    const std::string note = std::to_string(start.active.size()) + " active";
    CHECK_MSG(step.column == best_col,
              note + ": column " + std::to_string(step.column) + " vs " + std::to_string(best_col));
    // best_step's gain is on the scale of 2 L
    CHECK_NEAR_MSG(step.gain, 2.0 * best_gain, 1e-8 * (1.0 + 2.0 * best_gain), note + ": gain");
    if (std::isfinite(best_alpha))
      CHECK_REL_MSG(step.alpha, best_alpha, 1e-8, note + ": alpha");
    else
      CHECK_MSG(!std::isfinite(step.alpha), note + ": deletion");
  }
}

TEST_CASE("fast RVM: the rank-one updates of a step equal the dense posterior, S, Q and evidence") {
  // Between noise re-estimates the fitter moves Sigma, mu, S, Q and the
  // evidence by rank-one updates; after every kind of step they must equal
  // the dense formulas at the new alphas, with C = sigma2 I + sum phi phi' / alpha.
  const Data d = sinc(25, 11);
  const gpsvm::Kernel kernel = gpsvm::Kernel::rbf(1.2);
  const MatrixXd h = design(kernel, d.x);
  const VectorXd hty = h.transpose() * d.y;
  const VectorXd hh = h.colwise().squaredNorm().transpose();
  namespace fd = gpsvm::rvm_fast_detail;
  for (double sigma2 : {0.01, 3.0}) {
    fd::ActiveSet set(h);
    set.add(0, 0.5);
    fd::Moments mo = fd::moments_at(set, hty, hh, d.y, sigma2);
    const auto check_moments = [&](const std::string& what) {
      const std::vector<Index>& act = set.columns();
      const Dense ref = dense(columns(h, act), d.y, set.alpha(), 0.0, MatrixXd(), sigma2);
      MatrixXd C = sigma2 * MatrixXd::Identity(h.rows(), h.rows());
      for (size_t k = 0; k < act.size(); ++k)
        C += h.col(act[k]) * h.col(act[k]).transpose() / set.alpha()[static_cast<Index>(k)];
      const MatrixXd Cinv = C.inverse();
      const VectorXd big_s = (h.transpose() * Cinv * h).diagonal();
      const VectorXd big_q = h.transpose() * Cinv * d.y;
      const std::string note = what + ", sigma2 " + show(sigma2);
      const double s_scale = 1.0 + big_s.cwiseAbs().maxCoeff();
      CHECK_NEAR_MSG((mo.sigma - ref.Sigma).cwiseAbs().maxCoeff(), 0.0,
                     1e-9 * (1.0 + ref.Sigma.cwiseAbs().maxCoeff()),
                     note + ": Sigma");
      CHECK_NEAR_MSG(ref::gap(mo.mu, ref.mu), 0.0, 1e-9 * (1.0 + ref.mu.cwiseAbs().maxCoeff()),
                     note + ": mu");
      CHECK_NEAR_MSG(ref::gap(mo.big_s, big_s), 0.0, 1e-9 * s_scale, note + ": S");
      CHECK_NEAR_MSG(ref::gap(mo.big_q, big_q), 0.0, 1e-9 * (1.0 + big_q.cwiseAbs().maxCoeff()),
                     note + ": Q");
      CHECK_NEAR_MSG(mo.log_lik, ref.log_lik, 1e-8 * (1.0 + std::fabs(ref.log_lik)),
                     note + ": evidence");
    };
    // steps of every kind, each with its true gain (2 log L, from the dense
    // evidence) so that the tracked evidence can be checked too
    const auto dense_log_lik = [&](const fd::ActiveSet& at) {
      MatrixXd C = sigma2 * MatrixXd::Identity(h.rows(), h.rows());
      for (size_t k = 0; k < at.columns().size(); ++k)
        C += h.col(at.columns()[k]) * h.col(at.columns()[k]).transpose() /
             at.alpha()[static_cast<Index>(k)];
      return ref::log_gauss(d.y, C);
    };
    const auto step_to = [&](Index column, double alpha, const std::string& what) {
      fd::Step step;
      step.column = column;
      step.alpha = alpha;
      fd::ActiveSet after = set;
      fd::Moments scratch = mo;
      fd::apply(step, after, scratch);
      step.gain = 2.0 * (dense_log_lik(after) - dense_log_lik(set));
      fd::apply(step, set, mo);
      check_moments(what);
    };
    check_moments("the bias alone");
    step_to(4, 2.0, "add 4");
    step_to(17, 0.3, "add 17");
    step_to(9, 40.0, "add 9");
    step_to(4, 0.05, "re-estimate 4 down");
    step_to(17, 1e3, "re-estimate 17 up");
    step_to(4, kInf, "delete 4 (not last)");
    step_to(9, kInf, "delete 9 (last)");
    step_to(4, 1.0, "add 4 again");
    // and the steps best_step chooses, as the fitter takes them
    for (int it = 0; it < 12; ++it) {
      const fd::Step step =
          fd::best_step(mo.big_s, mo.big_q, mo.sigma.diagonal(), mo.mu, set, 1e12);
      if (step.column < 0) break;
      step_to(step.column, step.alpha, "best step " + std::to_string(it));
    }
  }
}

TEST_CASE(
    "fast RVM fit: every alpha at its single-alpha optimum, the noise at its update, the "
    "closed-form evidence") {
  const Data d = sinc(30, 9);
  const gpsvm::Kernel kernel = gpsvm::Kernel::rbf(1.6);
  const MatrixXd h = design(kernel, d.x);
  for (double scale : {1.0, 1e-3}) {
    const VectorXd y = d.y * scale;
    const gpsvm::RvmControl ctl = rvm_control(1e-8);
    const gpsvm::RvmResult r = gpsvm::rvm_fast_fit(kernel, d.x, y, ctl, kNoInterrupt);
    const std::string note = "y scaled by " + show(scale);
    CHECK_MSG(r.status.converged,
              note + ": " + std::to_string(r.status.iterations) + " iterations");
    CHECK_MSG(r.active.size() < 12 && r.active[0] == 0, note + ": sparse, with the bias");
    MatrixXd C = r.sigma2 * MatrixXd::Identity(h.rows(), h.rows());
    for (size_t k = 0; k < r.active.size(); ++k)
      C += h.col(r.active[k]) * h.col(r.active[k]).transpose() / r.alpha[static_cast<Index>(k)];
    CHECK_NEAR_MSG(r.log_lik, ref::log_gauss(y, C), 1e-8 * (1.0 + std::fabs(r.log_lik)),
                   note + ": evidence");
    const MatrixXd ha = columns(h, r.active);
    const Dense ref = dense(ha, y, r.alpha, 0.0, MatrixXd(), r.sigma2);
    CHECK_NEAR_MSG(ref::gap(r.mu, ref.mu), 0.0, 1e-7, note + ": mean");
    const MatrixXd Cinv = C.inverse();
    for (Index i = 0; i < h.cols(); ++i) {
      const auto it = std::find(r.active.begin(), r.active.end(), i);
      const VectorXd phi = h.col(i);
      MatrixXd c_minus = C;
      double a = kInf;
      if (it != r.active.end()) {
        a = r.alpha[static_cast<Index>(it - r.active.begin())];
        c_minus -= phi * phi.transpose() / a;
      }
      const MatrixXd cm_inv = it != r.active.end() ? MatrixXd(c_minus.inverse()) : Cinv;
      const double s = phi.dot(cm_inv * phi), q = phi.dot(cm_inv * y);
      const std::string col = note + ", column " + std::to_string(i);
      if (it != r.active.end()) {
        if (i == 0 && !(q * q > s)) continue;  // the bias, parked at the threshold
        CHECK_MSG(q * q > s, col + ": relevant");
        CHECK_NEAR_MSG(std::log(s * s / (q * q - s) / a), 0.0, 1e-6,
                       col + ": alpha at its optimum");
      } else {
        // absent: adding it cannot raise the evidence (or only past the threshold)
        const bool useless =
            q * q <= s || s * s / (q * q - s) > ctl.prune_alpha / (rms(y) * rms(y));
        CHECK_MSG(useless, col + ": stays out");
      }
    }
    // sigma2 = |y - H mu|^2 / (N - sum gamma), gamma_i = 1 - alpha_i Sigma_ii
    double gamma = 0.0;
    for (Index k = 0; k < r.alpha.size(); ++k) gamma += 1.0 - r.alpha[k] * ref.Sigma(k, k);
    CHECK_NEAR_MSG(std::log((y - ha * ref.mu).squaredNorm() /
                            (static_cast<double>(y.size()) - gamma) / r.sigma2),
                   0.0, 1e-6, note + ": sigma2");
  }
}

TEST_CASE("RVM fitters: constant targets, one point, duplicates, and the interrupt callback") {
  const gpsvm::Kernel kernel = gpsvm::Kernel::rbf(1.0);
  MatrixXd x(6, 1);
  x << 0, 1, 2, 3, 4, 5;
  // constant targets: the bias alone explains them
  const gpsvm::RvmResult c =
      gpsvm::rvm_fast_fit(kernel, x, VectorXd::Constant(6, 2.5), rvm_control(1e-8), kNoInterrupt);
  CHECK(c.active.size() == 1 && c.active[0] == 0);
  CHECK_NEAR(c.mu[0], 2.5, 1e-3);
  // one point and duplicated rows run and give finite results
  const MatrixXd one = MatrixXd::Constant(1, 1, 0.3);
  const gpsvm::RvmResult r1 =
      gpsvm::rvm_fast_fit(kernel, one, VectorXd::Constant(1, 1.0), rvm_control(1e-8), kNoInterrupt);
  CHECK(std::isfinite(r1.log_lik) && r1.mu.allFinite());
  MatrixXd dup(8, 1);
  dup << 0, 0, 1, 1, 2, 2, 3, 3;
  VectorXd ydup(8);
  ydup << 0.1, 0.2, 0.9, 1.1, 0.1, 0.0, -0.5, -0.4;
  const gpsvm::RvmResult rd =
      gpsvm::rvm_fast_fit(kernel, dup, ydup, rvm_control(1e-8), kNoInterrupt);
  CHECK(std::isfinite(rd.log_lik) && rd.mu.allFinite() && rd.sigma2 > 0.0);
  const gpsvm::RoughnessPenalty pen{{2}, {1.0}};
  const gpsvm::RvmResult sd =
      gpsvm::srvm_fit(kernel, dup, ydup, dup, pen, srvm_control(1e-6), kNoInterrupt);
  CHECK(std::isfinite(sd.log_lik) && sd.mu.allFinite() && sd.sigma2 > 0.0);
  // the callback is called (at most every kInterruptPeriod, see
  // test_interrupt.cpp); an empty one is allowed
  int calls = 0;
  const gpsvm::RvmResult counted =
      gpsvm::rvm_fast_fit(kernel, x, ydup.head(6), rvm_control(1e-8), [&calls] { ++calls; });
  CHECK(calls >= 1 && std::isfinite(counted.log_lik));
  CHECK(std::isfinite(
      gpsvm::rvm_fast_fit(kernel, x, ydup.head(6), rvm_control(1e-8), nullptr).log_lik));
  CHECK(std::isfinite(
      gpsvm::srvm_fit(kernel, x, ydup.head(6), x, pen, srvm_control(1e-6), nullptr).log_lik));
}

TEST_CASE("fast RVM on candidate centres: the design's columns, and every row as candidates") {
  const gpsvm::Kernel kernel = gpsvm::Kernel::rbf(0.9);
  MatrixXd x(7, 1);
  x << -2.0, -1.1, 0.0, 0.4, 1.3, 2.2, 3.0;
  VectorXd y(7);
  y << 0.2, 0.8, 1.0, 0.9, 0.3, -0.4, -0.2;
  const gpsvm::KernelEvaluator ev(kernel, x);
  const std::vector<Eigen::Index> centres{5, 1, 3};
  const MatrixXd h = gpsvm::rvm_detail::design(ev, centres);
  const MatrixXd full = design(kernel, x);
  CHECK(h.rows() == 7 && h.cols() == 4);
  for (Eigen::Index i = 0; i < 7; ++i) {
    CHECK_NEAR(h(i, 0), 1.0, 0.0);
    for (size_t c = 0; c < centres.size(); ++c)
      CHECK_NEAR(h(i, static_cast<Eigen::Index>(c) + 1), full(i, centres[c] + 1), 1e-15);
  }
  // every row, in order, as candidates is the fit without candidates
  std::vector<Eigen::Index> all(7);
  for (Eigen::Index i = 0; i < 7; ++i) all[static_cast<size_t>(i)] = i;
  const gpsvm::RvmResult a = gpsvm::rvm_fast_fit(kernel, x, y, rvm_control(1e-8), kNoInterrupt);
  const gpsvm::RvmResult b =
      gpsvm::rvm_fast_fit(kernel, x, y, rvm_control(1e-8), kNoInterrupt, &all);
  CHECK(a.active == b.active);
  CHECK_NEAR((a.mu - b.mu).cwiseAbs().maxCoeff(), 0.0, 0.0);
  // candidates out of order: the active set is reported as training rows,
  // 1-based (0 the bias), increasing
  const gpsvm::RvmResult c =
      gpsvm::rvm_fast_fit(kernel, x, y, rvm_control(1e-8), kNoInterrupt, &centres);
  CHECK(std::is_sorted(c.active.begin(), c.active.end()));
  for (Eigen::Index j : c.active) CHECK(j == 0 || j == 6 || j == 2 || j == 4);
  const std::vector<Eigen::Index> outside{7};
  bool threw = false;
  try {
    gpsvm::rvm_detail::design(ev, outside);
  } catch (const std::invalid_argument&) {
    threw = true;
  }
  CHECK(threw);
}

TEST_CASE("sRVM penalty design on several inputs: every coordinate's derivatives, stacked") {
  // L H for a penalty of orders 0, 1 and 2 in 3 input coordinates, against
  // the cross matrices of each coordinate (one kernel evaluation per entry)
  ref::Random rng(31);
  const MatrixXd x = rng.uniform_matrix(8, 3, -2.0, 2.0), z = rng.uniform_matrix(5, 3, -2.0, 2.0);
  const gpsvm::RoughnessPenalty pen{{0, 1, 2}, {0.2, 0.5, 1.0}};
  for (const gpsvm::Kernel& kernel :
       {gpsvm::Kernel::rbf(1.3), gpsvm::Kernel::polynomial(3, 0.5, 1.0)}) {
    const gpsvm::KernelEvaluator ev(kernel, x);
    MatrixXd expected = MatrixXd::Zero(15, 9);
    for (Eigen::Index c = 0; c < 3; ++c) {
      for (size_t k = 0; k < 3; ++k) {
        expected.block(5 * c, 1, 5, 8) += pen.weights[k] * ev.cross(z, pen.orders[k], c);
        if (pen.orders[k] == 0) expected.block(5 * c, 0, 5, 1).array() += pen.weights[k];
      }
    }
    CHECK_NEAR((gpsvm::roughness_design(ev, z, pen) - expected).cwiseAbs().maxCoeff(), 0.0, 0.0);
  }
}

TEST_CASE("sRVM on candidate centres: the blocked penalty Gram, every row, and a subset") {
  // more penalty points than one block (1024) of roughness_gram()
  const auto [d, kernel, ev, z, pen] = sinc_problem(12, 7, 1.6, 2500, 9.0, {{1, 2}, {0.5, 1.0}});
  const MatrixXd lh = gpsvm::roughness_design(ev, z, pen);
  const MatrixXd direct = lh.transpose() * lh;
  CHECK_NEAR((gpsvm::roughness_gram(ev, z, pen) - direct).cwiseAbs().maxCoeff(), 0.0,
             1e-12 * direct.cwiseAbs().maxCoeff());
  // every row, in order, as candidates is the fit without candidates
  const MatrixXd zf = fixture::grid(30, -8.0, 8.0);
  std::vector<Eigen::Index> all(12);
  for (Eigen::Index i = 0; i < 12; ++i) all[static_cast<size_t>(i)] = i;
  const gpsvm::SrvmControl ctl = srvm_control(1e-7);
  const gpsvm::RvmResult a = gpsvm::srvm_fit(kernel, d.x, d.y, zf, pen, ctl, kNoInterrupt);
  const gpsvm::RvmResult b = gpsvm::srvm_fit(kernel, d.x, d.y, zf, pen, ctl, kNoInterrupt, &all);
  CHECK(a.active == b.active);
  CHECK_NEAR(ref::gap(a.mu, b.mu), 0.0, 1e-10);
  CHECK_NEAR(a.log_lik, b.log_lik, 1e-10 * std::fabs(a.log_lik));
  // a subset: the evidence is the closed form on the centres' columns, with
  // the penalty of the centres' basis functions; labels are training rows
  const std::vector<Eigen::Index> centres{1, 4, 6, 9, 11};
  const gpsvm::RvmResult c = gpsvm::srvm_fit(kernel, d.x, d.y, zf, pen, ctl, kNoInterrupt, &centres);
  const MatrixXd full = design(kernel, d.x);
  const MatrixXd lh_full = gpsvm::roughness_design(ev, zf, pen);
  const MatrixXd p_full = lh_full.transpose() * lh_full;
  for (Eigen::Index j : c.active) CHECK(j == 0 || j == 2 || j == 5 || j == 7 || j == 10 || j == 12);
  const MatrixXd hc = columns(full, c.active);
  const MatrixXd pc = block(p_full, c.active);
  const Dense ref = dense(hc, d.y, c.alpha, c.lambda, pc, c.sigma2);
  CHECK_NEAR(c.log_lik, ref.log_lik, 1e-8 * (1.0 + std::fabs(ref.log_lik)));
  CHECK_NEAR(ref::gap(c.mu, ref.mu), 0.0, 1e-7);
}

TEST_CASE("GP kernel evidence: the dense Gaussian density at its (a, s2), no better point on a 2-D grid") {
  const Data d = sinc(30, 17, 0.2);
  const VectorXd yc = d.y.array() - d.y.mean();
  const double c0 = std::log(yc.squaredNorm() / 30.0);
  // the linear kernel on x and x^2 (its singular values), and two widths
  MatrixXd x2(30, 2);
  x2 << d.x, d.x.array().square().matrix();
  const std::vector<std::pair<gpsvm::Kernel, MatrixXd>> cases{
      {gpsvm::Kernel::rbf(0.7), d.x}, {gpsvm::Kernel::rbf(6.0), d.x},
      {gpsvm::Kernel::polynomial(1, 0.5, 0.0), x2}};
  for (const auto& [kernel, x] : cases) {
    const gpsvm::GpKernelEvidence got = gpsvm::gp_kernel_evidence(kernel, x, d.y, kNoInterrupt);
    const MatrixXd k = gpsvm::kernel_matrix(kernel, x);
    auto log_density = [&](double a, double s2) {
      MatrixXd cov = a * k;
      cov.diagonal().array() += s2;
      return ref::log_gauss(yc, cov);
    };
    CHECK_NEAR(got.log_evidence, log_density(got.amplitude, got.noise), 1e-9 * std::fabs(got.log_evidence));
    double best = -kInf;
    const double s_lo = c0 + std::log(1e-6), s_step = (5.0 - std::log(1e-6)) / 20.0;
    for (int i = 0; i <= 20; ++i)
      for (int j = 0; j <= 20; ++j)
        best = std::max(best, log_density(std::exp(c0 - 20.0 + 2.0 * i), std::exp(s_lo + j * s_step)));
    CHECK(best <= got.log_evidence + 1e-9 * std::fabs(got.log_evidence));
    CHECK(best > got.log_evidence - 1.0);
  }
}

}  // namespace gpsvm_tests_rvm
