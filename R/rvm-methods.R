# What rvm() and srvm() fits (class "gpsvm_rvm") bring to the regression layer.

# The derivative of the expansion is the expansion in derivative kernels, h
# below; the variance is the augmented model's (.rvm_augmented_variance()).
.latent_moments.gpsvm_rvm <- function(object, z, deriv, wrt, want_var, ...) {
  .check_dots_empty(...)
  h <- .rvm_basis(object, z, deriv, wrt)
  list(mean = drop(h %*% object$coefficients),
       var = if (want_var) .rvm_augmented_variance(object, z, h, deriv, wrt))
}

# A pruned basis function carries no variance, so the sparse model is sure of
# itself far from the data.  Rasmussen and Quinonero-Candela (2005) add at
# each new input z one more basis function k(., z), its weight's prior
# N(0, v), v the response's variance.  With Phi the kept weights' training
# design, phi = k(x_i, z), W the rows' noise precisions and Sigma the
# weights' posterior covariance, its data precision is
#   s = phi' (W - W Phi Sigma Phi' W) phi,
# and with e = D^n k(z, z) - h' Sigma Phi' W phi the variance of D^n f(z) is
#   h' Sigma h + e^2 / (1 / v + s).
# The mean stays the sparse fit's.
.rvm_augmented_variance <- function(object, z, h, deriv, wrt) {
  Sigma <- object$Sigma
  kept <- pmax(rowSums((h %*% Sigma) * h), 0)
  v <- .augmentation_prior_variance(object)
  if (!(v > 0)) return(kept)
  w <- 1 / .rvm_row_noise(object)  # the noise precision of each training row
  design <- .rvm_design(object$x, object$kernel, object$relevance_vectors)
  own <- .kernel_at_centre(object$kernel, z, deriv, wrt)
  added <- numeric(nrow(z))
  # phi for a block of inputs at a time: rows x n numbers
  step <- max(1L, floor(2e6 / nrow(object$x)))
  for (start in seq(1L, nrow(z), by = step)) {
    rows <- start:min(nrow(z), start + step - 1L)
    phi <- kernel_matrix(object$kernel, z[rows, , drop = FALSE], object$x)
    projected <- phi %*% (design * w)
    s <- pmax(drop(phi^2 %*% w) - rowSums((projected %*% Sigma) * projected), 0)
    e <- own[rows] - rowSums((h[rows, , drop = FALSE] %*% Sigma) * projected)
    added[rows] <- e^2 / (1 / v + s)
  }
  kept + added
}

# The augmenting weight's prior variance: the response's (model units).
.augmentation_prior_variance <- function(object) {
  y <- .to_model_units(object$y, object$response_scaling)
  mean((y - mean(y))^2)
}

# D^n k(x, z) in x at x = z, for each row z.
.kernel_at_centre <- function(kernel, z, deriv, wrt) {
  if (deriv == 0L) return(cpp_kernel_diagonal(kernel, z, 0L, wrt))
  vapply(seq_len(nrow(z)), function(i) {
    zi <- z[i, , drop = FALSE]
    kernel_matrix(kernel, zi, zi, deriv = deriv, wrt = wrt)[1L, 1L]
  }, numeric(1))
}

# The rows h(z) of the (derivative) design at new inputs, kept weights only.
.rvm_basis <- function(object, z, deriv = 0L, wrt = 1L) {
  rv <- object$x[object$relevance_vectors, , drop = FALSE]
  k <- if (nrow(rv) > 0L) kernel_matrix(object$kernel, z, rv, deriv = deriv, wrt = wrt) else
    matrix(0, nrow(z), 0L)
  cbind(if (deriv == 0L) 1 else 0, k)
}

