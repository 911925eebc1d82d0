# rvm(noise = ) and mfsvr(noise = ): noise varying smoothly with the inputs,
# weighed against constant noise by the evidence (the model, and why this form:
# "Noise that varies with the inputs" in ?rvm and ?mfsvr).  The numerics are the
# core's; this file assembles the noise basis and prior, chooses among the
# noise widths, and gives the fitted noise at new inputs.

# The noise functions' widths over the data-driven width (the log noise is
# smoother than the mean); the log noise's prior variance; the most centres;
# the screen of "auto": where Newton's first step from constant noise
# predicts a log Bayes factor below screen_log_bf at every noise width, the
# noise is plainly constant and no width is searched (the core's
# first_step_log_bf()).  On constant-noise data the first steps' factors
# lie close to the searches', far below the choice's threshold of 3; on data
# whose noise varies the search raises them, so the screen sits well below
# 3, where no such data set stops (NEWS has the figures).
.rvm_noise_settings <- list(width_factors = c(1, 3, 10), prior_variance = 4, centres = 20L,
                            max_iter = 50L, tol = 1e-3, screen_log_bf = 0)

# The core's search settings: "auto" screens, "varying" always searches.
.noise_search_control <- function(noise, ...) {
  s <- .rvm_noise_settings
  list(max_iter = s$max_iter, tol = s$tol,
       screen_log_bf = if (noise == "auto") s$screen_log_bf else -Inf, ...)
}

# "constant", "varying" or "auto", checked.
.check_noise_choice <- function(noise) {
  if (!is.character(noise) || length(noise) != 1L || is.na(noise) ||
      !noise %in% c("constant", "varying", "auto")) {
    .stop("'noise' must be \"constant\", \"varying\" or \"auto\"")
  }
  noise
}

# The noise fit of highest Laplace evidence over the noise widths, with its
# kernel and centres: fit_all(bases) fits the model once per element
# list(basis, precision) of `bases` (the noise functions at the rows of x and
# their weights' prior precision) in one call of the core, which fits the
# constant model once for all of them.
.fit_noise_widths <- function(x, fit_all) {
  s <- .rvm_noise_settings
  w <- .data_driven_width(x)
  widths <- lapply(s$width_factors, function(factor) {
    nk <- rbf_kernel(w * factor)
    centres <- sort(.greedy_rows(nk, x, min(s$centres, sum(!duplicated(x)))))
    z <- x[centres, , drop = FALSE]
    precision <- kernel_matrix(nk, z, z) / s$prior_variance
    diag(precision) <- diag(precision) * (1 + 1e-8)  # (rounding: centres nearly alike)
    list(kernel = nk, centres = z, basis = kernel_matrix(nk, x, z), precision = precision)
  })
  cores <- fit_all(lapply(widths, `[`, c("basis", "precision")))
  best <- NULL
  for (i in seq_along(widths)) {
    core <- cores[[i]]
    if (!is.finite(core$log_marginal)) next
    if (is.null(best) || core$log_marginal > best$core$log_marginal) {
      best <- list(core = core, kernel = widths[[i]]$kernel, centres = widths[[i]]$centres)
    }
  }
  if (is.null(best)) .stop("the varying-noise fit failed at every noise width; use noise = \"constant\"")
  best
}

# The log Bayes factor noise = "auto" needs ("strong" on Kass and Raftery's
# scale): the varying model's evidence is the best of several noise widths,
# and on small constant-noise sets it often exceeds the constant one's a little.
.noise_choice_log_bf <- 3

# The noise model a fit keeps: log factor h(z) = k(z, centres)' theta + offset,
# of mean 0 over the training rows (`eta` its k(x_i, centres)' theta there).
.noise_model <- function(best, theta, eta, constant, noise) {
  evidence <- c(constant = constant, varying = best$core$log_marginal)
  varying <- noise == "varying" ||
    evidence[["varying"]] - evidence[["constant"]] > .noise_choice_log_bf
  list(type = if (varying) "varying" else "constant", chosen = noise,
       log_evidence = evidence, kernel = best$kernel, centres = best$centres,
       theta = theta, offset = -mean(eta), prior_variance = .rvm_noise_settings$prior_variance,
       convergence = best$core$convergence, screened = isTRUE(best$core$screened))
}

