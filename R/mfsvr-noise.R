# The epsilon-insensitive noise model of mfsvr(): its variance and the
# quantiles of the predictive distribution of a new target.

# Variance of the density C / (2 (eps C + 1)) exp(-C L_eps(u)):
# 2 / C^2 + eps^2 (eps C + 3) / (3 (eps C + 1)), eq. (29) of Gao, Gunn, Harris
# and Brown (2002).  The mean-field paper's eq. (5.3) gives a different term,
# which does not follow from the likelihood.
.mfsvr_noise_variance <- function(C, epsilon) {
  2 / C^2 + epsilon^2 * (epsilon * C + 3) / (3 * (epsilon * C + 1))
}
