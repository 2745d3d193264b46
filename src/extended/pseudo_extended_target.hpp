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
// Pseudo-sample blocks (one chain over the k ranks of a GroupComm; pseudo_extended_blocks.hpp):
// member r owns the contiguous pseudo-samples GroupComm::my_block(N) — their x_i and eta_i — and
// the target is an hmc::PartitionedSpace, so HMC/NUTS integrate only those coordinates on r. Each
// member evaluates phi and grad phi at its own pseudo-samples, forms their per-item terms (a_i,
// the terms of the sums outside the log-sum-exp, the eta-gradient factors: a few doubles each),
// and the members allgather those terms — O(N) doubles, never a gradient. Every member then
// assembles the log-sum-exp, the sums and the eta-gradients identically in index order, and
// scales its own x-gradients by their weights. So potential() and potential_and_gradient() are
// COLLECTIVE over the group (every member calls them with the same z, of which only its own
// pseudo-samples are read); they return the full potential, bit-identical for any k, and the
// gradient of the member's pseudo-samples, with zeros for the others' (hmc/partition.hpp). With
// one member (k = 1) that is the whole gradient, by the same arithmetic.
// weighted_view() is collective too for k > 1 (each member evaluates its own pseudo-samples' log
// weights); it reads every pseudo-sample of z, which must therefore be the full state (the chain
// driver gathers it first).
//
// No heap allocation per potential/gradient call: every buffer is sized at construction. Not
// thread-safe (scratch buffers), like every Target.
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "estimators/weight_degeneracy_source.hpp"
#include "extended/pseudo_extended_blocks.hpp"
#include "hmc/partition.hpp"
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

class PseudoExtendedTarget final : public targets::Target,
                                   public hmc::PartitionedSpace,
                                   public estimators::WeightDegeneracySource {
 public:
  // Throws ConfigError for options outside the documented ranges. group = nullptr: this rank
  // alone.
  PseudoExtendedTarget(targets::TargetPtr base, PseudoExtendedOptions options,
                       parallel::GroupCommPtr group = nullptr);

  int dim() const override { return dim_; }
  std::string name() const override { return "pseudo_extended_" + base_->name(); }
  // Collective over the group (see above). Non-finite phi or grad phi at any pseudo-sample gives
  // +inf (a rejected proposal) on every member; the member's gradient entries are then NaN. A
  // base target that throws at any pseudo-sample makes every member throw NumericalError (with
  // one member the exception propagates unchanged).
  double potential(ConstVectorRef z) const override;
  double potential_and_gradient(ConstVectorRef z, VectorRef grad) const override;

  int original_dim() const override { return d_; }
  // N: every evaluation computes phi and its gradient at all N pseudo-samples (each member of the
  // group its own block).
  int target_gradients_per_evaluation() const override { return n_; }
  // samples = the N pseudo-samples (d x N), log_weights = a_i, extra = beta_1..beta_N.
  // Collective for k > 1; z must hold every pseudo-sample (see above).
  bool weighted_view(ConstVectorRef z, targets::WeightedView& out) const override;
  // x_i from draw_original in order i = 1..N; eta_i from beta_init (default: the midpoint).
  void initial_point(const std::function<void(VectorRef)>& draw_original,
                     VectorRef z) const override;

  // potential_and_gradient(z, grad) from the base's values at the pseudo-samples given instead of
  // evaluated: phi[i] = phi(x_i), and grad's x-blocks hold grad phi(x_i) on entry, as the base's
  // potential_and_gradient_batch gives them. The same arithmetic, so the same bits. For moves that
  // change one pseudo-sample (pseudo_extended_refresh.hpp): the others' values are known. One
  // member with sampled beta only (ConfigError otherwise).
  double potential_and_gradient_given(ConstVectorRef z, std::span<const double> phi,
                                      VectorRef grad) const;

  int n_pseudo() const { return n_; }
  bool beta_sampled() const { return !options_.fixed_beta.has_value(); }
  const PseudoExtendedOptions& options() const { return options_; }
  const targets::Target& base() const { return *base_; }
  // beta_i at state z.
  double beta(ConstVectorRef z, int i) const;
  // The eta that maps to beta (lower < beta < upper).
  double eta_of_beta(double beta) const;
  // The pseudo-sample blocks over the group (item i = (x_i, eta_i)).
  const hmc::Partition& partition() const override { return blocks_; }
  // With N >= 2, a tracker of the N weights a_i over beta's sampled range; nullopt for N = 1.
  std::optional<estimators::WeightDegeneracy> make_degeneracy_tracker() const override;
  // Whether beta is sampled (a fixed beta gives every beta_i the same constant).
  bool degeneracy_tracks_betas() const override { return beta_sampled(); }

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
  // Evaluates phi (and grad phi, into grad's block i) at this member's pseudo-samples and their
  // per-item terms, then exchanges the terms: all_ holds every item's record in index order.
  void evaluate_items(const double* z, double* grad) const;
  // The potential (and this member's gradient entries) from all_, identically on every member.
  double assemble(double* grad) const;
  // potential_and_gradient() for the common case, one member with sampled beta: the arithmetic
  // of item_terms/evaluate_items/assemble, operation for operation (so the same bits as the group
  // path, which tests/mpi/pe_blocks_test.sh checks on 1, 2 and 4 ranks), in three passes over the
  // items instead of seven and without the exchanged records. Flat pi and g skip the prior terms.
  // evaluate_base false: phi_ and grad's x-blocks hold the base's values already.
  double serial_sampled(const double* z, double* grad, bool evaluate_base = true) const;
  // The parts of this member's records (`out`) that do not depend on phi_i, computed before the
  // base target is evaluated (evaluate_items completes a_i and the outer term), and their
  // beta_i, 1 - beta_i.
  void item_terms(const double* z, double* out) const;

  targets::TargetPtr base_;
  PseudoExtendedOptions options_;
  parallel::GroupCommPtr group_;
  int n_ = 0, d_ = 0, dim_ = 0;
  double log_n_ = 0.0;
  double log_range_ = 0.0;  // log(hi - lo)
  Temper fixed_;            // fixed-beta mode
  bool flat_priors_ = true; // pi and g flat: no prior terms at all
  bool serial_fast_ = false; // potential_and_gradient takes serial_sampled
  PseudoSampleBlocks blocks_;

  // Scratch, sized at construction. all_: one record per item (stride_ doubles, see the .cpp);
  // mine_: this member's records (groups of several members).
  int stride_ = 0;
  mutable std::vector<double> all_, mine_;
  mutable std::vector<double> w_;           // exp(a_i - max a)
  mutable std::vector<double> e_;           // exp(-|eta_i|) of this member's items
  mutable std::vector<double> phi_;         // phi_i of this member's items (the batch's output)
  mutable std::vector<double> grad_scratch_;  // potential()'s unused gradients (allocated on use)
  mutable std::vector<double> beta_, omb_;  // beta_i, 1 - beta_i of this member's items
  mutable std::vector<double> s_, sm_;      // logistic(eta_i), 1 - logistic(eta_i) (fast path)
  // The fast path's prior terms of item i (non-flat pi or g): log pi - log g, log g, and their
  // derivatives in beta (Temper's fields).
  mutable std::vector<double> log_ratio_, log_g_, dlog_ratio_, dlog_g_;
  mutable int error_item_ = -1;             // the first local item whose target threw
  mutable std::string local_error_;
};

}  // namespace pemc::extended
