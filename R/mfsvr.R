#' Mean-field support vector regression
#'
#' Fits the Bayesian reading of support vector regression of Gao, Gunn and
#' Harris (2002): a zero-mean Gaussian-process prior with covariance `kernel`
#' and the epsilon-insensitive likelihood
#' \deqn{p(t \mid f) = \frac{C}{2(\epsilon C + 1)} \exp(-C \max(|t - f| - \epsilon, 0)),}
#' whose posterior is approximated by the TAP mean-field method, which has
#' the same fixed point as expectation propagation (EP). The posterior mean
#' is \eqn{\sum_i k(x, x_i) w_i}, like an SVR's, and the model also gives
#' error bars for the latent function and for new targets, and the evidence
#' (marginal likelihood) for choosing `C`, `epsilon` and the kernel width.
#'
#' The default solver is EP (`mfsvr_control(algorithm = "ep")`), which
#' converges on every case tried, including ones where the paper's own
#' iteration does not; `algorithm = "paper"` runs the iteration of the
#' paper's section 4 (with an adaptive learning rate) and reaches the same
#' weights when it converges. Site precisions are stored rather than site
#' variances, so points deep inside the tube, whose site variance is
#' effectively infinite, are handled exactly.
#'
#' With `optimize = TRUE` the hyperparameters are chosen by maximising the EP
#' evidence over `log C`, `log epsilon` and, for [rbf_kernel()], `log sigma`,
#' by L-BFGS-B ([stats::optim()]) with the analytic gradient of the evidence
#' at the EP fixed point. The values passed in are the starting point (a
#' Gaussian kernel without a width starts from the data-driven width, see
#' [kernels]); an `epsilon` of 0 stays 0. With `optimize` a subset of
#' `c("C", "epsilon", "sigma")` only those are chosen and the others stay as
#' given (e.g. a kernel width fixed by the problem). The search stays within
#' ranges set by the data's scales: with \eqn{s} the standard deviation of
#' `y` and \eqn{w} the data-driven width, \eqn{C s \in [0.01, 10^4]},
#' \eqn{\epsilon / s \in [10^{-4}, 3]} and \eqn{\sigma / w \in [0.01, 100]}
#' (widened to hold the start). It stops when no component of the gradient
#' (in the log parameters, projected on the ranges) exceeds \eqn{10^{-3}}
#' per observation. Each evaluation is an EP fit warm-started from the
#' previous one; the start gets `control$max_iter` sweeps and later points
#' three times what the start needed (at least 60); points where EP does not
#' converge count as failures and the search steps back from them.
#' `fit$optimization` records the search: `start`, `estimate`, `lower`,
#' `upper` (the ranges), `log_evidence`, `gradient`, `at_bound`,
#' `evaluations`, `path` (a data frame with one row per point tried: the
#' values, the log evidence, its gradient, EP's sweeps and a status that says
#' why a point failed), `stopped` (why the search stopped, in words) and
#' `convergence` (with `change`, the largest gradient per observation, and
#' the `reason` for a stop that is not convergence). A warning says when the
#' search could not start, did not converge, or stopped at the end of a range
#' other than the lower end of `epsilon` (the Laplace limit
#' \eqn{\epsilon = 0}, which the evidence often approaches slowly). On some data the evidence rises without end as `C`
#' grows (with `epsilon` adjusting): the likelihood's limit `C = Inf` is
#' uniform noise on \eqn{[-\epsilon, \epsilon]}, and the data favour it; the
#' search then stops where the rise has become slow, and a warning says so.
#'
#' With `kernel = rbf_kernel(per_input = TRUE)` the search chooses a width
#' per input column instead of one `sigma` (automatic relevance
#' determination, [kernels]), each within a factor 100 of its start; an
#' input whose width reaches the upper end is one the evidence finds
#' irrelevant, and that bound does not warn. `fit$optimization$estimate`
#' names them `sigma[<column>]`, and `logLik()` counts each as estimated.
#' With `inducing`, the search runs on the FITC evidence and its gradient
#' by width, and the inducing inputs move with the widths ("Performance"
#' below for its held-out error, intervals and cost). A width per input is a
#' parameter per column, and with many columns for the rows (a formula
#' expands each factor into a column per level) the evidence can fit the
#' noise: the search warns when it chose a noise sd below 1% of the
#' response's; compare held-out errors with one width then.
#'
#' With the default `scale = TRUE` the inputs and the response are
#' standardised before fitting, as by `e1071::svm()` (see "Scaling" in
#' [svr()]): `C`, `epsilon` and the kernel then refer to the scaled data (so
#' `epsilon = 0.1` is a tenth of the response's standard deviation), and the
#' default `rbf_kernel()` gets its width from the scaled inputs ([kernels]);
#' `optimize` searches on that scale too. Everything the methods return is in
#' the data's units ([regression-methods], [predict.gpsvm_regression()]).
#'
#' `logLik()` is the EP approximation of the evidence (exact for one
#' observation): within 0.005 nats of numerical integration on problems of
#' three observations and within 0.02 nats of importance sampling on 30, in
#' the package's tests. [svr()] fits the same model, and its `logLik()` at
#' the same `C`, `epsilon` and kernel is this one.
#'
#' Where the evidence chose `C` (the default search, or `optimize` with
#' `"C"`) from at most `C_mixture_max_n` observations (200 by default: see
#' [gpsvm_size_policy()]), the prediction intervals integrate
#' over `C` with the evidence's weights, from fits at five values of `C`
#' around the one chosen (kept in `fit$C_mixture`); point predictions stay
#' those at the chosen `C` (see [predict.gpsvm_regression()]). The six
#' extra fits are warm-started from the chosen one's sites and cost four to
#' five fits at a fixed `C`.
#'
#' The mixture does not suffice on few rows: there its intervals held less
#' than their level ("Performance" below). From 10 observations the default
#' therefore calibrates the intervals by cross-validation
#' (`calibration_folds`; see [predict.gpsvm_regression()]), which brings
#' them near their level, at the price of five refits; beyond 100
#' observations (size rule `calibration_max_n_ep`) on 100 evenly spaced
#' rows, the widening they ask for weighted by 100/n, since the few
#' hyperparameters the evidence chooses adapt to their data less on more
#' rows.
#'
#' By default the evidence makes two more choices (see `bias` and
#' `kernel`): a constant offset of the regression function or none, and the
#' kernel among candidates (kernlab's sigest width, e1071's
#' \eqn{\gamma = 1/p}, a linear kernel, Matern kernels); what they changed
#' on benchmark data, and at what cost, is under "Performance".
#' `update(fit, C = 2)` evaluates the call again: `mfsvr()` weighs both
#' choices again at the new `C`, and `svr()` at a `C` given makes neither
#' (no offset, the sigest width); to refit the same model at another `C`,
#' give them: `update(fit, C = 2, bias = fit$bias_variance, kernel = k)`
#' with `k` the fit's kernel without the offset's constant (`k <-
#' fit$kernel; k$constant <- NULL`), whichever kernel won. [confint()] and
#' [evidence_curve()] keep the fit's own.
#'
#' The target noise variance used for prediction bands is
#' \eqn{2/C^2 + \epsilon^2(\epsilon C + 3)/(3(\epsilon C + 1))}, eq. (29) of
#' Gao, Gunn, Harris and Brown (2002); the mean-field paper's eq. (5.3) has a
#' different term that does not follow from the likelihood.
#'
#' @section Noise that varies with the inputs: With `noise = "varying"` the
#'   noise of an observation at \eqn{x} is the epsilon-insensitive noise of
#'   the fit's `C` and `epsilon` stretched by \eqn{\exp(l(x))}: its
#'   likelihood has \eqn{C e^{-l(x)}} and \eqn{\epsilon e^{l(x)}} (the
#'   shape \eqn{C\epsilon} kept, the scale moved, so that the noise can fall
#'   below the tube's width where the data are quiet). \eqn{l(x) = a + \sum_j
#'   \theta_j k_h(x, z_j)} with the noise basis and prior of [rvm()]'s varying
#'   noise (up to 20 centres, \eqn{\theta \sim N(0, 4 K_{zz}^{-1})} on the log
#'   noise variance \eqn{2 l}). `C`, `epsilon` and the kernel (with the
#'   default's choice of a width per input) are first chosen as with
#'   constant noise, so that `"auto"` returns the default fit where it keeps
#'   constant noise; then \eqn{(a, \theta)} go to their
#'   posterior mode by Newton's method on the EP evidence, whose gradient
#'   in \eqn{l(x_i)} is site \eqn{i}'s (at the EP fixed point), each step an
#'   EP fit at the new noise scales. The width of \eqn{k_h} is 1, 3 or 10
#'   times the data-driven width, the one of highest evidence with
#'   \eqn{\theta} integrated out by Laplace's method, and that evidence
#'   against the constant fit's is the log Bayes factor [print()] and the
#'   plan show; `noise = "auto"` keeps the varying noise only where it
#'   exceeds 3 (a factor 20, "strong" evidence on Kass and Raftery's 1995
#'   scale: the varying model's evidence is the best of three noise widths,
#'   and small constant-noise sets give it factors of a nat or two) and
#'   otherwise returns the constant fit. The constant model, the start of
#'   every width's search, is fitted once; and `"auto"` first takes the log
#'   Bayes factor Newton's first step from it predicts at each width (the
#'   evidence's quadratic model at \eqn{\theta = 0}, less its Occam term):
#'   where that is below 0 at every width the noise is plainly constant and
#'   no search is made (`fit$noise_model$screened`; print() and the plan
#'   give the predicted factor). The fit's `C` and
#'   `epsilon` are then the noise at the geometric mean of the training
#'   rows' scales; predictions, intervals, `predict(type = "distribution")`
#'   and the calibration (whose refits keep the fit's noise function) use the
#'   noise at each input. The mixture over `C` is the constant model's and
#'   is not made for a varying noise. [confint()] and [evidence_curve()]
#'   of such a fit are errors (its `C` and `epsilon` are the noise
#'   function's level, and their curvature or curve would be the constant
#'   model's); `update()` with another `C` or `epsilon` refits the noise
#'   function, whose level then absorbs their common scale (only
#'   \eqn{C\epsilon} stays as given). [svr()]'s `noise` gives the MAP
#'   estimate of this model.
#'
#'   On standardised data (`scale = TRUE`) the varying model also fits the
#'   amplitude of the latent function's prior, \eqn{f \sim GP(0, s^2 k)}, with
#'   \eqn{(a, \theta)} (as hetGP fits its mean's variance with the noise):
#'   where the data are quiet a smaller \eqn{s} narrows the mean's
#'   uncertainty without narrowing the noise. \eqn{s} is taken to its maximum
#'   of the evidence (profiled, as \eqn{a} is), and the constant model it is
#'   weighed against has its own \eqn{s} and level at their maximum, so that
#'   the Bayes factor weighs the noise alone; the constant fit `"auto"`
#'   returns keeps the amplitude of the standardised response. The fit's
#'   model units are then the response's over \eqn{s}: `fit$response_scaling`
#'   holds the product, `fit$noise_model$amplitude` \eqn{s}, and the plan's
#'   noise row says it. ([svr()]'s MAP fit keeps \eqn{s = 1}.)
#'
#'   The constant model's width of the kernel (one width, chosen by a rule
#'   and the evidence) suits its noisiest stretch; once a noise function
#'   takes up the spread, the varying model's evidence can prefer a
#'   smoother mean. Where the varying noise is kept, the width is widened
#'   by factors \eqn{\sqrt 2} (at most 8 times) while that evidence rises,
#'   each step a search for `C` at the new width and its noise function,
#'   and the new width is kept where it gains more than a nat (the margin a
#'   width per input must win by); `fit$noise_model$mean_width` and the
#'   plan's noise row give the factor and its log Bayes factor. A width the
#'   call gives, a width per input and a width searched by `optimize` are
#'   kept, as is [svr()]'s width.
#'
#' @section The hyperprior:
#' On few observations the evidence pins the tube and the widths poorly,
#' and its maximum can lie on a ridge where the noise is far below the
#' data's: `optimize = TRUE` then overfits. On standardised data
#' (`scale = TRUE`) a search of more than `C` therefore maximises the
#' evidence times a weakly informative hyperprior on the log
#' hyperparameters (the posterior mode), independent normals on
#' * \eqn{\log C}: mean \eqn{\log 5} (the default's `C`), sd 1.5;
#' * \eqn{\log(C \epsilon)}, the tube's half-width over the noise's scale:
#'   mean \eqn{\log 0.5} (the defaults' `C = 5`, `epsilon = 0.1`), sd 0.5
#'   (or \eqn{\log \epsilon}, mean \eqn{\log 0.1}, where `C` stays as
#'   given);
#' * each log width: mean the log of its start (the data-driven width or
#'   the one given), sd 1.
#'
#' Hyperparameters not searched have no term. The prior's log density is
#' bounded while the log evidence grows with the number of observations, so
#' on many rows the mode moves little from the evidence's maximum.
#' `search_control(hyperprior = FALSE)` maximises the evidence itself.
#' `fit$optimization$hyperprior` records the terms (their coefficients on
#' the log parameters as attribute `"coef"`), `$log_prior` the prior's log
#' density at the estimate and `$path$log_prior` at every point tried;
#' `$log_evidence` and `$gradient` stay the evidence's.
#'
#' Up to 200 observations (size rule `C_mixture_max_n`, [gpsvm_size_policy()])
#' the prediction intervals then integrate over the searched
#' hyperparameters' posterior: from its Laplace approximation at the mode
#' (the Hessian by differences of the analytic gradient), 16 fits at points
#' about the mode (8 quasi-random points and their mirror images), each
#' weighted by the posterior over the approximation's density (importance
#' weights, truncated at 4 times their mean). `fit$C_mixture$posterior`
#' gives each hyperparameter's posterior and prior sd on the log scale, and
#' the plan's `posterior` row (printed) says which the data pin (a
#' posterior sd at most half the prior's), which are left to the
#' hyperprior, and which stopped at an end of their range. With the default
#' kernel, the evidence first weighs the default's candidate kernels and
#' offset (each at its own `C`), and the search starts from the one chosen
#' (a linear kernel has no width to search).
#'
#' A width per input asked for (`rbf_kernel(per_input = TRUE)` or
#' `matern_kernel(per_input = TRUE)` with `optimize` searching the widths,
#' on standardised data) is weighed against the fit the defaults make on the
#' same rows (their kernel and offset weighed, `C` by the evidence): the
#' search is kept where its log evidence beats the default fit's by more
#' than a nat per hyperparameter it adds (the \eqn{p} widths, less one
#' against a kernel of one width, and `epsilon` where searched), and
#' otherwise the fit is the default one, whose calibration refits make the
#' default's search too (with `search_control(hyperprior = FALSE)` the
#' search's answer stays, as the evidence's own maximum). `fit$width_choice`
#' keeps the two log evidences and the hyperparameters each side fitted,
#' and the plan's `widths` row says which was kept. On a few dozen rows
#' nearly linear in their inputs, where the defaults choose the linear
#' kernel, a width per input then predicts as well as the defaults instead
#' of worse.
#'
#' @section Performance:
#' Measured up to 2026-12-05 (gpsvm 0.1.0, development version, on a 2-core
#' machine; the scripts are in `bench/` of the sources, mostly
#' `bench/bench-realdata.R`).
#'
#' * `C`: on four held-out splits of mlbench's Boston housing, Friedman 1-3
#'   and Ozone (inputs and response standardised, the data-driven width)
#'   `C = 5` gave 95% prediction intervals that held 93-98% of the held-out
#'   targets, where `C = 1` gave intervals four times as wide (holding all)
#'   and `C = 10` held 69-92%; on a noisier response (plasma glucose from
#'   the other variables of mlbench's PimaIndiansDiabetes2, 392 complete
#'   rows) `C = 5` held 79%. Chosen by the evidence, `C` was 2.3 there and
#'   3.8 to 8.0 on the other five, and the intervals held 94-97% on all six
#'   (16-23% narrower than with `C = 5` on Boston housing and Friedman 1,
#'   where those held 97-98%, and 12-25% wider on the other three); the
#'   held-out RMSE over `e1071::svm()`'s was 0.85-1.02, against 0.87-1.05
#'   with `C = 5`. The default search cost 1.2 to 1.4 fits at a fixed `C`
#'   (0.050 s on 354 rows of Boston housing, against 0.041 s; 0.20 s on 700
#'   rows of Friedman 1, against 0.15 s, on two threads).
#' * A width per input (four 70/30 splits of mlbench's data; held-out RMSE
#'   over `e1071::svm()`'s with its defaults, one width / a width per
#'   input): Boston housing 0.90 / 0.74, Friedman 1 0.86 / 0.52, Friedman 2
#'   0.87 / 0.85, Friedman 3 0.93 / 0.73, Ozone 1.07 / 1.01. Its 95%
#'   prediction intervals held 92-95% of the held-out targets (one width:
#'   93-96%). The searches took 0.1 to 0.9 s (13 to 17 parameters on Boston
#'   housing and Ozone). Against `e1071::tune.svm()` over 9 `gamma` x 9
#'   `cost` x 3 `epsilon` with 5-fold cross-validation on the same splits,
#'   it took 2% to 10% of the grid's time and its RMSE was 0.63 (Friedman
#'   1) to 0.99 (Friedman 2) times the tuned model's; with one width 0.98 to
#'   1.12 times it. On two splits of Friedman 3 the settings of lower
#'   held-out RMSE had log evidences more than 100 below the maximum found,
#'   and on Ozone no fixed setting beat e1071's default (on 20 splits the
#'   best of 90 (width, `C`, `epsilon`), chosen on the held-out rows, had
#'   1.004 times its RMSE; part "hindsight"). The noise sd chosen on these
#'   sets was 19% to 44% of the response's.
#' * A width per input where every input matters (ten 70/30 splits of
#'   `airquality`, `Ozone ~ Solar.R + Wind + Temp`, 78 complete training
#'   rows): chosen on every split (Matern 3/2, evidence 4.4 to 10.5 nats
#'   above one width, the margin 2.6), at held-out RMSE 20.8 against 19.4
#'   with the search off (log score 4.38 against 4.35); [svr()] 19.7,
#'   `e1071::svm()` 20.7, `DiceKriging::km()` 20.0. On Friedman 1 at 60
#'   rows, where the evidence's gain per width is lower (1.9 to 2.4
#'   nats), the widths lowered the log score by 0.37; no margin separates
#'   the two, nor does EP's leave-one-out density.
#' * The default's cost on 1000 and 2000 rows of Friedman 1 (10 inputs,
#'   2000 held out): 17 s and 90 s, most of it the search of a width per
#'   input on the dense kernel matrix (the plan's cost line), against 27 s
#'   and 209 s for `DiceKriging::km()` (Matern 5/2, a range per input, a
#'   nugget) and 8 s and 115 s for `hetGP::mleHomGP()`, at the lowest
#'   held-out RMSE and log score of the three (`bench/bench-matern.R` with
#'   `GPSVM_BENCH_FRIEDMAN_N`).
#' * The mixture over `C`: 3 ms of a 16 ms fit on 21 rows of `attitude`,
#'   about 0.07 s of 0.09-0.13 s on 200 rows of mlbench's Friedman 1.
#' * Calibration (part "calibration"; 20 held-out splits of six small sets,
#'   21-35 training rows): the mixture's 95% intervals held 0.88-0.96 of the
#'   targets (trees 0.88) and its 80% intervals 0.70-0.84 (below 0.75 on
#'   mtcars, trees and attitude); calibrated, with the kernel chosen among
#'   the candidates of `kernel`, 0.92-0.97 and 0.76-0.88 (attitude 0.883),
#'   and on the six larger sets (142-354 training rows, where the model's
#'   own are kept) 0.94-0.97 and 0.77-0.84. The five refits made the fit
#'   2.9 to 3.6 times as slow (0.04-0.21 s on mtcars, attitude,
#'   LifeCycleSavings and 100 rows of Friedman 1).
#' * The offset and the width rule (part "choices"; four 70/30 splits of
#'   each of 18 data sets: Boston housing, Friedman 1-3, Ozone, Pima
#'   glucose, ten of R's small sets and two of mlbench's peaks,
#'   `mlbench.peak(200)` in 2 and 6 inputs): the evidence chose the offset
#'   on the peaks, on Friedman 3 and on three of the Ozone splits, and the
#'   \eqn{1/p} width on every split of `cars`, `faithful`,
#'   `LifeCycleSavings`, `rock`, `trees` and the 2-input peak. Against no
#'   offset and the sigest width the held-out RMSE fell to 0.42 and 0.13 on
#'   the peaks, 0.84-0.96 on `rock`, `trees`, `faithful` and
#'   `LifeCycleSavings`, 0.99 on Friedman 3 and Ozone, and rose by 4% on
#'   `cars` and 1% on `stackloss`; the worst ratio to `e1071::svm()`'s RMSE
#'   went from 1.23 (`rock`) to 1.03. The fits took 0.98 to 1.4 times as
#'   long where neither second fit was made and up to 2.2 times where one
#'   was (the machine busy).
#' * The linear candidate (the same splits and `MASS::UScereal`, calories
#'   on eight inputs, 45 training rows): chosen on every split of
#'   `attitude`, `cars`, `LifeCycleSavings`, `mtcars`, `PimaGlucose`,
#'   `stackloss`, `trees` and `UScereal`, three of `swiss`'s and one of
#'   `Ozone`'s and `rock`'s. Against the choice among the Gaussian widths
#'   alone, the held-out RMSE fell to 0.35 of it on `UScereal`, 0.55 on
#'   `stackloss`, 0.66 on `trees` and 0.84-0.99 on `attitude`, `mtcars`,
#'   `cars`, `LifeCycleSavings` and `PimaGlucose`, and rose by 11% on
#'   `Ozone` (on the one split, where the linear kernel's log evidence was
#'   0.65 above the Gaussian's: RMSE 4.63 against 3.11), 4% on `rock` and
#'   1% on `swiss`. The defaults on 354 rows of BostonHousing took 0.19 s
#'   against 0.11 s without it (`bench/bench-limit.R`, part "defaults", one
#'   run each on a quiet 2-core machine); on 700 rows of Friedman 1, 0.77 s
#'   against 0.90 s, within that machine's run-to-run spread.
#' * `inducing` beyond 2000 observations: on 4000 rows of mlbench's
#'   Friedman 2 and 3 (4 inputs, 2000 held out) 2 s instead of 70 s, the
#'   same held-out RMSE to three digits; on Friedman 1 (10 inputs, 5 of
#'   them irrelevant) 1.5 s instead of 57 s, but RMSE 1.31 against the
#'   dense fit's 1.15 (e1071's default: 1.26); `inducing = 1000` gave 1.19
#'   in 5.8 s.
#' * `noise = "auto"` (`bench/bench-varying-noise.R`, 20 held-out splits):
#'   on `MASS::mcycle` the model's own 95% intervals held 90-96% in each
#'   third of the input range, log score 4.326 (constant noise about 4.6,
#'   `hetGP::mleHetGP()` 4.348); on a simulated sine whose noise sd grows
#'   from 0.1 to 1 (200 rows) 0.298 (constant noise about 0.60, hetGP 0.359).
#'   On the low-rank prior (`quakes`, `stations ~ mag`, 700 training rows, a
#'   kernel matrix of rank 11) 1.5 s, log score 3.705 (hetGP 3.755, constant
#'   noise 3.790).
#' * `"auto"` against the default (`bench/bench-noise-auto.R`, 10 splits
#'   70:30, the default calibration, 2026-12-04, machine busy): the default's
#'   fit, identical, on every split of `women`, `trees`, `cars`,
#'   `faithful`, a sine and Friedman 1 at 130 and 400 rows (mostly stopped by
#'   the screen, CPU 0.9-1.9 times the default's); varying noise on every
#'   split of `mcycle` (held-out log score -0.32 against the default),
#'   ChickWeight (-0.65), the simulated sine (-0.28) and Boston housing (4
#'   splits, 354 training rows; -0.02, se 0.015) and on 8 of 10 of
#'   `airquality` (+0.02, se 0.07), CPU 2.9-6.6 times (1.2 on 2520
#'   training rows of the simulated sine). But on Boston housing the
#'   held-out RMSE was 1.12 times the default's (1.20 and a log score
#'   +0.04, se 0.024, on 4 other splits; 1.42 on one split): the noise
#'   function takes the dearest homes, censored at 50, for noise, and the
#'   mean there falls. Hence the default `"constant"`, and `"auto"` on
#'   request.
#'
#' @param x A numeric vector, matrix or data frame of inputs (one row per
#'   observation), or a formula for `mfsvr.formula`.
#' @param y Numeric targets, one per row of `x`.
#' @param C Positive number: the inverse scale of the linear part of the
#'   loss (larger `C` means less noise; for a small `epsilon` the noise
#'   standard deviation is about \eqn{\sqrt 2 / C}), or `NULL` (the
#'   default): chosen by the evidence where `optimize = NULL` searches (see
#'   there), starting from 5, and 5 elsewhere (no one value suits every data
#'   set: "Performance" below). A very large `C` makes the likelihood nearly
#'   a hard tube, on which EP may not settle: a run whose posterior marginals
#'   still move by more than a posterior standard deviation per sweep after
#'   `max_iter` sweeps (at least 50) is an error, since its fit would be
#'   meaningless; one that is merely slow is a warning.
#' @param epsilon Non-negative number: half-width of the insensitive tube.
#' @param kernel A kernel from [rbf_kernel()], [matern_kernel()],
#'   [poly_kernel()] or [linear_kernel()]; the default `rbf_kernel()` chooses
#'   its width from the (scaled) inputs by kernlab's sigest rule ([kernels]).
#'   On standardised data fitted on the full prior (no `inducing`; beyond
#'   10000 observations, on 10000 evenly spaced rows, see `optimize`), where
#'   e1071's \eqn{\gamma = 1/p} for the \eqn{p} input columns,
#'   \eqn{\sigma = \sqrt{p/2}}, is more than 30% away from it, the evidence
#'   chooses between the two widths; when the call gives no
#'   `kernel` it also weighs a linear kernel, `poly_kernel(1, scale = 1/p,
#'   offset = 0)` (whose prior variance of \eqn{f(x)} is about the
#'   standardised response's, as the Gaussian kernel's is), each candidate
#'   with its own search for `C` (`fit$kernel_choice` keeps their log
#'   evidences, `print()` the log Bayes factors, and `logLik()` counts the
#'   choice as one estimated parameter; see Details). A response nearly
#'   linear in its inputs gets the linear kernel, which no Gaussian width
#'   matches from a few dozen rows. The Matern kernels `matern_kernel(5/2)`
#'   and `matern_kernel(3/2)` are weighed next (3/2 only when 5/2 beat the
#'   Gaussian kernels), whichever kernel led, each with its own `C` (a linear
#'   kernel that led stays unless a Matern kernel beats it by more than a
#'   nat), at the widths \eqn{\sqrt{5/3}\sigma} and \eqn{\sqrt 3 \sigma} whose
#'   derivatives have the Gaussian kernel's variance (they wiggle as often):
#'   rougher functions, which measured responses often are. From 25
#'   observations of two or more inputs (size rules `per_input_min_n` and
#'   `per_input_max_n`, [gpsvm_size_policy()]; beyond 2000 these choices are
#'   made on 2000 evenly spaced rows, see `inducing`) a width per input is then
#'   searched with `C` from the width of the Gaussian or Matern kernel that
#'   won, or of the best of them where the linear kernel won (hyperprior as
#'   for `optimize`), in that family and in Matern 5/2, and the one of higher
#'   evidence is kept where it beats the kernel that won by more than a nat
#'   per width added, below 100 observations 100/n nats (`fit$width_choice`
#'   keeps the two log evidences, that margin and the
#'   hyperparameters each side fitted, its first row "one" or, for the linear
#'   kernel, "none"; the plan's `widths` row says which won): inputs that
#'   matter unequally, or not at all, are fitted far better so, and from a
#'   few hundred rows the evidence tells. On a few dozen rows whose inputs
#'   all matter it can prefer widths per input that predict worse than one
#'   ("Performance"; the size rule `per_input_min_n` set above four times
#'   the rows switches the search off). A kernel given, `rbf_kernel()` too,
#'   stays as given, but for a width per input searched at the call's
#'   request, which is weighed against the default fit (see Details). The
#'   paper's \eqn{\exp(-|x-x'|^2/\tau^2)} is `rbf_kernel(tau / sqrt(2))`.
#' @param control Solver settings from [mfsvr_control()].
#' @param optimize If `TRUE`, choose `C`, `epsilon` and the Gaussian kernel's
#'   width by maximising the evidence, starting from the values given; a subset
#'   of `c("C", "epsilon", "sigma")` chooses only those; `FALSE` chooses none.
#'   `NULL` (the default) chooses `C` when the call gives none, on standardised
#'   data (`scale = TRUE`) fitted by EP (with `inducing`, or beyond 2000
#'   observations where the kernel matrix has no low rank, on the FITC
#'   evidence), and otherwise none. Beyond 10000 observations (the size rule
#'   `search_max_n` of [gpsvm_size_policy()]) the whole default (this search,
#'   the kernel and the offset weighed) runs on 10000 evenly spaced rows, and
#'   the fit on every row keeps what it chose: `C` scales each observation's
#'   likelihood, so its evidence-chosen value carries over to more rows of
#'   the same data; the fit says so in a message, which `print()` repeats,
#'   and `fit$optimization$search_rows` counts the rows. The search moves
#'   `C` within one EP run while the sites converge (a Newton step on the
#'   evidence's curvature in `log C`, then secant steps on its gradient), EP
#'   converging to the search's accuracy (see `tol` in [mfsvr_control()]), and
#'   costs a little more than one fit at a fixed `C`. On the data as given
#'   (`scale = FALSE`) `C = 5` stays, as in the paper. `update(fit, C = 2)`
#'   keeps that `C`. On nearly noise-free data the evidence rises without end
#'   as `C` grows; the default search then stops at a large `C` without a
#'   warning (one asked for warns, see Details). A search of more than `C` on
#'   standardised data uses a hyperprior, and its intervals integrate over the
#'   hyperparameters (see "The hyperprior").
#' @param search The evidence search's tolerance, budget and grid, from
#'   [search_control()]; used where `optimize` asks for a search.
#' @param scale If `TRUE`, centre and scale the numeric inputs and the
#'   response before fitting (see "Scaling" in [svr()]).
#' @param inducing `NULL` (the default) for the full Gaussian-process prior, or
#'   a count or a matrix of inducing inputs for a sparse (FITC) fit in \eqn{O(n
#'   m^2)} time and \eqn{O(n m)} memory: see [inducing-points]. With `NULL`,
#'   beyond 2000 observations whose kernel matrix has no low rank (1000 pivots
#'   do not represent it to `rank_tol` in [mfsvr_control()]), the fit is the
#'   FITC approximation on the 500 inducing inputs `inducing = 500` chooses, as
#'   in [gpc()], and `print()` says so: a dense sweep costs \eqn{O(n^3)}.
#'   Beyond 2000 observations, whatever the prior, the default's kernel,
#'   widths per input and offset are weighed as on 2000 rows, by the default
#'   on 2000 evenly spaced rows (size rule `dense_max_n`), and `C` searched
#'   on every row at what they chose. Where
#'   a few of many inputs matter, 500 inducing inputs can be too few, and a
#'   larger count (or the dense prior) gives a lower error ("Performance"
#'   below). `mfsvr_control(rank_tol = 0)` keeps the dense matrix. A fit to
#'   data in partitions ([gpsvm_partitions()] as `data`) needs `inducing`.
#' @param bias Prior variance \eqn{b \ge 0} of a constant offset of the latent
#'   function, \eqn{f(x) = c + g(x)} with \eqn{c \sim N(0, b)}, added to the
#'   kernel as a constant (as [gpc()]'s `bias`); on the scaled response when
#'   `scale = TRUE`. `NULL` (the default): on standardised data the evidence
#'   chooses between no offset and `bias = 1` (beyond 10000 observations on
#'   the rows of the search, see `optimize`), and `logLik()` counts the
#'   choice as one estimated parameter; on the data as given
#'   (`scale = FALSE`), 0: the paper's zero-mean model. Centring the response is
#'   not the same: away from the data a zero-mean prior pulls the predictions
#'   to the data's mean, where the function may settle at another level (a peak
#'   on a flat floor). The model without the offset is fitted first; the
#'   offset's evidence is estimated from its sites (a rank-one update of their
#'   Gaussian evidence), and the model with the offset is fitted too (its
#'   search for `C` starting from the first's estimate) unless that estimate is
#'   lower by more than 0.7 nats. `print()` gives the log Bayes factor,
#'   `fit$bias_choice` both log evidences and whether each is a fit's.
#' @param formula A formula `y ~ x1 + x2 ...`. A variable it removes
#'   (`id` in `y ~ . - id`) is ignored: [predict()] does not need it.
#' @param data,subset,na.action As in [stats::lm()]; with
#'   `na.action = na.exclude`, [fitted()], [residuals()] and [predict()] are
#'   padded with `NA` at the rows left out. `data` may also be row
#'   partitions from [gpsvm_partitions()] (files or data frames, read one at
#'   a time and never gathered), with `inducing`: the fit is the one to the
#'   partitions' rows bound together, at `C` (when not given, the default's
#'   on up to `search_max_n` evenly spaced rows read from the partitions, as
#'   beyond that size in memory, on the FITC prior and without an offset; no
#'   offset or calibration), and
#'   keeps no inputs, so [predict()] needs `newdata` (partitions too).
#' @param calibration_folds The number of cross-validation folds that calibrate
#'   the prediction intervals (see [predict.gpsvm_regression()]): `NULL` (the
#'   default) 5 from 10 observations (beyond 100 on 100 evenly spaced rows,
#'   see Details) and none below, `TRUE` 5,
#'   `FALSE` or 0 the model's own intervals, or a count from 2 to the number of
#'   observations (as many as there are is leave-one-out with refits). At least
#'   10 observations are needed. The refits choose `C` again where the fit's
#'   evidence chose it (their search starting from the fit's `C`), at the fit's
#'   kernel and offset, and cost about one fit each. Beyond 100 observations
#'   the model's own intervals already held new targets (see Details). With
#'   noise varying with the inputs the refits keep the fit's noise function,
#'   and the default calibration stays only where its cross-validated log score
#'   beats the model's own intervals (`fit$calibration_declined` records one
#'   declined, and the plan says so); a count given is always used.
#' @param noise The noise model: `"constant"` (the default) one `C` and
#'   `epsilon` for all observations; `"varying"` a noise whose scale varies
#'   smoothly with the inputs; `"auto"` varying where its evidence beats
#'   the constant model's by a log Bayes factor above 3 (see "Noise that
#'   varies with the inputs"). Not with `inducing` inputs.
#' @param ... For `mfsvr.formula`, arguments passed to `mfsvr.default`;
#'   otherwise must be empty.
#' @return An object of class `c("gpsvm_mfsvr", "gpsvm_regression")`: a list
#'   with, in the units of the fitted (scaled) data, `coefficients` (the
#'   weights \eqn{w}), `variance` (latent posterior variances at the training
#'   inputs), `site_precision`, `site_nu`, `cavity_mean`, `cavity_var`,
#'   `log_evidence` (of the scaled response; [logLik()] gives it for the data
#'   as given), `C`, `epsilon`, `noise_variance`, `x`; in the data's units `y`,
#'   `fitted.values` (posterior means at the training inputs) and `residuals`;
#'   `kernel` (with the width used), `scaling` and `response_scaling` (`NULL`
#'   with `scale = FALSE`), `convergence` (a list with `converged`,
#'   `iterations`, `change`, `tol`, `reason`), `control` (with `max_rank`
#'   resolved), `optimization` (the record of the evidence search when
#'   `optimize` is used; see Details), `C_mixture` (where `C` was chosen from
#'   at most 200 observations, the fits and weights that integrate the
#'   prediction intervals over `C`; see [predict.gpsvm_regression()]),
#'   `interval_calibration` (where the prediction intervals are calibrated by
#'   cross-validation, its record: see `calibration_folds`),
#'   `calibration_declined` (the same record, with the calibration's
#'   cross-validated gain in log score per row, where that gain declined it),
#'   `kernel_choice` (when the evidence chose the kernel, a data frame of the
#'   candidates' rules, "sigest", "gamma = 1/p" and "linear", their widths and
#'   log evidences), `width_choice` (when the evidence weighed a width per
#'   input, a data frame of `widths`, "one" and "per input", and their log
#'   evidences), `bias_variance` (the offset's prior variance used) and
#'   `bias_choice` (when the evidence chose it, a data frame of the two
#'   variances weighed and their log evidences), `fit_time`,
#'   `call` and `fields` (see [hyperparameters()], "Fitted objects"); formula
#'   fits also `terms`, `xlevels`, `contrasts`, `na.action`, `variables` (the
#'   formula's variables as the data gave them, at the rows used).
#' @references J. B. Gao, S. R. Gunn and C. J. Harris (2002). Mean field method
#'   for the support vector machine regression. *Neurocomputing*.
#'
#'   J. B. Gao, S. R. Gunn, C. J. Harris and M. Brown (2002). A probabilistic
#'   framework for SVM regression and error bar estimation. *Machine
#'   Learning* 46.
#'
#'   M. Opper and O. Winther (2000). Gaussian processes for classification:
#'   mean field algorithms. *Neural Computation* 12.
#' @seealso [predict.gpsvm_regression()], [regression-methods],
#'   [plot.gpsvm_regression()], [mfsvr_control()]; [gpsvm_corrections] (items
#'   1-3, 8, 12 and 16) for where the fit departs from the paper.
#' @examples
#' fit <- mfsvr(dist ~ speed, data = cars)
#' fit
#' plot(fit)
#' # the paper's sinc example, on the data as given
#' set.seed(1)
#' x <- runif(40, -10, 10)
#' y <- sin(x) / x + rnorm(40, sd = 0.1)
#' fit <- mfsvr(x, y, C = 5, epsilon = 0.1, kernel = rbf_kernel(sqrt(2)), scale = FALSE)
#' predict(fit, c(-5, 0, 5), interval = "prediction")
#' logLik(fit)
#' @export
mfsvr <- function(x, ...) UseMethod("mfsvr")

