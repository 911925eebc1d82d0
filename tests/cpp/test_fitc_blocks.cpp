// FITC fits whose n x m factor G is not held (fitc.hpp's InducingRows,
// LowRankPrior reading G through RowSource), against the fit that holds G
// (a different computation: whole-matrix products instead of sums over
// blocks, every row recomputed from the inputs in each pass) and against a
// sweep written out row by row here:
//   * every schedule, two likelihoods, no rows held and some held (a block
//     straddling them): the same sites, marginals, evidence and gradient
//     to 1e-10;
//   * a row source that copies rows as a reader from a file would: the same
//     fit, no read of more than a block of rows, the same bits on 1 and 2
//     threads;
//   * the per-block sums of a posterior (A and G' (t nu)) against a plain
//     loop over rows; one training point;
//   * mfsvr's fit on rows kept in partitions of unequal sizes (one of one
//     row) against its fit on the matrix: the same fit to 1e-10.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <stdexcept>
#include <gpsvm/ep_engine.hpp>
#include <gpsvm/ep_priors.hpp>
#include <gpsvm/ep_split.hpp>
#include <gpsvm/fitc.hpp>
#include <gpsvm/kernels.hpp>
#include <gpsvm/likelihoods.hpp>
#include <gpsvm/mfsvr.hpp>
#include <gpsvm/threads.hpp>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "check.hpp"
#include "fixtures.hpp"
#include "reference.hpp"

namespace gpsvm_tests_fitc_blocks {

namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;
using fixture::ep_control;
using ref::gap;

using Data = fixture::LabelledSample;

// n not a multiple of the priors' 256-row blocks
Data wavy(int n, std::uint32_t seed) {
  return fixture::with_sign_labels(
      fixture::sample(n, 3, -2.0, 2.0, seed, [](const auto& u, ref::Random& rng) {
        return std::sin(2.0 * u(0)) + 0.5 * u(1) * u(2) + 0.2 * rng.normal();
      }));
}

// Rows copied into the caller's scratch, as a reader of a file would give
// them, counting reads and the largest.
class CopyingSource final : public gpsvm::RowSource {
 public:
  CopyingSource(const MatrixXd& x, bool concurrent) : x_(x), concurrent_(concurrent) {}
  Eigen::Index rows() const override { return x_.rows(); }
  Eigen::Index cols() const override { return x_.cols(); }
  bool concurrent() const override { return concurrent_; }
  gpsvm::FactorBlock block(Eigen::Index start, Eigen::Index len,
                           MatrixXd& scratch) const override {
    scratch = x_.middleRows(start, len);
    if (std::this_thread::get_id() != caller) ++elsewhere;
    ++reads;
    Eigen::Index seen = largest.load();
    while (len > seen && !largest.compare_exchange_weak(seen, len)) {
    }
    return gpsvm::row_block(scratch, 0, len);
  }
  mutable std::atomic<long> reads{0}, elsewhere{0};  // reads, and those off the caller's thread
  mutable std::atomic<Eigen::Index> largest{0};
  const std::thread::id caller = std::this_thread::get_id();

