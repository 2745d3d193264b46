#include "report/export_resample.hpp"

#include <fmt/format.h>

#include <cmath>
#include <random>
#include <span>

#include "core/error.hpp"
#include "core/numerics.hpp"
#include "report/draw_weights.hpp"

namespace pemc::report::export_detail {
namespace {

// How many copies of each sample of the chain to write.
void resample_chain(ChainScan& c, const RunScan& run, std::uint64_t seed) {
  std::seed_seq seq{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32),
                    static_cast<std::uint32_t>(c.chain_id)};
  std::mt19937_64 gen(seq);
  const auto uniform = [&gen] { return (static_cast<double>(gen() >> 11) + 0.5) * 0x1.0p-53; };
  c.copies.assign(c.log_weights.size(), 0);
  const bool within =
      !c.samples_per_draw.empty() && weights_within_draw(run.meta.sampler, c.max_samples);
  if (within) {
    std::size_t begin = 0;
    for (std::size_t i = 0; i < c.samples_per_draw.size(); ++i) {
      const auto n = static_cast<std::size_t>(c.samples_per_draw[i]);
      const double u = uniform();
      double cumulative = 0.0;
      std::size_t j = 0;
      bool any = false;
      for (; j < n; ++j) {
        const double p = std::exp(c.log_weights[begin + j]);
        any = any || p > 0;
        cumulative += p;
        if (u <= cumulative) break;
      }
      if (!any)
        throw DataError(
            fmt::format("export: resampling the weighted draws: draw {} of run '{}', chain {} "
                        "has no sample with positive weight{}",
                        i, c.run_id, c.chain_id, kUnresampledHint));
      if (j == n) j = n - 1;  // rounding: the normalised weights sum to 1 - epsilon
      ++c.copies[begin + j];
      begin += n;
    }
    return;
  }
  // Global weights: multinomial resampling of n_draws samples, by sorted uniforms (exponential
  // spacings) swept along the cumulative weights.
  const double lse =
      log_sum_exp(std::span<const double>(c.log_weights.data(), c.log_weights.size()));
  if (!std::isfinite(lse))
    throw DataError(
        fmt::format("export: resampling the weighted draws: run '{}', chain {} has no sample "
                    "with positive weight{}",
                    c.run_id, c.chain_id, kUnresampledHint));
  const auto n = static_cast<std::size_t>(c.n_draws);
  std::vector<double> points(n + 1);
  double total = 0;
  for (auto& p : points) total = p = total - std::log(uniform());
  std::size_t k = 0;
  double cumulative = 0;
  for (std::size_t s = 0; s < c.log_weights.size() && k < n; ++s) {
    cumulative += std::exp(c.log_weights[s] - lse);
    const bool last = s + 1 == c.log_weights.size();
    while (k < n && (last || points[k] / total <= cumulative)) {
      ++c.copies[s];
      ++k;
    }
  }
}

}  // namespace

bool resampling(const ExportOptions& options) {
  return options.resample.value_or(options.format == "netcdf");
}

void check_resample_options(const Scan& scan, const ExportOptions& options) {
  if (!resampling(options) || !options.include_warmup) return;
  for (const auto& id : scan.run_order) {
    const RunScan& run = scan.runs.at(id);
    if (!run.weighted) continue;
    const bool asked = options.resample.has_value();
    throw ConfigError(fmt::format(
        "export --format {}{} --include-warmup: run '{}' ({}) is weighted and its draws are "
        "resampled{}, but its warmup draws are not resampled: drop --include-warmup{}",
        options.format, asked ? " --resample" : "", id, run.meta.sampler,
        asked ? "" : " (the netcdf default)",
        options.format == "cmdstan" ? ""
                                    : ", or pass --no-resample for the weighted samples with "
                                      "their log weights, warmup included"));
  }
}

void resample_weighted_runs(Scan& scan, const ExportOptions& options) {
  for (auto& [id, run] : scan.runs) {
    if (!run.weighted) continue;
    for (auto& [chain_id, c] : run.chains) resample_chain(c, run, options.seed);
    run.resampled = true;
  }
}

int next_copies(const ChainScan& c, std::size_t& cursor) { return c.copies.at(cursor++); }

std::string resample_note(const Scan& scan, const ExportOptions& options) {
  std::string runs;
  int n_runs = 0;
  for (const auto& id : scan.run_order) {
    const RunScan& run = scan.runs.at(id);
    if (!run.resampled) continue;
    ++n_runs;
    std::int64_t draws = 0;
    for (const auto& [chain_id, c] : run.chains) draws += c.n_draws;
    runs += fmt::format("{}'{}' ({}, {} draws over {} chains)", runs.empty() ? "" : ", ", id,
                        run.meta.sampler, draws, run.chains.size());
  }
  if (runs.empty() || options.resample.has_value()) return "";
  return fmt::format(
      "weighted run{} {} {} resampled: one plain draw per draw, drawn by the samples' normalised "
      "weights (seed {}; --seed S to change it), which ArviZ's summaries, ESS and LOO can use "
      "as they are; --no-resample writes the weighted samples with their log weights instead "
      "(sample_stats/log_weight over dim weighted_sample; docs/reports.md)",
      n_runs == 1 ? "" : "s", runs, n_runs == 1 ? "was" : "were", options.seed);
}

}  // namespace pemc::report::export_detail
