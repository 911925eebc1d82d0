// Glue for EP over parts held apart (ep_split.hpp): a part lives in the R
// process that holds its rows (a worker of the future plan) behind an
// external pointer, and answers requests; the driver's run asks every part
// through an R function that sends the request to the workers.
#include "gpsvm_glue.h"

#include <gpsvm/ep_split.hpp>
#include <gpsvm/likelihoods.hpp>

// [[Rcpp::depends(RcppEigen)]]

namespace {

// A part of any model's likelihood, as one type behind the R pointer.
class HeldPart {
 public:
  virtual ~HeldPart() = default;
  virtual gpsvm::PartReply answer(const gpsvm::PartRequest& q) = 0;
  virtual Rcpp::List result() const = 0;
};

template <class Likelihood>
class HeldPartOf final : public HeldPart {
 public:
  template <class... Args>
  explicit HeldPartOf(Args&&... args) : part_(std::forward<Args>(args)...) {}
  gpsvm::PartReply answer(const gpsvm::PartRequest& q) override {
    return part_.answer(q, gpsvm_glue::interrupt_callback());
  }
  Rcpp::List result() const override {
    Rcpp::List out = gpsvm_glue::ep_result_to_r(part_.result());
    const gpsvm::InducingSummary s = part_.summary();
    out["fitted"] = s.fitted;
    out["fitted_variance"] = s.fitted_variance;
    out["inducing_chol"] = part_.basis().chol;
    out["inducing_weights"] = s.weights;
    return out;
  }