# A new target's noise, its variance s^2 integrated against its posterior at
# the fitted alphas (flat prior on t = log s^2): the Gamma posterior of 1 / s^2
# with the evidence's mode t* and curvature in t gives Student's t on
# nu = -2 L''(t*) degrees of freedom, scale sqrt(var + exp(t*)).  A response
# centred by the scaling has its mean integrated out too (the bias weight's
# precision at 0), which lowers nu by about one; one centred observation
# leaves nothing (variance Inf).
.rvm_target_noise <- function(object) {
  if (!.response_df(object)[["sigma2"]]) return(list(variance = object$noise_variance, df = Inf))
  alpha <- object$prior_precision
  # a flat prior on the bias: its precision far below any the data could pin
  if (!is.null(object$response_scaling)) alpha[[1L]] <- 1e-10 * min(alpha)
  evidence <- .rvm_evidence_function(object)
  slope <- function(t) {
    evidence(alpha, exp(t), object$lambda, object$kernel$sigma, rep(FALSE, length(alpha)),
             "noise_variance")$gradient
  }
  step <- 1e-4
  t <- log(object$noise_variance)
  for (iteration in 1:50) {
    curvature <- (slope(t + step) - slope(t - step)) / (2 * step)
    if (!isTRUE(curvature < -1e-6)) return(list(variance = Inf, df = NA_real_))
    move <- max(-1, min(1, -slope(t) / curvature))
    t <- t + move
    if (abs(move) < 1e-8) break
  }
  list(variance = exp(t), df = -2 * curvature)
}

.target_distribution.gpsvm_rvm <- function(object, mean, var, z = NULL) {
  noise <- .rvm_target_noise(object)
  if (is.infinite(noise$variance)) {
    model <- if (inherits(object, "gpsvm_srvm")) "srvm()" else "rvm()"
    n <- nrow(object$x)
    # one centred observation, or a fit through every observation (a line
    # through exactly linear data): the noise's posterior has no mode
    if (n <= 1L && !is.null(object$response_scaling)) {
      .stop(sprintf(paste("%s was fitted to %d observation(s) and the scaling took their mean: no",
                          "degrees of freedom are left to estimate the noise, so a new target's",
                          "interval is unbounded; use interval = \"confidence\", more",
                          "observations, or scale = FALSE"), model, n))
    }
    .stop(sprintf(paste("%s fits its %d observations exactly (its noise variance is at the floor,",
                        "min_sigma2): no degrees of freedom are left to estimate the noise, so a",
                        "new target's interval is unbounded; use interval = \"confidence\", or",
                        "mfsvr(), whose likelihood keeps a noise level (its C) on such data"),
                  model, n))
  }
  # (noise that varies: its level's t times the noise function at z)
  list(kind = "t", mean = as.matrix(mean), var = as.matrix(var), weight = 1,
       noise = noise$variance * .noise_factor(object, z), df = noise$df)
}

.has_target_interval.gpsvm_rvm <- function(object) is.finite(.rvm_target_noise(object)$variance)

.noise_sd.gpsvm_rvm <- function(object) sqrt(object$noise_variance)

# the targets' normal scores under the t predictive (NA without a noise estimate)
.target_scores.gpsvm_rvm <- function(object, y, mean, var, z = NULL) {
  noise <- .rvm_target_noise(object)
  if (is.infinite(noise$variance)) return(rep(NA_real_, length(y)))
  u <- (y - mean) / sqrt(var + noise$variance * .noise_factor(object, z))
  # through the upper tail by symmetry, so that far targets keep their precision
  ifelse(u < 0, stats::qnorm(stats::pt(u, noise$df)), -stats::qnorm(stats::pt(-u, noise$df)))
}

# Leave-one-out at the fitted hyperparameters: the mean is the linear smoother
# H y, so without row i it is y_i - r_i / (1 - h_i), its variance
# sigma^2 / (1 - h_i) (the latent function's sigma^2 h_i / (1 - h_i)).
.loo_moments.gpsvm_rvm <- function(object) {
  h <- .rvm_leverage(object)
  r <- .to_model_units(object$residuals, object$response_scaling, center = FALSE)
  y <- .to_model_units(object$y, object$response_scaling)
  list(mean = y - r / (1 - h), var = .rvm_row_noise(object) * h / (1 - h))
}

# The leverages phi_i' Sigma phi_i / sigma^2 (`design`, Phi, when the caller has it).
.rvm_leverage <- function(fit, design = NULL) {
  if (is.null(design)) design <- .rvm_design(fit$x, fit$kernel, fit$relevance_vectors)
  rowSums((design %*% fit$Sigma) * design) / .rvm_row_noise(fit)
}

.log_evidence.gpsvm_rvm <- function(object) object$log_evidence

