#include "report/export.hpp"

#include <sys/stat.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <span>

#include "config/factories.hpp"
#include "core/error.hpp"
#include "core/numerics.hpp"
#include "core/regular_file.hpp"
#include "core/version.hpp"
#include "report/checked_reader.hpp"
#include "report/draw_weights.hpp"
#include "report/export_lp.hpp"
#include "report/export_netcdf.hpp"
#include "report/export_resample.hpp"
#include "report/export_scan.hpp"
#include "report/quantities.hpp"

namespace pemc::report {
namespace export_detail {

bool exported(const v1::Draw& d, const ExportOptions& options) {
  if (d.warmup() && !options.include_warmup) return false;
  return options.run_filter.empty() || d.run_id() == options.run_filter;
}

namespace {

bool weighted_sampler(const std::string& sampler) {
  return sampler == "pseudo_extended" || sampler == "continuous_tempering" ||
         sampler == "simulated_tempering" || sampler == "annealed_importance";
}

std::string where(const std::filesystem::path& path, const CheckedRecordReader& reader,
                  const v1::Draw& d) {
  return fmt::format("{}: record {} (draw {} of run '{}', chain {})", path.string(),
                     reader.records_read() - 1, d.iteration(), d.run_id(), d.chain_id());
}

RunScan& run_for(Scan& scan, const v1::Draw& d) {
  auto it = scan.runs.find(d.run_id());
  if (it != scan.runs.end()) return it->second;
  RunScan run;
  run.meta = run_meta(scan.header, d.run_id());
  if (run.meta.original_dim <= 0) run.meta.original_dim = d.state_size();
  run.named_outputs = !run.meta.output_names.empty();
  run.names = quantity_names(run.meta.output_names, run.meta.original_dim);
  run.weighted = weighted_sampler(run.meta.sampler);
  run.columns = config::sampler_columns(run.meta.config.sampler());
  scan.run_order.push_back(d.run_id());
  return scan.runs.emplace(d.run_id(), std::move(run)).first->second;
}

}  // namespace

const RunScan& run_of(const Scan& scan, const v1::Draw& d) { return scan.runs.at(d.run_id()); }

void export_log_weights(const v1::Draw& d, const RunScan& run, std::vector<double>& out) {
  const int od = run.meta.original_dim;
  const int n = draw_sample_count(d, od);
  out.assign(static_cast<std::size_t>(n), 0.0);
  if (!draw_is_weighted(d, od)) return;
  std::copy_n(d.log_weights().data(), n, out.data());
  if (!weights_within_draw(run.meta.sampler, n)) return;
  const double lse = log_sum_exp(std::span<const double>(out.data(), out.size()));
  for (double& w : out) w = lse == -kInf ? -kInf : w - lse;
}

Scan scan_file(const std::filesystem::path& path, const ExportOptions& options, bool keep_weights) {
  Scan scan;
  CheckedRecordReader reader(path);
  v1::Record record;
  v1::Footer footer;
  std::vector<double> values, weights;
  while (reader.next(record)) {
    if (record.has_header()) {
      scan.header = record.header();
      continue;
    }
    if (record.has_footer()) {
      footer = record.footer();
      scan.has_footer = true;
      continue;
    }
    if (!record.has_draw()) continue;
    const auto& d = record.draw();
    if (!exported(d, options)) continue;
    RunScan& run = run_for(scan, d);
    auto [it, inserted] = run.chains.try_emplace(d.chain_id());
    ChainScan& c = it->second;
    if (inserted) {
      c.run_id = d.run_id();
      c.chain_id = d.chain_id();
    }
    c.seed = d.seed();
    c.final_step_size = d.step_size();
    const int od = run.meta.original_dim;
    const int n = draw_sample_count(d, od);
    c.max_samples = std::max(c.max_samples, n);
    if (draw_is_weighted(d, od)) run.weighted = true;
    values.resize(run.names.size());
    for (int j = 0; j < n; ++j)
      if (!sample_quantities(d, od, run.named_outputs, j, values))
        throw DataError(fmt::format(
            "{}: the draw does not hold its run's {} quantities for sample {} of {} (state {}, "
            "extra_states {}, outputs {} numbers)",
            where(path, reader, d), run.names.size(), j + 1, n, d.state_size(),
            d.extra_states_size(), d.outputs_size()));
    if (d.warmup()) {
      ++c.n_warmup;
      continue;
    }
    ++c.n_draws;
    if (keep_weights) {
      export_log_weights(d, run, weights);
      for (double w : weights)
        if (std::isnan(w) || w == kInf)
          throw DataError(
              fmt::format("{}: log weight {} cannot be resampled{}", where(path, reader, d), w,
                          kUnresampledHint));
      c.log_weights.insert(c.log_weights.end(), weights.begin(), weights.end());
      c.samples_per_draw.push_back(n);
    }
  }
  scan.n_records = reader.records_read();
  scan.problem = reader.problem();
  if (!options.run_filter.empty() && scan.runs.empty()) {
    std::set<std::string> names;
    for (const auto& info : scan.header.runs()) names.insert(info.name());
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    throw ConfigError(fmt::format("export --run '{}': {} holds no draws of that run{}",
                                  options.run_filter, path.string(),
                                  list.empty() ? "" : " (its runs: " + list + ")"));
  }
  for (auto& [id, run] : scan.runs)
    for (auto& [chain_id, c] : run.chains) {
      c.status = scan.has_footer ? "missing from footer" : "incomplete: no footer";
      for (const auto& s : footer.chains()) {
        if (s.chain_id() != chain_id || (!s.run_id().empty() && s.run_id() != id)) continue;
        c.status = s.status();
        c.wall_seconds = s.wall_seconds();
        if (s.final_step_size() > 0) c.final_step_size = s.final_step_size();
      }
    }
  return scan;
}

void prepare_output_dir(const ExportOptions& options) {
  namespace fs = std::filesystem;
  const auto& dir = options.output_dir;
  if (dir.empty())
    throw ConfigError("export --format " + options.format +
                      " writes several files: give --output-dir DIR");
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    if (!fs::is_directory(dir, ec))
      throw ConfigError("export --output-dir " + dir.string() + ": exists and is not a directory");
    if (!fs::is_empty(dir, ec) && !options.overwrite)
      throw ConfigError("export --output-dir " + dir.string() +
                        ": the directory already holds files; choose an empty or new directory, "
                        "or pass --overwrite to replace files of the same names");
    return;
  }
  fs::create_directories(dir, ec);
  if (ec)
    throw IoError("export --output-dir " + dir.string() + ": cannot create it: " + ec.message());
}

void refuse_special_output(const std::filesystem::path& file) {
  struct stat st {};
  if (::lstat(file.c_str(), &st) != 0 || S_ISREG(st.st_mode)) return;
  throw ConfigError("export: " + file.string() + " is " + file_kind(st.st_mode) +
                    ", not a file the export may replace; remove it or choose another "
                    "--output-dir");
}

std::string file_stem(const std::string& run_id) {
  std::string s = run_id.empty() ? std::string("run") : run_id;
  for (char& c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-')) c = '_';
  if (s.front() == '.') s.front() = '_';
  return s;
}

}  // namespace export_detail

namespace {

using namespace export_detail;
namespace fs = std::filesystem;

// RFC 4180 quoting for a text cell: run ids come from config names and file stems and may hold
// commas or quotes, which would otherwise shift every later column of the row.
std::string csv_cell(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

// Numbers as CmdStan writes non-finite ones (NaN, inf, -inf), finite ones in the shortest form
// that reads back to the same double.
std::string num(double x) {
  if (std::isnan(x)) return "NaN";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  return fmt::format("{}", x);
}

std::ofstream open_output(const fs::path& file) {
  refuse_special_output(file);
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  if (!out) throw IoError("export: cannot write " + file.string());
  return out;
}

void close_output(std::ofstream& out, const fs::path& file) {
  out.close();
  if (!out) throw IoError("export: writing " + file.string() + " failed");
}

// ---- csv ------------------------------------------------------------------------------------

// The lp__ and sampler columns of a csv table: one run's own, or the union of the runs a table
// to a stream holds, where a run's cell of a column its sampler does not have is empty.
struct CsvColumns {
  bool lp = false;
  std::vector<config::StatColumn> stats;
};

CsvColumns own_columns(const RunScan& run) { return {run.has_lp, run.columns.stats}; }

// The runs a stream's table takes its columns from: those exported and, without --run, every run
// of the file's study, so that a --task-range slice of a study exports the whole study's columns.
CsvColumns table_columns(const Scan& scan, const ExportOptions& options) {
  CsvColumns t;
  std::vector<std::vector<config::StatColumn>> runs;
  for (const auto& [id, run] : scan.runs) {
    t.lp = t.lp || run.has_lp;
    runs.push_back(run.columns.stats);
  }
  if (options.run_filter.empty())
    for (const auto& r : scan.header.config().runs()) {
      const config::SamplerColumns c = config::sampler_columns(r.sampler());
      t.lp = t.lp || c.lp == config::LpSource::kDrawPotential || !options.target_config.empty();
      runs.push_back(c.stats);
    }
  t.stats = config::merged_columns(runs);
  return t;
}

std::string csv_header(const RunScan& run, const CsvColumns& table) {
  std::string line = "run_id,chain_id,seed,iteration,warmup";
  if (run.weighted && !run.resampled) line += ",sample,log_weight";
  if (table.lp) line += ",lp__";
  for (const auto& c : table.stats) line += "," + c.name;
  for (const auto& n : run.names) line += "," + csv_cell(n);
  return line;
}

// A sampler column's cell: integers and flags without a decimal point.
std::string stat_cell(config::DrawStat stat, const v1::Draw& d) {
  const double v = config::stat_value(stat, d);
  if (config::stat_type(stat) == config::StatType::kReal) return num(v);
  return std::to_string(static_cast<long long>(v));
}

// The draw's cells of `columns`, each preceded by a comma; empty for a column `own` lacks.
std::string stat_cells(const std::vector<config::StatColumn>& columns,
                       const std::vector<config::StatColumn>& own, const v1::Draw& d) {
  std::string s;
  for (const auto& c : columns) {
    s += ",";
    if (std::find(own.begin(), own.end(), c) != own.end()) s += stat_cell(c.stat, d);
  }
  return s;
}

// Writes the csv rows of one draw; returns how many. A resampled run's sample is written as many
// times as it was drawn (its copies, walked with `cursor`), without sample and log_weight.
std::int64_t csv_rows(const v1::Draw& d, const RunScan& run, const CsvColumns& table,
                      const ChainScan& chain, std::size_t& cursor, std::ostream& out,
                      std::vector<double>& values, std::vector<double>& weights) {
  const int od = run.meta.original_dim;
  const int n = draw_sample_count(d, od);
  export_log_weights(d, run, weights);
  values.resize(run.names.size());
  const std::string stats = stat_cells(table.stats, run.columns.stats, d);
  std::string line;
  Vector point;
  std::int64_t rows = 0;
  for (int j = 0; j < n; ++j) {
    const int copies = run.resampled ? next_copies(chain, cursor) : 1;
    if (copies == 0) continue;
    sample_quantities(d, od, run.named_outputs, j, values);
    line = fmt::format("{},{},{},{},{}", csv_cell(d.run_id()), d.chain_id(), d.seed(),
                       d.iteration(), d.warmup() ? 1 : 0);
    if (run.weighted && !run.resampled)
      line += fmt::format(",{},{}", j + 1, num(weights[static_cast<std::size_t>(j)]));
    if (table.lp) line += run.has_lp ? "," + num(sample_lp(d, run, j, point)) : ",";
    line += stats;
    for (double v : values) line += "," + num(v);
    for (int r = 0; r < copies; ++r) out << line << '\n';
    rows += copies;
  }
  return rows;
}

void export_csv_files(const fs::path& path, const Scan& scan, const ExportOptions& options,
                      std::ostream* stream, ExportResult& result) {
  std::map<std::string, std::ofstream> files;
  std::map<std::string, std::ostream*> outs;
  std::map<std::string, CsvColumns> tables;
  if (stream) {
    // One table: every run must have the same weighting and quantities (checked before anything
    // is written); the sampler columns are all the runs' together.
    const CsvColumns table = table_columns(scan, options);
    const std::string first_header =
        scan.run_order.empty() ? "" : csv_header(scan.runs.at(scan.run_order.front()), table);
    for (const auto& id : scan.run_order) {
      tables[id] = table;
      const std::string h = csv_header(scan.runs.at(id), table);
      if (h != first_header)
        throw ConfigError(fmt::format(
            "export --format csv: runs '{}' and '{}' of {} have different columns ({} vs {}); "
            "one table would have ragged rows: use --output-dir DIR (one file per run) or --run "
            "NAME",
            scan.run_order.front(), id, path.string(), first_header, h));
      outs[id] = stream;
    }
    if (!first_header.empty()) *stream << first_header << '\n';
  } else {
    prepare_output_dir(options);
    std::set<std::string> stems;
    for (const auto& id : scan.run_order) {
      std::string stem = file_stem(id);
      while (!stems.insert(stem).second) stem += "_";
      const fs::path file = options.output_dir / (stem + ".csv");
      auto& f = files.emplace(id, open_output(file)).first->second;
      tables[id] = own_columns(scan.runs.at(id));
      f << csv_header(scan.runs.at(id), tables[id]) << '\n';
      outs[id] = &f;
      result.files.push_back(file);
    }
  }
  CheckedRecordReader reader(path);
  v1::Record record;
  std::vector<double> values, weights;
  std::map<std::pair<std::string, int>, std::size_t> cursors;  // resampled runs' next sample
  std::int64_t left = scan.n_records;
  while (left-- > 0 && reader.next(record)) {
    if (!record.has_draw() || !exported(record.draw(), options)) continue;
    const auto& d = record.draw();
    const RunScan& run = run_of(scan, d);
    result.rows += csv_rows(d, run, tables.at(d.run_id()), run.chains.at(d.chain_id()),
                            cursors[{d.run_id(), d.chain_id()}], *outs.at(d.run_id()), values,
                            weights);
  }
  std::size_t i = 0;
  for (const auto& id : scan.run_order) {
    auto it = files.find(id);
    if (it != files.end()) close_output(it->second, result.files[i++]);
  }
}

// ---- cmdstan ----------------------------------------------------------------------------------

// The local kernel of a sampler config (itself, or the kernel an extended sampler runs): its
// config message, or nullptr.
const google::protobuf::Message* kernel_config(const google::protobuf::Message& m, int depth = 0) {
  const auto name = m.GetDescriptor()->name();
  if (name == "NutsConfig" || name == "HmcConfig" || name == "MalaConfig" || name == "RwmConfig")
    return &m;
  if (depth > 3) return nullptr;
  std::vector<const google::protobuf::FieldDescriptor*> fields;
  m.GetReflection()->ListFields(m, &fields);
  for (const auto* f : fields) {
    if (f->cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE || f->is_repeated())
      continue;
    if (const auto* k = kernel_config(m.GetReflection()->GetMessage(m, f), depth + 1)) return k;
  }
  return nullptr;
}

struct KernelInfo {
  std::string engine;    // nuts, static (hmc), mala, rwm, or the sampler's name
  std::string metric;    // unit_e, diag_e, dense_e ("" for kernels without one)
  double step_size = 0;  // configured (initial) step size
  bool adapt = false;
  int max_depth = 10;
};

KernelInfo kernel_info(const v1::SamplerConfig& sampler) {
  KernelInfo k;
  k.engine = config::sampler_kind_name(sampler);
  const auto* m = kernel_config(sampler);
  if (!m) return k;
  if (const auto* n = dynamic_cast<const v1::NutsConfig*>(m)) {
    k.engine = "nuts";
    k.metric = n->metric() == v1::UNIT ? "unit_e" : n->metric() == v1::DENSE ? "dense_e" : "diag_e";
    k.step_size = n->step_size();
    k.adapt = n->adaptation().enabled();
    k.max_depth = n->has_max_tree_depth() ? n->max_tree_depth() : 10;
  } else if (const auto* h = dynamic_cast<const v1::HmcConfig*>(m)) {
    k.engine = "static";
    k.metric = h->metric() == v1::DIAGONAL ? "diag_e"
               : h->metric() == v1::DENSE  ? "dense_e"
                                           : "unit_e";
    k.step_size = h->step_size();
    k.adapt = h->adaptation().enabled();
  } else if (const auto* a = dynamic_cast<const v1::MalaConfig*>(m)) {
    k.engine = "mala";
    k.step_size = a->step_size();
    k.adapt = a->adaptation().enabled();
  } else if (const auto* r = dynamic_cast<const v1::RwmConfig*>(m)) {
    k.engine = "rwm";
    k.step_size = r->proposal_scale();
    k.adapt = r->adaptation().enabled();
  }
  return k;
}

std::string model_name(const RunScan& run) {
  const auto& target = run.meta.config.target();
  if (target.has_stan()) return fs::path(target.stan().model_file()).stem().string();
  return run.meta.target;
}

// CmdStan's comment header (key = value lines, indented as CmdStan nests its arguments), with the
// values pemc ran with, then pemc's own keys.
std::string cmdstan_comments(const fs::path& source, const RunScan& run, const ChainScan& c,
                             const KernelInfo& k, const ExportOptions& options) {
  const auto& config = run.meta.config;
  const int thin = std::max(1, config.output().thin());
  std::string s;
  s += fmt::format("# model = {}\n", model_name(run));
  s += "# method = sample (Default)\n#   sample\n";
  s += fmt::format("#     num_samples = {}\n", config.iterations());
  s += fmt::format("#     num_warmup = {}\n", config.warmup());
  s += fmt::format("#     save_warmup = {}\n", options.include_warmup && c.n_warmup > 0 ? 1 : 0);
  s += fmt::format("#     thin = {}\n", thin);
  s += fmt::format("#     adapt\n#       engaged = {}\n", k.adapt ? 1 : 0);
  if (k.engine == "nuts" || k.engine == "static") {
    s += "#     algorithm = hmc\n#       hmc\n";
    s += fmt::format("#         engine = {}\n", k.engine);
    if (k.engine == "nuts")
      s += fmt::format("#           nuts\n#             max_depth = {}\n", k.max_depth);
    s += fmt::format("#         metric = {}\n", k.metric);
    s += fmt::format("#         stepsize = {}\n", num(k.step_size));
  } else {
    s += fmt::format("#     algorithm = {}\n", k.engine);
  }
  s += fmt::format("# id = {}\n", c.chain_id + 1);
  s += fmt::format("# random\n#   seed = {}\n", c.seed);
  s += fmt::format("# pemc_version = {}\n", kVersion);
  s += fmt::format("# pemc_source = {}\n", source.string());
  s += fmt::format("# pemc_run = {}\n", c.run_id);
  s += fmt::format("# pemc_chain_id = {}\n", c.chain_id);
  s += fmt::format("# pemc_target = {}\n", run.meta.target);
  s += fmt::format("# pemc_sampler = {}\n", run.meta.sampler);
  s += fmt::format("# pemc_status = {}\n", c.status);
  if (resampling(options))
    s += fmt::format(
        "# pemc_resampled = {} (one sample per draw by its normalised weight, seed {})\n",
        run.weighted ? 1 : 0, options.seed);
  return s;
}

// The adaptation block CmdStan writes after the column names. pemc records the final step size;
// the adapted metric's values are not in the record file.
std::string cmdstan_adaptation(const ChainScan& c, const KernelInfo& k) {
  if (!k.adapt) return "";
  std::string s = "# Adaptation terminated\n";
  s += fmt::format("# Step size = {}\n", num(c.final_step_size));
  if (!k.metric.empty())
    s += fmt::format("# Metric: {} (the adapted values are not recorded in pemc record files)\n",
                     k.metric);
  return s;
}

// Weighted runs go to CmdStan CSV only resampled (it has no place for weights).
void check_cmdstan_exportable(const Scan& scan, const ExportOptions& options) {
  for (const auto& id : scan.run_order) {
    const RunScan& run = scan.runs.at(id);
    if (run.weighted && !resampling(options))
      throw ConfigError(fmt::format(
          "export --format cmdstan: run '{}' ({}) has weighted samples and CmdStan CSV has no "
          "place for weights; writing them as unweighted draws would misstate the posterior. "
          "Use --resample (with --seed) for one sample per draw drawn by its normalised weight, "
          "or --format csv, or --format netcdf --no-resample, which keep the weights",
          id, run.meta.sampler));
  }
}

// One chain's CmdStan CSV file as it is written.
struct CmdStanFile {
  std::ofstream file;
  fs::path path;
  std::vector<config::StatColumn> columns;  // the sampler columns CmdStan CSV holds
  bool adaptation_written = false;
  std::size_t sample = 0;  // next sample index into copies
  KernelInfo kernel;
};
using CmdStanFiles = std::map<std::pair<std::string, int>, CmdStanFile>;

// Opens one file per chain (<run>_<chain>.csv; stems made unique) and writes its comments and
// header, and its adaptation block when no warmup rows come before it.
CmdStanFiles open_cmdstan_files(const fs::path& path, const Scan& scan,
                                const ExportOptions& options, ExportResult& result) {
  CmdStanFiles outs;
  std::set<std::string> stems;
  for (const auto& id : scan.run_order) {
    const RunScan& run = scan.runs.at(id);
    std::string stem = file_stem(id);
    while (!stems.insert(stem).second) stem += "_";
    for (const auto& [chain_id, c] : run.chains) {
      CmdStanFile o;
      o.path = options.output_dir / fmt::format("{}_{}.csv", stem, chain_id);
      o.kernel = kernel_info(run.meta.config.sampler());
      o.file = open_output(o.path);
      o.columns = config::cmdstan_columns(run.columns.stats);
      std::string head = "lp__";
      for (const auto& col : o.columns) head += "," + col.name;
      for (const auto& n : run.names) head += "," + cmdstan_name(n);
      o.file << cmdstan_comments(path, run, c, o.kernel, options) << head << '\n';
      if (!options.include_warmup) {
        o.file << cmdstan_adaptation(c, o.kernel);
        o.adaptation_written = true;
      }
      result.files.push_back(o.path);
      outs.emplace(std::make_pair(id, chain_id), std::move(o));
    }
  }
  return outs;
}

// The rows of one draw: one sample, or for a resampled weighted run each sample as many times as
// it was drawn, with lp__ at it (export_lp.hpp).
void write_cmdstan_rows(const v1::Draw& d, const RunScan& run, const ChainScan& c, CmdStanFile& o,
                        ExportResult& result) {
  if (!d.warmup() && !o.adaptation_written) {
    o.file << cmdstan_adaptation(c, o.kernel);
    o.adaptation_written = true;
  }
  const int od = run.meta.original_dim;
  const int n = run.weighted ? draw_sample_count(d, od) : 1;
  std::vector<double> values(run.names.size());
  const std::string stats = stat_cells(o.columns, o.columns, d);
  Vector point;
  for (int j = 0; j < n; ++j) {
    const int copies = run.weighted ? next_copies(c, o.sample) : 1;
    if (copies == 0) continue;
    sample_quantities(d, od, run.named_outputs, j, values);
    std::string line = num(sample_lp(d, run, j, point)) + stats;
    for (double v : values) line += "," + num(v);
    for (int r = 0; r < copies; ++r) o.file << line << '\n';
    result.rows += copies;
  }
}

void export_cmdstan(const fs::path& path, Scan& scan, const ExportOptions& options,
                    ExportResult& result) {
  prepare_output_dir(options);
  CmdStanFiles outs = open_cmdstan_files(path, scan, options, result);
  CheckedRecordReader reader(path);
  v1::Record record;
  std::int64_t left = scan.n_records;
  while (left-- > 0 && reader.next(record)) {
    if (!record.has_draw() || !exported(record.draw(), options)) continue;
    const auto& d = record.draw();
    const RunScan& run = run_of(scan, d);
    write_cmdstan_rows(d, run, run.chains.at(d.chain_id()), outs.at({d.run_id(), d.chain_id()}),
                       result);
  }
  for (auto& [key, o] : outs) {
    const ChainScan& c = scan.runs.at(key.first).chains.at(key.second);
    // CmdStan's timing lines; pemc records the chain's total only (rstan reads no split then).
    if (c.wall_seconds >= 0)
      o.file << fmt::format(
          "# \n#  Elapsed Time: {} seconds (Total: warmup and sampling, which "
          "pemc does not time separately)\n",
          num(c.wall_seconds));
    close_output(o.file, o.path);
  }
}

// include_warmup asks for warmup draws: a file without any is an error, not a silent export of
// the post-warmup draws alone.
void check_warmup_saved(const fs::path& path, const Scan& scan, const ExportOptions& options) {
  if (!options.include_warmup) return;
  for (const auto& [id, run] : scan.runs)
    for (const auto& [chain_id, c] : run.chains)
      if (c.n_warmup > 0) return;
  const auto& config = scan.header.config();
  std::string why;
  if (!config.output().write_warmup())
    why = "it was written without them: set output { write_warmup: true } in the config and run "
          "again";
  else if (scan.problem || !scan.has_footer)
    why = "none were read before the damage or the end of the unfinished file";
  else
    why = "its runs recorded none (warmup: 0?)";
  throw ConfigError(fmt::format("export --include-warmup: {} holds no warmup draws{}: {}",
                                path.string(),
                                options.run_filter.empty() ? "" : " of run '" + options.run_filter + "'",
                                why));
}

}  // namespace

std::string ExportResult::incomplete_reason() const {
  if (problem)
    return fmt::format("damaged at byte {} (record {}): {}", problem->offset, problem->record_index,
                       problem->message);
  if (!has_footer) return "no footer: the run did not finish (or is still running)";
  return "";
}

const std::vector<std::string>& export_formats() {
  static const std::vector<std::string> formats{"csv", "cmdstan", "netcdf"};
  return formats;
}

ExportResult export_draws(const fs::path& path, std::ostream& out, const ExportOptions& options) {
  const auto& formats = export_formats();
  if (std::find(formats.begin(), formats.end(), options.format) == formats.end()) {
    std::string list;
    for (const auto& f : formats) list += (list.empty() ? "" : ", ") + f;
    throw ConfigError("export --format '" + options.format +
                      "': unknown format; valid formats: " + list);
  }
  if (!options.log_lik.empty() && options.format != "netcdf")
    throw ConfigError("export --log-lik: only --format netcdf has a log_likelihood group (got "
                      "--format " + options.format + ")");
  if (options.format != "netcdf") {
    const char* option = !options.data_file.empty() ? "--data"
                         : !options.observed.empty() ? "--observed"
                         : !options.observed_data    ? "--no-observed-data"
                                                     : nullptr;
    if (option)
      throw ConfigError(std::string("export ") + option +
                        ": only --format netcdf has an observed_data group (got --format " +
                        options.format + ")");
  }
  ExportResult result;
  Scan scan = scan_file(path, options, resampling(options));
  result.n_records = scan.n_records;
  result.has_footer = scan.has_footer;
  result.problem = scan.problem;
  check_warmup_saved(path, scan, options);
  check_resample_options(scan, options);
  if (options.format == "cmdstan") check_cmdstan_exportable(scan, options);
  resolve_lp(scan, options, options.format == "cmdstan", result.notes);
  if (resampling(options)) resample_weighted_runs(scan, options);
  if (const auto note = resample_note(scan, options); !note.empty()) result.notes.push_back(note);
  if (options.format == "csv")
    export_csv_files(path, scan, options, options.output_dir.empty() ? &out : nullptr, result);
  else if (options.format == "cmdstan")
    export_cmdstan(path, scan, options, result);
  else
    export_netcdf(path, scan, options, result);
  return result;
}

std::int64_t export_csv(const fs::path& path, std::ostream& out, const ExportOptions& options) {
  ExportOptions o = options;
  o.format = "csv";
  return export_draws(path, out, o).rows;
}

}  // namespace pemc::report
