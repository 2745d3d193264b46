#pragma once
// The HMC/NUTS metric (MetricKind plus an optional initial inverse metric): its rules and the
// hmc::Metric built from it.
#include <google/protobuf/repeated_field.h>

#include <cstdint>
#include <optional>
#include <string>

#include "config/problems.hpp"
#include "hmc/metric.hpp"
#include "pemc/v1/config.pb.h"

namespace pemc::config {

// `pre` is the kernel's path; `dim` the sampled space's dimension when the config fixes it (the
// entry counts are checked only then).
void check_metric(v1::MetricKind metric, const google::protobuf::RepeatedField<double>& inverse,
                  const std::string& pre, std::optional<std::int64_t> dim, Problems& p);

// The metric for a space of dimension `dim`; METRIC_UNSPECIFIED becomes `default_kind`. Throws
// ConfigError naming `field` (the kernel's path) on a wrong entry count or a non-SPD matrix.
hmc::Metric make_metric(v1::MetricKind kind, v1::MetricKind default_kind,
                        const google::protobuf::RepeatedField<double>& inverse, int dim,
                        const std::string& field);

}  // namespace pemc::config
