#include "runner/chain_status.hpp"

#include <stdexcept>

namespace pemc::runner {
namespace {

constexpr std::string_view kOkText = "ok";
constexpr std::string_view kCheckpointedText = "checkpointed";
constexpr std::string_view kRoundDoneText = "round done";

}  // namespace

std::string status_text(ChainStatus status) {
  switch (status) {
    case ChainStatus::kOk:
      return std::string(kOkText);
    case ChainStatus::kCheckpointed:
      return std::string(kCheckpointedText);
    case ChainStatus::kRoundDone:
      return std::string(kRoundDoneText);
    case ChainStatus::kFailed:
      break;
  }
  throw std::logic_error(
      "status_text: a failed chain's status needs its reason (failed_status_text)");
}

std::string failed_status_text(std::string_view why) { return "failed: " + std::string(why); }

ChainStatus parse_chain_status(std::string_view text) {
  if (text == kOkText) return ChainStatus::kOk;
  if (text == kCheckpointedText) return ChainStatus::kCheckpointed;
  if (text == kRoundDoneText) return ChainStatus::kRoundDone;
  return ChainStatus::kFailed;
}

std::string footer_status_text(int n_failed) {
  return n_failed == 0 ? std::string(kOkText) : std::to_string(n_failed) + " chain(s) failed";
}

}  // namespace pemc::runner
