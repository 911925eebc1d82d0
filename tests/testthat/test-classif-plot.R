# plot() of svc() and gpc() fits on a two-dimensional slice.  The surface
# the plot draws (.slice_surface()) is checked against predict() at a data
# frame or matrix built here by hand: the axis grids, and the other inputs at
# their medians, most frequent level or the values given.

# Two numeric inputs, a third, and a factor whose most frequent level is "v"
# (15 u, 30 v, 15 w); `a` is positive so that log(a) is defined on the data.
slice_data <- function(n = 60, seed = 1) {
  set.seed(seed)
  d <- data.frame(a = runif(n, 0.2, 3), b = rnorm(n), c = rnorm(n),
                  f = factor(rep(c("u", "v", "v", "w"), length.out = n)))
  shift <- c(u = -1, v = 0, w = 1.5)[as.character(d$f)]
  d$y <- factor(ifelse(d$a - 1.5 + d$b + 0.5 * d$c + shift + rnorm(n, sd = 0.3) > 0, "hi", "lo"))
  d
}

# The grid along one axis: the data's range widened by 5% on each side.
axis_values <- function(v, n) {
  r <- range(v)
  seq(r[1] - 0.05 * diff(r), r[2] + 0.05 * diff(r), length.out = n)
}

iris60 <- function() iris[round(seq(1, 150, length.out = 60)), ]

test_that("a slice of a four-input formula fit is predict() at the medians of the others", {
  d <- iris60()
  fit <- gpc(Species ~ ., d)
  s <- gpsvm:::.slice_surface(fit, c("Petal.Length", "Petal.Width"), grid = 7)
  expect_identical(s$inputs, c("Petal.Length", "Petal.Width"))
  expect_equal(s$held, list(Sepal.Length = median(d$Sepal.Length),
                            Sepal.Width = median(d$Sepal.Width)))
  g1 <- axis_values(d$Petal.Length, 7)
  g2 <- axis_values(d$Petal.Width, 7)
  expect_equal(s$g1, g1)
  expect_equal(s$g2, g2)
  nd <- data.frame(Sepal.Length = median(d$Sepal.Length), Sepal.Width = median(d$Sepal.Width),
                   Petal.Length = rep(g1, 7), Petal.Width = rep(g2, each = 7))
  expect_equal(s$f, unname(predict(fit, nd, type = "link")))
  expect_identical(dim(s$f), c(49L, 3L))
  expect_equal(s$points, cbind(d$Petal.Length, d$Petal.Width), ignore_attr = TRUE)
  # values given in `slice` move the surface: Sepal.Width held at 4 instead
  s4 <- gpsvm:::.slice_surface(fit, c("Petal.Length", "Petal.Width"),
                               slice = list(Sepal.Width = 4), grid = 7)
  nd$Sepal.Width <- 4
  expect_equal(s4$f, unname(predict(fit, nd, type = "link")))
  expect_gt(max(abs(s4$f - s$f)), 1e-3)
  # a formula vertical ~ horizontal, as e1071's plot.svm() takes the axes:
  # e1071 draws its right-hand side across and its left-hand side up
  sf <- gpsvm:::.slice_surface(fit, Petal.Width ~ Petal.Length, grid = 7)
  expect_identical(sf[c("inputs", "g1", "g2", "f")], s[c("inputs", "g1", "g2", "f")])
  expect_identical(gpsvm:::.slice_surface(fit, Sepal.Width ~ Petal.Width, grid = 3)$inputs,
                   c("Petal.Width", "Sepal.Width"))
  for (bad in list(~ Petal.Length, Petal.Width ~ Petal.Length + Sepal.Width,
                   Petal.Width ~ log(Petal.Length * Sepal.Width))) {
    expect_error(gpsvm:::.slice_surface(fit, bad, grid = 3),
                 "'inputs' as a formula must name one input on each side")
  }
  expect_error(gpsvm:::.slice_surface(fit, Petal.Width ~ Petal.Lengthh, grid = 3),
               "'inputs' names 'Petal.Lengthh', which is not an input")
  expect_identical(gpsvm:::.slice_label(s4$held),
                   sprintf("slice: Sepal.Length = %s, Sepal.Width = 4",
                           format(median(d$Sepal.Length), digits = 3)))
})

test_that("the default axes are the first two numeric variables, not model-matrix columns", {
  d <- slice_data()[c("y", "f", "c", "b", "a")]
  fit <- svc(y ~ f + log(a) + c + b, d)
  s <- gpsvm:::.slice_surface(fit, grid = 5)
  # the formula's variables in its order: f (a factor), a, c, b
  expect_identical(s$inputs, c("a", "c"))
  expect_identical(names(s$held), c("f", "b"))
  # axis `a` is the variable, its grid going through log() as predict() does
  expect_equal(s$g1, axis_values(d$a, 5))
  expect_equal(s$points[, 1], d$a)
  expect_identical(gpsvm:::.slice_surface(fit, c(4, 3), grid = 5)$inputs, c("b", "c"))
})

