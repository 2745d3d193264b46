#pragma once
// The rules every message obeys, checked by reflection over all set fields: each double/float is
// finite and each enum holds a known value. Runs before the per-kind rules, so that a non-finite
// field is reported as such (Problems keeps the first problem of a field).
#include <google/protobuf/message.h>

#include <string>

#include "config/problems.hpp"

namespace pemc::config {

// `prefix` is the path of `msg` ("" for the run config).
void check_finite_and_enums(const google::protobuf::Message& msg, const std::string& prefix,
                            Problems& p);

}  // namespace pemc::config
