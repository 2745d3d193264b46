// NUTS mechanics (tree depth, leapfrog and gradient counts, divergences, reproducibility, options)
// and the behaviour of every kernel at non-finite proposals.
#include "kernels/nuts.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>

#include "core/error.hpp"
#include "kernels/hmc.hpp"
#include "kernels/mala.hpp"
#include "kernels/rwm.hpp"
#include "rng/stream.hpp"
#include "support/gradient_check.hpp"
#include "targets/gaussian.hpp"

namespace pemc::kernels {
namespace {

std::shared_ptr<targets::Gaussian> standard_gaussian(int d) {
  return std::make_shared<targets::Gaussian>(Vector::Zero(d), Matrix::Identity(d, d));
}

ChainState state_at(const targets::Target& t, const Vector& x) {
  ChainState s;
  s.x = x;
  refresh(t, s);
  return s;
}

rng::Stream transition_stream(std::uint64_t seed, std::uint64_t iteration) {
  return rng::Stream(seed, rng::Domain::kTransition, 0, iteration);
}

// Neal's funnel: v ~ N(0, 3^2), x_i | v ~ N(0, e^v). In the neck (v << 0) the scale of x is tiny
// and a fixed step size makes the leapfrog unstable: the canonical source of divergences.
class Funnel final : public targets::Target {
 public:
  explicit Funnel(int dim) : dim_(dim) {}
  int dim() const override { return dim_; }
  std::string name() const override { return "funnel"; }
  double potential(ConstVectorRef z) const override {
    const double v = z[0];
    const auto x = z.tail(dim_ - 1);
    return v * v / 18.0 + 0.5 * (dim_ - 1) * v + 0.5 * x.squaredNorm() * std::exp(-v);
  }
  double potential_and_gradient(ConstVectorRef z, VectorRef g) const override {
    const double v = z[0];
    const auto x = z.tail(dim_ - 1);
    const double e = std::exp(-v);
    g[0] = v / 9.0 + 0.5 * (dim_ - 1) - 0.5 * x.squaredNorm() * e;
    g.tail(dim_ - 1) = x * e;
    return potential(z);
  }

