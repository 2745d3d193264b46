#include "report/export_netcdf.hpp"

#include <fmt/format.h>
#include <netcdf.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>
#include <set>
#include <utility>

#include "core/error.hpp"
#include "core/version.hpp"
#include "report/checked_reader.hpp"
#include "report/export_lp.hpp"
#include "report/export_resample.hpp"
#include "report/inference_data_layout.hpp"
#include "report/observed_data.hpp"
#include "report/observed_data_source.hpp"
#include "report/quantities.hpp"

namespace pemc::report {
namespace {

using namespace export_detail;
namespace fs = std::filesystem;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

void check(int status, const fs::path& file, const std::string& what) {
  if (status != NC_NOERR)
    throw IoError(fmt::format("export --format netcdf: {}: {}: {}", file.string(), what,
                              nc_strerror(status)));
}

void put_text(int grp, int var, const char* name, const std::string& value, const fs::path& file) {
  check(nc_put_att_text(grp, var, name, value.size(), value.c_str()), file,
        std::string("attribute ") + name);
}

std::size_t product(const std::vector<std::size_t>& v) {
  std::size_t p = 1;
  for (auto x : v) p *= x;
  return p;
}

// ArviZ's attributes of the file and of every group (its InferenceData schema).
void put_schema_attrs(int grp, const std::string& created_at, const fs::path& file) {
  put_text(grp, NC_GLOBAL, "created_at", created_at, file);
  put_text(grp, NC_GLOBAL, "inference_library", "pemc", file);
  put_text(grp, NC_GLOBAL, "inference_library_version", std::string(kVersion), file);
}

// A dim with its coordinate variable (a variable of the dim's name over it): `values`, or
// 0 .. size-1 when empty.
int define_dim(int grp, const std::string& name, std::size_t size, const fs::path& file,
               const std::vector<int>& values = {}) {
  int dim, var;
  check(nc_def_dim(grp, name.c_str(), size, &dim), file, "dim " + name);
  check(nc_def_var(grp, name.c_str(), NC_INT, 1, &dim, &var), file, "coordinate " + name);
  std::vector<int> v = values;
  if (v.empty())
    for (std::size_t i = 0; i < size; ++i) v.push_back(static_cast<int>(i));
  if (size > 0) check(nc_put_var_int(grp, var, v.data()), file, "coordinate " + name);
  return dim;
}

// The sizes of one phase (post-warmup or warmup) of a run's file.
struct PhaseShape {
  std::vector<int> chain_ids;
  std::size_t n_draws = 0;
  std::size_t n_weighted = 0;  // weighted form: the weighted_sample dim's size; 0: none
};

// A new group with ArviZ's attributes and the sample dims chain, draw[, weighted_sample]; returns
// the group and fills `dims` with those dims' ids.
int define_group(int ncid, const std::string& name, const PhaseShape& shape,
                 const std::string& created_at, const fs::path& file, std::vector<int>& dims) {
  int grp;
  check(nc_def_grp(ncid, name.c_str(), &grp), file, "group " + name);
  put_schema_attrs(grp, created_at, file);
  dims = {define_dim(grp, kChainDim, shape.chain_ids.size(), file, shape.chain_ids),
          define_dim(grp, kDrawDim, shape.n_draws, file)};
  if (shape.n_weighted > 0) dims.push_back(define_dim(grp, kWeightedSampleDim, shape.n_weighted, file));
  return grp;
}

int define_double(int grp, const std::string& name, const std::vector<int>& dims,
                  const fs::path& file) {
  int id;
  check(nc_def_var(grp, name.c_str(), NC_DOUBLE, static_cast<int>(dims.size()), dims.data(), &id),
        file, "variable " + name);
  check(nc_def_var_fill(grp, id, 0, &kNaN), file, "fill of " + name);
  return id;
}

struct StatVar {
  config::StatColumn column;
  nc_type type;
  int id = -1;
};

nc_type nc_type_of(config::DrawStat stat) {
  switch (config::stat_type(stat)) {
    case config::StatType::kInt: return NC_INT;
    case config::StatType::kBool: return NC_BYTE;
    default: return NC_DOUBLE;
  }
}

// The groups of one phase: posterior, log_likelihood (when the run has log-likelihood
// variables) and sample_stats, or their warmup_ versions.
struct PhaseGroups {
  int posterior = -1, log_likelihood = -1, stats = -1;
  std::vector<int> var_ids;  // per layout variable, in the group of its DrawGroup
  std::vector<StatVar> stats_vars;
  int lp = -1;          // -1: the run has no lp__ (export_lp.hpp)
  int log_weight = -1;  // weighted form only
  bool weighted_form = false;
  int group_of(const ArrayVariable& v) const {
    return v.group == DrawGroup::kLogLikelihood ? log_likelihood : posterior;
  }
};

// sample_stats' lp (per weighted sample in the weighted form), the sampler's columns by their
// ArviZ names (config/sampler_columns.hpp) over (chain, draw), and the weighted form's log_weight.
void define_stats(int grp, const std::vector<int>& dims, const RunScan& run, const fs::path& file,
                  PhaseGroups& g) {
  if (run.has_lp) {
    g.lp = define_double(grp, "lp", dims, file);
    put_text(grp, g.lp, "description",
             run.meta.lp_offset
                 ? "the model's log density at the sample, Jacobian included, as Stan's lp__ "
                   "(-potential of the run's target minus the constants Stan drops)"
                 : "the model's log density at the sample (-potential of the run's target, "
                   "Jacobian included)",
             file);
  }
  const std::vector<int> draw_dims{dims[0], dims[1]};
  for (const auto& c : run.columns.stats) {
    StatVar v{c, nc_type_of(c.stat)};
    check(nc_def_var(grp, c.arviz.c_str(), v.type, 2, draw_dims.data(), &v.id), file,
          "variable " + c.arviz);
    if (v.type == NC_DOUBLE) check(nc_def_var_fill(grp, v.id, 0, &kNaN), file, "fill");
    // xarray decodes int8 variables with dtype "bool" as booleans (ArviZ's diverging).
    if (v.type == NC_BYTE) put_text(grp, v.id, "dtype", "bool", file);
    if (c.stat == config::DrawStat::kExtendedLp)
      put_text(grp, v.id, "description",
               "log density of the sampler's own (extended) state; not the model's", file);
    g.stats_vars.push_back(v);
  }
  if (!g.weighted_form) return;
  g.log_weight = define_double(grp, "log_weight", dims, file);
  put_text(grp, g.log_weight, "description",
           "log of each weighted sample's weight for a self-normalised average over all of the "
           "run's samples (pseudo-extended: normalised within the draw)",
           file);
}

PhaseGroups define_phase(int ncid, const std::string& prefix, const RunScan& run,
                         const QuantityLayout& layout, const PhaseShape& shape,
                         const std::string& created_at, const fs::path& file) {
  PhaseGroups g;
  g.weighted_form = shape.n_weighted > 0;
  std::vector<int> post_dims, ll_dims, stats_dims;
  g.posterior = define_group(ncid, prefix + "posterior", shape, created_at, file, post_dims);
  const bool any_log_lik =
      std::any_of(layout.variables.begin(), layout.variables.end(),
                  [](const ArrayVariable& v) { return v.group == DrawGroup::kLogLikelihood; });
  if (any_log_lik)
    g.log_likelihood =
        define_group(ncid, prefix + "log_likelihood", shape, created_at, file, ll_dims);
  for (const auto& v : layout.variables) {
    const int grp = g.group_of(v);
    std::vector<int> dims = v.group == DrawGroup::kLogLikelihood ? ll_dims : post_dims;
    const auto names = dim_names(v);
    for (std::size_t k = 0; k < names.size(); ++k)
      dims.push_back(define_dim(grp, names[k], v.shape[k], file));
    g.var_ids.push_back(define_double(grp, v.name, dims, file));
  }
  if (g.weighted_form)
    put_text(g.posterior, NC_GLOBAL, "pemc_weighted_samples",
             "each draw holds weighted samples along dim weighted_sample, with their weights in "
             "sample_stats/log_weight; ArviZ's summaries ignore weights and treat "
             "weighted_sample as a dim of every variable",
             file);
  g.stats = define_group(ncid, prefix + "sample_stats", shape, created_at, file, stats_dims);
  define_stats(g.stats, stats_dims, run, file, g);
  return g;
}

// One run's file as it is written.
struct RunFile {
  int ncid = -1;
  fs::path file;
  QuantityLayout layout;
  PhaseGroups post, warm;
  std::map<int, std::size_t> chain_index;
  std::map<int, std::size_t> next_post, next_warm;  // next draw index per chain
  std::map<int, std::size_t> cursor;                // resampled runs: next sample per chain
};

// Writes samples `js` of draw d at (chain ci, draw di): all of a draw's samples along
// weighted_sample in the weighted form, else one sample.
void write_samples(const v1::Draw& d, const RunScan& run, const RunFile& o, const PhaseGroups& g,
                   std::size_t ci, std::size_t di, const std::vector<int>& js) {
  const int od = run.meta.original_dim;
  const auto& vars = o.layout.variables;
  std::vector<std::vector<double>> buffers(vars.size());
  for (std::size_t v = 0; v < vars.size(); ++v)
    buffers[v].assign(js.size() * product(vars[v].shape), kNaN);
  std::vector<double> values(run.names.size()), lp(js.size(), kNaN);
  Vector point;
  for (std::size_t s = 0; s < js.size(); ++s) {
    sample_quantities(d, od, run.named_outputs, js[s], values);
    for (std::size_t q = 0; q < values.size(); ++q) {
      const auto [v, flat] = o.layout.place[q];
      buffers[v][s * product(vars[v].shape) + flat] = values[q];
    }
    if (g.lp >= 0) lp[s] = sample_lp(d, run, js[s], point);
  }
  std::vector<std::size_t> start{ci, di}, count{1, 1};
  if (g.weighted_form) {
    start.push_back(0);
    count.push_back(js.size());
  }
  for (std::size_t v = 0; v < vars.size(); ++v) {
    auto vs = start, vc = count;
    for (auto n : vars[v].shape) {
      vs.push_back(0);
      vc.push_back(n);
    }
    check(nc_put_vara_double(g.group_of(vars[v]), g.var_ids[v], vs.data(), vc.data(),
                             buffers[v].data()),
          o.file, "write " + vars[v].name);
  }
  if (g.lp >= 0)
    check(nc_put_vara_double(g.stats, g.lp, start.data(), count.data(), lp.data()), o.file,
          "write lp");
  if (g.log_weight >= 0) {
    std::vector<double> weights;
    export_log_weights(d, run, weights);
    check(nc_put_vara_double(g.stats, g.log_weight, start.data(), count.data(), weights.data()),
          o.file, "write log_weight");
  }
  const std::size_t one[] = {1, 1};
  for (const auto& v : g.stats_vars) {
    const double x = config::stat_value(v.column.stat, d);
    int status;
    if (v.type == NC_INT) {
      const int i = static_cast<int>(x);
      status = nc_put_vara_int(g.stats, v.id, start.data(), one, &i);
    } else if (v.type == NC_BYTE) {
      const signed char b = x != 0 ? 1 : 0;
      status = nc_put_vara_schar(g.stats, v.id, start.data(), one, &b);
    } else {
      status = nc_put_vara_double(g.stats, v.id, start.data(), one, &x);
    }
    check(status, o.file, "write " + v.column.arviz);
  }
}

// Writes draw d: a resampled run's samples each as many times as they were drawn (one draw
// index per copy), the weighted form's samples together, or the draw's one sample. Returns the
// samples written.
std::int64_t write_draw(const v1::Draw& d, const RunScan& run, RunFile& o) {
  const PhaseGroups& g = d.warmup() ? o.warm : o.post;
  const std::size_t ci = o.chain_index.at(d.chain_id());
  std::size_t& next = (d.warmup() ? o.next_warm : o.next_post)[d.chain_id()];
  const int n = draw_sample_count(d, run.meta.original_dim);
  if (g.weighted_form) {
    std::vector<int> js(static_cast<std::size_t>(n));
    for (int j = 0; j < n; ++j) js[static_cast<std::size_t>(j)] = j;
    write_samples(d, run, o, g, ci, next++, js);
    return n;
  }
  std::int64_t written = 0;
  const ChainScan& c = run.chains.at(d.chain_id());
  for (int j = 0; j < n; ++j) {
    const int copies = run.resampled ? next_copies(c, o.cursor[d.chain_id()]) : 1;
    for (int r = 0; r < copies; ++r) write_samples(d, run, o, g, ci, next++, {j});
    written += copies;
  }
  return written;
}

// The log-likelihood base names: options.log_lik, each of which some exported run must have, or
// the default where a run has it.
std::vector<std::string> log_lik_names(const Scan& scan, const ExportOptions& options) {
  if (options.log_lik.empty()) return {kDefaultLogLik};
  for (const auto& name : options.log_lik) {
    std::string runs;
    bool found = false;
    for (const auto& id : scan.run_order) {
      const auto bases = base_names(scan.runs.at(id).names);
      found = found || std::find(bases.begin(), bases.end(), name) != bases.end();
      std::string list;
      for (const auto& b : bases) list += (list.empty() ? "" : ", ") + b;
      runs += fmt::format("{}run '{}': {}", runs.empty() ? "" : "; ", id, list);
    }
    if (!found)
      throw ConfigError(fmt::format(
          "export --log-lik '{}': no exported run has quantities of that base name ({})", name,
          runs.empty() ? "no runs exported" : runs));
  }
  return options.log_lik;
}

// A run's observed_data: where its data came from, and the variables written.
struct RunObservedData {
  ObservedDataSource source;
  std::vector<ObservedVariable> variables;
};

// "run 'a': N, y; run 'b': ..." for an error that lists what each run's data holds.
std::string data_variables_by_run(const std::map<std::string, std::vector<std::string>>& by_run) {
  std::string out;
  for (const auto& [id, names] : by_run) {
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    out += fmt::format("{}run '{}': {}", out.empty() ? "" : "; ", id, list);
  }
  return out;
}

// The data files the exported runs' Stan targets name, by run (runs without one left out).
std::map<std::string, std::string> stan_data_files(const Scan& scan) {
  std::map<std::string, std::string> out;
  for (const auto& id : scan.run_order) {
    const auto& target = scan.runs.at(id).meta.config.target();
    if (target.has_stan() && !target.stan().data_file().empty())
      out[id] = target.stan().data_file();
  }
  return out;
}

// Each exported run's observed_data (observed_data_source.hpp), read and checked before anything
// is written: ConfigError for a data file that changed since the run, for --data or --observed
// where no exported run has data, for --data with runs of different data files, and for an
// --observed name no run's data has. Runs whose file records no data hashes get none, with a note.
std::map<std::string, RunObservedData> observed_data_of(const Scan& scan,
                                                        const ExportOptions& options,
                                                        std::vector<std::string>& notes) {
  std::map<std::string, RunObservedData> out;
  if (!options.observed_data) return out;
  const auto names = split_observed_names(options.observed);
  const auto data_files = stan_data_files(scan);
  if (data_files.empty()) {
    if (!options.data_file.empty() || !names.empty())
      throw ConfigError(fmt::format(
          "export {}: no exported run is a Stan model with a data file (target.stan.data_file), "
          "so there is no observed_data",
          options.data_file.empty() ? "--observed" : "--data " + options.data_file.string()));
    return out;
  }
  if (!options.data_file.empty()) {
    std::set<std::string> distinct;
    std::string list;
    for (const auto& [id, file] : data_files) {
      distinct.insert(file);
      list += fmt::format("{}run '{}': {}", list.empty() ? "" : "; ", id, file);
    }
    if (distinct.size() > 1)
      throw ConfigError(fmt::format(
          "export --data {}: the exported runs read different data files ({}); export one of "
          "them with --run NAME",
          options.data_file.string(), list));
  }
  std::string not_recorded;
  std::map<std::string, std::vector<std::string>> variables_by_run;
  for (const auto& [id, file] : data_files) {
    auto source =
        observed_data_source(scan.header, scan.runs.at(id).meta.config, id, options.data_file);
    if (source.kind == ObservedDataSource::Kind::kNotRecorded) {
      not_recorded += fmt::format("{}run '{}': {}", not_recorded.empty() ? "" : ", ", id, file);
      continue;
    }
    auto variables = observed_variables(source.text, source.path.string());
    for (const auto& v : variables) variables_by_run[id].push_back(v.data_name);
    if (!source.note.empty()) notes.push_back(source.note);
    source.text.clear();  // parsed: the arrays hold it now
    out[id] = {std::move(source), select_observed(std::move(variables), names)};
  }
  if (!not_recorded.empty())
    notes.push_back("observed_data omitted: the file does not record its data files' hashes (a "
                    "pemc-dist before they were recorded wrote it), so whether the data files (" +
                    not_recorded +
                    ") still hold the runs' data cannot be told; pass --data FILE to export a "
                    "run's data anyway");
  for (const auto& name : names) {
    bool found = variables_by_run.empty();  // nothing read: the note above says why
    for (const auto& [id, vars] : variables_by_run)
      found = found || std::find(vars.begin(), vars.end(), name) != vars.end();
    if (!found)
      throw ConfigError(fmt::format(
          "export --observed '{}': no exported run's data has a variable of that name ({})", name,
          data_variables_by_run(variables_by_run)));
  }
  return out;
}

// Group observed_data: every variable of the run's data over dims <name>_dim_0, ... (each with
// the coordinate 0 .. n-1), integers as NC_INT, reals as NC_DOUBLE, and where the data came from.
void define_observed_data(int ncid, const RunObservedData& data, const std::string& created_at,
                          const fs::path& file) {
  int grp;
  check(nc_def_grp(ncid, "observed_data", &grp), file, "group observed_data");
  put_schema_attrs(grp, created_at, file);
  put_text(grp, NC_GLOBAL, "pemc_data_file", data.source.path.string(), file);
  put_text(grp, NC_GLOBAL, "pemc_data_sha256", data.source.sha256, file);
  if (!data.source.note.empty()) put_text(grp, NC_GLOBAL, "pemc_data_note", data.source.note, file);
  for (const auto& v : data.variables) {
    const std::string what = "observed_data/" + v.array.name;
    std::vector<int> dims;
    const auto names = dim_names(v.array);
    for (std::size_t k = 0; k < names.size(); ++k)
      dims.push_back(define_dim(grp, names[k], v.array.shape[k], file));
    int id;
    check(nc_def_var(grp, v.array.name.c_str(), v.is_int ? NC_INT : NC_DOUBLE,
                     static_cast<int>(dims.size()), dims.data(), &id),
          file, "variable " + what);
    if (product(v.array.shape) == 0) continue;
    check(v.is_int ? nc_put_var_int(grp, id, v.ints.data())
                   : nc_put_var_double(grp, id, v.reals.data()),
          file, "write " + what);
  }
}

// Creates the run's file and defines its groups, with the file's attributes.
RunFile open_run_file(const fs::path& path, const std::string& id,
                      const RunScan& run, const std::string& stem, const ExportOptions& options,
                      const std::vector<std::string>& log_lik, const std::string& created_at,
                      const RunObservedData* observed) {
  RunFile o;
  o.file = options.output_dir / (stem + ".nc");
  refuse_special_output(o.file);
  check(nc_create(o.file.c_str(), NC_NETCDF4 | NC_CLOBBER, &o.ncid), o.file, "create");
  o.layout = quantity_layout(run.names, log_lik);
  PhaseShape post, warm;
  const bool weighted_form = run.weighted && !run.resampled;
  for (const auto& [chain_id, c] : run.chains) {
    o.chain_index[chain_id] = post.chain_ids.size();
    post.chain_ids.push_back(chain_id);
    post.n_draws = std::max(post.n_draws, static_cast<std::size_t>(c.n_draws));
    warm.n_draws = std::max(warm.n_draws, static_cast<std::size_t>(c.n_warmup));
    if (weighted_form)
      post.n_weighted = std::max(post.n_weighted, static_cast<std::size_t>(c.max_samples));
  }
  warm.chain_ids = post.chain_ids;
  warm.n_weighted = post.n_weighted;
  put_schema_attrs(o.ncid, created_at, o.file);
  put_text(o.ncid, NC_GLOBAL, "source", path.string(), o.file);
  put_text(o.ncid, NC_GLOBAL, "pemc_run", id, o.file);
  put_text(o.ncid, NC_GLOBAL, "pemc_sampler", run.meta.sampler, o.file);
  put_text(o.ncid, NC_GLOBAL, "pemc_target", run.meta.target, o.file);
  put_text(o.ncid, NC_GLOBAL, "pemc_draws",
           !run.weighted  ? "plain"
           : weighted_form ? "weighted (sample_stats/log_weight over dim weighted_sample)"
                           : fmt::format("resampled by the normalised weights (seed {})",
                                         options.seed),
           o.file);
  o.post = define_phase(o.ncid, "", run, o.layout, post, created_at, o.file);
  if (options.include_warmup && warm.n_draws > 0)
    o.warm = define_phase(o.ncid, "warmup_", run, o.layout, warm, created_at, o.file);
  if (observed) define_observed_data(o.ncid, *observed, created_at, o.file);
  return o;
}

}  // namespace

void export_netcdf(const fs::path& path, const Scan& scan, const ExportOptions& options,
                   ExportResult& result) {
  const auto log_lik = log_lik_names(scan, options);
  const auto observed = observed_data_of(scan, options, result.notes);
  prepare_output_dir(options);
  const std::string created_at = iso8601_utc(std::chrono::system_clock::now());
  std::map<std::string, RunFile> files;
  std::set<std::string> stems;
  for (const auto& id : scan.run_order) {
    const RunScan& run = scan.runs.at(id);
    std::string stem = file_stem(id);
    while (!stems.insert(stem).second) stem += "_";
    const auto data = observed.find(id);
    files.emplace(id, open_run_file(path, id, run, stem, options, log_lik, created_at,
                                    data == observed.end() ? nullptr : &data->second));
    result.files.push_back(files.at(id).file);
    if (run.weighted && !run.resampled)
      result.notes.push_back(fmt::format(
          "run '{}' ({}) is exported weighted (--no-resample): its samples lie along dim "
          "weighted_sample with their weights in sample_stats/log_weight, which az.summary and "
          "az.loo ignore (their numbers are unweighted, per weighted sample); the default "
          "resampled export gives plain draws",
          id, run.meta.sampler));
  }
  CheckedRecordReader reader(path);
  v1::Record record;
  std::int64_t left = scan.n_records;
  while (left-- > 0 && reader.next(record)) {
    if (!record.has_draw() || !exported(record.draw(), options)) continue;
    const auto& d = record.draw();
    result.rows += write_draw(d, run_of(scan, d), files.at(d.run_id()));
  }
  for (auto& [id, o] : files) check(nc_close(o.ncid), o.file, "close");
}

}  // namespace pemc::report
