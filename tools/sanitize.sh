#!/usr/bin/env bash
# The sanitizer stage of the check: build gpsvm with AddressSanitizer and
# UndefinedBehaviorSanitizer and run its testthat suite on that build.
#
#   bash tools/sanitize.sh [PACKAGE_TARBALL [WORK_DIR]]
#
# 1. R CMD INSTALL the tarball (built from this source tree when none is
#    given) into a private library, with the flags of tools/sanitize.Makevars
#    passed through R_MAKEVARS_USER (src/Makevars stays portable): -O1 -g1,
#    -fsanitize=address,undefined,float-cast-overflow, -fno-sanitize-recover=all,
#    -fno-omit-frame-pointer.  R's strip step is turned off so that stacks
#    keep file and line.
# 2. Run every tests/testthat/test-*.R of the tarball in its own R process
#    (tools/sanitize-tests.R) with gcc's libasan preloaded (R itself is not
#    instrumented, and the ASan run-time must be loaded first),
#    ASAN_OPTIONS=detect_leaks=0 (R's own allocations are never freed at
#    exit) and UBSan printing stacks.  ASan writes its reports to files
#    (log_path), so a report from a forked or cluster worker is caught too;
#    UBSan ignores log_path when it runs inside ASan's run-time (gcc 12) and
#    reports on stderr, which is scanned for 'runtime error:'.  (A UBSan
#    report in a cluster worker, whose stderr R discards, still ends the
#    worker and so fails its test.)
# 3. A test file counts one failed test for a sanitizer report (which ends
#    its process) or for a process that died without finishing, on top of
#    the expectations testthat counted as failed.  The start of each report
#    (the error and its innermost frames) is printed.
#
# Prints the reports and ends with one line
#   sanitize: N passed, N failed
# (expectations); the exit status is non-zero on any failure.  The suite runs
# without the vignettes and without a second R CMD check, to fit CI's time.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=${2:-$(mktemp -d "${TMPDIR:-/tmp}/gpsvm-sanitize.XXXXXX")}
mkdir -p "$work"
work=$(cd "$work" && pwd)
finish() {
  echo "sanitize: $1 passed, $2 failed"
  exit "$([ "$2" -eq 0 ] && echo 0 || echo 1)"
}

tarball=${1:-}
if [ -z "$tarball" ]; then
  (cd "$work" && R CMD build --no-build-vignettes --no-manual "$root") >"$work/sanitize-build.log" 2>&1 ||
    { cat "$work/sanitize-build.log"; echo "sanitize: R CMD build failed"; finish 0 1; }
  tarball=$(ls "$work"/gpsvm_*.tar.gz | head -n 1)
fi
tarball=$(cd "$(dirname "$tarball")" && pwd)/$(basename "$tarball")

# gcc's ASan run-time, from the compiler R builds C++17 with.
cxx=$(R CMD config CXX17 | awk '{print $1}')
asan=$("$cxx" -print-file-name=libasan.so 2>/dev/null)
if [ ! -e "$asan" ] || [ "$asan" = libasan.so ]; then
  echo "sanitize: no libasan.so for '$cxx' (the sanitizer stage needs gcc with libasan)"
  finish 0 1
fi

lib="$work/sanitize-lib"
mkdir -p "$lib"
start=$(date +%s)
if ! env -u _R_SHLIB_STRIP_ -u R_STRIP_SHARED_LIB R_MAKEVARS_USER="$root/tools/sanitize.Makevars" \
    R CMD INSTALL --no-test-load --no-byte-compile --no-docs --library="$lib" "$tarball" \
    >"$work/sanitize-install.log" 2>&1; then
  tail -n 40 "$work/sanitize-install.log"
  echo "sanitize: the sanitizer build failed"
  finish 0 1
fi
grep -q -- '-fsanitize=address' "$work/sanitize-install.log" ||
  { echo "sanitize: the build did not use tools/sanitize.Makevars"; finish 0 1; }
echo "sanitize: built with -fsanitize=address,undefined in $(( $(date +%s) - start )) s"

tar -xzf "$tarball" -C "$work" gpsvm/tests
tests="$work/gpsvm/tests/testthat"
reports="$work/sanitize-reports"
mkdir -p "$reports"
report_pattern='runtime error:|ERROR: (Address|Leak)Sanitizer|SUMMARY: (Address|UndefinedBehavior)Sanitizer'
passed=0
failed=0
start=$(date +%s)
for file in "$tests"/test-*.R; do
  name=$(basename "$file")
  log="$work/sanitize-$name.log"
  rm -f "$reports"/*
  LD_PRELOAD="$asan" \
    ASAN_OPTIONS="detect_leaks=0:allocator_may_return_null=1:log_path=$reports/asan" \
    UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
    R_LIBS="$lib${R_LIBS:+:$R_LIBS}" \
    timeout 1200 Rscript --vanilla "$root/tools/sanitize-tests.R" "$file" >"$log" 2>&1
  code=$?
  result=$(grep -E '^sanitize-result: [0-9]+ passed, [0-9]+ failed$' "$log" | tail -n 1)
  p=$(sed -E 's/.* ([0-9]+) passed.*/\1/' <<<"${result:-x 0 passed}")
  f=$(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"${result:-x 0 failed}")
  note=""
  # the first line of a report on stderr (UBSan's)
  first=$(grep -nE "$report_pattern" "$log" | head -n 1 | cut -d: -f1)
  if ls "$reports"/* >/dev/null 2>&1 || [ -n "$first" ]; then
    note=" + 1 for a sanitizer report"
    f=$((f + 1))
    for r in "$reports"/*; do
      [ -e "$r" ] || continue
      echo "---- $name: $(basename "$r")"
      head -n 40 "$r"
    done
    if [ -n "$first" ]; then
      echo "---- $name: stderr"
      tail -n +"$first" "$log" | head -n 40
    fi
  elif [ -z "$result" ] || [ "$code" -ne 0 ]; then
    note=" + 1: the R process ended with status $code before finishing"
    f=$((f + 1))
    tail -n 40 "$log"
  fi
  [ "$f" -gt 0 ] && [ -z "$note" ] && tail -n 40 "$log"
  echo "sanitize: $name: $p passed, $f failed$note"
  passed=$((passed + p))
  failed=$((failed + f))
done
echo "sanitize: tests took $(( $(date +%s) - start )) s (logs in $work)"
finish "$passed" "$failed"
