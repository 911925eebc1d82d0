# Binary gpc() at thousands of rows against e1071::svm(probability = TRUE),
# interleaved in one process: held-out accuracy, log loss, elapsed and CPU
# seconds (user + system of the process, every thread) and their ratios to
# e1071's (on a busy machine the CPU time is the steadier figure).  gpc()
# runs with its defaults (beyond gpc_search_max_n rows, 2000, its evidence
# search sees search_subset_n = 2000 evenly spaced rows, then one fit of
# every row; see ?gpsvm_size_policy) and with its search on all rows
# (gpc_all_rows).
#
#   R_LIBS=... Rscript bench/bench-binary-large.R
#   GPSVM_BENCH_SETS=spam GPSVM_BENCH_MODELS=gpc GPSVM_BENCH_REPEATS=3 Rscript bench/bench-binary-large.R
#
# GPSVM_BENCH_SETS: some of letter, spam, segmentation, credit (all by
# default); GPSVM_BENCH_MODELS: some of gpc, gpc_all_rows (both by
# default; e1071 always runs).  GPSVM_BENCH_REPEATS: each set's models
# that many times in turn (e1071, gpc, ..., e1071, gpc, ...), one row per
# run, then the range of each model's CPU ratio to e1071's over the runs
# (a shared machine moves a single ratio by a fifth either way).
#
# Letter A against the rest: mlbench's LetterRecognition, training rows
# 1-8000, test rows 16001-20000.  spam: kernlab's, a seeded 70 : 30 split
# (3221 training rows).  segmentationData: caret's cell images without the
# Cell and Case columns, a seeded 70 : 30 split (1413 training rows, so the
# search sees every row).  credit_data: modeldata's complete cases, a seeded
# 70 : 30 split (2827 training rows); left out when modeldata is not
# installed (it is no dependency of gpsvm).

suppressPackageStartupMessages(library(gpsvm))
for (p in c("mlbench", "kernlab", "e1071", "caret")) {
  if (!requireNamespace(p, quietly = TRUE)) stop("bench-binary-large.R needs ", p)
}

source(file.path("bench", "classif-helpers.R"))
models <- list(
  e1071 = e1071_probabilities,
  gpc = function(f, train, test) predict(gpc(f, train), test, type = "prob"),
  gpc_all_rows = function(f, train, test) {
    old <- options(gpsvm.size_policy = list(gpc_search_max_n = 1e6))
    on.exit(options(old))
    predict(gpc(f, train), test, type = "prob")
  })
models <- models[union("e1071", strsplit(Sys.getenv("GPSVM_BENCH_MODELS", paste(names(models), collapse = ",")),
                                         ",")[[1]])]

sets <- strsplit(Sys.getenv("GPSVM_BENCH_SETS", "letter,spam,segmentation,credit"), ",")[[1]]
repeats <- as.integer(Sys.getenv("GPSVM_BENCH_REPEATS", "1"))
run <- function(name, f, train, test) {
  y <- test[[all.vars(f)[1]]]
  do.call(rbind, lapply(seq_len(repeats), function(k) {
    do.call(rbind, lapply(names(models), function(m) {
      r <- timed(models[[m]](f, train, test))
      p <- r$value
      data.frame(set = name, run = k, model = m,
                 accuracy = mean(colnames(p)[max.col(p, "first")] == as.character(y)),
                 log_loss = log_loss(p, y), seconds = r$time, cpu = r$cpu)
    }))
  }))
}

data(LetterRecognition, package = "mlbench")
letter <- data.frame(LetterRecognition[, -1],
                     A = factor(ifelse(LetterRecognition$lettr == "A", "A", "other")))
data(spam, package = "kernlab")
set.seed(63)
i <- sample(nrow(spam), 3221)
# a seeded 70 : 30 split of d
split_run <- function(name, f, d) {
  set.seed(63)
  i <- sample(nrow(d), round(0.7 * nrow(d)))
  run(sprintf("%s, %d", name, length(i)), f, d[i, ], d[-i, ])
}
data(segmentationData, package = "caret")
segmentation <- segmentationData[, !names(segmentationData) %in% c("Cell", "Case")]
rows <- rbind(if ("letter" %in% sets) run("Letter A, 8000", A ~ ., letter[1:8000, ], letter[16001:20000, ]),
              if ("spam" %in% sets) run("spam, 3221", type ~ ., spam[i, ], spam[-i, ]),
              if ("segmentation" %in% sets) split_run("segmentationData", Class ~ ., segmentation))
if ("credit" %in% sets && requireNamespace("modeldata", quietly = TRUE)) {
  data(credit_data, package = "modeldata")
  credit <- credit_data[stats::complete.cases(credit_data), ]
  rows <- rbind(rows, split_run("credit_data", Status ~ ., credit))
} else if ("credit" %in% sets) {
  message("credit_data left out: modeldata is not installed")
}
key <- paste(rows$set, rows$run)
e1071_row <- match(key, key[rows$model == "e1071"])
rows$time_ratio <- rows$seconds / rows$seconds[rows$model == "e1071"][e1071_row]
rows$cpu_ratio <- rows$cpu / rows$cpu[rows$model == "e1071"][e1071_row]
print(rows, digits = 3, row.names = FALSE)
if (repeats > 1L) {
  ranges <- stats::aggregate(cpu_ratio ~ set + model, rows[rows$model != "e1071", ],
                             function(r) round(c(min = min(r), mean = mean(r), max = max(r)), 2))
  cat("\nCPU ratio to e1071 over", repeats, "interleaved runs:\n")
  print(ranges, row.names = FALSE)
}
