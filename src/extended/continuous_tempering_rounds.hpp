#pragma once
// Continuous tempering with bootstrap rounds (continuous_tempering_bootstrap.hpp) as a multi-round
// run for the runner (multi_round_run.hpp): round r < rounds of a chain runs
// bootstrap_round_config(run, r, base) with its own seed and reports the accumulator of its draws;
// the coordinator pools a round's reports, refits the base, logs and records the result and sends
// the next base to every worker; round `rounds` is the chain's recorded run.
#include <optional>

#include "extended/continuous_tempering_bootstrap.hpp"
#include "extended/multi_round_run.hpp"

namespace pemc::extended {

class ContinuousTemperingRounds final : public MultiRoundRun {
 public:
  // `run` must have bootstrap rounds (bootstrap_settings(run) set).
  ContinuousTemperingRounds(v1::RunConfig run, int run_index);

  int rounds() const override { return settings_.rounds; }
  std::int64_t extra_iterations_per_chain() const override;
  std::string describe() const override;
  std::string sampler_name() const override;

  void set_chains(std::vector<int> chain_ids) override;
  std::optional<RoundEnd> on_report(const std::string& report, double wall_seconds) override;
  bool rounds_pending() const override;

  std::unique_ptr<ChainRound> start_round(int chain_id, std::uint64_t seed, int round,
                                          const std::string* broadcast,
                                          const modes::ModeSet* modes) const override;

 private:
  v1::RunConfig run_;
  int run_index_;
  BootstrapSettings settings_;
  std::optional<BootstrapRounds> coordinator_;  // after set_chains
};

}  // namespace pemc::extended