#' @rdname mfsvr
#' @export
mfsvr.default <- function(x, y, C = NULL, epsilon = 0.1, kernel = rbf_kernel(),
                          control = mfsvr_control(), optimize = NULL, scale = TRUE,
                          inducing = NULL, search = search_control(), bias = NULL,
                          calibration_folds = NULL, noise = "constant", ...) {
  .open_ledger()
  .check_dots_empty(...)
  noise <- .check_noise_choice(noise)
  weigh_linear <- missing(kernel)  # (the default's candidates, see ?mfsvr)
  C_given <- !is.null(C)
  C <- if (C_given) .check_tube(C, "C") else .mfsvr_default_C
  epsilon <- .check_tube(epsilon, "epsilon")
  .check_kernel(kernel)
  .check_control(control, "mfsvr_control")
  bias <- .check_bias_variance(bias)
  .resolve_calibration_folds(calibration_folds, .Machine$integer.max, "mfsvr")  # its checks
  settings <- .search_settings(search, "gradient")
  open <- is.null(optimize) && .mfsvr_search_by_default(C_given, scale, control)
  automatic <- open && NROW(x) <= .size_rule("search_max_n")
  if (open && !automatic) {
    args <- list(epsilon = epsilon, control = control, scale = scale, inducing = inducing,
                 search = search, bias = bias, calibration_folds = calibration_folds,
                 noise = noise)
    if (!weigh_linear) args$kernel <- kernel
    return(.fit_on_search_rows(mfsvr.default, x, y, args, .generic_call(match.call(), "mfsvr"),
                               "mfsvr():"))
  }
  which <- .mfsvr_which_hyper(if (automatic) "C" else optimize %||% FALSE, epsilon, kernel)
  # (what the data pin poorly on few rows: the tube and the widths)
  settings$hyperprior <- settings$hyperprior %||%
    (isTRUE(scale) && any(c("epsilon", "sigma") %in% which))
  # `refit` (the calibration's refits) keeps that fit's kernel and offset
  fit_model <- function(x, y, kernel, scaling, refit = NULL) {
    .check_bias_scale(bias, kernel, x)
    z <- .inducing_inputs(inducing, x, kernel, scaling)
    if (!is.null(z) && control$algorithm != "ep") {
      .stop("'inducing' needs mfsvr_control(algorithm = \"ep\")")
    }
    # (beyond dense_max_n the default weighs its kernel on fewer rows first,
    # and the prior is chosen for the kernel it weighs, not this one)
    on_rows <- is.null(refit) && weigh_linear && automatic && is.null(inducing) &&
      length(y) > .size_rule("dense_max_n")
    if (is.null(z) && control$algorithm == "ep" && !on_rows) {
      .charge(NULL)  # (the data's checks and scaling are no choice's)
      z <- .mfsvr_approximation(x, kernel, control)
      .charge("prior")
    }
    fit_at <- .mfsvr_fit_at(x, y, C, epsilon, control, which, automatic, z, settings)
    # the kernel, the widths and the offset the evidence weighs on rows x, y
    weigh_default <- function(x, y, z, fit_at) {
      # (a search of the width too runs on the kernel and offset weighed)
      weigh <- .kernel_by_default(scale, length(y), setdiff(which, "sigma"), z)
      kernels <- .kernel_candidates(kernel, x, weigh, linear = weigh_linear, matern = weigh_linear)
      first <- "sigma" %in% which && length(kernels) > 1L
      weigh_at <- if (first) .mfsvr_fit_at(x, y, C, epsilon, control, "C", TRUE, z, settings) else fit_at
      chosen <- .fit_with_bias(weigh_at, kernels, bias %||% 0,
                               choose = is.null(bias) && .bias_by_default(scale, length(y)))
      if (first) chosen <- .search_chosen(fit_at, chosen)
      .charge_chosen(chosen, length(which) > 0L)
      if (weigh && isTRUE(kernel$per_input) && "sigma" %in% which &&
          isTRUE(settings$hyperprior)) {
        # (x is the scaled inputs over the kernel's starting widths)
        standard <- sweep(x, 2L, kernel$input_widths, "*", check.margin = FALSE)
        chosen <- .per_input_or_default(chosen, .mfsvr_default_fit(standard, y, epsilon, control,
                                                                   bias, scale, search))
        .charge("widths")
      }
      if (weigh && weigh_linear && automatic && is.null(z) &&
          .per_input_weighed(length(y), ncol(x))) {
        per_input_settings <- settings
        per_input_settings$hyperprior <- search$hyperprior %||% TRUE
        chosen <- .with_per_input_choice(chosen, x, function(x_unit) {
          .mfsvr_fit_at(x_unit, y, C, epsilon, control, c("C", "sigma"), FALSE, NULL,
                        per_input_settings)
        })
        .charge("widths")
      }
      chosen
    }
    fit <- if (on_rows) {
      weighed <- .weigh_on_dense_rows(x, y, function(x, y) {
        weigh_default(x, y, NULL, .mfsvr_fit_at(x, y, C, epsilon, control, which, automatic,
                                                NULL, settings))
      })
      x <- weighed$x
      z <- .mfsvr_approximation(x, weighed$fit$kernel, control)
      .charge("prior")
      fit_at <- .mfsvr_fit_at(x, y, C, epsilon, control, which, automatic, z, settings)
      fit <- .with_choice_records(fit_at(weighed$fit$kernel, weighed$fit[c("C", "epsilon")]),
                                  weighed$fit)
      .charge("hyperparameters")
      fit$bias_variance <- weighed$fit$bias_variance
      fit
    } else if (is.null(refit)) {
      weigh_default(x, y, z, fit_at)
    } else if (identical(refit$noise_model$type, "varying")) {
      # (the refit keeps the fit's noise function, C, epsilon and kernel)
      return(.mfsvr_with_noise(list(x = x, y = y, kernel = refit$kernel, control = control,
                                    inducing = z), noise, refit))
    } else if ("sigma" %in% which && .fell_back_to_default(refit)) {
      # (the refits make the default's search, as the fit did)
      .mfsvr_default_at(x, y, epsilon, control, search)(refit$kernel, refit[c("C", "epsilon")])
    } else {
      # from the fit's C; a search with the hyperprior is the fit's on these rows
      record <- if (!is.null(refit$optimization$hyperprior)) refit$optimization
      fit_at(refit$kernel, c(refit[c("C", "epsilon")], list(search_record = record)))
    }
    if (noise != "constant") {
      constant <- fit
      fit <- .mfsvr_with_noise(fit, noise, refit, amplitude = isTRUE(scale))
      if (is.null(refit) && !"sigma" %in% which) {
        fit <- .with_noise_width(fit, function(kernel) {
          .mfsvr_with_noise(fit_at(kernel, constant), "varying", amplitude = isTRUE(scale))
        })
      }
      .charge("noise")
    }
    # (predictions integrate over hyperparameters chosen by the evidence)
    if (length(which) > 0L && !is.null(fit$optimization) &&
        !identical(fit$noise_model$type, "varying")) {
      fit$C_mixture <- .C_mixture(fit, y)
      .charge(if (!is.null(fit$C_mixture)) .mixture_step(fit$C_mixture))
    }
    fit
  }
  fit <- .with_mean_amplitude(.fit_regression(x, y, kernel, scale, .generic_call(match.call(), "mfsvr"),
                                               fit_model))
  fit <- .with_calibration(fit, calibration_folds, function(x, y) {
    fit_model(x, y, fit$kernel, fit$scaling, refit = fit)
  }, weigh = identical(fit$noise_model$type, "varying"))  # (the refits keep its noise function)
  .with_plan(fit, "mfsvr():")
}