test_that("a factor is held at its most frequent level, or at the level given", {
  d <- slice_data()
  fit <- gpc(y ~ a + b + f, d)
  g1 <- axis_values(d$a, 6)
  g2 <- axis_values(d$b, 6)
  at_level <- function(level) {
    data.frame(a = rep(g1, 6), b = rep(g2, each = 6), f = factor(level, levels = c("u", "v", "w")))
  }
  s <- gpsvm:::.slice_surface(fit, grid = 6)
  expect_identical(as.character(s$held$f), "v")
  expect_equal(s$f, unname(predict(fit, at_level("v"), type = "link")))
  sw <- gpsvm:::.slice_surface(fit, slice = list(f = "w"), grid = 6)
  expect_equal(sw$f, unname(predict(fit, at_level("w"), type = "link")))
  expect_gt(max(abs(sw$f - s$f)), 1e-3)
  # a one-element factor names its level too
  su <- gpsvm:::.slice_surface(fit, slice = list(f = factor("u")), grid = 6)
  expect_equal(su$f, unname(predict(fit, at_level("u"), type = "link")))
  expect_identical(gpsvm:::.slice_label(sw$held), "slice: f = w")
})

test_that("a character input is held at its most frequent value", {
  d <- slice_data()
  d$f <- as.character(d$f)
  fit <- svc(y ~ a + b + f, d)
  s <- gpsvm:::.slice_surface(fit, slice = list(f = "u"), grid = 5)
  nd <- data.frame(a = rep(axis_values(d$a, 5), 5), b = rep(axis_values(d$b, 5), each = 5), f = "u")
  expect_equal(s$f, unname(predict(fit, nd, type = "link")))
  expect_identical(gpsvm:::.slice_surface(fit, grid = 5)$held$f, "v")
})

test_that("a slice of a matrix fit holds the other columns at their medians", {
  d <- slice_data()
  x <- cbind(d$a, d$b, d$c)
  fit <- svc(x, d$y)
  s <- gpsvm:::.slice_surface(fit, inputs = c(3, 1), grid = 5)
  expect_identical(s$inputs, c("x3", "x1"))
  g1 <- axis_values(d$c, 5)
  g2 <- axis_values(d$a, 5)
  nx <- cbind(rep(g2, each = 5), median(d$b), rep(g1, 5))
  expect_equal(s$f, unname(predict(fit, nx, type = "link")))
  s2 <- gpsvm:::.slice_surface(fit, inputs = c("x3", "x1"), slice = list(x2 = 0.5), grid = 5)
  nx[, 2] <- 0.5
  expect_equal(s2$f, unname(predict(fit, nx, type = "link")))
  # named columns are the inputs' names
  colnames(x) <- c("a", "b", "c")
  fit_named <- svc(x, d$y)
  expect_identical(gpsvm:::.slice_surface(fit_named, grid = 5)$inputs, c("a", "b"))
  expect_named(gpsvm:::.slice_surface(fit_named, grid = 5)$held, "c")
})

test_that("a fit on two inputs gives the surface it gave before slices", {
  d <- slice_data()
  x <- cbind(d$a, d$b)
  for (fit in list(gpc(x, d$y), svc(x, d$y), gpc(Species ~ Petal.Length + Sepal.Width, iris60()))) {
    # the computation plot() made before it drew slices
    xs <- gpsvm:::.original_inputs(fit)
    g1 <- axis_values(xs[, 1], 9)
    g2 <- axis_values(xs[, 2], 9)
    pts <- gpsvm:::.scale_inputs(as.matrix(expand.grid(g1, g2)), fit$scaling)
    before <- unname(gpsvm:::.classif_decision(fit, pts))
    s <- gpsvm:::.slice_surface(fit, grid = 9)
    expect_equal(s$f, before, tolerance = 1e-12)
    expect_equal(s$g1, g1, tolerance = 1e-12)
    expect_length(s$held, 0L)
    expect_null(gpsvm:::.slice_label(s$held))
  }
  # matrix fits: bit for bit
  fit <- gpc(x, d$y)
  xs <- gpsvm:::.original_inputs(fit)
  lattice <- as.matrix(expand.grid(axis_values(xs[, 1], 9), axis_values(xs[, 2], 9)))
  pts <- gpsvm:::.scale_inputs(lattice, fit$scaling)
  expect_identical(gpsvm:::.slice_surface(fit, grid = 9)$f,
                   unname(gpsvm:::.classif_decision(fit, pts)))
})

