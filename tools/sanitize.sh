#!/usr/bin/env bash
# The sanitizer stage of the check: build gpsvm with AddressSanitizer and
# UndefinedBehaviorSanitizer and run its testthat suite on that build.
#
#   bash tools/sanitize.sh [PACKAGE_TARBALL_OR_SOURCE_DIR [WORK_DIR]]
#
# 1. R CMD INSTALL the package (a tarball, or a source tree; this one when
#    none is given) into a private library, with the flags of
#    tools/sanitize.Makevars passed through R_MAKEVARS_USER (src/Makevars
#    stays portable): -O1 -g1, -fsanitize=address,undefined,float-cast-overflow,
#    -fno-sanitize-recover=all, -fno-omit-frame-pointer, and UBSan without
#    its alignment, null and pointer-overflow checks.  R's strip step and
#    src/Makevars' (GPSVM_KEEP_DEBUG=true) are turned off so that stacks
#    keep function, file and line.
# 2. Run the tests/testthat/test-*.R files (all but those of
#    tools/sanitize-left-out.txt, whose C++ the others reach line for line)
#    by GPSVM_SANITIZE_JOBS R processes
#    (default: the number of cores) that take the files from a queue, the
#    longest first (tools/test-file.R --queue; a process a report ends is
#    replaced and the report counted against the file it was running), with
#    gcc's libasan preloaded (R
#    itself is not instrumented, and the ASan run-time must be loaded first),
#    ASAN_OPTIONS=detect_leaks=0 (R's own allocations are never freed at
#    exit) and quarantine_size_mb=64, and UBSan printing stacks.  (Freed
#    memory waits in ASan's quarantine, poisoned, before it is reused, so a
#    use after free is caught while it waits.  At the default 256 MB every
#    process kept touching fresh memory: its page faults and cache misses
#    cost a fifth to a quarter of a test file's time (test-svr.R 25.7 s
#    against 19.6 s, test-fit-validation.R 148 s against 122 s).  64 MB
#    still hold a freed kernel matrix of 2800 rows whole, and the self-test
#    below reads memory freed 8 MB of allocations earlier.)  And
#    clear_shadow_mmap_threshold=1 GB: every longjmp of R's (each error,
#    each muffled warning or restart) makes ASan unpoison the stack's
#    shadow from the jump's frame to the stack's top; above the default
#    64 kB threshold it does so by remapping the shadow's pages, a few
#    system calls and a page fault a page each time, which made the tests'
#    system time about a third of their CPU time.  A memset of the same
#    shadow clears it alike.  ASan writes
#    its reports to files (log_path), so a report from a forked or cluster
#    worker is caught too; UBSan ignores log_path when it runs inside ASan's
#    run-time (gcc 12) and reports on stderr, which is scanned for 'runtime
#    error:'.  (A UBSan report in a cluster worker, whose stderr R discards,
#    still ends the worker and so fails its test.)
# 3. The suite runs with GPSVM_TEST_SIZE=small and NOT_CRAN=true
#    (tests/testthat/helper-size.R: the small tier, not the CRAN one):
#    tests that fit large problems to check a statistical property fit
#    smaller ones here, and the few that have no small version are skipped
#    here and left to the check's full-size run of the same suite.  Every
#    such skip is listed with its reason.
# 4. A test file counts one failed test for a sanitizer report (which ends
#    its process) or for a process that died without finishing, on top of
#    the expectations testthat counted as failed.  The start of each report
#    (the error and its innermost frames) is printed.
#
# Prints one line per test file (counts and seconds), the skipped tests, the
# reports, and ends with one line
#   sanitize: N passed, N failed
# (expectations); the exit status is non-zero on any failure.  The suite runs
# without the vignettes and without a second R CMD check, to fit CI's time.
set -uo pipefail
. "$(dirname "$0")/common.sh"
work=$(work_dir sanitize "${2:-}")

package=${1:-$root}
package=$(cd "$(dirname "$package")" && pwd)/$(basename "$package")
if [ -d "$package" ]; then
  # R CMD INSTALL builds a source tree in place: build a copy of the files
  # git tracks, so that the tree (which R CMD build may be reading) stays
  # clean.
  mkdir -p "$work/gpsvm"
  (cd "$package" && git ls-files -z 2>/dev/null | xargs -0 -I{} cp --parents {} "$work/gpsvm") ||
    cp -r "$package/." "$work/gpsvm"
  package="$work/gpsvm"
