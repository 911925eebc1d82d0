# The contract of R/generics.R: every fitted class answers every internal
# generic of its layer, and every binary model of a classifier those of a
# binary model, by a method for one of its classes or a default.  A model
# added without one of them fails here, not in the user's hands.

contract <- get(".model_contract", envir = asNamespace("gpsvm"))

answers <- function(generic, classes) {
  any(vapply(c(classes, "default"), function(cl) {
    !is.null(utils::getS3method(generic, cl, optional = TRUE, envir = asNamespace("gpsvm")))
  }, logical(1)))
}

missing_methods <- function(object, generics) {
  generics[!vapply(generics, answers, logical(1), classes = class(object))]
}

test_that("every generic of the contract is a generic of the package", {
  ns <- asNamespace("gpsvm")
  for (generic in unlist(contract)) {
    expect_true(exists(generic, envir = ns, inherits = FALSE), info = generic)
    expect_match(paste(deparse(body(get(generic, envir = ns))), collapse = " "), "UseMethod",
                 info = generic)
  }
})

test_that("every fitted class implements every internal generic of its layer", {
  set.seed(1)
  x <- matrix(rnorm(60), 30, 2)
  y <- sin(x[, 1]) + rnorm(30, sd = 0.1)
  two <- factor(ifelse(x[, 1] + x[, 2] > 0, "a", "b"))
  three <- cut(x[, 1], c(-Inf, -0.5, 0.5, Inf), labels = c("l", "m", "h"))
  regression <- list(
    mfsvr = mfsvr(x, y, C = 5, calibration_folds = FALSE),
    svr = svr(x, y, C = 1, calibration_folds = FALSE),
    rvm = rvm(x, y, calibration_folds = FALSE),
    srvm = srvm(x, y, calibration_folds = FALSE))
  classifiers <- list(
    gpc_tap = gpc(x, two, noise = 0.1), gpc_naive = gpc(x, two, method = "naive", noise = 0.1),
    gpc_three = gpc(x, three, noise = 0.1), svc = svc(x, two), svc_three = svc(x, three))
  for (name in names(regression)) {
    fit <- regression[[name]]
    expect_s3_class(fit, "gpsvm_regression")
    expect_identical(missing_methods(fit, c(contract$fit, contract$regression)), character(0),
                     info = name)
    expect_identical(missing_methods(summary(fit), contract$summary), character(0), info = name)
  }
  for (name in names(classifiers)) {
    fit <- classifiers[[name]]
    expect_s3_class(fit, "gpsvm_classifier")
    expect_identical(missing_methods(fit, c(contract$fit, contract$classifier)), character(0),
                     info = name)
    models <- if (is.null(fit$models)) list(fit) else fit$models
    for (model in models) {
      expect_identical(missing_methods(model, contract$binary), character(0), info = name)
    }
  }
})

test_that("the check sees a missing method, and takes a layer's or a default", {
  fit <- structure(list(), class = c("gpsvm_newmodel", "gpsvm_regression"))
  # a model of the regression layer without its own latent moments
  expect_identical(missing_methods(fit, ".latent_moments"), ".latent_moments")
  # the layer's method serves (every regression fit's key points are NULL
  # unless the model says otherwise), and so does a default
  expect_identical(missing_methods(fit, c(".key_points", ".validate_model")), character(0))
})