test_that("grid points the formula cannot code are NA on the surface", {
  d <- slice_data()
  d$a <- d$a - min(d$a) + 0.01  # the widened grid for `a` starts below 0
  fit <- gpc(y ~ log(a) + b + c, d)
  s <- suppressWarnings(gpsvm:::.slice_surface(fit, grid = 6))
  below <- rep(s$g1 <= 0, 6)
  expect_true(any(below))
  expect_true(all(is.na(s$f[below])))
  expect_false(anyNA(s$f[!below]))
  nd <- data.frame(a = rep(s$g1, 6)[!below], b = rep(s$g2, each = 6)[!below], c = median(d$c))
  expect_equal(s$f[!below], unname(predict(fit, nd, type = "link")))
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  expect_identical(suppressWarnings(plot(fit, grid = 6)), fit)
})

test_that("the slice is over the rows the fit used", {
  d <- slice_data()
  d$c[c(2, 5)] <- NA
  fit <- svc(y ~ a + b + c, d)
  s <- gpsvm:::.slice_surface(fit, grid = 4)
  expect_equal(s$held$c, median(d$c[-c(2, 5)]))
  expect_equal(s$points, cbind(d$a[-c(2, 5)], d$b[-c(2, 5)]), ignore_attr = TRUE)
})

test_that("bad 'inputs' and 'slice' give errors naming them", {
  d <- slice_data()
  fit <- gpc(y ~ a + b + c + f, d)
  surface <- function(...) gpsvm:::.slice_surface(fit, ..., grid = 3)
  expect_error(surface(inputs = "a"), "'inputs' must give two inputs")
  expect_error(surface(inputs = c("a", NA)), "'inputs' must give two inputs")
  expect_error(surface(inputs = c("a", "z")), "'inputs' names 'z', which is not an input")
  expect_error(surface(inputs = c("a", "a")), "'inputs' must be two different")
  expect_error(surface(inputs = c("a", "f")), "'inputs' must be numeric inputs; 'f'")
  expect_error(surface(inputs = c(1, 5)), "'inputs' positions must be whole numbers from 1 to 4")
  expect_error(surface(inputs = c(1, 1.5)), "'inputs' positions")
  expect_error(surface(slice = list(z = 1)), "'slice' names 'z', which is not an input")
  expect_error(surface(slice = list(1)), "'slice' must be a named list")
  expect_error(surface(slice = c(c = 1)), "'slice' must be a named list")
  expect_error(surface(slice = list(a = 1)), "'slice' gives a value for 'a', which is on an axis")
  expect_error(surface(slice = list(c = 1, c = 2)), "'slice' names 'c' more than once")
  expect_error(surface(slice = list(f = "z")),
               "'slice' value for 'f' is 'z', which is not one of its levels \\(u, v, w\\)")
  expect_error(surface(slice = list(f = 2)), "'slice' value for 'f' must be one level name")
  expect_error(surface(slice = list(c = NA_real_)), "'slice' value for 'c' must be finite")
  expect_error(surface(slice = list(c = Inf)), "'slice' value for 'c' must be finite, not Inf")
  expect_error(surface(slice = list(c = "1")), "'slice' value for 'c' must be one number")
  expect_error(surface(slice = list(c = 1:2)), "'slice' value for 'c' must be one number")
  # plot() reports them too, and a fit with one numeric input cannot be drawn
  expect_error(plot(fit, inputs = c("a", "f")), "'inputs'")
  expect_error(plot(gpc(y ~ a + f, d)), "two numeric inputs; this one has 1 \\(a\\)")
  expect_error(plot(svc(cbind(d$a), d$y)), "two numeric inputs")
})

test_that("the subtitle is cut short when long", {
  held <- stats::setNames(as.list(seq(0.5, 10, by = 0.5)), paste0("input", 1:20))
  label <- gpsvm:::.slice_label(held)
  expect_lte(nchar(label), 80L)
  expect_match(label, "^slice: input1 = 0.5, input2 = 1, .*, \\.\\.\\.$")
  expect_identical(gpsvm:::.slice_label(list(x = 1234.5678, f = "b")), "slice: x = 1235, f = b")
})

test_that("plot() draws two-class and three-class fits on more than two inputs", {
  d <- slice_data()
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  gp <- gpc(y ~ a + b + c + f, d)
  expect_identical(plot(gp, grid = 10), gp)
  expect_invisible(plot(gp, inputs = c("c", "b"), slice = list(f = "w", a = 1), grid = 10))
  sv <- svc(y ~ ., d)
  expect_identical(plot(sv, grid = 10, main = "svc", sub = "my subtitle", xlab = "first"), sv)
  three <- gpc(Species ~ ., iris60())
  expect_identical(plot(three, inputs = c("Petal.Length", "Petal.Width"), grid = 10), three)
  expect_invisible(plot(svc(Species ~ ., iris60()), grid = 10, col = 2:4))
})
