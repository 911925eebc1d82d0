# Headless Chromium for the site's tools (tools/site.R, tools/site-check.R):
# Debian's /usr/bin/chromium (or GPSVM_CHROMIUM), offline, in a fresh profile
# each time.  Returns Chromium's standard output as lines, with the exit
# status in attr(, "status") (0 when it succeeded).
chromium_path <- function() Sys.getenv("GPSVM_CHROMIUM", "/usr/bin/chromium")

run_chromium <- function(...) {
  profile <- tempfile("chromium-profile-")
  on.exit(unlink(profile, recursive = TRUE), add = TRUE)
  flags <- c("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--hide-scrollbars", paste0("--user-data-dir=", profile), ...)
  out <- suppressWarnings(system2(chromium_path(), shQuote(flags), stdout = TRUE, stderr = FALSE,
                                  timeout = 120))
  if (is.null(attr(out, "status"))) attr(out, "status") <- 0L
  out
}
