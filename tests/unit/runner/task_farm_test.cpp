// The coordinator's task farm (runner/task_farm.hpp): order, later rounds, waiting ranks, stop.
#include "runner/task_farm.hpp"

#include <gtest/gtest.h>

namespace pemc::runner {
namespace {

TEST(TaskFarm, HandsOutTasksInOrderThenNoneLeft) {
  TaskFarm farm({2, 0, 5}, nullptr);
  EXPECT_EQ(farm.take(), 2);
  EXPECT_EQ(farm.take(), 0);
  EXPECT_EQ(farm.take(), 5);
  EXPECT_EQ(farm.take(), TaskFarm::kNoneLeft);
  EXPECT_EQ(farm.take(), TaskFarm::kNoneLeft);
}

TEST(TaskFarm, WaitingRanksGetALaterRoundsItemsInTheOrderTheyAsked) {
  bool pending = true;
  TaskFarm farm({0, 1}, [&] { return pending; });
  EXPECT_EQ(farm.take(), 0);
  EXPECT_EQ(farm.take(), 1);
  // Round 0 is still running: ranks 3 and 1 ask and wait.
  EXPECT_EQ(farm.take(), TaskFarm::kWaitForRound);
  farm.wait(3);
  farm.wait(1);
  EXPECT_TRUE(farm.assign_waiting().empty());
  // Round 0 completed with one chain left (item 1 + 2 x round 1 = 3); another round follows.
  farm.add_ready(3);
  const auto first = farm.assign_waiting();
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0], std::make_pair(3, 3));
  // The last round completed with nothing more: the other waiting rank hears "none left".
  pending = false;
  const auto second = farm.assign_waiting();
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0], std::make_pair(1, TaskFarm::kNoneLeft));
}

TEST(TaskFarm, AStoppedFarmHandsOutNothingAndReleasesTheWaitingRanks) {
  TaskFarm farm({0, 1, 2}, [] { return true; });
  EXPECT_EQ(farm.take(), 0);
  farm.wait(4);
  farm.stop();
  EXPECT_EQ(farm.take(), TaskFarm::kNoneLeft);
  const auto released = farm.assign_waiting();
  ASSERT_EQ(released.size(), 1u);
  EXPECT_EQ(released[0], std::make_pair(4, TaskFarm::kNoneLeft));
}

}  // namespace
}  // namespace pemc::runner
