// Glue for the joint K-class classifier of gpc() (multiclass.hpp): the fit
// on the dense or the inducing-point prior, predictions of its latent means
// and shared variances at new inputs, its class probabilities, and the
// K-class probit's one-case quantities for the tests.  Converts, calls the
// core, wraps.
#include <gpsvm/ep_predict.hpp>
#include <gpsvm/multiclass.hpp>

#include <vector>

#include "gpsvm_glue.h"

// [[Rcpp::depends(RcppEigen)]]

namespace {

gpsvm::MulticlassControl multiclass_control(const Rcpp::List& c) {
  gpsvm::MulticlassControl out;
  out.tol = gpsvm_glue::number_in(gpsvm_glue::element(c, "tol"), "tol", 0.0, R_PosInf);
  out.max_iter = gpsvm_glue::int_in(gpsvm_glue::element(c, "max_iter"), "max_iter", 1,
                                    gpsvm_glue::kMaxInt);
  if (c.containsElementNamed("adjoint_tol")) {
    out.adjoint_tol = gpsvm_glue::number_in(gpsvm_glue::element(c, "adjoint_tol"), "adjoint_tol",
                                            0.0, 1.0);
  }
  return out;
}

Eigen::VectorXi zero_based_labels(const Rcpp::IntegerVector& y, int classes) {
  Eigen::VectorXi out(y.size());
  for (R_xlen_t i = 0; i < y.size(); ++i) {
    if (y[i] == NA_INTEGER || y[i] < 1 || y[i] > classes) Rcpp::stop("'y' has a label out of range");
    out[i] = y[i] - 1;
  }
  return out;
}

}  // namespace

// The joint fit: `model` holds kernel, noise and (NULL for the dense prior)
// inducing (with the low-rank factor whose pivots they are, gpsvm_glue.h); y the classes as 1..classes; start NULL or the n x classes
// latent means to start from.  `gradient`: the variational bound's gradient;
// `loo_gradient`: the leave-one-out criterion's (dense prior only).
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_gpc_multiclass_fit(Rcpp::List model, Eigen::Map<Eigen::MatrixXd> x,
                                  Rcpp::IntegerVector y, int classes, Rcpp::List control,
                                  SEXP start, bool gradient = false, bool loo_gradient = false) try {
  const gpsvm::Kernel kernel = gpsvm_glue::kernel_from_r(gpsvm_glue::element(model, "kernel"));
  const double noise =
      gpsvm_glue::number_in(gpsvm_glue::element(model, "noise"), "noise", 0.0, R_PosInf);
  if (classes < 2) Rcpp::stop("'classes' must be 2 or more");
  const Eigen::VectorXi labels = zero_based_labels(y, classes);
  Eigen::MatrixXd m0;
  if (!Rf_isNull(start)) m0 = Rcpp::as<Eigen::MatrixXd>(start);
  const gpsvm::MulticlassControl ctl = multiclass_control(control);
  const auto interrupt = gpsvm_glue::interrupt_callback();
  const Eigen::Map<const Eigen::MatrixXd> inducing =
      gpsvm_glue::matrix_element(model, "inducing", true);
  gpsvm::MulticlassResult r;
  Eigen::MatrixXd inducing_chol;
  if (inducing.size() > 0) {
    const auto factor = gpsvm_glue::pivoted_factor(model);
    r = gpsvm::multiclass_fit_inducing(kernel, x, labels, classes, noise, inducing, m0, ctl,
                                       gradient, &inducing_chol, interrupt,
                                       factor ? &*factor : nullptr);
  } else {
    r = gpsvm::multiclass_fit(kernel, x, labels, classes, noise, m0, ctl, gradient, interrupt,
                              loo_gradient);
  }
  Rcpp::List out = Rcpp::List::create(
      Rcpp::Named("mean") = r.mean, Rcpp::Named("weights") = r.weights,
      Rcpp::Named("variance") = r.variance, Rcpp::Named("chol") = r.chol,
      Rcpp::Named("log_det_half") = r.log_det_half, Rcpp::Named("sum_log_z") = r.sum_log_z,
      Rcpp::Named("log_evidence") = r.log_evidence, Rcpp::Named("loo") = r.loo.value,
      Rcpp::Named("cg_iterations") = static_cast<double>(r.cg_iterations),
      Rcpp::Named("convergence") = gpsvm_glue::convergence_to_r(r.status));
  if (inducing.size() > 0) {
    out["inducing_weights"] = r.inducing_weights;
    out["inducing_chol"] = inducing_chol;
  }
  if (gradient) {
    out["gradient"] = r.gradient;
    out["per_input_gradient"] = r.per_input_log_width;
  }
  if (loo_gradient && r.loo.gradient.size() > 0) out["loo_gradient"] = r.loo.gradient;
  return out;
} catch (const std::bad_alloc&) {
  gpsvm_glue::stop_out_of_memory();
}

