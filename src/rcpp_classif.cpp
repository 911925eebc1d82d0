// Glue for the classifiers of Opper and Winther (2000): svc() (SMO on the
// adatron's dual, or the kernel adatron itself), gpc(method = "naive")
// (quasi-Newton steps on the mean-field equations, or Algorithm 17.1) and
// gpc(method = "tap") (the EP engine), and their leave-one-out estimators.
// One entry point: the solvers that need the noisy Gram matrix get it from
// one place; SMO and the Newton solver work from the inputs and a column
// cache.  Converts, calls the core in inst/include/gpsvm/, wraps.  No
// algorithm here.
#include <gpsvm/adatron.hpp>
#include <gpsvm/classifier.hpp>
#include <gpsvm/ep_gradient.hpp>
#include <gpsvm/loo.hpp>
#include <gpsvm/naive_mf.hpp>
#include <gpsvm/smo.hpp>
#include <gpsvm/tap_classifier.hpp>

#include <string>
#include <vector>

#include "gpsvm_glue.h"

// [[Rcpp::depends(RcppEigen)]]

namespace {

using gpsvm_glue::element;
using gpsvm_glue::number_in;

enum class Method { svc, naive, tap };

// What the R fit says about the model: its method, kernel, input noise and
// C (svc) or flip probability kappa (gpc).
struct Model {
  Method method = Method::svc;
  gpsvm::Kernel kernel;
  double noise = 0.0;
  double C = 0.0;
  double kappa = 0.0;
  // TAP only: inducing inputs (rows; empty for the dense prior)
  Eigen::MatrixXd inducing;
};

Model model_from_r(const Rcpp::List& m) {
  Model out;
  out.method = static_cast<Method>(
      gpsvm_glue::choice(element(m, "method"), "method", {"svc", "naive", "tap"}));
  out.kernel = gpsvm_glue::kernel_from_r(element(m, "kernel"));
  out.noise = number_in(element(m, "noise"), "noise", 0.0, R_PosInf);
  if (out.method == Method::svc) out.C = number_in(element(m, "C"), "C", 0.0, R_PosInf);
  else out.kappa = number_in(element(m, "kappa"), "kappa", 0.0, 0.5);
  out.inducing = gpsvm_glue::matrix_element(m, "inducing", true);
  if (out.inducing.size() > 0 && out.method != Method::tap)
    Rcpp::stop("inducing inputs are for the TAP method only");
  return out;
}

gpsvm::AdatronControl adatron_control(const Rcpp::List& control, double C) {
  gpsvm::AdatronControl c;
  c.C = C;
  c.tol = number_in(element(control, "tol"), "tol", 0.0, R_PosInf);
  c.max_iter = gpsvm_glue::int_in(element(control, "max_iter"), "max_iter", 1, gpsvm_glue::kMaxInt);
  return c;
}

// svc()'s and gpc(method = "naive")'s fast solvers (the default) work
// without the Gram matrix; control$algorithm "adatron" / "paper" asks for the
// paper's iterations on it.
bool uses_columns(const Model& m, const Rcpp::List& control) {
  if (m.method == Method::svc)
    return gpsvm_glue::choice(element(control, "algorithm"), "algorithm", {"smo", "adatron"}) == 0;
  if (m.method == Method::naive)
    return gpsvm_glue::choice(element(control, "algorithm"), "algorithm",
                              {"newton", "paper"}) == 0;
  return false;
}

gpsvm::SvcControl smo_control(const Model& m, const Rcpp::List& control) {
  gpsvm::SvcControl c;
  c.C = m.C;
  c.noise = m.noise;
  c.tol = number_in(element(control, "tol"), "tol", 0.0, R_PosInf);
  c.max_iter = gpsvm_glue::count_in(element(control, "max_iter"), "max_iter", 1, 1L << 53);
  c.cache_mb = number_in(element(control, "cache_mb"), "cache_mb", 0.0, R_PosInf);
  c.shrinking = true;
  return c;
}

gpsvm::NaiveMfCoordinateControl newton_control(const Model& m, const Rcpp::List& control) {
  gpsvm::NaiveMfCoordinateControl c;
  c.kappa = m.kappa;
  c.noise = m.noise;
  c.tol = number_in(element(control, "tol"), "tol", 0.0, R_PosInf);
  c.max_iter = gpsvm_glue::int_in(element(control, "max_iter"), "max_iter", 0, gpsvm_glue::kMaxInt);
  c.cache_mb = number_in(element(control, "cache_mb"), "cache_mb", 0.0, R_PosInf);
  return c;
}

gpsvm::NaiveMfControl naive_control(const Rcpp::List& control, double kappa) {
  gpsvm::NaiveMfControl c;
  c.kappa = kappa;
  c.tol = number_in(element(control, "tol"), "tol", 0.0, R_PosInf);
  c.eta = number_in(element(control, "eta"), "eta", 0.0, R_PosInf);
  c.max_iter = gpsvm_glue::int_in(element(control, "max_iter"), "max_iter", 0, gpsvm_glue::kMaxInt);
  return c;
}

// 1-based case numbers from R as 0-based indices (the core checks the range).
std::vector<Eigen::Index> zero_based(const Rcpp::IntegerVector& which) {
  std::vector<Eigen::Index> out;
  out.reserve(which.size());
  for (int w : which) {
    if (w == NA_INTEGER) Rcpp::stop("'which' contains NA");
    out.push_back(static_cast<Eigen::Index>(w) - 1);
  }
  return out;
}

Rcpp::List refits_to_r(const gpsvm::LooRefits& r) {
  return Rcpp::List::create(Rcpp::Named("margins") = r.margin,
                            Rcpp::Named("iterations") = Rcpp::wrap(r.iterations),
                            Rcpp::Named("not_converged") = r.not_converged);
}

// The evidence gradient of a TAP fit: "gradient" in (log sigma, log noise,
// kappa) and, for the Gaussian kernel, "per_input_gradient" (the log sigma
// entry split by input column, for the search over a width per input).
void add_gradient_to_r(const gpsvm::TapGradient& g, Rcpp::List& out) {
  out.push_back(Rcpp::wrap(Eigen::VectorXd(g.hyper)), "gradient");
  if (g.per_input_log_width.size() > 0)
    out.push_back(Rcpp::wrap(g.per_input_log_width), "per_input_gradient");
}

// A fit on the noisy Gram matrix k, from the warm start in `state` (alpha,
// or for TAP the EP sites site_precision and site_nu; NULL for the method's
// own start).  With `gradient` (TAP only) the result also holds the
// evidence's gradient in (log sigma, log noise, kappa) and the number of
// clamped sites, where that gradient is approximate (ep_gradient.hpp).
SEXP fit(const Model& m, const Eigen::MatrixXd& k, const Eigen::Map<Eigen::MatrixXd>& x,
         const Eigen::Map<Eigen::VectorXd>& y, const Rcpp::List& control,
         const Rcpp::List& state, bool gradient) {
  const auto interrupt = gpsvm_glue::interrupt_callback();
  const Eigen::VectorXd start = gpsvm_glue::optional_vector(state, "alpha");
  if (m.method == Method::svc) {
    const gpsvm::AdatronResult r =
        gpsvm::adatron_fit(k, y, adatron_control(control, m.C), start, interrupt);
    return Rcpp::List::create(Rcpp::Named("alpha") = r.alpha, Rcpp::Named("field") = r.field,
                              Rcpp::Named("objective") = r.objective, Rcpp::Named("eta") = r.eta,
                              Rcpp::Named("convergence") = gpsvm_glue::convergence_to_r(r.status));
  }
  if (m.method == Method::naive) {
    const gpsvm::NaiveMfResult r =
        gpsvm::naive_mf_fit(k, y, naive_control(control, m.kappa), start, interrupt);
    return Rcpp::List::create(Rcpp::Named("alpha") = r.alpha, Rcpp::Named("field") = r.field,
                              Rcpp::Named("z") = r.z, Rcpp::Named("eta") = r.eta,
                              Rcpp::Named("convergence") = gpsvm_glue::convergence_to_r(r.status));
  }
  gpsvm::EpControl ep = gpsvm_glue::ep_control_from_r(control);
  ep.initial_precision = gpsvm_glue::optional_vector(state, "site_precision");
  ep.initial_nu = gpsvm_glue::optional_vector(state, "site_nu");
  const gpsvm::EpResult r = gpsvm::tap_classifier_fit(k, y, m.kappa, ep, interrupt);
  Rcpp::List out = gpsvm_glue::ep_result_to_r(r);
  if (gradient) {
    add_gradient_to_r(
        gpsvm::tap_classifier_gradient(x, y, m.kernel, m.noise, m.kappa, r, interrupt), out);
    out.push_back(Rcpp::wrap(gpsvm::ep_clamped_sites(gpsvm::ProbitFlip(m.kappa, 0.0), y, r)),
                  "clamped_sites");
  }
  return out;
}

// The fast solvers' tasks, from the inputs (no Gram matrix).
Rcpp::List naive_to_r(const gpsvm::NaiveMfResult& r) {
  return Rcpp::List::create(Rcpp::Named("alpha") = r.alpha, Rcpp::Named("field") = r.field,
                            Rcpp::Named("z") = r.z,
                            Rcpp::Named("convergence") = gpsvm_glue::convergence_to_r(r.status));
}

SEXP column_task(const std::string& task, const Model& m, const Eigen::Map<Eigen::MatrixXd>& x,
                 const Eigen::Map<Eigen::VectorXd>& y, const Rcpp::List& control,
                 const Rcpp::List& state, const Rcpp::Nullable<Rcpp::IntegerVector>& which) {
  const auto interrupt = gpsvm_glue::interrupt_callback();
  const bool svc = m.method == Method::svc;
  if (task == "fit") {
    const Eigen::VectorXd start = gpsvm_glue::optional_vector(state, "alpha");
    if (svc) {
      const gpsvm::SvcResult r =
          gpsvm::svc_smo_solve(m.kernel, x, y, smo_control(m, control), start, interrupt);
      return Rcpp::List::create(
          Rcpp::Named("alpha") = r.alpha, Rcpp::Named("field") = r.field,
          Rcpp::Named("objective") = r.objective,
          Rcpp::Named("kernel_columns") = static_cast<double>(r.kernel_columns),
          Rcpp::Named("convergence") = gpsvm_glue::convergence_to_r(r.status));
    }
    return naive_to_r(
        gpsvm::naive_mf_solve(m.kernel, x, y, newton_control(m, control), start, interrupt));
  }
  const Eigen::VectorXd alpha = gpsvm_glue::vector_element(state, "alpha");
  if (task == "loo_approx") {
    if (svc) return Rcpp::wrap(gpsvm::svc_loo_approx(m.kernel, x, m.noise, y, alpha, m.C));
    return Rcpp::wrap(gpsvm::naive_mf_loo_approx(m.kernel, x, m.noise, y, alpha, m.kappa));
  }
  if (which.isNull()) Rcpp::stop("'which' is needed for exact leave-one-out refits");
  const std::vector<Eigen::Index> cases = zero_based(Rcpp::IntegerVector(which.get()));
  if (svc)
    return refits_to_r(gpsvm::svc_loo_exact(m.kernel, x, y, alpha, smo_control(m, control),
                                            cases, interrupt));
  return refits_to_r(gpsvm::naive_mf_loo_exact(m.kernel, x, y, alpha,
                                               newton_control(m, control), cases, interrupt));
}

// Linear-response leave-one-out margins of the fit in `state` (alpha).  The
// TAP method's are its cavity margins, which the R layer has already.
SEXP loo_approx(const Model& m, Eigen::MatrixXd&& k, const Eigen::Map<Eigen::VectorXd>& y,
                const Rcpp::List& state) {
  const Eigen::VectorXd alpha = gpsvm_glue::vector_element(state, "alpha");
  if (m.method == Method::svc) return Rcpp::wrap(gpsvm::svc_loo_approx(k, y, alpha, m.C));
  if (m.method == Method::naive)  // the Gram matrix is the computation's workspace
    return Rcpp::wrap(gpsvm::naive_mf_loo_approx(std::move(k), y, alpha, m.kappa));
  Rcpp::stop("the TAP method's approximate leave-one-out margins come with the fit");
}

// Refits without each case in `which`, warm-started from the fit in
// `state`: alpha, or for TAP the EP sites (NULL: fresh sites).
SEXP loo_exact(const Model& m, const Eigen::MatrixXd& k, const Eigen::Map<Eigen::VectorXd>& y,
               const Rcpp::List& control, const Rcpp::List& state,
               const Rcpp::IntegerVector& which) {
  const auto interrupt = gpsvm_glue::interrupt_callback();
  const std::vector<Eigen::Index> cases = zero_based(which);
  if (m.method == Method::tap)
    return refits_to_r(gpsvm::tap_loo_exact(
        k, y, m.kappa, gpsvm_glue::ep_control_from_r(control),
        gpsvm_glue::optional_vector(state, "site_precision"),
        gpsvm_glue::optional_vector(state, "site_nu"), cases, interrupt));
  const Eigen::VectorXd alpha = gpsvm_glue::vector_element(state, "alpha");
  if (m.method == Method::svc)
    return refits_to_r(
        gpsvm::svc_loo_exact(k, y, alpha, adatron_control(control, m.C), cases, interrupt));
  return refits_to_r(
      gpsvm::naive_mf_loo_exact(k, y, alpha, naive_control(control, m.kappa), cases, interrupt));
}

}  // namespace

