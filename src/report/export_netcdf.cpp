#include "report/export_netcdf.hpp"

#include <fmt/format.h>
#include <netcdf.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <set>

#include "core/error.hpp"
#include "core/version.hpp"
#include "report/checked_reader.hpp"
#include "report/export_lp.hpp"
#include "report/quantities.hpp"

namespace pemc::report {
namespace {

using namespace export_detail;
namespace fs = std::filesystem;

void check(int status, const fs::path& file, const std::string& what) {
  if (status != NC_NOERR)
    throw IoError(fmt::format("export --format netcdf: {}: {}: {}", file.string(), what,
                              nc_strerror(status)));
}

// A posterior variable: a Stan base name and its shape; each quantity of the run sits at one flat
// (row-major) position of one variable.
struct Variable {
  std::string name;
  std::vector<std::size_t> shape;
  int id = -1;
};

struct Layout {
  std::vector<Variable> variables;
  std::vector<std::pair<std::size_t, std::size_t>> place;  // per quantity: (variable, flat index)
};

// Splits "Sigma[2,1]" into ("Sigma", {2, 1}); a name without a well-formed index list is a scalar
// of that name.
std::pair<std::string, std::vector<std::size_t>> split_name(const std::string& name) {
  const auto open = name.find('[');
  if (open == std::string::npos || open == 0 || name.back() != ']') return {name, {}};
  std::vector<std::size_t> index;
  std::size_t pos = open + 1;
  while (pos < name.size() - 1) {
    std::size_t used = 0;
    try {
      const long v = std::stol(name.substr(pos), &used);
      if (v < 1) return {name, {}};
      index.push_back(static_cast<std::size_t>(v));
    } catch (const std::exception&) {
      return {name, {}};
    }
    pos += used;
    if (name[pos] == ',')
      ++pos;
    else if (pos != name.size() - 1)
      return {name, {}};
  }
  return {name.substr(0, open), index};
}

// netCDF names: Stan identifiers are valid; anything else becomes '_'.
std::string nc_name(const std::string& s) {
  std::string out = s.empty() ? std::string("_") : s;
  for (char& c : out)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) c = '_';
  if (std::isdigit(static_cast<unsigned char>(out.front()))) out = "_" + out;
  return out;
}

Layout layout_of(const std::vector<std::string>& names) {
  Layout l;
  std::map<std::string, std::size_t> by_name;
  std::vector<std::pair<std::size_t, std::vector<std::size_t>>> found;  // per quantity
  for (const auto& n : names) {
    auto [base, index] = split_name(n);
    base = nc_name(base);
    auto it = by_name.find(base);
    // A name used with two ranks (not from Stan) keeps its full name as a scalar of its own.
    if (it != by_name.end() && l.variables[it->second].shape.size() != index.size()) {
      base = nc_name(n);
      index.clear();
      it = by_name.find(base);
    }
    if (it == by_name.end()) {
      it = by_name.emplace(base, l.variables.size()).first;
      l.variables.push_back({base, std::vector<std::size_t>(index.size(), 0)});
    }
    auto& v = l.variables[it->second];
    for (std::size_t k = 0; k < index.size(); ++k) v.shape[k] = std::max(v.shape[k], index[k]);
    found.emplace_back(it->second, std::move(index));
  }
  for (const auto& [var, index] : found) {
    std::size_t flat = 0;
    for (std::size_t k = 0; k < index.size(); ++k)
      flat = flat * l.variables[var].shape[k] + (index[k] - 1);
    l.place.emplace_back(var, flat);
  }
  return l;
}

std::size_t product(const std::vector<std::size_t>& v) {
  std::size_t p = 1;
  for (auto x : v) p *= x;
  return p;
}

struct StatVar {
  StatColumn column;
  nc_type type;
  int id = -1;
};

nc_type nc_type_of(DrawStat stat) {
  switch (stat_type(stat)) {
    case StatType::kInt: return NC_INT;
    case StatType::kBool: return NC_BYTE;
    default: return NC_DOUBLE;
  }
}

void describe(int grp, int var, const fs::path& file, const char* text) {
  check(nc_put_att_text(grp, var, "description", std::strlen(text), text), file, "attribute");
}

// One pair of groups (posterior + sample_stats, or their warmup versions) in an open file.
struct Groups {
  int posterior = -1, stats = -1;
  int chain_dim = -1, draw_dim = -1, sample_dim = -1;
  std::vector<Variable> variables;
  std::vector<StatVar> stats_vars;
  int lp = -1;  // -1: the run has no lp__ (export_lp.hpp)
  int log_weight = -1;
};

// sample_stats' lp (per sample for weighted runs, whose samples each have their own) and the
// sampler's columns (sampler_columns.hpp) by their ArviZ names.
void define_stats(int grp, const fs::path& file, const RunScan& run, int chain_dim, int draw_dim,
                  int sample_dim, Groups& g) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (run.has_lp) {
    const int dims[] = {chain_dim, draw_dim, sample_dim};
    check(nc_def_var(grp, "lp", NC_DOUBLE, run.weighted ? 3 : 2, dims, &g.lp), file, "variable lp");
    check(nc_def_var_fill(grp, g.lp, 0, &nan), file, "fill");
    describe(grp, g.lp, file,
             "the model's log density at the sample (-potential of the run's target, Jacobian "
             "included), as Stan's lp__");
  }
  const int dims[] = {chain_dim, draw_dim};
  for (const auto& c : run.columns.stats) {
    StatVar v{c, nc_type_of(c.stat)};
    check(nc_def_var(grp, c.arviz.c_str(), v.type, 2, dims, &v.id), file, "variable " + c.arviz);
    if (v.type == NC_DOUBLE) check(nc_def_var_fill(grp, v.id, 0, &nan), file, "fill");
    // xarray decodes int8 variables with dtype "bool" as booleans (ArviZ's diverging).
    if (v.type == NC_BYTE) check(nc_put_att_text(grp, v.id, "dtype", 4, "bool"), file, "dtype");
    if (c.stat == DrawStat::kExtendedLp)
      describe(grp, v.id, file, "log density of the sampler's own (extended) state; not the model's");
    g.stats_vars.push_back(v);
  }
}

