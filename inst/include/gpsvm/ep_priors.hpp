// Representations of the prior covariance K for the EP engine
// (ep_engine.hpp).  Each turns sites (tau, nu) into the Gaussian posterior
// N(mu, Sigma), Sigma = (K^-1 + S)^-1, mu = Sigma nu, S = diag(tau), at the
// training points, without ever forming 1/tau (which is infinite for sites
// at tau = 0).
//
// The interface a Prior offers the engine:
//
//   Eigen::Index size() const;
//       the number of training points (sites).
//   void posterior(const VectorXd& tau, const VectorXd& nu, EpPosterior& post,
//                  const std::function<void()>& interrupt);
//       the posterior of these sites from a fresh factorisation: fills
//       post.weights, post.mean, post.variance, post.log_det_half = 1/2 log
//       det(I + S^1/2 K S^1/2) and the representation's own factors (chol,
//       factor), which predictions use (ep_predict.hpp); throws
//       std::runtime_error when a factorisation fails.  Work that can take
//       more than a fraction of a second calls `interrupt` (which may be
//       empty) in between.
//   void begin_sequential(const EpPosterior& post, const VectorXd& nu,
//                         const std::function<void()>& interrupt);
//   void marginal(Index i, double* var, double* mean) const;
//   void update_site(Index i, double dtau, double dnu, const VectorXd& nu);
//   void end_sequential();
//       the sequential schedule: starting from `post` (the posterior of the
//       sites nu), the current marginal of site i, and a rank-one update
//       after site i changed by (dtau, dnu) (nu already holds the new value).
//
// Two representations are here: DensePrior (K itself, O(n^3) per
// posterior) and LowRankPrior (K = G G' + diag(lambda) with G n x r,
// O(n r^2): the inducing-point (FITC) prior of fitc.hpp, also made from a
// pivoted Cholesky factor of K).  A new one implements the same six members,
// and, if its factors differ from these, its own predictions (as
// fitc_predict() in ep_predict.hpp) and gradients.
//
// Pure C++17 + Eigen: no R headers.
#ifndef GPSVM_EP_PRIORS_HPP
#define GPSVM_EP_PRIORS_HPP

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include "dense.hpp"
#include "ep_engine.hpp"
#include "threads.hpp"

namespace gpsvm {

// A block of rows of a low-rank factor G (n x r) as a prior reads it: a view
// of rows held in memory or of rows just computed into a caller's scratch.
using FactorBlock = Eigen::Map<const Eigen::MatrixXd, 0, Eigen::OuterStride<>>;

// Rows [start, start + len) of a column-major matrix, as such a view.
inline FactorBlock row_block(const Eigen::Ref<const Eigen::MatrixXd>& m, Eigen::Index start,
                             Eigen::Index len) {
  return FactorBlock(m.data() + start, len, m.cols(), Eigen::OuterStride<>(m.outerStride()));
}

// Rows of a matrix, read a block of rows (or one row) at a time: the one
// interface through which LowRankPrior reads its factor G and a FITC fit
// reads its training inputs.  Held in memory (HeldRows), recomputed from
// other rows whenever they are read (fitc.hpp's InducingRows: memory
// O(block r) instead of O(n r), for data whose n x r factor does not fit),
// or delivered by a reader of files or partitions of the data (the R
// glue's).  rows() is fixed; block() may be called from several threads at
// once, each with its own `scratch`, when concurrent() says so, and must
// give the same numbers for a row whichever block it is read in.
class RowSource {
 public:
  virtual ~RowSource() = default;
  virtual Eigen::Index rows() const = 0;
  virtual Eigen::Index cols() const = 0;
  // rows [start, start + len): a view of held rows or of `scratch`
  virtual FactorBlock block(Eigen::Index start, Eigen::Index len,
                            Eigen::MatrixXd& scratch) const = 0;
  // the whole matrix when every row is held, else nullptr (whole-matrix
  // products then replace the sums over blocks)
  virtual const Eigen::Ref<const Eigen::MatrixXd>* held() const { return nullptr; }
  // whether block() may be called from several threads at once
  virtual bool concurrent() const { return true; }
  // For a source that computes the rows it does not hold as R L^-T (R rows
  // of another matrix, L lower triangular; fitc.hpp's InducingRows): L, else
  // nullptr.  A caller that solves a block with a triangular factor of its
  // own anyway (LowRankPrior::row_marginals, with L_A) then reads R through
  // unsolved_block() and solves once, with L L_A, instead of twice: of the
  // m^2 work per recomputed row it saves one of the two solves.
  virtual const Eigen::MatrixXd* solve_factor() const { return nullptr; }
  // R's rows [start, start + len) into `out` when block() would compute
  // them; false, with `out` untouched, when those rows are held.
  virtual bool unsolved_block(Eigen::Index /*start*/, Eigen::Index /*len*/,
                              Eigen::MatrixXd& /*out*/) const {
    return false;
  }
};

// A matrix held in memory (not copied: it must outlive this).
class HeldRows final : public RowSource {
 public:
  explicit HeldRows(const Eigen::Ref<const Eigen::MatrixXd>& x) : x_(x) {}
  Eigen::Index rows() const override { return x_.rows(); }
  Eigen::Index cols() const override { return x_.cols(); }
  FactorBlock block(Eigen::Index start, Eigen::Index len, Eigen::MatrixXd&) const override {
    return row_block(x_, start, len);
  }
  const Eigen::Ref<const Eigen::MatrixXd>* held() const override { return &x_; }

