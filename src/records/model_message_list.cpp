#include "records/model_message_list.hpp"

namespace pemc::records {

void add_model_message(std::vector<v1::ModelMessage>& list, v1::ModelMessage::Kind kind,
                       const std::string& text, std::int64_t count) {
  int distinct = 0;
  v1::ModelMessage* other = nullptr;
  for (auto& e : list) {
    if (e.kind() != kind) continue;
    if (e.text().empty()) {
      other = &e;
      continue;
    }
    ++distinct;
    if (e.text() == text) {
      e.set_count(e.count() + count);
      return;
    }
  }
  if (!text.empty() && distinct < kModelMessageTextsKept) {
    auto& e = list.emplace_back();
    e.set_kind(kind);
    e.set_text(text);
    e.set_count(count);
    return;
  }
  if (other == nullptr) {
    other = &list.emplace_back();
    other->set_kind(kind);
  }
  other->set_count(other->count() + count);
}

void merge_model_messages(std::vector<v1::ModelMessage>& list,
                          const std::vector<v1::ModelMessage>& from) {
  for (const auto& e : from) add_model_message(list, e.kind(), e.text(), e.count());
}

}  // namespace pemc::records
