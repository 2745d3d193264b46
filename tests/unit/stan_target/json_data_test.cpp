// CmdStan JSON data into Stan's var_context (src/stan_target/shim/json_data.hpp): layouts,
// integer/real typing, non-finite spellings, empty arrays, and the errors a user sees.
#include "stan_target/shim/json_data.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace pemc::stan_shim {
namespace {

std::string error_of(const std::string& text) {
  try {
    (void)parse_json_data(text, "d.json");
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST(JsonData, ScalarsIntegersAndReals) {
  const JsonData d = parse_json_data(R"({"N": 3, "sigma": 1.5, "k": 2.0})", "d.json");
  EXPECT_TRUE(d.contains_i("N"));
  EXPECT_EQ(d.vals_i("N"), std::vector<int>{3});
  EXPECT_TRUE(d.dims_i("N").empty());
  EXPECT_TRUE(d.contains_r("N"));  // an int variable is readable as real too
  EXPECT_EQ(d.vals_r("N"), std::vector<double>{3.0});
  EXPECT_FALSE(d.contains_i("sigma"));
  EXPECT_EQ(d.vals_r("sigma"), std::vector<double>{1.5});
  // 2.0 is written as a real: Stan must refuse it for an int declaration, as CmdStan does.
  EXPECT_FALSE(d.contains_i("k"));
  EXPECT_FALSE(d.contains_r("missing"));
  EXPECT_TRUE(d.vals_r("missing").empty());
}

TEST(JsonData, MatrixRowsBecomeColumnMajor) {
  // CmdStan writes a 2 x 3 matrix as its rows; Stan reads values first index fastest.
  const JsonData d = parse_json_data(R"({"m": [[1, 2, 3], [4, 5, 6]]})", "d.json");
  EXPECT_EQ(d.dims_r("m"), (std::vector<size_t>{2, 3}));
  EXPECT_EQ(d.vals_r("m"), (std::vector<double>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(d.vals_i("m"), (std::vector<int>{1, 4, 2, 5, 3, 6}));
}

TEST(JsonData, ThreeDimensionalArray) {
  // a[i][j][k] = 100 i + 10 j + k (1-based) for dims 2 x 2 x 3.
  const JsonData d = parse_json_data(
      R"({"a": [[[111, 112, 113], [121, 122, 123]], [[211, 212, 213], [221, 222, 223]]]})",
      "d.json");
  ASSERT_EQ(d.dims_i("a"), (std::vector<size_t>{2, 2, 3}));
  const auto v = d.vals_i("a");
  std::size_t n = 0;
  for (int k = 1; k <= 3; ++k)
    for (int j = 1; j <= 2; ++j)
      for (int i = 1; i <= 2; ++i) EXPECT_EQ(v[n++], 100 * i + 10 * j + k);
}

TEST(JsonData, EmptyArraysAndNonFiniteSpellings) {
  const JsonData d = parse_json_data(
      R"({"e": [], "ee": [[], []], "x": ["NaN", "Inf", "-inf", "Infinity", "-Infinity", 1],
          "y": [NaN, Infinity, -Infinity], "s": "+inf"})",
      "d.json");
  EXPECT_EQ(d.dims_r("e"), std::vector<size_t>{0});
  EXPECT_TRUE(d.contains_i("e"));  // no values: fits an int declaration as CmdStan's does
  EXPECT_EQ(d.dims_r("ee"), (std::vector<size_t>{2, 0}));
  const auto x = d.vals_r("x");
  ASSERT_EQ(x.size(), 6u);
  EXPECT_TRUE(std::isnan(x[0]));
  EXPECT_EQ(x[1], std::numeric_limits<double>::infinity());
  EXPECT_EQ(x[2], -std::numeric_limits<double>::infinity());
  EXPECT_EQ(x[3], std::numeric_limits<double>::infinity());
  EXPECT_EQ(x[4], -std::numeric_limits<double>::infinity());
  EXPECT_EQ(x[5], 1.0);
  EXPECT_FALSE(d.contains_i("x"));
  const auto y = d.vals_r("y");  // bare tokens, as CmdStan's reader accepts them
  ASSERT_EQ(y.size(), 3u);
  EXPECT_TRUE(std::isnan(y[0]));
  EXPECT_EQ(y[2], -std::numeric_limits<double>::infinity());
  EXPECT_EQ(d.vals_r("s"), std::vector<double>{std::numeric_limits<double>::infinity()});
}

TEST(JsonData, StanValidationSeesWrongDimensions) {
  const JsonData d = parse_json_data(R"({"y": [1, 2, 3], "J": 2.5})", "d.json");
  EXPECT_NO_THROW(d.validate_dims("data initialization", "y", "double", {3}));
  EXPECT_THROW(d.validate_dims("data initialization", "y", "double", {4}), std::runtime_error);
  EXPECT_THROW(d.validate_dims("data initialization", "J", "int", {}), std::runtime_error);
  EXPECT_THROW(d.validate_dims("data initialization", "K", "int", {}), std::runtime_error);
}

TEST(JsonData, ErrorsNameTheFileAndWhere) {
  const std::string syntax = error_of("{\n  \"N\": 3,\n  \"y\": [1, 2,, 3]\n}");
  EXPECT_NE(syntax.find("d.json:3:"), std::string::npos) << syntax;
  EXPECT_NE(syntax.find("malformed JSON"), std::string::npos) << syntax;
  const std::string ragged = error_of(R"({"m": [[1, 2], [3]]})");
  EXPECT_NE(ragged.find("variable 'm'"), std::string::npos) << ragged;
  EXPECT_NE(ragged.find("ragged"), std::string::npos) << ragged;
  const std::string depth = error_of(R"({"m": [1, [2]]})");
  EXPECT_NE(depth.find("different depths"), std::string::npos) << depth;
  const std::string text = error_of(R"({"m": "abc"})");
  EXPECT_NE(text.find("expected a number"), std::string::npos) << text;
  const std::string top = error_of("[1, 2]");
  EXPECT_NE(top.find("JSON object"), std::string::npos) << top;
}

TEST(JsonData, IntegersBeyondStanIntAreReals) {
  const JsonData d = parse_json_data(R"({"big": 3000000000})", "d.json");
  EXPECT_FALSE(d.contains_i("big"));
  EXPECT_EQ(d.vals_r("big"), std::vector<double>{3e9});
}

TEST(JsonData, QuotingLeavesStringsAlone) {
  // "Inf" inside a longer string and escaped quotes are not tokens to quote.
  EXPECT_EQ(json_detail::quote_bare_specials(R"({"a\"Inf": [NaN], "b": "xInfinity"})"),
            R"({"a\"Inf": ["NaN"], "b": "xInfinity"})");
}

}  // namespace
}  // namespace pemc::stan_shim
