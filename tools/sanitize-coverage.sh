#!/usr/bin/env bash
# Checks tools/sanitize-left-out.txt: the sanitizer stage (tools/sanitize.sh)
# may leave a test file to the full-size run only when every line of the
# package's C++ (src/ and inst/include/gpsvm/) that the file reaches is
# reached by a file the stage runs.
#
#   bash tools/sanitize-coverage.sh [WORK_DIR]
#
# 1. Installs a copy of the files git tracks into WORK_DIR/lib with gcc's
#    --coverage (-O1, no debug information).
# 2. Runs each tests/testthat/test-*.R in its own R process at the small
#    size (GPSVM_TEST_SIZE=small NOT_CRAN=true, as in the sanitizer stage),
#    its counts written under its own GCOV_PREFIX (the worker processes a
#    file starts write there too).
# 3. Reads each file's executed lines with gcov, prints for each file the
#    lines it reaches and those no other file reaches, and for each file
#    left out the lines that no file the stage runs reaches.
#
# Ends with one line 'sanitize-coverage: OK' or 'sanitize-coverage: FAIL'
# (a file left out reaches lines the stage does not); needs gcc and gcov.
# It runs the suite at the small size one file at a time, several times
# slower than `make test`: run it when a left-out file or the C++ it calls
# changes.
set -uo pipefail
. "$(dirname "$0")/common.sh"
work=$(work_dir coverage "${1:-}")

rm -rf "$work/src-copy" "$work/lib" "$work/runs" "$work/lines"
mkdir -p "$work/src-copy" "$work/lib" "$work/runs" "$work/lines" "$work/logs"
(cd "$root" && git ls-files -z | xargs -0 -I{} cp --parents {} "$work/src-copy")
printf 'CXX17 += --coverage\nCXX17FLAGS = -O1 -g0 -Wno-ignored-attributes\n' >"$work/Makevars"
env -u _R_SHLIB_STRIP_ -u R_STRIP_SHARED_LIB R_MAKEVARS_USER="$work/Makevars" \
  R CMD INSTALL --no-test-load --no-docs --library="$work/lib" "$work/src-copy" \
  >"$work/install.log" 2>&1 || { tail -n 40 "$work/install.log"; echo "sanitize-coverage: FAIL"; exit 1; }
gcno=$(ls "$work"/src-copy/src/*.gcno)

export NOT_CRAN=true GPSVM_TEST_SIZE=small GPSVM_PROBE_CACHE="$work/probe-cache" \
  R_LIBS="$work/lib${R_LIBS:+:$R_LIBS}"
tests="$work/src-copy/tests/testthat"
(cd "$tests/../.." && Rscript --vanilla -e 'library(testthat)
  source("tests/testthat/helper-probes.R"); invisible(compile_core_probes())') \
  >"$work/probes.log" 2>&1 || cat "$work/probes.log"
for file in "$tests"/test-*.R; do
  name=$(basename "$file")
  GCOV_PREFIX="$work/runs/$name" Rscript --vanilla "$root/tools/test-file.R" "$file" \
    >"$work/logs/$name.log" 2>&1
  # the counts, beside the notes gcc wrote at compile time, read by gcov:
  # "file line" for every executed line of the package's own sources
  data=$(find "$work/runs/$name" -name '*.gcda' | head -n 1)
  if [ -z "$data" ]; then
    : >"$work/lines/$name"
  else
    cp "$gcno" "$(dirname "$data")/"
    # (gcov finds the sources by the paths the compiler saw, from src/, and
    # writes its reports where it runs: they are moved out after)
    mkdir -p "$work/gcov/$name"
    (cd "$work/src-copy/src" && gcov -p -o "$(dirname "$data")" unity.cpp >/dev/null 2>&1 &&
       mv ./*.gcov "$work/gcov/$name/")
    for g in "$work/gcov/$name"/*.gcov; do
      # (system headers, Eigen's and Rcpp's among them, are named #usr#...)
      case "$(basename "$g")" in *'#usr#'*) continue ;; esac
      awk -v f="$(basename "$g" .gcov | sed 's/.*#//')" -F: '$1 ~ /^ *[0-9]+\*?$/ { print f, $2 + 0 }' "$g"
    done | sort -u >"$work/lines/$name"
  fi
  echo "sanitize-coverage: $name: $(wc -l <"$work/lines/$name") lines," \
    "$(grep -E '^sanitize-result:' "$work/logs/$name.log" | sed 's/^sanitize-result: //')"
done

mapfile -t left_out < <(sed -nE 's/^(test-[^ :]+[.]R):.*/\1/p' "$root/tools/sanitize-left-out.txt")
stays=()
for f in "$work"/lines/test-*.R; do
  printf '%s\n' "${left_out[@]}" | grep -qxF "$(basename "$f")" || stays+=("$f")
done
sort -u "${stays[@]}" >"$work/reached-by-stage"
status=0
for name in "${left_out[@]}"; do
  missing=$(comm -23 "$work/lines/$name" "$work/reached-by-stage")
  if [ -n "$missing" ]; then
    echo "sanitize-coverage: $name reaches $(wc -l <<<"$missing") line(s) no file of the stage reaches:"
    head -n 20 <<<"$missing" | sed 's/^/  /'
    status=1
  else
    echo "sanitize-coverage: $name: every line it reaches is reached by the stage's files"
  fi
done
echo "sanitize-coverage: the stage's files reach $(wc -l <"$work/reached-by-stage") lines (logs in $work)"
[ "$status" -eq 0 ] && echo "sanitize-coverage: OK" || echo "sanitize-coverage: FAIL"
exit "$status"
