#' Support vector classification without a threshold (the kernel adatron's machine)
#'
#' Fits the support vector machine of Opper and Winther (2000, section 17.7),
#' whose threshold is a Gaussian prior in the kernel rather than an equality
#' constraint: for two classes one machine, for more one per class against
#' the rest. The dual problem is to maximise
#' \eqn{W(\alpha) = \sum_i \alpha_i - \frac12 \sum_{ij} \alpha_i \alpha_j y_i y_j
#' (k(x_i, x_j) + c + v \delta_{ij})} subject to \eqn{0 \le \alpha_i \le C}: the
#' linear slack penalty \eqn{C \sum_i \xi_i} enters through the box, the
#' quadratic slack penalty \eqn{\sum_i \xi_i^2 / (2v)} through the input-noise
#' variance `noise` = \eqn{v} on the kernel's diagonal (eq. 17.16), and a
#' threshold \eqn{b} with the penalty \eqn{b^2 / (2c)} through the constant
#' `bias` = \eqn{c} (the bias of an SVM as the mean of the Gaussian process,
#' section 17.3, given a Gaussian prior; `bias = 0` is the paper's machine
#' without bias). The decision function is
#' \eqn{f(x) = \sum_j (k(x, x_j) + c) y_j \alpha_j} (eq. 17.20 with the
#' constant in the kernel).
#'
#' The default solver (`svc_control(algorithm = "smo")`) is sequential
#' minimal optimisation on this dual, as in libsvm: each step moves one or
#' two \eqn{\alpha_i}, chosen by the second-order working-set rule of Fan,
#' Chen and Lin (2005), from one or two kernel columns (kept in a cache of
#' `cache_mb` megabytes), with shrinking; the Gram matrix is never formed.
#' It stops on a bound of the adatron's test below, so both solvers return
#' the same solution to the tolerance.
#'
#' `svc_control(algorithm = "adatron")` runs the kernel adatron of the
#' paper on the full Gram matrix (O(n^2) memory and work per step).
#' The adatron step \eqn{\alpha_i \leftarrow \mathrm{clip}_{[0, C]}(\alpha_i +
#' \eta (1 - y_i f_i))} updates all \eqn{\alpha_i} at once (projected gradient
#' ascent on \eqn{W}). Its learning rate adapts as the paper's Algorithm 17.1
#' does (times 1.1 after a step that raised \eqn{W}, halved and the step undone
#' otherwise), but never drops below one over the largest absolute row sum of
#' the kernel matrix, where every step is guaranteed to ascend. It stops when
#' \eqn{\max_i |\mathrm{clip}(\alpha_i + 1 - y_i f_i) - \alpha_i|^2} (the
#' paper's \eqn{\max_i |\delta\alpha_i|^2} at unit rate, zero exactly at the
#' Kuhn-Tucker point) falls below `tol` (the paper's `ftol`); for `C < 1` the
#' step is measured in units of `C`, the width of the box the \eqn{\alpha_i}
#' live in (otherwise \eqn{\alpha = 0} would pass whenever \eqn{C^2 <} `tol`).
#'
#' With `C = Inf` and `noise = 0` (the hard margin) the problem has a solution
#' only if the classes are separable in the kernel's feature space; otherwise
#' the solver runs to `max_iter` and warns.
#'
#' @section Defaults for data as it comes:
#' With `scale = TRUE` the numeric input columns are centred and scaled to
#' unit variance (constant columns are only centred, and a formula's factor
#' columns are left alone), as e1071's `svm()` and kernlab's `ksvm()` do; the scaling is stored
#' and applied to new data. `rbf_kernel()` without a width gets one from the
#' scaled inputs (see [kernels]). The defaults `C = Inf`, `noise = 0.3` and
#' `bias = 0.25` were chosen on held-out splits of four standard data sets
#' (mlbench's Pima Indians diabetes, Wisconsin breast cancer, Sonar and
#' Ionosphere), where they classify about as well as `e1071::svm()` with its
#' defaults: the quadratic slack penalty of the noisy process (the paper's
#' form of the soft margin) and a penalty \eqn{2 b^2} on the offset \eqn{b}.
#' The SVM is the most probable activation rather than the posterior mean, so
#' it needs a larger `noise` than [gpc()] to avoid fitting the training
#' labels too closely; and a constant in the kernel slows the adatron, so the
#' bias variance is kept smaller. Without a bias a one-sided data set (one
#' class compact, the other scattered, as in Ionosphere) loses several points
#' of accuracy. The paper's settings are `scale = FALSE` and `bias = 0`, with
#' its `noise` and kernel.
#'
#' @section Several classes:
#' With \eqn{K \ge 3} classes, `svc()` fits K binary machines, each class
#' against the rest, with the same kernel and settings, and predicts the
#' class whose machine gives the largest decision value (as kernlab's
#' `ksvm()` can; e1071 votes over pairs instead).
#'
#' @param x A numeric matrix or data frame of inputs (one row per case), or a
#'   formula `class ~ inputs` for the formula method.
#' @param y The classes: a factor (with two levels, the second is the
#'   "positive" class, coded +1; every level must occur), a logical or
#'   character vector, or numbers 0/1 or -1/+1.
#' @param kernel A kernel from [rbf_kernel()], [poly_kernel()] or
#'   [linear_kernel()]. `rbf_kernel()` without a width chooses one from the
#'   (scaled) training inputs.
#' @param C Upper bound on each \eqn{\alpha_i} (the linear slack penalty), a
#'   positive number or `Inf` (no linear slack).
#' @param noise Input-noise variance \eqn{v \ge 0} added to the kernel's
#'   diagonal (the quadratic slack penalty).
#' @param bias Prior variance \eqn{\ge 0} of a constant offset of the
#'   activation, added to the kernel (the threshold \eqn{b} of an SVM, with a
#'   Gaussian prior); 0 means no offset, as in the paper.
#' @param scale Centre and scale the numeric input columns before fitting
#'   (`TRUE` or `FALSE`).
#' @param control Solver settings from [svc_control()].
#' @param formula A formula `class ~ x1 + x2 + ...`. A variable it removes
#'   (`Id` in `Class ~ . - Id`) is ignored: `predict()` does not need it.
#' @param data,subset,na.action As in [stats::lm()]; with
#'   `na.action = na.exclude`, [fitted()][fitted.gpsvm_classifier] and
#'   `predict()` without new data give `NA` for the cases left out. As in
#'   [stats::model.frame()], levels of the class factor that no case of the
#'   data used has (after `subset` and `na.action`) are dropped, so a subset
#'   of two of three classes is a two-class fit; the default method refuses
#'   such levels instead. The predicted classes still carry every level of
#'   the data's factor (as e1071's and kernlab's do), so that they compare
#'   with it, e.g. on test data with a class that was missing from a random
#'   training sample; a dropped level is never predicted, has no column of
#'   probabilities, and `print()` names it.
#' @param ... For the formula method, arguments of the default method; for
#'   the default method, nothing (unknown arguments are an error).
#' @return An object of class `c("gpsvm_svc", "gpsvm_classifier")`, a list with
#'   `alpha` (the dual variables), `fitted.values` (the decision function at
#'   the training inputs), `objective` (the dual objective \eqn{W}), `x` (the
#'   inputs as fitted, i.e. scaled), `y` (coded -1/+1), `classes` (the
#'   training labels), `levels`, `kernel` (with the width used, and the bias as
#'   a constant), `bias_variance` (the `bias` given), `scaling`, `C`,
#'   `noise`, `control` (with `max_iter` resolved), `convergence`
#'   (`converged`, `iterations`, `change`, `tol`, `reason`), `fit_time`,
#'   `call` and `fields` (see [hyperparameters()], "Fitted objects"). With
#'   three or more classes, `models` holds one such binary fit
#'   per class (named by the level, coded +1 for that class and -1 for the
#'   rest) and `fitted.values` is a matrix with one column per class.
#'   Methods: [predict.gpsvm_svc()], [loo_error()], `print`, `summary`,
#'   [fitted()][fitted.gpsvm_classifier], `nobs`, `update`, `formula`,
#'   `model.matrix` (the inputs in the data's units) and
#'   [plot()][plot.gpsvm_classifier] for two inputs.
#' @references Opper, M. and Winther, O. (2000). Gaussian processes and SVM:
#'   mean field results and leave-one-out. In Smola, Bartlett, Schoelkopf and
#'   Schuurmans (eds.), *Advances in Large Margin Classifiers*, MIT Press,
#'   311-326. Section 17.4 and 17.7.
#'
#'   Fan, R.-E., Chen, P.-H. and Lin, C.-J. (2005). Working set selection
#'   using second order information for training support vector machines.
#'   *Journal of Machine Learning Research* 6, 1889-1918.
#'
#'   Friess, T.-T., Cristianini, N. and Campbell, C. (1998). The kernel-adatron
#'   algorithm: a fast and simple learning procedure for support vector
#'   machines. *Proceedings of ICML 15*.
#' @seealso [gpc()] for the Gaussian process classifier, [loo_error()] for
#'   leave-one-out errors; [gpsvm_corrections] (items 5 and 11) for where the
#'   adatron departs from the paper.
#' @examples
#' set.seed(1)
#' x <- matrix(rnorm(200), 100, 2)
#' y <- factor(ifelse(x[, 1] * x[, 2] > 0, "same", "different"))
#' fit <- svc(x, y)
#' fit
#' loo_error(fit)
#' d <- data.frame(x, y)
#' svc(y ~ X1 + X2, data = d, kernel = rbf_kernel(1), C = 10)
#' # three classes
#' table(predict(svc(Species ~ ., data = iris)), iris$Species)
#' @export
svc <- function(x, ...) UseMethod("svc")