# Beyond dense_max_n rows a kernel matrix without a low rank takes the FITC
# prior, and the evidence on it cannot weigh kernels or widths (its inducing
# inputs depend on the kernel); one with a low rank could, but the search of
# a width per input costs as much on the factor as on 2000 dense rows.
# mfsvr()'s default weighs them, and the offset, as on fewer rows:
# `weigh(x, y)`, the default, on dense_max_n evenly spaced rows, so that the
# fits either side of the rule make the same choices at the same cost.
# Returns that fit and every row's inputs over its widths per input.
.weigh_on_dense_rows <- function(x, y, weigh) {
  rows <- .evenly_spaced_rows(nrow(x), .size_rule("dense_max_n"))
  weighed <- weigh(x[rows, , drop = FALSE], y[rows])
  weighed$choice_rows <- length(rows)
  widths <- .input_widths(weighed$kernel)
  if (!is.null(widths)) x <- sweep(x, 2L, widths, "/", check.margin = FALSE)
  list(fit = weighed, x = x)
}

# The search of `which` at the kernel and offset weighed first (`chosen`).
.search_chosen <- function(fit_at, chosen) {
  fit <- fit_at(chosen$kernel, chosen)
  fit[c("kernel_choice", "bias_variance", "bias_choice")] <-
    chosen[c("kernel_choice", "bias_variance", "bias_choice")]
  fit
}

