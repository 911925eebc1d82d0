#' Relevance vector machine regression
#'
#' Fits Tipping's (2001) relevance vector machine: the model
#' \eqn{y = w_0 + \sum_j w_j k(x, x_j) + e}, \eqn{e \sim N(0, \sigma^2)},
#' with an independent prior \eqn{w_i \sim N(0, 1/\alpha_i)} on every weight
#' and \eqn{\alpha}, \eqn{\sigma^2} chosen by maximising the marginal
#' likelihood (type-II maximum likelihood). Most \eqn{\alpha_i} diverge and
#' their basis functions drop out; the training points kept are the
#' *relevance vectors*. This is the smooth RVM of [srvm()] with the penalty
#' weight \eqn{\lambda = 0}. (kernlab has an `rvm()` too: attached after
#' gpsvm, it masks this one, and `gpsvm::rvm()` calls this one.)
#'
#' The fit uses the fast marginal-likelihood algorithm of Tipping and Faul
#' (2003): it starts from the bias alone and, at each step, adds, re-estimates
#' or deletes the one basis function that raises the marginal likelihood most
#' (the single-\eqn{\alpha} optimum is closed-form). At a fixed
#' \eqn{\sigma^2} such a step changes one \eqn{\alpha}, and the posterior of
#' the kept weights follows by a rank-one update. \eqn{\sigma^2} is
#' re-estimated at every fifth step (Tipping and Faul's schedule), or sooner
#' when it would move by more than 0.1\%, and the posterior is then
#' refactorised by Cholesky; convergence is always judged at the
#' re-estimated \eqn{\sigma^2}. The bias \eqn{w_0} is always kept (its
#' \eqn{\alpha} may grow to the pruning threshold, which makes it
#' practically zero).
#'
#' Convergence: no basis function can be added or deleted with a gain, and
#' every kept \eqn{\log \alpha_i} and \eqn{\log \sigma^2} would change by less
#' than `control$tol`; or no step can raise the log marginal likelihood by
#' more than `control$tol_evidence`; or nothing can enter or leave and the
#' log marginal likelihood changed by less than `control$tol_evidence`. A
#' basis function whose optimal \eqn{\alpha} exceeds `control$prune_alpha`
#' (for targets divided by their root mean square, so the threshold does not
#' depend on the units of `y`) counts as absent.
#'
#' With the default `scale = TRUE` the inputs and the response are
#' standardised before fitting, as by `e1071::svm()` (see "Scaling" in
#' [svr()]); the default `rbf_kernel()` gets its width from the scaled
#' inputs ([kernels]). The weights, \eqn{\alpha} and \eqn{\sigma^2} then
#' refer to the scaled data, while everything the methods return is in the
#' data's units ([regression-methods], [predict.gpsvm_regression()]).
#'
#' @section Prediction intervals: The sparse model's own error bars leave
#'   out what the pruning removed: a pruned basis function carries no
#'   variance, so they narrow wherever the kept functions are flat, and most
#'   far from the data. `predict()` gives instead the latent variance of the
#'   model augmented at each new input \eqn{z} by one more basis function,
#'   \eqn{k(\cdot, z)}, whose weight has the response's variance as its prior
#'   variance (Rasmussen and Quinonero-Candela, 2005): near the relevance
#'   vectors it adds little, far from the data the variance returns to the
#'   response's, as a Gaussian process's does. The mean stays the sparse
#'   fit's, so point predictions and derivatives are those of the fit.
#'
#'   A new target's interval adds the noise, its level integrated out: at
#'   the fitted \eqn{\alpha}, the posterior of \eqn{\log \sigma^2} under a
#'   flat prior is replaced by the Gamma posterior of \eqn{1 / \sigma^2}
#'   with the same mode and curvature, which gives Student's t whose scale
#'   is that mode and whose degrees of freedom are \eqn{\nu = -2 L''},
#'   \eqn{L} the log evidence as a function of \eqn{\log \sigma^2}; at the
#'   fitted noise \eqn{\nu = n - tr(S^2) - 2 r' S r / \sigma^2}, with
#'   \eqn{S = H \Sigma H' / \sigma^2} the hat matrix and \eqn{r} the
#'   residuals, close to the residual degrees of freedom \eqn{n - tr(S)}
#'   that [stats::predict.lm()] would use. With `scale = TRUE` the scaling
#'   estimated the response's mean as well; it is integrated out under a
#'   flat prior (the restricted likelihood, the evidence with the bias's
#'   precision at 0), which raises the noise level and lowers \eqn{\nu} by
#'   about one observation each. A fit to one observation so centred has
#'   nothing left to estimate the noise from, and its prediction interval is
#'   an error that says so (one observation on the data as given gets an
#'   interval of astronomical width).
#'
#'   By default these intervals are then calibrated by cross-validation
#'   (`calibration_folds`; 5 folds from 10 observations), as every
#'   regression model's are (see [predict.gpsvm_regression()]), the refits
#'   choosing the pruning, the noise level and, where the fit's was chosen,
#'   the kernel afresh. Leave-one-out at the fitted hyperparameters would not
#'   do: the precisions were chosen with every target in, and there the
#'   model's standardised residuals look calibrated; only refits that choose
#'   them again show how far the choice adapts to the training targets. The
#'   five refits make the fit several times as slow ("Performance" below), so
#'   beyond 500 observations (size rule `calibration_max_n_rvm`) the
#'   default calibrates on 500 evenly spaced rows, and [print()] says so.
#'   The widening those refits ask for is weighted by 500 / \eqn{n}, since
#'   the model's own intervals come closer to their level on more rows.
#'   `fit$interval_calibration` holds the record.
#'
#'   The model's own intervals (`calibration_folds = 0`) are too narrow:
#'   the evidence that prunes the basis functions and sets the noise is
#'   maximised over one precision per basis function, and it fits part of
#'   the noise (Rasmussen and Quinonero-Candela found the same: sparsity
#'   costs predictive accuracy). The remedies within the model (integrating
#'   the noise level, as above, or the \eqn{\alpha}'s too; a Gamma
#'   hyperprior on the \eqn{\alpha}'s; a wider kernel, which keeps fewer
#'   functions) do not close the gap ("Performance" below); the
#'   calibration does. [interval_coverage()] shows how a fit's intervals
#'   hold.
#'
#'   A fit warns when it nearly interpolates: when its effective number of
#'   parameters exceeds half the observations. Its noise variance is then
#'   near zero and, unless the data are almost free of noise, its intervals
#'   hold too few new targets. A formula's factor columns can bring this
#'   about at the data-driven width, where a wider kernel helps
#'   ("Performance" below).
#' @section Noise that varies with the inputs: With `noise = "varying"` the
#'   noise variance of an observation at \eqn{x} is \eqn{\sigma^2 \exp(h(x))},
#'   \eqn{h(x) = \sum_j \theta_j k_h(x, z_j)} on up to 20 centres \eqn{z_j}
#'   (chosen among the scaled inputs by the rule of [inducing-points]), with
#'   a Gaussian kernel \eqn{k_h} and the prior
#'   \eqn{\theta \sim N(0, 4 K_{zz}^{-1})}: \eqn{h} is a low-rank Gaussian
#'   process whose prior sd is 2 (a factor \eqn{e^2} in the noise variance).
#'   At given \eqn{h} the model is the RVM on rows divided by the noise sd,
#'   which the fast algorithm fits as before; \eqn{\theta} is taken to its
#'   posterior mode by Fisher scoring on the evidence, each step followed by a
#'   refit of the \eqn{\alpha}'s and \eqn{\sigma^2}. The width of
#'   \eqn{k_h} is 1, 3 or 10 times the data-driven width of the inputs, the
#'   one of highest evidence with \eqn{\theta} integrated out by Laplace's
#'   method. That evidence against the constant model's is the log Bayes
#'   factor [print()] and the plan ([gpsvm_plan()]) show; `noise = "auto"`
#'   fits the noise that varies only where it exceeds 3 (as [mfsvr()]'s:
#'   "strong" evidence on Kass and Raftery's scale), and otherwise returns
#'   the constant fit exactly. Where it exceeds 3, `"auto"` asks the same
#'   of the two models with the basis held to the constant fit's relevance
#'   vectors (`fit$noise_model$basis_log_evidence`), and that factor
#'   decides: re-estimating the
#'   \eqn{\alpha}'s beside a noise function lets the noise shrink at a few
#'   rows whose deviations new basis functions then take, a gain in evidence
#'   that says nothing of the noise. And where either fit nearly
#'   interpolates (more effective parameters than half the rows, see
#'   "Prediction intervals") its evidence no longer measures the noise:
#'   `"auto"` keeps the constant fit and says so
#'   (`fit$noise_model$interpolates`). Before it searches, `"auto"` takes
#'   the log Bayes factor that Newton's first step from constant noise
#'   predicts at each width (the quadratic model of the evidence at
#'   \eqn{\theta = 0}, less its Occam term; no fit); where that is below 0
#'   at every width, the noise is plainly constant, no search is made, and
#'   the fit says so (`fit$noise_model$screened`; print() and the plan give
#'   the predicted factor). The constant fit, shared by the widths, is made
#'   once. Predictions, intervals, the
#'   distribution of `predict(type = "distribution")`, leave-one-out and the
#'   calibration (whose refits choose the noise model again) use the noise
#'   variance at each input; `sigma()` and `noise_variance` give
#'   \eqn{\sigma^2}, the geometric mean of the noise variances over the
#'   training rows.
#'
#'   Why this form: the "most likely heteroscedastic GP" (Kersting et al.,
#'   2007) has no joint objective, so no evidence to weigh it against
#'   constant noise, and the variational heteroscedastic GP (Lazaro-Gredilla
#'   and Titsias, 2011) and hetGP (Binois, Gramacy and Ludkovski, 2018) need
#'   the full GP's algebra at every step. The relevance vector machine's
#'   evidence at given noise weights is exact, its gradient in the log noise
#'   is the expected squared residual (as hetGP's), and a low-rank prior
#'   keeps the Laplace evidence, the judge against constant noise, cheap.
#'
#'   The varying model refits the sparse model 10-25 times at each of three
#'   widths, and each scoring step forms the \eqn{n \times n} hat matrix
#'   (\eqn{O(n^2)} memory). So the default stays `"constant"`, and `"auto"`
#'   asks the evidence, as above ("Performance" below).
#' @section Cost: The algorithm holds the \eqn{n \times (m + 1)} design
#'   matrix of the \eqn{m} candidate basis functions (8 n (m + 1) bytes) and
#'   the products of the kept ones. For \eqn{r} kept functions a step
#'   costs \eqn{O(m r)}, a re-estimate of \eqn{\sigma^2} \eqn{O(m r^2)}, and
#'   \eqn{O(n m)} more when a function enters. With every input a
#'   candidate (\eqn{m = n}) this is \eqn{O(n^2)} memory, 3.2 GB at
#'   \eqn{n = 20000}; the default offers at most 1000 (\eqn{O(n)} memory;
#'   the size rule `basis_chosen` of [gpsvm_size_policy()]). The relevance
#'   vectors are then chosen among the candidates only: raise `basis` when
#'   the fit keeps nearly all of them (see `fit$basis`). A prediction with a standard
#'   error or an interval costs \eqn{O(n r)} per new input, since the
#'   augmenting basis function (see "Prediction intervals") is evaluated at
#'   every training input; the mean alone costs \eqn{O(r)}. The number of
#'   steps grows with the number of functions kept ("Performance" below).
#'
#' @section Performance:
#' Measured up to 2026-12-04 (gpsvm 0.1.0, development version, on a 2-core
#' machine; `bench/bench-realdata.R`, `bench/bench-rvm-remedies.R` and
#' `bench/bench-varying-noise.R` in the sources).
#'
#' * Calibration (2026-12-03, the widening scale of
#'   [predict.gpsvm_regression()], every model with constant noise): on 20
#'   held-out 70/30 splits of mlbench's BostonHousing, Friedman 1-3, Ozone
#'   and PimaIndiansDiabetes2 and of six small sets of 21-35 training rows
#'   (mtcars, cars, trees, swiss, LifeCycleSavings, attitude), the
#'   calibrated 95% intervals of `rvm()` held 0.91-0.98 of the held-out
#'   targets and its 80% intervals 0.72-0.87; those of [srvm()] 0.91-0.98
#'   and 0.71-0.86, of [mfsvr()] 0.93-0.98 and 0.74-0.85, of [svr()]
#'   0.93-0.99 and 0.72-0.85. The model's own intervals held 0.88-0.95 and
#'   0.70-0.83 (`rvm()`), 0.86-0.95 and 0.68-0.83 ([srvm()]); the
#'   calibration widened `rvm()`'s 95% intervals by 1.02-1.33 times. By the
#'   95% interval score (width plus 40 times the miss) `rvm()`'s intervals
#'   were 1.00-1.09 times the best of six fits on the small sets (`srvm()`
#'   1.00-1.11), and 1.01-1.85 on the larger ones, where [mfsvr()]'s default
#'   was the best on four and `mfsvr(optimize = TRUE)` on two. The five refits made a fit 4.0 to 4.5 times as
#'   slow on few rows (0.016-0.050 s against 0.004-0.011 s) and up to 7
#'   times on more (300 rows of Friedman 1: 0.46 s against 0.064 s).
#' * The remedies within the model, on the six small sets: integrating the
#'   noise level raised the 95% coverage by 0.00-0.02 over Student's t at
#'   the fitted noise; integrating the \eqn{\alpha}'s as well moved it by
#'   -0.02 to +0.01; a Gamma hyperprior on the \eqn{\alpha}'s (rate 0.01)
#'   gave 0.85-0.93, and one of shape 0.5 as well 0.86-0.98 at a 4-19%
#'   higher RMSE; at twice the data-driven width the 95% intervals held
#'   0.87-0.95.
#' * Near interpolation: on mlbench's Ozone with `V4 ~ .` (142 training
#'   rows) `rvm()` kept 138 relevance vectors and its 95% intervals held 34%
#'   of the held-out targets; with `rbf_kernel(4)` it kept 20 and they held
#'   84%.
#' * Noise that varies: on 20 splits of `MASS::mcycle` (93 training rows)
#'   and of simulated data whose noise sd grows tenfold (200 rows),
#'   `noise = "auto"` chose the varying noise on every split and its
#'   calibrated 95% intervals held 0.95-0.98 in each third of the input
#'   range (constant noise: 0.86-1.00). Against the default
#'   (`bench/bench-noise-auto.R`, 10 splits 70:30, the default calibration,
#'   2026-12-04, machine busy): constant noise kept on every split of
#'   `women`, `faithful`, a sine, `cars`, `trees` and Friedman 1 at 130 and
#'   400 rows (log score within 0.01 of the default's; CPU 1.4-7 times, 37
#'   at 400 rows, where searches reached factors up to 22 that the checks
#'   described above turned down); varying noise on every split of
#'   `mcycle` (log score -0.43), the simulated set (-0.44),
#'   `ChickWeight` (-0.77) and Boston housing (4 splits, -0.13, se 0.03),
#'   and on 6 of 10 of `airquality` (+0.05, se 0.12), CPU 3.6-47 times (47:
#'   Boston housing, 354 rows; 58 on 2520 training rows of the simulated
#'   set). Hence the default `"constant"`.
#' * Time: on mlbench's Friedman 1 (`calibration_folds = 0`) a fit took
#'   2.5 s at \eqn{n = 500}, 13 s at 1000 and 16 s at 2000 (every input a
#'   candidate) with R's
#'   reference BLAS (`kernlab::rvm()`: 2.5, 14 and 97 s); 1000 candidates at
#'   \eqn{n = 20000} about three seconds and 250 MB on two-dimensional
#'   inputs.
#' * The kernel choice: on four 70/30 splits of each of 19 data sets the
#'   held-out RMSE of `rvm()` fell to 0.34, 0.53, 0.58, 0.78, 0.81 and 0.95
#'   times that of the Gaussian kernel alone on `MASS::UScereal`, `trees`,
#'   `stackloss`, `attitude`, `mtcars` and `cars`, and rose by 8% on Ozone
#'   and 6% on `rock`; judged by the model's own evidence instead, the
#'   Gaussian kernel won on 4 of 10 splits of `trees`, for a held-out RMSE
#'   1.8 times the linear kernel's. A default fit took 1.0 to 4.8 times as
#'   long as one with the Gaussian kernel given.
#' * `optimize`: on held-out splits of Boston housing, Friedman 1-3 and
#'   Ozone the width the evidence chose gave a lower RMSE than the
#'   data-driven width on Friedman 2 and a 14-62% higher one on the others,
#'   with 95% intervals that held 26-61% of the held-out targets, against
#'   82-94%.
#'
#' @inheritParams mfsvr
#' @param x Inputs: a numeric vector, matrix or data frame (one row per
#'   observation), or for the formula method a model formula.
#' @param kernel A kernel from [rbf_kernel()], [poly_kernel()] or
#'   [linear_kernel()]; the default `rbf_kernel()` chooses its width from the
#'   (scaled) inputs by kernlab's sigest rule ([kernels]). When the call gives
#'   no `kernel`, on standardised data of more than \eqn{p + 2} and at most
#'   10000 observations and without `optimize`, the linear kernel
#'   `poly_kernel(1, scale = 1/p, offset = 0)` on the \eqn{p} scaled input
#'   columns is weighed against it, as in [mfsvr()], and the model is fitted
#'   with the one chosen. The judge is the evidence of a Gaussian process with
#'   each kernel, its amplitude and noise variance at their maximum (on at most
#'   500 evenly spaced rows), not the model's own evidence: maximised over one
#'   precision per basis function, that rewards the more flexible Gaussian
#'   basis. `fit$kernel_choice` records the two log evidences, `print()` the
#'   log Bayes factor, and `logLik()` counts the choice as one estimated
#'   parameter. A response nearly linear in its inputs is where Gaussian basis
#'   functions extrapolate worst, and the choice costs an eigendecomposition of
#'   each kernel's matrix ("Performance" in [rvm()]). e1071's second width,
#'   which [mfsvr()] weighs too, is not weighed here. A kernel given,
#'   `rbf_kernel()` too, stays as given.
#' @param control A list from [rvm_control()].
#' @param optimize If `TRUE` (or `"sigma"`), choose the width of an
#'   [rbf_kernel()] by maximising the log marginal likelihood (the evidence
#'   at the learned \eqn{\alpha} and \eqn{\sigma^2}): a grid of 9 widths
#'   from \eqn{w/4} to \eqn{4 w} (\eqn{w} the data-driven width of
#'   [kernels]), refined by golden sections to 5% (the grid and the
#'   tolerance are `search`'s, [search_control()]). The search is recorded in
#'   `fit$optimization` (see [mfsvr()]); a warning says when it fails. The
#'   evidence of these models tends to favour narrow kernels with many
#'   relevance vectors, which are slow to fit and predict worse
#'   ("Performance" in [rvm()]); compare held-out errors before relying on
#'   it. A warning says when the width
#'   found makes the fit nearly interpolate (see "Prediction intervals").
#' @param basis The number of training inputs offered as centres of basis
#'   functions, or `NULL`: every distinct input up to 1000 of them, 1000
#'   chosen ones beyond (the size rule `basis_chosen` of
#'   [gpsvm_size_policy()]). Fewer than all are chosen greedily on the
#'   scaled inputs with the fit's kernel, each the input whose kernel
#'   column is worst explained by those chosen before (the rule of [inducing-points]; deterministic, and
#'   duplicated inputs are never chosen twice, so fewer may be used). See
#'   "Cost".
#' @param calibration_folds The number of cross-validation folds that
#'   calibrate the prediction intervals (see "Prediction intervals" and
#'   [predict.gpsvm_regression()]): `NULL`
#'   (the default) 5 from 10 observations (beyond 500 on 500 evenly spaced
#'   rows) and none below, `TRUE`
#'   5, `FALSE` or 0 the model's own intervals, or a count from 2 to the
#'   number of observations (as many as there are is leave-one-out with
#'   refits). At least 10 observations are needed.
#' @param noise The noise model: `"constant"` (the default) one noise
#'   variance \eqn{\sigma^2}; `"varying"` a variance \eqn{\sigma^2
#'   \exp(h(x))} that varies smoothly with the inputs; `"auto"` varying where
#'   its evidence is higher by a log Bayes factor above 3 (see "Noise that
#'   varies with the inputs").
#' @param data,subset,na.action As in [stats::lm()]; with
#'   `na.action = na.exclude`, [fitted()], [residuals()] and [predict()] are
#'   padded with `NA` at the rows left out.
#' @param ... For the formula method, arguments passed to the default method;
#'   otherwise unused (an error if given).
#' @return An object of class `c("gpsvm_rvm", "gpsvm_regression")`: a list
#'   with, in the units of the fitted (scaled) data,
#'   * `coefficients`: posterior means of the kept weights, the bias first;
#'   * `prior_precision`: their ARD precisions \eqn{\alpha_i} (bias first);
#'     `noise_variance`: \eqn{\sigma^2}; `lambda`: 0;
#'   * `Sigma`: the posterior covariance of the kept weights;
#'   * `x` (the scaled inputs) and `log_evidence` (the log marginal
#'     likelihood of the scaled response; [logLik()] gives it for the data
#'     as given);
#'
#'   and `relevance_vectors` (row indices of the training points kept),
#'   `basis` (the rows offered as candidate centres, or `NULL` for all),
#'   `y`, `fitted.values` and `residuals` in the data's units, `kernel` (with
#'   the width used), `scaling` and `response_scaling` (`NULL` with
#'   `scale = FALSE`), `control`, `convergence` (`converged`, `iterations`,
#'   `change` (the last largest change of a log hyperparameter), `tol`,
#'   `reason`), `optimization` (the record of the search for the width, with
#'   `optimize`), `kernel_choice` (when the kernel was chosen, a data
#'   frame of the kernels weighed, by `rule` and `sigma`, and the
#'   `log_evidence` of a Gaussian process with each, see `kernel`),
#'   `interval_calibration` (see "Prediction intervals"; absent
#'   without a calibration), `noise_model` (with `noise = "varying"` or
#'   `"auto"`: its `type`, the two `log_evidence`s, the noise function's
#'   `kernel`, `centres`, `theta` and `offset`; with `"auto"` also
#'   `basis_log_evidence` and `interpolates` where "Noise that varies with
#'   the inputs" says; `NULL` otherwise),
#'   `fit_time`, `call` and `fields` (see [hyperparameters()],
#'   "Fitted objects"); formula fits also `terms`, `xlevels`, `contrasts`,
#'   `na.action`, `variables` (the formula's variables as the data gave them).
#' @references Tipping, M. E. (2001). Sparse Bayesian learning and the
#'   relevance vector machine. *Journal of Machine Learning Research* 1,
#'   211-244.
#'
#'   Rasmussen, C. E. and Quinonero-Candela, J. (2005). Healing the relevance
#'   vector machine through augmentation. *Proceedings of the 22nd
#'   International Conference on Machine Learning*, 689-696.
#'
#'   Barber, R. F., Candes, E. J., Ramdas, A. and Tibshirani, R. J. (2021).
#'   Predictive inference with the jackknife+. *The Annals of Statistics*
#'   49, 486-507.
#'
#'   Kersting, K., Plagemann, C., Pfaff, P. and Burgard, W. (2007). Most
#'   likely heteroscedastic Gaussian process regression. *Proceedings of the
#'   24th International Conference on Machine Learning*, 393-400.
#'
#'   Lazaro-Gredilla, M. and Titsias, M. K. (2011). Variational
#'   heteroscedastic Gaussian process regression. *Proceedings of the 28th
#'   International Conference on Machine Learning*, 841-848.
#'
#'   Binois, M., Gramacy, R. B. and Ludkovski, M. (2018). Practical
#'   heteroscedastic Gaussian process modeling for large simulation
#'   experiments. *Journal of Computational and Graphical Statistics* 27,
#'   808-821.
#'
#'   Tipping, M. E. and Faul, A. C. (2003). Fast marginal likelihood
#'   maximisation for sparse Bayesian models. *Proceedings of the Ninth
#'   International Workshop on Artificial Intelligence and Statistics*.
#' @seealso [srvm()], [predict.gpsvm_regression()], [regression-methods],
#'   [plot.gpsvm_regression()]
#' @examples
#' fit <- rvm(mpg ~ wt + hp, data = mtcars)
#' fit
#' predict(fit, data.frame(wt = 3, hp = 150), interval = "prediction")
#' # sinc data on the scale given, the kernel width of ter Borg and Rothkrantz
#' set.seed(1)
#' x <- runif(50, -10, 10)
#' y <- sin(x) / x + rnorm(50, sd = 0.1)
#' fit <- rvm(x, y, kernel = rbf_kernel(1.6), scale = FALSE)
#' predict(fit, c(-1, 0, 1), interval = "confidence")
#' # noise that grows with the input, chosen by the evidence
#' if (requireNamespace("MASS", quietly = TRUE)) {
#'   fit <- rvm(accel ~ times, data = MASS::mcycle, noise = "auto", calibration_folds = 0)
#'   fit
#'   predict(fit, data.frame(times = c(10, 30)), interval = "prediction")
#' }
#' @export
rvm <- function(x, ...) UseMethod("rvm")

