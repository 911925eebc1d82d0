#' The rules that depend on the data's size
#'
#' A default fit makes choices whose cost grows with the number of
#' observations \eqn{n}: searching hyperparameters by the evidence, weighing
#' candidate kernels and an offset, integrating the intervals over `C`,
#' calibrating them by cross-validation, and representing the prior (the
#' dense kernel matrix, a low-rank factor of it, or the FITC approximation on
#' inducing inputs). Every threshold on \eqn{n} that switches between such
#' computations is a row of one table, and every model reads it from there:
#' the same choice follows the same rule in every model.
#'
#' `gpsvm_size_policy()` returns the table with the values in force.
#' `options(gpsvm.size_policy = list(name = value, ...))` changes some of
#' them for the session (a positive whole number each; see the example).
#' A fit records what the rules decided for it in `fit$plan` (see
#' [gpsvm_plan()]), and says so in one message when a rule makes it differ
#' from the computation the defaults make on small data: a FITC prior, a
#' search on a subset of the rows or none, intervals not integrated over
#' `C` or not calibrated. `suppressMessages()` or
#' `options(gpsvm.quiet = TRUE)` silences those messages; `print()` still
#' shows the plan.
#'
#' The rules, with the reasons for their values:
#' \describe{
#'   \item{`search_max_n` (10000)}{Up to this many observations the default
#'     of [mfsvr()] and [svr()] (the evidence search for `C`, the candidate
#'     kernels and the constant offset weighed) runs on all rows; beyond, on
#'     this many evenly spaced rows, and the fit on every row keeps what it
#'     chose. `C` scales each observation's likelihood, so the value the
#'     evidence picks on a spread-out subset carries over to the rest; the
#'     search's cost stays that of this many rows, and the fits either side
#'     of the rule are the default on the same number of rows. Up to it,
#'     too, [rvm()] and [srvm()] weigh the linear kernel against the
#'     Gaussian (see `kernel_choice_max_n`); beyond, they keep the kernel
#'     given.}
#'   \item{`gpc_search_max_n` (2000)}{Up to this many observations the
#'     default evidence search of [gpc()] (two classes, or one class against
#'     the rest) runs on all rows; beyond, on `search_subset_n` evenly
#'     spaced rows, and then every row is fitted once at the values found.
#'     The evidence of a few thousand rows already fixes the width and the
#'     noise, and a search on all of them costs several fits ("Performance"
#'     below).}
#'   \item{`search_subset_n` (2000)}{The rows of [gpc()]'s default search
#'     beyond `gpc_search_max_n`.}
#'   \item{`subset_search_inducing_count` (300)}{The inducing inputs of
#'     that search's FITC evidence on `search_subset_n` rows (as
#'     `search_inducing_count` on all rows); the final fit on every row then
#'     has its own (`automatic_inducing_count`). Each EP sweep of the search
#'     costs \eqn{O(n m^2)}: fewer make the search cheaper, but the
#'     hyperparameters they find are worse on some data ("Performance"
#'     below).}
#'   \item{`ovr_max_nk` (10000)}{With three or more classes [gpc()]
#'     fits one model per class against the rest while the observations
#'     times the classes are at most half this, and one joint model of all
#'     the classes from this; in between it fits both and pools their class
#'     probabilities, the joint model's weight rising linearly from 0 to 1,
#'     so that no size switches the model abruptly (the pool costs one joint
#'     fit more than one-vs-rest, which costs several times as much). One-vs-rest costs
#'     an evidence search per class and gave the lower held-out log loss on
#'     the small sets measured; the joint model's one search serves all the
#'     classes ("Performance" below).}
#'   \item{`joint_search_max_n` (500)}{The joint multi-class model of
#'     [gpc()] (`multiclass = "joint"`) searches its width and noise on all
#'     rows up to this many and on this many evenly spaced rows beyond, then
#'     fits every row once at the values found. Each step of its search
#'     costs a factorisation of the dense kernel matrix and
#'     \eqn{O(n^2 K)} per conjugate-gradient iteration of its Newton steps,
#'     while the evidence of 500 rows fixes the width and the noise nearly as
#'     well ("Performance" below).}
#'   \item{`search_dense_max_n` (300)}{Up to this many observations
#'     [gpc()]'s search runs on the full prior; beyond, on the FITC prior of
#'     `search_inducing_count` inducing inputs,
#'     and the final fit at the values found on the full prior.}
#'   \item{`search_inducing_count` (300), `search_rows_per_inducing` (3)}{The
#'     inducing inputs of that search: `search_inducing_count`, or one per
#'     `search_rows_per_inducing` rows where that is fewer.}
#'   \item{`C_mixture_max_n` (200)}{Up to this many observations, where the
#'     evidence chose `C`, the prediction intervals of [mfsvr()] and [svr()]
#'     integrate over `C` (five more fits), and where [mfsvr()]'s
#'     `optimize = TRUE` chose more, over its hyperparameters' posterior (16
#'     more fits and a Hessian); on more rows the evidence is sharp in them
#'     and the mixture is the single fit's predictive.}
#'   \item{`calibration_min_n` (10)}{Below this, the intervals are never
#'     calibrated by cross-validation: a fold's refit has too few targets to
#'     estimate the noise.}
#'   \item{`calibration_max_n_ep` (100)}{Up to this many observations the
#'     prediction intervals of [mfsvr()] and [svr()] are calibrated by
#'     five-fold cross-validation on all rows; beyond, on this many evenly
#'     spaced rows (five refits at the cost of this size), and the widening
#'     the refits ask for (their excess mean square normal score) is
#'     weighted by this / \eqn{n}: the few hyperparameters the evidence
#'     chooses adapt to their data by \eqn{O(1/n)} of the predictive
#'     variance, and a full widening from 100 rows made these models'
#'     intervals too wide on more ("Performance" below).}
#'   \item{`calibration_max_n_rvm` (500)}{The same for [rvm()] and [srvm()],
#'     weighted by this / \eqn{n} as well: their own intervals come closer to
#'     their level as \eqn{n} grows, and the widening kept whole made them
#'     too wide beyond a thousand rows ("Performance" below).}
#'   \item{`low_rank_min_n` (1000)}{Beyond this many observations a fit
#'     without `inducing` tries a pivoted Cholesky factor of the kernel
#'     matrix first ([gpc()]; [mfsvr()]'s core always does), which makes an
#'     EP sweep \eqn{O(n r^2)} at the same model up to `rank_tol`.}
#'   \item{`low_rank_max` (1000)}{The most pivots such a factor may have.}
#'   \item{`dense_max_n` (2000)}{Beyond this many observations a kernel
#'     matrix that `low_rank_max` pivots do not represent is replaced by the
#'     FITC approximation on `automatic_inducing_count` inducing inputs (a
#'     dense sweep costs \eqn{O(n^3)}). The inducing inputs depend on the
#'     kernel, so no evidence on that prior weighs kernels or widths: beyond
#'     this many observations (whatever the prior) [mfsvr()]'s default
#'     weighs the kernel, the widths per input and the offset as on fewer
#'     rows, by the default on this many evenly spaced rows, and then
#'     searches `C` on every row at what they chose. The fits either side of
#'     the rule make the same choices, at the cost of the default on this
#'     many rows.}
#'   \item{`automatic_inducing_count` (500)}{See `dense_max_n`.}
#'   \item{`greedy_max_rows` (20000)}{The greedy choice of inducing inputs,
#'     and the test for a low rank, look at most at this many evenly spaced
#'     rows (four times the count asked where that is more).}
#'   \item{`per_input_min_n` (100), `per_input_max_n` (2000)}{Up to
#'     `per_input_max_n` observations of two or more inputs, [mfsvr()]'s
#'     default (the call gives no kernel) also searches a width per input,
#'     from the chosen Gaussian or Matern kernel's width, with `C`, and keeps
#'     it where its evidence is higher by more than a nat per width added,
#'     and below `per_input_min_n` observations by more than
#'     `per_input_min_n` / \eqn{n} nats (no search below a quarter of
#'     `per_input_min_n`, where that is four). On fewer rows the evidence of
#'     a search of several widths rewards fitting the noise more; the margin
#'     grows with it, so that no size switches the choice abruptly
#'     ("Performance" below). Beyond `per_input_max_n` the search's
#'     dense fits cost as much as several default fits each. (Beyond
#'     `dense_max_n` observations the widths are weighed on `dense_max_n`
#'     rows; see there.)}
#'   \item{`kernel_choice_max_n` (500)}{[rvm()] and [srvm()] weigh their
#'     candidate kernels by a Gaussian process's evidence on at most this
#'     many evenly spaced rows (one eigendecomposition each).}
#'   \item{`width_rule_max_n` (1000)}{The data-driven width of
#'     [rbf_kernel()] (kernlab's sigest rule) looks at most at this many
#'     evenly spaced rows, so it needs no random numbers.}
#'   \item{`basis_chosen` (1000)}{Up to this many distinct inputs each is
#'     a candidate centre of [rvm()] and [srvm()]; beyond, this many of them
#'     are, chosen greedily as inducing inputs are. Their design matrix
#'     costs \eqn{8 n m} bytes, srvm() factors the \eqn{m \times m} prior
#'     precision at every step, and on several thousand candidates rvm()'s
#'     iterations may not converge; the number of candidates grows with the
#'     data up to the rule and then stays, so no size changes it abruptly
#'     ("Performance" below).}
#'   \item{`inducing_factor_mb` (1000)}{A fit on \eqn{m} inducing inputs
#'     (FITC) sweeps over the \eqn{n \times m} factor of its cross-kernel,
#'     \eqn{8 n m} bytes (400 MB at \eqn{n = 10^5}, \eqn{m = 500}). Up to
#'     this many megabytes the factor is held in memory; beyond, its first
#'     rows up to this size are held and the others recomputed in every pass
#'     (about as much work again as the pass itself), so that memory stays
#'     \eqn{O(m^2 + n)} beyond the budget. The fit is the same either way,
#'     to rounding (\eqn{10^{-10}}); only its time and memory change.}
#'   \item{`ep_start_subset_n` (100000)}{Beyond this many observations the
#'     EP of [gpc()] on inducing inputs (`method = "tap"`) starts from the
#'     sites of the same fit on every tenth row (itself so started while it
#'     has more rows than this), the other rows' sites at 0, instead of
#'     from the prior. The first sweeps from the prior move every marginal
#'     by many posterior standard deviations before the extrapolation can
#'     start; from the subset's posterior they do not. The fixed point is
#'     the same; the fit stops within its tolerance of it after about half
#'     the sweeps ("Performance" below).}
#' }
#'
#' @section Performance:
#' Measured up to 2026-12-05 (gpsvm 0.1.0, development version, on a 2-core
#' machine; `bench/` in the sources).
#'
#' * `dense_max_n`: on 2000 rows of Friedman's first function (10 inputs),
#'   the rule at 2000 and at 1999, the two fits (dense, 66 s; FITC on 500
#'   inducing inputs at the choices of the dense default on 1999 rows, 77 s)
#'   predict within 0.013 of a predictive sd of each other, their
#'   intervals' mean widths within 0.1%. Before, the FITC side weighed
#'   neither kernels nor widths per input: 3.7 sd apart, widths 31% wider.
#'   On 2000 rows of three inputs whose kernel matrix has a low rank, where
#'   the rule switches no prior, 0.001 sd apart (52 s and 44 s); before,
#'   the larger side weighed no width per input (`per_input_max_n`): 0.97
#'   sd apart, held-out RMSE 0.2123 against 0.2067.
#' * `per_input_min_n`: on 100 rows of Friedman's first function (three
#'   splits), with the rule at 100 and 101, the two fits are the same; when
#'   it stopped the search below the rule they were 1.9 to 5.7 predictive
#'   sds apart (held-out RMSE 1.40 against 2.31). At 60 rows the search
#'   with a margin of 100/60 nats a width lowered the held-out RMSE from
#'   2.85 to 2.25 (five splits); on BostonHousing at 90 rows it rose from
#'   3.86 to 3.99 while the log score fell from 2.71 to 2.65.
#' * `basis_chosen`: on 1000 rows of Friedman's first function, the rule at
#'   1000 and at 999, [rvm()]'s two fits predict the same (13 s and 9 s);
#'   on 3000 rows its held-out RMSE on 1000 chosen candidates was 1.258
#'   against 1.215 on all 3000 (22 s against 30 s, not converged in 10000
#'   steps), and on 5000 rows the fit on all of them ran 1410 s without
#'   converging.
#' * `calibration_max_n_rvm`: beyond the rule, on Friedman's first function
#'   (2000 held out), [rvm()]'s own 95% intervals held 0.877 of new targets
#'   at 700 rows and 0.918 at 1500; calibrated on 500 of the rows with the
#'   weight 500 / \eqn{n}, 0.939 and 0.943 (log score 1.944 to 1.869 and
#'   1.713 to 1.694), with the widening kept whole 0.953 and 0.976 (1.866
#'   and 1.713). On ten cases of 1000 to 4000 rows (Friedman's three
#'   functions, a sinc with noise growing along the input, diamonds' log
#'   price), the widening kept whole held 0.949 to 0.986, the weighted one
#'   0.925 to 0.963, at a lower log score in nine of them and a total lower
#'   by 0.20.
#' * `calibration_max_n_ep`: the same calibration on 100 rows with the
#'   widening kept whole held 0.991 and 0.981 at 1000 rows of Friedman's
#'   first and third functions ([mfsvr()]; its own 0.970 and 0.967): hence
#'   the weight 100 / \eqn{n}. At the rule, 100 rows of Friedman's first,
#'   [svr()]'s calibrated widths either side differ by a factor 0.94; the
#'   same calibration under other assignments of the rows to folds varies
#'   by 7% (sd) in width.
#' * `search_max_n`: on Friedman's first function (12000 training rows, 10
#'   inputs, 2000 held out), [mfsvr()]'s search on 10000 evenly spaced rows
#'   (its kernel and widths weighed on 2000 of them, see `dense_max_n`)
#'   gave held-out 95% coverage 0.964 at mean width 4.34 and log score
#'   1.455, in 150 s on a busy machine, against 0.995, 7.62 and 1.728 in
#'   3.9 s at the `C = 5` a fit beyond the rule kept before; on 2000 rows
#'   with the rule at 2000 and at 1999 the two fits' predictions differ by
#'   0.02 of a predictive sd.
#' * `gpc_search_max_n`: with the search on 2000 rows, letter A against the
#'   rest (mlbench's LetterRecognition, 8000 training rows) took 46% of the
#'   CPU time of a search on all rows, at held-out log loss 0.0154 against
#'   0.0138 (e1071 0.0226), and kernlab's spam (3221 rows) 52% at 0.177
#'   against 0.174 (e1071 0.186).
#' * `subset_search_inducing_count`: at 150 instead of 300, [gpc()] on
#'   kernlab's spam (3221 rows) took 58% of the CPU time (3.0 times that of
#'   `e1071::svm(probability = TRUE)` instead of 4.3), at held-out log loss
#'   0.174 against 0.177 (e1071 0.185); but on mlbench's DNA (three
#'   classes, 2124 training rows) its log loss was 0.232 against 0.206 and
#'   0.195 against 0.178 on two splits, and on Satellite 0.246 against
#'   0.240, so the default stays at 300.
#' * `ovr_max_nk`: on mlbench's Satellite (6 classes, 4290 training rows)
#'   the joint model took 13% of one-vs-rest's CPU time at held-out log loss
#'   0.243 against 0.240; on Vowel (11 classes, 660 rows) one-vs-rest's log
#'   loss was 0.22-0.23 against the joint model's 0.27-0.28, at 3.5 times
#'   its time. Switched at one size, the two models' probabilities differed
#'   by up to 0.18 (mean 0.004) at 2000 rows of five classes, log loss
#'   0.090 against 0.100; pooled, the fits either side of half the rule and
#'   of the rule differ by less than \eqn{10^{-4}}, where a second sample of
#'   the same size moves them by up to 0.6 (mean 0.006-0.009). In the pool
#'   (two splits of Vowel, weight 0.45) the log loss was 0.246 and 0.247
#'   (one-vs-rest 0.235 and 0.227, joint 0.264 and 0.278, e1071 0.31 and
#'   0.32), the error 0.033 both (0.036, 0.039); on 2000 rows of mlbench's
#'   waveform (weight 0.2) 0.300 (0.299, 0.311), on 1500 of Satellite
#'   (weight 0.8) 0.279 (0.275, 0.281), at one joint fit's time more (3-4 s
#'   on 20-30 s).
#' * `joint_search_max_n`: on 2000 rows of LetterRecognition (26 classes) a
#'   search on 1000 rows took 40% of the CPU time of one on all of them, at
#'   held-out log loss 0.568 against 0.556; on 500 rows the whole fit took
#'   58% of the time on 1000 (27 s of CPU against 47 s on a busy machine,
#'   within 20 times `e1071::svm(probability = TRUE)`'s), at 0.597 (e1071's
#'   0.692).
#' * `ep_start_subset_n`: [gpc()] with 500 inducing inputs on \eqn{10^5}
#'   rows of Friedman's first function (labels \eqn{y > 14.4}, noise 0.1),
#'   the rule lowered below \eqn{10^5}: 12 sweeps after 17 on the
#'   \eqn{10^4}-row subset, 55 CPU seconds, against 24 sweeps and 90 CPU
#'   seconds from the prior (a busy machine); fitted activations (up to 6.6)
#'   differ by \eqn{1.4 \times 10^{-8}}, within the tolerance.
#'
#' @return A data frame with one row per rule: `name`, `value` (in force),
#'   `default`, and `decides` (what it switches).
#' @seealso [gpsvm_plan()] for what a fit's rules decided.
#' @examples
#' gpsvm_size_policy()
#' # a dense prior up to 4000 observations in this session
#' old <- options(gpsvm.size_policy = list(dense_max_n = 4000))
#' gpsvm_size_policy()["dense_max_n", ]
#' options(old)
#' @export
gpsvm_size_policy <- function() {
  value <- vapply(names(.size_policy), .size_rule, integer(1))
  data.frame(name = names(.size_policy), value = value,
             default = vapply(.size_policy, `[[`, numeric(1), "default"),
             decides = vapply(.size_policy, `[[`, character(1), "decides"),
             row.names = names(.size_policy), stringsAsFactors = FALSE)
}

