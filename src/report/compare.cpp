#include "report/compare.hpp"

#include <fmt/format.h>
#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <tuple>

#include "core/error.hpp"
#include "estimators/log_z_trust.hpp"
#include "records/record_reader.hpp"
#include "report/checked_reader.hpp"
#include "report/diagnostics_traces.hpp"
#include "report/quantities.hpp"
#include "report/run_targets.hpp"

namespace pemc::report {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
using J = nlohmann::ordered_json;

v1::Header read_header(const std::filesystem::path& path) {
  CheckedRecordReader reader(path);
  v1::Record record;
  if (reader.next(record) && record.has_header()) return record.header();
  return {};
}

std::string group_key(const ComparedChain& c, const std::string& by) {
  if (by == "sampler") return c.summary.sampler;
  if (by == "target") return c.summary.target;
  if (by == "file") return c.file;
  return c.summary.run_id;
}

bool same_truth(const targets::Truth& a, const targets::Truth& b) {
  auto same_vec = [](const std::optional<Vector>& x, const std::optional<Vector>& y) {
    if (x.has_value() != y.has_value()) return false;
    return !x || (x->size() == y->size() && *x == *y);
  };
  return same_vec(a.mean, b.mean) && same_vec(a.second_moment, b.second_moment) &&
         a.log_z == b.log_z;
}

// Truth of a sampler estimate by name: "log_z" is Truth::log_z, other names a scalar extra.
std::optional<double> estimate_truth(const targets::Truth& t, const std::string& name) {
  if (name == "log_z") return t.log_z;
  if (auto it = t.extras.find(name); it != t.extras.end() && it->second.size() == 1)
    return it->second[0];
  return std::nullopt;
}

J number(double x) { return std::isfinite(x) ? J(x) : J(nullptr); }
J numbers(const Vector& v) {
  J a = J::array();
  for (Eigen::Index i = 0; i < v.size(); ++i) a.push_back(number(v[i]));
  return a;
}

std::string num(double x) {
  if (std::isnan(x)) return "—";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  return fmt::format("{:.4g}", x);
}
std::string csv_num(double x) { return std::isfinite(x) ? fmt::format("{:.10g}", x) : ""; }
std::string opt_num(const std::optional<double>& x) { return x ? num(*x) : "—"; }

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// The markdown cell of a sampler estimate: "mean ± sd", the sd being the spread over the chains,
// then the chains' mean reported SE beside it and how many chains flagged it untrusted or could
// not have it checked.
std::string estimate_cell(const EstimateStats& e) {
  std::string cell = std::isfinite(e.sd) ? num(e.mean) + " ± " + num(e.sd) : num(e.mean);
  if (e.se_mean) cell += " (mean SE " + num(*e.se_mean) + ")";
  if (e.n_untrusted && *e.n_untrusted > 0)
    cell += fmt::format(" {} of {} untrusted", *e.n_untrusted, e.n + e.n_nonfinite);
  if (e.n_unchecked && *e.n_unchecked > 0)
    cell += fmt::format("{} {} of {} unchecked", e.n_untrusted && *e.n_untrusted > 0 ? "," : "",
                        *e.n_unchecked, e.n + e.n_nonfinite);
  return cell;
}

// The markdown cell of a moment: "mean ± sd".
std::string pm(double mean, double sd) {
  return std::isfinite(sd) ? num(mean) + " ± " + num(sd) : num(mean);
}

// Set the statistics of one moment (E[x] or E[x^2]) from per-chain vectors.
void moment_stats(const std::vector<const Vector*>& values, const Vector* truth, MomentStats& out,
                  std::optional<double>& rmse_all) {
  const Eigen::Index d = values.empty() ? 0 : values.front()->size();
  const double n = static_cast<double>(values.size());
  out.mean = Vector::Zero(d);
  out.sd = Vector::Constant(d, kNaN);
  for (const Vector* v : values) out.mean += *v / n;
  if (values.size() > 1) {
    out.sd = Vector::Zero(d);
    for (const Vector* v : values) out.sd.array() += (*v - out.mean).array().square();
    out.sd = (out.sd / (n - 1.0)).cwiseSqrt();
  }
  if (truth && truth->size() == d && !values.empty()) {
    out.truth = *truth;
    out.rmse = Vector::Zero(d);
    for (const Vector* v : values) out.rmse.array() += (*v - *truth).array().square() / n;
    rmse_all = d > 0 ? std::sqrt(out.rmse.sum() / static_cast<double>(d)) : kNaN;
    out.rmse = out.rmse.cwiseSqrt();
  }
}

// The chains' own standard errors of an estimate beside its spread over the chains: se_mean =
// mean of the finite, positive <name>_se over chains with a finite value, and with a truth rms_z =
// sqrt(mean ((value - truth) / se)^2) over the same chains (about 1 when the SEs are right).
void standard_error_stats(const std::vector<double>& values, const std::vector<double>& ses,
                          EstimateStats& e) {
  double sum_se = 0.0, sum_z2 = 0.0;
  int n = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i]) || !std::isfinite(ses[i]) || !(ses[i] > 0.0)) continue;
    sum_se += ses[i];
    if (e.truth) sum_z2 += std::pow((values[i] - *e.truth) / ses[i], 2);
    ++n;
  }
  if (n == 0) return;
  e.se_mean = sum_se / n;
  if (e.truth) e.rms_z = std::sqrt(sum_z2 / n);
}

