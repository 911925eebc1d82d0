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
// default for set to it; the others as the struct initialises them.
template <class Control, std::size_t N>
Control from_defaults(const control_defaults::Setting (&defaults)[N]) {
  Control c;
  Control::fields(c, [&defaults](const char* name, auto& field, const gpsvm::FieldRule&) {
    for (const auto& d : defaults)
      if (std::strcmp(d.name, name) == 0) field = static_cast<std::decay_t<decltype(field)>>(d.value);
  });
  return c;
}

inline gpsvm::EpControl ep_control(gpsvm::EpSchedule schedule, double tol = 1e-12,
                                   int max_iter = 2000, double damping = 1.0,
                                   std::uint32_t seed = 1) {
  auto c = from_defaults<gpsvm::EpControl>(control_defaults::mfsvr_control);
  c.schedule = schedule;
  c.tol = tol;
  c.max_iter = max_iter;
  c.damping = damping;
  c.seed = seed;
  return c;
}

// The paper's M = 30 inner steps from eta = 0.05, with the adaptive rule.
inline gpsvm::MfsvrPaperControl paper_control(double tol, int max_iter) {
  auto c = from_defaults<gpsvm::MfsvrPaperControl>(control_defaults::mfsvr_control);
  c.eta = 0.05;
  c.inner = 30;
  c.max_iter = max_iter;
  c.tol = tol;
  c.adaptive = true;
  c.seed = 1;
  return c;
}

inline gpsvm::SvrControl svr_control(double C, double eps, bool bias, double tol,
                                     bool shrinking = true, double cache_mb = 10.0) {
  auto c = from_defaults<gpsvm::SvrControl>(control_defaults::svr_control);
  c.C = C;
  c.epsilon = eps;
  c.bias = bias;
  c.tol = tol;
  c.max_iter = 1000000;
  c.cache_mb = cache_mb;
  c.shrinking = shrinking;
  return c;
}

inline gpsvm::AdatronControl adatron_control(double C, double tol) {
  auto c = from_defaults<gpsvm::AdatronControl>(control_defaults::svc_control);
  c.C = C;
  c.tol = tol;
  c.max_iter = 1000000;
  return c;
}

inline gpsvm::NaiveMfControl naive_mf_control(double kappa, double tol) {
  auto c = from_defaults<gpsvm::NaiveMfControl>(control_defaults::gpc_control);
  c.kappa = kappa;
  c.tol = tol;
  c.eta = 0.1;
  c.max_iter = 100000;
  return c;
}

inline gpsvm::SvcControl svc_control(double C, double noise, double tol, double cache_mb = 100.0) {
  auto c = from_defaults<gpsvm::SvcControl>(control_defaults::svc_control);
  c.C = C;
  c.noise = noise;
  c.tol = tol;
  c.max_iter = 1000000;
  c.cache_mb = cache_mb;
  c.shrinking = true;
  return c;
}

inline gpsvm::NaiveMfCoordinateControl naive_mf_newton_control(double kappa, double noise,
                                                               double tol,
                                                               double cache_mb = 100.0) {
  auto c = from_defaults<gpsvm::NaiveMfCoordinateControl>(control_defaults::gpc_control);
  c.kappa = kappa;
  c.noise = noise;
  c.tol = tol;
  c.max_iter = 1000;
  c.cache_mb = cache_mb;
  return c;
}

// tol_evidence = 0: stop on the hyperparameters' change alone; the
// pruning threshold and the noise's start and floor are R's.
inline gpsvm::RvmControl rvm_control(double tol, double tol_evidence = 0.0) {
  auto c = from_defaults<gpsvm::RvmControl>(control_defaults::rvm_control);
  c.max_iter = 20000;
  c.tol = tol;
  c.tol_evidence = tol_evidence;
  return c;
}

// rvm_control()'s fields, R's alpha floor and start, and the strong lambda
// start alone (R's default on scaled data tries a weak one too).
inline gpsvm::SrvmControl srvm_control(double tol, double tol_evidence = 0.0) {
  auto c = from_defaults<gpsvm::SrvmControl>(control_defaults::srvm_control);
  static_cast<gpsvm::RvmControl&>(c) = rvm_control(tol, tol_evidence);
  c.lambda_init = 1e4;
  return c;
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
