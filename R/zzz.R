# The threads of the core's row loops are set once per session (see
# ?gpsvm_threads).  parsnip is only suggested: the "gpsvm" engines are
# registered when parsnip's namespace is there, now if it is loaded already,
# else by a hook that runs when it is loaded (so loading gpsvm never loads
# parsnip).
.onLoad <- function(libname, pkgname) {
  cpp_threads(.default_threads(), .follow_load())
  if (isNamespaceLoaded("parsnip")) {
    .register_parsnip_engines()
  } else {
    setHook(packageEvent("parsnip", "onLoad"), function(...) .register_parsnip_engines())
  }
  # the distributional package's generics for as_distribution()'s elements,
  # the same way (it is only suggested too)
  if (isNamespaceLoaded("distributional")) {
    .register_dist_methods()
  } else {
    setHook(packageEvent("distributional", "onLoad"), function(...) .register_dist_methods())
  }
  invisible()
}
