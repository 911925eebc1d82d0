# The uncertainty of an evidence-chosen C in the predictive distribution of
# svr() and mfsvr() (one model): on few observations the evidence is flat in
# C, and the predictive at its maximum alone is too sure of the noise level.
# With a flat prior on log C, the predictive of a new target is
#   p(t | D) = int p(t | D, log C) p(log C | D) d log C,  p(log C | D) ~ Z(C),
# Z the EP evidence.  The integral is Gauss-Hermite quadrature on the Laplace
# approximation of log Z in log C (a normal of mean log C* and sd s, with s
# from the curvature of log Z there), its weights corrected by the ratio of
# Z to that normal at each node, so that a log evidence that is not
# quadratic in log C is still integrated (exactly where Z is that normal
# times a polynomial of degree below twice the nodes).  The fit keeps the
# component fits at
# the nodes, and predict() takes the quantiles of the mixture of their
# predictive distributions (R/regression-predict.R); its point prediction
# stays the fit's own.

# The mixture's quadrature nodes over log C (made up to the size rule
# C_mixture_max_n, ?gpsvm_size_policy).
.C_mixture_nodes <- 5L
.C_mixture_step <- 0.2  # in log C, for the curvature by central differences

# Gauss-Hermite quadrature for the standard normal density (the core's
# gauss_rule(), dense.hpp), the middle node of an odd rule exactly 0 (the
# fit itself in .C_quadrature()).
.gauss_hermite <- function(k) {
  out <- cpp_gauss_rule("hermite", k)
  out$node[abs(out$node) < 1e-12] <- 0
  out
}

# The quadrature in log C around an EP fit whose C maximises its evidence
# (at the other hyperparameters as they are): list(C, weight, log_evidence,
# fits) with the EP fits at the nodes (the middle one is `fit` itself), or
# NULL when the evidence has no interior maximum there (C at an end of the
# search's range, a non-negative curvature) or the fits fail.  `y` is the
# response the fit was made on (model units).
.C_quadrature <- function(fit, y, nodes = .C_mixture_nodes, step = .C_mixture_step) {
  # (only the two fits for the curvature need the gradient; EP to the
  # fit's own accuracy, the search's where it chose C: .C_search_ep_tol())
  control <- fit$control
  control$tol <- max(control$tol, fit$convergence$tol)
  refit <- function(C, gradient = FALSE) {
    f <- tryCatch(.mfsvr_fit(fit$x, y, C, fit$epsilon, fit$kernel, control,
                             gradient = gradient, warn = FALSE, start = fit,
                             inducing = fit$inducing),
                  error = function(e) NULL)
    if (!is.null(f) && f$convergence$converged) f
  }
  if (any(startsWith(fit$optimization$at_bound %||% character(0), "C:"))) return(NULL)
  log_C <- log(fit$C)
  ends <- lapply(log_C + c(-step, step), function(t) refit(exp(t), gradient = TRUE))
  if (any(vapply(ends, is.null, logical(1)))) return(NULL)
  curvature <- (ends[[2L]]$gradient[1L] - ends[[1L]]$gradient[1L]) / (2 * step)
  if (!is.finite(curvature) || curvature >= 0) return(NULL)
  sd <- 1 / sqrt(-curvature)
  gh <- .gauss_hermite(nodes)
  C <- exp(log_C + sd * gh$node)
  C[gh$node == 0] <- fit$C
  # the prior of log C is flat on the search's range and 0 beyond it
  range <- c(fit$optimization$lower[["C"]] %||% 0, fit$optimization$upper[["C"]] %||% Inf)
  inside <- C >= range[1L] & C <= range[2L]
  fits <- lapply(seq_along(C), function(k) {
    if (gh$node[k] == 0) fit else if (inside[k]) refit(C[k])
  })
  ok <- !vapply(fits, is.null, logical(1))
  log_z <- vapply(fits[ok], function(f) f$log_evidence, numeric(1))
  # Z over the Laplace normal at each node (log Z - log Z* + node^2 / 2)
  log_ratio <- log_z - fit$log_evidence + gh$node[ok]^2 / 2
  w <- gh$weight[ok] * exp(log_ratio - max(log_ratio))
  w <- w / sum(w)
  # nodes of negligible weight (far out where the evidence is flat) are left out
  keep <- w > 1e-12
  if (sum(keep) < 2L) return(NULL)
  list(C = C[ok][keep], weight = w[keep] / sum(w[keep]), log_evidence = log_z[keep],
       fits = fits[ok][keep], log_C_sd = sd)
}

