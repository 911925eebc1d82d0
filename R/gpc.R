#' Gaussian process classification by mean-field theory
#'
#' Fits the Gaussian process classifier of Opper and Winther (2000). The
#' latent activation has a Gaussian process prior with covariance
#' \eqn{k(x, x') + c + v \delta_{xx'}} (the "noisy process" of eq. 17.16,
#' `noise` = \eqn{v}, with a constant offset of prior variance `bias` =
#' \eqn{c}: the process mean that section 17.3 identifies with the SVM's
#' threshold, given a Gaussian prior), and each label is flipped with
#' probability \eqn{\kappa} (`kappa`), so that \eqn{p(y | f) = \kappa + (1 - 2\kappa) \Theta(y f)}
#' (eq. 17.17). Integrating the input noise out instead gives the equivalent
#' likelihood \eqn{\kappa + (1 - 2\kappa)\Phi(y f / \sqrt v)} (eq. 17.15).
#'
#' * `method = "naive"` solves the naive mean-field equations (17.40). The
#'   default solver (`gpc_control(algorithm = "newton")`) is a quasi-Newton
#'   iteration on the residual \eqn{\delta\alpha} of the equations: the exact
#'   residual (one product with the kernel matrix, kept whole when it fits
#'   in `gpc_control(cache_mb)`, else recomputed in blocks) and a Jacobian
#'   whose kernel part is a pivoted Cholesky factor of rank at most 300,
#'   with backtracking. With \eqn{\kappa = 0} the fixed point maximises a
#'   strictly concave function (its Hessian is minus the matrix
#'   \eqn{\Omega + K} of the leave-one-out estimate), so it exists and is
#'   unique wherever the kernel matrix with its noise is positive definite;
#'   where a Newton step cannot reduce the residual the solver takes a
#'   coordinate sweep instead (an ascent step on that function), and a
#'   warning with a reason says when no fixed point is reached. It stops on
#'   the paper's test, \eqn{\max_i \delta\alpha_i^2 <} `tol`, so it returns
#'   Algorithm 17.1's solution to the tolerance, also where Algorithm 17.1
#'   diverges. `gpc_control(algorithm = "paper")` runs Algorithm 17.1
#'   exactly: \eqn{\alpha = 0} at the start, all \eqn{\delta\alpha_i}
#'   computed in parallel, \eqn{\alpha \leftarrow \alpha +
#'   \eta\,\delta\alpha}, \eqn{\eta} multiplied by 1.1 when
#'   \eqn{\sum_i \delta\alpha_i^2} fell and halved otherwise, with the same
#'   stopping test (`tol` is the paper's `ftol`, [gpc_control()]). The
#'   posterior mean activation is \eqn{\langle f(x)\rangle = \sum_i k(x,
#'   x_i) y_i \alpha_i} (eq. 17.35). The ratio
#'   \eqn{\phi(z)/(\kappa/(1-2\kappa) + \Phi(z))} is evaluated in logs, so
#'   points far on either side of the boundary are handled without overflow.
#' * `method = "tap"` is the TAP mean-field classifier, i.e. expectation
#'   propagation (Opper and Winther's "more advanced" theory, footnote 2 and
#'   section 17.7), run by the EP engine behind [mfsvr()] with the flip-noise
#'   step likelihood on the noisy process. It gives a posterior variance for
#'   the activation and an evidence ([logLik()][logLik.gpsvm_gpc]); `alpha`
#'   is \eqn{y_i} times the EP weights, so that the posterior mean again has
#'   the form of eq. (17.35).
#'
#' Class probabilities of the naive method keep the prior spread of the
#' local field (with the offset's variance \eqn{c} in it):
#' \eqn{p(y = +1 | x) = \kappa + (1 - 2\kappa) \Phi(\langle f(x)\rangle /
#' \sqrt{k(x, x) + c + v})}, as in the denominator of eq. (17.40). The TAP
#' method integrates the likelihood over its posterior \eqn{N(m(x), s^2(x))}
#' of the activation: \eqn{\kappa + (1 - 2\kappa)\Phi(m(x) / \sqrt{s^2(x) + v})}.
#'
#' @section Defaults for data as it comes:
#' `scale = TRUE` and a width left to the data work as for [svc()] ("Defaults
#' for data as it comes"). Scaling a binary label does not change it, so the
#' only scale in the model is the prior's: with the Gaussian kernel
#' (variance 1) the activation varies by about one unit, and `noise` is the
#' variance of the label noise relative to that, i.e. the inverse of a
#' signal-to-noise ratio. By default the width and the noise are chosen by
#' the EP evidence (see `optimize`); beyond 2000 observations
#' (`gpc_search_max_n` of [gpsvm_size_policy()]) on 2000 evenly spaced rows,
#' and the fit on every row, on 500 inducing inputs (see `inducing`; on
#' inputs of many dimensions too few, and the probabilities
#' under-confident), starts from the search's EP sites on those rows; a
#' message and `print()` say so. It is far slower there than the support
#' vector machines ("Performance" below).
#' The defaults (the search, `bias = 1`) were chosen on held-out splits of
#' benchmark data against e1071's and kernlab's defaults. On inputs of many
#' dimensions the probabilities of the right class are less confident than
#' kernlab's: a case is far from most training cases, so the activation keeps
#' much of its prior variance; no setting of the width, `noise`, `kappa` and
#' `bias` closed that gap. Without a bias a one-sided data set (one class
#' compact, the other scattered, as in Ionosphere) loses several points of
#' accuracy, since far from the training data the activation falls back to
#' the prior mean. TAP's posterior variance makes its probabilities better
#' calibrated than the naive method's, which keeps the prior spread. The
#' paper's settings are `scale = FALSE`, `bias = 0` and `method = "naive"`,
#' with its `noise` and kernel.
#'
#' @section Several classes:
#' With \eqn{K \ge 3} classes, `gpc()` fits K binary models, each class
#' against the rest, with the same kernel and settings (an evidence search,
#' on all rows up to 2000 observations, chooses each model's own width and
#' noise); under a [future::plan()] they run in parallel (see
#' [gpsvm_parallel]). The class probabilities are those of the K models,
#' each the probability of "class k, not the rest", divided by their sum so
#' that they add up to one, and `predict(type = "class")` is the most
#' probable class (usually the one whose model gives the largest activation;
#' two nearly tied can swap, as their posterior variances differ).
#' One-vs-rest keeps every binary model the paper's model, with its
#' leave-one-out estimate and (for TAP) its evidence; a joint multi-class
#' likelihood would not.
#'
#' Dividing by the sum leaves the probabilities about as confident as the
#' binary models are. Normalising the odds \eqn{p/(1 - p)} instead (the K
#' models as independent experts) helps only where the binary models are
#' under-confident and is over-confident elsewhere ("Performance" below), so
#' it is not used. From the size rule `ovr_max_nk` (observations times
#' classes; [gpsvm_size_policy]) the default is the joint model below, and
#' from half the rule up to it both, their class probabilities pooled as
#' \eqn{(1 - w) p_{ovr} + w p_{joint}} with the weight \eqn{w} rising
#' linearly from 0 to 1 (recorded in `fit$joint_pool`), so that no size
#' changes the model abruptly. The classes are then the most probable
#' under the pool; the activations
#' (`type = "link"`), [loo_error()] and [gpsvm_settings()] are those of the
#' one-vs-rest models, and [logLik()][logLik.gpsvm_gpc] has none, as for
#' one-vs-rest.
#'
#' @section The joint multi-class model:
#' `multiclass = "joint"` fits K latent functions with one kernel, one bias
#' and one noise variance \eqn{v}, independent a priori, and the
#' multinomial probit likelihood: the class is the largest of
#' \eqn{f_k(x) + e_k}, \eqn{e_k \sim N(0, v)} (with two classes, the
#' binary model's probit with noise \eqn{v}, eq. 17.15). Its posterior is
#' the variational approximation of Girolami and Rogers (2006): every class
#' gets the same posterior covariance \eqn{(K^{-1} + I/v)^{-1}}, so one
#' factorisation (of \eqn{I + K/v}, or with inducing inputs of an
#' \eqn{m \times m} matrix) serves all K classes, and the latent means are
#' the mode of the posterior, found by Newton's method (the authors'
#' fixed-point updates converge slowly where most cases are classified
#' confidently), each step by conjugate gradients preconditioned with the
#' shared factorisation. Class probabilities integrate the probit over the
#' shared predictive variance by Gauss-Hermite quadrature centred at the
#' integrand's mode (accurate for probabilities far below 1e-10); the most
#' probable class is the one with the largest latent mean. `logLik()` is the
#' variational lower bound on the evidence; `loo_error()` uses the
#' posterior's cavities or exact refits.
#'
#' The shared factorisation (where the Laplace approximation of the softmax,
#' Rasmussen and Williams 2006, section 3.5, needs K per Newton step) makes
#' many classes cheap; its price is a lower bound that prefers far too much
#' noise, as it charges every case the largest curvature \eqn{1/v}. So the
#' width and the noise are chosen by maximising the approximate
#' leave-one-out log probability of the labels from the posterior's cavities
#' (Rasmussen and Williams 2006, section 5.4.2), the noise kept above 0.01
#' times the kernel's mean diagonal, below which that estimate becomes
#' over-confident; beyond `joint_search_max_n` observations
#' ([gpsvm_size_policy()]) on that many evenly spaced rows, then every row
#' is fitted at the values found. Its held-out log loss was below
#' one-vs-rest's on some data sets and above it on others ("Performance"
#' below), which is why one-vs-rest stays the default.
#'
#' @section Performance:
#' Measured up to 2026-12-02 (gpsvm 0.1.0, development version, on a 2-core
#' machine; the scripts are in `bench/` of the sources).
#'
#' * The search's cost per class: about 0.3 s at 500 observations of Pima
#'   and 1.8 s at 1000 of mlbench's ringnorm, against 0.15 s and 0.9 s
#'   without it (mlbench's Vowel, 990 observations, 11 classes: 32 s, 14 s).
#' * Beyond 2000 observations: on mlbench's Satellite as red soil against
#'   the rest (4435 rows, 36 inputs) the default took 8.4 s and a fit at the
#'   values it found 3.6 s (two threads), against 0.46 s for
#'   `e1071::svm(probability = TRUE)`, at held-out log loss 0.0229 against
#'   0.0240 (kernlab 0.0194); on ringnorm with 50 inputs (3000 rows) 6.1 s
#'   and 1.4 s against 0.3 s, at 0.021 against 0.004 (the dense prior: 0.013,
#'   in 47 s). On 20000 points of a noisy two-dimensional surface the default
#'   took 18.8 s (18 sweeps), the fit at `noise = 0.1` 41.9 s (54 sweeps),
#'   for held-out log loss 0.3575 against 0.3584.
#' * Ten 2/3 : 1/3 splits of mlbench's Pima Indians diabetes, Wisconsin
#'   breast cancer, Sonar, Ionosphere, Vehicle, Glass, Vowel, DNA and
#'   Satellite and of iris (`bench/bench-classif-data.R`), against the
#'   defaults of `e1071::svm()` and `kernlab::ksvm(prob.model = TRUE)`: the
#'   default's held-out accuracy is e1071's or higher on eight of the ten
#'   (Vehicle 0.83 against 0.75, Vowel 0.96 against 0.81), 0.004 below it on
#'   iris and 0.012 below it on DNA, and its log loss is lower than that of
#'   kernlab's cross-validated Platt scaling on all but Ionosphere (0.179
#'   against 0.152) and DNA (0.250 against 0.142). On 20 splits of
#'   Ionosphere (default 0.195, kernlab 0.163) no setting of a grid of 168
#'   (width, `noise`, `kappa` and `bias`) had a mean log loss below 0.173
#'   even when chosen on the held-out cases (`bench/bench-realdata.R`, part
#'   "hindsight"). Without the search (`optimize = FALSE`) the accuracy is a
#'   point lower on Pima and breast cancer and the log loss above kernlab's
#'   on Pima, breast cancer, Ionosphere and iris.
#' * Several classes, on three splits: the mean largest probability against
#'   the accuracy was 0.72 and 0.71 on Glass, 0.94 and 0.94 on iris, 0.83
#'   and 0.94 on DNA, 0.82 and 0.97 on Vowel. Normalising the odds instead
#'   lowered the log loss on DNA (0.24 to 0.17) and Vowel (0.23 to 0.11) but
#'   raised it on Glass (0.76 to 0.90), iris (0.13 to 0.17) and Satellite
#'   (0.242 to 0.253), and was over-confident on Glass and Vehicle.
#' * On mlbench's LetterRecognition (14000 training cases, 16 inputs, 26
#'   classes) one-vs-rest took 259 s, against 7 s for [svc()] and for
#'   `e1071::svm()`, at held-out accuracy 0.930 (svc() 0.952, e1071 0.941).
#' * The joint model (`bench/bench-multiclass.R`): on three 2/3 : 1/3
#'   splits its held-out log loss was 0.103 against one-vs-rest's 0.114 on
#'   iris, but 0.785 against 0.758 on fgl and 0.365 against 0.339 on
#'   mlbench's Vehicle, in 0.5 to 1.5 times the CPU time. On the first
#'   2000 rows of mlbench's LetterRecognition (26 classes; test rows
#'   16001-20000) it reached accuracy 0.843 and log loss 0.597, where
#'   `e1071::svm(probability = TRUE)` reached 0.828 and 0.692 in a
#'   fifteenth to a twentieth of its CPU time. On one split of MASS's fgl
#'   (143 training rows) the variational bound chose width and noise 3.6
#'   (held-out log loss 1.14), where width 2 and noise 0.01 gave 0.65.
#'
#' @inheritParams svc
#' @param bias Prior variance \eqn{c \ge 0} of a constant offset of the
#'   activation, added to the kernel; 0 means no offset, as in the paper.
#' @param noise Input-noise variance \eqn{v \ge 0}, added to the kernel's
#'   diagonal (eq. 17.16): the variance of the label noise relative to the
#'   kernel. With `noise = 0` the kernel's own diagonal must be positive.
#'   `NULL` (the default) leaves it to the evidence where `optimize` searches
#'   it (by default), and is 0.1 otherwise; a number given is kept unless
#'   `optimize` names `"noise"` or is `TRUE`, and then starts the search.
#' @param kappa Output flip probability \eqn{\kappa \in [0, 1/2)} (eq. 17.17).
#' @param method `"tap"` (TAP mean field / expectation propagation, the
#'   default) or `"naive"` (the naive mean-field equations (17.40)).
#' @param multiclass With three or more classes and `method = "tap"`:
#'   `"ovr"` fits one binary model per class against the rest; `"joint"`
#'   fits one model of all the classes (see "The joint multi-class model"
#'   below), with one evidence ([logLik()][logLik.gpsvm_gpc]). `NULL` (the
#'   default) chooses by size: `"ovr"` while the observations times the
#'   classes are at most half `ovr_max_nk` (10000; see [gpsvm_size_policy]),
#'   `"joint"` from `ovr_max_nk`, and both pooled in between (see "Details"),
#'   or `"ovr"` when `kappa` is positive or searched; the fit's plan records
#'   the choice and a message says when the joint model was chosen or
#'   pooled. Ignored for two classes and for `method = "naive"` (always
#'   one against the rest).
#' @param control Solver settings from [gpc_control()].
#' @param search The evidence search's tolerance, budget and grid, from
#'   [search_control()]; used where `optimize` asks for a search.
#' @param inducing With `method = "tap"`: `NULL` (the default) for the full
#'   Gaussian-process prior, or a count or a matrix of inducing inputs for a
#'   sparse (FITC) fit in \eqn{O(n m^2)} time and \eqn{O(n m)} memory, the
#'   input noise on the FITC diagonal: see [inducing-points]. Exact
#'   leave-one-out ([loo_error()] with `"exact"`) is not available for such
#'   fits. With `NULL` and more than 1000 observations the full prior is
#'   represented by a low-rank factorisation when the kernel matrix has one;
#'   when it has none, beyond 2000 observations the fit is the FITC
#'   approximation on 500 inducing inputs, and `print()` says so: see
#'   `rank_tol` in [gpc_control()]. Row partitions from [gpsvm_partitions()]
#'   as the formula's `data` need `inducing`; their fit takes
#'   `method = "tap"` and `multiclass = "ovr"`; the `noise` and kernel width
#'   the call leaves open are the default search's on the rows it sees in
#'   memory (all up to `gpc_search_max_n`, else `search_subset_n` evenly
#'   spaced; [gpsvm_size_policy()]), read from the partitions, or with
#'   `optimize = FALSE` 0.1 and the width rule. The fit keeps no inputs, so
#'   [predict()] needs `newdata` and `summary()` gives no training error.
#' @param optimize With `method = "tap"`: `TRUE` chooses the width of an
#'   [rbf_kernel()] and `noise` by maximising the EP evidence, a subset of
#'   `c("sigma", "noise", "kappa")` chooses those, and `FALSE` chooses none.
#'   `NULL` (the default) chooses what the call leaves open (beyond 2000
#'   observations on 2000 evenly spaced rows of them): the width when
#'   `kernel` is `rbf_kernel()` without one, and the noise when `noise` is
#'   not given (so `update(fit, noise = 0.5)` keeps that noise and searches
#'   the width alone). With `rbf_kernel(per_input = TRUE)` and two classes
#'   the search chooses a width per input column instead of one ([kernels],
#'   "A width per input"); with three or more classes those widths stay at
#'   their start. With `method = "naive"`, `NULL` means `FALSE`: the width
#'   rule of [kernels] and `noise = 0.1`. The search (L-BFGS-B on
#'   \eqn{\log\sigma}, \eqn{\log v} and \eqn{\mathrm{logit}(2\kappa)}, with
#'   the evidence's gradient at the EP fixed point) starts from the values
#'   given; a width left to the data starts at
#'   \eqn{\sigma = \sqrt{q_{0.5}/2}}{sigma = sqrt(q_0.5 / 2)} for the median
#'   \eqn{q_{0.5}}{q_0.5} of the squared distances between inputs (the middle
#'   of kernlab's `sigest()` estimates, wider than the rule of [kernels],
#'   where the evidence's optimum has lain on real data); a `noise` of 0
#'   starts at 0.1 times the kernel's mean diagonal and a `kappa` of 0 at
#'   0.05. It is recorded in `fit$optimization` as for [mfsvr()], and a
#'   warning says when it does not converge. Beyond 300 observations (and
#'   `inducing = NULL`) the search runs on a FITC prior and the final fit is
#'   the full model at the values found (`search_inducing` in
#'   [gpc_control()]; `fit$optimization$search_inducing` records the count,
#'   and after a search on a subset of the rows `fit$optimization$search_rows`
#'   theirs; the plan's row says how many evaluations and EP sweeps the
#'   search took and how many sweeps the fit on every row added).
#' @return An object of class `c("gpsvm_gpc_tap", "gpsvm_gpc",
#'   "gpsvm_classifier")` (`"gpsvm_gpc_naive"` first with
#'   `method = "naive"`): a list with the fields of an [svc()] fit but `C`
#'   and `objective` (also `models` with three or more classes), `alpha` being
#'   the embedding strengths and `fitted.values` the posterior mean
#'   activation at the training inputs, and `noise`, `kappa`, `method`,
#'   `control` (with the method's `tol` and `max_iter`) and `optimization`
#'   (the record of the evidence search); with `method = "tap"` also the EP
#'   sites (`site_precision`, `site_nu`), the cavity means and variances, the
#'   Cholesky factor `chol` of \eqn{I + S^{1/2} K S^{1/2}} and `log_evidence`.
#'   Methods: as for [svc()] fits ([predict.gpsvm_gpc()] for `predict`), and
#'   [logLik()][logLik.gpsvm_gpc].
#' @references Opper, M. and Winther, O. (2000). Gaussian processes and SVM:
#'   mean field results and leave-one-out. In Smola, Bartlett, Schoelkopf and
#'   Schuurmans (eds.), *Advances in Large Margin Classifiers*, MIT Press,
#'   311-326. Sections 17.3 and 17.6, Algorithm 17.1.
#'
#'   Girolami, M. and Rogers, S. (2006). Variational Bayesian multinomial
#'   probit regression with Gaussian process priors. *Neural Computation*
#'   18(8), 1790-1817.
#'
#'   Rasmussen, C. E. and Williams, C. K. I. (2006). *Gaussian Processes for
#'   Machine Learning*. MIT Press. Sections 3.5 and 5.4.2.
#' @seealso [svc()] for the support vector machine, [loo_error()] for
#'   leave-one-out errors; [gpsvm_corrections] (items 5, 10 and 12) for where
#'   the fit departs from the paper.
#' @examples
#' set.seed(1)
#' x <- matrix(rnorm(200), 100, 2)
#' y <- factor(ifelse(x[, 1]^2 + x[, 2]^2 > 1.4, "out", "in"))
#' fit <- gpc(x, y)
#' fit
#' predict(fit, rbind(c(0, 0), c(2, 2)), type = "prob")
#' loo_error(fit)
#' logLik(fit)
#' # the paper's naive mean field with its own settings
#' naive <- gpc(x, y, rbf_kernel(1), noise = 0.5, bias = 0, method = "naive", scale = FALSE)
#' predict(naive, rbind(c(0, 0), c(2, 2)), type = "prob")
#' # three classes
#' iris_fit <- gpc(Species ~ ., data = iris)
#' head(predict(iris_fit, iris, type = "prob"))
#' # one joint model of the three classes, at given width and noise
#' joint <- gpc(Species ~ ., data = iris, multiclass = "joint", kernel = rbf_kernel(2),
#'              noise = 0.05)
#' logLik(joint)
#' @export
gpc <- function(x, ...) UseMethod("gpc")

