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

}  // namespace gpsvm_tests_dense
