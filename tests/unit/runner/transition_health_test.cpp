// Tests of a chain's transition statistics (src/runner/transition_health.hpp): draws at NUTS's
// maximum tree depth and the E-BFMI of the model's energy, only for the samplers that record them,
// and carried exactly across a checkpoint.
#include "runner/transition_health.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "core/error.hpp"

namespace pemc::runner {
namespace {

v1::SamplerConfig nuts(int max_depth) {
  v1::SamplerConfig s;
  s.mutable_nuts()->set_max_tree_depth(max_depth);
  return s;
}

kernels::TransitionStats stats(int depth, double energy) {
  kernels::TransitionStats t;
  t.tree_depth = depth;
  t.energy = energy;
  return t;
}

TEST(TransitionHealth, NutsCountsTransitionsAtTheMaximumDepthAndItsEbfmi) {
  TransitionHealth h(nuts(3));
  // Energies 1, 2, 4, 7: E-BFMI 0.5 (estimators ebfmi_test); depths 3 and 4 reach the maximum.
  h.add(stats(2, 1.0));
  h.add(stats(3, 2.0));
  h.add(stats(1, 4.0));
  h.add(stats(3, 7.0));
  v1::ChainSummary s;
  h.write(s);
  ASSERT_TRUE(s.has_n_max_tree_depth());
  EXPECT_EQ(s.n_max_tree_depth(), 2);
  ASSERT_TRUE(s.has_e_bfmi());
  EXPECT_DOUBLE_EQ(s.e_bfmi(), 0.5);
}

TEST(TransitionHealth, OnlyTheStatisticsTheSamplerRecords) {
  v1::SamplerConfig hmc;
  hmc.mutable_hmc();
  TransitionHealth h(hmc);  // energy, no tree
  v1::SamplerConfig rwm;
  rwm.mutable_rwm();
  TransitionHealth r(rwm);  // neither
  v1::SamplerConfig pe;
  pe.mutable_pseudo_extended()->mutable_nuts();
  TransitionHealth p(pe);  // the extended NUTS's tree (default depth 10), not its energy
  for (int i = 0; i < 4; ++i) {
    h.add(stats(0, i * i));
    r.add(stats(0, i * i));
    p.add(stats(10, i * i));
  }
  v1::ChainSummary sh, sr, sp;
  h.write(sh);
  r.write(sr);
  p.write(sp);
  EXPECT_FALSE(sh.has_n_max_tree_depth());
  EXPECT_TRUE(sh.has_e_bfmi());
  EXPECT_FALSE(sr.has_n_max_tree_depth());
  EXPECT_FALSE(sr.has_e_bfmi());
  EXPECT_TRUE(r.save().empty());
  EXPECT_EQ(sp.n_max_tree_depth(), 4);
  EXPECT_FALSE(sp.has_e_bfmi());
}

TEST(TransitionHealth, ANonFiniteOrConstantEnergyLeavesEbfmiUnset) {
  TransitionHealth nonfinite(nuts(10)), constant(nuts(10));
  for (double e : {1.0, std::numeric_limits<double>::infinity(), 3.0}) nonfinite.add(stats(1, e));
  for (int i = 0; i < 3; ++i) constant.add(stats(1, 2.0));
  v1::ChainSummary a, b;
  nonfinite.write(a);
  constant.write(b);
  EXPECT_FALSE(a.has_e_bfmi());
  EXPECT_FALSE(b.has_e_bfmi());
  EXPECT_EQ(a.n_max_tree_depth(), 0);  // set: NUTS records its depth
}

TEST(TransitionHealth, ACheckpointContinuesExactlyAndAMissingOneMakesItUnknown) {
  TransitionHealth whole(nuts(2)), first(nuts(2));
  const double energies[] = {1.0, 2.5, 0.5, 4.0, 3.0, 7.5};
  for (int i = 0; i < 6; ++i) whole.add(stats(i % 3, energies[i]));
  for (int i = 0; i < 3; ++i) first.add(stats(i % 3, energies[i]));
  TransitionHealth resumed(nuts(2));
  resumed.restore(first.save());
  for (int i = 3; i < 6; ++i) resumed.add(stats(i % 3, energies[i]));
  v1::ChainSummary a, b;
  whole.write(a);
  resumed.write(b);
  EXPECT_EQ(a.SerializeAsString(), b.SerializeAsString());

  TransitionHealth unknown(nuts(2));
  unknown.mark_unknown();
  unknown.add(stats(2, 1.0));
  v1::ChainSummary u;
  unknown.write(u);
  EXPECT_FALSE(u.has_n_max_tree_depth());
  EXPECT_FALSE(u.has_e_bfmi());
}

TEST(TransitionHealth, RestoreRejectsSumsOfAnotherShape) {
  TransitionHealth h(nuts(5));
  EXPECT_THROW(h.restore(std::vector<double>{1.0}), DataError);
  EXPECT_THROW(h.restore(std::vector<double>{-1.0, 1.0, 0, 0, 0, 0, 0}), DataError);
  EXPECT_THROW(h.restore(std::vector<double>{1.0, 0.5, 0, 0, 0, 0, 0}), DataError);
  v1::SamplerConfig rwm;
  rwm.mutable_rwm();
  TransitionHealth r(rwm);
  EXPECT_THROW(r.restore(std::vector<double>{0, 1, 0, 0, 0, 0, 0}), DataError);
  EXPECT_NO_THROW(r.restore(std::vector<double>{}));
}

}  // namespace
}  // namespace pemc::runner
