#pragma once
// Sizes above these are refused before anything is allocated. Limits of one sampler or target
// kind live in that kind's file under src/config/samplers/ or src/config/targets/.
#include <cstdint>

namespace pemc::config {

inline constexpr std::int64_t kMaxDimension = 10'000'000;
inline constexpr std::int64_t kMaxSeeds = 10'000'000;
inline constexpr std::int64_t kMaxChainsPerSeed = 100'000;
inline constexpr std::int64_t kMaxTotalChains = 10'000'000;
// warmup + iterations per chain: 10^12 is weeks at the fastest rates. The run's total (chains x
// (warmup + iterations), counted in int64 for progress) is checked separately.
inline constexpr std::int64_t kMaxIterations = 1'000'000'000'000;

}  // namespace pemc::config
