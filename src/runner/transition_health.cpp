#include "runner/transition_health.hpp"

#include <cmath>
#include <string>

#include "config/sampler_columns.hpp"
#include "core/error.hpp"

namespace pemc::runner {
namespace {

// save()'s layout: the tree-depth count, whether every energy was finite, then the E-BFMI sums.
constexpr std::size_t kSavedSize = 2 + estimators::EbfmiAccumulator::kSavedSize;

}  // namespace

TransitionHealth::TransitionHealth(const v1::SamplerConfig& sampler)
    : max_tree_depth_(config::configured_max_tree_depth(sampler)),
      energy_(config::records_model_energy(sampler)) {}

void TransitionHealth::add(const kernels::TransitionStats& stats) {
  if (max_tree_depth_ && stats.tree_depth >= *max_tree_depth_) ++n_max_tree_depth_;
  if (!energy_ || !energy_finite_) return;
  if (std::isfinite(stats.energy))
    ebfmi_.add(stats.energy);
  else
    energy_finite_ = false;
}

void TransitionHealth::write(v1::ChainSummary& summary) const {
  if (unknown_) return;
  if (max_tree_depth_) summary.set_n_max_tree_depth(n_max_tree_depth_);
  if (energy_ && energy_finite_) {
    const double e = ebfmi_.value();
    if (!std::isnan(e)) summary.set_e_bfmi(e);
  }
}

std::vector<double> TransitionHealth::save() const {
  if (!max_tree_depth_ && !energy_) return {};
  std::vector<double> out{static_cast<double>(n_max_tree_depth_), energy_finite_ ? 1.0 : 0.0};
  const auto sums = ebfmi_.save();
  out.insert(out.end(), sums.begin(), sums.end());
  return out;
}

void TransitionHealth::restore(std::span<const double> sums) {
  const std::size_t expected = max_tree_depth_ || energy_ ? kSavedSize : 0;
  if (sums.size() != expected)
    throw DataError("checkpoint: transition statistics of " + std::to_string(sums.size()) +
                    " numbers, this sampler's have " + std::to_string(expected));
  if (expected == 0) return;
  if (!(sums[0] >= 0.0) || sums[0] != std::floor(sums[0]) || (sums[1] != 0.0 && sums[1] != 1.0))
    throw DataError("checkpoint: transition statistics: a negative or fractional tree-depth count, "
                    "or a finiteness flag other than 0 or 1");
  n_max_tree_depth_ = static_cast<std::int64_t>(sums[0]);
  energy_finite_ = sums[1] == 1.0;
  try {
    ebfmi_ = estimators::EbfmiAccumulator::restore(sums.subspan(2));
  } catch (const DataError& e) {
    throw DataError(std::string("checkpoint: ") + e.what());
  }
}

}  // namespace pemc::runner
