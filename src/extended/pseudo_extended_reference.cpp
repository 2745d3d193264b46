#include "extended/pseudo_extended_reference.hpp"

#include <cmath>
#include <limits>
#include <span>

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

double ReferencePathPseudoExtended::add_reference(ConstVectorRef z, double u_inner,
                                                  VectorRef* grad) const {
  double u = u_inner;
  for (int i = 0; i < n_; ++i) {
    if (!grad) {
      u += reference_->potential(z.segment(i * d_, d_));
      continue;
    }
    u += reference_->potential_and_gradient(z.segment(i * d_, d_), grad_psi_);
    grad->segment(i * d_, d_) += grad_psi_;
  }
  return u;
}

double ReferencePathPseudoExtended::potential(ConstVectorRef z) const {
  return add_reference(z, inner_->potential(z), nullptr);
}

double ReferencePathPseudoExtended::potential_and_gradient(ConstVectorRef z, VectorRef grad) const {
  const double u = inner_->potential_and_gradient(z, grad);
  return add_reference(z, u, &grad);
}

SingleSampleMoves::SingleSampleMoves(std::shared_ptr<const ReferencePathPseudoExtended> space)
    : space_(std::move(space)), ratio_(space_->inner().base()) {
  n_ = space_->n_;
  d_ = space_->d_;
  const int dim = space_->dim();
  z_.resize(dim);
  grad_phi_.resize(dim);
  z_scratch_.resize(dim);
  grad_scratch_.resize(dim);
  x_tried_.resize(d_);
  grad_tried_.resize(d_);
  phi_.resize(static_cast<std::size_t>(n_));
  psi_.resize(static_cast<std::size_t>(n_));
  phi_scratch_.resize(static_cast<std::size_t>(n_));
}

double SingleSampleMoves::add_psi(double u_inner, int replaced) const {
  double u = u_inner;
  for (int i = 0; i < n_; ++i) u += i == replaced ? psi_tried_ : psi_[static_cast<std::size_t>(i)];
  return u;
}

void SingleSampleMoves::begin(ConstVectorRef z) {
  z_ = z;
  tried_ = -1;
  const auto cells = static_cast<std::size_t>(n_) * static_cast<std::size_t>(d_);
  ratio_.potential_and_gradient_batch(std::span<const double>(z_.data(), cells),
                                      std::span<double>(phi_.data(), phi_.size()),
                                      std::span<double>(grad_phi_.data(), cells));
  for (int i = 0; i < n_; ++i)
    psi_[static_cast<std::size_t>(i)] = space_->reference().potential(z_.segment(i * d_, d_));
}

double SingleSampleMoves::potential_replacing(int i, ConstVectorRef x) {
  tried_ = i;
  x_tried_ = x;
  // One point of the batch call: the same bits as in begin()'s (Target's batch contract).
  ratio_.potential_and_gradient_batch(std::span<const double>(x_tried_.data(), x_tried_.size()),
                                      std::span<double>(&phi_tried_, 1),
                                      std::span<double>(grad_tried_.data(), grad_tried_.size()));
  psi_tried_ = space_->reference().potential(x_tried_);
  z_scratch_ = z_;
  z_scratch_.segment(i * d_, d_) = x_tried_;
  grad_scratch_ = grad_phi_;
  grad_scratch_.segment(i * d_, d_) = grad_tried_;
  phi_scratch_ = phi_;
  phi_scratch_[static_cast<std::size_t>(i)] = phi_tried_;
  const double u = space_->inner().potential_and_gradient_given(z_scratch_, phi_scratch_,
                                                                grad_scratch_);
  return add_psi(u, i);
}

void SingleSampleMoves::keep() {
  if (tried_ < 0) throw ConfigError("single-sample moves: nothing tried to keep");
  z_.segment(tried_ * d_, d_) = x_tried_;
  grad_phi_.segment(tried_ * d_, d_) = grad_tried_;
  phi_[static_cast<std::size_t>(tried_)] = phi_tried_;
  psi_[static_cast<std::size_t>(tried_)] = psi_tried_;
  tried_ = -1;
}

double SingleSampleMoves::potential_and_gradient(VectorRef grad) const {
  grad = grad_phi_;
  const double u = space_->inner().potential_and_gradient_given(z_, phi_, grad);
  return space_->add_reference(z_, u, &grad);
}

}  // namespace pemc::extended
