#include "targets/mixture.hpp"

#include <cmath>
#include <limits>
#include <string>

#include "core/error.hpp"
#include "core/numerics.hpp"
#include "pemc/v1/config.pb.h"

namespace pemc::targets {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string component_field(int k) {
  return "target.mixture.components[" + std::to_string(k) + "]";
}

}  // namespace

GaussianMixture::GaussianMixture(std::vector<Component> components)
    : components_(std::move(components)) {
  const auto n_comp = static_cast<Eigen::Index>(components_.size());
  if (n_comp == 0) throw ConfigError("mixture target: no components");
  const Eigen::Index d = components_.front().mean.size();
  if (d < 1) throw ConfigError("mixture target: component 0 has an empty mean");
  double total_weight = 0.0;
  for (Eigen::Index k = 0; k < n_comp; ++k) {
    const Component& c = components_[k];
    const std::string where = "mixture target: component " + std::to_string(k) + ": ";
    if (!(std::isfinite(c.weight) && c.weight > 0.0))
      throw ConfigError(where + "weight must be finite and > 0 (got " + std::to_string(c.weight) +
                        ")");
    if (c.mean.size() != d)
      throw ConfigError(where + "mean has " + std::to_string(c.mean.size()) +
                        " entries, expected " + std::to_string(d));
    if (c.variance.size() != d)
      throw ConfigError(where + "variance has " + std::to_string(c.variance.size()) +
                        " entries, expected " + std::to_string(d));
    if (!c.mean.allFinite()) throw ConfigError(where + "mean is not finite");
    for (Eigen::Index i = 0; i < d; ++i)
      if (!(std::isfinite(c.variance[i]) && c.variance[i] > 0.0))
        throw ConfigError(where + "variance[" + std::to_string(i) +
                          "] must be finite and > 0 (got " + std::to_string(c.variance[i]) + ")");
    total_weight += c.weight;
  }
  if (!std::isfinite(total_weight)) throw ConfigError("mixture target: weights sum to infinity");

  means_.resize(d, n_comp);
  inv_var_.resize(d, n_comp);
  log_norm_.resize(n_comp);
  log_terms_.resize(n_comp);
  for (Eigen::Index k = 0; k < n_comp; ++k) {
    Component& c = components_[k];
    c.weight /= total_weight;
    means_.col(k) = c.mean;
    inv_var_.col(k) = c.variance.cwiseInverse();
    log_norm_[k] = std::log(c.weight) - 0.5 * static_cast<double>(d) * kLog2Pi -
                   0.5 * c.variance.array().log().sum();
  }
}

double GaussianMixture::evaluate(ConstVectorRef x, double* grad) const {
  const Eigen::Index d = means_.rows();
  const Eigen::Index n_comp = means_.cols();
  // Pass 1: log w_k N(x; mu_k, var_k) and their maximum.
  double max_term = -kInf;
  bool saw_nan = false;
  for (Eigen::Index k = 0; k < n_comp; ++k) {
    const double* mu = means_.col(k).data();
    const double* iv = inv_var_.col(k).data();
    double q = 0.0;
    for (Eigen::Index i = 0; i < d; ++i) {
      const double z = x[i] - mu[i];
      q += z * z * iv[i];
    }
    const double t = log_norm_[k] - 0.5 * q;
    log_terms_[k] = t;
    if (std::isnan(t)) saw_nan = true;
    if (t > max_term) max_term = t;
  }
  if (saw_nan || max_term == -kInf) {
    // NaN input -> NaN; an infinite coordinate -> density 0 -> potential +inf. Both reject.
    if (grad != nullptr)
      for (Eigen::Index i = 0; i < d; ++i) grad[i] = kNaN;
    return saw_nan ? kNaN : kInf;
  }
  // Pass 2: log-sum-exp; log_terms_ becomes the unnormalised responsibilities exp(t_k - max).
  double sum = 0.0;
  // Terms more than 745 below the maximum are exactly 0 in double precision; skipping exp there
  // avoids libm's slow underflow path (errno handling), which dominated far-from-mode points.
  for (Eigen::Index k = 0; k < n_comp; ++k) {
    const double delta = log_terms_[k] - max_term;
    log_terms_[k] = delta < -745.0 ? 0.0 : std::exp(delta);
    sum += log_terms_[k];
  }
  const double u = -(max_term + std::log(sum));
  if (grad != nullptr) {
    // d potential / dx = sum_k r_k (x - mu_k) / var_k with responsibilities r_k.
    for (Eigen::Index i = 0; i < d; ++i) grad[i] = 0.0;
    for (Eigen::Index k = 0; k < n_comp; ++k) {
      const double r = log_terms_[k] / sum;
      if (r == 0.0) continue;
      const double* mu = means_.col(k).data();
      const double* iv = inv_var_.col(k).data();
      for (Eigen::Index i = 0; i < d; ++i) grad[i] += r * (x[i] - mu[i]) * iv[i];
    }
  }
  return u;
}

double GaussianMixture::potential(ConstVectorRef x) const { return evaluate(x, nullptr); }

double GaussianMixture::potential_and_gradient(ConstVectorRef x, VectorRef grad) const {
  return evaluate(x, grad.data());
}

