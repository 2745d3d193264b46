#include "report/plot.hpp"

#include "report/draw_weights.hpp"
#include "report/estimate_series.hpp"
#include "report/error_curves.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <queue>
#include <random>
#include <set>
#include <sstream>

#include "config/factories.hpp"
#include "core/error.hpp"
#include "core/numerics.hpp"
#include "records/record_reader.hpp"
#include "report/checked_reader.hpp"
#include "report/quantities.hpp"
#include "report/run_targets.hpp"

extern char** environ;

namespace pemc::report {
namespace {

namespace fs = std::filesystem;

const char* const kColors[] = {"#1F77B4", "#D62728", "#2CA02C", "#FF7F0E", "#9467BD",
                               "#8C564B", "#E377C2", "#17BECF", "#7F7F7F", "#BCBD22"};
constexpr int kNColors = 10;

std::string color(std::size_t i) { return kColors[i % kNColors]; }

// A double-quoted gnuplot string (backslash escapes are interpreted inside double quotes).
std::string gp_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

// A single-quoted gnuplot string: no escapes, '' stands for '. Used for file names.
std::string gp_path(const fs::path& p) {
  std::string out = "'";
  for (char c : p.string()) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

std::string terminal_line(const fs::path& output, int width, int height) {
  std::string ext = output.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  if (ext == ".png")
    return fmt::format(
        "set terminal pngcairo size {},{} noenhanced font 'DejaVu Sans,10' background rgb 'white'",
        width, height);
  if (ext == ".svg")
    return fmt::format(
        "set terminal svg size {},{} dynamic noenhanced font 'DejaVu Sans,10' background rgb "
        "'white'",
        width, height);
  throw ConfigError("plot --output " + output.string() +
                    ": unknown image type (use a .png or .svg file name)");
}

// A temporary directory for the script and data, removed unless kept.
class WorkDir {
 public:
  WorkDir() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/pemc-plot.XXXXXX";
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    if (!::mkdtemp(buf.data()))
      throw IoError("plot: cannot create a temporary directory from " + pattern + ": " +
                    std::strerror(errno));
    path_ = buf.data();
  }
  ~WorkDir() {
    if (!keep_) {
      std::error_code ec;
      fs::remove_all(path_, ec);
    }
  }
  WorkDir(const WorkDir&) = delete;
  WorkDir& operator=(const WorkDir&) = delete;
  const fs::path& path() const { return path_; }
  void keep() { keep_ = true; }

 private:
  fs::path path_;
  bool keep_ = false;
};

std::ofstream open_data(const fs::path& path) {
  std::ofstream out(path);
  if (!out) throw IoError("plot: cannot write " + path.string() + ": " + std::strerror(errno));
  out.precision(10);
  return out;
}

// Weighted reservoir sampling without replacement (Efraimidis & Spirakis 2006): keep the k items
// with the largest u^(1/w), i.e. the smallest log(-log u) - log w (stable for any log weight).
class Reservoir {
 public:
  explicit Reservoir(std::size_t k) : k_(k) {}
  void offer(double log_w, double u, const std::vector<double>& point) {
    ++offered_;
    if (!(log_w > -kInf) || std::isnan(log_w) || k_ == 0) return;
    const double key = std::log(-std::log(u)) - log_w;
    if (heap_.size() < k_) {
      heap_.push({key, point});
    } else if (key < heap_.top().key) {
      heap_.pop();
      heap_.push({key, point});
    }
  }
  std::vector<std::vector<double>> points() const {
    auto copy = heap_;
    std::vector<std::vector<double>> out;
    while (!copy.empty()) {
      out.push_back(copy.top().point);
      copy.pop();
    }
    return out;
  }
  std::int64_t offered() const { return offered_; }

