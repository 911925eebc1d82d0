# Fitted objects edited by hand: every field of every fitted class, and each
# element of the fields that are lists, shortened, lengthened, set to NA,
# given the wrong type, transposed (matrices) or removed, must give a clear
# error naming the edit, or exactly the unedited fit's answers, from every
# method that reads the object.  Never a different number.

set.seed(41)
n_val <- 24
x_val <- matrix(rnorm(2 * n_val), n_val, 2, dimnames = list(NULL, c("u", "v")))
y_val <- sin(2 * x_val[, 1]) + 0.5 * x_val[, 2] + rnorm(n_val, sd = 0.2)
class2 <- factor(ifelse(x_val[, 1] + x_val[, 2] + rnorm(n_val, sd = 0.4) > 0, "b", "a"))
class3 <- cut(x_val[, 1] + rnorm(n_val, sd = 0.3), c(-Inf, -0.4, 0.4, Inf),
              labels = c("l", "m", "h"))
z_val <- x_val[c(2, 7, 11), , drop = FALSE] + 0.1
frame_val <- data.frame(x_val, y = y_val, g = rep(c("p", "q"), length.out = n_val))
frame_val$y[5] <- NA

# The fits, one per class and representation the methods treat apart.  The
# calibration record of the prediction intervals is checked by the same
# code for every regression class: it is edited in svr, mfsvr, rvm and
# srvm, and the other representations keep the model's own intervals.
validation_fits <- function() {
  quiet <- function(expr) suppressWarnings(expr)
  list(
    svr = svr(x_val, y_val),
    svr_searched = quiet(svr(x_val, y_val, bias = TRUE, optimize = TRUE, calibration_folds = 0)),
    svr_formula = svr(y ~ u + v + g, frame_val, na.action = na.exclude, calibration_folds = 0),
    mfsvr = mfsvr(x_val, y_val),
    mfsvr_low_rank = mfsvr(x_val, y_val, C = 3, kernel = rbf_kernel(3),
                           control = mfsvr_control(rank_tol = 1e-8), calibration_folds = 0),
    mfsvr_inducing = mfsvr(x_val, y_val, C = 3, inducing = 8, calibration_folds = 0),
    rvm = quiet(rvm(x_val, y_val)),
    srvm = quiet(srvm(x_val, y_val)),
    gpc_tap = gpc(x_val, class2),
    gpc_naive = gpc(x_val, class2, method = "naive"),
    gpc_inducing = gpc(x_val, class2, rbf_kernel(1), noise = 0.3, inducing = 8),
    gpc_three = gpc(x_val, class3),
    svc = svc(x_val, class2),
    svc_three = svc(x_val, class3)
  )
}

# Everything the methods compute from a fit, each as its value or its
# error (print()'s call line left out: an edited call is a record of
# another command, not a number).
fit_answers <- function(fit) {
  attempt <- function(expr) {
    tryCatch(suppressWarnings(expr), error = function(e) structure(conditionMessage(e),
                                                                   class = "edit_error"))
  }
  # the numbers print() shows (its words may change: an edited note on
  # where a width came from is not a different number)
  shown <- function(expr) {
    out <- utils::capture.output(expr)
    out <- out[!startsWith(out, "Call:")]
    unlist(regmatches(out, gregexpr("-?[0-9]+(\\.[0-9]+)?(e[-+]?[0-9]+)?", out)))
  }
  regression <- inherits(fit, "gpsvm_regression")
  newdata <- if (!is.null(fit$terms)) frame_val[c(2, 7, 11), ] else z_val
  common <- list(
    fitted = attempt(fitted(fit)), nobs = attempt(nobs(fit)),
    hyper = attempt(hyperparameters(fit)), print = attempt(shown(print(fit))),
    summary = attempt(shown(print(summary(fit)))), tidy = attempt(tidy(fit)),
    glance = attempt(glance(fit)), augment = attempt(augment(fit)),
    model_matrix = attempt(model.matrix(fit)),
    plot = attempt({
      grDevices::pdf(NULL)
      on.exit(grDevices::dev.off())
      plot(fit)
      TRUE
    }))
  if (regression) {
    return(c(common, list(
      predict = attempt(predict(fit, newdata, se.fit = TRUE, interval = "prediction")),
      confidence = attempt(predict(fit, newdata, interval = "confidence")),
      slope = attempt(predict(fit, newdata, deriv = 1, se.fit = TRUE)),
      training = attempt(predict(fit)), residuals = attempt(residuals(fit)),
      coef = attempt(coef(fit)), sigma = attempt(sigma(fit)), logLik = attempt(logLik(fit)),
      evidence = attempt(evidence(fit)),
      vcov = if (inherits(fit, "gpsvm_rvm")) attempt(vcov(fit)))))
  }
  c(common, list(
    class = attempt(predict(fit, newdata)), link = attempt(predict(fit, newdata, type = "link")),
    prob = if (inherits(fit, "gpsvm_gpc")) attempt(predict(fit, newdata, type = "prob")),
    se = if (inherits(fit, "gpsvm_gpc_tap")) {
      attempt(predict(fit, newdata, type = "link", se.fit = TRUE))
    },
    loo = attempt(loo_error(fit)$margins),
    loo_exact = if (is.null(fit$models) && is.null(fit$inducing)) {
      attempt(loo_error(fit, "exact")$margins)
    },
    # (only two-class TAP fits have an evidence)
    logLik = if (inherits(fit, "gpsvm_gpc_tap") && is.null(fit$models)) attempt(logLik(fit))))
}

