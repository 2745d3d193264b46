#include "report/draw_checks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <set>

#include "core/error.hpp"
#include "report/checked_reader.hpp"
#include "report/diagnostics.hpp"

namespace pemc::report {
namespace {

// A non-negative integer from the environment, or nothing (unset or not such a number).
std::optional<std::uint64_t> environment_count(const char* name) {
  const char* text = std::getenv(name);
  if (!text || !*text || *text == '-') return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (errno != 0 || *end != '\0') return std::nullopt;
  return v;
}

// Marks every run that is not decided yet as unchecked for `why`.
void leave_unchecked(std::vector<RunDrawCheck>& checks, const std::string& why) {
  for (auto& c : checks)
    if (!c.checked && c.unchecked_reason.empty()) c.unchecked_reason = why;
}

// The header, the first record of the file; nullopt when the file does not start with one.
std::optional<v1::Header> read_header(const std::filesystem::path& path) {
  CheckedRecordReader reader(path);
  v1::Record record;
  if (!reader.next(record) || !record.has_header()) return std::nullopt;
  return record.header();
}

// The values read_traces would hold for the runs' ok chains (an upper bound: its thinning keeps at
// most `cap` draws per chain).
std::int64_t values_to_hold(const v1::Header& header, const std::vector<RunOkChains>& runs,
                            const TraceOptions& options) {
  std::int64_t total = 0;
  for (const auto& run : runs) {
    const RunMeta meta = run_meta(header, run.run_id);
    const std::int64_t k = std::min<std::int64_t>(
        options.max_coordinates,
        meta.output_names.empty() ? meta.original_dim
                                  : static_cast<std::int64_t>(meta.output_names.size()));
    const std::int64_t cap = options.draws_kept_per_chain(k);
    for (const auto& [id, n] : run.n_draws) total += std::min(n, cap) * (k + 1);
  }
  return total;
}

// Why the traces read do not hold exactly the ok chains' draws their summaries count, or "".
std::string trace_mismatch(const FileTraces& traces, const RunOkChains& run) {
  for (const auto& [id, n] : run.n_draws) {
    const auto chain_id = id;  // clang 14 (the fuzz build) cannot capture a structured binding
    const auto it = std::find_if(traces.chains.begin(), traces.chains.end(), [&](const ChainTrace& c) {
      return c.run_id == run.run_id && c.chain_id == chain_id;
    });
    const std::int64_t held = it == traces.chains.end() ? 0 : it->n_draws;
    if (held != n)
      return fmt::format("the file holds {} post-warmup draws of chain {}, its summary says {}", held,
                         id, n);
  }
  return "";
}

}  // namespace

DrawCheckLimits draw_check_limits_from_environment() {
  DrawCheckLimits limits;
  if (const auto v = environment_count("PEMC_TEST_DRAW_CHECK_MAX_BYTES"))
    limits.max_file_bytes = std::min<std::uintmax_t>(limits.max_file_bytes, *v);
  if (const auto v = environment_count("PEMC_TEST_DRAW_CHECK_MAX_VALUES"))
    limits.max_values = static_cast<std::int64_t>(
        std::min<std::uint64_t>(static_cast<std::uint64_t>(limits.max_values), *v));
  return limits;
}

std::vector<RunDrawCheck> check_draws(const std::filesystem::path& path,
                                      const std::vector<RunOkChains>& runs,
                                      const DrawCheckLimits& limits) {
  std::vector<RunDrawCheck> checks;
  std::vector<RunOkChains> judged;  // the runs with ok chains, in order
  for (const auto& run : runs) {
    auto& c = checks.emplace_back();
    c.run_id = run.run_id;
    if (run.n_draws.empty())
      c.unchecked_reason = "no chain of the run finished ok";
    else
      judged.push_back(run);
  }
  if (judged.empty()) return checks;
  const TraceOptions options;  // summarize's
  try {
    const auto bytes = std::filesystem::file_size(path);
    if (bytes > limits.max_file_bytes) {
      leave_unchecked(checks, fmt::format("the file holds {} bytes, more than the {} read back at "
                                          "the run's end",
                                          bytes, limits.max_file_bytes));
      return checks;
    }
    const auto header = read_header(path);
    if (!header) {
      leave_unchecked(checks, "reading the draws back failed: the file does not start with its "
                              "header");
      return checks;
    }
    const std::int64_t values = values_to_hold(*header, judged, options);
    if (values > limits.max_values) {
      leave_unchecked(checks, fmt::format("the draws to judge hold {} values, more than the {} "
                                          "read back at the run's end",
                                          values, limits.max_values));
      return checks;
    }
    FileTraces traces = read_traces(path, options);
    if (traces.problem) {
      leave_unchecked(checks, fmt::format("reading the draws back stopped at byte {} (record {}): {}",
                                          traces.problem->offset, traces.problem->record_index,
                                          traces.problem->message));
      return checks;
    }
    // Only the ok chains count (a failed chain's draws may stop anywhere).
    std::set<std::pair<std::string, int>> ok;
    for (const auto& run : judged)
      for (const auto& [id, n] : run.n_draws) ok.emplace(run.run_id, id);
    std::erase_if(traces.chains,
                  [&](const ChainTrace& c) { return !ok.count({c.run_id, c.chain_id}); });
    for (const auto& run : judged)
      if (const auto why = trace_mismatch(traces, run); !why.empty()) {
        for (auto& c : checks)
          if (c.run_id == run.run_id) c.unchecked_reason = why;
      }
    const std::vector<FileTraces> files{std::move(traces)};
    for (const auto& rd : diagnose_traces(files, options, DiagnosisScope::kRhatAndBulkEss)) {
      for (auto& c : checks) {
        if (c.run_id != rd.run_id || !c.unchecked_reason.empty()) continue;
        c.n_chains = rd.n_chains;
        c.n_draws_used = rd.n_draws_used;
        c.thinned_by = rd.thinned_by;
        c.quantities = judged_quantities(rd);
        const bool any_rhat = std::any_of(c.quantities.begin(), c.quantities.end(),
                                          [](const auto& q) { return !std::isnan(q.rhat); });
        if (any_rhat)
          c.checked = true;
        else
          c.unchecked_reason = "no quantity has a defined R-hat (fewer than 4 draws per chain, "
                               "or constant draws)";
      }
    }
    leave_unchecked(checks, "the file holds none of the run's draws");
  } catch (const std::exception& e) {
    for (auto& c : checks) {
      c.checked = false;
      c.quantities.clear();
      if (c.unchecked_reason.empty())
        c.unchecked_reason = std::string("reading the draws back failed: ") + e.what();
    }
  }
  return checks;
}

std::string unchecked_warning(const RunDrawCheck& check, const std::filesystem::path& path) {
  return fmt::format("R-hat and bulk ESS unchecked: {}; `pemc-report summarize {}` gives them",
                     check.unchecked_reason, path.string());
}

}  // namespace pemc::report
