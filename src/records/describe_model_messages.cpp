#include "records/describe_model_messages.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <vector>

namespace pemc::records {

using Kind = v1::ModelMessage::Kind;

ModelMessageWords model_message_words(Kind kind) {
  switch (kind) {
    case v1::ModelMessage::INITIAL_POINT:
      return {"rejected an initial point", "initial points rejected"};
    case v1::ModelMessage::PROPOSAL:
      return {"rejected a proposal", "proposals rejected"};
    case v1::ModelMessage::OUTPUTS:
      return {"could not compute a draw's outputs (they are NaN from the failure on)",
              "draws with outputs not computed"};
    default:
      return {"said", "messages"};
  }
}

std::string describe_model_messages(
    const google::protobuf::RepeatedPtrField<v1::ModelMessage>& m) {
  std::string line;
  for (const Kind kind :
       {v1::ModelMessage::INITIAL_POINT, v1::ModelMessage::PROPOSAL, v1::ModelMessage::OUTPUTS}) {
    std::int64_t total = 0;
    std::vector<std::string> texts;
    for (const auto& e : m) {
      if (e.kind() != kind) continue;
      total += e.count();
      texts.push_back(e.text().empty() ? fmt::format("other messages ({})", e.count())
                                       : fmt::format("'{}' ({})", e.text(), e.count()));
    }
    if (total == 0) continue;
    if (!line.empty()) line += "; ";
    line += fmt::format("{} {}: {}", total, model_message_words(kind).counted, fmt::join(texts, ", "));
  }
  return line;
}

}  // namespace pemc::records