// n, mean and sd (n - 1 denominator) of the finite values; the others are counted.
EstimateStats scalar_stats(const std::vector<double>& vs) {
  EstimateStats e;
  std::vector<double> finite;
  for (double v : vs) (std::isfinite(v) ? finite.push_back(v) : void(++e.n_nonfinite));
  e.n = static_cast<int>(finite.size());
  e.mean = e.sd = kNaN;
  if (!finite.empty()) {
    e.mean = 0;
    for (double v : finite) e.mean += v / e.n;
    if (finite.size() > 1) {
      e.sd = 0;
      for (double v : finite) e.sd += (v - e.mean) * (v - e.mean);
      e.sd = std::sqrt(e.sd / (e.n - 1));
    }
  }
  return e;
}

J moment_json(const MomentStats& m) {
  J o;
  o["mean"] = numbers(m.mean);
  o["sd"] = numbers(m.sd);
  if (m.rmse.size() > 0) o["rmse"] = numbers(m.rmse);
  if (m.truth.size() > 0) o["truth"] = numbers(m.truth);
  return o;
}

}  // namespace

std::optional<double> config_number(const v1::RunConfig& config, const std::string& path) {
  using google::protobuf::FieldDescriptor;
  const google::protobuf::Message* message = &config;
  std::stringstream parts(path);
  std::string part;
  std::vector<std::string> names;
  while (std::getline(parts, part, '.')) names.push_back(part);
  if (names.empty()) throw ConfigError("config field path is empty");
  for (std::size_t i = 0; i < names.size(); ++i) {
    const auto* field = message->GetDescriptor()->FindFieldByName(names[i]);
    if (!field)
      throw ConfigError("config field '" + path + "': " + message->GetDescriptor()->full_name() +
                        " has no field '" + names[i] + "'");
    if (field->is_repeated())
      throw ConfigError("config field '" + path + "': '" + names[i] + "' is a repeated field");
    const auto* reflection = message->GetReflection();
    const bool last = i + 1 == names.size();
    if (!last) {
      if (field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE)
        throw ConfigError("config field '" + path + "': '" + names[i] + "' is not a message");
      if (!reflection->HasField(*message, field)) return std::nullopt;
      message = &reflection->GetMessage(*message, field);
      continue;
    }
    if (field->has_presence() && !reflection->HasField(*message, field)) return std::nullopt;
    switch (field->cpp_type()) {
      case FieldDescriptor::CPPTYPE_INT32: return reflection->GetInt32(*message, field);
      case FieldDescriptor::CPPTYPE_INT64:
        return static_cast<double>(reflection->GetInt64(*message, field));
      case FieldDescriptor::CPPTYPE_UINT32: return reflection->GetUInt32(*message, field);
      case FieldDescriptor::CPPTYPE_UINT64:
        return static_cast<double>(reflection->GetUInt64(*message, field));
      case FieldDescriptor::CPPTYPE_DOUBLE: return reflection->GetDouble(*message, field);
      case FieldDescriptor::CPPTYPE_FLOAT: return reflection->GetFloat(*message, field);
      default:
        throw ConfigError("config field '" + path + "' is not numeric");
    }
  }
  return std::nullopt;
}

