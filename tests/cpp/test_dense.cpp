// The blocked dense algebra (dense.hpp) against Eigen's own: A'A, the
// Cholesky factor, its log-determinant and the inverse of the factor, on
// sizes that end inside a block, on a block's edge and past it.
#include <cmath>
#include <gpsvm/dense.hpp>
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

}  // namespace gpsvm_tests_dense
