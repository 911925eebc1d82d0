# What mfsvr() fits bring to the regression layer (R/regression.R): the EP
# posterior of the latent function at new inputs, the EP evidence, and what
# print() and summary() show.  The noise model is in R/epsins-noise.R.

# Mean and variance of the latent function (or a derivative), eqs. (3.2) and
# (5.1): sum_i D^n k(z, x_i) w_i and D^n D'^n k(z, z) - d_z' (K + Sigma)^-1 d_z.
.latent_moments.gpsvm_mfsvr <- function(object, z, deriv, wrt, want_var, ...) {
  .check_dots_empty(...)
  p <- cpp_ep_predict(.ep_prediction_fit(object, object$coefficients), z, want_var, deriv, wrt)
  list(mean = p$mean, var = if (want_var) p$variance)
}

.log_evidence.gpsvm_mfsvr <- function(object) object$log_evidence

# EP's own leave-one-out approximation: the cavity of site i is the
# posterior of f(x_i) without observation i's likelihood.
.loo_moments.gpsvm_mfsvr <- function(object) {
  list(mean = object$cavity_mean, var = object$cavity_var)
}

#' @rdname evidence
#' @export
evidence.gpsvm_mfsvr <- function(object, gradient = FALSE, ...) {
  .check_dots_empty(...)
  .check_flag(gradient, "gradient")
  value <- c(logLik(object))
  if (gradient) attr(value, "gradient") <- .mfsvr_evidence_gradient(object)
  value
}

# evidence_curve(): the EP evidence refitted at C, from the fit's sites.
.curve_methods.gpsvm_mfsvr <- function(object, method) {
  if (!is.null(method) && !identical(method, "ep")) {
    .stop("'method' of an mfsvr() fit's evidence is \"ep\"")
  }
  "ep"
}
.evidence_at.gpsvm_mfsvr <- function(object, C, method) {
  y <- .to_model_units(object$y, object$response_scaling)
  fit <- .mfsvr_fit(object$x, y, C, object$epsilon, object$kernel, object$control,
                    start = object, inducing = object$inducing)
  c(ep = .response_log_density(object, fit$log_evidence))
}

# The gradient of the log evidence in log C, log epsilon and log sigma (or
# one log width per input), at the EP fixed point: one more fit, from the
# fit's own sites, that computes it.  (The Jacobian of the response's
# scaling does not depend on them.)
.mfsvr_evidence_gradient <- function(object) {
  control <- object$control
  per_input <- !is.null(object$kernel$input_widths)
  control$per_input_gradient <- per_input
  y <- .to_model_units(object$y, object$response_scaling)
  fit <- .mfsvr_fit(object$x, y, object$C, object$epsilon, object$kernel, control,
                    gradient = TRUE, warn = FALSE, start = object, inducing = object$inducing)
  .mfsvr_named_gradient(fit)
}

# A fit's gradient (made with gradient = TRUE) named log_C, log_epsilon and
# log_sigma, or with a width per input log_sigma[<column>] for each.
.mfsvr_named_gradient <- function(fit) {
  gradient <- stats::setNames(fit$gradient, c("log_C", "log_epsilon", "log_sigma"))
  widths <- fit$kernel$input_widths
  if (is.null(widths)) return(gradient)
  c(gradient[1:2], stats::setNames(fit$per_input_gradient, sprintf("log_sigma[%s]", names(widths))))
}

# confint(): the EP evidence and its gradient refitted at other values of
# the hyperparameters a search chose (named as in fit$optimization$estimate;
# the gradient named alike), warm-started from the fit's sites.
.refit_at.gpsvm_mfsvr <- function(object, values) {
  h <- as.list(values)
  point <- .refit_point(object, h)
  control <- object$control
  control$per_input_gradient <- !is.null(point$kernel$input_widths)
  fit <- .mfsvr_fit(point$x, .to_model_units(object$y, object$response_scaling), h$C %||% object$C,
                    h$epsilon %||% object$epsilon, point$kernel, control, gradient = TRUE,
                    warn = FALSE, start = object, inducing = point$inducing)
  if (!fit$convergence$converged) return(list(value = NA_real_))
  gradient <- .mfsvr_named_gradient(fit)
  list(value = .log_evidence(fit), gradient = stats::setNames(gradient, sub("^log_", "", names(gradient))))
}

# nothing of its own: what optimize = TRUE chose is counted for every model
# from fit$optimization$estimate
# (the mean's amplitude, fitted with a varying noise, is one more estimate)
.response_df.gpsvm_mfsvr <- function(object) {
  as.integer(identical(object$noise_model$type, "varying") && !is.null(object$noise_model$amplitude))
}

.model_lines.gpsvm_mfsvr <- function(object, digits) {
  c(sprintf("%s, C = %s, epsilon = %s%s", .count(length(object$y), "observation"),
            format(object$C, digits = digits), format(object$epsilon, digits = digits),
            .rvm_noise_words(object, "the variance of (C, epsilon)", "its sd")),
    .inducing_line(object))
}

.summary_details.gpsvm_mfsvr <- function(object) {
  w <- object$coefficients
  r <- .to_model_units(object$residuals, object$response_scaling, center = FALSE)
  sd <- .unscale_response(sqrt(object$variance), object$response_scaling, center = FALSE)
  list(C = object$C, epsilon = object$epsilon, outside_tube = sum(abs(r) > object$epsilon),
       weights = summary(w), at_bound = sum(abs(w) > 0.99 * object$C),
       posterior_sd = summary(sd), algorithm = object$control$algorithm,
       sparse = .inducing_line(object))
}

.print_details.summary.gpsvm_mfsvr <- function(x, digits) {
  d <- x$details
  cat(sprintf("\nC = %s, epsilon = %s: %d of %d targets outside the epsilon tube\n",
              format(d$C, digits = digits), format(d$epsilon, digits = digits), d$outside_tube,
              x$n))
  cat("\nWeights w (posterior mean = sum_i k(x, x_i) w_i):\n")
  print(d$weights, digits = digits)
  cat(sprintf("%d weights within 1%% of the bound C\n", d$at_bound))
  cat("\nLatent posterior sd at the training inputs:\n")
  print(d$posterior_sd, digits = digits)
  cat(sprintf("EP algorithm: %s\n", d$algorithm))
  if (!is.null(d$sparse)) cat(d$sparse, "\n", sep = "")
}

.title.gpsvm_mfsvr <- function(object) "Mean-field support vector regression (TAP / EP)"

.own_hyperparameters.gpsvm_mfsvr <- function(object) c(C = object$C, epsilon = object$epsilon)

.glance_columns.gpsvm_mfsvr <- function(x) NULL

# tidy(): one row per training point, its weight w_i, "bound" within 1% of C.
.weight_frame.gpsvm_mfsvr <- function(object, ...) {
  .check_dots_empty(...)
  w <- object$coefficients
  .point_frame(object$x, w, ifelse(abs(w) > 0.99 * object$C, "bound", "interior"))
}

# The fields mfsvr()'s computations read (validate-fit.R): its own and the
# EP engine's.
.validate_model.gpsvm_mfsvr <- function(object) {
  .validate_regression(object, function(n, p) {
    c(list(C = .number(lower = 0, open = TRUE), epsilon = .number(lower = 0),
           coefficients = .numbers(n), variance = .numbers(n, lower = 0),
           noise_variance = .number(lower = 0, open = TRUE),
           control = .control_field("mfsvr_control"), C_mixture = .optional(.C_mixture_problem),
           noise_model = .optional(.rvm_noise_check(p))),
      .ep_checks(object, n, p))
  })
}
