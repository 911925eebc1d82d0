# What rvm() and srvm() fits (class "gpsvm_rvm"; srvm fits are
# c("gpsvm_srvm", "gpsvm_rvm")) bring to the regression layer
# (R/regression.R): the Gaussian posterior of the kernel expansion at new
# inputs, Gaussian noise, the marginal likelihood, and what print() and
# summary() show.

# The derivative of the expansion is the expansion in derivative kernels:
# with h = (1[n = 0], D^n k(z, x_j))_j over the kept weights, the posterior
# of D^n f(z) is N(h' mu, h' Sigma h) at the fitted hyperparameters.
.latent_moments.gpsvm_rvm <- function(object, z, deriv, wrt, want_var, ...) {
  .check_dots_empty(...)
  h <- .rvm_basis(object, z, deriv, wrt)
  list(mean = drop(h %*% object$coefficients),
       var = if (want_var) pmax(rowSums((h %*% object$Sigma) * h), 0))
}

# The rows h(z) of the (derivative) design at new inputs, kept weights only.
.rvm_basis <- function(object, z, deriv = 0L, wrt = 1L) {
  rv <- object$x[object$relevance_vectors, , drop = FALSE]
  k <- if (nrow(rv) > 0L) kernel_matrix(object$kernel, z, rv, deriv = deriv, wrt = wrt) else
    matrix(0, nrow(z), 0L)
  cbind(if (deriv == 0L) 1 else 0, k)
}

.target_interval.gpsvm_rvm <- function(object, mean, var, level) {
  .gaussian_interval(mean, sqrt(var + object$noise_variance), level)
}

.noise_sd.gpsvm_rvm <- function(object) sqrt(object$noise_variance)

.log_evidence.gpsvm_rvm <- function(object) object$log_evidence

# the kept weights' alphas, and the noise variance and lambda when learned
.response_df.gpsvm_rvm <- function(object) {
  smooth <- inherits(object, "gpsvm_srvm")
  c(alpha = length(object$prior_precision), sigma2 = !smooth || is.null(object$control$sigma2),
    lambda = smooth && is.null(object$control$lambda))
}

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
    sprintf("sigma^2: %s%s", format(object$noise_variance, digits = digits),
            if (is.null(object$response_scaling)) "" else " (scaled data)"))
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

# tidy(): the bias, then one row per training point: its posterior mean
# weight (0 when pruned), posterior sd and prior precision (Inf when pruned).
.weight_frame.gpsvm_rvm <- function(object, conf.int = FALSE, conf.level = 0.95) {
  n <- nrow(object$x)
  kept <- object$relevance_vectors
  # the first weight is the bias, then one per relevance vector
  estimate <- numeric(n)
  estimate[kept] <- object$coefficients[-1L]
  se <- sqrt(pmax(diag(object$Sigma), 0))
  std_error <- numeric(n)
  std_error[kept] <- se[-1L]
  precision <- rep(Inf, n)
  precision[kept] <- object$prior_precision[-1L]
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

# The fields the relevance vector machines' computations read
# (validate-fit.R).
.validate_fit.gpsvm_rvm <- function(object) {
  smooth <- inherits(object, "gpsvm_srvm")
  .validate_regression(object, function(n, p) {
    r <- length(object$relevance_vectors)
    list(relevance_vectors = .indices(upper = n),
         coefficients = .numbers(r + 1L, per = "kept weights"),
         prior_precision = .numbers(r + 1L, lower = 0, open = TRUE, per = "kept weights"),
         Sigma = .numeric_matrix(r + 1L, r + 1L), noise_variance = .number(lower = 0, open = TRUE),
         lambda = .number(lower = 0), log_evidence = .number(),
         basis = .optional(.indices(upper = n)),
         penalty = if (smooth) .made_by("roughness_penalty", "a penalty", "gpsvm_penalty") else
           .absent("must be NULL for rvm()"),
         lambda_init = if (smooth) .numbers(1L, lower = 0, open = TRUE, per = "") else
           .absent("must be NULL for rvm()"),
         control = .control_field(if (smooth) "srvm_control" else "rvm_control"))
  })
}