# The edits of one value, by name: functions of the value.  A field that is
# NULL is given a value (an element of a list that is NULL, a control's
# default, say, may be set to any valid value: that is another model, not
# an edit).
value_edits <- function(v, top = TRUE) {
  if (is.null(v)) return(if (top) list(given = function(v) 1) else list())
  keep_class <- function(out) {
    if (is.list(v) && !is.data.frame(v)) class(out) <- class(v)
    out
  }
  edits <- list(removed = function(v) NULL)
  if (is.language(v) || is.function(v) || inherits(v, "formula")) {
    return(c(edits, list(wrong_type = function(v) 1)))
  }
  if (is.data.frame(v) || is.matrix(v)) {
    if (nrow(v) > 0L) {
      edits$shortened <- function(v) v[-nrow(v), , drop = FALSE]
      edits$lengthened <- function(v) v[c(seq_len(nrow(v)), 1L), , drop = FALSE]
    }
    if (is.matrix(v)) {
      edits$transposed <- function(v) t(v)
      edits$missing_value <- function(v) replace(v, 1L, NA)
      edits$wrong_type <- function(v) array(as.character(v), dim(v))
    }
    return(Filter(Negate(is.null), edits))
  }
  if (length(v) >= 1L) {
    edits$shortened <- function(v) keep_class(unclass(v)[-length(v)])
  }
  edits$lengthened <- function(v) keep_class(c(unclass(v), unclass(v)[1L]))
  edits$missing_value <- function(v) {
    if (is.list(v)) keep_class(replace(unclass(v), 1L, list(NA))) else replace(v, 1L, NA)
  }
  edits$wrong_type <- function(v) {
    if (is.list(v) && !is.data.frame(v)) "a list no more" else
      if (is.character(v) || is.factor(v)) seq_along(v) else as.character(v)
  }
  edits
}

# Every edit of every field of `fit`, and of every element of a field that
# is a list (kernel, scaling, control, ...), as (label, edited fit) pairs.
field_edits <- function(fit, fields = names(fit)) {
  out <- list()
  for (field in fields) {
    value <- fit[[field]]
    for (edit in names(value_edits(value))) {
      edited <- fit
      edited[field] <- list(value_edits(value)[[edit]](value))
      if (is.null(edited[[field]])) edited[[field]] <- NULL
      out[[sprintf("%s: %s", field, edit)]] <- edited
    }
    nested <- is.list(value) && !is.data.frame(value) && !is.null(names(value)) &&
      !field %in% c("models", "variables", "xlevels")
    if (!nested) next
    for (element in names(value)) {
      inner <- value[[element]]
      for (edit in names(value_edits(inner, top = FALSE))) {
        edited <- fit
        changed <- value_edits(inner, top = FALSE)[[edit]](inner)
        if (is.null(changed)) edited[[field]][[element]] <- NULL else
          edited[[field]][element] <- list(changed)
        out[[sprintf("%s$%s: %s", field, element, edit)]] <- edited
      }
    }
  }
  out
}

