# CRAN checks the package also without its suggested packages: a test that
# calls pkg:: of a suggested package must skip, or ask requireNamespace(),
# where pkg is absent.  The check without them is the slowest stage of
# `make check`; this finds the omission in a second.

# For each top-level expression of `file`: whether it is a test_that()
# block, the packages it names by pkg::, and those its
# skip_if_not_installed() and requireNamespace() calls ask for.
.package_calls <- function(file) {
  exprs <- parse(file, keep.source = TRUE)
  pd <- utils::getParseData(exprs)
  # a position is line * 1e6 + column: an expression holds the tokens
  # between its first and its last position
  first <- pd$line1 * 1e6 + pd$col1
  last <- pd$line2 * 1e6 + pd$col2
  within <- function(i) first >= first[i] & last <= last[i]
  asking <- pd$id %in% pd$parent[pd$id %in% pd$parent[
    pd$token == "SYMBOL_FUNCTION_CALL" &
      pd$text %in% c("skip_if_not_installed", "requireNamespace")]]
  tops <- which(pd$parent == 0 & pd$token == "expr")
  tops <- tops[order(first[tops])]
  Map(function(e, i) {
    inside <- within(i)
    strings <- Reduce(`|`, lapply(which(asking & inside), within), logical(nrow(pd)))
    is_test <- is.call(e) && identical(e[[1]], as.name("test_that"))
    list(is_test = is_test,
         name = if (is_test) substr(as.character(e[[2]]), 1, 60),
         used = unique(pd$text[inside & pd$token == "SYMBOL_PACKAGE"]),
         asked = unique(gsub("^[\"']|[\"']$", "", pd$text[strings & pd$token == "STR_CONST"])))
  }, as.list(exprs), tops)
}

.unguarded_suggests <- function(file, suggested) {
  exprs <- .package_calls(file)
  is_test <- vapply(exprs, `[[`, logical(1), "is_test")
  file_level <- unlist(lapply(exprs[!is_test], `[[`, "asked"))
  out <- character()
  for (e in exprs[is_test]) {
    missing <- setdiff(intersect(e$used, suggested), c(e$asked, file_level))
    if (length(missing))
      out <- c(out, sprintf("%s, test \"%s\": %s", basename(file), e$name,
                            paste(missing, collapse = ", ")))
  }
  out
}

test_that("every suggested package a test calls is skipped where it is not installed", {
  suggests <- utils::packageDescription("gpsvm")$Suggests
  skip_if(is.null(suggests), "no Suggests field in the installed DESCRIPTION")
  suggested <- trimws(sub("\\(.*", "", strsplit(suggests, ",")[[1]]))
  # R's base packages, and testthat's own imports, are there wherever the tests run
  suggested <- setdiff(suggested, c(rownames(utils::installed.packages(priority = "base")),
                                    "testthat", "withr"))
  files <- list.files(test_path(), "^test-.*\\.R$", full.names = TRUE)
  expect_gt(length(files), 10)
  unguarded <- unlist(lapply(files, .unguarded_suggests, suggested = suggested))
  expect_identical(unguarded, character(), info = paste(unguarded, collapse = "\n"))
})

test_that("the scan sees a suggested package called without its skip", {
  f <- withr::local_tempfile(fileext = ".R")
  writeLines(c('skip_if_not_installed("kernlab")',
               'test_that("a", { x <- MASS::mcycle; y <- kernlab::sigest })',
               'test_that("b", { skip_if_not_installed("MASS"); MASS::mcycle })',
               'test_that("c", { if (requireNamespace("e1071", quietly = TRUE)) e1071::svm })',
               'test_that("d", {',
               '  skip_if_not_installed(c("tune", "e1071"))',
               '  e1071::svm; tune::tune',
               '})',
               'test_that("e", { e1071::svm(MASS::mcycle) })'),
             f)
  expect_identical(.unguarded_suggests(f, c("MASS", "kernlab", "e1071", "tune")),
                   sprintf("%s, test \"%s\": %s", basename(f), c("a", "e"), c("MASS", "e1071, MASS")))
})
