// Tests of where a run's quantities go in the ArviZ netCDF export
// (src/report/inference_data_layout.hpp): Stan names split into base name and index, netCDF
// names, the log_likelihood split, named dims and created_at's format.
#include "report/inference_data_layout.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <regex>

namespace pemc::report {
namespace {

using Index = std::vector<std::size_t>;

TEST(InferenceDataLayout, SplitsStanNames) {
  EXPECT_EQ(split_stan_name("Sigma[2,1]"), std::make_pair(std::string("Sigma"), Index{2, 1}));
  EXPECT_EQ(split_stan_name("log_lik[12]"), std::make_pair(std::string("log_lik"), Index{12}));
  EXPECT_EQ(split_stan_name("mu"), std::make_pair(std::string("mu"), Index{}));
  // Not a 1-based index list: a scalar of the whole name.
  for (const char* odd : {"a[0]", "a[]", "[1]", "a[1", "a[x]", "a[1,]x"})
    EXPECT_EQ(split_stan_name(odd), std::make_pair(std::string(odd), Index{})) << odd;
}

TEST(InferenceDataLayout, NetcdfNamesAvoidTheFilesDims) {
  EXPECT_EQ(netcdf_name("theta"), "theta");
  EXPECT_EQ(netcdf_name("a.b c"), "a_b_c");
  EXPECT_EQ(netcdf_name("1x"), "_1x");
  EXPECT_EQ(netcdf_name(""), "_");
  for (const char* dim : {"chain", "draw", "weighted_sample", "theta_dim_0"})
    EXPECT_EQ(netcdf_name(dim), std::string(dim) + "_") << dim;
  EXPECT_EQ(netcdf_name("theta_dim_"), "theta_dim_");
  EXPECT_EQ(netcdf_name("sample"), "sample");  // no dim of the file has that name
}

TEST(InferenceDataLayout, LogLikelihoodsGetTheirOwnGroup) {
  const auto l = quantity_layout(
      {"mu", "log_lik[1]", "log_lik[2]", "Sigma[1,1]", "Sigma[2,1]", "Sigma[1,2]", "Sigma[2,2]",
       "y_rep"},
      {kDefaultLogLik});
  ASSERT_EQ(l.variables.size(), 4u);
  EXPECT_EQ(l.variables[0].name, "mu");
  EXPECT_EQ(l.variables[0].group, DrawGroup::kPosterior);
  EXPECT_EQ(l.variables[1].name, "log_lik");
  EXPECT_EQ(l.variables[1].group, DrawGroup::kLogLikelihood);
  EXPECT_EQ(l.variables[1].shape, Index{2});
  EXPECT_EQ(l.variables[2].shape, (Index{2, 2}));
  EXPECT_EQ(l.variables[3].group, DrawGroup::kPosterior);
  // Row-major positions: Sigma[2,1] is (1, 0) -> 2, Sigma[1,2] is (0, 1) -> 1.
  const std::vector<std::pair<std::size_t, std::size_t>> place{
      {0, 0}, {1, 0}, {1, 1}, {2, 0}, {2, 2}, {2, 1}, {2, 3}, {3, 0}};
  EXPECT_EQ(l.place, place);
  EXPECT_EQ(dim_names(l.variables[2]), (std::vector<std::string>{"Sigma_dim_0", "Sigma_dim_1"}));
  // Other names chosen: only they leave the posterior.
  const auto chosen = quantity_layout({"mu", "log_lik[1]", "ll_y[1]"}, {"ll_y", "mu"});
  EXPECT_EQ(chosen.variables[0].group, DrawGroup::kLogLikelihood);
  EXPECT_EQ(chosen.variables[1].group, DrawGroup::kPosterior);
  EXPECT_EQ(chosen.variables[2].group, DrawGroup::kLogLikelihood);
}

TEST(InferenceDataLayout, NamesOfTwoRanksStayApart) {
  const auto l = quantity_layout({"a[1]", "a[1,1]", "a"}, {});
  ASSERT_EQ(l.variables.size(), 3u);
  EXPECT_EQ(l.variables[0].name, "a");
  EXPECT_EQ(l.variables[1].name, "a_1_1_");
  EXPECT_EQ(l.variables[2].name, "a_");
  EXPECT_EQ(base_names({"a[1]", "a[2]", "mu", "log_lik[1]"}),
            (std::vector<std::string>{"a", "mu", "log_lik"}));
}

TEST(InferenceDataLayout, CreatedAtIsIso8601Utc) {
  using namespace std::chrono;
  const auto t = system_clock::time_point(seconds(1700000000) + microseconds(42));
  EXPECT_EQ(iso8601_utc(t), "2023-11-14T22:13:20.000042+00:00");
  EXPECT_TRUE(std::regex_match(iso8601_utc(system_clock::now()),
                               std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00)")));
}

}  // namespace
}  // namespace pemc::report