 private:
  const MatrixXd& x_;
  bool concurrent_;
};

struct Fitted {
  gpsvm::EpResult ep;
  gpsvm::InducingSummary summary;
  gpsvm::InducingKernelGradient gradient;
};

template <class Likelihood>
Fitted fit(const gpsvm::Kernel& kernel, const gpsvm::RowSource& source, const MatrixXd& x,
           const MatrixXd& z, double extra, Eigen::Index held, const VectorXd& t,
           const Likelihood& lik, const gpsvm::EpControl& c) {
  // (the basis read through the source, as a fit reads data in partitions)
  const gpsvm::InducingBasis b = gpsvm::inducing_basis(kernel, source, z, extra, nullptr, held);
  CHECK(b.lambda.size() == x.rows());
  const gpsvm::InducingRows rows(kernel, source, b);
  Fitted out;
  out.ep = gpsvm::ep_fit_inducing(rows, t, lik, c, nullptr);
  out.summary = gpsvm::inducing_summary(b, rows, out.ep);
  out.gradient = gpsvm::inducing_kernel_gradient(kernel, rows, out.ep);
  return out;
}

void check_same(const Fitted& a, const Fitted& b, double tol, const std::string& note) {
  CHECK_MSG(a.ep.status.converged && b.ep.status.converged, note + ": converged");
  CHECK_NEAR_MSG(gap(a.ep.site_precision, b.ep.site_precision) /
                     (1.0 + b.ep.site_precision.cwiseAbs().maxCoeff()),
                 0.0, tol, note + ": site precisions");
  CHECK_NEAR_MSG(gap(a.ep.site_nu, b.ep.site_nu), 0.0, tol, note + ": site nu");
  CHECK_NEAR_MSG(gap(a.ep.mean, b.ep.mean), 0.0, tol, note + ": means");
  CHECK_NEAR_MSG(gap(a.ep.variance, b.ep.variance), 0.0, tol, note + ": variances");
  CHECK_NEAR_MSG(gap(a.ep.weights, b.ep.weights), 0.0, tol, note + ": weights");
  // (the evidence and the gradients relative to their size)
  const auto relative = [](double u, double v) { return std::fabs(u - v) / (1.0 + std::fabs(v)); };
  CHECK_NEAR_MSG(relative(a.ep.log_evidence, b.ep.log_evidence), 0.0, tol, note + ": evidence");
  CHECK_NEAR_MSG(gap(a.summary.fitted, b.summary.fitted), 0.0, tol, note + ": fitted");
  CHECK_NEAR_MSG(gap(a.summary.fitted_variance, b.summary.fitted_variance), 0.0, tol,
                 note + ": fitted variances");
  CHECK_NEAR_MSG(relative(a.gradient.log_width, b.gradient.log_width), 0.0, tol,
                 note + ": width gradient");
  CHECK_NEAR_MSG(relative(a.gradient.diagonal, b.gradient.diagonal), 0.0, tol,
                 note + ": diagonal gradient");
}

// Rows kept in separate matrices (partitions of the data, of any sizes),
// each read whole and copied from where a block asks, as the R glue's
// reader of partitions delivers them; reads on the caller's thread only.
class PartitionSource final : public gpsvm::RowSource {
 public:
  explicit PartitionSource(std::vector<MatrixXd> parts) : parts_(std::move(parts)) {
    for (const MatrixXd& p : parts_) rows_ += p.rows();
  }
  Eigen::Index rows() const override { return rows_; }
  Eigen::Index cols() const override { return parts_[0].cols(); }
  bool concurrent() const override { return false; }
  gpsvm::FactorBlock block(Eigen::Index start, Eigen::Index len,
                           MatrixXd& scratch) const override {
    scratch.resize(len, cols());
    Eigen::Index first = 0, done = 0;
    for (const MatrixXd& p : parts_) {
      const Eigen::Index from = std::max<Eigen::Index>(start + done - first, 0);
      if (done < len && from < p.rows()) {
        const Eigen::Index take = std::min(p.rows() - from, len - done);
        scratch.middleRows(done, take) = p.middleRows(from, take);
        done += take;
      }
      first += p.rows();
    }
    return gpsvm::row_block(scratch, 0, len);
  }

 private:
  std::vector<MatrixXd> parts_;
  Eigen::Index rows_ = 0;
};

// Parts held apart, as workers would hold them: `holders` groups the parts,
// each group replying combined (ep_split.hpp's combine()); counts the
// exchanges and checks that no request carries more than m x m numbers.
// `ahead`: the holders report no time for their work (an exchange then
// costs more than the parts' sums, and the driver sweeps ahead whenever it
// can), else an hour (it never does).
template <class Likelihood>
class LocalHolders final : public gpsvm::PartExchange {
 public:
  LocalHolders(const gpsvm::Kernel& kernel, const Data& d, const VectorXd& t, const MatrixXd& z,
               double extra, const Likelihood& lik, const std::vector<Eigen::Index>& sizes,
               const std::vector<int>& holder, Eigen::Index held, bool ahead)
      : holder_(holder), ahead_(ahead) {
    Eigen::Index first = 0;
    for (Eigen::Index size : sizes) {
      parts_.emplace_back(new gpsvm::EpPart<Likelihood>(kernel, d.x.middleRows(first, size),
                                                        t.segment(first, size), z, extra, lik,
                                                        held, first));
      first += size;
    }
  }
  std::vector<gpsvm::PartReply> ask(const gpsvm::PartRequest& q) override {
    // the first posterior (sites at 0, sums 0) asks for the marginals alone
    if (exchanges == 0) CHECK(q.marginals && !q.sums && !q.update);
    ++exchanges;
    CHECK(q.chol.size() <= q.beta.size() * q.beta.size());
    std::vector<gpsvm::PartReply> out;
    for (int h = 0; h <= holder_.back(); ++h) {
      std::vector<gpsvm::PartReply> mine;
      for (std::size_t k = 0; k < parts_.size(); ++k)
        if (holder_[k] == h) mine.push_back(parts_[k]->answer(q, nullptr));
      out.push_back(gpsvm::combine(mine));
      out.back().seconds = ahead_ ? 0.0 : 3600.0;
    }
    return out;
  }
  // the parts' rows of a vector of the fit, in order
  VectorXd gather(VectorXd gpsvm::EpResult::*field) const {
    std::vector<double> all;
    for (const auto& p : parts_) {
      const VectorXd& v = p->result().*field;
      all.insert(all.end(), v.data(), v.data() + v.size());
    }
    return Eigen::Map<const VectorXd>(all.data(), static_cast<Eigen::Index>(all.size()));
  }
  int exchanges = 0;

