// Glue for what the EP engine gives every model on it (mfsvr() and the TAP
// classifier): predictions at new inputs, the choice of inducing inputs for
// the inducing-point (FITC) prior, the threads of the low-rank priors'
// row loops, and the engine's dense operations for the benchmark of its
// speed.
#include "gpsvm_glue.h"

#include <gpsvm/dense.hpp>
#include <gpsvm/ep_predict.hpp>
#include <gpsvm/lowrank.hpp>
#include <gpsvm/prior_choice.hpp>
#include <gpsvm/site_system.hpp>
#include <gpsvm/threads.hpp>

#ifndef _WIN32
#include <pthread.h>
#endif

// [[Rcpp::depends(RcppEigen)]]

// Posterior mean and latent variance (of the deriv-th derivative in input
// column wrt) at the rows of z.  `fit` holds the fit's kernel, training
// inputs x, weights, site_precision and chol; an inducing-point fit
// (FITC, or the low-rank prior: FITC made from a pivoted factor) holds
// inducing, inducing_weights, inducing_chol and chol instead.
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_ep_predict(Rcpp::List fit, Eigen::Map<Eigen::MatrixXd> z, bool want_variance,
                          SEXP deriv, SEXP wrt) try {
  using gpsvm_glue::matrix_element;
  using gpsvm_glue::vector_element;
  const gpsvm::Kernel kernel = gpsvm_glue::kernel_from_r(gpsvm_glue::element(fit, "kernel"));
  const int order = gpsvm_glue::derivative_order(deriv, "deriv");
  const Eigen::Index coord = gpsvm_glue::count_in(wrt, "wrt", 1, z.cols()) - 1;
  gpsvm::EpPrediction p;
  if (fit.containsElementNamed("inducing") && !Rf_isNull(fit["inducing"])) {
    const gpsvm::InducingFitView view{kernel, matrix_element(fit, "inducing"),
                                      vector_element(fit, "inducing_weights"),
                                      matrix_element(fit, "inducing_chol"),
                                      matrix_element(fit, "chol")};
    p = gpsvm::fitc_predict(view, z, want_variance, order, coord,
                            gpsvm_glue::interrupt_callback());
  } else {
    const gpsvm::EpFitView view{kernel,
                                matrix_element(fit, "x"),
                                vector_element(fit, "weights"),
                                vector_element(fit, "site_precision"),
                                matrix_element(fit, "chol")};
    p = gpsvm::ep_predict(view, z, want_variance, order, coord, gpsvm_glue::interrupt_callback());
  }
  if (!want_variance) return Rcpp::List::create(Rcpp::Named("mean") = p.mean);
  return Rcpp::List::create(Rcpp::Named("mean") = p.mean, Rcpp::Named("variance") = p.variance);
} catch (const std::bad_alloc&) {
  gpsvm_glue::stop_out_of_memory();
}

// The log evidence an offset of prior variance b gains at an EP fit's sites
// (site_system.hpp).  `fit` holds kernel, x, site_precision, site_nu, and
// the prior EP ran on: inducing and inducing_chol (FITC), or the dense
// matrix, with B's factor `chol` when the fit kept it.
// [[Rcpp::export(rng = false)]]
double cpp_offset_gain(Rcpp::List fit, double b) try {
  using gpsvm_glue::matrix_element;
  const gpsvm::Kernel kernel = gpsvm_glue::kernel_from_r(gpsvm_glue::element(fit, "kernel"));
  const Eigen::Map<const Eigen::MatrixXd> x = matrix_element(fit, "x");
  const auto interrupt = gpsvm_glue::interrupt_callback();
  const Eigen::Map<const Eigen::MatrixXd> z = matrix_element(fit, "inducing", true);
  const Eigen::Map<const Eigen::MatrixXd> chol = matrix_element(fit, "chol", true);
  const Eigen::Index n = x.rows();
  const auto solve = [&](const Eigen::VectorXd& a, const Eigen::MatrixXd& v) -> Eigen::MatrixXd {
    if (z.size() > 0) {  // FITC: W = (L^-1 K_zx)', lambda = diag(K) - rows' squared norms
      Eigen::MatrixXd wt = gpsvm::kernel_matrix(kernel, z, x, 0, 0, interrupt);
      gpsvm::solve_lower_in_place(matrix_element(fit, "inducing_chol"), wt, interrupt);
      const Eigen::VectorXd lambda =
          (gpsvm::KernelEvaluator(kernel, x).diagonal(0, 0) - wt.colwise().squaredNorm().transpose())
              .cwiseMax(0.0);
      return gpsvm::site_solve_low_rank(wt.transpose(), lambda, a, v);
    }
    if (chol.rows() == n && chol.cols() == n) return gpsvm::site_solve_dense(chol, v);
    Eigen::MatrixXd B = gpsvm::kernel_matrix(kernel, x, interrupt);
    B = a.asDiagonal() * B * a.asDiagonal();
    B.diagonal().array() += 1.0;
    if (!gpsvm::cholesky_in_place(B, interrupt)) Rcpp::stop("the sites' system is not positive definite");
    return gpsvm::site_solve_dense(B, v);
  };
  return gpsvm::offset_gain(gpsvm_glue::vector_element(fit, "site_precision"),
                            gpsvm_glue::vector_element(fit, "site_nu"), b, solve);
} catch (const std::bad_alloc&) {
  gpsvm_glue::stop_out_of_memory();
}

