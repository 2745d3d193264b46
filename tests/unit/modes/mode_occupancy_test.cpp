// Where draws fall among the modes found, and the run's verdict (modes/mode_occupancy.hpp).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "modes/mode_occupancy.hpp"
#include "modes/mode_search.hpp"
#include "pemc/v1/records.pb.h"
#include "rng/stream.hpp"
#include "targets/mixture.hpp"

namespace pemc::modes {
namespace {

using C = targets::GaussianMixture::Component;

// Two 1-D modes at -3 and +3 (sd 0.5), weights 0.7 and 0.3.
ModeSet two_modes() {
  auto m = std::make_shared<targets::GaussianMixture>(std::vector<C>{
      {0.7, Vector::Constant(1, -3.0), Vector::Constant(1, 0.25)},
      {0.3, Vector::Constant(1, 3.0), Vector::Constant(1, 0.25)}});
  ModeSearchSettings s;
  s.seed = 1;
  return search_modes(*m, s, serial_batches(*m, s));
}

TEST(ModeAssigner, NearestModeByLaplaceDensityAndOutside) {
  const auto set = two_modes();
  ASSERT_EQ(set.modes.size(), 2u);
  const ModeAssigner a(set);
  EXPECT_EQ(a.n_modes(), 2);
  EXPECT_EQ(a.assign(Vector::Constant(1, -2.5)), 0);
  EXPECT_EQ(a.assign(Vector::Constant(1, 2.0)), 1);
  // Between the modes, 6 sd from both: outside either's 1 - 1e-6 ellipsoid.
  EXPECT_EQ(a.assign(Vector::Constant(1, 0.02)), 2);
  // 1e-6 tail of chi^2_1: |z| > 4.89 sd = 2.45 from both modes.
  EXPECT_EQ(a.assign(Vector::Constant(1, 20.0)), 2);
  EXPECT_EQ(a.assign(Vector::Constant(1, 5.4)), 1);
  EXPECT_EQ(a.assign(Vector::Constant(1, 5.5)), 2);
  // best_mode never says outside: the mode that scores highest however far.
  EXPECT_EQ(a.best_mode(Vector::Constant(1, 20.0)), 1);
  EXPECT_EQ(a.best_mode(Vector::Constant(1, -20.0)), 0);
  EXPECT_EQ(a.best_mode(Vector::Constant(1, 2.0)), 1);
}

// Many modes of random shape: Hessians with condition numbers up to 1e8, shares from 1e-12 to 1,
// locations on a grid of spacing 1 to 4 (so that the assigner's bounds prune some, not all), and
// two identical modes (a tie: the lower index wins).
ModeSet random_modes(int dim, int n, std::uint64_t seed) {
  rng::Stream s(seed, rng::Domain::kTest, 1, 0);
  ModeSet set;
  set.dim = dim;
  for (int k = 0; k < n; ++k) {
    Mode m;
    m.location = Vector(dim);
    for (int i = 0; i < dim; ++i)
      m.location[i] = std::floor(8.0 * s.uniform()) * (1.0 + 3.0 * s.uniform());
    Matrix a(dim, dim);
    for (int i = 0; i < dim; ++i)
      for (int j = 0; j < dim; ++j) a(i, j) = s.normal();
    const Eigen::HouseholderQR<Matrix> qr(a);
    const Matrix q = qr.householderQ();
    Vector eig(dim);
    for (int i = 0; i < dim; ++i) eig[i] = std::pow(10.0, -4.0 + 8.0 * s.uniform());
    const Matrix h = q * eig.asDiagonal() * q.transpose();
    m.hessian_cholesky = Eigen::LLT<Matrix>(0.5 * (h + h.transpose())).matrixL();
    m.log_mass = std::log(1e-12) * s.uniform();
    set.modes.push_back(std::move(m));
  }
  set.modes.push_back(set.modes[3]);  // a duplicate of mode 3: equal scores everywhere
  return set;
}

TEST(ModeAssigner, PrunedSearchIsTheExhaustiveOne) {
  for (int dim : {1, 3, 16}) {
    const auto set = random_modes(dim, 300, static_cast<std::uint64_t>(dim));
    const ModeAssigner a(set);
    rng::Stream s(7, rng::Domain::kTest, 2, dim);
    int outside = 0, inside = 0;
    for (int i = 0; i < 3000; ++i) {
      // Near a random mode at a random scale, or anywhere in (and beyond) the grid.
      Vector x(dim);
      const auto& m = set.modes[static_cast<std::size_t>(s.uniform() * set.modes.size())];
      const double scale = std::pow(10.0, -3.0 + 5.0 * s.uniform());
      for (int j = 0; j < dim; ++j)
        x[j] = i % 3 == 2 ? 40.0 * s.uniform() - 5.0 : m.location[j] + scale * s.normal();
      if (i % 97 == 0) x = m.location;  // exactly at a mode (the duplicate's tie when mode 3)
      if (i % 10 == 1) x *= 1e6;          // beyond every mode's ellipsoid
      const int want = a.assign_exhaustively(x);
      ASSERT_EQ(a.assign(x), want) << "dim " << dim << " point " << i;
      outside += want == a.n_modes();
      inside += want < a.n_modes();
      ASSERT_NE(want, 300);  // the duplicate of mode 3 never wins the tie
    }
    EXPECT_GT(outside, 0) << dim;  // both kinds of answer occur
    EXPECT_GT(inside, 0) << dim;
    EXPECT_EQ(a.assign(set.modes[3].location), a.assign_exhaustively(set.modes[3].location));
    Vector nan = Vector::Constant(dim, std::numeric_limits<double>::quiet_NaN());
    EXPECT_EQ(a.assign(nan), a.n_modes());
    EXPECT_EQ(a.assign_exhaustively(nan), a.n_modes());
  }
}

// A chain that visits mode 0 with probability p per draw, independently.
v1::ModeOccupancy iid_chain(const ModeSet& set, double p, std::uint64_t seed, int n = 2000) {
  ModeOccupancy occ(set, n, false);
  rng::Stream s(seed, rng::Domain::kTest, 0, 0);
  for (int i = 0; i < n; ++i) occ.add(i, Vector::Constant(1, s.uniform() < p ? -3.0 : 3.0));
  return occ.to_record();
}

TEST(ModeOccupancy, SharesPerHalfAndKishSizes) {
  const auto set = two_modes();
  const auto r = iid_chain(set, 0.7, 5);
  EXPECT_EQ(r.first_half_size(), 3);
  EXPECT_DOUBLE_EQ(r.first_half_weight(), 1000.0);
  EXPECT_DOUBLE_EQ(r.second_half_ess(), 1000.0);
  // Binomial(1000, 0.7): sd 14.5; 4.5 sd.
  EXPECT_NEAR(r.first_half(0), 700.0, 65.0);
  EXPECT_EQ(r.first_half(2), 0.0);
}

TEST(ModeCheck, MixingChainsAreTrusted) {
  const auto set = two_modes();
  std::vector<v1::ModeOccupancy> chains;
  for (int c = 0; c < 4; ++c) chains.push_back(iid_chain(set, 0.7, 10 + c));
  std::vector<const v1::ModeOccupancy*> ptrs;
  for (const auto& c : chains) ptrs.push_back(&c);
  const auto check = check_mode_occupancy(ptrs, set.laplace_shares());
  EXPECT_FALSE(check.untrusted());
  EXPECT_LT(check.max_rhat, 1.01);
  EXPECT_NEAR(check.pooled_share[0], 0.7, 0.035);
  EXPECT_TRUE(describe_mode_doubts(check).empty());
}

TEST(ModeCheck, ChainsStuckInDifferentModesDisagree) {
  const auto set = two_modes();
  const auto a = iid_chain(set, 1.0, 1), b = iid_chain(set, 0.0, 2), c = iid_chain(set, 1.0, 3);
  const auto check = check_mode_occupancy({&a, &b, &c}, set.laplace_shares());
  EXPECT_TRUE(check.disagree);
  EXPECT_TRUE(std::isinf(check.max_rhat));
  EXPECT_TRUE(check.untrusted());
  const auto lines = describe_mode_doubts(check);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("disagree"), std::string::npos);
}

TEST(ModeCheck, AModeNoChainVisitedIsUntrusted) {
  // Every chain in mode 0 only (each consistent with itself: R-hat 1): mode 1 (Laplace share
  // 0.3) was found but never visited.
  const auto set = two_modes();
  const auto a = iid_chain(set, 1.0, 1), b = iid_chain(set, 1.0, 2);
  const auto check = check_mode_occupancy({&a, &b}, set.laplace_shares());
  EXPECT_FALSE(check.disagree);
  ASSERT_EQ(check.unvisited, std::vector<int>{1});
  EXPECT_TRUE(check.untrusted());
  EXPECT_NE(describe_mode_doubts(check)[0].find("#2"), std::string::npos);
}

TEST(ModeCheck, ATinyModeMayGoUnvisited) {
  const auto set = two_modes();
  const auto a = iid_chain(set, 1.0, 1, 200);
  // Laplace share 1e-4 of 200 draws: 0.02 expected, not a finding.
  const auto check = check_mode_occupancy({&a}, {1.0 - 1e-4, 1e-4});
  EXPECT_TRUE(check.unvisited.empty());
  EXPECT_FALSE(check.untrusted());
}

TEST(ModeCheck, OneChainThatSwitchedOnceDisagreesWithItself) {
  const auto set = two_modes();
  ModeOccupancy occ(set, 2000, false);
  for (int i = 0; i < 2000; ++i) occ.add(i, Vector::Constant(1, i < 1000 ? -3.0 : 3.0));
  const auto r = occ.to_record();
  const auto check = check_mode_occupancy({&r}, set.laplace_shares());
  EXPECT_TRUE(check.disagree);
}

TEST(ModeOccupancy, WeightedSamplesWithinAndAcrossDraws) {
  const auto set = two_modes();
  Matrix samples(1, 2);
  samples << -3.0, 3.0;
  // Within the draw (pseudo-extended): weights 3:1 of one unit.
  ModeOccupancy within(set, 10, true);
  within.add(0, samples, std::vector<double>{std::log(3.0), 0.0});
  auto r = within.to_record();
  EXPECT_NEAR(r.first_half(0), 0.75, 1e-12);
  EXPECT_NEAR(r.first_half_weight(), 1.0, 1e-12);
  // Across draws (CT, ST, AIS): huge log weights are rescaled, shares kept.
  ModeOccupancy across(set, 4, false);
  Matrix one(1, 1);
  one << -3.0;
  across.add(0, one, std::vector<double>{1000.0});
  one << 3.0;
  across.add(1, one, std::vector<double>{1000.0 + std::log(3.0)});
  r = across.to_record();
  EXPECT_NEAR(r.first_half(0) / r.first_half_weight(), 0.25, 1e-12);
  EXPECT_NEAR(r.first_half_ess(), 16.0 / 10.0, 1e-12);
  // A checkpoint restores the sums exactly.
  ModeOccupancy restored(set, 4, false);
  const auto sums = across.save();
  restored.restore(sums);
  EXPECT_EQ(restored.save(), sums);
}

TEST(SplitRhat, OfShares) {
  // No spread between halves (B = 0): sqrt((n - 1) / n), as Stan's R-hat below 1.
  EXPECT_DOUBLE_EQ(split_rhat_of_shares({0.5, 0.5, 0.5, 0.5}, {100, 100, 100, 100}),
                   std::sqrt(99.0 / 100.0));
  EXPECT_TRUE(std::isinf(split_rhat_of_shares({1.0, 0.0}, {100, 100})));
  EXPECT_DOUBLE_EQ(split_rhat_of_shares({1.0, 1.0}, {100, 100}), 1.0);
  // Pure halves whose shares rounding left a few ulps off 1 (a 150-D pseudo-extended run read
  // this as a disagreement, R-hat inf) agree; pure halves in different modes still do not.
  const std::vector<double> sizes{100, 100, 100, 100};
  EXPECT_DOUBLE_EQ(split_rhat_of_shares({1.0 + 2.2e-16, 1.0, 1.0 - 1.1e-16, 1.0}, sizes), 1.0);
  EXPECT_TRUE(std::isinf(split_rhat_of_shares({1.0 + 2.2e-16, 0.0, 1.0, 1e-17}, sizes)));
  // Two halves at 0.4 and 0.6 of 100 draws each: W = 0.24 * 100/99, B = 100 * 0.02.
  const double w = 0.24 * 100.0 / 99.0, b = 100.0 * 0.02;
  EXPECT_NEAR(split_rhat_of_shares({0.4, 0.6}, {100, 100}),
              std::sqrt((0.99 * w + b / 100.0) / w), 1e-12);
}

}  // namespace
}  // namespace pemc::modes