#' @rdname svc
#' @export
svc.default <- function(x, y, kernel = rbf_kernel(), C = Inf, noise = 0.3, bias = 0.25,
                        scale = TRUE, control = svc_control(), ...) {
  .open_ledger()
  .check_dots_empty(...)
  C <- .check_number(C, "C", lower = 0, open_lower = TRUE, allow_inf = TRUE)
  noise <- .check_number(noise, "noise", lower = 0)
  control <- .resolve_control(.check_control(control, "svc_control"), NROW(x))
  what <- if (control$algorithm == "smo") "svc: SMO" else "svc: the kernel adatron"
  fit <- .classif_train(x, y, kernel, bias, scale, what = what,
                        call = .generic_call(match.call(), "svc"),
                        function(x, y, kernel) .svc_fit(x, y, kernel, C, noise, control))
  .with_plan(fit, "svc():")
}

#' @rdname svc
#' @export
svc.formula <- function(formula, data, subset, na.action, ...) {
  .fit_formula(match.call(), parent.frame(), "svc", svc.default, ...)
}

#' Settings for the support vector classifier's solver
#'
#' @param tol Convergence tolerance of the adatron's test (see [svc()]; the
#'   paper's `ftol`, with its default \eqn{10^{-5}}). SMO stops when the sum
#'   of the largest Kuhn-Tucker violations in each direction is below
#'   \eqn{\sqrt{tol}} (times `C` when `C < 1`), which implies it.
#' @param max_iter Maximum number of steps: SMO's pair steps (`NULL`: 100
#'   times the number of cases, at least \eqn{10^5}) or the adatron's
#'   parallel steps (`NULL`: 10000), resolved when the model is fitted
#'   (`fit$control` records the value used).
#' @param algorithm `"smo"` (default): sequential minimal optimisation with
#'   a kernel-column cache, shrinking and second-order working-set selection;
#'   `"adatron"`: the kernel adatron of the paper on the full Gram matrix.
#' @param cache_mb Size of SMO's kernel-column cache in megabytes.
#' @return A list of class `gpsvm_svc_control`.
#' @examples
#' svc_control(tol = 1e-10)
#' svc_control(algorithm = "adatron")
#' @export
svc_control <- function(tol = 1e-5, max_iter = NULL, algorithm = c("smo", "adatron"),
                        cache_mb = 500) {
  structure(list(tol = .check_number(tol, "tol", lower = 0, open_lower = TRUE),
                 max_iter = if (!is.null(max_iter)) .check_count(max_iter, "max_iter", lower = 1L),
                 algorithm = .match_choice(algorithm),
                 cache_mb = .check_number(cache_mb, "cache_mb", lower = 0, open_lower = TRUE)),
            class = c("gpsvm_svc_control", "gpsvm_control"))
}

