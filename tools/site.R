# Builds the package's website into docs/ with pkgdown (run by `make site`,
# after `make install` has put gpsvm into .lib, which comes first on the
# library path: pkgdown then runs the examples and articles against that
# build instead of compiling the package again).  Any R warning raised while
# building fails the build; each is printed with the page being built.
#
#   Rscript tools/site.R
if (!requireNamespace("pkgdown", quietly = TRUE)) {
  stop("the site needs pkgdown: run `make site-deps`", call. = FALSE)
}
# Offline: pkgdown would otherwise ask CRAN and Bioconductor whether the
# package is published there, for a link on the home page.
options(pkgdown.internet = FALSE)

# pkgdown makes the favicons of a package with a logo by a web service,
# unless pkgdown/favicon/ holds them: they are drawn here from the logo by
# headless Chromium, in the sizes pkgdown's pages link to, for this build.
source(file.path("tools", "chromium.R"))
draw_favicons <- function(logo = "man/figures/logo.svg", dir = "pkgdown/favicon") {
  dir.create(dir, recursive = TRUE, showWarnings = FALSE)
  sizes <- c("favicon-16x16" = 16, "favicon-32x32" = 32, "apple-touch-icon" = 180,
             "apple-touch-icon-120x120" = 120, "apple-touch-icon-76x76" = 76,
             "apple-touch-icon-60x60" = 60)
  page <- tempfile(fileext = ".html")
  for (name in names(sizes)) {
    size <- sizes[[name]]
    writeLines(sprintf(paste0("<html><body style=\"margin:0;background:transparent\">",
                              "<img src=\"file://%s\" style=\"display:block;height:%dpx;",
                              "margin:0 auto\"></body></html>"),
                       normalizePath(logo), size), page)
    png <- file.path(dir, paste0(name, ".png"))
    run_chromium("--default-background-color=00000000", sprintf("--window-size=%d,%d", size, size),
                 paste0("--screenshot=", normalizePath(png, mustWork = FALSE)), paste0("file://", page))
    if (!file.exists(png)) stop("Chromium did not draw ", png, call. = FALSE)
  }
}

warnings <- character(0)
tryCatch({
  draw_favicons()
  withCallingHandlers(
    pkgdown::build_site(".", devel = FALSE, new_process = FALSE, install = FALSE,
                        preview = FALSE),
    warning = function(w) {
      warnings <<- c(warnings, conditionMessage(w))
      message("site: WARNING: ", conditionMessage(w))
      invokeRestart("muffleWarning")
    })
}, finally = unlink("pkgdown", recursive = TRUE))
if (length(warnings) > 0L) {
  cat(sprintf("site: %d warning(s) while building; the site is not clean\n", length(warnings)))
  quit(status = 1)
}
cat("site: built into docs/ without a warning\n")
