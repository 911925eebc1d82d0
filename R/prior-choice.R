# The discrete choices the evidence makes for mfsvr() and svr() on
# standardised data: the kernel and whether f has a constant offset.
#
# The offset, f(x) = b + g(x) with b ~ N(0, bias), is a constant added to the
# kernel (.with_bias()).  The data's mean is not always the level f settles
# to away from them (a peak on a floor below the mean), and a zero-mean prior
# pulls predictions there; where there is no such floor the offset costs
# about a nat, so the evidence weighs .default_bias_variance against none.
#
# The width: kernlab's sigest() rule follows the inputs' spread, e1071's
# sigma = sqrt(p / 2) only their number; neither wins everywhere (?kernels)
# and the evidence tells them apart.  A search over the width itself fits the
# noise of small sets (?mfsvr), two candidates far less.
#
# The Matern kernels of nu = 5/2, then 3/2 only when 5/2 gained evidence
# (.matern_candidates()), are weighed next where the call gave no kernel:
# measured data are often rougher than the Gaussian kernel's functions.  Their
# width is the preferred Gaussian one's carried over through -k''(0), the
# variance of the derivative (by Rice's formula it sets how often f crosses a
# level): 1 / sigma^2 = 5 / (3 l^2) = 3 / l^2.  nu = 1/2 has no derivative.
#
# The linear kernel (.linear_candidate()): no Gaussian width extrapolates a
# linear response from a few dozen rows.  Where it led the Gaussian kernels,
# a Matern kernel weighed after it must beat it by .linear_tie_margin nats:
# they are more candidates tried after seeing the data, and on a near tie
# the rough kernel reverts to the mean where the linear one carries the trend.
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

# K + bias 1 1' keeps K only to about 1e-16 bias: beyond 1e10 times the
# kernel's largest value (or 1e10) the kernel is lost in rounding.
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

# Whether the evidence chooses the kernel: where it chooses the offset, no
# search moves the width, and the prior is dense (inducing inputs and a low
# rank depend on the kernel).
.kernel_by_default <- function(scale, n, which, inducing) {
  .bias_by_default(scale, n) && !("sigma" %in% which) && is.null(inducing)
}

# Whether the evidence chooses an offset not given: on standardised data
# (a prior variance of 1 is the response's own), at a C given too (so that
# update(fit, C = 10) weighs the same models), not beyond search_max_n.
.bias_by_default <- function(scale, n) isTRUE(scale) && n <= .size_rule("search_max_n")

# Fit with the offset's variance `bias`, or with `choose` weigh
# .default_bias_variance against none, the best of `kernels` first;
# fit_at(kernel, previous) fits one model, warm from `previous`.  The sites
# barely move when a constant joins the prior, so the gain at the sites
# without it (.offset_gain_at_sites()) stands in for a refit where it is
# below -.offset_refit_margin.  Records `bias_variance` and `bias_choice`.
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

# The fit of highest evidence among `kernels` (later ones warm from the
# first) with its record `kernel_choice`, as .held_warnings()'s pair.
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
  # the Matern kernels whichever kernel won, the linear one too: the choice
  # is the joint maximum over (kernel, C), each candidate at its own C
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

# Whether fit$kernel_choice kept the linear kernel: it led the Gaussian
# kernels and no Matern kernel beat it by more than .linear_tie_margin.
.linear_kept <- function(choice) {
  e <- replace(choice$log_evidence, is.na(choice$log_evidence), -Inf)
  linear <- choice$rule == "linear"
  if (!any(linear)) return(FALSE)
  gaussian <- !linear & !startsWith(as.character(choice$rule), "Matern")
  e[linear] >= max(e[gaussian], -Inf) && max(e) - e[linear] <= .linear_tie_margin
}

# A fit's kernel without the offset's constant.
.candidate_kernel <- function(kernel) {
  kernel$constant <- NULL
  kernel
}

# The candidates' rules and widths for fit$kernel_choice, the linear kernel
# first, as .validate_fit() rebuilds them; attr "order": their positions.
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

