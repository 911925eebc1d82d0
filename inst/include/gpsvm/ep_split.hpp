// EP on the FITC prior with the rows held apart, in parts (each on its
// worker process): every exchange is of the prior's m x m and m sums, and
// the run is the in-memory one (ep_engine.hpp's iterate(), with the same
// schedule rules), to rounding in the order the sums are added.
//
// Why this split: a FITC posterior takes from the rows only the sums
// I + G' W G and G' (t nu) (LowRankPrior::site_sums()); once they are
// factored (LowRankPrior::factor_sums()), every row's marginal needs only
// its own g_i, L_A and beta (LowRankPrior::row_marginals()), and a parallel
// sweep moves each site from its own marginal.  So an EpPart holds its rows,
// their sites and marginals, and answers requests; SplitSweeps, the driver's
// side, adds the parts' sums in the parts' order and factors them.  Two
// exchanges per sweep: (sweep, sums) and (L_A and beta, the marginals' largest
// change); the first posterior, of sites at 0, needs only the second.
//
// The accelerated schedule's Anderson step is split the same way: its
// history is of the sites, so each part keeps its rows' history
// (AndersonMixer::record()) and replies its rows' terms of the k x k normal
// equations; the driver solves their sum for gamma and sends it with the
// next sums, and each part forms its rows of the extrapolated sites.  One
// more exchange per sweep (the sweep, replying k x (k + 1) numbers), unless
// the parts took that sweep ahead (below).
//
// Sweeping ahead: in the parallel schedule a sweep's two exchanges are a
// chain (the driver needs every part's sums to factor, every part needs the
// factor for its marginals, the driver needs every part's marginals' change
// to choose the next step), so they cannot be merged; but the next sweep is
// almost always at the step iterate() takes after a sweep that reduced the
// residual (grown_damping()).  So, where an exchange costs the driver more
// than kAheadShare of the parts' own sums pass (both measured on the last
// sweep: the futures and transfers weigh most in small fits, or at small
// m), the marginals' request also asks each part to sweep ahead at that
// step and reply with the new sites' sums, keeping the sites it swept from.  When iterate()
// then asks for that step, the sums are already there: one exchange per
// sweep instead of two.  Any other request (another step, the rounding
// probe, the end of the run) first puts the kept sites back, so the sites
// and every number of the run are those of the run without sweeping ahead;
// a wrong guess costs one sums pass, and the last sweep's guess one more.
// The accelerated schedule's step stays d (it halves only after ten sweeps
// without a new lowest residual), so there the marginals' request asks each
// part to take the next sweep at d and record it (AndersonMixer::record(),
// undoably), replying its rows' normal equations: the exchange of
// accelerated() is saved, two exchanges a sweep instead of three, and a
// miss (another step, a reset of the history, the end of the run) puts back
// the sites and the history.
// The choice depends on timing alone, never on the numbers.
//
// The sequential schedule, and so the other schedules' fallback to it,
// updates A^-1 after every site in one random order over all rows: a run
// that reaches it throws SplitUnavailable, and the caller fits in one
// process instead.
//
// Pure C++17 + Eigen: no R headers.
#ifndef GPSVM_EP_SPLIT_HPP
#define GPSVM_EP_SPLIT_HPP

#include <Eigen/Dense>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

#include "ep_engine.hpp"
#include "ep_priors.hpp"
#include "fitc.hpp"

