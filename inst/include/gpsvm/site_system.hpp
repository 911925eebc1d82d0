// The log evidence a constant offset b added to the prior covariance K would
// gain at an EP fit's sites, without a fit with it: the sites' Gaussian
// pseudo-targets t (precisions s, natural means nu = s t) have the evidence
// log N(t; 0, A), A = K + S^-1, and the offset's b 1 1' changes it by the
// rank-one update
//   (b r^2 / (1 + b q) - log(1 + b q)) / 2,  q = 1' A^-1 1,  r = 1' A^-1 t,
// computed as q = a' B^-1 a and r = a' B^-1 u with a = s^1/2, u = nu / a
// (0 where a site has precision 0: it drops out) and
// B = I + diag(a) K diag(a), the matrix EP factors.  The sites barely move
// when a constant joins the prior, so the gain at the sites is close to the
// refitted one.
// Pure C++17 + Eigen: no R headers.
#ifndef GPSVM_SITE_SYSTEM_HPP
#define GPSVM_SITE_SYSTEM_HPP

#include <Eigen/Dense>

#include <cmath>
#include <functional>
#include <stdexcept>

#include "dense.hpp"

namespace gpsvm {

// B^-1 V from B's lower Cholesky factor L.
inline Eigen::MatrixXd site_solve_dense(const Eigen::Ref<const Eigen::MatrixXd>& l,
                                        Eigen::MatrixXd v) {
  l.triangularView<Eigen::Lower>().solveInPlace(v);
  l.triangularView<Eigen::Lower>().transpose().solveInPlace(v);
  return v;
}

// B^-1 V for K = W W' + diag(lambda) (a low-rank factor, lambda = 0; or
// FITC's V'V and its diagonal rest) by the Woodbury identity in O(n r^2):
// with E = I + diag(a^2 lambda) and H = diag(a) W,
// B^-1 = E^-1 - E^-1 H (I + H' E^-1 H)^-1 H' E^-1.
inline Eigen::MatrixXd site_solve_low_rank(const Eigen::MatrixXd& w, const Eigen::VectorXd& lambda,
                                           const Eigen::VectorXd& a, const Eigen::MatrixXd& v) {
  const Eigen::ArrayXd e = 1.0 + a.array().square() * lambda.array();
  const Eigen::MatrixXd h = a.asDiagonal() * w;
  const Eigen::MatrixXd he = (h.array().colwise() / e).matrix();
  const Eigen::MatrixXd ev = (v.array().colwise() / e).matrix();
  Eigen::MatrixXd inner = Eigen::MatrixXd::Identity(w.cols(), w.cols());
  inner.noalias() += h.transpose() * he;
  const Eigen::PartialPivLU<Eigen::MatrixXd> lu(inner);
  return ev - he * lu.solve(h.transpose() * ev);
}

// The gain from solve(V), V = [a, u]: B^-1 V.
inline double offset_gain(const Eigen::VectorXd& site_precision, const Eigen::VectorXd& site_nu,
                          double b,
                          const std::function<Eigen::MatrixXd(const Eigen::VectorXd&,
                                                              const Eigen::MatrixXd&)>& solve) {
  if (site_precision.size() != site_nu.size())
    throw std::invalid_argument("the sites' precisions and natural means differ in length");
  const Eigen::VectorXd a = site_precision.cwiseSqrt();
  Eigen::MatrixXd v(a.size(), 2);
  v.col(0) = a;
  for (Eigen::Index i = 0; i < a.size(); ++i) v(i, 1) = a[i] > 0.0 ? site_nu[i] / a[i] : 0.0;
  const Eigen::MatrixXd solved = solve(a, v);
  const double q = a.dot(solved.col(0));
  const double r = a.dot(solved.col(1));
  return (b * r * r / (1.0 + b * q) - std::log1p(b * q)) / 2.0;
}

}  // namespace gpsvm

#endif  // GPSVM_SITE_SYSTEM_HPP
