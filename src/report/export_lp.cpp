#include "report/export_lp.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "report/quantities.hpp"
#include "report/run_targets.hpp"

namespace pemc::report::export_detail {

void resolve_lp(Scan& scan, const ExportOptions& options, bool required,
                std::vector<std::string>& notes) {
  RunTargets user_targets(options.target_config);
  for (auto& [id, run] : scan.runs) {
    if (const auto note = lp_offset_note(run.meta, id); !note.empty()) notes.push_back(note);
    if (run.columns.lp != config::LpSource::kTargetAtSample) continue;
    if (!user_targets.has_config() && !required) {
      run.has_lp = false;
      notes.push_back(fmt::format(
          "run '{}' ({}) is exported without lp__: its draws record the sampler's extended "
          "density (written as extended_lp__), and the model's log density at each sample needs "
          "its target: pass --config CONFIG",
          id, run.meta.sampler));
      continue;
    }
    const std::string purpose = fmt::format(
        "lp__ of the samples (the {} draws record an extended density)", run.meta.sampler);
    try {
      run.lp_target = user_targets.target(run.meta, id, purpose);
    } catch (const Error& e) {
      throw ConfigError(fmt::format("export --format {}: {}", options.format, e.what()));
    }
  }
}

double sample_lp(const v1::Draw& d, const RunScan& run, int j, Vector& point) {
  if (!run.lp_target) return lp_of_potential(run.meta, d.potential());
  const auto x = sample_point(d, run.meta.original_dim, j);
  point = Eigen::Map<const Vector>(x.data(), static_cast<Eigen::Index>(x.size()));
  // The user's --config target is the header's (RunTargets checks it): the same offset.
  return lp_of_potential(run.meta, run.lp_target->potential(point));
}

}  // namespace pemc::report::export_detail
