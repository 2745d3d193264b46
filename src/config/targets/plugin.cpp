// A target from a shared library implementing the C plugin ABI (PluginTarget,
// targets/plugin_abi.h).
#include "targets/plugin.hpp"

#include "config/file_checks.hpp"
#include "config/target_kinds.hpp"
#include "config/targets/all_kinds.hpp"

namespace pemc::config {

TargetKind plugin_target_kind() {
  return {
      .kind = v1::TargetConfig::kPlugin,
      .name = "plugin",
      .validate =
          [](const v1::TargetConfig& t, Problems& p) {
            readable_file(p, "target.plugin.library", t.plugin().library());
          },
      .make = [](const v1::TargetConfig& t) -> targets::TargetPtr {
        return targets::make_plugin(t.plugin());
      },
  };
}

}  // namespace pemc::config
