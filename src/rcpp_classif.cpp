// Glue for the classifiers of Opper and Winther (2000): svc() (SMO on the
// adatron's dual, or the kernel adatron itself), gpc(method = "naive")
// (quasi-Newton steps on the mean-field equations, or Algorithm 17.1) and
// gpc(method = "tap") (the EP engine), each with its fit and its
// leave-one-out estimators (the first two share theirs, by method name).  The fast solvers
// (SMO, Newton) work from the inputs and a column cache; the paper's
// iterations and TAP from the noisy Gram matrix.  Converts, calls the core
// in inst/include/gpsvm/, wraps.  No algorithm here.
#include <gpsvm/adatron.hpp>
#include <gpsvm/classifier.hpp>
#include <gpsvm/ep_gradient.hpp>
#include <gpsvm/loo.hpp>
#include <gpsvm/naive_mf.hpp>
#include <gpsvm/smo.hpp>
#include <gpsvm/tap_classifier.hpp>

#include <vector>

#include "gpsvm_glue.h"

// [[Rcpp::depends(RcppEigen)]]

namespace {

using gpsvm_glue::element;
using gpsvm_glue::number_in;

// The prior every classifier shares: the kernel (with the bias as a
// constant) and the input noise on its diagonal (eq. 17.16).
struct Prior {
  gpsvm::Kernel kernel;
  double noise = 0.0;
};

Prior prior_from_r(const Rcpp::List& model) {
  return Prior{gpsvm_glue::kernel_from_r(element(model, "kernel")),
               number_in(element(model, "noise"), "noise", 0.0, R_PosInf)};
}

// The prior's kernel matrix with its noise on the diagonal; the build polls
// Ctrl-C (n^2 kernel evaluations).
Eigen::MatrixXd noisy_gram(const Prior& p, const Eigen::Ref<const Eigen::MatrixXd>& x) {
  return gpsvm::noisy_gram(p.kernel, x, p.noise, gpsvm_glue::interrupt_callback());
}

double gpc_kappa(const Rcpp::List& model) {
  return number_in(element(model, "kappa"), "kappa", 0.0, 0.5);
}

// control$algorithm: the first of `choices` is the fast solver on the
// inputs, the second the paper's iteration on the Gram matrix.
bool paper_algorithm(const Rcpp::List& control, std::initializer_list<const char*> choices) {
  return gpsvm_glue::choice(element(control, "algorithm"), "algorithm", choices) == 1;
}

gpsvm::AdatronControl adatron_control(const Rcpp::List& control, double C) {
  gpsvm::AdatronControl c;
  c.C = C;
  gpsvm_glue::fields_from_r(control, c);
  return c;
}

// The settings the two fast solvers (SMO, Newton) share: the prior's noise
// on the diagonal and their tables' settings (tol, max_iter, cache_mb).
template <class Control>
Control cached_solver_control(const Prior& p, const Rcpp::List& control) {
  Control c;
  c.noise = p.noise;
  gpsvm_glue::fields_from_r(control, c);
  return c;
}

gpsvm::SvcControl smo_control(const Prior& p, double C, const Rcpp::List& control) {
  auto c = cached_solver_control<gpsvm::SvcControl>(p, control);
  c.C = C;
  c.shrinking = true;
  return c;
}

gpsvm::NaiveMfCoordinateControl newton_control(const Prior& p, double kappa,
                                               const Rcpp::List& control) {
  auto c = cached_solver_control<gpsvm::NaiveMfCoordinateControl>(p, control);
  c.kappa = kappa;
  return c;
}

gpsvm::NaiveMfControl naive_control(const Rcpp::List& control, double kappa) {
  gpsvm::NaiveMfControl c;
  c.kappa = kappa;
  gpsvm_glue::fields_from_r(control, c);
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

// A fit's dual variables (the warm start, or the fit a leave-one-out
// estimate is taken from); NULL is the solver's own start.
Eigen::VectorXd optional_alpha(SEXP alpha) {
  if (Rf_isNull(alpha)) return Eigen::VectorXd();
  if (!Rf_isReal(alpha)) Rcpp::stop("'alpha' must be a numeric vector");
  return Eigen::Map<const Eigen::VectorXd>(REAL(alpha), Rf_xlength(alpha));
}

Rcpp::List alpha_fit_to_r(const Eigen::VectorXd& alpha, const Eigen::VectorXd& field,
                          const gpsvm::SolverStatus& status) {
  return Rcpp::List::create(Rcpp::Named("alpha") = alpha, Rcpp::Named("field") = field,
                            Rcpp::Named("convergence") = gpsvm_glue::convergence_to_r(status));
}

// The evidence gradient of a TAP fit: "gradient" in (log sigma, log noise,
// kappa) and, for the Gaussian kernel, "per_input_gradient" (the log sigma
// entry split by input column, for the search over a width per input); and
// the number of clamped sites, where that gradient is approximate
// (ep_gradient.hpp).
void add_gradient_to_r(const gpsvm::TapGradient& g, const gpsvm::EpResult& r,
                       const Eigen::Map<Eigen::VectorXd>& y, double kappa, Rcpp::List& out) {
  out.push_back(Rcpp::wrap(Eigen::VectorXd(g.hyper)), "gradient");
  if (g.per_input_log_width.size() > 0)
    out.push_back(Rcpp::wrap(g.per_input_log_width), "per_input_gradient");
  out.push_back(Rcpp::wrap(gpsvm::ep_clamped_sites(gpsvm::ProbitFlip(kappa, 0.0), y, r)),
                "clamped_sites");
}

// EP settings with the warm start in `sites` (site_precision, site_nu; NULL
// or absent: fresh sites).
gpsvm::EpControl ep_control_with_sites(const Rcpp::List& control, const Rcpp::List& sites) {
  gpsvm::EpControl ep = gpsvm_glue::ep_control_from_r(control);
  ep.initial_precision = gpsvm_glue::optional_vector(sites, "site_precision");
  ep.initial_nu = gpsvm_glue::optional_vector(sites, "site_nu");
  return ep;
}

// ---- svc() and gpc(method = "naive") ---------------------------------------
// Both fit dual variables alpha with the solver control$algorithm picks: the
// fast one on the inputs and a column cache, or the paper's iteration on
// the noisy Gram matrix.  A method says which core calls and settings those
// are; the fit and the leave-one-out entries below are the same for both.
// The core's calls are overloaded on the Gram matrix or the inputs; the
// forwarding keeps a temporary Gram matrix a temporary, which
// naive_mf_loo_approx() takes as its workspace instead of copying it.

// svc(): SMO on the adatron's dual, or the kernel adatron; linear response
// eqs. 17.26-17.31.
struct Svc {
  static constexpr const char* fast_solver = "smo";
  static constexpr const char* paper_solver = "adatron";
  static constexpr auto fast_control = smo_control;
  static constexpr auto paper_control = adatron_control;
  static double parameter(const Rcpp::List& model) {
    return number_in(element(model, "C"), "C", 0.0, R_PosInf);
  }
  template <class... A>
  static auto fit_on_inputs(A&&... a) { return gpsvm::svc_smo_solve(std::forward<A>(a)...); }
  template <class... A>
  static auto fit_on_gram(A&&... a) { return gpsvm::adatron_fit(std::forward<A>(a)...); }
  // either solver's result, with its objective
  template <class Result>
  static Rcpp::List fit_to_r(const Result& r) {
    Rcpp::List out = alpha_fit_to_r(r.alpha, r.field, r.status);
    out.push_back(r.objective, "objective");
    return out;
  }
  template <class... A>
  static auto loo_approx(A&&... a) { return gpsvm::svc_loo_approx(std::forward<A>(a)...); }
  template <class... A>
  static auto loo_exact(A&&... a) { return gpsvm::svc_loo_exact(std::forward<A>(a)...); }
};

// gpc(method = "naive"): quasi-Newton steps on the mean-field equations, or
// Algorithm 17.1; linear response eqs. 17.41-17.42.
struct NaiveGpc {
  static constexpr const char* fast_solver = "newton";
  static constexpr const char* paper_solver = "paper";
  static constexpr auto fast_control = newton_control;
  static constexpr auto paper_control = naive_control;
  static double parameter(const Rcpp::List& model) { return gpc_kappa(model); }
  template <class... A>
  static auto fit_on_inputs(A&&... a) { return gpsvm::naive_mf_solve(std::forward<A>(a)...); }
  template <class... A>
  static auto fit_on_gram(A&&... a) { return gpsvm::naive_mf_fit(std::forward<A>(a)...); }
  static Rcpp::List fit_to_r(const gpsvm::NaiveMfResult& r) {
    return alpha_fit_to_r(r.alpha, r.field, r.status);
  }
  template <class... A>
  static auto loo_approx(A&&... a) { return gpsvm::naive_mf_loo_approx(std::forward<A>(a)...); }
  template <class... A>
  static auto loo_exact(A&&... a) { return gpsvm::naive_mf_loo_exact(std::forward<A>(a)...); }
};

// The fit, warm-started from `alpha` (NULL: the solver's own start).
template <class Method>
Rcpp::List alpha_fit(const Rcpp::List& model, const Eigen::Map<Eigen::MatrixXd>& x,
                     const Eigen::Map<Eigen::VectorXd>& y, const Rcpp::List& control,
                     SEXP alpha) {
  const Prior p = prior_from_r(model);
  const double parameter = Method::parameter(model);
  const Eigen::VectorXd start = optional_alpha(alpha);
  const auto interrupt = gpsvm_glue::interrupt_callback();
  if (paper_algorithm(control, {Method::fast_solver, Method::paper_solver}))
    return Method::fit_to_r(Method::fit_on_gram(
        noisy_gram(p, x), y, Method::paper_control(control, parameter), start, interrupt));
  return Method::fit_to_r(Method::fit_on_inputs(
      p.kernel, x, y, Method::fast_control(p, parameter, control), start, interrupt));
}

// The linear-response leave-one-out margins of the fit `alpha`.
template <class Method>
Eigen::VectorXd alpha_loo_approx(const Rcpp::List& model, const Eigen::Map<Eigen::MatrixXd>& x,
                                 const Eigen::Map<Eigen::VectorXd>& y, const Rcpp::List& control,
                                 const Eigen::Map<Eigen::VectorXd>& alpha) {
  const Prior p = prior_from_r(model);
  const double parameter = Method::parameter(model);
  if (paper_algorithm(control, {Method::fast_solver, Method::paper_solver}))
    return Method::loo_approx(noisy_gram(p, x), y, alpha, parameter);
  return Method::loo_approx(p.kernel, x, p.noise, y, alpha, parameter);
}

// Refits without each case in `which` (1-based), warm-started from `alpha`.
template <class Method>
Rcpp::List alpha_loo_refits(const Rcpp::List& model, const Eigen::Map<Eigen::MatrixXd>& x,
                            const Eigen::Map<Eigen::VectorXd>& y, const Rcpp::List& control,
                            const Eigen::Map<Eigen::VectorXd>& alpha,
                            const Rcpp::IntegerVector& which) {
  const Prior p = prior_from_r(model);
  const double parameter = Method::parameter(model);
  const std::vector<Eigen::Index> cases = zero_based(which);
  const auto interrupt = gpsvm_glue::interrupt_callback();
  if (paper_algorithm(control, {Method::fast_solver, Method::paper_solver}))
    return refits_to_r(gpsvm::loo_exact_dense(noisy_gram(p, x), y, alpha,
                                              Method::paper_control(control, parameter), cases,
                                              interrupt));
  return refits_to_r(Method::loo_exact(p.kernel, x, y, alpha,
                                       Method::fast_control(p, parameter, control), cases,
                                       interrupt));
}

// Whether `method` is "svc" (svc()) rather than "naive" (gpc(method = "naive")).
bool is_svc(SEXP method) { return gpsvm_glue::choice(method, "method", {"svc", "naive"}) == 0; }

}  // namespace

// ---- svc() and gpc(method = "naive"): their entries ------------------------
// `method` is "svc" (`model` a list with kernel, noise and C; `control`
// svc_control()'s list with max_iter resolved) or "naive" (`model` a list
// with kernel, noise and kappa; `control` gpc_control()'s list with tol and
// max_iter resolved).

// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_alpha_fit(SEXP method, Rcpp::List model, Eigen::Map<Eigen::MatrixXd> x,
                         Eigen::Map<Eigen::VectorXd> y, Rcpp::List control, SEXP alpha) try {
  if (is_svc(method)) return alpha_fit<Svc>(model, x, y, control, alpha);
  return alpha_fit<NaiveGpc>(model, x, y, control, alpha);
} catch (const std::bad_alloc&) {
  gpsvm_glue::stop_out_of_memory();
}

