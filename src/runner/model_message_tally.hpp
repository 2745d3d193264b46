#pragma once
// A chain's model messages (targets/model_messages.hpp): what the model said when it rejected an
// initial point or a proposal, or could not compute a draw's outputs. The chain drains its target
// after each step and adds the messages here; the first few of each kind are logged as they come
// (as Stan prints its "proposal is about to be rejected" messages), and the summary keeps the
// first distinct texts with their counts (records/model_message_list.hpp).
#include <cstdint>
#include <string>
#include <vector>

#include "pemc/v1/records.pb.h"
#include "targets/model_messages.hpp"

namespace pemc::runner {

class ModelMessageTally {
 public:
  static constexpr int kLogged = 3;        // messages logged per kind

  // The chain's id, for the log lines.
  explicit ModelMessageTally(int chain_id) : chain_id_(chain_id) {}

  // Adds drained messages: rejections as kInitialPoint while the chain looks for its initial
  // point, else as kProposal; outputs as kOutputs. Logs the first kLogged of each kind.
  void add(const std::vector<targets::ModelMessage>& messages, bool initialising);
  // The tally as records (summary and checkpoint alike), and back from a checkpoint.
  void write(google::protobuf::RepeatedPtrField<v1::ModelMessage>& out) const;
  void restore(const google::protobuf::RepeatedPtrField<v1::ModelMessage>& saved);
  // How many messages of this kind the chain has had.
  std::int64_t count(v1::ModelMessage::Kind kind) const;
  // The first kept text of this kind, or "" (for a failed chain's reason).
  std::string first_text(v1::ModelMessage::Kind kind) const;

 private:
  int chain_id_;
  std::vector<v1::ModelMessage> entries_;  // kept texts and the per-kind "other texts" entries
};

}  // namespace pemc::runner