 private:
  std::vector<std::unique_ptr<gpsvm::EpPart<Likelihood>>> parts_;
  std::vector<int> holder_;
  bool ahead_;
};

}  // namespace

TEST_CASE("FITC over blocks: EP over parts held apart is the fit on the matrix") {
  const Data d = wavy(700, 5);
  const gpsvm::Kernel kernel = gpsvm::Kernel::rbf(0.8);
  const MatrixXd z = d.x.topRows(30);
  const std::vector<Eigen::Index> sizes = {1, 300, 2, 397};
  const gpsvm::EpsilonInsensitive tube(3.0, 0.1);
  const gpsvm::ProbitFlip probit(0.02, 0.0);
  const auto check_split = [&](auto lik, const VectorXd& t, double extra,
                               const std::vector<int>& holder, Eigen::Index held,
                               const std::string& note0,
                               gpsvm::EpSchedule schedule = gpsvm::EpSchedule::parallel,
                               double damping = 1.0) {
    const gpsvm::EpControl c = ep_control(schedule, 1e-12, 3000, damping);
    const gpsvm::InducingBasis b = gpsvm::inducing_basis(kernel, d.x, z, extra);
    const gpsvm::EpResult memory = gpsvm::ep_fit_inducing(b, t, lik, c, nullptr);
    for (bool ahead : {false, true}) {
      const std::string note = ahead ? note0 + ", sweeping ahead" : note0;
      LocalHolders<decltype(lik)> parts(kernel, d, t, z, extra, lik, sizes, holder, held, ahead);
      const gpsvm::EpResult split = gpsvm::ep_run_split(parts, z.rows(), c, nullptr);
      CHECK_MSG(memory.status.converged && split.status.converged, note + ": converged");
      CHECK_MSG(memory.status.iterations == split.status.iterations, note + ": sweeps");
      // two exchanges a sweep (three accelerated), one for the first
      // posterior, one for the evidence; a sweep taken ahead saves one
      const bool accelerated = schedule == gpsvm::EpSchedule::accelerated;
      const int sweeps = split.status.iterations;
      if (!ahead) {
        CHECK_MSG(parts.exchanges >= (accelerated ? 3 : 2) * sweeps + 2, note + ": exchanges");
      } else if (accelerated) {
        CHECK_MSG(parts.exchanges < sweeps * 5 / 2 + 3, note + ": exchanges");
      } else {
        CHECK_MSG(parts.exchanges < sweeps * 3 / 2 + 3, note + ": exchanges");
      }
      CHECK_NEAR_MSG(gap(parts.gather(&gpsvm::EpResult::site_nu), memory.site_nu), 0.0, 1e-10,
                     note + ": site nu");
      CHECK_NEAR_MSG(gap(parts.gather(&gpsvm::EpResult::site_precision), memory.site_precision) /
                         (1.0 + memory.site_precision.cwiseAbs().maxCoeff()),
                     0.0, 1e-10, note + ": site precisions");
      CHECK_NEAR_MSG(gap(parts.gather(&gpsvm::EpResult::mean), memory.mean), 0.0, 1e-10,
                     note + ": means");
      CHECK_NEAR_MSG(gap(parts.gather(&gpsvm::EpResult::variance), memory.variance), 0.0, 1e-10,
                     note + ": variances");
      CHECK_NEAR_MSG(gap(parts.gather(&gpsvm::EpResult::cavity_var), memory.cavity_var), 0.0,
                     1e-10, note + ": cavities");
      CHECK_NEAR_MSG(gap(split.low_rank_mean, memory.low_rank_mean), 0.0, 1e-10, note + ": beta");
      CHECK_NEAR_MSG(std::fabs(split.log_evidence - memory.log_evidence) /
                         (1.0 + std::fabs(memory.log_evidence)),
                     0.0, 1e-10, note + ": evidence");
    }
  };
  check_split(tube, d.y, 0.0, {0, 0, 1, 1}, -1, "tube, two holders");
  check_split(tube, d.y, 0.0, {0, 1, 2, 3}, 0, "tube, four holders, no row held");
  check_split(probit, d.label, 0.1, {0, 0, 0, 0}, 100, "probit, one holder");
  // the accelerated schedule (gpc()'s default): the Anderson history held
  // by the parts, the normal equations summed
  const gpsvm::EpSchedule accelerated = gpsvm::EpSchedule::accelerated;
  check_split(probit, d.label, 0.1, {0, 0, 1, 1}, -1, "probit accelerated, two holders",
              accelerated, 0.9);
  check_split(probit, d.label, 0.0, {0, 1, 2, 3}, 0, "probit accelerated, four holders",
              accelerated);
  check_split(tube, d.y, 0.0, {0, 0, 0, 1}, 50, "tube accelerated, two holders", accelerated,
              0.7);
  // the first posterior, of sites at 0: the prior's marginals, k(x, x) plus
  // the extra diagonal and mean 0, however they are computed
  gpsvm::EpPart<gpsvm::ProbitFlip> first(kernel, d.x.topRows(300), d.label.head(300), z, 0.1,
                                         probit, -1, 0);
  gpsvm::PartRequest prior;
  prior.marginals = true;
  prior.chol = MatrixXd::Identity(z.rows(), z.rows());
  prior.beta = VectorXd::Zero(z.rows());
  const gpsvm::PartReply at_prior = first.answer(prior, nullptr);
  CHECK(at_prior.log_det == 0.0);
  CHECK(at_prior.change == 0.0);
  CHECK_NEAR(gap(first.result().variance, VectorXd::Constant(300, 1.1)), 0.0, 1e-12);
  CHECK(first.result().mean.cwiseAbs().maxCoeff() == 0.0);
  // the schedule whose sweeps are not split
  LocalHolders<gpsvm::EpsilonInsensitive> parts(kernel, d, d.y, z, 0.0, tube, sizes, {0, 0, 1, 1},
                                                -1, false);
  CHECK_THROWS(gpsvm::ep_run_split(parts, z.rows(),
                                   ep_control(gpsvm::EpSchedule::sequential, 1e-9, 100, 1.0),
                                   nullptr),
               gpsvm::SplitUnavailable);
}