// [[Rcpp::export(rng = false)]]
Eigen::VectorXd cpp_alpha_loo_approx(SEXP method, Rcpp::List model,
                                     Eigen::Map<Eigen::MatrixXd> x, Eigen::Map<Eigen::VectorXd> y,
                                     Rcpp::List control, Eigen::Map<Eigen::VectorXd> alpha) try {
  if (is_svc(method)) return alpha_loo_approx<Svc>(model, x, y, control, alpha);
  return alpha_loo_approx<NaiveGpc>(model, x, y, control, alpha);
} catch (const std::bad_alloc&) {
  gpsvm_glue::stop_out_of_memory();
}

// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_alpha_loo_refits(SEXP method, Rcpp::List model, Eigen::Map<Eigen::MatrixXd> x,
                                Eigen::Map<Eigen::VectorXd> y, Rcpp::List control,
                                Eigen::Map<Eigen::VectorXd> alpha,
                                Rcpp::IntegerVector which) try {
  if (is_svc(method)) return alpha_loo_refits<Svc>(model, x, y, control, alpha, which);
  return alpha_loo_refits<NaiveGpc>(model, x, y, control, alpha, which);
} catch (const std::bad_alloc&) {
  gpsvm_glue::stop_out_of_memory();
}

// ---- gpc(method = "tap") ---------------------------------------------------
// `model` is a list with kernel, noise, kappa and inducing (a matrix of
// inducing inputs for the FITC prior, or NULL for the dense one; with it,
// optionally inducing_held_rows and the low-rank factor whose pivots they
// are, see gpsvm_glue.h); `sites`
// the EP warm start (site_precision, site_nu; an empty list for fresh
// sites).  The approximate leave-one-out margins are the fit's cavity
// means, which the R layer has.