# The varying-noise RVM on scaled data; "auto" keeps the core's constant fit
# where its evidence wins.  `rows`: the candidate centres (.rvm_basis_rows()).
.rvm_fit_noise <- function(x, y, kernel, control, rows, noise) {
  fit_noise <- function(rows) .fit_noise_widths(x, function(bases) {
    .count_fit()
    cpp_rvm_varying_noise_fit(kernel, x, y, unclass(control), bases, .noise_search_control(noise),
                              basis = rows)
  })
  best <- fit_noise(rows)
  model <- .noise_model(best, best$core$theta, best$core$eta, best$core$constant$log_lik, noise)
  if (noise == "auto") model <- .judge_on_constant_basis(model, best$core$constant, fit_noise)
  constant <- function() .new_rvm(best$core$constant, x, y, kernel, control, class = "rvm",
                                  noise_model = utils::modifyList(model, list(type = "constant")))
  if (model$type != "varying") return(constant())
  core <- best$core$fit
  # the noise level sigma^2 the geometric mean over the training rows
  core$sigma2 <- core$sigma2 * exp(mean(best$core$eta))
  core$log_lik <- best$core$log_marginal
  varying <- function() .new_rvm(core, x, y, kernel, control, class = "rvm", noise_model = model)
  if (noise != "auto") return(varying())
  .replay_warnings(.unless_interpolating(.held_warnings(varying()), .held_warnings(constant())))
}

# "auto" asks whether the noise varies, not whether a varying noise and a
# basis chosen anew beat the constant fit: with its alphas re-estimated, a
# noise that shrinks at a few rows lets new basis functions take those rows'
# deviations, and that gain shows in the evidence.  So where the full
# models' factor chooses varying noise, the factor that decides is the one
# with the candidate basis held to the constant fit's relevance vectors
# (`fit_noise(rows)` refits on those; where that refit fails, the full
# factor stands); the fit returned is the full varying one.
.judge_on_constant_basis <- function(model, constant_core, fit_noise) {
  kept <- sort(constant_core$active[constant_core$active > 0])
  if (model$type != "varying" || !length(kept)) return(model)
  judge <- tryCatch(fit_noise(kept)$core, error = function(e) NULL)
  if (is.null(judge)) return(model)
  model$basis_log_evidence <- c(constant = judge$constant$log_lik, varying = judge$log_marginal)
  if (.noise_log_bf(model) <= .noise_choice_log_bf) model$type <- "constant"
  model
}

# The log Bayes factor of varying against constant noise that the choice read.
.noise_log_bf <- function(nm) {
  e <- if (!is.null(nm$basis_log_evidence)) nm$basis_log_evidence else nm$log_evidence
  e[["varying"]] - e[["constant"]]
}

# An RVM fit with more effective parameters than half the observations
# (.interpolation_facts()) has driven its noise towards zero: its evidence,
# and a Bayes factor against it, no longer measure the noise.  "auto" then
# keeps the constant fit, and the noise model says why.  Both fits come as
# .held_warnings(), so that only the kept one's warnings are heard.
.unless_interpolating <- function(varying, constant) {
  facts <- .interpolation_facts(varying$value)
  if (is.null(facts)) facts <- .interpolation_facts(constant$value)
  if (is.null(facts)) return(varying)
  constant$value$noise_model$interpolates <- facts
  constant
}

# The noise variance's factor exp(h(z)) at scaled inputs z (1 for constant noise).
.noise_factor <- function(object, z) {
  nm <- object$noise_model
  if (is.null(nm) || nm$type != "varying") return(if (is.null(z)) 1 else rep(1, nrow(z)))
  if (is.null(z)) return(1)
  exp(drop(kernel_matrix(nm$kernel, z, nm$centres) %*% nm$theta) + nm$offset)
}

# The noise variance at each training row (model units).
.rvm_row_noise <- function(object) object$noise_variance * .noise_factor(object, object$x)

# print()'s words on the noise model; `level` names the level's variance, `sd` its sd.
.rvm_noise_words <- function(object, level = "sigma^2", sd = "sigma") {
  nm <- object$noise_model
  if (is.null(nm)) return("; constant noise")
  bf <- .noise_log_bf(nm)
  if (nm$type == "varying") {
    sprintf(paste0("; noise variance varying with the inputs, %s times exp(h(x)) ",
                   "(noise sd %.3g to %.3g times %s over the training rows; ",
                   "log Bayes factor %.3g against constant noise)"), level,
            sqrt(min(.noise_factor(object, object$x))),
            sqrt(max(.noise_factor(object, object$x))), sd, bf)
  } else {
    sprintf("; constant noise (log Bayes factor %.3g for noise varying with the inputs%s%s)", bf,
            .screened_words(nm),
            if (!is.null(nm$interpolates)) ", not trusted: a fit nearly interpolates" else
              if (nm$chosen == "auto") sprintf("; varying needs > %g", .noise_choice_log_bf) else "")
  }
}

