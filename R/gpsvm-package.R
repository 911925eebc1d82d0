#' gpsvm: support vector machines as Gaussian processes
#'
#' Support vector regression and classification read as Gaussian process
#' models, with posterior error bars, an evidence for hyperparameters,
#' leave-one-out estimates at the cost of one fit, and smooth sparse fits.
#'
#' The papers the package implements:
#' * Gao, Gunn and Harris (2002), mean-field support vector regression:
#'   [mfsvr()].
#' * Gao, Gunn, Harris and Brown (2002), a probabilistic framework for support
#'   vector regression: `svr()`.
#' * Opper and Winther (2000), Gaussian processes and SVM, mean field and
#'   leave-one-out: [gpc()], [svc()], [loo_error()].
#' * ter Borg and Rothkrantz (2005), smooth Bayesian kernel machines:
#'   [srvm()], [rvm()], [roughness_penalty()].
#'
#' Every model takes its kernel from one vocabulary: [rbf_kernel()],
#' [poly_kernel()], [linear_kernel()], evaluated by [kernel_matrix()].
#'
#' The papers contain wrong formulas, ambiguous settings and iterations that
#' fail on some inputs. Every place where gpsvm departs from them is listed,
#' with the reason and the test that checks it, in [gpsvm_corrections].
#'
#' @keywords internal
#' @useDynLib gpsvm, .registration = TRUE
#' @importFrom Rcpp sourceCpp
#' @importFrom stats coef fitted logLik nobs predict residuals
"_PACKAGE"