# The control with max_iter's default for the algorithm and n cases filled
# in (what the fit stores).
.resolve_control.gpsvm_svc_control <- function(control, n, ...) {
  control$max_iter <- control$max_iter %||% if (control$algorithm == "smo") {
    as.integer(min(.Machine$integer.max, max(1e5, 100 * n)))
  } else 10000L
  control
}

# The solver on -1/+1 labels; `start` warm-starts alpha.
.svc_fit <- function(x, y, kernel, C, noise, control, start = NULL) {
  .count_fit()
  res <- cpp_alpha_fit("svc", list(kernel = kernel, noise = noise, C = C), x, y, unclass(control),
                       start)
  alpha <- stats::setNames(res$alpha, rownames(x))
  # the field K (y alpha) includes the noise on the diagonal; the decision
  # function at x_i uses the noise-free kernel
  f <- stats::setNames(res$field - noise * y * res$alpha, rownames(x))
  structure(list(alpha = alpha, fitted.values = f, objective = res$objective, x = x, y = y,
                 kernel = kernel, C = C, noise = noise, control = control,
                 convergence = res$convergence),
            class = c("gpsvm_svc", "gpsvm_classifier"))
}

# What the glue reads of a binary model's prior and box.
.svc_model <- function(model) model[c("kernel", "noise", "C")]

