// What each round of a pooled warmup runs (pooled_round_config.hpp): a pseudo-extended run warms
// its kernel up on the target itself, then adapts its step size on the extended space from the
// chain's state with the pooled metric laid out over the pseudo-samples and temperatures, then
// samples from the extended state the terminal buffer left.
#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "core/error.hpp"
#include "extended/pseudo_extended.hpp"
#include "warmup/pooled_round_config.hpp"

namespace pemc::warmup {
namespace {

v1::RunConfig run_config(const std::string& text) {
  v1::RunConfig c;
  if (!google::protobuf::TextFormat::ParseFromString(text, &c)) ADD_FAILURE() << "bad text";
  return c;
}

const char* kPseudoExtended =
    "target { gaussian { mean: [0, 0] } } warmup: 1000 iterations: 500 "
    "sampler { pseudo_extended { n_pseudo: 3 instrumental: REFERENCE_PATH "
    "  nuts { step_size: 0.1 metric: DIAGONAL inverse_metric: [1, 1, 1, 1, 1, 1, 1, 1, 1] "
    "         adaptation { enabled: true adapt_metric: true pooled: true } } } }";

std::vector<double> values(const google::protobuf::RepeatedField<double>& f) {
  return {f.begin(), f.end()};
}

RoundBroadcast broadcast(Phase phase, Vector state) {
  RoundBroadcast b;
  b.round = 3;
  b.plan = {phase, 0, 50, 400};
  b.inverse_metric = {4.0, 0.25};
  b.chains[7] = {std::move(state), {}, 0.37};
  return b;
}

TEST(PooledRoundConfig, PseudoExtendedWindowsRunItsKernelOnTheTarget) {
  const auto run = run_config(kPseudoExtended);
  EXPECT_TRUE(has_pooled_warmup(run));
  EXPECT_TRUE(pools_pseudo_extended(run));
  EXPECT_EQ(pooled_field(run), "sampler.pseudo_extended.nuts.adaptation.pooled");
  EXPECT_EQ(pooling_of(run), Pooling::kWithinChains);

  // Round 0: NUTS on the target from the modes' metric, its step size searched.
  const auto init = pooled_round_config(run, {Phase::kInit, 0, 75, 0}, nullptr, 7, {2.0, 3.0});
  ASSERT_TRUE(init.sampler().has_nuts());
  const auto& k = init.sampler().nuts();
  EXPECT_EQ(values(k.inverse_metric()), (std::vector<double>{2.0, 3.0}));
  EXPECT_FALSE(k.has_step_size());
  EXPECT_FALSE(k.adaptation().adapt_metric());
  EXPECT_FALSE(k.adaptation().pooled());
  EXPECT_TRUE(k.adaptation().enabled());
  EXPECT_EQ(init.warmup(), 75);
  EXPECT_EQ(init.iterations(), 0);
  EXPECT_TRUE(init.output().write_warmup());
  // Without the modes' metric the extended space's configured one is not carried over.
  EXPECT_EQ(pooled_round_config(run, {Phase::kInit, 0, 75, 0}, nullptr, 7).sampler().nuts()
                .inverse_metric_size(),
            0);

  // A window: the pooled metric, from where the chain stopped.
  const auto b = broadcast(Phase::kWindow, Vector::Constant(2, 0.5));
  const auto window = pooled_round_config(run, b.plan, &b, 7, {2.0, 3.0});
  ASSERT_TRUE(window.sampler().has_nuts());
  EXPECT_EQ(values(window.sampler().nuts().inverse_metric()), b.inverse_metric);
  EXPECT_EQ(values(window.init().point().x()), (std::vector<double>{0.5, 0.5}));
}

TEST(PooledRoundConfig, PseudoExtendedTermAndSampleRunOnTheExtendedSpace) {
  const auto run = run_config(kPseudoExtended);
  const double eta = std::numbers::pi * std::numbers::pi / 3;  // var(logit U), the flat g
  const std::vector<double> extended{4.0, 0.25, 4.0, 0.25, 4.0, 0.25, eta, eta, eta};

  const auto tb = broadcast(Phase::kTerm, Vector::Constant(2, 0.5));
  const auto term = pooled_round_config(run, tb.plan, &tb, 7);
  ASSERT_TRUE(term.sampler().has_pseudo_extended());
  const auto& k = term.sampler().pseudo_extended().nuts();
  const auto metric = values(k.inverse_metric());
  ASSERT_EQ(metric.size(), extended.size());
  for (std::size_t i = 0; i < metric.size(); ++i) EXPECT_NEAR(metric[i], extended[i], 1e-12) << i;
  EXPECT_FALSE(k.has_step_size());  // searched on the extended space
  EXPECT_TRUE(k.adaptation().enabled());
  EXPECT_FALSE(k.adaptation().adapt_metric());
  EXPECT_FALSE(k.adaptation().pooled());
  EXPECT_EQ(values(term.init().point().x()), (std::vector<double>{0.5, 0.5}));  // every pseudo-sample
  EXPECT_EQ(term.warmup(), 50);
  EXPECT_EQ(term.iterations(), 0);

  Vector full = Vector::LinSpaced(9, 0.1, 0.9);
  const auto sb = broadcast(Phase::kSample, full);
  const auto sample = pooled_round_config(run, {Phase::kSample, 0, 0, 450}, &sb, 7);
  const auto& s = sample.sampler().pseudo_extended().nuts();
  EXPECT_FALSE(s.adaptation().enabled());
  EXPECT_DOUBLE_EQ(s.step_size(), 0.37);
  EXPECT_EQ(s.inverse_metric_size(), 9);
  EXPECT_EQ(values(sample.init().point().x()), std::vector<double>(full.data(), full.data() + 9));
  EXPECT_EQ(sample.warmup(), 0);
  EXPECT_EQ(sample.iterations(), 500);
}

TEST(ExtendedInverseMetric, DenseIsBlockDiagonalAndTheTemperaturesFollowG) {
  auto c = run_config(kPseudoExtended).sampler().pseudo_extended();
  c.set_n_pseudo(2);
  c.mutable_beta_instrumental()->set_a(2.0);  // trigamma(2) + trigamma(1) = pi^2/3 - 1
  const double eta = std::numbers::pi * std::numbers::pi / 3 - 1;
  const auto m = extended::extended_inverse_metric(c, {1.0, 0.5, 0.5, 2.0}, 2, true);
  const int dim = 6;
  ASSERT_EQ(m.size(), 36u);
  const auto at = [&](int r, int k) { return m[static_cast<std::size_t>(r * dim + k)]; };
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(at(2 * i, 2 * i), 1.0);
    EXPECT_EQ(at(2 * i, 2 * i + 1), 0.5);
    EXPECT_EQ(at(2 * i + 1, 2 * i), 0.5);
    EXPECT_EQ(at(2 * i + 1, 2 * i + 1), 2.0);
  }
  EXPECT_EQ(at(0, 2), 0.0);  // no coupling between pseudo-samples
  EXPECT_NEAR(at(4, 4), eta, 1e-12);
  EXPECT_NEAR(at(5, 5), eta, 1e-12);
  EXPECT_EQ(at(4, 5), 0.0);
  EXPECT_THROW(extended::extended_inverse_metric(c, {1.0, 2.0, 3.0}, 2, false), ConfigError);
}

TEST(PooledRoundConfig, PlainNutsRoundsAreUnchanged) {
  const auto run = run_config("target { gaussian { mean: [0, 0] } } warmup: 1000 iterations: 10 "
                              "sampler { nuts { adaptation { pooled: true } } }");
  EXPECT_FALSE(pools_pseudo_extended(run));
  EXPECT_EQ(pooling_of(run), Pooling::kAllDraws);
  EXPECT_EQ(pooled_field(run), "sampler.nuts.adaptation.pooled");
  const auto b = broadcast(Phase::kSample, Vector::Constant(2, 0.5));
  const auto sample = pooled_round_config(run, {Phase::kSample, 0, 0, 450}, &b, 7);
  ASSERT_TRUE(sample.sampler().has_nuts());
  EXPECT_DOUBLE_EQ(sample.sampler().nuts().step_size(), 0.37);
  EXPECT_FALSE(sample.sampler().nuts().adaptation().enabled());
  EXPECT_EQ(values(sample.sampler().nuts().inverse_metric()), b.inverse_metric);
}

}  // namespace
}  // namespace pemc::warmup
