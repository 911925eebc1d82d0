// Glue for the predictive distribution of a new target (predictive.hpp): the
// epsilon-insensitive noise model's variance and CDF (gpsvm::EpsilonInsensitive,
// likelihoods.hpp), and the quantiles, CDF, density and integrals of the
// distribution predict() describes.
#include "gpsvm_glue.h"

#include <gpsvm/dense.hpp>
#include <gpsvm/interrupt.hpp>
#include <gpsvm/likelihoods.hpp>
#include <gpsvm/predictive.hpp>

// [[Rcpp::depends(RcppEigen)]]

// Variance of the noise density (eq. 29 of Gao et al. 2002b).
// [[Rcpp::export(rng = false)]]
double cpp_epsins_noise_variance(double C, double epsilon) try {
  return gpsvm::EpsilonInsensitive(C, epsilon).noise_variance();
} catch (const std::bad_alloc&) {
  gpsvm_glue::stop_out_of_memory();
}

namespace {

// row(i) for each i in [0, n), polling for Ctrl-C (a call may hold many rows).
template <class Index, class Row>
void for_each_row(Index n, Row row) {
  gpsvm::InterruptPoll poll(gpsvm_glue::interrupt_callback());
  for (Index i = 0; i < n; ++i) {
    poll();
    row(i);
  }
}

// at(x[i], mean[i], var[i]) for each row of T = f + noise, f ~ N(mean, var),
// once x (named `x_name` in the errors), mean and var are found of one
// length and finite, var >= 0; a latent variance of 0 is floored at 1e-300.
template <class At>
Rcpp::NumericVector epsins_rows(const Rcpp::NumericVector& x, const char* x_name,
                                const Rcpp::NumericVector& mean, const Rcpp::NumericVector& var,
                                At at) {
  if (x.size() != mean.size() || var.size() != mean.size())
    Rcpp::stop("'%s', 'mean' and 'var' differ in length", x_name);
  Rcpp::NumericVector out(mean.size());
  for_each_row(mean.size(), [&](R_xlen_t i) {
    if (!(var[i] >= 0.0) || !std::isfinite(var[i]) || !std::isfinite(x[i]) ||
        !std::isfinite(mean[i]))
      Rcpp::stop("'%s', 'mean' and 'var' must be finite, 'var' >= 0", x_name);
    out[i] = at(x[i], mean[i], var[i] < 1e-300 ? 1e-300 : var[i]);
  });
  return out;
}

}  // namespace

