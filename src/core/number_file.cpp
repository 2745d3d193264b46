#include "core/number_file.hpp"

#include <charconv>
#include <cmath>
#include <fstream>
#include <string_view>

#include "core/error.hpp"

namespace pemc {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

}  // namespace

std::string describe_number_file(const std::filesystem::path& file, const std::string& what) {
  return what + " '" + file.string() + "'";
}

std::string NumberFile::ragged_hint() const {
  if (line_counts.size() < 2) return "";
  const int first = line_counts.front().second;
  for (const auto& [line, count] : line_counts)
    if (count != first)
      return " (rows are ragged: line " + std::to_string(line_counts.front().first) + " has " +
             std::to_string(first) + " numbers, line " + std::to_string(line) + " has " +
             std::to_string(count) + ")";
  return "";
}

NumberFile read_number_file(const std::filesystem::path& file, const std::string& what) {
  std::ifstream in(file);
  if (!in) throw IoError("cannot open " + describe_number_file(file, what));
  NumberFile out;
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    int on_line = 0;
    std::size_t pos = 0;
    while (pos < line.size()) {
      while (pos < line.size() && is_space(line[pos])) ++pos;
      if (pos >= line.size()) break;
      std::size_t end = pos;
      while (end < line.size() && !is_space(line[end])) ++end;
      const std::string_view token(line.data() + pos, end - pos);
      // from_chars rejects a leading '+', which text writers commonly emit.
      const std::size_t skip = (token.size() > 1 && token[0] == '+') ? 1 : 0;
      double v = 0.0;
      const auto res = std::from_chars(token.data() + skip, token.data() + token.size(), v);
      const auto where = [&] {
        return describe_number_file(file, what) + ", line " + std::to_string(line_no) +
               ", column " + std::to_string(pos + 1) + ": '" + std::string(token) + "'";
      };
      if (res.ec == std::errc::result_out_of_range)
        throw DataError(where() + " is out of the range of a double");
      if (res.ec != std::errc() || res.ptr != token.data() + token.size())
        throw DataError(where() + " is not a number");
      if (!std::isfinite(v)) throw DataError(where() + " is not a finite number");
      out.values.push_back(v);
      ++on_line;
      pos = end;
    }
    if (on_line > 0) out.line_counts.emplace_back(line_no, on_line);
  }
  if (in.bad()) throw IoError("error reading " + describe_number_file(file, what));
  if (out.values.empty()) throw DataError(describe_number_file(file, what) + " contains no numbers");
  return out;
}

Vector read_number_vector(const std::filesystem::path& file, Eigen::Index count,
                          const std::string& what) {
  const NumberFile f = read_number_file(file, what);
  if (static_cast<Eigen::Index>(f.values.size()) != count)
    throw DataError(describe_number_file(file, what) + ": expected " + std::to_string(count) +
                    " numbers, found " + std::to_string(f.values.size()));
  return Eigen::Map<const Vector>(f.values.data(), count);
}

Matrix read_number_matrix(const std::filesystem::path& file, Eigen::Index rows,
                          const std::string& what) {
  const NumberFile f = read_number_file(file, what);
  const auto count = static_cast<Eigen::Index>(f.values.size());
  if (rows < 1 || count % rows != 0)
    throw DataError(describe_number_file(file, what) + ": " + std::to_string(count) +
                    " numbers do not form " + std::to_string(rows) + " rows" + f.ragged_hint());
  const Eigen::Index cols = count / rows;
  Matrix out(rows, cols);
  for (Eigen::Index i = 0; i < rows; ++i)
    for (Eigen::Index j = 0; j < cols; ++j)
      out(i, j) = f.values[static_cast<std::size_t>(i * cols + j)];
  return out;
}

}  // namespace pemc
