# The two discrete choices the evidence makes for mfsvr() and svr() on
# standardised data: the kernel (a Gaussian kernel at the widths of two
# data-driven rules, or a linear kernel), and whether the regression
# function has a constant offset.
#
# The offset, f(x) = b + g(x) with b ~ N(0, bias), enters the prior
# covariance as a constant added to the kernel (.with_bias(), as the
# classifiers' bias does).  Scaling centres the response, but the mean of
# the data is not the level a function settles to away from them: a peak
# on a flat floor, say, whose floor lies below the data's mean.  A zero-mean
# prior pulls every prediction far from the data to the data's mean; with
# the offset the evidence can put the floor where the data say.  Where the
# response has no such floor the offset costs about a nat of evidence, so
# the evidence weighs .default_bias_variance against no offset.
#
# The width: kernlab's sigest() rule (.data_driven_width()) follows the
# spread of the inputs and gives narrow widths where few or discrete inputs
# put many pairs close together; e1071's gamma = 1/p, sigma = sqrt(p / 2),
# follows only their number.  Neither wins everywhere (see ?kernels), and the
# evidence tells them apart where it matters.  A search over the width
# itself fits the noise of small sets (see ?mfsvr), two candidates far less.
#
# The Matern kernels of nu = 5/2 and 3/2 (.matern_candidates()) are weighed
# next, at the width of the Gaussian kernel the evidence preferred over the
# other Gaussian one (whether or not the linear kernel beat both), when the
# call gave no kernel (mfsvr() and svr()), 5/2 first and 3/2 only when 5/2
# gained evidence over the Gaussian kernels (one fit more where the Gaussian
# kernel stays, two where the data are rough): measured data are often rougher
# than the Gaussian kernel's infinitely smooth functions, and a rough kernel
# with a fitting width has the higher evidence there.  The width carries
# over through the variance of the derivative, -k''(0) (Rice's formula: the
# mean number of upcrossings of a level per unit length depends on it
# alone), so both kernels wiggle as often as the Gaussian one: 1 / sigma^2
# for the Gaussian kernel, 5 / (3 l^2) and 3 / l^2 for Matern 5/2 and 3/2,
# so l = sqrt(5/3) sigma and sqrt(3) sigma (at l = sigma they would wiggle
# more often than the Gaussian kernel they are compared with).  nu = 1/2,
# whose functions have no derivative, has no width to carry over this way,
# and is not weighed.
#
# The linear kernel (.linear_candidate()) is the third candidate: no
# Gaussian width extrapolates a response that is linear in its inputs from
# a few dozen rows, and the evidence tells such data apart.  Where it led
# the Gaussian kernels, a Matern kernel weighed after it must beat it by
# more than .linear_tie_margin nats: the Matern kernels are two more
# candidates, tried after looking at the data, and on a near tie the rough
# kernel reverts to the data's mean beyond the training inputs where the
# linear one carries the trend on (held out on a few dozen rows, the near
# ties lost more than they won).
.linear_tie_margin <- 1

# The prior variance of the offset the evidence weighs against none: the
# response's own variance once scaling has standardised it.
.default_bias_variance <- 1

# `bias` as the regression fitters take it: NULL (chosen by the evidence)
# or a prior variance >= 0.
.check_bias_variance <- function(bias) {
  if (is.null(bias)) return(NULL)
  .check_number(bias, "bias", lower = 0)
}

# An offset's prior variance beside the kernel's values: K + bias 1 1'
# keeps K only to about 1e-16 bias, so beyond 1e10 times the kernel's
# largest value on the (scaled) inputs, or 1e10 where that is below 1, the
# kernel is lost in rounding.  gpc(bias = 1e308) failed in its
# factorisation and blamed identical inputs with different labels.
.check_bias_scale <- function(bias, kernel, x) {
  if (is.null(bias) || bias == 0) return(invisible(bias))
  largest <- max(abs(cpp_kernel_diagonal(kernel, x, 0L, 1L)))
  limit <- 1e10 * max(largest, 1)
  if (bias > limit) {
    .stop(sprintf(paste("'bias' must be at most %.3g (1e10 times the kernel's largest value on",
                        "these inputs, or 1e10), not %s: beside a larger prior variance of the",
                        "offset the kernel's own values are lost in rounding"),
                  limit, format(bias)))
  }
  invisible(bias)
}

