// Tests of run_chain (src/runner/chain_driver.hpp) with HMC on Gaussian targets: determinism and
// keying, thinning, warmup output, exact cost accounting, failure handling, and a Monte Carlo
// check of the moments of a correlated 3-D Gaussian against 4 batch-means standard errors.
#include "runner/chain_driver.hpp"

#include <gtest/gtest.h>
#include <google/protobuf/text_format.h>
#include <google/protobuf/util/message_differencer.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "targets/gaussian.hpp"

namespace pemc::runner {
namespace {

using google::protobuf::util::MessageDifferencer;
using pemc::v1::Draw;
using pemc::v1::Record;

struct HmcSetup {
  double step_size = 0.25;
  int n_leapfrog = 8;
  bool jitter_step_size = false;
  bool jitter_n_leapfrog = false;
  std::int64_t warmup = 0;
  std::int64_t iterations = 50;
  int thin = 1;
  bool write_warmup = false;
};

v1::RunConfig make_config(const HmcSetup& s) {
  v1::RunConfig c;
  c.set_name("driver-test");
  // The target is passed to run_chain directly; the config's target only documents it.
  c.mutable_target()->mutable_gaussian()->add_mean(0.0);
  auto* h = c.mutable_sampler()->mutable_hmc();
  h->set_step_size(s.step_size);
  h->set_n_leapfrog(s.n_leapfrog);
  h->set_jitter_step_size(s.jitter_step_size);
  h->set_jitter_n_leapfrog(s.jitter_n_leapfrog);
  h->set_metric(v1::UNIT);
  c.set_warmup(s.warmup);
  c.set_iterations(s.iterations);
  c.mutable_output()->set_thin(s.thin);
  c.mutable_output()->set_write_warmup(s.write_warmup);
  c.mutable_init()->set_uniform_radius(2.0);
  return c;
}

// Mean (1, -1, 0.5), covariance with correlations up to 0.42 (SPD: leading minors 1, 1.64, 0.702).
std::shared_ptr<targets::Gaussian> correlated_gaussian_3d() {
  Vector mean(3);
  mean << 1.0, -1.0, 0.5;
  Matrix cov(3, 3);
  cov << 1.0, 0.6, 0.3,  //
      0.6, 2.0, -0.5,    //
      0.3, -0.5, 0.8;
  return std::make_shared<targets::Gaussian>(mean, cov);
}

struct RunResult {
  v1::ChainSummary summary;
  std::vector<Draw> draws;
  std::int64_t ticks = 0;
};

RunResult run(const v1::RunConfig& config, targets::TargetPtr target, int chain_id,
              std::uint64_t seed) {
  RunResult r;
  ChainCallbacks cb;
  cb.emit = [&](const Record& rec) {
    ASSERT_TRUE(rec.has_draw());
    r.draws.push_back(rec.draw());
  };
  cb.tick = [&] { ++r.ticks; };
  r.summary = run_chain(config, std::move(target), ChainTask{chain_id, seed}, cb);
  return r;
}

Vector state_of(const Draw& d) { return Eigen::Map<const Vector>(d.state().data(), d.state_size()); }

// --- determinism and keying ----------------------------------------------------------------------

TEST(ChainDriver, SameTaskTwiceGivesIdenticalDraws) {
  HmcSetup s;
  s.jitter_step_size = s.jitter_n_leapfrog = true;  // exercise every random draw of the kernel
  s.warmup = 20;
  s.write_warmup = true;
  const auto config = make_config(s);
  const auto a = run(config, correlated_gaussian_3d(), 3, 99);
  const auto b = run(config, correlated_gaussian_3d(), 3, 99);
  ASSERT_EQ(a.summary.status(), "ok");
  ASSERT_EQ(a.draws.size(), b.draws.size());
  ASSERT_EQ(a.draws.size(), 70u);
  for (std::size_t i = 0; i < a.draws.size(); ++i)
    EXPECT_TRUE(MessageDifferencer::Equals(a.draws[i], b.draws[i])) << "draw " << i;
  // Summaries agree except for the wall and CPU times.
  auto sa = a.summary, sb = b.summary;
  for (auto* s : {&sa, &sb}) {
    s->clear_wall_seconds();
    s->clear_cpu_seconds();
  }
  EXPECT_TRUE(MessageDifferencer::Equals(sa, sb));
}

TEST(ChainDriver, ReportsTheChainsThreadCpuTime) {
  HmcSetup s;
  s.iterations = 20000;
  const auto r = run(make_config(s), correlated_gaussian_3d(), 0, 5);
  ASSERT_EQ(r.summary.status(), "ok");
  EXPECT_GT(r.summary.cpu_seconds(), 0.0);
  // One thread cannot use more CPU than wall time (clock granularity aside).
  EXPECT_LE(r.summary.cpu_seconds(), r.summary.wall_seconds() + 1e-3);
}

TEST(ChainDriver, DifferentChainIdsOrSeedsGiveDifferentDraws) {
  const auto config = make_config(HmcSetup{});
  const auto base = run(config, correlated_gaussian_3d(), 0, 7);
  const auto other_chain = run(config, correlated_gaussian_3d(), 1, 7);
  const auto other_seed = run(config, correlated_gaussian_3d(), 0, 8);
  ASSERT_EQ(base.draws.size(), 50u);
  for (const RunResult* r : {&other_chain, &other_seed}) {
    ASSERT_EQ(r->draws.size(), base.draws.size());
    // Independent streams: no coordinate of any draw should coincide (continuous distribution;
    // a rejected move repeats a chain's own previous state, never the other chain's).
    for (std::size_t i = 0; i < base.draws.size(); ++i)
      for (int k = 0; k < 3; ++k)
        EXPECT_NE(base.draws[i].state(k), r->draws[i].state(k)) << "draw " << i << " coord " << k;
  }
  EXPECT_EQ(other_chain.draws[0].chain_id(), 1);
  EXPECT_EQ(other_seed.draws[0].seed(), 8u);
}

// --- output: thinning, warmup ---------------------------------------------------------------------

TEST(ChainDriver, ThinningKeepsEveryThinthIterationOfTheSameChain) {
  HmcSetup s;
  s.iterations = 23;
  const auto all = run(make_config(s), correlated_gaussian_3d(), 2, 5);
  s.thin = 4;
  const auto thinned = run(make_config(s), correlated_gaussian_3d(), 2, 5);
  ASSERT_EQ(all.draws.size(), 23u);
  // Iterations 0, 4, ..., 20: ceil(23 / 4) = 6 draws.
  ASSERT_EQ(thinned.draws.size(), 6u);
  EXPECT_EQ(thinned.summary.n_draws(), 6);
  EXPECT_EQ(all.summary.n_draws(), 23);
  for (std::size_t j = 0; j < thinned.draws.size(); ++j) {
    const auto& d = thinned.draws[j];
    EXPECT_EQ(d.iteration(), static_cast<std::int64_t>(4 * j));
    EXPECT_FALSE(d.warmup());
    // Thinning only drops output: the chain itself is unchanged.
    EXPECT_TRUE(MessageDifferencer::Equals(d, all.draws[4 * j])) << "iteration " << 4 * j;
  }
  // The chain ran all iterations either way.
  EXPECT_EQ(thinned.ticks, 23);
  EXPECT_EQ(thinned.summary.n_gradient_evals(), all.summary.n_gradient_evals());
}

TEST(ChainDriver, WriteWarmupEmitsFlaggedWarmupDrawsFirst) {
  HmcSetup s;
  s.warmup = 7;
  s.iterations = 5;
  s.write_warmup = true;
  const auto with = run(make_config(s), correlated_gaussian_3d(), 0, 11);
  s.write_warmup = false;
  const auto without = run(make_config(s), correlated_gaussian_3d(), 0, 11);

  ASSERT_EQ(with.draws.size(), 12u);
  for (int i = 0; i < 7; ++i) {
    EXPECT_TRUE(with.draws[i].warmup()) << i;
    EXPECT_EQ(with.draws[i].iteration(), i);  // warmup draws have their own counter
  }
  for (int i = 0; i < 5; ++i) {
    const auto& d = with.draws[7 + i];
    EXPECT_FALSE(d.warmup()) << i;
    EXPECT_EQ(d.iteration(), i);
    // Writing warmup changes the output only, not the chain.
    EXPECT_TRUE(MessageDifferencer::Equals(d, without.draws[i])) << i;
  }
  ASSERT_EQ(without.draws.size(), 5u);
  for (const auto& d : without.draws) EXPECT_FALSE(d.warmup());
  // n_draws counts post-warmup draws only.
  EXPECT_EQ(with.summary.n_draws(), 5);
  EXPECT_EQ(without.summary.n_draws(), 5);
  EXPECT_EQ(with.ticks, 12);
}

TEST(ChainDriver, DrawFieldsDescribeTheTransition) {
  HmcSetup s;
  s.iterations = 30;
  auto target = correlated_gaussian_3d();
  const auto r = run(make_config(s), target, 4, 21);
  ASSERT_EQ(r.summary.status(), "ok");
  ASSERT_EQ(r.draws.size(), 30u);
  double sum_accept = 0;
  int n_accepted = 0;
  for (std::size_t i = 0; i < r.draws.size(); ++i) {
    const auto& d = r.draws[i];
    EXPECT_EQ(d.run_id(), "driver-test");
    EXPECT_EQ(d.chain_id(), 4);
    EXPECT_EQ(d.seed(), 21u);
    ASSERT_EQ(d.state_size(), 3);
    EXPECT_NEAR(d.potential(), target->potential(state_of(d)), 1e-12 * (1 + d.potential()));
    EXPECT_EQ(d.step_size(), 0.25);
    EXPECT_EQ(d.n_leapfrog(), 8);
    EXPECT_GE(d.accept_stat(), 0.0);
    EXPECT_LE(d.accept_stat(), 1.0);
    EXPECT_FALSE(d.divergent());
    // A rejection repeats the previous state exactly; an acceptance moves it.
    if (i > 0) {
      EXPECT_EQ(!d.accepted(), state_of(d) == state_of(r.draws[i - 1])) << i;
    }
    sum_accept += d.accept_stat();
    n_accepted += d.accepted();
  }
  EXPECT_NEAR(r.summary.mean_accept_stat(), sum_accept / 30.0, 1e-12);
  EXPECT_GT(n_accepted, 0);
  EXPECT_EQ(r.summary.n_divergent(), 0);
  EXPECT_EQ(r.summary.final_step_size(), 0.25);
  EXPECT_EQ(r.summary.chain_id(), 4);
  EXPECT_EQ(r.summary.seed(), 21u);
}

// --- cost accounting -----------------------------------------------------------------------------

TEST(ChainDriver, GradientEvaluationsAreCountedExactly) {
  // Fixed L, no jitter, a Gaussian (every trajectory finite): one evaluation for the initial
  // point, then L per transition, warmup included.
  for (int L : {1, 5, 13}) {
    HmcSetup s;
    s.n_leapfrog = L;
    s.warmup = 17;
    s.iterations = 41;
    s.thin = 3;
    const auto r = run(make_config(s), correlated_gaussian_3d(), 0, 3);
    ASSERT_EQ(r.summary.status(), "ok");
    EXPECT_EQ(r.summary.n_gradient_evals(), 1 + (17 + 41) * L) << "L=" << L;
    EXPECT_EQ(r.summary.n_gradient_evals_warmup(), 1 + 17 * L) << "L=" << L;
    EXPECT_EQ(r.summary.n_draws(), 14);  // ceil(41 / 3)
    EXPECT_EQ(static_cast<std::int64_t>(r.draws.size()), r.summary.n_draws());
  }
}

TEST(ChainDriver, JitteredPathLengthsAddUpToTheGradientCount) {
  HmcSetup s;
  s.n_leapfrog = 6;
  s.jitter_n_leapfrog = true;
  s.warmup = 10;
  s.iterations = 60;
  s.write_warmup = true;  // every transition is emitted, so the draws account for every step
  const auto r = run(make_config(s), correlated_gaussian_3d(), 1, 4);
  ASSERT_EQ(r.draws.size(), 70u);
  std::int64_t steps = 0, warmup_steps = 0;
  int min_l = 1000, max_l = 0;
  for (const auto& d : r.draws) {
    steps += d.n_leapfrog();
    if (d.warmup()) warmup_steps += d.n_leapfrog();
    min_l = std::min(min_l, d.n_leapfrog());
    max_l = std::max(max_l, d.n_leapfrog());
  }
  EXPECT_EQ(r.summary.n_gradient_evals(), 1 + steps);
  EXPECT_EQ(r.summary.n_gradient_evals_warmup(), 1 + warmup_steps);
  EXPECT_GE(min_l, 1);
  EXPECT_LE(max_l, 11);  // U{1, ..., 2L - 1}
  EXPECT_LT(min_l, max_l);
}

// Issue 31, item 5: n_gradient_evals counts the target's gradients. A pseudo-extended evaluation
// computes N of them (one per pseudo-sample), so with fixed L: extended evaluations 1 + T L, target
// gradients N times that; both in the summary and, for warmup, in the _warmup fields.
TEST(ChainDriver, PseudoExtendedCountsNTargetGradientsPerExtendedEvaluation) {
  v1::RunConfig c;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      "name: 'pe' warmup: 7 iterations: 11 init { uniform_radius: 1 } sampler { pseudo_extended { "
      "n_pseudo: 3 beta_lower: 0.1 hmc { step_size: 0.05 n_leapfrog: 4 metric: UNIT } } }",
      &c));
  const auto r = run(c, correlated_gaussian_3d(), 0, 9);
  ASSERT_EQ(r.summary.status(), "ok");
  const std::int64_t extended = 1 + (7 + 11) * 4, extended_warmup = 1 + 7 * 4;
  EXPECT_EQ(r.summary.n_extended_gradient_evals(), extended);
  EXPECT_EQ(r.summary.n_extended_gradient_evals_warmup(), extended_warmup);
  EXPECT_EQ(r.summary.n_gradient_evals(), 3 * extended);
  EXPECT_EQ(r.summary.n_gradient_evals_warmup(), 3 * extended_warmup);
  // A plain sampler's two counts are one.
  HmcSetup h;
  h.warmup = 3;
  const auto plain = run(make_config(h), correlated_gaussian_3d(), 0, 9);
  EXPECT_EQ(plain.summary.n_extended_gradient_evals(), plain.summary.n_gradient_evals());
  EXPECT_EQ(plain.summary.n_extended_gradient_evals_warmup(), plain.summary.n_gradient_evals_warmup());
}

