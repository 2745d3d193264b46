#include "extended/pseudo_extended_standardised.hpp"

#include <cmath>

#include "core/error.hpp"

namespace pemc::extended {

StandardisedPseudoExtended::StandardisedPseudoExtended(
    std::shared_ptr<const PseudoExtendedTarget> inner, Vector centre, Vector scale)
    : inner_(std::move(inner)), centre_(std::move(centre)), scale_(std::move(scale)) {
  if (!inner_) throw ConfigError("standardised pseudo-extended target: no pseudo-extended target");
  if (!inner_->beta_sampled())
    throw ConfigError("standardised pseudo-extended target: needs sampled temperatures");
  if (inner_->partition().group_size() > 1)
    throw ConfigError("standardised pseudo-extended target: one chain on one rank only");
  n_ = inner_->n_pseudo();
  d_ = inner_->original_dim();
  if (centre_.size() != d_ || scale_.size() != d_ || !centre_.allFinite() ||
      !(scale_.array() > 0.0).all() || !scale_.allFinite())
    throw ConfigError("standardised pseudo-extended target: centre and scale need " +
                      std::to_string(d_) + " finite entries each, the scales > 0");
  x_.resize(inner_->dim());
  gx_.resize(inner_->dim());
  beta_.assign(static_cast<std::size_t>(n_), 0.0);
  dbeta_.assign(static_cast<std::size_t>(n_), 0.0);
}

void StandardisedPseudoExtended::temperatures(ConstVectorRef z) const {
  const auto& o = inner_->options();
  const double range = o.beta_upper - o.beta_lower;
  for (int i = 0; i < n_; ++i) {
    const double eta = z[static_cast<Eigen::Index>(n_) * d_ + i];
    const double s = 1.0 / (1.0 + std::exp(-eta));
    beta_[static_cast<std::size_t>(i)] = o.beta_lower + range * s;
    dbeta_[static_cast<std::size_t>(i)] = range * s * (1.0 - s);
  }
}

void StandardisedPseudoExtended::to_x(ConstVectorRef z, VectorRef x) const {
  temperatures(z);
  for (int i = 0; i < n_; ++i) {
    const double s = 1.0 / std::sqrt(beta_[static_cast<std::size_t>(i)]);
    x.segment(i * d_, d_) = centre_ + s * scale_.cwiseProduct(z.segment(i * d_, d_));
  }
  x.tail(n_) = z.tail(n_);
}

void StandardisedPseudoExtended::to_z(ConstVectorRef x, VectorRef z) const {
  temperatures(x);  // the etas are shared
  for (int i = 0; i < n_; ++i) {
    const double s = std::sqrt(beta_[static_cast<std::size_t>(i)]);
    z.segment(i * d_, d_) = s * (x.segment(i * d_, d_) - centre_).cwiseQuotient(scale_);
  }
  z.tail(n_) = x.tail(n_);
}

double StandardisedPseudoExtended::potential(ConstVectorRef z) const {
  to_x(z, x_);
  double jacobian = 0.0;
  for (double b : beta_) jacobian += std::log(b);
  return inner_->potential(x_) + 0.5 * d_ * jacobian;
}

double StandardisedPseudoExtended::potential_and_gradient(ConstVectorRef z, VectorRef grad) const {
  to_x(z, x_);
  const double u = inner_->potential_and_gradient(x_, gx_);
  double jacobian = 0.0;
  for (int i = 0; i < n_; ++i) {
    const auto k = static_cast<std::size_t>(i);
    const double b = beta_[k], db = dbeta_[k];
    jacobian += std::log(b);
    const auto g = gx_.segment(i * d_, d_);
    const auto xi = x_.segment(i * d_, d_);
    const Eigen::Index eta = static_cast<Eigen::Index>(n_) * d_ + i;
    grad[eta] = gx_[eta] - 0.5 * db / b * g.dot(xi - centre_) + 0.5 * d_ * db / b;
    grad.segment(i * d_, d_) = (1.0 / std::sqrt(b)) * scale_.cwiseProduct(g);
  }
  return u + 0.5 * d_ * jacobian;
}

bool StandardisedPseudoExtended::weighted_view(ConstVectorRef z, targets::WeightedView& out) const {
  to_x(z, x_);
  return inner_->weighted_view(x_, out);
}

void StandardisedPseudoExtended::initial_point(const std::function<void(VectorRef)>& draw_original,
                                               VectorRef z) const {
  Vector x(inner_->dim());
  inner_->initial_point(draw_original, x);
  to_z(x, z);
}

}  // namespace pemc::extended
