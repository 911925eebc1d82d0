// Glue for the relevance vector machines: convert, call the core, wrap.
#include "gpsvm_glue.h"

#include <gpsvm/rvm_fast.hpp>
#include <gpsvm/rvm_noise.hpp>
#include <gpsvm/srvm.hpp>

#include <optional>

// [[Rcpp::depends(RcppEigen)]]

namespace {

using gpsvm_glue::element;
using gpsvm_glue::number_in;

// rvm_control()'s settings (shared by srvm_control()).
gpsvm::RvmControl rvm_control_from_r(const Rcpp::List& c) {
  gpsvm::RvmControl out;
  gpsvm_glue::fields_from_r(c, out);
  return out;
}

// NULL (learn it) or a fixed value.
std::optional<double> fixed_from_r(const Rcpp::List& c, const char* name, double lower) {
  SEXP value = element(c, name);
  if (Rf_isNull(value)) return std::nullopt;
  return number_in(value, name, lower, R_PosInf);
}

// srvm_control()'s settings.
gpsvm::SrvmControl srvm_control_from_r(const Rcpp::List& c) {
  gpsvm::SrvmControl out;
  gpsvm_glue::fields_from_r(c, out);
  out.lambda = fixed_from_r(c, "lambda", 0.0);
  out.sigma2 = fixed_from_r(c, "sigma2", 0.0);
  return out;
}

// The roughness operator's derivative orders (within the kernels' limit)
// and weights.
gpsvm::RoughnessPenalty penalty_from_r(const Rcpp::List& pen) {
  gpsvm::RoughnessPenalty out;
  const Rcpp::NumericVector orders(element(pen, "orders"));
  for (R_xlen_t i = 0; i < orders.size(); ++i)
    out.orders.push_back(gpsvm_glue::derivative_order(Rcpp::wrap(orders[i]), "orders"));
  const Eigen::Map<const Eigen::VectorXd> weights = gpsvm_glue::vector_element(pen, "weights");
  out.weights.assign(weights.data(), weights.data() + weights.size());
  return out;
}

// 1-based rows of x, each checked, as the core's 0-based centres.
std::vector<Eigen::Index> centre_rows(const Rcpp::IntegerVector& rows, Eigen::Index n) {
  if (rows.size() < 1) Rcpp::stop("'basis' must name at least one row of 'x'");
  std::vector<Eigen::Index> out(static_cast<size_t>(rows.size()));
  for (R_xlen_t i = 0; i < rows.size(); ++i) {
    if (rows[i] == NA_INTEGER || rows[i] < 1 || rows[i] > n)
      Rcpp::stop("'basis' rows must lie in 1..nrow(x)");
    out[static_cast<size_t>(i)] = rows[i] - 1;
  }
  return out;
}

Rcpp::List rvm_result_to_r(const gpsvm::RvmResult& r) {
  Rcpp::IntegerVector active(r.active.size());
  for (size_t i = 0; i < r.active.size(); ++i) active[i] = static_cast<int>(r.active[i]);
  return Rcpp::List::create(
      Rcpp::Named("active") = active, Rcpp::Named("mu") = r.mu, Rcpp::Named("Sigma") = r.Sigma,
      Rcpp::Named("alpha") = r.alpha, Rcpp::Named("lambda") = r.lambda,
      Rcpp::Named("sigma2") = r.sigma2, Rcpp::Named("log_lik") = r.log_lik,
      Rcpp::Named("convergence") = gpsvm_glue::convergence_to_r(r.status),
      Rcpp::Named("trace_log_lik") = Rcpp::wrap(r.trace_log_lik));
}

}  // namespace

// The smooth RVM (srvm()) when `penalty` is a list with the penalty points
// and the penalty's orders and weights, else the plain RVM (rvm()) by the
// fast algorithm; either on the candidate centres `basis` (1-based rows of
// x; NULL: every row).
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_rvm_fit(Rcpp::List kernel, Eigen::Map<Eigen::MatrixXd> x,
                       Eigen::Map<Eigen::VectorXd> y, Rcpp::List control,
                       Rcpp::Nullable<Rcpp::List> penalty = R_NilValue,
                       Rcpp::Nullable<Rcpp::IntegerVector> basis = R_NilValue) try {
  const gpsvm::Kernel k = gpsvm_glue::kernel_from_r(kernel);
  const auto interrupt = gpsvm_glue::interrupt_callback();
  std::optional<std::vector<Eigen::Index>> centres;
  if (basis.isNotNull()) centres = centre_rows(Rcpp::IntegerVector(basis.get()), x.rows());
  const std::vector<Eigen::Index>* centres_or_all = centres ? &*centres : nullptr;
  if (penalty.isNull()) {
    return rvm_result_to_r(gpsvm::rvm_fast_fit(k, x, y, rvm_control_from_r(control), interrupt,
                                               centres_or_all));
  }
  const Rcpp::List pen(penalty.get());
  return rvm_result_to_r(gpsvm::srvm_fit(k, x, y, gpsvm_glue::matrix_element(pen, "points"),
                                         penalty_from_r(pen), srvm_control_from_r(control),
                                         interrupt, centres_or_all));
} catch (const std::bad_alloc&) {
  gpsvm_glue::stop_out_of_memory();
}

