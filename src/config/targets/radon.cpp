// The radon hierarchical regression (RadonTarget), read from a data file.
#include "targets/radon.hpp"

#include "config/file_checks.hpp"
#include "config/target_kinds.hpp"
#include "config/targets/all_kinds.hpp"

namespace pemc::config {

TargetKind radon_target_kind() {
  return {
      .kind = v1::TargetConfig::kRadon,
      .name = "radon",
      .validate =
          [](const v1::TargetConfig& t, Problems& p) {
            readable_file(p, "target.radon.data_file", t.radon().data_file());
          },
      .make = [](const v1::TargetConfig& t) -> targets::TargetPtr {
        return targets::make_radon(t.radon());
      },
  };
}

}  // namespace pemc::config
