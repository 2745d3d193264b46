#pragma once
// Sizes above these are refused before anything is allocated. Limits of one sampler or target
// kind live in that kind's file under src/config/samplers/ or src/config/targets/.
#include <cstdint>

namespace pemc::config {

inline constexpr std::int64_t kMaxDimension = 10'000'000;
inline constexpr std::int64_t kMaxSeeds = 10'000'000;
inline constexpr std::int64_t kMaxChainsPerSeed = 100'000;
inline constexpr std::int64_t kMaxTotalChains = 10'000'000;
// Runs of one study (`runs` and `run_files` together). Validation is linear in the runs (about
// 1 ms per run here, each target and sampler built once); beyond this a study is better split
// into several configs or jobs. A study's tasks (runs x seeds x chains) are limited to
// kMaxTotalChains in all.
inline constexpr std::int64_t kMaxRuns = 10'000;
// warmup + iterations per chain: 10^12 is weeks at the fastest rates. The run's total (chains x
// (warmup + iterations), counted in int64 for progress) is checked separately.
inline constexpr std::int64_t kMaxIterations = 1'000'000'000'000;

}  // namespace pemc::config