# The record a fit keeps: the nodes' C, weights and log evidences, the sd of
# log C, and the component fits without the inputs (the fit holds them),
# which predict() puts back.
.C_mixture_record <- function(quadrature, components) {
  strip <- function(f) {
    f[c("x", "fitted.values", "residuals", "cavity_mean", "cavity_var", "variance",
        "gradient", "per_input_gradient", "marginals", "C_search", "optimization")] <- NULL
    f
  }
  c(list(C = quadrature$C, weight = quadrature$weight, log_evidence = quadrature$log_evidence,
         log_C_sd = quadrature$log_C_sd, components = lapply(components, strip)),
    quadrature[intersect(c("log_proposal", "posterior"), names(quadrature))])
}

# The mixture for a fit of `n` observations whose C a search chose, or NULL
# when it is not made (more than C_mixture_max_n observations, or no
# interior maximum).  `components(quadrature)` gives the model's fits at the
# nodes (mfsvr: the EP fits themselves).
.C_mixture <- function(ep_fit, y, components = function(q) q$fits) {
  if (length(y) > .size_rule("C_mixture_max_n")) return(NULL)
  C_alone <- identical(names(ep_fit$optimization$estimate), "C")
  q <- if (C_alone) .C_quadrature(ep_fit, y) else .hyper_quadrature(ep_fit, y)
  if (is.null(q)) return(NULL)
  .C_mixture_record(q, components(q))
}

# The latent means and variances of the mixture's components at scaled
# inputs z: n x k matrices, a column per node.
.C_mixture_moments <- function(object, z, ...) {
  moments <- lapply(object$C_mixture$components, function(component) {
    # (a component with other widths per input sees the inputs divided by
    # its own widths instead of the fit's)
    ratio <- .input_widths(object$kernel) / .input_widths(component$kernel)
    rescale <- function(m) if (length(ratio)) sweep(m, 2L, ratio, "*", check.margin = FALSE) else m
    component$x <- rescale(object$x)
    .latent_moments(component, rescale(z), 0L, 1L, TRUE, ...)
  })
  mean <- vapply(moments, `[[`, numeric(nrow(z)), "mean")
  var <- vapply(moments, `[[`, numeric(nrow(z)), "var")
  dim(mean) <- dim(var) <- c(nrow(z), length(moments))
  list(mean = mean, var = var)
}

# The mixture components' epsilons (a search of epsilon gives each its own).
.C_mixture_epsilon <- function(object) {
  vapply(object$C_mixture$components, function(f) f$epsilon, numeric(1))
}

# The two-sided tail probability of targets y (model units) at scaled
# inputs z under the mixture: twice the smaller of the mixture's lower tail
# at y and its upper tail (the lower one at -y of the mirrored components),
# so that targets far out keep their precision.
.C_mixture_tail <- function(object, z, y) {
  mixture <- object$C_mixture
  epsilon <- .C_mixture_epsilon(object)
  m <- .C_mixture_moments(object, z)
  lower <- upper <- 0
  for (k in seq_along(mixture$C)) {
    F <- function(t, mean) cpp_epsins_cdf(t, mean, m$var[, k], mixture$C[k], epsilon[k])
    lower <- lower + mixture$weight[k] * F(y, m$mean[, k])
    upper <- upper + mixture$weight[k] * F(-y, -m$mean[, k])
  }
  pmin(2 * pmin(lower, upper), 1)
}

# The validator's check of the record (svr and mfsvr fits).
.C_mixture_problem <- function(m) {
  if (!is.list(m) || !is.list(m$components) || length(m$components) < 2L ||
      !all(vapply(m$components, inherits, logical(1), "gpsvm_regression"))) {
    return("must be a list whose components are at least two fits")
  }
  k <- length(m$components)
  problem <- .nested(m, list(C = .numbers(k, lower = 0, open = TRUE, per = "components"),
                             weight = .numbers(k, lower = 0, upper = 1, per = "components"),
                             log_evidence = .numbers(k, per = "components"),
                             log_C_sd = .optional(.number(lower = 0, open = TRUE)),
                             log_proposal = .optional(.numbers(k, per = "components")),
                             posterior = .optional(.pinning_problem)))
  problem %||% if (abs(sum(m$weight) - 1) > 1e-8) "$weight must sum to 1"
}
