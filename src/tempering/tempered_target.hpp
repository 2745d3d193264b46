#pragma once
// One point of the tempering path (CT paper eq. (4)):
//     pi_beta(x) ∝ exp(-beta phi(x) - (1 - beta) psi(x)) = exp(-psi(x) - beta V(x)),  V = phi - psi,
// with phi the target's potential and psi a normalised reference (reference.hpp). Without a
// reference psi = 0 and this is the power path exp(-beta phi) (then beta must be > 0).
//
// Everything the tempering samplers need about a point is its PathPoint: phi, psi and their
// gradients. From it the potential and gradient at *any* beta follow without evaluating the target
// again, which is what lets replicas exchange temperatures (not states) and ST change its level
// for free. The samplers' local kernels run on a TemperedTarget, which remembers the last point
// where it evaluated phi with a gradient: after an accepted HMC move the new state is exactly that
// point, so its PathPoint costs nothing.
#include <memory>
#include <optional>

#include "kernels/kernel.hpp"
#include "targets/target.hpp"
#include "tempering/reference.hpp"

namespace pemc::tempering {

using ReferencePtr = std::shared_ptr<const Reference>;  // nullptr: power path

struct PathPoint {
  Vector x;
  double phi = 0.0;
  Vector grad_phi;
  double psi = 0.0;  // 0 on the power path
  Vector grad_psi;   // zeros on the power path

  double v() const { return phi - psi; }
  // -log pi_beta(x) up to the path's normaliser: beta phi + (1 - beta) psi.
  double potential(double beta) const { return beta * phi + (1.0 - beta) * psi; }
  // The ChainState a local kernel at beta works on; on the power path (with_reference false:
  // stabilised PT's fixed leg) beta phi alone, psi kept for when the point moves to the other leg.
  void to_chain_state(double beta, kernels::ChainState& state, bool with_reference = true) const;
};

class TemperedTarget final : public targets::Target {
 public:
  // with_reference false: the power path exp(-beta phi) even though `reference` is given (stabilised
  // PT's fixed leg); path_point still fills psi from the reference.
  TemperedTarget(targets::TargetPtr target, ReferencePtr reference, double beta,
                 bool with_reference = true);

  int dim() const override { return target_->dim(); }
  std::string name() const override { return "tempered"; }
  double potential(ConstVectorRef x) const override;
  double potential_and_gradient(ConstVectorRef x, VectorRef grad) const override;

  double beta() const { return beta_; }
  void set_beta(double beta) { beta_ = beta; }
  const targets::TargetPtr& target() const { return target_; }
  const ReferencePtr& reference() const { return reference_; }

  // Fills p at x (p.x = x). Reuses the last gradient evaluation of potential_and_gradient when it
  // was at exactly this x (bitwise); otherwise evaluates phi and its gradient once. Returns the
  // number of target gradient evaluations spent (0 or 1). A NaN phi becomes +inf.
  int path_point(ConstVectorRef x, PathPoint& p) const;

 private:
  targets::TargetPtr target_;
  ReferencePtr reference_;
  double beta_;
  bool with_reference_ = true;
  // Cache of the last potential_and_gradient call.
  mutable bool cache_valid_ = false;
  mutable Vector cache_x_, cache_grad_phi_, scratch_;
  mutable double cache_phi_ = 0.0;
};

// Fills p at x by evaluating phi (one gradient evaluation) and psi.
void evaluate_path_point(const targets::Target& target, const Reference* reference,
                         ConstVectorRef x, PathPoint& p);

}  // namespace pemc::tempering