#' @rdname gpc
#' @export
gpc.default <- function(x, y, kernel = rbf_kernel(), noise = NULL, kappa = 0, bias = 1,
                        method = c("tap", "naive"), scale = TRUE, control = gpc_control(),
                        optimize = NULL, inducing = NULL, search = search_control(),
                        multiclass = NULL, ...) {
  .open_ledger()
  .check_dots_empty(...)
  .check_kernel(kernel)
  noise_given <- !is.null(noise)
  noise <- if (noise_given) .check_number(noise, "noise", lower = 0) else .gpc_default_noise
  kappa <- .check_number(kappa, "kappa", lower = 0, upper = 0.5)
  if (kappa >= 0.5) .stop("'kappa' must lie in [0, 0.5): at 1/2 the labels carry no information")
  method <- .match_choice(method)
  multiclass <- .gpc_multiclass(multiclass, method, kappa, optimize, NROW(x), .class_count(y))
  optimize <- .gpc_automatic_search(optimize, method, kernel, noise_given, NROW(x),
                                    .class_count(y))
  rows <- attr(optimize, "rows")
  attr(optimize, "rows") <- NULL
  control <- .resolve_control(.check_control(control, "gpc_control"), method)
  settings <- .search_settings(search, "gradient")
  what <- if (method == "tap") "gpc: TAP mean field (EP)" else if (control$algorithm == "paper")
    "gpc: the naive mean-field iteration (Algorithm 17.1)" else "gpc: the naive mean-field sweeps"
  if (!is.null(inducing) && method != "tap") .stop("'inducing' needs method = \"tap\"")
  if (is.null(inducing) && method == "tap" && identical(optimize, FALSE)) {
    inducing <- structure(list(rank_tol = control$rank_tol), class = "gpsvm_low_rank")
  }
  fit_joint <- function(x, labels, kernel, inducing) {
    .gpc_joint_fit(x, labels, kernel, noise, kappa, control, optimize, inducing, settings)
  }
  call <- .generic_call(match.call(), "gpc")
  train <- function(fit_joint) {
    .classif_train(x, y, kernel, bias, scale, what = what, inducing = inducing, call = call,
                   function(x, y, kernel, inducing = NULL) {
      binary <- .gpc_optimize(x, y, kernel, noise, kappa, method, control, optimize, inducing,
                              settings, rows)
      if (method == "naive") .warn_coarse_tol(binary)
      binary
    }, fit_joint = fit_joint)
  }
  fit <- train(if (method == "tap" && multiclass == "joint") fit_joint)
  .charge_chosen(fit, isTRUE(.searched(fit)))
  weight <- attr(multiclass, "joint_weight")
  if (!is.null(weight)) {
    # (the pool's joint model is the fit multiclass = "joint" makes, and its
    # plan says so)
    joint <- train(fit_joint)
    joint$call$multiclass <- "joint"
    joint$plan <- .plan_frame(.plan_rows(joint))
    fit$joint_pool <- list(fit = .seal(joint), weight = weight)
    fit$fit_time <- fit$fit_time + joint$fit_time
    .charge("multiclass")
  }
  fit$size_ruled_multiclass <- attr(multiclass, "rule")
  .with_plan(fit, "gpc():")
}

