// Glue for what the EP engine gives every model on it (mfsvr() and the TAP
// classifier): predictions at new inputs.
#include "gpsvm_glue.h"

#include <gpsvm/ep_predict.hpp>

// [[Rcpp::depends(RcppEigen)]]

// Posterior mean and latent variance (of the deriv-th derivative in input
// column wrt) at the rows of z.  `fit` holds the fit's kernel, training
// inputs x, weights, site_precision, chol and, for a low-rank fit, factor.
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_ep_predict(Rcpp::List fit, Eigen::Map<Eigen::MatrixXd> z, bool want_variance,
                          SEXP deriv, SEXP wrt) {
  using gpsvm_glue::matrix_element;
  using gpsvm_glue::vector_element;
  const gpsvm::Kernel kernel = gpsvm_glue::kernel_from_r(gpsvm_glue::element(fit, "kernel"));
  const gpsvm::EpFitView view{kernel,
                              matrix_element(fit, "x"),
                              vector_element(fit, "weights"),
                              vector_element(fit, "site_precision"),
                              matrix_element(fit, "chol"),
                              matrix_element(fit, "factor", true)};
  const int order = gpsvm_glue::derivative_order(deriv, "deriv");
  const Eigen::Index coord = gpsvm_glue::count_in(wrt, "wrt", 1, z.cols()) - 1;
  const gpsvm::EpPrediction p = gpsvm::ep_predict(view, z, want_variance, order, coord);
  if (!want_variance) return Rcpp::List::create(Rcpp::Named("mean") = p.mean);
  return Rcpp::List::create(Rcpp::Named("mean") = p.mean, Rcpp::Named("variance") = p.variance);
}