.classif_link.gpsvm_svc <- function(model, x) .kernel_expansion_link(model, x)
.setting_names.gpsvm_svc <- function(model) c("C", "noise", "control")

# The fields a binary model's computations read (validate-fit.R).
.binary_checks.gpsvm_svc <- function(model, n, p) {
  C <- if (is.null(.number(lower = 0, open = TRUE, inf = TRUE)(model$C))) model$C else Inf
  list(C = .number(lower = 0, open = TRUE, inf = TRUE), noise = .number(lower = 0),
       alpha = .numbers(n, lower = 0, upper = C * (1 + 1e-8)), objective = .number(),
       control = .control_field("svc_control"))
}
.own_hyperparameters.gpsvm_svc <- function(object) c(C = object$C, noise = object$noise)
.gives_probabilities.gpsvm_svc <- function(object) FALSE

# tidy() and glance() (tidiers.R): the support vectors at the bound C or
# inside it; no evidence; the count of support vectors over all models.
.point_roles.gpsvm_svc <- function(model) {
  a <- model$alpha
  ifelse(a <= 0, "none", ifelse(a >= model$C, "bound", "margin"))
}
.glance_evidence.gpsvm_svc <- function(x) NULL

# svc() has no evidence: say so where logLik(), AIC(), anova() and the
# confidence intervals of hyperparameters would read one.
#' @export
logLik.gpsvm_svc <- function(object, ...) {
  .stop(paste("svc() fits have no evidence (marginal likelihood); gpc() is the kernel",
              "classifier with one, and loo_error() estimates an svc() fit's error"))
}
.searched.gpsvm_svc <- function(x) NULL
.glance_columns.gpsvm_svc <- function(x) {
  data.frame(n.support = sum(vapply(.binary_models(x), function(m) sum(m$alpha > 0), integer(1))))
}

# plot() of two classes (classif-plot.R): the margins f(x) = -1 and +1
# (dashed), and the support vectors circled.
.plot_binary.gpsvm_svc <- function(object, surface) {
  grid <- length(surface$g1)
  graphics::contour(surface$g1, surface$g2, matrix(surface$f, grid, grid), levels = c(-1, 1),
                    drawlabels = FALSE, add = TRUE, lty = 2)
  sv <- object$alpha > 0
  graphics::points(surface$points[sv, 1], surface$points[sv, 2], cex = 1.8, col = "grey40")
}

# Leave-one-out (loo.R): eqs. (17.26)-(17.31), and refits warm-started from
# the full fit's alpha without the case left out.
.loo_approx.gpsvm_svc <- function(model) {
  cpp_alpha_loo_approx("svc", .svc_model(model), model$x, model$y, unclass(model$control),
                       model$alpha)
}
.loo_refits.gpsvm_svc <- function(model, which) {
  cpp_alpha_loo_refits("svc", .svc_model(model), model$x, model$y, unclass(model$control),
                       model$alpha, which)
}

