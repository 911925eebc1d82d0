# mfsvr()'s default where the linear kernel wins the kernel choice: the
# widths per input weighed against it (default) or not weighed at all (the
# size rule per_input_max_n set below the data, as the default was before
# the linear winner was weighed), beside DiceKriging::km() (Matern 5/2, a
# width per input, nugget estimated) and e1071::svm() in one process.
#
#   make bench BENCH=linear-widths
#   GPSVM_BENCH_SPLITS=5 make bench BENCH=linear-widths
#
# Data: base R's quakes (mag on lat, long, depth, stations; 700 training
# rows), MASS's cpus (log10 of perf on its six machine inputs; 140 training
# rows) and a response linear in three of four uniform inputs with noise sd
# 0.3 (400 rows, 250 training); random splits, the first set.seed(82),
# set.seed(77) and set.seed(1).  For each: held-out RMSE, mean log score
# (negative log predictive density), the 95% interval score and coverage,
# CPU seconds (user + system) of the fits, and the widths row of the plan.
# The machine may be shared: read the ratios.

suppressPackageStartupMessages(library(gpsvm))
options(gpsvm.quiet = TRUE)
splits <- as.integer(Sys.getenv("GPSVM_BENCH_SPLITS", "3"))
has_km <- requireNamespace("DiceKriging", quietly = TRUE)
has_e1071 <- requireNamespace("e1071", quietly = TRUE)

cpu <- function(expr) {
  t <- system.time(value <- expr)
  list(value = value, cpu = unname(t[1] + t[2]))
}
scores <- function(mean, lower, upper, log_density, y) {
  c(rmse = sqrt(mean((mean - y)^2)), log_score = -mean(log_density),
    interval = mean((upper - lower) + 2 / 0.05 * ((lower - y) * (y < lower) + (y - upper) * (y > upper))),
    cover = mean(y >= lower & y <= upper))
}
gpsvm_scores <- function(fit, test, y) {
  p <- predict(fit, test, interval = "prediction")
  s <- colMeans(predictive_scores(fit, test))
  c(scores(p[, 1], p[, 2], p[, 3], 0, y)[c("rmse", "interval", "cover")],
    log_score = s[["log_score"]])
}
km_scores <- function(train, test, y_train, y) {
  x <- scale(train)
  m <- DiceKriging::km(~1, design = data.frame(x), response = y_train, covtype = "matern5_2",
                       nugget.estim = TRUE, control = list(trace = FALSE))
  p <- DiceKriging::predict(m, newdata = data.frame(scale(test, attr(x, "scaled:center"),
                                                         attr(x, "scaled:scale"))),
                            type = "UK", checkNames = FALSE)
  sd <- sqrt(p$sd^2 + m@covariance@nugget)
  scores(p$mean, p$mean - 1.96 * sd, p$mean + 1.96 * sd, stats::dnorm(y, p$mean, sd, log = TRUE), y)
}

cpus <- if (requireNamespace("MASS", quietly = TRUE)) {
  e <- new.env()
  utils::data("cpus", package = "MASS", envir = e)
  d <- e$cpus[, 2:7]
  d$y <- log10(e$cpus$perf)
  d
}
set.seed(5)
x <- matrix(stats::runif(1600), 400)
linear <- data.frame(x, y = drop(x %*% c(1, -2, 0.5, 0)) + stats::rnorm(400, sd = 0.3))
quakes <- datasets::quakes[, c("lat", "long", "depth", "stations", "mag")]
names(quakes)[5] <- "y"
sets <- list(quakes = list(d = quakes, n = 700, seed = 82),
             cpus = if (!is.null(cpus)) list(d = cpus, n = 140, seed = 77),
             linear = list(d = linear, n = 250, seed = 1))
sets <- Filter(Negate(is.null), sets)

rows <- list()
for (name in names(sets)) {
  s <- sets[[name]]
  for (k in seq_len(splits)) {
    set.seed(s$seed + k - 1L)
    i <- sample(nrow(s$d), s$n)
    train <- s$d[i, ]
    test <- s$d[-i, ]
    default <- cpu(mfsvr(y ~ ., train))
    old <- options(gpsvm.size_policy = list(per_input_max_n = 1))
    unweighed <- cpu(mfsvr(y ~ ., train))
    options(old)
    widths <- default$value$plan
    add <- function(model, sc, seconds, choice = NA_character_) {
      rows[[length(rows) + 1L]] <<- data.frame(data = name, split = k, model = model,
                                               t(sc[c("rmse", "log_score", "interval", "cover")]),
                                               cpu = seconds, choice = choice)
    }
    add("default", gpsvm_scores(default$value, test, test$y), default$cpu,
        widths$choice[widths$step == "widths"])
    add("unweighed", gpsvm_scores(unweighed$value, test, test$y), unweighed$cpu,
        unweighed$value$plan$choice[1])
    if (has_km) {
      km <- cpu(km_scores(as.matrix(train[names(train) != "y"]), as.matrix(test[names(test) != "y"]),
                          train$y, test$y))
      add("km", km$value, km$cpu)
    }
    if (has_e1071) {
      e <- cpu(e1071::svm(y ~ ., train))
      add("e1071", c(rmse = sqrt(mean((predict(e$value, test) - test$y)^2)), log_score = NA,
                     interval = NA, cover = NA), e$cpu)
    }
  }
}
rows <- do.call(rbind, rows)
options(width = 150)
print(rows, digits = 4, row.names = FALSE)
cat("\nMeans over splits\n")
means <- stats::aggregate(cbind(rmse, log_score, interval, cover, cpu) ~ data + model,
                          data = rows, FUN = mean, na.action = stats::na.pass)
print(means, digits = 4, row.names = FALSE)
cat("\nRatios of the default to the fit without widths weighed, and to km\n")
for (name in unique(rows$data)) {
  m <- means[means$data == name, ]
  r <- function(a, b, col) m[m$model == a, col] / m[m$model == b, col]
  cat(sprintf("%-7s RMSE %.3f (vs km %s), interval score %.3f (vs km %s), CPU %.2fx (vs km %s)\n",
              name, r("default", "unweighed", "rmse"),
              if (has_km) sprintf("%.3f", r("default", "km", "rmse")) else "NA",
              r("default", "unweighed", "interval"),
              if (has_km) sprintf("%.3f", r("default", "km", "interval")) else "NA",
              r("default", "unweighed", "cpu"),
              if (has_km) sprintf("%.2f", r("default", "km", "cpu")) else "NA"))
}