namespace {

// 1-based rows from R (NULL: none) as 0-based rows of an n-row matrix.
std::vector<Eigen::Index> rows_from_r(SEXP rows, const char* name, Eigen::Index n) {
  std::vector<Eigen::Index> out;
  if (Rf_isNull(rows)) return out;
  const Rcpp::IntegerVector r(rows);
  out.reserve(r.size());
  for (const int i : r) {
    if (i == NA_INTEGER || i < 1 || i > n) Rcpp::stop("internal: '%s' has a row out of range", name);
    out.push_back(static_cast<Eigen::Index>(i) - 1);
  }
  return out;
}

}  // namespace

// Up to `count` rows of x (1-based, in the order chosen) by the greedy
// pivoted-Cholesky rule of lowrank.hpp's greedy_inducing(), among the rows
// `candidates` (1-based; NULL: all), stopping early when the rest are
// explained to `tol` relative.
// [[Rcpp::export(rng = false)]]
Rcpp::IntegerVector cpp_greedy_inducing(Rcpp::List kernel, Eigen::Map<Eigen::MatrixXd> x,
                                        SEXP count, double tol,
                                        SEXP candidates = R_NilValue) try {
  const gpsvm::Kernel k = gpsvm_glue::kernel_from_r(kernel);
  const std::vector<Eigen::Index> among = rows_from_r(candidates, "candidates", x.rows());
  const Eigen::Index m = gpsvm_glue::count_in(
      count, "inducing", 1, among.empty() ? x.rows() : static_cast<Eigen::Index>(among.size()));
  const std::vector<Eigen::Index> rows =
      gpsvm::greedy_rows(k, x, among, m, tol, gpsvm_glue::interrupt_callback());
  Rcpp::IntegerVector out(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) out[i] = static_cast<int>(rows[i]) + 1;
  return out;
} catch (const std::bad_alloc&) {
  gpsvm_glue::stop_out_of_memory();
}

// The prior's representation on the rows of x (prior_choice.hpp's
// choose_prior()) under `rules` (the R layer's size rules, named as
// PriorRules' fields): form "dense", "low_rank" (rows: the pivots, 1-based)
// or "fitc" (rows: the inducing rows), and the rule that made it; a
// low-rank choice also returns its factor G (K ~ G G', n x pivots).
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_choose_prior(Rcpp::List kernel, Eigen::Map<Eigen::MatrixXd> x, Rcpp::List rules) try {
  using gpsvm_glue::count_in;
  using gpsvm_glue::element;
  const gpsvm::Kernel k = gpsvm_glue::kernel_from_r(kernel);
  gpsvm::PriorRules r;
  r.rank_tol = gpsvm_glue::number_in(element(rules, "rank_tol"), "rank_tol", 0.0, 1.0);
  r.low_rank_min_n = count_in(element(rules, "low_rank_min_n"), "low_rank_min_n", 0, R_XLEN_T_MAX);
  r.max_rank = count_in(element(rules, "low_rank_max"), "low_rank_max", 1, R_XLEN_T_MAX);
  // (mfsvr()'s own cap, max_rank, may exceed half the rows)
  r.half_rows_at_most = !rules.containsElementNamed("half_rows_at_most") ||
                        gpsvm_glue::flag(rules["half_rows_at_most"], "half_rows_at_most");
  r.dense_max_n = count_in(element(rules, "dense_max_n"), "dense_max_n", 0, R_XLEN_T_MAX);
  r.inducing_count =
      count_in(element(rules, "inducing_count"), "inducing_count", 1, R_XLEN_T_MAX);
  r.rows_per_inducing =
      count_in(element(rules, "rows_per_inducing"), "rows_per_inducing", 1, R_XLEN_T_MAX);
  r.greedy_max_rows = count_in(element(rules, "greedy_max_rows"), "greedy_max_rows", 1, R_XLEN_T_MAX);
  r.test_rank = gpsvm_glue::flag(element(rules, "test_rank"), "test_rank");
  const gpsvm::PriorChoice c = gpsvm::choose_prior(k, x, r, gpsvm_glue::interrupt_callback());
  static const char* const forms[] = {"dense", "low_rank", "fitc"};
  static const char* const reasons[] = {"rank_tol = 0", "low_rank_min_n", "low rank",
                                        "no low rank", "no low rank", "no low rank on the probe",
                                        "within dense_max_n", "beyond dense_max_n"};
  Rcpp::IntegerVector rows(c.rows.size());
  for (std::size_t i = 0; i < c.rows.size(); ++i) rows[i] = static_cast<int>(c.rows[i]) + 1;
  Rcpp::List out = Rcpp::List::create(Rcpp::Named("form") = forms[static_cast<int>(c.form)],
                                      Rcpp::Named("reason") = reasons[static_cast<int>(c.reason)],
                                      Rcpp::Named("rows") = rows);
  if (c.form == gpsvm::PriorForm::low_rank) out["factor"] = c.factor;
  return out;
} catch (const std::bad_alloc&) {
  gpsvm_glue::stop_out_of_memory();
}

