// The kernel vocabulary shared by every model: Gaussian RBF, Matern
// (nu = 1/2, 3/2, 5/2), polynomial and linear kernels, and their partial
// derivatives in one coordinate of the first argument (of any order, or for
// the Matern kernels up to the order their process is differentiable).
// Pure C++17 + Eigen: no R headers.
//
// Inputs follow R's layout, one point per row of an n x d matrix.  The
// evaluators transpose once to d x n so that each point is contiguous.
#ifndef GPSVM_KERNELS_HPP
#define GPSVM_KERNELS_HPP

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "interrupt.hpp"
#include "memory.hpp"
#include "threads.hpp"

namespace gpsvm {

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;
using ConstMatrixRef = Eigen::Ref<const MatrixXd>;
using ConstVectorRef = Eigen::Ref<const VectorXd>;

enum class KernelFamily { rbf, polynomial, matern };

// Limits that keep every loop and integer in range (R's kernel_matrix(),
// predict() and poly_kernel() document and check the same numbers).  A
// derivative of order n costs O(n) per kernel entry, and the Gaussian
// kernel's derivatives overflow double precision long before this order
// unless the width is large; polynomial degrees beyond 100 overflow or
// underflow for all but tiny inputs.
constexpr int kMaxDerivativeOrder = 1000;
constexpr int kMaxPolynomialDegree = 100;

// Probabilists' Hermite polynomial He_n(u) by the three-term recurrence
// He_{k+1}(u) = u He_k(u) - k He_{k-1}(u).
inline double hermite_he(int n, double u) {
  double previous = 1.0, current = u;
  if (n == 0) return previous;
  for (int k = 1; k < n; ++k) {
    const double next = u * current - k * previous;
    previous = current;
    current = next;
  }
  return current;
}

// The papers write the Gaussian kernel's width in other ways; see
// ?gpsvm_corrections, item 5, for the conversions.
//
// The Matern kernels of smoothness nu = p + 1/2 (p = 0, 1, 2), with
// r = |x - y| / sigma and a = sqrt(2 nu):
//   p = 0: exp(-r);  p = 1: (1 + a r) exp(-a r);
//   p = 2: (1 + a r + (a r)^2 / 3) exp(-a r)
// (Rasmussen and Williams 2006, eq. 4.17; DiceKriging's covMatern5_2 and
// matern3_2 with range theta = sigma).  Their process is p times mean-square
// differentiable, so derivatives of order above p in either argument (and
// the variance of such a derivative of f) do not exist: they are an error.
struct Kernel {
  KernelFamily family = KernelFamily::rbf;
  double sigma = 1.0;   // RBF: exp(-|x - y|^2 / (2 sigma^2)); Matern: the range
  int smoothness = 2;   // Matern: p in nu = p + 1/2, from 0 to 2
  int degree = 1;       // polynomial: (scale <x, y> + offset)^degree
  double scale = 1.0;
  double offset = 0.0;
  // A constant added to either family: the prior variance of an offset b
  // shared by every point, f(x) = b + g(x) with b ~ N(0, constant).  The
  // classifiers use it as the threshold of the SVM (a bias with a Gaussian
  // prior); derivatives of order >= 1 do not see it.
  double constant = 0.0;

  static Kernel rbf(double sigma) {
    Kernel k;
    k.family = KernelFamily::rbf;
    k.sigma = sigma;
    k.validate();
    return k;
  }
  static Kernel polynomial(int degree, double scale, double offset) {
    Kernel k;
    k.family = KernelFamily::polynomial;
    k.degree = degree;
    k.scale = scale;
    k.offset = offset;
    k.validate();
    return k;
  }
  static Kernel linear() { return polynomial(1, 1.0, 0.0); }
  static Kernel matern(int smoothness, double sigma) {
    Kernel k;
    k.family = KernelFamily::matern;
    k.smoothness = smoothness;
    k.sigma = sigma;
    k.validate();
    return k;
  }

  // The families with a width whose value depends on |x - y| / sigma alone.
  bool radial() const { return family != KernelFamily::polynomial; }

  void validate() const {
    if (!(constant >= 0.0) || !std::isfinite(constant))
      throw std::invalid_argument("kernel 'constant' must be a finite number >= 0");
    if (radial()) {
      if (!(sigma > 0.0) || !std::isfinite(sigma))
        throw std::invalid_argument("kernel width 'sigma' must be a positive finite number");
      if (family == KernelFamily::matern && (smoothness < 0 || smoothness > 2))
        throw std::invalid_argument("the Matern kernel's 'nu' must be 1/2, 3/2 or 5/2");
    } else {
      if (degree < 1 || degree > kMaxPolynomialDegree)
        throw std::invalid_argument("kernel 'degree' must be a whole number in [1, " +
                                    std::to_string(kMaxPolynomialDegree) + "]");
      if (!std::isfinite(scale) || !std::isfinite(offset))
        throw std::invalid_argument("kernel 'scale' and 'offset' must be finite");
    }
  }