// --- failures ----------------------------------------------------------------------------------

// A target whose potential is +inf (or NaN, or throws) everywhere.
class BrokenTarget final : public targets::Target {
 public:
  enum class Mode { kInfinite, kNaN, kThrowPemc, kThrowStd };
  explicit BrokenTarget(Mode mode) : mode_(mode) {}
  int dim() const override { return 2; }
  std::string name() const override { return "broken"; }
  double potential(ConstVectorRef) const override { return value(); }
  double potential_and_gradient(ConstVectorRef, VectorRef grad) const override {
    grad.setZero();
    return value();
  }

 private:
  double value() const {
    switch (mode_) {
      case Mode::kInfinite: return std::numeric_limits<double>::infinity();
      case Mode::kNaN: return std::nan("");
      case Mode::kThrowPemc: throw NumericalError("broken target: always fails");
      case Mode::kThrowStd: throw std::runtime_error("broken target: std exception");
    }
    return 0.0;
  }
  Mode mode_;
};

TEST(ChainDriver, NoFiniteInitialPointFailsTheChainWithoutCrashing) {
  using Mode = BrokenTarget::Mode;
  for (Mode mode : {Mode::kInfinite, Mode::kNaN, Mode::kThrowPemc, Mode::kThrowStd}) {
    SCOPED_TRACE(static_cast<int>(mode));
    HmcSetup s;
    s.warmup = 5;
    s.write_warmup = true;
    RunResult r;
    ASSERT_NO_THROW(r = run(make_config(s), std::make_shared<BrokenTarget>(mode), 6, 1));
    EXPECT_EQ(r.summary.status().rfind("failed:", 0), 0u) << r.summary.status();
    EXPECT_TRUE(r.draws.empty());
    EXPECT_EQ(r.summary.n_draws(), 0);
    EXPECT_EQ(r.summary.chain_id(), 6);
    EXPECT_GE(r.summary.wall_seconds(), 0.0);
  }
  // The non-finite case says what to check.
  const auto r = run(make_config(HmcSetup{}),
                     std::make_shared<BrokenTarget>(BrokenTarget::Mode::kInfinite), 0, 1);
  EXPECT_NE(r.summary.status().find("init"), std::string::npos) << r.summary.status();
  EXPECT_GT(r.summary.n_gradient_evals(), 1);  // it tried more than one initial point
}

