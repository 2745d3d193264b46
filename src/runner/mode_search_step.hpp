#pragma once
// The mode search before sampling (modes/mode_search.hpp) for every run of the job that has one
// (config/modes.hpp): every rank of the job takes part, each running its share of every batch of
// starts (start i on rank i mod the number of ranks); one all-gather per batch gives every rank
// every start's result, and every rank then clusters them identically, so each holds the same
// ModeSet, whatever the number of ranks. Runs whose target, search settings and seed are the
// same (a study comparing samplers on one model) share one search.
#include <boost/mpi/communicator.hpp>

#include <memory>
#include <vector>

#include "modes/mode_set.hpp"
#include "pemc/v1/config.pb.h"
#include "targets/target.hpp"

namespace pemc::runner {

// One entry per run (nullptr: the run has no search). Collective over `world`. Rank 0 logs each
// search's result (runner/mode_search_step.cpp: "run 'x': found 2 modes ..."), and a warning when a
// search stopped at its start budget or found no mode with a Laplace fit.
std::vector<modes::ModeSetPtr> search_modes_of_runs(const std::vector<pemc::v1::RunConfig>& runs,
                                             const std::vector<targets::TargetPtr>& targets,
                                             boost::mpi::communicator& world);

// The target's named outputs at a point (its Stan outputs), or empty for a target without any.
std::vector<double> outputs_at(const targets::Target& target, const Vector& x);

}  // namespace pemc::runner