namespace gpsvm {

// A run of parallel sweeps misses the guess about once (its last sweep) in
// the five to ten sweeps it takes, so sweeping ahead, which saves an
// exchange a sweep for a sums pass wasted on a miss, pays once an exchange
// costs a quarter of the pass.
constexpr double kAheadShare = 0.25;

// A run that the split cannot follow (see above).
class SplitUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What the driver asks of every part at once; a part does the steps asked,
// in this order.
struct PartRequest {
  bool undo = false;    // the sites the part swept ahead from are put back (first)
  bool reset = false;   // forget the extrapolation's history
  bool apply = false;   // the sites become the extrapolated ones, g - dG gamma
  Eigen::VectorXd gamma;
  bool update = false;  // a parallel sweep from the current marginals
  double damping = 1.0;
  bool record = false;  // with update: the sweep's (x, g) added to the history
  bool sums = false;       // reply with the site sums (r x (r + 1))
  bool perturbed = false;  // sums and marginals of the sites moved by rounding
  bool marginals = false;  // the marginals given chol (L_A) and beta
  Eigen::MatrixXd chol;
  Eigen::VectorXd beta;
  bool finish = false;  // cavities and the rows' evidence terms
  bool ahead = false;   // with marginals: sweep at ahead_damping, reply with the sums
  double ahead_damping = 1.0;  // (ahead with record: the sweep recorded, the normal
                               // equations replied instead of the sums)
};

struct PartReply {
  Eigen::MatrixXd sums;  // without the identity: the parts' are added to I
  double log_det = 0.0;  // the rows' part of 1/2 log det B (with marginals)
  double change = 0.0;   // the marginals' largest change (with marginals)
  double evidence = 0.0; // ep_detail::evidence_terms() (with finish)
  Eigen::MatrixXd normal;  // the rows' [dF'dF | dF'f] (with record)
  bool pinned = false;     // a site at the clamp: no extrapolation (with record)
  double seconds = 0.0;    // the part's (a worker's: its parts') time answering
};

// Replies added in their order (sums, log determinants and evidence terms)
// and the largest change kept: what the driver needs from several parts, and
// what a worker sends for the parts it holds (so that an exchange carries one
// m x (m + 1) matrix per worker, however many partitions it holds).
inline PartReply combine(const std::vector<PartReply>& replies) {
  PartReply out;
  for (const PartReply& p : replies) {
    if (p.sums.size() > 0) {
      if (out.sums.size() == 0) out.sums = Eigen::MatrixXd::Zero(p.sums.rows(), p.sums.cols());
      if (p.sums.rows() != out.sums.rows() || p.sums.cols() != out.sums.cols())
        throw std::runtime_error("parts replied with sums of other dimensions");
      out.sums += p.sums;
    }
    out.log_det += p.log_det;
    // (std::max would drop a NaN)
    out.change = std::isnan(p.change) || p.change > out.change ? p.change : out.change;
    out.evidence += p.evidence;
    if (p.normal.cols() > 0) {
      if (out.normal.cols() == 0) {
        out.normal = p.normal;
      } else if (p.normal.rows() != out.normal.rows() || p.normal.cols() != out.normal.cols()) {
        throw std::runtime_error("parts replied with histories of other lengths");
      } else {
        out.normal += p.normal;
      }
    }
    out.pinned = out.pinned || p.pinned;
    out.seconds += p.seconds;  // (a worker answers for its parts one after another)
  }
  return out;
}

// A part's rows: inputs x (rows first, first + 1, ... of the data), targets,
// the FITC basis on them (the same numbers on every part: it depends on the
// inducing inputs alone, and lambda on each row alone), sites and marginals.
template <class Likelihood>
class EpPart {
 public:
  EpPart(const Kernel& kernel, Eigen::MatrixXd x, Eigen::VectorXd targets,
         const Eigen::MatrixXd& inducing, double extra_diagonal, const Likelihood& lik,
         Eigen::Index held_rows, Eigen::Index first)
      : x_(std::move(x)), targets_(std::move(targets)), lik_(lik), first_(first), source_(x_),
        basis_(inducing_basis(kernel, source_, inducing, extra_diagonal, nullptr, held_rows)),
        rows_(kernel, source_, basis_), prior_(rows_, basis_.lambda),
        mixer_(kAndersonMemory) {
    if (x_.rows() != targets_.size()) throw std::invalid_argument("'x' and 'y' differ in length");
    if (!targets_.allFinite()) throw std::invalid_argument("targets must be finite");
    r_.site_precision = Eigen::VectorXd::Zero(targets_.size());
    r_.site_nu = Eigen::VectorXd::Zero(targets_.size());
  }

