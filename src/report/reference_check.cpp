#include "report/reference_check.hpp"

#include <zip.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <span>
#include <sstream>

#include "core/error.hpp"
#include "estimators/ess.hpp"
#include "records/record_reader.hpp"
#include "report/checked_reader.hpp"
#include "report/draw_weights.hpp"

namespace pemc::report {
namespace {

namespace fs = std::filesystem;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Reference draws of one quantity, pooled over the reference's chains.
struct ReferenceQuantity {
  std::vector<double> draws;
  double ess = kNaN;  // bulk ESS from the info file, if given
};

std::map<std::string, ReferenceQuantity> read_reference(const ReferenceCheckOptions& o,
                                                        std::vector<std::string>& order) {
  nlohmann::json chains;
  try {
    chains = nlohmann::json::parse(read_maybe_zipped(o.reference_draws));
  } catch (const nlohmann::json::exception& e) {
    throw DataError(o.reference_draws.string() + ": not posteriordb reference draws: " + e.what());
  }
  if (!chains.is_array() || chains.empty())
    throw DataError(o.reference_draws.string() +
                    ": expected a JSON list of chains, each mapping names to draws");
  std::map<std::string, ReferenceQuantity> out;
  for (const auto& chain : chains) {
    if (!chain.is_object())
      throw DataError(o.reference_draws.string() + ": a chain is not a JSON object");
    for (const auto& [name, values] : chain.items()) {
      if (!values.is_array())
        throw DataError(o.reference_draws.string() + ": '" + name + "' is not a list of draws");
      auto& q = out[name];
      if (q.draws.empty() && std::find(order.begin(), order.end(), name) == order.end())
        order.push_back(name);
      for (const auto& v : values) q.draws.push_back(v.is_number() ? v.get<double>() : kNaN);
    }
  }
  if (o.reference_info.empty()) return out;
  nlohmann::json info;
  try {
    info = nlohmann::json::parse(read_maybe_zipped(o.reference_info));
    const auto& d = info.at("diagnostics");
    const auto& names = d.at("diagnostic_information").at("names");
    const auto& ess = d.at("effective_sample_size_bulk");
    for (std::size_t i = 0; i < names.size() && i < ess.size(); ++i) {
      const auto it = out.find(names[i].get<std::string>());
      if (it != out.end() && ess[i].is_number()) it->second.ess = ess[i].get<double>();
    }
  } catch (const nlohmann::json::exception& e) {
    throw DataError(o.reference_info.string() +
                    ": not a posteriordb reference info file (diagnostics.effective_sample_size_"
                    "bulk and diagnostic_information.names): " + e.what());
  }
  return out;
}

// One post-warmup draw of the run: its log weights (empty: unweighted) and rows of outputs.
struct DrawRows {
  std::vector<double> log_weights;
  std::vector<double> values;  // rows x K, the checked quantities only
};

struct RunDraws {
  std::string run_id, sampler;
  std::vector<std::string> output_names;
  std::map<int, std::vector<DrawRows>> chains;  // by chain id
  std::vector<std::string> warnings;
};

const pemc::v1::RunInfo& pick_run(const pemc::v1::Header& h, const std::string& filter,
                                  const fs::path& file) {
  if (h.runs_size() == 0) throw DataError(file.string() + ": the header lists no runs");
  if (filter.empty()) {
    if (h.runs_size() > 1) {
      std::string names;
      for (const auto& r : h.runs()) names += (names.empty() ? "" : ", ") + r.name();
      throw ConfigError(file.string() + " holds several runs (" + names + "): choose one with --run");
    }
    return h.runs(0);
  }
  for (const auto& r : h.runs())
    if (r.name() == filter) return r;
  throw ConfigError(file.string() + ": no run named '" + filter + "'");
}

RunDraws read_run(const fs::path& file, const ReferenceCheckOptions& o,
                  const std::vector<std::string>& quantities, std::vector<int>& columns) {
  CheckedRecordReader reader(file);
  pemc::v1::Record rec;
  RunDraws run;
  bool have_header = false;
  int k = 0;
  while (reader.next(rec)) {
    if (rec.has_header()) {
      const auto& info = pick_run(rec.header(), o.run_filter, file);
      run.run_id = info.name();
      run.sampler = info.sampler_name();
      run.output_names.assign(info.output_names().begin(), info.output_names().end());
      k = static_cast<int>(run.output_names.size());
      if (k == 0)
        throw ConfigError(file.string() + ": run '" + run.run_id +
                          "' has no named outputs (only Stan targets have them)");
      columns.clear();
      std::string missing;
      for (const auto& q : quantities) {
        const auto it = std::find(run.output_names.begin(), run.output_names.end(), q);
        if (it == run.output_names.end()) missing += (missing.empty() ? "" : ", ") + q;
        columns.push_back(static_cast<int>(it - run.output_names.begin()));
      }
      if (!missing.empty())
        throw ConfigError(file.string() + ": run '" + run.run_id +
                          "' does not output the reference's quantities " + missing);
      have_header = true;
      continue;
    }
    if (!rec.has_draw() || !have_header) continue;
    const auto& d = rec.draw();
    if (d.warmup() || d.run_id() != run.run_id) continue;
    const int rows = d.outputs_size() / k;
    if (rows < 1 || d.outputs_size() != rows * k)
      throw DataError(file.string() + ": chain " + std::to_string(d.chain_id()) + " draw " +
                      std::to_string(d.iteration()) + " has " + std::to_string(d.outputs_size()) +
                      " outputs, not a multiple of " + std::to_string(k));
    DrawRows dr;
    if (d.log_weights_size() > 0) {
      if (d.log_weights_size() != rows)
        throw DataError(file.string() + ": chain " + std::to_string(d.chain_id()) + " draw " +
                        std::to_string(d.iteration()) + " has " +
                        std::to_string(d.log_weights_size()) + " weights for " +
                        std::to_string(rows) + " rows of outputs");
      dr.log_weights.assign(d.log_weights().begin(), d.log_weights().end());
    }
    dr.values.reserve(static_cast<std::size_t>(rows) * quantities.size());
    for (int j = 0; j < rows; ++j)
      for (const int c : columns) dr.values.push_back(d.outputs(j * k + c));
    run.chains[d.chain_id()].push_back(std::move(dr));
  }
  if (!have_header) throw DataError(file.string() + ": no header record");
  if (const auto& p = reader.problem())
    run.warnings.push_back(file.string() + ": damaged at byte " + std::to_string(p->offset) +
                           " (" + p->message + "); checked the draws before it");
  return run;
}

double pooled_sd(const std::vector<double>& x) {
  if (x.size() < 2) return kNaN;
  double mean = 0;
  for (const double v : x) mean += v;
  mean /= static_cast<double>(x.size());
  double ss = 0;
  for (const double v : x) ss += (v - mean) * (v - mean);
  return std::sqrt(ss / static_cast<double>(x.size() - 1));
}

// The numerators a_t (per quantity and moment) and denominators b_t of every draw, by chain.
struct RatioTerms {
  std::vector<std::vector<double>> b;                            // [chain][t]
  std::vector<std::vector<std::vector<double>>> a;               // [series][chain][t]
};

RatioTerms ratio_terms(const RunDraws& run, std::size_t n_quantities) {
  const bool within = weights_within_draw(run.sampler, 2);
  double global_max = -std::numeric_limits<double>::infinity();
  if (!within)
    for (const auto& [id, draws] : run.chains)
      for (const auto& d : draws)
        for (const double l : d.log_weights) global_max = std::max(global_max, l);
  RatioTerms t;
  t.a.assign(2 * n_quantities, {});
  for (auto& series : t.a) series.resize(run.chains.size());
  t.b.resize(run.chains.size());
  std::size_t c = 0;
  std::vector<double> w;
  for (const auto& [id, draws] : run.chains) {
    for (const auto& d : draws) {
      const std::size_t rows = d.values.size() / n_quantities;
      w.assign(rows, 1.0);
      if (!d.log_weights.empty()) {
        const double shift =
            within ? *std::max_element(d.log_weights.begin(), d.log_weights.end()) : global_max;
        double sum = 0;
        for (std::size_t j = 0; j < rows; ++j) sum += w[j] = std::exp(d.log_weights[j] - shift);
        if (within)
          for (double& v : w) v /= sum;
      } else if (rows > 1) {
        for (double& v : w) v = 1.0 / static_cast<double>(rows);
      }
      double b = 0;
      for (std::size_t j = 0; j < rows; ++j) b += w[j];
      t.b[c].push_back(b);
      for (std::size_t q = 0; q < n_quantities; ++q) {
        double m1 = 0, m2 = 0;
        for (std::size_t j = 0; j < rows; ++j) {
          const double f = d.values[j * n_quantities + q];
          m1 += w[j] * f;
          m2 += w[j] * f * f;
        }
        t.a[2 * q][c].push_back(m1);
        t.a[2 * q + 1][c].push_back(m2);
      }
    }
    ++c;
  }
  return t;
}

// estimate, MCSE and ESS of sum a / sum b (the file comment's delta method).
void ratio_estimate(const std::vector<std::vector<double>>& a,
                    const std::vector<std::vector<double>>& b, QuantityCheck& out) {
  double sa = 0, sb = 0;
  std::size_t n = 0;
  for (std::size_t c = 0; c < a.size(); ++c)
    for (std::size_t t = 0; t < a[c].size(); ++t) {
      sa += a[c][t];
      sb += b[c][t];
      ++n;
    }
  out.estimate = sa / sb;
  const double mean_b = sb / static_cast<double>(n);
  std::vector<std::vector<double>> r(a.size());
  std::vector<double> pooled;
  pooled.reserve(n);
  for (std::size_t c = 0; c < a.size(); ++c) {
    r[c].reserve(a[c].size());
    for (std::size_t t = 0; t < a[c].size(); ++t) {
      r[c].push_back((a[c][t] - out.estimate * b[c][t]) / mean_b);
      pooled.push_back(r[c].back());
    }
  }
  const double sd = pooled_sd(pooled);
  std::vector<std::span<const double>> spans(r.begin(), r.end());
  out.ess = sd > 0 ? estimators::bulk_ess(spans).ess : static_cast<double>(n);
  out.mcse = sd > 0 ? sd / std::sqrt(out.ess) : 0.0;
}

void reference_moment(const std::vector<double>& draws, bool squared, QuantityCheck& out) {
  std::vector<double> v(draws);
  if (squared)
    for (double& x : v) x *= x;
  double mean = 0;
  for (const double x : v) mean += x;
  out.reference = mean / static_cast<double>(v.size());
  out.reference_sd = pooled_sd(v);
}

double z_score(const QuantityCheck& c) {
  const double diff = c.estimate - c.reference;
  const double var = c.mcse * c.mcse + c.reference_sd * c.reference_sd / c.reference_ess;
  if (var == 0) return diff == 0 ? 0.0 : std::copysign(std::numeric_limits<double>::infinity(), diff);
  return diff / std::sqrt(var);
}

std::string fmt(double x, int precision = 4) {
  std::ostringstream s;
  s.precision(precision);
  s << x;
  return s.str();
}

}  // namespace

std::string read_maybe_zipped(const fs::path& path) {
  std::ifstream probe(path, std::ios::binary);
  if (!probe) throw IoError(path.string() + ": cannot be opened for reading");
  char magic[4] = {0, 0, 0, 0};
  probe.read(magic, 4);
  if (!(magic[0] == 'P' && magic[1] == 'K' && magic[2] == 3 && magic[3] == 4)) {
    probe.clear();
    probe.seekg(0);
    std::ostringstream text;
    text << probe.rdbuf();
    return text.str();
  }
  int error = 0;
  std::unique_ptr<zip_t, decltype(&zip_close)> archive(
      zip_open(path.c_str(), ZIP_RDONLY, &error), &zip_close);
  if (!archive) throw IoError(path.string() + ": not a readable zip archive (libzip error " +
                              std::to_string(error) + ")");
  if (zip_get_num_entries(archive.get(), 0) != 1)
    throw DataError(path.string() + ": expected a zip archive holding exactly one file");
  zip_stat_t st;
  if (zip_stat_index(archive.get(), 0, 0, &st) != 0 || !(st.valid & ZIP_STAT_SIZE))
    throw IoError(path.string() + ": cannot read the archive's member");
  std::unique_ptr<zip_file_t, decltype(&zip_fclose)> member(zip_fopen_index(archive.get(), 0, 0),
                                                            &zip_fclose);
  if (!member) throw IoError(path.string() + ": cannot open the archive's member");
  std::string text(st.size, '\0');
  if (zip_fread(member.get(), text.data(), st.size) != static_cast<zip_int64_t>(st.size))
    throw IoError(path.string() + ": the archive's member is truncated");
  return text;
}

ReferenceCheck check_against_reference(const fs::path& record_file,
                                       const ReferenceCheckOptions& o) {
  std::vector<std::string> quantities;
  const auto reference = read_reference(o, quantities);
  std::vector<int> columns;
  const RunDraws run = read_run(record_file, o, quantities, columns);
  ReferenceCheck out;
  out.run_id = run.run_id;
  out.sampler = run.sampler;
  out.warnings = run.warnings;
  out.n_chains = static_cast<int>(run.chains.size());
  for (const auto& [id, draws] : run.chains) out.n_draws += static_cast<long long>(draws.size());
  if (out.n_draws < 8)
    throw DataError(record_file.string() + ": run '" + run.run_id + "' has " +
                    std::to_string(out.n_draws) + " post-warmup draws; too few to check");
  const RatioTerms terms = ratio_terms(run, quantities.size());
  for (std::size_t q = 0; q < quantities.size(); ++q) {
    const auto& ref = reference.at(quantities[q]);
    for (int moment = 0; moment < 2; ++moment) {
      QuantityCheck c;
      c.name = quantities[q];
      c.moment = moment == 0 ? "mean" : "second moment";
      ratio_estimate(terms.a[2 * q + static_cast<std::size_t>(moment)], terms.b, c);
      reference_moment(ref.draws, moment == 1, c);
      c.reference_ess = std::isfinite(ref.ess) ? ref.ess : static_cast<double>(ref.draws.size());
      c.z = z_score(c);
      out.checks.push_back(c);
    }
  }
  std::stable_sort(out.checks.begin(), out.checks.end(), [](const auto& x, const auto& y) {
    const double ax = std::isnan(x.z) ? std::numeric_limits<double>::infinity() : std::fabs(x.z);
    const double ay = std::isnan(y.z) ? std::numeric_limits<double>::infinity() : std::fabs(y.z);
    return ax > ay;
  });
  out.max_abs_z = out.checks.empty() ? 0.0 : std::fabs(out.checks.front().z);
  out.passed = std::isfinite(out.max_abs_z) && out.max_abs_z <= o.threshold;
  return out;
}

std::string reference_check_to_table(const ReferenceCheck& c, const ReferenceCheckOptions& o) {
  std::ostringstream s;
  s << "run " << c.run_id << " (" << c.sampler << "): " << c.n_chains << " chains, " << c.n_draws
    << " draws; " << c.checks.size() / 2 << " quantities, mean and second moment each\n"
    << "max |z| " << fmt(c.max_abs_z, 3) << ": " << (c.passed ? "PASS" : "FAIL") << " (threshold "
    << o.threshold << ")\n";
  const std::size_t n = std::min<std::size_t>(c.checks.size(), static_cast<std::size_t>(o.show_worst));
  s << "worst " << n << " of " << c.checks.size() << ":\n";
  char line[256];
  std::snprintf(line, sizeof line, "  %-24s %-14s %12s %10s %8s %12s %10s %8s\n", "quantity",
                "moment", "estimate", "mcse", "ess", "reference", "ref sd", "z");
  s << line;
  for (std::size_t i = 0; i < n; ++i) {
    const auto& q = c.checks[i];
    std::snprintf(line, sizeof line, "  %-24s %-14s %12.5g %10.3g %8.0f %12.5g %10.3g %8.2f\n",
                  q.name.c_str(), q.moment.c_str(), q.estimate, q.mcse, q.ess, q.reference,
                  q.reference_sd, q.z);
    s << line;
  }
  return s.str();
}

std::string reference_check_to_json(const ReferenceCheck& c) {
  nlohmann::json j;
  j["run_id"] = c.run_id;
  j["sampler"] = c.sampler;
  j["n_chains"] = c.n_chains;
  j["n_draws"] = c.n_draws;
  j["max_abs_z"] = c.max_abs_z;
  j["passed"] = c.passed;
  j["warnings"] = c.warnings;
  auto& rows = j["checks"];
  rows = nlohmann::json::array();
  for (const auto& q : c.checks)
    rows.push_back({{"name", q.name}, {"moment", q.moment}, {"estimate", q.estimate},
                    {"mcse", q.mcse}, {"ess", q.ess}, {"reference", q.reference},
                    {"reference_sd", q.reference_sd}, {"reference_ess", q.reference_ess},
                    {"z", q.z}});
  return j.dump(2) + "\n";
}

}  // namespace pemc::report
