#pragma once
// The `stan` target kind: a Stan program and its data, compiled (or found in the cache) and
// loaded through the plugin ABI. The target's state is the model's unconstrained parameter
// vector; its outputs are Stan's constrained, named quantities.
#include <memory>

#include "targets/plugin.hpp"

namespace pemc::v1 {
class StanTarget;
}

namespace pemc::stan_target {

// Builds the model if the cache lacks it (stan_target/model_builder.hpp), then loads it with the
// data. Throws ConfigError naming the file for every user error: those of build_model, and
// Stan's own data checks (a missing variable, wrong dimensions, a constraint violated) and
// malformed JSON, with the data file's name.
std::shared_ptr<targets::PluginTarget> make_stan_target(const v1::StanTarget& config);

}  // namespace pemc::stan_target
