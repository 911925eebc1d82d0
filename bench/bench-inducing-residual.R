# How well m inducing inputs capture the kernel matrix of gpc()'s default
# search beyond gpc_search_max_n rows (search_subset_n evenly spaced rows,
# FITC on subset_search_inducing_count inducing inputs chosen greedily at
# the sigest() width; ?gpsvm_size_policy): the relative residual trace
# tr(K - Q_m) / tr(K) after the first m greedy pivots, for m = 25 to 300,
# at that width and at the search's starting width (the median heuristic).
# A count chosen from the data would take fewer inducing inputs where the
# curve is low early; the question is whether it is low where fewer cost
# nothing (kernlab's spam) and high where they cost held-out log loss
# (mlbench's DNA and Satellite).
#
#   R_LIBS=... Rscript bench/bench-inducing-residual.R
#
# spam: bench-binary-large.R's split (3221 training rows); DNA and
# Satellite: bench-classif-data.R's 2/3 splits of seed 1 (2124 and 4290
# rows; one model per class against the rest, whose searches these are).
# The kernel matrix and its pivots are those of the inputs as gpc()
# scales them (read off a cheap fit's x).

suppressPackageStartupMessages(library(gpsvm))
for (p in c("mlbench", "kernlab")) {
  if (!requireNamespace(p, quietly = TRUE)) stop("bench-inducing-residual.R needs ", p)
}

counts <- c(25, 50, 75, 100, 150, 200, 250, 300)

# tr(K - Q_m) / tr(K) for the first m greedy pivots of x under `kernel`
residual_curve <- function(x, kernel) {
  rows <- gpsvm:::.greedy_rows(kernel, x, max(counts))
  knp <- kernel_matrix(kernel, x, x[rows, , drop = FALSE])
  chol_p <- chol(knp[rows, , drop = FALSE] + diag(1e-10, length(rows)))
  g <- t(backsolve(chol_p, t(knp), transpose = TRUE))
  total <- sum(gpsvm:::cpp_kernel_diagonal(kernel, x, 0L, 1L))
  (1 - cumsum(colSums(g^2)) / total)[pmin(counts, length(rows))]
}

curves <- function(name, f, d) {
  fit <- suppressMessages(suppressWarnings(
    gpc(f, d, kernel = rbf_kernel(1), noise = 0.1, inducing = 10, multiclass = "ovr")))
  rows <- gpsvm:::.search_rows(nrow(fit$x))
  x <- if (is.null(rows)) fit$x else fit$x[rows, , drop = FALSE]
  kernel <- rbf_kernel()
  kernel$constant <- fit$kernel$constant
  sigest <- gpsvm:::.with_width(kernel, gpsvm:::.data_driven_width(fit$x))
  start <- gpsvm:::.with_width(kernel, gpsvm:::.data_driven_width(x, quantiles = 0.5))
  rbind(data.frame(set = name, width = sprintf("sigest %.3g", sigest$sigma),
                   t(stats::setNames(signif(residual_curve(x, sigest), 3), paste0("m", counts)))),
        data.frame(set = name, width = sprintf("start %.3g", start$sigma),
                   t(stats::setNames(signif(residual_curve(x, start), 3), paste0("m", counts)))))
}

data(spam, package = "kernlab")
set.seed(63)
i <- sample(nrow(spam), 3221)
e <- new.env()
utils::data(list = c("DNA", "Satellite"), package = "mlbench", envir = e)
split <- function(d) {
  set.seed(1)
  d[sample(nrow(d), round(2 * nrow(d) / 3)), ]
}
print(rbind(curves("spam, 3221", type ~ ., spam[i, ]),
            curves("DNA, 2124", Class ~ ., split(e$DNA)),
            curves("Satellite, 4290", classes ~ ., split(e$Satellite))), row.names = FALSE)