# the alphas the data can tell apart, and the noise variance and lambda when
# learned (lambda only where the penalty acts: not past a polynomial's degree)
.response_df.gpsvm_rvm <- function(object) {
  smooth <- inherits(object, "gpsvm_srvm")
  penalised <- smooth && is.null(object$control$lambda) &&
    !(!is.null(object$kernel$degree) && all(object$penalty$orders > object$kernel$degree))
  # (a noise model weighed by the evidence counts as one more)
  c(alpha = .identifiable_alphas(object), sigma2 = !smooth || is.null(object$control$sigma2),
    lambda = penalised, noise = !is.null(object$noise_model))
}

# How many kept alphas the data can tell apart: the dimension of the span of
# the phi_j phi_j' (the alphas move the covariance only through
# sum_j phi_j phi_j' / alpha_j).  A polynomial kernel's functions span few
# dimensions, and counting each alpha would charge AIC() and BIC() for
# quantities never estimated; a Gaussian kernel's are independent.
.identifiable_alphas <- function(object) {
  k <- length(object$prior_precision)
  if (is.null(object$kernel$degree) || k < 2L) return(k)
  design <- .rvm_design(object$x, object$kernel, object$relevance_vectors)
  s <- svd(design, nu = 0L)
  r <- sum(s$d > s$d[1L] * .rank_tolerance)
  if (r == k) return(k)
  # the functions' coordinates in the span, and each one's outer product's entries
  coords <- s$d[seq_len(r)] * t(s$v[, seq_len(r), drop = FALSE])
  pairs <- which(lower.tri(diag(r), diag = TRUE), arr.ind = TRUE)
  outer_rows <- t(coords[pairs[, 1L], , drop = FALSE] * coords[pairs[, 2L], , drop = FALSE])
  d <- svd(outer_rows, nu = 0L, nv = 0L)$d
  sum(d > d[1L] * .rank_tolerance)
}
# (singular values below this fraction of the largest are rounding)
.rank_tolerance <- 1e-10

.key_points.gpsvm_rvm <- function(object) {
  list(index = object$relevance_vectors, label = "relevance vector")
}

.model_lines.gpsvm_rvm <- function(object, digits) {
  smooth <- inherits(object, "gpsvm_srvm")
  c(if (smooth) format(object$penalty),
    sprintf("Relevance vectors: %d of %d training points", length(object$relevance_vectors),
            nrow(object$x)),
    if (!is.null(object$basis)) {
      sprintf("  chosen among %d candidate centres (basis%s)", length(object$basis),
              if (anyDuplicated(object$x)) ", each distinct input once" else "")
    },
    if (smooth) sprintf("lambda: %s", format(object$lambda, digits = digits)),
    sprintf("sigma^2: %s%s%s", format(object$noise_variance, digits = digits),
            if (is.null(object$response_scaling)) "" else " (scaled data)",
            .rvm_noise_words(object)))
}

.summary_details.gpsvm_rvm <- function(object) {
  idx <- c(NA_integer_, object$relevance_vectors)
  inputs <- rbind(NA, .original_inputs(object)[object$relevance_vectors, , drop = FALSE])
  colnames(inputs) <- if (is.null(colnames(object$x))) {
    if (ncol(inputs) == 1L) "x" else paste0("x", seq_len(ncol(inputs)))
  } else colnames(object$x)
  weights <- data.frame(row = idx, inputs, estimate = unname(object$coefficients),
                        sd = sqrt(pmax(diag(object$Sigma), 0)),
                        alpha = unname(object$prior_precision),
                        row.names = names(object$coefficients), check.names = FALSE)
  list(weights = weights, penalty = object$penalty, lambda = object$lambda,
       sigma2 = object$noise_variance, scaled = !is.null(object$response_scaling))
}

.print_details.summary.gpsvm_rvm <- function(x, digits) {
  d <- x$details
  if (!is.null(d$penalty)) cat(format(d$penalty), sep = "\n")
  cat(sprintf("\nKept weights (bias and %d relevance vectors of %d points)%s:\n",
              nrow(d$weights) - 1L, x$n,
              if (d$scaled) "; estimate, sd and alpha for the scaled data" else ""))
  print(d$weights, digits = digits)
  if (!is.null(d$penalty)) cat(sprintf("\nlambda: %s", format(d$lambda, digits = digits)))
  cat(sprintf("\nsigma^2: %s%s\n", format(d$sigma2, digits = digits),
              if (d$scaled) " (scaled data)" else ""))
}