# mfsvr()'s default fit on scaled rows x, y at the call's epsilon and control;
# NULL where the default weighs no kernels (a low-rank prior).
.mfsvr_default_fit <- function(x, y, epsilon, control, bias, scale, search) {
  kernel <- .resolve_kernel(rbf_kernel(), x)
  if (!is.null(.mfsvr_approximation(x, kernel, control))) return(NULL)
  kernels <- .kernel_candidates(kernel, x, TRUE, linear = TRUE, matern = TRUE)
  .fit_with_bias(.mfsvr_default_at(x, y, epsilon, control, search), kernels, bias %||% 0,
                 choose = is.null(bias) && .bias_by_default(scale, length(y)))
}

# The fit_at(kernel, previous) of mfsvr()'s default search for C.
.mfsvr_default_at <- function(x, y, epsilon, control, search) {
  settings <- .search_settings(search, "gradient")
  settings$hyperprior <- settings$hyperprior %||% FALSE
  .mfsvr_fit_at(x, y, .mfsvr_default_C, epsilon, control, "C", TRUE, NULL, settings)
}

# The C a fit without one starts from, and keeps when no search chooses it.
.mfsvr_default_C <- 5

# Whether optimize = NULL leaves C to the evidence (on the data as given,
# scale = FALSE, C = 5 stays, as the paper's examples fit it).
.mfsvr_search_by_default <- function(C_given, scale, control) {
  !C_given && isTRUE(scale) && identical(control$algorithm, "ep")
}

