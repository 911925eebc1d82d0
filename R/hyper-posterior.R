# The posterior of the hyperparameters a search chose beyond C (mfsvr()'s
# optimize = TRUE): its Laplace approximation at the mode, the mixture of
# fits that integrates over it, and what the data pin.

# The validator's check of a mixture's pinning table (.hyper_pinning()).
.pinning_problem <- function(v) {
  ok <- is.data.frame(v) && identical(names(v), c("parameter", "posterior_sd", "prior_sd")) &&
    is.character(v$parameter) && is.numeric(v$posterior_sd) && is.numeric(v$prior_sd) &&
    all(v$posterior_sd >= 0, na.rm = TRUE) && !anyNA(v$prior_sd) && all(v$prior_sd > 0)
  if (!ok) "must be the posterior's spread of each searched hyperparameter beside its prior's"
}

# Where a search chose more than C, the data pin some hyperparameters poorly
# on few rows, and the predictive at the mode alone is too sure of them.  The
# posterior of the searched log hyperparameters (evidence times hyperprior)
# is integrated by importance sampling from its Laplace approximation
# N(theta*, S): points theta* + L u_k (L L' = S, u_k Halton points through
# qnorm() and their mirror images, so no random numbers), weighted by the
# posterior over the normal's density, the weights truncated at sqrt(K)
# times their mean (Ionides 2008).  Hyperparameters at a bound stay there.
.hyper_mixture_points <- 16L

# The first k Halton points in d dimensions (radical inverses in the first d primes).
.halton <- function(k, d) {
  vapply(.first_primes(d), function(b) {
    vapply(seq_len(k), function(i) {
      f <- 1
      r <- 0
      while (i > 0) {
        f <- f / b
        r <- r + f * (i %% b)
        i <- i %/% b
      }
      r
    }, numeric(1))
  }, numeric(k))
}
.first_primes <- function(d) {
  primes <- numeric(0)
  m <- 1
  while (length(primes) < d) {
    m <- m + 1
    if (all(m %% primes[primes <= sqrt(m)] != 0)) primes <- c(primes, m)
  }
  primes
}

# k / 2 Halton points through qnorm() and their mirror images.
.normal_design <- function(k, d) {
  u <- matrix(stats::qnorm(.halton(k %/% 2L, d)), k %/% 2L, d)
  rbind(u, -u)
}

# The posterior of a fit's searched log hyperparameters about its mode (NULL
# where the search failed): the estimate, theta, the free ones, fit_at(theta)
# (NULL where the fit fails), log_posterior(fit, theta) and the Hessian.
.hyper_posterior <- function(fit, y) {
  record <- fit$optimization
  if (is.null(record) || !isTRUE(is.finite(record$log_evidence))) return(NULL)
  est <- record$estimate
  theta <- stats::setNames(log(est), paste0("log_", names(est)))
  bound <- names(est) %in% sub(":(lower|upper)$", "", record$at_bound %||% character(0))
  prior <- record$hyperprior
  prior <- if (!is.null(prior)) .hyperprior(prior, attr(prior, "coef"))
  control <- fit$control
  control$tol <- max(control$tol, fit$convergence$tol)
  control$per_input_gradient <- !is.null(fit$kernel$input_widths)
  fit_at <- function(t, gradient = FALSE) {
    h <- stats::setNames(as.list(exp(t)), names(est))
    point <- .refit_point(fit, h)
    f <- tryCatch(.mfsvr_fit(point$x, y, h$C %||% fit$C, h$epsilon %||% fit$epsilon, point$kernel,
                             control, gradient = gradient, warn = FALSE, start = fit,
                             inducing = point$inducing),
                  error = function(e) NULL)
    if (!is.null(f) && f$convergence$converged && is.finite(f$log_evidence)) f
  }
  log_posterior <- function(f, t) f$log_evidence + if (is.null(prior)) 0 else prior$log_density(t)
  free <- names(theta)[!bound]
  at <- function(t_free) {
    t <- replace(theta, free, t_free)
    f <- fit_at(t, gradient = TRUE)
    if (is.null(f)) return(list(value = NA_real_, gradient = rep(NA_real_, length(free))))
    g <- .mfsvr_named_gradient(f)[names(theta)]
    if (!is.null(prior)) g <- g + prior$gradient(t)
    list(value = log_posterior(f, t), gradient = unname(g[free]))
  }
  hessian <- if (length(free)) .hessian(at, theta[free]) else matrix(0, 0, 0)
  hessian <- matrix(hessian, length(free), length(free), dimnames = list(free, free))
  list(estimate = est, theta = theta, free = free, fit_at = fit_at,
       log_posterior = log_posterior, hessian = hessian, prior = prior)
}