 private:
  const Eigen::Ref<const Eigen::MatrixXd> x_;
};

// G' v and G v, over blocks of rows when G is not held.
inline Eigen::VectorXd factor_transpose_times(const RowSource& g, const Eigen::VectorXd& v,
                                              Eigen::Index block = 256) {
  if (const auto* G = g.held()) return G->transpose() * v;
  Eigen::VectorXd out = Eigen::VectorXd::Zero(g.cols());
  Eigen::MatrixXd scratch;
  for (Eigen::Index s = 0; s < g.rows(); s += block) {
    const Eigen::Index len = std::min(block, g.rows() - s);
    out.noalias() += g.block(s, len, scratch).transpose() * v.segment(s, len);
  }
  return out;
}
inline Eigen::VectorXd factor_times(const RowSource& g, const Eigen::VectorXd& beta,
                                    Eigen::Index block = 256) {
  if (const auto* G = g.held()) return *G * beta;
  Eigen::VectorXd out(g.rows());
  Eigen::MatrixXd scratch;
  for (Eigen::Index s = 0; s < g.rows(); s += block) {
    const Eigen::Index len = std::min(block, g.rows() - s);
    out.segment(s, len).noalias() = g.block(s, len, scratch) * beta;
  }
  return out;
}

// K held densely.  The posterior comes from the Cholesky factor L of
// B = I + S^1/2 K S^1/2, whose eigenvalues are >= 1, and
// (K + S^-1)^-1 = S^1/2 B^-1 S^1/2.  Work per posterior: one Cholesky of B
// (n^3 / 3 flops) and the variances, which take one of two routes (see
// variances()): from the diagonal of B^-1 (another n^3 / 3) plus a
// triangular solve for the few sites whose precision hardly moves their
// marginal (n^2 a site), or from a triangular solve with all n columns
// (n^3), whichever the last posterior's sites make cheaper.  All of it is
// matrix-matrix work in blocks, with the interrupt callback between blocks.
class DensePrior {
 public:
  explicit DensePrior(const Eigen::MatrixXd& K) : K_(K) {}
  Eigen::Index size() const { return K_.rows(); }

  void posterior(const Eigen::VectorXd& tau, const Eigen::VectorXd& nu, EpPosterior& r,
                 const std::function<void()>& interrupt = nullptr) {
    tau_ = tau;
    const Eigen::VectorXd sw = tau.cwiseSqrt();
    factor_b(sw, r);
    // (B = I at the prior, where every run from scratch starts)
    if (tau.size() > 0 && tau.maxCoeff() > 0.0 && !cholesky_in_place(r.chol, interrupt))
      throw std::runtime_error("Cholesky factorisation of I + S^1/2 K S^1/2 failed");
    r.chol.triangularView<Eigen::StrictlyUpper>().setZero();  // unused, but not left unset
    r.weights = weights(sw, nu, r.chol);
    r.mean.noalias() = K_ * r.weights;
    variances(sw, r, interrupt);
    r.log_det_half = r.chol.diagonal().array().log().sum();
  }

