#!/usr/bin/env bash
# The full check, as CI runs it:
#   1. install missing dependencies (tools/install-deps.sh);
#   2. start the sanitizer stage (tools/sanitize.sh) in the background on a
#      copy of this source tree: install it into a private library with
#      -fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all
#      (UBSan without its alignment, null and pointer-overflow checks, which
#      slowed the suite by half; flags from tools/sanitize.Makevars through R_MAKEVARS_USER; src/Makevars
#      stays portable) and run the testthat suite, without the vignettes,
#      with gcc's libasan preloaded (ASAN_OPTIONS=detect_leaks=0:quarantine_size_mb=64, UBSan
#      printing stacks), its files spread over the cores and its large
#      problems made small (GPSVM_TEST_SIZE=small, see
#      tests/testthat/helper-size.R; the tests that leaves to step 5's
#      full-size run are listed).  Any ASan or UBSan report fails the check,
#      counts as a failed test and is printed;
#   3. meanwhile, fail if re-running roxygen2 or Rcpp::compileAttributes()
#      would change man/, NAMESPACE or the Rcpp exports, or (where pkgdown
#      is installed) if _pkgdown.yml leaves a help topic out;
#   4. in a second background lane, the C++ core compiles without R (every
#      header of inst/include/gpsvm/, on Eigen alone) and its test suite
#      tests/cpp/ passes (tools/cpp-tests.sh: one translation unit, built
#      with the sanitizer flags where gcc has libasan); then the same suite
#      cross-compiled for 64-bit Windows with mingw-w64 and run under wine
#      (tools/windows-check.sh; skipped with its reason where those cannot
#      be installed);
#   5. meanwhile R CMD build, which knits every vignette (a vignette that
#      fails fails the build, and so the check), then R CMD check --as-cran
#      --no-manual --no-vignettes with every test at full size (both
#      compile through ccache, so the second compile is a cache hit, without
#      -g).  Each vignette's code thus runs once, in R CMD build's knitting:
#      R CMD check would run it again (and without --no-build-vignettes knit
#      it a third time), the same code on the same installed package, about
#      90 s of CPU on a quiet 2-core machine;
#   6. fail on any ERROR or WARNING, and on any NOTE whose lines are not all
#      on the allow-list tools/check-notes-allowed.txt;
#   7. wait for the background stages; print how long each stage took and one
#      closing line 'tests: N passed, N failed': the passes of R CMD check's
#      testthat run (expectations) plus the passed cases of the C++ suite
#      and of its Windows build, and the failures of those three plus those
#      of the sanitizer stage.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
work=$(mktemp -d "${TMPDIR:-/tmp}/gpsvm-check.XXXXXX")
status=0
fail() { echo "check: FAIL: $*"; status=1; }
check_start=$(date +%s)
stage_start=$check_start
timings=""
# Records how long the stage that started at $stage_start took.
stage_done() {
  local secs=$(( $(date +%s) - stage_start ))
  echo "check: $1 took $secs s"
  timings="$timings$(printf '  %-44s %5d s' "$1" "$secs")"$'\n'
  stage_start=$(date +%s)
}
# Records the time of a background stage, which it left in $work/secs-$2.
lane_done() {
  local secs
  secs=$(cat "$work/secs-$2" 2>/dev/null || echo 0)
  echo "check: $1 took $secs s (in the background)"
  timings="$timings$(printf '  %-44s %5d s' "$1 (background)" "$secs")"$'\n'
}

# A hermetic --as-cran check: no CRAN/Bioconductor index look-ups and no
# clock look-ups (this machine has no network).
export _R_CHECK_CRAN_INCOMING_REMOTE_=false
export _R_CHECK_SYSTEM_CLOCK_=0
# R's default flags here include -g, and the debug information of the Eigen
# templates is 98% of the shared object (14.7 MB against 0.3 MB), which
# trips the installed-size NOTE.  R's own strip step (_R_SHLIB_STRIP_) is
# pointed at 'strip --strip-debug' instead of its default --strip-unneeded:
# that drops only the debug sections and keeps the symbol table, which the
# check's native-registration scan reads (R_STRIP_SHARED_LIB, see etc/Renviron).
if strip --version 2>/dev/null | grep -q GNU; then
  export R_STRIP_SHARED_LIB="strip --strip-debug"
  export _R_SHLIB_STRIP_=true