TEST_CASE("FITC over blocks: mfsvr on rows in partitions of unequal sizes is the in-memory fit") {
  const Data d = wavy(700, 3);
  const gpsvm::Kernel kernel = gpsvm::Kernel::rbf(0.7);
  // sizes 1, 300, 2 and the rest: blocks of 256 and 2048 straddle them
  const PartitionSource parts({d.x.topRows(1), d.x.middleRows(1, 300), d.x.middleRows(301, 2),
                               d.x.bottomRows(700 - 303)});
  MatrixXd scratch;
  CHECK(MatrixXd(parts.block(250, 60, scratch)) == MatrixXd(d.x.middleRows(250, 60)));
  gpsvm::MfsvrControl c;
  c.ep = ep_control(gpsvm::EpSchedule::parallel, 1e-12, 3000, 1.0);
  c.inducing = d.x.topRows(35);
  c.gradient = true;
  for (Eigen::Index held : {Eigen::Index(-1), Eigen::Index(0)}) {
    c.inducing_held_rows = held;
    const gpsvm::MfsvrFit memory = gpsvm::mfsvr_fit(d.x, d.y, kernel, 3.0, 0.1, c, nullptr);
    const gpsvm::MfsvrFit split = gpsvm::mfsvr_fit(parts, d.y, kernel, 3.0, 0.1, c, nullptr);
    const std::string note = "held " + std::to_string(held);
    CHECK_MSG(memory.ep.status.converged && split.ep.status.converged, note + ": converged");
    CHECK_NEAR_MSG(gap(split.ep.site_nu, memory.ep.site_nu), 0.0, 1e-10, note + ": site nu");
    CHECK_NEAR_MSG(gap(split.inducing.fitted, memory.inducing.fitted), 0.0, 1e-10,
                   note + ": fitted");
    CHECK_NEAR_MSG(std::fabs(split.ep.log_evidence - memory.ep.log_evidence), 0.0, 1e-9,
                   note + ": evidence");
    CHECK_NEAR_MSG(gap(split.gradient, memory.gradient), 0.0, 1e-9, note + ": gradient");
  }
  // a fit without inducing inputs needs its rows in memory
  c.inducing.resize(0, 0);
  CHECK_THROWS(gpsvm::mfsvr_fit(parts, d.y, kernel, 3.0, 0.1, c, nullptr),
               std::invalid_argument);
}

