#pragma once
// The pseudo-extended target with the tempered instrumental distribution (Nemeth et al. 2019,
// eq. (2), (7), (8)), as a Target any kernel can run on.
//
// State z = (x_1, ..., x_N, eta_1, ..., eta_N): the N pseudo-samples x_i (d = the base target's
// dimension each, stored consecutively), then the N logit-scale temperatures
//   beta_i = lo + (hi - lo) * logistic(eta_i),   d beta_i / d eta_i = (hi - lo) s_i (1 - s_i).
// With a fixed beta the state is (x_1, ..., x_N) only.
//
// With phi = the base potential (log gamma = -phi), l_i = -phi(x_i) and
//   a_i = (1 - beta_i) l_i + log pi(beta_i) - log g(beta_i)                       (eq. 8, the sum)
// the extended log density is
//   log pi^N(z) = logsumexp_i(a_i) - log N + sum_j [beta_j l_j + log g(beta_j) + log J_j]
// (log J_j = log(hi - lo) + log s_j + log(1 - s_j), the logit Jacobian; absent for fixed beta) and
// the potential is U(z) = -log pi^N(z). Gradients (w = softmax(a)):
//   dU/dx_i   = (beta_i + w_i (1 - beta_i)) grad phi(x_i)
//   dU/deta_i = -[(w_i (phi_i + r'(beta_i)) - phi_i + (log g)'(beta_i)) dbeta_i/deta_i
//                 + (1 - 2 s_i)],   r = log pi - log g.
// Post-hoc weights (Theorem 2.1): the weight of pseudo-sample i is gamma(x_i) pi(beta_i) /
// q(x_i, beta_i) ∝ exp(a_i); weighted_view reports a_i.
//
// Pseudo-sample blocks (one chain over the k ranks of a GroupComm): each member evaluates phi and
// grad phi at its contiguous block of pseudo-samples, the blocks are allgathered into global index
// order, and every member then assembles the log-sum-exp, the sums and the gradient identically in
// index order. potential() and potential_and_gradient() are therefore COLLECTIVE over the group
// (every member must call them with the same z) and return bit-identical results for any k.
// weighted_view() is NOT collective: it evaluates the N base potentials locally, so a group's
// leader alone may call it.
//
// No heap allocation per potential/gradient call: every buffer is sized at construction. Not
// thread-safe (scratch buffers), like every Target.
#include <optional>
#include <string>
#include <vector>

#include "parallel/group_comm.hpp"
#include "targets/target.hpp"

namespace pemc::extended {

// Beta(a, b) shape of a density on beta known up to a constant: beta^(a-1) (1-beta)^(b-1).
struct BetaShape {
  double a = 1.0;
  double b = 1.0;
  bool flat() const { return a == 1.0 && b == 1.0; }
};

struct PseudoExtendedOptions {
  int n_pseudo = 2;           // N >= 1
  double beta_lower = 0.001;  // 0 <= lower < upper <= 1 (sampled beta)
  double beta_upper = 1.0;
  std::optional<double> fixed_beta;  // in [0, 1]: beta not sampled
  std::optional<double> beta_init;   // in (lower, upper); nullopt = the midpoint (eta = 0)
  BetaShape beta_target;             // pi(beta)
  BetaShape beta_instrumental;       // g(beta)
};

class PseudoExtendedTarget final : public targets::Target {
 public:
  // Throws ConfigError for options outside the documented ranges. group = nullptr: this rank
  // alone.
  PseudoExtendedTarget(targets::TargetPtr base, PseudoExtendedOptions options,
                       parallel::GroupCommPtr group = nullptr);

  int dim() const override { return dim_; }
  std::string name() const override { return "pseudo_extended_" + base_->name(); }
  // Collective over the group (see above). Non-finite phi or grad phi at any pseudo-sample gives
  // +inf (a rejected proposal); the gradient is then NaN.
  double potential(ConstVectorRef z) const override;
  double potential_and_gradient(ConstVectorRef z, VectorRef grad) const override;

  int original_dim() const override { return d_; }
  // samples = the N pseudo-samples (d x N), log_weights = a_i, extra = beta_1..beta_N. Local.
  bool weighted_view(ConstVectorRef z, targets::WeightedView& out) const override;
  // x_i from draw_original in order i = 1..N; eta_i from beta_init (default: the midpoint).
  void initial_point(const std::function<void(VectorRef)>& draw_original,
                     VectorRef z) const override;

  int n_pseudo() const { return n_; }
  bool beta_sampled() const { return !options_.fixed_beta.has_value(); }
  const PseudoExtendedOptions& options() const { return options_; }
  const targets::Target& base() const { return *base_; }
  // beta_i at state z.
  double beta(ConstVectorRef z, int i) const;
  // The eta that maps to beta (lower < beta < upper).
  double eta_of_beta(double beta) const;

 private:
  // beta_i, 1 - beta_i and the prior terms of pseudo-sample i (see the header comment).
  struct Temper {
    double beta = 0.0, one_minus_beta = 0.0;
    double log_ratio = 0.0;   // log pi(beta) - log g(beta)
    double dlog_ratio = 0.0;  // its derivative in beta
    double log_g = 0.0, dlog_g = 0.0;
  };
  // e = exp(-|eta|), computed by the caller.
  Temper temper(double eta, double e) const;
  // Evaluates phi (and grad phi) at every pseudo-sample into all_ (global index order): the local
  // block, then the allgather when the group has several members.
  void evaluate_items(ConstVectorRef z, bool with_grad) const;
  double assemble(ConstVectorRef z, double* grad) const;

  targets::TargetPtr base_;
  PseudoExtendedOptions options_;
  parallel::GroupCommPtr group_;
  int n_ = 0, d_ = 0, dim_ = 0;
  double log_n_ = 0.0;
  double log_range_ = 0.0;  // log(hi - lo)
  Temper fixed_;            // fixed-beta mode

  // Scratch, sized at construction. Item i holds [phi_i, status_i, grad phi_i (d)].
  int stride_grad_ = 0;
  mutable std::vector<double> all_;   // n_ * stride
  mutable std::vector<double> mine_;  // the local block (groups of several members)
  bool flat_priors_ = true;           // pi and g flat: no prior terms at all
  mutable std::vector<double> a_;     // a_i, then exp(a_i - max a)
  // Per item, for the gradient: beta_i, 1 - beta_i, d beta_i / d eta_i, d log J_i / d eta_i and
  // (non-flat priors only) (log pi - log g)'(beta_i), (log g)'(beta_i).
  mutable std::vector<double> beta_, omb_, dbeta_, djac_, dlog_ratio_, dlog_g_;
  mutable std::string local_error_;
};

}  // namespace pemc::extended