# Whether a fit lets the evidence choose the kernel among the candidates:
# on standardised data, where it chooses the offset's too (see there), not
# when a search moves the width, and on the dense prior (the inducing
# inputs, and whether the kernel matrix has a low rank, depend on the
# kernel).
.kernel_by_default <- function(scale, n, which, inducing) {
  .bias_by_default(scale, n) && !("sigma" %in% which) && is.null(inducing)
}

# Whether a fit given no `bias` lets the evidence choose it: on
# standardised data (scale = TRUE, so that a prior variance of 1 is the
# response's own), where the fit has its evidence (every mfsvr() fit; svr()
# where the EP evidence chooses C); elsewhere no offset, the papers'
# zero-mean model.  A fit at a C given chooses too, so that update(fit,
# C = 10) weighs the same two models as the fit did.  Beyond the default
# search's limit of observations the choice, a second fit, is not made
# either (the fit's message says so).
.bias_by_default <- function(scale, n) isTRUE(scale) && n <= .size_rule("search_max_n")

# Fit with the offset's prior variance `bias`, or, with `choose`, weigh
# .default_bias_variance against no offset by the evidence; with two
# `kernels` (.kernel_candidates()), the one of higher evidence first.
# fit_at(kernel, previous) fits one model by EP (previous: an earlier fit,
# whose hyperparameters and sites a later fit starts from, or NULL).  The
# fit without an offset comes first; the offset's gain in evidence at its
# sites (.offset_gain_at_sites()) decides whether the fit with the offset
# is worth making: the sites and C barely move when a constant joins the
# prior, so the gain at the sites is close to the refitted one, and a fit
# is saved wherever the offset is clearly worse.  Below
# -.offset_refit_margin the offset is not refitted, and the record says
# its evidence was estimated.  The fit records the variance
# used (`bias_variance`) and, when chosen, the two log evidences and
# whether each is a fit's (`bias_choice`).
.fit_with_bias <- function(fit_at, kernels, bias, choose) {
  held_without <- .fit_best_kernel(fit_at, kernels, if (choose) 0 else bias)
  without <- held_without$value
  if (!choose) {
    without <- .replay_warnings(held_without)
    without$bias_variance <- bias
    return(without)
  }
  gain <- tryCatch(.offset_gain_at_sites(without, .default_bias_variance),
                   error = function(e) NA_real_)
  held_with <- if (!(gain < -.offset_refit_margin)) {
    tryCatch(.held_warnings(fit_at(.with_bias(without$kernel, .default_bias_variance), without)),
             error = function(e) NULL)
  }
  with <- held_with$value
  log_evidence <- c(without$log_evidence,
                    with$log_evidence %||% (without$log_evidence + gain))
  chosen <- if (!is.null(with) && log_evidence[2L] > log_evidence[1L]) 2L else 1L
  fit <- .replay_warnings(if (chosen == 2L) held_with else held_without)
  fit$kernel_choice <- without$kernel_choice
  fit$bias_variance <- c(0, .default_bias_variance)[chosen]
  fit$bias_choice <- data.frame(bias = c(0, .default_bias_variance),
                                log_evidence = log_evidence, fitted = c(TRUE, !is.null(with)))
  fit
}