Groups define_groups(int ncid, const fs::path& file, const std::string& prefix, const RunScan& run,
                     const Layout& layout, std::size_t n_chains, std::size_t n_draws,
                     std::size_t n_samples, const std::vector<int>& chain_ids) {
  Groups g;
  g.variables = layout.variables;
  check(nc_def_grp(ncid, (prefix + "posterior").c_str(), &g.posterior), file, "group posterior");
  check(nc_def_grp(ncid, (prefix + "sample_stats").c_str(), &g.stats), file, "group sample_stats");
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (int grp : {g.posterior, g.stats}) {
    int chain_dim, draw_dim, chain_var, draw_var;
    check(nc_def_dim(grp, "chain", n_chains, &chain_dim), file, "dim chain");
    check(nc_def_dim(grp, "draw", n_draws, &draw_dim), file, "dim draw");
    check(nc_def_var(grp, "chain", NC_INT, 1, &chain_dim, &chain_var), file, "var chain");
    check(nc_def_var(grp, "draw", NC_INT, 1, &draw_dim, &draw_var), file, "var draw");
    const std::string created = "pemc-report " + std::string(kVersion);
    check(nc_put_att_text(grp, NC_GLOBAL, "inference_library", 4, "pemc"), file, "attribute");
    check(nc_put_att_text(grp, NC_GLOBAL, "inference_library_version", std::string(kVersion).size(),
                          std::string(kVersion).c_str()),
          file, "attribute");
    int sample_dim = -1;
    if (run.weighted) check(nc_def_dim(grp, "sample", n_samples, &sample_dim), file, "dim sample");
    if (grp == g.posterior) {
      g.chain_dim = chain_dim;
      g.draw_dim = draw_dim;
      g.sample_dim = sample_dim;
      for (auto& v : g.variables) {
        std::vector<int> dims{chain_dim, draw_dim};
        if (run.weighted) dims.push_back(sample_dim);
        for (std::size_t k = 0; k < v.shape.size(); ++k) {
          int d;
          check(nc_def_dim(grp, fmt::format("{}_dim_{}", v.name, k).c_str(), v.shape[k], &d), file,
                "dim of " + v.name);
          dims.push_back(d);
        }
        check(nc_def_var(grp, v.name.c_str(), NC_DOUBLE, static_cast<int>(dims.size()), dims.data(),
                         &v.id),
              file, "variable " + v.name);
        check(nc_def_var_fill(grp, v.id, 0, &nan), file, "fill of " + v.name);
      }
    } else {
      define_stats(grp, file, run, chain_dim, draw_dim, sample_dim, g);
      if (run.weighted) {
        const int wdims[] = {chain_dim, draw_dim, sample_dim};
        check(nc_def_var(grp, "log_weight", NC_DOUBLE, 3, wdims, &g.log_weight), file,
              "variable log_weight");
        check(nc_def_var_fill(grp, g.log_weight, 0, &nan), file, "fill");
        describe(grp, g.log_weight, file,
                 "log of each sample's weight for a self-normalised average over all of the "
                 "run's samples (pseudo-extended: normalised within the draw)");
      }
    }
    std::vector<int> draws(n_draws);
    for (std::size_t i = 0; i < n_draws; ++i) draws[i] = static_cast<int>(i);
    check(nc_put_var_int(grp, chain_var, chain_ids.data()), file, "chain ids");
    check(nc_put_var_int(grp, draw_var, draws.data()), file, "draw ids");
  }
  return g;
}

