#pragma once
// A chain's initial point from the config's `init` (config.proto InitConfig): the distribution
// every sampler draws its original-space points from (extended samplers once per block).
#include <cstdint>

#include "core/types.hpp"
#include "pemc/v1/config.pb.h"
#include "rng/stream.hpp"

namespace pemc::config {

// Bound i of a uniform_box: a single number broadcast to every coordinate (none = 0), or entry i.
double box_bound(const google::protobuf::RepeatedField<double>& bound, Eigen::Index i);

// Throws ConfigError naming the field (init.point.x, init.uniform_box.lower/upper) when its length
// does not fit a target of dimension `dim`, or a box's lower_i >= upper_i.
void check_init_dimension(const v1::InitConfig& init, std::int64_t dim);

// Fills x (the target's dimension) from `init` with uniforms of `stream`: uniform_box coordinate
// by coordinate lower_i + (upper_i - lower_i) u_i, uniform_radius (the default, r = 2) r (2 u_i - 1),
// point the fixed x. Throws ConfigError as check_init_dimension.
void draw_initial_point(const v1::InitConfig& init, rng::Stream& stream, VectorRef x);

}  // namespace pemc::config
