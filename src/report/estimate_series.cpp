#include "report/estimate_series.hpp"

#include "report/quantities.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "core/error.hpp"
#include "pemc/v1/records.pb.h"
#include "records/record_reader.hpp"
#include "report/checked_reader.hpp"

namespace pemc::report {

namespace fs = std::filesystem;
namespace v1 = pemc::v1;

std::vector<EstimateSeries> read_estimate_series(const std::vector<fs::path>& files,
                                                 const std::string& estimate,
                                                 const std::string& run_filter) {
  std::vector<EstimateSeries> out;
  std::set<std::string> seen_names;
  for (const auto& file : files) {
    CheckedRecordReader reader(file);
    v1::Record record;
    std::map<std::pair<std::string, int>, EstimateSeries> by_chain;
    while (reader.next(record)) {
      if (!record.has_estimates()) continue;
      const auto& s = record.estimates();
      if (!run_filter.empty() && s.run_id() != run_filter) continue;
      for (const auto& [name, value] : s.estimates()) seen_names.insert(name);
      const auto it = s.estimates().find(estimate);
      if (it == s.estimates().end()) continue;
      auto& series = by_chain[{s.run_id(), s.chain_id()}];
      series.run_id = s.run_id();
      series.chain_id = s.chain_id();
      series.seed = s.seed();
      series.iteration.push_back(static_cast<double>(s.iteration()));
      series.wall_seconds.push_back(s.wall_seconds());
      series.n_gradient_evals.push_back(static_cast<double>(s.n_gradient_evals()));
      series.value.push_back(it->second);
    }
    for (auto& [key, series] : by_chain) out.push_back(std::move(series));
  }
  if (out.empty()) {
    std::string names;
    for (const auto& n : seen_names) names += (names.empty() ? "" : ", ") + n;
    throw DataError("no running estimate '" + estimate + "' in the files" +
                    (names.empty() ? std::string(" (they hold no EstimatesSnapshot records: run "
                                                 "with output.estimates_every > 0)")
                                   : "; they have: " + names));
  }
  return out;
}

std::vector<TemperingSchedule> read_schedules(const std::vector<fs::path>& files,
                                              const std::string& run_filter) {
  std::vector<TemperingSchedule> out;
  for (const auto& file : files) {
    CheckedRecordReader reader(file);
    v1::Record record;
    while (reader.next(record)) {
      if (!record.has_footer()) continue;
      for (const auto& c : record.footer().chains()) {
        if (!run_filter.empty() && c.run_id() != run_filter) continue;
        const auto& e = c.estimates();
        TemperingSchedule s;
        s.run_id = c.run_id();
        s.chain_id = c.chain_id();
        for (int i = 0;; ++i) {
          const auto b = e.find("beta_" + std::to_string(i));
          if (b == e.end()) break;
          s.betas.push_back(b->second);
        }
        if (s.betas.size() < 2) continue;
        s.barrier.push_back(0.0);
        for (std::size_t i = 0; i + 1 < s.betas.size(); ++i) {
          const auto a = e.find("swap_accept_" + std::to_string(i));
          if (a == e.end()) throw DataError(file.string() + ": chain " + std::to_string(c.chain_id()) +
                                            " reports beta_" + std::to_string(i + 1) +
                                            " but no swap_accept_" + std::to_string(i));
          s.barrier.push_back(s.barrier.back() + (1.0 - a->second));
        }
        out.push_back(std::move(s));
      }
    }
  }
  if (out.empty())
    throw DataError("no tempering schedule in the files (no chain's footer reports beta_0, "
                    "beta_1, ...: parallel tempering runs do)");
  return out;
}

namespace {

// The columns of a vector of d entries and a packed upper triangle (records.proto).
// Coordinates by their Stan names (report/quantities.hpp): mean_x[1], cov_x[1]_x[2].
void moment_header(std::ostream& out, const std::string& prefix, int d) {
  for (int i = 0; i < d; ++i) out << ',' << prefix << "mean_" << coordinate_name(i);
  for (int i = 0; i < d; ++i)
    for (int j = i; j < d; ++j)
      out << ',' << prefix << "cov_" << coordinate_name(i) << '_' << coordinate_name(j);
}

void moment_cells(std::ostream& out, const google::protobuf::RepeatedField<double>& mean,
                  const google::protobuf::RepeatedField<double>& cov, int d) {
  const int n_cov = d * (d + 1) / 2;
  for (int i = 0; i < d; ++i) {
    out << ',';
    if (mean.size() == d) out << fmt::format("{:.17g}", mean[i]);
  }
  for (int k = 0; k < n_cov; ++k) {
    out << ',';
    if (cov.size() == n_cov && mean.size() == d) out << fmt::format("{:.17g}", cov[k]);
  }
}

}  // namespace

std::int64_t export_estimates_csv(const fs::path& path, std::ostream& out, bool moments) {
  // Two passes: the columns are the union of the names, known only at the end.
  std::set<std::string> names;
  int d = 0;
  {
    CheckedRecordReader reader(path);
    v1::Record record;
    while (reader.next(record))
      if (record.has_estimates()) {
        for (const auto& [name, value] : record.estimates().estimates()) names.insert(name);
        d = std::max({d, record.estimates().mean_size(), record.estimates().base().mean_size()});
      }
  }
  out << "run_id,chain_id,seed,iteration,wall_seconds,n_gradient_evals";
  for (const auto& n : names) out << ',' << n;
  if (moments) {
    moment_header(out, "", d);
    moment_header(out, "base_", d);
    out << ",base_log_zeta";
  }
  out << '\n';
  CheckedRecordReader reader(path);
  v1::Record record;
  std::int64_t rows = 0;
  while (reader.next(record)) {
    if (!record.has_estimates()) continue;
    const auto& s = record.estimates();
    out << s.run_id() << ',' << s.chain_id() << ',' << s.seed() << ',' << s.iteration() << ','
        << fmt::format("{:.17g}", s.wall_seconds()) << ',' << s.n_gradient_evals();
    for (const auto& n : names) {
      out << ',';
      if (const auto it = s.estimates().find(n); it != s.estimates().end())
        out << fmt::format("{:.17g}", it->second);
    }
    if (moments) {
      moment_cells(out, s.mean(), s.covariance(), d);
      moment_cells(out, s.base().mean(), s.base().covariance(), d);
      out << ',';
      if (s.base().has_log_zeta()) out << fmt::format("{:.17g}", s.base().log_zeta());
    }
    out << '\n';
    ++rows;
  }
  return rows;
}

}  // namespace pemc::report
