// Support vector classification without bias by the parallel kernel adatron
// (Anlauf and Biehl 1989; Friess, Cristianini and Campbell 1998), as used by
// Opper and Winther (2000, section 17.7).
//
// With Q = diag(y) K diag(y) the dual problem is
//   maximise W(alpha) = sum_i alpha_i - 1/2 alpha' Q alpha,  0 <= alpha_i <= C,
// where K may carry the input-noise variance on its diagonal (the quadratic
// slack penalty of eq. 17.16).  The adatron step
//   alpha_i <- clip_[0, C](alpha_i + eta (1 - y_i f_i)),  f = K (y * alpha),
// is projected gradient ascent on W, updating all alpha_i in parallel.
//
// Learning rate: a fixed eta diverges once eta > 2 / lambda_max(K), and
// lambda_max depends on the kernel width and the data.  So eta adapts as in
// the paper's rule (x 1.1 after a successful step, / 2 otherwise), where
// "successful" means that eta did not exceed the inverse curvature of W
// along the step (a sufficient-ascent test); a failed step is undone.  eta
// never falls below 1 / (max absolute row sum of K), a Gershgorin bound for
// 1 / lambda_max at which every projected step ascends.
//
// Stopping: max_i |clip(alpha_i + g_i) - alpha_i|^2 < tol with
// g_i = 1 - y_i f_i, the paper's criterion max |delta alpha_i|^2 < ftol
// evaluated with unit learning rate.  This "natural residual" is zero exactly
// at the Kuhn-Tucker points and, unlike the step actually taken, does not
// shrink with eta.  For C < 1 it is measured in units of C (divided by C
// before squaring): alpha lives in [0, C], and an absolute test accepts
// alpha = 0 as converged as soon as C^2 < tol, although every alpha_i then
// belongs at C.
#ifndef GPSVM_ADATRON_HPP
#define GPSVM_ADATRON_HPP

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>
#include <utility>

#include "classifier.hpp"
#include "interrupt.hpp"

namespace gpsvm {

struct AdatronControl {
  // No defaults here (see solver_status.hpp): svc() and svc_control() hold them.
  double C = kUnset;    // box bound on alpha (Inf: hard margin)
  double tol = kUnset;  // stop when max_i (natural residual_i)^2 < tol (the paper's ftol)
  int max_iter = 0;     // cap on parallel steps (including undone ones)

  template <class Self, class Visit>
  static void fields(Self& s, Visit&& v) {
    v("C", s.C, rule::of_model({is_nonnegative, "'{}' must be >= 0", 0.0, kInf}));
    v("tol", s.tol, rule::positive_finite);
    v("max_iter", s.max_iter, rule::max_iter("'{}' must be >= 1"));
  }
  void validate() const { check_fields(*this); }
};

struct AdatronResult {
  VectorXd alpha;   // dual variables, in [0, C]
  VectorXd field;   // K (y * alpha) with the K given (noise on its diagonal)
  double objective = 0.0;  // W(alpha)
  double eta = 0.0;        // final learning rate
  SolverStatus status;
};

namespace detail {

inline double clip(double a, double C) { return a < 0.0 ? 0.0 : (a > C ? C : a); }

inline double natural_residual(const VectorXd& alpha, const VectorXd& gradient, double C) {
  const double unit = C > 0.0 ? std::min(1.0, C) : 1.0;  // C = 0: every step is 0
  double worst = 0.0;
  for (Index i = 0; i < alpha.size(); ++i) {
    const double r = (clip(alpha[i] + gradient[i], C) - alpha[i]) / unit;
    worst = std::max(worst, r * r);
  }
  return worst;
}

}  // namespace detail

// Fits the adatron on kernel matrix k (noise already on its diagonal) and
// labels y in {-1, +1}.  `start`, if not empty, is a warm start (clipped to
// [0, C]); otherwise alpha starts at 0.
inline AdatronResult adatron_fit(const ConstMatrixRef& k, const ConstVectorRef& y,
                                 const AdatronControl& control, const VectorXd& start = VectorXd(),
                                 const std::function<void()>& interrupt = {}) {
  control.validate();
  check_gram(k);
  const Index n = k.rows();
  check_labels(y, n);
  const double C = control.C;

  VectorXd alpha = VectorXd::Zero(n);
  if (start.size() == n) {
    for (Index i = 0; i < n; ++i) alpha[i] = detail::clip(start[i], C);
  } else if (start.size() != 0) {
    throw std::invalid_argument("warm start has the wrong length");
  }

  auto field_of = [&](const VectorXd& a) -> VectorXd {
    return k * (y.array() * a.array()).matrix();
  };

  const double eta_min = 1.0 / k.cwiseAbs().rowwise().sum().maxCoeff();
  double eta = eta_min;
  VectorXd field = field_of(alpha);
  VectorXd gradient = VectorXd::Ones(n) - (y.array() * field.array()).matrix();
  double residual = detail::natural_residual(alpha, gradient, C);

  int it = 0;
  VectorXd trial(n), step(n), dfield(n);
  InterruptPoll poll(interrupt);  // a step is one O(n^2) product
  while (residual >= control.tol && it < control.max_iter) {
    poll();
    ++it;
    for (Index i = 0; i < n; ++i) trial[i] = detail::clip(alpha[i] + eta * gradient[i], C);
    step = trial - alpha;
    dfield.noalias() = k * (y.array() * step.array()).matrix();
    // Accept a step only where eta is below the inverse curvature of W along
    // it, (y d)' K (y d) <= |d|^2 / eta: then W rises by at least
    // |d|^2 / (2 eta) (the standard condition for projected gradient), and
    // the oscillation of a merely "W did not fall" rule, which lets eta sit
    // near 2 / lambda_max while the residual stalls, cannot occur.
    const double curvature = (step.array() * y.array() * dfield.array()).sum();
    if (eta * curvature <= step.squaredNorm() || eta <= eta_min) {  // eta_min always ascends
      alpha.swap(trial);  // clipped values, so 0 and C are exact
      // refresh the field from scratch now and then: sums of updates drift
      if (it % 64 == 0) field = field_of(alpha); else field += dfield;
      gradient = VectorXd::Ones(n) - (y.array() * field.array()).matrix();
      residual = detail::natural_residual(alpha, gradient, C);
      eta *= 1.1;
    } else {
      eta = std::max(eta / 2.0, eta_min);
    }
  }
  field = field_of(alpha);
  gradient = VectorXd::Ones(n) - (y.array() * field.array()).matrix();
  residual = detail::natural_residual(alpha, gradient, C);
  const double objective = alpha.sum() - 0.5 * (alpha.array() * y.array() * field.array()).sum();
  return {std::move(alpha), std::move(field), objective, eta,
          status_by_tol(it, residual, control.tol)};
}

}  // namespace gpsvm

#endif  // GPSVM_ADATRON_HPP
