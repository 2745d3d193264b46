// A target's truth as a record file's header keeps it (targets/truth_record.hpp): the numbers
// round-trip exactly, what is too large is left out with a note, an inconsistent record is refused.
#include "targets/truth_record.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace pemc::targets {
namespace {

TEST(TruthRecord, RoundTripsExactly) {
  Truth t;
  t.mean = Vector::LinSpaced(3, -1.0 / 3, 2.0 / 7);
  t.second_moment = Vector::Constant(3, 0.1);
  Matrix c(3, 3);
  c << 1, 2, 3, 4, 5, 6, 7, 8, 9.5;
  t.cross_moment = c;
  t.log_z = -12.25;
  t.extras["log_z_boltzmann"] = {3.5};
  t.extras["mean_s"] = {0.1, 0.2};
  const auto back = truth_from_record(truth_record(t), "here");
  EXPECT_EQ(*back.mean, *t.mean);
  EXPECT_EQ(*back.second_moment, *t.second_moment);
  EXPECT_EQ(*back.cross_moment, c);
  EXPECT_EQ(*back.log_z, -12.25);
  EXPECT_EQ(back.extras, t.extras);
  // Nothing known: nothing recorded, nothing read back.
  const auto empty = truth_from_record(truth_record(Truth{}), "here");
  EXPECT_FALSE(empty.mean || empty.log_z);
}

TEST(TruthRecord, TooLargeIsLeftOutWithANote) {
  Truth t;
  t.mean = Vector::Zero(kMaxRecordedTruthValues + 1);
  const auto r = truth_record(t);
  EXPECT_EQ(r.mean_size(), 0);
  EXPECT_NE(r.note().find("left out"), std::string::npos) << r.note();
  // A cross moment over the limit is dropped, the vectors kept.
  Truth u;
  u.mean = Vector::Zero(1001);
  u.cross_moment = Matrix::Zero(1001, 1001);
  const auto s = truth_record(u);
  EXPECT_EQ(s.mean_size(), 1001);
  EXPECT_EQ(s.cross_moment_size(), 0);
}

TEST(TruthRecord, InconsistentRecordsAreRefused) {
  v1::TargetTruth r;
  r.add_mean(1);
  r.add_mean(2);
  r.add_second_moment(1);
  EXPECT_THROW(truth_from_record(r, "run 'a'"), UntrustedInputError);
  r.add_second_moment(2);
  r.add_cross_moment(1);
  try {
    truth_from_record(r, "run 'a'");
    ADD_FAILURE() << "a cross moment of 1 entry for 2 coordinates was read";
  } catch (const UntrustedInputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "run 'a': the recorded truth is inconsistent: a cross moment of 1 entries for 2 "
              "coordinates");
  }
}

}  // namespace
}  // namespace pemc::targets
