#include "extended/pseudo_extended_reference.hpp"

#include <cmath>
#include <limits>

#include "core/error.hpp"

namespace pemc::extended {

ReferenceRatioTarget::ReferenceRatioTarget(targets::TargetPtr inner,
                                           densities::DensityPtr reference, double log_zeta)
    : ForwardingTarget(std::move(inner), "reference ratio target"),
      reference_(std::move(reference)),
      log_zeta_(log_zeta) {
  if (!reference_) throw ConfigError("reference ratio target: no reference");
  if (reference_->dim() != inner_->dim())
    throw ConfigError("reference ratio target: the reference has dimension " +
                      std::to_string(reference_->dim()) + ", the target " +
                      std::to_string(inner_->dim()));
  if (!std::isfinite(log_zeta_))
    throw ConfigError("reference ratio target: log zeta must be finite, got " +
                      std::to_string(log_zeta_));
  grad_psi_.resize(inner_->dim());
}

double ReferenceRatioTarget::potential(ConstVectorRef x) const {
  return inner_->potential(x) + log_zeta_ - reference_->potential(x);
}

double ReferenceRatioTarget::potential_and_gradient(ConstVectorRef x, VectorRef grad) const {
  const double phi = inner_->potential_and_gradient(x, grad);
  const double psi = reference_->potential_and_gradient(x, grad_psi_);
  grad -= grad_psi_;
  return phi + log_zeta_ - psi;
}

targets::Truth ReferenceRatioTarget::truth() const {
  targets::Truth t = inner_->truth();
  t.log_z.reset();
  return t;
}

ReferencePathPseudoExtended::ReferencePathPseudoExtended(
    std::shared_ptr<const PseudoExtendedTarget> inner, densities::DensityPtr reference)
    : inner_(std::move(inner)), reference_(std::move(reference)) {
  if (!inner_ || !reference_)
    throw ConfigError("reference-path pseudo-extended target: no pseudo-extended target or reference");
  if (inner_->partition().group_size() > 1)
    throw ConfigError("reference-path pseudo-extended target: one chain on one rank only");
  n_ = inner_->n_pseudo();
  d_ = inner_->original_dim();
  if (reference_->dim() != d_)
    throw ConfigError("reference-path pseudo-extended target: the reference has dimension " +
                      std::to_string(reference_->dim()) + ", the target " + std::to_string(d_));
  if (!dynamic_cast<const ReferenceRatioTarget*>(&inner_->base()))
    throw ConfigError("reference-path pseudo-extended target: the pseudo-extended target's base "
                      "must be the ratio to the same reference");
  grad_psi_.resize(d_);
}

double ReferencePathPseudoExtended::potential(ConstVectorRef z) const {
  double u = inner_->potential(z);
  for (int i = 0; i < n_; ++i) u += reference_->potential(z.segment(i * d_, d_));
  return u;
}

double ReferencePathPseudoExtended::potential_and_gradient(ConstVectorRef z, VectorRef grad) const {
  double u = inner_->potential_and_gradient(z, grad);
  for (int i = 0; i < n_; ++i) {
    u += reference_->potential_and_gradient(z.segment(i * d_, d_), grad_psi_);
    grad.segment(i * d_, d_) += grad_psi_;
  }
  return u;
}

}  // namespace pemc::extended
