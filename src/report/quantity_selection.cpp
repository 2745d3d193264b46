#include "report/quantity_selection.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace pemc::report {
namespace {

// "theta[3]" -> "theta"; "mu" -> "mu".
std::string base_name(const std::string& name) { return name.substr(0, name.find('[')); }

// "theta[3]" -> "3"; "mu" -> "".
std::string indices(const std::string& name) {
  const auto open = name.find('[');
  if (open == std::string::npos || name.back() != ']') return {};
  return name.substr(open + 1, name.size() - open - 2);
}

}  // namespace

std::string describe_variables(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size();) {
    const std::string base = base_name(names[i]);
    std::size_t j = i + 1;
    while (j < names.size() && base_name(names[j]) == base && !indices(names[j]).empty()) ++j;
    out += (out.empty() ? "" : ", ") + base;
    if (!indices(names[i]).empty()) {
      out += "[" + indices(names[i]);
      if (j - i > 1) out += ".." + indices(names[j - 1]);
      out += "]";
    }
    i = j;
  }
  return out;
}

std::vector<std::size_t> select_quantities(const std::vector<std::string>& names,
                                           const std::vector<std::string>& requested,
                                           const std::string& context) {
  std::vector<std::size_t> out;
  std::vector<bool> taken(names.size(), false);
  const auto take = [&](std::size_t i) {
    if (!taken[i]) out.push_back(i);
    taken[i] = true;
  };
  for (const auto& want : requested) {
    const auto exact = std::find(names.begin(), names.end(), want);
    if (exact != names.end()) {
      take(static_cast<std::size_t>(exact - names.begin()));
      continue;
    }
    bool found = false;
    for (std::size_t i = 0; i < names.size(); ++i)
      if (!indices(names[i]).empty() && base_name(names[i]) == want) {
        take(i);
        found = true;
      }
    if (!found)
      throw ConfigError(context + "--vars: no quantity or variable named '" + want +
                        "'; the run has: " + describe_variables(names));
  }
  return out;
}

}  // namespace pemc::report