# The fit of higher evidence among the `kernels` (.kernel_candidates(); the
# later ones warm-started from the first), with the offset's variance
# `bias`; with more than one, the record of the choice (`kernel_choice`).
# Returns .held_warnings()'s pair: the fit, and the warnings of that fit
# alone.
.fit_best_kernel <- function(fit_at, kernels, bias) {
  first <- .held_warnings(fit_at(.with_bias(kernels[[1L]], bias), NULL))
  if (length(kernels) == 1L) return(first)
  fit_others <- function(kernels, from) {
    lapply(kernels, function(kernel) {
      tryCatch(.held_warnings(fit_at(.with_bias(kernel, bias), from)), error = function(e) NULL)
    })
  }
  evidence_of <- function(fits) {
    vapply(fits, function(f) f$value$log_evidence %||% NA_real_, numeric(1))
  }
  fits <- c(list(first), fit_others(kernels[-1L], first$value))
  log_evidence <- evidence_of(fits)
  best_of <- function(keep) {
    fits[[which.max(replace(log_evidence, is.na(log_evidence) | !keep, -Inf))]]
  }
  stationary <- vapply(kernels, function(k) !identical(k$type, "polynomial"), logical(1))
  # the Matern kernels at the best Gaussian kernel's width, smoother first:
  # the rougher one only when the smoother one gained evidence over the
  # Gaussian kernels.  They are weighed whichever kernel won, the linear one
  # too: each candidate with its own C, the choice is the joint maximum over
  # (kernel, C) among them, where weighing only after a Gaussian winner left
  # a rough kernel unweighed that beat the linear one at its own C.
  gaussian <- best_of(stationary)
  if (isTRUE(attr(kernels, "matern")) && identical(gaussian$value$kernel$type, "rbf")) {
    for (kernel in .matern_candidates(.candidate_kernel(gaussian$value$kernel))) {
      fit <- fit_others(list(kernel), gaussian$value)
      fits <- c(fits, fit)
      kernels <- c(kernels, list(kernel))
      stationary <- c(stationary, TRUE)
      log_evidence <- evidence_of(fits)
      if (!isTRUE(log_evidence[length(fits)] >
                  max(log_evidence[-length(fits)][stationary[-length(fits)]], na.rm = TRUE))) {
        break
      }
      gaussian <- fit[[1L]]
    }
  }
  best <- best_of(rep(TRUE, length(fits)))
  rows <- .candidate_rows(kernels)
  record <- data.frame(rows, log_evidence = log_evidence[attr(rows, "order")])
  # a linear kernel that led the Gaussian ones stays on a near tie with
  # the Matern kernels weighed after it
  if (identical(best$value$kernel$type, "matern") && .linear_kept(record)) {
    best <- best_of(!stationary)
  }
  best$value$kernel_choice <- record
  best
}

# Whether a record of the kernel choice (fit$kernel_choice) kept the
# linear kernel: it led the Gaussian kernels, and no Matern kernel weighed
# after it beat it by more than .linear_tie_margin.
.linear_kept <- function(choice) {
  e <- replace(choice$log_evidence, is.na(choice$log_evidence), -Inf)
  linear <- choice$rule == "linear"
  if (!any(linear)) return(FALSE)
  gaussian <- !linear & !startsWith(as.character(choice$rule), "Matern")
  e[linear] >= max(e[gaussian], -Inf) && max(e) - e[linear] <= .linear_tie_margin
}

# A fit's kernel as the candidate it was made from (without the offset's
# constant).
.candidate_kernel <- function(kernel) {
  kernel$constant <- NULL
  kernel
}

# The candidates' rules and widths as fit$kernel_choice lists them, the
# linear kernel first: then no row can go missing unnoticed (.validate_fit()
# forms the same rows from the sigest width, and a record of one row is
# none).  attr "order": the candidates' positions in that order.
.candidate_rows <- function(kernels) {
  rule <- vapply(kernels, .kernel_rule, character(1))
  rows <- order(rule != "linear", seq_along(rule))
  structure(data.frame(rule = rule[rows],
                       sigma = vapply(kernels[rows], function(k) k[["sigma"]] %||% NA_real_,
                                      numeric(1))),
            order = rows)
}

# How far apart (a factor) the two rules' widths must be to be weighed.
.width_choice_ratio <- 1.3

