// Gradient counts of a chain's footer summary in today's units (src/report/gradient_counts.hpp):
// new files as written; files from before n_extended_gradient_evals converted, pseudo-extended
// chains' old extended counts multiplied by n_pseudo.
#include "report/gradient_counts.hpp"

#include <gtest/gtest.h>

namespace pemc::report {
namespace {

v1::RunConfig pseudo_extended(int n) {
  v1::RunConfig c;
  c.mutable_sampler()->mutable_pseudo_extended()->set_n_pseudo(n);
  return c;
}

TEST(GradientCounts, NewFilesAreReadAsWritten) {
  v1::ChainSummary s;
  s.set_n_gradient_evals(500);
  s.set_n_gradient_evals_warmup(50);
  s.set_n_extended_gradient_evals(100);
  s.set_n_extended_gradient_evals_warmup(10);
  const auto c = gradient_counts(s, pseudo_extended(5));
  EXPECT_EQ(c.target, 500);
  EXPECT_EQ(c.target_warmup, 50);
  EXPECT_EQ(c.extended, 100);
  EXPECT_EQ(c.extended_warmup, 10);
  EXPECT_FALSE(c.converted);
}

TEST(GradientCounts, OldPseudoExtendedFilesCountedExtendedEvaluations) {
  v1::ChainSummary s;  // as written before the field: extended evaluations in n_gradient_evals
  s.set_n_gradient_evals(100);
  s.set_n_gradient_evals_warmup(10);
  const auto c = gradient_counts(s, pseudo_extended(5));
  EXPECT_TRUE(c.converted);
  EXPECT_EQ(c.target, 500);
  EXPECT_EQ(c.target_warmup, 50);
  EXPECT_EQ(c.extended, 100);
  EXPECT_EQ(c.extended_warmup, 10);
  // Every other sampler counted target gradients already.
  v1::RunConfig nuts;
  nuts.mutable_sampler()->mutable_nuts();
  const auto n = gradient_counts(s, nuts);
  EXPECT_EQ(n.target, 100);
  EXPECT_EQ(n.extended, 100);
  // A chain that never evaluated anything (failed at once, or no footer) stays at 0.
  const auto z = gradient_counts(v1::ChainSummary{}, pseudo_extended(5));
  EXPECT_EQ(z.target, 0);
  EXPECT_FALSE(z.converted);
}

}  // namespace
}  // namespace pemc::report
