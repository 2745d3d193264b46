#pragma once
// Pseudo-extended MCMC with a reference path (PseudoExtendedConfig.reference): the instrumental
// tempers the target towards a normalised reference density rho = exp(-psi) instead of towards
// the flat density,
//     q(x, beta) ∝ (gamma(x) / zeta)^beta rho(x)^(1 - beta) g(beta),
// the geometric path that parallel tempering with a reference uses (CT paper eq. (4)). rho is a
// mixture of Gaussians over the modes the run's mode search found (extended/mixture_base.hpp) and
// zeta its Laplace estimate of Z, so that gamma / zeta ≈ rho near the modes.
//
// Why. The paper's q ∝ gamma^beta is as heavy-tailed as gamma^beta: on a posterior with a
// Cauchy-like tail (eight schools' tau) a pseudo-sample at small beta wanders where the curvature
// is extreme, the step size collapses (0.008 against NUTS's 0.25) and every trajectory takes
// hundreds of steps. On the reference path every temperature is proper and about as wide as the
// target near its modes (Hölder: ∫ gamma^beta rho^(1-beta) <= (∫ gamma)^beta (∫ rho)^(1-beta)),
// so one step size serves all pseudo-samples, beta_lower = 0 is allowed, and q's beta-marginal
// ∝ Z(beta) g(beta) has Z(beta) ≈ 1 at every beta: g (flat by default) is the temperatures'
// distribution.
//
// The extended target is eq. (8) with this q. With l_i = log(gamma(x_i) / (zeta rho(x_i))) it
// is the paper's formula in l_i (pseudo_extended_target.hpp, whose base is ReferenceRatioTarget)
// plus sum_j log rho(x_j), the factor rho^(1 - beta) gamma^beta = rho (gamma / rho)^beta leaves
// outside the log-sum-exp:
//     U(z) = U_ratio(z) + sum_j psi(x_j),   dU/dx_i = dU_ratio/dx_i + grad psi(x_i).
// The weight of pseudo-sample i (Theorem 2.1 holds for any instrumental) is
// gamma(x_i) pi(beta_i) / q(x_i, beta_i) ∝ exp((1 - beta_i) l_i + log pi(beta_i) - log g(beta_i)):
// the inner target's a_i, so weighted_view and the estimates are the inner target's.
//
// rho's modes stay separated at every temperature, so the sampler adds independence moves from
// rho for each pseudo-sample (pseudo_extended_refresh.hpp), which carry pseudo-samples between them.
//
// One chain on one rank: the sum over every pseudo-sample needs all of them on the rank.
#include <memory>
#include <optional>
#include <vector>

#include "densities/density.hpp"
#include "estimators/weight_degeneracy_source.hpp"
#include "extended/pseudo_extended_target.hpp"
#include "targets/forwarding.hpp"
#include "targets/target.hpp"

namespace pemc::extended {

// The log density ratio log(gamma(x) / (zeta rho(x))) as a target: potential
// phi(x) + log_zeta - psi(x). Everything else is the inner target's (ForwardingTarget).
class ReferenceRatioTarget final : public targets::ForwardingTarget {
 public:
  // psi's dimension must be the inner target's and log_zeta finite (ConfigError otherwise).
  ReferenceRatioTarget(targets::TargetPtr inner, densities::DensityPtr reference, double log_zeta);

  double potential(ConstVectorRef x) const override;
  double potential_and_gradient(ConstVectorRef x, VectorRef grad) const override;
  // The inner truth's moments; no log Z (the ratio has none of its own).
  targets::Truth truth() const override;