# The kernels the evidence weighs (top of this file): the sigest width,
# with `widths` sigma = sqrt(p / 2) too unless within .width_choice_ratio
# (nearly the same fit), and with `linear` the linear kernel; one kernel when
# not `choose` or the width was not the data's.  The relevance vector
# machines (`widths = FALSE`) favour the narrower width whatever the data.
# Attribute "matern": .fit_best_kernel() weighs .matern_candidates() after.
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

# Matern 5/2 and 3/2 at a Gaussian kernel's width carried over (top of file).
.matern_width_factor <- c("5/2" = sqrt(5 / 3), "3/2" = sqrt(3))
.matern_candidates <- function(gaussian) {
  lapply(names(.matern_width_factor), function(nu) {
    kernel <- matern_kernel(c("5/2" = 2.5, "3/2" = 1.5)[[nu]],
                            gaussian$sigma * .matern_width_factor[[nu]])
    kernel$sigma_rule <- gaussian$sigma_rule
    kernel
  })
}

# The linear candidate <x, x'> / p: like the Gaussian kernel's, its prior
# variance of f(x) is about 1 at a typical standardised input, where
# <x, x'> would grow with p and be charged for a prior far wider than the data.
.linear_candidate <- function(p) {
  kernel <- poly_kernel(1L, scale = 1 / p, offset = 0)
  # (not in sigma_rule: `$` would match a polynomial kernel's sigma to it)
  kernel$candidate <- "linear"
  kernel
}

# The rule that gave a candidate kernel, as the record and print() name it.
.kernel_rule <- function(kernel) {
  if (identical(kernel$candidate, "linear")) return("linear")
  rule <- switch(kernel$sigma_rule, data = "sigest", inputs = "gamma = 1/p")
  if (identical(kernel$type, "matern")) sprintf("Matern %s, %s", .nu_label(kernel$nu), rule) else rule
}
# (every value .kernel_rule() can give)
.kernel_rules <- c("linear", "sigest", "gamma = 1/p",
                   as.vector(outer(c("Matern 5/2", "Matern 3/2"), c("sigest", "gamma = 1/p"),
                                   paste, sep = ", ")))

# The kernel (type, nu, sigma_rule) a rule of .kernel_rule() names.
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

# The log evidence a constant b added to the prior gains at the sites of an
# EP fit without it (the core's rank-one update).
.offset_gain_at_sites <- function(fit, b) {
  cpp_offset_gain(fit[c("kernel", "x", "site_precision", "site_nu", "chol", "inducing",
                        "inducing_chol")], b)
}

# The offset as the evidence chose it (NULL when it did not), with the log
# Bayes factor against the other (the scaled response's, and the data's).
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

# The kernel chosen, and its log Bayes factor against each other candidate.
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

# The row of fit$kernel_choice that is the fit's kernel (or that its width
# per input was searched from).
.chosen_candidate <- function(object) {
  choice <- object$kernel_choice
  kernel <- object$kernel
  if (!.has_width(kernel)) return(match("linear", choice$rule))
  if (!is.null(kernel$input_widths)) {
    widthed <- which(choice$rule != "linear")
    return(widthed[which.max(choice$log_evidence[widthed])])
  }
  same <- vapply(choice$rule, function(r) {
    k <- .rule_kernel(r)
    identical(k$type, kernel$type) && identical(k$nu, kernel$nu)
  }, logical(1))
  if (!any(same)) return(NA_integer_)
  which(same)[which.min(abs(choice$sigma[same] - .weighed_width(object)))]
}

# The width of the kernel weighed that the fit's kernel came from: its own,
# unless a varying noise moved it (R/rvm-noise.R, .with_noise_width()).
.weighed_width <- function(object) {
  object$kernel[["sigma"]] / (object$noise_model$mean_width[["factor"]] %||% 1)
}

# A width per input, weighed after the kernel (mfsvr()'s default on up to
# per_input_max_n rows of two or more inputs): inputs that matter unequally
# are fitted far better by a width each.  The search starts from the chosen
# kernel's width (or, where the linear kernel won, the best candidate with
# one), in its family and Matern 5/2.  Maximised over more hyperparameters,
# it must win by .per_input_margin nats per one added (a width pinned to a
# tenth of its prior range costs about log 10), and below per_input_min_n
# rows by that times per_input_min_n / n: on fewer rows the evidence of
# several widths rewards fitting the noise more.  The margin grows smoothly
# instead of the choice stopping at one size; below a quarter of
# per_input_min_n (a margin of four nats a width) no search is made.
.per_input_margin <- 1