  // Sequential schedule: Sigma = K - V'V (V = L^-1 S^1/2 K) from the last
  // posterior, then rank-one updates.
  void begin_sequential(const EpPosterior& r, const Eigen::VectorXd& /*nu*/,
                        const std::function<void()>& interrupt = nullptr) {
    const Eigen::VectorXd sw = tau_.cwiseSqrt();
    work_ = sw.asDiagonal() * K_;
    solve_lower_in_place(r.chol, work_, interrupt);
    // the lower triangle a block of columns at a time (each its own), then
    // its mirror
    const Eigen::Index n = K_.rows();
    sigma_ = K_;
    InterruptPoll poll(interrupt);
    blocks_in_rounds(n, kColumnBlock, threads_for_dense(n), poll,
                     [&](Eigen::Index j, Eigen::Index len, int) {
                       sigma_.block(j, j, n - j, len).noalias() -=
                           work_.middleCols(j, n - j).transpose() * work_.middleCols(j, len);
                     });
    sigma_.triangularView<Eigen::StrictlyUpper>() = sigma_.transpose();
    work_.resize(0, 0);
    mu_ = r.mean;
  }
  void marginal(Eigen::Index i, double* var, double* mean) const {
    *var = sigma_(i, i);
    *mean = mu_[i];
  }
  // After site i changed by (dtau, dnu): Sigma' = Sigma - c s s' with
  // s = Sigma e_i, c = dtau / (1 + dtau s_i), and
  // mu' = Sigma' nu' = mu + s (dnu - dtau mu_i) / (1 + dtau s_i), O(n)
  // (the refresh after each sweep bounds the drift of both).
  void update_site(Eigen::Index i, double dtau, double dnu, const Eigen::VectorXd& /*nu*/) {
    const Eigen::VectorXd si = sigma_.col(i);
    const double denom = 1.0 + dtau * si[i];
    sigma_.noalias() -= (dtau / denom) * si * si.transpose();
    mu_ += ((dnu - dtau * mu_[i]) / denom) * si;
  }
  void end_sequential() { sigma_.resize(0, 0); }

 private:
  static constexpr Eigen::Index kColumnBlock = 256;

  // The lower triangle of B = I + S^1/2 K S^1/2 in r.chol (no low-rank factor).
  void factor_b(const Eigen::VectorXd& sw, EpPosterior& r) const {
    const Eigen::Index n = K_.rows();
    r.chol.resize(n, n);
    for (Eigen::Index j = 0; j < n; ++j)
      r.chol.col(j).tail(n - j) = sw[j] * sw.tail(n - j).cwiseProduct(K_.col(j).tail(n - j));
    r.chol.diagonal().array() += 1.0;
  }

  // w = (K + S^-1)^-1 S^-1 nu = S^1/2 B^-1 S^-1/2 nu for sites with tau > 0:
  // no cancellation however large tau is (the textbook form
  // nu - S^1/2 B^-1 S^1/2 K nu subtracts numbers of size tau).  Sites
  // clamped at tau = 0 with nu != 0 (a pure linear tilt) take the textbook
  // form, which is exact for them and small.
  Eigen::VectorXd weights(const Eigen::VectorXd& sw, const Eigen::VectorXd& nu,
                          const Eigen::MatrixXd& chol) const {
    const Eigen::Index n = K_.rows();
    const auto L = chol.triangularView<Eigen::Lower>();
    Eigen::VectorXd b = Eigen::VectorXd::Zero(n), tilt = Eigen::VectorXd::Zero(n);
    bool any_tilt = false;
    for (Eigen::Index i = 0; i < n; ++i) {
      if (sw[i] > 0.0) {
        b[i] = nu[i] / sw[i];
      } else if (nu[i] != 0.0) {
        tilt[i] = nu[i];
        any_tilt = true;
      }
    }
    L.solveInPlace(b);
    L.adjoint().solveInPlace(b);
    Eigen::VectorXd w = sw.cwiseProduct(b);
    if (any_tilt) {
      Eigen::VectorXd tmp = sw.cwiseProduct(K_ * tilt);
      L.solveInPlace(tmp);
      L.adjoint().solveInPlace(tmp);
      w += tilt - sw.cwiseProduct(tmp);
    }
    return w;
  }

