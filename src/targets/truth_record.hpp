#pragma once
// A target's exact truth as a record file's header keeps it (RunInfo.truth, records.proto), so
// that reports compare against it without rebuilding the target: pemc-dist, which trusts its
// config, computes it once when it writes the header; pemc-report only reads it.
#include <string>

#include "pemc/v1/records.pb.h"
#include "targets/target.hpp"

namespace pemc::targets {

// Vectors longer than this (and a cross moment of more entries) are left out, with a note: the
// header must stay far below a frame's limit whatever the dimension.
inline constexpr std::int64_t kMaxRecordedTruthValues = 1'000'000;

// The record of `truth` (what is too large is left out, and `note` says so).
pemc::v1::TargetTruth truth_record(const Truth& truth);

// The numbers a record holds (vectors, cross moment and extras together).
std::int64_t truth_record_values(const pemc::v1::TargetTruth& record);

// The truth a record holds. Vectors must all have one length and the cross moment be that length
// squared; UntrustedInputError (naming `where`) otherwise.
Truth truth_from_record(const pemc::v1::TargetTruth& record, const std::string& where);

}  // namespace pemc::targets