namespace {

// The chains sorted into groups (in order of first appearance), each chain either a member or
// excluded with its reason.
struct Grouping {
  std::vector<std::string> order;
  std::map<std::string, std::vector<const ComparedChain*>> members;
  std::map<std::string, std::vector<ExcludedChain>> excluded;
};

Grouping group_chains(const std::vector<ComparedChain>& chains, const CompareOptions& options,
                      std::vector<std::string>& notes) {
  Grouping gr;
  std::set<std::tuple<std::string, std::string, std::uint64_t, int>> seen;
  for (const auto& c : chains) {
    const std::string key = group_key(c, options.by);
    if (!gr.members.count(key) && !gr.excluded.count(key)) gr.order.push_back(key);
    if (!seen.insert({key, c.summary.run_id, c.summary.seed, c.summary.chain_id}).second)
      notes.push_back(fmt::format(
          "group '{}': chain {} (seed {}) of run '{}' appears more than once (the same file given "
          "twice, or overlapping task ranges): it is counted each time",
          key, c.summary.chain_id, c.summary.seed, c.summary.run_id));
    const auto& s = c.summary;
    std::string reason;
    if (!options.include_incomplete && s.status != "ok")
      reason = "status: " + s.status;
    else if (s.n_draws == 0 || !s.mean.allFinite() || !s.second_moment.allFinite())
      reason = "no usable draws (no positive weight)";
    else if (auto it = gr.members.find(key);
             it != gr.members.end() && !it->second.empty() &&
             it->second.front()->summary.mean.size() != s.mean.size())
      reason = fmt::format("dimension {} differs from the group's {}", s.mean.size(),
                           it->second.front()->summary.mean.size());
    if (!reason.empty())
      gr.excluded[key].push_back({c.file, s.chain_id, reason});
    else
      gr.members[key].push_back(&c);
  }
  return gr;
}

std::string joined(const std::set<std::string>& s) {
  std::string r;
  for (const auto& x : s) r += (r.empty() ? "" : ", ") + x;
  return r;
}

// The group's truth when all its chains share one; null otherwise, with a note when some chain
// had a truth (the chains' truths differ, or only some chains have one).
const targets::Truth* group_truth(const std::vector<const ComparedChain*>& ms,
                                  const std::string& key, std::vector<std::string>& notes) {
  const targets::Truth* truth = nullptr;
  bool consistent = true;
  for (const auto* c : ms) {
    if (!c->truth) {
      consistent = false;
      break;
    }
    if (!truth)
      truth = &*c->truth;
    else if (!same_truth(*truth, *c->truth))
      consistent = false;
  }
  if (consistent) return truth;
  if (truth) notes.push_back("group '" + key + "' mixes targets: no RMSE against truth");
  return nullptr;
}

// Mean cost per chain, the moments over chains with their RMSE against the truth, and MSE x cost.
void add_moments_and_cost(CompareGroup& g, const std::vector<const ComparedChain*>& ms,
                          const targets::Truth* truth) {
  std::vector<const Vector*> means, seconds;
  double n = static_cast<double>(ms.size());
  for (const auto* c : ms) {
    means.push_back(&c->summary.mean);
    seconds.push_back(&c->summary.second_moment);
    g.wall_seconds_mean += c->summary.wall_seconds / n;
    g.n_gradient_evals_mean += static_cast<double>(c->summary.n_gradient_evals) / n;
    g.n_extended_gradient_evals_mean +=
        static_cast<double>(c->summary.n_extended_gradient_evals) / n;
    g.n_draws_mean += static_cast<double>(c->summary.n_draws) / n;
    g.kish_ess_mean += c->summary.kish_ess / n;
  }
  moment_stats(means, truth && truth->mean ? &*truth->mean : nullptr, g.mean, g.rmse_all_mean);
  moment_stats(seconds, truth && truth->second_moment ? &*truth->second_moment : nullptr,
               g.second_moment, g.rmse_all_second_moment);
  if (g.rmse_all_mean) {
    g.mse_x_time_mean = *g.rmse_all_mean * *g.rmse_all_mean * g.wall_seconds_mean;
    g.mse_x_grad_evals_mean = *g.rmse_all_mean * *g.rmse_all_mean * g.n_gradient_evals_mean;
  }
  if (g.rmse_all_second_moment) {
    const double mse = *g.rmse_all_second_moment * *g.rmse_all_second_moment;
    g.mse_x_time_second_moment = mse * g.wall_seconds_mean;
    g.mse_x_grad_evals_second_moment = mse * g.n_gradient_evals_mean;
  }
  if (truth) g.truth_log_z = truth->log_z;
}

// Chains that finished with warnings (e.g. degenerate pseudo-extended weights): one note per kind
// (the text before its first ':'), so a comparison never hides them.
void note_warnings(const std::vector<const ComparedChain*>& ms, const std::string& key,
                   std::vector<std::string>& notes) {
  std::map<std::string, int> warned;
  for (const auto* c : ms) {
    std::set<std::string> kinds;  // a chain with two warnings of one kind counts once
    for (const auto& w : c->summary.warnings) kinds.insert(w.substr(0, w.find(':')));
    for (const auto& k : kinds) ++warned[k];
  }
  for (const auto& [kind, count] : warned)
    notes.push_back(fmt::format("group '{}': {} of {} chains warn: {} (pemc-report summarize "
                                "or diagnose shows why)",
                                key, count, ms.size(), kind));
}

// Every sampler estimate over the group's chains: spread, RMSE against the truth, the chains' own
// SEs (<name>_se) and, for log Z, how many chains flagged theirs untrusted.
void add_estimates(CompareGroup& g, const std::vector<const ComparedChain*>& ms,
                   const targets::Truth* truth, std::vector<std::string>& notes) {
  std::map<std::string, std::vector<double>> values, ses;
  for (const auto* c : ms)
    for (const auto& [name, v] : c->summary.estimates) {
      values[name].push_back(v);
      const auto se = c->summary.estimates.find(name + "_se");
      ses[name].push_back(se != c->summary.estimates.end() ? se->second : kNaN);
    }
  for (const auto& [name, vs] : values) {
    EstimateStats e = scalar_stats(vs);
    if (truth) e.truth = estimate_truth(*truth, name);
    if (e.truth && e.n > 0) {
      double mse = 0;
      for (double v : vs)
        if (std::isfinite(v)) mse += (v - *e.truth) * (v - *e.truth) / e.n;
      e.rmse = std::sqrt(mse);
    }
    standard_error_stats(vs, ses.at(name), e);
    if (name == "log_z" || name == "log_z_ratio") {
      e.n_untrusted = 0;
      e.n_unchecked = 0;
      for (const auto* c : ms) {
        const bool untrusted = estimators::log_z_untrusted(c->summary.estimates);
        *e.n_untrusted += untrusted;
        *e.n_unchecked += !untrusted && estimators::log_z_unchecked(c->summary.estimates);
      }
    }
    if (e.n_nonfinite > 0)
      notes.push_back(fmt::format("group '{}': estimate {} is not finite in {} chain(s)", g.key,
                                  name, e.n_nonfinite));
    g.estimates[name] = e;
  }
}

void add_held_out_lpd(CompareGroup& g, const std::vector<const ComparedChain*>& ms,
                      std::vector<std::string>& notes) {
  std::vector<double> lpds;
  for (const auto* c : ms)
    if (c->summary.held_out_lpd) lpds.push_back(*c->summary.held_out_lpd);
  if (lpds.empty()) return;
  g.held_out_lpd = scalar_stats(lpds);
  if (g.held_out_lpd->n_nonfinite > 0)
    notes.push_back(fmt::format("group '{}': held_out_lpd is not finite in {} chain(s)", g.key,
                                g.held_out_lpd->n_nonfinite));
  if (lpds.size() != ms.size())
    notes.push_back(fmt::format("group '{}': held_out_lpd known for {} of {} chains", g.key,
                                lpds.size(), ms.size()));
}

CompareGroup compare_group(const std::string& key, const std::vector<const ComparedChain*>& ms,
                           std::vector<ExcludedChain> excluded, std::vector<std::string>& notes) {
  CompareGroup g;
  g.key = key;
  g.excluded = std::move(excluded);
  g.n_chains = static_cast<int>(ms.size());
  std::set<std::string> samplers, targets, files;
  for (const auto* c : ms) {
    samplers.insert(c->summary.sampler);
    targets.insert(c->summary.target);
    files.insert(c->file);
  }
  g.sampler = joined(samplers);
  g.target = joined(targets);
  g.files.assign(files.begin(), files.end());
  if (ms.empty()) {
    notes.push_back("group '" + key + "': every chain was excluded");
    return g;
  }
  g.config = ms.front()->config;
  g.dim = static_cast<int>(ms.front()->summary.mean.size());
  g.names = ms.front()->summary.names;
  const targets::Truth* truth = group_truth(ms, key, notes);
  add_moments_and_cost(g, ms, truth);
  note_warnings(ms, key, notes);
  add_estimates(g, ms, truth, notes);
  add_held_out_lpd(g, ms, notes);
  if (!g.excluded.empty())
    notes.push_back(fmt::format("group '{}': {} chain(s) excluded (see \"excluded\")", key,
                                g.excluded.size()));
  return g;
}

}  // namespace

