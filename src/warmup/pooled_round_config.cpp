#include "warmup/pooled_round_config.hpp"

#include <cmath>

#include "core/error.hpp"
#include "extended/pseudo_extended.hpp"

namespace pemc::warmup {
namespace {

template <class KernelConfig>
void clear_pooling(KernelConfig& k) {
  auto& a = *k.mutable_adaptation();
  a.clear_pooled();
  a.clear_pooled_window();
  a.set_adapt_metric(false);  // the coordinator estimates the metric
}

// Sets one round's kernel fields of a NutsConfig or HmcConfig (the same names in both): `metric`
// (empty: the configured one), and the step size the round starts from.
template <class KernelConfig>
void set_round_kernel(KernelConfig& k, const RoundPlan& plan, const RoundBroadcast* b,
                      int chain_id, const std::vector<double>& metric) {
  clear_pooling(k);
  if (!metric.empty()) k.mutable_inverse_metric()->Assign(metric.begin(), metric.end());
  if (plan.phase == Phase::kSample) {
    k.mutable_adaptation()->set_enabled(false);
    k.set_step_size(b->chains.at(chain_id).step_size);
  } else if (plan.phase != Phase::kInit) {
    // A new metric: the chain searches its step size again, as Stan does after each window.
    k.clear_step_size();
  }
}

// The metric of a round on the target: the pooled one once a window has been pooled, else
// `initial_metric` (empty: the configured one).
const std::vector<double>& target_metric(const RoundBroadcast* b,
                                         const std::vector<double>& initial_metric) {
  return b && !b->inverse_metric.empty() ? b->inverse_metric : initial_metric;
}

// A warmup round's lengths and output: `iterations` of warmup, every draw to the round's report.
void set_warmup_round(v1::RunConfig& c, std::int64_t iterations) {
  c.set_warmup(iterations);
  c.set_iterations(0);
  auto* out = c.mutable_output();
  out->set_thin(1);
  out->set_write_warmup(true);  // the round's draws feed its report (and, if asked, the output)
  out->set_estimates_every(0);
}

void set_start(v1::RunConfig& c, const Vector& x) {
  c.mutable_init()->mutable_point()->mutable_x()->Assign(x.data(), x.data() + x.size());
}

// A pseudo-extended run's round on the target itself (init, windows): its kernel as a top-level
// sampler, starting its step-size search afresh (the configured step size is the extended space's).
v1::RunConfig target_round_config(const v1::RunConfig& run, const RoundPlan& plan,
                                  const RoundBroadcast* b, int chain_id,
                                  const std::vector<double>& initial_metric) {
  v1::RunConfig c = run;
  const auto& pe = run.sampler().pseudo_extended();
  auto* s = c.mutable_sampler();
  const auto set = [&](auto& k) {
    k.clear_inverse_metric();  // a configured one has the extended space's dimension
    set_round_kernel(k, plan, b, chain_id, target_metric(b, initial_metric));
    k.clear_step_size();
  };
  if (pe.has_nuts()) {
    auto k = pe.nuts();
    set(k);
    *s->mutable_nuts() = std::move(k);
  } else {
    auto k = pe.hmc();
    set(k);
    *s->mutable_hmc() = std::move(k);
  }
  if (b) set_start(c, b->chains.at(chain_id).state);
  set_warmup_round(c, plan.iterations);
  return c;
}

// A pseudo-extended run's round on the extended space (term, sample): the pooled metric laid out
// over the pseudo-samples and temperatures.
v1::RunConfig extended_round_config(const v1::RunConfig& run, const RoundPlan& plan,
                                    const RoundBroadcast& b, int chain_id) {
  v1::RunConfig c = run;
  auto& pe = *c.mutable_sampler()->mutable_pseudo_extended();
  const bool dense = pooled_metric_is_dense(run);
  const auto entries = static_cast<std::int64_t>(b.inverse_metric.size());
  const auto d = dense ? static_cast<std::int64_t>(std::llround(std::sqrt(entries))) : entries;
  if (d < 1 || (dense && d * d != entries))
    throw DataError("pooled warmup: the broadcast before the extended rounds has no metric");
  const auto metric = extended::extended_inverse_metric(pe, b.inverse_metric, d, dense);
  // The terminal buffer searches its step size on the extended space and adapts it; sampling
  // runs at the one the broadcast gives the chain.
  const auto set = [&](auto& k) { set_round_kernel(k, plan, &b, chain_id, metric); };
  if (pe.has_nuts())
    set(*pe.mutable_nuts());
  else
    set(*pe.mutable_hmc());
  // The terminal buffer starts every pseudo-sample at the chain's state on the target; sampling
  // starts from the full extended state the terminal buffer left.
  set_start(c, b.chains.at(chain_id).state);
  if (plan.phase == Phase::kSample)
    c.set_warmup(0);
  else
    set_warmup_round(c, plan.iterations);
  return c;
}

}  // namespace

const v1::AdaptationConfig* pooled_adaptation(const v1::RunConfig& run) {
  const auto& s = run.sampler();
  if (s.has_nuts()) return &s.nuts().adaptation();
  if (s.has_hmc()) return &s.hmc().adaptation();
  if (s.has_pseudo_extended()) {
    const auto& pe = s.pseudo_extended();
    if (pe.has_nuts()) return &pe.nuts().adaptation();
    if (pe.has_hmc()) return &pe.hmc().adaptation();
  }
  return nullptr;
}

bool has_pooled_warmup(const v1::RunConfig& run) {
  const auto* a = pooled_adaptation(run);
  return a && a->pooled();
}

bool pools_pseudo_extended(const v1::RunConfig& run) {
  return run.sampler().has_pseudo_extended() && has_pooled_warmup(run);
}

std::string pooled_field(const v1::RunConfig& run) {
  const auto& s = run.sampler();
  if (s.has_pseudo_extended())
    return std::string("sampler.pseudo_extended.") +
           (s.pseudo_extended().has_hmc() ? "hmc" : "nuts") + ".adaptation.pooled";
  return std::string("sampler.") + (s.has_hmc() ? "hmc" : "nuts") + ".adaptation.pooled";
}

bool pooled_metric_is_dense(const v1::RunConfig& run) {
  const auto& s = run.sampler();
  if (s.has_nuts()) return s.nuts().metric() == v1::DENSE;
  if (s.has_hmc()) return s.hmc().metric() == v1::DENSE;
  const auto& pe = s.pseudo_extended();
  return (pe.has_hmc() ? pe.hmc().metric() : pe.nuts().metric()) == v1::DENSE;
}

Pooling pooling_of(const v1::RunConfig& run) {
  return pools_pseudo_extended(run) ? Pooling::kWithinChains : Pooling::kAllDraws;
}

v1::RunConfig pooled_round_config(const v1::RunConfig& run, const RoundPlan& plan,
                                  const RoundBroadcast* b, int chain_id,
                                  const std::vector<double>& initial_metric) {
  if (plan.phase != Phase::kInit && !b)
    throw DataError("pooled warmup: a round after the first needs the coordinator's broadcast");
  if (pools_pseudo_extended(run))
    return plan.phase == Phase::kTerm || plan.phase == Phase::kSample
               ? extended_round_config(run, plan, *b, chain_id)
               : target_round_config(run, plan, b, chain_id, initial_metric);
  v1::RunConfig c = run;
  auto* s = c.mutable_sampler();
  if (s->has_nuts())
    set_round_kernel(*s->mutable_nuts(), plan, b, chain_id, target_metric(b, initial_metric));
  else if (s->has_hmc())
    set_round_kernel(*s->mutable_hmc(), plan, b, chain_id, target_metric(b, initial_metric));
  else
    throw ConfigError("pooled warmup needs a top-level sampler.nuts or sampler.hmc, or "
                      "sampler.pseudo_extended");
  if (b) set_start(c, b->chains.at(chain_id).state);
  if (plan.phase == Phase::kSample) {
    c.set_warmup(0);
    return c;
  }
  set_warmup_round(c, plan.iterations);
  return c;
}

std::vector<double> pooled_initial_metric(const v1::RunConfig& run, const modes::ModeSet* modes) {
  const auto& s = run.sampler();
  // A pseudo-extended run's configured metric is the extended space's: its target rounds start
  // from the modes' metric whatever it configures.
  const bool configured = s.has_nuts()   ? s.nuts().inverse_metric_size() > 0
                          : s.has_hmc() ? s.hmc().inverse_metric_size() > 0
                                        : false;
  if (!modes || modes->stand_in || configured) return {};
  const auto diagonal = modes->laplace_diagonal();
  if (!diagonal) return {};
  const auto d = static_cast<std::size_t>(diagonal->size());
  const bool dense = pooled_metric_is_dense(run);
  std::vector<double> out(dense ? d * d : d, 0.0);
  for (std::size_t i = 0; i < d; ++i)
    out[dense ? i * d + i : i] = (*diagonal)[static_cast<Eigen::Index>(i)];
  return out;
}

}  // namespace pemc::warmup