TEST(ChainDriver, InitPointOfTheWrongDimensionFailsTheChain) {
  auto config = make_config(HmcSetup{});
  config.mutable_init()->mutable_point()->add_x(0.5);  // target has dimension 3
  const auto r = run(config, correlated_gaussian_3d(), 0, 1);
  EXPECT_EQ(r.summary.status().rfind("failed:", 0), 0u) << r.summary.status();
  EXPECT_NE(r.summary.status().find("init.point"), std::string::npos) << r.summary.status();
  EXPECT_TRUE(r.draws.empty());
}

TEST(ChainDriver, FixedInitPointIsUsed) {
  auto config = make_config(HmcSetup{});
  auto* p = config.mutable_init()->mutable_point();
  p->add_x(3.0);
  p->add_x(-2.0);
  p->add_x(1.0);
  config.mutable_sampler()->mutable_hmc()->set_step_size(1e-9);  // barely moves
  config.set_iterations(1);
  const auto r = run(config, correlated_gaussian_3d(), 0, 1);
  ASSERT_EQ(r.draws.size(), 1u);
  EXPECT_NEAR(r.draws[0].state(0), 3.0, 1e-6);
  EXPECT_NEAR(r.draws[0].state(1), -2.0, 1e-6);
  EXPECT_NEAR(r.draws[0].state(2), 1.0, 1e-6);
}