# How far the data pin each searched hyperparameter: its posterior sd on the
# log scale (NA at a bound) beside its prior sd there (Inf where flat).
.hyper_pinning <- function(post, covariance) {
  names_all <- names(post$theta)
  sd <- stats::setNames(rep(NA_real_, length(names_all)), names_all)
  sd[post$free] <- sqrt(pmax(diag(covariance), 0))
  prior_sd <- stats::setNames(rep(Inf, length(names_all)), names_all)
  if (!is.null(post$prior)) {
    table <- post$prior$table
    A <- attr(table, "coef")
    precision <- crossprod(A, A / table$sd^2)  # the prior's, on the parameters
    held <- colnames(A)[colSums(A != 0) > 0]
    inv <- tryCatch(solve(precision[held, held, drop = FALSE]), error = function(e) NULL)
    if (!is.null(inv)) prior_sd[held] <- sqrt(diag(inv))
  }
  data.frame(parameter = sub("^log_", "", names_all), posterior_sd = unname(sd),
             prior_sd = unname(prior_sd), stringsAsFactors = FALSE)
}

# The quadrature (as .C_quadrature()'s, with the pinning table) over the
# searched hyperparameters, or NULL where the posterior is not curved
# downwards at the mode or the fits fail.
.hyper_quadrature <- function(fit, y, points = .hyper_mixture_points) {
  post <- .hyper_posterior(fit, y)
  if (is.null(post) || length(post$free) == 0L) return(NULL)
  precision <- -post$hessian
  e <- if (all(is.finite(precision))) eigen(precision, symmetric = TRUE)
  if (is.null(e) || min(e$values) <= 0) return(NULL)
  root <- e$vectors %*% diag(1 / sqrt(e$values), length(e$values))  # L, L L' = S
  covariance <- tcrossprod(root)
  u <- .normal_design(points, length(post$free))
  thetas <- lapply(seq_len(nrow(u)), function(k) {
    replace(post$theta, post$free, post$theta[post$free] + drop(root %*% u[k, ]))
  })
  fits <- lapply(thetas, post$fit_at)
  ok <- !vapply(fits, is.null, logical(1))
  if (sum(ok) < 2L) return(NULL)
  centre <- post$log_posterior(fit, post$theta)
  log_ratio <- vapply(which(ok), function(k) post$log_posterior(fits[[k]], thetas[[k]]),
                      numeric(1)) - centre + rowSums(u[ok, , drop = FALSE]^2) / 2
  w <- exp(log_ratio - max(log_ratio))
  w <- w / sum(w)
  w <- pmin(w, mean(w) * sqrt(length(w)))
  fits <- fits[ok]
  C_free <- "log_C" %in% post$free
  list(C = vapply(fits, `[[`, numeric(1), "C"), weight = w / sum(w),
       log_evidence = vapply(fits, `[[`, numeric(1), "log_evidence"), fits = fits,
       log_proposal = -rowSums(u[ok, , drop = FALSE]^2) / 2,
       log_C_sd = if (C_free) sqrt(covariance[post$free == "log_C", post$free == "log_C"]),
       posterior = .hyper_pinning(post, covariance))
}

# A hyperparameter is pinned by the data when they at least halve its prior
# spread on the log scale.
.pinned_ratio <- 0.5

# The plan's row for a search with a hyperprior: which hyperparameters the
# data pin, which the prior sets, which stopped at an end of their range.
.plan_posterior <- function(fit, n) {
  at_bound <- .bound_phrases(fit$optimization)
  if (!length(at_bound)) at_bound <- NULL
  table <- fit$C_mixture$posterior
  if (is.null(table)) {
    rule <- n > .size_rule("C_mixture_max_n")
    return(.plan_row("posterior", paste(c(at_bound %||% "none at an end of its range",
                                          "the spreads not measured"), collapse = "; "),
                     if (rule) .rule_words("C_mixture_max_n", n, TRUE) else
                       "the posterior was not curved downwards at the mode, or refits failed",
                     if (rule) "C_mixture_max_n" else NA_character_, !rule))
  }
  ratio <- table$posterior_sd / table$prior_sd
  free <- !is.na(ratio)
  pinned <- table$parameter[free & ratio <= .pinned_ratio]
  prior <- table$parameter[free & ratio > .pinned_ratio]
  choice <- c(if (length(pinned)) paste("pinned by the data:", paste(pinned, collapse = ", ")),
              if (length(prior)) paste("left to the hyperprior:", paste(prior, collapse = ", ")),
              at_bound)
  by <- sprintf("posterior over prior sd of the log (pinned at most %g): %s", .pinned_ratio,
                paste(sprintf("%s %.2f", table$parameter[free], ratio[free]), collapse = ", "))
  .plan_row("posterior", paste(choice, collapse = "; "), by, "C_mixture_max_n")
}

# The plan's step of a fit's mixture: over C alone, or over several
# searched hyperparameters about their posterior's mode.
.mixture_step <- function(mixture) {
  if (is.null(mixture$posterior)) "C mixture" else "hyperparameter mixture"
}

# The plan's row for a mixture over several searched hyperparameters.
.plan_hyper_mixture <- function(fit, n) {
  mixture <- fit$C_mixture
  ess <- 1 / sum(mixture$weight^2)
  .plan_row(.mixture_step(mixture),
            sprintf("intervals integrate over %d fits at %s drawn about the posterior mode",
                    length(mixture$C), .parameter_words(names(fit$optimization$estimate))),
            sprintf(paste("importance weights on the posterior's Laplace approximation (effective",
                          "number %.1f); %s"), ess, .rule_words("C_mixture_max_n", n, FALSE)),
            "C_mixture_max_n")
}
