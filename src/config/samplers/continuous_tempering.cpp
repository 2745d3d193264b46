// Continuous tempering (ContinuousTemperingConfig, src/extended/continuous_tempering.hpp): the
// `continuous_tempering` sampler, with its optional bootstrap rounds.
#include "extended/continuous_tempering.hpp"

#include "config/limits.hpp"
#include "config/sampler_kinds.hpp"
#include "config/samplers/all_kinds.hpp"
#include "config/samplers/base_density_checks.hpp"
#include "config/samplers/local_kernel.hpp"
#include "extended/repeated_transition_kernel.hpp"

namespace pemc::config {

namespace {

const std::string kPath = "sampler.continuous_tempering";

void fill_defaults(v1::RunConfig& cfg) {
  auto& ct = *cfg.mutable_sampler()->mutable_continuous_tempering();
  fill_local_kernel_defaults_of(ct);
  // No base given: a mixture over the run's modes (any target with a gradient, Stan models
  // included), without the broad defensive component the tempering references carry. CT's log Z
  // weighs each x by the density of beta = 0 given x, which grows like Delta(x) = phi - psi where
  // the base has mass the target lacks: under a broad component, in the tails of a target whose
  // potential grows faster than the base's (a squared observation's x^4), those weights are
  // heavy-tailed and log Z comes out high (sqobs_d4: +0.095, 17 SEs, with weight 0.1; unbiased
  // without). The base proposals are the chain's global move instead.
  if (!ct.has_base() || ct.base().kind_case() == v1::BaseDensityConfig::KIND_NOT_SET)
    ct.mutable_base()->mutable_mixture()->set_defensive_weight(0.0);
  if (!ct.has_base_proposals()) ct.set_base_proposals(true);
  // Bootstrap rounds: each round's warmup defaults to the run's (already defaulted) warmup; the
  // refitted covariance is used as estimated.
  if (ct.has_bootstrap()) {
    auto& b = *ct.mutable_bootstrap();
    if (!b.has_warmup()) b.set_warmup(cfg.warmup());
    if (!b.has_covariance_scale()) b.set_covariance_scale(1.0);
  }
}

void check_continuous_tempering(const v1::ContinuousTemperingConfig& c, const std::string& pre,
                                Problems& p) {
  check_local_kernel_of(c, pre, p);
  check_base_density(c.base(), pre + ".base", p);
  optional_positive(p, pre + ".sigmoid_scale", c.has_sigmoid_scale(), c.sigmoid_scale());
  optional_positive(p, pre + ".control_mass", c.has_control_mass(), c.control_mass());
  if (c.has_sweeps_per_draw()) in_range(p, pre + ".sweeps_per_draw", c.sweeps_per_draw(), 1, 10000);
  optional_at_least(p, pre + ".n_batches", c.has_n_batches(), c.n_batches(), 2);
  if (c.has_initial_beta()) {
    const double b0 = c.initial_beta();
    if (c.variant() == v1::ContinuousTemperingConfig::JOINT && !(b0 > 0.0 && b0 < 1.0))
      p.add(pre + ".initial_beta", "must be in (0, 1) for the JOINT variant", num(b0));
    else if (!(b0 >= 0.0 && b0 <= 1.0))
      p.add(pre + ".initial_beta", "must be in [0, 1]", num(b0));
  }
}

// Bootstrap rounds (tempering.proto ContinuousTemperingBootstrapConfig). Needs the run: the
// rounds add to its iterations, and its checkpoints cannot hold the refitted bases.
void check_ct_bootstrap(const v1::RunConfig& cfg, const std::string& pre, Problems& p) {
  const auto& c = cfg.sampler().continuous_tempering();
  if (!c.has_bootstrap()) return;
  const auto& b = c.bootstrap();
  const std::string bp = pre + ".bootstrap";
  constexpr std::int64_t kMaxRounds = 100;
  if (b.rounds() < 1 || b.rounds() > kMaxRounds)
    p.add(bp + ".rounds",
          "must be in [1, " + num(kMaxRounds) +
              "] (bootstrap rounds before the final one; omit bootstrap for none)",
          num(std::int64_t{b.rounds()}));
  if (b.draws_per_round() < 1)
    p.add(bp + ".draws_per_round",
          "must be >= 1 (post-warmup draws per chain in a bootstrap round)",
          num(b.draws_per_round()));
  else if (b.draws_per_round() > kMaxIterations)
    p.add(bp + ".draws_per_round", "more than the limit " + num(kMaxIterations),
          num(b.draws_per_round()));
  if (b.has_warmup() && b.warmup() < 0) p.add(bp + ".warmup", "must be >= 0", num(b.warmup()));
  optional_positive(p, bp + ".covariance_scale", b.has_covariance_scale(), b.covariance_scale());
  if (b.has_keep_variance_ratio() && !(b.keep_variance_ratio() >= 1.0))
    p.add(bp + ".keep_variance_ratio", "must be >= 1 (1e300: always use the refit)",
          num(b.keep_variance_ratio()));
  if (!p.has(bp + ".rounds") && !p.has(bp + ".draws_per_round") && !p.has(bp + ".warmup") &&
      cfg.iterations() >= 0 && cfg.warmup() >= 0) {
    const double per_round =
        static_cast<double>(b.has_warmup() ? b.warmup() : cfg.warmup()) +
        static_cast<double>(b.draws_per_round()) *
            (c.has_sweeps_per_draw() && c.sweeps_per_draw() > 1 ? c.sweeps_per_draw() : 1);
    if (b.rounds() * per_round + static_cast<double>(cfg.warmup()) +
            static_cast<double>(cfg.iterations()) >
        static_cast<double>(kMaxIterations))
      p.add(bp + ".rounds",
            "rounds x (warmup + draws_per_round) + warmup + iterations is more than "
            "the limit " +
                num(kMaxIterations) + " (a bootstrap draw counts as sweeps_per_draw iterations)",
            num(std::int64_t{b.rounds()}));
  }
  if (cfg.checkpoint().every_seconds() > 0 || cfg.checkpoint().every_iterations() > 0)
    p.add(bp,
          "runs with bootstrap rounds cannot be checkpointed (a checkpoint does not hold the "
          "refitted bases): set checkpoint.every_seconds and checkpoint.every_iterations to 0");
}

// The inner HMC/NUTS kernel runs on the (x, u) space (JOINT) or on x | beta (GIBBS, wrapped in the
// Gibbs kernel); sweeps_per_draw > 1 repeats the whole transition per recorded draw.
SamplerSetup make(const v1::SamplerConfig& s, targets::TargetPtr target, parallel::GroupCommPtr,
                  const SamplerContext& context) {
  const auto& ct = s.continuous_tempering();
  const bool mixture = ct.base().kind_case() == v1::BaseDensityConfig::kMixture;
  // JOINT's space is (x, u'): u' gets unit scale.
  const MetricLayout layout = [](const Vector& diagonal, int space_dim) {
    if (space_dim == diagonal.size()) return diagonal;
    Vector out(space_dim);
    out << diagonal, Vector::Ones(space_dim - diagonal.size());
    return out;
  };
  auto made = extended::make_continuous_tempering(
      ct, target, local_kernel_maker_of(ct, kPath, context, layout),
      mixture ? &modes_of(context, kPath + ".base.mixture") : nullptr);
  if (ct.has_sweeps_per_draw() && ct.sweeps_per_draw() != 1)
    made.kernel = std::make_unique<extended::RepeatedTransitionKernel>(std::move(made.kernel),
                                                                       ct.sweeps_per_draw());
  return {std::move(made.space), std::move(made.kernel)};
}

}  // namespace

SamplerKind continuous_tempering_sampler_kind() {
  return {
      .kind = v1::SamplerConfig::kContinuousTempering,
      .name = "continuous_tempering",
      .apply_defaults = fill_defaults,
      .validate =
          [](const v1::RunConfig& c, std::optional<std::int64_t>, Problems& p) {
            check_continuous_tempering(c.sampler().continuous_tempering(), kPath, p);
            check_ct_bootstrap(c, kPath, p);
          },
      .make = make,
      .uses_modes =
          [](const v1::RunConfig& c) {
            return c.sampler().continuous_tempering().base().kind_case() ==
                   v1::BaseDensityConfig::kMixture;
          },
  };
}

}  // namespace pemc::config
