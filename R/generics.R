# The internal generics: the contract between the shared layers and the
# models.  Code outside a model's own files never asks which model it holds;
# it calls these, and each model implements them (in its own files) for its
# class.  .model_contract lists which ones a model of each layer must
# implement, and a test holds every fitted class to it.
#
# Every fit: class c("gpsvm_<model>", "gpsvm_regression") or
# c("gpsvm_<model>", "gpsvm_classifier"); a classifier holds one binary model
# per class against the rest in fit$models (one for two classes), whose
# classes name the method ("gpsvm_gpc_tap", ...).

# ---- every fit ----------------------------------------------------------------

# Stops with a message naming the field when the object is not what its
# fitter made (validate-fit.R); runs before any computation reads it.  A
# method that has checked its fit and hands it on to another (print() to
# logLik() and sigma()) leaves a record in its own frame, so the same
# object is not checked again below it; the record goes with that frame,
# and an object that differs from it in anything is checked anew.
.validate_fit <- function(object) {
  checked <- dynGet(".gpsvm_checked_fit", ifnotfound = NULL)
  if (!is.null(checked) && identical(checked, object)) return(invisible(object))
  .validate_model(object)
  assign(".gpsvm_checked_fit", object, envir = parent.frame())
  invisible(object)
}
# Each model's own checks (the fields it made), and its layer's.
.validate_model <- function(object) UseMethod(".validate_model")
# The plan's rows (plan.R).
.plan_rows <- function(fit) UseMethod(".plan_rows")
# print(): the model's title and its own lines.
.title <- function(object) UseMethod(".title")
.model_lines <- function(object, digits) UseMethod(".model_lines")
# The plan's account of an evidence search, in words (NULL: none).
.search_summary <- function(object) UseMethod(".search_summary")
# hyperparameters(): the model's own (all but the kernel's width), named;
# as a matrix with a row per model.
.own_hyperparameters <- function(object) UseMethod(".own_hyperparameters")
.hyperparameter_matrix <- function(object) UseMethod(".hyperparameter_matrix")
# confint(): intervals for the weights, the evidence's curvature, a refit at
# other hyperparameters.
.weight_intervals <- function(object, level) UseMethod(".weight_intervals")
.evidence_curvature <- function(object) UseMethod(".evidence_curvature")
.refit_at <- function(object, values) UseMethod(".refit_at")
# glance(): the log evidence, the model's own columns, whether a search chose
# hyperparameters.
.glance_evidence <- function(x) UseMethod(".glance_evidence")
.glance_columns <- function(x) UseMethod(".glance_columns")
.searched <- function(x) UseMethod(".searched")
# loo_error()'s label of the model.
.model_label <- function(object) UseMethod(".model_label")
# A control with its data-dependent defaults resolved for the data (the fit
# stores it); by control class.
.resolve_control <- function(control, ...) UseMethod(".resolve_control")

# ---- the regression models ---------------------------------------------------
# (model units: the scale the model was fitted on)

# Mean and variance of the latent function (or a derivative) at scaled
# inputs z.
.latent_moments <- function(object, z, deriv, wrt, want_var, ...) {
  UseMethod(".latent_moments")
}
# The noise model: the predictive distribution of a new target at scaled
# inputs z (predictive-distribution.R); the normal scores qnorm(F(y)) of
# targets y under it.  z matters where the noise varies with the inputs;
# NULL where none are at hand (the noise level alone).
.target_distribution <- function(object, mean, var, z = NULL) UseMethod(".target_distribution")
.target_scores <- function(object, y, mean, var, z = NULL) UseMethod(".target_scores")
# FALSE where a new target's interval is unbounded (plots leave its band out).
.has_target_interval <- function(object) UseMethod(".has_target_interval")
# The noise sd; the evidence of the scaled response; how many quantities the
# model estimated from the response.
.noise_sd <- function(object) UseMethod(".noise_sd")
.log_evidence <- function(object) UseMethod(".log_evidence")
.response_df <- function(object) UseMethod(".response_df")
# summary(): the model's details, and their print.
.summary_details <- function(object) UseMethod(".summary_details")
.print_details <- function(x, digits) UseMethod(".print_details")
# Training points plot() marks (support or relevance vectors), or NULL.
.key_points <- function(object) UseMethod(".key_points")
# The latent function's leave-one-out moments at the training inputs where
# they are cheap (NULL otherwise): R^2 and the diagnostic plots read them.
.loo_moments <- function(object) UseMethod(".loo_moments")
# augment()'s and tidy()'s rows of the weights.
.weight_frame <- function(object, ...) UseMethod(".weight_frame")
# evidence_curve(): the methods of a fit's evidence, and its log evidence
# refitted at C.
.curve_methods <- function(object, method) UseMethod(".curve_methods")
.evidence_at <- function(object, C, method) UseMethod(".evidence_at")

# ---- the binary models of a classifier ------------------------------------------

# The decision values at scaled inputs x.
.classif_link <- function(model, x) UseMethod(".classif_link")
# The names of the model's settings, for print() and hyperparameters().
.setting_names <- function(model) UseMethod(".setting_names")
# Whether the model gives class probabilities.
.gives_probabilities <- function(object) UseMethod(".gives_probabilities")
# The model's own fields, checked by the classifier's validator.
.binary_checks <- function(model, n, p) UseMethod(".binary_checks")
# What plot() adds to a two-class boundary.
.plot_binary <- function(object, surface) UseMethod(".plot_binary")
# augment()'s roles of the training points (support vectors, ...).
.point_roles <- function(model) UseMethod(".point_roles")
# loo_error(): the approximate leave-one-out estimate and its label; exact
# refits for the cases `which`; why exact refits are refused (NULL if not).
.loo_approx <- function(model) UseMethod(".loo_approx")
.loo_approx_label <- function(model) UseMethod(".loo_approx_label")
.loo_refits <- function(model, which) UseMethod(".loo_refits")
.loo_exact_refusal <- function(model) UseMethod(".loo_exact_refusal")

# Which generics a fit of each layer must answer (a method for one of its
# classes, or a default), which each binary model of a classifier must, and
# which a regression fit's summary() object must.  The optional ones belong
# to a feature some models have: .refit_at() to a search by the evidence
# that confint() profiles (a model without one gives its own
# .evidence_curvature()), .evidence_at() to a C that evidence_curve() varies
# (it refuses other models first).
.model_contract <- list(
  fit = c(".validate_model", ".plan_rows", ".title", ".model_lines", ".search_summary",
          ".own_hyperparameters", ".hyperparameter_matrix", ".weight_intervals",
          ".evidence_curvature", ".glance_evidence", ".glance_columns", ".searched"),
  regression = c(".latent_moments", ".target_distribution", ".target_scores",
                 ".has_target_interval", ".noise_sd", ".log_evidence", ".response_df",
                 ".summary_details", ".key_points", ".loo_moments", ".weight_frame",
                 ".curve_methods"),
  classifier = ".model_label",
  binary = c(".classif_link", ".setting_names", ".gives_probabilities", ".binary_checks",
             ".point_roles", ".loo_approx", ".loo_approx_label", ".loo_refits",
             ".loo_exact_refusal"),
  summary = ".print_details",
  optional = c(".refit_at", ".evidence_at")
)
