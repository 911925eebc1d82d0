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
  .gaussian_interval(mean, sqrt(var + object$sigma2), level)
}

.noise_sd.gpsvm_rvm <- function(object) sqrt(object$sigma2)

.log_evidence.gpsvm_rvm <- function(object) object$log_lik

# the kept weights' alphas, and the noise variance and lambda when learned
.response_df.gpsvm_rvm <- function(object) {
  smooth <- inherits(object, "gpsvm_srvm")
  c(alpha = length(object$alpha), sigma2 = !smooth || is.null(object$control$sigma2),
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
    sprintf("sigma^2: %s%s", format(object$sigma2, digits = digits),
            if (is.null(object$response_scaling)) "" else " (scaled data)"))
}

.summary_details.gpsvm_rvm <- function(object) {
  idx <- c(NA_integer_, object$relevance_vectors)
  inputs <- rbind(NA, .original_inputs(object)[object$relevance_vectors, , drop = FALSE])
  colnames(inputs) <- if (is.null(colnames(object$x))) {
    if (ncol(inputs) == 1L) "x" else paste0("x", seq_len(ncol(inputs)))
  } else colnames(object$x)
  weights <- data.frame(row = idx, inputs, estimate = unname(object$coefficients),
                        sd = sqrt(pmax(diag(object$Sigma), 0)), alpha = unname(object$alpha),
                        row.names = names(object$coefficients), check.names = FALSE)
  list(weights = weights, penalty = object$penalty, lambda = object$lambda,
       sigma2 = object$sigma2, scaled = !is.null(object$response_scaling))
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
