// Tests of a Stan model's data as ArviZ's observed_data (src/report/observed_data.hpp): CmdStan
// JSON read as the model's shim reads it (integers stay integers, nested arrays are dims in the
// file's row-major order, ArviZ's dim names), the errors of a malformed file, and --observed's
// selection.
#include "report/observed_data.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace pemc::report {
namespace {

using ::testing::HasSubstr;
using Shape = std::vector<std::size_t>;

const ObservedVariable& named(const std::vector<ObservedVariable>& vars, const std::string& name) {
  for (const auto& v : vars)
    if (v.data_name == name) return v;
  throw std::runtime_error("no variable " + name);
}

std::string error_of(const std::string& text) {
  try {
    (void)observed_variables(text, "d.json");
  } catch (const DataError& e) {
    return e.what();
  }
  return "";
}

TEST(ObservedData, ScalarsKeepTheirType) {
  const auto vars = observed_variables(R"({"N": 3, "sigma": 1.5, "k": 2.0})", "d.json");
  ASSERT_EQ(vars.size(), 3u);
  const auto& n = named(vars, "N");
  EXPECT_TRUE(n.is_int);
  EXPECT_EQ(n.array.name, "N");
  EXPECT_EQ(n.array.shape, Shape{});
  EXPECT_EQ(n.ints, std::vector<int>{3});
  EXPECT_TRUE(n.reals.empty());
  EXPECT_FALSE(named(vars, "sigma").is_int);
  EXPECT_EQ(named(vars, "sigma").reals, std::vector<double>{1.5});
  // Written as a real, a real, as Stan reads it (an int declaration would refuse it).
  EXPECT_FALSE(named(vars, "k").is_int);
  EXPECT_EQ(named(vars, "k").reals, std::vector<double>{2.0});
}

TEST(ObservedData, NestedArraysAreDimsInTheFilesOrder) {
  // A 2 x 3 matrix as CmdStan writes it (its rows) and an array of 2 arrays of 2 vectors[2].
  const auto vars = observed_variables(
      R"({"X": [[1, 2, 3], [4, 5, 6.5]], "A": [[[1,2],[3,4]],[[5,6],[7,8]]], "y": [0.5, -1]})",
      "d.json");
  const auto& x = named(vars, "X");
  EXPECT_EQ(x.array.shape, (Shape{2, 3}));
  EXPECT_FALSE(x.is_int);  // one real makes the whole variable real
  EXPECT_EQ(x.reals, (std::vector<double>{1, 2, 3, 4, 5, 6.5}));  // row-major: X[1,2] second
  EXPECT_EQ(dim_names(x.array), (std::vector<std::string>{"X_dim_0", "X_dim_1"}));
  const auto& a = named(vars, "A");
  EXPECT_EQ(a.array.shape, (Shape{2, 2, 2}));
  EXPECT_TRUE(a.is_int);
  EXPECT_EQ(a.ints, (std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(named(vars, "y").array.shape, Shape{2});
}

TEST(ObservedData, EdgeValues) {
  const auto vars = observed_variables(
      R"({"e": [], "big": [1, 3000000000], "s": ["NaN", "-inf", Infinity]})", "d.json");
  EXPECT_EQ(named(vars, "e").array.shape, Shape{0});
  EXPECT_TRUE(named(vars, "e").ints.empty());
  // Beyond Stan's 32-bit int: a real variable, every value kept exactly.
  const auto& big = named(vars, "big");
  EXPECT_FALSE(big.is_int);
  EXPECT_EQ(big.reals, (std::vector<double>{1, 3e9}));
  const auto& s = named(vars, "s");
  ASSERT_EQ(s.reals.size(), 3u);
  EXPECT_TRUE(std::isnan(s.reals[0]));
  EXPECT_EQ(s.reals[1], -INFINITY);
  EXPECT_EQ(s.reals[2], INFINITY);
}

TEST(ObservedData, NetcdfNamesForOddKeys) {
  const auto vars = observed_variables(R"({"chain": 1, "a b": 2})", "d.json");
  EXPECT_EQ(named(vars, "chain").array.name, "chain_");
  EXPECT_EQ(named(vars, "a b").array.name, "a_b");
}

TEST(ObservedData, MalformedDataIsADataErrorNamingTheFile) {
  EXPECT_THAT(error_of(R"({"y": [[1, 2], [3]]})"),
              HasSubstr("data file d.json, variable 'y': a ragged array"));
  EXPECT_THAT(error_of(R"({"y": [1, "a"]})"), HasSubstr("variable 'y': expected a number"));
  EXPECT_THAT(error_of("{\"y\": [1,\n 2"), HasSubstr("data file d.json:2:"));
  EXPECT_THAT(error_of("[1, 2]"), HasSubstr("expected a JSON object"));
  EXPECT_EQ(error_of(R"({"y": 1})"), "");
}

TEST(ObservedData, SelectsTheNamedVariables) {
  const auto vars = observed_variables(R"({"N": 2, "y": [1, 2], "x": [3, 4]})", "d.json");
  EXPECT_EQ(select_observed(vars, {}).size(), 3u);
  const auto some = select_observed(vars, {"y", "N", "absent"});
  ASSERT_EQ(some.size(), 2u);
  EXPECT_EQ(some[0].data_name, "N");  // in the data's order
  EXPECT_EQ(some[1].data_name, "y");
  EXPECT_EQ(split_observed_names({"y,N", " x , ", "z"}),
            (std::vector<std::string>{"y", "N", "x", "z"}));
}

}  // namespace
}  // namespace pemc::report