  // k(x, y) for two points of dimension d.
  double operator()(const double* x, const double* y, Index d) const {
    if (radial()) return radial_value(scaled_square(x, y, d)) + constant;
    return std::pow(scale * dot(x, y, d) + offset, degree) + constant;
  }

  // A radial kernel's value without the constant at q = |x - y|^2 / sigma^2.
  double radial_value(double q) const {
    if (family == KernelFamily::rbf) return std::exp(-0.5 * q);
    const double ar = matern_a() * std::sqrt(q);
    return matern_polynomial(ar) * std::exp(-ar);
  }

  // The same for an array of exponents e = -q / 2 (clamped at 0 from above,
  // the form the tiled evaluators produce), in place, plus the constant.
  template <class Derived>
  void values_from_exponents(Eigen::DenseBase<Derived>& e) const {
    auto&& v = e.derived().array();
    if (family == KernelFamily::rbf) {
      v = v.min(0.0).exp() + constant;
      return;
    }
    const Eigen::ArrayXXd ar = matern_a() * (-2.0 * v.min(0.0)).sqrt();
    Eigen::ArrayXXd poly = Eigen::ArrayXXd::Ones(ar.rows(), ar.cols());
    if (smoothness >= 1) poly += ar;
    if (smoothness == 2) poly += ar.square() / 3.0;
    v = poly * (-ar).exp() + constant;
  }

  // g(q) with dk / d log sigma_c = g(q) (x_c - y_c)^2 / sigma^2 when each
  // coordinate c has a width sigma_c of its own (evaluated at the common
  // width): g = -k'(r) / r for k as a function of r = sqrt(q).
  //   RBF: exp(-q / 2);  Matern p = 0: exp(-r) / r;  p = 1: a^2 exp(-a r);
  //   p = 2: a^2 (1 + a r) exp(-a r) / 3.
  // At r = 0 every (x_c - y_c)^2 is 0, and p = 0's g (infinite) is given
  // as 0: the product's limit.
  Eigen::ArrayXd width_weights(const Eigen::ArrayXd& q) const {
    if (family == KernelFamily::rbf) return (-0.5 * q).exp();
    const double a = matern_a();
    const Eigen::ArrayXd r = q.max(0.0).sqrt();
    const Eigen::ArrayXd decay = (-a * r).exp();
    if (smoothness == 0) return (r > 0.0).select(decay / r, 0.0);
    if (smoothness == 1) return a * a * decay;
    return (a * a / 3.0) * (1.0 + a * r) * decay;
  }

  // The highest derivative order in one argument the kernel has.
  int max_derivative_order() const {
    return family == KernelFamily::matern ? smoothness : kMaxDerivativeOrder;
  }

  // An order within max_derivative_order(), or an error that says why not.
  void check_smoothness(int order) const {
    check_order(order);
    if (order <= max_derivative_order()) return;
    static const char* const nu[] = {"1/2", "3/2", "5/2"};
    static const char* const times[] = {"not differentiable", "differentiable once",
                                         "differentiable twice"};
    throw std::invalid_argument(
        std::string("the Matern kernel with nu = ") + nu[smoothness] + " is " +
        times[smoothness] + ": derivatives of order " + std::to_string(order) +
        " do not exist (its process is " + times[smoothness] + " in mean square)");
  }

  // d^order / dx_coord^order k(x, y): the derivative in one coordinate of
  // the FIRST argument.
  //   RBF: with u = (x_c - y_c) / sigma, (-1 / sigma)^n He_n(u) k(x, y).
  //   polynomial: deg! / (deg - n)! (scale y_c)^n (scale <x,y> + offset)^(deg - n),
  //   and 0 once n exceeds the degree.
  double derivative(const double* x, const double* y, Index d, int order,
                    Index coord) const {
    check_smoothness(order);
    if (order == 0) return (*this)(x, y, d);
    if (family == KernelFamily::rbf)
      return rbf_derivative_factor(order, x[coord] - y[coord]) * ((*this)(x, y, d) - constant);
    if (family == KernelFamily::matern)
      return matern_derivative(order, x[coord] - y[coord], scaled_square(x, y, d));
    if (order > degree) return 0.0;
    double falling = 1.0;  // deg (deg - 1) ... (deg - n + 1)
    for (int k = 0; k < order; ++k) falling *= degree - k;
    return falling * std::pow(scale * y[coord], order) *
           std::pow(scale * dot(x, y, d) + offset, degree - order);
  }

