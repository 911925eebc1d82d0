#!/usr/bin/env bash
# `make cran`: the package as CRAN builds and checks it.
#
#   bash tools/cran-check.sh [WORK_DIR]
#
# 1. R CMD build of a copy of the files git tracks, in a clean environment:
#    no NOT_CRAN (so the vignettes read their stored results and the tests
#    run at the CRAN size, tests/testthat/helper-size.R), no GPSVM_*
#    variables, R's own compiler flags (with -g: the object is stripped of
#    its debug sections by src/Makevars, as on any user's install).
# 2. R CMD check --as-cran of that tarball, twice:
#    - with every suggested package installed;
#    - with none of them: _R_CHECK_DEPENDS_ONLY_=true gives R's code only
#      the packages of Depends, Imports and LinkingTo (and theirs) besides
#      R's own, and _R_CHECK_FORCE_SUGGESTS_=false lets the check go on
#      without the others, as CRAN's check without suggested packages does.
# 3. Prints each check's time, its NOTEs and its status; fails on any ERROR
#    or WARNING and on a NOTE not on tools/cran-notes-allowed.txt.
#
# Each example must take under 5 s of CPU time (gpsvm-Ex.timings), as CRAN
# asks.  GPSVM_CRAN_BUSY=true (set by `make check`, whose other lanes share
# the cores) judges the examples by that alone: R CMD check's own NOTE,
# which also counts elapsed time, is raised to 20 s there.
#
# Four settings differ from a CRAN machine's.  The package enhances arrow
# (parquet partitions), which is not installed here (a long compile of its
# C++ library): its absence is not noted
# (_R_CHECK_PACKAGE_DEPENDS_IGNORE_MISSING_ENHANCES_=true).  The machine may have no
# network: no look-ups of CRAN's and Bioconductor's indexes
# (_R_CHECK_CRAN_INCOMING_REMOTE_=false) or of the clock
# (_R_CHECK_SYSTEM_CLOCK_=0).  The PDF manual is typeset without the
# inconsolata font (R_RD4PDF=times,hyper), which Debian ships only in a
# 500 MB package of fonts: the font does not change whether the help pages
# typeset, which is what the check finds out.  Where LaTeX is missing the
# manual is not checked (--no-manual), and the script says so.  Where ccache
# is installed the compiler runs behind it (the same flags; the second and
# third compiles are cache hits: CCACHE_NOHASHDIR lets a compile in the
# check's directory hit one made in the build's, though -g records the
# directory, whose debug sections the install strips).
set -uo pipefail
. "$(dirname "$0")/common.sh"
work=$(work_dir cran "${1:-}")
status=0
start=$(date +%s)

mkdir -p "$work/src"
(cd "$root" && git ls-files -z | xargs -0 -I{} cp --parents {} "$work/src") ||
  { echo "cran: cannot copy the sources"; exit 1; }
: >"$work/Makevars"
command -v ccache >/dev/null && echo "CXX17 = ccache $(R CMD config CXX17)" >"$work/Makevars"
mkdir -p "$work/ccache"
clean_env=(env -i PATH="$PATH" HOME="$HOME" LANG="${LANG:-C.UTF-8}" TZ="${TZ:-UTC}"
           TMPDIR="${TMPDIR:-/tmp}" R_MAKEVARS_USER="$work/Makevars" CCACHE_DIR="$work/ccache"
           CCACHE_NOHASHDIR=true
           _R_CHECK_CRAN_INCOMING_REMOTE_=false _R_CHECK_SYSTEM_CLOCK_=0 R_RD4PDF=times,hyper
           _R_CHECK_PACKAGE_DEPENDS_IGNORE_MISSING_ENHANCES_=true)
manual=()
if ! command -v pdflatex >/dev/null; then
  manual=(--no-manual)
  echo "cran: no pdflatex: the PDF manual is not checked (Debian: texlive-latex-base)"
fi

[ "${GPSVM_CRAN_BUSY:-false}" = true ] && clean_env+=(_R_CHECK_EXAMPLE_TIMING_THRESHOLD_=20)
example_cpu_limit=5

t0=$(date +%s)
(cd "$work" && "${clean_env[@]}" R CMD build src) >"$work/build.log" 2>&1 ||
  { cat "$work/build.log"; echo "cran: R CMD build failed"; echo "cran: FAIL"; exit 1; }
tarball=$(ls "$work"/gpsvm_*.tar.gz | head -n 1)
echo "cran: R CMD build took $(( $(date +%s) - t0 )) s; $(basename "$tarball"): $(du -k "$tarball" | cut -f1) kB"
# (the tarball's path, for `make check`, which checks this tarball too)
echo "$tarball" >"$work/built.tmp" && mv "$work/built.tmp" "$work/built"

failed_settings=0
check() {  # check LABEL [VAR=VALUE ...]
  local label=$1 dir="$work/$1" t0 log secs before=$status
  status=0
  shift
  mkdir -p "$dir"
  t0=$(date +%s)
  (cd "$dir" && "${clean_env[@]}" "$@" R CMD check --as-cran "${manual[@]}" "$tarball") >"$dir/check.out" 2>&1
  secs=$(( $(date +%s) - t0 ))
  log="$dir/gpsvm.Rcheck/00check.log"
  echo "cran: R CMD check --as-cran, $label: $secs s"
  if [ ! -f "$log" ]; then
    tail -n 40 "$dir/check.out"
    echo "cran: $label: no check log"
    status=1
    return
  fi
  grep -E '^\* .*(NOTE|WARNING|ERROR)$' "$log" | sed 's/^/cran:   /'
  Rscript --vanilla "$root/tools/check-log.R" "$log" "$root/tools/cran-notes-allowed.txt" |
    sed "s/^/cran: $label: /" || status=1
  timings="$dir/gpsvm.Rcheck/gpsvm-Ex.timings"
  if [ -f "$timings" ]; then
    slow=$(awk -F'\t' -v limit="$example_cpu_limit" \
      'NR > 1 && $2 + $3 > limit { printf "%s (%.1f s CPU) ", $1, $2 + $3 }' "$timings")
    if [ -n "$slow" ]; then
      echo "cran: $label: examples over $example_cpu_limit s of CPU time: $slow"
      status=1
    fi
  fi
  if [ -f "$dir/gpsvm.Rcheck/gpsvm/libs/gpsvm.so" ]; then
    echo "cran: $label: installed size $(du -sk "$dir/gpsvm.Rcheck/gpsvm" | cut -f1) kB," \
      "of which the shared object $(du -k "$dir/gpsvm.Rcheck/gpsvm/libs/gpsvm.so" | cut -f1) kB"
  fi
  [ "$status" -eq 0 ] || failed_settings=$((failed_settings + 1))
  [ "$before" -eq 0 ] || status=$before
}
check "with-suggests" _R_CHECK_FORCE_SUGGESTS_=true
check "without-suggests" _R_CHECK_FORCE_SUGGESTS_=false _R_CHECK_DEPENDS_ONLY_=true

echo "cran: $(( $(date +%s) - start )) s in all (logs in $work)"
[ "$status" -eq 0 ] && echo "cran: OK" || echo "cran: FAIL: $failed_settings of 2 settings"
exit "$status"
