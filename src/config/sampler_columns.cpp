#include "config/sampler_columns.hpp"

#include <algorithm>

#include "kernels/nuts.hpp"

namespace pemc::config {
namespace {

// CmdStan's columns, with ArviZ's names for them.
const StatColumn kAccept{"accept_stat__", "acceptance_rate", DrawStat::kAcceptStat, true};
const StatColumn kStep{"stepsize__", "step_size", DrawStat::kStepSize, true};
const StatColumn kDepth{"treedepth__", "tree_depth", DrawStat::kTreeDepth, true};
const StatColumn kLeapfrog{"n_leapfrog__", "n_steps", DrawStat::kNLeapfrog, true};
const StatColumn kDivergent{"divergent__", "diverging", DrawStat::kDivergent, true};
const StatColumn kEnergy{"energy__", "energy", DrawStat::kEnergy, true};

// pemc's own: fields that mean something other than CmdStan's column of that field.
// The Hamiltonian of the extended target's HMC/NUTS (E-BFMI of the extended chain, not of the
// model's posterior).
const StatColumn kExtendedEnergy{"extended_energy__", "extended_energy", DrawStat::kEnergy, false};
// MALA's step size h: the variance of its Langevin proposal, which is a leapfrog step of
// sqrt(h), not h.
const StatColumn kMalaStep{"mala_stepsize__", "mala_step_size", DrawStat::kStepSize, false};
// The log density of the sampler's own state (extended space, or the tempered level's).
const StatColumn kExtendedLp{"extended_lp__", "extended_lp", DrawStat::kExtendedLp, false};

// Every column, in the order each sampler's columns follow.
const std::vector<StatColumn>& all_columns() {
  static const std::vector<StatColumn> all{kExtendedLp, kAccept,   kStep,   kMalaStep,      kDepth,
                                           kLeapfrog,   kDivergent, kEnergy, kExtendedEnergy};
  return all;
}

// NUTS and static HMC fill every field. MALA is one leapfrog step of sqrt(h) from a fresh momentum
// with a Metropolis correction, so its energy is that step's Hamiltonian (CmdStan's meaning);
// its n_leapfrog is always 1 and it never marks a divergence. RWM's energy is the potential
// (no momentum) and its step size the proposal scale, constant after warmup (in the header).
std::vector<StatColumn> plain_kernel(const v1::SamplerConfig& s) {
  if (s.has_nuts()) return {kAccept, kStep, kDepth, kLeapfrog, kDivergent, kEnergy};
  if (s.has_hmc()) return {kAccept, kStep, kLeapfrog, kDivergent, kEnergy};
  if (s.has_mala()) return {kAccept, kMalaStep, kEnergy};
  if (s.has_rwm()) return {kAccept};
  return {};
}

// Pseudo-extended runs HMC/NUTS on the extended target and nothing else between draws: every
// field is its kernel's, the energy that of the extended Hamiltonian.
std::vector<StatColumn> pseudo_extended(const v1::PseudoExtendedConfig& c) {
  if (c.has_nuts())
    return {kExtendedLp, kAccept, kStep, kDepth, kLeapfrog, kDivergent, kExtendedEnergy};
  return {kExtendedLp, kAccept, kStep, kLeapfrog, kDivergent, kExtendedEnergy};
}

// Continuous tempering's inner kernel moves (x, u) (JOINT) or x at the current beta (GIBBS); base
// proposals and the beta draw change the state after it, so its energy is no Hamiltonian of
// consecutive draws and is left out. With sweeps_per_draw > 1 a draw's fields summarise its
// sweeps (repeated_transition_kernel.hpp).
std::vector<StatColumn> continuous_tempering(const v1::ContinuousTemperingConfig& c) {
  if (c.has_nuts()) return {kExtendedLp, kAccept, kStep, kDepth, kLeapfrog, kDivergent};
  return {kExtendedLp, kAccept, kStep, kLeapfrog, kDivergent};
}

}  // namespace

SamplerColumns sampler_columns(const v1::SamplerConfig& s) {
  using Kind = v1::SamplerConfig::KindCase;
  switch (s.kind_case()) {
    case Kind::kPseudoExtended:
      return {LpSource::kTargetAtSample, pseudo_extended(s.pseudo_extended())};
    case Kind::kContinuousTempering:
      return {LpSource::kTargetAtSample, continuous_tempering(s.continuous_tempering())};
    case Kind::kParallelTempering:
      // The cold level's local steps of the round (tempering/parallel_tempering.cpp); tree depth
      // and energy are not collected from the replicas.
      return {LpSource::kDrawPotential, {kAccept, kStep, kLeapfrog, kDivergent}};
    case Kind::kSimulatedTempering:
      // The local steps at the draw's previous level; their step size is that level's, and 0 on a
      // draw regenerated from the reference (no step taken), so it is left out.
      return {LpSource::kTargetAtSample, {kExtendedLp, kAccept, kLeapfrog, kDivergent}};
    case Kind::kAnnealedImportance:
      // One draw is one annealing run over every level: the mean acceptance, the leapfrog steps
      // and any divergence of its moves; no single step size. Its potential is the target's at
      // the run's final point, the sample.
      return {LpSource::kDrawPotential, {kAccept, kLeapfrog, kDivergent}};
    default:
      return {LpSource::kDrawPotential, plain_kernel(s)};
  }
}

std::vector<StatColumn> merged_columns(const std::vector<std::vector<StatColumn>>& runs) {
  std::vector<StatColumn> out;
  for (const auto& c : all_columns())
    for (const auto& run : runs)
      if (std::find(run.begin(), run.end(), c) != run.end()) {
        out.push_back(c);
        break;
      }
  return out;
}

std::vector<StatColumn> cmdstan_columns(const std::vector<StatColumn>& all) {
  std::vector<StatColumn> out;
  for (const auto& c : all)
    if (c.cmdstan) out.push_back(c);
  return out;
}

StatType stat_type(DrawStat stat) {
  switch (stat) {
    case DrawStat::kTreeDepth:
    case DrawStat::kNLeapfrog: return StatType::kInt;
    case DrawStat::kDivergent: return StatType::kBool;
    default: return StatType::kReal;
  }
}

std::optional<int> configured_max_tree_depth(const v1::SamplerConfig& s) {
  const v1::NutsConfig* nuts = nullptr;
  if (s.has_nuts()) nuts = &s.nuts();
  if (s.has_pseudo_extended() && s.pseudo_extended().has_nuts()) nuts = &s.pseudo_extended().nuts();
  if (s.has_continuous_tempering() && s.continuous_tempering().has_nuts())
    nuts = &s.continuous_tempering().nuts();
  if (!nuts) return std::nullopt;
  return nuts->has_max_tree_depth() ? nuts->max_tree_depth() : kernels::NutsOptions{}.max_tree_depth;
}

bool records_stat(const v1::SamplerConfig& s, DrawStat stat) {
  const auto stats = sampler_columns(s).stats;
  return std::any_of(stats.begin(), stats.end(),
                     [stat](const StatColumn& c) { return c.stat == stat; });
}

bool records_model_energy(const v1::SamplerConfig& s) {
  const auto stats = sampler_columns(s).stats;
  return std::find(stats.begin(), stats.end(), kEnergy) != stats.end();
}

double stat_value(DrawStat stat, const v1::Draw& d) {
  switch (stat) {
    case DrawStat::kExtendedLp: return -d.potential();
    case DrawStat::kAcceptStat: return d.accept_stat();
    case DrawStat::kStepSize: return d.step_size();
    case DrawStat::kTreeDepth: return d.tree_depth();
    case DrawStat::kNLeapfrog: return d.n_leapfrog();
    case DrawStat::kDivergent: return d.divergent() ? 1.0 : 0.0;
    case DrawStat::kEnergy: return d.energy();
  }
  return 0.0;
}

}  // namespace pemc::config
