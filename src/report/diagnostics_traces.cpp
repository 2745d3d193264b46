#include "report/diagnostics_traces.hpp"

#include <fmt/format.h>

#include "report/draw_weights.hpp"
#include "report/gradient_counts.hpp"
#include "report/quantities.hpp"
#include "config/sampler_columns.hpp"

#include <algorithm>
#include <cmath>
#include <span>

#include "config/factories.hpp"
#include "records/describe_model_messages.hpp"
#include "core/error.hpp"
#include "core/numerics.hpp"
#include "report/checked_reader.hpp"

namespace pemc::report {
namespace {

// Keeps every other kept draw: the stride doubles and the kept draws stay evenly spaced.
void halve(std::vector<double>& v) {
  std::size_t j = 0;
  for (std::size_t i = 0; i < v.size(); i += 2) v[j++] = v[i];
  v.resize(j);
}

// Number of pseudo-samples a draw holds (0: none).
int n_pseudo_samples(const v1::Draw& d, int original_dim) {
  if (original_dim <= 0 || d.extra_states_size() == 0) return 0;
  if (d.extra_states_size() % original_dim != 0) return 0;
  return d.extra_states_size() / original_dim;
}

}  // namespace

RunMeta run_meta(const v1::Header& header, const std::string& run_id) {
  RunMeta m;
  m.config = header.config();
  m.dim = header.dim();
  m.original_dim = header.original_dim() > 0 ? header.original_dim() : header.dim();
  for (const auto& run : header.config().runs())
    if (run.name() == run_id) m.config = run;
  m.in_study = !header.config().runs().empty();
  for (const auto& info : header.runs())
    if (info.name() == run_id) {
      m.dim = info.dim();
      m.original_dim = info.original_dim() > 0 ? info.original_dim() : info.dim();
      m.output_names.assign(info.output_names().begin(), info.output_names().end());
      if (info.has_mode_search()) m.mode_search = info.mode_search();
      if (info.has_truth()) m.truth = info.truth();
      m.n_test_points = info.n_test_points();
      if (info.has_lp_offset()) m.lp_offset = info.lp_offset();
      if (info.has_n_parameter_outputs()) m.n_parameter_outputs = info.n_parameter_outputs();
    }
  m.max_tree_depth = config::configured_max_tree_depth(m.config.sampler());
  m.sampler = config::sampler_kind_name(m.config.sampler());
  m.target = config::target_kind_name(m.config.target());
  return m;
}

std::string lp_offset_note(const RunMeta& meta, const std::string& run_id) {
  if (meta.lp_offset || !meta.config.target().has_stan() || meta.config.target().stan().propto())
    return "";
  return fmt::format(
      "run '{}': lp__ is -potential, the Stan model's log density with every constant (propto: "
      "false), which differs from Stan's lp__ by the constants of `~` statements: the file records "
      "no lp offset (written before pemc recorded it, or pemc-dist could not measure it; its log "
      "said why)",
      run_id);
}

bool draw_coordinates(const v1::Draw& d, int original_dim, int k, std::vector<double>& out,
                      int n_outputs) {
  out.assign(static_cast<std::size_t>(k), 0.0);
  const int n = n_pseudo_samples(d, original_dim);
  if (n_outputs > 0) {
    // Named outputs: one row of n_outputs per sample, weighted like the samples below.
    const int rows = std::max(n, 1);
    if (k > n_outputs || d.outputs_size() != rows * n_outputs) return false;
    if (n == 0) {
      for (int i = 0; i < k; ++i) out[i] = d.outputs(i);
      return true;
    }
  }
  if (n > 0) {
    const int width = n_outputs > 0 ? n_outputs : original_dim;
    if (k > width) return false;
    const double* x = n_outputs > 0 ? d.outputs().data() : d.extra_states().data();
    if (d.log_weights_size() == n) {
      const double log_norm =
          log_sum_exp(std::span<const double>(d.log_weights().data(), static_cast<std::size_t>(n)));
      if (std::isfinite(log_norm)) {
        for (int j = 0; j < n; ++j) {
          const double w = std::exp(d.log_weights(j) - log_norm);
          for (int i = 0; i < k; ++i) out[i] += w * x[j * width + i];
        }
        return true;
      }
      // All weights zero (or a non-finite weight): fall through to the plain mean, which keeps
      // the trace defined; the moments reject such weights with their own error.
    }
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < k; ++i) out[i] += x[j * width + i] / n;
    return true;
  }
  if (d.state_size() < k) return false;
  for (int i = 0; i < k; ++i) out[i] = d.state(i);
  return true;
}

bool add_weighted_draw(const v1::Draw& d, int original_dim, const std::string& sampler,
                       estimators::WeightedMoments& moments, Vector& scratch) {
  const int n = n_pseudo_samples(d, original_dim);
  if (n > 0 && d.log_weights_size() == n) {
    const double log_norm =
        weights_within_draw(sampler, n)
            ? log_sum_exp(std::span<const double>(d.log_weights().data(), static_cast<std::size_t>(n)))
            : 0.0;
    const bool weightless = log_norm == -kInf;
    for (int j = 0; j < n; ++j) {
      scratch = Eigen::Map<const Vector>(d.extra_states().data() + j * original_dim, original_dim);
      moments.add(scratch, weightless ? -kInf : d.log_weights(j) - log_norm);
    }
    return true;
  }
  scratch = Eigen::Map<const Vector>(d.state().data(), d.state_size());
  if (d.log_weights_size() == 1) {
    moments.add(scratch, d.log_weights(0));
    return true;
  }
  moments.add(scratch);
  return false;
}

