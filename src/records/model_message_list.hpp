#pragma once
// A list of model messages as ChainSummary.model_messages keeps them (records.proto): per kind,
// the first kTextsKept distinct texts with their counts, and one entry with an empty text that
// counts the other texts. A chain's tally (runner/model_message_tally.hpp) adds messages one at a
// time; a chain that runs in rounds (pooled warmup) merges its rounds' lists into one.
#include <cstdint>
#include <string>
#include <vector>

#include "pemc/v1/records.pb.h"

namespace pemc::records {

inline constexpr int kModelMessageTextsKept = 5;  // distinct texts kept per kind

// Adds `count` messages of `kind` saying `text` ("" for texts already counted as other).
void add_model_message(std::vector<v1::ModelMessage>& list, v1::ModelMessage::Kind kind,
                       const std::string& text, std::int64_t count);

// Adds every entry of `from` to `list` (texts already in it add to their counts).
void merge_model_messages(std::vector<v1::ModelMessage>& list,
                          const std::vector<v1::ModelMessage>& from);

}  // namespace pemc::records
