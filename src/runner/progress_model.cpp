#include "runner/progress_model.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>

#include "core/error.hpp"

namespace pemc::runner {

double eta_seconds(const std::vector<RunWork>& runs, int parallel) {
  std::int64_t done_iterations = 0;
  double done_seconds = 0.0;
  for (const auto& r : runs) {
    done_iterations += r.done_iterations;
    done_seconds += r.done_seconds;
  }
  if (done_iterations == 0) return 0.0;
  const double mean_cost = done_seconds / static_cast<double>(done_iterations);
  double remaining_seconds = 0.0;
  std::int64_t chains_left = 0;
  for (const auto& r : runs) {
    if (r.remaining <= 0) continue;
    const double cost = r.done_iterations > 0
                            ? r.done_seconds / static_cast<double>(r.done_iterations)
                            : mean_cost;
    remaining_seconds += cost * static_cast<double>(r.remaining);
    const std::int64_t length = std::max<std::int64_t>(1, r.chain_iterations);
    chains_left += (r.remaining + length - 1) / length;
  }
  const std::int64_t running = std::clamp<std::int64_t>(chains_left, 1, std::max(1, parallel));
  return remaining_seconds / static_cast<double>(running);
}

std::int64_t WorkerProgress::total_iterations() const {
  return std::accumulate(iterations.begin(), iterations.end(), std::int64_t{0});
}

// Layout: int64 finished, then n_runs int64 iterations, n_runs double seconds, n_runs int64
// skipped.
std::string WorkerProgress::encode() const {
  const std::int64_t flag = finished ? 1 : 0;
  std::string bytes(sizeof flag + iterations.size() * sizeof(std::int64_t) +
                        seconds.size() * sizeof(double) + skipped.size() * sizeof(std::int64_t),
                    '\0');
  char* at = bytes.data();
  std::memcpy(at, &flag, sizeof flag);
  at += sizeof flag;
  std::memcpy(at, iterations.data(), iterations.size() * sizeof(std::int64_t));
  at += iterations.size() * sizeof(std::int64_t);
  std::memcpy(at, seconds.data(), seconds.size() * sizeof(double));
  at += seconds.size() * sizeof(double);
  std::memcpy(at, skipped.data(), skipped.size() * sizeof(std::int64_t));
  return bytes;
}

WorkerProgress WorkerProgress::decode(const std::string& bytes, std::size_t n_runs) {
  const std::size_t expected =
      sizeof(std::int64_t) + n_runs * (2 * sizeof(std::int64_t) + sizeof(double));
  if (bytes.size() != expected)
    throw IoError("progress message of " + std::to_string(bytes.size()) + " bytes, expected " +
                  std::to_string(expected) + " for " + std::to_string(n_runs) + " run(s)");
  WorkerProgress p(n_runs);
  std::int64_t flag = 0;
  const char* at = bytes.data();
  std::memcpy(&flag, at, sizeof flag);
  at += sizeof flag;
  std::memcpy(p.iterations.data(), at, n_runs * sizeof(std::int64_t));
  at += n_runs * sizeof(std::int64_t);
  std::memcpy(p.seconds.data(), at, n_runs * sizeof(double));
  at += n_runs * sizeof(double);
  std::memcpy(p.skipped.data(), at, n_runs * sizeof(std::int64_t));
  p.finished = flag != 0;
  return p;
}

}  // namespace pemc::runner