  // The posterior variances Sigma_ii, by one of two routes:
  //   direct:  Sigma_ii = K_ii - |V_i|^2, V = L^-1 S^1/2 K, which loses
  //            log10(K_ii / Sigma_ii) digits;
  //   inverse: Sigma_ii = (1 - (B^-1)_ii) / tau_i, from (K^-1 + S)^-1 =
  //            S^-1/2 (I - B^-1) S^-1/2, which loses log10(1 / (tau_i Sigma_ii)).
  // Every site whose tau_i Sigma_ii = 1 - (B^-1)_ii is at least
  // kLooseSite takes the inverse route (at most 3 digits lost; fewer than the
  // direct route whenever tau_i K_ii > 1), the others the direct one (sites at
  // tau_i = 0 among them).  The diagonal of B^-1 costs as much as the
  // factorisation and the direct route n^2 a site: when the last posterior
  // had more than kDirectFraction of its sites below kLooseSite, V is formed
  // in full (n^3) and the inverse route taken only where the direct one
  // loses more digits (refine_tight_variances()).
  void variances(const Eigen::VectorXd& sw, EpPosterior& r,
                 const std::function<void()>& interrupt) {
    const Eigen::Index n = K_.rows();
    r.variance.resize(n);
    if (!(tau_.size() > 0 && tau_.maxCoeff() > 0.0)) {
      r.variance = K_.diagonal();  // the prior's (which says nothing of the next sites)
      return;
    }
    if (loose_fraction_ > kDirectFraction) {
      work_ = sw.asDiagonal() * K_;
      solve_lower_in_place(r.chol, work_, interrupt);
      for (Eigen::Index i = 0; i < n; ++i) r.variance[i] = K_(i, i) - work_.col(i).squaredNorm();
      work_.resize(0, 0);
      refine_tight_variances(r);
    } else {
      const Eigen::VectorXd binv = inverse_diagonal_from_cholesky(r.chol, interrupt);
      std::vector<Eigen::Index> loose;
      for (Eigen::Index i = 0; i < n; ++i) {
        const double pinned = 1.0 - binv[i];  // tau_i Sigma_ii
        if (tau_[i] > 0.0 && pinned >= kLooseSite) r.variance[i] = pinned / tau_[i];
        else loose.push_back(i);
      }
      direct_variances(sw, loose, r, interrupt);
    }
    Eigen::Index count = 0;
    for (Eigen::Index i = 0; i < n; ++i) count += tau_[i] * r.variance[i] < kLooseSite;
    loose_fraction_ = static_cast<double>(count) / static_cast<double>(std::max<Eigen::Index>(n, 1));
  }

  // The direct route for the sites in `which`, a block of columns of V at a
  // time.
  void direct_variances(const Eigen::VectorXd& sw, const std::vector<Eigen::Index>& which,
                        EpPosterior& r, const std::function<void()>& interrupt) {
    const Eigen::Index n = K_.rows(), count = static_cast<Eigen::Index>(which.size());
    const int threads = threads_for_dense(n);
    std::vector<Eigen::MatrixXd> work(static_cast<std::size_t>(threads),
                                      Eigen::MatrixXd(n, std::min(kColumnBlock, count)));
    InterruptPoll poll(interrupt);
    blocks_in_rounds(count, kColumnBlock, threads, poll,
                     [&](Eigen::Index s, Eigen::Index len, int slot) {
      auto block = work[static_cast<std::size_t>(slot)].leftCols(len);
      for (Eigen::Index j = 0; j < len; ++j)
        block.col(j) = sw.cwiseProduct(K_.col(which[static_cast<std::size_t>(s + j)]));
      r.chol.triangularView<Eigen::Lower>().solveInPlace(block);
      for (Eigen::Index j = 0; j < len; ++j) {
        const Eigen::Index i = which[static_cast<std::size_t>(s + j)];
        r.variance[i] = K_(i, i) - block.col(j).squaredNorm();
      }
    });
  }

  // After the direct route: the inverse route for sites that pin the
  // posterior (huge C: Sigma_ii ~ 1e-6 K_ii), where it is the smaller loss.
  // Work: one triangular solve per such site.
  void refine_tight_variances(EpPosterior& r) const {
    std::vector<Eigen::Index> tight;
    for (Eigen::Index i = 0; i < tau_.size(); ++i) {
      const double s2 = r.variance[i];
      if (tau_[i] > 0.0 && s2 > 0.0 && K_(i, i) > 1e3 * s2 && tau_[i] * s2 > 1e-2 &&
          (1.0 - tau_[i] * s2) / (tau_[i] * s2) < K_(i, i) / s2)
        tight.push_back(i);
    }
    if (tight.empty()) return;
    const Eigen::Index n = tau_.size();
    Eigen::MatrixXd e = Eigen::MatrixXd::Zero(n, static_cast<Eigen::Index>(tight.size()));
    for (std::size_t j = 0; j < tight.size(); ++j) e(tight[j], static_cast<Eigen::Index>(j)) = 1.0;
    r.chol.triangularView<Eigen::Lower>().solveInPlace(e);
    for (std::size_t j = 0; j < tight.size(); ++j) {
      const Eigen::Index i = tight[j];
      const double binv = e.col(static_cast<Eigen::Index>(j)).squaredNorm();
      r.variance[i] = (1.0 - binv) / tau_[i];
    }
  }

  // A site's tau_i Sigma_ii below which its variance takes the direct route,
  // and the fraction of such sites above which all of V is formed.
  static constexpr double kLooseSite = 1e-3;
  static constexpr double kDirectFraction = 2.0 / 3.0;