fi

# gcc's ASan run-time, from the compiler R builds C++17 with.
cxx=$(R CMD config CXX17 | awk '{print $1}')
asan=$("$cxx" -print-file-name=libasan.so 2>/dev/null)
if [ ! -e "$asan" ] || [ "$asan" = libasan.so ]; then
  echo "sanitize: no libasan.so for '$cxx' (the sanitizer stage needs gcc with libasan)"
  finish sanitize 0 1
fi

lib="$work/sanitize-lib"
mkdir -p "$lib"
start=$(date +%s)
# (one translation unit, src/unity.cpp: nothing to compile in parallel)
# The R code is byte-compiled as in any install (interpreted, test-tidiers.R
# took 19.8 s against 11.3 s; over the whole stage the test processes' CPU
# time fell less, 608 s to 570 s: most of it is the sanitized C++ and ASan's
# allocator).
if ! env -u _R_SHLIB_STRIP_ -u R_STRIP_SHARED_LIB GPSVM_KEEP_DEBUG=true R_MAKEVARS_USER="$root/tools/sanitize.Makevars" \
    R CMD INSTALL --no-test-load --no-docs --library="$lib" "$package" \
    >"$work/sanitize-install.log" 2>&1; then
  tail -n 40 "$work/sanitize-install.log"
  echo "sanitize: the sanitizer build failed"
  finish sanitize 0 1
fi
grep -q -- '-fsanitize=address' "$work/sanitize-install.log" ||
  { echo "sanitize: the build did not use tools/sanitize.Makevars"; finish sanitize 0 1; }
echo "sanitize: built with -fsanitize=address,undefined in $(( $(date +%s) - start )) s"

# The sanitizers' options for the self-test and the tests (see 2. above).
asan_options="detect_leaks=0:quarantine_size_mb=64:clear_shadow_mmap_threshold=1073741824"
ubsan_options="print_stacktrace=1:halt_on_error=1"

# The stage's self-test: a deliberate heap overflow, a signed overflow and a
# read of freed memory (tools/sanitize-canary/canary.cpp), built with the
# same flags and run in the same environment as the tests, must each be
# reported; otherwise the stage could pass without being able to see
# anything.
canary="$work/canary"
mkdir -p "$canary"
cp "$root/tools/sanitize-canary/canary.cpp" "$canary/"
if ! (cd "$canary" && env -u _R_SHLIB_STRIP_ -u R_STRIP_SHARED_LIB \
      R_MAKEVARS_USER="$root/tools/sanitize.Makevars" R CMD SHLIB -o canary.so canary.cpp) \
    >"$canary/build.log" 2>&1; then
  cat "$canary/build.log"
  echo "sanitize: the self-test's canary did not build"
  finish sanitize 0 1
