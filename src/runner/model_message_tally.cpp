#include "runner/model_message_tally.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cstdint>

#include "records/describe_model_messages.hpp"
#include "records/model_message_list.hpp"

namespace pemc::runner {

using Kind = v1::ModelMessage::Kind;

void ModelMessageTally::add(const std::vector<targets::ModelMessage>& messages, bool initialising) {
  for (const auto& m : messages) {
    const Kind kind = m.kind == targets::ModelMessageKind::kOutputs ? v1::ModelMessage::OUTPUTS
                      : initialising                                ? v1::ModelMessage::INITIAL_POINT
                                                                    : v1::ModelMessage::PROPOSAL;
    const std::int64_t before = count(kind);
    if (before < kLogged)
      spdlog::warn("chain {}: the model {}: {}", chain_id_,
                   records::model_message_words(kind).event, m.text);
    if (before + 1 == kLogged)
      spdlog::warn("chain {}: further messages of this kind are counted in the chain's summary "
                   "(pemc-report summarize)",
                   chain_id_);
    records::add_model_message(entries_, kind, m.text, m.count);
  }
}

void ModelMessageTally::write(google::protobuf::RepeatedPtrField<v1::ModelMessage>& out) const {
  out.Clear();
  for (const auto& e : entries_) *out.Add() = e;
}

void ModelMessageTally::restore(const google::protobuf::RepeatedPtrField<v1::ModelMessage>& saved) {
  entries_.assign(saved.begin(), saved.end());
}

std::int64_t ModelMessageTally::count(Kind kind) const {
  std::int64_t n = 0;
  for (const auto& e : entries_)
    if (e.kind() == kind) n += e.count();
  return n;
}

std::string ModelMessageTally::first_text(Kind kind) const {
  for (const auto& e : entries_)
    if (e.kind() == kind && !e.text().empty()) return e.text();
  return "";
}

}  // namespace pemc::runner