#' @rdname rvm
#' @export
rvm.default <- function(x, y, kernel = rbf_kernel(), control = rvm_control(), scale = TRUE,
                        optimize = FALSE, basis = NULL, search = search_control(),
                        calibration_folds = NULL, noise = "constant", ...) {
  .open_ledger()
  .check_dots_empty(...)
  noise <- .check_noise_choice(noise)
  weigh_linear <- missing(kernel)  # (the default's candidates, see ?rvm)
  .check_control(control, "rvm_control")
  if (!is.null(basis)) basis <- .check_count(basis, "basis", lower = 1L)
  .resolve_calibration_folds(calibration_folds, .Machine$integer.max, "rvm")  # its checks
  settings <- .search_settings(search, "width")
  resolved <- NULL  # the kernel at the data's width, before any choice
  fit <- .fit_regression(x, y, kernel, scale, .generic_call(match.call(), "rvm"),
                         function(x, y, kernel, scaling) {
    resolved <<- kernel
    control <- .resolve_control(control, .candidate_count(basis, x))
    .rvm_fit_candidates(function(kernel) {
      .rvm_optimize(x, kernel, optimize, control,
                    function(k, ctl) .rvm_fit(x, y, k, ctl, basis, noise), "rvm()", settings)
    }, kernel, x, y, scale, optimize, weigh_linear)
  })
  fit <- .with_calibration(fit, calibration_folds, function(x, y) {
    refit_at <- function(k) {
      .rvm_fit(x, y, k, fit$control, if (!is.null(basis)) min(basis, nrow(x)), noise)
    }
    .rvm_refit(fit, refit_at, resolved, x, y, scale, optimize, weigh_linear)
  })
  .with_plan(fit, "rvm():")
}