fi
for probe in "heap_overflow:heap-buffer-overflow" "signed_overflow:signed integer overflow" \
             "use_after_free:heap-use-after-free"; do
  entry=${probe%%:*}
  expected=${probe#*:}
  rm -f "$canary"/asan.*
  LD_PRELOAD="$asan" ASAN_OPTIONS="$asan_options:log_path=$canary/asan" \
    UBSAN_OPTIONS="$ubsan_options" \
    Rscript --vanilla -e "dyn.load('$canary/canary.so'); .Call('canary_$entry', 3L)" \
    >"$canary/$entry.log" 2>&1
  if ! grep -qs "$expected" "$canary/$entry.log" "$canary"/asan.*; then
    cat "$canary/$entry.log"
    echo "sanitize: self-test: a deliberate $expected was not reported"
    finish sanitize 0 1
  fi
done
echo "sanitize: self-test: a deliberate heap-buffer-overflow, signed integer overflow and heap-use-after-free are reported"

if [ -d "$package" ]; then
  tests="$package/tests/testthat"
else
  tar -xzf "$package" -C "$work" gpsvm/tests
  tests="$work/gpsvm/tests/testthat"
fi
report_pattern='runtime error:|ERROR: (Address|Leak)Sanitizer|SUMMARY: (Address|UndefinedBehavior)Sanitizer'

# A worker: one R process under the sanitizers that takes test files from
# the queue until it is empty or the process dies (tools/test-file.R
# --queue).  Its files' logs, and the taken and finished marks, go to its
# own directory, and so do its ASan reports (log_path): a report ends the
# process, and the file it ended on is the one taken and not finished.  A
# slot starts workers until the queue is empty, so the files after one that
# died still run.  One process for many files spares a start of R and its
# packages under ASan per file.
run_worker() {
  local dir=$1 code
  mkdir -p "$dir/reports"
  NOT_CRAN=true GPSVM_TEST_SIZE=small LD_PRELOAD="$asan" \
    ASAN_OPTIONS="$asan_options:allocator_may_return_null=1:log_path=$dir/reports/asan" \
    UBSAN_OPTIONS="$ubsan_options" GPSVM_REPORT_DIR="$dir/reports" \
    R_LIBS="$lib${R_LIBS:+:$R_LIBS}" \
    timeout 3600 Rscript --vanilla "$root/tools/test-file.R" --queue "$queue" "$dir" \
    >"$dir/worker.log" 2>&1
  code=$?
  echo "$code" >"$dir/exit"
}
run_slot() {
  local k=0
  while compgen -G "$queue/[0-9]*" >/dev/null; do
    k=$((k + 1))
    run_worker "$work/worker-$1-$k"
  done
}

# Reads one file's outcome from the worker directory that ran it; prints
# its details (reports, the end of a failing log) and leaves its summary
# line in $work/result-<file>.
collect_file() {
  local name=$1 taken dir log result p f s secs cpu note="" first r
  # (a queue entry is "<order> <file>"; the worker that took it renamed it
  # to <its directory>/<order> <file>.taken)
  taken=$(compgen -G "$work/worker-*/* $name.taken" | head -n 1)
  dir=$(dirname "${taken:-$work/none/x}")
  log="$dir/$name.log"
  result=$(grep -E '^sanitize-result: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$log" 2>/dev/null | tail -n 1)
  p=$(sed -E 's/.* ([0-9]+) passed.*/\1/' <<<"${result:-x 0 passed}")
  f=$(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"${result:-x 0 failed}")
  s=$(sed -E 's/.* ([0-9]+) skipped.*/\1/' <<<"${result:-x 0 skipped}")
  read -r cpu secs < <(sed -nE 's/^sanitize-time: ([0-9.]+) s CPU, ([0-9.]+) s elapsed$/\1 \2/p' "$log" 2>/dev/null | tail -n 1)
  {
    if [ -z "$taken" ]; then
      note=" + 1: never run (no worker took it)"
      f=$((f + 1))
    elif [ ! -f "$dir/$name.status" ]; then
      # the worker died on this file: its own reports and stderr are this file's
      note=" + 1: its R process ended (status $(cat "$dir/exit" 2>/dev/null)) before finishing"
      f=$((f + 1))
      for r in "$dir"/reports/*; do
        [ -e "$r" ] || continue
        note=" + 1 for a sanitizer report"
        echo "---- $name: $(basename "$r")"
        head -n 40 "$r"
      done
      first=$(grep -nE "$report_pattern" "$dir/worker.log" | head -n 1 | cut -d: -f1)
      if [ -n "$first" ]; then
        note=" + 1 for a sanitizer report"
        echo "---- $name: stderr"
        tail -n +"$first" "$dir/worker.log" | head -n 40
      fi
      tail -n 40 "$log" 2>/dev/null; echo
    elif compgen -G "$dir/$name.reports/*" >/dev/null; then
      # reports of processes the file started (forked or cluster workers)
      note=" + 1 for a sanitizer report"
      f=$((f + 1))
      for r in "$dir/$name.reports"/*; do
        echo "---- $name: $(basename "$r")"
        head -n 40 "$r"
      done
    elif [ -z "$result" ]; then
      note=" + 1: no result"
      f=$((f + 1))
      tail -n 40 "$log"; echo
    elif [ "$f" -gt 0 ]; then
      tail -n 40 "$log"; echo
    fi
  } >"$work/detail-$name"
  echo "$name $p $f $s ${secs:-0} ${cpu:-0}$note" >"$work/result-$name"
}

# The longest files first (by their size, which tracks their run time well
# enough), so that the last to finish is a short one.
# The test-only core probes (tests/testthat/probes) are compiled once here,
# with the stage's flags, into a cache every test process then loads from,
# instead of once in each file that uses them.
export GPSVM_PROBE_CACHE="$work/probe-cache" GPSVM_PROBE_MAKEVARS="$root/tools/sanitize.Makevars"
# (The R process that compiles them also loads them, so it runs, like the
# tests, with the ASan run-time preloaded.)
(cd "$tests/../.." && env -u _R_SHLIB_STRIP_ -u R_STRIP_SHARED_LIB NOT_CRAN=true \
   LD_PRELOAD="$asan" ASAN_OPTIONS="$asan_options" \
   R_LIBS="$lib${R_LIBS:+:$R_LIBS}" Rscript --vanilla -e '
  library(testthat)
  source("tests/testthat/helper-probes.R")
  invisible(compile_core_probes())') >"$work/probes.log" 2>&1 ||
  { cat "$work/probes.log"; echo "sanitize: the core probes did not compile"; finish sanitize 0 1; }

# GPSVM_SANITIZE_FILES (e.g. "test-svr.R test-rvm.R") runs some files only.
mapfile -t files < <(ls -S "$tests"/test-*.R)
if [ -n "${GPSVM_SANITIZE_FILES:-}" ]; then
  mapfile -t files < <(for f in $GPSVM_SANITIZE_FILES; do ls "$tests/$f"; done)
fi
# The files named in tools/sanitize-left-out.txt (which says why each) are
# left to the check's full-size run: every line of the package's C++ they
# reach is reached by the files that run here.  GPSVM_SANITIZE_ALL=true runs
# them here too.
left_out=()
if [ -z "${GPSVM_SANITIZE_FILES:-}" ] && [ "${GPSVM_SANITIZE_ALL:-false}" != true ]; then
  mapfile -t left_out < <(sed -nE 's/^(test-[^ :]+[.]R):.*/\1/p' "$root/tools/sanitize-left-out.txt")
  mapfile -t files < <(for f in "${files[@]}"; do
    printf '%s\n' "${left_out[@]}" | grep -qxF "$(basename "$f")" || echo "$f"
  done)
fi
jobs=${GPSVM_SANITIZE_JOBS:-$(nproc)}
echo "sanitize: ${#files[@]} test files, $jobs worker(s) taking them from a queue, GPSVM_TEST_SIZE=small"
start=$(date +%s)
queue="$work/queue"
mkdir -p "$queue"
i=0
for file in "${files[@]}"; do
  i=$((i + 1))
  printf '%s\n' "$file" >"$queue/$(printf '%04d' "$i") $(basename "$file")"
done
for n in $(seq "$jobs"); do run_slot "$n" & done
wait
mapfile -t files < <(printf '%s\n' "${files[@]}" | sort)

passed=0
failed=0
for file in "${files[@]}"; do
  name=$(basename "$file")
  collect_file "$name"
  read -r _ p f s secs cpu note <"$work/result-$name"
  cat "$work/detail-$name"
  echo "sanitize: $name: $p passed, $f failed, $s skipped, ${secs} s (${cpu} s CPU)${note:+ $note}"
  passed=$((passed + p))
  failed=$((failed + f))
done
skips=$(cat "$work"/worker-*/test-*.log 2>/dev/null | grep -c '^sanitize-skip: ')
echo "sanitize: $skips test(s) skipped here, with their reasons (make check runs the whole suite at full size):"
for file in "${files[@]}"; do
  name=$(basename "$file")
  cat "$work"/worker-*/"$name.log" 2>/dev/null | grep '^sanitize-skip: ' | sed "s/^sanitize-skip: /  $name: /"
done
if [ "${#left_out[@]}" -gt 0 ]; then
  echo "sanitize: ${#left_out[@]} test file(s) left to the full-size run (tools/sanitize-left-out.txt):"
  sed -nE 's/^(test-[^ :]+[.]R): */  \1: /p' "$root/tools/sanitize-left-out.txt"
fi
echo "sanitize: tests took $(( $(date +%s) - start )) s (logs in $work)"
finish sanitize "$passed" "$failed"
