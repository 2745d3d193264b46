// Kernel save_state/restore_state round trips (checkpoint/resume, docs/checkpointing.md):
// a kernel built afresh and restored from another's saved state makes exactly the same transitions
// from then on — through the rest of warmup (adaptation windows, metric updates), end_warmup and
// sampling — as the original, bit for bit. A kernel that is not restored does not (the check can
// fail).
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include "kernels/hmc.hpp"
#include "kernels/mala.hpp"
#include "kernels/nuts.hpp"
#include "kernels/rwm.hpp"
#include "rng/stream.hpp"
#include "targets/gaussian.hpp"

namespace pemc::kernels {
namespace {

constexpr std::uint64_t kSeed = 99;
constexpr std::int64_t kWarmup = 120;
constexpr std::int64_t kTotal = 180;

targets::TargetPtr correlated_gaussian() {
  Matrix cov(3, 3);
  cov << 1.0, 0.6, 0.0, 0.6, 2.0, -0.3, 0.0, -0.3, 0.5;
  return std::make_shared<targets::Gaussian>(Vector(Vector::LinSpaced(3, 1.0, -1.0)), cov);
}

adapt::WarmupAdapterOptions adaptation() {
  adapt::WarmupAdapterOptions o;
  o.adapt_metric = true;
  o.init_buffer = 15;
  o.base_window = 10;
  o.term_buffer = 10;
  return o;
}

using Factory = std::function<KernelPtr(targets::TargetPtr)>;

// Drives iterations [from, to) as the chain driver does; returns the states' bits.
std::vector<double> drive(Kernel& k, ChainState& s, std::int64_t from, std::int64_t to) {
  std::vector<double> trace;
  for (std::int64_t t = from; t < to; ++t) {
    if (t == kWarmup) k.end_warmup();
    rng::Stream stream(kSeed, rng::Domain::kTransition, 0, static_cast<std::uint64_t>(t));
    const auto st = k.transition(s, stream);
    if (t < kWarmup) k.adapt(t, s, st);
    trace.insert(trace.end(), s.x.data(), s.x.data() + s.x.size());
    trace.push_back(st.step_size);
  }
  return trace;
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

void check_round_trip(const Factory& make) {
  auto target = correlated_gaussian();
  for (const std::int64_t stop : {std::int64_t{20}, std::int64_t{47}, kWarmup, kWarmup + 30}) {
    SCOPED_TRACE("saved after " + std::to_string(stop) + " iterations");
    auto original = make(target);
    ChainState s;
    s.x = Vector::Zero(3);
    refresh(*target, s);
    original->begin_warmup(kWarmup);
    drive(*original, s, 0, stop);
    ASSERT_TRUE(original->can_checkpoint());
    pemc::v1::KernelState saved;
    original->save_state(saved);
    pemc::v1::KernelState parsed;
    ASSERT_TRUE(parsed.ParseFromString(saved.SerializeAsString()));

    auto restored = make(target);
    if (stop <= kWarmup) restored->begin_warmup(kWarmup);
    restored->restore_state(parsed);
    const ChainState at_stop = s;
    ChainState s2 = s;
    const auto expected = drive(*original, s, stop, kTotal);
    const auto got = drive(*restored, s2, stop, kTotal);
    EXPECT_TRUE(same_bits(expected, got)) << original->name() << ": restored kernel diverged";

    // Control: a fresh kernel that was not restored, from the same state, takes other transitions.
    auto fresh = make(target);
    if (stop <= kWarmup) fresh->begin_warmup(kWarmup);
    ChainState s3 = at_stop;
    EXPECT_FALSE(same_bits(expected, drive(*fresh, s3, stop, kTotal)))
        << original->name() << ": the control did not differ";
  }
}

TEST(KernelCheckpoint, HmcDiagonalMetricAdaptation) {
  check_round_trip([](targets::TargetPtr t) {
    HmcOptions o;
    o.step_size = 0.3;
    o.n_leapfrog = 6;
    o.jitter_step_size = true;
    o.adaptation = adaptation();
    return std::make_unique<HmcKernel>(t, hmc::Metric::diagonal(Vector::Ones(3)), o);
  });
}

TEST(KernelCheckpoint, NutsDenseMetricAdaptation) {
  check_round_trip([](targets::TargetPtr t) {
    NutsOptions o;
    o.step_size = 0.3;
    o.adaptation = adaptation();
    return std::make_unique<NutsKernel>(t, hmc::Metric::dense(Matrix::Identity(3, 3)), o);
  });
}

TEST(KernelCheckpoint, RwmAndMala) {
  check_round_trip([](targets::TargetPtr t) {
    RwmOptions o;
    o.proposal_scale = 0.5;
    o.adaptation = adaptation();
    return std::make_unique<RwmKernel>(t, hmc::Metric::diagonal(Vector::Ones(3)), o);
  });
  check_round_trip([](targets::TargetPtr t) {
    MalaOptions o;
    o.step_size = 0.2;
    o.adaptation = adaptation();
    return std::make_unique<MalaKernel>(t, hmc::Metric::diagonal(Vector::Ones(3)), o);
  });
}

// A state saved during warmup cannot go into a kernel that is not in warmup (no adapter).
TEST(KernelCheckpoint, WarmupStateNeedsAnAdapter) {
  auto target = correlated_gaussian();
  HmcOptions o;
  o.adaptation = adaptation();
  HmcKernel a(target, hmc::Metric::unit(3), o), b(target, hmc::Metric::unit(3), o);
  a.begin_warmup(kWarmup);
  pemc::v1::KernelState saved;
  a.save_state(saved);
  EXPECT_THROW(b.restore_state(saved), DataError);
}

}  // namespace
}  // namespace pemc::kernels
