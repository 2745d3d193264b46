#pragma once
// The messages of a pooled warmup (pooled_warmup_rounds.hpp): a chain's report of the round it
// ran, to the coordinator, and the coordinator's broadcast of the next round, to every worker.
// Both travel as a KernelState (checkpoint.proto's generic named arrays), so a malformed message
// is a DataError naming the missing or mis-sized entry.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/types.hpp"
#include "pemc/v1/records.pb.h"
#include "warmup/pooled_schedule.hpp"
#include "warmup/pooled_windows.hpp"

namespace pemc::warmup {

// What a chain costs and what its model said, summed over the rounds it ran.
struct ChainTotals {
  std::int64_t gradient_evals = 0;
  std::int64_t extended_gradient_evals = 0;
  double wall_seconds = 0.0;
  double cpu_seconds = 0.0;
  // Its rounds' ChainSummary.model_messages, merged (records/model_message_list.hpp): the final
  // summary shows what the model rejected during warmup, as a chain's summary does without rounds.
  std::vector<v1::ModelMessage> model_messages;
  // Times the coordinator restarted it from another chain's state (stuck_chains.hpp).
  int restarts = 0;
  void add(const ChainTotals& o);
};

struct ChainRoundReport {
  int chain_id = 0;
  int round = 0;
  bool ok = true;              // the round's ChainSummary status was "ok"
  Vector last_state;           // the state after the round's last iteration
  double final_step_size = 0;  // dual averaging's final step size
  ChainTotals cost;            // of this round
  std::optional<ChainWindow> window;  // window rounds

  std::string encode() const;
  static ChainRoundReport decode(const std::string& bytes);
};

// The next round for every live chain.
struct RoundBroadcast {
  int round = 0;
  RoundPlan plan;
  std::vector<double> inverse_metric;  // empty: the configured metric (no window pooled yet)
  double step_size = 0.0;              // kSample: the pooled step size (0: none, see Chain)
  struct Chain {
    Vector state;          // where its next round starts
    ChainTotals totals;    // its rounds so far
    double step_size = 0;  // kSample: the step size it samples with
  };
  std::map<int, Chain> chains;  // live chains by id
  // Pseudo-extended, from the terminal buffer on: each chain's draws on the target over the windows
  // the metric came from, by chain id (what its reference is refitted to, reference_fit.hpp).
  std::map<int, ChainFit> fits;
  // How warmup went (kSample): what the final summaries and the log say.
  bool converged = false;
  double rhat = 0.0;
  double bulk_ess = 0.0;

  std::string encode() const;
  static RoundBroadcast decode(const std::string& bytes);
};

// What a checkpoint holds of the coordinator's side of a pooled warmup, taken between round
// completions: the broadcast that started the current round (empty for round 0), every window
// pooled so far and the decision after the last one. The current round's reports are not part of
// it: a resumed run runs that round again (pooled_warmup_rounds.hpp).
struct CoordinatorState {
  std::string broadcast;
  std::map<int, ChainTotals> totals;  // every chain that reported a round, failed ones included
  WindowHistory::Windows windows;
  std::optional<WindowDecision> decision;

  std::string encode() const;
  static CoordinatorState decode(const std::string& bytes);
};

}  // namespace pemc::warmup
