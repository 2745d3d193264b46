#include "report/observed_data.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <utility>

#include "core/error.hpp"
#include "stan_target/shim/cmdstan_json.hpp"

namespace pemc::report {

std::vector<ObservedVariable> observed_variables(const std::string& text, const std::string& file) {
  std::map<std::string, stan_shim::CmdStanVariable> parsed;
  try {
    parsed = stan_shim::parse_cmdstan_json(text, file);
  } catch (const std::runtime_error& e) {
    throw DataError(e.what());
  }
  std::vector<ObservedVariable> out;
  out.reserve(parsed.size());
  for (auto& [name, v] : parsed) {
    ObservedVariable o;
    o.data_name = name;
    o.array.name = netcdf_name(name);
    o.array.shape = v.dims;
    o.is_int = v.is_int;
    if (v.is_int)
      o.ints = std::move(v.ints);
    else
      o.reals = std::move(v.reals);
    out.push_back(std::move(o));
  }
  return out;
}

std::vector<ObservedVariable> select_observed(std::vector<ObservedVariable> vars,
                                              const std::vector<std::string>& names) {
  if (names.empty()) return vars;
  std::vector<ObservedVariable> out;
  for (auto& v : vars)
    if (std::find(names.begin(), names.end(), v.data_name) != names.end())
      out.push_back(std::move(v));
  return out;
}

std::vector<std::string> split_observed_names(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const auto& list : names) {
    std::size_t begin = 0;
    while (begin <= list.size()) {
      const auto comma = std::min(list.find(',', begin), list.size());
      std::string item = list.substr(begin, comma - begin);
      item.erase(0, item.find_first_not_of(" \t"));
      item.erase(item.find_last_not_of(" \t") + 1);
      if (!item.empty()) out.push_back(std::move(item));
      begin = comma + 1;
    }
  }
  return out;
}

}  // namespace pemc::report
