// Tests of the mergeable Rao-Blackwellised tempering accumulator (src/estimators/rb_tempering.hpp)
// against direct long double computations of eqs. (20)-(22), merge/serialize exactness, and
// extreme log weights.
#include "estimators/rb_tempering.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "core/error.hpp"

namespace pemc::estimators {
namespace {

struct Draw {
  Vector x;
  double lw0, lw1;
};

std::vector<Draw> make_draws(int n, int d, double offset, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> normal(0.5, 1.5);
  std::uniform_real_distribution<double> u(-3.0, 3.0);
  std::vector<Draw> out;
  for (int i = 0; i < n; ++i) {
    Vector x(d);
    for (int k = 0; k < d; ++k) x[k] = normal(gen);
    out.push_back({x, offset + u(gen), offset + u(gen)});
  }
  return out;
}

// Weighted mean and covariance with weights exp(lw - offset), in long double.
void reference(const std::vector<Draw>& draws, bool use_w1, double offset, Vector& mean, Matrix& cov,
               long double& log_sum) {
  const auto d = draws.front().x.size();
  long double sw = 0;
  std::vector<long double> sx(d, 0), sxx(d * d, 0);
  for (const auto& dr : draws) {
    const long double w = std::exp(static_cast<long double>((use_w1 ? dr.lw1 : dr.lw0) - offset));
    sw += w;
    for (int i = 0; i < d; ++i) {
      sx[i] += w * dr.x[i];
      for (int j = 0; j < d; ++j) sxx[i * d + j] += w * dr.x[i] * dr.x[j];
    }
  }
  mean.resize(d);
  cov.resize(d, d);
  for (int i = 0; i < d; ++i) mean[i] = static_cast<double>(sx[i] / sw);
  for (int i = 0; i < d; ++i)
    for (int j = 0; j < d; ++j)
      cov(i, j) = static_cast<double>(sxx[i * d + j] / sw - (sx[i] / sw) * (sx[j] / sw));
  log_sum = std::log(sw) + offset;
}

void expect_matches_reference(const TemperingRbAccumulator& acc, const std::vector<Draw>& draws,
                              double offset) {
  Vector m0, m1;
  Matrix c0, c1;
  long double ls0, ls1;
  reference(draws, false, offset, m0, c0, ls0);
  reference(draws, true, offset, m1, c1, ls1);
  EXPECT_NEAR(acc.log_sum_w0(), static_cast<double>(ls0), 1e-12 * std::max(1.0, std::fabs(offset)));
  EXPECT_NEAR(acc.log_sum_w1(), static_cast<double>(ls1), 1e-12 * std::max(1.0, std::fabs(offset)));
  EXPECT_NEAR(acc.log_z(2.5), 2.5 + static_cast<double>(ls1 - ls0), 1e-11);
  EXPECT_LT((acc.mean() - m1).cwiseAbs().maxCoeff(), 1e-12);
  EXPECT_LT((acc.base_mean() - m0).cwiseAbs().maxCoeff(), 1e-12);
  EXPECT_LT((acc.covariance() - c1).cwiseAbs().maxCoeff(), 1e-11);
  EXPECT_LT((acc.base_covariance() - c0).cwiseAbs().maxCoeff(), 1e-11);
}

TEST(TemperingRbAccumulator, MatchesDirectWeightedSums) {
  const auto draws = make_draws(500, 3, 0.0, 1);
  TemperingRbAccumulator acc;
  for (const auto& d : draws) acc.add(d.x, d.lw0, d.lw1);
  EXPECT_EQ(acc.count(), 500);
  EXPECT_EQ(acc.dim(), 3);
  expect_matches_reference(acc, draws, 0.0);
  // Symmetric covariance.
  EXPECT_LT((acc.covariance() - acc.covariance().transpose()).cwiseAbs().maxCoeff(), 1e-15);
}

TEST(TemperingRbAccumulator, HugeAndTinyLogWeightsDoNotOverflow) {
  for (double offset : {800.0, -800.0, 1e5}) {
    const auto draws = make_draws(300, 2, offset, 2);
    TemperingRbAccumulator acc(2);
    for (const auto& d : draws) acc.add(d.x, d.lw0, d.lw1);
    expect_matches_reference(acc, draws, offset);
  }
}

TEST(TemperingRbAccumulator, MergeEqualsSequentialAdds) {
  const auto draws = make_draws(600, 2, 0.0, 3);
  TemperingRbAccumulator whole, a, b, c;
  for (std::size_t i = 0; i < draws.size(); ++i) {
    whole.add(draws[i].x, draws[i].lw0, draws[i].lw1);
    (i < 100 ? a : i < 350 ? b : c).add(draws[i].x, draws[i].lw0, draws[i].lw1);
  }
  TemperingRbAccumulator merged;
  merged.merge(a);
  merged.merge(b);
  merged.merge(c);
  EXPECT_EQ(merged.count(), whole.count());
  EXPECT_NEAR(merged.log_z(0.0), whole.log_z(0.0), 1e-13);
  EXPECT_LT((merged.mean() - whole.mean()).cwiseAbs().maxCoeff(), 1e-13);
  EXPECT_LT((merged.covariance() - whole.covariance()).cwiseAbs().maxCoeff(), 1e-12);
  // Same merge order, same bits.
  TemperingRbAccumulator again;
  again.merge(a);
  again.merge(b);
  again.merge(c);
  EXPECT_EQ(again.serialize(), merged.serialize());
}

// The accumulator's sums are, bit for bit, those of the plain Eigen expressions (sum_x += w x and
// the lower triangle's rank-one update), whichever code path the CPU takes, for dimensions with and
// without a remainder beyond a multiple of 4, through rescalings and zero weights.
TEST(TemperingRbAccumulator, SumsAreBitIdenticalToTheEigenExpressions) {
  for (int d : {1, 2, 3, 4, 5, 8, 27, 30}) {
    auto draws = make_draws(200, d, 0.0, 10 + static_cast<std::uint64_t>(d));
    // Growing log weights (rescalings) and a zero weight.
    for (std::size_t i = 0; i < draws.size(); i += 37) draws[i].lw1 += 5.0 + 0.01 * i;
    draws[5].lw0 = -std::numeric_limits<double>::infinity();
    TemperingRbAccumulator acc;
    for (const auto& dr : draws) acc.add(dr.x, dr.lw0, dr.lw1);
    std::vector<double> expected{static_cast<double>(d), static_cast<double>(draws.size())};
    for (const bool w1 : {false, true}) {
      double shift = 0.0, sum_w = 0.0, sum_w2 = 0.0;
      Vector sum_x = Vector::Zero(d);
      Matrix sum_xx = Matrix::Zero(d, d);
      for (const auto& dr : draws) {
        const double lw = w1 ? dr.lw1 : dr.lw0;
        if (lw == -std::numeric_limits<double>::infinity()) continue;
        if (sum_w == 0.0) {
          shift = lw;
        } else if (lw > shift) {
          const double f = std::exp(shift - lw);
          sum_w *= f;
          sum_w2 *= f * f;
          sum_x *= f;
          sum_xx *= f;
          shift = lw;
        }
        const double w = std::exp(lw - shift);
        sum_w += w;
        sum_w2 += w * w;
        sum_x.noalias() += w * dr.x;
        sum_xx.selfadjointView<Eigen::Lower>().rankUpdate(dr.x, w);
      }
      expected.insert(expected.end(), {shift, sum_w, sum_w2});
      expected.insert(expected.end(), sum_x.data(), sum_x.data() + d);
      expected.insert(expected.end(), sum_xx.data(), sum_xx.data() + d * d);
    }
    const auto got = acc.serialize();
    ASSERT_EQ(got.size(), expected.size()) << "d " << d;
    for (std::size_t i = 0; i < got.size(); ++i)
      ASSERT_EQ(std::memcmp(&got[i], &expected[i], sizeof(double)), 0)
          << "d " << d << " entry " << i << ": " << got[i] << " vs " << expected[i];
  }
}

TEST(TemperingRbAccumulator, SerializeRoundTrips) {
  const auto draws = make_draws(50, 4, 10.0, 4);
  TemperingRbAccumulator acc;
  for (const auto& d : draws) acc.add(d.x, d.lw0, d.lw1);
  const auto data = acc.serialize();
  const auto back = TemperingRbAccumulator::deserialize(data);
  EXPECT_EQ(back.serialize(), data);
  EXPECT_EQ(back.count(), 50);
  std::vector<double> bad = data;
  bad.pop_back();
  EXPECT_THROW(TemperingRbAccumulator::deserialize(bad), DataError);
  EXPECT_THROW(TemperingRbAccumulator::deserialize(std::vector<double>{}), DataError);
}

TEST(TemperingRbAccumulator, RejectsBadInput) {
  TemperingRbAccumulator acc(2);
  EXPECT_THROW(acc.add(Vector::Zero(3), 0.0, 0.0), DataError);
  EXPECT_THROW(acc.add(Vector::Zero(2), std::nan(""), 0.0), NumericalError);
  EXPECT_THROW(acc.add(Vector::Zero(2), 0.0, std::numeric_limits<double>::infinity()), NumericalError);
  // -inf is a zero weight.
  acc.add(Vector::Ones(2), -std::numeric_limits<double>::infinity(), 0.0);
  EXPECT_EQ(acc.count(), 1);
  EXPECT_TRUE(std::isnan(acc.log_z(0.0)));  // no positive w0 yet
  acc.add(Vector::Zero(2), 0.0, -std::numeric_limits<double>::infinity());
  EXPECT_NEAR(acc.log_z(0.0), 0.0, 1e-15);
  EXPECT_EQ(acc.mean(), Vector::Ones(2));
  TemperingRbAccumulator other(3);
  other.add(Vector::Zero(3), 0.0, 0.0);
  EXPECT_THROW(acc.merge(other), DataError);
}

}  // namespace
}  // namespace pemc::estimators