.per_input_weighed <- function(n, p) {
  p >= 2L && n >= .size_rule("per_input_min_n") / .per_input_floor_ratio &&
    n <= .size_rule("per_input_max_n")
}

# The nats per hyperparameter added that a width per input must win by on n rows.
.per_input_margin_at <- function(n) {
  .per_input_margin * max(1, .size_rule("per_input_min_n") / n)
}

# `chosen` (.fit_with_bias()'s fit) against the search of a width per input
# (fit_at(x): its fit_at(kernel, previous) on inputs x divided by the
# widths); the better, with its record `width_choice`.
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
  record <- .width_record(chosen, log_evidence, 1L + ncol(x), nrow(x))
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

# A width per input the call asked to search, weighed against mfsvr()'s
# default fit by .with_per_input_choice()'s rule: on a few dozen rows the
# evidence pins p widths poorly.  The searched fit keeps its own offset and
# the default's `kernel_choice`.
.per_input_or_default <- function(searched, default) {
  if (is.null(default)) return(searched)
  record <- .width_record(default, c(default$log_evidence, searched$log_evidence %||% NA_real_),
                          length(searched$optimization$estimate), length(default$y))
  fit <- if (.per_input_wins(record)) {
    searched$kernel_choice <- default$kernel_choice
    searched
  } else default
  fit$width_choice <- record
  fit
}

# Whether a fit asked for a width per input is the default's instead.
.fell_back_to_default <- function(fit) {
  !is.null(fit$width_choice) && is.null(fit$kernel$input_widths)
}

# The families searched with a width per input: the chosen kernel's and
# Matern 5/2 (widths per input change which family the evidence prefers);
# `factor` carries the width over as .matern_candidates() does.
.per_input_families <- function(kernel) {
  own <- list(type = kernel$type, nu = kernel$nu, factor = 1)
  if (identical(kernel$type, "matern") && identical(kernel$nu, 2.5)) return(list(own))
  to_gaussian <- if (identical(kernel$type, "matern")) {
    1 / .matern_width_factor[[c("1.5" = "3/2", "2.5" = "5/2")[[format(kernel$nu)]]]]
  } else 1
  list(own, list(type = "matern", nu = 2.5, factor = to_gaussian * .matern_width_factor[["5/2"]]))
}

# The one-width kernel a search of a width per input starts from (NULL: none).
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

# fit$width_choice: one width or none against a width per input, their log
# evidences, the hyperparameters each fitted, and the margin per one added
# on the n rows weighed (.per_input_margin_at()).
.width_record <- function(chosen, log_evidence, searched, n) {
  one <- .has_width(chosen$kernel)
  data.frame(widths = c(if (one) "one" else "none", "per input"), log_evidence = log_evidence,
             parameters = c(1L + one, as.integer(searched)), margin = .per_input_margin_at(n))
}

.per_input_wins <- function(record) {
  added <- record$parameters[2L] - record$parameters[1L]
  isTRUE(record$log_evidence[2L] - record$log_evidence[1L] > record$margin[1L] * added)
}

# The width choice in words for the plan: list(choice, by).
.width_choice_words <- function(object) {
  choice <- object$width_choice
  won <- !is.null(object$kernel$input_widths)
  gain <- choice$log_evidence[2L] - choice$log_evidence[1L]
  linear <- choice$widths[1L] == "none"
  list(choice = if (won) .kernel_words(object$kernel) else if (linear) "none (linear kernel)" else
         "one width",
       by = if (is.na(gain)) "the search of a width per input failed" else
         sprintf(paste("the evidence, log Bayes factor %.3g of a width per input against %s;",
                       "it must exceed %s (%s nat per hyperparameter it adds)"),
                 gain, if (linear) "the linear kernel" else "one",
                 format(choice$margin[1L] * diff(choice$parameters), digits = 3),
                 format(choice$margin[1L], digits = 3)))
}