  const Eigen::MatrixXd& K_;
  Eigen::VectorXd tau_;        // the sites of the last posterior
  double loose_fraction_ = 0.0;  // of the last posterior's sites, below kLooseSite
  Eigen::MatrixXd work_, sigma_;
  Eigen::VectorXd mu_;
};

// K = G G' + diag(lambda) with G n x r and lambda >= 0: the inducing-point
// (FITC) prior (fitc.hpp: G = K_nm L_mm^-T, lambda = diag(K - G G') plus
// any noise; on a pivoted Cholesky factor's pivots, G is that factor).
// Read f = G u + e with u ~ N(0, I) and e ~ N(0, diag(lambda)) independent:
// integrating e_i out of site i leaves a site on (G u)_i of precision
// W_i = tau_i t_i and precision-mean t_i nu_i, t_i = 1 / (1 + lambda_i tau_i)
// (in (0, 1], finite for any tau; t = 1, W = tau when lambda = 0).  The
// posterior of u has precision A = I + G' W G and mean beta = A^-1 G' (t nu),
// and that of f is
//   Sigma = diag(d) + diag(t) G A^-1 G' diag(t),  d = lambda t,
//   mu    = t (G beta) + d nu,
// and (K + S^-1)^-1 = W - W G A^-1 G' W (Woodbury), det B = det A prod 1/t_i,
// so w = (K + S^-1)^-1 S^-1 nu = t nu - W G beta with no 1/tau anywhere.
// Work per posterior O(n r^2), memory O(n r) (the n x r products are formed
// in blocks of rows, split between threads on large n: threads.hpp; G is
// read through RowSource, so its rows may be recomputed instead of held,
// and then G' (t nu) and G beta are summed over the same blocks); per
// sequential site update O(r^2): P = A^-1 and
// h = G' (t nu) are kept and changed by rank one, as GPML's infFITC_EP keeps
// its representation (it updates a Cholesky factor; P itself is as cheap
// and a refresh after every sweep bounds the drift of either).
class LowRankPrior {
 public:
  // K = G G' + diag(lambda); G is not copied into the result (at n x r it
  // would double the memory), and result.low_rank_mean holds beta.
  LowRankPrior(const Eigen::MatrixXd& G, const Eigen::VectorXd& lambda)
      : LowRankPrior(std::unique_ptr<HeldRows>(new HeldRows(G)), lambda) {}
  // The same with G's rows read from `rows` (held or recomputed), which
  // must outlive the prior.
  LowRankPrior(const RowSource& rows, const Eigen::VectorXd& lambda)
      : rows_(&rows), lambda_(lambda) {
    check_lambda();
  }
  Eigen::Index size() const { return rows_->rows(); }

  void posterior(const Eigen::VectorXd& tau, const Eigen::VectorXd& nu, EpPosterior& r,
                 const std::function<void()>& interrupt = nullptr) {
    tau_ = tau;
    if (at_prior(tau, nu)) {
      r.chol = Eigen::MatrixXd::Identity(rows_->cols(), rows_->cols());
      prior_marginals(r);
      return;
    }
    const Eigen::VectorXd beta = factor_sums(site_sums(tau, nu, interrupt), r);
    r.log_det_half = r.chol.diagonal().array().log().sum();
    row_marginals(tau, nu, beta, r, interrupt);
  }