# The multi-class model: the call's, or for NULL by size.  One-vs-rest costs
# K searches, the joint model one for all K; up to half ovr_max_nk
# observations times classes the first, from ovr_max_nk the second (unless
# kappa needs one-vs-rest), and between them both, their probabilities
# pooled with the joint model's weight rising from 0 to 1 (attribute
# "joint_weight"), so that no size switches the model abruptly and the
# pool costs one joint fit more than one-vs-rest.  Attribute "rule": the
# size rule decided.
.gpc_multiclass <- function(multiclass, method, kappa, optimize, n, classes) {
  if (!is.null(multiclass)) {
    return(structure(.match_choice(multiclass, c("ovr", "joint")), rule = FALSE))
  }
  decided <- method == "tap" && classes > 2L && kappa == 0 &&
    !(is.character(optimize) && "kappa" %in% optimize)
  weight <- if (decided) .joint_pool_weight(n * classes) else 0
  structure(if (weight >= 1) "joint" else "ovr", rule = decided,
            joint_weight = if (weight > 0 && weight < 1) weight)
}

# The joint model's share of the pooled probabilities at n x K = nk.
.joint_pool_weight <- function(nk) min(1, max(0, 2 * nk / .size_rule("ovr_max_nk") - 1))

# The noise variance when the call gives none and no search chooses it.
.gpc_default_noise <- 0.1

