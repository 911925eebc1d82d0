// The inducing-point (FITC) prior for the EP engine (Snelson and Ghahramani
// 2006; for EP, Naish-Guzman and Holden 2008): with m inducing inputs Z,
//   K ~ Q + diag(K - Q),  Q = K_nm K_mm^-1 K_mn,
// exact on the diagonal, of rank m elsewhere.  Written as G G' + diag(lambda)
// with G = K_nm L^-T (L L' = K_mm + jitter I) it is a LowRankPrior
// (ep_priors.hpp) with a diagonal, so EP on it costs O(n m^2) time and
// O(n m) memory per sweep, on the same engine as the dense and low-rank
// priors; or, with only some rows of G held (InducingRows below), O(m^2 +
// block m + n) memory beyond them and the others recomputed in each pass.
// Also here: the basis, the quantities predictions need
// (ep_predict.hpp's fitc_predict), and the kernel part of the evidence
// gradient in O(n m^2).
//
// Numerics, compared with GPML's infFITC_EP (Rasmussen and Nickisch):
// - jitter on K_mm: GPML adds 1e-6 times its mean diagonal; here 1e-8.  With
//   Z the training inputs FITC is the dense model, and 1e-6 would show as an
//   error of 1e-6 in the prior; 1e-8 still bounds the condition number of L
//   by 1e4, so G keeps about 12 digits.  The jitter is part of the model: the
//   diagonal lambda = diag(K) - |g_i|^2 absorbs it, as GPML's does.
// - the representation: GPML keeps the posterior as diag(d) + P R' R P' and
//   updates a Cholesky factor by rank one per site; LowRankPrior keeps
//   A^-1 = (I + G' W G)^-1 and G' (t nu) (the same O(m^2) per site), and
//   both recompute from scratch after every sweep.
// - the evidence is the engine's (no 1/tau terms), with
//   1/2 log det(I + S^1/2 K S^1/2) = sum log diag L_A + 1/2 sum log(1 + lambda_i tau_i).
//
// Pure C++17 + Eigen: no R headers.
#ifndef GPSVM_FITC_HPP
#define GPSVM_FITC_HPP

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "ep_engine.hpp"
#include "ep_priors.hpp"
#include "kernels.hpp"
#include "threads.hpp"

