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
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "ep_engine.hpp"
#include "ep_gradient.hpp"
#include "ep_priors.hpp"
#include "fitc.hpp"
#include "kernels.hpp"
#include "multiclass_probit.hpp"
#include "solver_status.hpp"
#include "threads.hpp"

namespace gpsvm {

struct MulticlassControl {
  double tol = 1e-6;   // largest change of a latent mean, in predictive sds
  int max_iter = 1000;
};

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
  Eigen::VectorXd gradient;          // d L / d (log sigma, log v)
  Eigen::VectorXd per_input_log_width;
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

  // (K + v I)^-1 Y
  Eigen::MatrixXd solve(const Eigen::MatrixXd& Y) const {
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
  void apply_curvature(const Eigen::MatrixXd& Y, Eigen::MatrixXd& W, Eigen::MatrixXd& X) const {
    const auto L = curvature_chol_.triangularView<Eigen::Lower>();
    if (!inducing()) {
      const Eigen::VectorXd sw = h_.cwiseSqrt();
      W = sw.cwiseInverse().asDiagonal() * Y;
      L.solveInPlace(W);
      L.adjoint().solveInPlace(W);
      W = sw.asDiagonal() * W;
      X.noalias() = (*K_) * W;
      return;
    }
    const InducingBasis& b = *basis_;
    const Eigen::MatrixXd tY = t_.asDiagonal() * Y;
    Eigen::MatrixXd beta = b.G.transpose() * tY;
    L.solveInPlace(beta);
    L.adjoint().solveInPlace(beta);
    W = tY - wt_.asDiagonal() * (b.G * beta);
    X = b.G * Eigen::MatrixXd(b.G.transpose() * W) + b.lambda.asDiagonal() * W;
  }

  // tr (K + v I)^-1
  double trace_inverse(const Eigen::MatrixXd* R) const {
    if (!inducing()) return R->trace();
    const Eigen::ArrayXd W = d_inv_.array();
    return (W - W.square() * r_.low_rank_variance.array()).sum();
  }

 private:
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
  Eigen::MatrixXd grad;
  Eigen::VectorXd curvature;  // per case, when asked
  Eigen::MatrixXd hessian;    // K x (K n): minus each case's Hessian, when asked
};

inline Sites evaluate_sites(const Eigen::MatrixXd& M, const std::vector<int>& labels, double v,
                            const std::function<void()>& interrupt, bool curvature = false) {
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
                                       v, s.grad.col(i).data(), d, mills, work,
                                       curvature ? &s.curvature[i] : nullptr,
                                       curvature ? s.hessian.col(K * i).data() : nullptr);
      log_z[i] = a.log_z;
      dv[i] = a.dlog_z_dv;
    }
  }, interrupt);
  s.grad.transposeInPlace();
  s.sum_log_z = log_z.sum();
  s.dv = dv.sum();
  return s;
}

