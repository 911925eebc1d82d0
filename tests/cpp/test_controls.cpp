// The solvers' control structs carry no defaults (R's constructors hold
// them): a C++ caller sets every number, and one left as the struct
// initialises it (unset) is an error, never a silent second default.  For
// every control: a complete one works, and leaving any single numeric field
// unset throws std::invalid_argument.
#include <cmath>
#include <cstdint>
#include <functional>
#include <gpsvm/adatron.hpp>
#include <gpsvm/ep_engine.hpp>
#include <gpsvm/ep_priors.hpp>
#include <gpsvm/kernels.hpp>
#include <gpsvm/likelihoods.hpp>
#include <gpsvm/mfsvr.hpp>
#include <gpsvm/mfsvr_paper.hpp>
#include <gpsvm/naive_mf.hpp>
#include <gpsvm/rvm_fast.hpp>
#include <gpsvm/smo.hpp>
#include <gpsvm/srvm.hpp>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "check.hpp"
#include "fixtures.hpp"

namespace gpsvm_tests_controls {

namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;

// Runs `fit` on the complete control, then once per field with that field
// reset to the value a default-constructed control has.
template <class Control>
void check_each_field(
    const std::string& what, const Control& complete,
    const std::vector<std::pair<std::string, std::function<void(Control&)>>>& unset,
    const std::function<void(const Control&)>& fit) {
  bool ok = true;
  try {
    fit(complete);
  } catch (const std::exception& e) {
    ok = false;
    CHECK_MSG(false, what + ": the complete control failed: " + e.what());
  }
  if (ok) CHECK_MSG(true, what + ": complete");
  for (const auto& field : unset) {
    Control c = complete;
    field.second(c);
    bool thrown = false;
    try {
      fit(c);
    } catch (const std::invalid_argument&) {
      thrown = true;
    }
    CHECK_MSG(thrown, what + ": '" + field.first + "' left unset is an error");
  }
}

// One entry of check_each_field's list: the field at `path` (a member, or a
// member's member) reset to what a default-constructed control holds, named
// by the path as written, so that the name reported is the field reset.
#define UNSET_FIELD(path) \
  { #path, [](auto& c) { c.path = std::decay_t<decltype(c)>().path; } }

struct Data {
  MatrixXd x, K;
  VectorXd y, label;
};

Data data() {
  Data d;
  d.x.resize(6, 1);
  d.x << -2, -1, 0, 1, 2, 3;
  d.K = gpsvm::kernel_matrix(gpsvm::Kernel::rbf(1.0), d.x);
  d.y.resize(6);
  d.y << 0.1, 0.8, 1.0, 0.8, 0.1, -0.2;
  d.label.resize(6);
  d.label << -1, 1, 1, 1, -1, -1;
  return d;
}

}  // namespace

TEST_CASE("controls: every numeric field must be set (EP, SMO, adatron, naive mean field)") {
  const Data d = data();
  const gpsvm::EpControl ep = fixture::ep_control(gpsvm::EpSchedule::parallel, 1e-8, 100);
  check_each_field<gpsvm::EpControl>(
      "EpControl", ep,
      {UNSET_FIELD(max_iter), UNSET_FIELD(tol), UNSET_FIELD(damping)},
      [&](const gpsvm::EpControl& c) {
        gpsvm::ep_fit(d.K, d.y, gpsvm::EpsilonInsensitive(5.0, 0.1), c, nullptr);
      });

  const gpsvm::SvrControl svr = fixture::svr_control(10.0, 0.1, false, 1e-6);
  check_each_field<gpsvm::SvrControl>(
      "SvrControl", svr,
      {UNSET_FIELD(C), UNSET_FIELD(epsilon), UNSET_FIELD(tol), UNSET_FIELD(max_iter),
       UNSET_FIELD(cache_mb)},
      [&](const gpsvm::SvrControl& c) { gpsvm::svr_solve(gpsvm::Kernel::rbf(1.0), d.x, d.y, c); });

  const gpsvm::AdatronControl ada = fixture::adatron_control(5.0, 1e-10);
  check_each_field<gpsvm::AdatronControl>(
      "AdatronControl", ada,
      {UNSET_FIELD(C), UNSET_FIELD(tol), UNSET_FIELD(max_iter)},
      [&](const gpsvm::AdatronControl& c) { gpsvm::adatron_fit(d.K, d.label, c); });

  const gpsvm::NaiveMfControl mf = fixture::naive_mf_control(0.05, 1e-10);
  MatrixXd Kn = d.K;
  Kn.diagonal().array() += 0.1;
  check_each_field<gpsvm::NaiveMfControl>(
      "NaiveMfControl", mf,
      {UNSET_FIELD(kappa), UNSET_FIELD(tol), UNSET_FIELD(eta), UNSET_FIELD(max_iter)},
      [&](const gpsvm::NaiveMfControl& c) { gpsvm::naive_mf_fit(Kn, d.label, c); });
}

TEST_CASE("controls: every numeric field must be set (mean-field SVR and the paper's iteration)") {
  const Data d = data();
  const gpsvm::MfsvrPaperControl paper = fixture::paper_control(1e-8, 50);
  check_each_field<gpsvm::MfsvrPaperControl>(
      "MfsvrPaperControl", paper,
      {UNSET_FIELD(eta), UNSET_FIELD(inner), UNSET_FIELD(max_iter), UNSET_FIELD(tol)},
      [&](const gpsvm::MfsvrPaperControl& c) {
        gpsvm::mfsvr_paper_fit(d.K, d.y, gpsvm::EpsilonInsensitive(2.0, 0.1), c, nullptr);
      });

  // mfsvr_fit: the engine's fields through it
  gpsvm::MfsvrControl mf;
  mf.algorithm = gpsvm::MfsvrAlgorithm::ep;
  mf.ep = fixture::ep_control(gpsvm::EpSchedule::parallel, 1e-8, 100);
  mf.paper = paper;
  mf.gradient = true;
  check_each_field<gpsvm::MfsvrControl>(
      "MfsvrControl", mf,
      {UNSET_FIELD(ep.tol), UNSET_FIELD(ep.max_iter), UNSET_FIELD(ep.damping),
       {"paper.eta (algorithm = paper)",
        [&](gpsvm::MfsvrControl& c) {
          c.algorithm = gpsvm::MfsvrAlgorithm::paper;
          c.paper.eta = gpsvm::MfsvrControl().paper.eta;
        }}},
      [&](const gpsvm::MfsvrControl& c) {
        gpsvm::mfsvr_fit(d.x, d.y, gpsvm::Kernel::rbf(1.0), 2.0, 0.1, c, nullptr);
      });
  // and the search for C, when asked for
  mf.choose_C = true;
  mf.C_search.log_C_lower = std::log(0.01);
  mf.C_search.log_C_upper = std::log(1e4);
  mf.C_search.tol = 1e-3;
  mf.C_search.max_moves = 50;
  check_each_field<gpsvm::MfsvrControl>(
      "MfsvrControl (choose_C)", mf,
      {UNSET_FIELD(C_search.log_C_lower), UNSET_FIELD(C_search.log_C_upper),
       UNSET_FIELD(C_search.tol), UNSET_FIELD(C_search.max_moves)},
      [&](const gpsvm::MfsvrControl& c) {
        gpsvm::mfsvr_fit(d.x, d.y, gpsvm::Kernel::rbf(1.0), 2.0, 0.1, c, nullptr);
      });
}

TEST_CASE("controls: every numeric field must be set (RVM and smooth RVM)") {
  const Data d = data();
  const gpsvm::SrvmControl s = fixture::srvm_control(1e-6, 1e-8);
  using Field = std::pair<std::string, std::function<void(gpsvm::SrvmControl&)>>;
  const std::vector<Field> shared = {
      UNSET_FIELD(max_iter), UNSET_FIELD(tol), UNSET_FIELD(tol_evidence),
      UNSET_FIELD(prune_alpha), UNSET_FIELD(sigma2_init), UNSET_FIELD(min_sigma2)};
  std::vector<Field> all = shared;
  all.push_back(UNSET_FIELD(min_alpha));
  all.push_back(UNSET_FIELD(alpha_init));
  all.push_back(UNSET_FIELD(lambda_init));
  const gpsvm::RoughnessPenalty pen{{2}, {1.0}};
  check_each_field<gpsvm::SrvmControl>("SrvmControl", s, all, [&](const gpsvm::SrvmControl& c) {
    gpsvm::srvm_fit(gpsvm::Kernel::rbf(1.0), d.x, d.y, d.x, pen, c, nullptr);
  });
  // the plain RVM reads the shared part only
  check_each_field<gpsvm::SrvmControl>("RvmControl", s, shared, [&](const gpsvm::SrvmControl& c) {
    gpsvm::rvm_fast_fit(gpsvm::Kernel::rbf(1.0), d.x, d.y, static_cast<const gpsvm::RvmControl&>(c),
                        nullptr);
  });
}

TEST_CASE("controls: counts from a caller, up to R's longest vector, on every platform") {
  // R_XLEN_T_MAX, written out: the bound the glue checks max_rank against.
  // Held in a 32-bit long (Windows) it became 0, and every count was refused.
  constexpr double r_xlen_t_max = 4503599627370496.0;  // 2^52
  CHECK(static_cast<double>(gpsvm::kMaxCount) == r_xlen_t_max);
  CHECK(gpsvm::is_count_in(1.0, 0, gpsvm::kMaxCount));
  CHECK(gpsvm::is_count_in(0.0, 0, gpsvm::kMaxCount));
  CHECK(gpsvm::is_count_in(5e9, 0, gpsvm::kMaxCount));  // beyond 32 bits
  CHECK(gpsvm::is_count_in(r_xlen_t_max, 0, gpsvm::kMaxCount));
  CHECK(!gpsvm::is_count_in(r_xlen_t_max + 1.0, 0, gpsvm::kMaxCount));
  CHECK(!gpsvm::is_count_in(-1.0, 0, gpsvm::kMaxCount));
  CHECK(!gpsvm::is_count_in(2.5, 0, gpsvm::kMaxCount));
  CHECK(!gpsvm::is_count_in(std::numeric_limits<double>::quiet_NaN(), 0, gpsvm::kMaxCount));
  CHECK(!gpsvm::is_count_in(std::numeric_limits<double>::infinity(), 0, gpsvm::kMaxCount));
  CHECK(gpsvm::is_count_in(-gpsvm::kMaxCount, -gpsvm::kMaxCount, 0));
  // the value survives the cast the glue makes, in 64 bits on every platform
  CHECK(static_cast<std::int64_t>(5e9) == std::int64_t{5000000000});
  // a count of pair steps beyond 2^31 fits the status record
  gpsvm::SolverStatus status;
  status.iterations = std::int64_t{1} << 40;
  CHECK(static_cast<double>(status.iterations) == 1099511627776.0);
}

}  // namespace gpsvm_tests_controls

#undef UNSET_FIELD
