#include "report/summary.hpp"

#include "report/draw_weights.hpp"
#include "report/gradient_counts.hpp"
#include "report/log_z_headline.hpp"
#include "report/quantities.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <span>

#include "config/factories.hpp"
#include "core/error.hpp"
#include "core/numerics.hpp"
#include "estimators/weighted_moments.hpp"
#include "records/describe_model_messages.hpp"
#include "report/checked_reader.hpp"
#include "report/run_targets.hpp"
#include "report/weighted_quantiles.hpp"

namespace pemc::report {

HeldOutLpd::HeldOutLpd(const targets::Target& target)
    : target_(&target), log_denominator_(-kInf) {
  const int n = target.n_test_points();
  if (n <= 0)
    throw ConfigError("held-out log predictive density: target '" + target.name() +
                      "' has no test set");
  log_numerator_.assign(static_cast<std::size_t>(n), -kInf);
  scratch_.resize(static_cast<std::size_t>(n));
}

void HeldOutLpd::add(ConstVectorRef x, double log_weight) {
  if (std::isnan(log_weight) || log_weight == kInf)
    throw NumericalError("held-out log predictive density: log weight is " +
                         std::to_string(log_weight));
  if (log_weight == -kInf) return;
  target_->log_predictive(x, scratch_);
  for (std::size_t j = 0; j < scratch_.size(); ++j) {
    if (std::isnan(scratch_[j]))
      throw NumericalError("held-out log predictive density: log p(y | x) of test point " +
                           std::to_string(j) + " is NaN");
    log_numerator_[j] = log_add_exp(log_numerator_[j], log_weight + scratch_[j]);
  }
  log_denominator_ = log_add_exp(log_denominator_, log_weight);
  ++n_samples_;
}

double HeldOutLpd::value() const {
  if (n_samples_ == 0) return std::numeric_limits<double>::quiet_NaN();
  double lpd = 0.0;
  for (double v : log_numerator_) lpd += v - log_denominator_;
  return lpd;
}

namespace {

struct ChainAccumulator {
  std::optional<HeldOutLpd> lpd;  // set when the run's target has a test set
  estimators::WeightedMoments moments;
  WeightedSampleStore samples;  // weighted samples, for weighted quantiles
  double sum_accept = 0.0;
  std::int64_t n_divergent = 0;
  std::int64_t n_draws = 0;
  std::uint64_t seed = 0;
  bool weighted = false;
};

// Adds one draw. Samples in extra_states with one log weight each are weighted samples, combined
// as draw_weights.hpp says for `sampler`. A single log weight without extra_states weights the
// state itself; otherwise every draw has weight 1.
// With named outputs (n_outputs > 0: a Stan model's), each sample's row of Draw.outputs stands in
// for its coordinates.
void add_draw(const v1::Draw& d, int dim, const std::string& sampler, ChainAccumulator& acc,
              Vector& scratch, int n_outputs) {
  const int n_extra = dim > 0 ? d.extra_states_size() / dim : 0;
  if (n_outputs > 0) {
    const int rows = std::max(n_extra, 1);
    if (d.outputs_size() != rows * n_outputs)
      throw DataError("the draw holds " + std::to_string(d.outputs_size()) + " outputs, expected " +
                      std::to_string(rows) + " x " + std::to_string(n_outputs));
    const bool weighted = n_extra > 0 && d.log_weights_size() == n_extra;
    const bool per_draw = weighted && weights_within_draw(sampler, n_extra);
    const double log_norm =
        per_draw ? log_sum_exp(std::span<const double>(d.log_weights().data(),
                                                       static_cast<std::size_t>(n_extra)))
                 : 0.0;
    acc.weighted = acc.weighted || weighted || d.log_weights_size() == 1;
    for (int i = 0; i < rows; ++i) {
      scratch = Eigen::Map<const Vector>(d.outputs().data() + i * n_outputs, n_outputs);
      double log_w = 0.0;
      if (weighted) log_w = log_norm == -kInf ? -kInf : d.log_weights(i) - log_norm;
      else if (d.log_weights_size() == 1) log_w = d.log_weights(0);
      acc.moments.add(scratch, log_w);
      if (weighted || d.log_weights_size() == 1) acc.samples.add(acc.n_draws, scratch, log_w);
    }
    return;
  }
  if (n_extra > 0 && d.log_weights_size() == n_extra) {
    const bool per_draw = weights_within_draw(sampler, n_extra);
    acc.weighted = true;
    const double log_norm =
        per_draw ? log_sum_exp(std::span<const double>(d.log_weights().data(),
                                                       static_cast<std::size_t>(n_extra)))
                 : 0.0;
    // All weights zero: the draw carries no weight (and -inf - -inf would be NaN). A NaN or +inf
    // weight makes log_norm non-finite too and is rejected by WeightedMoments::add.
    const bool weightless = log_norm == -kInf;
    for (int i = 0; i < n_extra; ++i) {
      scratch = Eigen::Map<const Vector>(d.extra_states().data() + i * dim, dim);
      const double log_w = weightless ? -kInf : d.log_weights(i) - log_norm;
      acc.moments.add(scratch, log_w);
      acc.samples.add(acc.n_draws, scratch, log_w);
      if (acc.lpd) acc.lpd->add(scratch, log_w);
    }
    return;
  }
  scratch = Eigen::Map<const Vector>(d.state().data(), d.state_size());
  if (d.log_weights_size() == 1) {
    acc.weighted = true;
    acc.moments.add(scratch, d.log_weights(0));
    acc.samples.add(acc.n_draws, scratch, d.log_weights(0));
    if (acc.lpd) acc.lpd->add(scratch, d.log_weights(0));
  } else {
    acc.moments.add(scratch);
    if (acc.lpd) acc.lpd->add(scratch, 0.0);
  }
}

std::vector<double> to_std(const Vector& v) { return {v.data(), v.data() + v.size()}; }

using ChainKey = std::pair<std::string, int>;  // (run name, chain id)

// What one record file's header says about its runs (a single-run file has one run, named ""
// in run_targets), and its chains' running sums as the draws stream past.
class FileScan {
 public:
  FileScan(const std::filesystem::path& path, const SummarizeOptions& options)
      : path_(path), options_(options), targets_(options.target_config) {}