  // A posterior in three steps, for rows held apart (ep_split.hpp): each
  // holder's site_sums(), added; factor_sums() once; each holder's
  // row_marginals().  site_sums(): I + G' W G (lower triangle) in the first
  // r columns, G' (t nu) in the last (without I when not `identity`).
  Eigen::MatrixXd site_sums(const Eigen::VectorXd& tau, const Eigen::VectorXd& nu,
                            const std::function<void()>& interrupt = nullptr,
                            bool identity = true) const {
    const Eigen::Index n = rows_->rows(), rank = rows_->cols();
    const auto* G = rows_->held();
    Eigen::VectorXd t, W;
    scales(tau, t, W);
    const Eigen::VectorXd tnu = t.cwiseProduct(nu);
    // A and, when G is not held, G' (t nu) in one pass
    Eigen::MatrixXd sums = Eigen::MatrixXd::Zero(rank, G ? rank : rank + 1);
    if (identity) sums.diagonal().setOnes();
    const int threads = rows_->concurrent() ? threads_for_pass(n, rank) : 1;
    sum_over_row_blocks(n, kRowBlock, threads, sums,
                        [&](Eigen::Index s, Eigen::Index len, Eigen::MatrixXd& partial) {
                          Eigen::MatrixXd scratch;
                          add_site_sums(rows_->block(s, len, scratch), W.segment(s, len),
                                        tnu.segment(s, len), partial);
                        },
                        interrupt);
    if (G) {
      sums.conservativeResize(rank, rank + 1);
      sums.col(rank).noalias() = G->transpose() * tnu;
    }
    return sums;
  }
  // The factor L_A of A (r.chol) from the summed site_sums(); returns beta.
  static Eigen::VectorXd factor_sums(const Eigen::MatrixXd& sums, EpPosterior& r) {
    const Eigen::Index rank = sums.rows();
    r.chol = sums.leftCols(rank);
    Eigen::LLT<Eigen::Ref<Eigen::MatrixXd>, Eigen::Lower> llt(r.chol);
    if (llt.info() != Eigen::Success)
      throw std::runtime_error("Cholesky factorisation of I + G' S G failed");
    r.chol.triangularView<Eigen::StrictlyUpper>().setZero();
    Eigen::VectorXd beta = sums.col(rank);
    llt.solveInPlace(beta);
    return beta;
  }
  // The rows' marginals given L_A (r.chol) and beta: mean, variance,
  // weights, low_rank_variance, low_rank_mean and low_rank_fitted; adds the rows' part of
  // 1/2 log det B to r.log_det_half.
  void row_marginals(const Eigen::VectorXd& tau, const Eigen::VectorXd& nu,
                     const Eigen::VectorXd& beta, EpPosterior& r,
                     const std::function<void()>& interrupt = nullptr) const {
    const Eigen::Index n = rows_->rows(), rank = rows_->cols();
    if (at_prior(tau, nu) && at_identity(r.chol, beta)) {
      // (a split run's first posterior: the solves with L_A = I would copy
      // G's rows, so the prior's marginals are the same numbers for a pass
      // of O(n m) instead of O(n m^2))
      const double log_det_half = r.log_det_half;
      prior_marginals(r);
      r.log_det_half = log_det_half;
      return;
    }
    const auto* G = rows_->held();
    Eigen::VectorXd t, W;
    scales(tau, t, W);
    const auto L = r.chol.triangularView<Eigen::Lower>();
    Eigen::VectorXd g_beta = G ? Eigen::VectorXd(*G * beta) : Eigen::VectorXd(n);
    r.variance.resize(n);
    r.low_rank_variance.resize(n);
    const int threads = rows_->concurrent() ? threads_for_pass(n, rank) : 1;
    // rows recomputed as g_i = L^-1 k_i (RowSource::solve_factor()): one
    // solve with L L_A gives v_i = L_A^-1 g_i, and g_i' beta = v_i' L_A' beta
    const Eigen::MatrixXd* Lk = G ? nullptr : rows_->solve_factor();
    Eigen::MatrixXd LLA;
    Eigen::VectorXd LAt_beta;
    if (Lk) {
      const Eigen::MatrixXd LA = L;  // (its upper triangle zero)
      LLA.noalias() = Lk->triangularView<Eigen::Lower>() * LA;
      LLA.triangularView<Eigen::StrictlyUpper>().setZero();
      LAt_beta.noalias() = LA.transpose() * beta;
    }
    // Sigma_ii = d_i + t_i^2 q_i, q_i = |L_A^-1 g_i|^2, a block of rows at a
    // time (FITC keeps q); G beta there too when G is not held
    for_row_blocks(n, kRowBlock, threads, [&](Eigen::Index s, Eigen::Index len) {
      Eigen::MatrixXd scratch, v;
      if (Lk && rows_->unsolved_block(s, len, scratch)) {
        v = scratch.transpose();
        LLA.triangularView<Eigen::Lower>().solveInPlace(v);
        g_beta.segment(s, len).noalias() = v.transpose() * LAt_beta;
      } else {
        const FactorBlock Gb = rows_->block(s, len, scratch);
        if (!G) g_beta.segment(s, len).noalias() = Gb * beta;
        v = Gb.transpose();
        L.solveInPlace(v);
      }
      const Eigen::VectorXd q = v.colwise().squaredNorm().transpose();
      r.low_rank_variance.segment(s, len) = q;
      r.variance.segment(s, len) = q.cwiseProduct(t.segment(s, len).cwiseAbs2());
    }, interrupt);
    r.mean = t.cwiseProduct(g_beta);
    r.weights = t.cwiseProduct(nu) - W.cwiseProduct(g_beta);
    const Eigen::VectorXd d = lambda_.cwiseProduct(t);
    r.mean += d.cwiseProduct(nu);
    r.variance += d;
    for (Eigen::Index i = 0; i < n; ++i) r.log_det_half += 0.5 * std::log1p(lambda_[i] * tau[i]);
    r.low_rank_mean = beta;
    r.low_rank_fitted = std::move(g_beta);
  }