# Where "auto"'s screen ended the search (.fit_noise_widths()): the factor
# is the first Newton step's prediction, and print() and the plan say so.
.screened_words <- function(nm) {
  if (!isTRUE(nm$screened)) return("")
  sprintf(" by Newton's first step from constant noise, below %g at every noise width, so not searched",
          .rvm_noise_settings$screen_log_bf)
}

# The fit's noise_model as the computations read it (validate-fit.R); p input columns.
.rvm_noise_check <- function(p) {
  function(v) {
    ok <- is.list(v) && isTRUE(v$type %in% c("constant", "varying")) &&
      is.numeric(v$theta) && all(is.finite(v$theta)) && is.matrix(v$centres) &&
      ncol(v$centres) == p && nrow(v$centres) == length(v$theta) &&
      all(is.finite(v$centres)) && is.numeric(v$offset) && length(v$offset) == 1L &&
      is.finite(v$offset) && inherits(v$kernel, "gpsvm_kernel") &&
      is.numeric(v$log_evidence) && length(v$log_evidence) == 2L &&
      (is.null(v$mean_width) || (is.numeric(v$mean_width) && all(is.finite(v$mean_width)) &&
                                   identical(names(v$mean_width), c("factor", "log_bayes_factor")) &&
                                   v$mean_width[["factor"]] > 0)) &&
      (is.null(v$basis_log_evidence) || (is.numeric(v$basis_log_evidence) &&
                                           length(v$basis_log_evidence) == 2L)) &&
      (is.null(v$interpolates) || (is.character(v$interpolates) && length(v$interpolates) == 1L)) &&
      (is.null(v$screened) || isTRUE(v$screened) || isFALSE(v$screened)) &&
      !(isTRUE(v$screened) && v$type == "varying")
    if (!ok) "must be the noise model rvm() made (type, kernel, centres, theta, offset)"
  }
}