# What is wrong with an edit's answers: each must be the unedited one, or an
# error that says the object was edited; none when all are.
edit_problems <- function(label, answers, reference) {
  problems <- vapply(names(reference), function(what) {
    got <- answers[[what]]
    ok <- if (inherits(got, "edit_error")) {
      grepl("was the object edited\\?|not a gpsvm fit", got)
    } else identical(got, reference[[what]])
    said <- if (inherits(got, "edit_error")) got else "a different answer"
    if (ok) NA_character_ else sprintf("%s / %s: %s", label, what, said)
  }, character(1))
  problems[!is.na(problems)]
}

test_that("every field of every fitted class, edited, is a clear error or the same answer", {
  skip_on_cran()
  for (name in names(fits <- validation_fits())) {
    fit <- fits[[name]]
    reference <- fit_answers(fit)
    expect_false(any(vapply(reference, inherits, logical(1), "edit_error")), info = name)
    edits <- field_edits(fit)
    if (!is.null(fit$models)) {
      # the one-vs-rest models' own fields, through the first of them
      first <- names(fit$models)[1L]
      for (label in names(inner <- field_edits(fit$models[[first]]))) {
        edited <- fit
        edited$models[[first]] <- inner[[label]]
        edits[[sprintf("models$%s$%s", first, label)]] <- edited
      }
    }
    expect_gt(length(edits), 50L)
    # (at the small size every third edit: the full size runs them all)
    edits <- edits[seq(1L, length(edits), by = test_size(1L, 3L))]
    problems <- unlist(lapply(names(edits), function(label) {
      edit_problems(label, fit_answers(edits[[label]]), reference)
    }))
    expect_identical(unname(problems), character(0), info = name)
  }
})

test_that("the edits found in the wild give an error naming the field", {
  fits <- validation_fits()
  bad <- fits$svr
  bad$beta <- bad$beta[-1]
  expect_error(predict(bad, z_val),
               "fit\\$beta has 23 elements; the fit has 24 training rows: was the object edited\\?")
  bad <- fits$rvm
  bad$relevance_vectors[1] <- 0L
  expect_error(predict(bad, z_val), "fit\\$relevance_vectors has values outside \\[1, 24\\]")
  for (fit in list(fits$gpc_tap, fits$svc)) {
    bad <- fit
    bad$alpha <- bad$alpha[-1]
    expect_error(predict(bad, z_val, type = "link"), paste0(
      "fit\\$alpha has 23 elements; the fit has 24 training rows: was the object edited\\?"))
    bad <- fit
    bad$y <- bad$y[-1]
    expect_error(predict(bad, z_val), "fit\\$y has 23 elements")
  }
  bad <- fits$gpc_tap
  bad$kappa <- 2
  expect_error(predict(bad, z_val, type = "prob"), "fit\\$kappa has values outside \\[0, 0.5\\]")
  bad$kappa <- 0.5
  expect_error(predict(bad, z_val, type = "prob"), "fit\\$kappa must lie in \\[0, 0.5\\)")
  bad <- fits$gpc_three
  bad$models$m$kappa <- 2
  expect_error(predict(bad, z_val, type = "prob"), "fit\\$models\\$m\\$kappa has values outside")
  bad <- fits$mfsvr
  bad$scaling$scale <- bad$scaling$scale[1]
  expect_error(predict(bad, z_val),
               "fit\\$scaling\\$scale has 1 elements; the fit has 2 input columns")
  bad <- fits$mfsvr
  bad$chol <- t(bad$chol)
  expect_error(predict(bad, z_val, se.fit = TRUE),
               "fit\\$chol is not a lower triangular factor with a positive diagonal")
  bad <- fits$mfsvr
  bad$log_evidence <- NULL
  expect_error(logLik(bad), "fit\\$log_evidence is missing: was the object edited\\?")
  bad <- fits$svr
  bad$C <- -1
  expect_error(sigma(bad), "fit\\$C has values outside \\(0, Inf\\]")
  # an object that is not a gpsvm fit at all
  expect_error(gpsvm:::.validate_fit(list(x = 1)), "not a gpsvm fit")
})
