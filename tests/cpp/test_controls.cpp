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
  const gpsvm::EpControl blank_ep;
  const gpsvm::EpControl ep = fixture::ep_control(gpsvm::EpSchedule::parallel, 1e-8, 100);
  check_each_field<gpsvm::EpControl>(
      "EpControl", ep,
      {{"max_iter", [&](gpsvm::EpControl& c) { c.max_iter = blank_ep.max_iter; }},
       {"tol", [&](gpsvm::EpControl& c) { c.tol = blank_ep.tol; }},
       {"damping", [&](gpsvm::EpControl& c) { c.damping = blank_ep.damping; }}},
      [&](const gpsvm::EpControl& c) {
        gpsvm::ep_fit(d.K, d.y, gpsvm::EpsilonInsensitive(5.0, 0.1), c, nullptr);
      });

  const gpsvm::SvrControl blank_svr;
  const gpsvm::SvrControl svr = fixture::svr_control(10.0, 0.1, false, 1e-6);
  check_each_field<gpsvm::SvrControl>(
      "SvrControl", svr,
      {{"C", [&](gpsvm::SvrControl& c) { c.C = blank_svr.C; }},
       {"epsilon", [&](gpsvm::SvrControl& c) { c.epsilon = blank_svr.epsilon; }},
       {"tol", [&](gpsvm::SvrControl& c) { c.tol = blank_svr.tol; }},
       {"max_iter", [&](gpsvm::SvrControl& c) { c.max_iter = blank_svr.max_iter; }},
       {"cache_mb", [&](gpsvm::SvrControl& c) { c.cache_mb = blank_svr.cache_mb; }}},
      [&](const gpsvm::SvrControl& c) { gpsvm::svr_solve(gpsvm::Kernel::rbf(1.0), d.x, d.y, c); });

  const gpsvm::AdatronControl blank_ada;
  const gpsvm::AdatronControl ada = fixture::adatron_control(5.0, 1e-10);
  check_each_field<gpsvm::AdatronControl>(
      "AdatronControl", ada,
      {{"C", [&](gpsvm::AdatronControl& c) { c.C = blank_ada.C; }},
       {"tol", [&](gpsvm::AdatronControl& c) { c.tol = blank_ada.tol; }},
       {"max_iter", [&](gpsvm::AdatronControl& c) { c.max_iter = blank_ada.max_iter; }}},
      [&](const gpsvm::AdatronControl& c) { gpsvm::adatron_fit(d.K, d.label, c); });

  const gpsvm::NaiveMfControl blank_mf;
  const gpsvm::NaiveMfControl mf = fixture::naive_mf_control(0.05, 1e-10);
  MatrixXd Kn = d.K;
  Kn.diagonal().array() += 0.1;
  check_each_field<gpsvm::NaiveMfControl>(
      "NaiveMfControl", mf,
      {{"kappa", [&](gpsvm::NaiveMfControl& c) { c.kappa = blank_mf.kappa; }},
       {"tol", [&](gpsvm::NaiveMfControl& c) { c.tol = blank_mf.tol; }},
       {"eta", [&](gpsvm::NaiveMfControl& c) { c.eta = blank_mf.eta; }},
       {"max_iter", [&](gpsvm::NaiveMfControl& c) { c.max_iter = blank_mf.max_iter; }}},
      [&](const gpsvm::NaiveMfControl& c) { gpsvm::naive_mf_fit(Kn, d.label, c); });
}