# The kernels the evidence weighs (see the top of this file): the Gaussian
# kernel of the width the data chose (sigest), with `widths` the same at
# e1071's sigma = sqrt(p / 2) for the p columns of the scaled inputs x
# (sigma_rule "inputs"), and, with `linear` (the call gave no kernel), the
# linear kernel .linear_candidate(); one kernel when not `choose` or when
# the width was not the data's.  A kernel given, rbf_kernel() too, stays
# Gaussian.  The second width is left out when the two are within a factor
# .width_choice_ratio (such close widths give nearly the same fit, and a
# second search costs as much as the first), and
# by the relevance vector machines (`widths = FALSE`), whose evidence
# favours the narrower of two widths whatever the data (see
# .rvm_fit_candidates()).
#
# With `matern` (the call gave no kernel, and the model weighs kernels by
# its own evidence: mfsvr(), svr()) the list carries attribute "matern",
# and .fit_best_kernel() then weighs .matern_candidates() at the width of
# the Gaussian kernel that won.
.kernel_candidates <- function(kernel, x, choose, linear, widths = TRUE, matern = FALSE) {
  if (!choose || !identical(kernel$type, "rbf") || !identical(kernel$sigma_rule, "data") ||
      isTRUE(kernel$per_input)) {
    return(list(kernel))
  }
  other <- kernel
  other$sigma <- sqrt(ncol(x) / 2)
  other$sigma_rule <- "inputs"
  close <- !widths || abs(log(other$sigma / kernel$sigma)) <= log(.width_choice_ratio)
  structure(c(list(kernel), if (!close) list(other), if (linear) list(.linear_candidate(ncol(x)))),
            matern = matern)
}

# The Matern kernels weighed against a Gaussian kernel of width sigma: nu =
# 5/2 and 3/2 at the widths whose derivative has the Gaussian kernel's
# variance (see the top of this file), recording the Gaussian kernel's
# width rule.
.matern_width_factor <- c("5/2" = sqrt(5 / 3), "3/2" = sqrt(3))
.matern_candidates <- function(gaussian) {
  lapply(names(.matern_width_factor), function(nu) {
    kernel <- matern_kernel(c("5/2" = 2.5, "3/2" = 1.5)[[nu]],
                            gaussian$sigma * .matern_width_factor[[nu]])
    kernel$sigma_rule <- gaussian$sigma_rule
    kernel
  })
}

# The linear kernel the evidence weighs against the Gaussian ones:
# scale <x, x'> with scale = 1/p for the p columns of the standardised
# inputs, so that, like the Gaussian kernel's, its prior variance of f(x) is
# about 1 (the standardised response's own) at a typical input; with
# k = <x, x'> it would grow with p and the evidence would charge a linear
# fit of many inputs for a prior far wider than the data.  Response
# surfaces that are nearly linear in their inputs (nutrition totals,
# volumes on girth, stack losses) are where every Gaussian-kernel fit
# extrapolates badly from a few dozen rows, and the evidence of a few dozen
# rows already prefers this kernel there.
.linear_candidate <- function(p) {
  kernel <- poly_kernel(1L, scale = 1 / p, offset = 0)
  # (not in sigma_rule: `$` would match a polynomial kernel's sigma to it)
  kernel$candidate <- "linear"
  kernel
}

# The name of the rule that gave a candidate kernel, as the choice's
# record and print() show it.
.kernel_rule <- function(kernel) {
  if (identical(kernel$candidate, "linear")) return("linear")
  rule <- switch(kernel$sigma_rule, data = "sigest", inputs = "gamma = 1/p")
  if (identical(kernel$type, "matern")) sprintf("Matern %s, %s", .nu_label(kernel$nu), rule) else rule
}
# (every value .kernel_rule() can give)
.kernel_rules <- c("linear", "sigest", "gamma = 1/p",
                   as.vector(outer(c("Matern 5/2", "Matern 3/2"), c("sigest", "gamma = 1/p"),
                                   paste, sep = ", ")))

# The kernel a rule of .kernel_rule() names (type, nu and sigma_rule): what
# the fit's kernel must be when the record says it won.
.rule_kernel <- function(rule) {
  if (rule == "linear") return(list(type = "polynomial"))
  parts <- strsplit(rule, ", ", fixed = TRUE)[[1L]]
  width_rule <- c(sigest = "data", "gamma = 1/p" = "inputs")[[parts[length(parts)]]]
  if (length(parts) == 1L) return(list(type = "rbf", sigma_rule = width_rule))
  list(type = "matern", nu = c("Matern 5/2" = 2.5, "Matern 3/2" = 1.5)[[parts[1L]]],
       sigma_rule = width_rule)
}