// The draw's lp (every sample's) and sampler columns at (chain, draw) = start.
void write_stats(const v1::Draw& d, const RunScan& run, const Groups& g, const std::size_t* start,
                 const fs::path& file) {
  if (g.lp >= 0) {
    const int n = draw_sample_count(d, run.meta.original_dim);
    std::vector<double> lp(static_cast<std::size_t>(n));
    Vector point;
    for (int j = 0; j < n; ++j) lp[static_cast<std::size_t>(j)] = sample_lp(d, run, j, point);
    const std::size_t count[] = {1, 1, lp.size()};
    check(nc_put_vara_double(g.stats, g.lp, start, count, lp.data()), file, "write lp");
  }
  const std::size_t one[] = {1, 1};
  for (const auto& v : g.stats_vars) {
    const double x = stat_value(v.column.stat, d);
    int status;
    if (v.type == NC_INT) {
      const int i = static_cast<int>(x);
      status = nc_put_vara_int(g.stats, v.id, start, one, &i);
    } else if (v.type == NC_BYTE) {
      const signed char b = x != 0 ? 1 : 0;
      status = nc_put_vara_schar(g.stats, v.id, start, one, &b);
    } else {
      status = nc_put_vara_double(g.stats, v.id, start, one, &x);
    }
    check(status, file, "write " + v.column.arviz);
  }
}

}  // namespace