# confint(): the kept weights' Gaussian posterior intervals.
.weight_intervals.gpsvm_rvm <- function(object, level) {
  band <- .gaussian_interval(object$coefficients, sqrt(pmax(diag(object$Sigma), 0)), level)
  matrix(c(band$lower, band$upper), ncol = 2L,
         dimnames = list(names(object$coefficients), .confint_labels(level)))
}

#' @rdname regression-methods
#' @importFrom stats vcov
#' @export
vcov.gpsvm_rvm <- function(object, ...) {
  .check_dots_empty(...)
  .validate_fit(object)
  object$Sigma
}

.title.gpsvm_rvm <- function(object) "Relevance vector machine"
.title.gpsvm_srvm <- function(object) "Smooth relevance vector machine"

.own_hyperparameters.gpsvm_rvm <- function(object) c(noise_variance = object$noise_variance)
.own_hyperparameters.gpsvm_srvm <- function(object) {
  c(lambda = object$lambda, noise_variance = object$noise_variance)
}

.glance_columns.gpsvm_rvm <- function(x) {
  data.frame(n.relevance = length(x$relevance_vectors))
}

# tidy(): the bias, then one row per training point (0 weight, Inf alpha when pruned).
.weight_frame.gpsvm_rvm <- function(object, conf.int = FALSE, conf.level = 0.95) {
  n <- nrow(object$x)
  kept <- object$relevance_vectors
  se <- sqrt(pmax(diag(object$Sigma), 0))
  estimate <- replace(numeric(n), kept, object$coefficients[-1L])
  std_error <- replace(numeric(n), kept, se[-1L])
  precision <- replace(rep(Inf, n), kept, object$prior_precision[-1L])
  role <- ifelse(seq_len(n) %in% kept, "relevance", "pruned")
  out <- rbind(.bias_row(object$coefficients[[1L]]), .point_frame(object$x, estimate, role))
  out$std.error <- c(se[[1L]], std_error)
  out$alpha <- c(object$prior_precision[[1L]], precision)
  if (conf.int) {
    band <- .gaussian_interval(out$estimate, out$std.error, conf.level)
    out$conf.low <- band$lower
    out$conf.high <- band$upper
  }
  out
}

# The fields the relevance vector machines' computations read (validate-fit.R).
.validate_model.gpsvm_rvm <- function(object) {
  smooth <- inherits(object, "gpsvm_srvm")
  .validate_regression(object, function(n, p) {
    r <- length(object$relevance_vectors)
    list(relevance_vectors = .indices(upper = n),
         coefficients = .numbers(r + 1L, per = "kept weights"),
         prior_precision = .numbers(r + 1L, lower = 0, open = TRUE, per = "kept weights"),
         Sigma = .numeric_matrix(r + 1L, r + 1L), noise_variance = .number(lower = 0, open = TRUE),
         lambda = .number(lower = 0), log_evidence = .number(),
         basis = .optional(.indices(upper = n)),
         noise_model = .optional(.rvm_noise_check(p)),
         penalty = if (smooth) .made_by("roughness_penalty", "a penalty", "gpsvm_penalty") else
           .absent("must be NULL for rvm()"),
         lambda_init = if (smooth) .numbers(1L, lower = 0, open = TRUE, per = "") else
           .absent("must be NULL for rvm()"),
         control = .control_field(if (smooth) "srvm_control" else "rvm_control"))
  })
}

