// The smooth relevance vector machine of ter Borg and Rothkrantz (2005): the
// RVM's sparsity prior plus a roughness penalty lambda |L w|^2, with alpha,
// lambda and sigma2 by the type-II maximum likelihood updates (7)-(9) of the
// paper, started from all n + 1 basis functions.  The model and the
// posterior algebra are in rvm_posterior.hpp.
// Pure C++17 + Eigen: no R headers.
#ifndef GPSVM_SRVM_HPP
#define GPSVM_SRVM_HPP

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <stdexcept>
#include <vector>

#include "interrupt.hpp"
#include "kernels.hpp"
#include "rvm_posterior.hpp"

namespace gpsvm {

// L = sum_n weights[n] D^orders[n], in each input coordinate.
struct RoughnessPenalty {
  std::vector<int> orders;
  std::vector<double> weights;
};

// The smooth RVM's settings beyond the shared ones.
struct SrvmControl : RvmControl {
  double min_alpha = kUnset;     // floor of alpha (a weight left to the penalty alone)
  double alpha_init = kUnset;    // initial alpha (RMS-scaled y)
  double lambda_init = kUnset;   // initial lambda when it is learned, relative (see srvm_fit)
  std::optional<double> lambda;  // a fixed lambda in the units of y; empty: learn it
  std::optional<double> sigma2;  // a fixed noise variance in the units of y; empty: learn it