Comparison compare_chains(const std::vector<ComparedChain>& chains, const CompareOptions& options) {
  if (options.by != "run_id" && options.by != "sampler" && options.by != "target" &&
      options.by != "file")
    throw ConfigError("compare --by '" + options.by + "': expected run_id, sampler, target or file");
  Comparison out;
  out.by = options.by;
  Grouping gr = group_chains(chains, options, out.notes);
  for (const auto& key : gr.order)
    out.groups.push_back(compare_group(key, gr.members[key], gr.excluded[key], out.notes));
  return out;
}

Comparison compare_files(const std::vector<std::filesystem::path>& paths,
                         const CompareOptions& options) {
  RunTargets targets(options.target_config);
  std::vector<ComparedChain> chains;
  std::vector<std::string> notes;
  for (const auto& path : paths) {
    SummarizeOptions so;
    // Errors are formed here, from each run's recorded truth; summarize still forms the held-out
    // lpd of targets with a test set (with --config).
    so.with_truth = options.with_truth;
    so.truth_errors = false;
    so.target_config = options.target_config;
    const FileSummary fs = summarize_file(path, so);
    if (!fs.lpd_note.empty()) notes.push_back(path.string() + ": " + fs.lpd_note);
    if (fs.problem)
      notes.push_back(fmt::format("{}: damaged at byte {} ({}); used the {} records before it",
                                  path.string(), fs.problem->offset, fs.problem->message,
                                  fs.n_records));
    else if (!fs.has_footer)
      notes.push_back(path.string() + ": no footer (the run did not finish)");
    const v1::Header header = read_header(path);
    std::set<std::string> noted;
    std::map<std::string, targets::Truth> truth_of_run;
    for (const auto& r : fs.runs) {
      ComparedChain c;
      c.summary = r;
      c.file = path.string();
      c.config = run_meta(header, r.run_id).config;
      if (options.with_truth && c.config.has_target()) {
        try {
          auto it = truth_of_run.find(r.run_id);
          if (it == truth_of_run.end())
            it = truth_of_run.emplace(r.run_id, targets.truth(header, r.run_id)).first;
          c.truth = it->second;
        } catch (const std::exception& e) {
          if (noted.insert(r.run_id).second)
            notes.push_back(path.string() + ": run '" + r.run_id +
                            "': truth not available: " + e.what());
        }
      }
      chains.push_back(std::move(c));
    }
  }
  Comparison out = compare_chains(chains, options);
  out.notes.insert(out.notes.begin(), notes.begin(), notes.end());
  return out;
}