// The RVMs' log evidence at given hyperparameters (the kept weights'
// design, their alphas, lambda and the penalty on them, or NULL, and the
// noise variance) and its gradient in their logs (rvm_posterior.hpp's
// evidence_gradient()), for confint()'s curvature.
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_rvm_evidence_gradient(Eigen::Map<Eigen::MatrixXd> design,
                                     Eigen::Map<Eigen::VectorXd> y,
                                     Eigen::Map<Eigen::VectorXd> alpha, double lambda,
                                     double sigma2,
                                     Rcpp::Nullable<Rcpp::NumericMatrix> penalty = R_NilValue) try {
  std::optional<Eigen::MatrixXd> p;
  if (penalty.isNotNull()) p = Rcpp::as<Eigen::MatrixXd>(Rcpp::NumericMatrix(penalty.get()));
  const gpsvm::rvm_detail::EvidenceGradient g = gpsvm::rvm_detail::evidence_gradient(
      design, y, p ? &*p : nullptr, alpha, lambda, sigma2, gpsvm_glue::interrupt_callback());
  return Rcpp::List::create(Rcpp::Named("value") = g.value,
                            Rcpp::Named("log_alpha") = g.log_alpha,
                            Rcpp::Named("log_sigma2") = g.log_sigma2,
                            Rcpp::Named("log_lambda") = g.log_lambda);
} catch (const std::bad_alloc&) {
  gpsvm_glue::stop_out_of_memory();
}

// The kernel choice's evidence of rvm() and srvm(): a Gaussian process's
// log evidence with the kernel on the rows x, maximised over its amplitude
// and noise variance (rvm_posterior.hpp's gp_kernel_evidence()).
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_gp_kernel_evidence(Rcpp::List kernel, Eigen::Map<Eigen::MatrixXd> x,
                                  Eigen::Map<Eigen::VectorXd> y) try {
  const gpsvm::GpKernelEvidence e = gpsvm::gp_kernel_evidence(
      gpsvm_glue::kernel_from_r(kernel), x, y, gpsvm_glue::interrupt_callback());
  return Rcpp::List::create(Rcpp::Named("log_evidence") = e.log_evidence,
                            Rcpp::Named("amplitude") = e.amplitude,
                            Rcpp::Named("noise") = e.noise);
} catch (const std::bad_alloc&) {
  gpsvm_glue::stop_out_of_memory();
}

// rvm(noise = "varying"): the noise variance sigma2 exp(basis theta) at the
// posterior mode of theta (rvm_noise.hpp), one fit per element
// list(basis, precision) of `noise_bases`, each with the constant-noise fit
// beside it; `noise_control` the scoring steps, tolerance and screen.
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_rvm_varying_noise_fit(Rcpp::List kernel, Eigen::Map<Eigen::MatrixXd> x,
                                     Eigen::Map<Eigen::VectorXd> y, Rcpp::List control,
                                     Rcpp::List noise_bases, Rcpp::List noise_control,
                                     Rcpp::Nullable<Rcpp::IntegerVector> basis = R_NilValue) try {
  const gpsvm::Kernel k = gpsvm_glue::kernel_from_r(kernel);
  std::optional<std::vector<Eigen::Index>> centres;
  if (basis.isNotNull()) centres = centre_rows(Rcpp::IntegerVector(basis.get()), x.rows());
  const std::vector<gpsvm::VaryingNoiseResult> results = gpsvm::rvm_varying_noise_fits(
      k, x, y, rvm_control_from_r(control), gpsvm_glue::noise_bases_from_r(noise_bases),
      gpsvm_glue::varying_noise_control_from_r(noise_control), gpsvm_glue::interrupt_callback(),
      centres ? &*centres : nullptr);
  Rcpp::List out;
  for (const gpsvm::VaryingNoiseResult& r : results) {
    out.push_back(Rcpp::List::create(Rcpp::Named("fit") = rvm_result_to_r(r.fit),
                                     Rcpp::Named("constant") = rvm_result_to_r(r.constant),
                                     Rcpp::Named("theta") = r.theta, Rcpp::Named("eta") = r.eta,
                                     Rcpp::Named("log_marginal") = r.log_marginal,
                                     Rcpp::Named("first_step_log_bf") = r.first_step_log_bf,
                                     Rcpp::Named("screened") = r.screened,
                                     Rcpp::Named("convergence") =
                                         gpsvm_glue::convergence_to_r(r.status)));
  }
  return out;
} catch (const std::bad_alloc&) {
  gpsvm_glue::stop_out_of_memory();
}
