#include "densities/gaussian_mixture.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <span>

#include "core/error.hpp"
#include "core/numerics.hpp"

namespace pemc::densities {
namespace {

// The checks both factories share: at least one component, one weight per component, one dimension.
void check_components(std::size_t n_weights, const char* weights_name,
                      const std::vector<Gaussian>& components) {
  if (components.empty())
    throw ConfigError("GaussianMixture: no components (a mixture needs at least one)");
  if (n_weights != components.size())
    throw ConfigError(fmt::format("GaussianMixture: {} {} for {} components (one per component)",
                                  n_weights, weights_name, components.size()));
  const int d = components.front().dim();
  for (std::size_t k = 1; k < components.size(); ++k)
    if (components[k].dim() != d)
      throw ConfigError(
          fmt::format("GaussianMixture: component {} has dimension {}, component 0 {}", k,
                      components[k].dim(), d));
}

}  // namespace

void GaussianMixture::Scratch::grow_to(std::size_t k, std::size_t d) {
  if (log_terms.size() < k) log_terms.resize(k);
  if (gradients.size() < k * d) gradients.resize(k * d);
}

GaussianMixture GaussianMixture::from_log_weights(const std::vector<double>& log_weights,
                                                  std::vector<Gaussian> components) {
  check_components(log_weights.size(), "log weights", components);
  for (std::size_t k = 0; k < log_weights.size(); ++k)
    if (!std::isfinite(log_weights[k]))
      throw NumericalError(
          fmt::format("GaussianMixture: log weight {} is {} (must be finite)", k, log_weights[k]));
  return GaussianMixture(
      Eigen::Map<const Vector>(log_weights.data(), static_cast<Eigen::Index>(log_weights.size())),
      std::move(components));
}

GaussianMixture GaussianMixture::from_weights(const std::vector<double>& weights,
                                              std::vector<Gaussian> components) {
  check_components(weights.size(), "weights", components);
  Vector log_weights(static_cast<Eigen::Index>(weights.size()));
  for (std::size_t k = 0; k < weights.size(); ++k) {
    if (!(weights[k] > 0.0) || !std::isfinite(weights[k]))
      throw NumericalError(
          fmt::format("GaussianMixture: weight {} is {} (must be finite and > 0)", k, weights[k]));
    log_weights[static_cast<Eigen::Index>(k)] = std::log(weights[k]);
  }
  return GaussianMixture(std::move(log_weights), std::move(components));
}

GaussianMixture::GaussianMixture(Vector log_weights, std::vector<Gaussian> components)
    : components_(std::move(components)) {
  const auto n = log_weights.size();
  const int d = dim();
  // Normalised in log space, where exp(l_k) may underflow (Laplace log masses of a Stan model):
  // (l_k - max_j l_j) - log sum_j exp(l_j - max_j l_j). The shifted values are small and, for
  // nearby l, exact, so the weights are accurate to a few ulps whatever the size of the l_k.
  const Vector shifted = log_weights.array() - log_weights.maxCoeff();
  log_weights_ = shifted.array() - std::log(shifted.array().exp().sum());
  weights_ = log_weights_.array().exp();
  cumulative_.resize(n);
  double sum = 0.0;
  for (Eigen::Index k = 0; k < n; ++k) cumulative_[k] = (sum += weights_[k]);
  cumulative_[n - 1] = 1.0;  // u < 1 always picks a component

  mean_ = Vector::Zero(d);
  for (Eigen::Index k = 0; k < n; ++k) mean_ += weights_[k] * components_[k].mean();
  covariance_ = Matrix::Zero(d, d);
  for (Eigen::Index k = 0; k < n; ++k) {
    const Vector c = components_[k].mean() - mean_;
    covariance_ += weights_[k] * (components_[k].covariance() + c * c.transpose());
  }
  covariance_ = 0.5 * (covariance_ + covariance_.transpose());

  take_evaluation_from_components();
}

void GaussianMixture::take_evaluation_from_components() {
  evaluation_ = Evaluation::kShared;
  for (const auto& c : components_)
    if (c.evaluation() != Evaluation::kShared) evaluation_ = Evaluation::kFast;
  scratch_ = Scratch{};
  if (evaluation_ == Evaluation::kFast)
    scratch_.grow_to(components_.size(), static_cast<std::size_t>(dim()));
}

GaussianMixture::Scratch& GaussianMixture::scratch() const {
  if (evaluation_ == Evaluation::kFast) return scratch_;
  // kShared: one per thread, shared by every kShared mixture that thread evaluates.
  thread_local Scratch per_thread;
  per_thread.grow_to(components_.size(), static_cast<std::size_t>(dim()));
  return per_thread;
}

double GaussianMixture::log_terms(ConstVectorRef x, double* a) const {
  const std::size_t n = components_.size();
  for (std::size_t k = 0; k < n; ++k)
    a[k] = log_weights_[static_cast<Eigen::Index>(k)] - components_[k].potential(x);
  return -log_sum_exp({a, n});
}

double GaussianMixture::potential(ConstVectorRef x) const {
  return log_terms(x, scratch().log_terms.data());
}

double GaussianMixture::potential_and_gradient(ConstVectorRef x, VectorRef grad) const {
  const std::size_t n = components_.size();
  const Eigen::Index d = dim();
  Scratch& s = scratch();
  double* a = s.log_terms.data();
  for (std::size_t k = 0; k < n; ++k) {
    Eigen::Map<Vector> g(s.gradients.data() + k * static_cast<std::size_t>(d), d);
    a[k] = log_weights_[static_cast<Eigen::Index>(k)] - components_[k].potential_and_gradient(x, g);
  }
  const double log_p = log_sum_exp({a, n});
  // sum_k r_k grad psi_k, r_k = exp(a_k - log p) <= 1; the first term assigned (not added to
  // zeros), so that K = 1 gives the component's gradient bit for bit.
  for (std::size_t k = 0; k < n; ++k) {
    const Eigen::Map<const Vector> g(s.gradients.data() + k * static_cast<std::size_t>(d), d);
    const double r = std::exp(a[k] - log_p);
    if (k == 0) {
      grad.noalias() = r * g;
    } else {
      grad.noalias() += r * g;
    }
  }
  return -log_p;
}

double GaussianMixture::component_terms(ConstVectorRef x, VectorRef log_densities,
                                        VectorRef responsibilities) const {
  const auto n = static_cast<Eigen::Index>(components_.size());
  if (log_densities.size() != n || responsibilities.size() != n)
    throw NumericalError(fmt::format(
        "GaussianMixture::component_terms: log_densities has {} entries and responsibilities {}, "
        "expected {} (one per component)",
        log_densities.size(), responsibilities.size(), n));
  for (Eigen::Index k = 0; k < n; ++k) {
    log_densities[k] = -components_[static_cast<std::size_t>(k)].potential(x);
    responsibilities[k] = log_weights_[k] + log_densities[k];  // a_k, the same bits as log_terms
  }
  const double log_p = log_sum_exp({responsibilities.data(), static_cast<std::size_t>(n)});
  for (Eigen::Index k = 0; k < n; ++k) responsibilities[k] = std::exp(responsibilities[k] - log_p);
  return -log_p;
}

void GaussianMixture::sample(rng::Stream& stream, VectorRef out) const {
  const double u = stream.uniform();
  Eigen::Index k = 0;
  while (!(u < cumulative_[k])) ++k;  // stops at the last entry, 1 > u
  components_[static_cast<std::size_t>(k)].sample(stream, out);
}

std::string GaussianMixture::describe() const {
  constexpr Eigen::Index kListed = 8;
  std::string weights;
  for (Eigen::Index k = 0; k < std::min(weights_.size(), kListed); ++k)
    weights += fmt::format("{}{:.3g}", k ? ", " : "", weights_[k]);
  if (weights_.size() > kListed) weights += ", ...";
  return fmt::format("mixture of {} Gaussians (d = {}; weights {})", n_components(), dim(),
                     weights);
}

std::shared_ptr<const Density> GaussianMixture::copy_with_evaluation(Evaluation evaluation) const {
  // A copy, not a rebuild: the weights and moments keep their bits.
  auto copy = std::shared_ptr<GaussianMixture>(new GaussianMixture(*this));
  for (auto& c : copy->components_) c = c.with_evaluation(evaluation);
  copy->take_evaluation_from_components();
  return copy;
}

}  // namespace pemc::densities