# The table: each rule's default and, in a few words, what it switches (the
# help page above says why each value).
.size_policy <- list(
  search_max_n = list(default = 10000, decides = "mfsvr()'s and svr()'s default on all rows, or on this many; rvm()'s kernels weighed"),
  gpc_search_max_n = list(default = 2000, decides = "gpc()'s default search on all rows, or on search_subset_n"),
  search_subset_n = list(default = 2000, decides = "the rows of gpc()'s default search beyond gpc_search_max_n"),
  subset_search_inducing_count = list(default = 300, decides = "the inducing inputs of gpc()'s search on search_subset_n rows"),
  ovr_max_nk = list(default = 10000, decides = "gpc()'s classes one against the rest up to half this, one joint model from this, both pooled between, by observations x classes"),
  joint_search_max_n = list(default = 500, decides = "the rows of the joint multi-class gpc()'s search"),
  search_dense_max_n = list(default = 300, decides = "gpc()'s search on the full prior, or on FITC"),
  search_inducing_count = list(default = 300, decides = "the inducing inputs of gpc()'s search beyond search_dense_max_n"),
  search_rows_per_inducing = list(default = 3, decides = "at least this many rows per inducing input of gpc()'s search"),
  C_mixture_max_n = list(default = 200, decides = "intervals integrated over C (mfsvr, svr) or the searched hyperparameters (mfsvr)"),
  calibration_min_n = list(default = 10, decides = "the fewest observations calibrated by cross-validation"),
  calibration_max_n_ep = list(default = 100, decides = "intervals calibrated by cross-validation (mfsvr, svr)"),
  calibration_max_n_rvm = list(default = 500, decides = "intervals calibrated by cross-validation (rvm, srvm)"),
  low_rank_min_n = list(default = 1000, decides = "a low-rank factor of the kernel matrix tried (gpc)"),
  low_rank_max = list(default = 1000, decides = "the most pivots of a low-rank factor"),
  dense_max_n = list(default = 2000, decides = "a kernel matrix without low rank kept dense, or FITC"),
  automatic_inducing_count = list(default = 500, decides = "the inducing inputs of the automatic FITC prior"),
  greedy_max_rows = list(default = 20000, decides = "the rows the greedy inducing choice and the low-rank test see"),
  per_input_min_n = list(default = 100, decides = "the fewest observations for which mfsvr()'s default weighs a width per input"),
  per_input_max_n = list(default = 2000, decides = "the most observations for which mfsvr()'s default weighs a width per input"),
  kernel_choice_max_n = list(default = 500, decides = "the rows on which rvm() and srvm() weigh kernels"),
  width_rule_max_n = list(default = 1000, decides = "the rows the data-driven width looks at"),
  basis_chosen = list(default = 1000, decides = "every distinct input a candidate centre of rvm() and srvm(), or this many chosen"),
  inducing_factor_mb = list(default = 1000, decides = "the megabytes of a FITC fit's n x m factor held in memory; its other rows recomputed in every sweep"),
  ep_start_subset_n = list(default = 100000, decides = "gpc()'s EP on inducing inputs started from a fit on every tenth row, or from the prior")
)

# Below per_input_min_n / this many rows (a margin of this many nats a width)
# mfsvr()'s default makes no search of a width per input; a ratio to the
# rule, so that options(gpsvm.size_policy) moves both (R/prior-choice.R).
.per_input_floor_ratio <- 4

# The value in force of one rule: options(gpsvm.size_policy) or the default.
.size_rule <- function(name) {
  rule <- .size_policy[[name]]
  if (is.null(rule)) stop("internal: no size rule '", name, "'", call. = FALSE)
  set <- getOption("gpsvm.size_policy")
  if (!is.null(set) && (!is.list(set) || is.null(names(set)) ||
                        !all(names(set) %in% names(.size_policy)))) {
    .stop(sprintf(paste("options(gpsvm.size_policy) must be a named list of rules among %s;",
                        "see ?gpsvm_size_policy"), paste(names(.size_policy), collapse = ", ")))
  }
  value <- set[[name]] %||% rule$default
  if (!is.numeric(value) || length(value) != 1L || is.na(value) || value < 1 ||
      value != round(value) || value > .Machine$integer.max) {
    .stop(sprintf("options(gpsvm.size_policy)$%s must be a positive whole number", name))
  }
  as.integer(value)
}
