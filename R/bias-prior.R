# The regression models' bias: a constant offset b of the latent function,
# f(x) = b + g(x) with b ~ N(0, bias), which enters the prior covariance as
# a constant added to the kernel (.with_bias(), as the classifiers' bias
# does).  Scaling centres the response, but the mean of the data is not the
# offset a function settles to away from them: a peak on a flat floor, say,
# whose floor lies below the data's mean.  A zero-mean prior pulls every
# prediction far from the data to the data's mean; with the offset the
# evidence can put the floor where the data say.  Measured on mlbench's
# peak (6 inputs, 140 training rows, 4 splits): held-out RMSE 3.56 without,
# 0.52 with bias = 1, and the log evidence 16 nats higher; on sets whose
# response has no such floor (Boston housing, mtcars) the offset cost 1 nat
# of evidence and changed the RMSE by 0.1%.  So where the evidence chooses
# C, it chooses between no offset and .default_bias_variance too.

# The prior variance of the offset the evidence weighs against none: the
# response's own variance once scaling has standardised it.
.default_bias_variance <- 1

# `bias` as the regression fitters take it: NULL (chosen by the evidence)
# or a prior variance >= 0.
.check_bias_variance <- function(bias) {
  if (is.null(bias)) return(NULL)
  .check_number(bias, "bias", lower = 0)
}

# Whether a fit given no `bias` lets the evidence choose it: on
# standardised data (scale = TRUE, so that a prior variance of 1 is the
# response's own), where the fit has its evidence (every mfsvr() fit; svr()
# where the EP evidence chooses C); elsewhere no offset, the papers'
# zero-mean model.  A fit at a C given chooses too, so that update(fit,
# C = 10) weighs the same two models as the fit did.  Beyond the default
# search's limit of observations the choice, a second fit, is not made
# either (the fit's message says so).
.bias_by_default <- function(scale, n) isTRUE(scale) && n <= .default_search_max_n

# Fit with the offset's prior variance `bias`, or, with `choose`, weigh
# .default_bias_variance against no offset by the evidence.  fit_at(kernel,
# previous) fits one model by EP (previous: the fit without an offset, whose
# hyperparameters and sites a second fit starts from, or NULL).  The fit
# without an offset comes first; the offset's gain in evidence at its sites
# (.offset_gain_at_sites()) decides whether the fit with the offset is
# worth making: measured against that fit on 28 splits of 14 data sets, the
# gain at the sites was within 0.07 nats of the refitted one (from -1.4 to
# +15.9 nats), as the sites and C barely move when a constant joins the
# prior.  Below -.offset_refit_margin the offset is not refitted, and the
# record says its evidence was taken at the sites.  The fit records the
# variance used (`bias_variance`) and, when chosen, the two log evidences
# and whether each is a fit's (`bias_choice`).
.fit_with_bias <- function(fit_at, kernel, bias, choose) {
  if (!choose) {
    fit <- fit_at(.with_bias(kernel, bias), NULL)
    fit$bias_variance <- bias
    return(fit)
  }
  without <- fit_at(.with_bias(kernel, 0), NULL)
  gain <- tryCatch(.offset_gain_at_sites(without, .default_bias_variance),
                   error = function(e) NA_real_)
  with <- if (!(gain < -.offset_refit_margin)) {
    tryCatch(fit_at(.with_bias(without$kernel, .default_bias_variance), without),
             error = function(e) NULL)
  }
  log_evidence <- c(without$log_evidence,
                    with$log_evidence %||% (without$log_evidence + gain))
  chosen <- if (!is.null(with) && log_evidence[2L] > log_evidence[1L]) 2L else 1L
  fit <- if (chosen == 2L) with else without
  fit$bias_variance <- c(0, .default_bias_variance)[chosen]
  fit$bias_choice <- data.frame(bias = c(0, .default_bias_variance),
                                log_evidence = log_evidence, fitted = c(TRUE, !is.null(with)))
  fit
}

# How far below no offset the offset's evidence at the sites must fall for
# the fit with it not to be made: ten times the largest difference between
# that and the refitted evidence measured (see above).
.offset_refit_margin <- 0.7

# The log evidence a constant b added to the prior covariance K gains, at
# the sites (precisions s, natural means nu) of an EP fit without it: with
# A = K + S^-1 and the sites' Gaussian pseudo-targets, the rank-one update
# of log N(t; 0, A) by b 1 1' is
#   (b r^2 / (1 + b q) - log(1 + b q)) / 2,  q = 1' A^-1 1,  r = 1' A^-1 t,
# computed as q = a' B^-1 a and r = a' B^-1 u with a = s^1/2, u = nu / a and
# B = I + diag(a) K diag(a) (a site of precision 0 drops out).  K is the
# fit's kernel matrix, or its FITC approximation with inducing inputs.
.offset_gain_at_sites <- function(fit, b) {
  a <- sqrt(fit$site_precision)
  u <- ifelse(a > 0, fit$site_nu / a, 0)
  solved <- .solve_site_system(fit, a, cbind(a, u))
  q <- sum(a * solved[, 1L])
  r <- sum(a * solved[, 2L])
  (b * r^2 / (1 + b * q) - log1p(b * q)) / 2
}

# B^-1 v for B = I + diag(a) K diag(a): by a Cholesky factor of B on the
# dense kernel matrix, or on FITC's K = V'V + diag(lambda) (V = L^-1 K_zx,
# with the fit's factor L L' = K_zz + jitter I) by the Woodbury identity in
# O(n m^2).
.solve_site_system <- function(fit, a, v) {
  z <- fit$inducing
  if (is.null(z)) {
    B <- diag(length(a)) + a * t(a * kernel_matrix(fit$kernel, fit$x))
    R <- chol(B)
    return(backsolve(R, backsolve(R, v, transpose = TRUE)))
  }
  V <- forwardsolve(fit$inducing_chol, kernel_matrix(fit$kernel, z, fit$x))
  lambda <- pmax(cpp_kernel_diagonal(fit$kernel, fit$x, 0L, 1L) - colSums(V^2), 0)
  e <- 1 + a^2 * lambda  # the diagonal of B without the low-rank part
  H <- a * t(V)
  Ev <- v / e
  inner <- diag(ncol(H)) + crossprod(H, H / e)
  Ev - (H / e) %*% solve(inner, crossprod(H, Ev))
}

# print()'s line on the offset: its prior variance and, when the evidence
# chose it, the log Bayes factor against the other choice (the log
# evidences are of the scaled response; their difference is the data's).
.bias_line <- function(object) {
  choice <- object$bias_choice
  if (is.null(choice)) return(NULL)
  chosen <- choice$bias == object$bias_variance
  what <- function(b) if (b > 0) sprintf("a constant offset of prior variance %s", format(b)) else
    "no offset"
  sprintf("Bias: %s, chosen by the evidence (%s)", what(object$bias_variance),
          if (anyNA(choice$log_evidence)) sprintf("the fit with %s failed", what(choice$bias[!chosen]))
          else sprintf("log Bayes factor %.3g against %s%s",
                       choice$log_evidence[chosen] - choice$log_evidence[!chosen],
                       what(choice$bias[!chosen]),
                       if (all(choice$fitted)) "" else ", estimated without refitting"))
}
