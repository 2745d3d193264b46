// The lp offset a run's header records (targets/lp_offset.hpp): measured at several points, kept
// only when they agree, nothing for a target without one.
#include "targets/lp_offset.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace pemc::targets {
namespace {

// A 1-D target whose lp_offset at x is offset(x), rejecting where that is nullopt.
class OffsetTarget final : public Target {
 public:
  using Fn = std::function<std::optional<double>(double)>;
  explicit OffsetTarget(Fn fn, bool has = true) : fn_(std::move(fn)), has_(has) {}
  int dim() const override { return 1; }
  std::string name() const override { return "offset"; }
  double potential(ConstVectorRef x) const override { return 0.5 * x[0] * x[0]; }
  double potential_and_gradient(ConstVectorRef x, VectorRef g) const override {
    g[0] = x[0];
    return potential(x);
  }
  bool has_lp_offset() const override { return has_; }
  std::optional<double> lp_offset(ConstVectorRef x) const override { return fn_(x[0]); }

 private:
  Fn fn_;
  bool has_;
};

// Points 0, 1, 2, ...: the attempt number.
void by_attempt(int attempt, VectorRef x) { x[0] = attempt; }

TEST(LpOffset, AConstantOffsetIsRecorded) {
  const OffsetTarget t([](double) { return -8.735; });
  const auto m = measure_lp_offset(t, by_attempt);
  ASSERT_TRUE(m.offset.has_value()) << m.problem;
  EXPECT_EQ(*m.offset, -8.735);
  EXPECT_EQ(m.values.size(), 3u);
  EXPECT_EQ(m.n_points_tried, 3);
  EXPECT_TRUE(m.problem.empty());
}

// Rounding at the size of the log densities is tolerated; a real dependence on x is not.
TEST(LpOffset, ValuesThatDisagreeRecordNothing) {
  const OffsetTarget rounded([](double x) { return 1000.0 + 1e-9 * x; });
  EXPECT_TRUE(measure_lp_offset(rounded, by_attempt).offset.has_value());
  const OffsetTarget varying([](double x) { return 1000.0 + 1e-4 * x; });
  const auto m = measure_lp_offset(varying, by_attempt);
  EXPECT_FALSE(m.offset.has_value());
  EXPECT_NE(m.problem.find("disagree (1000, 1000.0001, 1000.000"), std::string::npos) << m.problem;
  // Near 0 the tolerance is absolute (1e-8).
  const OffsetTarget small([](double x) { return 1e-7 * x; });
  EXPECT_FALSE(measure_lp_offset(small, by_attempt).offset.has_value());
}

// Rejected points are skipped; too few valid ones record nothing.
TEST(LpOffset, RejectedPointsAreSkipped) {
  const OffsetTarget some([](double x) -> std::optional<double> {
    if (static_cast<int>(x) % 2 == 0) return std::nullopt;
    return 2.5;
  });
  const auto m = measure_lp_offset(some, by_attempt);
  ASSERT_TRUE(m.offset.has_value()) << m.problem;
  EXPECT_EQ(m.n_points_tried, 6);  // 1, 3, 5 gave values
  const OffsetTarget one([](double x) -> std::optional<double> {
    if (x != 4) return std::nullopt;
    return 2.5;
  });
  const auto n = measure_lp_offset(one, by_attempt);
  EXPECT_FALSE(n.offset.has_value());
  EXPECT_EQ(n.n_points_tried, LpOffsetOptions{}.max_points);
  EXPECT_NE(n.problem.find("at 1 of 20 points, fewer than 2"), std::string::npos) << n.problem;
}

TEST(LpOffset, ATargetWithoutOneDrawsNoPoint) {
  const OffsetTarget none([](double) { return 1.0; }, /*has=*/false);
  int drawn = 0;
  const auto m = measure_lp_offset(none, [&drawn](int, VectorRef) { ++drawn; });
  EXPECT_FALSE(m.offset.has_value());
  EXPECT_TRUE(m.problem.empty());
  EXPECT_EQ(drawn, 0);
}

}  // namespace
}  // namespace pemc::targets
