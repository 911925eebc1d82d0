# Sourced by the scripts of tools/ (after `set -uo pipefail`): root, the
# source tree; work_dir and finish.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# work_dir NAME [DIR]: DIR (made if missing), or else a new temporary
# directory gpsvm-NAME.XXXXXX, as an absolute path.
work_dir() {
  local dir=${2:-$(mktemp -d "${TMPDIR:-/tmp}/gpsvm-$1.XXXXXX")}
  mkdir -p "$dir" && (cd "$dir" && pwd)
}

# finish LABEL PASSED FAILED: the stage's last line, "LABEL: N passed, N
# failed", and its exit status, non-zero on any failure.
finish() {
  echo "$1: $2 passed, $3 failed"
  exit "$([ "$3" -eq 0 ] && echo 0 || echo 1)"
}
