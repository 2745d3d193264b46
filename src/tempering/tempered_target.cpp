#include "tempering/tempered_target.hpp"

#include <cmath>
#include <cstring>

#include "core/error.hpp"
#include "core/numerics.hpp"

namespace pemc::tempering {

void PathPoint::to_chain_state(double beta, kernels::ChainState& state,
                               bool with_reference) const {
  state.x = x;
  if (with_reference) {
    state.potential = potential(beta);
    state.grad = beta * grad_phi + (1.0 - beta) * grad_psi;
  } else {
    state.potential = beta * phi;
    state.grad = beta * grad_phi;
  }
  if (!std::isfinite(state.potential) || !state.grad.allFinite()) state.potential = kInf;
}

TemperedTarget::TemperedTarget(targets::TargetPtr target, ReferencePtr reference, double beta,
                               bool with_reference)
    : target_(std::move(target)),
      reference_(std::move(reference)),
      beta_(beta),
      with_reference_(with_reference) {
  if (!target_) throw ConfigError("TemperedTarget: no target");
  if (reference_ && reference_->density->dim() != target_->dim())
    throw ConfigError("reference: dimension " + std::to_string(reference_->density->dim()) +
                      " differs from the target's " + std::to_string(target_->dim()));
  cache_x_.resize(target_->dim());
  cache_grad_phi_.resize(target_->dim());
  scratch_.resize(target_->dim());
}

double TemperedTarget::potential(ConstVectorRef x) const {
  const double phi = target_->potential(x);
  const double psi = reference_ && with_reference_ ? reference_->density->potential(x) : 0.0;
  return beta_ * phi + (1.0 - beta_) * psi;
}

double TemperedTarget::potential_and_gradient(ConstVectorRef x, VectorRef grad) const {
  double phi = target_->potential_and_gradient(x, cache_grad_phi_);
  if (std::isnan(phi)) phi = kInf;
  cache_x_ = x;
  cache_phi_ = phi;
  cache_valid_ = true;
  if (reference_ && with_reference_) {
    const double psi = reference_->density->potential_and_gradient(x, scratch_);
    grad = beta_ * cache_grad_phi_ + (1.0 - beta_) * scratch_;
    return beta_ * phi + (1.0 - beta_) * psi;
  }
  grad = beta_ * cache_grad_phi_;
  return beta_ * phi;
}

void evaluate_path_point(const targets::Target& target, const Reference* reference,
                         ConstVectorRef x, PathPoint& p) {
  const auto d = x.size();
  p.x = x;
  p.grad_phi.resize(d);
  p.grad_psi.resize(d);
  p.phi = target.potential_and_gradient(x, p.grad_phi);
  if (std::isnan(p.phi)) p.phi = kInf;
  if (reference) {
    p.psi = reference->density->potential_and_gradient(x, p.grad_psi);
  } else {
    p.psi = 0.0;
    p.grad_psi.setZero();
  }
}

int TemperedTarget::path_point(ConstVectorRef x, PathPoint& p) const {
  const auto d = x.size();
  const bool hit = cache_valid_ && cache_x_.size() == d &&
                   std::memcmp(cache_x_.data(), x.data(), sizeof(double) * d) == 0;
  if (!hit) {
    evaluate_path_point(*target_, reference_.get(), x, p);
    return 1;
  }
  p.x = x;
  p.phi = cache_phi_;
  p.grad_phi = cache_grad_phi_;
  p.grad_psi.resize(d);
  if (reference_) {
    p.psi = reference_->density->potential_and_gradient(x, p.grad_psi);
  } else {
    p.psi = 0.0;
    p.grad_psi.setZero();
  }
  return 0;
}

}  // namespace pemc::tempering