# `optimize` as the search will read it: the user's value, or for NULL the
# parameters the call leaves open with method = "tap" (FALSE for none), with
# the rows of the default search in attribute "rows" (.search_rows()).
.gpc_automatic_search <- function(optimize, method, kernel, noise_given, n, classes) {
  per_input <- isTRUE(kernel$per_input)
  if (per_input && classes > 2L && "sigma" %in% .optimize_which(optimize %||% FALSE,
                                                                 c("sigma", "noise", "kappa"))) {
    .stop(paste("'optimize': the evidence chooses a width per input for two classes only (the",
                "classes' models share one scaling of the inputs); give the widths, or search",
                "the rest (optimize = \"noise\")"))
  }
  if (!is.null(optimize)) return(optimize)
  if (method != "tap") return(FALSE)
  # (a width per input stays at its start with three or more classes)
  open_width <- .has_width(kernel) && is.null(kernel$sigma) &&
    !(per_input && classes > 2L)
  which <- c(if (open_width) "sigma", if (!noise_given) "noise")
  if (length(which) == 0L) return(FALSE)
  structure(which, rows = .search_rows(n))
}

# Algorithm 17.1's test, max delta alpha_i^2 < tol, is absolute while alpha_i
# is of order 1 / sqrt(k_ii): with a large kernel diagonal it can pass long
# before alpha settles.  The paper's rule stays; the user is told.
.warn_coarse_tol <- function(fit) {
  step <- sqrt(fit$convergence$change)
  largest <- max(fit$alpha)
  if (!isTRUE(fit$convergence$converged) || step <= 0.01 * largest) return(invisible())
  warning(sprintf(paste("gpc: the naive mean field stopped with a step of %.3g, not small against",
                        "the largest alpha (%.3g): tol = %.3g is too coarse for this kernel's",
                        "scale (alpha is of order 1 / sqrt(k(x, x) + noise)); use a smaller",
                        "gpc_control(tol = )"),
                  step, largest, fit$control$tol), call. = FALSE)
}

#' @rdname gpc
#' @export
gpc.formula <- function(formula, data, subset, na.action, ...) {
  .fit_formula(match.call(), parent.frame(), "gpc", gpc.default, ...)
}