fi
export _R_CHECK_FORCE_SUGGESTS_=true
# The examples run while the background lanes share the cores, so their
# elapsed times here are up to twice their CPU times (measured:
# interval_coverage's example, 2.4 s CPU, 5.0 s elapsed).  R CMD
# check's NOTE threshold (5 s of CPU or elapsed time) is raised to 10 s here
# and the 5 s limit is applied to the CPU time alone below, which is what a
# quiet CRAN machine would see.
export _R_CHECK_EXAMPLE_TIMING_THRESHOLD_=10
example_cpu_limit=5

bash tools/install-deps.sh || { echo "tests: 0 passed, 1 failed"; exit 1; }
stage_done "installing dependencies"

# The sanitizer stage starts first, on this source tree (it copies what git
# tracks), and runs beside everything else: about 17 minutes against R CMD
# build and check's 16 on a 2-core machine where all lanes share the cores.
echo "check: sanitizer build and tests started (log $work/sanitize.log)"
# (its seconds are recorded when it ends, in $work/secs-sanitize, so that
# the stage times show its own length and not when it was waited for)
( t0=$(date +%s)
  bash tools/sanitize.sh "$root" "$work/sanitize" >"$work/sanitize.log" 2>&1
  code=$?
  echo $(( $(date +%s) - t0 )) >"$work/secs-sanitize"
  exit "$code" ) &
sanitize_pid=$!
trap '[ -n "$sanitize_pid" ] && kill "$sanitize_pid" 2>/dev/null' EXIT

echo "check: documentation and exports up to date?"
mkdir -p "$work/src-copy"
git ls-files -z 2>/dev/null | xargs -0 -I{} cp --parents {} "$work/src-copy" 2>/dev/null ||
  cp -r . "$work/src-copy"
