#!/usr/bin/env bash
# The full check, as CI runs it:
#   1. install missing dependencies (tools/install-deps.sh);
#   2. start the sanitizer stage (tools/sanitize.sh) in the background on a
#      copy of this source tree: install it into a private library with
#      -fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all
#      (UBSan without its alignment, null and pointer-overflow checks, which
#      slowed the suite by half; flags from tools/sanitize.Makevars through R_MAKEVARS_USER; src/Makevars
#      stays portable) and run the testthat suite (less the R-interface
#      files of tools/sanitize-left-out.txt), without the vignettes,
#      with gcc's libasan preloaded (ASAN_OPTIONS as tools/sanitize.sh sets them, UBSan
#      printing stacks), its files spread over the cores and its large
#      problems made small (GPSVM_TEST_SIZE=small, see
#      tests/testthat/helper-size.R; the tests that leaves to step 6's
#      full-size run are listed).  Any ASan or UBSan report fails the check,
#      counts as a failed test and is printed;
#   3. start `make cran` (tools/cran-check.sh) in the background: the
#      package built and checked as CRAN would, with R's default flags and
#      without NOT_CRAN, with every suggested package and with none;
#   4. meanwhile, fail if re-running roxygen2 or Rcpp::compileAttributes()
#      would change man/, NAMESPACE or the Rcpp exports, or (where pkgdown
#      is installed) if _pkgdown.yml leaves a help topic out;
#   5. in a further background lane, the C++ core compiles without R (every
#      header of inst/include/gpsvm/, on Eigen alone) and its test suite
#      tests/cpp/ passes (tools/cpp-tests.sh: one translation unit, built
#      with the sanitizer flags where gcc has libasan); then the same suite
#      cross-compiled for 64-bit Windows with mingw-w64 and run under wine
#      (tools/windows-check.sh; skipped with its reason where those cannot
#      be installed);
#   6. meanwhile, the tarball step 3 built installed (compiled through step
#      3's ccache with its flags, a cache hit) and its tests run at full
#      size (NOT_CRAN=true), one R process per core taking the files from a
#      queue (tools/run-r-tests.sh); R CMD check --as-cran of that same
#      tarball, its code, help pages, examples and vignettes, is step 3's;
#   7. the precomputed vignettes' code (vignettes/*.Rmd.orig) knitted
#      against the package step 6 installed: fail if a vignette the package
#      ships differs from what its code gives now (tools/vignettes.R);
#   8. (step 3 fails on any ERROR or WARNING of its R CMD checks, and on any
#      NOTE whose lines are not all on the allow-list
#      tools/cran-notes-allowed.txt);
#   9. wait for the background stages; print how long each stage took and one
#      closing line 'tests: N passed, N failed': the passes of the full-size
#      testthat run (expectations) plus the passed cases of the C++ suite
#      and of its Windows build, and the failures of those three plus those
#      of the sanitizer stage, one for each failed setting of `make cran`
#      and one for stale precomputed vignettes.
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
# timed NAME LOG COMMAND...: runs the command, its output in LOG, and leaves
# "WALL CPU" in $work/secs-NAME: its wall-clock seconds and the CPU seconds
# (user + system) of it and every process it waited for.  The lanes share
# the cores, so a lane's CPU says what it costs; the sum over the lanes,
# divided by the cores, bounds the whole check's wall time from below.
# (GNU time measures the one child it waits for; where it is missing the
# CPU is not recorded.)
timed() {
  local name=$1 log=$2 t0 code cpu="?"
  shift 2
  t0=$(date +%s)
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -f '%U %S' -o "$work/rusage-$name" "$@" >"$log" 2>&1
    code=$?
    cpu=$(awk 'END { printf "%d", $1 + $2 }' "$work/rusage-$name" 2>/dev/null)
  else
    "$@" >"$log" 2>&1
    code=$?
  fi
  echo "$(( $(date +%s) - t0 )) ${cpu:-?}" >"$work/secs-$name"
  return "$code"
}
# Records the times of a stage run by timed().
lane_done() {
  local secs cpu
  read -r secs cpu <"$work/secs-$2" 2>/dev/null || { secs=0; cpu="?"; }
  echo "check: $1 took $secs s, $cpu s of CPU${3:+ ($3)}"
  timings="$timings$(printf '  %-44s %5d s %6s s CPU' "$1${3:+ ($3)}" "$secs" "$cpu")"$'\n'
  [ "$cpu" = "?" ] || cpu_total=$((cpu_total + cpu))
  stage_start=$(date +%s)
}
cpu_total=0

