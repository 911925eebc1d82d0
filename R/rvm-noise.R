# rvm(noise = ) and mfsvr(noise = ): noise whose variance varies smoothly
# with the inputs, sigma^2 exp(h(x)) (for mfsvr() the tube's noise stretched
# by exp(h(x) / 2)), h a low-rank Gaussian process on a few centres, fitted
# with the rest and weighed against constant noise by the evidence.  The
# numerics are the core's (inst/include/gpsvm/rvm_noise.hpp,
# mfsvr_noise.hpp); this file
# assembles the noise basis and its prior, chooses among the noise widths,
# and gives the fitted noise at new inputs.
#
# Why this form (the choice among the published heteroscedastic GPs): the
# "most likely heteroscedastic GP" of Kersting et al. (2007) alternates a
# fit of the mean with a regression of the log squared residuals; it has no
# joint objective, so neither a convergence guarantee nor an evidence to
# weigh it against constant noise.  Lazaro-Gredilla and Titsias (2011) put a
# GP prior on the log noise and maximise a variational bound on the
# evidence; hetGP (Binois, Gramacy and Ludkovski 2018) takes the latent log
# noise at the distinct inputs to its joint maximum likelihood, smoothed by
# a second GP.  Both need the full GP's n x n algebra at every step.  The
# relevance vector machine's evidence at given noise weights is the plain
# RVM's on whitened rows (exact), and its gradient in the log noise is the
# expected squared residual, so the log noise is taken to its posterior
# mode by Fisher scoring on the evidence, as in hetGP's joint likelihood,
# but with a low-rank GP prior (a few centres: the noise is smooth and a
# handful of functions carries it) that keeps each step at O(n^2 m) and
# makes Laplace's method over the noise function cheap.  That Laplace
# evidence is what weighs varying against constant noise: the fit must
# gain more than the volume the noise prior gives up, so constant-noise
# data keep the constant fit.

# The noise functions' widths, as multiples of the data-driven width of the
# inputs (the log noise is smoother than the mean), the evidence choosing
# among them; the prior variance of the log noise (sd 2: a factor e^2 in
# the noise sd within one prior sd); the most centres.
.rvm_noise_settings <- list(width_factors = c(1, 3, 10), prior_variance = 4, centres = 20L,
                            max_iter = 50L, tol = 1e-3)

# "constant", "varying" or "auto", checked.
.check_noise_choice <- function(noise) {
  if (!is.character(noise) || length(noise) != 1L || is.na(noise) ||
      !noise %in% c("constant", "varying", "auto")) {
    .stop("'noise' must be \"constant\", \"varying\" or \"auto\"")
  }
  noise
}

# The noise fits at each noise width, the one of highest Laplace evidence
# kept with its noise kernel and centres: fit_one(basis, precision) fits
# the model with the noise functions `basis` (at the rows of the scaled
# inputs x) and the prior precision of their weights, and returns the
# core's result with its `log_marginal`.  rvm() and mfsvr() share it.
.fit_noise_widths <- function(x, fit_one) {
  s <- .rvm_noise_settings
  w <- .data_driven_width(x)
  best <- NULL
  for (factor in s$width_factors) {
    nk <- rbf_kernel(w * factor)
    centres <- sort(.greedy_rows(nk, x, min(s$centres, sum(!duplicated(x)))))
    z <- x[centres, , drop = FALSE]
    basis <- kernel_matrix(nk, x, z)
    precision <- kernel_matrix(nk, z, z) / s$prior_variance
    diag(precision) <- diag(precision) * (1 + 1e-8)  # (rounding: centres nearly alike)
    core <- fit_one(basis, precision)
    if (!is.finite(core$log_marginal)) next
    if (is.null(best) || core$log_marginal > best$core$log_marginal) {
      best <- list(core = core, kernel = nk, centres = z)
    }
  }
  if (is.null(best)) .stop("the varying-noise fit failed at every noise width; use noise = \"constant\"")
  best
}