FileTraces read_traces(const std::filesystem::path& path, const TraceOptions& options) {
  FileTraces out;
  out.path = path;
  CheckedRecordReader reader(path);
  v1::Record record;
  v1::Footer footer;
  std::map<std::pair<std::string, int>, ChainTrace> chains;
  std::map<std::pair<std::string, int>, std::int64_t> kept;
  std::map<std::string, RunMeta> metas;
  std::vector<double> values;
  Vector scratch;
  while (reader.next(record)) {
    if (record.has_header()) {
      out.header = record.header();
      metas.clear();
      continue;
    }
    if (record.has_footer()) {
      footer = record.footer();
      out.has_footer = true;
      continue;
    }
    if (!record.has_draw()) continue;
    const auto& d = record.draw();
    if (d.warmup()) continue;
    if (!options.run_filter.empty() && d.run_id() != options.run_filter) continue;
    auto meta_it = metas.find(d.run_id());
    if (meta_it == metas.end()) meta_it = metas.emplace(d.run_id(), run_meta(out.header, d.run_id())).first;
    const RunMeta& meta = meta_it->second;
    const auto key = std::make_pair(d.run_id(), d.chain_id());
    auto [it, inserted] = chains.try_emplace(key);
    ChainTrace& c = it->second;
    const int original_dim = meta.original_dim > 0 ? meta.original_dim : d.state_size();
    const auto n_outputs = static_cast<int>(meta.output_names.size());
    const int k = std::min(options.max_coordinates, n_outputs > 0 ? n_outputs : original_dim);
    // Many quantities: fewer draws per chain, so that the chain's values stay bounded.
    const std::int64_t cap = options.draws_kept_per_chain(k);
    if (inserted) {
      c.file = path.string();
      c.run_id = d.run_id();
      c.chain_id = d.chain_id();
      c.original_dim = original_dim;
      c.coords.resize(static_cast<std::size_t>(std::max(k, 0)));
      const auto names = quantity_names(meta.output_names, original_dim);
      c.names.assign(names.begin(), names.begin() + std::max(k, 0));
      c.named_outputs = n_outputs > 0;
      // Start from the stride the header's iteration count calls for, so the kept draws
      // usually need no compaction at all.
      const std::int64_t thin = std::max(1, out.header.config().output().thin());
      const std::int64_t expected = meta.config.iterations() > 0
                                        ? (meta.config.iterations() + thin - 1) / thin
                                        : 0;
      c.stride = std::max<std::int64_t>(1, (expected + cap - 1) / cap);
      c.pseudo_samples = n_pseudo_samples(d, original_dim) > 1;
    }
    c.seed = d.seed();
    const auto where = [&] {
      return path.string() + ": record " + std::to_string(reader.records_read() - 1) + " (draw " +
             std::to_string(d.iteration()) + " of chain " + std::to_string(d.chain_id()) + ")";
    };
    if (c.n_draws % c.stride == 0) {
      if (!draw_coordinates(d, original_dim, static_cast<int>(c.coords.size()), values, n_outputs))
        throw DataError(where() + ": the draw holds " +
                        (n_outputs > 0 ? std::to_string(d.outputs_size()) + " outputs"
                                       : std::to_string(d.state_size()) + " coordinates") +
                        ", expected " + std::to_string(c.coords.size()) + " quantities");
      for (std::size_t i = 0; i < c.coords.size(); ++i) c.coords[i].push_back(values[i]);
      if (options.with_potential) c.potential.push_back(d.potential());
      if (++kept[key] > cap) {
        for (auto& v : c.coords) halve(v);
        halve(c.potential);
        kept[key] = (kept[key] + 1) / 2;
        c.stride *= 2;
      }
    }
    c.sum_accept += d.accept_stat();
    c.n_divergent += d.divergent();
    c.sum_tree_depth += d.tree_depth();
    c.max_tree_depth = std::max(c.max_tree_depth, d.tree_depth());
    c.sum_leapfrog += d.n_leapfrog();
    c.last_step_size = d.step_size();
    if (meta.max_tree_depth && d.tree_depth() >= *meta.max_tree_depth) ++c.n_max_tree_depth;
    if (std::isfinite(d.energy()))
      c.energy.add(d.energy());
    else
      c.energy_finite = false;
    try {
      if (add_weighted_draw(d, original_dim, meta.sampler, c.moments, scratch)) c.weighted = true;
    } catch (const Error& e) {
      throw DataError(where() + ": " + e.what());
    }
    ++c.n_draws;
  }
  out.n_records = reader.records_read();
  out.problem = reader.problem();
  for (const auto& s : footer.chains()) {
    for (auto& [key, c] : chains) {
      if (key.second != s.chain_id()) continue;
      if (!s.run_id().empty() && s.run_id() != key.first) continue;
      c.in_footer = true;
      c.status = s.status();
      c.n_gradient_evals = gradient_counts(s, run_meta(out.header, key.first).config).target;
      c.wall_seconds = s.wall_seconds();
      for (const auto& [name, value] : s.estimates()) c.estimates[name] = value;
      c.warnings.assign(s.warnings().begin(), s.warnings().end());
      c.model_messages = records::describe_model_messages(s.model_messages());
      if (s.has_mode_occupancy()) c.mode_occupancy = s.mode_occupancy();
      c.largest_log_weights.assign(s.largest_log_weights().begin(), s.largest_log_weights().end());
    }
  }
  for (auto& [key, c] : chains) {
    if (!c.in_footer) c.status = out.has_footer ? "missing from footer" : "incomplete: no footer";
    out.chains.push_back(std::move(c));
  }
  return out;
}

}  // namespace pemc::report