# The noise function of the epsilon-insensitive model (mfsvr()'s EP evidence)
# at C, epsilon and kernel on scaled rows x, y: the tube's C exp(-l) and
# epsilon exp(l) (mfsvr_noise.hpp).  Returns the noise model, for a varying
# one its level (C and epsilon at the geometric mean of the rows' scales), the
# rows' l about it and EP's sites.  With `amplitude` the mean's prior amplitude
# is fitted too, and C, epsilon and the sites are those of y / amplitude.
.tube_noise <- function(x, y, C, epsilon, kernel, control, noise, amplitude = FALSE) {
  ctl <- .tube_noise_control(x, kernel, control)
  best <- .fit_noise_widths(x, function(bases) {
    .count_fit()
    cpp_mfsvr_varying_noise_fit(kernel, x, y, C, epsilon, ctl, bases,
                                .noise_search_control(noise, amplitude = amplitude))
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

# The core's control for .tube_noise()'s search on rows x: on the prior
# .mfsvr_fit() chooses (a low-rank factor's FITC model where K has one), as
# the final fit, warm-started from the search's sites, runs on.
.tube_noise_control <- function(x, kernel, control) {
  control <- .resolve_control(control, nrow(x))
  ctl <- unclass(control)
  if (control$algorithm != "ep") return(ctl)
  inducing <- .chosen_inducing(x, .mfsvr_prior(x, kernel, control))
  ctl$inducing <- inducing
  if (!is.null(inducing)) ctl$inducing_held_rows <- .inducing_held_rows(nrow(x), nrow(inducing))
  ctl
}

# .tube_noise()'s answer for a calibration's refit on rows x: `refit`'s own.
.kept_tube_noise <- function(refit, x) {
  list(model = refit$noise_model, C = refit$C, epsilon = refit$epsilon,
       l = log(.noise_factor(refit, x)) / 2, amplitude = 1, start = NULL)
}

# The fit `fit` (scaled data; C, epsilon, kernel and offset chosen with
# constant noise) with the noise function of .tube_noise(), refitted by
# fit_at(tube); "auto" keeps the constant fit where its evidence wins, and a
# calibration's refit (`refit` the fit calibrated) keeps that fit's function.
# The mixture over C is the constant model's and is dropped.
.with_tube_noise <- function(fit, noise, refit, control, amplitude, fit_at) {
  tube <- if (is.null(refit)) {
    .tube_noise(fit$x, fit$y, fit$C, fit$epsilon, fit$kernel, control, noise, amplitude)
  } else if (identical(refit$noise_model$type, "varying")) .kept_tube_noise(refit, fit$x)
  if (is.null(refit)) fit$noise_model <- tube$model
  if (!identical(tube$model$type, "varying")) return(fit)
  out <- fit_at(tube)
  fit[c("inducing", "inducing_weights", "inducing_chol", "inducing_held_rows")] <- NULL
  fit[names(out)] <- unclass(out)
  class(fit) <- class(out)
  fit$C_mixture <- NULL
  fit$noise_model <- tube$model
  # (a varying fit's evidence is of y / amplitude, which the scaling absorbs)
  fit$log_evidence <- if (is.null(refit)) {
    tube$model$log_evidence[["varying"]] + length(fit$y) * log(tube$amplitude)
  } else out$log_evidence
  fit
}

# mfsvr(noise = ) (not with inducing inputs).
.mfsvr_with_noise <- function(fit, noise, refit = NULL, amplitude = FALSE) {
  if (!is.null(fit$inducing) && !isTRUE(attr(fit$inducing, "low_rank"))) {
    .stop("noise = \"varying\" or \"auto\" needs a fit without inducing inputs")
  }
  .with_tube_noise(fit, noise, refit, fit$control, amplitude, function(tube) {
    .mfsvr_fit(fit$x, fit$y / tube$amplitude, tube$C, tube$epsilon, fit$kernel, fit$control,
               start = tube$start, log_noise_scale = tube$l)
  })
}

# With noise varying with the inputs, the mean's one width chosen again by
# the varying model's evidence: the constant model's width is the one that
# suits its noisiest stretch, and where a noise function takes up the spread
# the evidence can prefer a smoother mean (as hetGP fits the mean's widths
# with its noise).  A ladder of factors sqrt(2) up from the fit's width, at
# most a factor 8, while the evidence of the varying fit rises
# (refit_at(kernel): the search for C at that width, then its noise
# function, level and amplitude; with these held, a wider kernel alone
# loses), kept where it gains more than a nat.  A width the call gave, a
# width per input and kernels with none are kept.
.with_noise_width <- function(fit, refit_at) {
  k <- fit$kernel
  if (!identical(fit$noise_model$type, "varying") || is.null(k$sigma_rule) ||
      !is.numeric(k$sigma) || length(k$sigma) != 1L || !is.null(k$input_widths)) {
    return(fit)
  }
  evidence <- function(f) f$noise_model$log_evidence[["varying"]]
  best <- fit
  factor <- 1
  while (factor * sqrt(2) <= 8 + 1e-9) {
    k$sigma <- fit$kernel$sigma * factor * sqrt(2)
    trial <- tryCatch(refit_at(k), error = function(e) NULL)
    if (!identical(trial$noise_model$type, "varying") || !isTRUE(evidence(trial) > evidence(best))) break
    best <- trial
    factor <- factor * sqrt(2)
  }
  # (one hyperparameter more, maximised: it must win by the margin a width
  # per input must, .per_input_margin nats per hyperparameter)
  if (factor == 1 || !(evidence(best) - evidence(fit) > .per_input_margin)) return(fit)
  keep <- c("kernel_choice", "bias_variance", "bias_choice", "width_choice")
  best[keep] <- fit[keep]
  best$noise_model$log_evidence[["constant"]] <- fit$noise_model$log_evidence[["constant"]]
  best$noise_model$chosen <- fit$noise_model$chosen
  best$noise_model$mean_width <- c(factor = factor, log_bayes_factor = evidence(best) - evidence(fit))
  best
}

# A fit whose varying noise came with its mean's amplitude, in the user's
# units: the amplitude joins the response's scale, and the fitted values move.
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

# svr(noise = ): the MAP fit of mfsvr()'s model with its noise function, each
# row's box C exp(-l_i) and tube epsilon exp(l_i) in the dual (smo.hpp).
.svr_with_noise <- function(fit, noise, control, refit = NULL) {
  .with_tube_noise(fit, noise, refit, mfsvr_control(), FALSE, function(tube) {
    .svr_fit(fit$x, fit$y, tube$C, tube$epsilon, fit$kernel, FALSE, control,
             log_noise_scale = tube$l)
  })
}
