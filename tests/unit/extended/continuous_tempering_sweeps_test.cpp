// RepeatedTransitionKernel (src/extended/repeated_transition_kernel.hpp), continuous tempering's
// sweeps_per_draw: after warmup one transition = k transitions of the wrapped kernel from the same
// stream (so the chain is exactly the unwrapped chain read every k-th state), the wrapped CT
// kernel's Rao-Blackwellised sums take all k states, warmup stays one sweep per iteration, stats
// are summed/averaged as documented (the config field: tests/unit/config/ct_sweeps_config_test.cpp).
#include "extended/repeated_transition_kernel.hpp"

#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "densities/gaussian.hpp"
#include "extended/continuous_tempering.hpp"
#include "extended/continuous_tempering_bootstrap.hpp"
#include "kernels/hmc.hpp"
#include "targets/mixture.hpp"

namespace pemc::extended {
namespace {

std::shared_ptr<targets::GaussianMixture> bimodal() {
  using C = targets::GaussianMixture::Component;
  return std::make_shared<targets::GaussianMixture>(std::vector<C>{
      C{0.5, Vector::Constant(1, -1.0), Vector::Constant(1, 0.1)},
      C{0.5, Vector::Constant(1, 1.0), Vector::Constant(1, 0.02)}});
}

ExtendedSampler make(TemperingVariant variant) {
  ContinuousTemperingOptions o;
  o.variant = variant;
  BaseDensity base{std::make_shared<const densities::Gaussian>(densities::Gaussian::from_covariance(
                       Vector::Constant(1, 0.0), Matrix::Constant(1, 1, 1.06))),
                   0.3, "test"};
  return make_continuous_tempering(bimodal(), std::move(base), o, [](targets::TargetPtr space) {
    kernels::HmcOptions h;
    h.step_size = 0.15;
    h.n_leapfrog = 7;
    h.jitter_step_size = true;
    h.jitter_n_leapfrog = true;
    return std::make_unique<kernels::HmcKernel>(space, hmc::Metric::unit(space->dim()), h);
  });
}

kernels::ChainState start(const targets::Target& space) {
  kernels::ChainState s;
  s.x.resize(space.dim());
  space.initial_point([](VectorRef b) { b.setConstant(-1.0); }, s.x);
  kernels::refresh(space, s);
  return s;
}

const estimators::TemperingRbAccumulator& rb(const kernels::Kernel& k) {
  if (const auto* g = dynamic_cast<const GibbsTemperingKernel*>(&k)) return g->rb_accumulator();
  return dynamic_cast<const JointTemperingKernel&>(k).rb_accumulator();
}

TEST(RepeatedTransitionKernel, IsTheUnwrappedChainReadEveryKthState) {
  for (auto variant : {TemperingVariant::kJoint, TemperingVariant::kGibbs}) {
    const int k = 3, n_warmup = 20, n_iter = 50;
    auto plain = make(variant);
    auto wrapped_s = make(variant);
    RepeatedTransitionKernel wrapped(std::move(wrapped_s.kernel), k);
    auto a = start(*plain.space), b = start(*wrapped_s.space);
    plain.kernel->begin_warmup(n_warmup);
    wrapped.begin_warmup(n_warmup);
    std::int64_t grads_a = 0, grads_b = 0;
    for (int t = 0; t < n_warmup + n_iter; ++t) {
      if (t == n_warmup) {
        plain.kernel->end_warmup();
        wrapped.end_warmup();
      }
      rng::Stream sa(5, rng::Domain::kTransition, 0, static_cast<std::uint64_t>(t));
      rng::Stream sb(5, rng::Domain::kTransition, 0, static_cast<std::uint64_t>(t));
      const int reps = t < n_warmup ? 1 : k;  // warmup: one sweep per iteration
      double accept = 0.0;
      for (int r = 0; r < reps; ++r) {
        const auto st = plain.kernel->transition(a, sa);
        grads_a += st.n_gradient_evals;
        accept += st.accept_stat / reps;
        if (t < n_warmup) plain.kernel->adapt(t, a, st);
      }
      const auto stb = wrapped.transition(b, sb);
      grads_b += stb.n_gradient_evals;
      if (t < n_warmup) wrapped.adapt(t, b, stb);
      ASSERT_EQ(a.x, b.x) << "iteration " << t;
      EXPECT_EQ(a.potential, b.potential);
      EXPECT_DOUBLE_EQ(stb.accept_stat, accept);
    }
    EXPECT_EQ(grads_a, grads_b);
    // The RB sums hold every sweep after warmup, not only the returned states.
    EXPECT_EQ(rb(wrapped.inner()).count(), static_cast<std::int64_t>(k) * n_iter);
    EXPECT_EQ(rb(*plain.kernel).count(), static_cast<std::int64_t>(k) * n_iter);
    EXPECT_EQ(rb(wrapped.inner()).log_z(0.3), rb(*plain.kernel).log_z(0.3));
    std::map<std::string, double> est;
    wrapped.report_estimates(est);
    EXPECT_EQ(est.at("rb_draws"), k * n_iter);
    EXPECT_EQ(est.at("sweeps_per_draw"), k);
  }
}

TEST(RepeatedTransitionKernel, OneSweepIsTheWrappedKernel) {
  auto plain = make(TemperingVariant::kGibbs);
  auto w = make(TemperingVariant::kGibbs);
  RepeatedTransitionKernel wrapped(std::move(w.kernel), 1);
  auto a = start(*plain.space), b = start(*w.space);
  for (int t = 0; t < 30; ++t) {
    rng::Stream sa(9, rng::Domain::kTransition, 0, static_cast<std::uint64_t>(t));
    rng::Stream sb(9, rng::Domain::kTransition, 0, static_cast<std::uint64_t>(t));
    const auto x = plain.kernel->transition(a, sa);
    const auto y = wrapped.transition(b, sb);
    ASSERT_EQ(a.x, b.x);
    EXPECT_EQ(x.n_gradient_evals, y.n_gradient_evals);
    EXPECT_EQ(x.accept_stat, y.accept_stat);
  }
  std::map<std::string, double> est;
  wrapped.report_estimates(est);
  EXPECT_EQ(est.count("sweeps_per_draw"), 0u);
}

TEST(RepeatedTransitionKernel, RejectsBadArguments) {
  EXPECT_THROW(RepeatedTransitionKernel(nullptr, 2), ConfigError);
  EXPECT_THROW(RepeatedTransitionKernel(make(TemperingVariant::kGibbs).kernel, 0), ConfigError);
}

// Bootstrap rounds with sweeps_per_draw k run k x draws_per_round single-sweep draws (so the refit,
// built from the round's draws, sees every sweep); the final round keeps the run's k.
TEST(RepeatedTransitionKernel, BootstrapRoundsRecordEverySweep) {
  v1::RunConfig run;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      "name: 'r' warmup: 300 iterations: 5000 output { path: 'x.pemc' } sampler { "
      "continuous_tempering { hmc { step_size: 0.1 } base { gaussian { mean: [0.5] variance: [2] "
      "log_zeta: 1 } } bootstrap { rounds: 2 draws_per_round: 700 warmup: 50 } sweeps_per_draw: 4 } }",
      &run));
  EXPECT_EQ(bootstrap_sweeps_per_draw(run), 4);
  EXPECT_EQ(bootstrap_extra_iterations(run), 2 * (50 + 4 * 700));
  const auto r0 = bootstrap_round_config(run, 0, nullptr);
  EXPECT_EQ(r0.iterations(), 4 * 700);
  EXPECT_FALSE(r0.sampler().continuous_tempering().has_sweeps_per_draw());
  EXPECT_EQ(r0.warmup(), 50);
  v1::BaseDensityConfig base;
  base.mutable_gaussian()->add_mean(1.0);
  base.mutable_gaussian()->set_log_zeta(0.0);
  const auto fin = bootstrap_round_config(run, 2, &base);
  EXPECT_EQ(fin.iterations(), 5000);
  EXPECT_EQ(fin.sampler().continuous_tempering().sweeps_per_draw(), 4);
  // Without the field: unchanged behaviour.
  run.mutable_sampler()->mutable_continuous_tempering()->clear_sweeps_per_draw();
  EXPECT_EQ(bootstrap_sweeps_per_draw(run), 1);
  EXPECT_EQ(bootstrap_round_config(run, 0, nullptr).iterations(), 700);
  EXPECT_EQ(bootstrap_extra_iterations(run), 2 * (50 + 700));
}

}  // namespace
}  // namespace pemc::extended
