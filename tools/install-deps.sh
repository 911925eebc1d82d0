#!/usr/bin/env bash
# Installs what gpsvm needs to build, check, test and run its vignettes:
# the packages named in DESCRIPTION (Imports, LinkingTo, Suggests), roxygen2
# (for the documentation drift check) and pandoc (for the vignettes).
# With --site, also what `make site` needs: pkgdown and Debian's chromium
# (the site's browser check).
# On Debian as root it uses Debian's r-cran-* packages; whatever is still
# missing afterwards, or older than a package requires (tidymodels on CRAN
# asks for newer rlang, vctrs, hardhat, ... than Debian has), comes from
# CRAN through install.packages() (tools/r-deps.R).  As root on Debian it
# also installs the Windows cross-check's compiler and wine
# (g++-mingw-w64-x86-64, wine64; elsewhere tools/windows-check.sh skips) and
# ccache (elsewhere the check compiles twice).
set -euo pipefail
cd "$(dirname "$0")/.."

extra_r=""
tools="pandoc qpdf"
if [ "${1:-}" = "--site" ]; then
  extra_r="pkgdown"
  tools="$tools chromium"
fi

r_deps() { Rscript --vanilla tools/r-deps.R "$@"; }

is_debian_root() {
  [ -f /etc/debian_version ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null
}

# One install at a time on this machine: two at once (`make test` in two
# checkouts) would fight over R's library lock and each give up on the
# packages the other holds.  The second waits, then finds them installed.
if command -v flock >/dev/null; then
  exec 9>"${TMPDIR:-/tmp}/gpsvm-install-deps.lock"
  flock 9
fi

# shellcheck disable=SC2086
missing=$(r_deps missing $extra_r)
# System tools: pandoc builds the vignettes, qpdf is what R CMD check
# --as-cran uses to check PDF sizes, chromium opens the built site.
tools_missing=""
for t in $tools; do command -v "$t" >/dev/null || tools_missing="$tools_missing $t"; done
# The Windows cross-check (tools/windows-check.sh): the mingw-w64 compiler
# and wine64, whose Debian package puts the program in /usr/lib/wine.
command -v x86_64-w64-mingw32-g++ >/dev/null || tools_missing="$tools_missing g++-mingw-w64-x86-64"
command -v wine64 >/dev/null || [ -x /usr/lib/wine/wine64 ] || tools_missing="$tools_missing wine64"
# ccache: the check compiles the package twice with the same flags (R CMD
# build for the vignettes, R CMD check); the second compile is a cache hit.
command -v ccache >/dev/null || tools_missing="$tools_missing ccache"
# LaTeX, for the PDF manual that `make cran` checks as CRAN does (about 60 MB
# of Debian's packages; tools/cran-check.sh says why it needs no more).
command -v pdflatex >/dev/null ||
  tools_missing="$tools_missing texlive-latex-base texlive-latex-recommended texlive-fonts-recommended"
# HTML Tidy, with which R CMD check --as-cran validates the HTML help pages.
command -v tidy >/dev/null || tools_missing="$tools_missing tidy"
# optipng: the vignettes' figures are compressed losslessly where it is
# present (the built documentation counts toward CRAN's 5 MB installed size).
command -v optipng >/dev/null || tools_missing="$tools_missing optipng"

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
fi

# shellcheck disable=SC2086
if [ -n "$(r_deps unmet $extra_r)" ]; then
  start=$(date +%s)
  # shellcheck disable=SC2086
  r_deps install $extra_r
  echo "install-deps: CRAN packages installed in $(( $(date +%s) - start )) s"
  # shellcheck disable=SC2086
  still=$(r_deps unmet $extra_r)
  if [ -n "$still" ]; then
    echo "install-deps: could not install: $still" >&2
    exit 1
  fi
fi
for t in $tools; do
  if ! command -v "$t" >/dev/null; then
    echo "install-deps: $t is needed; install it (Debian: apt-get install $t)" >&2
    exit 1
  fi
done
echo "install-deps: all dependencies present"
