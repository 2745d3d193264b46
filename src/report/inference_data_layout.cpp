#include "report/inference_data_layout.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <ctime>
#include <map>
#include <set>

namespace pemc::report {
namespace {

// True for <anything>_dim_<digits>: the form of the file's named dims.
bool dim_like(const std::string& s) {
  const auto at = s.rfind("_dim_");
  if (at == std::string::npos || at + 5 == s.size()) return false;
  return std::all_of(s.begin() + static_cast<std::ptrdiff_t>(at + 5), s.end(),
                     [](unsigned char c) { return std::isdigit(c) != 0; });
}

}  // namespace

std::pair<std::string, std::vector<std::size_t>> split_stan_name(const std::string& name) {
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
  if (index.empty()) return {name, {}};
  return {name.substr(0, open), index};
}

std::string netcdf_name(const std::string& s) {
  std::string out = s.empty() ? std::string("_") : s;
  for (char& c : out)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) c = '_';
  if (std::isdigit(static_cast<unsigned char>(out.front()))) out = "_" + out;
  if (out == kChainDim || out == kDrawDim || out == kWeightedSampleDim || dim_like(out))
    out += "_";
  return out;
}

QuantityLayout quantity_layout(const std::vector<std::string>& names,
                               const std::vector<std::string>& log_lik) {
  QuantityLayout l;
  const std::set<std::string> log_lik_names(log_lik.begin(), log_lik.end());
  std::map<std::string, std::size_t> by_name;
  std::vector<std::pair<std::size_t, std::vector<std::size_t>>> found;  // per quantity
  for (const auto& n : names) {
    auto [stan_base, index] = split_stan_name(n);
    const bool is_log_lik = log_lik_names.count(stan_base) > 0;
    std::string base = netcdf_name(stan_base);
    auto it = by_name.find(base);
    if (it != by_name.end() && l.variables[it->second].shape.size() != index.size()) {
      base = netcdf_name(n);
      index.clear();
      it = by_name.find(base);
      // The full name may itself be a variable of another rank ("a" after "a[1]").
      while (it != by_name.end() && !l.variables[it->second].shape.empty()) {
        base += "_";
        it = by_name.find(base);
      }
    }
    if (it == by_name.end()) {
      it = by_name.emplace(base, l.variables.size()).first;
      l.variables.push_back({base, std::vector<std::size_t>(index.size(), 0),
                             is_log_lik ? DrawGroup::kLogLikelihood : DrawGroup::kPosterior});
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

std::vector<std::string> dim_names(const ArrayVariable& v) {
  std::vector<std::string> out;
  for (std::size_t k = 0; k < v.shape.size(); ++k) out.push_back(fmt::format("{}_dim_{}", v.name, k));
  return out;
}

std::vector<std::string> base_names(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const auto& n : names) {
    auto base = split_stan_name(n).first;
    if (std::find(out.begin(), out.end(), base) == out.end()) out.push_back(std::move(base));
  }
  return out;
}

std::string iso8601_utc(std::chrono::system_clock::time_point t) {
  const auto micros =
      std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
  const std::time_t seconds = static_cast<std::time_t>(micros / 1000000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  return fmt::format("{:%Y-%m-%dT%H:%M:%S}.{:06d}+00:00", tm, micros % 1000000);
}

}  // namespace pemc::report