#' Predict with a support vector classifier
#'
#' @param object A fit from [svc()].
#' @param type `"class"` for the predicted classes (a factor with the training
#'   levels, or for a formula fit every level of the data's factor: see
#'   `data` in [svc()]) or `"link"` for the decision function
#'   \eqn{f(x) = \sum_j k(x, x_j) y_j \alpha_j}: a vector for two classes
#'   (the second level where \eqn{f(x) \ge 0}), and with three or more
#'   classes a matrix with one column per class, the decision function of
#'   that class's machine against the rest (the class predicted is the
#'   largest). A support vector machine has no class probabilities (its
#'   "likelihood" is not normalised, section 17.4); use [gpc()] for those.
#' @inheritParams predict.gpsvm_gpc
#' @return A factor, vector or matrix with one element or row per row of
#'   `newdata`. With `newdata = NULL` and a formula fit with
#'   `na.action = na.exclude`, the cases left out of the fit get `NA`.
#' @examples
#' set.seed(1)
#' x <- matrix(rnorm(100), 50, 2)
#' y <- factor(ifelse(x[, 1] > 0, "b", "a"))
#' fit <- svc(x, y, linear_kernel(), C = 10)
#' predict(fit, rbind(c(-1, 0), c(1, 0), c(NA, 1)))
#' predict(fit, rbind(c(-1, 0), c(1, 0)), type = "link")
#' @export
predict.gpsvm_svc <- function(object, newdata = NULL, type = c("class", "link"),
                              na.action = stats::na.pass, new_levels = c("predict", "error"),
                              ...) {
  .check_dots_empty(...)
  if (identical(type, "prob")) {
    .stop(paste("'type = \"prob\"' is not available for svc(): a support vector machine",
                "gives no class probabilities; use gpc()"))
  }
  type <- .match_choice(type)
  new_levels <- .match_choice(new_levels)
  .classif_predict(object, newdata, function(object, x, f) {
    if (type == "link") f else .classif_class(object, f)
  }, na.action, new_levels)
}

# Support vectors by group: on the margin (0 < alpha < C) and at the bound.
.svc_groups <- function(object) {
  c(margin = sum(object$alpha > 0 & object$alpha < object$C),
    bound = sum(object$alpha >= object$C))
}

# The solver that fitted an svc() model, for print() and loo_error().
.svc_solver_label <- function(fit) {
  if (identical(fit$control$algorithm, "adatron")) "kernel adatron" else "SMO"
}

.title.gpsvm_svc <- function(object) {
  sprintf("Support vector classifier (%s)", .svc_solver_label(object))
}
.model_label.gpsvm_svc <- function(object) sprintf("svc (%s)", .svc_solver_label(object))

# The lines print() shows after the kernel and the classes: the settings
# and the support vectors of each model.
.model_lines.gpsvm_svc <- function(object, digits) {
  models <- .binary_models(object)
  c(sprintf("C = %s, noise variance = %s, bias variance = %s", format(object$C),
            format(object$noise), format(object$bias_variance)),
    vapply(seq_along(models), function(k) {
      g <- .svc_groups(models[[k]])
      sprintf("%s%d support vectors (%d on the margin, %d at C)",
              if (length(models) > 1L) sprintf("%s vs rest: ", names(models)[k]) else "",
              sum(g), g[["margin"]], g[["bound"]])
    }, character(1)))
}

#' Summarise a support vector classifier
#'
#' Adds to the printed fit the training confusion table (or, where it is
#' wider than the console, each class's cases and errors; the table is in
#' the summary's `training$table`), the dual objective and the approximate
#' leave-one-out error of eqs. (17.26)-(17.31) (one inverse of the margin
#' support vectors' kernel matrix).
#'
#' @param object A fit from [svc()].
#' @param x A `summary.gpsvm_svc` object.
#' @param ... Not used.
#' @return An object of class `summary.gpsvm_svc`.
#' @examples
#' set.seed(1)
#' x <- matrix(rnorm(100), 50, 2)
#' y <- factor(ifelse(x[, 1] + rnorm(50, sd = 0.3) > 0, "b", "a"))
#' summary(svc(x, y, rbf_kernel(1), noise = 0.5))
#' @export
summary.gpsvm_svc <- function(object, ...) {
  .check_dots_empty(...)
  .validate_fit(object)
  models <- .binary_models(object)
  groups <- if (.is_multiclass(object)) sapply(models, .svc_groups) else .svc_groups(object)
  structure(list(fit = object, groups = groups,
                 objective = vapply(models, `[[`, numeric(1), "objective"),
                 training = .classif_training(object), loo = loo_error(object, "approx")),
            class = "summary.gpsvm_svc")
}

#' @rdname summary.gpsvm_svc
#' @export
print.summary.gpsvm_svc <- function(x, ...) {
  print(x$fit)
  cat(sprintf("Dual objective W(alpha) = %s\n", paste(format(x$objective, digits = 6),
                                                     collapse = ", ")))
  .print_training(x$training)
  cat(sprintf("Approximate leave-one-out error (eqs. 17.26-17.31): %.4f (%d of %d)\n",
              x$loo$error, x$loo$count, length(x$loo$margins)))
  invisible(x)
}