# How far below no offset the offset's evidence at the sites must fall for
# the fit with it not to be made: well beyond the estimate's error, which is
# largest on small sets, where C moves most when the offset joins.
.offset_refit_margin <- 0.7

# The log evidence a constant b added to the prior covariance gains at the
# sites of an EP fit without it (the core's rank-one update,
# site_system.hpp): the fit's kernel matrix or FITC prior (a low-rank one's too).
.offset_gain_at_sites <- function(fit, b) {
  cpp_offset_gain(fit[c("kernel", "x", "site_precision", "site_nu", "chol", "inducing",
                        "inducing_chol")], b)
}

# The offset as the evidence chose it (NULL when it did not): the prior
# variance, and the log Bayes factor against the other choice (the log
# evidences are of the scaled response; their difference is the data's).
.bias_choice_words <- function(object) {
  choice <- object$bias_choice
  if (is.null(choice)) return(NULL)
  chosen <- choice$bias == object$bias_variance
  what <- function(b) if (b > 0) sprintf("a constant offset of prior variance %s", format(b)) else
    "no offset"
  list(choice = what(object$bias_variance),
       by = sprintf("the evidence, %s", if (anyNA(choice$log_evidence)) {
         sprintf("the fit with %s failed", what(choice$bias[!chosen]))
       } else {
         sprintf("log Bayes factor %.3g against %s%s",
                 choice$log_evidence[chosen] - choice$log_evidence[!chosen],
                 what(choice$bias[!chosen]),
                 if (all(choice$fitted)) "" else ", estimated without refitting")
       }))
}

# The kernel as the evidence chose it among the candidates: the chosen one,
# and its log Bayes factor against each other.
.kernel_choice_words <- function(object) {
  choice <- object$kernel_choice
  chosen <- .chosen_candidate(object)
  describe <- function(i) {
    rule <- .rule_kernel(choice$rule[i])
    switch(rule$type, polynomial = "the linear kernel (scale 1/p)",
           rbf = sprintf("the %s rule's sigma = %s", choice$rule[i],
                         format(choice$sigma[i], digits = 4)),
           matern = sprintf("Matern %s at sigma = %s", .nu_label(rule$nu),
                            format(choice$sigma[i], digits = 4)))
  }
  against <- vapply(setdiff(seq_len(nrow(choice)), chosen), function(i) {
    if (is.na(choice$log_evidence[i])) sprintf("the fit with %s failed", describe(i)) else
      sprintf("%.3g against %s", choice$log_evidence[chosen] - choice$log_evidence[i], describe(i))
  }, character(1))
  # (the relevance vector machines weigh the kernels by a Gaussian
  # process's evidence, see .rvm_fit_candidates())
  judge <- if (inherits(object, "gpsvm_rvm")) "a Gaussian process's evidence" else "the evidence"
  won <- .rule_kernel(choice$rule[chosen])
  list(choice = switch(won$type, polynomial = "linear",
                       rbf = sprintf("Gaussian at the %s rule's width", choice$rule[chosen]),
                       matern = sprintf("Matern %s at the Gaussian %s width carried over",
                                        .nu_label(won$nu), sub(".*, ", "", choice$rule[chosen]))),
       by = paste0(sprintf("%s, log Bayes factor %s", judge, paste(against, collapse = "; ")),
                   if (won$type == "polynomial" &&
                       isTRUE(any(choice$log_evidence > choice$log_evidence[chosen]))) {
                     sprintf(" (kept on a near tie: within %g nat of a Matern kernel weighed after it)",
                             .linear_tie_margin)
                   }))
}

