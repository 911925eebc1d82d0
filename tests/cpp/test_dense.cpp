// The blocked dense algebra (dense.hpp) against Eigen's own: A'A, the
// Cholesky factor, its log-determinant and the inverse of the factor, on
// sizes that end inside a block, on a block's edge and past it.
#include <cmath>
#include <gpsvm/dense.hpp>
#include <stdexcept>
#include <string>

#include "check.hpp"
#include "reference.hpp"

namespace gpsvm_tests_dense {

using Eigen::MatrixXd;

TEST_CASE("dense: crossprod, Cholesky factor, log-determinant and L^-1 against Eigen's") {
  ref::Random rng(41);
  for (Eigen::Index m : {1, 37, 128, 300}) {
    const std::string note = "m = " + std::to_string(m);
    const MatrixXd a = rng.uniform_matrix(m + 20, m, -1.0, 1.0);
    const MatrixXd ata = a.transpose() * a;
    const MatrixXd cp = gpsvm::crossprod(a);
    CHECK_NEAR_MSG((cp - ata).cwiseAbs().maxCoeff(), 0.0, 1e-13 * ata.cwiseAbs().maxCoeff(), note);
    CHECK_MSG((cp - cp.transpose()).cwiseAbs().maxCoeff() == 0.0, note + ": symmetric");
    // weights of both signs (the joint classifier's R diag(c) R)
    const Eigen::VectorXd w = rng.uniform_matrix(m + 20, 1, -2.0, 1.0).col(0);
    const MatrixXd atwa = a.transpose() * w.asDiagonal() * a;
    const MatrixXd wcp = gpsvm::crossprod(a, w);
    const double scale = (a.cwiseAbs().transpose() * w.cwiseAbs().asDiagonal() * a.cwiseAbs()).maxCoeff();
    CHECK_NEAR_MSG((wcp - atwa).cwiseAbs().maxCoeff(), 0.0, 1e-13 * scale, note + ": weighted");
    CHECK_MSG((wcp - wcp.transpose()).cwiseAbs().maxCoeff() == 0.0, note + ": weighted, symmetric");
    CHECK_THROWS(gpsvm::crossprod(a, Eigen::VectorXd::Ones(m + 19)), std::invalid_argument);
    MatrixXd spd = ata;
    spd.diagonal().array() += 0.1;  // well away from singular
    const Eigen::LLT<MatrixXd> llt(spd);
    MatrixXd l = spd;
    CHECK_MSG(gpsvm::cholesky_in_place(l), note);
    const MatrixXd lower = l.triangularView<Eigen::Lower>();
    const MatrixXd eigen_l = llt.matrixL();
    CHECK_NEAR_MSG((lower - eigen_l).cwiseAbs().maxCoeff(), 0.0, 1e-11 * eigen_l.cwiseAbs().maxCoeff(),
                   note + ": factor");
    CHECK_NEAR_MSG((lower * lower.transpose() - spd).cwiseAbs().maxCoeff(), 0.0,
                   1e-12 * spd.cwiseAbs().maxCoeff(), note + ": L L' = A");
    CHECK_MSG((l.triangularView<Eigen::StrictlyUpper>().toDenseMatrix() -
               spd.triangularView<Eigen::StrictlyUpper>().toDenseMatrix())
                      .cwiseAbs()
                      .maxCoeff() == 0.0,
              note + ": the upper triangle is left alone");
    CHECK_NEAR_MSG(gpsvm::cholesky_logdet(l), 2.0 * eigen_l.diagonal().array().log().sum(),
                   1e-10 * (1.0 + std::fabs(gpsvm::cholesky_logdet(l))), note + ": log|A|");
    const MatrixXd linv = gpsvm::lower_inverse(l);
    CHECK_NEAR_MSG((linv * lower - MatrixXd::Identity(m, m)).cwiseAbs().maxCoeff(), 0.0, 1e-10,
                   note + ": L^-1 L = I");
    CHECK_MSG(linv.triangularView<Eigen::StrictlyUpper>().toDenseMatrix().cwiseAbs().maxCoeff() == 0.0,
              note + ": L^-1 is lower triangular");
  }
  // not positive definite: in the first block and past it
  for (Eigen::Index m : {5, 200}) {
    MatrixXd bad = MatrixXd::Identity(m, m);
    bad(m - 1, m - 1) = -1.0;
    CHECK_MSG(!gpsvm::cholesky_in_place(bad), "m = " + std::to_string(m) + ": refused");
  }
}

TEST_CASE("dense: the jittered Cholesky factor of singular and ill-conditioned kernel matrices") {
  // positive definite: no jitter, Eigen's factor
  ref::Random rng(43);
  const MatrixXd a = rng.uniform_matrix(30, 12, -1.0, 1.0);
  MatrixXd spd = a.transpose() * a;
  spd.diagonal().array() += 0.5;
  const gpsvm::JitteredFactor f = gpsvm::jittered_cholesky(spd, 1e-2, 1e-7, "K");
  CHECK(f.jitter == 0.0);
  const MatrixXd eigen_l = Eigen::LLT<MatrixXd>(spd).matrixL();
  CHECK_NEAR((f.lower - eigen_l).cwiseAbs().maxCoeff(), 0.0, 1e-12);
  CHECK(f.lower.triangularView<Eigen::StrictlyUpper>().toDenseMatrix().cwiseAbs().maxCoeff() == 0.0);
  // a duplicated point (two equal rows and columns): singular, factored
  // by rounding alone into a pivot of order 1e-8 or refused; with the
  // diagonal asked to span at most 1e7, the smallest jitter of the
  // sequence 1e-12, 1e-11, ... (times the mean diagonal) that gives one,
  // and the factor reproduces K + jitter I
  MatrixXd twin(3, 3);
  twin << 2.0, 2.0, 0.5, 2.0, 2.0, 0.5, 0.5, 0.5, 1.0;
  const gpsvm::JitteredFactor g = gpsvm::jittered_cholesky(twin, 1e-2, 1e-7, "K");
  CHECK(g.jitter > 0.0);
  const double mean_diagonal = twin.diagonal().mean();
  const double relative = g.jitter / mean_diagonal;
  CHECK_NEAR(std::log10(relative), std::round(std::log10(relative)), 1e-9);
  MatrixXd shifted = twin;
  shifted.diagonal().array() += g.jitter;
  CHECK_NEAR((g.lower * g.lower.transpose() - shifted).cwiseAbs().maxCoeff(), 0.0, 1e-12);
  // without a jitter no usable factor, and the first step was enough
  const Eigen::LLT<MatrixXd> plain(twin);
  CHECK(plain.info() != Eigen::Success ||
        plain.matrixLLT().diagonal().minCoeff() < 1e-7 * plain.matrixLLT().diagonal().maxCoeff());
  CHECK_NEAR(relative, 1e-12, 1e-20);
  // asked for a diagonal spanning at most 1e7: a factor of condition ~1e16
  // is jittered until it does
  MatrixXd near = twin;
  near(1, 1) += 1e-14;
  const gpsvm::JitteredFactor h = gpsvm::jittered_cholesky(near, 1e-2, 1e-7, "K");
  const Eigen::VectorXd d = h.lower.diagonal();
  CHECK(d.minCoeff() >= 1e-7 * d.maxCoeff());
  // a zero matrix (all-zero inputs under a linear kernel) does not loop:
  // the jitter is relative to 1 then
  const gpsvm::JitteredFactor z = gpsvm::jittered_cholesky(MatrixXd::Zero(4, 4), 1e-2, 0.0, "K");
  CHECK_NEAR(z.jitter, 1e-12, 1e-24);
  // indefinite beyond the largest jitter: refused, naming the matrix
  MatrixXd indefinite = MatrixXd::Identity(3, 3);
  indefinite(2, 2) = -1.0;
  CHECK_THROWS(gpsvm::jittered_cholesky(indefinite, 1e-2, 0.0, "K"), std::runtime_error);
  // no points: an empty factor
  CHECK(gpsvm::jittered_cholesky(MatrixXd(0, 0), 1e-2, 0.0, "K").lower.size() == 0);
}

// A^-1's diagonal and tr(A^-1 C) from blocks of columns of L^-1 (never L^-1
// whole) against a reference in long double from A itself (Eigen's LLT and a
// full solve), and against the route through the whole inverse
// (inverse_from_cholesky()): on well-conditioned matrices of sizes inside,
// at the edge of and past a block of 64 columns, and on a Gaussian kernel
// matrix of close points with a small jitter (condition number about 1e9),
// where the blocked route must be no less accurate than the whole inverse.
TEST_CASE("dense: the inverse's diagonal and tr(A^-1 C) by blocks against the whole inverse") {
  using LongMatrix = Eigen::Matrix<long double, Eigen::Dynamic, Eigen::Dynamic>;
  ref::Random rng(47);
  const auto check = [](const MatrixXd& a, const MatrixXd& c, double tol, const std::string& note) {
    const Eigen::Index m = a.rows();
    MatrixXd la = a, lc = c;  // factors in the lower triangles, the upper left as they were
    CHECK_MSG(gpsvm::cholesky_in_place(la) && gpsvm::cholesky_in_place(lc), note + ": factors");
    const MatrixXd norms = gpsvm::inverse_column_norms(la, &lc);
    const Eigen::VectorXd diagonal_only = gpsvm::inverse_diagonal_from_cholesky(la);
    const LongMatrix inverse = a.cast<long double>().llt().solve(LongMatrix::Identity(m, m));
    const MatrixXd want_diag = inverse.diagonal().cast<double>();
    const double want_trace = static_cast<double>((inverse * c.cast<long double>()).trace());
    const MatrixXd whole = gpsvm::inverse_from_cholesky(la);
    const double whole_trace = (whole.array() * c.array()).sum();
    const double err_diag = ((norms.col(0) - want_diag).array() / want_diag.array()).abs().maxCoeff();
    const double err_only =
        ((diagonal_only - want_diag).array() / want_diag.array()).abs().maxCoeff();
    const double err_whole =
        ((whole.diagonal() - want_diag).array() / want_diag.array()).abs().maxCoeff();
    const double err_trace = std::fabs(norms.col(1).sum() - want_trace) / std::fabs(want_trace);
    const double err_whole_trace = std::fabs(whole_trace - want_trace) / std::fabs(want_trace);
    CHECK_NEAR_MSG(err_diag, 0.0, tol, note + ": diagonal");
    CHECK_NEAR_MSG(err_only, 0.0, tol, note + ": diagonal alone");
    CHECK_NEAR_MSG(err_trace, 0.0, tol, note + ": trace");
    CHECK_MSG(err_diag <= 10.0 * err_whole + 1e-14,
              note + ": diagonal " + std::to_string(err_diag) + ", whole inverse's " +
                  std::to_string(err_whole));
    CHECK_MSG(err_trace <= 10.0 * err_whole_trace + 1e-14,
              note + ": trace " + std::to_string(err_trace) + ", whole inverse's " +
                  std::to_string(err_whole_trace));
  };
  for (Eigen::Index m : {1, 37, 64, 65, 200}) {
    const MatrixXd f = rng.uniform_matrix(m + 10, m, -1.0, 1.0);
    const MatrixXd g = rng.uniform_matrix(m + 10, m, -1.0, 1.0);
    MatrixXd a = f.transpose() * f, c = g.transpose() * g;
    a.diagonal().array() += 0.1;
    c.diagonal().array() += 0.1;
    check(a, c, 1e-12, "m = " + std::to_string(m));
  }
  // ill-conditioned: a Gaussian kernel matrix of 150 close points, and as C
  // a kernel matrix of wider width
  const Eigen::Index m = 150;
  const MatrixXd x = rng.uniform_matrix(m, 1, 0.0, 3.0);
  MatrixXd k(m, m), c(m, m);
  for (Eigen::Index j = 0; j < m; ++j)
    for (Eigen::Index i = 0; i < m; ++i) {
      const double d2 = (x(i, 0) - x(j, 0)) * (x(i, 0) - x(j, 0));
      k(i, j) = std::exp(-d2 / (2.0 * 0.5 * 0.5));
      c(i, j) = std::exp(-d2 / (2.0 * 2.0 * 2.0));
    }
  k.diagonal().array() += 1e-8;
  c.diagonal().array() += 1e-3;
  const Eigen::VectorXd ev = Eigen::SelfAdjointEigenSolver<MatrixXd>(k).eigenvalues();
  CHECK_MSG(ev.maxCoeff() / ev.minCoeff() > 1e8, "the kernel matrix is ill-conditioned");
  check(k, c, 1e-5, "ill-conditioned");
}

}  // namespace gpsvm_tests_dense
