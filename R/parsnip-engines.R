# Registers the "gpsvm" engine of parsnip's svm_rbf(), svm_poly() and
# svm_linear() in parsnip's model environment: the main arguments (with the
# dials ranges tunable() reports), the fit through gpsvm_parsnip_fit(), and
# the predictions.  parsnip is only suggested: .onLoad() registers the engines
# when parsnip's namespace is loaded, before or after gpsvm's.

# parsnip's main arguments for each model, with the dials parameter and the
# range (on dials' transformed scale) that suit standardised data; see
# "Tuning" in ?gpsvm_parsnip_fit.
.parsnip_arg_ranges <- list(
  cost = list(pkg = "dials", fun = "cost", range = c(-2, 6)),
  rbf_sigma = list(pkg = "dials", fun = "rbf_sigma", range = c(-3, 0)),
  margin = list(pkg = "dials", fun = "svm_margin", range = c(0, 0.2)),
  degree = list(pkg = "dials", fun = "prod_degree", range = c(1L, 3L)),
  scale_factor = list(pkg = "dials", fun = "scale_factor", range = c(-3, -0.5))
)

.parsnip_model_kernels <- c(svm_rbf = "rbf", svm_poly = "poly", svm_linear = "linear")

.register_parsnip_engines <- function() {
  for (model in names(.parsnip_model_kernels)) {
    if ("gpsvm" %in% parsnip::get_model_env()[[model]]$engine) next
    .register_parsnip_engine(model, .parsnip_model_kernels[[model]])
  }
  invisible()
}

.register_parsnip_engine <- function(model, kernel) {
  for (mode in c("regression", "classification")) {
    parsnip::set_model_engine(model, mode = mode, eng = "gpsvm")
    parsnip::set_dependency(model, eng = "gpsvm", pkg = "gpsvm", mode = mode)
  }
  for (arg in .parsnip_kernel_args[[kernel]]) {
    parsnip::set_model_arg(model = model, eng = "gpsvm", parsnip = arg, original = arg,
                           func = .parsnip_arg_ranges[[arg]], has_submodel = FALSE)
  }
  for (mode in c("regression", "classification")) {
    parsnip::set_fit(model = model, eng = "gpsvm", mode = mode, value = list(
      interface = "formula", data = c(formula = "formula", data = "data"),
      protect = c("formula", "data"),
      func = c(pkg = "gpsvm", fun = "gpsvm_parsnip_fit"),
      defaults = list(kernel = kernel)))
    parsnip::set_encoding(model = model, eng = "gpsvm", mode = mode, options = list(
      predictor_indicators = "none", compute_intercept = FALSE, remove_intercept = FALSE,
      allow_sparse_x = FALSE))
    types <- if (mode == "regression") c("numeric", "conf_int", "pred_int", .parsnip_quantile_type(), "raw")
             else c("class", "prob", "raw")
    for (type in types) {
      parsnip::set_pred(model = model, eng = "gpsvm", mode = mode, type = type,
                        value = .parsnip_pred_value(type))
    }
  }
}

# How parsnip calls predict() on the fit for each type, and shapes the result
# into its columns (parsnip adds the .pred, .pred_class and .pred_<level>
# names itself; the intervals are named here).
.parsnip_pred_value <- function(type) {
  args <- list(object = quote(object$fit), newdata = quote(new_data))
  interval <- c(conf_int = "confidence", pred_int = "prediction")
  switch(type,
    numeric = list(pre = NULL, post = NULL, func = c(fun = "predict"), args = args),
    conf_int = ,
    pred_int = list(pre = NULL, post = .parsnip_interval_columns, func = c(fun = "predict"),
                    args = c(args, list(interval = interval[[type]], level = quote(level),
                                        se.fit = quote(std_error)))),
    class = list(pre = NULL, post = NULL, func = c(fun = "predict"),
                 args = c(args, list(type = "class"))),
    prob = list(pre = NULL, post = .parsnip_prob_columns, func = c(fun = "predict"),
                args = c(args, list(type = "prob"))),
    quantile = list(pre = NULL, post = .parsnip_quantile_column, func = c(fun = "predict"),
                    args = c(args, list(type = "distribution"))),
    raw = list(pre = NULL, post = NULL, func = c(fun = "predict"), args = args))
}

# "quantile" where parsnip and hardhat have quantile predictions (parsnip
# 1.2 and later): the quantiles of the predictive distribution, whose central
# intervals are the "pred_int" ones.
.parsnip_quantile_type <- function() {
  has <- "quantile" %in% tryCatch(utils::getFromNamespace("pred_types", "parsnip"),
                                   error = function(e) character(0)) &&
    requireNamespace("hardhat", quietly = TRUE) &&
    exists("quantile_pred", envir = asNamespace("hardhat"), inherits = FALSE)
  if (has) "quantile"
}

# predict(type = "distribution")'s quantiles at the spec's levels as
# parsnip's .pred_quantile column.
.parsnip_quantile_column <- function(results, object) {
  levels <- object$spec$quantile_levels
  kept <- attr(results, "kept") %||% rep(TRUE, length(results))
  q <- matrix(NA_real_, length(kept), length(levels))
  q[kept, ] <- unname(quantile(results, levels))
  tibble::tibble(.pred_quantile = hardhat::quantile_pred(q, levels))
}

# predict()'s fit/lwr/upr matrix (in a list with se.fit when std_error =
# TRUE) as parsnip's interval columns.
.parsnip_interval_columns <- function(results, object) {
  bands <- if (is.list(results) && !is.data.frame(results)) results$fit else results
  out <- data.frame(.pred_lower = unname(bands[, "lwr"]), .pred_upper = unname(bands[, "upr"]))
  if (is.list(results) && !is.data.frame(results)) out$.std_error <- unname(results$se.fit)
  tibble::as_tibble(out)
}

# predict(type = "prob")'s matrix, one column per class, as a data frame.
.parsnip_prob_columns <- function(results, object) {
  tibble::as_tibble(as.data.frame(unclass(results), optional = TRUE))
}