# A hermetic --as-cran check: no CRAN/Bioconductor index look-ups and no
# clock look-ups (this machine has no network).
export _R_CHECK_CRAN_INCOMING_REMOTE_=false
export _R_CHECK_SYSTEM_CLOCK_=0
export _R_CHECK_FORCE_SUGGESTS_=true
# arrow, which the package enhances (parquet partitions), is not installed
# here: see tools/cran-check.sh
export _R_CHECK_PACKAGE_DEPENDS_IGNORE_MISSING_ENHANCES_=true

bash tools/install-deps.sh || { echo "tests: 0 passed, 1 failed"; exit 1; }
stage_done "installing dependencies"

# The sanitizer stage starts first, on this source tree (it copies what git
# tracks), and runs beside everything else: it is the longest lane, so the
# whole check waits on it.
echo "check: sanitizer build and tests started (log $work/sanitize.log)"
# (its seconds are recorded when it ends, in $work/secs-sanitize, so that
# the stage times show its own length and not when it was waited for)
timed sanitize "$work/sanitize.log" bash tools/sanitize.sh "$root" "$work/sanitize" &
sanitize_pid=$!
trap '[ -n "$sanitize_pid" ] && kill "$sanitize_pid" 2>/dev/null' EXIT
cran_pid=""

# `make cran` (its R CMD build compiles with -g, so it shares nothing with
# the builds below) runs beside the other stages too.
echo "check: make cran started (log $work/cran.log)"
timed cran "$work/cran.log" env GPSVM_CRAN_BUSY=true bash tools/cran-check.sh "$work/cran" &
cran_pid=$!

echo "check: documentation and exports up to date?"
mkdir -p "$work/src-copy"
git ls-files -z 2>/dev/null | xargs -0 -I{} cp --parents {} "$work/src-copy" 2>/dev/null ||
  cp -r . "$work/src-copy"
(cd "$work/src-copy" && Rscript --vanilla -e '
  invisible(Rcpp::compileAttributes("."))
  suppressMessages(roxygen2::roxygenise(".", load_code = roxygen2::load_source))' \
  >"$work/roxygen.log" 2>&1 &&
  Rscript --vanilla tools/control-defaults.R >>"$work/roxygen.log" 2>&1) ||
  { cat "$work/roxygen.log"; fail "roxygen2 or tools/control-defaults.R failed"; }
for f in NAMESPACE man R/RcppExports.R src/RcppExports.cpp tests/cpp/control_defaults.hpp; do
  if ! diff -r "$f" "$work/src-copy/$f" >"$work/drift.diff" 2>&1; then
    cat "$work/drift.diff"
    fail "$f is out of date: run make docs"
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
(
  # tools/cpp-tests.sh compiles every header with the tests in tests/cpp/,
  # under the sanitizers where gcc has libasan, and runs them.
  timed cpp "$work/cpp-tests.log" bash tools/cpp-tests.sh "$work/cpp-tests"
  # long has 32 bits on Windows: a count held in a long breaks there only.
  timed win "$work/wincheck.log" bash tools/windows-check.sh "$work/wincheck"
) &
cpp_pid=$!
trap 'for p in "$sanitize_pid" "$cpp_pid" "$cran_pid"; do [ -n "$p" ] && kill "$p" 2>/dev/null; done' EXIT

# The tarball checked here is the one `make cran` built (step 3), with R's
# default flags: the package is built once.  Its install compiles with the
# same flags through the same ccache (tools/cran-check.sh), so the compile
# is a cache hit where ccache is installed.  (The package is one
# translation unit, src/unity.cpp, so there is nothing to compile in
# parallel.)
command -v ccache >/dev/null || echo "check: no ccache: R CMD check compiles the package again"
export CCACHE_DIR="$work/cran/ccache" CCACHE_NOHASHDIR=true
build_env=(env -C "$work" R_MAKEVARS_USER="$work/cran/Makevars")

echo "check: waiting for make cran's R CMD build"
while [ ! -s "$work/cran/built" ] && kill -0 "$cran_pid" 2>/dev/null; do sleep 2; done
tarball=$(cat "$work/cran/built" 2>/dev/null)
[ -f "$tarball" ] || { cat "$work/cran.log"; fail "make cran built no tarball"; tarball=""; }
stage_done "waiting for R CMD build (make cran's)"