TEST_CASE("FITC over blocks: the fit holding G, whatever rows are held and whatever schedule") {
  const Data d = wavy(520, 11);
  const gpsvm::Kernel kernel = gpsvm::Kernel::rbf(0.9);
  const MatrixXd z = d.x.topRows(40);
  const gpsvm::HeldRows source(d.x);
  const gpsvm::EpsilonInsensitive eps(4.0, 0.1);
  const gpsvm::ProbitFlip probit(0.02, 0.0);
  for (gpsvm::EpSchedule schedule : {gpsvm::EpSchedule::parallel, gpsvm::EpSchedule::accelerated,
                                     gpsvm::EpSchedule::sequential}) {
    const gpsvm::EpControl c = ep_control(schedule, 1e-12, 3000, 0.8);
    const Fitted held_eps = fit(kernel, source, d.x, z, 0.0, -1, d.y, eps, c);
    const Fitted held_probit = fit(kernel, source, d.x, z, 0.1, -1, d.label, probit, c);
    // none held; one block straddling the held rows (300 = 256 + 44)
    for (Eigen::Index held : {Eigen::Index(0), Eigen::Index(300)}) {
      const std::string note = "schedule " + std::to_string(static_cast<int>(schedule)) +
                               ", held " + std::to_string(held);
      check_same(fit(kernel, source, d.x, z, 0.0, held, d.y, eps, c), held_eps, 1e-10,
                 note + ", tube");
      check_same(fit(kernel, source, d.x, z, 0.1, held, d.label, probit, c), held_probit, 1e-10,
                 note + ", probit");
    }
  }
}

// Rows not held have their marginals from one solve with L L_A instead of
// two (RowSource::solve_factor()): the same fit where K_mm is nearly
// singular (a width far beyond the inputs' spread: the jitter bounds the
// condition number of L L' at about 1e8), and the fitted values are G beta
// (formed here from the held basis).
TEST_CASE("FITC over blocks: rows not held, K_mm nearly singular") {
  const Data d = wavy(700, 23);
  const MatrixXd z = d.x.topRows(60);
  const gpsvm::HeldRows source(d.x);
  const gpsvm::EpsilonInsensitive eps(4.0, 0.1);
  const gpsvm::ProbitFlip probit(0.0, 0.0);
  for (double width : {6.0, 0.7}) {
    const gpsvm::Kernel kernel = gpsvm::Kernel::rbf(width);
    const gpsvm::InducingBasis all = gpsvm::inducing_basis(kernel, source, z, 0.01);
    Eigen::SelfAdjointEigenSolver<MatrixXd> spectrum(all.chol * all.chol.transpose());
    const double condition =
        spectrum.eigenvalues().maxCoeff() / spectrum.eigenvalues().minCoeff();
    if (width > 1.0) CHECK_MSG(condition > 1e6, "K_mm nearly singular at a wide kernel");
    for (gpsvm::EpSchedule schedule :
         {gpsvm::EpSchedule::parallel, gpsvm::EpSchedule::accelerated}) {
      const gpsvm::EpControl c = ep_control(schedule, 1e-12, 3000, 0.8);
      const Fitted held_eps = fit(kernel, source, d.x, z, 0.0, -1, d.y, eps, c);
      const Fitted held_probit = fit(kernel, source, d.x, z, 0.01, -1, d.label, probit, c);
      CHECK_NEAR(gap(held_probit.summary.fitted, all.G * held_probit.ep.low_rank_mean), 0.0,
                 1e-12 * (1.0 + held_probit.summary.fitted.cwiseAbs().maxCoeff()));
      for (Eigen::Index held : {Eigen::Index(0), Eigen::Index(600)}) {
        const std::string note = "width " + std::to_string(width) + ", schedule " +
                                 std::to_string(static_cast<int>(schedule)) + ", held " +
                                 std::to_string(held);
        check_same(fit(kernel, source, d.x, z, 0.0, held, d.y, eps, c), held_eps, 1e-10,
                   note + ", tube");
        const Fitted ooc = fit(kernel, source, d.x, z, 0.01, held, d.label, probit, c);
        check_same(ooc, held_probit, 1e-10, note + ", probit");
        CHECK_NEAR_MSG(gap(ooc.summary.fitted, all.G * ooc.ep.low_rank_mean), 0.0,
                       1e-10 * (1.0 + ooc.summary.fitted.cwiseAbs().maxCoeff()),
                       note + ": fitted values are G beta");
      }
    }
  }
}

