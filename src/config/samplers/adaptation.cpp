#include "config/samplers/adaptation.hpp"

#include <algorithm>

#include "warmup/pooled_schedule.hpp"

namespace pemc::config {

namespace {

// Stan's dual-averaging constants and adaptation windows (config.proto AdaptationConfig).
constexpr double kGamma = 0.05;
constexpr double kT0 = 10.0;
constexpr double kKappa = 0.75;
constexpr int kInitBuffer = 75;
constexpr int kTermBuffer = 50;
constexpr int kBaseWindow = 25;

}  // namespace

void fill_adaptation(v1::AdaptationConfig& a, double target_accept) {
  if (!a.has_target_accept()) a.set_target_accept(target_accept);
  if (!a.has_gamma()) a.set_gamma(kGamma);
  if (!a.has_t0()) a.set_t0(kT0);
  if (!a.has_kappa()) a.set_kappa(kKappa);
  if (!a.has_init_buffer()) a.set_init_buffer(kInitBuffer);
  if (!a.has_term_buffer()) a.set_term_buffer(kTermBuffer);
  if (!a.has_base_window()) a.set_base_window(kBaseWindow);
}

void fill_top_level_adaptation(v1::AdaptationConfig& a, bool adapt_metric) {
  if (!a.has_enabled()) a.set_enabled(true);
  if (!a.has_adapt_metric()) a.set_adapt_metric(adapt_metric);
}

void fill_pooled_default(v1::AdaptationConfig& a, const v1::RunConfig& run,
                         v1::MetricKind metric) {
  if (a.has_pooled()) return;
  const std::int64_t seeds =
      run.seeds().values_size() > 0 ? run.seeds().values_size() : run.seeds().count();
  const std::int64_t chains = seeds * std::max(1, run.chains_per_seed());
  a.set_pooled(chains >= 2 && a.enabled() && a.adapt_metric() && metric != v1::UNIT &&
               !warmup::pooled_warmup_problem(run.warmup()));
}

void check_adaptation(const v1::AdaptationConfig& a, const std::string& pre, Problems& p) {
  if (a.has_target_accept() && !(a.target_accept() > 0 && a.target_accept() < 1)) {
    p.add(pre + ".target_accept", "must be in (0, 1)", num(a.target_accept()));
  }
  if (a.has_gamma()) positive(p, pre + ".gamma", a.gamma());
  if (a.has_t0() && !(a.t0() >= 0)) p.add(pre + ".t0", "must be >= 0", num(a.t0()));
  // Dual averaging converges for kappa in (0.5, 1] (Hoffman & Gelman 2014, Section 3.2.1).
  if (a.has_kappa() && !(a.kappa() > 0.5 && a.kappa() <= 1)) {
    p.add(pre + ".kappa", "must be in (0.5, 1]", num(a.kappa()));
  }
  if (a.has_init_buffer() && a.init_buffer() < 0) {
    p.add(pre + ".init_buffer", "must be >= 0", num(std::int64_t{a.init_buffer()}));
  }
  if (a.has_term_buffer() && a.term_buffer() < 0) {
    p.add(pre + ".term_buffer", "must be >= 0", num(std::int64_t{a.term_buffer()}));
  }
  if (a.has_base_window() && a.base_window() < 1) {
    p.add(pre + ".base_window", "must be >= 1", num(std::int64_t{a.base_window()}));
  }
}

void check_step_size(bool has, double step_size, const v1::AdaptationConfig& a,
                     const std::string& pre, std::optional<std::int64_t> top_level_warmup,
                     Problems& p) {
  const std::string path = pre + ".step_size";
  if (has) {
    positive(p, path, step_size);
  } else if (!top_level_warmup) {
    p.add(path, "required for the kernel of a composite sampler (it is not searched for)");
  } else if (!a.enabled()) {
    p.add(path, "required when adaptation is disabled (only an adapting sampler searches for it)");
  } else if (*top_level_warmup <= 0) {
    p.add(path, "required when warmup is 0 (it is searched for at the start of warmup)");
  }
}

void check_pooled_warmup(const v1::AdaptationConfig& a, const std::string& pre,
                         const v1::RunConfig* run, v1::MetricKind metric, Problems& p) {
  if (a.has_pooled_window() && a.pooled_window() < 2)
    p.add(pre + ".pooled_window", "must be >= 2", num(std::int64_t{a.pooled_window()}));
  if (!a.pooled()) return;
  const std::string path = pre + ".pooled";
  if (!run) {
    p.add(path,
          "pooled warmup is for a top-level sampler.nuts or sampler.hmc, or the kernel of "
          "sampler.pseudo_extended, only (another composite sampler's kernel warms up inside its "
          "sampler)");
    return;
  }
  if (!a.enabled()) p.add(path, "needs adaptation.enabled: pooled warmup adapts the step size");
  if (metric == v1::UNIT)
    p.add(path, "needs a DIAGONAL or DENSE metric: with UNIT there is no metric to pool");
  if (const auto why = warmup::pooled_warmup_problem(run->warmup()))
    p.add(path, *why, "warmup " + num(run->warmup()));
}

std::optional<adapt::WarmupAdapterOptions> make_adaptation(const v1::AdaptationConfig& a,
                                                           double default_target) {
  if (!a.enabled()) return std::nullopt;
  adapt::WarmupAdapterOptions o;
  o.step_size.target_accept = a.has_target_accept() ? a.target_accept() : default_target;
  if (a.has_gamma()) o.step_size.gamma = a.gamma();
  if (a.has_t0()) o.step_size.t0 = a.t0();
  if (a.has_kappa()) o.step_size.kappa = a.kappa();
  o.adapt_metric = a.adapt_metric();
  if (a.has_init_buffer()) o.init_buffer = a.init_buffer();
  if (a.has_term_buffer()) o.term_buffer = a.term_buffer();
  if (a.has_base_window()) o.base_window = a.base_window();
  return o;
}

std::optional<Problem> short_warmup_warning(const v1::AdaptationConfig& a, bool metric_adaptable,
                                            std::int64_t warmup, const std::string& pre) {
  if (!a.enabled() || warmup < 0) return std::nullopt;  // a negative warmup is a problem
  const std::string path = pre + ".adaptation";
  const std::string got = "warmup " + num(warmup);
  if (warmup == 0)
    return Problem{path,
                   "warmup is 0, so nothing is adapted: step_size and the metric are used "
                   "as given",
                   got};
  if (!a.adapt_metric() || !metric_adaptable) return std::nullopt;
  if (warmup < adapt::kMinMetricWarmup)
    return Problem{path,
                   "warmup under " + num(adapt::kMinMetricWarmup) +
                       " iterations: only the step size is adapted, the metric stays as given",
                   got};
  const std::int64_t windows = std::int64_t{a.init_buffer()} + a.base_window() + a.term_buffer();
  if (warmup >= windows) return std::nullopt;
  const auto init = static_cast<std::int64_t>(adapt::kShortWarmupInitFraction * warmup);
  const auto term = static_cast<std::int64_t>(adapt::kShortWarmupTermFraction * warmup);
  return Problem{
      path,
      "warmup is shorter than init_buffer + base_window + term_buffer = " + num(windows) +
          ": the metric is estimated once, from warmup iterations " + num(init) + " to " +
          num(warmup - term - 1) + "; the step size alone adapts before and after",
      got};
}

}  // namespace pemc::config