std::string comparison_to_json(const Comparison& c) {
  J j;
  j["by"] = c.by;
  j["groups"] = J::array();
  for (const auto& g : c.groups) {
    J o;
    o["key"] = g.key;
    o["sampler"] = g.sampler;
    o["target"] = g.target;
    o["dim"] = g.dim;
    o["names"] = g.names;
    o["n_chains"] = g.n_chains;
    o["files"] = g.files;
    o["excluded"] = J::array();
    for (const auto& e : g.excluded)
      o["excluded"].push_back({{"file", e.file}, {"chain_id", e.chain_id}, {"reason", e.reason}});
    o["mean"] = moment_json(g.mean);
    o["second_moment"] = moment_json(g.second_moment);
    if (g.rmse_all_mean || g.rmse_all_second_moment) {
      o["rmse_all"] = J::object();
      if (g.rmse_all_mean) o["rmse_all"]["mean"] = number(*g.rmse_all_mean);
      if (g.rmse_all_second_moment)
        o["rmse_all"]["second_moment"] = number(*g.rmse_all_second_moment);
    }
    o["wall_seconds_mean"] = number(g.wall_seconds_mean);
    o["n_gradient_evals_mean"] = number(g.n_gradient_evals_mean);
    o["n_extended_gradient_evals_mean"] = number(g.n_extended_gradient_evals_mean);
    o["n_draws_mean"] = number(g.n_draws_mean);
    o["kish_ess_mean"] = number(g.kish_ess_mean);
    if (g.mse_x_time_mean || g.mse_x_time_second_moment) {
      o["mse_x_time"] = J::object();
      o["mse_x_grad_evals"] = J::object();
      if (g.mse_x_time_mean) {
        o["mse_x_time"]["mean"] = number(*g.mse_x_time_mean);
        o["mse_x_grad_evals"]["mean"] = number(*g.mse_x_grad_evals_mean);
      }
      if (g.mse_x_time_second_moment) {
        o["mse_x_time"]["second_moment"] = number(*g.mse_x_time_second_moment);
        o["mse_x_grad_evals"]["second_moment"] = number(*g.mse_x_grad_evals_second_moment);
      }
    }
    o["estimates"] = J::object();
    for (const auto& [name, e] : g.estimates) {
      J eo;
      eo["n"] = e.n;
      eo["mean"] = number(e.mean);
      eo["sd"] = number(e.sd);
      eo["n_nonfinite"] = e.n_nonfinite;
      if (e.truth) eo["truth"] = number(*e.truth);
      if (e.rmse) eo["rmse"] = number(*e.rmse);
      if (e.se_mean) eo["se_mean"] = number(*e.se_mean);
      if (e.rms_z) eo["rms_z"] = number(*e.rms_z);
      if (e.n_untrusted) eo["n_untrusted"] = *e.n_untrusted;
      if (e.n_unchecked) eo["n_unchecked"] = *e.n_unchecked;
      o["estimates"][name] = std::move(eo);
    }
    if (g.held_out_lpd) {
      const auto& e = *g.held_out_lpd;
      o["held_out_lpd"] = {{"n", e.n}, {"mean", number(e.mean)}, {"sd", number(e.sd)},
                           {"n_nonfinite", e.n_nonfinite}};
    }
    if (g.truth_log_z) o["truth_log_z"] = number(*g.truth_log_z);
    j["groups"].push_back(std::move(o));
  }
  j["notes"] = c.notes;
  return j.dump(2) + "\n";
}