Truth GaussianMixture::truth() const {
  const Eigen::Index d = means_.rows();
  Vector mean = Vector::Zero(d);
  Vector second = Vector::Zero(d);
  Matrix cross = Matrix::Zero(d, d);
  for (const Component& c : components_) {
    mean += c.weight * c.mean;
    second += c.weight * (c.mean.array().square() + c.variance.array()).matrix();
    cross += c.weight * (c.mean * c.mean.transpose());
    cross.diagonal() += c.weight * c.variance;
  }
  Truth t;
  t.mean = mean;
  t.second_moment = second;
  t.cross_moment = cross;
  t.log_z = 0.0;  // the potential includes all normalising constants
  return t;
}

std::vector<Vector> kou_means() {
  static constexpr double kMeans[20][2] = {{2.18, 5.76}, {8.67, 9.59}, {4.24, 8.48}, {8.41, 1.68},
                                           {3.93, 8.82}, {3.25, 3.47}, {1.70, 0.50}, {4.59, 5.60},
                                           {6.91, 5.81}, {6.87, 5.40}, {5.41, 2.65}, {2.70, 7.88},
                                           {4.98, 3.70}, {1.14, 2.39}, {8.33, 9.50}, {4.93, 1.50},
                                           {1.83, 0.09}, {2.26, 0.31}, {5.54, 6.86}, {1.69, 8.11}};
  std::vector<Vector> out;
  out.reserve(20);
  for (const auto& m : kMeans) out.push_back(Eigen::Vector2d(m[0], m[1]));
  return out;
}

std::shared_ptr<GaussianMixture> make_mixture(const v1::MixtureTarget& config) {
  using Component = GaussianMixture::Component;
  std::vector<Component> comps;
  if (config.preset() != v1::MixtureTarget::PRESET_UNSPECIFIED && config.components_size() > 0)
    throw ConfigError("target.mixture: give either a preset or components, not both (preset " +
                      v1::MixtureTarget::Preset_Name(config.preset()) + " with " +
                      std::to_string(config.components_size()) + " components)");
  switch (config.preset()) {
    case v1::MixtureTarget::BIMODAL_1D:
      // 0.5 N(-1, 0.1) + 0.5 N(1, 0.02); the second parameter is a variance.
      comps.push_back({0.5, Vector::Constant(1, -1.0), Vector::Constant(1, 0.1)});
      comps.push_back({0.5, Vector::Constant(1, 1.0), Vector::Constant(1, 0.02)});
      break;
    case v1::MixtureTarget::KOU_A:
      // Scenario (a): w_j = 1/20, sigma_j^2 = 1/100 (pseudo-extended paper Section 4.1).
      for (const Vector& mu : kou_means())
        comps.push_back({1.0 / 20.0, mu, Vector::Constant(2, 0.01)});
      break;
    case v1::MixtureTarget::KOU_B: {
      // Scenario (b): w_j ∝ 1/||mu_j - (5,5)||, sigma_j^2 = ||mu_j - (5,5)|| / 20.
      const Eigen::Vector2d centre(5.0, 5.0);
      for (const Vector& mu : kou_means()) {
        const double dist = (mu - centre).norm();
        comps.push_back({1.0 / dist, mu, Vector::Constant(2, dist / 20.0)});
      }
      break;
    }
    case v1::MixtureTarget::PRESET_UNSPECIFIED: {
      if (config.components_size() == 0)
        throw ConfigError("target.mixture: neither a preset nor any components given");
      const int d = config.components(0).mean_size();
      for (int k = 0; k < config.components_size(); ++k) {
        const v1::MixtureComponent& pc = config.components(k);
        const std::string f = component_field(k);
        if (pc.mean_size() < 1) throw ConfigError(f + ".mean: empty");
        if (pc.mean_size() != d)
          throw ConfigError(f + ".mean: has " + std::to_string(pc.mean_size()) +
                            " entries, but components[0].mean has " + std::to_string(d));
        if (!(std::isfinite(pc.weight()) && pc.weight() > 0.0))
          throw ConfigError(f + ".weight: must be finite and > 0 (got " +
                            std::to_string(pc.weight()) + ")");
        Component c;
        c.weight = pc.weight();
        c.mean = Eigen::Map<const Vector>(pc.mean().data(), d);
        if (pc.has_variance() && pc.diag_variance_size() > 0)
          throw ConfigError(f + ": give either variance or diag_variance, not both");
        if (pc.has_variance()) {
          if (!(std::isfinite(pc.variance()) && pc.variance() > 0.0))
            throw ConfigError(f + ".variance: must be finite and > 0 (got " +
                              std::to_string(pc.variance()) + ")");
          c.variance = Vector::Constant(d, pc.variance());
        } else if (pc.diag_variance_size() > 0) {
          if (pc.diag_variance_size() != d)
            throw ConfigError(f + ".diag_variance: has " + std::to_string(pc.diag_variance_size()) +
                              " entries, expected " + std::to_string(d));
          for (int i = 0; i < d; ++i)
            if (!(std::isfinite(pc.diag_variance(i)) && pc.diag_variance(i) > 0.0))
              throw ConfigError(f + ".diag_variance[" + std::to_string(i) +
                                "]: must be finite and > 0 (got " +
                                std::to_string(pc.diag_variance(i)) + ")");
          c.variance = Eigen::Map<const Vector>(pc.diag_variance().data(), d);
        } else {
          throw ConfigError(f + ": no variance given (set variance or diag_variance)");
        }
        if (!c.mean.allFinite()) throw ConfigError(f + ".mean: not finite");
        comps.push_back(std::move(c));
      }
      break;
    }
    default:
      throw ConfigError("target.mixture.preset: unknown value " +
                        std::to_string(static_cast<int>(config.preset())));
  }
  return std::make_shared<GaussianMixture>(std::move(comps));
}

}  // namespace pemc::targets