# The full-size tests: the tarball installed (a ccache hit), and its tests
# run by one R process per core from a queue (tools/run-r-tests.sh), with
# NOT_CRAN=true and the settings R CMD check --as-cran gives the code it
# runs.  make cran's check with every suggested package runs R CMD check
# --as-cran on this same tarball (its code, documentation and examples);
# only the tests' size differs, so the tests alone are run here.
passed=0; failed=0
if [ -n "$tarball" ]; then
  echo "check: the tests at full size on the package installed from $(basename "$tarball")"
  mkdir -p "$work/full/lib"
  timed check "$work/check.log" "${build_env[@]}" NOT_CRAN=true \
    _R_CHECK_LENGTH_1_LOGIC2_=abort,verbose _R_CHECK_LIMIT_CORES_=TRUE \
    GPSVM_TESTS_DIR="$work/full/gpsvm/tests/testthat" GPSVM_PROBE_CACHE="$work/full/probe-cache" \
    bash -c 'R CMD INSTALL --library="$1/lib" "$2" >"$1/install.log" 2>&1 ||
               { tail -n 40 "$1/install.log"; echo "tests-run: 0 passed, 1 failed"; exit 1; }
             tar -xzf "$2" -C "$1" gpsvm/tests
             (cd "$1/gpsvm" && R_LIBS="$1/lib" Rscript --vanilla -e "library(testthat)
                source(\"tests/testthat/helper-probes.R\"); invisible(compile_core_probes())") \
               >"$1/probes.log" 2>&1 || cat "$1/probes.log"
             bash "$3/tools/run-r-tests.sh" "$1/lib" "$1/tests" ""' _ "$work/full" "$tarball" "$root"
  summary=$(grep -E '^tests-run: [0-9]+ passed, [0-9]+ failed$' "$work/check.log" | tail -n 1)
  passed=$(sed -E 's/.* ([0-9]+) passed.*/\1/' <<<"${summary:-x 0 passed}")
  failed=$(sed -E 's/.* ([0-9]+) failed$/\1/' <<<"${summary:-x 1 failed}")
  grep -v '^tests-run: [0-9]' "$work/check.log"
  [ "$failed" -eq 0 ] || fail "$failed test(s) failed at full size (logs in $work/full/tests)"
else
  fail "no tarball was built"
  failed=1
fi
command -v ccache >/dev/null &&
  echo "check: ccache: $(ccache -s | grep -E '^ *(Hits|Misses):' | tr -s ' ' | paste -sd ';')"
lane_done "tests at full size" check

echo "check: the precomputed vignettes are what their code gives now?"
if [ -d "$work/full/lib/gpsvm" ]; then
  R_LIBS="$work/full/lib${R_LIBS:+:$R_LIBS}" Rscript --vanilla tools/vignettes.R check \
    >"$work/vignettes.log" 2>&1 || { cat "$work/vignettes.log"; fail "stale vignettes"; failed=$((failed + 1)); }
  grep -E "^vignettes:" "$work/vignettes.log"
else
  fail "no installed package to knit the vignettes with"
  failed=$((failed + 1))
fi
stage_done "precomputed vignettes"

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
lane_done "C++ core test suite" cpp "in the background"
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
lane_done "C++ suite on Windows (mingw-w64, wine)" win "in the background"

echo "check: waiting for make cran"
wait "$cran_pid"
cran_pid=""
lane_done "make cran" cran "in the background"
cat "$work/cran.log"
cran_failed=0
if ! grep -q '^cran: OK$' "$work/cran.log"; then
  cran_failed=$(sed -nE 's/^cran: FAIL: ([0-9]+) of 2 settings$/\1/p' "$work/cran.log")
  [ "${cran_failed:-0}" -gt 0 ] || cran_failed=1
  fail "make cran (log $work/cran.log)"
fi
failed=$((failed + cran_failed))

echo "check: waiting for the sanitizer stage"
wait "$sanitize_pid"
sanitize_status=$?
sanitize_pid=""
lane_done "sanitizer stage" sanitize "in the background"
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
printf '  %-44s %5s   %6d s CPU (%d s per core on %d cores)\n' "the stages with CPU recorded" "" \
  "$cpu_total" "$(( cpu_total / $(nproc) ))" "$(nproc)"
[ "$status" -eq 0 ] && echo "check: OK (logs in $work)" || echo "check: logs in $work"
echo "tests: $passed passed, $failed failed"
exit "$status"