namespace {

// The Stan name of quantity i in a comparison's tables: the first group's that has one (groups of
// one target share their names; groups of different targets are columns by position).
std::string quantity_name(const Comparison& c, int i) {
  for (const auto& g : c.groups)
    if (i < static_cast<int>(g.names.size())) return g.names[static_cast<std::size_t>(i)];
  return coordinate_name(i);
}

}  // namespace

namespace {

// What the markdown tables show: how many quantities, which estimates and columns, and the truth
// row's group (when every group with a truth shares it).
struct MarkdownLayout {
  int shown = 0, max_dim = 0;
  bool any_truth = false, one_truth = true, any_lpd = false, same_dim = true;
  const CompareGroup* truth_group = nullptr;
  std::vector<std::string> est_names;
  std::string more;  // " (all N)" after the RMSE-over-all headers when quantities are cut
};

MarkdownLayout markdown_layout(const Comparison& c, const CompareOptions& options) {
  MarkdownLayout l;
  for (const auto& g : c.groups) {
    l.max_dim = std::max(l.max_dim, g.dim);
    l.any_truth = l.any_truth || g.mean.truth.size() > 0;
    if (g.mean.truth.size() == 0) continue;
    if (!l.truth_group)
      l.truth_group = &g;
    else if (l.truth_group->mean.truth.size() != g.mean.truth.size() ||
             l.truth_group->mean.truth != g.mean.truth ||
             l.truth_group->second_moment.truth != g.second_moment.truth)
      l.one_truth = false;
  }
  l.shown = std::min(options.show_coordinates, l.max_dim);
  for (const auto& name : options.show_estimates)
    for (const auto& g : c.groups)
      if (g.estimates.count(name)) {
        l.est_names.push_back(name);
        break;
      }
  for (const auto& g : c.groups) l.any_lpd = l.any_lpd || g.held_out_lpd.has_value();
  for (const auto& g : c.groups) l.same_dim = l.same_dim && (g.dim == l.max_dim || g.n_chains == 0);
  l.more = l.max_dim > l.shown
               ? (l.same_dim ? fmt::format(" (all {})", l.max_dim) : std::string(" (all)"))
               : "";
  return l;
}

void markdown_row(std::string& out, const std::vector<std::string>& cells) {
  out += "|";
  for (const auto& cell : cells) out += " " + cell + " |";
  out += "\n";
}

// Table 1: estimates, mean ± sd over chains (the arXiv version's layout), after a truth row.
void markdown_estimates_table(const Comparison& c, const MarkdownLayout& l, std::string& out) {
  std::vector<std::string> head{c.by == "run_id" ? "run" : c.by, "sampler", "chains"};
  for (int i = 0; i < l.shown; ++i) head.push_back(fmt::format("E[{}]", quantity_name(c, i)));
  for (int i = 0; i < l.shown; ++i) head.push_back(fmt::format("E[{}²]", quantity_name(c, i)));
  for (const auto& n : l.est_names) head.push_back(n);
  if (l.any_lpd) head.push_back("held-out lpd");
  head.insert(head.end(), {"wall s", "target grads"});
  markdown_row(out, head);
  markdown_row(out, std::vector<std::string>(head.size(), "---"));
  if (l.any_truth && l.one_truth) {
    // The truth row, when every group with a truth shares it (one target, several samplers).
    const CompareGroup& g = *l.truth_group;
    std::vector<std::string> cells{"*truth*", "", ""};
    for (int i = 0; i < l.shown; ++i) cells.push_back(i < g.dim ? num(g.mean.truth[i]) : "");
    for (int i = 0; i < l.shown; ++i)
      cells.push_back(i < g.second_moment.truth.size() ? num(g.second_moment.truth[i]) : "");
    for (const auto& n : l.est_names) {
      auto it = g.estimates.find(n);
      cells.push_back(it != g.estimates.end() && it->second.truth ? num(*it->second.truth) : "");
    }
    if (l.any_lpd) cells.push_back("");
    cells.insert(cells.end(), {"", ""});
    markdown_row(out, cells);
  }
  for (const auto& g : c.groups) {
    std::vector<std::string> cells{g.key, g.sampler, std::to_string(g.n_chains)};
    for (int i = 0; i < l.shown; ++i)
      cells.push_back(i < g.dim ? pm(g.mean.mean[i], g.mean.sd[i]) : "");
    for (int i = 0; i < l.shown; ++i)
      cells.push_back(i < g.dim ? pm(g.second_moment.mean[i], g.second_moment.sd[i]) : "");
    for (const auto& n : l.est_names) {
      auto it = g.estimates.find(n);
      cells.push_back(it != g.estimates.end() ? estimate_cell(it->second) : "");
    }
    if (l.any_lpd)
      cells.push_back(g.held_out_lpd ? pm(g.held_out_lpd->mean, g.held_out_lpd->sd) : "");
    cells.push_back(num(g.wall_seconds_mean));
    cells.push_back(num(g.n_gradient_evals_mean));
    markdown_row(out, cells);
  }
}

// Table 2: RMSE against the truth over chains (the NeurIPS version's layout) and cost.
void markdown_rmse_table(const Comparison& c, const MarkdownLayout& l, std::string& out) {
  out += "\nRMSE against the exact truth over chains; MSE x cost uses the RMSE over all " +
         std::string("coordinates") + ":\n\n";
  std::vector<std::string> h{c.by == "run_id" ? "run" : c.by, "chains"};
  for (int i = 0; i < l.shown; ++i) h.push_back(fmt::format("E[{}]", quantity_name(c, i)));
  for (int i = 0; i < l.shown; ++i) h.push_back(fmt::format("E[{}²]", quantity_name(c, i)));
  h.push_back("E[x]" + l.more);
  h.push_back("E[x²]" + l.more);
  for (const auto& n : l.est_names) h.push_back(n);
  h.insert(h.end(), {"MSE×s E[x]", "MSE×s E[x²]", "MSE×target grads E[x]"});
  markdown_row(out, h);
  markdown_row(out, std::vector<std::string>(h.size(), "---"));
  for (const auto& g : c.groups) {
    std::vector<std::string> cells{g.key, std::to_string(g.n_chains)};
    for (int i = 0; i < l.shown; ++i)
      cells.push_back(i < g.mean.rmse.size() ? num(g.mean.rmse[i]) : "—");
    for (int i = 0; i < l.shown; ++i)
      cells.push_back(i < g.second_moment.rmse.size() ? num(g.second_moment.rmse[i]) : "—");
    cells.push_back(opt_num(g.rmse_all_mean));
    cells.push_back(opt_num(g.rmse_all_second_moment));
    for (const auto& n : l.est_names) {
      auto it = g.estimates.find(n);
      std::string cell = it != g.estimates.end() ? opt_num(it->second.rmse) : "—";
      if (it != g.estimates.end() && it->second.rms_z)
        cell += " (rms z " + num(*it->second.rms_z) + ")";
      cells.push_back(cell);
    }
    cells.push_back(opt_num(g.mse_x_time_mean));
    cells.push_back(opt_num(g.mse_x_time_second_moment));
    cells.push_back(opt_num(g.mse_x_grad_evals_mean));
    markdown_row(out, cells);
  }
}

}  // namespace

