// The joint K-class Gaussian-process classifier: K latent functions
// f_1..f_K, independent a priori with one covariance K (the kernel with its
// bias), and the multinomial probit likelihood of multiclass_probit.hpp
// with noise variance v (the binary classifier's input noise, eq. 17.16 of
// Opper and Winther, in every class).
//
// The approximation is the variational one of Girolami and Rogers (2006):
// with auxiliary y_ik = f_ik + e_ik, e_ik ~ N(0, v), and q(F) q(Y)
// factorised, the posterior of every class has the same covariance
//   Sigma = (K^-1 + I / v)^-1,
// so ONE factorisation (of I + K / v, or with the inducing-point prior of
// A = I + G' D^-1 G, D = diag(lambda) + v I) serves all K classes.  The
// mean of class k is K w_k with w_k = (K + v I)^-1 y~_k, y~ the means of
// the truncated Gaussians q(y_i); the fixed point maximises the concave
//   Psi(M) = sum_i log P(t_i | m_i) - 1/2 sum_k m_k' K^-1 m_k
// (each update of Girolami and Rogers is a minorise-maximise step of Psi
// with the likelihood's curvature bounded by 1 / v), and the variational
// lower bound on log p(t) at it is
//   L = Psi(M) - K/2 log det(I + K / v).
// Its derivative in a kernel parameter is 1/2 tr((W W' - K R) dK),
// R = (K + v I)^-1 (the EP form of ep_gradient.hpp with every site at
// precision 1/v, K classes' weights and K copies of the trace), and in v
// sum_i d log P(t_i | m_i) / dv + K n / (2 v) - K/2 tr R.
//
// Girolami and Rogers' own updates converge slowly where the likelihood's
// curvature is far below 1 / v (confidently classified cases: thousands of
// iterations at v = 0.01 on fgl), so the mode is found instead by Newton's
// method on Psi, each direction by conjugate gradients preconditioned with
// (K^-1 + diag(h))^-1, h_i a bound on case i's largest curvature
// (Gershgorin's), the same for every class: one factorisation per Newton
// step serves all K classes and every conjugate-gradient iteration, and the
// K x K curvature blocks enter only as products.  The step is halved until
// Psi does not fall.

// Pure C++17 + Eigen: no R headers.
#ifndef GPSVM_MULTICLASS_HPP
#define GPSVM_MULTICLASS_HPP

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "dense.hpp"
#include "ep_engine.hpp"
#include "ep_gradient.hpp"
#include "ep_priors.hpp"
#include "fitc.hpp"
#include "kernels.hpp"
#include "multiclass_probit.hpp"
#include "solver_status.hpp"
#include "threads.hpp"

namespace gpsvm {

// Newton's directions are solved to a relative residual between these
// (see multiclass_fit_on()).
constexpr double kCoarsestForcing = 0.1, kFinestForcing = 1e-3;

struct MulticlassControl {
  double tol = 1e-6;   // largest change of a latent mean, in predictive sds
  int max_iter = 1000;
  // the relative residual of the adjoint solve of the leave-one-out
  // criterion's gradient: the gradient's relative error is about this
  double adjoint_tol = 1e-8;
};

// The leave-one-out predictive of a joint fit from its cavities: removing
// case i's Gaussian factor N(y~_i | f_i, v) from the posterior N(m_i, s_i^2)
// leaves the latent variance r_i = 1 / (1 / s_i^2 - 1 / v) and the means
// m_i - r_i w_i (w_i row i of the weights; the GP-regression identity of
// Rasmussen and Williams, eq. 5.12, on the auxiliary targets y~ = M + v W).
// `spread2` is r_i + v, the variance the class probabilities integrate over.
struct MulticlassLoo {
  Eigen::MatrixXd mean;     // n x K
  Eigen::VectorXd spread2;  // n
  double value = 0.0;       // sum_i log P(t_i) under the leave-one-out predictive
  Eigen::VectorXd gradient; // d value / d (log sigma, log v); empty unless asked
};

inline MulticlassLoo multiclass_loo_moments(const Eigen::MatrixXd& M, const Eigen::MatrixXd& W,
                                            const Eigen::VectorXd& variance, double v) {
  MulticlassLoo out;
  const Eigen::ArrayXd s2 = variance.array().max(1e-300);
  const Eigen::ArrayXd r = ((1.0 / s2) - 1.0 / v).max(1e-300).inverse();
  out.mean = M - r.matrix().asDiagonal() * W;
  out.spread2 = r.matrix().array() + v;
  return out;
}

struct MulticlassResult {
  Eigen::MatrixXd mean;     // n x K posterior means M
  Eigen::MatrixXd weights;  // n x K, M = K W
  Eigen::VectorXd variance; // the latent posterior variance, shared by the classes
  // the factor: dense, L of I + K / v (n x n); FITC, L_A (m x m)
  Eigen::MatrixXd chol;
  Eigen::MatrixXd inducing_weights;  // FITC: L^-T G' W (m x K), the means' weights on k_m(x)
  double log_det_half = 0.0;         // 1/2 log det(I + K / v)
  double sum_log_z = 0.0;
  double log_evidence = 0.0;         // the variational lower bound L
  SolverStatus status;
  std::int64_t cg_iterations = 0;    // conjugate-gradient iterations, all Newton steps
  Eigen::VectorXd gradient;          // d L / d (log sigma, log v)
  Eigen::VectorXd per_input_log_width;
  MulticlassLoo loo;
};

namespace multiclass_detail {

// K + v I in one of two representations, factored once.
class SharedPrior {
 public:
  // dense
  SharedPrior(const Eigen::MatrixXd& K, double v, const std::function<void()>& interrupt)
      : K_(&K), v_(v) {
    DensePrior prior(K);
    factor(prior, interrupt);
  }
  // inducing inputs
  SharedPrior(const InducingBasis& b, double v, const std::function<void()>& interrupt)
      : basis_(&b), v_(v) {
    LowRankPrior prior(b.G, b.lambda);
    factor(prior, interrupt);
    d_inv_ = (b.lambda.array() + v).inverse().matrix();
  }
  const EpResult& factor_result() const { return r_; }
  bool inducing() const { return basis_ != nullptr; }

