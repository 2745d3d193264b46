#pragma once
// R-hat and bulk ESS of each run of a record file as pemc-dist judges them at the run's end: its
// collector reads back the draws it wrote, before the footer (runner/collector.cpp), and computes
// the numbers pemc-report summarize computes from them (read_traces with summarize's default
// TraceOptions, so the same thinning; diagnose_traces in DiagnosisScope::kRhatAndBulkEss: the same
// R-hat and bulk ESS code, without tail ESS, quantiles or per-chain diagnostics), over each run's
// chains with status "ok". Weighted samplers get summarize's quantity too (diagnostics_traces.hpp:
// the per-draw weighted means of pseudo-extended, the unweighted states of CT, ST and AIS). The
// warnings themselves are estimators/sampler_warnings.hpp's, summarize's rules and text
// (runner/run_warnings.hpp puts them into the footer).
//
// Bounded, so that a long run does not end in a read that costs more than it is worth: a file
// larger than max_file_bytes, or whose chains' draws would put more than max_values values in
// memory, is not read; neither is anything after a failed read. Such runs are unchecked, with the
// reason, and never pass for checked. The verdict is a pure function of the file's records, the
// chains' summaries and the limits: the same on any number of ranks and after --resume.
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "estimators/sampler_warnings.hpp"

namespace pemc::report {

struct DrawCheckLimits {
  static constexpr std::uintmax_t kMaxFileBytes = 512ull << 20;  // 512 MiB
  static constexpr std::int64_t kMaxValues = 20'000'000;         // 160 MB of doubles
  std::uintmax_t max_file_bytes = kMaxFileBytes;
  // The values the check holds: per chain judged, its post-warmup draws (at most
  // TraceOptions::max_draws_per_chain, summarize's thinning) times its quantities plus the
  // potential.
  std::int64_t max_values = kMaxValues;
};

// The limits, where the environment (for tests only: tests/mpi/run_end_warnings_test.sh takes the
// unchecked path without writing 512 MiB) may lower them: PEMC_TEST_DRAW_CHECK_MAX_BYTES and
// PEMC_TEST_DRAW_CHECK_MAX_VALUES, non-negative integers; anything else there is ignored.
DrawCheckLimits draw_check_limits_from_environment();

// One run's chains that finished ok (ChainSummary status "ok"), by chain id, with the post-warmup
// draws their summaries say they wrote (ChainSummary.n_draws).
struct RunOkChains {
  std::string run_id;
  std::map<int, std::int64_t> n_draws;
};

struct RunDrawCheck {
  std::string run_id;
  bool checked = false;
  std::string unchecked_reason;  // when not checked
  int n_chains = 0;              // chains judged
  std::int64_t n_draws_used = 0;  // per chain, after thinning and truncation to the shortest
  std::int64_t thinned_by = 1;
  // When checked: report/diagnostics.hpp judged_quantities, what the warnings judge.
  std::vector<estimators::QuantityHealth> quantities;
};

// One entry per entry of `runs`, in their order. Never throws for a file it cannot read or judge:
// those runs are unchecked, saying why.
std::vector<RunDrawCheck> check_draws(const std::filesystem::path& path,
                                      const std::vector<RunOkChains>& runs,
                                      const DrawCheckLimits& limits);

// The warning of an unchecked run, for the log and Footer.warnings:
// "R-hat and bulk ESS unchecked: <why>; `pemc-report summarize FILE` gives them".
std::string unchecked_warning(const RunDrawCheck& check, const std::filesystem::path& path);

}  // namespace pemc::report
