// Tests of the sampler columns of exports (src/config/sampler_columns.hpp): which Draw fields each
// sampler's transitions fill, by the names the exports give them, and where lp__ comes from.
#include "config/sampler_columns.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace pemc::config {
namespace {

std::vector<std::string> names(const std::vector<StatColumn>& columns) {
  std::vector<std::string> out;
  for (const auto& c : columns) out.push_back(c.name);
  return out;
}

std::vector<std::string> names_of(const v1::SamplerConfig& s) {
  return names(sampler_columns(s).stats);
}

using Names = std::vector<std::string>;

TEST(SamplerColumns, PlainKernels) {
  v1::SamplerConfig s;
  s.mutable_nuts();
  EXPECT_EQ(names_of(s), (Names{"accept_stat__", "stepsize__", "treedepth__", "n_leapfrog__",
                                "divergent__", "energy__"}));
  s.mutable_hmc();
  EXPECT_EQ(names_of(s),
            (Names{"accept_stat__", "stepsize__", "n_leapfrog__", "divergent__", "energy__"}));
  s.mutable_mala();
  EXPECT_EQ(names_of(s), (Names{"accept_stat__", "mala_stepsize__", "energy__"}));
  s.mutable_rwm();
  EXPECT_EQ(names_of(s), (Names{"accept_stat__"}));
  for (auto make : {+[](v1::SamplerConfig& c) { c.mutable_nuts(); },
                    +[](v1::SamplerConfig& c) { c.mutable_hmc(); },
                    +[](v1::SamplerConfig& c) { c.mutable_mala(); },
                    +[](v1::SamplerConfig& c) { c.mutable_rwm(); }}) {
    make(s);
    EXPECT_EQ(sampler_columns(s).lp, LpSource::kDrawPotential) << s.ShortDebugString();
  }
  EXPECT_TRUE(names_of(v1::SamplerConfig{}).empty()) << "no sampler: no columns";
}

TEST(SamplerColumns, ExtendedSamplersRenameOrDropTheirEnergyAndEvaluateTheTarget) {
  v1::SamplerConfig s;
  s.mutable_pseudo_extended()->mutable_nuts();
  EXPECT_EQ(names_of(s), (Names{"extended_lp__", "accept_stat__", "stepsize__", "treedepth__",
                                "n_leapfrog__", "divergent__", "extended_energy__"}));
  EXPECT_EQ(sampler_columns(s).lp, LpSource::kTargetAtSample);
  s.mutable_pseudo_extended()->mutable_hmc();
  EXPECT_EQ(names_of(s), (Names{"extended_lp__", "accept_stat__", "stepsize__", "n_leapfrog__",
                                "divergent__", "extended_energy__"}));

  s.mutable_continuous_tempering()->mutable_nuts();
  EXPECT_EQ(names_of(s), (Names{"extended_lp__", "accept_stat__", "stepsize__", "treedepth__",
                                "n_leapfrog__", "divergent__"}));
  EXPECT_EQ(sampler_columns(s).lp, LpSource::kTargetAtSample);
  s.mutable_continuous_tempering()->mutable_hmc();
  EXPECT_EQ(names_of(s),
            (Names{"extended_lp__", "accept_stat__", "stepsize__", "n_leapfrog__", "divergent__"}));
}

TEST(SamplerColumns, TemperingSamplersHaveNoTreeDepthOrEnergy) {
  v1::SamplerConfig s;
  for (bool nuts : {true, false}) {
    auto* pt = s.mutable_parallel_tempering();
    nuts ? (void)pt->mutable_nuts() : (void)pt->mutable_hmc();
    EXPECT_EQ(names_of(s), (Names{"accept_stat__", "stepsize__", "n_leapfrog__", "divergent__"}));
    EXPECT_EQ(sampler_columns(s).lp, LpSource::kDrawPotential);

    auto* st = s.mutable_simulated_tempering();
    nuts ? (void)st->mutable_nuts() : (void)st->mutable_hmc();
    EXPECT_EQ(names_of(s), (Names{"extended_lp__", "accept_stat__", "n_leapfrog__", "divergent__"}));
    EXPECT_EQ(sampler_columns(s).lp, LpSource::kTargetAtSample);

    auto* ais = s.mutable_annealed_importance();
    nuts ? (void)ais->mutable_nuts() : (void)ais->mutable_hmc();
    EXPECT_EQ(names_of(s), (Names{"accept_stat__", "n_leapfrog__", "divergent__"}));
    EXPECT_EQ(sampler_columns(s).lp, LpSource::kDrawPotential);
  }
}

// CmdStan CSV holds CmdStan's own columns only (rstan reads any other as a model parameter), and
// never a CmdStan name for a field that means something else.
TEST(SamplerColumns, CmdStanColumnsAreCmdStansOwn) {
  const std::set<std::string> cmdstan{"accept_stat__", "stepsize__",  "treedepth__",
                                      "n_leapfrog__",  "divergent__", "energy__"};
  v1::SamplerConfig s;
  s.mutable_pseudo_extended()->mutable_nuts();
  EXPECT_EQ(names(cmdstan_columns(sampler_columns(s).stats)),
            (Names{"accept_stat__", "stepsize__", "treedepth__", "n_leapfrog__", "divergent__"}));
  s.mutable_mala();
  EXPECT_EQ(names(cmdstan_columns(sampler_columns(s).stats)), (Names{"accept_stat__", "energy__"}));
  for (const auto& c : sampler_columns(s).stats) {
    EXPECT_EQ(c.cmdstan, cmdstan.count(c.name) == 1) << c.name;
    EXPECT_TRUE(c.name.ends_with("__")) << c.name;
  }
}

// A table of several runs has the union of their columns in one order, which every sampler's own
// columns already follow.
TEST(SamplerColumns, MergedColumnsKeepEverySamplersOrder) {
  std::vector<v1::SamplerConfig> all(11);
  all[0].mutable_nuts();
  all[1].mutable_hmc();
  all[2].mutable_mala();
  all[3].mutable_rwm();
  all[4].mutable_pseudo_extended()->mutable_nuts();
  all[5].mutable_pseudo_extended()->mutable_hmc();
  all[6].mutable_continuous_tempering()->mutable_nuts();
  all[7].mutable_continuous_tempering()->mutable_hmc();
  all[8].mutable_parallel_tempering()->mutable_nuts();
  all[9].mutable_simulated_tempering()->mutable_hmc();
  all[10].mutable_annealed_importance()->mutable_hmc();
  for (const auto& s : all) {
    const auto own = sampler_columns(s).stats;
    EXPECT_EQ(merged_columns({own}), own) << s.ShortDebugString();
  }
  EXPECT_EQ(names(merged_columns({sampler_columns(all[8]).stats, sampler_columns(all[2]).stats,
                                  sampler_columns(all[0]).stats})),
            (Names{"accept_stat__", "stepsize__", "mala_stepsize__", "treedepth__", "n_leapfrog__",
                   "divergent__", "energy__"}));
}

TEST(SamplerColumns, ValuesAndTypes) {
  v1::Draw d;
  d.set_potential(2.5);
  d.set_accept_stat(0.75);
  d.set_step_size(0.125);
  d.set_tree_depth(3);
  d.set_n_leapfrog(7);
  d.set_divergent(true);
  d.set_energy(4.5);
  EXPECT_EQ(stat_value(DrawStat::kExtendedLp, d), -2.5);
  EXPECT_EQ(stat_value(DrawStat::kAcceptStat, d), 0.75);
  EXPECT_EQ(stat_value(DrawStat::kStepSize, d), 0.125);
  EXPECT_EQ(stat_value(DrawStat::kTreeDepth, d), 3.0);
  EXPECT_EQ(stat_value(DrawStat::kNLeapfrog, d), 7.0);
  EXPECT_EQ(stat_value(DrawStat::kDivergent, d), 1.0);
  EXPECT_EQ(stat_value(DrawStat::kEnergy, d), 4.5);
  EXPECT_EQ(stat_type(DrawStat::kTreeDepth), StatType::kInt);
  EXPECT_EQ(stat_type(DrawStat::kNLeapfrog), StatType::kInt);
  EXPECT_EQ(stat_type(DrawStat::kDivergent), StatType::kBool);
  EXPECT_EQ(stat_type(DrawStat::kEnergy), StatType::kReal);
}

}  // namespace
}  // namespace pemc::config