// --- Monte Carlo correctness ------------------------------------------------------------------------

// Batch-means MCSE: split the n draws into B equal consecutive batches, take the batch averages
// a_b; when the batches are much longer than the autocorrelation time, the a_b are nearly
// independent with variance Var(mean) * B, so MCSE = sd(a_b) / sqrt(B). With B = 50 the MCSE is
// itself estimated to about 1/sqrt(2 (B-1)) = 10 % relative, small against the 4-SE band.
double batch_means_mcse(const std::vector<double>& v, int n_batches) {
  const std::size_t len = v.size() / static_cast<std::size_t>(n_batches);
  std::vector<double> a(static_cast<std::size_t>(n_batches), 0.0);
  for (int b = 0; b < n_batches; ++b) {
    for (std::size_t i = 0; i < len; ++i) a[b] += v[b * len + i];
    a[b] /= static_cast<double>(len);
  }
  double m = 0.0;
  for (double x : a) m += x;
  m /= n_batches;
  double ss = 0.0;
  for (double x : a) ss += (x - m) * (x - m);
  return std::sqrt(ss / (n_batches - 1) / n_batches);
}

TEST(ChainDriver, HmcRecoversMomentsOfACorrelatedGaussian) {
  // One chain, fixed seed: 500 warmup (discarded, no adaptation) + 200,000 draws, unit metric,
  // eps ~ U[0.9, 1.1] * 0.3 (jitter avoids a resonant, non-ergodic fixed trajectory length on a
  // Gaussian), L = 10. 50 batches of 4,000 draws; every estimate must be within 4 MCSE of the
  // exact value (6 checks: a correct sampler fails one with probability ~4e-4 over seeds).
  HmcSetup s;
  s.step_size = 0.3;
  s.n_leapfrog = 10;
  s.jitter_step_size = true;
  s.warmup = 500;
  s.iterations = 200'000;
  auto target = correlated_gaussian_3d();
  const auto truth = target->truth();
  std::vector<std::vector<double>> x(3), x2(3);
  ChainCallbacks cb;
  cb.emit = [&](const Record& rec) {
    for (int k = 0; k < 3; ++k) {
      const double v = rec.draw().state(k);
      x[k].push_back(v);
      x2[k].push_back(v * v);
    }
  };
  const auto summary = run_chain(make_config(s), target, ChainTask{0, 20240611}, cb);
  ASSERT_EQ(summary.status(), "ok");
  ASSERT_EQ(x[0].size(), 200'000u);
  EXPECT_GT(summary.mean_accept_stat(), 0.5);  // sanity: the step size is sensible
  constexpr int kBatches = 50;
  for (int k = 0; k < 3; ++k) {
    double m = 0.0, m2 = 0.0;
    for (std::size_t i = 0; i < x[k].size(); ++i) {
      m += x[k][i];
      m2 += x2[k][i];
    }
    m /= static_cast<double>(x[k].size());
    m2 /= static_cast<double>(x[k].size());
    const double se = batch_means_mcse(x[k], kBatches);
    const double se2 = batch_means_mcse(x2[k], kBatches);
    EXPECT_GT(se, 0.0);
    EXPECT_NEAR(m, (*truth.mean)[k], 4.0 * se) << "E[x_" << k << "], MCSE " << se;
    EXPECT_NEAR(m2, (*truth.second_moment)[k], 4.0 * se2) << "E[x_" << k << "^2], MCSE " << se2;
  }
}

}  // namespace
}  // namespace pemc::runner
