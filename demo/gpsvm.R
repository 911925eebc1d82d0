# gpsvm's main demonstration.
#
# The kernel engine every gpsvm model shares: a Gaussian kernel, its Gram
# matrix, and its derivatives in the first argument, drawn to a PNG.
library(gpsvm)

k <- rbf_kernel(sigma = 1)
print(k)

x <- c(-1, 0, 0.5, 2)
cat("\nGram matrix of", length(x), "points:\n")
print(round(kernel_matrix(k, x), 4))

z <- seq(-4, 4, length.out = 401)
start <- proc.time()[["elapsed"]]
curves <- sapply(c(0, 2, 4), function(n) kernel_matrix(k, z, 0, deriv = n))
cat(sprintf("\nKernel and derivatives of orders 2 and 4 at %d points: %.3f s\n",
            length(z), proc.time()[["elapsed"]] - start))

png_file <- file.path(tempdir(), "gpsvm-kernel.png")
grDevices::png(png_file, width = 800, height = 500)
matplot(z, curves, type = "l", lty = 1, lwd = 2, col = c("black", "steelblue", "firebrick"),
        xlab = "x - x'", ylab = "value", main = "Gaussian kernel (sigma = 1) and its derivatives")
legend("topright", c("k", "d^2 k / dx^2", "d^4 k / dx^4"), lwd = 2,
       col = c("black", "steelblue", "firebrick"), bty = "n")
grDevices::dev.off()
cat("Plot written to", png_file, "\n")