  // d^order/dx_c^order d^order/dy_c^order k(x, y) at y = x: the prior
  // variance of the order-th derivative of f at x (the diagonal that the
  // posterior variance of a derivative starts from).
  //   RBF: with t = x_c - y_c, d/dy_c = -d/dt, so this is (-1)^n d^2n/dt^2n
  //   exp(-t^2 / (2 sigma^2)) at 0 = (-1)^n He_2n(0) / sigma^2n = (2n-1)!! / sigma^2n.
  //   polynomial: write scale <x, y> + offset = s p q + c with p = x_c,
  //   q = y_c; expanding (s p q + c)^deg binomially and differentiating each
  //   term p^j q^j n times in p and in q gives, at p = q = x_c,
  //   sum_{j >= n} C(deg, j) s^j c^(deg - j) (j! / (j - n)!)^2 x_c^(2(j - n)),
  //   with c = s (|x|^2 - x_c^2) + offset.
  //   Matern: the same (-1)^n d^2n/dt^2n k at t = 0 from k's expansion in
  //   t there (1 - a^2 t^2 / (2 sigma^2) + ... for p = 1, 1 - a^2 t^2 /
  //   (6 sigma^2) + a^4 t^4 / (24 sigma^4) + ... for p = 2): a^2 / sigma^2 for
  //   p = 1, n = 1; a^2 / (3 sigma^2) and a^4 / sigma^4 for p = 2, n = 1, 2.
  double mixed_derivative_diagonal(const double* x, Index d, int order, Index coord) const {
    return mixed_derivative_diagonal(x, d, order, coord, dot(x, x, d));
  }

  // The same with |x|^2 given (`squared_norm`), so that every coordinate of
  // a point costs O(degree), not O(d) more.
  double mixed_derivative_diagonal(const double* x, Index d, int order, Index coord,
                                   double squared_norm) const {
    check_smoothness(order);
    if (order == 0) return (*this)(x, x, d);
    if (family == KernelFamily::rbf) {
      const double sign = (order % 2 == 0) ? 1.0 : -1.0;
      return sign * hermite_he(2 * order, 0.0) * std::pow(sigma, -2 * order);
    }
    if (family == KernelFamily::matern) {
      const double a2 = matern_a() * matern_a() / (sigma * sigma);
      if (order == 2) return a2 * a2;
      return smoothness == 1 ? a2 : a2 / 3.0;
    }
    if (order > degree) return 0.0;
    const double t = x[coord];
    const double c = scale * (squared_norm - t * t) + offset;
    double sum = 0.0;
    double binom = 1.0;  // C(deg, j), updated as j grows
    for (int j = 0; j <= degree; ++j) {
      if (j > 0) binom *= static_cast<double>(degree - j + 1) / j;
      if (j < order) continue;
      double falling = 1.0;  // j! / (j - n)!
      for (int k = 0; k < order; ++k) falling *= j - k;
      sum += binom * std::pow(scale, j) * std::pow(c, degree - j) * falling * falling *
             std::pow(t, 2 * (j - order));
    }
    return sum;
  }

  // The Gaussian kernel's order-th derivative in one coordinate of the
  // first argument over its value without the constant, at a difference
  // x_c - y_c in that coordinate: (-1 / sigma)^n He_n((x_c - y_c) / sigma).
  double rbf_derivative_factor(int order, double difference) const {
    const double sign = (order % 2 == 0) ? 1.0 : -1.0;
    return sign * std::pow(sigma, -order) * hermite_he(order, difference / sigma);
  }

  static void check_order(int order) {
    if (order < 0 || order > kMaxDerivativeOrder)
      throw std::invalid_argument("derivative order must be a whole number in [0, " +
                                  std::to_string(kMaxDerivativeOrder) + "]");
  }

  // a = sqrt(2 nu) of the Matern kernel.
  double matern_a() const { return std::sqrt(2.0 * smoothness + 1.0); }

 private:
  // (1, 1 + s, 1 + s + s^2 / 3) for p = 0, 1, 2 at s = a r.
  double matern_polynomial(double ar) const {
    if (smoothness == 0) return 1.0;
    if (smoothness == 1) return 1.0 + ar;
    return 1.0 + ar + ar * ar / 3.0;
  }

  // d^n/dx_c^n of the Matern kernel (n <= p) at t_c = x_c - y_c and
  // q = |x - y|^2 / sigma^2: with r = sqrt(q) and k'(r) from the forms above,
  //   n = 1: k'(r) t_c / (sigma^2 r) = -a^2 t_c / sigma^2 exp(-a r) times 1
  //          (p = 1) or (1 + a r) / 3 (p = 2);
  //   n = 2 (p = 2): -a^2 / (3 sigma^2) exp(-a r) (1 + a r - a^2 t_c^2 / sigma^2).
  double matern_derivative(int order, double t, double q) const {
    const double a = matern_a(), ar = a * std::sqrt(q), s2 = sigma * sigma;
    const double decay = std::exp(-ar);
    if (order == 1) {
      const double factor = smoothness == 1 ? 1.0 : (1.0 + ar) / 3.0;
      return -a * a * t / s2 * factor * decay;
    }
    return -a * a / (3.0 * s2) * decay * (1.0 + ar - a * a * t * t / s2);
  }

  // |x - y|^2 / sigma^2 by the direct differences.
  double scaled_square(const double* x, const double* y, Index d) const {
    double sq = 0.0;
    for (Index j = 0; j < d; ++j) {
      const double diff = x[j] - y[j];
      sq += diff * diff;
    }
    return sq / (sigma * sigma);
  }

