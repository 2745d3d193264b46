#pragma once
// Streaming collection of per-chain draw sequences (traces) for diagnostics and plots, with
// bounded memory: only the first K coordinates (plus the potential) are kept, thinned so that at
// most `max_draws_per_chain` draws per chain are held (the stride starts from the header's
// iterations / thin and doubles whenever the buffer fills, so it is a power-of-two multiple of the
// initial one and the kept draws stay evenly spaced). Everything else (acceptance, divergences,
// tree depth, weighted moments for the Kish ESS) is accumulated over every draw, unthinned.
//
// The quantity followed per coordinate i of a draw (draw_coordinates):
//   - draws with pseudo-samples (extra_states holding n >= 1 samples of the original space): the
//     per-draw self-normalised weighted mean sum_j w_j x_ji / sum_j w_j (weights normalised within
//     the draw as in summarize, pseudo-extended paper Theorem 2.1; equal weights when the draw has
//     no per-sample weights). Its average over draws IS the reported estimate, so its ESS is the
//     ESS of that estimate;
//   - otherwise the state's coordinate i (also for samplers with one log weight per draw, e.g. CT
//     or AIS: the trace then diagnoses the sampler's mixing; the weights' Kish ESS is separate).
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/types.hpp"
#include "estimators/ebfmi.hpp"
#include "estimators/weighted_moments.hpp"
#include "pemc/v1/records.pb.h"
#include "records/record_reader.hpp"
#include "targets/target.hpp"

