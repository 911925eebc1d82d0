# Reads an R CMD check log; fails on ERROR, WARNING, or a NOTE with a line
# that the allow-list does not cover.  Usage: Rscript check-log.R LOG ALLOW
args <- commandArgs(TRUE)
log <- readLines(args[1], warn = FALSE)
allow <- readLines(args[2], warn = FALSE)
allow <- allow[nzchar(allow) & !startsWith(allow, "#")]

heads <- grep("^\\* ", log)
ends <- c(heads[-1] - 1L, length(log))
bad <- 0L
for (k in seq_along(heads)) {
  head <- log[heads[k]]
  kind <- regmatches(head, regexpr("(ERROR|WARNING|NOTE)$", head))
  if (!length(kind)) next
  body <- log[seq.int(heads[k] + 1L, length.out = max(0L, ends[k] - heads[k]))]
  body <- trimws(body[nzchar(trimws(body))])
  covered <- vapply(body, function(l) any(vapply(allow, grepl, logical(1), x = l)), logical(1))
  if (kind == "NOTE" && length(body) && all(covered)) {
    cat("allowed NOTE:", head, "\n")
    next
  }
  bad <- bad + 1L
  cat(c(head, body), sep = "\n")
}
status <- grep("^Status:", log, value = TRUE)
cat(if (length(status)) status else "Status: unknown", "\n")
quit(status = if (bad > 0L) 1L else 0L)
