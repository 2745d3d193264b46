// WeightedCovariance: the weighted mean and full covariance against a direct computation, merge,
// serialisation, and extreme log weights.
#include "estimators/weighted_covariance.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/numerics.hpp"
#include "support/direct_moments.hpp"

namespace pemc::estimators {
namespace {

struct Data {
  std::vector<Vector> x;
  std::vector<double> log_w;
};

Data random_data(int n, int d, double weight_spread, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> z;
  Data out;
  for (int i = 0; i < n; ++i) {
    Vector x(d);
    for (int j = 0; j < d; ++j) x[j] = z(rng) + 0.3 * j;
    if (d > 1) x[1] += 0.8 * x[0];  // correlated
    out.x.push_back(x);
    out.log_w.push_back(weight_spread * z(rng));
  }
  return out;
}

TEST(WeightedCovariance, MatchesDirectWeightedMoments) {
  for (int d : {1, 3, 7}) {  // below, at and above the AVX block of 4
    const auto data = random_data(500, d, 2.0, 11 + d);
    WeightedCovariance acc(d);
    for (std::size_t i = 0; i < data.x.size(); ++i) acc.add(data.x[i], data.log_w[i]);
    const auto direct = pemc::testing::direct_weighted_moments(data.x, data.log_w);
    EXPECT_TRUE(acc.mean().isApprox(direct.mean, 1e-12)) << d;
    EXPECT_TRUE(acc.covariance().isApprox(direct.covariance, 1e-11)) << d;
    EXPECT_EQ(acc.covariance(), acc.covariance().transpose());
  }
}

TEST(WeightedCovariance, HugeLogWeightsAndZeroWeights) {
  const auto data = random_data(200, 3, 1.0, 5);
  WeightedCovariance a(3), b(3);
  for (std::size_t i = 0; i < data.x.size(); ++i) {
    a.add(data.x[i], data.log_w[i]);
    b.add(data.x[i], data.log_w[i] + 800.0);  // exp(800) overflows a double
  }
  b.add(Vector::Constant(3, 1e6), -kInf);      // a zero weight moves nothing
  EXPECT_TRUE(b.mean().isApprox(a.mean(), 1e-12));
  EXPECT_TRUE(b.covariance().isApprox(a.covariance(), 1e-11));
  EXPECT_NEAR(b.log_sum() - a.log_sum(), 800.0, 1e-9);
  EXPECT_NEAR(b.ess(), a.ess(), 1e-9 * a.ess());
}

TEST(WeightedCovariance, MergeAndSerializeAreExact) {
  const auto data = random_data(300, 4, 1.5, 9);
  WeightedCovariance all(4), first(4), second(4);
  for (std::size_t i = 0; i < data.x.size(); ++i) {
    all.add(data.x[i], data.log_w[i]);
    (i < 120 ? first : second).add(data.x[i], data.log_w[i]);
  }
  first.merge(second);
  EXPECT_TRUE(first.mean().isApprox(all.mean(), 1e-13));
  EXPECT_TRUE(first.covariance().isApprox(all.covariance(), 1e-12));
  std::vector<double> flat;
  all.serialize(flat);
  ASSERT_EQ(flat.size(), WeightedCovariance::serialized_size(4));
  WeightedCovariance back(4);
  std::size_t pos = 0;
  back.deserialize(flat, pos);
  EXPECT_EQ(pos, flat.size());
  EXPECT_EQ(back.mean(), all.mean());
  EXPECT_EQ(back.covariance(), all.covariance());
  EXPECT_EQ(back.log_sum(), all.log_sum());
}

}  // namespace
}  // namespace pemc::estimators