(cd "$work/src-copy" && Rscript --vanilla -e '
  invisible(Rcpp::compileAttributes("."))
  suppressMessages(roxygen2::roxygenise(".", load_code = roxygen2::load_source))' \
  >"$work/roxygen.log" 2>&1) || { cat "$work/roxygen.log"; fail "roxygen2 failed"; }
for f in NAMESPACE man R/RcppExports.R src/RcppExports.cpp; do
  if ! diff -r "$f" "$work/src-copy/$f" >"$work/drift.diff" 2>&1; then
    cat "$work/drift.diff"
    fail "$f is out of date: run roxygen2::roxygenise() and Rcpp::compileAttributes()"
  fi
done
# The site's reference index (_pkgdown.yml) must list every help topic, or
# `make site` fails; pkgdown is installed by `make site-deps`, not here.
if Rscript --vanilla -e 'quit(status = !requireNamespace("pkgdown", quietly = TRUE))' 2>/dev/null; then
  Rscript --vanilla -e 'pkgdown::check_pkgdown()' >"$work/pkgdown.log" 2>&1 ||
    { cat "$work/pkgdown.log"; fail "_pkgdown.yml does not list every topic (see above)"; }
else
  echo "check: pkgdown is not installed (make site-deps): _pkgdown.yml's topic list not checked"
fi
stage_done "documentation drift"

# The C++ core's suite and its Windows build form a second background lane
# (two compilers' work that needs nothing from the stages below); their
# results are read after R CMD check.
if grep -nE '#include *[<"](Rcpp|R\.h|Rmath|Rinternals|RcppEigen)|SEXP' inst/include/gpsvm/*.hpp; then
  fail "the core in inst/include/gpsvm/ must not use R"   # every core header stands on Eigen alone
fi
echo "check: C++ core suite, then its Windows build, started (logs $work/cpp-tests.log, $work/wincheck.log)"
timed() {  # timed NAME COMMAND...: runs it, leaves its seconds in $work/secs-NAME
  local t0
  t0=$(date +%s)
  "${@:2}"
  echo $(( $(date +%s) - t0 )) >"$work/secs-$1"
}
(
  # tools/cpp-tests.sh compiles every header with the tests in tests/cpp/,
  # under the sanitizers where gcc has libasan, and runs them.
  timed cpp bash tools/cpp-tests.sh "$work/cpp-tests" >"$work/cpp-tests.log" 2>&1
  # long has 32 bits on Windows: a count held in a long breaks there only.
  timed win bash tools/windows-check.sh "$work/wincheck" >"$work/wincheck.log" 2>&1
) &
cpp_pid=$!
trap '[ -n "$sanitize_pid" ] && kill "$sanitize_pid" 2>/dev/null; [ -n "$cpp_pid" ] && kill "$cpp_pid" 2>/dev/null' EXIT

# R CMD build compiles the package (to build the vignettes) and R CMD check
# compiles it again with the same flags: through ccache, where installed,
# the second compile is a cache hit.  Both compile without -g (the debug
# information would be stripped anyway, see above).  (The package is one
# translation unit, src/unity.cpp, so there is nothing to compile in
# parallel.)
{
  echo "CXX17FLAGS = $(R CMD config CXX17FLAGS | sed -E 's/(^| )-g( |$)/ /')"
  if command -v ccache >/dev/null; then
    echo "CXX17 = ccache $(R CMD config CXX17)"
  else
    echo "check: no ccache: R CMD check compiles the package again" >&2
  fi
} >"$work/build.Makevars"
export CCACHE_DIR="$work/ccache"
build_env=(env R_MAKEVARS_USER="$work/build.Makevars")

echo "check: R CMD build"
(cd "$work" && "${build_env[@]}" R CMD build "$root") >"$work/build.log" 2>&1 || { cat "$work/build.log"; fail "R CMD build"; }
tarball=$(ls "$work"/gpsvm_*.tar.gz 2>/dev/null | head -n 1)
stage_done "R CMD build"

if [ -n "$tarball" ]; then
  echo "check: R CMD check --as-cran --no-manual --no-vignettes $(basename "$tarball")"
  (cd "$work" && "${build_env[@]}" R CMD check --as-cran --no-manual --no-vignettes \
    "$tarball") >"$work/check.log" 2>&1
  log="$work/gpsvm.Rcheck/00check.log"
  [ -f "$log" ] || { cat "$work/check.log"; fail "no check log"; }
  [ -f "$log" ] && Rscript --vanilla tools/check-log.R "$log" tools/check-notes-allowed.txt || fail "R CMD check"
else
  fail "no tarball was built"
fi
timings_file="$work/gpsvm.Rcheck/gpsvm-Ex.timings"
if [ -f "$timings_file" ]; then
  slow=$(awk -F'\t' -v limit="$example_cpu_limit" \
    'NR > 1 && $2 + $3 > limit { printf "%s (%.1f s CPU) ", $1, $2 + $3 }' "$timings_file")
  [ -z "$slow" ] || fail "examples over ${example_cpu_limit} s of CPU time: $slow"
fi
command -v ccache >/dev/null &&
  echo "check: ccache: $(ccache -s | grep -E '^ *(Hits|Misses):' | tr -s ' ' | paste -sd ';')"
stage_done "R CMD check --as-cran"

# testthat's summary line: [ FAIL n | WARN n | SKIP n | PASS n ]
rout=$(ls "$work"/gpsvm.Rcheck/tests/testthat.Rout* 2>/dev/null | head -n 1)
passed=0; failed=0
if [ -n "$rout" ] && summary=$(grep -E '\[ FAIL [0-9]+ \| WARN [0-9]+ \| SKIP [0-9]+ \| PASS [0-9]+ \]' "$rout" | tail -n 1); then
  failed=$(sed -E 's/.*FAIL ([0-9]+).*/\1/' <<<"$summary")
  passed=$(sed -E 's/.*PASS ([0-9]+).*/\1/' <<<"$summary")
  case "$rout" in *.fail) tail -n 60 "$rout" ;; esac
