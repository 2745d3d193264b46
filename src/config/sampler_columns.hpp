#pragma once
// Which sampler columns an export writes for a run, and where its lp__ comes from: the one place
// that knows what each sampler's transitions record in a Draw (kernels::TransitionStats, copied by
// runner/chain_driver.cpp fill_draw). Every export (csv, cmdstan, netcdf; report/export.hpp)
// writes exactly these columns, so a field a sampler leaves at its default (0 standing for "not
// applicable") never appears as a value, and a field whose meaning differs from CmdStan's gets a
// name of its own. docs/reports.md lists the result per sampler, with the reasons. It lives with
// the config because both ends read it: the reports, and the chain driver, which accumulates the
// tree depth and E-BFMI of ChainSummary for exactly the samplers whose draws record them.
//
// By sampler (the local kernel's columns for the extended and tempering samplers):
//   nuts                 accept_stat__ stepsize__ treedepth__ n_leapfrog__ divergent__ energy__
//   hmc (static)         accept_stat__ stepsize__ n_leapfrog__ divergent__ energy__
//   mala                 accept_stat__ mala_stepsize__ energy__ (a one-step HMC's Hamiltonian)
//   rwm                  accept_stat__
//   pseudo_extended      extended_lp__, the kernel's columns with energy__ as extended_energy__
//   continuous_tempering extended_lp__, the kernel's columns without energy__
//   parallel_tempering   accept_stat__ stepsize__ n_leapfrog__ divergent__ (the cold level's)
//   simulated_tempering  extended_lp__ accept_stat__ n_leapfrog__ divergent__
//   annealed_importance  accept_stat__ n_leapfrog__ divergent__
// A config without a sampler (hand-made files) gets none.
#include <optional>
#include <string>
#include <vector>

#include "pemc/v1/config.pb.h"
#include "pemc/v1/records.pb.h"

namespace pemc::config {

// The Draw field a column reads.
enum class DrawStat {
  kExtendedLp,  // -Draw.potential: the log density of the sampler's own (extended) state
  kAcceptStat,
  kStepSize,
  kTreeDepth,
  kNLeapfrog,
  kDivergent,
  kEnergy,
};

enum class StatType { kReal, kInt, kBool };

struct StatColumn {
  std::string name;   // csv and CmdStan CSV ("accept_stat__")
  std::string arviz;  // netCDF sample_stats ("acceptance_rate")
  DrawStat stat;
  bool cmdstan;  // one of CmdStan's own columns: the only ones a CmdStan CSV gets (rstan reads
                 // any other column as a model parameter)
  bool operator==(const StatColumn&) const = default;
};

// Where lp__ (the model's log density: -potential of the run's target, Jacobian included, with
// the constants the run kept) comes from.
enum class LpSource {
  kDrawPotential,   // the draw's potential is the target's at the sample
  kTargetAtSample,  // the draw's potential is an extended density's: evaluate the target at
                    // each exported sample (needs the target: --config; export_lp.hpp)
};

struct SamplerColumns {
  LpSource lp = LpSource::kDrawPotential;
  std::vector<StatColumn> stats;  // in the order they are written, after lp__
};

SamplerColumns sampler_columns(const v1::SamplerConfig& sampler);

// The union of several runs' columns, in the one order every sampler's columns follow (a run's
// own columns merged alone are themselves): the columns of a table that holds several runs.
std::vector<StatColumn> merged_columns(const std::vector<std::vector<StatColumn>>& runs);

// The columns of `all` that a CmdStan CSV holds.
std::vector<StatColumn> cmdstan_columns(const std::vector<StatColumn>& all);

StatType stat_type(DrawStat stat);

// The maximum tree depth of the run's NUTS when its draws record treedepth__ (nuts, and
// pseudo-extended or continuous tempering with a NUTS kernel): the configured one, default 10.
// Unset for every other sampler.
std::optional<int> configured_max_tree_depth(const v1::SamplerConfig& sampler);

// True when the run's draws record `stat` (one of its columns reads it).
bool records_stat(const v1::SamplerConfig& sampler, DrawStat stat);

// True when the run's draws record CmdStan's energy__ (the Hamiltonian of the model's own HMC
// chain: nuts, hmc, mala), whose E-BFMI is meaningful for the model's posterior.
bool records_model_energy(const v1::SamplerConfig& sampler);

// The column's value in draw d (integers and booleans as doubles).
double stat_value(DrawStat stat, const v1::Draw& d);

}  // namespace pemc::config
