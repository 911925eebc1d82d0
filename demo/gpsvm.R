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

# `make demo` sets GPSVM_DEMO_PNG so the picture lands in the working tree.
png_file <- Sys.getenv("GPSVM_DEMO_PNG", file.path(tempdir(), "gpsvm-demo.png"))
grDevices::png(png_file, width = 800, height = 500)
start <- proc.time()[["elapsed"]]
plot(k, deriv = c(0, 2, 4), main = "Gaussian kernel (sigma = 1) and its derivatives")
cat(sprintf("\nKernel and derivatives of orders 2 and 4 at 401 points: %.3f s\n",
            proc.time()[["elapsed"]] - start))
grDevices::dev.off()
cat("Plot written to", png_file, "\n")