// The two operations an EP sweep is built of, timed in the engine's own
// code by bench/bench-limit.R: what = "cholesky" factors the symmetric
// positive definite a (dense.hpp; b is not read), "product" forms
// a b.  Returns the log-determinant of a, or the sum of the product's
// entries: a number, so that nothing large is copied back.
// [[Rcpp::export(rng = false)]]
double cpp_dense_operation(std::string what, Eigen::Map<Eigen::MatrixXd> a,
                           Eigen::Map<Eigen::MatrixXd> b) try {
  if (what == "cholesky") {
    if (a.rows() != a.cols()) Rcpp::stop("'a' must be square");
    Eigen::MatrixXd l = a;
    if (!gpsvm::cholesky_in_place(l, gpsvm_glue::interrupt_callback()))
      Rcpp::stop("'a' is not positive definite");
    return 2.0 * l.diagonal().array().log().sum();
  }
  if (what != "product") Rcpp::stop("'what' must be \"cholesky\" or \"product\"");
  if (a.cols() != b.rows()) Rcpp::stop("'a' and 'b' are not conformable");
  const Eigen::MatrixXd p = a * b;
  return p.sum();
} catch (const std::bad_alloc&) {
  gpsvm_glue::stop_out_of_memory();
}

// Whether a square matrix is a Cholesky factor as an EP fit stores it:
// lower triangular (its strict upper triangle zero) with a positive
// diagonal and finite entries.  Part of the fitted objects' validation,
// which must stay cheap: one pass of r^2 reads and no copy, against the
// O(r^3) the factor cost.
// [[Rcpp::export(rng = false)]]
bool cpp_is_lower_factor(Eigen::Map<Eigen::MatrixXd> m) try {
  const Eigen::Index r = m.rows();
  if (m.cols() != r) return false;
  for (Eigen::Index j = 0; j < r; ++j) {
    const double* column = m.col(j).data();
    for (Eigen::Index i = 0; i < j; ++i)
      if (column[i] != 0.0) return false;
    if (!(column[j] > 0.0) || !std::isfinite(column[j])) return false;
    for (Eigen::Index i = j + 1; i < r; ++i)
      if (!std::isfinite(column[i])) return false;
  }
  return true;
} catch (const std::bad_alloc&) {
  gpsvm_glue::stop_out_of_memory();
}

namespace {
// A forked child (parallel::mcparallel(), future's multicore plan) runs on
// one thread: GNU OpenMP's thread pool does not survive fork(), and a child
// that used it could wait forever for threads that are not there.
void single_thread_after_fork() { gpsvm::set_thread_count(1); }
}  // namespace

// Sets the threads of the core's row-block loops (threads.hpp; Eigen's own
// products stay on one thread) when `count` is not NULL, at most the
// processors this process may use, and with `follow_load` no more than are
// idle when a threaded loop starts (threads.hpp); once per process
// registering the fork rule above.  Returns the number set (1 in a forked
// child).
// [[Rcpp::export(rng = false)]]
int cpp_threads(SEXP count, SEXP follow_load) try {
  if (!Rf_isNull(count)) {
#ifndef _WIN32
    static const bool registered = pthread_atfork(nullptr, nullptr, single_thread_after_fork) == 0;
    (void)registered;
#endif
    const int asked = static_cast<int>(gpsvm_glue::count_in(count, "threads", 1, 1024));
    gpsvm::set_thread_count(std::min(asked, gpsvm::available_processors()));
    gpsvm::set_load_adaptive(gpsvm_glue::flag(follow_load, "gpsvm.threads_follow_load"));
  }
  return gpsvm::thread_count();
} catch (const std::bad_alloc&) {
  gpsvm_glue::stop_out_of_memory();
}
