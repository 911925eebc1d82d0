# What svr() fits bring to the regression layer (the noise model: R/epsins-noise.R).

.latent_moments.gpsvm_svr <- function(object, z, deriv, wrt, want_var, bound = FALSE, ...) {
  .check_dots_empty(...)
  .check_flag(bound, "bound")
  list(mean = .svr_mean(object, z, deriv, wrt),
       var = if (want_var) .svr_latent_variance(object, z, bound, deriv, wrt))
}

# a*(z), or its deriv-th derivative in column wrt (no bias then).
.svr_mean <- function(object, z, deriv = 0L, wrt = 1L) {
  sv <- which(object$beta != 0)
  .kernel_expansion(object$kernel, z, object$x[sv, , drop = FALSE], object$beta[sv], deriv,
                    wrt) + if (deriv == 0L) object$b else 0
}

# Eq. (22) over the margin vectors, or (bound = TRUE) the full-K variance, of
# the function or of its deriv-th derivative.
.svr_latent_variance <- function(object, z, bound = FALSE, deriv = 0L, wrt = 1L) {
  keep <- if (bound) rep(TRUE, length(object$y)) else .svr_margin(object)
  if (!any(keep)) return(cpp_kernel_diagonal(object$kernel, z, deriv, wrt))
  xm <- object$x[keep, , drop = FALSE]
  L <- if (bound) cpp_margin_factor(object$kernel, xm) else .svr_margin_factor(object)
  cpp_margin_variance(object$kernel, z, xm, L, deriv, wrt)
}

# The lower Cholesky factor of the margin vectors' kernel matrix, kept in the
# fit so that predict() does not factorise it again.
.svr_margin_factor <- function(fit) {
  keep <- .svr_margin(fit)
  if (NROW(fit$margin_factor) == sum(keep) && NCOL(fit$margin_factor) == sum(keep)) {
    return(fit$margin_factor)
  }
  if (!any(keep)) return(matrix(0, 0, 0))
  cpp_margin_factor(fit$kernel, fit$x[keep, , drop = FALSE])
}

.log_evidence.gpsvm_svr <- function(object) .svr_log_evidence(object, "ep")

# confint(): the evidence's curvature at a C chosen by its maximum; a C chosen
# otherwise is not there, where the Laplace approximation is made: refused.
.evidence_curvature.gpsvm_svr <- function(object) {
  record <- object$optimization
  if (!is.null(record) && !identical(record$evidence, "ep")) {
    chosen <- if (is.null(record$evidence)) "the eq. (17) fixed point" else
      sprintf("the %s evidence", switch(record$evidence, eq16 = "eq. (16)", refined = "refined"))
    .stop(sprintf(paste("confint(): this svr() fit chose C by %s, not by the maximum of the",
                        "evidence logLik() gives, where the intervals are made; fit with",
                        "optimize = TRUE and svr_control(evidence = \"ep\") (the default)"),
                  chosen))
  }
  NextMethod()
}

# confint(): the evidence refitted at another C.
.refit_at.gpsvm_svr <- function(object, values) {
  fit <- .svr_fit(object$x, .to_model_units(object$y, object$response_scaling), values[["C"]],
                  object$epsilon, object$kernel, object$bias, object$control, warn = FALSE)
  list(value = .log_evidence(fit))
}

# the threshold (a C chosen by the evidence is counted from fit$optimization)
.response_df.gpsvm_svr <- function(object) c(b = object$bias)

.key_points.gpsvm_svr <- function(object) {
  list(index = which(object$partition != "X_0"), label = "support vector")
}

# The fit's offset in words: a free threshold b (bias = TRUE), an offset of
# a prior variance (in the kernel) or none.
.svr_bias_text <- function(object, digits) {
  if (isTRUE(object$bias)) return(sprintf("free threshold b = %s", format(object$b, digits = digits)))
  variance <- object$bias_variance %||% 0
  if (variance > 0) sprintf("offset of prior variance %s", format(variance, digits = digits)) else
    "no offset"
}

.model_lines.gpsvm_svr <- function(object, digits) {
  tab <- table(object$partition)
  n <- length(object$y)
  c(sprintf("n = %d, C = %s, epsilon = %s, %s%s", n, format(object$C, digits = digits),
            format(object$epsilon, digits = digits), .svr_bias_text(object, digits),
            .rvm_noise_words(object, "the variance of (C, epsilon)", "its sd")),
    sprintf("Support vectors: %d (%.1f%%): %d margin (X_M-: %d, X_M+: %d), %d at C",
            sum(tab[-1]), 100 * sum(tab[-1]) / n, tab[["X_M-"]] + tab[["X_M+"]],
            tab[["X_M-"]], tab[["X_M+"]], tab[["X_C"]]))
}

