#include "records/describe_model_messages.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <vector>

namespace pemc::records {
namespace {

using Kind = v1::ModelMessage::Kind;

const char* counted(Kind kind) {
  switch (kind) {
    case v1::ModelMessage::INITIAL_POINT:
      return "initial points rejected";
    case v1::ModelMessage::PROPOSAL:
      return "proposals rejected";
    case v1::ModelMessage::OUTPUTS:
      return "draws with outputs not computed";
    default:
      return "messages";
  }
}

}  // namespace

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
    line += fmt::format("{} {}: {}", total, counted(kind), fmt::join(texts, ", "));
  }
  return line;
}

}  // namespace pemc::records
