# Runs the benchmarks, each in a fresh R process (so that one script's
# memory and loaded packages do not colour the next one's figures).
#
#   make bench                      # all of them
#   make bench BENCH="svr srvm"     # some: bench/bench-<name>.R
#
# The scripts' own environment variables (see each file's header) pass
# through, e.g. GPSVM_BENCH_KERNLAB_MAX=2000 make bench BENCH=srvm.
scripts <- sort(Sys.glob(file.path("bench", "bench-*.R")))
wanted <- strsplit(trimws(Sys.getenv("BENCH", "")), "[ ,]+")[[1]]
if (length(wanted) > 0L) {
  names <- sub("^bench-(.*)\\.R$", "\\1", basename(scripts))
  unknown <- setdiff(wanted, names)
  if (length(unknown) > 0L) {
    stop(sprintf("no benchmark %s; there are: %s", paste(unknown, collapse = ", "),
                 paste(names, collapse = ", ")), call. = FALSE)
  }
  scripts <- scripts[names %in% wanted]
}
rscript <- file.path(R.home("bin"), "Rscript")
failed <- character(0)
for (s in scripts) {
  cat(sprintf("\n==== %s ====\n", s))
  status <- system2(rscript, c("--vanilla", shQuote(s)))
  if (status != 0L) failed <- c(failed, s)
}
if (length(failed) > 0L) stop("failed: ", paste(failed, collapse = ", "), call. = FALSE)
