#pragma once
// What a model says when it rejects a point or cannot compute a draw's outputs: for a Stan model,
// the text of the exception it threw, located in the model ("... (in 'model' at line 20)"). The
// target keeps them until the chain that asked drains them (Target::take_model_messages); the
// chain counts them, logs the first ones and keeps them in its summary (runner/model_message_tally).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace pemc::targets {

enum class ModelMessageKind {
  kRejection,  // the log density threw or gave no value: the point was rejected
  kOutputs,    // a draw's outputs (Stan's generated quantities) were not all computed
};

struct ModelMessage {
  ModelMessageKind kind;
  std::string text;
  std::int64_t count = 1;  // how many times the model said it
};

// The messages a target holds between drains. Bounded: past kMaxKept messages only the count
// grows (a chain drains after every transition, so this bounds one transition's messages).
class PendingModelMessages {
 public:
  static constexpr std::size_t kMaxKept = 16;

  // Stan's located messages end in a newline: trailing white space is dropped.
  void add(ModelMessageKind kind, std::string text) {
    if (kept_.size() >= kMaxKept) {
      ++dropped_;
      return;
    }
    text.erase(text.find_last_not_of(" \t\r\n") + 1);
    kept_.push_back({kind, std::move(text)});
  }
  // The kept messages, oldest first; the messages past the bound come back as one, of the last
  // kept one's kind, with their count.
  std::vector<ModelMessage> take() {
    std::vector<ModelMessage> out;
    out.swap(kept_);
    if (dropped_ > 0) {
      out.push_back({out.back().kind,
                     "(messages past the first " + std::to_string(kMaxKept) + " of one step)",
                     dropped_});
      dropped_ = 0;
    }
    return out;
  }

 private:
  std::vector<ModelMessage> kept_;
  std::int64_t dropped_ = 0;
};

}  // namespace pemc::targets
