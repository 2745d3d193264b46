#include "stan_target/stan_target.hpp"

#include <filesystem>
#include <string>

#include "core/error.hpp"
#include "pemc/v1/config.pb.h"
#include "stan_target/model_builder.hpp"

namespace pemc::stan_target {

std::shared_ptr<targets::PluginTarget> make_stan_target(const v1::StanTarget& config) {
  BuildRequest request;
  request.model_file = config.model_file();
  request.cache_dir = config.cache_dir();
  const BuiltModel built = build_model(request);

  std::string data;
  if (!config.data_file().empty()) {
    std::error_code ec;
    const auto absolute = std::filesystem::absolute(config.data_file(), ec);
    data = ec ? config.data_file() : absolute.string();
  }
  targets::PluginOptions o;
  o.library = built.library;
  // The shim's argument (stan_target/shim/model_shim.hpp): the propto flag, then the data file.
  o.argument = std::string(config.propto() ? "propto=1" : "propto=0") + "\n" + data;
  o.name = "stan";
  o.label = "target.stan: Stan model '" + config.model_file() + "'" +
            (config.data_file().empty() ? " (no data file)"
                                        : " with data file '" + config.data_file() + "'");
  return std::make_shared<targets::PluginTarget>(o);
}

}  // namespace pemc::stan_target
