// Glue for mean-field support vector regression: convert, call, wrap.
// Predictions go through the EP engine's entry (rcpp_ep.cpp).
#include "gpsvm_glue.h"

#include <gpsvm/mfsvr.hpp>
#include <gpsvm/mfsvr_noise.hpp>

// [[Rcpp::depends(RcppEigen)]]

namespace {

gpsvm::MfsvrControl control_from_r(const Rcpp::List& c) {
  using gpsvm_glue::element;
  gpsvm::MfsvrControl out;
  out.algorithm = gpsvm_glue::choice(element(c, "algorithm"), "algorithm", {"ep", "paper"}) == 1
                      ? gpsvm::MfsvrAlgorithm::paper
                      : gpsvm::MfsvrAlgorithm::ep;
  out.ep = gpsvm_glue::ep_control_from_r(c);
  // (max_iter, tol and seed again, the same settings as EP's)
  gpsvm_glue::fields_from_r(c, out.paper);
  // inducing inputs (scaled like x), set by the R layer from mfsvr(inducing = )
  // or, with their pivoted factor, from its low-rank prior (R/inducing.R)
  out.inducing = gpsvm_glue::matrix_element(c, "inducing", true);
  if (auto factor = gpsvm_glue::pivoted_factor(c)) out.inducing_factor.emplace(std::move(*factor));
  out.inducing_held_rows = gpsvm_glue::inducing_held_rows(c);
  // internal warm start: the sites of an earlier fit (evidence optimisation)
  out.ep.initial_precision = gpsvm_glue::optional_vector(c, "start_precision");
  out.ep.initial_nu = gpsvm_glue::optional_vector(c, "start_nu");
  // and, when that fit had the same kernel matrix, its posterior marginals
  out.ep.initial_mean = gpsvm_glue::optional_vector(c, "start_mean");
  out.ep.initial_variance = gpsvm_glue::optional_vector(c, "start_variance");
  // internal: the evidence search over a width per input asks for the
  // gradient by coordinate
  out.per_input_gradient = c.containsElementNamed("per_input_gradient") &&
                           gpsvm_glue::flag(c["per_input_gradient"], "per_input_gradient");
  // internal: a search that keeps the kernel fixed skips the width's gradient
  out.width_gradient = !c.containsElementNamed("width_gradient") ||
                       gpsvm_glue::flag(c["width_gradient"], "width_gradient");
  // internal: the log noise scale of each row (mfsvr(noise = "varying"))
  out.log_noise_scale = gpsvm_glue::optional_vector(c, "log_noise_scale");
  // internal: mfsvr()'s default search for C, made while EP converges
  if (c.containsElementNamed("C_search") && !Rf_isNull(c["C_search"])) {
    const Rcpp::List s = c["C_search"];
    out.choose_C = true;
    gpsvm_glue::fields_from_r(s, out.C_search);
  }
  return out;
}

// The record of the search for C (MfsvrCSearchRecord) for the R layer.
Rcpp::List C_search_to_r(const gpsvm::MfsvrCSearchRecord& r) {
  const std::size_t k = r.points.size();
  Rcpp::NumericVector C(k), gradient(k), log_evidence(k), residual(k);
  Rcpp::IntegerVector sweeps(k);
  for (std::size_t i = 0; i < k; ++i) {
    C[i] = r.points[i].C;
    gradient[i] = r.points[i].gradient;
    log_evidence[i] = r.points[i].log_evidence;
    residual[i] = r.points[i].residual;
    sweeps[i] = r.points[i].sweeps;
  }
  return Rcpp::List::create(
      Rcpp::Named("C") = C, Rcpp::Named("gradient") = gradient,
      Rcpp::Named("log_evidence") = log_evidence, Rcpp::Named("residual") = residual,
      Rcpp::Named("sweeps") = sweeps, Rcpp::Named("settled") = r.settled,
      Rcpp::Named("at_lower") = r.at_lower, Rcpp::Named("at_upper") = r.at_upper,
      Rcpp::Named("moves") = r.moves);
}

}  // namespace

