# The precomputed vignettes: vignettes/NAME.Rmd.orig is the source whose
# code runs; vignettes/NAME.Rmd, which R CMD build and check knit, is its
# output as R Markdown (the code shown, its results written in, figures in
# vignettes/NAME-figures/), so that building and checking the package runs
# none of it.  These are the vignettes whose computations take longer than a
# CRAN check allows; the others run their code where they are built.
#
#   Rscript tools/vignettes.R write [NAME ...]  # knit every .Rmd.orig (or
#                                              # those named) into its .Rmd
#   Rscript tools/vignettes.R check [NAME ...]  # knit them elsewhere; fail if
#                                              # a .Rmd differs from what its
#                                              # code gives (timings aside)
#
# Both knit with NOT_CRAN=true against the gpsvm first on R's library path
# (`make vignettes` and `make check` put the one to use there).
args <- commandArgs(TRUE)
mode <- if (length(args)) args[1] else ""
if (!mode %in% c("write", "check")) stop("usage: vignettes.R write|check", call. = FALSE)
Sys.setenv(NOT_CRAN = "true")
sources <- Sys.glob("vignettes/*.Rmd.orig")
if (!length(sources)) stop("no vignettes/*.Rmd.orig: run from the package's root", call. = FALSE)
if (length(args) > 1L) {
  wanted <- file.path("vignettes", paste0(args[-1L], ".Rmd.orig"))
  if (!all(wanted %in% sources)) {
    stop("no ", paste(setdiff(wanted, sources), collapse = ", "), call. = FALSE)
  }
  sources <- wanted
}

# Knits one source in a scratch directory and returns the paths of its
# .Rmd and figure directory there.
knit_one <- function(source) {
  name <- sub("\\.Rmd\\.orig$", "", basename(source))
  dir <- tempfile(paste0("vignette-", name))
  dir.create(dir)
  file.copy(source, dir)
  output <- file.path(dir, paste0(name, ".Rmd"))
  old <- setwd(dir)
  on.exit(setwd(old))
  # a fresh environment per vignette, as R CMD build would give each
  knitr::opts_knit$set(base.dir = dir)
  knitr::opts_chunk$set(fig.path = paste0(name, "-figures/"))
  # (lossless, smaller figures where optipng is installed: the vignettes'
  # figures count toward the package's installed size)
  if (nzchar(Sys.which("optipng"))) {
    knitr::knit_hooks$set(optipng = knitr::hook_optipng)
    knitr::opts_chunk$set(optipng = "-quiet -o7")
  }
  t0 <- proc.time()[["elapsed"]]
  knitr::knit(basename(source), output, quiet = TRUE, envir = new.env(parent = globalenv()))
  message(sprintf("vignettes: %s knitted in %.0f s", name, proc.time()[["elapsed"]] - t0))
  list(name = name, rmd = output, figures = file.path(dir, paste0(name, "-figures")))
}

# The text without what varies from run to run: the vignettes mark their
# timings <!--varies-->...<!--/varies--> (HTML comments, which the reader
# does not see).
steady <- function(lines) {
  text <- gsub("(?s)<!--varies-->.*?<!--/varies-->", "<!--varies-->",
               paste(lines, collapse = "\n"), perl = TRUE)
  strsplit(text, "\n", fixed = TRUE)[[1]]
}

stale <- character(0)
for (source in sources) {
  knitted <- knit_one(source)
  target <- file.path("vignettes", paste0(knitted$name, ".Rmd"))
  target_figures <- file.path("vignettes", paste0(knitted$name, "-figures"))
  if (mode == "write") {
    file.copy(knitted$rmd, target, overwrite = TRUE)
    unlink(target_figures, recursive = TRUE)
    if (dir.exists(knitted$figures)) file.copy(knitted$figures, "vignettes", recursive = TRUE)
    next
  }
  now <- steady(readLines(knitted$rmd, warn = FALSE))
  shipped <- steady(if (file.exists(target)) readLines(target, warn = FALSE) else character(0))
  if (!identical(now, shipped)) {
    stale <- c(stale, target)
    changed <- setdiff(now, shipped)
    message(sprintf("vignettes: %s differs from what its code gives now; %d lines, first:\n%s",
                    target, length(changed), paste(head(changed, 10), collapse = "\n")))
  }
}
if (length(stale)) {
  stop("stale precomputed vignettes: ", paste(stale, collapse = ", "),
       "; run `make vignettes` and commit them", call. = FALSE)
}
message("vignettes: ", if (mode == "write") "written" else "up to date", ": ",
        paste(basename(sources), collapse = ", "))