#' @rdname rvm
#' @export
rvm.formula <- function(formula, data, subset, na.action, ...) {
  .fit_formula(match.call(), parent.frame(), "rvm", rvm.default, ...)
}

#' Control settings for rvm()
#'
#' @param max_iter Maximum number of add/re-estimate/delete steps. `NULL`
#'   (the default) allows 10000, or four times the number of candidate
#'   centres offered (see `basis` in [rvm()]) when that is more: the steps a
#'   fit needs grow with them (a few per candidate). It is resolved when the
#'   model is fitted, and `fit$control` records the value used.
#' @param tol Convergence tolerance on the largest change of a kept
#'   \eqn{\log \alpha_i} and of \eqn{\log \sigma^2}.
#' @param tol_evidence The iteration also stops when no step can raise the
#'   log marginal likelihood by more than this (e.g. constant targets fitted
#'   exactly by the bias, whose own alpha is then free), or when no basis
#'   function can enter or leave and the log marginal likelihood changed by
#'   less than this in the last step (two nearly collinear columns trading
#'   weight).
#' @param prune_alpha A basis function whose \eqn{\alpha} would exceed this
#'   is left out (the targets are divided by their root mean square first).
#' @param sigma2_init Initial noise variance as a fraction of the variance
#'   of `y`.
#' @param min_sigma2 Floor of the noise variance, relative to the mean square
#'   of `y` (it keeps the evidence finite for targets the model fits
#'   exactly, such as a constant).
#' @return A list of class `gpsvm_rvm_control`.
#' @examples
#' rvm_control(tol = 1e-8)
#' @export
rvm_control <- function(max_iter = NULL, tol = 1e-6, tol_evidence = 1e-8, prune_alpha = 1e9,
                        sigma2_init = 0.1, min_sigma2 = 1e-10) {
  structure(list(
    max_iter = if (!is.null(max_iter)) .check_count(max_iter, "max_iter", lower = 1L),
    tol = .check_number(tol, "tol", lower = 0, open_lower = TRUE),
    tol_evidence = .check_number(tol_evidence, "tol_evidence", lower = 0),
    prune_alpha = .check_number(prune_alpha, "prune_alpha", lower = 0, open_lower = TRUE),
    sigma2_init = .check_number(sigma2_init, "sigma2_init", lower = 0, open_lower = TRUE),
    min_sigma2 = .check_number(min_sigma2, "min_sigma2", lower = 0, open_lower = TRUE)
  ), class = c("gpsvm_rvm_control", "gpsvm_control"))
}

