#!/usr/bin/env bash
# Prints a Makevars for R_MAKEVARS_USER with R's own C++17 flags less -g and,
# where ccache is installed, the compiler behind ccache: the development
# build (`make install`) and the full check's builds use it.  The debug
# information would be stripped from the object anyway (src/Makevars), and
# compiling it costs time; through ccache a second build of the same sources
# with the same flags (R CMD build, then R CMD check) is a cache hit.
set -euo pipefail
echo "CXX17FLAGS = $(R CMD config CXX17FLAGS | sed -E 's/(^| )-g( |$)/ /')"
if command -v ccache >/dev/null; then
  echo "CXX17 = ccache $(R CMD config CXX17)"
fi
