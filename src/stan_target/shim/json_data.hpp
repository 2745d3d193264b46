#pragma once
// CmdStan's JSON data format (cmdstan_json.hpp) read into Stan's data interface
// (stan::io::var_context).
//
// Stan's var_context wants values column-major (first index fastest); read_json_data converts.
// Every error is a std::runtime_error that names the file and, for syntax errors, its line and
// column, or the variable at fault.
//
// Compiled into each Stan model's library by pemc's shim (model_shim.hpp); it includes only
// Stan's var_context, cmdstan_json.hpp and nlohmann's JSON reader.
#include <stan/io/var_context.hpp>

#include "stan_target/shim/cmdstan_json.hpp"

#include <cstddef>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace pemc::stan_shim {

class JsonData final : public stan::io::var_context {
 public:
  struct Variable {
    std::vector<size_t> dims;
    std::vector<double> reals;  // column-major
    std::vector<int> ints;      // column-major; empty unless is_int
    bool is_int = true;
  };

  explicit JsonData(std::map<std::string, Variable> vars) : vars_(std::move(vars)) {}

  bool contains_r(const std::string& name) const override { return vars_.count(name) > 0; }
  std::vector<double> vals_r(const std::string& name) const override {
    const auto it = vars_.find(name);
    return it == vars_.end() ? std::vector<double>{} : it->second.reals;
  }
  std::vector<size_t> dims_r(const std::string& name) const override {
    const auto it = vars_.find(name);
    return it == vars_.end() ? std::vector<size_t>{} : it->second.dims;
  }
  bool contains_i(const std::string& name) const override {
    const auto it = vars_.find(name);
    return it != vars_.end() && it->second.is_int;
  }
  std::vector<int> vals_i(const std::string& name) const override {
    const auto it = vars_.find(name);
    return it == vars_.end() || !it->second.is_int ? std::vector<int>{} : it->second.ints;
  }
  std::vector<size_t> dims_i(const std::string& name) const override {
    return contains_i(name) ? vars_.at(name).dims : std::vector<size_t>{};
  }
  void names_r(std::vector<std::string>& names) const override {
    names.clear();
    for (const auto& [name, v] : vars_) names.push_back(name);
  }
  void names_i(std::vector<std::string>& names) const override {
    names.clear();
    for (const auto& [name, v] : vars_)
      if (v.is_int) names.push_back(name);
  }

 private:
  std::map<std::string, Variable> vars_;
};

namespace json_detail {

// Row-major (last index fastest) to column-major (first index fastest).
template <class T>
std::vector<T> to_column_major(const std::vector<T>& row_major, const std::vector<size_t>& dims) {
  const std::size_t n = row_major.size();
  std::vector<T> out(n);
  std::vector<size_t> index(dims.size(), 0);
  for (std::size_t r = 0; r < n; ++r) {
    std::size_t c = 0, stride = 1;
    for (std::size_t k = 0; k < dims.size(); ++k) {
      c += index[k] * stride;
      stride *= dims[k];
    }
    out[c] = row_major[r];
    for (std::size_t k = dims.size(); k-- > 0;) {
      if (++index[k] < dims[k]) break;
      index[k] = 0;
    }
  }
  return out;
}

}  // namespace json_detail

// Parses CmdStan JSON text; `file` names it in error messages.
inline JsonData parse_json_data(const std::string& text, const std::string& file) {
  std::map<std::string, JsonData::Variable> vars;
  for (auto& [name, parsed] : parse_cmdstan_json(text, file)) {
    JsonData::Variable v;
    v.dims = parsed.dims;
    v.is_int = parsed.is_int;
    v.reals = json_detail::to_column_major(parsed.reals, parsed.dims);
    if (v.is_int) v.ints = json_detail::to_column_major(parsed.ints, parsed.dims);
    vars.emplace(name, std::move(v));
  }
  return JsonData(std::move(vars));
}

inline JsonData read_json_data(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error("data file " + file + ": cannot be opened for reading");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw std::runtime_error("data file " + file + ": read error");
  return parse_json_data(text.str(), file);
}

}  // namespace pemc::stan_shim
