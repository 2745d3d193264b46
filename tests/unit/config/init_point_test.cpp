// The config's initial-point distribution (src/config/init_point.hpp): uniform_box bounds as one
// number for every coordinate (the same draws as before the vectors) or one per coordinate, and
// the errors for lengths that do not fit the target.
#include "config/init_point.hpp"

#include <google/protobuf/text_format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.hpp"

namespace pemc::config {
namespace {

using ::testing::HasSubstr;

v1::InitConfig init(const std::string& text) {
  v1::InitConfig c;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &c)) << text;
  return c;
}

std::string error_of(const v1::InitConfig& c, std::int64_t dim) {
  try {
    check_init_dimension(c, dim);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(InitPoint, ScalarBoundsDrawWhatTheyAlwaysDrew) {
  // lo + (hi - lo) u with one uniform per coordinate, in order: the formula of every earlier
  // version, so configs with scalar bounds keep their draws bit for bit.
  Vector x(3);
  rng::Stream s(5, rng::Domain::kInitialPoint, 2, 0);
  draw_initial_point(init("uniform_box { lower: -1 upper: 4 }"), s, x);
  rng::Stream t(5, rng::Domain::kInitialPoint, 2, 0);
  for (Eigen::Index i = 0; i < 3; ++i) EXPECT_EQ(x[i], -1.0 + (4.0 - -1.0) * t.uniform());
  // No lower: 0 (a proto3 scalar's default, as before).
  rng::Stream u(5, rng::Domain::kInitialPoint, 2, 0);
  draw_initial_point(init("uniform_box { upper: 10 }"), u, x);
  rng::Stream v(5, rng::Domain::kInitialPoint, 2, 0);
  for (Eigen::Index i = 0; i < 3; ++i) EXPECT_EQ(x[i], 10.0 * v.uniform());
}

TEST(InitPoint, PerCoordinateBoundsStayInTheirBoxes) {
  const auto c = init("uniform_box { lower: [0, -20, 5] upper: [1, -19, 5.001] }");
  const double lo[] = {0, -20, 5}, hi[] = {1, -19, 5.001};
  Vector x(3);
  for (std::uint64_t k = 0; k < 200; ++k) {
    rng::Stream s(1, rng::Domain::kInitialPoint, k, 0);
    draw_initial_point(c, s, x);
    for (int i = 0; i < 3; ++i) {
      EXPECT_GE(x[i], lo[i]);
      EXPECT_LT(x[i], hi[i]);
    }
  }
  // A vector and a scalar mix: the scalar is every coordinate's.
  const auto m = init("uniform_box { lower: [0, 100] upper: 200 }");
  Vector y(2);
  rng::Stream s(1, rng::Domain::kInitialPoint, 0, 0);
  draw_initial_point(m, s, y);
  EXPECT_LT(y[0], 200.0);
  EXPECT_GE(y[1], 100.0);
}

TEST(InitPoint, LengthsThatDoNotFitTheTargetAreNamed) {
  EXPECT_EQ(error_of(init("uniform_box { lower: [0, 1] upper: 3 }"), 2), "");
  EXPECT_THAT(error_of(init("uniform_box { lower: [0, 1, 2] upper: 3 }"), 2),
              HasSubstr("init.uniform_box.lower: has 3 numbers, the target's dimension is 2"));
  EXPECT_THAT(error_of(init("uniform_box { lower: 0 upper: [1, 2, 3] }"), 4),
              HasSubstr("init.uniform_box.upper: has 3 numbers, the target's dimension is 4"));
  EXPECT_THAT(error_of(init("uniform_box { lower: [0, 2] upper: [1, 1] }"), 2),
              HasSubstr("coordinate 2: lower 2, upper 1"));
  EXPECT_THAT(error_of(init("point { x: [1, 2] }"), 3),
              HasSubstr("init.point.x: has 2 numbers, the target's dimension is 3"));
  Vector x(2);
  rng::Stream s(1, rng::Domain::kInitialPoint, 0, 0);
  EXPECT_THROW(draw_initial_point(init("uniform_box { lower: [0, 1, 2] upper: 3 }"), s, x),
               ConfigError);
}

}  // namespace
}  // namespace pemc::config