# print()'s account of the search for C: a grid's or the eq. (17) iteration's.
.search_summary.gpsvm_svr <- function(object) {
  record <- object$optimization
  if (is.null(record)) return(NULL)
  if (is.null(record$evidence)) {
    return(sprintf("C by the eq. (17) iteration: %s after %d steps",
                   if (record$convergence$converged) "settled" else "did not settle",
                   record$convergence$iterations))
  }
  if (is.null(record$interval)) return(NextMethod())
  at <- sub("^C:", "", record$at_bound)
  sprintf("C by evidence maximisation (%s) over [%.3g, %.3g]: %d evaluations%s",
          switch(record$evidence, ep = "EP", eq16 = "eq. 16", refined = "refined evidence"),
          record$interval[1], record$interval[2], record$evaluations,
          if (length(at) > 0L) sprintf(", at the %s end of the interval", at) else "")
}

.summary_details.gpsvm_svr <- function(object) {
  list(C = object$C, epsilon = object$epsilon, bias = object$bias,
       bias_variance = object$bias_variance, b = object$b,
       partition = table(object$partition), objective = object$objective,
       # (the paper's approximations are the constant noise model's)
       log_evidence = if (!identical(object$noise_model$type, "varying")) {
         c(eq16 = evidence(object, "eq16"), refined = evidence(object, "refined"))
       },
       C_path = if (identical(object$optimization$method, "eq. (17) fixed point")) {
         object$optimization$path$C
       })
}

.print_details.summary.gpsvm_svr <- function(x, digits) {
  d <- x$details
  cat(sprintf("\nC = %s, epsilon = %s, %s\n", format(d$C, digits = digits),
              format(d$epsilon, digits = digits), .svr_bias_text(d, digits)))
  # (only the eq. (17) iteration's path is short enough to print)
  if (!is.null(d$C_path)) {
    cat("C path: ", paste(format(d$C_path, digits = digits), collapse = ", "), "\n", sep = "")
  }
  cat("\nPartition of the training set (eqs. 8-11):\n")
  print(d$partition)
  cat(sprintf("\nDual objective: %s\n", format(d$objective, digits = digits + 3L)))
  if (!is.null(d$log_evidence)) {
    cat(sprintf("The paper's approximations of the log evidence: %s (eq. 16), %s (refined)\n",
                format(d$log_evidence[["eq16"]], digits = digits + 2L),
                format(d$log_evidence[["refined"]], digits = digits + 2L)))
  }
}

#' @rdname regression-methods
#' @export
coef.gpsvm_svr <- function(object, ...) {
  .check_dots_empty(...)
  .validate_fit(object)
  object$beta
}

.title.gpsvm_svr <- function(object) "Support vector regression (GP MAP estimate)"

.own_hyperparameters.gpsvm_svr <- function(object) c(C = object$C, epsilon = object$epsilon)

.glance_columns.gpsvm_svr <- function(x) data.frame(n.support = sum(x$beta != 0))

# tidy(): the threshold b (with a bias), then one row per training point,
# its coefficient and its group of eqs. (8)-(11).
.weight_frame.gpsvm_svr <- function(object, ...) {
  .check_dots_empty(...)
  role <- c(X_0 = "none", X_C = "bound", `X_M-` = "margin", `X_M+` = "margin")
  out <- .point_frame(object$x, object$beta, role[as.character(object$partition)])
  if (object$bias) rbind(.bias_row(object$b), out) else out
}

# The fields svr()'s computations read (validate-fit.R).
.validate_model.gpsvm_svr <- function(object) {
  record <- .optional(function(r) {
    .search_record_field(r) %||% switch(r$method,
      "eq. (17) fixed point" = NULL,
      "grid and golden section" = .nested(r, list(evidence = .string(.svr_evidence_methods),
                                         interval = function(v) {
                                           .numbers(2L, lower = 0, open = TRUE, per = "ends")(v) %||%
                                             if (v[1L] >= v[2L]) "must be increasing"
                                         })),
      .nested(r, list(evidence = .string("ep"))))
  })
  .validate_regression(object, function(n, p) {
    # (an invalid C fails its own check, before beta's)
    C <- if (is.null(.number(lower = 0, open = TRUE)(object$C))) object$C else Inf
    # (with varying noise each row's C is C over its noise scale)
    nm <- object$noise_model
    if (!is.null(nm)) {
      C <- if (!is.null(.rvm_noise_check(p)(nm))) Inf else
        tryCatch(C * max(1 / sqrt(.noise_factor(object, object$x))), error = function(e) Inf)
    }
    list(C = .number(lower = 0, open = TRUE), epsilon = .number(lower = 0),
         beta = .numbers(n, lower = -C * (1 + 1e-6), upper = C * (1 + 1e-6)), b = .number(),
         bias = .flag_field, partition = .factor_of(n, .svr_parts),
         alpha_plus = .numbers(n, lower = 0), alpha_minus = .numbers(n, lower = 0),
         objective = .number(), polished = .flag_field, control = .control_field("svr_control"),
         optimization = record, log_evidence = .optional(.number()),
         C_mixture = .optional(.C_mixture_problem),
         margin_factor = .optional(.lower_factor(sum(.svr_margin(object)))),
         noise_model = .optional(.rvm_noise_check(p)))
  })
}
