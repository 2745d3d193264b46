#include "config/modes.hpp"

#include "config/overrides.hpp"
#include "config/sampler_kinds.hpp"

namespace pemc::config {

bool sampler_uses_modes(const v1::RunConfig& run) {
  const auto* kind = find_sampler_kind(run.sampler().kind_case());
  return kind && kind->uses_modes && kind->uses_modes(run);
}

bool mode_search_enabled(const v1::RunConfig& run) {
  return !run.modes().has_enabled() || run.modes().enabled();
}

void fill_modes_defaults(v1::RunConfig& run) {
  auto& m = *run.mutable_modes();
  m.set_enabled(mode_search_enabled(run));
  if (!m.enabled()) return;
  using D = ModesDefaults;
  if (!m.has_init_scale()) m.set_init_scale(D::kInitScale);
  if (!m.has_batch_starts()) m.set_batch_starts(D::kBatchStarts);
  if (!m.has_max_starts()) m.set_max_starts(std::max(D::kMaxStarts, m.batch_starts()));
  if (!m.has_unseen_probability()) m.set_unseen_probability(D::kUnseenProbability);
  if (!m.has_max_iterations()) m.set_max_iterations(D::kMaxIterations);
  if (!m.has_gradient_tolerance()) m.set_gradient_tolerance(D::kGradientTolerance);
  if (!m.has_merge_distance()) m.set_merge_distance(D::kMergeDistance);
}

void check_modes(const v1::RunConfig& run, Problems& p) {
  const auto& m = run.modes();
  const std::string pre = "modes";
  if (m.has_enabled() && !m.enabled() && sampler_uses_modes(run))
    p.add(pre + ".enabled",
          "the sampler builds its reference, base or normalisation from the modes the search "
          "finds; give it another reference/base (pseudo-extended: instrumental: TEMPERED "
          "normalise_log_density: false standardise: false) to run without a search",
          "false");
  optional_positive(p, pre + ".init_scale", m.has_init_scale(), m.init_scale());
  if (m.has_batch_starts())
    in_range(p, pre + ".batch_starts", m.batch_starts(), 1, ModesDefaults::kMaxBatchStarts);
  if (m.has_max_starts()) {
    const std::int64_t lo = m.has_batch_starts() ? m.batch_starts() : 1;
    if (m.max_starts() < lo)
      p.add(pre + ".max_starts", "must be >= batch_starts (" + num(lo) + ")",
            num(std::int64_t{m.max_starts()}));
  }
  if (m.has_unseen_probability() &&
      !(m.unseen_probability() > 0.0 && m.unseen_probability() <= 1.0))
    p.add(pre + ".unseen_probability", "must be in (0, 1]", num(m.unseen_probability()));
  optional_at_least(p, pre + ".max_iterations", m.has_max_iterations(), m.max_iterations(), 1);
  optional_positive(p, pre + ".gradient_tolerance", m.has_gradient_tolerance(),
                    m.gradient_tolerance());
  optional_positive(p, pre + ".merge_distance", m.has_merge_distance(), m.merge_distance());
}

modes::ModeSearchSettings mode_search_settings(const v1::RunConfig& run) {
  v1::RunConfig filled = run;
  filled.mutable_modes()->set_enabled(true);
  fill_modes_defaults(filled);
  const auto& m = filled.modes();
  modes::ModeSearchSettings s;
  const auto seeds = expand_seeds(run);
  s.seed = seeds.empty() ? 0 : seeds.front();
  s.init_scale = m.init_scale();
  if (run.target().has_box_lower() && run.target().has_box_upper()) {
    s.box_lower = run.target().box_lower();
    s.box_upper = run.target().box_upper();
  }
  s.batch_starts = m.batch_starts();
  s.max_starts = m.max_starts();
  s.unseen_probability = m.unseen_probability();
  s.lbfgs.max_iterations = m.max_iterations();
  s.lbfgs.gradient_tolerance = m.gradient_tolerance();
  s.lbfgs.relative_tolerance = true;
  s.merge_distance = m.merge_distance();
  return s;
}

}  // namespace pemc::config