#' @rdname mfsvr
#' @export
mfsvr.formula <- function(formula, data, subset, na.action, ...) {
  .fit_formula(match.call(), parent.frame(), "mfsvr", mfsvr.default, ...)
}

#' Control settings for mfsvr()
#'
#' @param algorithm `"ep"` (default): expectation propagation, which has the
#'   TAP mean-field fixed point. `"paper"`: the iteration of Gao, Gunn and
#'   Harris (2002, section 4), inner weight updates with learning rate `eta`
#'   and an outer update of the cavity variances every `inner` steps.
#' @param schedule For `"ep"`: `"parallel"` updates every site from one
#'   posterior and refactors once per sweep, with a step that starts at
#'   `damping`, grows by 1.1 (up to 1) after a sweep that reduced the change
#'   and halves otherwise, and hands over to sequential sweeps if it falls
#'   below 0.05 (oscillation, e.g. at very large `C`); `"accelerated"` takes
#'   the same sweeps at the fixed step `damping` and extrapolates each from the
#'   last ten (Anderson acceleration; see [gpc_control()], whose default it
#'   is); `"sequential"` updates the sites one at a time in a random order
#'   (from `seed`) and refactors after each sweep. All reach the same fixed
#'   point. `"parallel"` is the default here because the tube likelihood's
#'   sites converge in a few sweeps, which the extrapolation does not shorten.
#' @param tol Convergence tolerance. EP stops when no posterior mean at a
#'   training input moves by more than `tol` posterior standard deviations and
#'   no posterior variance changes by more than `tol` relatively in one sweep
#'   (`tol` times the current step when damped). The paper's iteration stops
#'   when \eqn{\max_i |F_i/G_i - w_i| / (1 + \max_i |y_i|)} and the relative
#'   change of the cavity variances are below `tol`. Where the evidence chooses
#'   `C` by the default search (`optimize = NULL`), EP stops at the search's
#'   accuracy instead, a thousandth of [search_control()]'s `tol` (1e-6 by
#'   default), or at `tol` where that is looser: `C` itself is known only to
#'   the search's tolerance (see `fit$convergence$tol`).
#' @param max_iter Maximum number of EP sweeps, or of outer iterations of the
#'   paper's algorithm.
#' @param damping First step of the parallel EP schedule, in (0, 1]; also the
#'   (fixed) step of the accelerated and sequential schedules.
#' @param seed Seed of the sequential schedule's order and of the paper's
#'   random starting weights.
#' @param rank_tol EP runs on a pivoted Cholesky factor \eqn{G} of the kernel
#'   matrix when this reaches relative accuracy `rank_tol` (every entry of
#'   \eqn{K - G G^T} at most `rank_tol` times the largest \eqn{K_{ii}}) with at
#'   most `n / 2` columns: on FITC on its pivots made from the factor, \eqn{G
#'   G^T + \mathrm{diag}(K - G G^T)}, as [gpc()] (see [inducing-points]); a
#'   sweep then costs \eqn{O(n r^2)} instead of \eqn{O(n^3)}. Smooth kernels on
#'   low-dimensional inputs usually qualify. Beyond 2000 observations, a kernel
#'   matrix that 1000 pivots do not represent to `rank_tol` is replaced by the
#'   FITC approximation on 500 inducing inputs (see `inducing` in [mfsvr()]).
#'   `rank_tol = 0` always uses the dense matrix (as does `algorithm =
#'   "paper"`). At most `1e-6`: the factor's error reaches the predictions (at
#'   `1e-4` standard errors off by up to 0.2%, from `1e-2` standard errors of 0
#'   at new inputs).
#' @param max_rank The most columns the pivoted Cholesky factor of
#'   `rank_tol` may have before the dense matrix is used instead; `NULL` (the
#'   default) means half the number of observations (at least 1), resolved
#'   when the model is fitted (`fit$control` records the value used). The factor grows as
#'   columns are added, so memory follows the rank reached (\eqn{8 n r}
#'   bytes), and a smaller cap bounds it.
#' @param eta,inner,adaptive_eta The paper's learning rate, its number M of
#'   inner iterations per outer one (at most 10000), and whether the learning
#'   rate adapts (times 1.1 when \eqn{\sum_i (F_i/G_i - w_i)^2} fell, halved
#'   otherwise, as in Opper and Winther's algorithm); with the fixed `eta =
#'   0.05` the paper's iteration diverges on its own example for `C >= 2`.
#' @return A list of class `gpsvm_mfsvr_control`.
#' @examples
#' mfsvr_control(algorithm = "paper")
#' @export
mfsvr_control <- function(algorithm = c("ep", "paper"),
                          schedule = c("parallel", "accelerated", "sequential"),
                          tol = 1e-9, max_iter = 500, damping = 1, seed = 1, rank_tol = 1e-13,
                          max_rank = NULL, eta = 0.05, inner = 30, adaptive_eta = TRUE) {
  algorithm <- .match_choice(algorithm)
  schedule <- .match_choice(schedule)
  tol <- .check_number(tol, "tol", lower = 0, open_lower = TRUE)
  max_iter <- .check_count(max_iter, "max_iter", lower = 1L)
  damping <- .check_number(damping, "damping", lower = 0, upper = 1, open_lower = TRUE)
  seed <- .check_count(seed, "seed", lower = 0L)
  rank_tol <- .check_number(rank_tol, "rank_tol", lower = 0, upper = .max_rank_tol)
  if (!is.null(max_rank)) max_rank <- .check_count(max_rank, "max_rank", lower = 1L)
  eta <- .check_number(eta, "eta", lower = 0, upper = 1, open_lower = TRUE)
  inner <- .check_count(inner, "inner", lower = 1L, upper = 10000L)
  adaptive_eta <- .check_flag(adaptive_eta, "adaptive_eta")
  structure(list(algorithm = algorithm, schedule = schedule, tol = tol, max_iter = max_iter,
                 damping = damping, seed = seed, rank_tol = rank_tol, max_rank = max_rank,
                 eta = eta, inner = inner, adaptive_eta = adaptive_eta),
            class = c("gpsvm_mfsvr_control", "gpsvm_control"))
}