// A TAP fit on the inducing-point (FITC) prior: no n x n matrix is formed.
SEXP fit_inducing(const Model& m, const Eigen::Map<Eigen::MatrixXd>& x,
                  const Eigen::Map<Eigen::VectorXd>& y, const Rcpp::List& control,
                  const Rcpp::List& state, bool gradient) {
  gpsvm::EpControl ep = gpsvm_glue::ep_control_from_r(control);
  ep.initial_precision = gpsvm_glue::optional_vector(state, "site_precision");
  ep.initial_nu = gpsvm_glue::optional_vector(state, "site_nu");
  const gpsvm::TapInducingFit r = gpsvm::tap_classifier_fit_inducing(
      m.kernel, x, y, m.noise, m.kappa, m.inducing, ep, gradient,
      gpsvm_glue::interrupt_callback());
  Rcpp::List out = gpsvm_glue::ep_result_to_r(r.ep);
  gpsvm_glue::add_inducing_to_r(r.inducing_chol, r.inducing, out);
  if (gradient) {
    add_gradient_to_r(r.gradient, out);
    out.push_back(Rcpp::wrap(gpsvm::ep_clamped_sites(gpsvm::ProbitFlip(m.kappa, 0.0), y, r.ep)),
                  "clamped_sites");
  }
  return out;
}

