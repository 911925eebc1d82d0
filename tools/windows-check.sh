#!/usr/bin/env bash
# The Windows cross-check: the C++ core's test suite (tests/cpp/) built for
# 64-bit Windows with mingw-w64 and run under wine.  Windows is LLP64: long
# has 32 bits there, so a count held in a long, or a shift past 31 bits,
# breaks there and nowhere else.
#
#   bash tools/windows-check.sh [WORK_DIR]
#
# Needs x86_64-w64-mingw32-g++ (Debian: g++-mingw-w64-x86-64) and wine64
# (Debian: wine64), which tools/install-deps.sh installs when run as root on
# Debian.  Where either is missing the stage is skipped, and says why.
# The build is tools/cpp-tests.sh --windows (one translation unit, -Og,
# linked statically; Eigen from RcppEigen).  wine's prefix (its C: drive,
# about 700 MB, made at the first start in about 10 s) lives in WORK_DIR and
# is removed afterwards; WINEDEBUG=-all keeps wine quiet, and
# WINEDLLOVERRIDES stops it from offering to install Mono and Gecko.
#
# Ends with one line
#   wincheck: N passed, N failed
# counting test cases (a build that fails counts as one failed case), or
#   wincheck: skipped (REASON)
# The exit status is non-zero on any failure, zero when skipped.
set -uo pipefail
. "$(dirname "$0")/common.sh"
work=$(work_dir wincheck "${1:-}")

skip() {
  echo "wincheck: skipped ($1)"
  exit 0
}

cxx=${CXX_MINGW:-x86_64-w64-mingw32-g++}
command -v "$cxx" >/dev/null ||
  skip "no $cxx: install Debian's g++-mingw-w64-x86-64 (tools/install-deps.sh does as root)"
# Debian's wine64 package puts wine64 in /usr/lib/wine, its wine package a
# wrapper on the PATH.
wine=${WINE:-}
if [ -z "$wine" ]; then
  for w in wine64 /usr/lib/wine/wine64 wine; do
    if command -v "$w" >/dev/null; then wine=$(command -v "$w"); break; fi
  done
fi
[ -n "$wine" ] || skip "no wine64: install Debian's wine64 (tools/install-deps.sh does as root)"

export WINEPREFIX="$work/wine-prefix" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
wineserver=$(dirname "$wine")/wineserver
cleanup() {
  # this prefix's server only, then the prefix
  [ -x "$wineserver" ] && "$wineserver" -k 2>/dev/null
  rm -rf "$WINEPREFIX"
}
trap cleanup EXIT

# wine cannot run at all (no 64-bit support, no usable display-less setup):
# a reason to skip, not a failure of the suite
printf '#include <cstdio>\nint main() { std::printf("ok\\n"); return 0; }\n' >"$work/probe.cpp"
"$cxx" -static -o "$work/probe.exe" "$work/probe.cpp" >"$work/probe.log" 2>&1 ||
  { cat "$work/probe.log"; skip "$cxx cannot build a program"; }
probe=$(timeout 300 "$wine" "$work/probe.exe" 2>>"$work/probe.log" | tr -d '\r')
[ "$probe" = ok ] || { tail -n 20 "$work/probe.log"; skip "$wine cannot run a Windows program"; }

CXX="$cxx" WINE="$wine" bash "$root/tools/cpp-tests.sh" --windows "$work"
