# Checks the built website (run by `make site` after tools/site.R):
#   1. every HTML page of the site: no R error and no R warning in its
#      output (examples and articles run when the site is built);
#   2. the home page, one reference page and one article opened in headless
#      Chromium (Debian's /usr/bin/chromium): each must load, its main content
#      must have no R error, hold at least the figures it is expected to have,
#      and every figure (img element) must point at an image file that exists
#      and is not empty, or carry its image inline.
# Fails (exit status 1) with one line per problem.
#
#   Rscript tools/site-check.R [site directory, default docs]
args <- commandArgs(TRUE)
site <- normalizePath(if (length(args) > 0L) args[1] else "docs", mustWork = FALSE)
# page, and the figures its content must show at least
browser_pages <- c("index.html" = 0L, "reference/mfsvr.html" = 1L,
                   "articles/tidymodels.html" = 1L)

`%||%` <- function(a, b) if (is.null(a)) b else a
problems <- character(0)
problem <- function(page, ...) problems <<- c(problems, sprintf("%s: %s", page, paste0(...)))

# R's error and warning output as knitr (## or #>) and pkgdown's examples
# (downlit marks it with the classes error / warning) print it.
r_output_problems <- function(doc) {
  found <- character(0)
  marked <- xml2::xml_find_all(doc, paste0(
    "//*[contains(concat(' ', normalize-space(@class), ' '), ' error ') or ",
    "contains(concat(' ', normalize-space(@class), ' '), ' warning ')]"))
  found <- c(found, xml2::xml_text(marked))
  code <- unlist(strsplit(xml2::xml_text(xml2::xml_find_all(doc, "//pre")), "\n"))
  found <- c(found, grep("^\\s*(#>|##)?\\s*(Error|Warning)( in |:|\\b message)", code, value = TRUE))
  unique(trimws(found[nzchar(trimws(found))]))
}

if (!dir.exists(site)) {
  problem(site, "no site here; build it with `make site`")
} else {
  pages <- list.files(site, pattern = "\\.html$", recursive = TRUE)
  for (page in pages) {
    for (line in r_output_problems(xml2::read_html(file.path(site, page)))) {
      problem(page, "R output: ", substr(line, 1L, 200L))
    }
  }
}

source(file.path("tools", "chromium.R"))

# The DOM of a page as Chromium renders it.
rendered_dom <- function(path) {
  out <- run_chromium("--dump-dom", paste0("file://", path))
  list(dom = paste(out, collapse = "\n"), status = attr(out, "status"))
}

if (!file.exists(chromium_path())) {
  problem(chromium_path(), "not found; install it with `make site-deps` (Debian's chromium)")
} else if (dir.exists(site)) {
  for (page in names(browser_pages)) {
    path <- file.path(site, page)
    if (!file.exists(path)) {
      problem(page, "missing")
      next
    }
    rendered <- rendered_dom(path)
    if (rendered$status != 0L || !grepl("</html>", rendered$dom, fixed = TRUE)) {
      problem(page, "Chromium did not render it (status ", rendered$status, ")")
      next
    }
    doc <- xml2::read_html(rendered$dom)
    main <- xml2::xml_find_first(doc, "//main")
    if (inherits(main, "xml_missing") || !nzchar(trimws(xml2::xml_text(main)))) {
      problem(page, "no main content")
      next
    }
    for (line in r_output_problems(main)) problem(page, "R output in the browser: ", line)
    # every image must be there; the figures are those other than the
    # package's logo in the page header
    images <- xml2::xml_find_all(main, ".//img")
    figures <- sum(!grepl("\\blogo\\b", xml2::xml_attr(images, "class", default = "")))
    if (figures < browser_pages[[page]]) {
      problem(page, sprintf("%d figure(s), expected at least %d", figures, browser_pages[[page]]))
    }
    for (src in xml2::xml_attr(images, "src")) {
      if (is.na(src) || !nzchar(src)) {
        problem(page, "a figure without a source")
      } else if (startsWith(src, "data:image/")) {
        if (nchar(src) < 100L) problem(page, "an empty inline figure")
      } else {
        file <- file.path(dirname(path), utils::URLdecode(sub("[?#].*$", "", src)))
        if (!file.exists(file) || file.size(file) == 0L) problem(page, "figure file missing: ", src)
      }
    }
    cat(sprintf("site-check: %s rendered in Chromium, %d figure(s)\n", page, figures))
  }
}

if (length(problems) > 0L) {
  cat(sprintf("site-check: FAIL: %s\n", problems), sep = "")
  quit(status = 1)
}
cat("site-check: OK\n")