  // (K + v I)^-1 Y, the columns split between threads
  Eigen::MatrixXd solve(const Eigen::MatrixXd& Y) const {
    Eigen::MatrixXd out(Y.rows(), Y.cols());
    by_columns(Y.cols(), [&](Eigen::Index c0, Eigen::Index len) {
      out.middleCols(c0, len) = solve_columns(Y.middleCols(c0, len));
    });
    return out;
  }

  // The preconditioner of the iteration below: with S = diag(h) (h > 0),
  // factor() once, then apply() gives W = (K + S^-1)^-1 S^-1 Y and
  // X = K W = (K^-1 + S)^-1 Y, from the factor of I + S^1/2 K S^1/2
  // (dense) or of A = I + G' diag(h t) G with t = 1 / (1 + lambda h)
  // (inducing inputs: W = t Y - h t G A^-1 G' t Y).
  void factor_curvature(const Eigen::VectorXd& h, const std::function<void()>& interrupt) {
    h_ = h;
    if (!inducing()) {
      const Eigen::VectorXd sw = h.cwiseSqrt();
      curvature_chol_ = sw.asDiagonal() * (*K_) * sw.asDiagonal();
      curvature_chol_.diagonal().array() += 1.0;
      if (!cholesky_in_place(curvature_chol_, interrupt))
        throw std::runtime_error("Cholesky factorisation of I + S^1/2 K S^1/2 failed");
      return;
    }
    const InducingBasis& b = *basis_;
    t_ = (1.0 + b.lambda.array() * h.array()).inverse().matrix();
    wt_ = h.cwiseProduct(t_);
    curvature_chol_ = Eigen::MatrixXd::Identity(b.G.cols(), b.G.cols());
    add_weighted_gram(curvature_chol_, b.G, wt_);
    if (!cholesky_in_place(curvature_chol_, interrupt))
      throw std::runtime_error("Cholesky factorisation of I + G' W G failed");
  }
  // Whether the factored curvatures are within a factor `ratio` of h in
  // every case (then the factor still preconditions well).
  bool curvature_within(const Eigen::VectorXd& h, double ratio) const {
    if (h_.size() != h.size()) return false;
    const Eigen::ArrayXd q = h.array() / h_.array();
    return q.maxCoeff() <= ratio && q.minCoeff() >= 1.0 / ratio;
  }

  // X = (K^-1 + S)^-1 Y = S^-1 (Y - W), from W = K^-1 X alone: the product
  // with K is not needed (the subtraction loses at most the digits of
  // 1 / (h_i times K's scale), harmless in a preconditioner, and the fit
  // carries W, from which its means are formed again)
  void apply_curvature(const Eigen::MatrixXd& Y, Eigen::MatrixXd& W, Eigen::MatrixXd& X) const {
    W.resize(Y.rows(), Y.cols());
    by_columns(Y.cols(), [&](Eigen::Index c0, Eigen::Index len) {
      W.middleCols(c0, len) = apply_curvature_columns(Y.middleCols(c0, len));
    });
    X = h_.cwiseInverse().asDiagonal() * (Y - W);
  }