  static double dot(const double* x, const double* y, Index d) {
    double s = 0.0;
    for (Index j = 0; j < d; ++j) s += x[j] * y[j];
    return s;
  }
};

// Whether the expansion |u - v|^2 = |u|^2 + |v|^2 - 2 <u, v> of points
// moved by a common centre is exact to double precision for a radial
// kernel (the Gaussian and the Matern kernels of nu = 3/2 and 5/2), for
// points whose squared distances from the centre are at most `norm`: the
// exponent's rounding, about 4e-16 h (|u|^2 + |v|^2) (h = 1 / (2
// sigma^2)), must stay below 1e-10, a relative error of the kernel's
// values no solver or prediction resolves.  A width far below the
// inputs' spread (sigma = 1e-8 on standardised data, where the kernel
// matrix is the identity) makes that rounding of order 1, and predict()
// at a training row then differed from fitted().  (The Matern kernels'
// values move by a^2 times their exponent's error; nu = 1/2's exp(-r) has
// slope -1 at r = 0, where a rounding of r^2 would move it by 1e-8.)
inline bool radial_expansion_exact(const Kernel& kernel, double norm) {
  const bool radial = kernel.family == KernelFamily::rbf ||
                      (kernel.family == KernelFamily::matern && kernel.smoothness >= 1);
  if (!radial) return false;
  const double slope =
      kernel.family == KernelFamily::matern ? kernel.matern_a() * kernel.matern_a() : 1.0;
  const double half_inv_sigma2 = 1.0 / (2.0 * kernel.sigma * kernel.sigma);
  return 8e-16 * slope * half_inv_sigma2 * norm <= 1e-10;
}

// sum_ij coefficient(j, i) dk(a_i, z_j) / d log sigma_c for a radial
// kernel, one entry per input coordinate c (a: rows as points, len x d; z:
// m x d; coefficient: m x len).  With each coordinate given a width of its
// own (a division of the coordinate before the kernel), evaluated at the
// common width, dk / d log sigma_c = g (a_c - z_c)^2 / sigma^2, with g =
// Kernel::width_weights() (k itself for the Gaussian kernel; a constant
// added to the kernel does not depend on the width).  This is the
// contraction an evidence gradient in the widths needs; the entries sum to
// the derivative in the one width's log sigma; zeros for the families
// without a width.  O(len m d) either way:
// - where the expansion is exact (radial_expansion_exact(), the points
//   moved by z's mean), as matrix products.  With V_ij = g_ij
//   coefficient(j, i), sum_ij V_ij (a_ic - z_jc)^2 = sum_i a_ic^2 (V 1)_i +
//   sum_j z_jc^2 (V' 1)_j - 2 sum_i a_ic (V z)_ic: the squared distances
//   (for g) by one product a z' and the contraction by one product V z,
//   both on Eigen's blocked kernels;
// - otherwise one point of z at a time vectorised over the rows of a, with
//   the direct differences.
inline VectorXd log_width_contraction(const Kernel& kernel, const ConstMatrixRef& coefficient,
                                      const ConstMatrixRef& a, const ConstMatrixRef& z) {
  VectorXd total = VectorXd::Zero(a.cols());
  if (!kernel.radial()) return total;
  const double inv_s2 = 1.0 / (kernel.sigma * kernel.sigma);
  if (z.rows() > 0 && a.rows() > 0) {
    const Eigen::RowVectorXd centre = z.colwise().mean();
    const MatrixXd ac = a.rowwise() - centre, zc = z.rowwise() - centre;
    const VectorXd a_norms = ac.rowwise().squaredNorm(), z_norms = zc.rowwise().squaredNorm();
    if (radial_expansion_exact(kernel, std::max(a_norms.maxCoeff(), z_norms.maxCoeff()))) {
      MatrixXd v = ac * zc.transpose();  // len x m: the inner products, then V
      v = ((a_norms * Eigen::RowVectorXd::Ones(z.rows()) - 2.0 * v).rowwise() +
           z_norms.transpose()).cwiseMax(0.0) * inv_s2;
      Eigen::Map<Eigen::ArrayXd> flat(v.data(), v.size());
      flat = kernel.width_weights(flat);
      v.array() *= coefficient.transpose().array();
      const MatrixXd vz = v * zc;  // len x d
      total.noalias() = ac.array().square().matrix().transpose() * v.rowwise().sum();
      total.noalias() += zc.array().square().matrix().transpose() * v.colwise().sum().transpose();
      total -= 2.0 * (ac.array() * vz.array()).colwise().sum().matrix().transpose();
      return total * inv_s2;
    }
  }
  Eigen::ArrayXXd diff2(a.rows(), a.cols());
  for (Index j = 0; j < z.rows(); ++j) {
    diff2 = (a.rowwise() - z.row(j)).array().square();
    const Eigen::ArrayXd weight = kernel.width_weights(inv_s2 * diff2.rowwise().sum()) *
                                  coefficient.row(j).transpose().array();
    total.noalias() += diff2.matrix().transpose() * weight.matrix();
  }
  return total * inv_s2;
}

// Evaluates a kernel on a fixed set of points (rows of an n x d matrix), one
// entry, one column or the whole Gram matrix at a time.  Solvers that cannot
// hold the n x n matrix (SMO on large n) use column().  The whole-matrix
// forms (gram, fast_gram, cross, multiply, cross_times) take an interrupt
// callback (interrupt.hpp), polled once per column or tile.
class KernelEvaluator {
 public:
  KernelEvaluator(const Kernel& kernel, const ConstMatrixRef& x)
      : kernel_(kernel), points_(x.transpose()) {
    kernel_.validate();
    if (kernel_.radial()) {
      centre_ = points_.rowwise().mean();
      centred_ = points_.colwise() - centre_;
      squared_norms_ = centred_.colwise().squaredNorm().transpose();
      half_inv_sigma2_ = 1.0 / (2.0 * kernel_.sigma * kernel_.sigma);
      largest_norm_ = squared_norms_.size() > 0 ? squared_norms_.maxCoeff() : 0.0;
    }
  }

