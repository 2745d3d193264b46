// A chain's model messages (runner/model_message_tally.hpp): counted by kind, the first distinct
// texts kept with their counts and the rest folded into one entry, the same after a checkpoint;
// and their one-line description (records/describe_model_messages.hpp).
#include "runner/model_message_tally.hpp"

#include <gtest/gtest.h>

#include "records/describe_model_messages.hpp"

namespace pemc::runner {
namespace {

using targets::ModelMessage;
using targets::ModelMessageKind;

std::vector<ModelMessage> rejections(const std::vector<std::string>& texts) {
  std::vector<ModelMessage> out;
  for (const auto& t : texts) out.push_back({ModelMessageKind::kRejection, t});
  return out;
}

TEST(ModelMessageTally, KindsFollowThePhaseAndDistinctTextsAreKeptWithCounts) {
  ModelMessageTally tally(3);
  tally.add(rejections({"a", "a"}), /*initialising=*/true);
  tally.add(rejections({"b", "a"}), /*initialising=*/false);
  tally.add({{ModelMessageKind::kOutputs, "gq"}}, false);
  EXPECT_EQ(tally.count(v1::ModelMessage::INITIAL_POINT), 2);
  EXPECT_EQ(tally.count(v1::ModelMessage::PROPOSAL), 2);
  EXPECT_EQ(tally.count(v1::ModelMessage::OUTPUTS), 1);
  EXPECT_EQ(tally.first_text(v1::ModelMessage::PROPOSAL), "b");
  google::protobuf::RepeatedPtrField<v1::ModelMessage> saved;
  tally.write(saved);
  EXPECT_EQ(records::describe_model_messages(saved),
            "2 initial points rejected: 'a' (2); 2 proposals rejected: 'b' (1), 'a' (1); "
            "1 draws with outputs not computed: 'gq' (1)");
}

TEST(ModelMessageTally, TextsPastTheFirstFiveAreCountedTogether) {
  ModelMessageTally tally(0);
  tally.add(rejections({"1", "2", "3", "4", "5", "6", "7", "6", "1"}), false);
  google::protobuf::RepeatedPtrField<v1::ModelMessage> saved;
  tally.write(saved);
  ASSERT_EQ(saved.size(), 6);
  EXPECT_EQ(saved[0].text(), "1");
  EXPECT_EQ(saved[0].count(), 2);
  EXPECT_EQ(saved[5].text(), "");  // "6", "7", "6"
  EXPECT_EQ(saved[5].count(), 3);
  EXPECT_EQ(tally.count(v1::ModelMessage::PROPOSAL), 9);
  EXPECT_NE(records::describe_model_messages(saved).find("other messages (3)"), std::string::npos);
}

TEST(ModelMessageTally, ACheckpointRestoresTheTally) {
  ModelMessageTally before(1);
  before.add(rejections({"x", "y"}), false);
  google::protobuf::RepeatedPtrField<v1::ModelMessage> saved;
  before.write(saved);
  ModelMessageTally after(1);
  after.restore(saved);
  after.add(rejections({"x"}), false);
  google::protobuf::RepeatedPtrField<v1::ModelMessage> again;
  after.write(again);
  ASSERT_EQ(again.size(), 2);
  EXPECT_EQ(again[0].count(), 2);
  EXPECT_EQ(after.count(v1::ModelMessage::PROPOSAL), 3);
}

TEST(PendingModelMessages, KeepsABoundedNumberAndCountsTheRest) {
  targets::PendingModelMessages pending;
  for (int i = 0; i < 20; ++i) pending.add(ModelMessageKind::kRejection, std::to_string(i));
  const auto taken = pending.take();
  ASSERT_EQ(taken.size(), targets::PendingModelMessages::kMaxKept + 1);
  EXPECT_EQ(taken.back().count, 4);
  ModelMessageTally tally(0);
  tally.add(taken, false);
  EXPECT_EQ(tally.count(v1::ModelMessage::PROPOSAL), 20);
  EXPECT_TRUE(pending.take().empty());
}

}  // namespace
}  // namespace pemc::runner