# The control with max_iter's default for the candidates filled in (as stored).
.resolve_control.gpsvm_rvm_control <- function(control, candidates, ...) {
  control$max_iter <- control$max_iter %||%
    as.integer(min(.Machine$integer.max, max(10000, 4 * candidates)))
  control
}

# One fit of the fast RVM to (scaled) data with the noise model `noise`.
.rvm_fit <- function(x, y, kernel, control, basis = NULL, noise = "constant") {
  rows <- .rvm_basis_rows(basis, x, kernel)
  if (noise == "constant") .count_fit()
  fit <- if (noise != "constant") .rvm_fit_noise(x, y, kernel, control, rows, noise) else
    .new_rvm(cpp_rvm_fit(kernel, x, y, unclass(control), basis = rows), x, y, kernel, control,
             class = "rvm")
  fit$basis <- rows
  fit
}

# How many candidate centres a fit offers (.rvm_basis_rows() chooses them).
.candidate_count <- function(basis, x) {
  if (!is.null(basis)) return(.check_basis_count(basis, nrow(x)))
  min(sum(!duplicated(x)), .size_rule("basis_chosen"))
}

# A number of candidate centres, at most the n observations.
.check_basis_count <- function(basis, n) {
  if (basis > n) {
    .stop(sprintf("'basis' = %d exceeds the number of observations (%d); use at most %d",
                  basis, n, n))
  }
  basis
}