  // One block's part of the sums over rows a posterior needs: the lower
  // triangle of G_b' W_b G_b added to the first r columns of `sums` and,
  // when it has r + 1, G_b' (t nu)_b to the last.  These r x r and r
  // numbers, added over blocks, are all a posterior takes from the rows
  // (the rest is per row), so blocks held apart (on disk, in other
  // processes) need exchange only them: see posterior().
  static void add_site_sums(const FactorBlock& Gb, const Eigen::Ref<const Eigen::VectorXd>& W,
                            const Eigen::Ref<const Eigen::VectorXd>& tnu, Eigen::MatrixXd& sums) {
    const Eigen::Index rank = Gb.cols();
    sums.leftCols(rank).selfadjointView<Eigen::Lower>().rankUpdate(
        (W.cwiseSqrt().asDiagonal() * Gb).transpose());
    if (sums.cols() > rank) sums.col(rank).noalias() += Gb.transpose() * tnu;
  }

  // Sequential schedule: keep P = A^-1 and h = G' (t nu); Sigma_ii =
  // d_i + t_i^2 g_i' P g_i, mu_i = t_i g_i' P h + d_i nu_i.
  void begin_sequential(const EpPosterior& r, const Eigen::VectorXd& nu,
                        const std::function<void()>& /*interrupt*/ = nullptr) {
    const Eigen::Index rank = rows_->cols();
    const auto L = r.chol.triangularView<Eigen::Lower>();
    p_ = Eigen::MatrixXd::Identity(rank, rank);
    L.solveInPlace(p_);
    p_ = (p_.transpose() * p_).eval();
    Eigen::VectorXd t, W;
    scales(tau_, t, W);
    h_ = factor_transpose_times(*rows_, t.cwiseProduct(nu), kRowBlock);
    nu_ = nu;
    row_at_ = -1;
  }
  void marginal(Eigen::Index i, double* var, double* mean) const {
    const FactorBlock g = row(i);
    const Eigen::VectorXd pg = p_ * g.row(0).transpose();
    const double t = scale_t(i, tau_[i]), d = lambda_[i] * t;
    *var = d + t * t * g.row(0).dot(pg);
    *mean = t * pg.dot(h_) + d * nu_[i];
  }
  void update_site(Eigen::Index i, double dtau, double dnu, const Eigen::VectorXd& nu) {
    const double old_t = scale_t(i, tau_[i]), old_w = tau_[i] * old_t;
    tau_[i] += dtau;
    const double new_t = scale_t(i, tau_[i]), dw = tau_[i] * new_t - old_w;
    const Eigen::VectorXd g = row(i).row(0).transpose();
    const Eigen::VectorXd pg = p_ * g;
    const double scale = dw / (1.0 + dw * g.dot(pg));
    p_.noalias() -= scale * pg * pg.transpose();
    h_ += (new_t * nu[i] - old_t * (nu[i] - dnu)) * g;
    nu_[i] = nu[i];
  }
  void end_sequential() {}

 private:
  // Rows per block of the sweep's two passes over G: a block's scaled copy
  // (256 x m doubles, 1 MB at m = 500) stays in a core's cache, where the
  // second pass finds it; larger blocks fall out of it.
  static constexpr Eigen::Index kRowBlock = 256;

  void check_lambda() const {
    if (lambda_.size() != rows_->rows())
      throw std::invalid_argument("the diagonal and the low-rank factor differ in size");
    if (!(lambda_.allFinite() && (lambda_.size() == 0 || lambda_.minCoeff() >= 0.0)))
      throw std::invalid_argument("the prior's diagonal must be finite and >= 0");
  }
  LowRankPrior(std::unique_ptr<HeldRows> own, const Eigen::VectorXd& lambda)
      : own_(std::move(own)), rows_(own_.get()), lambda_(lambda) {
    check_lambda();
  }

  // Row i of G, as a 1 x r block (the sequential schedule reads each row
  // twice in a row, marginal() then update_site(): a row not held is
  // computed once for both).
  FactorBlock row(Eigen::Index i) const {
    if (rows_->held()) return rows_->block(i, 1, row_scratch_);
    if (i != row_at_) {
      row_ = rows_->block(i, 1, row_scratch_);
      row_at_ = i;
    }
    return row_block(row_, 0, 1);
  }

