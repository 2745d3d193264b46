#include "extended/continuous_tempering_rounds.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/error.hpp"

namespace pemc::extended {
namespace {

// ChainSummary.status of a chain that ran to the end (records.proto; the runner's kOk).
constexpr const char* kOk = "ok";

// One chain's round: the round's plain continuous-tempering run and, for a bootstrap round, the
// accumulator of its post-warmup draws that the leader reports.
class CtChainRound final : public ChainRound {
 public:
  CtChainRound(const v1::RunConfig& run, const BootstrapSettings& settings, int chain_id,
               std::uint64_t seed, int round, std::optional<BootstrapBroadcast> base)
      : settings_(settings), chain_id_(chain_id), seed_(seed), round_(round) {
    if (base)
      if (const auto it = base->totals.find(chain_id); it != base->totals.end())
        prior_ = it->second;
    if (base && !base->base) {
      refused_ = failed(fmt::format("failed: bootstrap refit after round {} of {}: {}", round,
                                    settings.rounds, base->error),
                        nullptr);
      return;
    }
    config_ = bootstrap_round_config(run, round, base ? &*base->base : nullptr);
    report_.chain_id = chain_id;
    report_.round = round;
  }

  std::optional<v1::ChainSummary> refused() const override { return refused_; }
  const v1::RunConfig& config() const override { return config_; }
  std::uint64_t seed() const override {
    return is_final() ? seed_ : bootstrap_round_seed(seed_, round_);
  }
  bool is_final() const override { return round_ == settings_.rounds; }

  const v1::Record* on_record(const v1::Record& r) override {
    if (r.has_draw() && !r.draw().warmup()) report_.log_zeta = add_ct_draw(report_.acc, r.draw());
    return nullptr;
  }

  Outcome finish(v1::ChainSummary ran, bool leader) override {
    Outcome out;
    if (is_final()) {
      add_bootstrap_totals(ran, prior_, settings_);
      out.summary = std::move(ran);
      return out;
    }
    if (leader) out.report = report_of(ran).encode();
    if (ran.status() == kOk) {
      out.round_done = true;
      return out;
    }
    out.summary = failed(fmt::format("failed in bootstrap round {} of {}: {}", round_ + 1,
                                     settings_.rounds, ran.status()),
                         &ran);
    return out;
  }

 private:
  // The leader's report of a bootstrap round the chain ran: its accumulator and counts.
  BootstrapChainReport report_of(const v1::ChainSummary& ran) {
    BootstrapChainReport report = std::move(report_);
    report.status = ran.status();
    const auto se = ran.estimates().find("log_z_se");  // the same draws as report.acc
    if (se != ran.estimates().end()) report.log_z_se = se->second;
    const auto batches = ran.estimates().find("log_z_batches");
    if (batches != ran.estimates().end())
      report.log_z_batches = static_cast<std::int64_t>(batches->second);
    report.gradient_evals = ran.n_gradient_evals();
    report.extended_gradient_evals = ran.n_extended_gradient_evals();
    report.wall_seconds = ran.wall_seconds();
    report.cpu_seconds = ran.cpu_seconds();
    return report;
  }

  // The final summary of a chain that failed (in this round, or before it ran it), with the
  // totals of its earlier rounds.
  v1::ChainSummary failed(const std::string& why, const v1::ChainSummary* this_round) const {
    v1::ChainSummary s;
    s.set_chain_id(chain_id_);
    s.set_seed(seed_);
    s.set_status(why);
    if (this_round) {
      s.set_n_gradient_evals(this_round->n_gradient_evals());
      s.set_n_extended_gradient_evals(this_round->n_extended_gradient_evals());
      s.set_wall_seconds(this_round->wall_seconds());
      s.set_cpu_seconds(this_round->cpu_seconds());
    }
    add_bootstrap_totals(s, prior_, settings_);
    return s;
  }

