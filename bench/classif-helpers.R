# Shared by the classification benchmarks (bench-multiclass.R,
# bench-binary-large.R), sourced from the package's root: the log loss of
# class probabilities, a timer of elapsed and CPU seconds, and e1071's
# probability model.

# Probabilities below 1e-15 count as 1e-15, for every model.
log_loss <- function(p, y) {
  p <- p[, levels(y), drop = FALSE]
  -mean(log(pmax(p[cbind(seq_along(y), as.integer(y))], 1e-15)))
}

# The value of `expr`, its elapsed seconds and the process's CPU seconds
# (user + system, every thread).
timed <- function(expr) {
  t <- proc.time()
  value <- suppressMessages(suppressWarnings(expr))
  d <- proc.time() - t
  list(value = value, time = d[["elapsed"]], cpu = d[["user.self"]] + d[["sys.self"]])
}

e1071_probabilities <- function(f, train, test) {
  fit <- e1071::svm(f, train, probability = TRUE)
  attr(predict(fit, test, probability = TRUE), "probabilities")
}