# confint(): the Gaussian evidence's Hessian in the log of every learned
# hyperparameter and the kept alphas (not one at srvm's floor), by central
# differences of its gradient; the alphas are then eliminated (the Schur
# complement), so that the others' intervals allow for them.
.evidence_curvature.gpsvm_rvm <- function(object) {
  smooth <- inherits(object, "gpsvm_srvm")
  record <- object$optimization
  learned <- c(noise_variance = !smooth || is.null(object$control$sigma2),
               lambda = smooth && is.null(object$control$lambda),
               sigma = "sigma" %in% names(record$estimate))
  if (!any(learned)) return(NULL)
  estimate <- .model_hyperparameters(object)[names(learned)[learned]]
  # (a width at the end of its range, or lambda at 0, is not at a maximum)
  at_bound <- c(intersect(sub(":(lower|upper)$", "", record$at_bound %||% character(0)),
                          names(estimate)),
                if (learned[["lambda"]] && object$lambda == 0) "lambda")
  vary <- setdiff(names(estimate), at_bound)
  alpha <- object$prior_precision
  y <- .to_model_units(object$y, object$response_scaling)
  floor <- if (smooth) object$control$min_alpha / mean(y^2) else 0
  free_alpha <- alpha > floor * (1 + 1e-6)
  a <- seq_len(sum(free_alpha))
  evidence <- .rvm_evidence_function(object)
  f <- function(t) {
    alphas <- replace(alpha, free_alpha, exp(t[a]))
    h <- as.list(replace(estimate, vary, exp(t[-a])))
    evidence(alphas, h$noise_variance %||% object$noise_variance, h$lambda %||% object$lambda,
             h$sigma %||% object$kernel$sigma, free_alpha, vary)
  }
  H <- .hessian(f, c(log(alpha[free_alpha]), log(estimate[vary])), gradient_step = 1e-3)
  r <- length(a) + seq_along(vary)
  reduced <- H[r, r, drop = FALSE]
  # an alpha without curvature (all but pruned, or held by the penalty) is held
  a <- a[diag(H)[a] < -.flat_curvature]
  if (length(a) > 0L) {
    eliminated <- tryCatch(solve(H[a, a, drop = FALSE], H[a, r, drop = FALSE]),
                           error = function(e) matrix(NA_real_, length(a), length(r)))
    reduced <- reduced - H[r, a, drop = FALSE] %*% eliminated
  }
  dimnames(reduced) <- list(vary, vary)
  list(estimate = estimate, at_bound = at_bound, hessian = reduced)
}

# (below this curvature in a log alpha, the alpha is flat)
.flat_curvature <- 1e-6

# The closed-form evidence (model units) in the kept alphas, sigma^2, lambda
# and the width: its value and gradient in the log of the free alphas and of
# the hyperparameters in `vary` (the width's by differences).
.rvm_evidence_function <- function(object) {
  # (varying noise: the constant model on rows over their noise sd, plus the Jacobian)
  root <- 1 / sqrt(.noise_factor(object, object$x))
  jacobian <- sum(log(root))
  y <- root * .to_model_units(object$y, object$response_scaling)
  rv <- object$relevance_vectors
  penalty <- object$penalty
  points <- if (!is.null(penalty)) .penalty_points(penalty, object$x, object$scaling)
  parts_at <- function(width) {
    kernel <- if (.has_width(object$kernel)) .with_width(object$kernel, width) else object$kernel
    design <- root * .rvm_design(object$x, kernel, rv)
    list(design = design,
         penalty = if (!is.null(penalty)) .rvm_penalty_gram(penalty, kernel, points, object$x[rv, , drop = FALSE]))
  }
  value_at <- function(alpha, sigma2, lambda, parts) {
    cpp_rvm_evidence_gradient(parts$design, y, alpha, lambda, sigma2, parts$penalty)
  }
  current <- parts_at(object$kernel$sigma)
  function(alpha, sigma2, lambda, width, free_alpha, vary) {
    parts <- if (identical(width, object$kernel$sigma)) current else parts_at(width)
    at <- value_at(alpha, sigma2, lambda, parts)
    gradient <- c(at$log_alpha[free_alpha], noise_variance = at$log_sigma2,
                  lambda = at$log_lambda,
                  sigma = if ("sigma" %in% vary) {
                    step <- 1e-5
                    (value_at(alpha, sigma2, lambda, parts_at(width * exp(step)))$value -
                       value_at(alpha, sigma2, lambda, parts_at(width * exp(-step)))$value) /
                      (2 * step)
                  } else 0)
    keep <- c(rep(TRUE, sum(free_alpha)), c("noise_variance", "lambda", "sigma") %in% vary)
    list(value = at$value + jacobian, gradient = unname(gradient[keep]))
  }
}

# The smooth RVM's penalty (L H)'(L H) on the kept weights' design at the
# penalty points (as the core forms it on all candidate columns).
.rvm_penalty_gram <- function(penalty, kernel, points, centres) {
  gram <- 0
  for (c in seq_len(ncol(points))) {
    rows <- 0
    for (k in seq_along(penalty$orders)) {
      order <- penalty$orders[[k]]
      block <- cbind(if (order == 0L) 1 else 0,
                     if (nrow(centres) > 0L) kernel_matrix(kernel, points, centres, deriv = order, wrt = c))
      rows <- rows + penalty$weights[[k]] * block
    }
    gram <- gram + crossprod(rows)
  }
  gram
}