  Index size() const { return points_.cols(); }
  Index dimension() const { return points_.rows(); }
  const Kernel& kernel() const { return kernel_; }

  // The points with the given indices, one per row.
  MatrixXd points(const std::vector<Index>& rows) const {
    MatrixXd out(static_cast<Index>(rows.size()), dimension());
    for (Index r = 0; r < out.rows(); ++r) out.row(r) = points_.col(rows[r]).transpose();
    return out;
  }

  double operator()(Index i, Index j) const {
    return kernel_(point(i), point(j), dimension());
  }

  // out[i] = k(x_i, x_j) for all i.
  void column(Index j, double* out) const {
    const double* xj = point(j);
    for (Index i = 0; i < size(); ++i) out[i] = kernel_(point(i), xj, dimension());
  }

  // Fast forms for solvers that evaluate many columns (SMO).  Gaussian
  // columns use the expansion |x_i - x_j|^2 = |x_i|^2 + |x_j|^2 - 2 <x_i, x_j>
  // (clamped at 0) of the points moved by their mean: one matrix-vector
  // product and a vectorised exp, several times faster than point by point.
  // The Matern kernels of nu = 3/2 and 5/2 are smooth in the squared
  // distance and use the same forms; nu = 1/2's exp(-r) has slope -1 at
  // r = 0, where a rounding of r^2 would move it by 1e-8.
  // The price is an absolute rounding error of about 1e-16 (|x_i|^2 +
  // |x_j|^2) in the squared distance, which the move keeps to the data's
  // spread (inputs near 1e8 would otherwise lose every digit of their
  // distances); where even that is visible in the exponent (fast_exact()),
  // and for other kernels, the exact forms are used.  column(), gram() and
  // cross() keep the direct differences.
  void fast_column(Index j, double* out) const {
    if (!fast_exact(largest_norm_)) return column(j, out);
    Eigen::Map<VectorXd> o(out, size());
    o.noalias() = centred_.transpose() * centred_.col(j);
    o = (squared_norms_.array() + (squared_norms_[j] - 2.0 * o.array())).max(0.0) *
        (-half_inv_sigma2_);
    kernel_.values_from_exponents(o);
  }

  // out = K v without forming K, for solvers that need the product once per
  // iteration and cannot cache n columns.  Gaussian kernel: blocks of 128
  // columns, each in tiles of 512 rows (a tile, 512 KB, stays in cache
  // between its product, its exp and its two uses), the exponents by one
  // matrix product of exponent_factors() and a vectorised exp, and every
  // pair (i, j) evaluated once (the tiles below each diagonal block serve
  // both K_ij v_j and K_ji v_i), so n^2 / 2 exponentials.  Other kernels go
  // column by column.
  void multiply(const VectorXd& v, VectorXd& out,
                const std::function<void()>& interrupt = nullptr) const {
    const Index n = size();
    InterruptPoll poll(interrupt);
    out.setZero(n);
    if (!fast_exact(largest_norm_)) {
      VectorXd col(n);
      for (Index j = 0; j < n; ++j) {
        poll();
        if (v[j] == 0.0) continue;
        column(j, col.data());
        out += v[j] * col;
      }
      return;
    }
    // (not on blocks_in_rounds(): a tile adds to the rows of both its row
    // and its column block, so no two blocks of columns are independent)
    constexpr Index block = 128, row_tile = 512;  // row_tile >= block
    MatrixXd left, right;
    exponent_factors(points_, left, right);
    MatrixXd kb;
    for (Index j0 = 0; j0 < n; j0 += block) {
      const Index b = std::min(block, n - j0);
      for (Index i0 = j0; i0 < n; i0 += row_tile) {
        poll();
        // rows i0..i0+r-1 against columns j0..j0+b-1
        const Index r = std::min(row_tile, n - i0);
        kb.noalias() = left.middleCols(i0, r).transpose() * right.middleCols(j0, b);
        kernel_.values_from_exponents(kb);
        out.segment(i0, r).noalias() += kb * v.segment(j0, b);
        // the rows strictly below the diagonal block, mirrored
        const Index skip = (i0 == j0) ? b : 0;
        if (r > skip)
          out.segment(j0, b).noalias() +=
              kb.bottomRows(r - skip).transpose() * v.segment(i0 + skip, r - skip);
      }
    }
  }

