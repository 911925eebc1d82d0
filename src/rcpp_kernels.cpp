// Glue for the kernel engine, and the scaled complementary error function
// the R layer uses.
#include "gpsvm_glue.h"

#include <gpsvm/special.hpp>

// [[Rcpp::depends(RcppEigen)]]

namespace {

// The input column to differentiate in, 1-based from R, 0-based here.
Eigen::Index column_from_r(SEXP wrt, Eigen::Index columns) {
  return gpsvm_glue::count_in(wrt, "wrt", 1, columns) - 1;
}

}  // namespace

// The Gram matrix of x, or the cross matrix of the deriv-th derivative in
// input column wrt between x (differentiated) and y (x when NULL).
// [[Rcpp::export(rng = false)]]
Eigen::MatrixXd cpp_kernel_matrix(Rcpp::List kernel, Eigen::Map<Eigen::MatrixXd> x,
                                  Rcpp::Nullable<Rcpp::NumericMatrix> y, SEXP deriv, SEXP wrt) try {
  const gpsvm::Kernel k = gpsvm_glue::kernel_from_r(kernel);
  const int order = gpsvm_glue::derivative_order(deriv, "deriv");
  const Eigen::Index coord = column_from_r(wrt, x.cols());
  const auto interrupt = gpsvm_glue::interrupt_callback();
  if (y.isNull() && order == 0) return gpsvm::kernel_matrix(k, x, interrupt);
  if (y.isNull()) return gpsvm::kernel_matrix(k, x, x, order, coord, interrupt);
  const Rcpp::NumericMatrix ym(y.get());
  const Eigen::Map<const Eigen::MatrixXd> ye(ym.begin(), ym.nrow(), ym.ncol());
  return gpsvm::kernel_matrix(k, x, ye, order, coord, interrupt);
} catch (const std::bad_alloc&) {
  gpsvm_glue::stop_out_of_memory();
}

// sum_j k(z_i, x_j) w_j for each row of z: a kernel expansion's values at
// new inputs without the cross matrix.
// [[Rcpp::export(rng = false)]]
Eigen::VectorXd cpp_kernel_times(Rcpp::List kernel, Eigen::Map<Eigen::MatrixXd> z,
                                 Eigen::Map<Eigen::MatrixXd> x, Eigen::Map<Eigen::VectorXd> w) try {
  return gpsvm::KernelEvaluator(gpsvm_glue::kernel_from_r(kernel), x)
      .cross_times(z, w, gpsvm_glue::interrupt_callback());
} catch (const std::bad_alloc&) {
  gpsvm_glue::stop_out_of_memory();
}

// k(x_i, x_i) for each row of x, the prior variance of the latent function
// there; with deriv = n > 0 the prior variance of its n-th derivative in
// input column `wrt`.
// [[Rcpp::export(rng = false)]]
Eigen::VectorXd cpp_kernel_diagonal(Rcpp::List kernel, Eigen::Map<Eigen::MatrixXd> x,
                                    SEXP deriv, SEXP wrt) try {
  return gpsvm::KernelEvaluator(gpsvm_glue::kernel_from_r(kernel), x)
      .diagonal(gpsvm_glue::derivative_order(deriv, "deriv"), column_from_r(wrt, x.cols()));
} catch (const std::bad_alloc&) {
  gpsvm_glue::stop_out_of_memory();
}

// The largest of cpp_kernel_diagonal(kernel, x, deriv, wrt) over every row
// and every input column wrt, in one pass.
// [[Rcpp::export(rng = false)]]
double cpp_kernel_diagonal_max(Rcpp::List kernel, Eigen::Map<Eigen::MatrixXd> x, SEXP deriv) try {
  return gpsvm::KernelEvaluator(gpsvm_glue::kernel_from_r(kernel), x)
      .largest_diagonal(gpsvm_glue::derivative_order(deriv, "deriv"));
} catch (const std::bad_alloc&) {
  gpsvm_glue::stop_out_of_memory();
}

// erfcx(x) = exp(x^2) erfc(x), elementwise.
// [[Rcpp::export(rng = false)]]
Rcpp::NumericVector cpp_erfcx(Rcpp::NumericVector x) try {
  Rcpp::NumericVector out(x.size());
  for (R_xlen_t i = 0; i < x.size(); ++i) out[i] = gpsvm::erfcx(x[i]);
  return out;
} catch (const std::bad_alloc&) {
  gpsvm_glue::stop_out_of_memory();
}