namespace gpsvm {

// Jitter on K_mm, relative to its mean diagonal (see above).
constexpr double kInducingJitter = 1e-8;

// Rows of the n x m factor G handled at a time (memory O(block m) beyond G).
constexpr Eigen::Index kInducingRowBlock = 2048;

// The FITC prior of a kernel at training inputs x and inducing inputs z,
// plus `extra_diagonal` (a noise variance on every point, the TAP
// classifier's input noise).  G holds the first `held_rows` rows of the
// n x m factor (all of them by default); InducingRows recomputes the
// others whenever a sweep reads them, which bounds the memory by
// 8 held_rows m bytes at the price of recomputing K_nm's rows and their
// solve with L (O(m p + m^2) a row) in every pass over them.
struct InducingBasis {
  Eigen::MatrixXd inducing;  // m x p
  Eigen::MatrixXd chol;      // lower factor L of K_mm + jitter I
  double jitter = 0.0;
  Eigen::MatrixXd G;         // held_rows x m, the first rows of K_nm L^-T (Q = G G')
  Eigen::VectorXd lambda;    // n, diag(K - G G') + extra_diagonal, >= 0
  double extra_diagonal = 0.0;
};

// A pivoted Cholesky factor G of the kernel matrix of the training inputs
// (lowrank.hpp; prior_choice.hpp's low-rank choice) with its pivots
// (0-based rows, in the order chosen).  FITC on the pivots made from it is
// the factor's own model: its pivot rows are L with L L' = K_PP, lower
// triangular, and G = K_nP L^-T, so no jitter enters.  A jitter on K_PP
// would not do: pivots taken down to a tiny residual leave K_PP with
// eigenvalues far below any jitter that keeps its Cholesky safe, and the
// jitter would drop their directions.
struct PivotedFactor {
  ConstMatrixRef G;
  std::vector<Eigen::Index> pivots;
};

namespace fitc_detail {
// Rows of K_nm L^-T for inputs xb (rows), written into `out`.
inline void factor_rows(const KernelEvaluator& at_z, const Eigen::MatrixXd& chol,
                        const ConstMatrixRef& xb, Eigen::Ref<Eigen::MatrixXd> out) {
  out = at_z.cross(xb);
  chol.triangularView<Eigen::Lower>().transpose().solveInPlace<Eigen::OnTheRight>(out);
}
}  // namespace fitc_detail

// The training inputs x arrive through a RowSource (in memory: HeldRows; or
// a reader of files or partitions), a block of rows at a time, on one
// thread unless the source allows several.  `held_rows` < 0 holds every row.
// With `factor`, z are its pivots' inputs and the basis is the factor's.
inline InducingBasis inducing_basis(const Kernel& kernel, const RowSource& x,
                                    const ConstMatrixRef& z, double extra_diagonal = 0.0,
                                    const std::function<void()>& interrupt = nullptr,
                                    Eigen::Index held_rows = -1,
                                    const PivotedFactor* factor = nullptr) {
  if (z.rows() < 1) throw std::invalid_argument("no inducing inputs");
  if (z.cols() != x.cols())
    throw std::invalid_argument("the inducing inputs have " + std::to_string(z.cols()) +
                                " columns but the training inputs have " +
                                std::to_string(x.cols()));
  if (!z.allFinite()) throw std::invalid_argument("inputs must be finite");
  if (!(extra_diagonal >= 0.0 && std::isfinite(extra_diagonal)))
    throw std::invalid_argument("the extra diagonal must be finite and >= 0");
  InducingBasis b;
  b.inducing = z;
  b.extra_diagonal = extra_diagonal;
  const KernelEvaluator at_z(kernel, z);
  b.chol = at_z.gram();
  const double mean_diagonal = b.chol.diagonal().mean();
  if (!(mean_diagonal > 0.0))
    throw std::invalid_argument("the kernel vanishes at the inducing inputs");
  const Eigen::Index n = x.rows();
  if (factor != nullptr) {
    const Eigen::Index r = z.rows();
    if (factor->G.rows() != n || factor->G.cols() != r ||
        static_cast<Eigen::Index>(factor->pivots.size()) != r)
      throw std::invalid_argument("the low-rank factor does not match the inputs and its pivots");
    const Eigen::MatrixXd K_pp = b.chol;
    for (Eigen::Index k = 0; k < r; ++k) {
      const Eigen::Index p = factor->pivots[static_cast<std::size_t>(k)];
      if (p < 0 || p >= n) throw std::invalid_argument("a pivot of the low-rank factor is out of range");
      b.chol.row(k) = factor->G.row(p);
    }
    b.chol.triangularView<Eigen::StrictlyUpper>().setZero();
    // the factor's first column is K's pivot column scaled: a factor of
    // another kernel or other inputs fails this
    const Eigen::VectorXd first = b.chol.col(0) * b.chol(0, 0);
    if (!((first - K_pp.col(0)).cwiseAbs().maxCoeff() <= 1e-10 * K_pp.diagonal().maxCoeff()))
      throw std::invalid_argument("the low-rank factor was made for another kernel or other inputs");
  } else {
    b.jitter = kInducingJitter * mean_diagonal;
    b.chol.diagonal().array() += b.jitter;
    Eigen::LLT<Eigen::Ref<Eigen::MatrixXd>, Eigen::Lower> llt(b.chol);
    if (llt.info() != Eigen::Success)
      throw std::runtime_error(
          "the kernel matrix of the inducing inputs is not positive definite even with jitter");
    b.chol.triangularView<Eigen::StrictlyUpper>().setZero();
  }
  const Eigen::Index held = held_rows < 0 ? n : std::min(held_rows, n);
  b.G.resize(held, z.rows());  // a block of rows at a time
  b.lambda.resize(n);
  const int threads = x.concurrent() ? threads_for_pass(n, z.rows()) : 1;
  for_row_blocks(n, kInducingRowBlock, threads, [&](Eigen::Index s, Eigen::Index len) {
    Eigen::MatrixXd x_scratch;
    const FactorBlock xb = x.block(s, len, x_scratch);
    if (!xb.allFinite()) throw std::invalid_argument("inputs must be finite");
    const Eigen::VectorXd k_diagonal = KernelEvaluator(kernel, xb).diagonal();
    // rows not held: only their part of lambda stays (a block straddling
    // the held rows gives those its first rows)
    Eigen::MatrixXd rows(len, z.rows());
    if (factor != nullptr) {
      rows = factor->G.middleRows(s, len);
    } else {
      fitc_detail::factor_rows(at_z, b.chol, xb, rows);
    }
    const Eigen::Index keep = std::min(len, std::max<Eigen::Index>(0, held - s));
    if (keep > 0) b.G.middleRows(s, keep) = rows.topRows(keep);
    b.lambda.segment(s, len) = k_diagonal - rows.rowwise().squaredNorm();
  }, interrupt);
  b.lambda = b.lambda.cwiseMax(0.0).array() + extra_diagonal;  // rounding below 0
  return b;
}

// The same for training inputs held in memory.
inline InducingBasis inducing_basis(const Kernel& kernel, const ConstMatrixRef& x,
                                    const ConstMatrixRef& z, double extra_diagonal = 0.0,
                                    const std::function<void()>& interrupt = nullptr,
                                    Eigen::Index held_rows = -1,
                                    const PivotedFactor* factor = nullptr) {
  return inducing_basis(kernel, HeldRows(x), z, extra_diagonal, interrupt, held_rows, factor);
}

// The rows of a FITC basis's G as LowRankPrior and the gradient read them:
// the held ones from the basis, the others recomputed from the inputs of
// `source` (which, like the basis, must outlive this).
class InducingRows final : public RowSource {
 public:
  InducingRows(const Kernel& kernel, const RowSource& source, const InducingBasis& b)
      : source_(source), basis_(b), held_(b.G), at_z_(kernel, b.inducing) {
    if (b.lambda.size() != source.rows() || b.G.rows() > source.rows() ||
        source.cols() != b.inducing.cols())
      throw std::invalid_argument("the inducing basis was made for other inputs");
  }
  Eigen::Index rows() const override { return source_.rows(); }
  Eigen::Index cols() const override { return basis_.inducing.rows(); }
  FactorBlock block(Eigen::Index start, Eigen::Index len,
                    Eigen::MatrixXd& scratch) const override {
    if (start + len <= basis_.G.rows()) return row_block(basis_.G, start, len);
    Eigen::MatrixXd x_scratch;
    scratch.resize(len, cols());
    fitc_detail::factor_rows(at_z_, basis_.chol, source_.block(start, len, x_scratch), scratch);
    return row_block(scratch, 0, len);
  }
  const Eigen::Ref<const Eigen::MatrixXd>* held() const override {
    return basis_.G.rows() == source_.rows() ? &held_ : nullptr;
  }
  bool concurrent() const override { return source_.concurrent(); }
  const Eigen::MatrixXd* solve_factor() const override { return &basis_.chol; }
  bool unsolved_block(Eigen::Index start, Eigen::Index len,
                      Eigen::MatrixXd& out) const override {
    if (start + len <= basis_.G.rows()) return false;
    Eigen::MatrixXd x_scratch;
    out = at_z_.cross(source_.block(start, len, x_scratch));
    return true;
  }
  const InducingBasis& basis() const { return basis_; }
  const RowSource& source() const { return source_; }