# EP on the factor G G' stands in for K, and its error reaches the
# predictions (see rank_tol in ?mfsvr_control).
.max_rank_tol <- 1e-6

# The control with max_rank's default for n observations filled in.
.resolve_control.gpsvm_mfsvr_control <- function(control, n, ...) {
  control$max_rank <- control$max_rank %||% max(1L, as.integer(n) %/% 2L)
  control
}

# mfsvr()'s prior at a kernel (choose_prior(), prior_choice.hpp), kept for
# the fits that share inputs, kernel and rules (a search, the offset's two,
# the mixture's refits): a factor of at most max_rank pivots, else dense, or
# with `fitc` the choice made before the kernel is weighed.
.mfsvr_prior <- function(x, kernel, control, fitc = FALSE) {
  cap <- if (fitc) .size_rule("low_rank_max") else .resolve_control(control, nrow(x))$max_rank
  kept <- .mfsvr_prior_kept$last
  if (identical(kept[c("x", "kernel", "rank_tol")], list(x = x, kernel = kernel,
                                                          rank_tol = control$rank_tol))) {
    # (the factor's pivots are the same under any cap they fit in)
    if (identical(kept$rules, c(fitc, cap)) ||
        (!fitc && kept$choice$form == "low_rank" && length(kept$choice$rows) <= cap)) {
      return(kept$choice)
    }
  }
  rules <- list(rank_tol = control$rank_tol, low_rank_min_n = 0L, low_rank_max = cap,
                dense_max_n = if (fitc) .size_rule("dense_max_n") else .Machine$integer.max,
                inducing_count = .size_rule("automatic_inducing_count"), rows_per_inducing = 1L,
                greedy_max_rows = .size_rule("greedy_max_rows"), test_rank = TRUE,
                half_rows_at_most = fitc)
  choice <- cpp_choose_prior(kernel, x, rules)
  .mfsvr_prior_kept$last <- list(x = x, kernel = kernel, rank_tol = control$rank_tol,
                                 rules = c(fitc, cap), choice = choice)
  choice
}
.mfsvr_prior_kept <- new.env(parent = emptyenv())
.forget_mfsvr_prior <- function() .mfsvr_prior_kept$last <- NULL