  // out[t] = k(x_rows[t], x_j) for t < m, in the fast form above.
  void fast_rows(Index j, const Index* rows, Index m, double* out) const {
    if (!fast_exact(largest_norm_)) {
      for (Index t = 0; t < m; ++t) out[t] = (*this)(rows[t], j);
      return;
    }
    const double* xj = centred_.col(j).data();
    for (Index t = 0; t < m; ++t) {
      const double* xk = centred_.col(rows[t]).data();
      double dot = 0.0;
      for (Index c = 0; c < dimension(); ++c) dot += xk[c] * xj[c];
      out[t] = squared_norms_[rows[t]] + squared_norms_[j] - 2.0 * dot;
    }
    Eigen::Map<Eigen::ArrayXd> o(out, m);
    o = o.max(0.0) * (-half_inv_sigma2_);
    kernel_.values_from_exponents(o);
  }

  // For each point, the first point (lowest index) with exactly the same
  // inputs; itself when it has no earlier twin.  Twins have identical
  // kernel values with every point.  O(n log n) comparisons.
  std::vector<Index> first_twins() const {
    const Index n = size(), d = dimension();
    std::vector<Index> order(static_cast<size_t>(n));
    for (Index i = 0; i < n; ++i) order[static_cast<size_t>(i)] = i;
    const auto less = [&](Index a, Index b) {
      return std::lexicographical_compare(point(a), point(a) + d, point(b), point(b) + d);
    };
    std::stable_sort(order.begin(), order.end(), less);
    std::vector<Index> first(static_cast<size_t>(n));
    for (size_t k = 0; k < order.size(); ++k) {
      const Index i = order[k];
      const bool twin = k > 0 && std::equal(point(i), point(i) + d, point(order[k - 1]));
      first[static_cast<size_t>(i)] = twin ? first[static_cast<size_t>(order[k - 1])] : i;
    }
    return first;
  }

  // The symmetric Gram matrix, each pair evaluated once.
  MatrixXd gram(const std::function<void()>& interrupt = nullptr) const {
    const Index n = size();
    require_gram();
    InterruptPoll poll(interrupt);
    MatrixXd k(n, n);
    for (Index j = 0; j < n; ++j) {
      poll();
      for (Index i = 0; i <= j; ++i) {
        const double v = (*this)(i, j);
        k(i, j) = v;
        k(j, i) = v;
      }
    }
    return k;
  }

  // The Gram matrix in the fast form of multiply() (Gaussian kernel: tiles
  // of exponents by one matrix product, n^2 / 2 exponentials, the upper
  // triangle mirrored); gram() for other kernels.  For solvers that hold K
  // and multiply by it many times.
  MatrixXd fast_gram(const std::function<void()>& interrupt = nullptr) const {
    if (!fast_exact(largest_norm_)) return gram(interrupt);
    const Index n = size();
    require_gram();
    InterruptPoll poll(interrupt);
    constexpr Index block = 128, row_tile = 512;
    MatrixXd left, right;
    exponent_factors(points_, left, right);
    MatrixXd k(n, n);
    // a block of columns writes its columns at and below the diagonal and
    // their mirror, no other block's entries: blocks split between threads,
    // each with a tile of its own, the same numbers on any number of them
    const int threads = threads_for_dense(n);
    std::vector<MatrixXd> tiles(static_cast<std::size_t>(threads));
    blocks_in_rounds(n, block, threads, poll, [&](Index j0, Index b, int slot) {
      MatrixXd& tile = tiles[static_cast<std::size_t>(slot)];
      for (Index i0 = j0; i0 < n; i0 += row_tile) {
        const Index r = std::min(row_tile, n - i0);
        tile.noalias() = left.middleCols(i0, r).transpose() * right.middleCols(j0, b);
        kernel_.values_from_exponents(tile);
        if (i0 == j0) {  // the diagonal square from its lower triangle
          for (Index c = 1; c < b; ++c)
            for (Index a = 0; a < c; ++a) tile(a, c) = tile(c, a);
        }
        k.block(i0, j0, r, b) = tile;
        k.block(j0, i0, b, r) = tile.transpose();  // exactly symmetric
      }
    });
    return k;
  }

  // k(x_i, x_i), or with order > 0 the prior variance of the order-th
  // derivative in coordinate `coord` at each point (mixed_derivative_diagonal).
  VectorXd diagonal(int order = 0, Index coord = 0) const {
    check_derivative(order, coord);
    VectorXd out(size());
    for (Index i = 0; i < size(); ++i)
      out[i] = kernel_.mixed_derivative_diagonal(point(i), dimension(), order, coord);
    return out;
  }