else
  fail "no testthat summary found"
  [ -n "$rout" ] && tail -n 60 "$rout"
fi
[ "$failed" -eq 0 ] || fail "$failed test(s) failed"

echo "check: waiting for the C++ suites"
wait "$cpp_pid"
cpp_pid=""
echo "check: the C++ core compiles without R, and its test suite passes?"
summary=$(grep -E '^cpp-tests: [0-9]+ passed, [0-9]+ failed$' "$work/cpp-tests.log" | tail -n 1)
cpp_passed=$(sed -E 's/.* ([0-9]+) passed.*/\1/' <<<"${summary:-cpp-tests: 0 passed, 1 failed}")
cpp_failed=$(sed -E 's/.* ([0-9]+) failed$/\1/' <<<"${summary:-cpp-tests: 0 passed, 1 failed}")
if [ "$cpp_failed" -eq 0 ]; then
  tail -n 3 "$work/cpp-tests.log"
else
  head -n 200 "$work/cpp-tests.log"
  fail "the C++ test suite: $cpp_failed case(s) failed (log $work/cpp-tests.log)"
fi
lane_done "C++ core test suite" cpp
echo "check: the C++ core's test suite built for Windows (mingw-w64) passes under wine?"
win_summary=$(grep -E '^wincheck: ([0-9]+ passed, [0-9]+ failed|skipped .*)$' "$work/wincheck.log" | tail -n 1)
win_passed=0
win_failed=0
case "$win_summary" in
  "wincheck: skipped"*) echo "$win_summary" ;;
  "wincheck: "*passed*)
    win_passed=$(sed -E 's/.* ([0-9]+) passed.*/\1/' <<<"$win_summary")
    win_failed=$(sed -E 's/.* ([0-9]+) failed$/\1/' <<<"$win_summary")
    echo "$win_summary" ;;
  *) win_failed=1 ;;
esac
if [ "$win_failed" -gt 0 ]; then
  head -n 200 "$work/wincheck.log"
  fail "the Windows build of the C++ suite: $win_failed case(s) failed (log $work/wincheck.log)"
fi
lane_done "C++ suite on Windows (mingw-w64, wine)" win

echo "check: waiting for the sanitizer stage"
wait "$sanitize_pid"
sanitize_status=$?
sanitize_pid=""
lane_done "sanitizer stage" sanitize
cat "$work/sanitize.log"
summary=$(grep -E '^sanitize: [0-9]+ passed, [0-9]+ failed$' "$work/sanitize.log" | tail -n 1)
sanitize_failed=$(sed -E 's/.* ([0-9]+) failed$/\1/' <<<"${summary:-sanitize: 0 passed, 1 failed}")
[ "$sanitize_status" -eq 0 ] || [ "$sanitize_failed" -gt 0 ] || sanitize_failed=1
[ "$sanitize_failed" -eq 0 ] || fail "sanitizer stage: $sanitize_failed failed (log $work/sanitize.log)"
failed=$((failed + sanitize_failed))
passed=$((passed + cpp_passed + win_passed))
failed=$((failed + cpp_failed + win_failed))
echo "check: stage times"
printf '%s' "$timings"
printf '  %-44s %5d s\n' "the whole check" "$(( $(date +%s) - check_start ))"
[ "$status" -eq 0 ] && echo "check: OK (logs in $work)" || echo "check: logs in $work"
echo "tests: $passed passed, $failed failed"
exit "$status"