# The row of fit$kernel_choice that is the fit's kernel: the linear one,
# the Gaussian or Matern one of its width, or the one a width per input
# was searched from.
.chosen_candidate <- function(object) {
  choice <- object$kernel_choice
  kernel <- object$kernel
  if (!.has_width(kernel)) return(match("linear", choice$rule))
  # (a width per input is searched from the one-width candidate that won)
  if (!is.null(kernel$input_widths)) {
    widthed <- which(choice$rule != "linear")
    return(widthed[which.max(choice$log_evidence[widthed])])
  }
  same <- vapply(choice$rule, function(r) {
    k <- .rule_kernel(r)
    identical(k$type, kernel$type) && identical(k$nu, kernel$nu)
  }, logical(1))
  if (!any(same)) return(NA_integer_)
  which(same)[which.min(abs(choice$sigma[same] - kernel$sigma))]
}

# A width per input, weighed after the kernel (mfsvr()'s default, from
# per_input_min_n to per_input_max_n observations of two or more inputs):
# data whose inputs matter unequally (irrelevant columns, one input varying
# faster than another) are fitted far better by a width each, and from a
# few hundred rows the evidence tells them apart.  The search (C and the
# widths, with the hyperprior, as optimize = c("C", "sigma") makes it)
# starts from the chosen kernel's width, in its family and in Matern 5/2
# (.per_input_families()).  Where the linear kernel won, it starts from the
# best Gaussian or Matern candidate weighed beside it: a response nearly
# linear in most inputs and smooth in a few (position inputs beside others)
# can give the linear kernel more evidence than any one width, and a width
# per input far more than either.  Its evidence is maximised over p widths
# where the other fit's is over one (none for the linear kernel), so it
# must win by more than .per_input_margin nats per hyperparameter added (a
# width the data pin to a tenth of its prior range costs about log 10 of
# Occam factor; one is the least of them).  The record counts the
# hyperparameters each side fitted (`parameters`: C, and the one width where
# a kernel with one won; C, the widths and epsilon where searched).
.per_input_margin <- 1

.per_input_weighed <- function(n, p) {
  p >= 2L && n >= .size_rule("per_input_min_n") && n <= .size_rule("per_input_max_n")
}

# `chosen` (.fit_with_bias()'s fit on scaled inputs x) against the search of
# a width per input; fit_at(x) gives the fit_at(kernel, previous) of that
# search on inputs x divided by the widths.  The fit of the two, with its
# record `width_choice` (the log evidences of one width and of a width per
# input, NA where the search failed).
.with_per_input_choice <- function(chosen, x, fit_at) {
  kernel <- .per_input_start(chosen)
  if (is.null(kernel)) return(chosen)
  widths <- stats::setNames(rep(kernel$sigma, ncol(x)), .input_names(x))
  search <- function(wide) {
    unit <- .unit_width_inputs(x, .with_bias(wide, chosen$bias_variance %||% 0))
    tryCatch(.held_warnings(fit_at(unit$x)(unit$kernel, chosen)), error = function(e) NULL)
  }
  found <- lapply(.per_input_families(kernel), function(family) {
    search(if (identical(family$type, "rbf")) rbf_kernel(widths * family$factor, TRUE) else
      matern_kernel(family$nu, widths * family$factor, TRUE))
  })
  evidence <- vapply(found, function(h) h$value$log_evidence %||% NA_real_, numeric(1))
  held <- if (any(!is.na(evidence))) found[[which.max(evidence)]]
  log_evidence <- c(chosen$log_evidence, held$value$log_evidence %||% NA_real_)
  record <- .width_record(chosen, log_evidence, 1L + ncol(x))
  if (!.per_input_wins(record)) {
    chosen$width_choice <- record
    return(chosen)
  }
  fit <- .replay_warnings(held)
  fit[c("kernel_choice", "bias_variance", "bias_choice")] <-
    chosen[c("kernel_choice", "bias_variance", "bias_choice")]
  fit$width_choice <- record
  fit
}