TEST_CASE("FITC over blocks: a copying source, reads of a block at most, any threads") {
  const Data d = wavy(1300, 5);
  const gpsvm::Kernel kernel = gpsvm::Kernel::rbf(1.1);
  const MatrixXd z = d.x.topRows(30);
  const gpsvm::EpsilonInsensitive eps(3.0, 0.05);
  const gpsvm::EpControl c = ep_control(gpsvm::EpSchedule::parallel, 1e-12, 3000, 1.0);
  const gpsvm::HeldRows in_memory(d.x);
  const Fitted held = fit(kernel, in_memory, d.x, z, 0.0, -1, d.y, eps, c);
  for (bool concurrent : {true, false}) {
    const std::string note = concurrent ? "a copying source" : "a source read on one thread";
    const CopyingSource source(d.x, concurrent);
    check_same(fit(kernel, source, d.x, z, 0.0, 0, d.y, eps, c), held, 1e-10, note);
    CHECK_MSG(source.reads > 0 && source.largest <= gpsvm::kInducingRowBlock,
              note + ": reads of " + std::to_string(source.largest.load()) + " rows");
  }
  // threads start past kThreadedPassWork: one posterior, the same bits on 1
  // and 2 threads, and reads on the caller's thread only from a source
  // that says so
  const Data big = wavy(5200, 6);
  const MatrixXd zb = big.x.topRows(100);
  CHECK(5200.0 * 100 * 100 >= gpsvm::kThreadedPassWork);
  const gpsvm::InducingBasis none = gpsvm::inducing_basis(kernel, big.x, zb, 0.0, nullptr, 0);
  const gpsvm::InducingBasis all = gpsvm::inducing_basis(kernel, big.x, zb, 0.0);
  const VectorXd tau = VectorXd::LinSpaced(5200, 0.0, 3.0), nu = big.y;
  const gpsvm::HeldRows big_memory(big.x);
  const gpsvm::InducingRows held_rows(kernel, big_memory, all);
  gpsvm::LowRankPrior held_prior(held_rows, all.lambda);
  gpsvm::EpPosterior reference;
  held_prior.posterior(tau, nu, reference);
  const int before = gpsvm::thread_count();
  std::vector<gpsvm::EpPosterior> posts;
  for (int threads : {1, 2}) {
    for (bool concurrent : {true, false}) {
      const std::string note = "threads " + std::to_string(threads) +
                               (concurrent ? "" : ", a source read on one thread");
      gpsvm::set_thread_count(threads);
      const CopyingSource source(big.x, concurrent);
      const gpsvm::InducingRows rows(kernel, source, none);
      gpsvm::LowRankPrior prior(rows, none.lambda);
      posts.emplace_back();
      prior.posterior(tau, nu, posts.back());
      CHECK_NEAR_MSG(gap(posts.back().mean, reference.mean), 0.0, 1e-10, note + ": means");
      CHECK_NEAR_MSG(gap(posts.back().variance, reference.variance), 0.0, 1e-10,
                     note + ": variances");
      if (!concurrent) CHECK_MSG(source.elsewhere == 0, note + ": reads off the caller's thread");
      if (concurrent && gpsvm::thread_count() == 2)
        CHECK_MSG(source.elsewhere > 0, note + ": no read on the second thread");
    }
  }
  gpsvm::set_thread_count(before);
  for (const gpsvm::EpPosterior& p : posts) {
    CHECK(p.mean == posts[0].mean);
    CHECK(p.variance == posts[0].variance);
    CHECK(p.log_det_half == posts[0].log_det_half);
  }
}