  BootstrapSettings settings_;
  int chain_id_;
  std::uint64_t seed_;
  int round_;
  v1::ChainSummary prior_;  // this chain's bootstrap totals before this round
  std::optional<v1::ChainSummary> refused_;
  v1::RunConfig config_;
  BootstrapChainReport report_;
};

// The pooled round in the log: the round, its refit and the choice of the next base (the refit, or
// an earlier round's base when the refit's round did worse: continuous_tempering_base_choice.hpp).
void log_round(const std::string& run_name, const BootstrapRoundResult& result,
               const BootstrapSettings& settings) {
  const std::string line = run_name + ": " + describe(result, settings);
  if (!result.chosen_base)
    spdlog::error("{}", line);
  else if (!result.choice.warning.empty() || !result.choice.use_refit)
    spdlog::warn("{}", line);
  else
    spdlog::info("{}", line);
  for (Eigen::Index i = 0; i < result.mean.size(); ++i)
    spdlog::debug("{}: bootstrap round {}: E[x{}] = {:.6g} ± {:.3g}, Var = {:.6g} ± {:.3g}",
                  run_name, result.round + 1, i, result.mean[i], result.mean_se[i],
                  result.variance[i], result.variance_se[i]);
}

}  // namespace

ContinuousTemperingRounds::ContinuousTemperingRounds(v1::RunConfig run, int run_index)
    : run_(std::move(run)), run_index_(run_index) {
  const auto settings = bootstrap_settings(run_);
  if (!settings)
    throw ConfigError("run '" + run_.name() + "' has no continuous tempering bootstrap rounds");
  settings_ = *settings;
}

std::int64_t ContinuousTemperingRounds::extra_iterations_per_chain() const {
  return bootstrap_extra_iterations(run_);
}

std::string ContinuousTemperingRounds::describe() const {
  return "continuous tempering bootstrap rounds (sampler.continuous_tempering.bootstrap)";
}

std::string ContinuousTemperingRounds::sampler_name() const {
  return "continuous_tempering (with bootstrap rounds)";
}

void ContinuousTemperingRounds::set_chains(std::vector<int> chain_ids) {
  coordinator_.emplace(run_index_, settings_, std::move(chain_ids),
                       run_.sampler().continuous_tempering().base());
}

std::optional<MultiRoundRun::RoundEnd> ContinuousTemperingRounds::on_report(
    const std::string& bytes, double wall_seconds) {
  if (!coordinator_) throw DataError(run_.name() + ": a bootstrap report before set_chains");
  auto report = BootstrapChainReport::decode(bytes);
  if (!report.ok())
    spdlog::warn("{}: chain {} failed in bootstrap round {}; left out from now on: {}", run_.name(),
                 report.chain_id, report.round + 1, report.status);
  const auto result = coordinator_->on_report(std::move(report));
  if (!result) return std::nullopt;
  log_round(run_.name(), *result, settings_);
  RoundEnd end;
  end.record = bootstrap_snapshot(*result, run_.name(), settings_, wall_seconds);
  end.broadcast = coordinator_->broadcast(*result).encode();
  end.next_round = coordinator_->round();
  end.next_chains = coordinator_->live_chains();
  return end;
}

bool ContinuousTemperingRounds::rounds_pending() const {
  return coordinator_ && coordinator_->round() < settings_.rounds &&
         !coordinator_->live_chains().empty();
}

std::unique_ptr<ChainRound> ContinuousTemperingRounds::start_round(
    int chain_id, std::uint64_t seed, int round, const std::string* broadcast,
    const modes::ModeSet* /*modes: each round's sampler finds them in its own context*/) const {
  std::optional<BootstrapBroadcast> base;
  if (broadcast) base = BootstrapBroadcast::decode(*broadcast);
  return std::make_unique<CtChainRound>(run_, settings_, chain_id, seed, round, std::move(base));
}

}  // namespace pemc::extended
