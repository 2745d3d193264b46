#include "parallel/idle_wait.hpp"

#include <gtest/gtest.h>

namespace pemc::parallel {
namespace {

using std::chrono::microseconds;

// Idle waits sleep 50, 100, 200, ... us up to their longest sleep, and start over after work.
TEST(IdleBackoff, DoublesUpToTheLongestSleepAndResets) {
  IdleBackoff backoff(microseconds(300));
  EXPECT_EQ(backoff.next(), kFirstSleep);
  backoff.sleep();
  EXPECT_EQ(backoff.next(), microseconds(100));
  backoff.sleep();
  EXPECT_EQ(backoff.next(), microseconds(200));
  backoff.sleep();
  EXPECT_EQ(backoff.next(), microseconds(300));
  backoff.sleep();
  EXPECT_EQ(backoff.next(), microseconds(300));
  backoff.reset();
  EXPECT_EQ(backoff.next(), kFirstSleep);
}

TEST(IdleBackoff, DefaultLongestSleepBoundsTheAnswerTime) {
  IdleBackoff backoff;
  int sleeps = 0;
  while (backoff.next() < kLongestSleep && sleeps < 20) {
    backoff.sleep();
    ++sleeps;
  }
  EXPECT_EQ(sleeps, 7);  // 50 us * 2^7 > 5 ms
  backoff.sleep();
  EXPECT_EQ(backoff.next(), kLongestSleep);
}

}  // namespace
}  // namespace pemc::parallel