  // K W, the means of weights W
  Eigen::MatrixXd times_prior(const Eigen::MatrixXd& W) const {
    if (!inducing()) return (*K_) * W;
    return basis_->G * Eigen::MatrixXd(basis_->G.transpose() * W) +
           basis_->lambda.asDiagonal() * W;
  }

  // tr (K + v I)^-1
  double trace_inverse(const Eigen::MatrixXd* R) const {
    if (!inducing()) return R->trace();
    const Eigen::ArrayXd W = d_inv_.array();
    return (W - W.square() * r_.low_rank_variance.array()).sum();
  }

 private:
  // work(first column, count) on blocks of columns, one a thread: the
  // classes are independent columns of every product with the shared
  // factors, which Eigen runs on one thread
  template <class Work>
  void by_columns(Eigen::Index cols, Work&& work) const {
    const Eigen::Index n = inducing() ? basis_->G.cols() : K_->rows();
    const int threads = static_cast<int>(std::min<Eigen::Index>(threads_for_dense(n), cols));
    if (threads <= 1) return work(0, cols);
    InterruptPoll none(nullptr);
    blocks_in_rounds(cols, (cols + threads - 1) / threads, threads, none,
                     [&](Eigen::Index c0, Eigen::Index count, int) { work(c0, count); });
  }

  Eigen::MatrixXd solve_columns(const Eigen::MatrixXd& Y) const {
    if (!inducing()) {
      Eigen::MatrixXd x = Y / v_;
      const auto L = r_.chol.triangularView<Eigen::Lower>();
      L.solveInPlace(x);
      L.adjoint().solveInPlace(x);
      return x;
    }
    const Eigen::MatrixXd x = d_inv_.asDiagonal() * Y;
    Eigen::MatrixXd t = basis_->G.transpose() * x;
    const auto LA = r_.chol.triangularView<Eigen::Lower>();
    LA.solveInPlace(t);
    LA.adjoint().solveInPlace(t);
    return x - d_inv_.asDiagonal() * (basis_->G * t);
  }

  Eigen::MatrixXd apply_curvature_columns(const Eigen::MatrixXd& Y) const {
    const auto L = curvature_chol_.triangularView<Eigen::Lower>();
    if (!inducing()) {
      const Eigen::VectorXd sw = h_.cwiseSqrt();
      Eigen::MatrixXd W = sw.cwiseInverse().asDiagonal() * Y;
      L.solveInPlace(W);
      L.adjoint().solveInPlace(W);
      return sw.asDiagonal() * W;
    }
    const InducingBasis& b = *basis_;
    const Eigen::MatrixXd tY = t_.asDiagonal() * Y;
    Eigen::MatrixXd beta = b.G.transpose() * tY;
    L.solveInPlace(beta);
    L.adjoint().solveInPlace(beta);
    return tY - wt_.asDiagonal() * (b.G * beta);
  }

