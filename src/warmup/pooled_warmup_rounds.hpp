#pragma once
// Pooled warmup as a run whose chains run in rounds (extended/multi_round_run.hpp): round r of a
// chain is a plain run of the configured sampler (pooled_round_config.hpp: sampler.nuts or
// sampler.hmc, or pseudo-extended's two stages) from where the chain's previous round left it; the coordinator pools the rounds' reports
// (pooled_windows.hpp) and sends the next round (pooled_schedule.hpp) with the pooled metric,
// and for the final round the pooled step size. Only the final round's draws are the chain's
// post-warmup records; with output.write_warmup the earlier rounds' draws are written as its
// warmup draws, numbered on across rounds (a pseudo-extended run's: its terminal buffer's only, the
// rounds on the target drawing in another space than its records). Before the first pooled metric the chains use the
// modes' Laplace diagonal when the run's mode search found modes (pooled_initial_metric). After
// a window, a chain stuck far below the others restarts from another's state (stuck_chains.hpp).
// The chain's summary counts every round (gradients and time of the earlier rounds are warmup)
// and its estimates add "pooled_warmup_iterations", "pooled_warmup_converged" (1 or 0), the log
// density's "pooled_warmup_rhat" and "pooled_warmup_ess" over the windows its metric came from,
// and "pooled_warmup_restarts" when it was restarted.
#include <map>
#include <memory>
#include <optional>

#include "extended/multi_round_run.hpp"
#include "warmup/pooled_messages.hpp"
#include "warmup/pooled_round_config.hpp"
#include "warmup/pooled_schedule.hpp"
#include "warmup/pooled_windows.hpp"
#include "warmup/stuck_chains.hpp"

namespace pemc::warmup {

// The seed of round `round` of a chain of seed `seed` (the final round uses `seed` itself).
std::uint64_t pooled_round_seed(std::uint64_t seed, int round);

class PooledWarmupRounds final : public extended::MultiRoundRun {
 public:
  // `run` must have a pooled warmup (has_pooled_warmup).
  PooledWarmupRounds(v1::RunConfig run, int run_index);

  int rounds() const override { return max_rounds(sizes_); }
  std::int64_t extra_iterations_per_chain() const override { return 0; }
  std::string describe() const override;
  std::string sampler_name() const override;

  void set_chains(std::vector<int> chain_ids) override;
  std::optional<RoundEnd> on_report(const std::string& report, double wall_seconds) override;
  bool rounds_pending() const override;

  // Checkpoints: the coordinator's state at the start of the current round. A resumed run runs
  // that round again from its broadcast (a warmup round: every chain's state at its start is in
  // the broadcast) or, in the final round, each chain from its own checkpointed state.
  bool can_checkpoint() const override { return true; }
  std::string checkpoint_state() const override;
  ResumePoint restore(const std::string& state) override;

  std::unique_ptr<extended::ChainRound> start_round(int chain_id, std::uint64_t seed, int round,
                                                    const std::string* broadcast,
                                                    const modes::ModeSet* modes) const override;

 private:
  void log_restart(const ChainRestart& r) const;
  void log_round(Phase done, const RoundBroadcast& next, int n_reported) const;
  v1::Record round_record(const RoundBroadcast& next, double wall_seconds) const;

  v1::RunConfig run_;
  int run_index_;
  ScheduleSizes sizes_;
  // Coordinator state.
  int round_ = 0;
  RoundPlan plan_;
  std::vector<int> live_;
  std::map<int, ChainRoundReport> reports_;  // this round's, by chain id
  std::map<int, ChainTotals> totals_;
  WindowHistory history_;
  std::optional<WindowDecision> decision_;  // after the last window
  std::vector<double> inverse_metric_;
  std::map<int, ChainFit> fits_;  // pseudo-extended: what its reference is refitted to
  std::string broadcast_;  // the one that started the current round (empty in round 0)
};

}  // namespace pemc::warmup
