// Glue for support vector regression: control list -> SvrControl, call the
// core solver, wrap the result.
#include "gpsvm_glue.h"

#include <gpsvm/dense.hpp>
#include <gpsvm/kernels.hpp>
#include <gpsvm/smo.hpp>

// [[Rcpp::depends(RcppEigen)]]

// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_svr_fit(Rcpp::List kernel, Eigen::Map<Eigen::MatrixXd> x,
                       Eigen::Map<Eigen::VectorXd> y, Rcpp::List control) try {
  using gpsvm_glue::element;
  gpsvm::SvrControl ctl;
  ctl.C = gpsvm_glue::number_in(element(control, "C"), "C", 0.0, R_PosInf);
  ctl.epsilon = gpsvm_glue::number_in(element(control, "epsilon"), "epsilon", 0.0, R_PosInf);
  ctl.bias = gpsvm_glue::flag(element(control, "bias"), "bias");
  ctl.tol = gpsvm_glue::number_in(element(control, "tol"), "tol", 0.0, R_PosInf);
  ctl.max_iter = gpsvm_glue::count_in(element(control, "max_iter"), "max_iter", 1, gpsvm_glue::kMaxInt);
  ctl.cache_mb = gpsvm_glue::number_in(element(control, "cache_mb"), "cache_mb", 0.0, R_PosInf);
  ctl.shrinking = gpsvm_glue::flag(element(control, "shrinking"), "shrinking");
  // internal: the log noise scale of each row (svr(noise = "varying"))
  ctl.log_noise_scale = gpsvm_glue::optional_vector(control, "log_noise_scale");
  const gpsvm::SvrResult res = gpsvm::svr_solve(gpsvm_glue::kernel_from_r(kernel), x, y, ctl,
                                                gpsvm_glue::interrupt_callback());
  return Rcpp::List::create(
      Rcpp::Named("alpha_plus") = res.alpha_plus, Rcpp::Named("alpha_minus") = res.alpha_minus,
      Rcpp::Named("beta") = res.beta, Rcpp::Named("b") = res.b,
      Rcpp::Named("fitted") = res.fitted, Rcpp::Named("objective") = res.objective,
      Rcpp::Named("convergence") = gpsvm_glue::convergence_to_r(res.status),
      Rcpp::Named("kernel_columns") = static_cast<double>(res.kernel_columns));
} catch (const std::bad_alloc&) {
  gpsvm_glue::stop_out_of_memory();
}

// The lower Cholesky factor L (L L' = K + jitter I) of the kernel matrix of
// the points x, svr()'s margin vectors, with the smallest jitter that makes
// it positive definite and conditioned well enough for eq. (22)'s variances
// and eq. (16)'s determinant (dense.hpp's jittered_cholesky()).
// [[Rcpp::export(rng = false)]]
Eigen::MatrixXd cpp_margin_factor(Rcpp::List kernel, Eigen::Map<Eigen::MatrixXd> x) try {
  const auto interrupt = gpsvm_glue::interrupt_callback();
  const Eigen::MatrixXd k =
      gpsvm::KernelEvaluator(gpsvm_glue::kernel_from_r(kernel), x).gram(interrupt);
  return gpsvm::jittered_cholesky(k, 1e-2, 1e-7, "the kernel matrix of the margin vectors",
                                  interrupt)
      .lower;
} catch (const std::bad_alloc&) {
  gpsvm_glue::stop_out_of_memory();
}

// svr_margin_solve() (smo.hpp) on the margin vectors xm: list(beta, b), or
// NULL where their kernel matrix is numerically singular.
// [[Rcpp::export(rng = false)]]
SEXP cpp_svr_margin_solve(Rcpp::List kernel, Eigen::Map<Eigen::MatrixXd> xm,
                          Eigen::Map<Eigen::VectorXd> rhs, bool bias, double fixed_sum) try {
  const Eigen::MatrixXd k = gpsvm::KernelEvaluator(gpsvm_glue::kernel_from_r(kernel), xm)
                                .gram(gpsvm_glue::interrupt_callback());
  Eigen::VectorXd beta;
  double b = 0.0;
  if (!gpsvm::svr_margin_solve(k, rhs, bias, fixed_sum, beta, b)) return R_NilValue;
  return Rcpp::List::create(Rcpp::Named("beta") = beta,
                            Rcpp::Named("b") = bias ? Rcpp::wrap(b) : R_NilValue);
} catch (const std::bad_alloc&) {
  gpsvm_glue::stop_out_of_memory();
}

// Eq. (22)'s latent variance at the rows of z (of the deriv-th derivative
// in input column wrt): the prior's less what the margin vectors xm,
// known exactly, explain, from their kernel matrix's lower factor L.
// [[Rcpp::export(rng = false)]]
Eigen::VectorXd cpp_margin_variance(Rcpp::List kernel, Eigen::Map<Eigen::MatrixXd> z,
                                    Eigen::Map<Eigen::MatrixXd> xm, Eigen::Map<Eigen::MatrixXd> l,
                                    SEXP deriv, SEXP wrt) try {
  const gpsvm::Kernel k = gpsvm_glue::kernel_from_r(kernel);
  const int order = gpsvm_glue::derivative_order(deriv, "deriv");
  const Eigen::Index coord = gpsvm_glue::count_in(wrt, "wrt", 1, z.cols()) - 1;
  if (l.rows() != xm.rows() || l.cols() != xm.rows())
    Rcpp::stop("the margin factor must be %d x %d", static_cast<int>(xm.rows()),
               static_cast<int>(xm.rows()));
  const auto interrupt = gpsvm_glue::interrupt_callback();
  return gpsvm::conditional_variance(
      l, gpsvm::kernel_matrix(k, z, xm, order, coord, interrupt).transpose(),
      gpsvm::KernelEvaluator(k, z).diagonal(order, coord), interrupt);
} catch (const std::bad_alloc&) {
  gpsvm_glue::stop_out_of_memory();
}

// The diagonal of A^-1 from A's lower Cholesky factor L (dense.hpp).
// [[Rcpp::export(rng = false)]]
Eigen::VectorXd cpp_inverse_diagonal(Eigen::Map<Eigen::MatrixXd> l) try {
  if (l.rows() != l.cols()) Rcpp::stop("the factor must be square");
  return gpsvm::inverse_diagonal_from_cholesky(l, gpsvm_glue::interrupt_callback());
} catch (const std::bad_alloc&) {
  gpsvm_glue::stop_out_of_memory();
}
