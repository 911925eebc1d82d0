#' Where gpsvm departs from the papers it implements
#'
#' The four papers behind gpsvm contain formulas that are wrong, statements
#' that can be read two ways, and algorithms that fail on some inputs. This
#' page lists every place where the package does something other than what a
#' paper prints, why, and which test checks it. The numbering is stable:
#' comments in the code cite "?gpsvm_corrections, item N".
#'
#' The papers, abbreviated below:
#' * **GGH**: J. B. Gao, S. R. Gunn and C. J. Harris (2002), Mean field method
#'   for the support vector machine regression, *Neurocomputing*
#'   ([mfsvr()]).
#' * **GGHB**: J. B. Gao, S. R. Gunn, C. J. Harris and M. Brown (2002), A
#'   probabilistic framework for SVM regression and error bar estimation,
#'   *Machine Learning* 46 ([svr()], [evidence()]).
#' * **OW**: M. Opper and O. Winther (2000), Gaussian processes and SVM: mean
#'   field results and leave-one-out, in *Advances in Large Margin
#'   Classifiers*, MIT Press ([gpc()], [svc()], [loo_error()]).
#' * **BR**: R. W. ter Borg and L. J. M. Rothkrantz (2005), Smooth Bayesian
#'   kernel machines ([srvm()], [rvm()], [roughness_penalty()]).
#'
#' Tests are named by their file in the source package's `tests/testthat/`
#' and the title of the `test_that()` block.
#'
#' @section Item 1. The noise variance of the epsilon-insensitive model:
#' *The paper.* GGH's error bar, eq. (5.3), adds to the latent variance the
#' target-noise term \eqn{2/C^2 + (\epsilon^3 + 3\epsilon^2)/(2C^2(\epsilon +
#' 1))}{2/C^2 + (eps^3 + 3 eps^2) / (2 C^2 (eps + 1))}. GGHB eq. (29) gives
#' \eqn{2/C^2 + \epsilon^2(\epsilon C + 3)/(3(\epsilon C + 1))}{2/C^2 +
#' eps^2 (eps C + 3) / (3 (eps C + 1))} for the same likelihood.
#'
#' *What is right.* The noise density is \eqn{p(u) = k e^{-C(|u| -
#' \epsilon)_+}}{p(u) = k exp(-C (|u| - eps)_+)}, \eqn{k = C/(2(\epsilon C +
#' 1))}{k = C / (2 (eps C + 1))}, and its variance in one line:
#' \eqn{\int u^2 p = 2k(\epsilon^3/3 + \int_0^\infty (\epsilon + s)^2 e^{-Cs}
#' ds) = 2k(\epsilon^3/3 + \epsilon^2/C + 2\epsilon/C^2 + 2/C^3)}{int u^2 p
#' = 2k (eps^3/3 + eps^2/C + 2 eps/C^2 + 2/C^3)}, which is eq. (29). Eq.
#' (5.3) cannot be right for another reason too: rescaling the targets by
#' \eqn{s} (\eqn{\epsilon \to s\epsilon}{eps -> s eps}, \eqn{C \to C/s}{C ->
#' C/s}) must multiply the variance by \eqn{s^2}; eq. (29) does, eq. (5.3)
#' adds \eqn{\epsilon}{eps} to 1 and does not (at \eqn{s = 10}, \eqn{C = 5},
#' \eqn{\epsilon = 0.1}{eps = 0.1} it grows by 149 instead of 100). At the
#' paper's \eqn{C = 5}, \eqn{\epsilon = 0.1}{eps = 0.1} the two give 0.0806
#' and 0.0878; at \eqn{C = 0.5}, \eqn{\epsilon = 2}{eps = 2}, 21.3 and 10.7.
#'
#' *gpsvm.* Eq. (29) everywhere: [svr_noise_variance()], `fit$noise_variance`
#' of [mfsvr()], `residual.scale` of [predict()][predict.gpsvm_regression] for svr fits, and the noise in
#' the prediction intervals of both models (item 16).
#'
#' *Tests.* `test-mfsvr.R`: "the noise variance is eq. (29) of Gao et al.
#' (2002b), not eq. (5.3) of the mean-field paper"; `test-svr.R`: "eq. (29)
#' noise variance is the likelihood's second moment" (both against
#' `integrate()`, the latter for \eqn{C} from 0.05 to 1000).
#'
#' @section Item 2. The derivative of the TAP weight (GGH eq. 3.12):
#' *The paper.* The outer step of GGH's iteration needs
#' \eqn{\partial w_i / \partial \langle y_i \rangle_i}{dw_i / d<y_i>_i}, the
#' slope of the weight in the cavity mean, for \eqn{\Sigma_i = -\sigma_i^2 -
#' (\partial w_i/\partial\langle y_i\rangle_i)^{-1}}{Sigma_i = -sigma_i^2 -
#' 1 / (dw_i / d<y_i>_i)}. Eq. (3.12) (and step 6 of section 4) gives
#' \eqn{C^2 - w_i^2 - (w_i \langle y_i\rangle_i + \sigma_i^2 C^2
#' P_i)/(\sigma_i^2 G_i)}{C^2 - w_i^2 - (w_i <y_i>_i + sigma_i^2 C^2 P_i) /
#' (sigma_i^2 G_i)}, \eqn{P_i}{P_i} the cavity's mass inside the tube.
#'
#' *What is right.* The likelihood depends on \eqn{t_i - y_i} only, so every
#' cavity quantity depends on \eqn{t_i - \langle y_i\rangle_i}{t_i - <y_i>_i}
#' only; eq. (3.12) contains \eqn{\langle y_i\rangle_i}{<y_i>_i} alone and
#' changes when \eqn{t_i} and \eqn{\langle y_i\rangle_i}{<y_i>_i} move
#' together (at \eqn{t = 0.4}, \eqn{\langle y\rangle = 0.1}{<y> = 0.1},
#' \eqn{\sigma^2 = 0.3}{sigma^2 = 0.3}, \eqn{C = 5}, \eqn{\epsilon =
#' 0.1}{eps = 0.1} it gives 14.5, and \eqn{-63.6} after a shift by 10; the
#' true value is \eqn{-2.68} in both places; a positive slope even makes
#' \eqn{\Sigma_i}{Sigma_i} negative). The derivation: with \eqn{Z(m) = \int
#' p(t - f) N(f; m, v) df}{Z(m) = int p(t - f) N(f; m, v) df}, \eqn{w = (\log
#' Z)'}{w = (log Z)'} and \eqn{\partial w/\partial m = Z''/Z - w^2}{dw/dm =
#' Z''/Z - w^2}; in the distributional sense the density's second derivative
#' is \eqn{C^2 p}{C^2 p} outside the tube minus \eqn{Ck}{C k} times a point
#' mass at each edge \eqn{\pm\epsilon}{+-eps}, so \eqn{\partial w/\partial m
#' = C^2(r_+ + r_-) - C(\phi(b_0) + \phi(b_1))/(\sigma G) - w^2}{dw/dm = C^2
#' (r+ + r-) - C (phi(b0) + phi(b1)) / (sigma G) - w^2}, where \eqn{r_\pm}{r+,
#' r-} are the shares of the two tails in \eqn{G}, the cavity mass, and
#' \eqn{b_{0,1} = (t \mp \epsilon - m)/\sigma}{b0, b1 = (t -+ eps - m) /
#' sigma}. It differs from eq. (3.12) only in the edge term, where the paper
#' has \eqn{w\langle y\rangle/(\sigma^2 G)}{w <y> / (sigma^2 G)}.
#'
#' *gpsvm.* The corrected slope, with \eqn{C^2(r_+ + r_-) - w^2}{C^2 (r+ +
#' r-) - w^2} written as \eqn{C^2(r_0(r_+ + r_-) + 4 r_+ r_-)}{C^2 (r0 (r+ +
#' r-) + 4 r+ r-)} (\eqn{r_0}{r0} the tube's share) so that it does not cancel
#' when one tail holds all the mass, in the EP engine and in
#' `mfsvr_control(algorithm = "paper")`.
#'
#' *Tests.* `test-mfsvr.R`: "d log Z / dm and d2 log Z / dm2 match central
#' finite differences" and "the second derivative is not eq. 3.12's: shifting
#' t and m together leaves it unchanged".
#'
#' @section Item 3. Overflow in GGH eqs. (3.8)-(3.9):
#' *The paper.* The weight \eqn{w_i = F_i/G_i}{w_i = F_i / G_i} of eqs.
#' (3.7)-(3.9), and step 4 of the algorithm, multiply
#' \eqn{\exp\{C(\langle y_i\rangle_i - t_i + \epsilon + C\sigma_i^2/2)\}}{exp(C
#' (<y_i>_i - t_i + eps + C sigma_i^2 / 2))} by \eqn{1 - \mathrm{erf}((\langle
#' y_i\rangle_i - t_i + \epsilon + C\sigma_i^2)/\sqrt{2\sigma_i^2})}{1 - erf(...)}.
#'
#' *What is right.* The product is a small, well-defined number, but formed
#' this way it is lost: \eqn{1 - \mathrm{erf}(x)}{1 - erf(x)} loses its digits
#' as \eqn{x} grows and is exactly 0 from about \eqn{x = 6}, and the
#' exponential overflows once its argument passes 709.8.
#' With \eqn{t - \langle y\rangle = 1}{t - <y> = 1}, \eqn{\sigma^2 =
#' 1}{sigma^2 = 1}, \eqn{\epsilon = 0.1}{eps = 0.1} the printed formulas give
#' \eqn{w = 0.924} correctly at \eqn{C = 5}, but 3.45 instead of 0.964 at
#' \eqn{C = 8}, 0 instead of 0.974 at \eqn{C = 10}, and NaN at \eqn{C = 37}
#' and beyond: large \eqn{C\sigma}{C sigma} or far points, exactly where a
#' fit with little noise operates.
#'
#' *gpsvm.* Each tail mass is computed in logs without forming either
#' factor: \eqn{\log(e^{a} \Phi(g))}{log(exp(a) Phi(g))} with \eqn{e^a =
#' \phi(\cdot)/\phi(g)}{exp(a) = phi(.) / phi(g)}, i.e. \eqn{\log\phi(\cdot) -
#' \log(\phi(g)/\Phi(g))}{log phi(.) - log(phi(g) / Phi(g))} for \eqn{g < 0},
#' the Mills ratio taken from the scaled complementary error function
#' \eqn{\mathrm{erfcx}(x) = e^{x^2}\mathrm{erfc}(x)}{erfcx(x) = exp(x^2)
#' erfc(x)}; the three pieces (tube and two tails) are combined by
#' log-sum-exp. The same functions serve the classifiers' probit terms.
#'
#' *Tests.* `test-mfsvr.R`: "moments are finite and right in the far tails
#' (|t - m|/s to 1e3, C s to 1e3)"; `test-special.R`: "log(exp(a) erfc(b)) is
#' finite where the product over- or underflows", "the Mills ratio phi/Phi is
#' finite and accurate in both tails", "log Phi matches pnorm(log.p = TRUE)
#' from -1e5 to +40".
#'
#' @section Item 4. The spikes of the SVR evidence (GGHB eq. 16):
#' *The paper.* Each margin vector contributes \eqn{\log(C/(|\beta_i|(C -
#' |\beta_i|)))}{log(C / (|beta_i| (C - |beta_i|)))} to eq. (16), which
#' diverges as \eqn{|\beta_i|}{|beta_i|} approaches 0 or \eqn{C}. The paper
#' says so, averages its evidence curve (Fig. 2) over 50 data sets to smooth
#' the spikes out, and writes down, without evaluating it, a refined version
#' that keeps a diagonal quadratic term.
#'
#' *What is right.* The spikes come from dropping the quadratic term: the
#' one-dimensional integral \eqn{\int_0^\infty e^{-cu}du = 1/c}{int exp(-c u)
#' du = 1/c} is infinite at \eqn{c = 0}, while with the Gaussian term kept,
#' \eqn{I(c) = \int_0^\infty e^{-cu - hu^2/2}du = \sqrt{\pi/(2h)}\,
#' \mathrm{erfcx}(c/\sqrt{2h})}{I(c) = int exp(-c u - h u^2 / 2) du =
#' sqrt(pi / (2 h)) erfcx(c / sqrt(2 h))} is finite everywhere and tends to
#' \eqn{1/c} as \eqn{h \to 0}{h -> 0}. (\eqn{h_i}{h_i}: item 14.)
#'
#' Neither form is the model's evidence: the expansion around the mode
#' misses much of the posterior's mass at the kinks, and eq. (16) exceeded
#' the model's evidence by 14 to 290 nats on the package's benchmark.
#'
#' *gpsvm.* `logLik()` and [evidence()] give the model's evidence, computed
#' by expectation propagation as for [mfsvr()] (the same model).
#' `evidence(fit, "eq16")` gives eq. (16) as printed, with coefficients
#' within `margin_tol * C` of a bound counted at the bound, so the value is
#' always finite (it still jumps where a point changes set);
#' `evidence(fit, "refined")` gives the refined form with \eqn{\log(I(|\beta_i|)
#' + I(C - |\beta_i|))}{log(I(|beta_i|) + I(C - |beta_i|))} per margin vector;
#' [evidence_curve()] averages over data sets as the paper does, and
#' `svr(optimize = TRUE, control = svr_control(evidence = "eq16"))` searches
#' a grid before refining the best point, since the curve is rough.
#'
#' *Tests.* `test-svr.R`: "eq. (16) evidence equals a plain-R evaluation",
#' "refined evidence: per-margin integrals against integrate()", "singular
#' evidence cases stay finite: |beta| near 0 or C, tiny and huge C",
#' "evidence maximisation returns the best evidence it saw; evidence_curve
#' averages"; `test-evidence.R`: the model's evidence against quadrature and
#' importance sampling.
#'
#' @section Item 5. Kernel widths:
#' *The papers.* Each writes the Gaussian kernel its own way: GGH
#' \eqn{\exp(-|x - x'|^2/\tau^2)}{exp(-|x - x'|^2 / tau^2)} with \eqn{\tau =
#' 2}{tau = 2}; GGHB \eqn{\exp(-(x - y)^2/(2\sigma^2))}{exp(-(x - y)^2 / (2
#' sigma^2))} with \eqn{\sigma^2 = 0.8}{sigma^2 = 0.8}; BR
#' \eqn{\exp(-|x - x_i|^2/(2\sigma^2))}{exp(-|x - x_i|^2 / (2 sigma^2))} with
#' \eqn{\sigma = 1.6}{sigma = 1.6}; OW refer to the book's radial basis
#' covariance and report "\eqn{\sigma^2 = 0.15/N}{sigma^2 = 0.15/N}", with
#' \eqn{N} apparently the input dimension 9 of the Wisconsin data.
#'
#' *What is right.* Read literally in the usual convention, OW's width is
#' \eqn{\sigma^2 = 0.017}{sigma^2 = 0.017}: on standardised inputs in nine
#' dimensions the kernel matrix is then nearly the identity and the naive
#' mean-field leave-one-out error is about 0.34 instead of the paper's
#' 0.027. The reading \eqn{\sigma^2 = 0.15 N = 1.35}{sigma^2 = 0.15 N = 1.35}
#' (squared distances averaged over the inputs) reproduces every fingerprint
#' the paper gives: 272 margin support vectors on a 614-case training set,
#' about 30 mean-field iterations, and 21 and 20 cross-validation errors.
#'
#' *gpsvm.* One convention: `rbf_kernel(sigma)` is
#' \eqn{\exp(-|x - x'|^2/(2\sigma^2))}{exp(-|x - x'|^2 / (2 sigma^2))}. The
#' papers' kernels are `rbf_kernel(2 / sqrt(2))` (GGH), `rbf_kernel(sqrt(0.8))`
#' (GGHB), `rbf_kernel(sqrt(0.15 * 9))` (OW) and `rbf_kernel(1.6)` (BR);
#' kernlab's `rbfdot(sigma = s)` is `rbf_kernel(1 / sqrt(2 * s))` and e1071's
#' `gamma = g` is `rbf_kernel(1 / sqrt(2 * g))` (see [kernels]).
#'
#' *Tests.* `test-kernels.R`: "kernel values match plain-R formulas";
#' `test-svr.R`: "bias = TRUE predictions agree with e1071::svm" (the
#' e1071 conversion); `test-rvm.R`: "rvm agrees with kernlab::rvm on the same
#' kernel" (the kernlab conversion); `test-mfsvr.R`: "parallel, sequential
#' and the paper's iteration reach the same weights on the paper's C sweep"
#' (GGH's kernel written out). OW's reading is established in
#' `vignette("classification")`, section "The kernel width".
#'
#' @section Item 6. The noise in BR's experiment, and the paper's table:
#' *The paper.* BR draw \eqn{y_i \sim N(\mathrm{sinc}(x_i), 0.1)}{y_i ~
#' N(sinc(x_i), 0.1)} without saying whether 0.1 is the variance or the
#' standard deviation, do not define sinc, and do not say where the RMSE of
#' the fits and their derivatives is measured. The text calls its only table
#' "Table 4" and its only figure "Figure 4" (the section's number; the
#' figure is captioned Fig. 1).
#'
#' *What is right.* 0.1 is the standard deviation and sinc is
#' \eqn{\sin(x)/x}{sin(x) / x}: with them the RVM row is reproduced (RMSE of
#' the 0th, 2nd and 4th derivatives 0.050, 0.056, 0.106 against the paper's
#' 0.049, 0.056, 0.108, measured at the training inputs), while a variance of
#' 0.1 (sd 0.32) about triples the errors. Measured on a fine grid instead,
#' the 0th-derivative error is 0.057, so the paper most likely measured at
#' the training inputs.
#'
#' *gpsvm.* `vignette("srvm")` and `inst/scripts/srvm-experiment.R` use sd
#' 0.1 and \eqn{\sin(x)/x}{sin(x) / x}, report the RMSE both ways, and call
#' them "the table" and "Figure 1".
#'
#' *Tests.* This is about the paper's experiment, not the code: the check is
#' `vignette("srvm")` (chunk "noise", the 1000 stored repetitions and a live
#' run of 40), not a unit test.
#'
#' @section Item 7. The times in OW's Table 17.1:
#' *The paper.* Table 17.1 gives CPU seconds on a 433 MHz Alpha: 4 s (5 s
#' with the leave-one-out estimator) and 195 iterations for the adatron SVM, 1
#' s (16 s) and 31 iterations for naive mean field. (The text also says
#' "Table 17.1" once where it means Algorithm 17.1.)
#'
#' *What is right.* Seconds on that machine say nothing about another; what
#' carries over are ratios: naive mean field about 4 times faster than the
#' adatron without the estimator, and slower with it (16 s against 5 s), because
#' its estimator inverts the whole 614 by 614 matrix where the SVM's inverts
#' only the margin support vectors' block.
#'
#' *gpsvm.* `vignette("classification")` puts its own times beside the
#' paper's and compares ratios only; `bench/bench-classif.R` in the source
#' package measures them with the flop counts. The iteration count of the
#' adatron differs by design (item 11).
#'
#' *Tests.* None by design: the package never asserts timings in tests; the
#' numbers are measured by the benchmark and shown in the vignette.
#'
#' @section Item 8. GGH's section-4 iteration with a fixed learning rate:
#' *The paper.* GGH solve the mean-field equations by inner steps \eqn{w_i
#' \leftarrow w_i + \eta(F_i/G_i - w_i)}{w_i <- w_i + eta (F_i / G_i - w_i)}
#' with \eqn{\eta = 0.05}{eta = 0.05} and, every \eqn{M = 30} inner steps, an
#' outer update of \eqn{\Sigma_i}{Sigma_i} and \eqn{\sigma_i^2}{sigma_i^2}
#' (eq. 3.11).
#'
#' *What is right.* On the paper's own example (sinc, 40 points, \eqn{\tau =
#' 2}{tau = 2}, \eqn{\epsilon = 0.1}{eps = 0.1}; data of `vignette("mfsvr")`),
#' with items 2 and 3 corrected, this iteration converges at \eqn{C = 1} but
#' not for \eqn{C \ge 2}{C >= 2}, the paper's \eqn{C = 5} included: within
#' 300 outer iterations its change grows to 0.65 (\eqn{C = 2}), 57 (\eqn{C
#' = 5}) and 160 (\eqn{C = 10}). With \eqn{\eta = 0.005}{eta = 0.005}, or
#' with OW's adaptive rule (\eqn{\eta}{eta} times 1.1 after a step that
#' reduced \eqn{\sum_i (F_i/G_i - w_i)^2}{sum_i (F_i/G_i - w_i)^2}, halved
#' otherwise), it reaches the expectation-propagation weights to
#' \eqn{4\times 10^{-9}}{4e-9} for every \eqn{C \le 10}{C <= 10}; at \eqn{C =
#' 100} neither converges, while EP does in 33 sweeps.
#'
#' *gpsvm.* [mfsvr()] solves the same fixed point by expectation propagation
#' (item 12) with parallel updates whose damping adapts, switching to
#' sequential sweeps if the damping falls below 0.05. The paper's iteration
#' stays available as `mfsvr_control(algorithm = "paper")`, with the adaptive
#' rule by default (`adaptive_eta = FALSE` gives the printed one), and any
#' non-convergence is a warning.
#'
#' *Tests.* `test-mfsvr.R`: "parallel, sequential and the paper's iteration
#' reach the same weights on the paper's C sweep", "EP converges where the
#' paper's iteration does not (C = 100) and handles duplicate inputs", "the
#' paper's algorithm gives the EP weights through mfsvr() and warns when it
#' fails". The fixed-rate divergence is shown in `vignette("mfsvr")`, section
#' "The C sweep".
#'
#' @section Item 9. SVR without a threshold (GGHB eq. 7):
#' *The paper.* GGHB's model has a zero-mean prior and no threshold: \eqn{a(x)
#' = \sum_i \beta_i k(x_i, x)}{a(x) = sum_i beta_i k(x_i, x)}, while the
#' standard dual solvers (libsvm's SMO) move pairs of coefficients and need
#' the equality constraint \eqn{\sum_i \beta_i = 0}{sum_i beta_i = 0} that
#' comes with a threshold.
#'
#' *What is right.* Without a threshold the dual has box constraints only, and
#' the equality constraint must not be imposed: it would fit a different
#' model (it changes the solution whenever the optimal \eqn{\sum_i
#' \beta_i}{sum_i beta_i} is not 0).
#'
#' *gpsvm.* `svr(bias = FALSE)` (the default, the paper's model) runs the same
#' SMO solver with one extra virtual variable that is unbounded and has a zero
#' kernel column: pairing a coefficient with it is an exact one-coefficient
#' step, so the equality constraint is void and \eqn{b = 0} exactly.
#' `bias = TRUE` gives libsvm's model.
#'
#' *Tests.* `test-svr.R`: "bias = FALSE solves the dual: objective and KKT
#' against plain-R coordinate descent", "bias = FALSE with shrinking and a
#' small cache reaches the unshrunk optimum", and for `bias = TRUE` "bias =
#' TRUE predictions agree with e1071::svm".
#'
#' @section Item 10. The absolute stopping rule of OW's Algorithm 17.1:
#' *The paper.* Algorithm 17.1 stops when \eqn{\max_i \delta\alpha_i^2 <
#' ftol = 10^{-5}}{max_i delta alpha_i^2 < ftol = 1e-5}.
#'
#' *What is right.* The test is absolute, but \eqn{\alpha_i}{alpha_i} is of
#' order \eqn{1/\sqrt{k_{ii}}}{1 / sqrt(k_ii)}: with a large kernel diagonal
#' (a large input-noise variance, a polynomial kernel on wide inputs) the
#' first step is already below `ftol`, and the algorithm stops at the start
#' \eqn{\alpha = 0}{alpha = 0} (with `noise = 1e6`: 0 iterations, every
#' prediction 0).
#'
#' *gpsvm.* The paper's rule is kept, so that its results are reproduced
#' (`gpc_control(tol = )` is its `ftol`), but [gpc()] warns when a fit that
#' passed the test took a last step larger than 1 in 100 of the largest
#' \eqn{\alpha_i}{alpha_i}, and names `tol`.
#'
#' *Tests.* `test-gpc.R`: "a kernel of large scale: the paper's absolute ftol
#' warns, a smaller one is right", and "Algorithm 17.1 matches a plain-R
#' transcription step for step" for the rule itself.
#'
#' @section Item 11. The kernel adatron's learning rate and stopping test:
#' *The paper.* OW train the SVM by the parallel kernel adatron with the
#' stopping rule of Algorithm 17.1 (\eqn{\max_i |\delta\alpha_i|^2 <
#' ftol}{max_i |delta alpha_i|^2 < ftol}) and report 195 iterations; they give
#' no learning rate.
#'
#' *What is right.* A fixed rate diverges above \eqn{2/\lambda_{max}(K)}{2 /
#' lambda_max(K)}, which depends on the kernel and the data, and an absolute
#' test on the step accepts the start \eqn{\alpha = 0}{alpha = 0} whenever
#' \eqn{C^2 <} `ftol` (\eqn{C < 0.003}{C < 0.003} at the default): every
#' \eqn{\alpha_i}{alpha_i} then belongs at \eqn{C}, and the returned
#' \eqn{\alpha = 0}{alpha = 0} has a leave-one-out error of 1.
#'
#' *gpsvm.* [svc()] adapts the rate as Algorithm 17.1 does, accepting a step
#' only where it ascends sufficiently and never going below one over the
#' largest absolute row sum of \eqn{K}, where every step ascends; it stops on
#' the step at unit rate (zero exactly at the Kuhn-Tucker point), measured in
#' units of \eqn{C} when \eqn{C < 1}. Results at the paper's settings are
#' unchanged; the iteration counts are lower than the paper's 195.
#'
#' *Tests.* `test-svc.R`: "the adatron reaches the dual optimum of a plain-R
#' coordinate-ascent solver", "a tiny C at the default tolerance reaches the
#' box, not alpha = 0", "the adatron matches kernlab::ipop on the same QP",
#' "the solution satisfies the Kuhn-Tucker conditions".
#'
#' @section Item 12. TAP mean field computed as expectation propagation:
#' *The papers.* GGH (eqs. 3.7-3.11) solve the TAP mean-field equations for
#' the weights, the cavity means and variances and \eqn{\Sigma_i}{Sigma_i}
#' (their own iteration: item 8); OW mention the "more advanced" TAP
#' classifier without giving it.
#'
#' *What is right.* The TAP equations are the fixed-point conditions of
#' expectation propagation (EP): the cavity \eqn{N(\langle y_i\rangle_i,
#' \sigma_i^2)}{N(<y_i>_i, sigma_i^2)} is EP's cavity, \eqn{w_i}{w_i} of eq.
#' (3.7) is the derivative of the log tilted mass in the cavity mean, and
#' \eqn{\Sigma_i}{Sigma_i} of eq. (3.11) is the site variance. \eqn{\Sigma_i}{Sigma_i}
#' is infinite for a point deep inside the tube (its weight does not react to
#' its cavity mean), so it cannot be stored as a number.
#'
#' *gpsvm.* One EP engine serves [mfsvr()] and `gpc(method = "tap")` (the
#' classifier's flip-noise step likelihood on the noisy process), with site
#' precisions \eqn{1/\Sigma_i \ge 0}{1 / Sigma_i >= 0} (exactly 0 deep inside
#' the tube) and the factorisation of \eqn{I + S^{1/2}KS^{1/2}}{I + S^(1/2) K
#' S^(1/2)} instead of \eqn{K + \Sigma}{K + Sigma}. It also gives the evidence.
#'
#' *Tests.* `test-mfsvr.R`: "the EP fixed point satisfies the TAP equations,
#' checked with plain-R linear algebra and integrate()", "for one data point
#' EP is exact: evidence, mean and variance by integrate()", "sites deep
#' inside a wide tube have precision exactly 0 and leave the prior
#' untouched"; `test-tap-classifier.R`: "the TAP classifier reaches the
#' plain-R EP fixed point", "with one point TAP is exact: mean, variance and
#' evidence by quadrature".
#'
#' @section Item 13. The trace identities of the smooth RVM (BR eqs. 7-9):
#' *The paper.* To evaluate updates (8) and (9) cheaply BR use
#' \eqn{\mathrm{tr}(S\lambda L'L) = N - \mathrm{tr}(SA)}{tr(S lambda L'L) = N
#' - tr(S A)} and \eqn{\mathrm{tr}(\Sigma H'H)/\sigma^2 = N -
#' \mathrm{tr}(\Sigma A) - \mathrm{tr}(\Sigma\lambda L'L)}{tr(Sigma H'H) /
#' sigma^2 = N - tr(Sigma A) - tr(Sigma lambda L'L)}, with \eqn{N} the
#' number of data, which is also the \eqn{N} of eq. (9).
#'
#' *What is right.* The identities follow from \eqn{S(\lambda L'L + A) =
#' I}{S (lambda L'L + A) = I} and \eqn{\Sigma(H'H/\sigma^2 + \lambda L'L + A)
#' = I}{Sigma (H'H / sigma^2 + lambda L'L + A) = I}, so their \eqn{N} is the
#' size of those identity matrices: the number of weights in the model,
#' \eqn{N + 1} with the bias at the start and fewer after pruning. The
#' \eqn{N} in the denominator of eq. (9) is the number of data.
#'
#' *gpsvm.* [srvm()] uses the number of weights still in the model in the
#' identities and the number of data in eq. (9).
#'
#' *Tests.* `test-rvm.R`: "srvm iterations follow updates (7)-(9) computed in
#' plain R" (the reference forms every trace from explicit inverses) and "the
#' evidence (logLik) equals the Gaussian marginal likelihood evaluated
#' directly".
#'
#' @section Item 14. The curvature in the refined SVR evidence:
#' *The paper.* The refined evidence after GGHB's eq. (16) keeps, for each
#' margin vector, the diagonal element of the \eqn{X_M}{X_M} block of
#' \eqn{K^{-1}}{K^-1} (as in its eq. 15).
#'
#' *What is right.* The non-margin points enter the expansion with neither a
#' linear nor a quadratic likelihood term, so they integrate out of the prior
#' exactly and leave the marginal prior \eqn{N(0, K_{MM})}{N(0, K_MM)} of the
#' margin values, whose precision is \eqn{K_{MM}^{-1}}{K_MM^-1}, not the block
#' of \eqn{K^{-1}}{K^-1} (that is the precision given all other points, and
#' larger). Eq. (16) itself already uses \eqn{\det K_{MM}}{det K_MM}. On the
#' paper's own example (100 points on \eqn{[0, 4\pi]}{[0, 4 pi]},
#' \eqn{\sigma^2 = 0.8}{sigma^2 = 0.8}) \eqn{K} has condition number about
#' \eqn{10^{20}}{1e20}, so the block of \eqn{K^{-1}}{K^-1} cannot even be
#' formed, while \eqn{(K_{MM}^{-1})_{ii}}{(K_MM^-1)_ii} over 12 margin
#' vectors lies between 1.1 and 6.2.
#'
#' *gpsvm.* `evidence(fit, "refined")` uses \eqn{h_i = (K_{MM}^{-1})_{ii}}{h_i
#' = (K_MM^-1)_ii}.
#'
#' *Tests.* `test-svr.R`: "refined evidence: per-margin integrals against
#' integrate()" (with \eqn{h}{h} from `solve(K[M, M])`).
#'
#' @section Item 15. GGHB's eq. (31) is not an upper bound:
#' *The paper.* Eq. (23) claims that the latent variance is at most
#' \eqn{\sigma_K^2(z) = k(z, z) - k_X(z)'K^{-1}k_X(z)}{sigma_K^2(z) = k(z, z) -
#' k_X(z)' K^-1 k_X(z)} (all training points), and eq. (31) uses it as an
#' upper envelope of the eq. (30) error bar.
#'
#' *What is right.* Conditioning a Gaussian on more points can only reduce
#' its variance, so \eqn{\sigma_K^2 \le \sigma_{K_M}^2}{sigma_K^2 <=
#' sigma_KM^2} (eq. 22, margin vectors only) everywhere: the "bound" lies
#' inside the eq. (22) band. The paper bounds the posterior density by a
#' Gaussian density, which does not bound the variance.
#'
#' *gpsvm.* `predict(fit, bound = TRUE)` gives eq. (31) as defined, and
#' [predict.gpsvm_regression()] documents that it is the narrower band.
#'
#' *Tests.* `test-svr.R`: "error bars: eq. (22), eq. (30) and the eq. (31)
#' bound against plain R" (checks both variances and the ordering).
#'
#' @section Item 16. Prediction intervals from the exact predictive distribution:
#' *The papers.* GGH (Fig. 2) and GGHB (Fig. 4) draw error bars for a new
#' target from a variance alone (eq. 5.3, eq. 30): the mean plus and minus a
#' multiple of its square root, as if the target were Gaussian.
#'
#' *What is right.* A new target is the Gaussian latent value plus
#' epsilon-insensitive noise; its distribution is their convolution (GGHB eq.
#' 28), flat-topped with exponential tails, not Gaussian. Mean plus and minus
#' a normal quantile times its standard deviation is too wide at moderate
#' levels and too narrow far out (`vignette("svr-evidence")` shows half-widths
#' at 95.4, 99.9 and 99.999 in 100).
#'
#' *gpsvm.* `interval = "prediction"` in [predict()][predict.gpsvm_regression] of svr and
#' mfsvr fits returns exact quantiles of the convolution, from
#' its closed-form distribution function by safeguarded Newton steps; the
#' variance (latent plus eq. 29) is still what `se.fit` and
#' `residual.scale` report.
#'
#' *Tests.* `test-svr.R`: "prediction intervals are exact eq. (28) quantiles:
#' far levels, tiny and huge C, bound", "with no latent variance the
#' predictive quantile is the noise quantile"; `test-mfsvr.R`: "the
#' predictive CDF and density match the convolution by quadrature",
#' "prediction intervals are exact quantiles of the latent Gaussian convolved
#' with the noise".
#'
#' @section Item 17. The naive mean-field leave-one-out estimator (OW eq. 17.42):
#' *The paper.* \eqn{\Omega_i = k_{ii}(1/(y_i\alpha_i\langle f_i\rangle) -
#' 1)}{Omega_i = k_ii (1 / (y_i alpha_i <f_i>) - 1)}.
#'
#' *What is right.* \eqn{\Omega_i}{Omega_i} is the linear response of the
#' mean-field map \eqn{\alpha_i = G(z_i)/\sqrt{k_{ii}}}{alpha_i = G(z_i) /
#' sqrt(k_ii)}: \eqn{\Omega_i = k_{ii}(1/(G(z_i)(z_i + G(z_i))) - 1)}{Omega_i
#' = k_ii (1 / (G(z_i) (z_i + G(z_i))) - 1)}. At the fixed point \eqn{y_i
#' \langle f_i\rangle = \sqrt{k_{ii}}(z_i + G(z_i))}{y_i <f_i> = sqrt(k_ii)
#' (z_i + G(z_i))}, so the two agree there; but the paper's form divides by
#' a margin that can vanish before convergence, and for points far on the
#' right side, whose response \eqn{G(z)(z + G(z))} underflows to 0,
#' \eqn{\Omega_i}{Omega_i} is infinite in either form.
#'
#' *gpsvm.* [loo_error()] uses the response form; points with \eqn{\Omega_i
#' = \infty}{Omega_i = Inf} drop out of \eqn{\Omega + K}{Omega + K} and keep
#' their margin (the limit of eq. 17.41), and an indefinite \eqn{\Omega +
#' K}{Omega + K} (possible with label flips, \eqn{\kappa > 0}{kappa > 0}) is
#' inverted by LU instead of Cholesky.
#'
#' *Tests.* `test-loo.R`: "naive mean-field approximate margins are eqs.
#' (17.41) and (17.42)", "eqs. (17.41)-(17.42) with points whose response
#' underflows, and indefinite Omega + K".
#'
#' @section Item 18. The SVM leave-one-out estimator with duplicated inputs (OW eq. 17.29):
#' *The paper.* A margin support vector's leave-one-out margin is \eqn{y_i f_i
#' - \alpha_i/[K_{mSV}^{-1}]_{ii}}{y_i f_i - alpha_i / (K_mSV^-1)_ii}.
#'
#' *What is right.* With duplicated inputs and no noise on the diagonal,
#' \eqn{K_{mSV}}{K_mSV} is singular and the formula has no value. Its limit
#' exists: as a small ridge goes to 0, \eqn{\alpha_i/[K^{-1}]_{ii} \to 0}{alpha_i
#' / (K^-1)_ii -> 0} for a duplicated point, which is the exact answer (its
#' twin takes its place when it is left out).
#'
#' *gpsvm.* [loo_error()] adds the smallest ridge (from \eqn{10^{-12}}{1e-12}
#' of the mean diagonal, growing tenfold) that makes the factorisation
#' succeed.
#'
#' *Tests.* `test-loo.R`: "duplicated inputs without noise: a singular K_mSV
#' is handled in the limit"; "svc approximate margins are eqs. (17.29) and
#' (17.31)" for the formulas.
#'
#' @section Item 19. Derivative kernels in several inputs (BR section 2.1):
#' *The paper.* BR define \eqn{D^n}{D^n} through a vector power
#' \eqn{x^n = (x'x)^{n/2}}{x^n = (x'x)^(n/2)} for even \eqn{n} and
#' \eqn{x(x'x)^{(n-1)/2}}{x (x'x)^((n-1)/2)} for odd \eqn{n}. In the
#' polynomial kernel's formula this makes \eqn{D^n}{D^n} a power of the
#' Laplacian (its gradient for odd \eqn{n}); the Gaussian kernel's formula,
#' physicists' Hermite polynomials of \eqn{(x - x_i)/(\sqrt 2\sigma)}{(x -
#' x_i) / (sqrt(2) sigma)}, has a meaning for one input only. Their
#' experiments have one input.
#'
#' *What is right.* In one dimension their formulas are correct:
#' \eqn{(-\sqrt2\sigma)^{-n}H_n(u/(\sqrt2\sigma))k =
#' (-1/\sigma)^n\mathrm{He}_n(u/\sigma)k}{(-sqrt(2) sigma)^-n H_n(u /
#' (sqrt(2) sigma)) k = (-1/sigma)^n He_n(u / sigma) k} since
#' \eqn{H_n(x) = 2^{n/2}\mathrm{He}_n(\sqrt2 x)}{H_n(x) = 2^(n/2) He_n(sqrt(2)
#' x)}, and the polynomial kernel's derivative vanishes past its degree.
#'
#' *gpsvm.* Derivatives are partial derivatives of order \eqn{n} in one input
#' coordinate (the `deriv` and `wrt` arguments of [kernel_matrix()] and of
#' the `predict()` methods), and [roughness_penalty()] on several inputs adds
#' up, over the coordinates, the penalties on the \eqn{n}-th partial
#' derivatives (no mixed derivatives): a choice that is defined for every
#' kernel. With one input it is the paper's penalty.
#'
#' *Tests.* `test-kernels.R`: "RBF derivatives of orders 1-4 match D() and
#' finite differences" (in both coordinates of a 2-D input), "RBF derivative
#' of order 10 matches the Hermite recurrence in R", "polynomial derivatives
#' match D() and vanish past the degree"; `test-deriv-predict.R`: "mfsvr
#' derivatives in the second input of a polynomial-kernel fit match
#' differences".
#'
#' @references
#' Gao, J. B., Gunn, S. R. and Harris, C. J. (2002). Mean field method for the
#' support vector machine regression. *Neurocomputing*.
#'
#' Gao, J. B., Gunn, S. R., Harris, C. J. and Brown, M. (2002). A
#' probabilistic framework for SVM regression and error bar estimation.
#' *Machine Learning* 46, 71-89.
#'
#' Opper, M. and Winther, O. (2000). Gaussian processes and SVM: mean field
#' results and leave-one-out. In Smola, Bartlett, Schoelkopf and Schuurmans
#' (eds.), *Advances in Large Margin Classifiers*, MIT Press, 311-326.
#'
#' ter Borg, R. W. and Rothkrantz, L. J. M. (2005). Smooth Bayesian kernel
#' machines. In *Knowledge-Based Intelligent Information and Engineering
#' Systems*, Lecture Notes in Computer Science 3682, Springer.
#' @seealso [gpsvm-package], and the vignettes that reproduce the papers:
#'   `vignette("mfsvr")`, `vignette("svr-evidence")`,
#'   `vignette("classification")`, `vignette("srvm")`.
#' @examples
#' # Item 1: the noise variance is the likelihood's second moment (eq. 29),
#' # not eq. (5.3)
#' C <- 5
#' eps <- 0.1
#' noise_density <- function(u) C / (2 * (eps * C + 1)) * exp(-C * pmax(abs(u) - eps, 0))
#' c(eq29 = svr_noise_variance(C, eps),
#'   integral = integrate(function(u) u^2 * noise_density(u), -Inf, Inf)$value,
#'   eq5.3 = 2 / C^2 + (eps^3 + 3 * eps^2) / (2 * C^2 * (eps + 1)))
#'
#' # Item 3: a tail mass of eqs. (3.8)-(3.9), exp(...) (1 - erf(...)) / 2,
#' # formed as printed and in logs (t - <y> = a, cavity variance v)
#' erf <- function(z) 2 * pnorm(z * sqrt(2)) - 1
#' tail_printed <- function(a, C, v) {
#'   exp(C * (eps - a) + C^2 * v / 2) * (1 - erf((eps - a + C * v) / sqrt(2 * v))) / 2
#' }
#' tail_logs <- function(a, C, v) {
#'   exp(C * (eps - a) + C^2 * v / 2 + pnorm((a - eps - C * v) / sqrt(v), log.p = TRUE))
#' }
#' rbind(printed = sapply(c(5, 10, 40), tail_printed, a = 1, v = 1),
#'       logs = sapply(c(5, 10, 40), tail_logs, a = 1, v = 1))
#'
#' # Item 5: GGH's exp(-|x - x'|^2 / tau^2) with tau = 2 is rbf_kernel(2 / sqrt(2))
#' x <- c(-1, 0, 2.5)
#' max(abs(kernel_matrix(rbf_kernel(2 / sqrt(2)), x) - exp(-outer(x, x, "-")^2 / 4)))
#' @name gpsvm_corrections
NULL
