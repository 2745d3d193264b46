// The first-step-size search (hmc/step_size_search.hpp) and the kernels' choose_initial_step_size:
// the step found follows the target's scale, depends only on the stream, and impossible searches
// fails with a message.
#include "hmc/step_size_search.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "core/error.hpp"
#include "kernels/hmc.hpp"
#include "kernels/nuts.hpp"
#include "rng/stream.hpp"
#include "targets/gaussian.hpp"

namespace pemc::kernels {
namespace {

std::shared_ptr<targets::Gaussian> isotropic_gaussian(int d, double sd) {
  return std::make_shared<targets::Gaussian>(Vector::Zero(d), sd * sd * Matrix::Identity(d, d));
}

ChainState state_at(const targets::Target& t, const Vector& x) {
  ChainState s;
  s.x = x;
  refresh(t, s);
  return s;
}

rng::Stream adaptation_stream(std::uint64_t seed) {
  return rng::Stream(seed, rng::Domain::kAdaptation, 0, 0);
}

double searched_step(const targets::TargetPtr& target, const Vector& x, std::uint64_t seed) {
  hmc::Metric metric = hmc::Metric::unit(target->dim());
  hmc::Hamiltonian h(*target, metric);
  hmc::PhasePoint scratch(target->dim());
  const ChainState s = state_at(*target, x);
  auto stream = adaptation_stream(seed);
  return hmc::find_initial_step_size(h, scratch, s.x, s.grad, s.potential, 1.0, stream);
}

// A density that does not decay: every leapfrog step is exact, whatever its size.
class Flat final : public targets::Target {
 public:
  int dim() const override { return 2; }
  std::string name() const override { return "flat"; }
  double potential(ConstVectorRef) const override { return 0.0; }
  double potential_and_gradient(ConstVectorRef, VectorRef g) const override {
    g.setZero();
    return 0.0;
  }
};

TEST(StepSizeSearch, FollowsTheTargetsScale) {
  // Leapfrog on N(0, sd^2) with step eps from sd * x behaves as on N(0, 1) with step eps / sd, so
  // the steps found differ by about the ratio of the scales (within the search's factor of 2 and
  // the momenta's randomness).
  const double wide = searched_step(isotropic_gaussian(3, 1.0), Vector::Constant(3, 0.7), 5);
  const double narrow = searched_step(isotropic_gaussian(3, 1e-3), Vector::Constant(3, 7e-4), 5);
  EXPECT_GT(wide, 0.1);
  EXPECT_LT(wide, 8.0);
  EXPECT_GT(narrow / wide, 1e-3 / 8);
  EXPECT_LT(narrow / wide, 1e-3 * 8);
  // Powers of two from the start of 1.
  EXPECT_EQ(std::exp2(std::round(std::log2(narrow))), narrow);
}

TEST(StepSizeSearch, IsAFunctionOfTheStream) {
  const auto g = isotropic_gaussian(2, 0.01);
  const Vector x = Vector::Constant(2, 0.005);
  EXPECT_EQ(searched_step(g, x, 9), searched_step(g, x, 9));
  bool some_seed_differs = false;
  for (std::uint64_t seed = 10; seed < 40 && !some_seed_differs; ++seed)
    some_seed_differs = searched_step(g, x, seed) != searched_step(g, x, 9);
  EXPECT_TRUE(some_seed_differs) << "the momenta drawn do not influence the search";
}

TEST(StepSizeSearch, AnImproperTargetThrows) {
  EXPECT_THAT([] { searched_step(std::make_shared<Flat>(), Vector::Zero(2), 1); },
              ::testing::ThrowsMessage<NumericalError>(::testing::HasSubstr("does not decay")));
}

TEST(StepSizeSearch, KernelsSearchOnlyWhenAskedTo) {
  const auto g = isotropic_gaussian(2, 0.01);
  const ChainState s = state_at(*g, Vector::Constant(2, 0.005));
  const double expected = searched_step(g, s.x, 4);
  for (bool search : {false, true}) {
    SCOPED_TRACE(search ? "search" : "no search");
    NutsOptions n;
    n.step_size = 1.0;
    n.search_step_size = search;
    NutsKernel nuts(g, hmc::Metric::unit(2), n);
    auto stream = adaptation_stream(4);
    const std::int64_t nuts_evals = nuts.choose_initial_step_size(s, stream);
    EXPECT_EQ(nuts.step_size(), search ? expected : 1.0);
    EXPECT_EQ(nuts_evals > 0, search);

    HmcOptions h;
    h.step_size = 1.0;
    h.search_step_size = search;
    HmcKernel hmc(g, hmc::Metric::unit(2), h);
    stream = adaptation_stream(4);
    const std::int64_t hmc_evals = hmc.choose_initial_step_size(s, stream);
    EXPECT_EQ(hmc.step_size(), search ? expected : 1.0);
    EXPECT_EQ(hmc_evals, nuts_evals);
  }
}

}  // namespace
}  // namespace pemc::kernels
