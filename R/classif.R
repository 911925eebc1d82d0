# What svc() and gpc() share: labels, the latent function at new points,
# class output, fitted(), nobs() and the 2-D plot.  Both fits carry class
# "gpsvm_classifier" after their own class and store x, y (as -1/+1), levels,
# kernel, noise and alpha.

# Two-class labels as -1/+1 and the level names they stand for.  A factor's
# first level is -1 and its second +1 (as glm() takes the second level as
# "success"); numbers must be -1 or +1; logicals and characters go through
# factor().  Data from one class only are allowed: the models are defined
# for them, and a leave-one-out or cross-validation subset may be one.
.classif_labels <- function(y, n, arg = "y") {
  if (is.data.frame(y) && ncol(y) == 1L) y <- y[[1L]]
  if (!is.null(dim(y)) && NCOL(y) != 1L) .stop(sprintf("'%s' must be a vector of labels", arg))
  if (length(y) != n) {
    .stop(sprintf("'%s' has %d labels but 'x' has %d rows", arg, length(y), n))
  }
  if (anyNA(y)) .stop(sprintf("'%s' contains missing values", arg))
  if (is.logical(y) || is.character(y)) y <- factor(y)
  if (is.factor(y)) {
    # the levels define the classes, so a factor may leave one class unused
    # (a one-point fit, or a subset of the data)
    lev <- levels(y)
    if (length(lev) != 2L) {
      .stop(sprintf("'%s' must have exactly two classes (levels); it has %d (%s)", arg,
                    length(lev), paste(lev, collapse = ", ")))
    }
    return(list(y = ifelse(y == lev[2L], 1, -1), levels = lev))
  }
  if (!is.numeric(y)) .stop(sprintf("'%s' must be a two-level factor or -1/+1 numbers", arg))
  if (!all(y %in% c(-1, 1))) {
    .stop(sprintf("numeric '%s' must hold only -1 and +1; use a factor for other codes", arg))
  }
  list(y = as.double(y), levels = c("-1", "1"))
}

# The latent activation f(x) = sum_j k(x, x_j) y_j alpha_j (eqs. 17.20, 17.35)
# at new inputs, with the noise-free kernel.
.classif_link <- function(object, x) {
  drop(kernel_matrix(object$kernel, x, object$x) %*% (object$y * object$alpha))
}

# Labels from activations: the second level where f > 0 (ties go there too).
.classif_class <- function(object, f, names = NULL) {
  stats::setNames(factor(object$levels[ifelse(f >= 0, 2L, 1L)], levels = object$levels), names)
}

# kappa + (1 - 2 kappa) Phi(f / s): probability of the second level under the
# flip-noise probit likelihood, with s the spread of the local field.
.flip_probit <- function(f, s, kappa) {
  kappa + (1 - 2 * kappa) * stats::pnorm(f / s)
}

#' @export
nobs.gpsvm_classifier <- function(object, ...) length(object$y)

#' Fitted values of a kernel classifier
#'
#' The predictions at the training inputs: `fitted(object, type)` is
#' `predict(object, type = type)`.
#'
#' @param object A fit from [svc()] or [gpc()].
#' @param type `"class"`, `"link"` or (for [gpc()] fits) `"prob"`; see
#'   [predict.gpsvm_gpc()].
#' @param ... Not used; unknown arguments are an error.
#' @return A factor of classes or a numeric vector, named by the training rows.
#' @examples
#' set.seed(1)
#' x <- matrix(rnorm(40), 20, 2)
#' y <- factor(ifelse(x[, 1] + x[, 2] > 0, "b", "a"))
#' fit <- gpc(x, y, rbf_kernel(1), noise = 0.5)
#' table(fitted(fit), y)
#' @export
fitted.gpsvm_classifier <- function(object, type = c("class", "link", "prob"), ...) {
  .check_dots_empty(...)
  type <- .match_choice(type)
  stats::predict(object, type = type)
}

#' Plot a kernel classifier on two-dimensional inputs
#'
#' Draws the training points (coloured and shaped by class) and the decision
#' boundary f(x) = 0 on a grid. Support vector fits also show the margins
#' f(x) = -1 and +1 (dashed) and circle the support vectors; Gaussian process
#' fits also show the contours where the probability of the second class is
#' 0.1 and 0.9 (dashed).
#'
#' @param x A fit from [svc()] or [gpc()] on inputs with two columns.
#' @param grid Number of grid points along each axis.
#' @param col Two colours, for the first and second class.
#' @param ... Further graphical parameters passed to [graphics::plot()].
#' @return `x`, invisibly.
#' @examples
#' set.seed(2)
#' x <- matrix(rnorm(80), 40, 2)
#' y <- factor(ifelse(x[, 1]^2 + x[, 2]^2 > 1.4, "out", "in"))
#' plot(svc(x, y, rbf_kernel(1), noise = 0.3))
#' @export
plot.gpsvm_classifier <- function(x, grid = 80, col = c("#1b9e77", "#d95f02"), ...) {
  object <- x
  if (ncol(object$x) != 2L) {
    .stop(sprintf("plot() needs a fit on two input columns; this one has %d", ncol(object$x)))
  }
  grid <- .check_count(grid, "grid", lower = 2L)
  if (length(col) != 2L) .stop("'col' must give two colours")
  xs <- object$x
  labs <- colnames(xs)
  if (is.null(labs)) labs <- c("x1", "x2")
  pad <- function(v) range(v) + c(-0.05, 0.05) * diff(range(v))
  g1 <- seq(pad(xs[, 1])[1], pad(xs[, 1])[2], length.out = grid)
  g2 <- seq(pad(xs[, 2])[1], pad(xs[, 2])[2], length.out = grid)
  pts <- as.matrix(expand.grid(g1, g2))
  f <- matrix(.classif_link(object, pts), grid, grid)
  cls <- ifelse(object$y > 0, 2L, 1L)
  graphics::plot(xs[, 1], xs[, 2], col = col[cls], pch = c(1, 3)[cls], xlab = labs[1],
                 ylab = labs[2], ...)
  graphics::contour(g1, g2, f, levels = 0, drawlabels = FALSE, add = TRUE, lwd = 2)
  if (inherits(object, "gpsvm_svc")) {
    graphics::contour(g1, g2, f, levels = c(-1, 1), drawlabels = FALSE, add = TRUE, lty = 2)
    sv <- object$alpha > 0
    graphics::points(xs[sv, 1], xs[sv, 2], cex = 1.8, col = "grey40")
  } else {
    p <- matrix(.gpc_prob(object, pts), grid, grid)
    graphics::contour(g1, g2, p, levels = c(0.1, 0.9), add = TRUE, lty = 2)
  }
  graphics::legend("topright", legend = object$levels, col = col, pch = c(1, 3), bty = "n")
  invisible(x)
}

# Training confusion table and error, for summaries.
.classif_training <- function(object) {
  pred <- stats::predict(object, type = "class")
  truth <- factor(object$levels[ifelse(object$y > 0, 2L, 1L)], levels = object$levels)
  list(table = table(predicted = pred, observed = truth), error = mean(pred != truth))
}

.format_kernel_line <- function(kernel) paste(trimws(format(kernel)), collapse = "; ")
