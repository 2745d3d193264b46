// Kernels must not touch the heap inside a transition: with gradients costing ~1 us, a malloc/free
// pair per leapfrog step or per subtree would be a measurable share of the time per gradient.
//
// This file replaces malloc for the whole test executable with a counting forwarder to glibc's
// allocator (__libc_malloc); operator new and Eigen both allocate through malloc. Counting is on
// only inside the measured region.
#include <gtest/gtest.h>

#include <cstddef>
#include <memory>

#include "kernels/hmc.hpp"
#include "kernels/mala.hpp"
#include "kernels/nuts.hpp"
#include "kernels/rwm.hpp"
#include "rng/stream.hpp"
#include "targets/gaussian.hpp"

// Sanitizers install their own allocator; interposing malloc would fight it.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define PEMC_COUNT_ALLOCATIONS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define PEMC_COUNT_ALLOCATIONS 0
#endif
#endif
#ifndef PEMC_COUNT_ALLOCATIONS
#define PEMC_COUNT_ALLOCATIONS 1
#endif

namespace {
bool g_counting = false;
std::size_t g_allocations = 0;
}  // namespace

#if PEMC_COUNT_ALLOCATIONS
extern "C" void* __libc_malloc(std::size_t size);
extern "C" void* __libc_realloc(void* p, std::size_t size);
extern "C" void* __libc_calloc(std::size_t n, std::size_t size);

extern "C" void* malloc(std::size_t size) noexcept {
  if (g_counting) ++g_allocations;
  return __libc_malloc(size);
}
extern "C" void* realloc(void* p, std::size_t size) noexcept {
  if (g_counting) ++g_allocations;
  return __libc_realloc(p, size);
}
extern "C" void* calloc(std::size_t n, std::size_t size) noexcept {
  if (g_counting) ++g_allocations;
  return __libc_calloc(n, size);
}
#endif

namespace pemc::kernels {
namespace {

// Allocations during `n` transitions, after one untimed transition (which may size buffers).
std::size_t allocations_per_run(Kernel& kernel, const targets::Target& target, int n) {
  ChainState s;
  s.x = Vector::Constant(target.dim(), 0.3);
  refresh(target, s);
  {
    rng::Stream stream(1, rng::Domain::kTransition, 0, 0);
    kernel.transition(s, stream);
  }
  g_allocations = 0;
  g_counting = true;
  for (int t = 1; t <= n; ++t) {
    rng::Stream stream(1, rng::Domain::kTransition, 0, static_cast<std::uint64_t>(t));
    kernel.transition(s, stream);
  }
  g_counting = false;
  return g_allocations;
}

std::shared_ptr<targets::Gaussian> gaussian(int d) {
  Matrix cov(d, d);
  for (int i = 0; i < d; ++i)
    for (int j = 0; j < d; ++j) cov(i, j) = std::pow(0.5, std::abs(i - j));
  return std::make_shared<targets::Gaussian>(Vector::Zero(d), cov);
}

TEST(Allocation, TheCounterSeesEigenAllocations) {
  if (!PEMC_COUNT_ALLOCATIONS) GTEST_SKIP() << "malloc is not interposed under sanitizers";
  g_allocations = 0;
  g_counting = true;
  Vector v(1000);
  v.setOnes();
  g_counting = false;
  EXPECT_EQ(v.sum(), 1000.0);  // keeps the allocation observable
  EXPECT_GE(g_allocations, 1u) << "the malloc interposition is not active: the tests below "
                                  "would pass vacuously";
}

TEST(Allocation, NoHeapAllocationInsideTransitions) {
  if (!PEMC_COUNT_ALLOCATIONS) GTEST_SKIP() << "malloc is not interposed under sanitizers";
  const int d = 27;
  auto g = gaussian(d);
  Matrix dense = g->covariance();
  std::vector<std::pair<std::string, hmc::Metric>> metrics{
      {"unit", hmc::Metric::unit(d)},
      {"diagonal", hmc::Metric::diagonal(Vector::Constant(d, 0.9))},
      {"dense", hmc::Metric::dense(dense)}};
  for (const auto& [name, metric] : metrics) {
    NutsOptions no;
    no.step_size = 0.3;
    NutsKernel nuts(g, metric, no);
    EXPECT_EQ(allocations_per_run(nuts, *g, 50), 0u) << "nuts/" << name;

    HmcOptions ho;
    ho.step_size = 0.2;
    ho.jitter_n_leapfrog = true;
    HmcKernel hmc_kernel(g, metric, ho);
    EXPECT_EQ(allocations_per_run(hmc_kernel, *g, 50), 0u) << "hmc/" << name;

    RwmOptions ro;
    ro.proposal_scale = 0.3;
    RwmKernel rwm(g, metric, ro);
    EXPECT_EQ(allocations_per_run(rwm, *g, 50), 0u) << "rwm/" << name;

    MalaOptions mo;
    mo.step_size = 0.1;
    MalaKernel mala(g, metric, mo);
    EXPECT_EQ(allocations_per_run(mala, *g, 50), 0u) << "mala/" << name;
  }
}

}  // namespace
}  // namespace pemc::kernels
