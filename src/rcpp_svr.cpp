// Glue for support vector regression: control list -> SvrControl, call the
// core solver, wrap the result.
#include "gpsvm_glue.h"

#include <gpsvm/dense.hpp>
#include <gpsvm/kernels.hpp>
#include <gpsvm/smo.hpp>

// [[Rcpp::depends(RcppEigen)]]

// svr()'s fit: the dual by SMO, polished to its exact optimum (smo.hpp's
// svr_fit()) when control$margin_tol is given, with the split of the
// points (0: X_0, 1: X_C, 2: X_M-, 3: X_M+) at that tolerance; the SMO
// solution alone without it.
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_svr_fit(Rcpp::List kernel, Eigen::Map<Eigen::MatrixXd> x,
                       Eigen::Map<Eigen::VectorXd> y, Rcpp::List control) try {
  using gpsvm_glue::element;
  gpsvm::SvrControl ctl;
  gpsvm_glue::fields_from_r(control, ctl);
  // internal: the log noise scale of each row (svr(noise = "varying"))
  ctl.log_noise_scale = gpsvm_glue::optional_vector(control, "log_noise_scale");
  const gpsvm::Kernel k = gpsvm_glue::kernel_from_r(kernel);
  const auto interrupt = gpsvm_glue::interrupt_callback();
  const bool polish =
      control.containsElementNamed("margin_tol") && !Rf_isNull(control["margin_tol"]);
  SEXP margin_tol = polish ? element(control, "margin_tol") : R_NilValue;
  const double tol = polish ? gpsvm_glue::number_in(margin_tol, "margin_tol", 0.0, 0.5) : 0.0;
  const gpsvm::SvrResult res =
      polish ? gpsvm::svr_fit(k, x, y, ctl, tol, interrupt) : gpsvm::svr_solve(k, x, y, ctl, interrupt);
  Rcpp::List out = Rcpp::List::create(
      Rcpp::Named("alpha_plus") = res.alpha_plus, Rcpp::Named("alpha_minus") = res.alpha_minus,
      Rcpp::Named("beta") = res.beta, Rcpp::Named("b") = res.b,
      Rcpp::Named("fitted") = res.fitted, Rcpp::Named("objective") = res.objective,
      Rcpp::Named("convergence") = gpsvm_glue::convergence_to_r(res.status),
      Rcpp::Named("kernel_columns") = static_cast<double>(res.kernel_columns),
      Rcpp::Named("polished") = res.polished);
  if (polish) {
    Eigen::VectorXd box = Eigen::VectorXd::Constant(y.size(), ctl.C);
    if (ctl.log_noise_scale.size() > 0) box = box.cwiseQuotient(ctl.log_noise_scale.array().exp().matrix());
    out["partition"] = Rcpp::wrap(gpsvm::svr_partition(res.beta, box, tol));
  }
  return out;
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