# The log Bayes factor noise = "auto" needs to keep the varying noise:
# "strong" evidence on Kass and Raftery's (1995) scale (a factor 20).  Below
# it the constant fit stays: the varying model's evidence is the best of
# several noise widths (.fit_noise_widths()) under Laplace's approximation,
# and on small constant-noise sets it often exceeds the constant model's
# by a little (bench/bench-noise-auto.R prints the factors).
.noise_choice_log_bf <- 3

# The noise model a fit keeps: the noise variance's log factor h(z) =
# k(z, centres)' theta + offset, its mean over the training rows 0 (`eta`
# the core's k(x_i, centres)' theta there); varying when asked for or when
# its evidence beats the constant model's `constant` by
# .noise_choice_log_bf.
.noise_model <- function(best, theta, eta, constant, noise) {
  evidence <- c(constant = constant, varying = best$core$log_marginal)
  varying <- noise == "varying" ||
    evidence[["varying"]] - evidence[["constant"]] > .noise_choice_log_bf
  list(type = if (varying) "varying" else "constant", chosen = noise,
       log_evidence = evidence, kernel = best$kernel, centres = best$centres,
       theta = theta, offset = -mean(eta), prior_variance = .rvm_noise_settings$prior_variance,
       convergence = best$core$convergence)
}

# The fit of the varying-noise RVM to scaled data (.fit_noise_widths()); with
# noise = "auto" the constant fit (the core's, beside it) when its evidence
# is the higher.  `rows` are the candidate centres (.rvm_basis_rows()).
.rvm_fit_noise <- function(x, y, kernel, control, rows, noise) {
  s <- .rvm_noise_settings
  best <- .fit_noise_widths(x, function(basis, precision) {
    cpp_rvm_varying_noise_fit(kernel, x, y, unclass(control), basis, precision,
                              list(max_iter = s$max_iter, tol = s$tol), basis = rows)
  })
  model <- .noise_model(best, best$core$theta, best$core$eta, best$core$constant$log_lik, noise)
  varying <- model$type == "varying"
  core <- if (varying) best$core$fit else best$core$constant
  if (varying) {
    # the noise level sigma^2 the geometric mean over the training rows
    core$sigma2 <- core$sigma2 * exp(mean(best$core$eta))
    core$log_lik <- best$core$log_marginal
  }
  .new_rvm(core, x, y, kernel, control, class = "rvm", noise_model = model)
}

# The noise variance's factor exp(h(z)) at scaled inputs z (1 for constant
# noise, or z NULL).
.noise_factor <- function(object, z) {
  nm <- object$noise_model
  if (is.null(nm) || nm$type != "varying") return(if (is.null(z)) 1 else rep(1, nrow(z)))
  if (is.null(z)) return(1)
  exp(drop(kernel_matrix(nm$kernel, z, nm$centres) %*% nm$theta) + nm$offset)
}

# The noise variance at each training row (model units).
.rvm_row_noise <- function(object) object$noise_variance * .noise_factor(object, object$x)

# print()'s words after the noise level: which noise model the fit uses;
# `level` names that level's variance, `sd` its sd.
.rvm_noise_words <- function(object, level = "sigma^2", sd = "sigma") {
  nm <- object$noise_model
  if (is.null(nm)) return("; constant noise")
  bf <- nm$log_evidence[["varying"]] - nm$log_evidence[["constant"]]
  if (nm$type == "varying") {
    sprintf(paste0("; noise variance varying with the inputs, %s times exp(h(x)) ",
                   "(noise sd %.3g to %.3g times %s over the training rows; ",
                   "log Bayes factor %.3g against constant noise)"), level,
            sqrt(min(.noise_factor(object, object$x))),
            sqrt(max(.noise_factor(object, object$x))), sd, bf)
  } else {
    sprintf("; constant noise (log Bayes factor %.3g for noise varying with the inputs%s)", bf,
            if (nm$chosen == "auto") sprintf(", which needs > %g", .noise_choice_log_bf) else "")
  }
}