inline double frobenius_dot(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  return (a.array() * b.array()).sum();
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
  multiclass_detail::Sites sites = evaluate_sites(M, labels, v, interrupt);
  if (start.size() > 0) {
    M = step(M, sites.grad, W);
    sites = evaluate_sites(M, labels, v, interrupt);
  }
  sites = evaluate_sites(M, labels, v, interrupt, true);
  double psi = sites.sum_log_z - 0.5 * frobenius_dot(W, M);
  out.status.tol = control.tol;
  const double floor = 1e-8 / v;
  const Eigen::Index classes_n = M.cols();
  // minus the Hessian of the log likelihood times P (n x K), case by case
  auto hessian_times = [&](const multiclass_detail::Sites& at, const Eigen::MatrixXd& P) {
    Eigen::MatrixXd out_h(P.rows(), P.cols());
    for (Eigen::Index i = 0; i < P.rows(); ++i)
      out_h.row(i).noalias() =
          (at.hessian.middleCols(classes_n * i, classes_n) * P.row(i).transpose()).transpose();
    return out_h;
  };
  for (int iter = 1; iter <= control.max_iter; ++iter) {
    if (interrupt) interrupt();
    // Newton's direction, (K^-1 + H) D = grad log Z - K^-1 M, by conjugate
    // gradients preconditioned with (K^-1 + diag(h))^-1 (h_i >= each case's
    // largest curvature, so one factorisation serves every class); D and
    // K^-1 D are carried together, as M and W are
    prior.factor_curvature(sites.curvature.cwiseMax(floor), interrupt);
    const Eigen::MatrixXd rhs = sites.grad - W;
    Eigen::MatrixXd D = Eigen::MatrixXd::Zero(n, classes_n), Dq = D, r = rhs, z, zq;
    prior.apply_curvature(r, zq, z);
    Eigen::MatrixXd p = z, pq = zq;
    double rz = frobenius_dot(r, z);
    const double start_norm = std::sqrt(rz);
    for (int cg = 0; cg < 200 && rz > 0.0; ++cg) {
      const Eigen::MatrixXd Ap = pq + hessian_times(sites, p);
      const double pAp = frobenius_dot(p, Ap);
      if (!(pAp > 0.0)) break;
      const double alpha = rz / pAp;
      D += alpha * p;
      Dq += alpha * pq;
      r -= alpha * Ap;
      prior.apply_curvature(r, zq, z);
      const double rz_new = frobenius_dot(r, z);
      if (std::sqrt(std::max(rz_new, 0.0)) <= 1e-3 * start_norm) break;
      const double beta = rz_new / rz;
      p = z + beta * p;
      pq = zq + beta * pq;
      rz = rz_new;
    }
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
    M = M_try;
    W = W_try;
    sites = trial;
    psi = psi_try;
    if (fraction * change < control.tol) {
      out.status.converged = true;
      break;
    }
  }
  if (!out.status.converged && out.status.reason.empty())
    out.status.reason = "the iteration limit was reached";
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

inline void check_multiclass_noise(double v) {
  if (!(v > 0.0) || !std::isfinite(v))
    throw std::invalid_argument("the joint classifier needs a noise variance > 0");
}

// Dense prior: K from the kernel at x (with its constant).
inline MulticlassResult multiclass_fit(const Kernel& kernel, const ConstMatrixRef& x,
                                       const Eigen::Ref<const Eigen::VectorXi>& y, int classes,
                                       double v, const Eigen::MatrixXd& start,
                                       const MulticlassControl& control, bool gradient,
                                       const std::function<void()>& interrupt = {}) {
  check_multiclass_noise(v);
  const std::vector<int> labels = multiclass_labels(y, classes, x.rows());
  const Eigen::MatrixXd K = kernel_matrix(kernel, x, interrupt);
  multiclass_detail::SharedPrior prior(K, v, interrupt);
  MulticlassResult out = multiclass_fit_on(prior, labels, classes, v, start, control, interrupt);
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

// Inducing-point (FITC) prior on the inducing inputs z.
inline MulticlassResult multiclass_fit_inducing(const Kernel& kernel, const ConstMatrixRef& x,
                                                const Eigen::Ref<const Eigen::VectorXi>& y,
                                                int classes, double v, const ConstMatrixRef& z,
                                                const Eigen::MatrixXd& start,
                                                const MulticlassControl& control, bool gradient,
                                                Eigen::MatrixXd* inducing_chol,
                                                const std::function<void()>& interrupt = {}) {
  check_multiclass_noise(v);
  const std::vector<int> labels = multiclass_labels(y, classes, x.rows());
  const InducingBasis basis = inducing_basis(kernel, x, z, 0.0, interrupt);
  multiclass_detail::SharedPrior prior(basis, v, interrupt);
  MulticlassResult out = multiclass_fit_on(prior, labels, classes, v, start, control, interrupt);
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
