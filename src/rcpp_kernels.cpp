// Glue for the kernel engine and the special functions.
#include "gpsvm_glue.h"

#include <gpsvm/special.hpp>

// [[Rcpp::depends(RcppEigen)]]

// [[Rcpp::export]]
Eigen::MatrixXd cpp_kernel_matrix(Rcpp::List kernel, Eigen::Map<Eigen::MatrixXd> x,
                                  Rcpp::Nullable<Rcpp::NumericMatrix> y, int deriv,
                                  int wrt) {
  const gpsvm::Kernel k = gpsvm_glue::kernel_from_r(kernel);
  if (y.isNull() && deriv == 0) return gpsvm::kernel_matrix(k, x);
  if (y.isNull()) return gpsvm::kernel_matrix(k, x, x, deriv, wrt - 1);
  const Rcpp::NumericMatrix ym(y.get());
  const Eigen::Map<const Eigen::MatrixXd> ye(ym.begin(), ym.nrow(), ym.ncol());
  return gpsvm::kernel_matrix(k, x, ye, deriv, wrt - 1);
}

// k(x_i, x_i) for each row of x, the prior variance of the latent function
// there; with deriv = n > 0 the prior variance of its n-th derivative in
// input column `wrt`.
// [[Rcpp::export]]
Eigen::VectorXd cpp_kernel_diagonal(Rcpp::List kernel, Eigen::Map<Eigen::MatrixXd> x,
                                    int deriv = 0, int wrt = 1) {
  return gpsvm::KernelEvaluator(gpsvm_glue::kernel_from_r(kernel), x).diagonal(deriv, wrt - 1);
}

// Vectorised special functions, exposed for the tests and the R layer.
// [[Rcpp::export]]
Rcpp::NumericVector cpp_special(std::string name, Rcpp::NumericVector x,
                                Rcpp::NumericVector y) {
  Rcpp::NumericVector out(x.size());
  for (R_xlen_t i = 0; i < x.size(); ++i) {
    const double a = x[i];
    if (name == "log_norm_cdf") out[i] = gpsvm::log_norm_cdf(a);
    else if (name == "mills_ratio") out[i] = gpsvm::mills_ratio(a);
    else if (name == "erfcx") out[i] = gpsvm::erfcx(a);
    else if (name == "log_erfc") out[i] = gpsvm::log_erfc(a);
    else if (name == "log_exp_erfc") out[i] = gpsvm::log_exp_erfc(a, y[i]);
    else if (name == "flip_mills_ratio") out[i] = gpsvm::flip_mills_ratio(a, y[i]);
    else if (name == "flip_mills_curvature") out[i] = gpsvm::flip_mills_curvature(a, y[i]);
    else Rcpp::stop("unknown special function '" + name + "'");
  }
  return out;
}