// Latent means (rows of z by class) and the shared latent variance of a
// joint fit at new inputs z: `fit` holds kernel, noise, x, weights and chol
// (dense), or inducing, inducing_weights, inducing_chol and chol (FITC).
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_gpc_multiclass_predict(Rcpp::List fit, Eigen::Map<Eigen::MatrixXd> z) try {
  using gpsvm_glue::matrix_element;
  const gpsvm::Kernel kernel = gpsvm_glue::kernel_from_r(gpsvm_glue::element(fit, "kernel"));
  const double noise =
      gpsvm_glue::number_in(gpsvm_glue::element(fit, "noise"), "noise", 0.0, R_PosInf);
  if (!(noise > 0.0)) Rcpp::stop("'noise' must be positive");
  gpsvm::EpPrediction p;
  Eigen::MatrixXd mean;
  if (fit.containsElementNamed("inducing") && !Rf_isNull(fit["inducing"])) {
    const auto inducing = matrix_element(fit, "inducing");
    const auto weights = matrix_element(fit, "inducing_weights");
    if (weights.rows() != inducing.rows()) Rcpp::stop("'inducing_weights' has the wrong size");
    const Eigen::VectorXd first = weights.col(0);
    const gpsvm::InducingFitView view{kernel, inducing, first,
                                      matrix_element(fit, "inducing_chol"),
                                      matrix_element(fit, "chol")};
    p = gpsvm::fitc_predict(view, z, true);
    mean = gpsvm::KernelEvaluator(kernel, inducing).cross(z) * weights;
  } else {
    const auto x = matrix_element(fit, "x");
    const auto weights = matrix_element(fit, "weights");
    if (weights.rows() != x.rows()) Rcpp::stop("'weights' has the wrong size");
    const Eigen::VectorXd first = weights.col(0);
    const Eigen::VectorXd tau = Eigen::VectorXd::Constant(x.rows(), 1.0 / noise);
    const gpsvm::EpFitView view{kernel, x, first, tau, matrix_element(fit, "chol")};
    p = gpsvm::ep_predict(view, z, true);
    mean = gpsvm::KernelEvaluator(kernel, x).cross(z) * weights;
  }
  return Rcpp::List::create(Rcpp::Named("mean") = mean, Rcpp::Named("variance") = p.variance);
} catch (const std::bad_alloc&) {
  gpsvm_glue::stop_out_of_memory();
}

// Class probabilities (or their logs) from latent means, shared latent
// variances and the noise variance.
// [[Rcpp::export(rng = false)]]
Eigen::MatrixXd cpp_multiclass_probabilities(Eigen::Map<Eigen::MatrixXd> mean,
                                             Eigen::Map<Eigen::VectorXd> variance, double noise,
                                             bool log = false) try {
  if (!(noise > 0.0) || !std::isfinite(noise)) Rcpp::stop("'noise' must be positive");
  if (!mean.allFinite() || !variance.allFinite()) Rcpp::stop("means and variances must be finite");
  return gpsvm::multiclass_probabilities(mean, variance, noise, log,
                                         gpsvm_glue::interrupt_callback());
} catch (const std::bad_alloc&) {
  gpsvm_glue::stop_out_of_memory();
}

// One case of class t (1-based) with latent means m and noise v: log Z, its
// gradient in m and its derivative in v.
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_argmax_site(Eigen::Map<Eigen::VectorXd> m, int t, double v) try {
  const int classes = static_cast<int>(m.size());
  if (classes < 2 || t < 1 || t > classes) Rcpp::stop("'t' must index one of the means");
  if (!(v > 0.0) || !m.allFinite()) Rcpp::stop("'v' must be positive and 'm' finite");
  std::vector<double> d, mills, work;
  Eigen::VectorXd grad(classes);
  const gpsvm::ArgmaxSite s =
      gpsvm::argmax_site(m.data(), classes, t - 1, v, grad.data(), d, mills, work);
  return Rcpp::List::create(Rcpp::Named("log_z") = s.log_z, Rcpp::Named("gradient") = grad,
                            Rcpp::Named("dv") = s.dlog_z_dv);
} catch (const std::bad_alloc&) {
  gpsvm_glue::stop_out_of_memory();
}

// The leave-one-out latent means (n x K) and latent variances of a joint fit
// from its cavities (MulticlassLoo).
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_multiclass_loo(Eigen::Map<Eigen::MatrixXd> mean, Eigen::Map<Eigen::MatrixXd> weights,
                              Eigen::Map<Eigen::VectorXd> variance, double noise) try {
  if (!(noise > 0.0) || !std::isfinite(noise)) Rcpp::stop("'noise' must be positive");
  if (weights.rows() != mean.rows() || weights.cols() != mean.cols() ||
      variance.size() != mean.rows())
    Rcpp::stop("means, weights and variances differ in size");
  const gpsvm::MulticlassLoo loo = gpsvm::multiclass_loo_moments(mean, weights, variance, noise);
  return Rcpp::List::create(Rcpp::Named("mean") = loo.mean,
                            Rcpp::Named("variance") = (loo.spread2.array() - noise).matrix());
} catch (const std::bad_alloc&) {
  gpsvm_glue::stop_out_of_memory();
}