  // the RVM's shared fields and srvm()'s own (not the RVM's alone)
  template <class Self, class Visit>
  static void fields(Self& s, Visit&& v) {
    RvmControl::shared_fields(s, v);
    v("min_alpha", s.min_alpha,
      FieldRule{is_positive, "'{}' must be > 0 and below 'prune_alpha'", 0.0, kInf});
    v("alpha_init", s.alpha_init, rule::above_zero);
    v("lambda_init", s.lambda_init, rule::at_least_zero);
  }
};

// The roughness operator applied to the design: the rows of L H evaluated at
// the penalty points z (m x d), stacked over the input coordinates, as an
// (m d) x (n + 1) matrix whose first column is the bias column.  The
// Gaussian kernel's derivatives in every coordinate share its values
// (KernelEvaluator::rbf_cross), so d coordinates cost O(m n d) work, not
// O(m n d^2) (minutes on wide inputs); the interrupt
// is polled once per coordinate and per kernel column.
inline MatrixXd roughness_design(const KernelEvaluator& ev, const ConstMatrixRef& z,
                                 const RoughnessPenalty& pen,
                                 const std::function<void()>& interrupt = nullptr) {
  if (pen.orders.size() != pen.weights.size() || pen.orders.empty())
    throw std::invalid_argument("penalty 'orders' and 'weights' must have the same positive length");
  const Index m = z.rows(), n = ev.size(), dim = ev.dimension();
  MatrixXd out = MatrixXd::Zero(m * dim, n + 1);
  const bool rbf = ev.kernel().family == KernelFamily::rbf;
  MatrixXd values;
  if (rbf) values = ev.cross(z, 0, 0, interrupt).array() - ev.kernel().constant;
  InterruptPoll poll(interrupt);
  for (Index c = 0; c < dim; ++c) {
    poll();
    for (size_t k = 0; k < pen.orders.size(); ++k) {
      const int order = pen.orders[k];
      if (order < 0) throw std::invalid_argument("penalty orders must be >= 0");
      out.block(c * m, 1, m, n) += pen.weights[k] * (rbf ? ev.rbf_cross(z, values, order, c)
                                                         : ev.cross(z, order, c, interrupt));
      if (order == 0) out.block(c * m, 0, m, 1).array() += pen.weights[k];
    }
  }
  return out;
}

// P = (L H)'(L H) accumulated over blocks of penalty points, so that the
// (m d) x (n + 1) matrix L H is never held whole: with the training inputs as
// penalty points and 1000 centres it would take 8 n d (1000 + 1) bytes.  A
// block holds up to 1024 points and about 32 MB (one point at a time on wide
// inputs, where 1024 points would take tens of gigabytes).
inline MatrixXd roughness_gram(const KernelEvaluator& ev, const ConstMatrixRef& z,
                               const RoughnessPenalty& pen,
                               const std::function<void()>& interrupt = nullptr) {
  constexpr double kBlockBytes = 32.0 * 1048576.0;
  const double point_bytes = 8.0 * static_cast<double>(ev.dimension()) *
                             static_cast<double>(ev.size() + 1);
  const Index block = std::max<Index>(
      1, std::min<Index>(1024, static_cast<Index>(kBlockBytes / point_bytes)));
  MatrixXd p = MatrixXd::Zero(ev.size() + 1, ev.size() + 1);
  // (a plain loop, not blocks_in_rounds(): its blocks are bounded by memory
  // and add to one sum, and each block's design and product are split
  // between threads and poll the interrupt themselves)
  for (Index start = 0; start < z.rows(); start += block) {
    const Index rows = std::min(block, z.rows() - start);
    const MatrixXd lh = roughness_design(ev, z.middleRows(start, rows), pen, interrupt);
    p += crossprod(lh, interrupt);
  }
  return p;
}

namespace srvm_detail {

using namespace rvm_detail;

inline void check_control(const SrvmControl& c) {
  check_fields(c);
  if (!(c.min_alpha < c.prune_alpha))
    throw std::invalid_argument("'min_alpha' must be > 0 and below 'prune_alpha'");
  if (c.lambda && !(*c.lambda >= 0.0 && std::isfinite(*c.lambda)))
    throw std::invalid_argument("a fixed 'lambda' must be finite and >= 0");
  if (c.sigma2 && !(*c.sigma2 > 0.0 && std::isfinite(*c.sigma2)))
    throw std::invalid_argument("a fixed 'sigma2' must be finite and > 0");
}

// The data of one fit, on RMS-scaled targets: the design, its cross
// products with itself and y, and the penalty matrix P over all its columns
// (n + 1, or m + 1 on m candidate centres).
struct Problem {
  VectorXd y;
  double scale = 1.0;
  MatrixXd h, hth, p;
  VectorXd hty;
};

// The hyperparameters and the active set as the iteration goes.
struct State {
  std::vector<Index> active;
  VectorXd alpha;
  double lambda = 0.0;
  double sigma2 = 0.0;
};

// `centres` (rows of the training inputs, or nullptr for all) are the
// centres of the basis functions.
inline Problem make_problem(const KernelEvaluator& ev, const ConstVectorRef& y_in,
                            const ConstMatrixRef& penalty_points, const RoughnessPenalty& pen,
                            const std::vector<Index>* centres = nullptr,
                            const std::function<void()>& interrupt = nullptr) {
  Problem pb;
  pb.scale = rms(y_in);
  pb.y = y_in / pb.scale;
  pb.h = centres ? design(ev, *centres, interrupt) : design(ev, interrupt);
  pb.hth = crossprod(pb.h, interrupt);
  pb.hty = pb.h.transpose() * pb.y;
  if (centres) {
    // the penalty acts on the basis functions, i.e. on the centres' columns
    pb.p = roughness_gram(KernelEvaluator(ev.kernel(), ev.points(*centres)), penalty_points, pen,
                          interrupt);
  } else {
    pb.p = roughness_gram(ev, penalty_points, pen, interrupt);
  }
  return pb;
}

// Every basis function (the design's columns) at alpha_init.  A learned lambda starts at
// lambda_init * tr(A) / tr(P), i.e. lambda_init times the value that gives
// the two parts of the prior precision equal traces, whatever the scale of
// the penalty; a fixed lambda or sigma2 is given in the units of y.
inline State start(const Problem& pb, const SrvmControl& ctl) {
  const Index columns = pb.h.cols();
  State st;
  st.active.resize(static_cast<size_t>(columns));
  for (Index i = 0; i < columns; ++i) st.active[i] = i;
  st.alpha = VectorXd::Constant(columns, ctl.alpha_init);
  const double tr_p = pb.p.trace();
  if (ctl.lambda) {
    st.lambda = *ctl.lambda * pb.scale * pb.scale;  // the scaled targets' lambda
  } else if (ctl.lambda_init > 0.0 && tr_p > 0.0) {
    st.lambda = ctl.lambda_init * st.alpha.sum() / tr_p;
  }
  st.sigma2 = ctl.sigma2 ? std::max(*ctl.sigma2 / (pb.scale * pb.scale), ctl.min_sigma2)
                         : initial_noise(pb.y, ctl);
  return st;
}

// The posterior at the state's hyperparameters, on its active columns; its
// covariance whole only with `covariance` (the updates need a diagonal and
// a trace).
inline Posterior posterior_of(const Problem& pb, const State& st, bool covariance,
                              const std::function<void()>& interrupt = nullptr) {
  const MatrixXd hth = select(pb.hth, st.active);
  const VectorXd hty = select(pb.hty, st.active);
  const MatrixXd p = select(pb.p, st.active);
  const MatrixXd ha = select_cols(pb.h, st.active);
  return posterior(hth, hty, &p, ha, pb.y, st.alpha, st.lambda, 1.0 / st.sigma2, interrupt,
                   covariance);
}

// The updates (7)-(9) from one posterior: new alpha (in alpha_new), lambda
// and sigma2 (in `next`); returns the largest change of a kept log alpha, of
// log lambda and of log sigma2.
inline double update(const Posterior& post, const State& st, const SrvmControl& ctl, Index n,
                     VectorXd& alpha_new, State& next) {
  const Index m = static_cast<Index>(st.active.size());
  // gamma_i = alpha_i (S_ii - Sigma_ii) = alpha_i d_i^2 ([Pi~^-1]_ii - [B^-1]_ii) >= 0
  const VectorXd ad2 = (st.alpha.array() * post.d.array().square()).matrix();
  const VectorXd gamma =
      (ad2.array() * (post.pinv_diag - post.binv_diag).array()).cwiseMax(0.0).matrix();
  double change = 0.0;
  alpha_new.resize(m);
  for (Index i = 0; i < m; ++i) {
    const double mu2 = post.mu[i] * post.mu[i];
    double a = (mu2 > 0.0) ? gamma[i] / mu2 : std::numeric_limits<double>::infinity();
    if (std::isnan(a)) a = std::numeric_limits<double>::infinity();
    a = std::max(a, ctl.min_alpha);
    alpha_new[i] = a;
    // a weight past the pruning threshold leaves; it counts as converged
    if (!(a > ctl.prune_alpha)) change = std::max(change, std::fabs(std::log(a / st.alpha[i])));
  }
  // tr(S A) = sum alpha_i S_ii; tr(S lambda P) = m - tr(S A)
  const double tr_sa = (ad2.array() * post.pinv_diag.array()).sum();
  const double tr_sigma_a = (ad2.array() * post.binv_diag.array()).sum();
  const double tr_s_lp = static_cast<double>(m) - tr_sa;
  const double tr_sigma_lp = st.lambda * post.trace_sigma_p;
  next.lambda = st.lambda;
  if (!ctl.lambda && st.lambda > 0.0) {
    const double num = std::max(tr_s_lp - tr_sigma_lp, 0.0);
    next.lambda = (post.pen > 0.0) ? num / post.pen : st.lambda;
    if (!(next.lambda > 0.0) || !std::isfinite(next.lambda)) next.lambda = st.lambda * 1e-3;
    change = std::max(change, std::fabs(std::log(next.lambda / st.lambda)));
  }
  next.sigma2 = st.sigma2;
  if (!ctl.sigma2) {
    // tr(Sigma beta H'H) = m - tr(Sigma A) - tr(Sigma lambda P)
    const double well = static_cast<double>(m) - tr_sigma_a - tr_sigma_lp;
    const double dof = static_cast<double>(n) - well;
    next.sigma2 = (dof > 0.0) ? post.rss / dof : st.sigma2;
    next.sigma2 = std::max(next.sigma2, ctl.min_sigma2);
    change = std::max(change, std::fabs(std::log(next.sigma2 / st.sigma2)));
  }
  return change;
}

// The basis functions whose new alpha passed the threshold leave (never the
// bias, column 0); the rest keep their new alpha.  Returns whether any left.
inline bool prune(const VectorXd& alpha_new, double prune_alpha, State& st) {
  std::vector<Index> keep_active;
  std::vector<double> keep_alpha;
  for (Index i = 0; i < static_cast<Index>(st.active.size()); ++i) {
    if (st.active[i] == 0 || alpha_new[i] <= prune_alpha) {
      keep_active.push_back(st.active[i]);
      keep_alpha.push_back(std::min(alpha_new[i], prune_alpha));
    }
  }
  const bool pruned = keep_active.size() != st.active.size();
  st.active = keep_active;
  st.alpha = Eigen::Map<VectorXd>(keep_alpha.data(), keep_alpha.size());
  return pruned;
}

}  // namespace srvm_detail

// The smooth RVM.  With a fixed lambda = 0 it is Tipping's (2001) RVM by his
// original updates.  It stops when no basis function was pruned and the
// hyperparameters settle (change < tol), or when the evidence no longer
// moves: a weight whose alpha crawls towards the pruning threshold (log
// alpha rising by ~1e-3 per step for thousands of steps) changes neither the
// evidence nor the fit.  With `centres` (rows of x) only those inputs are
// centres of basis functions: a step then costs O(n m^2 + m^3) for m
// centres instead of O(n^3), and memory is O(n m + m^2) instead of O(n^2).
inline RvmResult srvm_fit(const Kernel& kernel, const ConstMatrixRef& x, const ConstVectorRef& y_in,
                          const ConstMatrixRef& penalty_points, const RoughnessPenalty& pen,
                          const SrvmControl& ctl, const std::function<void()>& interrupt,
                          const std::vector<Index>* centres = nullptr) {
  namespace sd = srvm_detail;
  rvm_detail::check_data(x, y_in);
  sd::check_control(ctl);
  const KernelEvaluator ev(kernel, x);
  const sd::Problem pb = sd::make_problem(ev, y_in, penalty_points, pen, centres, interrupt);
  sd::State st = sd::start(pb, ctl);
  RvmResult res;
  res.status.tol = ctl.tol;
  InterruptPoll poll(interrupt);
  for (int it = 1; it <= ctl.max_iter; ++it) {
    poll();
    const rvm_detail::Posterior post = sd::posterior_of(pb, st, false, interrupt);
    res.trace_log_lik.push_back(post.log_lik);
    VectorXd alpha_new;
    sd::State next;
    const double change = sd::update(post, st, ctl, ev.size(), alpha_new, next);
    res.status.iterations = it;
    res.status.change = change;
    const bool pruned = sd::prune(alpha_new, ctl.prune_alpha, st);
    st.lambda = next.lambda;
    st.sigma2 = next.sigma2;
    if (!pruned && (change < ctl.tol || sd::evidence_flat(res.trace_log_lik, ctl.tol_evidence))) {
      res.status.converged = true;
      if (!(change < ctl.tol)) res.status.reason = rvm_detail::kEvidenceFlat;
      break;
    }
  }
  // the posterior at the final hyperparameters
  const rvm_detail::Posterior post = sd::posterior_of(pb, st, true, interrupt);
  const std::vector<Index> label = rvm_detail::column_labels(pb.h.cols(), centres);
  res.active.clear();
  for (Index j : st.active) res.active.push_back(label[j]);
  res.mu = post.mu;
  res.Sigma = rvm_detail::sigma_from(post);
  res.alpha = st.alpha;
  res.lambda = st.lambda;
  res.sigma2 = st.sigma2;
  res.log_lik = post.log_lik;
  rvm_detail::unscale(res, pb.scale, ev.size());
  return res;
}

}  // namespace gpsvm

#endif  // GPSVM_SRVM_HPP