TEST_CASE("controls: every numeric field must be set (mean-field SVR and the paper's iteration)") {
  const Data d = data();
  const gpsvm::MfsvrPaperControl blank_paper;
  const gpsvm::MfsvrPaperControl paper = fixture::paper_control(1e-8, 50);
  check_each_field<gpsvm::MfsvrPaperControl>(
      "MfsvrPaperControl", paper,
      {{"eta", [&](gpsvm::MfsvrPaperControl& c) { c.eta = blank_paper.eta; }},
       {"inner", [&](gpsvm::MfsvrPaperControl& c) { c.inner = blank_paper.inner; }},
       {"max_iter", [&](gpsvm::MfsvrPaperControl& c) { c.max_iter = blank_paper.max_iter; }},
       {"tol", [&](gpsvm::MfsvrPaperControl& c) { c.tol = blank_paper.tol; }}},
      [&](const gpsvm::MfsvrPaperControl& c) {
        gpsvm::mfsvr_paper_fit(d.K, d.y, gpsvm::EpsilonInsensitive(2.0, 0.1), c, nullptr);
      });

  // mfsvr_fit: the engine's fields through it
  const gpsvm::MfsvrControl blank;
  gpsvm::MfsvrControl mf;
  mf.algorithm = gpsvm::MfsvrAlgorithm::ep;
  mf.ep = fixture::ep_control(gpsvm::EpSchedule::parallel, 1e-8, 100);
  mf.paper = paper;
  mf.gradient = true;
  check_each_field<gpsvm::MfsvrControl>(
      "MfsvrControl", mf,
      {{"ep.tol", [&](gpsvm::MfsvrControl& c) { c.ep.tol = blank.ep.tol; }},
       {"ep.max_iter", [&](gpsvm::MfsvrControl& c) { c.ep.max_iter = blank.ep.max_iter; }},
       {"ep.damping", [&](gpsvm::MfsvrControl& c) { c.ep.damping = blank.ep.damping; }},
       {"paper.eta (algorithm = paper)",
        [&](gpsvm::MfsvrControl& c) {
          c.algorithm = gpsvm::MfsvrAlgorithm::paper;
          c.paper.eta = blank.paper.eta;
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
      {{"C_search.log_C_lower",
        [&](gpsvm::MfsvrControl& c) { c.C_search.log_C_lower = blank.C_search.log_C_lower; }},
       {"C_search.log_C_upper",
        [&](gpsvm::MfsvrControl& c) { c.C_search.log_C_upper = blank.C_search.log_C_upper; }},
       {"C_search.tol", [&](gpsvm::MfsvrControl& c) { c.C_search.tol = blank.C_search.tol; }},
       {"C_search.max_moves",
        [&](gpsvm::MfsvrControl& c) { c.C_search.max_moves = blank.C_search.max_moves; }}},
      [&](const gpsvm::MfsvrControl& c) {
        gpsvm::mfsvr_fit(d.x, d.y, gpsvm::Kernel::rbf(1.0), 2.0, 0.1, c, nullptr);
      });
}

TEST_CASE("controls: every numeric field must be set (RVM and smooth RVM)") {
  const Data d = data();
  const gpsvm::SrvmControl blank;
  const gpsvm::SrvmControl s = fixture::srvm_control(1e-6, 1e-8);
  using Field = std::pair<std::string, std::function<void(gpsvm::SrvmControl&)>>;
  const std::vector<Field> shared = {
      {"max_iter", [&](gpsvm::SrvmControl& c) { c.max_iter = blank.max_iter; }},
      {"tol", [&](gpsvm::SrvmControl& c) { c.tol = blank.tol; }},
      {"tol_evidence", [&](gpsvm::SrvmControl& c) { c.tol_evidence = blank.tol_evidence; }},
      {"prune_alpha", [&](gpsvm::SrvmControl& c) { c.prune_alpha = blank.prune_alpha; }},
      {"sigma2_init", [&](gpsvm::SrvmControl& c) { c.sigma2_init = blank.sigma2_init; }},
      {"min_sigma2", [&](gpsvm::SrvmControl& c) { c.min_sigma2 = blank.min_sigma2; }}};
  std::vector<Field> all = shared;
  all.push_back({"min_alpha", [&](gpsvm::SrvmControl& c) { c.min_alpha = blank.min_alpha; }});
  all.push_back({"alpha_init", [&](gpsvm::SrvmControl& c) { c.alpha_init = blank.alpha_init; }});
  all.push_back({"lambda_init", [&](gpsvm::SrvmControl& c) { c.lambda_init = blank.lambda_init; }});
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
