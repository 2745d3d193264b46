#pragma once
// A run whose chains run in rounds. Every chain runs round 0 and reports it; once every live chain
// has reported a round, the coordinator pools the reports (for example to refit a base density)
// and tells every worker what the next round needs; the final round's draws are the chain's
// records. The runner drives the protocol (task items, messages, waiting); an implementation knows
// what a round runs and what pooling a round does.
//
// Declared here rather than in the runner because the runner sits above extended/ and the
// implementations (continuous_tempering_rounds.hpp) live here: both see this header without an
// upward include, and the runner names no sampler.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "modes/mode_set.hpp"
#include "pemc/v1/config.pb.h"
#include "pemc/v1/records.pb.h"

namespace pemc::extended {

// One chain's one round on the ranks that run the chain.
class ChainRound {
 public:
  virtual ~ChainRound() = default;
  // The chain cannot run this round (e.g. the previous round's pooling failed): its final summary.
  virtual std::optional<v1::ChainSummary> refused() const = 0;
  // What to run: a plain run of the sampler and the seed of its streams.
  virtual const v1::RunConfig& config() const = 0;
  virtual std::uint64_t seed() const = 0;
  // The final round: its draws are the chain's records and its summary the chain's.
  virtual bool is_final() const = 0;
  // An earlier round: every record the chain emits (on the group's leader only). Returns a record
  // to write to the output in its place (valid until the next call), or nullptr for none.
  virtual const v1::Record* on_record(const v1::Record& record) = 0;
  // Iterations of the run's configured length that this chain will not run (from this round on,
  // e.g. a warmup that ended early): taken off the work left in the progress estimate.
  virtual std::int64_t skipped_iterations() const { return 0; }
  // The modes the sampler builds its reference or base from when they are not the run's search's
  // (a pooled warmup's fit to its draws, warmup/reference_fit.hpp); nullptr: the run's.
  virtual modes::ModeSetPtr reference_modes() const { return nullptr; }

  // What the round leaves once the chain ran it (not stopped at a checkpoint).
  struct Outcome {
    bool round_done = false;         // an earlier round finished: nothing to file
    pemc::v1::ChainSummary summary;  // otherwise the chain's final summary (final round, failure)
    std::string report;              // for the coordinator (leader only; empty: nothing to send)
  };
  virtual Outcome finish(v1::ChainSummary ran, bool leader) = 0;
};

class MultiRoundRun {
 public:
  virtual ~MultiRoundRun() = default;

  // Rounds before the final one (the final round's index).
  virtual int rounds() const = 0;
  // Iterations per chain (warmup included) that the earlier rounds add to the run's own.
  virtual std::int64_t extra_iterations_per_chain() const = 0;
  // What the run has, naming its config fields ("... rounds (sampler.x.y)"), for the messages
  // refusing checkpoints of runs that cannot save one (checkpoint_state() below).
  virtual std::string describe() const = 0;
  // The sampler's name in a message saying that a chain of this run cannot save a checkpoint.
  virtual std::string sampler_name() const = 0;

  // ---- coordinator
  // The chains of this job that run in rounds (ascending global chain id).
  virtual void set_chains(std::vector<int> chain_ids) = 0;
  // Records a chain's report. When it completes a round, logs the pooled result and returns what
  // the coordinator passes on; nullopt while the round is still running.
  struct RoundEnd {
    int next_round = 0;                 // the round the live chains run next
    std::vector<int> next_chains;       // their chain ids, ascending
    pemc::v1::Record record;            // the round's pooled estimates, for the output
    std::string broadcast;              // for every worker: what round next_round needs
  };
  virtual std::optional<RoundEnd> on_report(const std::string& report, double wall_seconds) = 0;
  // A round still running will hand out more items when it completes.
  virtual bool rounds_pending() const = 0;

  // ---- checkpoints
  // Whether a checkpoint can hold the run (checkpoint_state() and restore() below).
  virtual bool can_checkpoint() const { return false; }
  // Coordinator: what a checkpoint holds of the pooling, taken while no round completes (the
  // coordinator holds reports back during a checkpoint epoch).
  virtual std::string checkpoint_state() const { return {}; }
  // Where a run restored from checkpoint_state()'s bytes continues.
  struct ResumePoint {
    int round = 0;            // the round its chains run (their task farm items)
    std::vector<int> chains;  // the chains that run it, ascending
    std::string broadcast;    // the broadcast that started it (empty for round 0)
    // The round starts again: what its chains did in it before the checkpoint is void (their
    // states, final summaries of chains that failed in it, and their warmup draws numbered from
    // `warmup_before` on). Otherwise (the final round) each chain resumes from its own state.
    bool restarts = false;
    std::int64_t warmup_before = 0;  // warmup iterations each chain ran in earlier rounds
  };
  // Any rank (the coordinator's continues pooling from it); call after set_chains(). DataError on
  // bytes that are not such a state.
  virtual ResumePoint restore(const std::string& state) {
    (void)state;
    throw DataError("a checkpoint holds the rounds of a run (" + describe() +
                    ") that cannot be checkpointed");
  }

  // ---- worker
  // Round `round` of a chain; `broadcast` is the coordinator's message after round - 1 (nullptr
  // for round 0).
  // `modes`: the run's mode search (nullptr: none ran).
  virtual std::unique_ptr<ChainRound> start_round(int chain_id, std::uint64_t seed, int round,
                                                  const std::string* broadcast,
                                                  const modes::ModeSet* modes) const = 0;
};

}  // namespace pemc::extended