 private:
  struct Item {
    double key;
    std::vector<double> point;
    bool operator<(const Item& o) const { return key < o.key; }
  };
  std::size_t k_;
  std::int64_t offered_ = 0;
  std::priority_queue<Item> heap_;
};

// scatter: 5000 points per run (readable clouds); hist: 20000 (smooth histograms).
int max_points(const PlotOptions& o) {
  if (o.max_points > 0) return o.max_points;
  return o.kind == PlotKind::kHist ? 20000 : 5000;
}

// The quantities a plot shows, resolved against one run's quantity list (its named outputs, or
// x[1] .. x[d]: report/quantities.hpp): positions in that list and their names.
struct Selection {
  std::vector<int> index;
  std::vector<std::string> names;
};

struct RunPoints {
  std::string run_id;
  RunMeta meta;
  Selection selection;
  bool named_outputs = false;  // the quantities are the target's named outputs (constrained)
  Reservoir reservoir;
  bool weighted = false;
  std::vector<std::vector<double>> points;  // filled at the end
};

std::string listed(const std::vector<std::string>& names) {
  std::string out;
  const std::size_t shown = std::min<std::size_t>(names.size(), 8);
  for (std::size_t i = 0; i < shown; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > shown) out += fmt::format(", ... ({} in all)", names.size());
  return out;
}

// --quantities by name, else --dims by 0-based position, else the kind's default positions.
Selection select_quantities(const PlotOptions& options, const std::vector<int>& default_dims,
                            const std::vector<std::string>& names, const std::string& run_id) {
  Selection s;
  if (!options.quantities.empty()) {
    for (const auto& want : options.quantities) {
      const auto it = std::find(names.begin(), names.end(), want);
      if (it == names.end())
        throw ConfigError(fmt::format("plot --quantities: run '{}' has no quantity '{}' (its "
                                      "quantities: {})",
                                      run_id, want, listed(names)));
      s.index.push_back(static_cast<int>(it - names.begin()));
      s.names.push_back(want);
    }
    return s;
  }
  const std::vector<int>& dims = options.dims.empty() ? default_dims : options.dims;
  for (int d : dims) {
    if (d < 0 || d >= static_cast<int>(names.size()))
      throw ConfigError(fmt::format("plot --dims: coordinate {} is outside run '{}', which has {} "
                                    "quantities (0-based: 0 is {}); or name them with "
                                    "--quantities",
                                    d, run_id, names.size(),
                                    names.empty() ? std::string("x[1]") : names.front()));
    s.index.push_back(d);
    s.names.push_back(names[static_cast<std::size_t>(d)]);
  }
  return s;
}

// How many quantities the kind shows: --quantities' or --dims' count, else the default's.
std::size_t selection_size(const PlotOptions& options, const std::vector<int>& default_dims) {
  if (!options.quantities.empty()) return options.quantities.size();
  return options.dims.empty() ? default_dims.size() : options.dims.size();
}

// The axis label of selected quantity p: its name, or the runs' names joined when they differ.
template <class Runs>
std::string axis_label(const Runs& runs, std::size_t p) {
  std::vector<std::string> seen;
  for (const auto& r : runs) {
    const std::string& name = r.selection.names[p];
    if (std::find(seen.begin(), seen.end(), name) == seen.end()) seen.push_back(name);
  }
  std::string out;
  for (std::size_t i = 0; i < seen.size(); ++i) out += (i ? " / " : "") + seen[i];
  return out;
}

// One streaming pass: per run a resampled set of points (the selected quantities of draws).
std::vector<RunPoints> sample_points(const std::vector<fs::path>& files,
                                     const std::vector<int>& default_dims,
                                     const PlotOptions& options, std::vector<std::string>& notes) {
  std::mt19937_64 gen(options.seed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  auto u01 = [&] {
    double u;
    do u = uniform(gen);
    while (u <= 0.0);
    return u;
  };
  std::vector<RunPoints> runs;
  std::map<std::string, std::size_t> index;
  std::vector<double> point(selection_size(options, default_dims));
  std::vector<double> values;
  for (const auto& path : files) {
    CheckedRecordReader reader(path);
    v1::Record record;
    v1::Header header;
    while (reader.next(record)) {
      if (record.has_header()) header = record.header();
      if (!record.has_draw()) continue;
      const auto& d = record.draw();
      if (d.warmup()) continue;
      if (!options.run_filter.empty() && d.run_id() != options.run_filter) continue;
      auto it = index.find(d.run_id());
      if (it == index.end()) {
        RunMeta meta = run_meta(header, d.run_id());
        if (meta.original_dim <= 0) meta.original_dim = d.state_size();
        Selection selection = select_quantities(
            options, default_dims, quantity_names(meta.output_names, meta.original_dim), d.run_id());
        const bool named = !meta.output_names.empty();
        it = index.emplace(d.run_id(), runs.size()).first;
        runs.push_back({d.run_id(), std::move(meta), std::move(selection), named,
                        Reservoir(static_cast<std::size_t>(max_points(options))), false, {}});
      }
      RunPoints& run = runs[it->second];
      const int od = run.meta.original_dim;
      const int n_extra = d.extra_states_size() > 0 && d.extra_states_size() % od == 0
                              ? d.extra_states_size() / od
                              : 0;
      int j = 0;  // the sample of the draw that is offered
      double log_w = 0.0;
      if (n_extra > 0) {
        const bool within =
            d.log_weights_size() == n_extra && weights_within_draw(run.meta.sampler, n_extra);
        if (within) {
          // One pseudo-sample, chosen with its within-draw normalised weight.
          const double lse = log_sum_exp(
              std::span<const double>(d.log_weights().data(), static_cast<std::size_t>(n_extra)));
          if (!std::isfinite(lse)) continue;
          const double u = u01();
          double cumulative = 0.0;
          for (j = 0; j < n_extra - 1; ++j) {
            cumulative += std::exp(d.log_weights(j) - lse);
            if (u <= cumulative) break;
          }
          run.weighted = true;
        } else if (n_extra == 1 && d.log_weights_size() == 1) {
          log_w = d.log_weights(0);
          run.weighted = true;
        } else {
          j = static_cast<int>(u01() * n_extra) % n_extra;
        }
      } else if (d.log_weights_size() == 1) {
        log_w = d.log_weights(0);
        run.weighted = true;
      }
      const std::size_t k = run.named_outputs ? run.meta.output_names.size()
                                              : static_cast<std::size_t>(od);
      values.resize(k);
      if (!sample_quantities(d, od, run.named_outputs, j, values))
        throw DataError(fmt::format("{}: record {}: draw of chain {} holds {} coordinates and {} "
                                    "outputs, expected {} {}",
                                    path.string(), reader.records_read() - 1, d.chain_id(),
                                    d.state_size(), d.outputs_size(), k,
                                    run.named_outputs ? "outputs per sample" : "coordinates"));
      for (std::size_t i = 0; i < point.size(); ++i)
        point[i] = values[static_cast<std::size_t>(run.selection.index[i])];
      run.reservoir.offer(log_w, u01(), point);
    }
    if (const auto& p = reader.problem())
      notes.push_back(fmt::format("{}: damaged at byte {} ({}); plotted the records before it",
                                  path.string(), p->offset, p->message));
  }
  for (auto& r : runs) r.points = r.reservoir.points();
  return runs;
}

struct Range {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  void add(double x) {
    if (!std::isfinite(x)) return;
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  bool valid() const { return lo <= hi; }
  Range padded(double fraction) const {
    double w = hi - lo;
    if (w <= 0) w = std::max(1.0, std::fabs(lo));
    return {lo - fraction * w, hi + fraction * w};
  }
};

// Widens `r` to the truth's mean +- 3 sd of coordinate i, when the target knows them, so that the
// contours show every mode even when no run found it.
void widen_by_truth(const targets::Truth* truth, int i, Range& r) {
  if (!truth || !truth->mean || !truth->second_moment) return;
  if (i >= truth->mean->size()) return;
  const double m = (*truth->mean)[i];
  const double sd = std::sqrt(std::max(0.0, (*truth->second_moment)[i] - m * m));
  r.add(m - 3 * sd);
  r.add(m + 3 * sd);
}

struct Layout {
  int rows = 1, cols = 1;
};
Layout layout_for(int panels) {
  Layout l;
  l.cols = std::min(panels, 3);
  l.rows = (panels + l.cols - 1) / l.cols;
  return l;
}

std::string default_title(const PlotOptions& o, const std::vector<fs::path>& files) {
  std::string names;
  for (std::size_t i = 0; i < files.size() && i < 3; ++i)
    names += (i ? ", " : "") + files[i].filename().string();
  if (files.size() > 3) names += fmt::format(" (+{} more)", files.size() - 3);
  return names;
}

// ---- scatter -------------------------------------------------------------------------------

std::string scatter_script(const std::vector<fs::path>& files, const PlotOptions& options,
                           const fs::path& work, PlotResult& result, Layout& layout) {
  const std::vector<int> default_dims{0, 1};
  if (selection_size(options, default_dims) != 2)
    throw ConfigError("plot --kind scatter needs exactly two quantities (--quantities a,b or "
                      "--dims i,j)");
  auto runs = sample_points(files, default_dims, options, result.notes);
  if (runs.empty()) throw DataError("plot: no post-warmup draws to plot" +
                                    (options.run_filter.empty() ? std::string() : " for run '" + options.run_filter + "'"));
  Range xr, yr;
  RunTargets targets(options.target_config);
  for (const auto& r : runs) {
    for (const auto& p : r.points) {
      xr.add(p[0]);
      yr.add(p[1]);
    }
    // A target's truth is about its own coordinates, not about named (constrained) outputs.
    if (r.named_outputs) continue;
    std::optional<targets::Truth> truth;
    try {
      truth = targets.truth(r.meta, r.run_id);
    } catch (const Error&) {
    }
    widen_by_truth(truth ? &*truth : nullptr, r.selection.index[0], xr);
    widen_by_truth(truth ? &*truth : nullptr, r.selection.index[1], yr);
  }
  if (!xr.valid() || !yr.valid()) throw DataError("plot: every draw has zero weight or is not finite");
  xr = xr.padded(0.05);
  yr = yr.padded(0.05);

  std::string pre, body;
  // Contours, one grid per distinct 2-D target (set table turns the grid into contour lines).
  std::map<std::string, fs::path> contour_files;
  if (options.contours) {
    for (const auto& r : runs) {
      const std::string key = r.meta.config.target().SerializeAsString();
      // Contours of the density over the target's own 2-D space; named outputs live elsewhere.
      if (contour_files.count(key) || r.meta.original_dim != 2 || r.named_outputs) continue;
      targets::TargetPtr target;
      try {
        target = targets.target(r.meta, r.run_id, "drawing the density contours");
      } catch (const std::exception& e) {
        result.notes.push_back("run '" + r.run_id + "': no contours: " + e.what());
        continue;
      }
      const int n = 200;
      std::vector<double> u(static_cast<std::size_t>(n * n));
      Vector v(2);
      double u_min = std::numeric_limits<double>::infinity();
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
          const double a = xr.lo + (xr.hi - xr.lo) * i / (n - 1);
          const double b = yr.lo + (yr.hi - yr.lo) * j / (n - 1);
          v[r.selection.index[0]] = a;
          v[r.selection.index[1]] = b;
          const double value = target->potential(v);
          u[static_cast<std::size_t>(i * n + j)] = value;
          if (std::isfinite(value)) u_min = std::min(u_min, value);
        }
      if (!std::isfinite(u_min)) continue;
      const fs::path grid = work / fmt::format("grid_{}.dat", contour_files.size());
      const fs::path lines = work / fmt::format("contours_{}.dat", contour_files.size());
      auto out = open_data(grid);
      for (int i = 0; i < n; ++i) {
        for (int j = 0; j < n; ++j) {
          const double value = u[static_cast<std::size_t>(i * n + j)];
          // Log density relative to its maximum, floored so that contouring stays well defined.
          const double z = std::isfinite(value) ? std::max(-(value - u_min), -100.0) : -100.0;
          out << xr.lo + (xr.hi - xr.lo) * i / (n - 1) << ' '
              << yr.lo + (yr.hi - yr.lo) * j / (n - 1) << ' ' << z << '\n';
        }
        out << '\n';
      }
      pre += fmt::format(
          "set contour base\nunset surface\nset view map\n"
          "set cntrparam linear\nset cntrparam levels discrete -0.5, -2, -4.5, -8, -12.5, -18\n"
          "set table {}\nsplot {} using 1:2:3 with lines notitle\nunset table\n"
          "unset contour\nset surface\n",
          gp_path(lines), gp_path(grid));
      contour_files[key] = lines;
    }
  }

  layout = layout_for(static_cast<int>(runs.size()));
  body += fmt::format("set xrange [{}:{}]\nset yrange [{}:{}]\n", xr.lo, xr.hi, yr.lo, yr.hi);
  body += fmt::format("set xlabel {}\nset ylabel {}\n", gp_string(axis_label(runs, 0)),
                      gp_string(axis_label(runs, 1)));
  // No key: the panel titles say what the points are, the figure title what the lines are.
  body += "set key off\nset grid lc rgb '#DDDDDD'\n";
  for (std::size_t k = 0; k < runs.size(); ++k) {
    const auto& r = runs[k];
    const fs::path data = work / fmt::format("points_{}.dat", k);
    auto out = open_data(data);
    for (const auto& p : r.points) out << p[0] << ' ' << p[1] << '\n';
    out.close();
    body += fmt::format("set title {}\n",
                        gp_string(fmt::format("{} ({}, {} of {} draws{})", r.run_id, r.meta.sampler,
                                              r.points.size(), r.reservoir.offered(),
                                              r.weighted ? ", resampled by weight" : "")));
    std::string plot = "plot ";
    const auto cf = contour_files.find(r.meta.config.target().SerializeAsString());
    if (cf != contour_files.end())
      plot += fmt::format("{} using 1:2 with lines lw 1 lc rgb '#666666' title 'target density', ",
                          gp_path(cf->second));
    // Alpha in #AARRGGBB (00 = opaque) lets dense regions show through.
    plot += fmt::format("{} using 1:2 with points pt 7 ps 0.35 lc rgb '#90{}' title 'draws'\n",
                        gp_path(data), color(0).substr(1));
    if (r.points.empty()) {
      plot = "set label 1 'no draws with positive weight' at graph 0.5,0.5 center\nplot NaN notitle\n"
             "unset label 1\n";
    }
    body += plot;
  }
  return pre + "\x1f" + body;  // separator: contour pre-pass | multiplot body
}

// ---- trace ---------------------------------------------------------------------------------

// The largest position any run of the files needs of the quantities (for read_traces' bound):
// resolves the selection against each run in the files' headers, so that a name no run has is an
// error before any draw is read.
int max_selected_index(const std::vector<fs::path>& files, const PlotOptions& options,
                       const std::vector<int>& default_dims) {
  int max_index = 0;
  for (const auto& path : files) {
    CheckedRecordReader reader(path);
    v1::Record record;
    if (!reader.next(record) || !record.has_header()) continue;  // read_traces reports it
    const auto& header = record.header();
    std::vector<std::string> run_ids;
    for (const auto& info : header.runs()) run_ids.push_back(info.name());
    if (run_ids.empty()) run_ids.push_back(header.config().name());
    for (const auto& id : run_ids) {
      if (!options.run_filter.empty() && id != options.run_filter) continue;
      RunMeta meta = run_meta(header, id);
      const auto names = quantity_names(meta.output_names, meta.original_dim);
      if (names.empty()) continue;  // no dimension in the header: checked per chain
      for (int i : select_quantities(options, default_dims, names, id).index)
        max_index = std::max(max_index, i);
    }
  }
  return max_index;
}

std::string trace_script(const std::vector<fs::path>& files, const PlotOptions& options,
                         const fs::path& work, PlotResult& result, Layout& layout) {
  const std::vector<int> default_dims{0};
  TraceOptions to;
  to.max_coordinates = max_selected_index(files, options, default_dims) + 1;
  to.max_draws_per_chain = std::max(options.trace_points, 8);
  to.with_potential = false;
  to.run_filter = options.run_filter;
  struct Series {
    fs::path data;
    std::string label;
    Selection selection;
  };
  std::vector<Series> series;
  for (const auto& path : files) {
    const FileTraces t = read_traces(path, to);
    if (t.problem)
      result.notes.push_back(fmt::format("{}: damaged at byte {} ({}); plotted the records before it",
                                         path.string(), t.problem->offset, t.problem->message));
    for (const auto& c : t.chains) {
      Selection selection = select_quantities(options, default_dims, c.names, c.run_id);
      const fs::path data = work / fmt::format("trace_{}.dat", series.size());
      auto out = open_data(data);
      const std::size_t n = c.coords.empty() ? 0 : c.coords.front().size();
      for (std::size_t j = 0; j < n; ++j) {
        out << static_cast<double>(j) * static_cast<double>(c.stride);
        for (int d : selection.index) out << ' ' << c.coords[static_cast<std::size_t>(d)][j];
        out << '\n';
      }
      series.push_back({data, fmt::format("{} chain {}", c.run_id, c.chain_id),
                        std::move(selection)});
      if (c.pseudo_samples && series.size() == 1)
        result.notes.push_back("pseudo-extended draws: the trace shows the per-draw weighted mean "
                               "of the pseudo-samples");
    }
  }
  if (series.empty()) throw DataError("plot: no post-warmup draws to plot");
  const std::size_t panels = selection_size(options, default_dims);
  layout = {static_cast<int>(panels), 1};
  std::string body = "set grid lc rgb '#DDDDDD'\nset xlabel 'draw (post-warmup)'\n";
  body += series.size() <= 10 ? "set key outside right top\n" : "set key off\n";
  for (std::size_t p = 0; p < panels; ++p) {
    const std::string label = axis_label(series, p);
    body += fmt::format("set ylabel {}\nset title {}\nplot ", gp_string(label),
                        gp_string("trace of " + label));
    for (std::size_t s = 0; s < series.size(); ++s)
      body += fmt::format("{}{} using 1:{} with lines lw 0.7 lc rgb '{}' title {}", s ? ", " : "",
                          gp_path(series[s].data), p + 2, color(s), gp_string(series[s].label));
    body += "\n";
  }
  return "\x1f" + body;
}

// ---- hist ----------------------------------------------------------------------------------

std::string hist_script(const std::vector<fs::path>& files, const PlotOptions& options,
                        const fs::path& work, PlotResult& result, Layout& layout) {
  const std::vector<int> default_dims{0};
  auto runs = sample_points(files, default_dims, options, result.notes);
  if (runs.empty()) throw DataError("plot: no post-warmup draws to plot");
  const std::size_t panels = selection_size(options, default_dims);
  layout = layout_for(static_cast<int>(panels));
  std::string body = "set grid lc rgb '#DDDDDD'\nset ylabel 'density'\nset key top left Left reverse samplen 2\n";
  RunTargets targets(options.target_config);
  for (std::size_t p = 0; p < panels; ++p) {
    Range r;
    for (const auto& run : runs)
      for (const auto& pt : run.points) r.add(pt[p]);
    if (!r.valid()) throw DataError("plot: every draw has zero weight or is not finite");
    r = r.padded(0.02);
    std::string plot;
    for (std::size_t k = 0; k < runs.size(); ++k) {
      const auto& run = runs[k];
      const std::size_t n = run.points.size();
      const int bins = static_cast<int>(std::clamp(std::sqrt(static_cast<double>(n)), 10.0, 80.0));
      std::vector<double> counts(static_cast<std::size_t>(bins), 0.0);
      const double width = (r.hi - r.lo) / bins;
      for (const auto& pt : run.points) {
        if (!std::isfinite(pt[p])) continue;
        const int b = std::clamp(static_cast<int>((pt[p] - r.lo) / width), 0, bins - 1);
        counts[static_cast<std::size_t>(b)] += 1.0;
      }
      const fs::path data = work / fmt::format("hist_{}_{}.dat", p, k);
      auto out = open_data(data);
      for (int b = 0; b < bins; ++b)
        out << r.lo + (b + 0.5) * width << ' '
            << (n ? counts[static_cast<std::size_t>(b)] / (static_cast<double>(n) * width) : 0.0)
            << '\n';
      plot += fmt::format("{}{} using 1:2 with histeps lw 1.5 lc rgb '{}' title {}",
                          plot.empty() ? "plot " : ", ", gp_path(data), color(k),
                          gp_string(fmt::format("{} ({} points{})", run.run_id, n,
                                                run.weighted ? ", resampled" : "")));
    }
    // The exact density of a 1-D target, normalised over the plotted range.
    const auto& first = runs.front();
    if (first.meta.original_dim == 1 && !first.named_outputs) {
      try {
        const auto target = targets.target(first.meta, first.run_id, "the density overlay");
        const int n = 400;
        std::vector<double> xs(n), us(n);
        double u_min = std::numeric_limits<double>::infinity();
        Vector v(1);
        for (int i = 0; i < n; ++i) {
          xs[i] = r.lo + (r.hi - r.lo) * i / (n - 1);
          v[0] = xs[i];
          us[i] = target->potential(v);
          if (std::isfinite(us[i])) u_min = std::min(u_min, us[i]);
        }
        double area = 0.0;
        std::vector<double> dens(n);
        for (int i = 0; i < n; ++i) dens[i] = std::isfinite(us[i]) ? std::exp(-(us[i] - u_min)) : 0.0;
        for (int i = 0; i + 1 < n; ++i) area += 0.5 * (dens[i] + dens[i + 1]) * (xs[i + 1] - xs[i]);
        if (area > 0 && std::isfinite(area)) {
          const fs::path data = work / fmt::format("density_{}.dat", p);
          auto out = open_data(data);
          for (int i = 0; i < n; ++i) out << xs[i] << ' ' << dens[i] / area << '\n';
          plot += fmt::format(", {} using 1:2 with lines lw 1.5 dt 2 lc rgb 'black' title 'target'",
                              gp_path(data));
        }
      } catch (const std::exception& e) {
        result.notes.push_back(std::string("no exact density overlay: ") + e.what());
      }
    }
    body += fmt::format("set xrange [{}:{}]\nset xlabel {}\nset title {}\n{}\n", r.lo, r.hi,
                        gp_string(axis_label(runs, p)),
                        gp_string("marginal of " + axis_label(runs, p)), plot);
  }
  return "\x1f" + body;
}

// ---- rmse ----------------------------------------------------------------------------------

struct Metric {
  std::string name, label;
};

std::optional<double> metric_value(const CompareGroup& g, const std::string& metric) {
  if (metric == "mean") return g.rmse_all_mean;
  if (metric == "second_moment") return g.rmse_all_second_moment;
  if (metric == "log_z") {
    auto it = g.estimates.find("log_z");
    if (it != g.estimates.end()) return it->second.rmse;
  }
  return std::nullopt;
}

std::vector<Metric> chosen_metrics(const Comparison& c, const std::string& metric) {
  const std::vector<Metric> all{{"mean", "RMSE of E[x]"},
                                {"second_moment", "RMSE of E[x^2]"},
                                {"log_z", "RMSE of log Z"}};
  if (metric != "all" && metric != "mean" && metric != "second_moment" && metric != "log_z")
    throw ConfigError("plot --metric '" + metric + "': expected mean, second_moment, log_z or all");
  std::vector<Metric> out;
  for (const auto& m : all) {
    if (metric != "all" && metric != m.name) continue;
    for (const auto& g : c.groups)
      if (metric_value(g, m.name)) {
        out.push_back(m);
        break;
      }
  }
  if (out.empty())
    throw DataError("plot: no RMSE to plot — no run has a target with a known truth" +
                    std::string(metric == "all" ? "" : " for metric " + metric) +
                    " (or no chain finished with status ok)");
  return out;
}

std::string rmse_script(const std::vector<fs::path>& files, const PlotOptions& options,
                        const fs::path& work, PlotResult& result, Layout& layout) {
  Comparison c = compare_files(files, options.compare);
  if (!options.run_filter.empty())
    std::erase_if(c.groups, [&](const CompareGroup& g) { return g.key != options.run_filter; });
  for (const auto& n : c.notes) result.notes.push_back(n);
  const auto metrics = chosen_metrics(c, options.metric);
  layout = {1, 1};
  std::string body =
      "set grid lc rgb '#DDDDDD'\nset logscale y\nset key outside right top vertical\n";
  for (const auto& g : c.groups) {
    bool any = false;
    for (const auto& m : metrics) any = any || metric_value(g, m.name).has_value();
    if (!any)
      result.notes.push_back("group '" + g.key + "': no RMSE (no known truth, or no usable chain)");
  }
  body += fmt::format("set ylabel {}\n", gp_string(metrics.size() == 1 ? metrics[0].label : "RMSE"));

  if (options.kind == PlotKind::kRmseVsTime) {
    body += "set logscale x\nset xlabel 'mean wall time per chain (s)'\nset offsets graph 0.05, graph 0.3, graph 0.1, graph 0.1\n";
    std::string plot;
    for (std::size_t m = 0; m < metrics.size(); ++m) {
      const fs::path data = work / fmt::format("rmse_time_{}.dat", m);
      auto out = open_data(data);
      int rows = 0;
      for (const auto& g : c.groups) {
        const auto y = metric_value(g, metrics[m].name);
        if (!y || !(g.wall_seconds_mean > 0) || !(*y > 0)) continue;
        out << g.wall_seconds_mean << ' ' << *y << ' ' << gp_string(g.key) << '\n';
        ++rows;
      }
      if (rows == 0) continue;
      plot += fmt::format(
          "{}{} using 1:2 with points pt 7 ps 1.2 lc rgb '{}' title {}, {} using 1:2:3 with labels "
          "offset char 0.8,0.6 left font ',8' tc rgb '{}' notitle",
          plot.empty() ? "plot " : ", ", gp_path(data), color(m), gp_string(metrics[m].label),
          gp_path(data), color(m));
    }
    if (plot.empty())
      throw DataError("plot: no group has both an RMSE and a wall time (footers missing?)");
    body += "set title 'RMSE against run time'\n" + plot + "\n";
    return "\x1f" + body;
  }

  // rmse-vs-n: choose the x field.
  std::string field = options.x_field;
  auto value_of = [&](const CompareGroup& g) -> std::optional<double> {
    return field == "order" ? std::nullopt : config_number(g.config, field);
  };
  if (field == "auto") {
    field = "order";
    for (const char* candidate : {"sampler.pseudo_extended.n_pseudo", "iterations"}) {
      std::set<double> values;
      for (const auto& g : c.groups)
        if (auto v = config_number(g.config, candidate)) values.insert(*v);
      if (values.size() >= (std::string(candidate) == "iterations" ? 2u : 1u)) {
        field = candidate;
        break;
      }
    }
    result.notes.push_back("x axis: " + field);
  }
  std::vector<std::pair<double, const CompareGroup*>> points;
  std::vector<const CompareGroup*> baselines;
  for (std::size_t i = 0; i < c.groups.size(); ++i) {
    const auto& g = c.groups[i];
    if (field == "order") {
      points.push_back({static_cast<double>(i + 1), &g});
    } else if (auto v = value_of(g)) {
      points.push_back({*v, &g});
    } else {
      baselines.push_back(&g);
    }
  }
  std::stable_sort(points.begin(), points.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  if (points.empty())
    throw DataError("plot: no run has the config field '" + field + "' (use --x-field PATH)");
  double xmin = points.front().first, xmax = points.back().first;
  if (field == "order") {
    std::string tics;
    for (const auto& [x, g] : points)
      tics += fmt::format("{}{} {}", tics.empty() ? "" : ", ", gp_string(g->key), x);
    body += "set xtics (" + tics + ") rotate by -30\nset xlabel 'run'\n";
    body += fmt::format("set xrange [{}:{}]\n", xmin - 0.5, xmax + 0.5);
  } else {
    body += fmt::format("set xlabel {}\n", gp_string(field));
    if (xmin > 0 && xmax / xmin >= 8) {
      body += "set logscale x\n";
      body += fmt::format("set xrange [{}:{}]\n", xmin / 1.3, xmax * 1.3);
    } else {
      const double pad = std::max(0.05 * (xmax - xmin), 0.5);
      body += fmt::format("set xrange [{}:{}]\n", xmin - pad, xmax + pad);
    }
  }
  std::string plot;
  for (std::size_t m = 0; m < metrics.size(); ++m) {
    const fs::path data = work / fmt::format("rmse_n_{}.dat", m);
    auto out = open_data(data);
    for (const auto& [x, g] : points)
      if (auto y = metric_value(*g, metrics[m].name); y && *y > 0) out << x << ' ' << *y << '\n';
    out.close();
    // Runs in order are unrelated: points only; a numeric field gets a line through them.
    plot += fmt::format("{}{} using 1:2 with {} pt 7 ps 1.2 lw 1.5 lc rgb '{}' title {}",
                        plot.empty() ? "plot " : ", ", gp_path(data),
                        field == "order" ? "points" : "linespoints", color(m),
                        gp_string(metrics[m].label));
    std::size_t b = 0;
    for (const auto* g : baselines) {
      if (auto y = metric_value(*g, metrics[m].name); y && *y > 0)
        plot += fmt::format(", {} with lines dt {} lw 1.2 lc rgb '{}' title {}", *y,
                            2 + static_cast<int>(b % 4), color(m),
                            gp_string(g->key + ": " + metrics[m].label));
      ++b;
    }
  }
  body += "set title " + gp_string("RMSE against " + (field == "order" ? std::string("run") : field)) +
          "\n" + plot + "\n";
  return "\x1f" + body;
}

// The target's exact log Z for a run of `file`, when the header's config rebuilds a target that
// knows it.
std::optional<double> exact_log_z(const fs::path& file, const std::string& run_id) {
  CheckedRecordReader reader(file);
  v1::Record record;
  if (!reader.next(record) || !record.has_header()) return std::nullopt;
  return exact_moments(record.header(), run_id).log_z;
}

std::string estimate_script(const std::vector<fs::path>& files, const PlotOptions& options,
                            const fs::path& work, PlotResult& result, Layout& layout) {
  layout = {1, 1};
  std::string plot;
  std::map<std::string, std::size_t> run_color;
  std::optional<double> truth;
  std::size_t n = 0;
  for (const auto& file : files) {
    for (const auto& s : read_estimate_series({file}, options.estimate, options.run_filter)) {
      const fs::path data = work / fmt::format("estimate_{}.dat", n++);
      auto out = open_data(data);
      for (std::size_t i = 0; i < s.value.size(); ++i)
        if (std::isfinite(s.value[i])) out << s.wall_seconds[i] << ' ' << s.value[i] << '\n';
      out.close();
      const auto [it, first] = run_color.try_emplace(s.run_id, run_color.size());
      plot += fmt::format("{}{} using 1:2 with lines lw 1.2 lc rgb '{}' {}",
                          plot.empty() ? "plot " : ", ", gp_path(data), color(it->second),
                          first ? "title " + gp_string(s.run_id) : std::string("notitle"));
      if (!truth && options.estimate.rfind("log_z", 0) == 0) truth = exact_log_z(file, s.run_id);
    }
  }
  if (truth) plot += fmt::format(", {} with lines dt 2 lw 1.5 lc rgb 'black' title 'exact'", *truth);
  result.notes.push_back(fmt::format("{} chains", n));
  std::string body = "set grid lc rgb '#DDDDDD'\nset key outside right top vertical\n";
  body += "set xlabel 'wall time of the chain (s)'\n";
  body += "set ylabel " + gp_string(options.estimate) + "\n";
  body += "set title " + gp_string(options.estimate + " against run time (one line per chain)") + "\n";
  return "\x1f" + body + plot + "\n";
}

// error-vs-time for moments, or normalised by the base (CT paper Figure 2): the mean over chains
// of each chain's error with a +-3 SE band (error_curves.hpp).
std::string mean_error_script(const std::vector<fs::path>& files, const PlotOptions& options,
                              const fs::path& work, PlotResult& result) {
  const auto q = parse_error_quantity(options.estimate);
  const auto normalise = parse_normalise(options.normalise);
  std::string plot;
  for (std::size_t f = 0; f < files.size(); ++f) {
    const auto curve =
        aggregate_errors(read_chain_errors(files[f], q, normalise, options.run_filter, result.notes));
    if (curve.empty()) continue;
    const fs::path data = work / fmt::format("error_{}.dat", f);
    auto out = open_data(data);
    bool clipped = false;
    for (const auto& p : curve) {
      if (!(p.mean > 0)) continue;
      // A log axis has no room for a band reaching 0 or below: such a lower edge is drawn at a
      // hundredth of the mean (noted).
      double lo = p.mean - 3 * p.se;
      if (!(lo > 0)) {
        lo = p.mean / 100;
        clipped = true;
      }
      out << p.wall_seconds << ' ' << p.mean << ' ' << lo << ' ' << p.mean + 3 * p.se << '\n';
    }
    out.close();
    if (clipped)
      result.notes.push_back(files[f].filename().string() +
                             ": the -3 SE edge reaches 0 somewhere; drawn at mean / 100 there");
    const int n = curve.front().n_chains;
    plot += fmt::format(
        "{}{} using 1:3:4 with filledcurves fs transparent solid 0.2 noborder lc rgb '{}' notitle, "
        "{} using 1:2 with linespoints pt 7 ps 0.5 lw 1.5 lc rgb '{}' title {}",
        plot.empty() ? "plot " : ", ", gp_path(data), color(f), gp_path(data), color(f),
        gp_string(files[f].stem().string() + fmt::format(" ({} chains)", n)));
  }
  if (plot.empty())
    throw DataError("plot: no chain has a running " + options.estimate + " with an exact value" +
                    (normalise == Normalise::kBase ? " and a base to normalise by" : ""));
  const std::string what = normalise == Normalise::kBase
                               ? "error of " + options.estimate + " / error of the base's"
                               : "error of " + options.estimate;
  std::string body = "set grid lc rgb '#DDDDDD'\nset key outside right top vertical\nset logscale xy\n";
  body += "set xlabel 'mean wall time of the chains (s)'\n";
  body += "set ylabel " + gp_string(what + " (mean over chains, +-3 SE)") + "\n";
  if (normalise == Normalise::kBase) body += "set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lc rgb 'black'\n";
  body += "set title " + gp_string(what + " against run time (one line per file)") + "\n";
  return "\x1f" + body + plot + "\n";
}

std::string error_script(const std::vector<fs::path>& files, const PlotOptions& options,
                         const fs::path& work, PlotResult& result, Layout& layout) {
  layout = {1, 1};
  if (options.normalise != "none" || options.estimate == "mean" || options.estimate == "covariance")
    return mean_error_script(files, options, work, result);
  if (options.estimate.rfind("log_z", 0) != 0)
    throw ConfigError("plot --kind error-vs-time: log Z estimates, mean or covariance have exact values here (got --estimate " +
                      options.estimate + ")");
  std::string plot;
  for (std::size_t f = 0; f < files.size(); ++f) {
    const auto series = read_estimate_series({files[f]}, options.estimate, options.run_filter);
    std::map<std::string, std::optional<double>> truth;  // per run
    std::vector<double> sum_sq, sum_t;
    std::vector<int> count;
    int used = 0;
    for (const auto& s : series) {
      auto [it, fresh] = truth.try_emplace(s.run_id);
      if (fresh) it->second = exact_log_z(files[f], s.run_id);
      if (!it->second) {
        if (fresh) result.notes.push_back(files[f].filename().string() + ": run '" + s.run_id +
                                          "' has no exact log Z: left out");
        continue;
      }
      ++used;
      for (std::size_t i = 0; i < s.value.size(); ++i) {
        if (sum_sq.size() <= i) {
          sum_sq.resize(i + 1, 0.0);
          sum_t.resize(i + 1, 0.0);
          count.resize(i + 1, 0);
        }
        const double e = s.value[i] - *it->second;
        sum_sq[i] += e * e;
        sum_t[i] += s.wall_seconds[i];
        ++count[i];
      }
    }
    if (used == 0) continue;
    const fs::path data = work / fmt::format("error_{}.dat", f);
    auto out = open_data(data);
    for (std::size_t i = 0; i < count.size(); ++i)
      if (count[i] == used && sum_sq[i] > 0)  // only indices every chain reached
        out << sum_t[i] / count[i] << ' ' << std::sqrt(sum_sq[i] / count[i]) << '\n';
    out.close();
    plot += fmt::format("{}{} using 1:2 with linespoints pt 7 ps 0.5 lw 1.5 lc rgb '{}' title {}",
                        plot.empty() ? "plot " : ", ", gp_path(data), color(f),
                        gp_string(files[f].stem().string() + fmt::format(" ({} chains)", used)));
  }
  if (plot.empty()) throw DataError("plot: no chain has a target with an exact log Z");
  std::string body = "set grid lc rgb '#DDDDDD'\nset key outside right top vertical\nset logscale xy\n";
  body += "set xlabel 'mean wall time of the chains (s)'\n";
  body += "set ylabel " + gp_string("RMSE of " + options.estimate + " over chains") + "\n";
  body += "set title " + gp_string("RMSE of " + options.estimate + " against run time (one line per file)") + "\n";
  return "\x1f" + body + plot + "\n";
}

std::string schedule_script(const std::vector<fs::path>& files, const PlotOptions& options,
                            const fs::path& work, PlotResult& result, Layout& layout) {
  layout = {1, 1};
  const auto schedules = read_schedules(files, options.run_filter);
  std::string plot;
  std::map<std::string, std::size_t> run_color;
  for (std::size_t k = 0; k < schedules.size(); ++k) {
    const auto& s = schedules[k];
    const fs::path data = work / fmt::format("schedule_{}.dat", k);
    auto out = open_data(data);
    for (std::size_t i = 0; i < s.betas.size(); ++i) out << s.betas[i] << ' ' << s.barrier[i] << '\n';
    out.close();
    const auto [it, first] = run_color.try_emplace(s.run_id, run_color.size());
    plot += fmt::format("{}{} using 1:2 with linespoints pt 7 ps 0.6 lw 1 lc rgb '{}' {}",
                        plot.empty() ? "plot " : ", ", gp_path(data), color(it->second),
                        first ? "title " + gp_string(s.run_id) : std::string("notitle"));
  }
  result.notes.push_back(fmt::format("{} chains", schedules.size()));
  std::string body = "set grid lc rgb '#DDDDDD'\nset key outside right top vertical\n";
  body += "set xlabel 'inverse temperature beta'\nset ylabel 'communication barrier Lambda(beta)'\n";
  body += "set xrange [0:1]\n";
  body += "set title 'Parallel tempering: final ladder and barrier (points: the temperatures)'\n";
  return "\x1f" + body + plot + "\n";
}

}  // namespace

PlotKind parse_plot_kind(const std::string& name) {
  if (name == "scatter") return PlotKind::kScatter;
  if (name == "trace") return PlotKind::kTrace;
  if (name == "hist") return PlotKind::kHist;
  if (name == "rmse-vs-n") return PlotKind::kRmseVsN;
  if (name == "rmse-vs-time") return PlotKind::kRmseVsTime;
  if (name == "estimate-vs-time") return PlotKind::kEstimateVsTime;
  if (name == "error-vs-time") return PlotKind::kErrorVsTime;
  if (name == "schedule") return PlotKind::kSchedule;
  throw ConfigError("plot --kind '" + name +
                    "': expected scatter, trace, hist, rmse-vs-n, rmse-vs-time, "
                    "estimate-vs-time, error-vs-time or schedule");
}

void run_gnuplot(const std::string& program, const fs::path& script, const fs::path& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  std::string script_arg = script.string();
  std::vector<char*> argv{const_cast<char*>(program.c_str()), script_arg.data(), nullptr};
  pid_t pid = 0;
  const int rc = ::posix_spawnp(&pid, program.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  const std::string missing = "plot: cannot run '" + program +
                              "': gnuplot is needed for plots — install it (Debian: apt-get "
                              "install gnuplot-nox) or pass --gnuplot PATH";
  if (rc != 0) throw IoError(missing + " (" + std::strerror(rc) + ")");
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw IoError("plot: waiting for gnuplot failed: " + std::string(std::strerror(errno)));
  }
  // Some libcs report a failed exec of posix_spawnp only as exit status 127.
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127) throw IoError(missing);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::ifstream in(log);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (text.size() > 2000) text = "..." + text.substr(text.size() - 2000);
    throw IoError(fmt::format("plot: gnuplot failed ({}) on {}:\n{}",
                              WIFEXITED(status) ? "exit code " + std::to_string(WEXITSTATUS(status))
                                                : std::string("killed by a signal"),
                              script.string(), text));
  }
}

PlotResult plot_files(const std::vector<fs::path>& files, const PlotOptions& options) {
  if (files.empty()) throw ConfigError("plot: no record files given");
  if (options.output.empty()) throw ConfigError("plot: --output is required");
  terminal_line(options.output, 1, 1);  // checks the extension before any work
  PlotResult result;
  result.output = options.output;
  WorkDir work;
  Layout layout;
  std::string parts;
  switch (options.kind) {
    case PlotKind::kScatter: parts = scatter_script(files, options, work.path(), result, layout); break;
    case PlotKind::kTrace: parts = trace_script(files, options, work.path(), result, layout); break;
    case PlotKind::kHist: parts = hist_script(files, options, work.path(), result, layout); break;
    case PlotKind::kRmseVsN:
    case PlotKind::kRmseVsTime: parts = rmse_script(files, options, work.path(), result, layout); break;
    case PlotKind::kEstimateVsTime: parts = estimate_script(files, options, work.path(), result, layout); break;
    case PlotKind::kErrorVsTime: parts = error_script(files, options, work.path(), result, layout); break;
    case PlotKind::kSchedule: parts = schedule_script(files, options, work.path(), result, layout); break;
  }
  const auto sep = parts.find('\x1f');
  const std::string pre = parts.substr(0, sep), body = parts.substr(sep + 1);
  const bool wide_trace = options.kind == PlotKind::kTrace;
  const bool single = options.kind == PlotKind::kRmseVsN || options.kind == PlotKind::kRmseVsTime ||
                      options.kind == PlotKind::kEstimateVsTime || options.kind == PlotKind::kSchedule ||
                      options.kind == PlotKind::kErrorVsTime;
  const int width = options.width > 0 ? options.width
                    : wide_trace      ? 1100
                    : single          ? 950
                                      : 480 * layout.cols + 40;
  const int height = options.height > 0 ? options.height
                     : wide_trace       ? 300 * layout.rows + 60
                     : single           ? 600
                                        : 460 * layout.rows + 50;
  std::string title = options.title.empty() ? default_title(options, files) : options.title;
  if (options.kind == PlotKind::kScatter && options.title.empty())
    title += pre.empty() ? "  (points: draws)" : "  (points: draws; lines: target density contours)";

  const fs::path output = fs::absolute(options.output);
  std::string script = "# pemc-report plot: generated script (data files next to it)\n";
  script += pre;
  script += terminal_line(output, width, height) + "\n";
  script += "set output " + gp_path(output) + "\n";
  script += fmt::format("set multiplot layout {},{} title {}\n", layout.rows, layout.cols,
                        gp_string(title));
  script += body;
  script += "unset multiplot\nset output\n";
  const fs::path script_path = work.path() / "plot.gp";
  {
    auto out = open_data(script_path);
    out << script;
    if (!out) throw IoError("plot: cannot write " + script_path.string());
  }
  try {
    run_gnuplot(options.gnuplot, script_path, work.path() / "gnuplot.log");
  } catch (const IoError& e) {
    work.keep();
    throw IoError(std::string(e.what()) + "\n(script and data kept in " + work.path().string() + ")");
  }
  std::error_code ec;
  if (!fs::exists(output, ec) || fs::file_size(output, ec) == 0) {
    work.keep();
    throw IoError("plot: gnuplot exited cleanly but wrote no " + output.string() +
                  " (script kept in " + work.path().string() + ")");
  }
  if (options.keep_temp) {
    work.keep();
    result.work_dir = work.path();
  }
  return result;
}

}  // namespace pemc::report
