#include "warmup/reference_fit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include "core/error.hpp"
#include "modes/mode_occupancy.hpp"

namespace pemc::warmup {
namespace {

// The fewest draws per dimension a dense covariance is estimated from: with fewer, the sample
// covariance's smallest eigenvalues fall far below the truth's (Marchenko-Pastur: by
// (1 - sqrt(d / n))^2, 0.47 at n = 10 d), and a reference that narrow in some direction overlaps
// the target poorly.
constexpr double kDenseDrawsPerDim = 10.0;

// The covariance of mode `m` refitted to the sums: their sample covariance with at least
// kDenseDrawsPerDim draws per dimension, else the Laplace fit's correlations scaled by the draws'
// variances (all of it from diagonal sums). Not regularised as a metric is: Stan's ridge of
// 1e-3 (5 / (n + 5)) would widen a coordinate of posterior sd 0.001 tenfold.
Matrix covariance_of(const modes::Mode& m, const WindowSums& s) {
  const int d = s.dim();
  const double n = static_cast<double>(s.count());
  if (s.dense() && n >= kDenseDrawsPerDim * d) {
    const Matrix c = s.m2() / (n - 1.0);
    return 0.5 * (c + c.transpose());  // symmetric up to rounding only
  }
  const Vector m2 = s.dense() ? Vector(s.m2().diagonal()) : Vector(s.m2().col(0));
  const Vector variances = m2 / (n - 1.0);
  const Vector scale = variances.cwiseSqrt().cwiseQuotient(m.covariance.diagonal().cwiseSqrt());
  Matrix cov = scale.asDiagonal() * m.covariance * scale.asDiagonal();
  cov.diagonal() = variances;
  return cov;
}

// Mode `m` refitted to the pooled draws `s` with mean log density `mean_log_density`; false (m
// unchanged) when their covariance is not positive definite or anything is not finite.
bool refit(modes::Mode& m, const WindowSums& s, double mean_log_density) {
  if (s.count() < 2 || !std::isfinite(mean_log_density) || !s.mean().allFinite()) return false;
  const Matrix cov = covariance_of(m, s);
  if (!cov.allFinite()) return false;
  const Eigen::LLT<Matrix> llt(cov);
  if (llt.info() != Eigen::Success) return false;
  const Matrix l = llt.matrixL();
  const double log_det = 2.0 * l.diagonal().array().log().sum();
  const double d = static_cast<double>(s.dim());
  const double entropy = 0.5 * d * (1.0 + std::log(2.0 * std::numbers::pi)) + 0.5 * log_det;
  const Eigen::LLT<Matrix> h(llt.solve(Matrix::Identity(s.dim(), s.dim())));
  if (!std::isfinite(log_det) || h.info() != Eigen::Success) return false;
  m.location = s.mean();
  m.covariance = cov;
  m.hessian_cholesky = h.matrixL();
  m.log_mass = mean_log_density + entropy;
  return true;
}

}  // namespace

ReferenceFit fit_reference_modes(const modes::ModeSet& modes, const std::map<int, ChainFit>& fits) {
  ReferenceFit out{modes, {}};
  if (modes.stand_in || fits.empty()) return out;
  // Without a mode (a density unbounded at a boundary, as a centred hierarchical model's) every
  // chain's draws make one Gaussian, in place of the variational fit mixture_base would fall back to.
  const bool found = !modes.modes.empty();
  if (!found) {
    modes::Mode m;
    m.location = Vector::Zero(modes.dim);
    m.covariance = Matrix::Identity(modes.dim, modes.dim);  // no Laplace correlations to keep
    out.modes.modes.push_back(std::move(m));
  }
  // Each chain's draws joined to those of the other chains in its mode.
  const modes::ModeAssigner assigner(modes);
  const std::size_t n_modes = out.modes.modes.size();
  std::vector<WindowSums> sums(n_modes);
  std::vector<double> log_density_sum(n_modes, 0.0);
  std::vector<std::vector<int>> chains(n_modes);
  for (const auto& [id, fit] : fits) {
    if (fit.sums.dim() != modes.dim)
      throw DataError(fmt::format(
          "pooled warmup: chain {}'s draws have {} coordinates, the modes {}", id,
          fit.sums.dim(), modes.dim));
    if (fit.sums.count() == 0) continue;
    const auto k = static_cast<std::size_t>(found ? assigner.best_mode(fit.sums.mean()) : 0);
    sums[k].merge(fit.sums);
    log_density_sum[k] += fit.mean_log_density * static_cast<double>(fit.sums.count());
    chains[k].push_back(id);
  }
  std::vector<std::string> lines;
  for (std::size_t k = 0; k < n_modes; ++k) {
    if (chains[k].empty()) continue;
    auto& m = out.modes.modes[k];
    const double laplace = m.log_mass;
    const double n = static_cast<double>(sums[k].count());
    if (!refit(m, sums[k], log_density_sum[k] / n)) continue;
    const auto from = fmt::format("chain{} {} ({} draws)", chains[k].size() == 1 ? "" : "s",
                                  fmt::join(chains[k], ", "), sums[k].count());
    lines.push_back(found ? fmt::format("mode #{} from {}: log mass {:.4g} (Laplace {:.4g})", k + 1,
                                        from, m.log_mass, laplace)
                          : fmt::format("one Gaussian from {} (the mode search found no mode): "
                                        "log mass {:.4g}",
                                        from, m.log_mass));
  }
  if (lines.empty()) return ReferenceFit{modes, {}};
  std::stable_sort(out.modes.modes.begin(), out.modes.modes.end(),
                   [](const modes::Mode& a, const modes::Mode& b) {
                     return a.log_mass > b.log_mass;
                   });
  out.description =
      fmt::format("reference rho refitted to the pooled warmup's draws: {}", fmt::join(lines, "; "));
  return out;
}

}  // namespace pemc::warmup