 private:
  const RowSource& source_;
  const InducingBasis& basis_;
  const Eigen::Ref<const Eigen::MatrixXd> held_;  // basis_.G
  const KernelEvaluator at_z_;
};

// EP with the FITC prior.  result.chol is the m x m factor of
// A = I + G' W G and result.low_rank_mean the posterior mean beta of the
// whitened inducing values.
template <class Likelihood>
EpResult ep_fit_inducing(const InducingRows& rows, const Eigen::VectorXd& targets,
                         const Likelihood& lik, const EpControl& control,
                         const std::function<void()>& interrupt, const EpAdjust& adjust = {}) {
  LowRankPrior prior(rows, rows.basis().lambda);
  return ep_run(prior, targets, lik, control, interrupt, adjust);
}

// The same with a basis that holds every row of G.
template <class Likelihood>
EpResult ep_fit_inducing(const InducingBasis& b, const Eigen::VectorXd& targets,
                         const Likelihood& lik, const EpControl& control,
                         const std::function<void()>& interrupt, const EpAdjust& adjust = {}) {
  LowRankPrior prior(b.G, b.lambda);
  return ep_run(prior, targets, lik, control, interrupt, adjust);
}

// What predictions read, and the fit's own values at the training inputs
// as at new ones: a new input x has latent mean a' beta and variance
// k(x, x) - |a|^2 + |L_A^-1 a|^2 with a = L^-1 k_m(x), so the mean is
// k_m(x)' c with c = L^-T beta.
struct InducingSummary {
  Eigen::VectorXd weights;        // c = L^-T beta: mean = sum_j k(x, z_j) c_j
  Eigen::VectorXd fitted;         // predictive means at the training inputs, G beta
  Eigen::VectorXd fitted_variance;  // predictive latent variances there
};

inline InducingSummary inducing_summary(const InducingBasis& b, const RowSource& rows,
                                        const EpResult& r) {
  if (r.low_rank_variance.size() != rows.rows())
    throw std::logic_error("inducing_summary() needs the FITC posterior's q_i");
  InducingSummary out;
  out.weights = b.chol.triangularView<Eigen::Lower>().transpose().solve(r.low_rank_mean);
  // (G beta as the last posterior left it, else one more pass over G)
  out.fitted = r.low_rank_fitted.size() == rows.rows() ? r.low_rank_fitted
                                                       : factor_times(rows, r.low_rank_mean);
  // the latent variance: K_fitc's diagonal without the extra diagonal, less
  // what the sites explain (the posterior's q_i, ep_engine.hpp)
  out.fitted_variance =
      (b.lambda.array() - b.extra_diagonal).max(0.0).matrix() + r.low_rank_variance;
  return out;
}

// The same with a basis that holds every row of G.
inline InducingSummary inducing_summary(const InducingBasis& b, const EpResult& r) {
  return inducing_summary(b, HeldRows(b.G), r);
}

// The kernel part of the evidence gradient of a FITC fit,
//   1/2 tr(M dK_fitc / d theta),  M = w w' - R,  R = (K_fitc + S^-1)^-1,
// for theta = log sigma (Gaussian kernel, inducing inputs fixed; also split
// by input coordinate, as for the dense prior in ep_gradient.hpp) and for a
// variance v added to every diagonal entry (dK / dv = I).
//   With B = (K_mm + jI)^-1 K_mn = L^-T G', Q = K_nm B, and the jitter held
// fixed (it scales with the mean diagonal of K_mm, which the width does not
// change), dQ = dK_nm B + B' dK_mn - B' dK_mm B, and since the diagonal of
// K_fitc is K's own (d k_ii / d log sigma = 0), dK_fitc is dQ without its
// diagonal; so with M~ = M with a zero diagonal
//   tr(M dK_fitc) = 2 tr(B M~ dK_nm) - tr(B M~ B' dK_mm).
// R = W - (W G) P (W G)' (P = A^-1 = L_A^-T L_A^-1, W = tau / (1 + lambda tau)),
// so M~ = w w' + (W G) P (W G)' - diag(e), e_i = w_i^2 + W_i^2 q_i >= 0 with
// q_i = g_i' P g_i = |L_A^-1 g_i|^2.
//   Every product with B is moved to the m x m side: a pass over blocks of
// rows forms G'w, G' W G and G' diag(e) G (q is the posterior's,
// EpPosterior::low_rank_variance), and B's factor L^-T is applied to those;
// a second pass forms B M~ = L^-T Y block by block,
// Y = -G' diag(e) + (G'w) w' + L' (B W G) P (W G)'.  In units of n m^2
// multiply-adds (an EP sweep costs about two): the two Gram matrices 1/2
// each (symmetric rank updates; 1 for G' W G when some W_i < 0), Y 1 and
// L^-T Y 1/2.  Memory O(m^2 + block m) beyond the basis.  The kernel
// derivatives: log_width_contraction() (kernels.hpp), a block of rows at a
// time.
struct InducingKernelGradient {
  double log_width = 0.0;  // 0 unless the kernel is Gaussian
  // the same split by input coordinate c: the derivative in log sigma_c
  // when each coordinate has a width of its own, at the kernel's common
  // width (sums to log_width; empty unless the kernel is Gaussian)
  Eigen::VectorXd per_input_log_width;
  double diagonal = 0.0;  // 1/2 (w'w - tr R)
};

// A += X' diag(d) X in A's lower triangle, as symmetric rank updates (one
// for the rows with d_i >= 0, one more if some d_i < 0).
inline void add_weighted_gram(Eigen::MatrixXd& A, const Eigen::Ref<const Eigen::MatrixXd>& X,
                              const Eigen::VectorXd& d) {
  A.selfadjointView<Eigen::Lower>().rankUpdate(
      X.transpose() * d.cwiseMax(0.0).cwiseSqrt().asDiagonal());
  if (d.minCoeff() < 0.0) {
    A.selfadjointView<Eigen::Lower>().rankUpdate(
        X.transpose() * (-d).cwiseMax(0.0).cwiseSqrt().asDiagonal(), -1.0);
  }
}

// The same for `weights` with one column per latent function sharing the
// prior and R counted `copies` times (the joint classifier of
// multiclass.hpp: M = W W' - c R), from the sites' precisions `tau`, the
// posterior's q_i and the factor L_A of A.
inline InducingKernelGradient inducing_kernel_gradient(
    const Kernel& kernel, const InducingRows& rows, const Eigen::VectorXd& tau,
    const ConstMatrixRef& weights, const Eigen::VectorXd& q_all, const Eigen::MatrixXd& chol_a,
    double copies, const std::function<void()>& interrupt = nullptr) {
  const InducingBasis& b = rows.basis();
  const Eigen::Index n = rows.rows(), m = rows.cols(), k = weights.cols();
  Eigen::MatrixXd scratch;
  if (q_all.size() != n)
    throw std::logic_error("inducing_kernel_gradient() needs the FITC posterior's q_i");
  const Eigen::VectorXd W =
      tau.cwiseQuotient((1.0 + b.lambda.array() * tau.array()).matrix());
  const auto LA = chol_a.triangularView<Eigen::Lower>();
  const auto Lt = b.chol.triangularView<Eigen::Lower>().transpose();
  const Eigen::Index block = 1024;
  // pass 1: e, tr R, G'w, G' W G, G' diag(e) G
  Eigen::MatrixXd Gw = Eigen::MatrixXd::Zero(m, k);
  Eigen::VectorXd e(n);
  Eigen::MatrixXd GWG = Eigen::MatrixXd::Zero(m, m), GeG = Eigen::MatrixXd::Zero(m, m);
  double trace_r = 0.0;
  InterruptPoll poll(interrupt);
  // (one thread: its blocks add to the same sums, in row order)
  blocks_in_rounds(n, block, 1, poll, [&](Eigen::Index s, Eigen::Index len, int) {
    const FactorBlock Gb = rows.block(s, len, scratch);
    const Eigen::ArrayXd q = q_all.segment(s, len).array();
    const Eigen::ArrayXd Wb = W.segment(s, len).array();
    e.segment(s, len) =
        weights.middleRows(s, len).rowwise().squaredNorm().array() + copies * Wb.square() * q;
    trace_r += (Wb - Wb.square() * q).sum();
    Gw.noalias() += Gb.transpose() * weights.middleRows(s, len);
    add_weighted_gram(GWG, Gb, W.segment(s, len));
    add_weighted_gram(GeG, Gb, e.segment(s, len));
  });
  InducingKernelGradient out;
  out.diagonal = 0.5 * (weights.squaredNorm() - copies * trace_r);
  if (!kernel.radial()) return out;
  // B w, B W G and B diag(e) B' = L^-T (G' diag(e) G) L^-1
  const Eigen::MatrixXd Bw = Lt.solve(Gw);
  const Eigen::MatrixXd BWG = Lt.solve(Eigen::MatrixXd(GWG.selfadjointView<Eigen::Lower>()));
  const Eigen::MatrixXd GeG_Linv =
      Lt.solve(Eigen::MatrixXd(GeG.selfadjointView<Eigen::Lower>())).transpose();
  const Eigen::MatrixXd BeB = Lt.solve(GeG_Linv);
  // tr(B M~ B' dK_mm), B M~ B' = (B w)(B w)' + c (B W G) P (B W G)' - B diag(e) B'
  Eigen::MatrixXd U = BWG.transpose();
  LA.solveInPlace(U);  // L_A^-1 (B W G)', so (B W G) P = U' L_A^-1
  const Eigen::MatrixXd C = Bw * Bw.transpose() + copies * (U.transpose() * U) - BeB;
  const Eigen::VectorXd t2 = log_width_contraction(kernel, C, b.inducing, b.inducing);
  // pass 2: tr(B M~ dK_nm), B M~ = L^-T Y a block of columns at a time
  Eigen::MatrixXd BWGP_t = U;
  LA.transpose().solveInPlace(BWGP_t);  // L_A^-T U = ((B W G) P)'
  Eigen::MatrixXd LtBWGP = Lt * BWGP_t.transpose();  // c L' (B W G) P
  LtBWGP *= copies;
  // (each block its own scratch: the blocks may run on several threads,
  // where the row source allows it)
  const int pass_threads = rows.concurrent() ? threads_for_pass(n, m) : 1;
  const Eigen::VectorXd t1 = sum_of_block_terms(n, block, pass_threads, rows.source().cols(), poll,
                                                 [&](Eigen::Index s, Eigen::Index len) {
    Eigen::MatrixXd block_scratch, block_x;
    const FactorBlock Gb = rows.block(s, len, block_scratch);
    Eigen::MatrixXd Y = -(Gb.transpose() * e.segment(s, len).asDiagonal());
    Y.noalias() += Gw * weights.middleRows(s, len).transpose();
    Y.noalias() += LtBWGP * (W.segment(s, len).asDiagonal() * Gb).transpose();
    Lt.solveInPlace(Y);
    return Eigen::VectorXd(
        log_width_contraction(kernel, Y, rows.source().block(s, len, block_x), b.inducing));
  });
  out.per_input_log_width = 0.5 * (2.0 * t1 - t2);
  out.log_width = out.per_input_log_width.sum();
  return out;
}

// The same for training inputs x held in memory.
inline InducingKernelGradient inducing_kernel_gradient(
    const Kernel& kernel, const ConstMatrixRef& x, const InducingBasis& b,
    const Eigen::VectorXd& tau, const ConstMatrixRef& weights, const Eigen::VectorXd& q_all,
    const Eigen::MatrixXd& chol_a, double copies,
    const std::function<void()>& interrupt = nullptr) {
  const HeldRows source(x);
  return inducing_kernel_gradient(kernel, InducingRows(kernel, source, b), tau, weights, q_all,
                                  chol_a, copies, interrupt);
}

// EP's: one latent function, its sites and posterior in r.
inline InducingKernelGradient inducing_kernel_gradient(
    const Kernel& kernel, const InducingRows& rows, const EpResult& r,
    const std::function<void()>& interrupt = nullptr) {
  const Eigen::Map<const Eigen::MatrixXd> w(r.weights.data(), r.weights.size(), 1);
  return inducing_kernel_gradient(kernel, rows, r.site_precision, w, r.low_rank_variance,
                                  r.chol, 1.0, interrupt);
}
inline InducingKernelGradient inducing_kernel_gradient(
    const Kernel& kernel, const ConstMatrixRef& x, const InducingBasis& b, const EpResult& r,
    const std::function<void()>& interrupt = nullptr) {
  const HeldRows source(x);
  return inducing_kernel_gradient(kernel, InducingRows(kernel, source, b), r, interrupt);
}

}  // namespace gpsvm

#endif  // GPSVM_FITC_HPP