  PartReply answer(const PartRequest& q, const std::function<void()>& interrupt) {
    const auto start = std::chrono::steady_clock::now();
    PartReply out;
    if (q.ahead && (!q.marginals || q.perturbed || q.sums || q.update || q.finish))
      throw std::logic_error("a part was asked to sweep ahead in a request that sweeps");
    if (q.undo) {
      if (kept_tau_.size() != targets_.size())
        throw std::logic_error("a part was asked to undo a sweep ahead it did not take");
      r_.site_precision = std::move(kept_tau_);
      r_.site_nu = std::move(kept_nu_);
      if (kept_recorded_) mixer_.unrecord();
    }
    // (without undo, a sweep ahead was taken: what it kept is not needed)
    kept_tau_.resize(0);
    kept_nu_.resize(0);
    kept_recorded_ = false;
    if (q.reset) mixer_.reset();
    if (q.apply) ep_detail::set_stacked_sites(mixer_.combination(q.gamma), r_);
    if (q.update) {
      if (r_.mean.size() != targets_.size())
        throw std::logic_error("a part was asked to sweep before its marginals were set");
      sweep(q.damping, q.record, false, out);
    }
    Eigen::VectorXd tau = r_.site_precision, nu = r_.site_nu;
    if (q.perturbed) ep_detail::perturb_by_rounding(tau, nu, first_);
    if (q.sums) {
      out.sums = prior_.site_sums(tau, nu, interrupt, false);
    }
    if (q.marginals) {
      EpPosterior post;
      post.chol = q.chol;
      prior_.row_marginals(tau, nu, q.beta, post, interrupt);
      ep_detail::floor_variances(post);
      out.log_det = post.log_det_half;
      const bool first = r_.mean.size() != targets_.size();
      out.change = first ? 0.0 : ep_detail::marginal_change(post, r_.mean, r_.variance);
      if (!q.perturbed) {
        r_.mean = std::move(post.mean);
        r_.variance = std::move(post.variance);
        r_.weights = std::move(post.weights);
        r_.low_rank_variance = std::move(post.low_rank_variance);
        r_.low_rank_mean = std::move(post.low_rank_mean);
        r_.low_rank_fitted = std::move(post.low_rank_fitted);
      }
    }
    if (q.finish) {
      ep_detail::cavities(r_, r_.site_precision, r_.site_nu, r_.cavity_mean, r_.cavity_var);
      out.evidence =
          ep_detail::evidence_terms(targets_, lik_, r_, r_.cavity_mean, r_.cavity_var);
    }
    if (q.ahead) {
      kept_tau_ = r_.site_precision;
      kept_nu_ = r_.site_nu;
      sweep(q.ahead_damping, q.record, true, out);
      kept_recorded_ = q.record;
      if (!q.record) out.sums = prior_.site_sums(r_.site_precision, r_.site_nu, interrupt, false);
    }
    out.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return out;
  }

  // The part's rows of the fit (sites, marginals, cavities) and what
  // predictions at its training inputs read (inducing_summary()).
  const EpResult& result() const { return r_; }
  InducingSummary summary() const { return inducing_summary(basis_, rows_, r_); }
  Eigen::Index rows() const { return targets_.size(); }
  const InducingBasis& basis() const { return basis_; }

 private:
  // A parallel sweep at step d; with `record`, its (x, g) added to the
  // history (undoably) and the rows' normal equations in out.
  void sweep(double d, bool record, bool undoable, PartReply& out) {
    const Eigen::VectorXd x = record ? ep_detail::stacked_sites(r_) : Eigen::VectorXd();
    ep_detail::parallel_sweep(targets_, lik_, d, r_);
    if (!record) return;
    const Eigen::VectorXd g = ep_detail::stacked_sites(r_);
    out.pinned = !ep_detail::extrapolable(g);
    out.normal = mixer_.record(x, g, undoable);
  }

