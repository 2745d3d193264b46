#pragma once
// What each round of a pooled warmup runs (pooled_schedule.hpp): the run's config with the
// adapting kernel's fields, the start and the lengths set for the round.
//
// A top-level sampler.nuts or sampler.hmc runs every round itself. A pseudo-extended run on the
// reference path (its pseudo-samples have about the target's scale at every temperature,
// pseudo_extended_reference.hpp) warms up in two stages:
//   init, windows  its kernel (nuts or hmc) runs on the target itself: the metric is pooled from
//                  the chains' draws and warmup ends when they agree, at one target gradient per
//                  leapfrog step instead of N;
//   term           the pseudo-extended sampler runs from the chain's state with the pooled metric
//                  laid out over the extended space (extended_inverse_metric) and adapts its step
//                  size: the pseudo-samples spread from the chain's state, and the extended
//                  space's step size is its own; its reference is refitted to the chains' draws
//                  of the windows (reference_fit.hpp), here and in sampling;
//   sample         the pseudo-extended sampler from the state the terminal buffer left, at the
//                  pooled step size.
// Its metric is pooled within chains (Pooling::kWithinChains): the sampler moves between modes
// itself, and its local kernel steps within one even when the chains' warmups sit in different
// modes.
#include <cstdint>
#include <string>
#include <vector>

#include "modes/mode_set.hpp"
#include "pemc/v1/config.pb.h"
#include "warmup/pooled_messages.hpp"
#include "warmup/pooled_schedule.hpp"
#include "warmup/pooled_windows.hpp"

namespace pemc::warmup {

// The adaptation a pooled warmup reads its settings from: a top-level sampler.nuts or sampler.hmc,
// or the kernel of a sampler.pseudo_extended; nullptr for any other sampler.
const v1::AdaptationConfig* pooled_adaptation(const v1::RunConfig& run);

// Whether the run asks for a pooled warmup (pooled_adaptation(run)->pooled()).
bool has_pooled_warmup(const v1::RunConfig& run);

// Whether a pseudo-extended run's pooled warmup is the two-stage one above.
bool pools_pseudo_extended(const v1::RunConfig& run);

// The config field that turns the run's pooled warmup on or off, for messages
// ("sampler.nuts.adaptation.pooled").
std::string pooled_field(const v1::RunConfig& run);

// Whether the pooled metric is a dense one (the adapting kernel's metric is DENSE).
bool pooled_metric_is_dense(const v1::RunConfig& run);

// How the windows' draws are pooled into the metric (pooled_windows.hpp).
Pooling pooling_of(const v1::RunConfig& run);

// Round `plan` of a chain: the run with its sampler's adaptation, metric, step size, start and
// lengths set for that round. `b`: the broadcast of the round (nullptr for round 0). Until a
// window has been pooled the metric is `initial_metric` when not empty (the modes' Laplace
// diagonal, pooled_initial_metric), else the configured one.
v1::RunConfig pooled_round_config(const v1::RunConfig& run, const RoundPlan& plan,
                                  const RoundBroadcast* b, int chain_id,
                                  const std::vector<double>& initial_metric = {});

// The inverse metric a pooled warmup starts with: the mode search's Laplace variances weighted
// by the modes' shares (diagonal, or a diagonal matrix for a DENSE metric), when the run searched,
// found modes and configures no inverse_metric of its own; else empty (the configured metric).
// Stan starts from the unit metric, whose long trajectories cost most of a warmup's gradients
// on badly scaled posteriors; the search has already paid for this estimate.
std::vector<double> pooled_initial_metric(const v1::RunConfig& run, const modes::ModeSet* modes);

}  // namespace pemc::warmup
