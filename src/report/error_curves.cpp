#include "report/error_curves.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "core/error.hpp"
#include "pemc/v1/records.pb.h"
#include "records/record_reader.hpp"
#include "report/checked_reader.hpp"
#include "report/diagnostics_traces.hpp"
#include "report/run_targets.hpp"

namespace pemc::report {

namespace fs = std::filesystem;
namespace v1 = pemc::v1;

ErrorQuantity parse_error_quantity(const std::string& name) {
  if (name == "log_z") return ErrorQuantity::kLogZ;
  if (name == "mean") return ErrorQuantity::kMean;
  if (name == "covariance") return ErrorQuantity::kCovariance;
  throw ConfigError("unknown estimate '" + name + "' for errors (log_z, mean or covariance)");
}

Normalise parse_normalise(const std::string& name) {
  if (name == "none") return Normalise::kNone;
  if (name == "base") return Normalise::kBase;
  throw ConfigError("unknown normalisation '" + name + "' (none or base)");
}

std::string quantity_name(ErrorQuantity q) {
  switch (q) {
    case ErrorQuantity::kLogZ: return "log_z";
    case ErrorQuantity::kMean: return "mean";
    case ErrorQuantity::kCovariance: return "covariance";
  }
  return "?";
}

double rmse(std::span<const double> a, std::span<const double> b) {
  if (a.size() != b.size() || a.empty())
    throw DataError(fmt::format("rmse: sizes {} and {}", a.size(), b.size()));
  double s = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) s += (a[i] - b[i]) * (a[i] - b[i]);
  return std::sqrt(s / static_cast<double>(a.size()));
}

Matrix unpack_upper(std::span<const double> packed, int d) {
  const auto n = static_cast<std::size_t>(d) * static_cast<std::size_t>(d + 1) / 2;
  if (packed.size() != n)
    throw DataError(fmt::format("packed covariance: {} numbers, expected {} for dimension {}",
                                packed.size(), n, d));
  Matrix c(d, d);
  std::size_t k = 0;
  for (int i = 0; i < d; ++i)
    for (int j = i; j < d; ++j) c(i, j) = c(j, i) = packed[k++];
  return c;
}

std::optional<double> estimate_error(ErrorQuantity q, double log_z, std::span<const double> mean,
                                     std::span<const double> covariance,
                                     const ExactMoments& exact) {
  switch (q) {
    case ErrorQuantity::kLogZ:
      if (!exact.log_z || std::isnan(log_z)) return std::nullopt;
      return std::abs(log_z - *exact.log_z);
    case ErrorQuantity::kMean:
      if (!exact.mean || mean.empty()) return std::nullopt;
      return rmse(mean, {exact.mean->data(), static_cast<std::size_t>(exact.mean->size())});
    case ErrorQuantity::kCovariance: {
      if (!exact.covariance || covariance.empty()) return std::nullopt;
      const Matrix c = unpack_upper(covariance, static_cast<int>(exact.covariance->rows()));
      return rmse({c.data(), static_cast<std::size_t>(c.size())},
                  {exact.covariance->data(), static_cast<std::size_t>(exact.covariance->size())});
    }
  }
  return std::nullopt;
}

std::optional<double> snapshot_error(ErrorQuantity q, const v1::EstimatesSnapshot& s,
                                     const ExactMoments& exact) {
  const auto it = s.estimates().find("log_z");
  const double log_z = it == s.estimates().end() ? std::nan("") : it->second;
  return estimate_error(q, log_z, {s.mean().data(), static_cast<std::size_t>(s.mean_size())},
                        {s.covariance().data(), static_cast<std::size_t>(s.covariance_size())},
                        exact);
}

std::optional<double> base_error(ErrorQuantity q, const v1::BaseMoments& b,
                                 const ExactMoments& exact) {
  return estimate_error(q, b.has_log_zeta() ? b.log_zeta() : std::nan(""),
                        {b.mean().data(), static_cast<std::size_t>(b.mean_size())},
                        {b.covariance().data(), static_cast<std::size_t>(b.covariance_size())},
                        exact);
}

ExactMoments exact_moments(const v1::Header& header, const std::string& run_id) {
  ExactMoments out;
  try {
    // As pemc-dist recorded it in the header (report/run_targets.hpp).
    const auto truth = RunTargets().truth(header, run_id);
    out.log_z = truth.log_z;
    out.mean = truth.mean;
    if (truth.mean && truth.cross_moment)
      out.covariance = *truth.cross_moment - *truth.mean * truth.mean->transpose();
  } catch (const std::exception&) {
    // No truth (e.g. data files not found from here): the caller leaves the run out.
  }
  return out;
}