// `x`: a numeric matrix, or (with inducing inputs) a reader of rows
// (gpsvm_glue::input_rows()).
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_mfsvr_fit(Rcpp::List kernel, SEXP x,
                         Eigen::Map<Eigen::VectorXd> y, double C, double epsilon,
                         Rcpp::List control, bool gradient) try {
  const gpsvm::Kernel k = gpsvm_glue::kernel_from_r(kernel);
  gpsvm::MfsvrControl ctrl = control_from_r(control);
  ctrl.gradient = gradient;
  const gpsvm::MfsvrFit fit =
      gpsvm::mfsvr_fit(*gpsvm_glue::input_rows(x), y, k, C, epsilon, ctrl,
                       gpsvm_glue::interrupt_callback());
  Rcpp::List out = gpsvm_glue::ep_result_to_r(fit.ep);
  out["gradient"] = Eigen::VectorXd(fit.gradient);
  out["C"] = fit.C;
  if (ctrl.choose_C) out["C_search"] = C_search_to_r(fit.C_search);
  if (fit.per_input_gradient.size() > 0) out["per_input_gradient"] = fit.per_input_gradient;
  if (fit.row_gradient.size() > 0) {
    out["row_gradient"] = fit.row_gradient;
    out["row_curvature"] = fit.row_curvature;
  }
  if (ctrl.inducing.size() > 0) gpsvm_glue::add_inducing_to_r(fit.inducing_chol, fit.inducing, out);
  return out;
} catch (const std::bad_alloc&) {
  gpsvm_glue::stop_out_of_memory();
}


// mfsvr(noise = "varying"): the noise scale exp(level + basis theta) at the
// posterior mode of (level, theta), theta ~ N(0, precision^-1)
// (mfsvr_noise.hpp), at the given C, epsilon and kernel, one fit per element
// list(basis, precision) of `noise_bases`; for each, the sites of that fit
// (for the R layer's fit, warm-started from them) and both models'
// evidences.
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_mfsvr_varying_noise_fit(Rcpp::List kernel, Eigen::Map<Eigen::MatrixXd> x,
                                       Eigen::Map<Eigen::VectorXd> y, double C, double epsilon,
                                       Rcpp::List control, Rcpp::List noise_bases,
                                       Rcpp::List noise_control) try {
  const gpsvm::Kernel k = gpsvm_glue::kernel_from_r(kernel);
  const std::vector<gpsvm::MfsvrNoiseResult> results = gpsvm::mfsvr_varying_noise_fits(
      x, y, k, C, epsilon, control_from_r(control), gpsvm_glue::noise_bases_from_r(noise_bases),
      gpsvm_glue::varying_noise_control_from_r(noise_control), gpsvm_glue::interrupt_callback());
  Rcpp::List out;
  for (const gpsvm::MfsvrNoiseResult& r : results) {
    out.push_back(Rcpp::List::create(
        Rcpp::Named("site_precision") = r.fit.ep.site_precision,
        Rcpp::Named("site_nu") = r.fit.ep.site_nu, Rcpp::Named("theta") = r.theta,
        Rcpp::Named("level") = r.level, Rcpp::Named("log_noise_scale") = r.log_noise_scale,
        Rcpp::Named("log_amplitude") = r.log_amplitude,
        Rcpp::Named("log_evidence") = r.log_evidence,
        Rcpp::Named("log_marginal") = r.log_marginal,
        Rcpp::Named("constant_log_evidence") = r.constant_log_evidence,
        Rcpp::Named("first_step_log_bf") = r.first_step_log_bf,
        Rcpp::Named("screened") = r.screened,
        Rcpp::Named("convergence") = gpsvm_glue::convergence_to_r(r.status)));
  }
  return out;
} catch (const std::bad_alloc&) {
  gpsvm_glue::stop_out_of_memory();
}