  // The largest diagonal(order, coord) over every point and coordinate, in
  // one pass: O(n d) for a radial kernel's constant and the polynomial
  // kernel's per-point norms, plus O(n d degree) for the latter's sums.
  // (d calls of diagonal() cost O(n d^2), minutes on wide inputs.)
  double largest_diagonal(int order) const {
    kernel_.check_smoothness(order);
    if (size() == 0) return 0.0;
    if (kernel_.radial())  // the same at every point and coordinate
      return kernel_.mixed_derivative_diagonal(point(0), dimension(), order, 0);
    double largest = -std::numeric_limits<double>::infinity();
    for (Index i = 0; i < size(); ++i) {
      const double* x = point(i);
      const double norm = points_.col(i).squaredNorm();
      if (order == 0) {
        largest = std::max(largest, kernel_.mixed_derivative_diagonal(x, dimension(), 0, 0, norm));
        continue;
      }
      for (Index c = 0; c < dimension(); ++c)
        largest = std::max(largest, kernel_.mixed_derivative_diagonal(x, dimension(), order, c, norm));
    }
    return largest;
  }

  // out[i] = sum_j k(z_i, x_j) w_j: predictions of a kernel expansion at
  // new points without the z-by-n cross matrix.  Gaussian kernel: tiles of
  // 256 new points by 256 training points, the exponents by one matrix
  // product of exponent_factors() (rounding of about 1e-16 times the
  // squared distances from the training points' mean, far below what a
  // prediction resolves) and a vectorised exp; training points with
  // w_j = 0 are skipped.  Other kernels point by point.
  VectorXd cross_times(const ConstMatrixRef& z, const ConstVectorRef& w,
                       const std::function<void()>& interrupt = nullptr) const {
    check_cross(z, 0, 0);
    InterruptPoll poll(interrupt);
    if (w.size() != size()) throw std::invalid_argument("one weight per kernel point needed");
    std::vector<Index> used;
    for (Index j = 0; j < size(); ++j)
      if (w[j] != 0.0) used.push_back(j);
    const MatrixXd zt = z.transpose();
    VectorXd out = VectorXd::Zero(z.rows());
    const double z_norm =
        kernel_.radial() && z.rows() > 0
            ? (zt.colwise() - centre_).colwise().squaredNorm().maxCoeff()
            : 0.0;
    if (!fast_exact(std::max(largest_norm_, z_norm))) {
      for (Index i = 0; i < z.rows(); ++i) {
        poll();
        for (Index j : used) out[i] += w[j] * kernel_(zt.col(i).data(), point(j), dimension());
      }
      return out;
    }
    const Index m = static_cast<Index>(used.size()), row_tile = 256, col_tile = 256;
    MatrixXd xu(dimension(), m);
    VectorXd wu(m);
    for (Index t = 0; t < m; ++t) {
      xu.col(t) = points_.col(used[t]);
      wu[t] = w[used[t]];
    }
    MatrixXd left, right, unused;
    exponent_factors(zt, left, unused);
    exponent_factors(xu, unused, right);
    // a tile of new points is its own rows of `out`: tiles split between
    // threads, the same numbers on any number of them
    const double work = static_cast<double>(z.rows()) * static_cast<double>(m) *
                        static_cast<double>(dimension() + 1);
    blocks_in_rounds(z.rows(), row_tile, threads_for_work(work), poll,
                     [&](Index i0, Index r, int) {
      MatrixXd kb;
      for (Index j0 = 0; j0 < m; j0 += col_tile) {
        const Index c = std::min(col_tile, m - j0);
        kb.noalias() = left.middleCols(i0, r).transpose() * right.middleCols(j0, c);
        kernel_.values_from_exponents(kb);
        out.segment(i0, r).noalias() += kb * wu.segment(j0, c);
      }
    });
    return out;
  }

  // Cross matrix K(i, j) = d^order/dz_coord^order k(z_i, x_j) between new
  // points z (rows of an m x d matrix, differentiated) and these points.
  MatrixXd cross(const ConstMatrixRef& z, int order = 0, Index coord = 0,
                 const std::function<void()>& interrupt = nullptr) const {
    check_cross(z, order, coord);
    require_matrices(static_cast<double>(z.rows()), static_cast<double>(size()), 2.0,
                     "a " + std::to_string(z.rows()) + " x " + std::to_string(size()) +
                         " cross-kernel matrix");
    InterruptPoll poll(interrupt);
    const MatrixXd zt = z.transpose();
    MatrixXd k(z.rows(), size());
    for (Index j = 0; j < size(); ++j) {
      poll();
      if (order == 0) {
        // the values themselves (what derivative() returns at order 0),
        // without its checks per entry: a FITC fit whose factor is not held
        // computes its rows here twice a sweep
        for (Index i = 0; i < z.rows(); ++i)
          k(i, j) = kernel_(zt.col(i).data(), point(j), dimension());
        continue;
      }
      for (Index i = 0; i < z.rows(); ++i) {
        k(i, j) = kernel_.derivative(zt.col(i).data(), point(j), dimension(), order, coord);
      }
    }
    return k;
  }

