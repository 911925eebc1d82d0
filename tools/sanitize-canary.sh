#!/usr/bin/env bash
# Shows that the sanitizer stage catches a real fault in the package: builds
# a scratch copy of the package with one deliberate out-of-bounds read added
# to the kernel-matrix glue (cpp_kernel_matrix, which every kernel test
# calls: it reads one element past the end of a copy of x's first column),
# runs the sanitizer stage (tools/sanitize.sh) on it with test-kernels.R,
# and fails unless the stage fails with AddressSanitizer's
# heap-buffer-overflow report counted against test-kernels.R.  The stage's
# files share R processes (one per core, taking files from a queue): with one
# such process, test-kernels.R (the larger file) runs first and the report
# ends its process, so test-special.R, which reads no kernel matrix, must
# then run in the process that replaces it and pass.  `make
# sanitize-canary`; a few minutes (one
# sanitizer build).  The check itself runs a smaller self-test of the same
# machinery on every run (tools/sanitize-canary/canary.cpp).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/gpsvm-canary.XXXXXX")
mkdir -p "$work/gpsvm"
(cd "$root" && git ls-files -z | xargs -0 -I{} cp --parents {} "$work/gpsvm")
glue="$work/gpsvm/src/rcpp_kernels.cpp"
anchor='  const gpsvm::Kernel k = gpsvm_glue::kernel_from_r(kernel);'
grep -qF "$anchor" "$glue" || { echo "canary: cpp_kernel_matrix has changed; update $0"; exit 1; }
sed -i "s|^$anchor\$|$anchor\\
  { const Eigen::VectorXd first = x.col(0);  /* canary: one past the end */\\
    volatile double past_end = first.data()[first.size()]; (void) past_end; }|" "$glue"
grep -n -A2 "canary" "$glue"
GPSVM_SANITIZE_FILES="test-kernels.R test-special.R" GPSVM_SANITIZE_JOBS=1 bash "$root/tools/sanitize.sh" "$work/gpsvm" "$work/sanitize" \
  >"$work/sanitize.log" 2>&1
status=$?
grep -E '^(sanitize|----)|heap-buffer-overflow|#[0-3] ' "$work/sanitize.log" | head -n 30
if [ "$status" -ne 0 ] && grep -q 'heap-buffer-overflow' "$work/sanitize.log" &&
   grep -qE '^sanitize: test-kernels.R: .* for a sanitizer report$' "$work/sanitize.log" &&
   grep -qE '^sanitize: test-special.R: [1-9][0-9]* passed, 0 failed' "$work/sanitize.log"; then
  echo "canary: the sanitizer stage reported the deliberate out-of-bounds read against test-kernels.R," \
    "ran test-special.R in a new process, and failed (log $work)"
else
  echo "canary: FAIL: the sanitizer stage did not report the deliberate out-of-bounds read against test-kernels.R, or did not go on to pass test-special.R (log $work)"
  exit 1
fi
