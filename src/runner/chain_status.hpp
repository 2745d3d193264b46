#pragma once
// How a chain ended, as the runner branches on it. Records keep the status as text
// (ChainSummary.status, Footer.status in records.proto): "ok", "failed: <why>" (or another text
// saying why the chain failed), and two texts that never reach a file because the runner acts on
// them first: "checkpointed" and "round done". This file is the one mapping between them.
#include <string>
#include <string_view>

#include "pemc/v1/records.pb.h"

namespace pemc::runner {

enum class ChainStatus {
  kOk,            // ran to the end
  kFailed,        // ended early; the text says why
  kCheckpointed,  // stopped at a kSaveAndStop checkpoint: not finished, continues on --resume
  kRoundDone,     // finished one round of a multi-round run: reported to the coordinator, not filed
};

// The text of a status that carries no reason (every status but kFailed).
std::string status_text(ChainStatus status);

// The text of a failed chain: "failed: " + why.
std::string failed_status_text(std::string_view why);

// The status a text stands for: the texts of status_text, and kFailed for every other text.
ChainStatus parse_chain_status(std::string_view text);

inline ChainStatus status_of(const pemc::v1::ChainSummary& summary) {
  return parse_chain_status(summary.status());
}

inline void set_status(pemc::v1::ChainSummary& summary, ChainStatus status) {
  summary.set_status(status_text(status));
}

// Footer.status: "ok" when no chain failed, else how many did.
std::string footer_status_text(int n_failed);
inline bool footer_ok(const pemc::v1::Footer& footer) {
  return footer.status() == status_text(ChainStatus::kOk);
}

}  // namespace pemc::runner
