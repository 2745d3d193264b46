// --vars (src/report/quantity_selection.hpp): exact names, a variable's base name for all its
// elements, the requested order, and an error that lists what the run has.
#include "report/quantity_selection.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace pemc::report {
namespace {

const std::vector<std::string> kNames{"lp__",     "mu",          "tau",         "theta[1]",
                                      "theta[2]", "theta[3]",    "Sigma[1,1]",  "Sigma[2,1]",
                                      "log_lik[1]", "log_lik[2]", "theta_raw"};

TEST(SelectQuantities, ExactNamesAndBaseNamesInTheRequestedOrder) {
  using V = std::vector<std::size_t>;
  EXPECT_EQ(select_quantities(kNames, {"mu"}), V({1}));
  EXPECT_EQ(select_quantities(kNames, {"theta"}), V({3, 4, 5}));  // not theta_raw
  EXPECT_EQ(select_quantities(kNames, {"theta[2]", "lp__", "Sigma"}), V({4, 0, 6, 7}));
  EXPECT_EQ(select_quantities(kNames, {"log_lik", "theta_raw"}), V({8, 9, 10}));
  EXPECT_EQ(select_quantities(kNames, {"theta", "theta[1]", "mu"}), V({3, 4, 5, 1}));  // each once
}

TEST(SelectQuantities, AnUnknownNameListsTheRunsVariables) {
  try {
    select_quantities(kNames, {"mu", "sigma"}, "run 'r': ");
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(),
                 "run 'r': --vars: no quantity or variable named 'sigma'; the run has: lp__, mu, "
                 "tau, theta[1..3], Sigma[1,1..2,1], log_lik[1..2], theta_raw");
  }
  EXPECT_THROW(select_quantities(kNames, {"theta[4]"}), ConfigError);
  EXPECT_THROW(select_quantities(kNames, {"the"}), ConfigError);  // no prefix matching
}

TEST(DescribeVariables, OneEntryPerVariable) {
  EXPECT_EQ(describe_variables({"x[1]", "x[2]", "x[3]"}), "x[1..3]");
  EXPECT_EQ(describe_variables({"a", "b[1]"}), "a, b[1]");
  EXPECT_EQ(describe_variables({}), "");
}

}  // namespace
}  // namespace pemc::report