 private:
  gpsvm::EpPart<Likelihood> part_;
};

HeldPart* held_part(SEXP part) {
  if (TYPEOF(part) != EXTPTRSXP || R_ExternalPtrAddr(part) == nullptr)
    Rcpp::stop("'part' is no part of a split fit (it lives only in the process that made it)");
  return static_cast<HeldPart*>(R_ExternalPtrAddr(part));
}

void finalize_part(SEXP part) {
  delete static_cast<HeldPart*>(R_ExternalPtrAddr(part));
  R_ClearExternalPtr(part);
}

// What crosses between processes is halved by sending only the lower
// triangles of the m x m matrices, the part either side reads (L_A is lower
// triangular; LowRankPrior::site_sums() fills the lower triangle of A and
// factor_sums() reads no other): column by column, the diagonal included,
// then the sums' last column (G' (t nu)).  The numbers are copied, not
// computed, so the fit is the same to the bit.
Rcpp::NumericVector pack_lower(const Eigen::MatrixXd& a) {
  const Eigen::Index m = a.rows();
  Rcpp::NumericVector out(Rcpp::no_init(m * (m + 1) / 2 + (a.cols() - m) * m));
  double* p = out.begin();
  for (Eigen::Index j = 0; j < m; ++j)
    for (Eigen::Index i = j; i < m; ++i) *p++ = a(i, j);
  for (Eigen::Index j = m; j < a.cols(); ++j)
    for (Eigen::Index i = 0; i < m; ++i) *p++ = a(i, j);
  return out;
}

// pack_lower() undone for an m x (m + extra) matrix, its strict upper
// triangle zero.
Eigen::MatrixXd unpack_lower(SEXP packed, Eigen::Index m, Eigen::Index extra, const char* name) {
  if (TYPEOF(packed) != REALSXP || Rf_xlength(packed) != m * (m + 1) / 2 + extra * m)
    Rcpp::stop("the exchange's '%s' is no packed %d x %d matrix", name, static_cast<int>(m),
               static_cast<int>(m + extra));
  const double* p = REAL(packed);
  Eigen::MatrixXd a = Eigen::MatrixXd::Zero(m, m + extra);
  for (Eigen::Index j = 0; j < m; ++j)
    for (Eigen::Index i = j; i < m; ++i) a(i, j) = *p++;
  for (Eigen::Index j = m; j < m + extra; ++j)
    for (Eigen::Index i = 0; i < m; ++i) a(i, j) = *p++;
  return a;
}

Rcpp::List request_to_r(const gpsvm::PartRequest& q) {
  Rcpp::List out = Rcpp::List::create(
      Rcpp::Named("reset") = q.reset, Rcpp::Named("apply") = q.apply,
      Rcpp::Named("update") = q.update, Rcpp::Named("damping") = q.damping,
      Rcpp::Named("record") = q.record, Rcpp::Named("sums") = q.sums,
      Rcpp::Named("perturbed") = q.perturbed, Rcpp::Named("marginals") = q.marginals,
      Rcpp::Named("finish") = q.finish, Rcpp::Named("undo") = q.undo,
      Rcpp::Named("ahead") = q.ahead, Rcpp::Named("ahead_damping") = q.ahead_damping);
  if (q.apply) out["gamma"] = q.gamma;
  if (q.marginals) {
    out["chol"] = pack_lower(q.chol);
    out["beta"] = q.beta;
  }
  return out;
}

gpsvm::PartRequest request_from_r(const Rcpp::List& r) {
  using gpsvm_glue::element;
  using gpsvm_glue::flag;
  gpsvm::PartRequest q;
  q.reset = flag(element(r, "reset"), "reset");
  q.apply = flag(element(r, "apply"), "apply");
  if (q.apply) q.gamma = gpsvm_glue::vector_element(r, "gamma");
  q.update = flag(element(r, "update"), "update");
  q.damping = gpsvm_glue::number_in(element(r, "damping"), "damping", 0.0, 1.0);
  q.record = flag(element(r, "record"), "record");
  q.sums = flag(element(r, "sums"), "sums");
  q.perturbed = flag(element(r, "perturbed"), "perturbed");
  q.marginals = flag(element(r, "marginals"), "marginals");
  q.finish = flag(element(r, "finish"), "finish");
  q.undo = flag(element(r, "undo"), "undo");
  q.ahead = flag(element(r, "ahead"), "ahead");
  q.ahead_damping = gpsvm_glue::number_in(element(r, "ahead_damping"), "ahead_damping", 0.0, 1.0);
  if (q.marginals) {
    q.beta = gpsvm_glue::vector_element(r, "beta");
    q.chol = unpack_lower(element(r, "chol"), q.beta.size(), 0, "chol");
  }
  return q;
}

Rcpp::List reply_to_r(const gpsvm::PartReply& p) {
  // (sums: m x (m + 1), or none)
  SEXP sums = p.sums.size() > 0 ? Rcpp::wrap(pack_lower(p.sums)) : R_NilValue;
  return Rcpp::List::create(Rcpp::Named("sums") = sums, Rcpp::Named("rank") = p.sums.rows(),
                            Rcpp::Named("log_det") = p.log_det,
                            Rcpp::Named("change") = p.change,
                            Rcpp::Named("evidence") = p.evidence,
                            Rcpp::Named("normal") = p.normal, Rcpp::Named("pinned") = p.pinned,
                            Rcpp::Named("seconds") = p.seconds);
}

gpsvm::PartReply reply_from_r(const Rcpp::List& r) {
  using gpsvm_glue::element;
  gpsvm::PartReply p;
  SEXP sums = element(r, "sums");
  if (!Rf_isNull(sums)) {
    // (bounded so that m (m + 1) / 2 cannot overflow before the length check)
    const Eigen::Index m = static_cast<Eigen::Index>(
        gpsvm_glue::count_in(element(r, "rank"), "rank", 1, 1 << 30));
    p.sums = unpack_lower(sums, m, 1, "sums");
  }
  p.log_det = Rcpp::as<double>(element(r, "log_det"));
  p.change = Rcpp::as<double>(element(r, "change"));
  p.evidence = Rcpp::as<double>(element(r, "evidence"));
  SEXP normal = element(r, "normal");
  if (Rf_isMatrix(normal) && Rf_ncols(normal) > 0)
    p.normal = gpsvm_glue::matrix_element(r, "normal");
  p.pinned = gpsvm_glue::flag(element(r, "pinned"), "pinned");
  p.seconds = Rcpp::as<double>(element(r, "seconds"));
  return p;
}

// The driver's exchange: `ask(request)` returns every part's reply, in the
// parts' order (the R layer sends the request to the workers).
class RExchange final : public gpsvm::PartExchange {
 public:
  RExchange(const Rcpp::Function& ask, std::size_t parts) : ask_(ask), parts_(parts) {}
  std::vector<gpsvm::PartReply> ask(const gpsvm::PartRequest& request) override {
    const Rcpp::List replies = ask_(request_to_r(request));
    if (static_cast<std::size_t>(replies.size()) != parts_)
      throw std::runtime_error("the workers of a split fit did not all reply");
    std::vector<gpsvm::PartReply> out;
    out.reserve(parts_);
    for (R_xlen_t i = 0; i < replies.size(); ++i) out.push_back(reply_from_r(replies[i]));
    return out;
  }

 private:
  Rcpp::Function ask_;
  std::size_t parts_;
};

}  // namespace