 private:
  int dim_;
};

TEST(Nuts, FunnelGradientIsCorrect) {
  Funnel f(4);
  Vector z(4);
  z << -1.0, 0.3, -0.2, 0.5;
  pemc::testing::expect_gradient_matches(f, z);
}

TEST(Nuts, GradientEvaluationsEqualLeapfrogStepsAndMatchTheTreeDepth) {
  auto g = standard_gaussian(4);
  NutsOptions o;
  o.step_size = 0.2;
  NutsKernel kernel(g, hmc::Metric::unit(4), o);
  ChainState s = state_at(*g, Vector::Constant(4, 0.5));
  int n_full = 0;
  for (std::uint64_t t = 0; t < 500; ++t) {
    auto stream = transition_stream(1, t);
    const TransitionStats st = kernel.transition(s, stream);
    ASSERT_EQ(st.n_gradient_evals, st.n_leapfrog);
    ASSERT_FALSE(st.divergent);
    ASSERT_GE(st.tree_depth, 1);
    // A tree of depth j has 2^j - 1 steps; a doubling abandoned for an inner U-turn adds up to
    // 2^j more (the partial subtree was integrated, and counted, before it was rejected).
    const int full = (1 << st.tree_depth) - 1;
    ASSERT_GE(st.n_leapfrog, full);
    ASSERT_LE(st.n_leapfrog, 2 * full + 1);
    n_full += st.n_leapfrog == full;
    ASSERT_GT(st.accept_stat, 0.0);
    ASSERT_LE(st.accept_stat, 1.0);
    ASSERT_EQ(st.step_size, 0.2);
  }
  EXPECT_GT(n_full, 0);
  EXPECT_LT(n_full, 500) << "some trees should stop on an inner U-turn";
}

TEST(Nuts, TinyStepsRunToTheMaximumDepth) {
  auto g = standard_gaussian(3);
  NutsOptions o;
  o.step_size = 1e-3;  // 7 steps of 1e-3 cannot make a U-turn on a unit-scale target
  o.max_tree_depth = 3;
  NutsKernel kernel(g, hmc::Metric::unit(3), o);
  ChainState s = state_at(*g, Vector::Constant(3, 0.3));
  for (std::uint64_t t = 0; t < 50; ++t) {
    auto stream = transition_stream(2, t);
    const TransitionStats st = kernel.transition(s, stream);
    EXPECT_EQ(st.tree_depth, 3);
    EXPECT_EQ(st.n_leapfrog, 7);
    EXPECT_EQ(st.n_gradient_evals, 7);
    EXPECT_GT(st.accept_stat, 0.999);
  }
}

TEST(Nuts, SameStreamSameResult) {
  auto g = standard_gaussian(5);
  NutsOptions o;
  o.step_size = 0.4;
  NutsKernel a(g, hmc::Metric::diagonal(Vector::Constant(5, 1.3)), o);
  NutsKernel b(g, hmc::Metric::diagonal(Vector::Constant(5, 1.3)), o);
  ChainState sa = state_at(*g, Vector::Constant(5, 0.1)), sb = sa;
  for (std::uint64_t t = 0; t < 100; ++t) {
    auto s1 = transition_stream(3, t), s2 = transition_stream(3, t);
    const TransitionStats x = a.transition(sa, s1), y = b.transition(sb, s2);
    ASSERT_EQ(sa.x, sb.x);
    ASSERT_EQ(x.n_leapfrog, y.n_leapfrog);
    ASSERT_EQ(x.energy, y.energy);
  }
}

TEST(Nuts, ReturnsAValidStateAndConsistentStats) {
  auto g = standard_gaussian(3);
  NutsOptions o;
  o.step_size = 0.5;
  NutsKernel kernel(g, hmc::Metric::unit(3), o);
  ChainState s = state_at(*g, Vector::Constant(3, 1.0));
  int moved = 0;
  for (std::uint64_t t = 0; t < 200; ++t) {
    const Vector before = s.x;
    auto stream = transition_stream(4, t);
    const TransitionStats st = kernel.transition(s, stream);
    // The cached potential and gradient belong to the returned position.
    Vector grad(3);
    ASSERT_NEAR(s.potential, g->potential_and_gradient(s.x, grad), 1e-12);
    ASSERT_LT((s.grad - grad).cwiseAbs().maxCoeff(), 1e-12);
    ASSERT_EQ(st.accepted, s.x != before);
    moved += st.accepted;
    ASSERT_TRUE(std::isfinite(st.energy));
    ASSERT_GE(st.energy, s.potential);  // H = U + K with K >= 0
  }
  EXPECT_GT(moved, 150);
}

TEST(Nuts, FunnelNeckProducesFlaggedDivergences) {
  auto f = std::make_shared<Funnel>(10);
  NutsOptions o;
  o.step_size = 0.5;  // far too large for the neck, where x has scale e^{v/2}
  NutsKernel kernel(f, hmc::Metric::unit(10), o);
  Vector z = Vector::Zero(10);
  z[0] = -5.0;
  z.tail(9).setConstant(0.05);
  ChainState s = state_at(*f, z);
  int divergent = 0;
  for (std::uint64_t t = 0; t < 200; ++t) {
    auto stream = transition_stream(5, t);
    const TransitionStats st = kernel.transition(s, stream);
    divergent += st.divergent;
    ASSERT_TRUE(s.x.allFinite());
    ASSERT_TRUE(std::isfinite(s.potential));
    ASSERT_EQ(st.n_gradient_evals, st.n_leapfrog);
    if (st.divergent) {
      ASSERT_LT(st.n_leapfrog, (1 << (st.tree_depth + 1)));  // building stopped at the divergence
    }
  }
  EXPECT_GT(divergent, 10);

  // Control: the same step size on a unit Gaussian never diverges, so the flag is not spurious.
  auto g = standard_gaussian(10);
  NutsKernel plain(g, hmc::Metric::unit(10), o);
  ChainState sg = state_at(*g, Vector::Constant(10, 0.2));
  for (std::uint64_t t = 0; t < 200; ++t) {
    auto stream = transition_stream(6, t);
    EXPECT_FALSE(plain.transition(sg, stream).divergent);
  }
}

TEST(Nuts, SmallMaxEnergyErrorTurnsLargeErrorsIntoDivergences) {
  auto g = standard_gaussian(3);
  NutsOptions o;
  o.step_size = 1.5;  // unstable-ish: energy errors of order 1 and more
  o.max_energy_error = 0.5;
  NutsKernel kernel(g, hmc::Metric::unit(3), o);
  ChainState s = state_at(*g, Vector::Constant(3, 0.5));
  int divergent = 0;
  for (std::uint64_t t = 0; t < 100; ++t) {
    auto stream = transition_stream(7, t);
    divergent += kernel.transition(s, stream).divergent;
  }
  EXPECT_GT(divergent, 10);
}

TEST(Nuts, RejectsInvalidOptions) {
  auto g = standard_gaussian(2);
  NutsOptions o;
  o.step_size = 0.0;
  EXPECT_THROW(NutsKernel(g, hmc::Metric::unit(2), o), ConfigError);
  o.step_size = 0.1;
  o.max_tree_depth = 0;
  EXPECT_THROW(NutsKernel(g, hmc::Metric::unit(2), o), ConfigError);
  o.max_tree_depth = 31;
  EXPECT_THROW(NutsKernel(g, hmc::Metric::unit(2), o), ConfigError);
  o.max_tree_depth = 10;
  o.max_energy_error = -1.0;
  EXPECT_THROW(NutsKernel(g, hmc::Metric::unit(2), o), ConfigError);
  o.max_energy_error = 1000.0;
  EXPECT_THROW(NutsKernel(g, hmc::Metric::unit(3), o), ConfigError);
  EXPECT_NO_THROW(NutsKernel(g, hmc::Metric::unit(2), o));

  RwmOptions r;
  r.proposal_scale = -1.0;
  EXPECT_THROW(RwmKernel(g, r), ConfigError);
  MalaOptions m;
  m.step_size = std::numeric_limits<double>::infinity();
  EXPECT_THROW(MalaKernel(g, m), ConfigError);
}

TEST(Nuts, ZeroLengthWarmupKeepsTheInitialStepSize) {
  auto g = standard_gaussian(2);
  NutsOptions o;
  o.step_size = 0.37;
  o.adaptation = adapt::WarmupAdapterOptions{};
  NutsKernel kernel(g, hmc::Metric::diagonal(Vector::Ones(2)), o);
  kernel.begin_warmup(0);
  kernel.end_warmup();
  EXPECT_DOUBLE_EQ(kernel.step_size(), 0.37);
}

// A wrong chain state is reported, not read out of bounds (the small-dimension paths copy with
// compile-time sizes).
TEST(Nuts, RejectsAChainStateOfTheWrongDimension) {
  auto g = standard_gaussian(2);
  NutsKernel kernel(g, hmc::Metric::unit(2), NutsOptions{});
  ChainState s = state_at(*standard_gaussian(3), Vector::Zero(3));
  auto stream = transition_stream(1, 0);
  EXPECT_THROW(kernel.transition(s, stream), ConfigError);
}

// ---- the draw protocol (detail::NutsDraws) ----------------------------------------------------

// The model of one choice "u < p" with a packed 16-bit prefix P: u is a uniform of the stream
// (rng::Stream::to_uniform) whose top 16 bits are P. When u's lowest and highest possible values
// agree on the answer, it needs nothing else; otherwise its other 36 bits are the top 36 of the
// stream's next word. (A model from to_uniform itself, not from the kernel's arithmetic.)
bool model_choice(std::uint64_t prefix, double p, rng::Stream& model_stream, int& completed) {
  const double lowest = rng::Stream::to_uniform(prefix << 48);
  const double highest = rng::Stream::to_uniform((prefix << 48) | (~std::uint64_t{0} >> 16));
  if ((lowest < p) == (highest < p)) return lowest < p;
  const std::uint64_t rest = model_stream.bits() >> 28;
  ++completed;
  return rng::Stream::to_uniform((prefix << 48) | (rest << 12)) < p;
}

// Directions are the low 12 bits of the first word; the first seven choices take 16-bit prefixes
// from the rest of it (bits 12-59) and from the second word, completed from the stream only when
// the prefix leaves the answer open; later choices and directions use the stream's uniforms.
// Probabilities at, inside and just outside the prefix's cell exercise every path, exactly.
TEST(NutsDraws, ChoicesAreExactComparisonsWithTheStreamsUniforms) {
  rng::Stream pattern(7, rng::Domain::kTest, 0, 0);
  int completed = 0;
  for (std::uint64_t step = 0; step < 400; ++step) {
    rng::Stream a = transition_stream(3, step), b = transition_stream(3, step);
    detail::NutsDraws draws(a);
    const std::uint64_t w0 = b.bits(), w1 = b.bits();
    for (int k = 0; k < detail::NutsDraws::kDirectionBits; ++k)
      ASSERT_EQ(draws.forward(k), ((w0 >> k) & 1u) == 1u) << "doubling " << k;
    const std::uint64_t prefixes[detail::NutsDraws::kPackedChoices] = {
        (w0 >> 12) & 0xFFFF, (w0 >> 28) & 0xFFFF, (w0 >> 44) & 0xFFFF, w1 & 0xFFFF,
        (w1 >> 16) & 0xFFFF, (w1 >> 32) & 0xFFFF,  w1 >> 48};
    for (int k = 0; k < detail::NutsDraws::kPackedChoices; ++k) {
      const double cell = static_cast<double>(prefixes[k]) * 0x1.0p-16;
      double p = pattern.uniform();  // almost always decided by the prefix
      switch ((step + static_cast<std::uint64_t>(k)) % 6) {
        case 1: p = cell + 0x1.0p-17; break;                        // inside the cell
        case 2: p = rng::Stream::to_uniform(prefixes[k] << 48); break;  // its lowest u
        case 3: p = cell + 0x1.0p-16; break;                        // just above its highest u
        case 4: p = cell; break;                                    // just below its lowest u
        default: break;
      }
      ASSERT_EQ(draws.below(p), model_choice(prefixes[k], p, b, completed))
          << "step " << step << " choice " << k;
    }
    // Past the packed choices: whole uniforms of the stream, also for directions past the 12th.
    const double p = pattern.uniform();
    EXPECT_EQ(draws.below(p), b.uniform() < p);
    EXPECT_EQ(draws.forward(detail::NutsDraws::kDirectionBits), b.uniform() > 0.5);
    EXPECT_EQ(draws.below(0.5), b.uniform() < 0.5);
  }
  EXPECT_GT(completed, 400) << "the completion path was not exercised";
}

// The edge cases of p: 0 and NaN are never taken and 1 always (u lies strictly inside (0, 1)),
// without completing the prefix (the next word is the stream's next uniform).
TEST(NutsDraws, ProbabilitiesZeroOneAndNaN) {
  for (std::uint64_t step = 0; step < 20; ++step) {
    rng::Stream a = transition_stream(5, step), b = transition_stream(5, step);
    detail::NutsDraws draws(a);
    b.bits();
    b.bits();
    EXPECT_FALSE(draws.below(0.0));
    EXPECT_TRUE(draws.below(1.0));
    EXPECT_FALSE(draws.below(std::nan("")));
    EXPECT_FALSE(draws.accept(std::nan("")));  // drawn (not > 1), never taken
    EXPECT_TRUE(draws.accept(1.0));
    EXPECT_FALSE(draws.accept(0.0));
    EXPECT_TRUE(draws.accept(std::numeric_limits<double>::infinity()));  // not drawn
    EXPECT_TRUE(draws.below(1.0));  // the seventh packed choice
    const double p = 0.3;
    EXPECT_EQ(draws.below(p), b.uniform() < p) << "nothing was completed from the stream";
  }
}

// accept(ratio) draws (and consumes a choice) only when !(ratio > 1), as Stan draws its top-level
// uniform; a ratio above 1 is taken and consumes nothing, in the packed choices and from the
// stream (where rng::Stream::uniform_if may generate a block early): the choices made are exactly
// the sequence of plain below() calls, across several Philox blocks.
TEST(NutsDraws, AcceptDrawsOnlyWhenTheRatioIsAtMostOne) {
  rng::Stream pattern(9, rng::Domain::kTest, 0, 0);
  for (std::uint64_t step = 0; step < 50; ++step) {
    rng::Stream a = transition_stream(4, step), b = transition_stream(4, step);
    detail::NutsDraws draws(a), plain(b);
    int drawn = 0;
    for (int i = 0; i < 30; ++i) {
      const bool draw = pattern.uniform() < 0.5;
      const double ratio = draw ? pattern.uniform() : 1.0 + pattern.uniform();
      if (draw) {
        EXPECT_EQ(draws.accept(ratio), plain.below(ratio)) << "draw " << drawn;
        ++drawn;
      } else {
        EXPECT_TRUE(draws.accept(ratio));
      }
    }
    EXPECT_EQ(draws.below(0.5), plain.below(0.5)) << "after " << drawn << " draws";
  }
}

// A choice is taken with probability p: frequencies over 200,000 transitions' first and fifth
// choices within 5 binomial standard errors, for p inside a prefix cell (so some choices are
// completed from the stream) and elsewhere.
TEST(NutsDraws, ChoicesAreTakenWithProbabilityP) {
  constexpr int kN = 200000;
  for (const double p : {1e-4, 0.25, 0.5 + 0x1.0p-17, 0.9}) {
    int taken_first = 0, taken_fifth = 0;
    for (int t = 0; t < kN; ++t) {
      rng::Stream s = transition_stream(11, static_cast<std::uint64_t>(t));
      detail::NutsDraws draws(s);
      taken_first += draws.below(p);
      for (int k = 1; k < 4; ++k) draws.below(0.5);
      taken_fifth += draws.below(p);
    }
    const double se = std::sqrt(p * (1 - p) / kN);
    EXPECT_NEAR(taken_first / static_cast<double>(kN), p, 5 * se) << "p = " << p;
    EXPECT_NEAR(taken_fifth / static_cast<double>(kN), p, 5 * se) << "p = " << p;
  }
}

TEST(NutsDraws, UniformsLieStrictlyInsideTheUnitInterval) {
  EXPECT_EQ(rng::Stream::to_uniform(0), 0x1.0p-53);
  EXPECT_EQ(rng::Stream::to_uniform(~std::uint64_t{0}), 1.0 - 0x1.0p-53);
}

// ---- non-finite proposals ---------------------------------------------------------------------

// +inf (x_0 > 1) or NaN (x_0 < -1) outside a band around 0; a standard normal inside.
class Band final : public targets::Target {
 public:
  int dim() const override { return 2; }
  std::string name() const override { return "band"; }
  double potential(ConstVectorRef x) const override {
    if (x[0] > 1.0) return std::numeric_limits<double>::infinity();
    if (x[0] < -1.0) return std::nan("");
    return 0.5 * x.squaredNorm();
  }
  double potential_and_gradient(ConstVectorRef x, VectorRef g) const override {
    g = x;
    return potential(x);
  }
};

// Large steps make most proposals leave the band. For kernels with a single proposal (HMC, RWM,
// MALA) a non-finite proposal must be rejected with the state untouched; NUTS may still move to
// a valid point of the trajectory built before the divergence.
TEST(NonFinite, ProposalsAreRejectedAndTheStateStaysValid) {
  auto t = std::make_shared<Band>();
  HmcOptions ho;
  ho.step_size = 0.8;
  ho.n_leapfrog = 4;
  HmcKernel hmc_kernel(t, hmc::Metric::unit(2), ho);
  RwmOptions ro;
  ro.proposal_scale = 3.0;
  RwmKernel rwm_kernel(t, ro);
  MalaOptions mo;
  mo.step_size = 4.0;
  MalaKernel mala_kernel(t, mo);
  NutsOptions no;
  no.step_size = 0.8;
  NutsKernel nuts_kernel(t, hmc::Metric::unit(2), no);
  Kernel* kernels[] = {&hmc_kernel, &rwm_kernel, &mala_kernel, &nuts_kernel};

  for (Kernel* k : kernels) {
    ChainState s = state_at(*t, Vector::Constant(2, 0.5));
    int nonfinite = 0;
    for (std::uint64_t i = 0; i < 300; ++i) {
      const ChainState before = s;
      auto stream = transition_stream(8, i);
      const TransitionStats st = k->transition(s, stream);
      ASSERT_TRUE(s.x.allFinite()) << k->name();
      ASSERT_TRUE(s.grad.allFinite()) << k->name();
      ASSERT_TRUE(std::isfinite(s.potential)) << k->name();
      ASSERT_LE(std::fabs(s.x[0]), 1.0) << k->name();
      ASSERT_GE(st.accept_stat, 0.0) << k->name();
      ASSERT_LE(st.accept_stat, 1.0) << k->name();
      ASSERT_FALSE(std::isnan(st.energy)) << k->name();
      if (!st.nonfinite) continue;
      ++nonfinite;
      if (k == &nuts_kernel) {
        ASSERT_TRUE(st.divergent);
      } else {
        ASSERT_FALSE(st.accepted) << k->name();
        ASSERT_EQ(st.accept_stat, 0.0) << k->name();
        ASSERT_EQ(s.x, before.x) << k->name();
        ASSERT_EQ(s.grad, before.grad) << k->name();
        ASSERT_EQ(s.potential, before.potential) << k->name();
      }
    }
    EXPECT_GT(nonfinite, 30) << k->name() << ": the test must hit the excluded regions";
  }
}

TEST(Counting, OneGradientEvaluationPerRwmAndMalaTransition) {
  auto g = standard_gaussian(3);
  RwmKernel rwm(g, RwmOptions{});
  MalaKernel mala(g, MalaOptions{});
  for (Kernel* k : {static_cast<Kernel*>(&rwm), static_cast<Kernel*>(&mala)}) {
    ChainState s = state_at(*g, Vector::Constant(3, 0.2));
    auto stream = transition_stream(9, 0);
    const TransitionStats st = k->transition(s, stream);
    EXPECT_EQ(st.n_gradient_evals, 1) << k->name();
    Vector grad(3);
    EXPECT_NEAR(s.potential, g->potential_and_gradient(s.x, grad), 1e-14) << k->name();
    EXPECT_LT((s.grad - grad).cwiseAbs().maxCoeff(), 1e-14) << k->name();
  }
}

}  // namespace
}  // namespace pemc::kernels