# A width per input searched at the call's request (optimize = TRUE with
# rbf_kernel(per_input = TRUE) or matern_kernel(per_input = TRUE)), weighed
# against mfsvr()'s default fit (`default`, .mfsvr_default_fit()) by the
# rule of .with_per_input_choice(): the search (`searched`) must gain more
# than .per_input_margin nats per hyperparameter it adds (the widths, and
# epsilon where searched), or the fit is the default's.  On a few dozen
# rows the evidence pins p widths poorly, and a response nearly linear in
# its inputs, which the default's linear kernel extrapolates, is one no
# Gaussian or Matern kernel of unit amplitude follows from so few rows.  The fit records the two log evidences
# (`width_choice`); the searched fit keeps its own offset and the default's
# kernel record (`kernel_choice`), the candidates it was weighed against.
.per_input_or_default <- function(searched, default) {
  if (is.null(default)) return(searched)
  record <- .width_record(default, c(default$log_evidence, searched$log_evidence %||% NA_real_),
                          length(searched$optimization$estimate))
  fit <- if (.per_input_wins(record)) {
    searched$kernel_choice <- default$kernel_choice
    searched
  } else default
  fit$width_choice <- record
  fit
}

# Whether a fit asked for a width per input is the default's instead
# (.per_input_or_default()).
.fell_back_to_default <- function(fit) {
  !is.null(fit$width_choice) && is.null(fit$kernel$input_widths)
}

# The families searched with a width per input: the chosen kernel's, and
# Matern 5/2 beside it (the family of the Gaussian processes most often
# fitted with a width per input: widths per input change which family the
# evidence prefers, and a search costs a few fits), the better of them by
# the evidence; `factor` carries the chosen kernel's width over to Matern
# 5/2 as .matern_candidates() does.
.per_input_families <- function(kernel) {
  own <- list(type = kernel$type, nu = kernel$nu, factor = 1)
  if (identical(kernel$type, "matern") && identical(kernel$nu, 2.5)) return(list(own))
  to_gaussian <- if (identical(kernel$type, "matern")) {
    1 / .matern_width_factor[[c("1.5" = "3/2", "2.5" = "5/2")[[format(kernel$nu)]]]]
  } else 1
  list(own, list(type = "matern", nu = 2.5, factor = to_gaussian * .matern_width_factor[["5/2"]]))
}

# The one-width kernel a search of a width per input starts from: the
# chosen one, or where the linear kernel won the best candidate with a
# width in its record (NULL where there is none).
.per_input_start <- function(chosen) {
  kernel <- .candidate_kernel(chosen$kernel)
  if (.has_width(kernel)) return(kernel)
  choice <- chosen$kernel_choice
  widthed <- which(!is.na(choice$sigma) & !is.na(choice$log_evidence))
  if (!length(widthed)) return(NULL)
  best <- widthed[which.max(choice$log_evidence[widthed])]
  rule <- .rule_kernel(choice$rule[best])
  if (identical(rule$type, "rbf")) rbf_kernel(choice$sigma[best]) else
    matern_kernel(rule$nu, choice$sigma[best])
}

# The record of a width choice (fit$width_choice): the fit of one width
# or none (`chosen`, whose C the evidence chose) against a width per input,
# their log evidences and the hyperparameters each fitted (`searched` those
# of the width per input).
.width_record <- function(chosen, log_evidence, searched) {
  one <- .has_width(chosen$kernel)
  data.frame(widths = c(if (one) "one" else "none", "per input"), log_evidence = log_evidence,
             parameters = c(1L + one, as.integer(searched)))
}

# Whether a width per input wins, by the record of the log evidences of
# one width (or none: the linear kernel) and of a width for each input.
.per_input_wins <- function(record) {
  added <- record$parameters[2L] - record$parameters[1L]
  isTRUE(record$log_evidence[2L] - record$log_evidence[1L] > .per_input_margin * added)
}

# The width choice in words for the plan: list(choice, by).
.width_choice_words <- function(object) {
  choice <- object$width_choice
  won <- !is.null(object$kernel$input_widths)
  gain <- choice$log_evidence[2L] - choice$log_evidence[1L]
  # (the winner may be of another family than the kernel row's: say which)
  linear <- choice$widths[1L] == "none"
  list(choice = if (won) .kernel_words(object$kernel) else if (linear) "none (linear kernel)" else
         "one width",
       by = if (is.na(gain)) "the search of a width per input failed" else
         sprintf("the evidence, log Bayes factor %.3g of a width per input against %s (%s asked)",
                 gain, if (linear) "the linear kernel" else "one",
                 format(.per_input_margin * diff(choice$parameters))))
}