#' Settings for the mean-field classifiers
#'
#' @param tol Convergence tolerance; `NULL` means the method's default,
#'   `1e-5` for `"naive"` and `1e-6` for `"tap"`.
#'   * `method = "naive"`: both solvers stop when
#'   \eqn{\max_i \delta\alpha_i^2 <} `tol` (the paper's `ftol`,
#'   \eqn{10^{-5}}). The test is absolute while \eqn{\alpha_i} is of order
#'   \eqn{1/\sqrt{k_{ii}}}: with a large kernel diagonal [gpc()] warns when
#'   the last step is over 1% of the largest \eqn{\alpha_i}, and `tol` should
#'   be lowered.
#'   * `method = "tap"`: EP stops when no posterior mean at a training point
#'   moves by more than `tol` posterior standard deviations, and no posterior
#'   variance changes by more than `tol` relatively, in one sweep (times the
#'   damping of that sweep). At the default `1e-6` the class probabilities
#'   are within about \eqn{10^{-8}} of EP's fixed point and the log evidence
#'   within \eqn{10^{-10}}, in two thirds of the sweeps `1e-9` takes.
#' @param max_iter Maximum number of Newton steps or iterations of
#'   Algorithm 17.1 (`"naive"`), or of EP sweeps (`"tap"`); `NULL` means the
#'   default: 1000 Newton steps, 10000 iterations of Algorithm 17.1, or 500
#'   EP sweeps. `NULL` for `tol` or `max_iter` is resolved when the model is
#'   fitted (`fit$control` records the value used).
#' @param eta Initial learning rate of Algorithm 17.1 (the paper's 0.05).
#' @param algorithm Solver of `method = "naive"`: `"newton"` (default,
#'   quasi-Newton steps) or `"paper"` (Algorithm
#'   17.1 on the full Gram matrix); see [gpc()].
#' @param cache_mb Memory in megabytes the Newton solver may use for the
#'   kernel matrix: the whole matrix (\eqn{8 n^2} bytes) is kept when it
#'   fits; otherwise each product with it recomputes the kernel in blocks,
#'   and a cache of this size holds columns for the coordinate sweeps.
#' @param schedule EP site updates, all with the same fixed point:
#'   * `"accelerated"` (default): all sites from one posterior, moved the
#'   fraction `damping` of the way to their updates; once a sweep moves no
#'   marginal by more than 0.1 (in the units of `tol`), each sweep is
#'   extrapolated from the last ten by Anderson acceleration (Walker and Ni
#'   2011, type II: the combination of the last updates whose changes best
#'   cancel). A run that finds no new smallest change in ten sweeps halves
#'   the step and restarts the extrapolation, and continues with sequential
#'   sweeps if the step falls below 0.05. The run ends on a plain sweep that
#'   passes `tol`. It needs the fewest sweeps of the three near the fixed
#'   point, where the map is nearly linear ("Performance" below).
#'   * `"parallel"`: the same sweeps without extrapolation, the step
#'   starting at `damping`, growing by 1.1 (up to 1) after a sweep that
#'   reduced the change and halving otherwise (then sequential below 0.05).
#'   * `"sequential"`: one site at a time in a seeded random order, with
#'   rank-one updates of the posterior: fewer sweeps, each dearer (its
#'   updates are vector work, a parallel sweep's matrix products).
#' @param damping The step of the accelerated and sequential schedules and
#'   the first step of the parallel one, in (0, 1]. Every site's update
#'   assumes the others stay put, so undamped parallel sweeps overshoot far
#'   from the fixed point, and a damped run takes fewer sweeps.
#' @param seed Seed of the sequential schedule's random order.
#' @param rank_tol With `method = "tap"`, more than 1000 observations and
#'   `inducing = NULL` (with `optimize`, in the final fit): EP runs on the
#'   FITC prior ([inducing-points]) on the pivots of a pivoted Cholesky
#'   factorisation \eqn{G G^T} of the kernel matrix when at most
#'   \eqn{\min(n/2, 1000)} pivots leave every entry of \eqn{K - G G^T} below
#'   `rank_tol` times the largest \eqn{k(x, x)}, as in [mfsvr_control()]:
#'   probabilities, latent means and the evidence agree with the dense fit's
#'   to about \eqn{10^{-11}}, for \eqn{O(n r^2)} a sweep with \eqn{r} pivots
#'   instead of \eqn{O(n^3)}. Without such a low rank (usual in many
#'   dimensions) the matrix stays dense up to 2000 observations, beyond which
#'   EP runs on the FITC approximation of `inducing = 500`. An evidence search
#'   on the full prior (`search_inducing = 0`) uses the same rule for each
#'   evaluation beyond 300 observations. `rank_tol = 0` always uses the dense
#'   matrix (which exact leave-one-out needs). At most `1e-6`.
#' @param search_inducing With `method = "tap"`, `optimize` and
#'   `inducing = NULL`: the number of inducing inputs of the FITC prior
#'   ([inducing-points]) on which the evidence search runs, chosen by the
#'   same greedy rule at the kernel's width (for a width left to the data,
#'   the rule of [kernels], not the wider width the search starts from). The
#'   final fit is then the full model at the values found (see `rank_tol`).
#'   `NULL` (the default) means a third of the observations, at most 300,
#'   beyond 300 observations, and the full prior up to 300; 0 always searches
#'   on the full prior (faster only where the kernel matrix has a low rank;
#'   "Performance" below). With `inducing` given, the search and the fit both
#'   use it and this is ignored.
#' @section Performance:
#' Measured up to 2026-12-02 (gpsvm 0.1.0, development version, on a 2-core
#' machine; the scripts are in `bench/` of the sources).
#'
#' * `schedule`: sweeps to `tol = 1e-9` on two-dimensional data with 200
#'   inducing inputs, `"accelerated"` (`"parallel"` from `damping = 1` in
#'   brackets): 29 (71) at \eqn{n = 5000}, 32 (56) at 20000, 48 (86) at
#'   \eqn{10^5}; on the dense fits of Pima, Sonar and Ionosphere 21, 20, 21
#'   (25, 21, 28); from 300 to 1000 points with 30 inducing inputs and
#'   `tol = 1e-12`, 24 to 27 (26 to 32). `"sequential"` took 16 to 18
#'   sweeps there, each dearer: at \eqn{n = 5000} with 200 inducing inputs,
#'   25 sweeps took 3.7 s where 71 parallel ones took 2.2 s.
#' * `damping`: with the accelerated schedule, damping 1 needed 45 and 50
#'   sweeps at \eqn{n = 5000} and 20000 above, 0.7 29 and 32.
#' * `rank_tol`: on two-dimensional inputs 1.2 s instead of 11 s at
#'   \eqn{n = 1500}; a dense sweep took 11 s per class at \eqn{n = 2000} on
#'   36 inputs. On mlbench's 6-class Satellite data: 2001 cases 7.3 s,
#'   held-out accuracy 0.883 (the dense fit of 2000 cases: 71 s, 0.888);
#'   4435 cases 18 s, accuracy 0.907 and log loss 0.240 (e1071's defaults
#'   0.892 and 0.268). The search on the full prior with the low-rank rule
#'   on 900 two-dimensional points: 1.3 s instead of 5.0 s.
#' * `search_inducing`: against the search on the full prior on six data
#'   sets of 478-700 training rows, 0.34-0.39 of its time on Pima, breast
#'   cancer and mlbench's twonorm and ringnorm, 0.57 on spirals, and 1.7
#'   times it on circle (whose kernel matrix has a low rank); the same
#'   held-out accuracy on every split, and a log loss within 0.002.
#' @return A list of class `gpsvm_gpc_control`.
#' @references Walker, H. F. and Ni, P. (2011). Anderson acceleration for
#'   fixed-point iterations. *SIAM Journal on Numerical Analysis* 49(4),
#'   1715-1735.
#' @examples
#' gpc_control(tol = 1e-12, max_iter = 5000)
#' gpc_control(tol = 1e-6, schedule = "sequential")
#' @export
gpc_control <- function(tol = NULL, max_iter = NULL, eta = 0.05,
                        schedule = c("accelerated", "parallel", "sequential"), damping = 0.7,
                        seed = 1,
                        algorithm = c("newton", "paper"), cache_mb = 500, rank_tol = 1e-13,
                        search_inducing = NULL) {
  damping <- .check_number(damping, "damping", lower = 0, upper = 1, open_lower = TRUE)
  structure(list(tol = if (!is.null(tol)) .check_number(tol, "tol", lower = 0, open_lower = TRUE),
                 max_iter = if (!is.null(max_iter)) .check_count(max_iter, "max_iter", lower = 1L),
                 eta = .check_number(eta, "eta", lower = 0, upper = 1, open_lower = TRUE),
                 schedule = .match_choice(schedule), damping = damping,
                 seed = .check_count(seed, "seed"), algorithm = .match_choice(algorithm),
                 cache_mb = .check_number(cache_mb, "cache_mb", lower = 0, open_lower = TRUE),
                 rank_tol = .check_number(rank_tol, "rank_tol", lower = 0, upper = .max_rank_tol),
                 search_inducing = if (!is.null(search_inducing)) {
                   .check_count(search_inducing, "search_inducing")
                 }),
            class = c("gpsvm_gpc_control", "gpsvm_control"))
}

# The defaults of gpc_control()'s 'tol' and 'max_iter' by method (the naive
# method's absolute test on the squared step, EP's on standardised changes).
.gpc_method_defaults <- list(newton = list(tol = 1e-5, max_iter = 1000L),
                             paper = list(tol = 1e-5, max_iter = 10000L),
                             tap = list(tol = 1e-6, max_iter = 500L))