  // All sites at 0 (every run from scratch starts there): A = I, so the
  // posterior is the prior, variances |g_i|^2 + lambda_i in one pass over G
  // instead of a sweep's two.  The same numbers the general route gives
  // (its products add zeros, its solve is with I and its sums run the same
  // way).
  static bool at_prior(const Eigen::VectorXd& tau, const Eigen::VectorXd& nu) {
    return (tau.array() == 0.0).all() && (nu.array() == 0.0).all();
  }
  // L_A and beta exactly those of sites at the prior (I and 0).
  static bool at_identity(const Eigen::MatrixXd& chol, const Eigen::VectorXd& beta) {
    if (chol.rows() != beta.size() || chol.cols() != beta.size() || !(beta.array() == 0.0).all())
      return false;
    for (Eigen::Index j = 0; j < chol.cols(); ++j)
      for (Eigen::Index i = j; i < chol.rows(); ++i)
        if (chol(i, j) != (i == j ? 1.0 : 0.0)) return false;
    return true;
  }
  void prior_marginals(EpPosterior& r) const {
    const Eigen::Index n = rows_->rows();
    r.mean = Eigen::VectorXd::Zero(n);
    r.weights = Eigen::VectorXd::Zero(n);
    r.variance.resize(n);
    const int threads = rows_->concurrent() ? threads_for_pass(n, rows_->cols()) : 1;
    for_row_blocks(n, kRowBlock, threads, [&](Eigen::Index s, Eigen::Index len) {
      Eigen::MatrixXd scratch;
      const Eigen::MatrixXd v = rows_->block(s, len, scratch).transpose();  // as posterior() sums
      r.variance.segment(s, len) = v.colwise().squaredNorm().transpose();
    });
    r.log_det_half = 0.0;
    r.low_rank_variance = r.variance;
    r.variance += lambda_;
    r.low_rank_mean = Eigen::VectorXd::Zero(rows_->cols());
    r.low_rank_fitted = Eigen::VectorXd::Zero(n);
  }

  double scale_t(Eigen::Index i, double tau) const {
    return 1.0 / (1.0 + lambda_[i] * tau);
  }
  void scales(const Eigen::VectorXd& tau, Eigen::VectorXd& t, Eigen::VectorXd& W) const {
    t = (1.0 + lambda_.array() * tau.array()).inverse().matrix();
    W = tau.cwiseProduct(t);
  }

  std::unique_ptr<HeldRows> own_;  // G given as a matrix
  const RowSource* rows_;
  Eigen::VectorXd lambda_;
  Eigen::VectorXd tau_;
  Eigen::MatrixXd p_;
  Eigen::VectorXd h_, nu_;
  mutable Eigen::Index row_at_ = -1;
  mutable Eigen::MatrixXd row_, row_scratch_;  // 1 x r
};

// EP on a kernel matrix K held densely.
template <class Likelihood>
EpResult ep_fit(const Eigen::MatrixXd& K, const Eigen::VectorXd& targets, const Likelihood& lik,
                const EpControl& control, const std::function<void()>& interrupt,
                const EpAdjust& adjust = {}) {
  if (K.rows() != K.cols()) throw std::invalid_argument("kernel matrix must be square");
  if (K.rows() != targets.size())
    throw std::invalid_argument("kernel matrix and targets differ in size");
  if (K.rows() < 1) throw std::invalid_argument("no training points");
  if (!K.allFinite() || !targets.allFinite())
    throw std::invalid_argument("kernel matrix and targets must be finite");
  DensePrior prior(K);
  return ep_run(prior, targets, lik, control, interrupt, adjust);
}

// (K + S^-1)^-1 = S^1/2 B^-1 S^1/2 from a dense fit, the matrix R of the
// evidence gradient 1/2 tr((w w' - R) dK/dtheta).  n^3 flops (B^-1 from its
// factor, dense.hpp); used only for hyperparameter gradients.
inline Eigen::MatrixXd ep_site_inverse(const EpResult& r,
                                       const std::function<void()>& interrupt = nullptr) {
  if (r.low_rank_mean.size() > 0)
    throw std::invalid_argument("an inducing-point fit has its own gradients (fitc.hpp)");
  const Eigen::VectorXd sw = r.site_precision.cwiseSqrt();
  Eigen::MatrixXd out = inverse_from_cholesky(r.chol, interrupt);
  out.array().colwise() *= sw.array();
  out.array().rowwise() *= sw.transpose().array();
  return out;
}

}  // namespace gpsvm

#endif  // GPSVM_EP_PRIORS_HPP
