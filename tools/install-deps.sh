#!/usr/bin/env bash
# Installs what gpsvm needs to build, check, test and run its vignettes:
# the packages named in DESCRIPTION (Imports, LinkingTo, Suggests), roxygen2
# (for the documentation drift check) and pandoc (for the vignettes).
# On Debian as root it uses Debian's r-cran-* packages; whatever is still
# missing afterwards comes from CRAN through install.packages().
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
need_pandoc=no
command -v pandoc >/dev/null || need_pandoc=yes

if { [ -n "$missing" ] || [ "$need_pandoc" = yes ]; } && is_debian_root; then
  debs=""
  for p in $missing; do debs="$debs r-cran-$(echo "$p" | tr '[:upper:]' '[:lower:]')"; done
  [ "$need_pandoc" = yes ] && debs="$debs pandoc"
  echo "install-deps: apt-get install$debs"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # One at a time, so a name Debian lacks does not stop the others.
  for deb in $debs; do
    apt-get install -y -qq --no-install-recommends "$deb" >/dev/null 2>&1 ||
      echo "install-deps: Debian has no $deb; trying CRAN"
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
    if (!file.access(.libPaths()[1], 2) == 0) {
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
if ! command -v pandoc >/dev/null; then
  echo "install-deps: pandoc is needed to build the vignettes; install it (Debian: apt-get install pandoc)" >&2
  exit 1
fi
echo "install-deps: all dependencies present"
