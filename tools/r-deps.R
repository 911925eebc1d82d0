# The R packages gpsvm's build, check and site need, for tools/install-deps.sh.
#
#   Rscript tools/r-deps.R missing [pkg ...]   the needed packages not installed
#   Rscript tools/r-deps.R install [pkg ...]   install from CRAN what is missing
#                                              or older than required
#   Rscript tools/r-deps.R unmet [pkg ...]     what is still missing or too old
#
# The needed packages are DESCRIPTION's Imports, LinkingTo and Suggests (with
# their version requirements), roxygen2 (for the documentation drift check)
# and the extra names given.  A package CRAN serves today may require newer
# versions of packages already installed (Debian's r-cran-* packages lag
# CRAN), and install.packages() installs missing dependencies only, never
# newer ones; so 'install' follows the requirements of everything it installs
# down the dependency tree and installs the packages whose installed version
# is too old as well.

requirements <- function(field_values) {
  entries <- trimws(unlist(strsplit(gsub("\n", " ", field_values[!is.na(field_values)]), ",")))
  entries <- entries[nzchar(entries)]
  pattern <- "^([[:alnum:].]+)\\s*(\\(\\s*(>=|>|==)\\s*([^) ]+)\\s*\\))?$"
  data.frame(package = sub(pattern, "\\1", entries),
             op = ifelse(grepl("\\(", entries), sub(pattern, "\\3", entries), NA),
             version = ifelse(grepl("\\(", entries), sub(pattern, "\\4", entries), NA),
             stringsAsFactors = FALSE)
}

base_packages <- c("R", rownames(installed.packages(priority = "base")))

needed <- function(extra) {
  d <- read.dcf("DESCRIPTION", fields = c("Imports", "LinkingTo", "Suggests"))
  reqs <- requirements(d[1, ])
  reqs <- rbind(reqs, data.frame(package = c("roxygen2", extra), op = NA, version = NA))
  reqs[!reqs$package %in% base_packages & !duplicated(reqs$package), ]
}

installed_version <- function(package) {
  path <- system.file(package = package)
  if (!nzchar(path)) return(NA_character_)
  unname(read.dcf(file.path(path, "DESCRIPTION"), fields = "Version")[1, 1])
}

# TRUE where the installed version meets the requirement (FALSE if absent).
satisfied <- function(reqs) {
  vapply(seq_len(nrow(reqs)), function(i) {
    have <- installed_version(reqs$package[i])
    if (is.na(have)) return(FALSE)
    if (is.na(reqs$op[i])) return(TRUE)
    do.call(reqs$op[i], list(package_version(have), package_version(reqs$version[i])))
  }, logical(1))
}

cran_repos <- function() {
  repos <- getOption("repos")
  if (is.null(repos) || identical(unname(repos["CRAN"]), "@CRAN@")) {
    repos <- c(CRAN = "https://cloud.r-project.org")
  }
  repos
}

# The packages to install from CRAN: the unmet requirements, and the unmet
# requirements of those, down the tree of CRAN's current versions.
cran_closure <- function(reqs, available) {
  todo <- unique(reqs$package[!satisfied(reqs)])
  out <- character()
  while (length(todo) > 0L) {
    package <- todo[1L]
    todo <- todo[-1L]
    if (package %in% out) next
    if (!package %in% rownames(available)) stop("CRAN has no package ", package, call. = FALSE)
    out <- c(out, package)
    deps <- requirements(available[package, c("Depends", "Imports", "LinkingTo")])
    deps <- deps[!deps$package %in% c(base_packages, out), ]
    todo <- union(todo, deps$package[!satisfied(deps)])
  }
  out
}

install_from_cran <- function(packages) {
  lib <- .libPaths()[1]
  if (file.access(lib, mode = 2) != 0) {
    lib <- Sys.getenv("R_LIBS_USER")
    dir.create(lib, recursive = TRUE, showWarnings = FALSE)
    .libPaths(c(lib, .libPaths()))
  }
  cat("install-deps: install.packages(", packages, ") into", lib, "\n")
  install.packages(packages, lib = lib, repos = cran_repos(),
                   Ncpus = max(1L, min(2L, parallel::detectCores())))
}

args <- commandArgs(TRUE)
reqs <- needed(args[-1])
switch(args[1],
  missing = cat(reqs$package[is.na(vapply(reqs$package, installed_version, ""))], sep = "\n"),
  install = {
    packages <- cran_closure(reqs, available.packages(repos = cran_repos()))
    if (length(packages) > 0L) install_from_cran(packages)
  },
  unmet = cat(reqs$package[!satisfied(reqs)], sep = "\n"),
  stop("usage: r-deps.R missing|install|unmet [package ...]", call. = FALSE))
