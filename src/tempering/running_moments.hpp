#pragma once
// What simulated tempering and AIS share for their running moment estimates
// (Kernel::report_moments / report_base, records.proto EstimatesSnapshot): adding a weighted draw,
// reading the weighted mean and covariance, the reference's moments, and the checkpoint form.
#include <string>

#include "core/types.hpp"
#include "estimators/weighted_covariance.hpp"
#include "pemc/v1/checkpoint.pb.h"
#include "tempering/reference.hpp"

namespace pemc::tempering {

// Adds x with log weight log_w; a NaN or +inf weight (a failed evaluation) is left out rather than
// poisoning every sum, as a zero weight is.
void add_weighted(estimators::WeightedCovariance& acc, ConstVectorRef x, double log_w);
// The self-normalised mean and covariance; false when not tracked or no positive weight yet.
bool weighted_moments(bool tracked, const estimators::WeightedCovariance& acc, Vector& mean,
                      Matrix& covariance);
// The reference's mean, covariance and log zeta; false without a reference.
bool reference_moments(const Reference* reference, Vector& mean, Matrix& covariance,
                       double& log_zeta);
void save_moments(pemc::v1::KernelState& s, const estimators::WeightedCovariance& acc);
// From child `key` of s into acc (already of the right dimension); a checkpoint error when missing.
void restore_moments(const pemc::v1::KernelState& s, const std::string& key,
                     estimators::WeightedCovariance& acc);

}  // namespace pemc::tempering