// `task` is "fit", "loo_approx" or "loo_exact"; `model` is a list with
// method ("svc", "naive" or "tap"), kernel, noise and C or kappa; `state`
// the fit's alpha or EP sites (or a warm start); `which` the 1-based cases
// to refit without; `gradient` asks a TAP fit for the evidence gradient.
// [[Rcpp::export(rng = false)]]
SEXP cpp_classifier(std::string task, Rcpp::List model, Eigen::Map<Eigen::MatrixXd> x,
                    Eigen::Map<Eigen::VectorXd> y, Rcpp::List control, Rcpp::List state,
                    Rcpp::Nullable<Rcpp::IntegerVector> which = R_NilValue,
                    bool gradient = false) {
  const Model m = model_from_r(model);
  if (gradient && !(task == "fit" && m.method == Method::tap))
    Rcpp::stop("the evidence gradient is for TAP fits only");
  if (task != "fit" && task != "loo_approx" && task != "loo_exact")
    Rcpp::stop("unknown task '%s'", task);
  if (m.inducing.size() > 0) {
    if (task != "fit")
      Rcpp::stop("leave-one-out refits of an inducing-point fit are not available");
    return fit_inducing(m, x, y, control, state, gradient);
  }
  if (uses_columns(m, control)) return column_task(task, m, x, y, control, state, which);
  Eigen::MatrixXd k = gpsvm::noisy_gram(m.kernel, x, m.noise);
  if (task == "fit") return fit(m, k, x, y, control, state, gradient);
  if (task == "loo_approx") return loo_approx(m, std::move(k), y, state);
  if (task == "loo_exact") {
    if (which.isNull()) Rcpp::stop("'which' is needed for exact leave-one-out refits");
    return loo_exact(m, k, y, control, state, Rcpp::IntegerVector(which.get()));
  }
  Rcpp::stop("unknown task '%s'", task);
}