# The control with the method's defaults filled in (what the fit stores).
.resolve_control.gpsvm_gpc_control <- function(control, method, ...) {
  defaults <- .gpc_method_defaults[[if (method == "naive") control$algorithm else method]]
  control$tol <- control$tol %||% defaults$tol
  control$max_iter <- control$max_iter %||% defaults$max_iter
  control
}

# The mean-field fit on -1/+1 labels; `start` warm-starts the naive alpha,
# `sites` (site_precision, site_nu) the TAP method's EP sites.
.gpc_fit <- function(x, y, kernel, noise, kappa, method, control, start = NULL,
                     inducing = NULL, sites = NULL) {
  model <- list(kernel = kernel, noise = noise, kappa = kappa, inducing = inducing)
  if (!is.null(inducing)) model$inducing_held_rows <- .inducing_held_rows(length(y), nrow(inducing))
  if (method == "naive") {
    .count_fit()
    res <- cpp_alpha_fit("naive", model, x, y, unclass(control), start)
    alpha <- res$alpha
    extra <- list()
  } else {
    # (data in partitions on the future plan's workers: R/split-fit.R)
    workers <- if (!is.null(.split_reader(x)) && !is.null(inducing) && is.null(sites)) {
      .split_workers()
    } else 0L
    res <- if (workers > 0L) {
      .split_ep_fit(x, y, kernel, c(unclass(control), list(inducing = inducing)), workers,
                    list(noise = noise, kappa = kappa))
    }
    first <- if (is.null(res) && is.null(sites)) {
      .gpc_subset_start(x, y, kernel, noise, kappa, control, inducing)
    }
    if (is.null(res)) .count_fit()
    res <- res %||% cpp_gpc_tap_fit(model, x, y, unclass(control),
                                    sites %||% first$sites %||% list())
    alpha <- y * res$weights
    res$field <- res$mean
    extra <- res[c("site_precision", "site_nu", "cavity_mean", "cavity_var", "chol",
                   "log_evidence")]
    if (!is.null(inducing)) {
      extra <- c(extra, list(inducing = .fitted_inducing(inducing),
                             inducing_held_rows = model$inducing_held_rows),
                 res[c("inducing_weights", "inducing_chol")],
                 if (!is.null(first)) list(ep_start_rows = first$rows))
    }
  }
  # <f_i> with the noise-free kernel, the activation a new case at x_i gets
  # (an inducing-point fit's diagonal holds more than the noise: the core's)
  f <- if (is.null(inducing)) res$field - noise * y * alpha else res$fitted
  f <- stats::setNames(f, rownames(x))
  structure(c(list(alpha = stats::setNames(alpha, rownames(x)), fitted.values = f, x = x,
                   y = y, kernel = kernel, noise = noise, kappa = kappa, method = method,
                   control = control, convergence = res$convergence),
              extra, if (!is.null(res$split)) list(split = res$split)),
            class = c(paste0("gpsvm_gpc_", method), "gpsvm_gpc", "gpsvm_classifier"))
}

# The EP sites a TAP fit on inducing inputs starts from beyond size rule
# ep_start_subset_n: the fit's on every tenth row, 0 elsewhere (`rows`: the
# subset's size); NULL (the prior) otherwise and for data in partitions.
.gpc_subset_start <- function(x, y, kernel, noise, kappa, control, inducing) {
  n <- length(y)
  if (is.null(inducing) || !is.matrix(x) || n <= .size_rule("ep_start_subset_n")) return(NULL)
  rows <- .evenly_spaced_rows(n, n %/% 10L)
  # (a low-rank prior's pivoted factor belongs to every row: the subset's
  # FITC prior is built on its pivots afresh)
  subset <- .gpc_fit(x[rows, , drop = FALSE], y[rows], kernel, noise, kappa, "tap", control,
                     inducing = .fitted_inducing(inducing))
  precision <- nu <- numeric(n)
  precision[rows] <- subset$site_precision
  nu[rows] <- subset$site_nu
  list(sites = list(site_precision = precision, site_nu = nu), rows = length(rows))
}

# What the glue reads of a binary model's prior and likelihood.
.gpc_model <- function(model) {
  list(kernel = model$kernel, noise = model$noise, kappa = model$kappa, inducing = model$inducing)
}

# Posterior mean (and variance) of the TAP activation of one binary model at
# (scaled) inputs x (rows).
.gpc_tap_moments <- function(object, x, variance = TRUE) {
  cpp_ep_predict(.ep_prediction_fit(object, object$y * object$alpha), x, variance, 0L, 1L)
}

# The posterior mean activation: the EP engine's for TAP, a kernel expansion
# for the naive method (eq. 17.35).
.classif_link.gpsvm_gpc_tap <- function(model, x) .gpc_tap_moments(model, x, FALSE)$mean
.classif_link.gpsvm_gpc_naive <- function(model, x) .kernel_expansion_link(model, x)

.setting_names.gpsvm_gpc <- function(model) c("noise", "kappa", "method", "control")

# The fields a binary model's computations read (validate-fit.R): its
# settings, and for TAP the EP engine's fields.
.binary_checks.gpsvm_gpc_naive <- function(model, n, p) .gpc_setting_checks("naive")
.binary_checks.gpsvm_gpc_tap <- function(model, n, p) {
  c(.gpc_setting_checks("tap"), .ep_checks(model, n, p))
}
.gpc_setting_checks <- function(method) {
  list(noise = .number(lower = 0), kappa = function(v) {
    .number(lower = 0, upper = 0.5)(v) %||% if (v >= 0.5) "must lie in [0, 0.5)"
  }, method = .string(method), control = .control_field("gpc_control"))
}
.own_hyperparameters.gpsvm_gpc <- function(object) c(noise = object$noise, kappa = object$kappa)

# confint(): one binary model's EP evidence refitted at other values of the
# hyperparameters its search chose (named as in its optimization$estimate),
# warm-started from its sites.
.refit_at.gpsvm_gpc_tap <- function(object, values) {
  h <- as.list(values)
  point <- .refit_point(object, h)
  fit <- .gpc_fit(point$x, object$y, point$kernel, h$noise %||% object$noise,
                  h$kappa %||% object$kappa, "tap", object$control, inducing = point$inducing,
                  sites = object[c("site_precision", "site_nu")])
  list(value = if (fit$convergence$converged) fit$log_evidence else NA_real_)
}
.gives_probabilities.gpsvm_gpc <- function(object) TRUE

# Standardised activation z of one binary model at inputs x, so that the
# probability of its +1 label is kappa + (1 - 2 kappa) Phi(z): the mean over
# the spread of the local field (the prior's for the naive method, the
# posterior's for TAP, plus the noise); f: the decision values, if known.
.gpc_z <- function(model, x, f = NULL) UseMethod(".gpc_z")
.gpc_z.gpsvm_gpc_tap <- function(model, x, f = NULL) {
  mo <- .gpc_tap_moments(model, x)
  mo$mean / sqrt(mo$variance + model$noise)
}
.gpc_z.gpsvm_gpc_naive <- function(model, x, f = NULL) {
  if (is.null(f)) f <- .classif_link(model, x)
  f / sqrt(cpp_kernel_diagonal(model$kernel, x, 0L, 1L) + model$noise)
}

