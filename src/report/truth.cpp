#include "report/truth.hpp"

#include <nlohmann/json.hpp>

#include "config/defaults.hpp"
#include "config/factories.hpp"
#include "config/load.hpp"
#include "config/validate.hpp"

namespace pemc::report {

std::string truth_to_json(const std::string& target_name, int dim, const targets::Truth& t) {
  nlohmann::ordered_json j;
  auto vec = [](const Vector& v) { return std::vector<double>(v.data(), v.data() + v.size()); };
  j["target"] = target_name;
  j["dim"] = dim;
  if (t.mean) j["mean"] = vec(*t.mean);
  if (t.second_moment) j["second_moment"] = vec(*t.second_moment);
  if (t.log_z) j["log_z"] = *t.log_z;
  for (const auto& [key, values] : t.extras) {
    // Scalars print as numbers ("log_z_boltzmann"), vectors as arrays ("mean_s").
    if (values.size() == 1 && key.rfind("mean", 0) != 0)
      j[key] = values[0];
    else
      j[key] = values;
  }
  return j.dump(2) + "\n";
}

ConfigTarget target_of_config(const std::filesystem::path& config_path) {
  auto loaded = config::load_config(config_path);
  config::apply_defaults(loaded);
  // The output path need not be writable just to ask for the truth: check the target only.
  return {config::target_kind_name(loaded.config.target()),
          config::make_target(loaded.config.target())};
}

std::string truth_of_config(const std::filesystem::path& config_path) {
  const auto t = target_of_config(config_path);
  return truth_to_json(t.kind, t.target->dim(), t.target->truth());
}

}  // namespace pemc::report
