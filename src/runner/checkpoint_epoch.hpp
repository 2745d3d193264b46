#pragma once
// The checkpoint-epoch protocol (docs/checkpointing.md). The coordinator opens an epoch when a stop
// was asked for (a signal, --stop-after-iterations) or a period is due, one at a time: it sends
// EpochBegin to every group leader; each leader answers at its chain's next iteration boundary (or
// between chains) with a CheckpointPart to the collector, which writes the checkpoint once every
// leader answered and tells the coordinator (kTagCkptWritten). A stop epoch ends the run: the task
// farm hands out nothing more and the leaders stop after answering.
//
// This file holds the protocol's state, without MPI: the coordinator's CheckpointEpochs and a
// leader's LeaderEpoch; the rank loop moves the messages.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "pemc/v1/checkpoint.pb.h"

namespace pemc::runner {

// kTagCkptBegin's message: the epoch and whether it stops the run.
struct EpochBegin {
  std::int64_t epoch = 0;
  bool stop = false;

  std::string encode() const;
  static EpochBegin decode(const std::string& bytes);
};

class CheckpointEpochs {
 public:
  using Clock = std::chrono::steady_clock;

  // Periods: every `every_seconds` of wall time and every `every_iterations` iterations per chain
  // (0: never). `last_written_*`: the checkpoint on disk when the run starts (0: none).
  CheckpointEpochs(double every_seconds, std::int64_t every_iterations, Clock::time_point start,
                   std::int64_t last_written_sequence, std::int64_t last_written_bytes);

  // Any rank: a stop with a checkpoint was asked for (here, or by a message to the coordinator).
  bool stop_requested() const { return stop_requested_; }
  void request_stop() { stop_requested_ = true; }

  // Coordinator: whether to open an epoch now, and whether it is a stop (nullopt: not now). None
  // while one is open, once the run stops, or when no chain is left (`idle`). `done_iterations`:
  // every chain's iterations so far; `n_leaders`: the chains running at once.
  std::optional<bool> due(Clock::time_point now, std::int64_t done_iterations,
                          std::size_t n_leaders, bool idle) const;
  // Opens the next epoch (a stop epoch also stops the run); returns the message for the leaders.
  EpochBegin open(bool stop);
  // The run stops: a stop epoch was opened.
  bool stopping() const { return stopping_; }
  // An epoch is open (until on_written).
  bool epoch_open() const { return epoch_active_; }
  // The collector's answer to the open epoch; logs it.
  void on_written(const pemc::v1::CheckpointPart& written, Clock::time_point now,
                  std::int64_t done_iterations);
  // The newest checkpoint on disk (sequence 0: none).
  std::int64_t last_written_sequence() const { return last_written_seq_; }
  std::int64_t last_written_bytes() const { return last_written_bytes_; }

 private:
  double every_seconds_;
  std::int64_t every_iterations_;
  bool stop_requested_ = false, stopping_ = false, epoch_active_ = false;
  std::int64_t epoch_ = 0, done_at_checkpoint_ = 0;
  Clock::time_point last_checkpoint_;
  std::int64_t last_written_seq_ = 0, last_written_bytes_ = 0;
};

// A group leader's side: the epoch it has to answer (-1: none) and whether it stopped.
struct LeaderEpoch {
  std::int64_t pending = -1;
  bool pending_stop = false;
  bool stopped = false;  // answered a stop epoch: runs no further chain

  bool open() const { return pending >= 0; }
  // The answer to the pending epoch; `part` holds the running chain's state (if any) and the
  // chains this leader finished are added by the caller.
  void answered() {
    if (pending_stop) stopped = true;
    pending = -1;
  }
};

}  // namespace pemc::runner
