#!/usr/bin/env bash
# Runs testthat files against an installed gpsvm, one R process per core,
# each taking files from a queue, the longest first, so that the cores
# finish together (tools/test-file.R --queue); the files that start worker
# processes of their own are run by one more R process, beside them.  Used by `make test` (the
# small size, tools/test.sh) and by `make check` (the full size on the
# package built from the tarball, tools/check.sh).
#
#   bash tools/run-r-tests.sh LIBRARY WORK_DIR TIMES_FILE [FILE ...]
#
# LIBRARY: where gpsvm is installed; WORK_DIR: the files' logs; TIMES_FILE:
# the last run's seconds per file, read for the order and rewritten when
# every file ran (may be absent); FILE: test-*.R paths (all those of
# $GPSVM_TESTS_DIR, default this tree's tests/testthat, when none is given).  The size and the rest of the environment
# (GPSVM_TEST_SIZE, NOT_CRAN, ...) are the caller's.  Prints each failing
# file's log, the five slowest files, and ends with one line
#   tests-run: N passed, N failed
# (expectations, as testthat counts them; a file without a result counts
# one failure); the exit status is non-zero on any failure.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
lib=$1 work=$2 times_file=$3
shift 3
mkdir -p "$work"
if [ $# -gt 0 ]; then
  files=("$@")
else
  # the longest first (by the last run's times, else by size)
  mapfile -t files < <(
    for f in "${GPSVM_TESTS_DIR:-$root/tests/testthat}"/test-*.R; do
      t=$(awk -v f="$(basename "$f")" '$2 == f {print $1}' "$times_file" 2>/dev/null)
      echo "${t:-$(( $(stat -c %s "$f") / 1000 ))} $f"
    done | sort -rn | cut -d' ' -f2)
fi
export R_LIBS="$lib${R_LIBS:+:$R_LIBS}"

# A file that starts R worker processes of its own (a cluster, a
# multisession plan) spends most of its time waiting for them (each
# exchange with a future's worker is a round trip).  Such files go to a
# second queue, taken by one more R process, so that their waits
# overlap the other files' work instead of holding one of the cores' queues.
starts_workers='makeClusterPSOCK|makeCluster\(|multisession'
queue="$work/queue"
waits="$work/queue-waits"
mkdir -p "$queue" "$waits"
i=0
for file in "${files[@]}"; do
  i=$((i + 1))
  if [ -f "$file" ]; then
    to=$queue
    grep -qE "$starts_workers" "$file" && to=$waits
    printf '%s\n' "$file" >"$to/$(printf '%04d' "$i") $(basename "$file")"
  else
    echo "tests-run: no $file"
  fi
done
for q in "$waits" $(seq "$(nproc)"); do
  [ "$q" = "$waits" ] || q=$queue
  compgen -G "$q/[0-9]*" >/dev/null || continue
  timeout 3600 Rscript --vanilla "$root/tools/test-file.R" --queue "$q" "$work" \
    >>"$work/workers.log" 2>&1 &
done
wait
passed=0
failed=0
for file in "${files[@]}"; do
  name=$(basename "$file")
  result=$(grep -E '^sanitize-result: ' "$work/$name.log" 2>/dev/null | tail -n 1)
  if [ -z "$result" ]; then
    tail -n 30 "$work/$name.log" 2>/dev/null
    echo "tests-run: $name ended without a result (status $(cat "$work/$name.status" 2>/dev/null))"
    failed=$((failed + 1))
    continue
  fi
  p=$(sed -E 's/.* ([0-9]+) passed.*/\1/' <<<"$result")
  f=$(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"$result")
  [ "$f" -gt 0 ] && tail -n 60 "$work/$name.log"
  passed=$((passed + p))
  failed=$((failed + f))
done
# the files that cost the most, for whoever wants the suite quicker, and
# every file's time for the next run's order
for file in "${files[@]}"; do
  name=$(basename "$file")
  t=$(grep -E '^sanitize-time: ' "$work/$name.log" 2>/dev/null | tail -n 1 |
      sed -E 's/^sanitize-time: ([0-9.]+) s CPU, ([0-9.]+) s elapsed/\2/')
  [ -n "$t" ] && echo "$t $name"
done | sort -rn >"$work/times"
[ $# -eq 0 ] && [ -n "$times_file" ] && cp "$work/times" "$times_file" 2>/dev/null
head -n 5 "$work/times" | awk '{printf "tests-run: slowest: %s (%s s)\n", $2, $1}'
echo "tests-run: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