  template <class Prior>
  void factor(Prior& prior, const std::function<void()>& interrupt) {
    const Eigen::Index n = prior.size();
    r_.site_precision = Eigen::VectorXd::Constant(n, 1.0 / v_);
    r_.site_nu = Eigen::VectorXd::Zero(n);
    prior.posterior(r_.site_precision, r_.site_nu, r_, interrupt);
  }
  const Eigen::MatrixXd* K_ = nullptr;
  const InducingBasis* basis_ = nullptr;
  double v_;
  EpResult r_;
  Eigen::VectorXd d_inv_;
  Eigen::VectorXd h_, t_, wt_;
  Eigen::MatrixXd curvature_chol_;
};

// Sites at means M: sum log Z, the gradient of sum log Z in M, and (if
// asked) sum d log Z / dv.  Rows are independent: split between threads.
struct Sites {
  double sum_log_z = 0.0, dv = 0.0;
  Eigen::VectorXd dv_case;    // d log Z_i / dv_i
  Eigen::MatrixXd grad;
  Eigen::VectorXd curvature;  // per case, when asked
  Eigen::MatrixXd hessian;    // K x (K n): minus each case's Hessian, when asked
};

// The conjugate-gradient iterations of one Newton step at most.
constexpr int kMaxConjugateGradients = 500;

// A Newton step keeps the preconditioner of the last one while no case's
// largest curvature has moved by more than this factor (a factorisation
// costs as much as tens of conjugate-gradient iterations).
constexpr double kRefactorRatio = 2.0;

// Case i with noise variance v[i] (the leave-one-out predictives' spread).
inline Sites evaluate_sites(const Eigen::MatrixXd& M, const std::vector<int>& labels,
                            const Eigen::VectorXd& v, const std::function<void()>& interrupt,
                            bool curvature = false) {
  const Eigen::Index n = M.rows();
  const int K = static_cast<int>(M.cols());
  Sites s;
  s.grad.resize(K, n);  // column i: the gradient of case i
  if (curvature) {
    s.curvature.resize(n);
    s.hessian.resize(K, K * n);
  }
  const Eigen::MatrixXd Mt = M.transpose();
  Eigen::VectorXd log_z(n), dv(n);
  const int threads = n * K * K >= 20000 ? thread_count() : 1;
  for_row_blocks(n, 256, threads, [&](Eigen::Index start, Eigen::Index len) {
    std::vector<double> d, mills, work;
    for (Eigen::Index i = start; i < start + len; ++i) {
      const ArgmaxSite a = argmax_site(Mt.col(i).data(), K, labels[static_cast<std::size_t>(i)],
                                       v[i], s.grad.col(i).data(), d, mills, work,
                                       curvature ? &s.curvature[i] : nullptr,
                                       curvature ? s.hessian.col(K * i).data() : nullptr);
      log_z[i] = a.log_z;
      dv[i] = a.dlog_z_dv;
    }
  }, interrupt);
  s.grad.transposeInPlace();
  s.sum_log_z = log_z.sum();
  s.dv = dv.sum();
  s.dv_case = dv;
  return s;
}

inline Sites evaluate_sites(const Eigen::MatrixXd& M, const std::vector<int>& labels, double v,
                            const std::function<void()>& interrupt, bool curvature = false) {
  return evaluate_sites(M, labels, Eigen::VectorXd::Constant(M.rows(), v), interrupt, curvature);
}

// Each case's largest curvature, the largest eigenvalue of its block of
// `hessian` (Gershgorin's bound in `curvature` can exceed it K-fold, and
// every direction of the case is preconditioned with it).
inline void largest_curvature(Sites& s, const std::function<void()>& interrupt) {
  const Eigen::Index n = s.curvature.size(), K = s.hessian.rows();
  const int threads = n * K * K >= 20000 ? thread_count() : 1;
  for_row_blocks(n, 256, threads, [&](Eigen::Index start, Eigen::Index len) {
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(K);
    for (Eigen::Index i = start; i < start + len; ++i) {
      eig.compute(s.hessian.middleCols(K * i, K), Eigen::EigenvaluesOnly);
      s.curvature[i] = std::min(s.curvature[i], std::max(eig.eigenvalues().maxCoeff(), 0.0));
    }
  }, interrupt);
}

// H P for minus the likelihood's Hessian H (blocks of the sites) and P n x K.
inline Eigen::MatrixXd curvature_times(const Sites& s, const Eigen::MatrixXd& P) {
  const Eigen::Index K = P.cols();
  Eigen::MatrixXd out(P.rows(), K);
  for (Eigen::Index i = 0; i < P.rows(); ++i)
    out.row(i).noalias() = (s.hessian.middleCols(K * i, K) * P.row(i).transpose()).transpose();
  return out;
}

inline double frobenius_dot(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  return (a.array() * b.array()).sum();
}

// Newton's system (K^-1 + H) D = rhs, H minus the likelihood's Hessian at
// `sites` (with their largest curvatures), by conjugate gradients
// preconditioned with (K^-1 + diag(h))^-1, h_i case i's largest curvature
// (at least `floor`), the same for every class: one factorisation serves
// every class and iteration, and the K x K blocks enter only as products.
// D and K^-1 D (Dq) are carried together; the iteration stops when the
// residual's preconditioned norm has fallen by `rel_tol`.  Returns the
// number of iterations.
inline int newton_solve(SharedPrior& prior, const Sites& sites, const Eigen::MatrixXd& rhs,
                        double rel_tol, double floor, Eigen::MatrixXd& D, Eigen::MatrixXd& Dq,
                        const std::function<void()>& interrupt) {
  const Eigen::VectorXd h = sites.curvature.cwiseMax(floor);
  if (!prior.curvature_within(h, kRefactorRatio)) prior.factor_curvature(h, interrupt);
  const Eigen::Index n = rhs.rows(), K = rhs.cols();
  D = Eigen::MatrixXd::Zero(n, K);
  Dq = D;
  Eigen::MatrixXd r = rhs, z, zq;
  prior.apply_curvature(r, zq, z);
  Eigen::MatrixXd p = z, pq = zq;
  double rz = frobenius_dot(r, z);
  const double start_norm = std::sqrt(std::max(rz, 0.0));
  int cg = 0;
  InterruptPoll poll(interrupt);
  while (cg < kMaxConjugateGradients && rz > 0.0) {
    ++cg;
    poll();
    const Eigen::MatrixXd Ap = pq + curvature_times(sites, p);
    const double pAp = frobenius_dot(p, Ap);
    if (!(pAp > 0.0)) break;
    const double alpha = rz / pAp;
    D += alpha * p;
    Dq += alpha * pq;
    r -= alpha * Ap;
    prior.apply_curvature(r, zq, z);
    const double rz_new = frobenius_dot(r, z);
    if (std::sqrt(std::max(rz_new, 0.0)) <= rel_tol * start_norm) break;
    const double beta = rz_new / rz;
    p = z + beta * p;
    pq = zq + beta * pq;
    rz = rz_new;
  }
  return cg;
}

}  // namespace multiclass_detail

// The fit on a factored prior: labels in 0..K-1, warm start M0 (n x K, or
// empty for the prior's 0).
inline MulticlassResult multiclass_fit_on(multiclass_detail::SharedPrior& prior,
                                          const std::vector<int>& labels, int classes, double v,
                                          const Eigen::MatrixXd& start,
                                          const MulticlassControl& control,
                                          const std::function<void()>& interrupt) {
  using multiclass_detail::evaluate_sites;
  using multiclass_detail::frobenius_dot;
  const EpResult& f = prior.factor_result();
  const Eigen::Index n = f.variance.size();
  MulticlassResult out;
  out.variance = f.variance;
  out.chol = f.chol;
  out.log_det_half = f.log_det_half;
  const Eigen::ArrayXd spread = (out.variance.array() + v).sqrt();
  // the map x -> G(x) = y~(x) - v (K + v I)^-1 y~(x), returning G(x) and its weights
  auto step = [&](const Eigen::MatrixXd& M, const Eigen::MatrixXd& grad, Eigen::MatrixXd& W) {
    const Eigen::MatrixXd target = M + v * grad;
    W = prior.solve(target);
    return Eigen::MatrixXd(target - v * W);
  };
  // start on the map's image, where M = K W holds
  Eigen::MatrixXd M = start.size() > 0 ? start : Eigen::MatrixXd::Zero(n, classes);
  if (M.rows() != n || M.cols() != classes)
    throw std::invalid_argument("the warm start has the wrong size");
  Eigen::MatrixXd W = Eigen::MatrixXd::Zero(n, classes);
  if (start.size() > 0) M = step(M, evaluate_sites(M, labels, v, interrupt).grad, W);
  multiclass_detail::Sites sites = evaluate_sites(M, labels, v, interrupt, true);
  double psi = sites.sum_log_z - 0.5 * frobenius_dot(W, M);
  out.status.tol = control.tol;
  const double floor = 1e-8 / v;
  double first_norm = -1.0;
  InterruptPoll poll(interrupt);
  for (int iter = 1; iter <= control.max_iter; ++iter) {
    poll();
    multiclass_detail::largest_curvature(sites, interrupt);
    // Newton's direction, solved as far as the gradient's fall since the
    // first step asks (an inexact Newton method: the early steps, far from
    // the mode, need only a rough direction; the late ones converge fast)
    const Eigen::MatrixXd rhs = sites.grad - W;
    const double norm = rhs.norm();
    if (first_norm < 0.0) first_norm = norm;
    const double forcing = std::min(
        kCoarsestForcing, std::max(kFinestForcing, std::sqrt(norm / std::max(first_norm, 1e-300))));
    Eigen::MatrixXd D, Dq;
    out.cg_iterations += multiclass_detail::newton_solve(prior, sites, rhs, forcing, floor, D, Dq,
                                                         interrupt);
    const double change = (D.array().abs().colwise() / spread).maxCoeff();
    out.status.iterations = iter;
    out.status.change = change;
    // halve the step until Psi does not fall
    double fraction = 1.0;
    multiclass_detail::Sites trial;
    Eigen::MatrixXd M_try, W_try;
    double psi_try = psi;
    for (int halving = 0; halving < 40; ++halving) {
      M_try = M + fraction * D;
      W_try = W + fraction * Dq;
      trial = evaluate_sites(M_try, labels, v, interrupt, true);
      psi_try = trial.sum_log_z - 0.5 * frobenius_dot(W_try, M_try);
      if (psi_try >= psi - 1e-13 * std::fabs(psi)) break;
      fraction *= 0.5;
    }
    if (!(psi_try >= psi - 1e-13 * std::fabs(psi))) {
      out.status.reason = "no step along the Newton direction raised the objective";
      break;
    }
    // the means formed again from the weights, which the directions'
    // K^-1 halves carried exactly
    W = W_try;
    M = prior.times_prior(W);
    sites = trial;
    psi = sites.sum_log_z - 0.5 * frobenius_dot(W, M);
    // Converged when the step was below tol, or when a full step was so
    // small that the next one would be: an inexact Newton step leaves an
    // error of about change * max(forcing, change) (the direction's
    // residual, and the quadratic term), taken ten times over
    if (fraction * change < control.tol ||
        (fraction == 1.0 && 10.0 * change * std::max(forcing, change) < control.tol)) {
      out.status.converged = true;
      break;
    }
  }
  if (!out.status.converged && out.status.reason.empty())
    out.status.reason = "the iteration limit was reached";
  // One step of the map from the mode: W = (K + v I)^-1 (M + v g(M)) and
  // M = K W, which the cavities assume.  Where K is singular (a linear
  // kernel, or numerically a wide one) the Newton steps leave the part of W
  // that M does not see where it was; the step sets it to g's.
  sites = evaluate_sites(M, labels, v, interrupt);
  M = step(M, sites.grad, W);
  sites = evaluate_sites(M, labels, v, interrupt);
  out.mean = M;
  out.weights = W;
  out.sum_log_z = sites.sum_log_z;
  out.log_evidence = sites.sum_log_z - 0.5 * frobenius_dot(W, M) -
                     static_cast<double>(classes) * out.log_det_half;
  out.gradient = Eigen::VectorXd::Zero(2);
  out.gradient[1] = sites.dv;  // completed by the caller
  return out;
}

namespace multiclass_detail {

// The value of the leave-one-out criterion and, with `grad_mean` and
// `grad_spread` (n x K and n), its derivatives in each case's
// leave-one-out means and spread.
inline double loo_value(const MulticlassLoo& loo, const std::vector<int>& labels,
                        Eigen::MatrixXd* grad_mean, Eigen::VectorXd* grad_spread,
                        const std::function<void()>& interrupt) {
  Sites s = evaluate_sites(loo.mean, labels, loo.spread2, interrupt);
  if (grad_mean != nullptr) *grad_mean = std::move(s.grad);
  if (grad_spread != nullptr) *grad_spread = std::move(s.dv_case);
  return s.sum_log_z;
}

// The criterion's gradient in (log sigma, log v) on the dense prior K (the
// kernel at x), at the mode M of Psi (W = K^-1 M).  Write s2_i = 1 / a_i,
// a_i = [(K + v I)^-1]_ii, and the leave-one-out means mu_i = m_i -
// (s2_i - v) g_i(m_i) with g_i the likelihood's gradient (= w_i at the
// mode).  The criterion depends on the hyperparameters directly, through
// a_i and the likelihood's v, and through the mode, which moves as the
// solution of K^-1 M = g(M; v): its derivative costs one more Newton solve
// with the criterion's derivative in M as right-hand side (the adjoint),
//   (K^-1 + H) Lambda = b,  b_i = (I + (s2_i - v) H_i) dC / dmu_i.
// With c_i = dC / da_i = s2_i^2 (dC/dmu_i . g_i - dC/ds2_i), da = -diag(R dK R),
// and dg_i / dv = (H_i m_i - g_i) / (2 v) (the likelihood depends on m / sqrt(v)):
//   dC / dtheta_K = sum_ij (sym(W Lambda_q') - R diag(c) R)_ij dK_ij,
//     Lambda_q = K^-1 Lambda,
//   dC / dv = sum_i [dC/dmu_i . (g_i - (s2_i - v) dg_i/dv) - c_i [R^2]_ii
//             + Lambda_i . dg_i/dv].
inline Eigen::VectorXd loo_gradient(SharedPrior& prior, const Kernel& kernel,
                                    const ConstMatrixRef& x, const std::vector<int>& labels,
                                    double v, const Eigen::MatrixXd& M, const Eigen::MatrixXd& W,
                                    const MulticlassLoo& loo, double adjoint_tol,
                                    const std::function<void()>& interrupt) {
  const Eigen::Index n = M.rows(), K = M.cols();
  Eigen::MatrixXd gm;
  Eigen::VectorXd gs;
  loo_value(loo, labels, &gm, &gs, interrupt);
  Sites sites = evaluate_sites(M, labels, v, interrupt, true);
  largest_curvature(sites, interrupt);
  Eigen::MatrixXd b(n, K), dg(n, K);
  Eigen::VectorXd c(n);
  double dv = 0.0;
  for (Eigen::Index i = 0; i < n; ++i) {
    const auto H = sites.hessian.middleCols(K * i, K);
    const double s2 = loo.spread2[i], r = s2 - v;
    const Eigen::VectorXd gmi = gm.row(i).transpose(), gi = sites.grad.row(i).transpose();
    c[i] = s2 * s2 * (gmi.dot(gi) - gs[i]);
    b.row(i) = (gmi + r * (H * gmi)).transpose();
    const Eigen::VectorXd dgi = (H * M.row(i).transpose() - gi) / (2.0 * v);
    dg.row(i) = dgi.transpose();
    dv += gmi.dot(gi - r * dgi);
  }
  Eigen::MatrixXd lambda, lambda_q;
  newton_solve(prior, sites, b, adjoint_tol, 1e-8 / v, lambda, lambda_q, interrupt);
  dv += frobenius_dot(lambda, dg);
  const Eigen::MatrixXd R = ep_site_inverse(prior.factor_result(), interrupt);
  dv -= c.dot(R.colwise().squaredNorm().transpose());
  Eigen::VectorXd out = Eigen::VectorXd::Zero(2);
  out[1] = v * dv;
  if (!kernel.radial()) return out;
  const Eigen::MatrixXd RcR = crossprod(R, c, interrupt);  // R diag(c) R, R symmetric
  const double work = static_cast<double>(n) * static_cast<double>(n) *
                      static_cast<double>(2 * W.cols() + x.cols());
  InterruptPoll poll(interrupt);
  out[0] += sum_of_block_terms(n, 256, threads_for_work(work), 1, poll,
                               [&](Eigen::Index s, Eigen::Index len) {
    const Eigen::MatrixXd coefficient =
        0.5 * (W * lambda_q.middleRows(s, len).transpose() +
               lambda_q * W.middleRows(s, len).transpose()) -
        RcR.middleCols(s, len);
    return Eigen::VectorXd::Constant(
        1, log_width_contraction(kernel, coefficient, x.middleRows(s, len), x).sum());
  })[0];
  return out;
}

}  // namespace multiclass_detail

// Labels as 0-based class indices, checked.
inline std::vector<int> multiclass_labels(const Eigen::Ref<const Eigen::VectorXi>& y, int classes,
                                          Eigen::Index n) {
  if (classes < 2) throw std::invalid_argument("a classifier needs two classes or more");
  if (y.size() != n) throw std::invalid_argument("labels and inputs differ in length");
  std::vector<int> out(static_cast<std::size_t>(n));
  for (Eigen::Index i = 0; i < n; ++i) {
    if (y[i] < 0 || y[i] >= classes) throw std::invalid_argument("a label is out of range");
    out[static_cast<std::size_t>(i)] = y[i];
  }
  return out;
}

// The fit's leave-one-out predictive and criterion (see MulticlassLoo).
inline void finish_loo(MulticlassResult& fit, const std::vector<int>& labels, double v,
                       const std::function<void()>& interrupt) {
  fit.loo = multiclass_loo_moments(fit.mean, fit.weights, fit.variance, v);
  fit.loo.value = multiclass_detail::loo_value(fit.loo, labels, nullptr, nullptr, interrupt);
}

inline void check_multiclass_noise(double v) {
  if (!(v > 0.0) || !std::isfinite(v))
    throw std::invalid_argument("the joint classifier needs a noise variance > 0");
}

// Dense prior: K from the kernel at x (with its constant).
inline MulticlassResult multiclass_fit(const Kernel& kernel, const ConstMatrixRef& x,
                                       const Eigen::Ref<const Eigen::VectorXi>& y, int classes,
                                       double v, const Eigen::MatrixXd& start,
                                       const MulticlassControl& control, bool gradient,
                                       const std::function<void()>& interrupt = {},
                                       bool loo_gradient = false) {
  check_multiclass_noise(v);
  const std::vector<int> labels = multiclass_labels(y, classes, x.rows());
  const Eigen::MatrixXd K = kernel_matrix(kernel, x, interrupt);
  multiclass_detail::SharedPrior prior(K, v, interrupt);
  MulticlassResult out = multiclass_fit_on(prior, labels, classes, v, start, control, interrupt);
  finish_loo(out, labels, v, interrupt);
  if (loo_gradient && out.status.converged) {
    out.loo.gradient = multiclass_detail::loo_gradient(prior, kernel, x, labels, v, out.mean,
                                                       out.weights, out.loo,
                                                       control.adjoint_tol, interrupt);
  }
  if (!gradient) return out;
  const double c = static_cast<double>(classes), n = static_cast<double>(x.rows());
  const Eigen::MatrixXd R = ep_site_inverse(prior.factor_result(), interrupt);
  if (kernel.radial()) {
    out.per_input_log_width =
        ep_per_input_log_width_gradient(x, kernel, out.weights, R, c, interrupt);
    out.gradient[0] = out.per_input_log_width.sum();
  }
  out.gradient[1] = v * (out.gradient[1] + c * n / (2.0 * v) - 0.5 * c * prior.trace_inverse(&R));
  return out;
}

// Inducing-point (FITC) prior on the inducing inputs z (with `factor`, the
// pivots of that factor of K: inducing_basis()).
inline MulticlassResult multiclass_fit_inducing(const Kernel& kernel, const ConstMatrixRef& x,
                                                const Eigen::Ref<const Eigen::VectorXi>& y,
                                                int classes, double v, const ConstMatrixRef& z,
                                                const Eigen::MatrixXd& start,
                                                const MulticlassControl& control, bool gradient,
                                                Eigen::MatrixXd* inducing_chol,
                                                const std::function<void()>& interrupt = {},
                                                const PivotedFactor* factor = nullptr) {
  check_multiclass_noise(v);
  const std::vector<int> labels = multiclass_labels(y, classes, x.rows());
  const InducingBasis basis = inducing_basis(kernel, x, z, 0.0, interrupt, -1, factor);
  multiclass_detail::SharedPrior prior(basis, v, interrupt);
  MulticlassResult out = multiclass_fit_on(prior, labels, classes, v, start, control, interrupt);
  finish_loo(out, labels, v, interrupt);
  out.inducing_weights = basis.G.transpose() * out.weights;
  basis.chol.triangularView<Eigen::Lower>().transpose().solveInPlace(out.inducing_weights);
  if (inducing_chol != nullptr) *inducing_chol = basis.chol;
  if (!gradient) return out;
  const double c = static_cast<double>(classes), n = static_cast<double>(x.rows());
  const EpResult& f = prior.factor_result();
  const InducingKernelGradient g = inducing_kernel_gradient(
      kernel, x, basis, f.site_precision, out.weights, f.low_rank_variance, f.chol, c, interrupt);
  out.gradient[0] = g.log_width;
  out.per_input_log_width = g.per_input_log_width;
  out.gradient[1] = v * (out.gradient[1] + c * n / (2.0 * v) - 0.5 * c * prior.trace_inverse(nullptr));
  return out;
}

// Class probabilities (n x K) from latent means (n x K) and the shared
// latent variances, with noise v; in logs when `log` (the log loss of a
// class of probability 1e-300 stays finite).
inline Eigen::MatrixXd multiclass_probabilities(const Eigen::MatrixXd& mean,
                                                const Eigen::VectorXd& variance, double v,
                                                bool log, const std::function<void()>& interrupt = {}) {
  const Eigen::Index n = mean.rows();
  const int K = static_cast<int>(mean.cols());
  if (variance.size() != n) throw std::invalid_argument("means and variances differ in length");
  Eigen::MatrixXd out(K, n);
  const Eigen::MatrixXd Mt = mean.transpose();
  const int threads = n * K * K >= 20000 ? thread_count() : 1;
  for_row_blocks(n, 128, threads, [&](Eigen::Index start, Eigen::Index len) {
    std::vector<double> d, work;
    for (Eigen::Index i = start; i < start + len; ++i) {
      const double spread2 = std::max(variance[i], 0.0) + v;
      argmax_log_probabilities(Mt.col(i).data(), K, spread2, out.col(i).data(), d, work);
      // the K integrals sum to one; the rounding of each is removed
      const double top = out.col(i).maxCoeff();
      const double total = std::log((out.col(i).array() - top).exp().sum()) + top;
      out.col(i).array() -= total;
    }
  }, interrupt);
  out.transposeInPlace();
  if (!log) out = out.array().exp().matrix();
  return out;
}

}  // namespace gpsvm

#endif  // GPSVM_MULTICLASS_HPP