namespace pemc::report {

// What a header says about one run: plain files hold one run (the header's own config and
// dimensions); study files list their runs (config.runs, header.runs) by name.
struct RunMeta {
  pemc::v1::RunConfig config;
  int dim = 0;           // dimension of the sampled state
  int original_dim = 0;  // dimension of the original target
  std::string sampler;   // config kind names ("nuts", "pseudo_extended", ...)
  std::string target;
  // The target's named outputs (RunInfo.output_names; empty for built-in targets, whose
  // quantities are the coordinates x[1] .. x[original_dim]): report/quantities.hpp.
  std::vector<std::string> output_names;
  std::optional<pemc::v1::ModeSearchResult> mode_search;  // RunInfo.mode_search, when it ran
  bool in_study = false;  // the file is a study's (its header lists config.runs)
  // The target's exact truth as pemc-dist recorded it (RunInfo.truth; report/run_targets.hpp),
  // and its held-out test points.
  std::optional<pemc::v1::TargetTruth> truth;
  int n_test_points = 0;
  // RunInfo.lp_offset: -potential minus Stan's lp__ (a Stan target, targets/lp_offset.hpp); lp__
  // is -potential - lp_offset. Unset: lp__ is -potential (other targets, older files, an offset
  // pemc-dist could not trust).
  std::optional<double> lp_offset;
  // RunInfo.n_parameter_outputs: the first output_names that are parameters and transformed
  // parameters (the rest: generated quantities). Unset: not known.
  std::optional<int> n_parameter_outputs;
  // The NUTS maximum tree depth when the draws record treedepth__ (config/sampler_columns.hpp).
  std::optional<int> max_tree_depth;
};
RunMeta run_meta(const pemc::v1::Header& header, const std::string& run_id);

// lp__ of a sample whose target potential is u: -u - lp_offset (Stan's lp__), else -u.
inline double lp_of_potential(const RunMeta& meta, double u) {
  return -u - meta.lp_offset.value_or(0.0);
}
// Why a run's lp__ differs from Stan's, or "" when it does not: a Stan target sampled with
// propto: false whose file records no lp_offset.
std::string lp_offset_note(const RunMeta& meta, const std::string& run_id);

// The first `k` diagnosed quantities of a draw (see the file comment) into out[0..k). A run with
// named outputs (n_outputs > 0: a Stan model's, report/quantities.hpp) is diagnosed on them, each
// sample's row of Draw.outputs in place of its coordinates. Returns false when the draw holds
// fewer than k quantities.
bool draw_coordinates(const pemc::v1::Draw& d, int original_dim, int k, std::vector<double>& out,
                      int n_outputs = 0);

// Adds a draw to weighted moments (for the Kish ESS): weighted samples combine as
// draw_weights.hpp says (within the draw for pseudo-extended, across draws for the tempering
// samplers, the same rule as summarize); one log weight without samples weights the state;
// otherwise weight 1. Returns true when the draw carried weights.
bool add_weighted_draw(const pemc::v1::Draw& d, int original_dim, const std::string& sampler,
                       estimators::WeightedMoments& moments, Vector& scratch);

struct TraceOptions {
  // K: the first K quantities (coordinates of the original space, or named outputs); default all.
  // A run with many quantities keeps fewer draws per chain (at most kMaxValuesPerChain values in
  // all), so memory stays bounded.
  int max_coordinates = std::numeric_limits<int>::max();
  static constexpr std::int64_t kMaxValuesPerChain = 20'000'000;
  std::int64_t max_draws_per_chain = 100000; // thinning bound per chain
  bool with_potential = true;                // also keep the draws' potential
  std::string run_filter;                    // only this run (empty = all)
  // The draws a chain keeps when its traces hold k quantities (and the potential).
  std::int64_t draws_kept_per_chain(std::int64_t k) const {
    const std::int64_t draws_cap = std::max<std::int64_t>(max_draws_per_chain, 8);
    return std::max<std::int64_t>(8, std::min<std::int64_t>(draws_cap, kMaxValuesPerChain / (k + 1)));
  }
};

struct ChainTrace {
  std::string file;
  std::string run_id;
  int chain_id = 0;
  std::uint64_t seed = 0;
  std::int64_t n_draws = 0;   // post-warmup draws read (unthinned)
  std::int64_t stride = 1;    // kept draws are draws 0, stride, 2 stride, ...
  int original_dim = 0;
  std::vector<std::string> names;           // Stan names of the kept quantities
  bool named_outputs = false;               // the quantities are the target's named outputs
  std::vector<std::vector<double>> coords;  // [quantity][kept draw]
  std::vector<double> potential;            // [kept draw] (when with_potential)
  // Over every draw:
  double sum_accept = 0.0;
  std::int64_t n_divergent = 0;
  double sum_tree_depth = 0.0;
  int max_tree_depth = 0;
  double sum_leapfrog = 0.0;
  double last_step_size = 0.0;
  // Draws whose tree depth reached RunMeta::max_tree_depth (0 when the sampler has none).
  std::int64_t n_max_tree_depth = 0;
  // Every draw's energy in chain order, for the E-BFMI; energy_finite false when some draw's
  // energy was not finite (the E-BFMI is then undefined).
  estimators::EbfmiAccumulator energy;
  bool energy_finite = true;
  estimators::WeightedMoments moments;
  bool weighted = false;
  bool pseudo_samples = false;  // the diagnosed quantity is the per-draw pseudo-sample mean
  // From the footer:
  bool in_footer = false;
  std::string status;
  std::int64_t n_gradient_evals = 0;
  double wall_seconds = 0.0;
  std::map<std::string, double> estimates;
  std::vector<std::string> warnings;  // ChainSummary.warnings
  // ChainSummary.model_messages as one line (records/describe_model_messages.hpp), or "".
  std::string model_messages;
  std::optional<pemc::v1::ModeOccupancy> mode_occupancy;  // ChainSummary.mode_occupancy
  std::vector<double> largest_log_weights;  // ChainSummary.largest_log_weights (AIS)
};

struct FileTraces {
  std::filesystem::path path;
  std::int64_t n_records = 0;
  bool has_footer = false;
  std::optional<records::ReadProblem> problem;
  pemc::v1::Header header;
  std::vector<ChainTrace> chains;  // ordered by (run_id, chain_id)
};

// Reads one file in a single streaming pass. Throws IoError when it cannot be opened, DataError
// naming the record for a well-framed draw with unusable content.
FileTraces read_traces(const std::filesystem::path& path, const TraceOptions& options);

}  // namespace pemc::report