std::string comparison_to_markdown(const Comparison& c, const CompareOptions& options) {
  const MarkdownLayout l = markdown_layout(c, options);
  std::string out;
  if (l.shown < l.max_dim)
    out += fmt::format("Showing the first {} of {} quantities (--coords N shows more; the RMSE "
                       "over all and --format json cover every one).\n\n",
                       l.shown,
                       l.same_dim ? std::to_string(l.max_dim) : "up to " + std::to_string(l.max_dim));
  markdown_estimates_table(c, l, out);
  if (l.any_truth && !l.one_truth)
    out += "\n(no truth row: the groups have different targets; the RMSE table below compares "
           "each with its own)\n";
  if (l.any_truth) markdown_rmse_table(c, l, out);
  if (!c.notes.empty()) {
    out += "\n";
    for (const auto& n : c.notes) out += "- note: " + n + "\n";
  }
  return out;
}

std::string comparison_to_csv(const Comparison& c, const CompareOptions& options) {
  int max_dim = 0;
  std::set<std::string> est_names;
  bool any_lpd = false;
  for (const auto& g : c.groups) {
    any_lpd = any_lpd || g.held_out_lpd.has_value();
    max_dim = std::max(max_dim, g.dim);
    for (const auto& [name, e] : g.estimates) est_names.insert(name);
  }
  const int shown = std::min(options.show_coordinates, max_dim);
  std::vector<std::string> head{"key",
                                "sampler",
                                "target",
                                "dim",
                                "n_chains",
                                "n_excluded",
                                "wall_seconds_mean",
                                "n_gradient_evals_mean",
                                "n_extended_gradient_evals_mean",
                                "n_draws_mean",
                                "kish_ess_mean",
                                "rmse_all_mean",
                                "rmse_all_second_moment",
                                "mse_x_time_mean",
                                "mse_x_time_second_moment",
                                "mse_x_grad_evals_mean",
                                "mse_x_grad_evals_second_moment"};
  for (int i = 0; i < shown; ++i)
    for (const char* m : {"mean", "second_moment"})
      for (const char* s : {"mean", "sd", "rmse", "truth"})
        head.push_back(fmt::format("{}_{}_{}", m, s, quantity_name(c, i)));
  for (const auto& name : est_names)
    for (const char* s : {"mean", "sd", "n", "truth", "rmse", "se_mean", "rms_z", "n_untrusted"})
      head.push_back(fmt::format("estimate_{}_{}", name, s));
  if (any_lpd)
    for (const char* s : {"mean", "sd", "n"}) head.push_back(fmt::format("held_out_lpd_{}", s));
  std::string out;
  for (std::size_t i = 0; i < head.size(); ++i) out += (i ? "," : "") + head[i];
  out += "\n";
  auto opt = [](const std::optional<double>& x) { return x ? csv_num(*x) : std::string(); };
  auto at = [](const Vector& v, int i) { return i < v.size() ? csv_num(v[i]) : std::string(); };
  for (const auto& g : c.groups) {
    std::vector<std::string> cells{csv_field(g.key),
                                   csv_field(g.sampler),
                                   csv_field(g.target),
                                   std::to_string(g.dim),
                                   std::to_string(g.n_chains),
                                   std::to_string(g.excluded.size()),
                                   csv_num(g.wall_seconds_mean),
                                   csv_num(g.n_gradient_evals_mean),
                                   csv_num(g.n_extended_gradient_evals_mean),
                                   csv_num(g.n_draws_mean),
                                   csv_num(g.kish_ess_mean),
                                   opt(g.rmse_all_mean),
                                   opt(g.rmse_all_second_moment),
                                   opt(g.mse_x_time_mean),
                                   opt(g.mse_x_time_second_moment),
                                   opt(g.mse_x_grad_evals_mean),
                                   opt(g.mse_x_grad_evals_second_moment)};
    for (int i = 0; i < shown; ++i)
      for (const MomentStats* m : {&g.mean, &g.second_moment}) {
        cells.push_back(at(m->mean, i));
        cells.push_back(at(m->sd, i));
        cells.push_back(at(m->rmse, i));
        cells.push_back(at(m->truth, i));
      }
    for (const auto& name : est_names) {
      auto it = g.estimates.find(name);
      if (it == g.estimates.end()) {
        cells.insert(cells.end(), 8, "");
        continue;
      }
      const auto& e = it->second;
      cells.insert(cells.end(), {csv_num(e.mean), csv_num(e.sd), std::to_string(e.n), opt(e.truth),
                                 opt(e.rmse), opt(e.se_mean), opt(e.rms_z),
                                 e.n_untrusted ? std::to_string(*e.n_untrusted) : ""});
    }
    if (any_lpd) {
      if (g.held_out_lpd)
        cells.insert(cells.end(), {csv_num(g.held_out_lpd->mean), csv_num(g.held_out_lpd->sd),
                                   std::to_string(g.held_out_lpd->n)});
      else
        cells.insert(cells.end(), 3, "");
    }
    for (std::size_t i = 0; i < cells.size(); ++i) out += (i ? "," : "") + cells[i];
    out += "\n";
  }
  return out;
}

}  // namespace pemc::report
