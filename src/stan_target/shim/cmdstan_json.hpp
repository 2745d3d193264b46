#pragma once
// CmdStan's JSON data format, parsed into arrays: what a Stan model's data file holds, read the same
// way by the model's shim (json_data.hpp, for Stan's var_context) and by pemc-report (the
// observed_data group of an ArviZ export, report/observed_data.hpp).
//
// A data file is one JSON object mapping each variable name to a number, or to nested arrays of
// numbers with the variable's shape, row-major as CmdStan writes them (a matrix is a list of rows,
// an array of vectors a list of vectors). Reals may also be the strings (or bare tokens) NaN, Inf,
// Infinity, -Inf, -Infinity, in any letter case. A variable is an integer variable when every
// value of it is written as a JSON integer (no '.' or exponent) within the range of Stan's int
// (32 bits); a larger integer makes it a real variable. An empty array [] has the single
// dimension 0.
//
// Every error is a std::runtime_error that names the file and, for syntax errors, its line and
// column, or the variable at fault. Includes only the standard library and nlohmann's JSON reader
// (it is compiled into each Stan model's library: toolchain.cpp hashes it into the cache key).
#include <nlohmann/json.hpp>

#include <cctype>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace pemc::stan_shim {

// One variable of a data file, its values row-major (last index fastest), as the file lists them.
struct CmdStanVariable {
  std::vector<std::size_t> dims;  // empty: a scalar
  std::vector<double> reals;      // every value
  std::vector<int> ints;          // the same values; empty unless is_int
  bool is_int = true;
};

namespace json_detail {

inline std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The spellings of non-finite reals CmdStan accepts; false when `text` is none of them.
inline bool special_real(const std::string& text, double& out) {
  const std::string t = lower(text);
  const double inf = std::numeric_limits<double>::infinity();
  if (t == "nan" || t == "+nan" || t == "-nan") {
    out = std::numeric_limits<double>::quiet_NaN();
  } else if (t == "inf" || t == "+inf" || t == "infinity" || t == "+infinity") {
    out = inf;
  } else if (t == "-inf" || t == "-infinity") {
    out = -inf;
  } else {
    return false;
  }
  return true;
}

// Quotes the bare tokens NaN, Inf, Infinity (optionally signed) outside strings, so that a
// strict JSON parser reads them as the strings special_real accepts. Offsets of everything else
// move by two bytes per quoted token at most; error positions are computed on the original text
// before this runs.
inline std::string quote_bare_specials(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size()) {
        out += text[i + 1];
        i += 2;
        continue;
      }
      if (c == '"') in_string = false;
      ++i;
      continue;
    }
    if (c == '"') {
      in_string = true;
      out += c;
      ++i;
      continue;
    }
    std::size_t j = i;
    if (c == '-' || c == '+') ++j;
    std::size_t k = j;
    while (k < text.size() && std::isalpha(static_cast<unsigned char>(text[k]))) ++k;
    double ignored = 0;
    if (k > j && special_real(text.substr(i, k - i), ignored)) {
      out += '"';
      out.append(text, i, k - i);
      out += '"';
      i = k;
      continue;
    }
    out += c;
    ++i;
  }
  return out;
}

inline std::pair<std::size_t, std::size_t> line_and_column(const std::string& text,
                                                           std::size_t offset) {
  std::size_t line = 1, column = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return {line, column};
}

struct Flattener {
  const std::string& where;  // "data file F, variable V"
  std::vector<size_t> dims;
  std::vector<double> reals;  // row-major while reading
  std::vector<int> ints;
  bool is_int = true;

  // Walks `value` at depth `depth`, fixing each depth's size the first time it is seen.
  void walk(const nlohmann::json& value, std::size_t depth) {
    if (value.is_array()) {
      if (depth == dims.size()) {
        if (!reals.empty() || depth_has_scalars_)
          throw std::runtime_error(where + ": arrays nested to different depths");
        dims.push_back(value.size());
      } else if (depth > dims.size() || dims[depth] != value.size()) {
        throw std::runtime_error(where + ": a ragged array (sizes differ at depth " +
                                 std::to_string(depth + 1) + "); every row must have " +
                                 "the same length");
      }
      for (const auto& element : value) walk(element, depth + 1);
      return;
    }
    if (depth != dims.size())
      throw std::runtime_error(where + ": arrays nested to different depths");
    depth_has_scalars_ = true;
    add_scalar(value);
  }

  void add_scalar(const nlohmann::json& value) {
    double x = 0;
    if (value.is_number_integer() || value.is_number_unsigned()) {
      const long double v = value.is_number_unsigned()
                                ? static_cast<long double>(value.get<std::uint64_t>())
                                : static_cast<long double>(value.get<std::int64_t>());
      if (v > std::numeric_limits<int>::max() || v < std::numeric_limits<int>::min()) {
        is_int = false;  // too large for Stan's int: only usable as a real
      } else {
        ints.push_back(static_cast<int>(v));
      }
      x = static_cast<double>(v);
    } else if (value.is_number_float()) {
      is_int = false;
      x = value.get<double>();
    } else if (value.is_string() && special_real(value.get<std::string>(), x)) {
      is_int = false;
    } else {
      throw std::runtime_error(where + ": expected a number (or NaN, Inf, -Inf), got " +
                               value.dump());
    }
    reals.push_back(x);
  }

  bool depth_has_scalars_ = false;
};

}  // namespace json_detail

// Parses CmdStan JSON text; `file` names it in error messages. Variables by name.
inline std::map<std::string, CmdStanVariable> parse_cmdstan_json(const std::string& text,
                                                                 const std::string& file) {
  namespace jd = json_detail;
  nlohmann::json root;
  try {
    root = nlohmann::json::parse(jd::quote_bare_specials(text));
  } catch (const nlohmann::json::parse_error& e) {
    // Locate the error in the user's text: parse the original for the byte position (the
    // quoting above only adds characters after bare specials, which strict JSON rejects anyway).
    std::size_t byte = e.byte;
    try {
      (void)nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& original) {
      byte = original.byte;
    }
    const auto [line, column] = jd::line_and_column(text, byte > 0 ? byte - 1 : 0);
    std::string what = e.what();
    const auto cut = what.find("syntax error");
    throw std::runtime_error("data file " + file + ":" + std::to_string(line) + ":" +
                             std::to_string(column) + ": malformed JSON (" +
                             (cut == std::string::npos ? what : what.substr(cut)) + ")");
  }
  if (!root.is_object())
    throw std::runtime_error("data file " + file +
                             ": expected a JSON object {\"name\": value, ...} at the top level");
  std::map<std::string, CmdStanVariable> vars;
  for (const auto& [name, value] : root.items()) {
    const std::string where = "data file " + file + ", variable '" + name + "'";
    jd::Flattener f{where};
    f.walk(value, 0);
    CmdStanVariable v;
    v.dims = std::move(f.dims);
    v.is_int = f.is_int;
    v.reals = std::move(f.reals);
    if (v.is_int) v.ints = std::move(f.ints);
    vars.emplace(name, std::move(v));
  }
  return vars;
}

}  // namespace pemc::stan_shim
