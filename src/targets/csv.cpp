#include "targets/csv.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <string_view>
#include <system_error>
#include <unordered_set>

#include "core/error.hpp"

namespace pemc::targets {
namespace {

std::string quoted(std::string_view cell) {
  // Long garbage (e.g. a binary file) is cut so the message stays readable.
  constexpr std::size_t kMax = 40;
  std::string s = "'";
  s += cell.substr(0, kMax);
  if (cell.size() > kMax) s += "...";
  s += "'";
  return s;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Closes the descriptor on every exit path.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

std::string read_whole_file(const std::filesystem::path& path, const CsvOptions& options) {
  const std::string name = path.string();
  Fd f;
  f.fd = ::open(name.c_str(), O_RDONLY | O_CLOEXEC);
  if (f.fd < 0) throw IoError(name + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) throw IoError(name + ": cannot stat: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw IoError(name + ": not a regular file");
  const auto size = static_cast<std::uintmax_t>(st.st_size);
  if (size > options.max_bytes)
    throw DataError(name + ": file is " + std::to_string(size) + " bytes, more than the limit of " +
                    std::to_string(options.max_bytes) + " bytes (CsvOptions::max_bytes)");
  std::string buf(static_cast<std::size_t>(size), '\0');
  std::size_t got = 0;
  while (got < buf.size()) {
    const ssize_t r = ::read(f.fd, buf.data() + got, buf.size() - got);
    if (r < 0) {
      if (errno == EINTR) continue;
      throw IoError(name + ": read failed: " + std::strerror(errno));
    }
    if (r == 0) break;  // file shrank under us; parse what is there
    got += static_cast<std::size_t>(r);
  }
  buf.resize(got);
  return buf;
}

// Splits `text` into lines (without '\n' and a trailing '\r'); trailing blank lines dropped.
std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    start = end + 1;
  }
  while (!lines.empty() && trim(lines.back()).empty()) lines.pop_back();
  return lines;
}

}  // namespace

Eigen::Index CsvTable::column_index(const std::string& name) const {
  for (std::size_t j = 0; j < header.size(); ++j)
    if (header[j] == name) return static_cast<Eigen::Index>(j);
  return -1;
}

CsvTable load_numeric_csv(const std::filesystem::path& path, const CsvOptions& options) {
  const std::string name = path.string();
  const std::string text = read_whole_file(path, options);
  const std::vector<std::string_view> lines = split_lines(text);
  if (lines.empty()) throw DataError(name + ": empty file (a header line is required)");

  CsvTable table;
  table.source = name;
  {
    std::unordered_set<std::string_view> seen;
    std::string_view rest = lines[0];
    for (;;) {
      const std::size_t comma = rest.find(',');
      const std::string_view cell = trim(rest.substr(0, comma));
      const std::size_t col = table.header.size() + 1;
      if (cell.empty())
        throw DataError(name + ": line 1 (header), column " + std::to_string(col) +
                        ": empty column name");
      if (!seen.insert(cell).second)
        throw DataError(name + ": line 1 (header), column " + std::to_string(col) +
                        ": duplicate column name " + quoted(cell));
      table.header.emplace_back(cell);
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
  }
  const std::size_t cols = table.header.size();
  const std::size_t rows = lines.size() - 1;
  if (rows == 0) throw DataError(name + ": no data rows after the header line");

  // Parsed row-major (the file's order), copied once into the column-major Matrix.
  std::vector<double> values(rows * cols);
  for (std::size_t r = 0; r < rows; ++r) {
    const long line_no = static_cast<long>(r) + 2;
    std::string_view rest = lines[r + 1];
    // Built only when an error is thrown: the happy path allocates nothing per row.
    const auto where = [&] { return name + ": line " + std::to_string(line_no); };
    if (trim(rest).empty()) throw DataError(where() + ": blank line inside the data");
    const auto n_cells = static_cast<std::size_t>(std::count(rest.begin(), rest.end(), ',')) + 1;
    if (n_cells != cols)
      throw DataError(where() + ": expected " + std::to_string(cols) + " cells (as in the header), got " +
                      std::to_string(n_cells));
    for (std::size_t c = 0; c < cols; ++c) {
      const std::size_t comma = rest.find(',');
      const std::string_view cell = trim(rest.substr(0, comma));
      const auto column = [&] {
        return where() + ", column " + std::to_string(c + 1) + " ('" + table.header[c] + "')";
      };
      if (cell.empty()) throw DataError(column() + ": empty cell");
      double v = 0.0;
      const auto [ptr, ec] = std::from_chars(cell.data(), cell.data() + cell.size(), v);
      if (ec == std::errc::result_out_of_range)
        throw DataError(column() + ": cell " + quoted(cell) + " is outside the range of a double");
      if (ec != std::errc() || ptr != cell.data() + cell.size())
        throw DataError(column() + ": cell " + quoted(cell) + " is not a number");
      if (!std::isfinite(v)) throw DataError(column() + ": cell " + quoted(cell) + " is not finite");
      values[r * cols + c] = v;
      if (comma != std::string_view::npos) rest.remove_prefix(comma + 1);
    }
  }
  table.values = Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(
      values.data(), static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(cols));
  return table;
}

}  // namespace pemc::targets
