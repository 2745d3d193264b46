#include "records/model_message_list.hpp"

#include <gtest/gtest.h>

#include <string>

namespace pemc::records {
namespace {

using Kind = v1::ModelMessage::Kind;

std::int64_t total(const std::vector<v1::ModelMessage>& list, Kind kind) {
  std::int64_t n = 0;
  for (const auto& e : list)
    if (e.kind() == kind) n += e.count();
  return n;
}

// The first kModelMessageTextsKept distinct texts of a kind are kept with their counts, later
// ones counted in one entry without text; kinds are kept apart.
TEST(ModelMessageList, KeepsFirstTextsAndCountsTheRest) {
  std::vector<v1::ModelMessage> list;
  for (int i = 0; i < kModelMessageTextsKept + 3; ++i)
    add_model_message(list, v1::ModelMessage::PROPOSAL, "text " + std::to_string(i), 2);
  add_model_message(list, v1::ModelMessage::PROPOSAL, "text 0", 1);
  add_model_message(list, v1::ModelMessage::OUTPUTS, "text 0", 4);
  ASSERT_EQ(list.size(), static_cast<std::size_t>(kModelMessageTextsKept + 2));
  EXPECT_EQ(list[0].count(), 3);
  EXPECT_TRUE(list[kModelMessageTextsKept].text().empty());
  EXPECT_EQ(list[kModelMessageTextsKept].count(), 6);
  EXPECT_EQ(total(list, v1::ModelMessage::PROPOSAL), 2 * (kModelMessageTextsKept + 3) + 1);
  EXPECT_EQ(total(list, v1::ModelMessage::OUTPUTS), 4);
}

// Merging lists keeps every count: the merged list's totals per kind are the sums.
TEST(ModelMessageList, MergeKeepsEveryCount) {
  std::vector<v1::ModelMessage> a, b;
  for (int i = 0; i < 4; ++i) add_model_message(a, v1::ModelMessage::PROPOSAL, "a" + std::to_string(i), 1);
  for (int i = 0; i < 4; ++i) add_model_message(b, v1::ModelMessage::PROPOSAL, "b" + std::to_string(i), 2);
  add_model_message(b, v1::ModelMessage::PROPOSAL, "a0", 5);
  merge_model_messages(a, b);
  EXPECT_EQ(total(a, v1::ModelMessage::PROPOSAL), 4 + 8 + 5);
  EXPECT_EQ(a[0].count(), 6);
  ASSERT_EQ(a.size(), static_cast<std::size_t>(kModelMessageTextsKept + 1));
  EXPECT_EQ(a.back().count(), 6);  // b1, b2, b3 did not fit
}

}  // namespace
}  // namespace pemc::records