# Class probabilities at scaled inputs x, an n x K matrix named by the
# levels; f: the decision values at x (for the naive method).  Two classes:
# each column computed directly, so that neither loses digits as 1 - p; K
# one-vs-rest classes normalised in logs, so that tiny ones do not give 0 / 0;
# a fit between the multi-class size rules pools them with its joint model's.
.gpc_prob <- function(object, x, f = NULL) {
  pool <- object$joint_pool
  if (!is.null(pool)) {
    object$joint_pool <- NULL
    return((1 - pool$weight) * .gpc_prob(object, x, f) + pool$weight * .gpc_prob(pool$fit, x))
  }
  if (.is_joint(object)) {
    mo <- .joint_moments(object, x)
    p <- cpp_multiclass_probabilities(mo$mean, mo$variance, object$noise)
    return(.name_prob(p, object$levels, rownames(x)))
  }
  if (!.is_multiclass(object)) {
    z <- .gpc_z(object, x, f)
    p <- cbind(.flip_probit(-z, 1, object$kappa), .flip_probit(z, 1, object$kappa))
    return(.name_prob(p, object$levels, rownames(x)))
  }
  logp <- vapply(seq_along(object$models), function(k) {
    z <- .gpc_z(object$models[[k]], x, if (is.matrix(f)) f[, k])
    if (object$kappa == 0) stats::pnorm(z, log.p = TRUE) else log(.flip_probit(z, 1, object$kappa))
  }, numeric(nrow(x)))
  logp <- matrix(logp, nrow = nrow(x))
  p <- exp(logp - apply(logp, 1L, max))
  .name_prob(p / rowSums(p), object$levels, rownames(x))
}

.name_prob <- function(p, levels, rows) structure(p, dimnames = list(rows, levels))

#' Predict with a Gaussian process classifier
#'
#' @param object A fit from [gpc()].
#' @param newdata New inputs: a matrix or data frame with the training
#'   columns (a data frame for formula fits), on the scale of the training
#'   data (the fit's scaling is applied). `NULL` means the training inputs.
#'   Rows with missing values get `NA` predictions; a factor level that
#'   training never saw is predicted as a new direction of the input space,
#'   with a warning (see `new_levels`). For a formula fit it must hold every
#'   variable the formula uses (one it lacks is an error, not looked up
#'   elsewhere); no rows give an empty result. Row partitions from
#'   [gpsvm_partitions()] are predicted one at a time, in order.
#' @param type `"class"` (a factor with the training levels, or for a
#'   formula fit every level of the data's factor: see `data` in [svc()]),
#'   `"prob"` (a matrix of class probabilities, one column per level, named
#'   by the levels, also for two classes) or `"link"` (the posterior mean
#'   activation \eqn{\langle f(x) \rangle}: a vector for two classes, whose
#'   positive values favour the second level; with three or more classes a
#'   matrix with one column per class, the activation of that class's model
#'   against the rest).
#' @param new_levels What to do with factor levels training never saw:
#'   `"predict"` (the default) gives each its own new direction of the input
#'   space (the activation falls back towards the prior's, and the
#'   probabilities towards the bias's), with one warning; `"error"` refuses
#'   them. See [predict.gpsvm_regression()].
#' @param se.fit For `type = "link"` and `method = "tap"`: also return the
#'   posterior standard deviation of the activation (a vector or matrix like
#'   the activation). The naive method has no posterior variance.
#' @inheritParams predict.gpsvm_regression
#' @param ... Not used; unknown arguments are an error.
#' @return A factor, vector or matrix with one element or row per row of
#'   `newdata`; with `se.fit = TRUE` a list with `fit` and `se.fit`. With
#'   `newdata = NULL` and a formula fit with `na.action = na.exclude`, the
#'   cases left out of the fit get `NA`, as in [stats::predict.lm()].
#' @details The probabilities are those of each method's approximation (see
#'   [gpc()]). With two classes both lie in \eqn{[\kappa, 1 - \kappa]}; with
#'   more, the K one-vs-rest probabilities are divided by their sum.
#' @examples
#' set.seed(1)
#' x <- matrix(rnorm(100), 50, 2)
#' y <- factor(ifelse(x[, 1] > 0, "b", "a"))
#' fit <- gpc(x, y)
#' predict(fit, rbind(c(-1, 0), c(0, 0), c(1, 0), c(NA, 0)), type = "prob")
#' predict(fit, rbind(c(-1, 0), c(1, 0)), type = "link", se.fit = TRUE)
#' @export
predict.gpsvm_gpc <- function(object, newdata = NULL, type = c("class", "prob", "link"),
                              se.fit = FALSE, na.action = stats::na.pass,
                              new_levels = c("predict", "error"), ...) {
  .check_dots_empty(...)
  if (inherits(newdata, "gpsvm_partitions") || (is.null(newdata) && !is.null(object$partitions))) {
    return(.predict_partitions(object, newdata, match.call(), parent.frame()))
  }
  type <- .match_choice(type)
  new_levels <- .match_choice(new_levels)
  .check_flag(se.fit, "se.fit")
  if (se.fit && (type != "link" || !inherits(object, c("gpsvm_gpc_tap", "gpsvm_gpc_joint")))) {
    .stop("'se.fit = TRUE' needs type = \"link\" and a fit with method = \"tap\"")
  }
  .classif_predict(object, newdata, function(object, x, f) {
    if (se.fit) return(list(fit = f, se.fit = .gpc_link_se(object, x)))
    switch(type,
      link = f,
      prob = .gpc_prob(object, x, f),
      class = .gpc_class(object, x, f))
  }, na.action, new_levels)
}

# The classes: with three or more, the most probable one (the first on
# ties; the models' activations can order them otherwise, their variances
# differing); with two, the activation's sign, that of p - 1/2.
.gpc_class <- function(object, x, f) {
  if (length(object$levels) == 2L && !.is_joint(object)) return(.classif_class(object, f))
  p <- .gpc_prob(object, x, f)
  lev <- object$levels
  stats::setNames(factor(lev[max.col(p, ties.method = "first")],
                         levels = object$response_levels %||% lev), rownames(x))
}

# Posterior standard deviations of the TAP activations, shaped like them.
.gpc_link_se <- function(object, x) {
  if (.is_joint(object)) {
    sd <- sqrt(.joint_moments(object, x)$variance)
    return(matrix(sd, length(sd), length(object$levels),
                  dimnames = list(rownames(x), object$levels)))
  }
  se <- lapply(.binary_models(object), function(m) sqrt(.gpc_tap_moments(m, x)$variance))
  if (!.is_multiclass(object)) return(stats::setNames(se[[1L]], rownames(x)))
  .decision_matrix(object$models, se, rownames(x))
}

.title.gpsvm_gpc_tap <- function(object) "Gaussian process classifier (TAP mean field / EP)"
.title.gpsvm_gpc_naive <- function(object) "Gaussian process classifier (naive mean field)"
.model_label.gpsvm_gpc_tap <- function(object) "gpc (TAP mean field / EP)"
.model_label.gpsvm_gpc_naive <- function(object) "gpc (naive mean field)"

# The lines print() shows after the kernel and the classes: the settings
# (each one-vs-rest model's own after a search), each model's embedding
# strengths and evidence, and the inducing inputs (the searches are the plan's).
.model_lines.gpsvm_gpc <- function(object, digits) {
  models <- .binary_models(object)
  per_model <- length(models) > 1L && !is.null(models[[1L]]$optimization)
  settings <- if (per_model) {
    sprintf("bias variance = %s; %s chosen per model by the EP evidence",
            format(object$bias_variance), .searched_names(models[[1L]]$optimization))
  } else {
    sprintf("noise variance = %s, flip probability kappa = %s, bias variance = %s",
            format(object$noise), format(object$kappa), format(object$bias_variance))
  }
  strengths <- vapply(seq_along(models), function(k) {
    m <- models[[k]]
    sprintf("%s%salpha in [%.3g, %.3g]%s",
            if (length(models) > 1L) sprintf("%s vs rest: ", names(models)[k]) else
              "embedding strengths ",
            if (per_model) .format_searched_settings(m) else "",
            .smallest_strength(m$alpha), max(m$alpha),
            if (inherits(m, "gpsvm_gpc_tap")) sprintf(", log evidence (EP) = %.6g",
                                                      m$log_evidence) else "")
  }, character(1))
  pool <- object$joint_pool
  c(settings, strengths, .inducing_line(models[[1L]]),
    if (!is.null(pool)) {
      joint <- pool$fit
      sprintf("pooled with one joint model (weight %.3f): sigma = %s, noise variance = %s",
              pool$weight, format(joint$kernel$sigma %||% NA, digits = digits),
              format(joint$noise, digits = digits))
    })
}