  // cross(z, order, coord) for the Gaussian kernel from `values`, its values
  // at (z_i, x_j) without the constant (cross(z) minus the constant): the
  // derivatives in every coordinate share them, so d coordinates cost
  // O(m n d) instead of the O(m n d^2) of d calls of cross().  The same
  // numbers as cross().
  MatrixXd rbf_cross(const ConstMatrixRef& z, const MatrixXd& values, int order,
                     Index coord) const {
    check_cross(z, order, coord);
    if (kernel_.family != KernelFamily::rbf || values.rows() != z.rows() || values.cols() != size())
      throw std::invalid_argument("rbf_cross() needs the Gaussian kernel's values at (z, x)");
    if (order == 0) return values.array() + kernel_.constant;
    MatrixXd k(z.rows(), size());
    for (Index j = 0; j < size(); ++j) {
      const double xc = point(j)[coord];
      for (Index i = 0; i < z.rows(); ++i)
        k(i, j) = kernel_.rbf_derivative_factor(order, z(i, coord) - xc) * values(i, j);
    }
    return k;
  }

 private:
  const double* point(Index i) const { return points_.col(i).data(); }

  // An n x n kernel matrix is held with about two more of its size (the
  // factor of a dense posterior and its copy for R, or R's copy and the
  // caller's): refused before it is formed when they do not fit.
  void require_gram() const {
    const double n = static_cast<double>(size());
    require_matrices(n, n, 3.0, "a " + std::to_string(size()) + " x " + std::to_string(size()) +
                                    " kernel matrix");
  }

  // Whether the fast radial forms are exact for points whose squared
  // distances from the centre are at most `norm` (radial_expansion_exact()).
  bool fast_exact(double norm) const { return radial_expansion_exact(kernel_, norm); }

  // Radial kernels: the exponent -h |u - v|^2 (h = 1 / (2 sigma^2)) of
  // points u and v (columns of `pts`) as the inner product of
  // left = [2h u; -h |u|^2; 1] and right = [v; 1; -h |v|^2], so that a tile
  // of exponents is one matrix product; the caller clamps it at 0.  The
  // points are first moved by the mean of the kernel's points (distances do
  // not change), since the rounding is about 1e-16 h (|u|^2 + |v|^2): data
  // far from the origin would otherwise lose digits of small distances.
  void exponent_factors(const MatrixXd& pts, MatrixXd& left, MatrixXd& right) const {
    const Index d = pts.rows(), n = pts.cols();
    const double h = half_inv_sigma2_;
    const MatrixXd centred = pts.colwise() - centre_;
    const Eigen::RowVectorXd norms = centred.colwise().squaredNorm();
    left.resize(d + 2, n);
    left.topRows(d) = (2.0 * h) * centred;
    left.row(d) = -h * norms;
    left.row(d + 1).setOnes();
    right.resize(d + 2, n);
    right.topRows(d) = centred;
    right.row(d).setOnes();
    right.row(d + 1) = -h * norms;
  }

  void check_cross(const ConstMatrixRef& z, int order, Index coord) const {
    if (z.cols() != dimension())
      throw std::invalid_argument("new points have " + std::to_string(z.cols()) +
                                  " columns but the kernel's points have " +
                                  std::to_string(dimension()));
    check_derivative(order, coord);
  }

  void check_derivative(int order, Index coord) const {
    kernel_.check_smoothness(order);
    if (coord < 0 || coord >= dimension())
      throw std::invalid_argument("derivative coordinate is out of range");
  }

  Kernel kernel_;
  MatrixXd points_;          // d x n: one point per column
  MatrixXd centred_;         // the points minus their mean, radial kernels only
  VectorXd squared_norms_;   // |x_i - centre|^2, radial kernels only (fast forms)
  VectorXd centre_;          // mean of the points, radial kernels only
  double largest_norm_ = 0.0;  // the largest of squared_norms_
  double half_inv_sigma2_ = 0.0;
};

// Convenience forms: the Gram matrix of x, and the (derivative) cross matrix
// between x (differentiated, rows) and y (columns).
inline MatrixXd kernel_matrix(const Kernel& kernel, const ConstMatrixRef& x,
                              const std::function<void()>& interrupt = nullptr) {
  return KernelEvaluator(kernel, x).gram(interrupt);
}

inline MatrixXd kernel_matrix(const Kernel& kernel, const ConstMatrixRef& x,
                              const ConstMatrixRef& y, int order = 0, Index coord = 0,
                              const std::function<void()>& interrupt = nullptr) {
  return KernelEvaluator(kernel, y).cross(x, order, coord, interrupt);
}

}  // namespace gpsvm

#endif  // GPSVM_KERNELS_HPP