  const Eigen::MatrixXd x_;
  const Eigen::VectorXd targets_;
  const Likelihood lik_;
  const Eigen::Index first_;
  const HeldRows source_;
  const InducingBasis basis_;
  const InducingRows rows_;
  LowRankPrior prior_;
  ep_detail::AndersonMixer mixer_;
  EpResult r_;
  Eigen::VectorXd kept_tau_, kept_nu_;  // the sites before a sweep ahead
  bool kept_recorded_ = false;          // and the sweep ahead was recorded
};

// The driver's side: asks every holder of parts (a worker), in the holders'
// order, each replying for its parts combined.
class PartExchange {
 public:
  virtual ~PartExchange() = default;
  virtual std::vector<PartReply> ask(const PartRequest& request) = 0;
};

// iterate()'s sweeps (ep_engine.hpp) over parts held apart.  r holds the
// m x m state (chol, low_rank_mean, log_det_half) and the run's status; its
// row vectors stay empty (the parts hold them).
class SplitSweeps {
 public:
  SplitSweeps(PartExchange& parts, Eigen::Index rank, EpResult& r)
      : parts_(parts), rank_(rank), r_(r) {}

  void refresh() {
    if (!started_) {
      // the run starts from sites at 0, whose sums are 0: the first
      // posterior needs only the marginals' exchange (and the parts take
      // the prior's marginals without a solve, LowRankPrior::row_marginals())
      started_ = true;
      if (!pending_ && !reset_ && !apply_) {
        change_ = factored_marginals(Eigen::MatrixXd::Zero(rank_, rank_ + 1), false, r_);
        return;
      }
    }
    if (pending_ && ahead_taken_ && !ahead_recorded_ && damping_ == ahead_damping_ && !reset_ &&
        !apply_) {
      // the parts swept ahead at this step: their sums are here
      pending_ = ahead_taken_ = false;
      change_ = factored_marginals(ahead_sums_, false, r_);
      return;
    }
    PartRequest q;
    q.reset = reset_;
    q.apply = apply_;
    q.gamma = gamma_;
    reset_ = apply_ = false;
    q.update = pending_;
    q.damping = damping_;
    q.sums = true;
    pending_ = false;
    change_ = marginals(q, r_);
  }
  void keep_marginals() {}
  double change() const { return change_; }
  void parallel(double d) {
    pending_ = true;  // asked with the next refresh's sums: one exchange
    parallel_ = true;
    accelerated_ = false;
    damping_ = d;
  }
  // As LocalSweeps::accelerated(): the parts sweep and record; the
  // extrapolated sites (or the history's reset) go with the next refresh.
  // A sweep the parts took ahead at this step (see above) is taken here,
  // without an exchange.
  bool accelerated(double d, bool extrapolate) {
    parallel_ = false;
    accelerated_ = true;
    damping_ = d;
    PartReply reply;
    if (ahead_taken_ && ahead_recorded_ && !reset_ && d == ahead_damping_) {
      ahead_taken_ = false;
      reply.normal = std::move(ahead_normal_);
      reply.pinned = ahead_pinned_;
    } else {
      PartRequest q;
      q.reset = reset_;
      reset_ = false;
      q.update = q.record = true;
      q.damping = d;
      reply = ask(q);
    }
    const Eigen::Index k = reply.normal.rows();
    if (reply.normal.cols() != k + 1)
      throw std::runtime_error("the parts replied with no history of the sweep");
    if (reply.pinned) {
      reset_ = true;
      return false;
    }
    if (k == 0) return false;
    const Eigen::VectorXd gamma = ep_detail::AndersonMixer::coefficients(reply.normal);
    if (!gamma.allFinite()) {
      reset_ = true;
      return false;
    }
    if (!extrapolate) return false;
    apply_ = true;
    gamma_ = gamma;
    return true;
  }
  void reset_history() { reset_ = true; }
  void sequential(double, std::mt19937&) {
    throw SplitUnavailable("the run needs sequential sweeps, which are not split over parts");
  }
  double rounding_level() {
    PartRequest q;
    q.sums = q.perturbed = true;
    EpPosterior probe;
    const double level = marginals(q, probe);
    return std::isfinite(level) ? level : 0.0;
  }
  void finish() {
    PartRequest q;
    q.finish = true;
    r_.log_evidence = ask(q).evidence - r_.log_det_half;
  }

