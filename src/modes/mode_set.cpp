#include "modes/mode_set.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/numerics.hpp"
#include "pemc/v1/records.pb.h"

namespace pemc::modes {

std::optional<double> ModeSet::best_log_density() const {
  std::optional<double> best;
  for (const auto& m : modes)
    if (!best || m.log_density > *best) best = m.log_density;
  if (!best && std::isfinite(best_degenerate_log_density)) best = best_degenerate_log_density;
  return best;
}

std::optional<Vector> ModeSet::laplace_diagonal() const {
  if (modes.empty()) return std::nullopt;
  const auto shares = laplace_shares();
  Vector diagonal = Vector::Zero(dim);
  for (std::size_t k = 0; k < modes.size(); ++k) diagonal += shares[k] * modes[k].covariance.diagonal();
  if (!diagonal.allFinite() || !(diagonal.array() > 0.0).all()) return std::nullopt;
  return diagonal;
}

std::vector<double> ModeSet::laplace_shares() const {
  std::vector<double> l;
  for (const auto& m : modes) l.push_back(m.log_mass);
  if (l.empty()) return l;
  const double total = log_sum_exp(l);
  for (auto& v : l) v = std::exp(v - total);
  return l;
}

ModeSet stand_in_mode_set(int dim) {
  ModeSet s;
  s.dim = dim;
  s.stand_in = true;
  Mode m;
  m.location = Vector::Zero(dim);
  m.log_mass = 0.5 * dim * kLog2Pi;
  m.covariance = Matrix::Identity(dim, dim);
  m.hessian_cholesky = Matrix::Identity(dim, dim);
  m.n_starts = 1;
  s.modes.push_back(std::move(m));
  s.n_starts = s.n_converged = 1;
  s.unseen_probability = 0.0;
  s.complete = true;
  return s;
}

v1::ModeSearchResult to_record(const ModeSet& set,
                               const std::function<std::vector<double>(const Vector&)>& outputs_at) {
  v1::ModeSearchResult r;
  for (const auto& m : set.modes) {
    auto& f = *r.add_modes();
    f.mutable_location()->Assign(m.location.data(), m.location.data() + m.location.size());
    f.set_log_density(m.log_density);
    f.set_log_mass(m.log_mass);
    for (Eigen::Index i = 0; i < m.covariance.rows(); ++i)
      f.add_laplace_sd(std::sqrt(m.covariance(i, i)));
    f.set_n_starts(m.n_starts);
    if (outputs_at) {
      const auto out = outputs_at(m.location);
      f.mutable_outputs()->Assign(out.begin(), out.end());
    }
  }
  r.set_seed(set.seed);
  r.set_n_starts(set.n_starts);
  r.set_n_converged(set.n_converged);
  r.set_n_not_converged(set.n_not_converged);
  r.set_n_nonfinite(set.n_nonfinite);
  r.set_n_degenerate(set.n_degenerate);
  r.set_unseen_probability(set.unseen_probability);
  r.set_complete(set.complete);
  r.set_n_gradient_evals(set.n_gradient_evals);
  r.set_wall_seconds(set.wall_seconds);
  return r;
}

namespace {

// "mu1=-2.06, mu2=2.49, ..." from the target's outputs at the mode, or its coordinates.
std::string describe_location(const Mode& m, const std::vector<std::string>& names,
                              const std::function<std::vector<double>(const Vector&)>& outputs_at,
                              int max_coords) {
  std::vector<double> values;
  if (outputs_at) values = outputs_at(m.location);
  const bool named = !values.empty() && values.size() == names.size();
  if (!named) values.assign(m.location.data(), m.location.data() + m.location.size());
  std::string s;
  const int n = static_cast<int>(values.size());
  for (int i = 0; i < std::min(n, max_coords); ++i) {
    if (i > 0) s += ", ";
    s += (named ? names[i] : fmt::format("x[{}]", i + 1)) + fmt::format("={:.3g}", values[i]);
  }
  if (n > max_coords) s += ", ...";
  return s;
}

}  // namespace

std::string describe(const ModeSet& set, const std::vector<std::string>& names,
                     const std::function<std::vector<double>(const Vector&)>& outputs_at,
                     int max_modes, int max_coords) {
  std::string s = fmt::format(
      "found {} mode{} in {} starts ({} reached them, {} a degenerate optimum (Hessian not positive "
      "definite), {} did not converge, {} not finite; {}, {:.1f} s)",
      set.modes.size(), set.modes.size() == 1 ? "" : "s", set.n_starts,
      set.n_converged - set.n_degenerate, set.n_degenerate, set.n_not_converged, set.n_nonfinite,
      set.complete ? "search complete"
                   : fmt::format("search stopped at its start budget, chance of an unseen mode {:.2f}",
                                 set.unseen_probability),
      set.wall_seconds);
  const auto shares = set.laplace_shares();
  const int n = static_cast<int>(set.modes.size());
  for (int k = 0; k < std::min(n, max_modes); ++k) {
    const auto& m = set.modes[static_cast<std::size_t>(k)];
    s += fmt::format("{} #{}: log density {:.4g}, log mass {:.4g} (share {:.3g}), {} start{}, at {}",
                     k == 0 ? ":" : ";", k + 1, m.log_density, m.log_mass,
                     shares[static_cast<std::size_t>(k)], m.n_starts, m.n_starts == 1 ? "" : "s",
                     describe_location(m, names, outputs_at, max_coords));
  }
  if (n > max_modes) s += fmt::format("; ... {} more", n - max_modes);
  return s;
}

}  // namespace pemc::modes
