# gpsvm developer targets.  The README's two commands are `make demo` and
# `make check`; each installs what it needs first.
LIB := $(CURDIR)/.lib
R_WITH_LIB := R_LIBS="$(LIB):$${R_LIBS:-}" Rscript --vanilla
# Loading recipes (the tidymodels tests, vignette and site) asks
# Sys.timezone(), which without TZ runs timedatectl: on a machine without
# systemd that prints an error and R warns.  The machine's own zone, named.
export TZ ?= $(shell cat /etc/timezone 2>/dev/null || echo UTC)

.PHONY: demo check test cran vignettes sanitize sanitize-canary cpptest wincheck bench deps install docs site site-deps clean

deps:
	bash tools/install-deps.sh

# The development build, into .lib/: R's flags less -g, through ccache
# where installed (tools/dev-makevars.sh).  src/Makevars names the core
# headers as prerequisites, so an edit to any of them rebuilds the object.
install: deps
	mkdir -p $(LIB)
	bash tools/dev-makevars.sh >$(LIB)/dev.Makevars
	R_MAKEVARS_USER=$(LIB)/dev.Makevars R CMD INSTALL --no-test-load --library=$(LIB) . \
	  >$(LIB)/install.log 2>&1 || (cat $(LIB)/install.log; exit 1)

# The edit-test loop: the C++ suite and the R suite at the small size,
# spread over the cores (tools/test.sh); `make test TESTS="svr rvm"` runs
# some R test files only.
test: install
	bash tools/test.sh $(TESTS)

# The precomputed vignettes: knits each vignettes/*.Rmd.orig into the .Rmd
# that the package builds from (tools/vignettes.R; `make check` fails when
# one is out of date).
# `make vignettes VIGNETTES="gpsvm tidymodels"` writes some of them.
vignettes: install
	R_LIBS="$(LIB):$${R_LIBS:-}" Rscript --vanilla tools/vignettes.R write $(VIGNETTES)

# The package as CRAN builds and checks it: R CMD build and R CMD check
# --as-cran with R's default flags and without NOT_CRAN, once with every
# suggested package and once with none (tools/cran-check.sh).
cran: deps
	bash tools/cran-check.sh

demo: install
	GPSVM_DEMO_PNG=$(CURDIR)/gpsvm-demo.png $(R_WITH_LIB) -e 'demo("gpsvm", package = "gpsvm", ask = FALSE, echo = TRUE)'

check:
	bash tools/check.sh

# The check's sanitizer stage alone: the tests on an ASan + UBSan build.
sanitize: deps
	bash tools/sanitize.sh

# Shows the sanitizer stage catching a deliberate out-of-bounds read in a
# scratch copy of the package.
sanitize-canary: deps
	bash tools/sanitize-canary.sh

# The C++ core's test suite alone (tests/cpp/), without R: under the
# sanitizers where gcc has libasan.
cpptest: deps
	bash tools/cpp-tests.sh

# The C++ suite cross-compiled for Windows (mingw-w64) and run under wine,
# where long has 32 bits; skipped, with the reason, where those are missing.
wincheck: deps
	bash tools/windows-check.sh

bench: install
	BENCH="$(BENCH)" $(R_WITH_LIB) bench/run.R

# The website (pkgdown) in docs/, then the browser check of its pages.
site: install site-deps
	$(R_WITH_LIB) tools/site.R
	$(R_WITH_LIB) tools/site-check.R docs

site-deps:
	bash tools/install-deps.sh --site

# The exports, the help pages, and tests/cpp/control_defaults.hpp (the R
# control constructors' defaults the C++ tests' fixtures start from).
docs: deps
	Rscript --vanilla -e 'Rcpp::compileAttributes(); roxygen2::roxygenise(load_code = roxygen2::load_source)'
	Rscript --vanilla tools/control-defaults.R

clean:
	rm -rf $(LIB) docs src/*.o src/*.so src/*.dll