  void read(CheckedRecordReader& reader, FileSummary& out);
  // One summary per chain seen, in (run, chain) order, with its footer entry when there is one.
  void summarise_chains(FileSummary& out) const;
  // error_mean / error_second_moment against each run's exact truth, or a note why not.
  void attach_truth_errors(FileSummary& out);
  void compare_with_truth(FileSummary& out);

 private:
  void read_header(const v1::Header& header);
  void add_draw_record(const v1::Draw& d, std::int64_t record_index);
  ChainRunSummary chain_summary(const ChainKey& key, const ChainAccumulator& acc,
                                const std::map<int, const v1::ChainSummary*>& by_chain,
                                bool has_footer) const;
  // The key of run_targets_ for a run: its name in a study, "" for a single-run file.
  std::string target_key(const std::string& run_id) const {
    return run_configs_.count(run_id) ? run_id : std::string();
  }

  std::filesystem::path path_;
  SummarizeOptions options_;
  v1::Header header_;
  v1::Footer footer_;
  int dim_ = 0;
  std::map<ChainKey, ChainAccumulator> chains_;
  // Studies: per run name, its original-space dimension, sampler, named outputs and resolved config.
  std::map<std::string, int> run_dims_;
  std::map<std::string, std::string> run_sampler_;
  std::map<std::string, std::vector<std::string>> run_outputs_;
  std::map<std::string, const v1::RunConfig*> run_configs_;
  // Truths from the header; targets only from the user's --config (run_targets.hpp).
  RunTargets targets_;
  // Runs with a held-out test set: the target built from --config, or why there is none.
  std::map<std::string, targets::TargetPtr> run_targets_;
  std::map<std::string, std::string> run_target_errors_;
  Vector scratch_;
};

void FileScan::read(CheckedRecordReader& reader, FileSummary& out) {
  v1::Record record;
  while (reader.next(record)) {
    switch (record.kind_case()) {
      case v1::Record::kHeader: read_header(record.header()); break;
      case v1::Record::kDraw:
        if (!record.draw().warmup()) add_draw_record(record.draw(), reader.records_read() - 1);
        break;
      case v1::Record::kFooter:
        footer_ = record.footer();
        out.has_footer = true;
        break;
      default: break;
    }
  }
  out.n_records = reader.records_read();
  out.problem = reader.problem();
}

void FileScan::read_header(const v1::Header& header) {
  header_ = header;
  dim_ = header.original_dim() > 0 ? header.original_dim() : header.dim();
  for (const auto& info : header.runs()) {
    run_dims_[info.name()] = info.original_dim() > 0 ? info.original_dim() : info.dim();
    run_sampler_[info.name()] = info.sampler_name();
    run_outputs_[info.name()].assign(info.output_names().begin(), info.output_names().end());
  }
  // Pointers into header_, which is not assigned again.
  for (const auto& run : header_.config().runs()) run_configs_[run.name()] = &run;
  // The held-out lpd needs the target's test data: only from the user's --config.
  for (const auto& info : header.runs()) {
    if (info.n_test_points() <= 0) continue;
    const std::string key = header.config().runs().empty() ? std::string() : info.name();
    try {
      run_targets_[key] = targets_.target(header_, info.name(), "the held-out lpd");
    } catch (const Error& e) {
      run_target_errors_[key] = e.what();
    }
  }
}

void FileScan::add_draw_record(const v1::Draw& d, std::int64_t record_index) {
  const ChainKey key(d.run_id(), d.chain_id());
  auto [it, inserted] = chains_.try_emplace(key);
  auto& acc = it->second;
  if (inserted) {
    const auto t = run_targets_.find(target_key(d.run_id()));
    if (t != run_targets_.end() && t->second->n_test_points() > 0) acc.lpd.emplace(*t->second);
  }
  acc.seed = d.seed();
  try {
    const auto rd = run_dims_.find(d.run_id());
    const int draw_dim = rd != run_dims_.end() ? rd->second : dim_;
    const auto rs = run_sampler_.find(d.run_id());
    const auto ro = run_outputs_.find(d.run_id());
    add_draw(d, draw_dim > 0 ? draw_dim : d.state_size(),
             rs != run_sampler_.end() ? rs->second : header_.sampler_name(), acc, scratch_,
             ro != run_outputs_.end() ? static_cast<int>(ro->second.size()) : 0);
  } catch (const Error& e) {
    // A well-framed record with unusable content (a state of the wrong dimension, a NaN log
    // weight): say which record it is.
    throw DataError(path_.string() + ": record " + std::to_string(record_index) + " (draw " +
                    std::to_string(d.iteration()) + " of chain " + std::to_string(d.chain_id()) +
                    "): " + e.what());
  }
  acc.sum_accept += d.accept_stat();
  acc.n_divergent += d.divergent();
  ++acc.n_draws;
}

ChainRunSummary FileScan::chain_summary(const ChainKey& key, const ChainAccumulator& acc,
                                        const std::map<int, const v1::ChainSummary*>& by_chain,
                                        bool has_footer) const {
  ChainRunSummary s;
  s.run_id = key.first;
  s.chain_id = key.second;
  s.seed = acc.seed;
  const auto rc = run_configs_.find(key.first);
  const v1::RunConfig& run_config = rc != run_configs_.end() ? *rc->second : header_.config();
  s.sampler = config::sampler_kind_name(run_config.sampler());
  s.target = config::target_kind_name(run_config.target());
  s.n_draws = acc.n_draws;
  const auto ro = run_outputs_.find(key.first);
  s.names = quantity_names(ro != run_outputs_.end() ? ro->second : std::vector<std::string>{},
                           static_cast<int>(acc.moments.mean().size()));
  s.mean = acc.moments.mean();
  s.second_moment = acc.moments.second_moment();
  s.weighted = acc.weighted;
  s.kish_ess = acc.moments.kish_ess();
  s.mean_accept_stat = s.n_draws ? acc.sum_accept / static_cast<double>(s.n_draws) : 0.0;
  s.n_divergent = acc.n_divergent;
  if (acc.lpd) s.held_out_lpd = acc.lpd->value();
  s.sample_values = acc.samples.values();
  s.sample_log_weights = acc.samples.log_weights();
  s.sample_stride = acc.samples.stride();
  if (auto it = by_chain.find(key.second); it != by_chain.end()) {
    const auto counts = gradient_counts(*it->second, run_config);
    s.n_gradient_evals = counts.target;
    s.n_extended_gradient_evals = counts.extended;
    s.wall_seconds = it->second->wall_seconds();
    s.cpu_seconds = it->second->cpu_seconds();
    s.status = it->second->status();
    for (const auto& [k, v] : it->second->estimates()) s.estimates[k] = v;
    s.warnings.assign(it->second->warnings().begin(), it->second->warnings().end());
    s.model_messages = it->second->model_messages();
  } else {
    s.status = has_footer ? "missing from footer" : "incomplete: no footer";
  }
  return s;
}

void FileScan::summarise_chains(FileSummary& out) const {
  std::map<int, const v1::ChainSummary*> by_chain;
  for (const auto& c : footer_.chains()) by_chain[c.chain_id()] = &c;
  for (const auto& [key, acc] : chains_)
    out.runs.push_back(chain_summary(key, acc, by_chain, out.has_footer));
}

void FileScan::attach_truth_errors(FileSummary& out) {
  compare_with_truth(out);
  if (!run_target_errors_.empty())
    out.lpd_note = "no held-out lpd: " + run_target_errors_.begin()->second;
}

void FileScan::compare_with_truth(FileSummary& out) {
  if (!(options_.with_truth && options_.truth_errors && header_.has_config() && !out.runs.empty()))
    return;
  // One truth per run (studies hold several targets), read once each from the header.
  std::map<std::string, targets::Truth> truths;
  try {
    for (auto& r : out.runs) {
      auto it = truths.find(r.run_id);
      if (it == truths.end()) it = truths.emplace(r.run_id, targets_.truth(header_, r.run_id)).first;
      const auto& truth = it->second;
      if (truth.mean && truth.mean->size() == r.mean.size()) r.error_mean = r.mean - *truth.mean;
      if (truth.second_moment && truth.second_moment->size() == r.second_moment.size())
        r.error_second_moment = r.second_moment - *truth.second_moment;
      if (!truth.mean) out.truth_note = "the target of run '" + r.run_id + "' has no known truth";
    }
  } catch (const std::exception& e) {
    out.truth_note = std::string("truth not available: ") + e.what();
  }
}

}  // namespace

FileSummary summarize_file(const std::filesystem::path& path, const SummarizeOptions& options) {
  FileSummary out;
  out.path = path;
  CheckedRecordReader reader(path);
  FileScan scan(path, options);
  scan.read(reader, out);
  scan.summarise_chains(out);
  scan.attach_truth_errors(out);
  return out;
}

std::string summaries_to_json(const std::vector<FileSummary>& files) {
  return summaries_json(files).dump(2) + "\n";
}

nlohmann::ordered_json summaries_json(const std::vector<FileSummary>& files) {
  nlohmann::ordered_json j;
  j["runs"] = nlohmann::ordered_json::array();
  j["files"] = nlohmann::ordered_json::array();
  for (const auto& f : files) {
    for (const auto& r : f.runs) {
      nlohmann::ordered_json o;
      o["run_id"] = r.run_id;
      o["sampler"] = r.sampler;
      o["target"] = r.target;
      o["seed"] = r.seed;
      o["chain_id"] = r.chain_id;
      o["n_draws"] = r.n_draws;
      o["names"] = r.names;
      o["mean"] = to_std(r.mean);
      o["second_moment"] = to_std(r.second_moment);
      o["weighted"] = r.weighted;
      o["kish_ess"] = r.kish_ess;
      o["mean_accept_stat"] = r.mean_accept_stat;
      o["n_divergent"] = r.n_divergent;
      o["n_gradient_evals"] = r.n_gradient_evals;
      o["n_extended_gradient_evals"] = r.n_extended_gradient_evals;
      o["wall_seconds"] = r.wall_seconds;
      o["cpu_seconds"] = r.cpu_seconds;
      o["status"] = r.status;
      if (r.error_mean.size() > 0) o["error_mean"] = to_std(r.error_mean);
      if (r.error_second_moment.size() > 0)
        o["error_second_moment"] = to_std(r.error_second_moment);
      if (r.held_out_lpd)
        o["held_out_lpd"] = std::isfinite(*r.held_out_lpd) ? nlohmann::ordered_json(*r.held_out_lpd)
                                                           : nlohmann::ordered_json(nullptr);
      o["estimates"] = nlohmann::ordered_json::object();
      for (const auto& [k, v] : r.estimates) o["estimates"][k] = v;
      o["warnings"] = r.warnings;
      o["model_messages"] = nlohmann::ordered_json::array();
      for (const auto& m : r.model_messages)
        o["model_messages"].push_back({{"kind", v1::ModelMessage::Kind_Name(m.kind())},
                                       {"text", m.text()},
                                       {"count", m.count()}});
      o["file"] = f.path.string();
      j["runs"].push_back(std::move(o));
    }
    nlohmann::ordered_json fo;
    fo["path"] = f.path.string();
    fo["n_records"] = f.n_records;
    fo["complete"] = f.has_footer && !f.problem;
    if (!f.truth_note.empty()) fo["truth_note"] = f.truth_note;
    if (!f.lpd_note.empty()) fo["lpd_note"] = f.lpd_note;
    if (f.problem)
      fo["problem"] = {{"offset", f.problem->offset},
                       {"record_index", f.problem->record_index},
                       {"message", f.problem->message}};
    j["files"].push_back(std::move(fo));
  }
  return j;
}

namespace {

// Per run with a log Z, the footer's verdict on it (report/log_z_headline.hpp), in the order the
// runs first appear: "  run X: log Z: k of n chains cannot be trusted; ...".
std::string log_z_lines(const std::vector<ChainRunSummary>& chains) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<const std::map<std::string, double>*>> by_run;
  for (const auto& c : chains) {
    if (c.status != "ok") continue;
    auto [it, fresh] = by_run.try_emplace(c.run_id);
    if (fresh) order.push_back(c.run_id);
    it->second.push_back(&c.estimates);
  }
  std::string out;
  for (const auto& run : order)
    if (const auto line = log_z_headline(by_run.at(run)); !line.empty())
      out += fmt::format("  run {}: {}\n", run, line);
  return out;
}

}  // namespace

