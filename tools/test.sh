#!/usr/bin/env bash
# The edit-test loop (`make test`, after `make install`):
#   1. the C++ core's suite (tools/cpp-tests.sh --plain: no sanitizers, so
#      it builds in about half the time), in the background;
#   2. the testthat suite at the small size (GPSVM_TEST_SIZE=small,
#      NOT_CRAN=true: see tests/testthat/helper-size.R) against the package
#      installed in .lib/, by one R process per core taking the files from a
#      queue, the longest first (tools/test-file.R --queue); the test-only
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

if [ $# -gt 0 ]; then
  files=()
  for f in "$@"; do
    f=${f#test-}; f=${f%.R}
    files+=("tests/testthat/test-$f.R")
  done
else
  # the longest first (by the last run's times in .lib/test-times, else by
  # size), so that the cores finish together
  mapfile -t files < <(
    for f in tests/testthat/test-*.R; do
      t=$(awk -v f="$(basename "$f")" '$2 == f {print $1}' "$lib/test-times" 2>/dev/null)
      echo "${t:-$(( $(stat -c %s "$f") / 1000 ))} $f"
    done | sort -rn | cut -d' ' -f2)
fi
export GPSVM_TEST_SIZE=small NOT_CRAN=true R_LIBS="$lib${R_LIBS:+:$R_LIBS}"
export GPSVM_PROBE_CACHE="$work/probe-cache"
Rscript --vanilla -e 'library(testthat); source("tests/testthat/helper-probes.R")
  invisible(compile_core_probes())' >"$work/probes.log" 2>&1 ||
  { cat "$work/probes.log"; echo "test: the core probes did not compile"; }

# Two or more R processes (one per core) take the files from a queue, the
# longest first, so that the cores finish together (tools/test-file.R).
queue="$work/queue"
mkdir -p "$queue"
i=0
for file in "${files[@]}"; do
  i=$((i + 1))
  if [ -f "$file" ]; then
    printf '%s\n' "$file" >"$queue/$(printf '%04d' "$i") $(basename "$file")"
  else
    echo "test: no $file"
    echo "1" >"$work/$(basename "$file").status"
  fi
done
for _ in $(seq "$(nproc)"); do
  timeout 1800 Rscript --vanilla tools/test-file.R --queue "$queue" "$work" >>"$work/workers.log" 2>&1 &
done
wait
passed=0
failed=0
for file in "${files[@]}"; do
  name=$(basename "$file")
  result=$(grep -E '^sanitize-result: ' "$work/$name.log" 2>/dev/null | tail -n 1)
  if [ -z "$result" ]; then
    tail -n 30 "$work/$name.log" 2>/dev/null
    echo "test: $name ended without a result (status $(cat "$work/$name.status" 2>/dev/null))"
    failed=$((failed + 1))
    continue
  fi
  p=$(sed -E 's/.* ([0-9]+) passed.*/\1/' <<<"$result")
  f=$(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"$result")
  [ "$f" -gt 0 ] && tail -n 60 "$work/$name.log"
  passed=$((passed + p))
  failed=$((failed + f))
done
# the files that cost the most, for whoever wants the loop quicker, and
# every file's time for the next run's order
for file in "${files[@]}"; do
  name=$(basename "$file")
  t=$(grep -E '^sanitize-time: ' "$work/$name.log" 2>/dev/null | tail -n 1 | sed -E 's/^sanitize-time: ([0-9.]+) s CPU, ([0-9.]+) s elapsed/\2/')
  [ -n "$t" ] && echo "$t $name"
done | sort -rn >"$work/times"
[ $# -eq 0 ] && cp "$work/times" "$lib/test-times"
head -n 5 "$work/times" | awk '{printf "test: slowest: %s (%s s)\n", $2, $1}'
echo "test: R suite (small size): $passed passed, $failed failed, $(( $(date +%s) - start )) s"

# (the wait above reaped the C++ suite too)
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