std::vector<ChainErrors> read_chain_errors(const fs::path& file, ErrorQuantity q,
                                           Normalise normalise, const std::string& run_filter,
                                           std::vector<std::string>& notes) {
  CheckedRecordReader reader(file);
  v1::Record record;
  v1::Header header;
  std::map<std::string, ExactMoments> exact;       // per run
  std::map<std::pair<std::string, int>, ChainErrors> by_chain;
  std::map<std::pair<std::string, int>, double> scale;  // per chain: the base's error
  std::map<std::string, std::string> dropped;      // run -> why
  while (reader.next(record)) {
    if (record.has_header()) header = record.header();
    if (!record.has_estimates()) continue;
    const auto& s = record.estimates();
    if (!run_filter.empty() && s.run_id() != run_filter) continue;
    if (s.chain_id() < 0) continue;  // a CT bootstrap round's pooled estimates, not a chain
    auto [ex, fresh] = exact.try_emplace(s.run_id());
    if (fresh) ex->second = exact_moments(header, s.run_id());
    const std::pair<std::string, int> key{s.run_id(), s.chain_id()};
    const auto err = snapshot_error(q, s, ex->second);
    if (!err) {
      dropped.try_emplace(s.run_id(), "no exact " + quantity_name(q) + " or no running estimate");
      continue;
    }
    double divide_by = 1.0;
    if (normalise == Normalise::kBase) {
      auto [sc, first] = scale.try_emplace(key, std::nan(""));
      if (first && s.has_base())
        if (const auto b = base_error(q, s.base(), ex->second)) sc->second = *b;
      if (!(sc->second > 0.0)) {
        dropped.try_emplace(s.run_id(), "no base " + quantity_name(q) + " to normalise by");
        continue;
      }
      divide_by = sc->second;
    }
    auto& c = by_chain[key];
    c.run_id = s.run_id();
    c.chain_id = s.chain_id();
    c.seed = s.seed();
    c.wall_seconds.push_back(s.wall_seconds());
    c.error.push_back(*err / divide_by);
  }
  for (const auto& [run, why] : dropped) {
    const std::string& run_id = run;  // clang 14 (the fuzz build) cannot capture a structured binding
    if (std::none_of(by_chain.begin(), by_chain.end(),
                     [&](const auto& kv) { return kv.first.first == run_id; }))
      notes.push_back(file.filename().string() + ": run '" + run + "' left out: " + why);
  }
  std::vector<ChainErrors> out;
  for (auto& [key, c] : by_chain) out.push_back(std::move(c));
  return out;
}

std::vector<ErrorCurvePoint> aggregate_errors(const std::vector<ChainErrors>& chains) {
  std::vector<ErrorCurvePoint> out;
  if (chains.empty()) return out;
  std::size_t n_points = chains.front().error.size();
  for (const auto& c : chains) n_points = std::min(n_points, c.error.size());
  const double n = static_cast<double>(chains.size());
  for (std::size_t i = 0; i < n_points; ++i) {
    ErrorCurvePoint p;
    p.index = i;
    p.n_chains = static_cast<int>(chains.size());
    double sum = 0.0, sum_t = 0.0;
    for (const auto& c : chains) {
      sum += c.error[i];
      sum_t += c.wall_seconds[i];
    }
    p.mean = sum / n;
    p.wall_seconds = sum_t / n;
    if (chains.size() > 1) {
      double ss = 0.0;
      for (const auto& c : chains) ss += (c.error[i] - p.mean) * (c.error[i] - p.mean);
      p.se = std::sqrt(ss / (n - 1.0) / n);
    }
    out.push_back(p);
  }
  return out;
}

std::int64_t write_error_curves_csv(const std::vector<fs::path>& files, ErrorQuantity q,
                                    Normalise normalise, const std::string& run_filter,
                                    bool final_only, std::ostream& out,
                                    std::vector<std::string>& notes) {
  out << "file,estimate,normalise,index,wall_seconds,n_chains,mean_error,se_error\n";
  std::int64_t rows = 0;
  for (const auto& file : files) {
    const auto curve = aggregate_errors(read_chain_errors(file, q, normalise, run_filter, notes));
    for (std::size_t i = final_only && !curve.empty() ? curve.size() - 1 : 0; i < curve.size(); ++i) {
      const auto& p = curve[i];
      out << fmt::format("{},{},{},{},{:.6g},{},{:.6g},{:.6g}\n", file.filename().string(),
                         quantity_name(q), normalise == Normalise::kBase ? "base" : "none",
                         p.index, p.wall_seconds, p.n_chains, p.mean, p.se);
      ++rows;
    }
  }
  return rows;
}

}  // namespace pemc::report
