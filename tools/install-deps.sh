#!/usr/bin/env bash
# Installs what gpsvm needs to build, check, test and run its vignettes:
# the packages named in DESCRIPTION (Imports, LinkingTo, Suggests), roxygen2
# (for the documentation drift check) and pandoc (for the vignettes).
# On Debian as root it uses Debian's r-cran-* packages; whatever is still
# missing afterwards comes from CRAN through install.packages().  There it
# also installs the Windows cross-check's compiler and wine
# (g++-mingw-w64-x86-64, wine64); elsewhere tools/windows-check.sh skips.
set -euo pipefail
cd "$(dirname "$0")/.."

missing_r_packages() {
  Rscript --vanilla -e '
    fields <- c("Imports", "LinkingTo", "Suggests")
    d <- read.dcf("DESCRIPTION", fields = fields)
    deps <- unlist(strsplit(d[!is.na(d)], ","))
    deps <- trimws(sub("\\(.*", "", deps))
    deps <- union(setdiff(deps[nzchar(deps)], rownames(installed.packages(priority = "base"))),
                  "roxygen2")
    have <- vapply(deps, function(p) nzchar(system.file(package = p)), logical(1))
    cat(deps[!have], sep = "\n")'
}

is_debian_root() {
  [ -f /etc/debian_version ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null
}

missing=$(missing_r_packages)
# System tools: pandoc builds the vignettes, qpdf is what R CMD check
# --as-cran uses to check PDF sizes.
tools_missing=""
for t in pandoc qpdf; do command -v "$t" >/dev/null || tools_missing="$tools_missing $t"; done
# The Windows cross-check (tools/windows-check.sh): the mingw-w64 compiler
# and wine64, whose Debian package puts the program in /usr/lib/wine.
command -v x86_64-w64-mingw32-g++ >/dev/null || tools_missing="$tools_missing g++-mingw-w64-x86-64"
command -v wine64 >/dev/null || [ -x /usr/lib/wine/wine64 ] || tools_missing="$tools_missing wine64"

if { [ -n "$missing" ] || [ -n "$tools_missing" ]; } && is_debian_root; then
  debs=""
  for p in $missing; do debs="$debs r-cran-$(echo "$p" | tr '[:upper:]' '[:lower:]')"; done
  debs="$debs$tools_missing"
  echo "install-deps: apt-get install$debs"
  export DEBIAN_FRONTEND=noninteractive
  # offline, the installs below fail one by one and say so
  apt-get update -qq || echo "install-deps: apt-get update failed"
  # One at a time, so a name Debian lacks does not stop the others.
  for deb in $debs; do
    apt-get install -y -qq --no-install-recommends "$deb" >/dev/null 2>&1 ||
      echo "install-deps: Debian has no $deb; trying CRAN (an R package) or going on without it"
  done
  missing=$(missing_r_packages)
fi

if [ -n "$missing" ]; then
  echo "install-deps: install.packages(" $missing ")"
  # shellcheck disable=SC2086
  Rscript --vanilla -e 'p <- commandArgs(TRUE)
    repos <- getOption("repos")
    if (is.null(repos) || identical(unname(repos["CRAN"]), "@CRAN@")) {
      chooseCRANmirror(graphics = FALSE, ind = 1)
      repos <- getOption("repos")
    }
    lib <- Sys.getenv("R_LIBS_USER")
    writable <- file.access(.libPaths()[1], mode = 2) == 0
    if (!writable) {
      dir.create(lib, recursive = TRUE, showWarnings = FALSE)
      .libPaths(c(lib, .libPaths()))
    }
    install.packages(p, repos = repos)' $missing
  still=$(missing_r_packages)
  if [ -n "$still" ]; then
    echo "install-deps: could not install: $still" >&2
    exit 1
  fi
fi
for t in pandoc qpdf; do
  if ! command -v "$t" >/dev/null; then
    echo "install-deps: $t is needed by the check; install it (Debian: apt-get install $t)" >&2
    exit 1
  fi
done
echo "install-deps: all dependencies present"