void export_netcdf(const fs::path& path, const Scan& scan, const ExportOptions& options,
                   ExportResult& result) {
  prepare_output_dir(options);
  struct Open {
    int ncid = -1;
    fs::path file;
    Layout layout;
    Groups post, warm;
    std::map<int, std::size_t> chain_index;
    std::map<int, std::size_t> next_post, next_warm;  // next draw index per chain
  };
  std::map<std::string, Open> files;
  std::set<std::string> stems;
  for (const auto& id : scan.run_order) {
    const RunScan& run = scan.runs.at(id);
    std::string stem = file_stem(id);
    while (!stems.insert(stem).second) stem += "_";
    Open o;
    o.file = options.output_dir / (stem + ".nc");
    refuse_special_output(o.file);
    check(nc_create(o.file.c_str(), NC_NETCDF4 | NC_CLOBBER, &o.ncid), o.file, "create");
    o.layout = layout_of(run.names);
    std::size_t n_draws = 0, n_warm = 0, n_samples = 1;
    std::vector<int> chain_ids;
    for (const auto& [chain_id, c] : run.chains) {
      o.chain_index[chain_id] = chain_ids.size();
      chain_ids.push_back(chain_id);
      n_draws = std::max(n_draws, static_cast<std::size_t>(c.n_draws));
      n_warm = std::max(n_warm, static_cast<std::size_t>(c.n_warmup));
      n_samples = std::max(n_samples, static_cast<std::size_t>(c.max_samples));
    }
    const std::string attrs = fmt::format("pemc run '{}' ({} on {}) from {}", id, run.meta.sampler,
                                          run.meta.target, path.string());
    check(nc_put_att_text(o.ncid, NC_GLOBAL, "source", attrs.size(), attrs.c_str()), o.file,
          "attribute");
    o.post = define_groups(o.ncid, o.file, "", run, o.layout, chain_ids.size(), n_draws, n_samples,
                           chain_ids);
    if (options.include_warmup && n_warm > 0)
      o.warm = define_groups(o.ncid, o.file, "warmup_", run, o.layout, chain_ids.size(), n_warm,
                             n_samples, chain_ids);
    result.files.push_back(o.file);
    files.emplace(id, std::move(o));
  }
  CheckedRecordReader reader(path);
  v1::Record record;
  std::vector<double> values, weights;
  std::vector<std::vector<double>> buffers;
  std::int64_t left = scan.n_records;
  while (left-- > 0 && reader.next(record)) {
    if (!record.has_draw() || !exported(record.draw(), options)) continue;
    const auto& d = record.draw();
    const RunScan& run = run_of(scan, d);
    Open& o = files.at(d.run_id());
    const Groups& g = d.warmup() ? o.warm : o.post;
    const std::size_t ci = o.chain_index.at(d.chain_id());
    const std::size_t di = (d.warmup() ? o.next_warm : o.next_post)[d.chain_id()]++;
    const int od = run.meta.original_dim;
    const auto n = static_cast<std::size_t>(draw_sample_count(d, od));
    // Posterior: gather each variable's values for all samples, then one write per variable.
    buffers.resize(g.variables.size());
    for (std::size_t v = 0; v < g.variables.size(); ++v)
      buffers[v].assign(n * product(g.variables[v].shape),
                        std::numeric_limits<double>::quiet_NaN());
    values.resize(run.names.size());
    for (std::size_t j = 0; j < n; ++j) {
      sample_quantities(d, od, run.named_outputs, static_cast<int>(j), values);
      for (std::size_t q = 0; q < values.size(); ++q) {
        const auto [v, flat] = o.layout.place[q];
        buffers[v][j * product(g.variables[v].shape) + flat] = values[q];
      }
    }
    for (std::size_t v = 0; v < g.variables.size(); ++v) {
      std::vector<std::size_t> start{ci, di}, count{1, 1};
      if (run.weighted) {
        start.push_back(0);
        count.push_back(n);
      }
      for (auto s : g.variables[v].shape) {
        start.push_back(0);
        count.push_back(s);
      }
      check(nc_put_vara_double(g.posterior, g.variables[v].id, start.data(), count.data(),
                               buffers[v].data()),
            o.file, "write " + g.variables[v].name);
    }
    const std::size_t start[] = {ci, di, 0}, one[] = {1, 1, n};
    write_stats(d, run, g, start, o.file);
    if (run.weighted) {
      export_log_weights(d, run, weights);
      check(nc_put_vara_double(g.stats, g.log_weight, start, one, weights.data()), o.file,
            "write log_weight");
    }
    result.rows += static_cast<std::int64_t>(n);
  }
  for (auto& [id, o] : files) check(nc_close(o.ncid), o.file, "close");
}

}  // namespace pemc::report