TEST_CASE("FITC over blocks: a posterior's sums over blocks are the sums over rows") {
  const Data d = wavy(600, 9);
  const gpsvm::Kernel kernel = gpsvm::Kernel::rbf(0.8);
  const MatrixXd z = d.x.topRows(25);
  const gpsvm::InducingBasis all = gpsvm::inducing_basis(kernel, d.x, z, 0.05);
  const gpsvm::InducingBasis none = gpsvm::inducing_basis(kernel, d.x, z, 0.05, nullptr, 0);
  CHECK(none.G.rows() == 0);
  CHECK_NEAR(gap(none.lambda, all.lambda), 0.0, 1e-14);
  ref::Random rng(4);
  VectorXd tau(600), nu(600);
  for (int i = 0; i < 600; ++i) {
    tau[i] = i % 7 == 0 ? 0.0 : std::exp(2.0 * rng.uniform(-1.0, 1.0));
    nu[i] = rng.normal();
  }
  // row by row: t = 1 / (1 + lambda tau), A = I + sum W_i g_i g_i',
  // beta = A^-1 sum t_i nu_i g_i, mu_i = t_i g_i' beta + lambda_i t_i nu_i
  MatrixXd A = MatrixXd::Identity(25, 25);
  VectorXd h = VectorXd::Zero(25);
  for (int i = 0; i < 600; ++i) {
    const double t = 1.0 / (1.0 + all.lambda[i] * tau[i]);
    A += tau[i] * t * all.G.row(i).transpose() * all.G.row(i);
    h += t * nu[i] * all.G.row(i).transpose();
  }
  const VectorXd beta = A.ldlt().solve(h);
  const gpsvm::HeldRows source(d.x);
  const gpsvm::InducingRows rows(kernel, source, none);
  gpsvm::LowRankPrior prior(rows, none.lambda);
  gpsvm::EpPosterior post;
  prior.posterior(tau, nu, post);
  CHECK_NEAR(gap(post.low_rank_mean, beta), 0.0, 1e-11);
  VectorXd mu(600);
  for (int i = 0; i < 600; ++i) {
    const double t = 1.0 / (1.0 + all.lambda[i] * tau[i]);
    mu[i] = t * all.G.row(i).dot(beta) + all.lambda[i] * t * nu[i];
  }
  CHECK_NEAR(gap(post.mean, mu), 0.0, 1e-11);
  // the per-block sums, as a process holding some rows would add them
  MatrixXd sums = MatrixXd::Zero(25, 26), scratch;
  for (Eigen::Index s = 0; s < 600; s += 97) {
    const Eigen::Index len = std::min<Eigen::Index>(97, 600 - s);
    const VectorXd t = (1.0 + none.lambda.segment(s, len).array() * tau.segment(s, len).array())
                           .inverse()
                           .matrix();
    gpsvm::LowRankPrior::add_site_sums(rows.block(s, len, scratch),
                                       tau.segment(s, len).cwiseProduct(t),
                                       t.cwiseProduct(nu.segment(s, len)), sums);
  }
  const MatrixXd gram = MatrixXd(sums.leftCols(25).selfadjointView<Eigen::Lower>());
  CHECK_NEAR((gram + MatrixXd::Identity(25, 25) - A).cwiseAbs().maxCoeff(), 0.0, 1e-11);
  CHECK_NEAR(gap(sums.col(25), h), 0.0, 1e-11);
}

TEST_CASE("FITC over blocks: one training point, no row held") {
  MatrixXd x(1, 2);
  x << 0.3, -0.2;
  const MatrixXd z = (MatrixXd(2, 2) << 0.0, 0.0, 1.0, 1.0).finished();
  const VectorXd y = VectorXd::Constant(1, 0.7);
  const gpsvm::HeldRows source(x);
  const gpsvm::EpsilonInsensitive eps(2.0, 0.1);
  for (gpsvm::EpSchedule schedule : {gpsvm::EpSchedule::parallel, gpsvm::EpSchedule::sequential}) {
    const gpsvm::EpControl c = ep_control(schedule);
    check_same(fit(gpsvm::Kernel::rbf(1.0), source, x, z, 0.0, 0, y, eps, c),
               fit(gpsvm::Kernel::rbf(1.0), source, x, z, 0.0, -1, y, eps, c), 1e-12,
               "one point");
  }
}

}  // namespace gpsvm_tests_fitc_blocks
