#include "extended/mixture_base.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/numerics.hpp"
#include "densities/gaussian_mixture.hpp"
#include "extended/base_density_fit.hpp"
#include "pemc/v1/tempering.pb.h"

namespace pemc::extended {
namespace {

using D = MixtureBaseDefaults;

// The fallback when no mode has a Laplace fit.
BaseDensity variational_fallback(const targets::Target& target, const modes::ModeSet& modes,
                                 const std::string& field) {
  v1::BaseDensityConfig v;
  v.mutable_variational()->set_seed(modes.seed);
  auto base = make_base_density(v, target, field);
  base.description = "mean-field variational fit (the mode search found no mode with a "
                     "positive-definite Hessian to build a mixture on)";
  return base;
}

// The moments of the mode components with weights w (summing to 1).
void moments(const std::vector<densities::Gaussian>& comps, const std::vector<double>& w,
             Vector& mean, Matrix& cov) {
  const auto d = comps.front().dim();
  mean = Vector::Zero(d);
  for (std::size_t k = 0; k < comps.size(); ++k) mean += w[k] * comps[k].mean();
  cov = Matrix::Zero(d, d);
  for (std::size_t k = 0; k < comps.size(); ++k) {
    const Vector c = comps[k].mean() - mean;
    cov += w[k] * (comps[k].covariance() + c * c.transpose());
  }
  cov = 0.5 * (cov + cov.transpose());
}

}  // namespace

BaseDensity mixture_base(const v1::MixtureBaseConfig& c, const targets::Target& target,
                         const modes::ModeSet& modes, const std::string& field) {
  const double widen = c.has_widen() ? c.widen() : D::kWiden;
  const double defensive = c.has_defensive_weight() ? c.defensive_weight() : D::kDefensiveWeight;
  const double defensive_widen = c.has_defensive_widen() ? c.defensive_widen() : D::kDefensiveWiden;
  const int max_components = c.has_max_components() ? c.max_components() : D::kMaxComponents;
  if (!(widen >= 1.0) || !(defensive >= 0.0 && defensive < 1.0) || !(defensive_widen > 0.0) ||
      max_components < 1)
    throw ConfigError(field + ": widen >= 1, defensive_weight in [0, 1), defensive_widen > 0 and "
                              "max_components >= 1 are required");
  if (modes.dim != target.dim())
    throw ConfigError(field + ": the mode search ran in dimension " + std::to_string(modes.dim) +
                      ", the target has " + std::to_string(target.dim()));
  if (modes.modes.empty()) return variational_fallback(target, modes, field);
  // The heaviest modes (the set is in decreasing log mass).
  const std::size_t n_used = std::min(modes.modes.size(), static_cast<std::size_t>(max_components));
  std::vector<densities::Gaussian> comps;
  std::vector<double> log_mass;
  try {
    for (std::size_t k = 0; k < n_used; ++k) {
      const auto& m = modes.modes[k];
      comps.push_back(densities::Gaussian::from_covariance(m.location, widen * widen * m.covariance));
      log_mass.push_back(m.log_mass);
    }
  } catch (const NumericalError& e) {
    throw NumericalError(field + ": a mode's Laplace covariance is unusable: " + e.what());
  }
  const double log_zeta = log_sum_exp(log_mass);
  std::vector<double> log_w, w;
  for (double l : log_mass) {
    w.push_back(std::exp(l - log_zeta));
    log_w.push_back(std::log1p(-defensive) + l - log_zeta);
  }
  if (defensive > 0.0) {
    Vector mean;
    Matrix cov;
    moments(comps, w, mean, cov);
    comps.push_back(densities::Gaussian::from_covariance(mean, defensive_widen * defensive_widen * cov));
    log_w.push_back(std::log(defensive));
  }
  auto mixture = std::make_shared<const densities::GaussianMixture>(
      densities::GaussianMixture::from_log_weights(log_w, std::move(comps)));
  std::string shares;
  for (std::size_t k = 0; k < w.size() && k < 6; ++k)
    shares += fmt::format("{}{:.3g}", k ? ", " : "", w[k]);
  if (w.size() > 6) shares += ", ...";
  const std::string description =
      fmt::format("mixture over {} mode{} (Laplace shares {}){}", n_used, n_used == 1 ? "" : "s",
                  shares,
                  defensive > 0.0 ? fmt::format(" and a defensive component of weight {:g}", defensive)
                                  : std::string());
  return BaseDensity{mixture, c.has_log_zeta() ? c.log_zeta() : log_zeta, description};
}

}  // namespace pemc::extended
