#pragma once
// Hand-made record files for the report tests, described as pemc-dist describes a run in its
// header: a RunInfo entry with the dimensions and the target's exact truth (RunInfo.truth), which
// reports read instead of rebuilding the target.
#include "config/factories.hpp"
#include "core/error.hpp"
#include "pemc/v1/records.pb.h"
#include "targets/truth_record.hpp"

namespace pemc::report::testing {

// A target that cannot be built here (a plugin that does not exist) is recorded as knowing
// nothing.
inline void describe_run(v1::Header& header, const v1::RunConfig& run, int dim, int original_dim) {
  auto* info = header.add_runs();
  info->set_name(run.name());
  info->set_dim(dim);
  info->set_original_dim(original_dim);
  targets::Truth truth;
  try {
    truth = config::make_target(run.target())->truth();
  } catch (const Error&) {
  }
  *info->mutable_truth() = targets::truth_record(truth);
}

}  // namespace pemc::report::testing
