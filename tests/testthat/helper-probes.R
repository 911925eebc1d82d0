# Test-only routines of the C++ core (probes/core-probes.cpp: the
# likelihoods' site moments, the EP engine on a given kernel matrix, the
# paper's iteration, the special functions).  They are not part of the
# package: the file is compiled on first use, against the installed
# package's headers, and kept for the session (RcppEigen, which the package
# only links to, is in Suggests so that R CMD check lets the tests load it).
core_probe <- local({
  env <- NULL
  function(name) {
    if (is.null(env)) env <<- compile_core_probes()
    get(name, envir = env)
  }
})

compile_core_probes <- function() {
  # (compiling takes longer than a CRAN check's whole test run; the C++
  # suite and the other sizes cover these routines)
  skip_on_cran()
  skip_if_not_installed("RcppEigen")
  # small code that runs on small data: compile it quickly (-O1, no debug
  # information) and quietly (Eigen's SSE types trip -Wignored-attributes)
  # (GPSVM_PROBE_MAKEVARS: other flags; the sanitizer stage builds the
  # probes with its own, so that the core code they call is checked too)
  makevars <- Sys.getenv("GPSVM_PROBE_MAKEVARS", tempfile("Makevars"))
  if (!file.exists(makevars)) writeLines("CXX17FLAGS = -O1 -g0", makevars)
  old <- Sys.getenv(c("R_MAKEVARS_USER", "PKG_CXXFLAGS"), unset = NA)
  on.exit({
    for (v in names(old)) if (is.na(old[[v]])) Sys.unsetenv(v) else do.call(Sys.setenv, as.list(old[v]))
  }, add = TRUE)
  Sys.setenv(R_MAKEVARS_USER = makevars, PKG_CXXFLAGS = "-Wno-ignored-attributes")
  env <- new.env()
  # GPSVM_PROBE_CACHE: a build directory shared by several R processes (the
  # sanitizer stage builds the probes there once, before its test files)
  cache <- Sys.getenv("GPSVM_PROBE_CACHE", tempfile("core-probes"))
  Rcpp::sourceCpp(test_path("probes", "core-probes.cpp"), env = env, cacheDir = cache)
  env
}