 private:
  // Every part's reply to q, combined; first, the sites the parts swept
  // ahead from put back, unless the caller took that sweep.  Times the
  // exchange: its wall time beyond the slowest part's work.
  PartReply ask(PartRequest& q) {
    q.undo = ahead_taken_;
    ahead_taken_ = false;
    const auto start = std::chrono::steady_clock::now();
    const std::vector<PartReply> replies = parts_.ask(q);
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    double work = 0.0;
    for (const PartReply& p : replies) work = std::max(work, p.seconds);
    overhead_ = std::max(0.0, wall - work);
    if (q.update && q.sums && !q.perturbed) sums_work_ = work;
    if (q.update && q.record) record_work_ = work;
    return combine(replies);
  }
  // The sums asked with q, factored into post; then the marginals (of the
  // same sites) and their largest change.
  double marginals(PartRequest& q, EpPosterior& post) {
    const PartReply summed = ask(q);
    return factored_marginals(summed.sums, q.perturbed, post);
  }
  double factored_marginals(const Eigen::MatrixXd& summed, bool perturbed, EpPosterior& post) {
    if (summed.rows() != rank_ || summed.cols() != rank_ + 1)
      throw std::runtime_error("the parts replied with sums of other dimensions");
    Eigen::MatrixXd sums = summed;
    sums.leftCols(rank_).diagonal().array() += 1.0;
    post.low_rank_mean = LowRankPrior::factor_sums(sums, post);
    PartRequest m;
    m.marginals = true;
    m.perturbed = perturbed;
    m.chol = post.chol;
    m.beta = post.low_rank_mean;
    // (accelerated: a miss wastes the parts' sweep and record, the work of
    // the exchange it would save)
    m.ahead = !perturbed && (parallel_ ? overhead_ > kAheadShare * sums_work_
                                       : accelerated_ && overhead_ > kAheadShare * record_work_);
    m.record = m.ahead && !parallel_;
    m.ahead_damping = parallel_ ? ep_detail::grown_damping(damping_) : damping_;
    const PartReply marginal = ask(m);
    if (m.ahead && m.record) {
      if (marginal.normal.cols() != marginal.normal.rows() + 1)
        throw std::runtime_error("the parts replied with no history of their sweep ahead");
      ahead_normal_ = marginal.normal;
      ahead_pinned_ = marginal.pinned;
    } else if (m.ahead) {
      if (marginal.sums.rows() != rank_ || marginal.sums.cols() != rank_ + 1)
        throw std::runtime_error("the parts replied with no sums of their sweep ahead");
      ahead_sums_ = marginal.sums;
    }
    if (m.ahead) {
      ahead_damping_ = m.ahead_damping;
      ahead_taken_ = true;
      ahead_recorded_ = m.record;
    }
    post.log_det_half = post.chol.diagonal().array().log().sum() + marginal.log_det;
    return marginal.change;
  }

  PartExchange& parts_;
  const Eigen::Index rank_;
  EpResult& r_;
  bool started_ = false;  // a posterior was asked for
  bool pending_ = false;
  double damping_ = 1.0;
  bool parallel_ = false;  // the last sweep was a parallel one
  bool accelerated_ = false;  // an accelerated one
  bool reset_ = false;  // asked with the next request
  bool apply_ = false;
  Eigen::VectorXd gamma_;
  double change_ = 0.0;
  // the sweep ahead the parts took (see above), and the timing that decides it
  bool ahead_taken_ = false;
  bool ahead_recorded_ = false;  // (accelerated: its normal equations, else its sums)
  double ahead_damping_ = 1.0;
  Eigen::MatrixXd ahead_sums_, ahead_normal_;
  bool ahead_pinned_ = false;
  double overhead_ = 0.0;
  double sums_work_ = std::numeric_limits<double>::infinity();
  double record_work_ = std::numeric_limits<double>::infinity();
};

// EP from sites at 0 over parts held apart, the parallel and accelerated
// schedules (see above).
inline EpResult ep_run_split(PartExchange& parts, Eigen::Index rank, const EpControl& control,
                             const std::function<void()>& interrupt) {
  if (control.schedule == EpSchedule::sequential)
    throw SplitUnavailable("the sequential schedule is not split over parts");
  ep_detail::check_control(control, 0);
  EpResult r;
  SplitSweeps sweeps(parts, rank, r);
  ep_detail::iterate(sweeps, control, interrupt, r, EpAdjust(), false);
  return r;
}

}  // namespace gpsvm

#endif  // GPSVM_EP_SPLIT_HPP