// P(T <= q) for T = f + noise, f ~ N(mean, var), elementwise (the predictive
// CDF the quantiles above invert); a latent variance of 0 is floored at
// 1e-300 as there.
// [[Rcpp::export(rng = false)]]
Rcpp::NumericVector cpp_epsins_cdf(Rcpp::NumericVector q, Rcpp::NumericVector mean,
                                   Rcpp::NumericVector var, double C, double epsilon) try {
  const gpsvm::EpsilonInsensitive lik(C, epsilon);
  return epsins_rows(q, "q", mean, var, [&](double q_i, double mean_i, double var_i) {
    return lik.predictive_cdf(q_i, mean_i, var_i);
  });
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
  return epsins_rows(t, "t", mean, var, [&](double t_i, double mean_i, double var_i) {
    return lik.moments(t_i, mean_i, var_i).log_z;
  });
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

// ---- the predictive distribution of predict(type = "distribution") -------

namespace {

// G at row i of the R layer's description (R/predictive-distribution.R):
// kind "epsins" or "t", mean and var (a row per input, a column per
// component), weight, C and epsilon (epsins), noise (one, or one per row)
// and df (t), row_scale (absent, or one per row).
class TargetRows {
 public:
  explicit TargetRows(const Rcpp::List& g)
      : t_(gpsvm_glue::choice(gpsvm_glue::element(g, "kind"), "kind", {"epsins", "t"}) == 1),
        mean_(Rcpp::as<Rcpp::NumericMatrix>(gpsvm_glue::element(g, "mean"))),
        var_(Rcpp::as<Rcpp::NumericMatrix>(gpsvm_glue::element(g, "var"))),
        weight_(Rcpp::as<std::vector<double>>(gpsvm_glue::element(g, "weight"))) {
    const int k = mean_.ncol();
    if (var_.nrow() != mean_.nrow() || var_.ncol() != k || static_cast<int>(weight_.size()) != k)
      Rcpp::stop("'mean' and 'var' need a column per component of 'weight'");
    if (t_) {
      noise_ = Rcpp::as<std::vector<double>>(gpsvm_glue::element(g, "noise"));
      df_ = gpsvm_glue::number_in(gpsvm_glue::element(g, "df"), "df", 0.0, R_PosInf);
      if (noise_.size() != 1 && static_cast<int>(noise_.size()) != mean_.nrow())
        Rcpp::stop("'noise' must have one value or one per row");
    } else {
      const std::vector<double> C = Rcpp::as<std::vector<double>>(gpsvm_glue::element(g, "C"));
      const std::vector<double> eps = Rcpp::as<std::vector<double>>(gpsvm_glue::element(g, "epsilon"));
      if (static_cast<int>(C.size()) != k || static_cast<int>(eps.size()) != k)
        Rcpp::stop("'C' and 'epsilon' need one value per component");
      for (int j = 0; j < k; ++j) noise_models_.emplace_back(C[j], eps[j]);
      if (g.containsElementNamed("row_scale") && !Rf_isNull(g["row_scale"])) {
        row_scale_ = Rcpp::as<std::vector<double>>(g["row_scale"]);
        if (static_cast<int>(row_scale_.size()) != mean_.nrow())
          Rcpp::stop("'row_scale' must have one value per row");
      }
    }
  }

  int rows() const { return mean_.nrow(); }

  gpsvm::TargetDistribution row(int i) const {
    gpsvm::TargetDistribution d;
    const int k = mean_.ncol();
    d.mean.resize(k);
    d.var.resize(k);
    for (int j = 0; j < k; ++j) {
      d.mean[j] = mean_(i, j);
      d.var[j] = var_(i, j);
    }
    d.weight = weight_;
    if (t_) {
      d.kind = gpsvm::TargetDistribution::Kind::student_t;
      d.noise_var = noise_[noise_.size() == 1 ? 0 : i];
      d.df = df_;
    } else {
      d.noise = noise_models_;
      if (!row_scale_.empty()) d.scale = row_scale_[i];
    }
    d.validate();
    return d;
  }

 private:
  bool t_;
  Rcpp::NumericMatrix mean_, var_;
  std::vector<double> weight_, noise_, row_scale_;
  std::vector<gpsvm::EpsilonInsensitive> noise_models_;
  double df_ = 0.0;
};

// The calibration's scale on the normal-score scale; NULL: none.
gpsvm::CalibrationMap calibration_from_r(SEXP scale) {
  gpsvm::CalibrationMap map;
  if (Rf_isNull(scale)) return map;
  map.scale = Rcpp::as<double>(scale);
  map.validate();
  return map;
}

}  // namespace

// The quantile of each row's calibrated distribution at its nearer tail u
// (gpsvm::predictive_quantile): the lower tail's, or where `upper` the
// upper tail's; u and upper one per row.
// [[Rcpp::export(rng = false)]]
Rcpp::NumericVector cpp_predictive_quantile(Rcpp::List g, SEXP calibration, Rcpp::NumericVector u,
                                            Rcpp::LogicalVector upper) try {
  const TargetRows rows(g);
  const gpsvm::CalibrationMap map = calibration_from_r(calibration);
  if (u.size() != rows.rows() || upper.size() != rows.rows())
    Rcpp::stop("'u' and 'upper' need one value per row");
  Rcpp::NumericVector out(u.size());
  for_each_row(rows.rows(), [&](int i) {
    if (upper[i] == NA_LOGICAL) Rcpp::stop("'upper' must not be NA");
    out[i] = gpsvm::predictive_quantile(rows.row(i), map, u[i], upper[i]);
  });
  return out;
} catch (const std::bad_alloc&) {
  gpsvm_glue::stop_out_of_memory();
}

// F(t), 1 - F(t) and log f(t) of the calibrated distribution of each row
// (gpsvm::predictive_at), t one per row.
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_predictive_at(Rcpp::List g, SEXP calibration, Rcpp::NumericVector t) try {
  const TargetRows rows(g);
  const gpsvm::CalibrationMap map = calibration_from_r(calibration);
  if (t.size() != rows.rows()) Rcpp::stop("'t' needs one value per row");
  Rcpp::NumericVector lower(t.size()), upper(t.size()), log_density(t.size());
  for_each_row(rows.rows(), [&](int i) {
    if (!std::isfinite(t[i])) Rcpp::stop("'t' must be finite");
    const gpsvm::PredictivePoint p = gpsvm::predictive_at(rows.row(i), map, t[i]);
    lower[i] = p.lower;
    upper[i] = p.upper;
    log_density[i] = p.log_density;
  });
  return Rcpp::List::create(Rcpp::Named("lower") = lower, Rcpp::Named("upper") = upper,
                            Rcpp::Named("log_density") = log_density);
} catch (const std::bad_alloc&) {
  gpsvm_glue::stop_out_of_memory();
}

// The mean and variance of each row's calibrated distribution
// (gpsvm::predictive_moments), or, with targets y (one per row), their
// CRPS (gpsvm::predictive_crps); model units.
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_predictive_integrals(Rcpp::List g, SEXP calibration, SEXP y) try {
  const TargetRows rows(g);
  const gpsvm::CalibrationMap map = calibration_from_r(calibration);
  const int n = rows.rows();
  if (!Rf_isNull(y)) {
    const Rcpp::NumericVector target(y);
    if (target.size() != n) Rcpp::stop("'y' needs one value per row");
    Rcpp::NumericVector crps(n);
    for_each_row(n, [&](int i) {
      if (!std::isfinite(target[i])) Rcpp::stop("'y' must be finite");
      crps[i] = gpsvm::predictive_crps(rows.row(i), map, target[i]);
    });
    return Rcpp::List::create(Rcpp::Named("crps") = crps);
  }
  Rcpp::NumericVector mean(n), var(n);
  for_each_row(n, [&](int i) {
    const gpsvm::PredictiveMoments m = gpsvm::predictive_moments(rows.row(i), map);
    mean[i] = m.mean;
    var[i] = m.var;
  });
  return Rcpp::List::create(Rcpp::Named("mean") = mean, Rcpp::Named("var") = var);
} catch (const std::bad_alloc&) {
  gpsvm_glue::stop_out_of_memory();
}