# The fit's noise_model, checked as the computations read it (validate-fit.R):
# p the number of input columns.
.rvm_noise_check <- function(p) {
  function(v) {
    ok <- is.list(v) && isTRUE(v$type %in% c("constant", "varying")) &&
      is.numeric(v$theta) && all(is.finite(v$theta)) && is.matrix(v$centres) &&
      ncol(v$centres) == p && nrow(v$centres) == length(v$theta) &&
      all(is.finite(v$centres)) && is.numeric(v$offset) && length(v$offset) == 1L &&
      is.finite(v$offset) && inherits(v$kernel, "gpsvm_kernel") &&
      is.numeric(v$log_evidence) && length(v$log_evidence) == 2L
    if (!ok) "must be the noise model rvm() made (type, kernel, centres, theta, offset)"
  }
}

# The noise function of the epsilon-insensitive model (mfsvr()'s EP
# evidence) at C, epsilon and kernel on scaled rows x, y, with a noise
# scale exp(l(x)): the tube's C exp(-l) and epsilon exp(l)
# (inst/include/gpsvm/mfsvr_noise.hpp), l's width by the Laplace evidence
# (.fit_noise_widths()).  Returns the noise model (.noise_model()) and for
# a varying one its level (C and epsilon at the geometric mean of the
# training rows' noise scales), the rows' log noise scales l about it and
# EP's sites at the mode.  The noise variance's factor is exp(2 l)
# (.noise_factor()).  With `amplitude` the latent function's prior amplitude
# is fitted with the noise (mfsvr_noise.hpp): the varying model's
# `amplitude` (1 otherwise) is that of its mean's prior on y's scale, and
# its C, epsilon and sites are those of y / amplitude, the scale its fit
# takes (.with_mean_amplitude()).  mfsvr() and svr() share it.
.tube_noise <- function(x, y, C, epsilon, kernel, control, noise, amplitude = FALSE) {
  s <- .rvm_noise_settings
  ctl <- unclass(.resolve_control(control, length(y)))
  best <- .fit_noise_widths(x, function(basis, precision) {
    cpp_mfsvr_varying_noise_fit(kernel, x, y, C, epsilon, ctl, basis, precision,
                                list(max_iter = s$max_iter, tol = s$tol, amplitude = amplitude))
  })
  core <- best$core
  model <- .noise_model(best, 2 * core$theta, 2 * (core$log_noise_scale - core$level),
                        core$constant_log_evidence, noise)
  if (amplitude) model$amplitude <- exp(core$log_amplitude)
  centre <- mean(core$log_noise_scale)
  level <- centre - core$log_amplitude
  list(model = model, C = C * exp(-level), epsilon = epsilon * exp(level),
       l = core$log_noise_scale - centre, amplitude = exp(core$log_amplitude),
       start = core[c("site_precision", "site_nu")])
}

# A calibration's refit (on rows x) of a fit `refit` with varying noise
# keeps that fit's noise function and level: .tube_noise()'s answer for it.
.kept_tube_noise <- function(refit, x) {
  list(model = refit$noise_model, C = refit$C, epsilon = refit$epsilon,
       l = log(.noise_factor(refit, x)) / 2, amplitude = 1, start = NULL)
}