# Without `inducing`: beyond dense_max_n rows, FITC on the pivots where
# low_rank_max of them do not represent K.
.mfsvr_approximation <- function(x, kernel, control) {
  if (nrow(x) <= .size_rule("dense_max_n")) return(NULL)
  choice <- .mfsvr_prior(x, kernel, control, fitc = TRUE)
  if (choice$form == "fitc") structure(x[choice$rows, , drop = FALSE], approximation = TRUE)
}

# EP marginals still moving by more than a posterior sd a sweep after 50
# sweeps have no fixed point near them (a large C makes a nearly hard tube):
# an error, not the warning of a slow run.
.stop_unsettled <- function(convergence, C, epsilon) {
  if (convergence$converged || !(convergence$change > 1) || convergence$iterations < 50L) {
    return(invisible())
  }
  .stop(sprintf(paste("mfsvr(): EP did not settle at C = %.4g, epsilon = %.4g: after %d sweeps",
                      "the posterior marginals still move by %.3g posterior sd per sweep, so",
                      "the fit would be meaningless. A large 'C' makes the likelihood nearly a",
                      "hard tube of half-width epsilon, on which EP may not settle; try a",
                      "smaller 'C', 'damping' below 1 in mfsvr_control(), or svr()"),
                C, epsilon, as.integer(convergence$iterations), convergence$change))
}