std::string summaries_to_table(const std::vector<FileSummary>& files) {
  std::string out;
  for (const auto& f : files) {
    out += fmt::format("{}: {} records{}\n", f.path.string(), f.n_records,
                       f.problem ? " — DAMAGED at byte " + std::to_string(f.problem->offset) +
                                       ": " + f.problem->message
                                 : (f.has_footer ? "" : " — no footer (run incomplete)"));
    // The held-out lpd column appears when some run of the file has a test set.
    bool any_lpd = false;
    for (const auto& r : f.runs) any_lpd = any_lpd || r.held_out_lpd.has_value();
    const auto lpd_cell = [&](const ChainRunSummary& r) {
      if (!any_lpd) return std::string();
      return r.held_out_lpd ? fmt::format(" {:>12.4f}", *r.held_out_lpd)
                            : fmt::format(" {:>12}", "—");
    };
    out += fmt::format("  {:<16} {:>5} {:>10} {:>8} {:>7} {:>12} {:>8} {:>8}{}  {}\n", "run",
                       "chain", "seed", "draws", "accept", "grad evals", "wall s", "cpu s",
                       any_lpd ? fmt::format(" {:>12}", "held-out lpd") : std::string(), "status");
    // Each chain row names its warnings' kinds (the text before the first ':'); their full
    // text is among the run's warnings in the posterior summary.
    for (const auto& r : f.runs) {
      std::string marks;
      for (const auto& w : r.warnings) marks += "  [warning: " + w.substr(0, w.find(':')) + "]";
      out += fmt::format("  {:<16} {:>5} {:>10} {:>8} {:>7.3f} {:>12} {:>8.2f} {:>8.2f}{}  {}{}\n",
                         r.run_id, r.chain_id, r.seed, r.n_draws, r.mean_accept_stat,
                         r.n_gradient_evals, r.wall_seconds, r.cpu_seconds, lpd_cell(r), r.status,
                         marks);
    }
    for (const auto& r : f.runs) {
      const std::string said = records::describe_model_messages(r.model_messages);
      if (!said.empty())
        out += fmt::format("  model: run {} chain {}: {}\n", r.run_id, r.chain_id, said);
    }
    out += log_z_lines(f.runs);
  }
  return out;
}

}  // namespace pemc::report