# The smallest embedding strength as print() shows it: 0 where its size is
# below 1e-9 of the largest (EP's are positive, but a tiny one formed by an
# inducing-point fit as a difference of larger terms rounds below 0).
.smallest_strength <- function(alpha) {
  smallest <- min(alpha)
  if (abs(smallest) < 1e-9 * max(abs(alpha))) 0 else smallest
}

# tidy() and glance() (tidiers.R): every positive embedding strength is a
# support point; the evidence of a two-class TAP fit, NA otherwise.
.point_roles.gpsvm_gpc <- function(model) ifelse(model$alpha > 0, "support", "none")
.glance_evidence.gpsvm_gpc <- function(x) {
  .evidence_columns(if (inherits(x, "gpsvm_gpc_tap") && !.is_multiclass(x)) logLik(x))
}
.glance_columns.gpsvm_gpc <- function(x) data.frame(method = x$method, stringsAsFactors = FALSE)

# plot() of two classes (classif-plot.R): the contours where the
# probability of the second class is 0.1 and 0.9 (dashed).
.plot_binary.gpsvm_gpc <- function(object, surface) {
  grid <- length(surface$g1)
  keep <- surface$keep
  p <- .gpc_prob(object, surface$x, if (is.null(keep)) surface$f else surface$f[keep])[, 2L]
  graphics::contour(surface$g1, surface$g2, matrix(.pad_rows(p, keep), grid, grid),
                    levels = c(0.1, 0.9), add = TRUE, lty = 2)
}

# Leave-one-out (loo.R): the naive method's eqs. (17.41)-(17.42); TAP's
# cavity mean is its posterior mean of the activation without the case.
# Exact refits start from the full fit's alpha, or its EP sites.
.loo_approx.gpsvm_gpc_naive <- function(model) {
  cpp_alpha_loo_approx("naive", .gpc_model(model), model$x, model$y, unclass(model$control),
                       model$alpha)
}
.loo_approx.gpsvm_gpc_tap <- function(model) model$y * model$cavity_mean
.loo_approx_label.gpsvm_gpc_tap <- function(model) "TAP cavity means"
.loo_refits.gpsvm_gpc_naive <- function(model, which) {
  cpp_alpha_loo_refits("naive", .gpc_model(model), model$x, model$y, unclass(model$control),
                       model$alpha, which)
}
.loo_refits.gpsvm_gpc_tap <- function(model, which) {
  cpp_gpc_tap_loo_refits(.gpc_model(model), model$x, model$y, unclass(model$control),
                         model[c("site_precision", "site_nu")], which)
}
.loo_exact_refusal.gpsvm_gpc_tap <- function(model) {
  ran_on <- if (isTRUE(attr(model$inducing, "low_rank"))) "its low-rank factorisation" else
    if (isTRUE(attr(model$inducing, "approximation"))) "a FITC approximation of it"
  if (is.null(ran_on)) return(NULL)
  sprintf(paste("exact leave-one-out needs the dense kernel matrix, and this fit ran on",
                "%s: refit with control = gpc_control(rank_tol = 0)"), ran_on)
}

# The settings one model's evidence search chose, for print().
.format_searched_settings <- function(model) {
  sigma <- if (is.null(model$kernel$input_widths)) model$kernel$sigma
  sprintf("%snoise = %.4g, kappa = %.3g; ",
          if (is.null(sigma)) "" else sprintf("sigma = %.4g, ", sigma), model$noise, model$kappa)
}

#' Summarise a Gaussian process classifier
#'
#' Adds to the printed fit the training confusion table (or, where it is
#' wider than the console, each class's cases and errors; the table is in
#' the summary's `training$table`) and the approximate leave-one-out error:
#' eqs. (17.41)-(17.42) for the naive method (one inverse of an n by n
#' matrix), the cavity means, which come with the fit, for TAP.
#'
#' @param object A fit from [gpc()].
#' @param x A `summary.gpsvm_gpc` object.
#' @param ... Not used.
#' @return An object of class `summary.gpsvm_gpc`.
#' @examples
#' set.seed(1)
#' x <- matrix(rnorm(100), 50, 2)
#' y <- factor(ifelse(x[, 1] + rnorm(50, sd = 0.3) > 0, "b", "a"))
#' summary(gpc(x, y))
#' @export
summary.gpsvm_gpc <- function(object, ...) {
  .check_dots_empty(...)
  .validate_fit(object)
  structure(list(fit = object, training = .classif_training(object),
                 loo = loo_error(object, "approx")),
            class = "summary.gpsvm_gpc")
}

#' @rdname summary.gpsvm_gpc
#' @export
print.summary.gpsvm_gpc <- function(x, ...) {
  print(x$fit)
  writeLines(as.character(.plan_cost_line(x$fit$plan)))
  .print_training(x$training)
  cat(sprintf("Approximate leave-one-out error: %.4f (%d of %d)\n", x$loo$error, x$loo$count,
              length(x$loo$margins)))
  invisible(x)
}

#' Evidence of a TAP Gaussian process classifier
#'
#' The expectation-propagation (TAP) approximation to the log marginal
#' likelihood \eqn{\log p(y)} of a two-class [gpc()] fit with
#' `method = "tap"`, for comparing kernels, noise levels and flip
#' probabilities; for a joint fit of K classes (`multiclass = "joint"`), the
#' variational lower bound on \eqn{\log p(y)}. The naive mean field gives
#' none, and neither do one-vs-rest fits of three or more classes, whose K
#' models are not a model of the labels (their evidences are in
#' `fit$models[[k]]$log_evidence`).
#'
#' @param object A fit from [gpc()] with `method = "tap"` and two classes.
#' @param ... Not used.
#' @return A `"logLik"` object with `nobs` and `df`, the number of
#'   hyperparameters estimated from the labels: those an evidence search
#'   chose (by default the width and the noise, so 2), none when the call
#'   gives them or `optimize = FALSE` (a width chosen from the inputs alone,
#'   by the rule of `rbf_kernel()`, does not look at the labels).
#' @examples
#' set.seed(1)
#' x <- matrix(rnorm(100), 50, 2)
#' y <- factor(ifelse(x[, 1] > 0, "b", "a"))
#' sapply(c(0.5, 1, 2), function(s) logLik(gpc(x, y, rbf_kernel(s), noise = 0.1)))
#' logLik(gpc(x, y))  # width and noise chosen by the evidence: df = 2
#' @export
logLik.gpsvm_gpc <- function(object, ...) {
  .check_dots_empty(...)
  .validate_fit(object)
  if (!inherits(object, c("gpsvm_gpc_tap", "gpsvm_gpc_joint"))) {
    .stop(paste("logLik() needs a gpc() fit with method = \"tap\";",
                "the naive mean field gives no evidence"))
  }
  if (.is_multiclass(object)) {
    .stop(paste("logLik() needs a two-class or a joint fit: the one-vs-rest models of a fit",
                "with", length(object$levels), "classes are not a joint model of its labels",
                "(multiclass = \"joint\" is)"))
  }
  # the df rule of every model (?regression-methods): what a search by
  # evidence chose; the labels are not scaled
  .as_logLik(object$log_evidence, df = .evidence_df(length(object$optimization$estimate)),
             nobs = nobs(object))
}
