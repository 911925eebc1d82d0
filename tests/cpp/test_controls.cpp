// The solvers' control structs carry no defaults (R's constructors hold
// them): a C++ caller sets every number, and one left as the struct
// initialises it (unset) is an error, never a silent second default.  For
// every control: a complete one works, and leaving any single field of its
// table (solver_status.hpp) unset throws std::invalid_argument.
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

// The fields of a control's table that have an unset state (a value that
// fails their rule), with that value: what a default-constructed control
// holds.
template <class Control>
std::vector<std::pair<std::string, double>> unset_fields() {
  std::vector<std::pair<std::string, double>> out;
  const Control unset{};
  Control::fields(unset, [&out](const char* name, const auto& value, const gpsvm::FieldRule& r) {
    if (!r.ok(static_cast<double>(value))) out.emplace_back(name, static_cast<double>(value));
  });
  return out;
}

// Runs `fit` on the complete control, then once per field of its table with
// that field reset to its unset value.
template <class Control>
void check_each_field(const std::string& what, const Control& complete,
                      const std::function<void(const Control&)>& fit) {
  bool ok = true;
  try {
    fit(complete);
  } catch (const std::exception& e) {
    ok = false;
    CHECK_MSG(false, what + ": the complete control failed: " + e.what());
  }
  if (ok) CHECK_MSG(true, what + ": complete");
  for (const auto& field : unset_fields<Control>()) {
    Control c = complete;
    Control::fields(c, [&field](const char* name, auto& value, const gpsvm::FieldRule&) {
      if (field.first == name) value = static_cast<std::decay_t<decltype(value)>>(field.second);
    });
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
  check_each_field<gpsvm::EpControl>(
      "EpControl", fixture::ep_control(gpsvm::EpSchedule::parallel, 1e-8, 100),
      [&](const gpsvm::EpControl& c) {
        gpsvm::ep_fit(d.K, d.y, gpsvm::EpsilonInsensitive(5.0, 0.1), c, nullptr);
      });
  check_each_field<gpsvm::SvrControl>(
      "SvrControl", fixture::svr_control(10.0, 0.1, false, 1e-6),
      [&](const gpsvm::SvrControl& c) { gpsvm::svr_solve(gpsvm::Kernel::rbf(1.0), d.x, d.y, c); });
  check_each_field<gpsvm::AdatronControl>(
      "AdatronControl", fixture::adatron_control(5.0, 1e-10),
      [&](const gpsvm::AdatronControl& c) { gpsvm::adatron_fit(d.K, d.label, c); });
  MatrixXd Kn = d.K;
  Kn.diagonal().array() += 0.1;
  check_each_field<gpsvm::NaiveMfControl>(
      "NaiveMfControl", fixture::naive_mf_control(0.05, 1e-10),
      [&](const gpsvm::NaiveMfControl& c) { gpsvm::naive_mf_fit(Kn, d.label, c); });
  check_each_field<gpsvm::SvcControl>(
      "SvcControl", fixture::svc_control(5.0, 0.1, 1e-10),
      [&](const gpsvm::SvcControl& c) {
        gpsvm::svc_smo_solve(gpsvm::Kernel::rbf(1.0), d.x, d.label, c);
      });
  check_each_field<gpsvm::NaiveMfCoordinateControl>(
      "NaiveMfCoordinateControl", fixture::naive_mf_newton_control(0.05, 0.1, 1e-10),
      [&](const gpsvm::NaiveMfCoordinateControl& c) {
        gpsvm::naive_mf_solve(gpsvm::Kernel::rbf(1.0), d.x, d.label, c);
      });
}

TEST_CASE("controls: every numeric field must be set (mean-field SVR and the paper's iteration)") {
  const Data d = data();
  const gpsvm::MfsvrPaperControl paper = fixture::paper_control(1e-8, 50);
  check_each_field<gpsvm::MfsvrPaperControl>(
      "MfsvrPaperControl", paper, [&](const gpsvm::MfsvrPaperControl& c) {
        gpsvm::mfsvr_paper_fit(d.K, d.y, gpsvm::EpsilonInsensitive(2.0, 0.1), c, nullptr);
      });

  // mfsvr_fit: the nested controls' fields through it
  gpsvm::MfsvrControl mf;
  mf.algorithm = gpsvm::MfsvrAlgorithm::ep;
  mf.ep = fixture::ep_control(gpsvm::EpSchedule::parallel, 1e-8, 100);
  mf.paper = paper;
  mf.gradient = true;
  const auto mfsvr = [&](const gpsvm::MfsvrControl& c) {
    gpsvm::mfsvr_fit(d.x, d.y, gpsvm::Kernel::rbf(1.0), 2.0, 0.1, c, nullptr);
  };
  check_each_field<gpsvm::EpControl>("MfsvrControl: ep", mf.ep, [&](const gpsvm::EpControl& c) {
    gpsvm::MfsvrControl m = mf;
    m.ep = c;
    mfsvr(m);
  });
  check_each_field<gpsvm::MfsvrPaperControl>(
      "MfsvrControl: paper (algorithm = paper)", paper, [&](const gpsvm::MfsvrPaperControl& c) {
        gpsvm::MfsvrControl m = mf;
        m.algorithm = gpsvm::MfsvrAlgorithm::paper;
        m.paper = c;
        mfsvr(m);
      });
  // and the search for C, when asked for
  mf.choose_C = true;
  mf.C_search.log_C_lower = std::log(0.01);
  mf.C_search.log_C_upper = std::log(1e4);
  mf.C_search.tol = 1e-3;
  mf.C_search.max_moves = 50;
  check_each_field<gpsvm::MfsvrCSearchControl>(
      "MfsvrControl: C_search (choose_C)", mf.C_search,
      [&](const gpsvm::MfsvrCSearchControl& c) {
        gpsvm::MfsvrControl m = mf;
        m.C_search = c;
        mfsvr(m);
      });
}

TEST_CASE("controls: every numeric field must be set (RVM and smooth RVM)") {
  const Data d = data();
  const gpsvm::RoughnessPenalty pen{{2}, {1.0}};
  check_each_field<gpsvm::SrvmControl>(
      "SrvmControl", fixture::srvm_control(1e-6, 1e-8), [&](const gpsvm::SrvmControl& c) {
        gpsvm::srvm_fit(gpsvm::Kernel::rbf(1.0), d.x, d.y, d.x, pen, c, nullptr);
      });
  check_each_field<gpsvm::RvmControl>(
      "RvmControl", fixture::rvm_control(1e-6, 1e-8), [&](const gpsvm::RvmControl& c) {
        gpsvm::rvm_fast_fit(gpsvm::Kernel::rbf(1.0), d.x, d.y, c, nullptr);
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