# The candidate centres (rows of x, increasing) for `basis` (NULL: the
# default), or NULL for every input.  The default offers each distinct input
# once (duplicates give equal columns, along whose alphas' flat direction
# srvm()'s joint update drifts) up to basis_chosen of them; beyond, that many
# chosen greedily as the inducing inputs are, so that the candidates grow
# with the data up to the rule and then stay as many.
.rvm_basis_rows <- function(basis, x, kernel) {
  n <- nrow(x)
  if (is.null(basis)) {
    distinct <- which(!duplicated(x))
    if (length(distinct) <= .size_rule("basis_chosen")) return(if (length(distinct) < n) distinct)
  }
  m <- if (is.null(basis)) .size_rule("basis_chosen") else .check_basis_count(basis, n)
  if (m == n) return(NULL)
  sort(.greedy_rows(kernel, x, m))
}

# The design [1, K(x, x_rv)] of the kept weights at the rows of x.
.rvm_design <- function(x, kernel, rv) {
  cbind(rep(1, nrow(x)), if (length(rv) > 0L) kernel_matrix(kernel, x, x[rv, , drop = FALSE]))
}

# The fitted object from the core's result (rvm and srvm).
.new_rvm <- function(core, x, y, kernel, control, class, penalty = NULL, noise_model = NULL) {
  active <- core$active                   # 0 = bias, j = training row j
  rv <- active[active > 0]
  names_w <- c("(Intercept)", if (!is.null(rownames(x))) rownames(x)[rv] else sprintf("x%d", rv))
  mu <- stats::setNames(core$mu, names_w)
  design <- .rvm_design(x, kernel, rv)
  fitted <- stats::setNames(drop(design %*% mu), rownames(x))
  fit <- list(
    coefficients = mu,
    relevance_vectors = rv,
    prior_precision = stats::setNames(core$alpha, names_w),
    lambda = core$lambda,
    noise_variance = core$sigma2,
    # symmetric to the last bit (the core's is to rounding), as a covariance
    Sigma = structure((core$Sigma + t(core$Sigma)) / 2, dimnames = list(names_w, names_w)),
    fitted.values = fitted,
    residuals = stats::setNames(y - fitted, rownames(x)),
    x = x, y = y, kernel = kernel, penalty = penalty,
    log_evidence = core$log_lik,
    control = control,
    convergence = core$convergence,
    noise_model = noise_model
  )
  .warn_not_converged(paste0(class, "()"), fit$convergence,
                      c("the change is the largest change of a log hyperparameter",
                        .evidence_rise(core$trace_log_lik, class)))
  .warn_interpolation(fit, paste0(class, "()"), design)
  structure(fit, class = c(if (class == "srvm") "gpsvm_srvm", "gpsvm_rvm", "gpsvm_regression"))
}

# For the warning of a fit that ran out of iterations: how much its log
# evidence rose over the last `last` (a few hundredths does not matter).
.evidence_rise <- function(trace, model, last = 100L) {
  k <- length(trace)
  if (k < 2L) return(NULL)
  from <- max(1L, k - last)
  sprintf("over the last %d iterations the log evidence rose by %.3g (%s_control(max_iter = ) allows more)",
          k - from, trace[k] - trace[from], model)
}
