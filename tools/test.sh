#!/usr/bin/env bash
# The edit-test loop (`make test`, after `make install`):
#   1. the C++ core's suite (tools/cpp-tests.sh --plain: no sanitizers, so
#      it builds in about half the time), in the background;
#   2. the testthat suite at the small size (GPSVM_TEST_SIZE=small,
#      NOT_CRAN=true: see tests/testthat/helper-size.R) against the package
#      installed in .lib/, by one R process per core taking the files from a
#      queue, the longest first (tools/run-r-tests.sh); the test-only
#      core probes are compiled once, before the files.
#
#   bash tools/test.sh [FILE ...]    FILE: test-svr.R, or svr, for some files
#
# Ends with one line 'test: N passed, N failed' (expectations and C++
# cases) and a non-zero status on any failure.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
lib="$root/.lib"
work=$(mktemp -d "${TMPDIR:-/tmp}/gpsvm-test.XXXXXX")
start=$(date +%s)

# Where ccache is installed both compiles below (the C++ suite's one unit
# and the probes) go through it, with the cache in .lib/: after an edit of
# R code alone they are cache hits, and an edit of a header or a test is
# seen by ccache's own hashing of every file the unit includes.  The suite
# is built in .lib/ for the same reason: its unit's path then stays the same.
cxx=${CXX:-g++}
probe_makevars="$work/probe.Makevars"
echo "CXX17FLAGS = -O1 -g0" >"$probe_makevars"
if command -v ccache >/dev/null; then
  export CCACHE_DIR=${CCACHE_DIR:-$lib/ccache} CCACHE_NOHASHDIR=true
  cxx="ccache $cxx"
  echo "CXX17 = ccache $(R CMD config CXX17)" >>"$probe_makevars"
fi
export GPSVM_PROBE_MAKEVARS="$probe_makevars"
CXX="$cxx" bash tools/cpp-tests.sh --plain "$lib/cpp-tests" >"$work/cpp.log" 2>&1 &
cpp_pid=$!

files=()
for f in "$@"; do
  f=${f#test-}; f=${f%.R}
  files+=("tests/testthat/test-$f.R")
done
export GPSVM_TEST_SIZE=small NOT_CRAN=true
export GPSVM_PROBE_CACHE="$work/probe-cache"
R_LIBS="$lib${R_LIBS:+:$R_LIBS}" Rscript --vanilla -e 'library(testthat)
  source("tests/testthat/helper-probes.R"); invisible(compile_core_probes())' \
  >"$work/probes.log" 2>&1 ||
  { cat "$work/probes.log"; echo "test: the core probes did not compile"; }

# One R process per core takes the files from a queue, the longest first
# by the last run's times (tools/run-r-tests.sh).
bash tools/run-r-tests.sh "$lib" "$work/r" "$lib/test-times" "${files[@]}" >"$work/r.log" 2>&1
grep -v '^tests-run: [0-9]' "$work/r.log" | sed 's/^tests-run: /test: /'
r=$(grep -E '^tests-run: [0-9]+ passed, [0-9]+ failed$' "$work/r.log" | tail -n 1)
passed=$(sed -E 's/.* ([0-9]+) passed.*/\1/' <<<"${r:-x 0 passed}")
failed=$(sed -E 's/.* ([0-9]+) failed$/\1/' <<<"${r:-x 1 failed}")
echo "test: R suite (small size): $passed passed, $failed failed, $(( $(date +%s) - start )) s"

wait "$cpp_pid"
cpp=$(grep -E '^cpp-tests: [0-9]+ passed, [0-9]+ failed$' "$work/cpp.log" | tail -n 1)
[ -n "$cpp" ] || { cat "$work/cpp.log"; cpp="cpp-tests: 0 passed, 1 failed"; }
cpp_failed=$(sed -E 's/.* ([0-9]+) failed$/\1/' <<<"$cpp")
[ "$cpp_failed" -gt 0 ] && head -n 100 "$work/cpp.log"
echo "test: C++ suite: ${cpp#cpp-tests: }"
passed=$((passed + $(sed -E 's/.* ([0-9]+) passed.*/\1/' <<<"$cpp")))
failed=$((failed + cpp_failed))
echo "test: $(( $(date +%s) - start )) s in all (logs in $work)"
echo "test: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