 private:
  densities::DensityPtr reference_;
  double log_zeta_;
  mutable Vector grad_psi_;  // scratch
};

// The pseudo-extended target on ReferenceRatioTarget plus sum_j psi(x_j) (see the top).
class ReferencePathPseudoExtended final : public targets::Target,
                                          public estimators::WeightDegeneracySource {
 public:
  // inner: a pseudo-extended target whose base is the ReferenceRatioTarget of the same psi, on
  // one rank (ConfigError otherwise).
  ReferencePathPseudoExtended(std::shared_ptr<const PseudoExtendedTarget> inner,
                              densities::DensityPtr reference);

  int dim() const override { return inner_->dim(); }
  std::string name() const override { return "reference_path_" + inner_->name(); }
  double potential(ConstVectorRef z) const override;
  double potential_and_gradient(ConstVectorRef z, VectorRef grad) const override;
  int original_dim() const override { return inner_->original_dim(); }
  int target_gradients_per_evaluation() const override {
    return inner_->target_gradients_per_evaluation();
  }
  bool weighted_view(ConstVectorRef z, targets::WeightedView& out) const override {
    return inner_->weighted_view(z, out);
  }
  void initial_point(const std::function<void(VectorRef)>& draw_original,
                     VectorRef z) const override {
    inner_->initial_point(draw_original, z);
  }
  std::optional<estimators::WeightDegeneracy> make_degeneracy_tracker() const override {
    return inner_->make_degeneracy_tracker();
  }
  bool degeneracy_tracks_betas() const override { return inner_->degeneracy_tracks_betas(); }

  const PseudoExtendedTarget& inner() const { return *inner_; }
  const densities::Density& reference() const { return *reference_; }

 private:
  friend class SingleSampleMoves;
  // u_inner plus psi at every pseudo-sample, in index order, and (grad non-null) grad psi added
  // to grad's x-blocks: what potential() and potential_and_gradient() add to the inner target's.
  double add_reference(ConstVectorRef z, double u_inner, VectorRef* grad) const;

  std::shared_ptr<const PseudoExtendedTarget> inner_;
  densities::DensityPtr reference_;
  int n_ = 0, d_ = 0;
  mutable Vector grad_psi_;  // scratch
};

// Moves that replace one pseudo-sample at a time (the independence moves of
// pseudo_extended_refresh.hpp) at one evaluation of the target and of rho each, where potential()
// of the changed state evaluates both at all N pseudo-samples: begin(z) evaluates them at z's N
// pseudo-samples once and keeps the values; potential_replacing(i, x) is potential() of z with
// x_i replaced by x, bit for bit, from the kept values and one new evaluation; keep() makes that
// replacement part of z; potential_and_gradient(grad) is the space's potential_and_gradient() at z,
// bit for bit. So N such moves cost 2N evaluations of the target instead of N^2.
class SingleSampleMoves {
 public:
  explicit SingleSampleMoves(std::shared_ptr<const ReferencePathPseudoExtended> space);

  void begin(ConstVectorRef z);
  double potential_replacing(int i, ConstVectorRef x);
  void keep();
  double potential_and_gradient(VectorRef grad) const;
  // The state, with every kept replacement.
  const Vector& state() const { return z_; }
  // psi = -log rho at pseudo-sample i of the state, and at the point last tried.
  double psi(int i) const { return psi_[static_cast<std::size_t>(i)]; }
  double psi_tried() const { return psi_tried_; }

 private:
  // u_inner plus the kept psi (with pseudo-sample `replaced` at psi_tried_ unless -1), in index
  // order: ReferencePathPseudoExtended::potential()'s sum.
  double add_psi(double u_inner, int replaced) const;

  std::shared_ptr<const ReferencePathPseudoExtended> space_;
  const targets::Target& ratio_;  // the inner target's base, log(gamma / (zeta rho))
  int n_ = 0, d_ = 0;
  Vector z_;
  std::vector<double> phi_;  // the ratio target's potential at each pseudo-sample of z_
  Vector grad_phi_;          // its gradients (x-blocks, then unused eta entries)
  std::vector<double> psi_;  // rho's potential() at each pseudo-sample of z_
  // The last replacement tried: pseudo-sample i, its point, potentials and gradient.
  int tried_ = -1;
  Vector x_tried_, grad_tried_;
  double phi_tried_ = 0.0, psi_tried_ = 0.0;
  // Scratch: z_ and phi_ with the replacement, and the gradient buffer the inner target writes.
  Vector z_scratch_, grad_scratch_;
  std::vector<double> phi_scratch_;
};

}  // namespace pemc::extended