// A part of a fit with inducing inputs: rows first + 1, ... of the data, x
// on the fit's scale, y its targets; `model` holds inducing (scaled as x),
// inducing_held_rows and the likelihood's: C and epsilon for mfsvr(), or
// noise and kappa for gpc(method = "tap") (y then -1/+1 labels).
// [[Rcpp::export(rng = false)]]
SEXP cpp_ep_part_new(Rcpp::List kernel, Eigen::Map<Eigen::MatrixXd> x,
                     Eigen::Map<Eigen::VectorXd> y, Rcpp::List model, double first) try {
  using gpsvm_glue::element;
  const gpsvm::Kernel k = gpsvm_glue::kernel_from_r(kernel);
  const Eigen::MatrixXd z = gpsvm_glue::matrix_element(model, "inducing");
  const Eigen::Index held = gpsvm_glue::inducing_held_rows(model);
  const Eigen::Index from =
      static_cast<Eigen::Index>(gpsvm_glue::number_in(Rcpp::wrap(first), "first", 0.0, R_PosInf));
  HeldPart* part = nullptr;
  if (model.containsElementNamed("kappa")) {  // gpc(method = "tap")
    const gpsvm::ProbitFlip lik(
        gpsvm_glue::number_in(element(model, "kappa"), "kappa", 0.0, 0.5), 0.0);
    part = new HeldPartOf<gpsvm::ProbitFlip>(
        k, Eigen::MatrixXd(x), Eigen::VectorXd(y), z,
        gpsvm_glue::number_in(element(model, "noise"), "noise", 0.0, R_PosInf), lik, held, from);
  } else {
    const gpsvm::EpsilonInsensitive lik(
        gpsvm_glue::number_in(element(model, "C"), "C", 0.0, R_PosInf),
        gpsvm_glue::number_in(element(model, "epsilon"), "epsilon", 0.0, R_PosInf));
    part = new HeldPartOf<gpsvm::EpsilonInsensitive>(k, Eigen::MatrixXd(x), Eigen::VectorXd(y),
                                                     z, 0.0, lik, held, from);
  }
  SEXP out = PROTECT(R_MakeExternalPtr(part, R_NilValue, R_NilValue));
  R_RegisterCFinalizerEx(out, finalize_part, TRUE);
  UNPROTECT(1);
  return out;
} catch (const std::bad_alloc&) {
  gpsvm_glue::stop_out_of_memory();
}

// The parts' (a list of them, in their order) reply to a request
// (ep_split.hpp's PartRequest as a list), combined.
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_ep_parts_answer(Rcpp::List parts, Rcpp::List request) try {
  const gpsvm::PartRequest q = request_from_r(request);
  std::vector<gpsvm::PartReply> replies;
  for (R_xlen_t i = 0; i < parts.size(); ++i) replies.push_back(held_part(parts[i])->answer(q));
  return reply_to_r(gpsvm::combine(replies));
} catch (const std::bad_alloc&) {
  gpsvm_glue::stop_out_of_memory();
}

// A part's rows of the fit, as ep_result_to_r() gives them, with fitted
// and fitted_variance.
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_ep_part_result(SEXP part) {
  return held_part(part)->result();
}

// The driver: EP over parts held by `parts` holders (workers) whose
// replies `ask(request)` gathers, in the holders' order,
// m inducing inputs; NULL when the run needs what the split does not offer
// (ep_split.hpp), so that the caller fits in one process.
// [[Rcpp::export(rng = false)]]
SEXP cpp_ep_split_run(Rcpp::Function ask, double parts, double m, Rcpp::List control) try {
  RExchange exchange(ask, static_cast<std::size_t>(
      gpsvm_glue::count_in(Rcpp::wrap(parts), "parts", 1, R_XLEN_T_MAX)));
  gpsvm::EpResult r;
  try {
    r = gpsvm::ep_run_split(exchange,
                            static_cast<Eigen::Index>(gpsvm_glue::count_in(Rcpp::wrap(m), "m", 1,
                                                                           R_XLEN_T_MAX)),
                            gpsvm_glue::ep_control_from_r(control),
                            gpsvm_glue::interrupt_callback());
  } catch (const gpsvm::SplitUnavailable& e) {
    return Rcpp::List::create(Rcpp::Named("unavailable") = std::string(e.what()));
  }
  return Rcpp::List::create(
      Rcpp::Named("chol") = r.chol, Rcpp::Named("low_rank_mean") = r.low_rank_mean,
      Rcpp::Named("log_evidence") = r.log_evidence, Rcpp::Named("log_det_half") = r.log_det_half,
      Rcpp::Named("convergence") = gpsvm_glue::convergence_to_r(r.status));
} catch (const std::bad_alloc&) {
  gpsvm_glue::stop_out_of_memory();
}
