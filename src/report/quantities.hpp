#pragma once
// A run's quantities and their names, one convention for every report: Stan's 1-based names.
// A target with named outputs (a Stan model: RunInfo.output_names, e.g. "mu", "theta[1]",
// "Sigma[2,1]") is reported by them, with values from Draw.outputs on the constrained scale; a
// built-in target's quantities are its coordinates, named x[1] .. x[d]. CmdStan's dotted form
// ("theta.1", "x.1") appears only inside CmdStan CSV files (cmdstan_name).
//
// The samples a draw stands for: a draw with weighted samples (extra_states holding n rows of the
// original dimension, one log weight each: pseudo-extended, continuous and simulated tempering,
// AIS) stands for those n samples; any other draw for its state (one sample).
#include <span>
#include <string>
#include <vector>

#include "pemc/v1/records.pb.h"

namespace pemc::report {

// Stan's name of coordinate i (0-based): "x[i+1]".
std::string coordinate_name(int i);

// CmdStan's column name of a Stan name: "theta[1]" -> "theta.1", "Sigma[2,1]" -> "Sigma.2.1",
// "mu" -> "mu".
std::string cmdstan_name(const std::string& stan_name);

// A comma-separated list of quantity names, split at the commas outside brackets:
// "mu,Sigma[2,1], x[1]" -> {"mu", "Sigma[2,1]", "x[1]"} (spaces around names dropped, empty items
// skipped). ConfigError on unbalanced brackets.
std::vector<std::string> split_quantity_list(const std::string& list);

// The names of a run's quantities: its output names, or x[1] .. x[original_dim].
std::vector<std::string> quantity_names(const std::vector<std::string>& output_names,
                                        int original_dim);

// Number of samples draw `d` stands for (>= 1): the rows of its weighted samples, else 1.
int draw_sample_count(const pemc::v1::Draw& d, int original_dim);

// True when the draw's samples carry log weights (one per sample).
bool draw_is_weighted(const pemc::v1::Draw& d, int original_dim);

// Writes the quantities of sample j (0 <= j < draw_sample_count) into out (size = the number of
// quantities: K output names, or original_dim). With named outputs, row j of Draw.outputs; else the
// weighted sample's coordinates, or the state's first original_dim coordinates. Returns false when
// the draw does not hold them (a short state, outputs of the wrong size).
bool sample_quantities(const pemc::v1::Draw& d, int original_dim, bool named_outputs, int j,
                       std::span<double> out);

// The sample's point in the target's own (unconstrained) space: extra_states row j, or the state.
std::span<const double> sample_point(const pemc::v1::Draw& d, int original_dim, int j);

}  // namespace pemc::report
