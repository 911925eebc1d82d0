// Glue for the epsilon-insensitive noise model shared by svr() and mfsvr():
// its variance and the quantiles and CDF of the predictive distribution of a
// new target.  The model itself is gpsvm::EpsilonInsensitive (likelihoods.hpp).
#include "gpsvm_glue.h"

#include <gpsvm/dense.hpp>
#include <gpsvm/interrupt.hpp>
#include <gpsvm/likelihoods.hpp>

// [[Rcpp::depends(RcppEigen)]]

// Variance of the noise density (eq. 29 of Gao et al. 2002b).
// [[Rcpp::export(rng = false)]]
double cpp_epsins_noise_variance(double C, double epsilon) try {
  return gpsvm::EpsilonInsensitive(C, epsilon).noise_variance();
} catch (const std::bad_alloc&) {
  gpsvm_glue::stop_out_of_memory();
}

// Level-p quantiles of N(mean, var) + noise; p is recycled over mean and var.
// [[Rcpp::export(rng = false)]]
Rcpp::NumericVector cpp_epsins_quantile(Rcpp::NumericVector p, Rcpp::NumericVector mean,
                                        Rcpp::NumericVector var, double C, double epsilon) try {
  const gpsvm::EpsilonInsensitive lik(C, epsilon);
  if (p.size() < 1) Rcpp::stop("'p' is empty");
  if (var.size() != mean.size()) Rcpp::stop("'mean' and 'var' differ in length");
  Rcpp::NumericVector out(mean.size());
  gpsvm::InterruptPoll poll(gpsvm_glue::interrupt_callback());
  for (R_xlen_t i = 0; i < mean.size(); ++i) {
    poll();
    out[i] = lik.predictive_quantile(p[i % p.size()], mean[i], var[i]);
  }
  return out;
} catch (const std::bad_alloc&) {
  gpsvm_glue::stop_out_of_memory();
}

// The level-p quantiles of mixtures of those predictive distributions, a
// row each: components k with latent mean(i, k), var(i, k), scale C[k],
// half-width epsilon[k] and weight[k]; p recycled over the rows.
// [[Rcpp::export(rng = false)]]
Rcpp::NumericVector cpp_epsins_mixture_quantile(Rcpp::NumericVector p, Rcpp::NumericMatrix mean,
                                                Rcpp::NumericMatrix var, Rcpp::NumericVector C,
                                                Rcpp::NumericVector epsilon,
                                                Rcpp::NumericVector weight) try {
  const int k = C.size();
  if (p.size() < 1) Rcpp::stop("'p' is empty");
  if (mean.ncol() != k || var.ncol() != k || weight.size() != k || epsilon.size() != k ||
      var.nrow() != mean.nrow())
    Rcpp::stop("'mean' and 'var' need a column per component of 'C', 'epsilon' and 'weight'");
  std::vector<double> m(k), v(k), c(C.begin(), C.end()), e(epsilon.begin(), epsilon.end()),
      w(weight.begin(), weight.end());
  Rcpp::NumericVector out(mean.nrow());
  gpsvm::InterruptPoll poll(gpsvm_glue::interrupt_callback());
  for (int i = 0; i < mean.nrow(); ++i) {
    poll();
    for (int j = 0; j < k; ++j) {
      m[j] = mean(i, j);
      v[j] = var(i, j);
    }
    out[i] = gpsvm::epsins_mixture_quantile(p[i % p.size()], m, v, c, e, w);
  }
  return out;
} catch (const std::bad_alloc&) {
  gpsvm_glue::stop_out_of_memory();
}

// P(T <= q) for T = f + noise, f ~ N(mean, var), elementwise (the predictive
// CDF the quantiles above invert); a latent variance of 0 is floored at
// 1e-300 as there.
// [[Rcpp::export(rng = false)]]
Rcpp::NumericVector cpp_epsins_cdf(Rcpp::NumericVector q, Rcpp::NumericVector mean,
                                   Rcpp::NumericVector var, double C, double epsilon) try {
  const gpsvm::EpsilonInsensitive lik(C, epsilon);
  if (q.size() != mean.size() || var.size() != mean.size())
    Rcpp::stop("'q', 'mean' and 'var' differ in length");
  Rcpp::NumericVector out(mean.size());
  gpsvm::InterruptPoll poll(gpsvm_glue::interrupt_callback());
  for (R_xlen_t i = 0; i < mean.size(); ++i) {
    poll();
    if (!(var[i] >= 0.0) || !std::isfinite(var[i]) || !std::isfinite(q[i]) ||
        !std::isfinite(mean[i]))
      Rcpp::stop("'q', 'mean' and 'var' must be finite, 'var' >= 0");
    out[i] = lik.predictive_cdf(q[i], mean[i], var[i] < 1e-300 ? 1e-300 : var[i]);
  }
  return out;
} catch (const std::bad_alloc&) {
  gpsvm_glue::stop_out_of_memory();
}

// log p(T = t) for T = f + noise, f ~ N(mean, var), elementwise: the log of
// the predictive density whose CDF and quantiles are above (the tilted
// normaliser of the site with target t); a latent variance of 0 is floored
// at 1e-300 as there.
// [[Rcpp::export(rng = false)]]
Rcpp::NumericVector cpp_epsins_log_density(Rcpp::NumericVector t, Rcpp::NumericVector mean,
                                           Rcpp::NumericVector var, double C, double epsilon) try {
  const gpsvm::EpsilonInsensitive lik(C, epsilon);
  if (t.size() != mean.size() || var.size() != mean.size())
    Rcpp::stop("'t', 'mean' and 'var' differ in length");
  Rcpp::NumericVector out(mean.size());
  gpsvm::InterruptPoll poll(gpsvm_glue::interrupt_callback());
  for (R_xlen_t i = 0; i < mean.size(); ++i) {
    poll();
    if (!(var[i] >= 0.0) || !std::isfinite(var[i]) || !std::isfinite(t[i]) ||
        !std::isfinite(mean[i]))
      Rcpp::stop("'t', 'mean' and 'var' must be finite, 'var' >= 0");
    out[i] = lik.moments(t[i], mean[i], var[i] < 1e-300 ? 1e-300 : var[i]).log_z;
  }
  return out;
} catch (const std::bad_alloc&) {
  gpsvm_glue::stop_out_of_memory();
}

// The k-point Gauss rule (dense.hpp's gauss_rule()) for the standard
// normal density ("hermite") or 1 on [-1, 1] ("legendre"): list(node,
// weight), nodes ascending.
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_gauss_rule(std::string kind, int k) try {
  if (kind != "hermite" && kind != "legendre") Rcpp::stop("'kind' must be \"hermite\" or \"legendre\"");
  if (k < 1 || k > 1000) Rcpp::stop("'k' must be a whole number in [1, 1000]");
  const gpsvm::GaussRule r =
      gpsvm::gauss_rule(kind == "hermite" ? gpsvm::GaussWeight::normal : gpsvm::GaussWeight::uniform, k);
  return Rcpp::List::create(Rcpp::Named("node") = r.node, Rcpp::Named("weight") = r.weight);
} catch (const std::bad_alloc&) {
  gpsvm_glue::stop_out_of_memory();
}