// With `gradient`, the result also holds the evidence's gradient in (log
// sigma, log noise, kappa) and the number of clamped sites.  `x`: a numeric
// matrix, or (with inducing inputs) a reader of rows
// (gpsvm_glue::input_rows()).
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_gpc_tap_fit(Rcpp::List model, SEXP x,
                           Eigen::Map<Eigen::VectorXd> y, Rcpp::List control, Rcpp::List sites,
                           bool gradient = false) try {
  const Prior p = prior_from_r(model);
  const double kappa = gpc_kappa(model);
  const Eigen::Map<const Eigen::MatrixXd> inducing =
      gpsvm_glue::matrix_element(model, "inducing", true);
  const gpsvm::EpControl ep = ep_control_with_sites(control, sites);
  const auto interrupt = gpsvm_glue::interrupt_callback();
  const std::unique_ptr<gpsvm::RowSource> rows = gpsvm_glue::input_rows(x);
  if (inducing.size() > 0) {  // the FITC prior: no n x n matrix is formed
    const auto factor = gpsvm_glue::pivoted_factor(model);
    const gpsvm::TapInducingFit r = gpsvm::tap_classifier_fit_inducing(
        p.kernel, *rows, y, p.noise, kappa, inducing, ep, gradient, interrupt,
        gpsvm_glue::inducing_held_rows(model), factor ? &*factor : nullptr);
    Rcpp::List out = gpsvm_glue::ep_result_to_r(r.ep);
    gpsvm_glue::add_inducing_to_r(r.inducing_chol, r.inducing, out);
    if (gradient) add_gradient_to_r(r.gradient, r.ep, y, kappa, out);
    return out;
  }
  if (!rows->held()) Rcpp::stop("a fit without inducing inputs needs its inputs in memory");
  const Eigen::Ref<const Eigen::MatrixXd>& held = *rows->held();
  const gpsvm::EpResult r =
      gpsvm::tap_classifier_fit(noisy_gram(p, held), y, kappa, ep, interrupt);
  Rcpp::List out = gpsvm_glue::ep_result_to_r(r);
  if (gradient)
    add_gradient_to_r(
        gpsvm::tap_classifier_gradient(held, y, p.kernel, p.noise, kappa, r, interrupt), r, y,
        kappa, out);
  return out;
} catch (const std::bad_alloc&) {
  gpsvm_glue::stop_out_of_memory();
}

// Refits without each case in `which` (1-based), warm-started from the
// fit's EP sites without the case (dense prior only).
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_gpc_tap_loo_refits(Rcpp::List model, Eigen::Map<Eigen::MatrixXd> x,
                                  Eigen::Map<Eigen::VectorXd> y, Rcpp::List control,
                                  Rcpp::List sites, Rcpp::IntegerVector which) try {
  const Prior p = prior_from_r(model);
  if (gpsvm_glue::matrix_element(model, "inducing", true).size() > 0)
    Rcpp::stop("leave-one-out refits of an inducing-point fit are not available");
  return refits_to_r(gpsvm::tap_loo_exact(
      noisy_gram(p, x), y, gpc_kappa(model),
      gpsvm_glue::ep_control_from_r(control), gpsvm_glue::optional_vector(sites, "site_precision"),
      gpsvm_glue::optional_vector(sites, "site_nu"), zero_based(which),
      gpsvm_glue::interrupt_callback()));
} catch (const std::bad_alloc&) {
  gpsvm_glue::stop_out_of_memory();
}
