#pragma once
// Pseudo-extended HMC on standardised pseudo-samples (issue 36, item 3): the kernel moves
// (z_1, ..., z_N, eta_1, ..., eta_N) with
//     x_i = m + s(beta_i) D z_i,   s(beta) = beta^(-1/2),   D = diag(scale),
// so that a pseudo-sample has about unit scale at every temperature: near a Gaussian-like mode the
// tempered instrumental gamma^beta has standard deviations D / sqrt(beta), which the map removes.
// Without it one step size serves pseudo-samples whose scales differ by sqrt(beta_upper /
// beta_lower) (30x for the default range): the step size is set by the narrowest (beta near 1),
// and trajectories at small beta need ~30x more steps, or the adaptation collapses the step
// size (NUTS then saturates its tree depth).
//
// The map is a change of variables on the extended space, so the extended target in (z, eta) is
// the pseudo-extended target times the Jacobian |dx/dz| = prod_i s(beta_i)^d |D|:
//     U_z(z, eta) = U(x(z, eta), eta) + (d/2) sum_i log beta_i   (+ a constant),
// with gradients (g_i = dU/dx_i, beta'_i = d beta_i / d eta_i, dx_i/deta_i = -(beta'_i / 2 beta_i)
// (x_i - m)):
//     dU_z/dz_i   = s(beta_i) D g_i,
//     dU_z/deta_i = dU/deta_i - (beta'_i / 2 beta_i) g_i'(x_i - m) + (d/2) beta'_i / beta_i.
// The x-marginal, the weights of Theorem 2.1 and every estimate are those of the pseudo-extended
// target (weighted_view maps z back to x first). The centre m and scale D come from the run's
// mode search (the modes' mean and within-mode standard deviations; config/samplers/
// pseudo_extended.cpp).
//
// One chain on one rank: the wrapper needs every eta of the state (the Jacobian sums over all
// pseudo-samples), which a chain spread over ranks does not keep up to date on every member.
#include <memory>
#include <optional>

#include "estimators/weight_degeneracy_source.hpp"
#include "extended/pseudo_extended_target.hpp"
#include "targets/target.hpp"

namespace pemc::extended {

class StandardisedPseudoExtended final : public targets::Target,
                                         public estimators::WeightDegeneracySource {
 public:
  // centre and scale: the base target's dimension each, scale > 0 (ConfigError otherwise); the
  // inner target must sample beta on one rank (ConfigError otherwise).
  StandardisedPseudoExtended(std::shared_ptr<const PseudoExtendedTarget> inner, Vector centre,
                             Vector scale);

  int dim() const override { return inner_->dim(); }
  std::string name() const override { return "standardised_" + inner_->name(); }
  double potential(ConstVectorRef z) const override;
  double potential_and_gradient(ConstVectorRef z, VectorRef grad) const override;
  int original_dim() const override { return inner_->original_dim(); }
  int target_gradients_per_evaluation() const override {
    return inner_->target_gradients_per_evaluation();
  }
  bool weighted_view(ConstVectorRef z, targets::WeightedView& out) const override;
  void initial_point(const std::function<void(VectorRef)>& draw_original,
                     VectorRef z) const override;

  std::optional<estimators::WeightDegeneracy> make_degeneracy_tracker() const override {
    return inner_->make_degeneracy_tracker();
  }
  bool degeneracy_tracks_betas() const override { return inner_->degeneracy_tracks_betas(); }

  // The pseudo-extended state (x, eta) of a standardised one (z, eta), and back.
  void to_x(ConstVectorRef z, VectorRef x) const;
  void to_z(ConstVectorRef x, VectorRef z) const;
  const PseudoExtendedTarget& inner() const { return *inner_; }

 private:
  // beta_i and d beta_i / d eta_i at eta.
  void temperatures(ConstVectorRef z) const;

  std::shared_ptr<const PseudoExtendedTarget> inner_;
  Vector centre_, scale_;
  int n_ = 0, d_ = 0;
  mutable Vector x_, gx_;  // scratch: the pseudo-extended state and its gradient
  mutable std::vector<double> beta_, dbeta_;
};

}  // namespace pemc::extended
