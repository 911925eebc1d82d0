// Stopping the core from outside (interrupt.hpp): InterruptPoll calls the
// callback at its first poll and then at most once per kInterruptPeriod, and
// a callback that throws ends every long computation with its exception
// (R's glue throws on Ctrl-C), from the kernel matrices to each solver.
#include <chrono>
#include <functional>
#include <gpsvm/adatron.hpp>
#include <gpsvm/classifier.hpp>
#include <gpsvm/dense.hpp>
#include <gpsvm/interrupt.hpp>
#include <gpsvm/kernels.hpp>
#include <gpsvm/rvm_fast.hpp>
#include <gpsvm/smo.hpp>
#include <gpsvm/srvm.hpp>
#include <thread>

#include "check.hpp"
#include "fixtures.hpp"
#include "reference.hpp"

namespace gpsvm_tests_interrupt {

namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;

struct Stop {};  // not a std::exception: nothing in the core may swallow it

const std::function<void()> kStop = [] { throw Stop{}; };

}  // namespace

TEST_CASE("interrupt: a poll calls at once, then at most once per period") {
  using Clock = std::chrono::steady_clock;
  gpsvm::InterruptPoll idle(nullptr);
  idle();  // an empty callback is allowed
  int calls = 0;
  const std::function<void()> count = [&calls] { ++calls; };
  gpsvm::InterruptPoll poll(count);
  const Clock::time_point start = Clock::now();
  poll();
  CHECK(calls == 1);
  for (int k = 0; k < 100000; ++k) poll();
  const double periods = std::chrono::duration<double>(Clock::now() - start).count() /
                         std::chrono::duration<double>(gpsvm::kInterruptPeriod).count();
  CHECK_MSG(calls <= 1 + periods, std::to_string(calls) + " calls in " +
                                      std::to_string(periods) + " periods");
  const int before = calls;
  std::this_thread::sleep_for(gpsvm::kInterruptPeriod);
  poll();
  CHECK(calls == before + 1);
}

TEST_CASE("interrupt: a throwing callback ends the kernel matrices and every solver") {
  ref::Random rng(5);
  const MatrixXd x = rng.uniform_matrix(12, 2, -2.0, 2.0);
  VectorXd y(12), label(12);
  for (int i = 0; i < 12; ++i) {
    y[i] = std::sin(x(i, 0)) + 0.1 * rng.normal();
    label[i] = x(i, 0) + x(i, 1) > 0.0 ? 1.0 : -1.0;
  }
  const gpsvm::Kernel rbf = gpsvm::Kernel::rbf(1.0);
  const gpsvm::KernelEvaluator ev(rbf, x);
  VectorXd out;
  CHECK_THROWS(gpsvm::kernel_matrix(rbf, x, kStop), Stop);
  CHECK_THROWS(gpsvm::kernel_matrix(rbf, x, x, 1, 0, kStop), Stop);
  CHECK_THROWS(ev.fast_gram(kStop), Stop);
  CHECK_THROWS(ev.multiply(y, out, kStop), Stop);
  CHECK_THROWS(ev.cross_times(x, y, kStop), Stop);
  CHECK_THROWS(gpsvm::noisy_gram(rbf, x, 0.1, kStop), Stop);
  CHECK_THROWS(gpsvm::rvm_detail::design(ev, kStop), Stop);
  CHECK_THROWS(gpsvm::crossprod(x, kStop), Stop);
  MatrixXd spd = gpsvm::noisy_gram(rbf, x, 0.1);
  CHECK_THROWS(gpsvm::cholesky_in_place(spd, kStop), Stop);
  CHECK_THROWS(gpsvm::lower_inverse(spd, kStop), Stop);
  const gpsvm::RoughnessPenalty pen{{2}, {1.0}};
  CHECK_THROWS(gpsvm::roughness_gram(ev, x, pen, kStop), Stop);
  CHECK_THROWS(gpsvm::rvm_fast_fit(rbf, x, y, fixture::rvm_control(1e-8), kStop), Stop);
  CHECK_THROWS(gpsvm::srvm_fit(rbf, x, y, x, pen, fixture::srvm_control(1e-6), kStop), Stop);
  CHECK_THROWS(gpsvm::svr_solve(rbf, x, y, fixture::svr_control(1.0, 0.1, true, 1e-6), kStop),
               Stop);
  CHECK_THROWS(gpsvm::svc_smo_solve(rbf, x, label, fixture::svc_control(1.0, 0.0, 1e-6),
                                    VectorXd(), kStop),
               Stop);
  MatrixXd k = gpsvm::noisy_gram(rbf, x, 0.1);
  CHECK_THROWS(gpsvm::adatron_fit(k, label, fixture::adatron_control(1.0, 1e-8), VectorXd(), kStop),
               Stop);
}

}  // namespace gpsvm_tests_interrupt
