// Complete solver controls for the tests (the core's control structs carry
// no defaults): each starts from the R constructor's defaults
// (control_defaults.hpp, generated from R), filled through the struct's
// field table, and sets the values its tests depend on; small grids and
// random samples.
#ifndef GPSVM_TESTS_FIXTURES_HPP
#define GPSVM_TESTS_FIXTURES_HPP

#include <Eigen/Dense>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <gpsvm/adatron.hpp>
#include <gpsvm/ep_engine.hpp>
#include <gpsvm/mfsvr_paper.hpp>
#include <gpsvm/naive_mf.hpp>
#include <gpsvm/rvm_posterior.hpp>
#include <gpsvm/smo.hpp>
#include <gpsvm/srvm.hpp>

#include "control_defaults.hpp"
#include "reference.hpp"

namespace fixture {

// A control with every field of its table that R's constructor has a
// default for set to it, then the fields named in `values` set to those;
// the others as the struct initialises them.  A name the table lacks is the
// test's own error.
template <class Control, std::size_t N>
Control from_defaults(const control_defaults::Setting (&defaults)[N],
                      std::initializer_list<control_defaults::Setting> values = {}) {
  Control c;
  const auto set = [&c](const control_defaults::Setting& s) {
    bool found = false;
    Control::fields(c, [&s, &found](const char* name, auto& field, const gpsvm::FieldRule&) {
      if (std::strcmp(s.name, name) != 0) return;
      field = static_cast<std::decay_t<decltype(field)>>(s.value);
      found = true;
    });
    return found;
  };
  for (const auto& d : defaults) set(d);
  for (const auto& v : values)
    if (!set(v)) throw std::logic_error(std::string("no control field '") + v.name + "'");
  return c;
}

inline gpsvm::EpControl ep_control(gpsvm::EpSchedule schedule, double tol = 1e-12,
                                   int max_iter = 2000, double damping = 1.0,
                                   std::uint32_t seed = 1) {
  auto c = from_defaults<gpsvm::EpControl>(
      control_defaults::mfsvr_control,
      {{"tol", tol}, {"max_iter", double(max_iter)}, {"damping", damping}, {"seed", double(seed)}});
  c.schedule = schedule;
  return c;
}

// The paper's M = 30 inner steps from eta = 0.05, with the adaptive rule.
inline gpsvm::MfsvrPaperControl paper_control(double tol, int max_iter) {
  return from_defaults<gpsvm::MfsvrPaperControl>(
      control_defaults::mfsvr_control, {{"eta", 0.05}, {"inner", 30}, {"max_iter", double(max_iter)},
                                        {"tol", tol}, {"adaptive_eta", 1}, {"seed", 1}});
}

inline gpsvm::SvrControl svr_control(double C, double eps, bool bias, double tol,
                                     bool shrinking = true, double cache_mb = 10.0) {
  return from_defaults<gpsvm::SvrControl>(
      control_defaults::svr_control,
      {{"C", C}, {"epsilon", eps}, {"bias", double(bias)}, {"tol", tol}, {"max_iter", 1e6},
       {"cache_mb", cache_mb}, {"shrinking", double(shrinking)}});
}

inline gpsvm::AdatronControl adatron_control(double C, double tol) {
  return from_defaults<gpsvm::AdatronControl>(control_defaults::svc_control,
                                              {{"C", C}, {"tol", tol}, {"max_iter", 1e6}});
}

inline gpsvm::NaiveMfControl naive_mf_control(double kappa, double tol) {
  return from_defaults<gpsvm::NaiveMfControl>(
      control_defaults::gpc_control, {{"kappa", kappa}, {"tol", tol}, {"eta", 0.1}, {"max_iter", 1e5}});
}

// (svc() always shrinks: the struct's own switch, outside its table.)
inline gpsvm::SvcControl svc_control(double C, double noise, double tol, double cache_mb = 100.0) {
  return from_defaults<gpsvm::SvcControl>(
      control_defaults::svc_control,
      {{"C", C}, {"noise", noise}, {"tol", tol}, {"max_iter", 1e6}, {"cache_mb", cache_mb}});
}

inline gpsvm::NaiveMfCoordinateControl naive_mf_newton_control(double kappa, double noise,
                                                               double tol,
                                                               double cache_mb = 100.0) {
  return from_defaults<gpsvm::NaiveMfCoordinateControl>(
      control_defaults::gpc_control,
      {{"kappa", kappa}, {"noise", noise}, {"tol", tol}, {"max_iter", 1000}, {"cache_mb", cache_mb}});
}

// tol_evidence = 0: stop on the hyperparameters' change alone; the
// pruning threshold and the noise's start and floor are R's.
inline gpsvm::RvmControl rvm_control(double tol, double tol_evidence = 0.0) {
  return from_defaults<gpsvm::RvmControl>(
      control_defaults::rvm_control,
      {{"max_iter", 20000}, {"tol", tol}, {"tol_evidence", tol_evidence}});
}

// rvm_control()'s fields, R's alpha floor and start, and the strong lambda
// start alone (R's default on scaled data tries a weak one too).
inline gpsvm::SrvmControl srvm_control(double tol, double tol_evidence = 0.0) {
  return from_defaults<gpsvm::SrvmControl>(
      control_defaults::srvm_control,
      {{"max_iter", 20000}, {"tol", tol}, {"tol_evidence", tol_evidence}, {"lambda_init", 1e4}});
}

// m equally spaced points from lo to hi, as an m x 1 input matrix.
inline Eigen::MatrixXd grid(int m, double lo, double hi) {
  Eigen::MatrixXd z(m, 1);
  for (int i = 0; i < m; ++i) z(i, 0) = lo + (hi - lo) * i / (m - 1);
  return z;
}

// n inputs uniform on [lo, hi]^cols and a target for each: the inputs are
// drawn first, then target(x.row(i), rng) row by row, from one stream.
struct Sample {
  Eigen::MatrixXd x;
  Eigen::VectorXd y;
};

template <class Target>
Sample sample(int n, int cols, double lo, double hi, std::uint32_t seed, Target target) {
  ref::Random rng(seed);
  Sample s;
  s.x = rng.uniform_matrix(n, cols, lo, hi);
  s.y.resize(n);
  for (int i = 0; i < n; ++i) s.y[i] = target(s.x.row(i), rng);
  return s;
}

// A sample with +-1 labels of its targets' signs.
struct LabelledSample : Sample {
  Eigen::VectorXd label;
};

inline LabelledSample with_sign_labels(Sample s) {
  LabelledSample out;
  out.label = s.y.unaryExpr([](double v) { return v > 0.0 ? 1.0 : -1.0; });
  static_cast<Sample&>(out) = std::move(s);
  return out;
}

}  // namespace fixture

#endif  // GPSVM_TESTS_FIXTURES_HPP
