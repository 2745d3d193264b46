// Chain status (runner/chain_status.hpp): the enum the runner branches on and the texts the
// records keep, which must not change.
#include "runner/chain_status.hpp"

#include <gtest/gtest.h>

namespace pemc::runner {
namespace {

TEST(ChainStatus, TextsAreTheRecordsOnes) {
  EXPECT_EQ(status_text(ChainStatus::kOk), "ok");
  EXPECT_EQ(status_text(ChainStatus::kCheckpointed), "checkpointed");
  EXPECT_EQ(failed_status_text("no initial point"), "failed: no initial point");
  EXPECT_EQ(footer_status_text(0), "ok");
  EXPECT_EQ(footer_status_text(3), "3 chain(s) failed");
}

TEST(ChainStatus, EveryTextMapsBack) {
  for (auto s : {ChainStatus::kOk, ChainStatus::kCheckpointed, ChainStatus::kRoundDone})
    EXPECT_EQ(parse_chain_status(status_text(s)), s);
  EXPECT_EQ(parse_chain_status(failed_status_text("x")), ChainStatus::kFailed);
  // Failures name their round in texts of their own; anything unknown is a failure.
  EXPECT_EQ(parse_chain_status("failed in bootstrap round 2 of 3: failed: x"),
            ChainStatus::kFailed);
  EXPECT_EQ(parse_chain_status(""), ChainStatus::kFailed);
  EXPECT_THROW(status_text(ChainStatus::kFailed), std::logic_error);
}

TEST(ChainStatus, FooterOkOnlyWhenNoChainFailed) {
  pemc::v1::Footer footer;
  footer.set_status(footer_status_text(0));
  EXPECT_TRUE(footer_ok(footer));
  footer.set_status(footer_status_text(1));
  EXPECT_FALSE(footer_ok(footer));
}

}  // namespace
}  // namespace pemc::runner