# mfsvr(noise = ): the fit `fit` (scaled data; its C, epsilon, kernel and
# offset chosen with constant noise) with the noise function of
# .tube_noise(); with noise = "auto" the constant fit stays where its
# evidence is the higher.  A calibration's refit (`refit` the fit being
# calibrated) keeps that fit's noise function.  The mixture over C
# (R/hyper-mixture.R) is the constant model's and is dropped.  With
# `amplitude` the varying model fits its mean's amplitude too, and the fit
# is on y / amplitude (its log evidence that response's), which
# .with_mean_amplitude() folds into the response's scaling; a refit is on
# rows already on that scale.
.mfsvr_with_noise <- function(fit, noise, refit = NULL, amplitude = FALSE) {
  x <- fit$x
  y <- fit$y
  if (!is.null(fit$inducing) && !isTRUE(attr(fit$inducing, "low_rank"))) .stop("noise = \"varying\" or \"auto\" needs a fit without inducing inputs")
  if (!is.null(refit)) {
    if (!identical(refit$noise_model$type, "varying")) return(fit)
    tube <- .kept_tube_noise(refit, x)
  } else {
    tube <- .tube_noise(x, y, fit$C, fit$epsilon, fit$kernel, fit$control, noise, amplitude)
    fit$noise_model <- tube$model
    if (tube$model$type != "varying") return(fit)
  }
  out <- .mfsvr_fit(x, y / tube$amplitude, tube$C, tube$epsilon, fit$kernel, fit$control,
                    start = tube$start, log_noise_scale = tube$l)
  fit[c("inducing", "inducing_weights", "inducing_chol", "inducing_held_rows")] <- NULL
  fit[names(out)] <- unclass(out)
  class(fit) <- class(out)
  fit$C_mixture <- NULL
  fit$noise_model <- tube$model
  if (is.null(refit)) {
    fit$log_evidence <- tube$model$log_evidence[["varying"]] + length(y) * log(tube$amplitude)
  }
  fit
}

# A fit whose varying noise came with its mean's amplitude (.mfsvr_with_noise()),
# in the user's units: its model units are the response's scaled units over
# the amplitude, so the amplitude joins the response's scale, and the fitted
# values (unscaled by the response's scale alone) move with it.
.with_mean_amplitude <- function(fit) {
  a <- fit$noise_model$amplitude
  if (is.null(a) || !identical(fit$noise_model$type, "varying") || is.null(fit$response_scaling)) {
    return(fit)
  }
  s <- fit$response_scaling
  fit$fitted.values <- s$center + a * (fit$fitted.values - s$center)
  fit$residuals <- stats::setNames(fit$y - fit$fitted.values, names(fit$fitted.values))
  fit$response_scaling$scale <- s$scale * a
  fit
}

# svr(noise = ): the MAP fit of mfsvr()'s model (`fit` svr()'s constant-noise
# fit on scaled data, at its C, epsilon and kernel) with the noise function
# of .tube_noise(), fitted on that model's evidence: each row's box
# C exp(-l_i) and tube epsilon exp(l_i) in the dual (smo.hpp).  As for
# mfsvr(), "auto" keeps the constant fit where its evidence is the higher,
# a calibration's refit (`fit` then only its rows, kernel and offset) keeps
# the calibrated fit's noise function, and the mixture over C is dropped.
# (A free threshold, svr(bias = TRUE), has no such evidence: svr() refuses it.)
.svr_with_noise <- function(fit, noise, control, refit = NULL) {
  x <- fit$x
  y <- fit$y
  if (!is.null(refit)) {
    if (!identical(refit$noise_model$type, "varying")) return(fit)
    tube <- .kept_tube_noise(refit, x)
  } else {
    tube <- .tube_noise(x, y, fit$C, fit$epsilon, fit$kernel, mfsvr_control(), noise)
    fit$noise_model <- tube$model
    if (tube$model$type != "varying") return(fit)
  }
  out <- .svr_fit(x, y, tube$C, tube$epsilon, fit$kernel, FALSE, control,
                  log_noise_scale = tube$l)
  fit[names(out)] <- unclass(out)
  class(fit) <- class(out)
  fit$C_mixture <- NULL
  fit$noise_model <- tube$model
  fit$log_evidence <- if (is.null(refit)) tube$model$log_evidence[["varying"]]
  fit
}
