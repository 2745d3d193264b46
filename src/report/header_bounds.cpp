#include "report/header_bounds.hpp"

#include <cstdint>
#include <limits>
#include <string>

#include "config/limits.hpp"
#include "core/error.hpp"
#include "records/frame.hpp"

namespace pemc::report {
namespace {

// A draw's state must fit one frame: no run pemc-dist writes has a larger state.
constexpr std::int64_t kMaxStateValues = records::kMaxFrameBytes / sizeof(double);
// Pseudo-samples per draw (the pseudo-extended sampler's own limit).
constexpr std::int64_t kMaxPseudoSamples = 1'000'000;
constexpr std::size_t kMaxNameBytes = 4096;

class Bounds {
 public:
  explicit Bounds(const std::filesystem::path& file) : file_(file) {}

  void check(std::int64_t value, std::int64_t lo, std::int64_t hi, const std::string& what) const {
    if (value < lo || value > hi)
      refuse(what + " is " + std::to_string(value) + ", outside [" + std::to_string(lo) + ", " +
             std::to_string(hi) + "]");
  }
  [[noreturn]] void refuse(const std::string& what) const {
    throw UntrustedInputError(file_.string() + ": the header is not one pemc-dist writes: " +
                              what + "; the file is not read");
  }

 private:
  const std::filesystem::path& file_;
};

void check_run_config(const v1::RunConfig& c, const std::string& who, const Bounds& b) {
  b.check(c.iterations(), 0, config::kMaxIterations, who + "iterations");
  b.check(c.warmup(), 0, config::kMaxIterations, who + "warmup");
  b.check(c.output().thin(), 0, config::kMaxIterations, who + "output.thin");
  if (c.sampler().has_pseudo_extended())
    b.check(c.sampler().pseudo_extended().n_pseudo(), 0, kMaxPseudoSamples,
            who + "sampler.pseudo_extended.n_pseudo");
}

void check_run_info(const v1::RunInfo& info, const std::string& who, const Bounds& b) {
  b.check(info.dim(), 0, kMaxStateValues, who + "dim");
  b.check(info.original_dim(), 0, config::kMaxDimension, who + "original_dim");
  b.check(info.output_names_size(), 0, kMaxStateValues, who + "the number of output names");
  b.check(static_cast<std::int64_t>(info.name().size()), 0, kMaxNameBytes, who + "name length");
  for (const auto& name : info.output_names())
    if (name.size() > kMaxNameBytes)
      b.refuse(who + "an output name of " + std::to_string(name.size()) + " bytes (at most " +
               std::to_string(kMaxNameBytes) + ")");
}

}  // namespace

void check_header_bounds(const v1::Header& h, const std::filesystem::path& file) {
  const Bounds b(file);
  b.check(h.dim(), 0, kMaxStateValues, "dim");
  b.check(h.original_dim(), 0, config::kMaxDimension, "original_dim");
  b.check(h.runs_size(), 0, config::kMaxRuns, "the number of runs");
  b.check(h.config().runs_size(), 0, config::kMaxRuns, "the number of the config's runs");
  b.check(h.n_chains(), 0, std::numeric_limits<std::int32_t>::max(), "n_chains");
  b.check(h.task_begin(), 0, h.task_end(), "task_begin");
  b.check(h.task_end(), h.task_begin(), h.n_tasks(), "task_end");
  check_run_config(h.config(), "config.", b);
  for (int i = 0; i < h.config().runs_size(); ++i)
    check_run_config(h.config().runs(i), "config.runs[" + std::to_string(i) + "].", b);
  for (int i = 0; i < h.runs_size(); ++i)
    check_run_info(h.runs(i), "runs[" + std::to_string(i) + "].", b);
}

}  // namespace pemc::report