# One fit at fixed hyperparameters.  Without inducing inputs the prior is
# .mfsvr_prior()'s; `keep_marginals` keeps EP's marginals, from which a fit
# on the same kernel started at its sites starts without refactorising.
.mfsvr_fit <- function(x, y, C, epsilon, kernel, control, gradient = FALSE, warn = TRUE,
                       start = NULL, inducing = NULL, keep_marginals = FALSE,
                       log_noise_scale = NULL) {
  control <- .resolve_control(control, length(y))
  ctl <- unclass(control)
  ctl$log_noise_scale <- log_noise_scale  # (noise varying with the inputs, R/rvm-noise.R)
  if (isTRUE(attr(inducing, "low_rank"))) inducing <- NULL
  if (is.null(inducing) && control$algorithm == "ep" && is.matrix(x)) {
    inducing <- .chosen_inducing(x, .mfsvr_prior(x, kernel, control))
  }
  ctl$inducing <- inducing
  if (!is.null(inducing)) ctl$inducing_held_rows <- .inducing_held_rows(length(y), nrow(inducing))
  if (!is.null(start)) {  # EP warm start from an earlier fit's sites
    ctl$start_precision <- start$site_precision
    ctl$start_nu <- start$site_nu
    ctl[c("start_mean", "start_variance")] <- start$marginals[c("mean", "variance")]
  }
  # (data in partitions on the future plan's workers: R/split-fit.R)
  workers <- if (!is.null(.split_reader(x)) && !gradient && is.null(start)) .split_workers() else 0L
  res <- if (workers > 0L) {
    .split_ep_fit(x, y, kernel, ctl, workers, list(C = C, epsilon = epsilon))
  }
  if (is.null(res)) .count_fit()
  res <- if (is.null(res)) cpp_mfsvr_fit(kernel, x, y, C, epsilon, ctl, gradient) else c(res, C = C)
  C <- res$C  # the one chosen when control$C_search asks for it (.mfsvr_choose_C())
  convergence <- res$convergence
  if (warn) {
    if (control$algorithm == "ep") .stop_unsettled(convergence, C, epsilon)
    .warn_not_converged("mfsvr()", convergence, if (control$algorithm == "paper") {
      "the default mfsvr_control(algorithm = \"ep\") converges more reliably"
    } else {
      "try a larger 'max_iter' or 'tol' in mfsvr_control()"
    })
  }
  names_y <- rownames(x)
  marginals <- if (keep_marginals) res[c("mean", "variance")]
  # (with inducing inputs, the values at the training inputs as at new ones)
  if (!is.null(inducing)) res[c("mean", "variance")] <- res[c("fitted", "fitted_variance")]
  fit <- list(
    coefficients = stats::setNames(res$weights, names_y),
    fitted.values = stats::setNames(res$mean, names_y),
    residuals = stats::setNames(y - res$mean, names_y),
    variance = res$variance,
    site_precision = res$site_precision, site_nu = res$site_nu,
    cavity_mean = res$cavity_mean, cavity_var = res$cavity_var,
    log_evidence = res$log_evidence,
    C = C, epsilon = epsilon, kernel = kernel,
    noise_variance = svr_noise_variance(C, epsilon),
    chol = res$chol, x = x, y = y,
    convergence = convergence, control = control
  )
  if (!is.null(inducing)) {
    fit[c("inducing", "inducing_weights", "inducing_chol")] <-
      list(.fitted_inducing(inducing), res$inducing_weights, res$inducing_chol)
    fit$inducing_held_rows <- ctl$inducing_held_rows
  }
  if (gradient) fit$gradient <- res$gradient
  fit$marginals <- marginals
  fit$C_search <- res$C_search
  fit$split <- res$split
  if (gradient && !is.null(res$per_input_gradient)) {
    fit$per_input_gradient <- stats::setNames(res$per_input_gradient, colnames(x))
  }
  class(fit) <- c("gpsvm_mfsvr", "gpsvm_regression")
  fit
}
