#include "targets/csv.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <new>
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

constexpr std::size_t kChunkBytes = std::size_t{1} << 20;

// Hands out the file's lines (without '\n' and a trailing '\r') from a fixed-size buffer: memory is
// the buffer plus the longest line, which is capped at options.max_line_bytes.
class LineReader {
 public:
  LineReader(int fd, const std::string& name, std::size_t max_line)
      : fd_(fd), name_(name), max_line_(max_line) {}

  // The next line, or false at the end of the file. The view stays valid until the next call.
  bool next(std::string_view& line) {
    while (true) {
      const char* begin = buf_.data() + pos_;
      const char* end = buf_.data() + len_;
      if (const void* nl = std::memchr(begin, '\n', static_cast<std::size_t>(end - begin))) {
        const auto* p = static_cast<const char*>(nl);
        std::string_view piece(begin, static_cast<std::size_t>(p - begin));
        pos_ = static_cast<std::size_t>(p - buf_.data()) + 1;
        if (!carry_.empty()) {
          check_length(carry_.size() + piece.size());
          carry_.append(piece);
          held_.swap(carry_);
          carry_.clear();
          piece = held_;
        } else {
          check_length(piece.size());
        }
        ++line_no_;
        line = strip_cr(piece);
        return true;
      }
      // No line break in what is left: keep it and read more.
      check_length(carry_.size() + static_cast<std::size_t>(end - begin));
      carry_.append(begin, end);
      pos_ = len_ = 0;
      if (eof_ || !fill()) {
        eof_ = true;
        if (carry_.empty()) return false;
        ++line_no_;
        held_.swap(carry_);
        carry_.clear();
        line = strip_cr(held_);
        return true;
      }
    }
  }

  long line_no() const { return line_no_; }  // of the line next() returned last (1-based)
  // File offset of the first byte after the line next() returned last.
  std::uint64_t offset() const { return file_pos_ - (len_ - pos_); }

 private:
  static std::string_view strip_cr(std::string_view l) {
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    return l;
  }
  void check_length(std::size_t n) const {
    if (n > max_line_)
      throw DataError(name_ + ": line " + std::to_string(line_no_ + 1) + " is longer than " +
                      std::to_string(max_line_) +
                      " bytes (CsvOptions::max_line_bytes): not a CSV text file?");
  }
  bool fill() {
    if (buf_.empty()) buf_.resize(kChunkBytes);
    while (true) {
      const ssize_t r = ::read(fd_, buf_.data(), buf_.size());
      if (r < 0) {
        if (errno == EINTR) continue;
        throw IoError(name_ + ": read failed: " + std::strerror(errno));
      }
      len_ = static_cast<std::size_t>(r);
      pos_ = 0;
      file_pos_ += len_;
      return r > 0;
    }
  }

  int fd_;
  const std::string& name_;
  std::size_t max_line_;
  std::string buf_;
  std::size_t pos_ = 0, len_ = 0;
  std::string carry_, held_;
  bool eof_ = false;
  long line_no_ = 0;
  std::uint64_t file_pos_ = 0;
};

// Pass 1 over the data lines from `offset` (just after the header) to the end of the file: counts
// the non-blank lines (the data rows, blank lines inside are pass 2's error) and finds the last
// one, refusing a line longer than max_line or more rows than max_rows as soon as they are read. A
// plain scan over a fixed buffer (memchr per line): the refusal of a multi-gigabyte file costs well
// under a second and no memory.
struct RowCount {
  std::uint64_t rows = 0;
  long last_nonblank_line = 1;
};
template <typename TooMany>
RowCount count_rows(int fd, std::uint64_t offset, const std::string& name, std::size_t max_line,
                    std::uint64_t max_rows, const TooMany& too_many) {
  if (::lseek(fd, static_cast<off_t>(offset), SEEK_SET) != static_cast<off_t>(offset))
    throw IoError(name + ": cannot seek: " + std::strerror(errno));
  RowCount out;
  std::string buf(kChunkBytes, '\0');
  long line_no = 1;  // the header
  std::size_t cur_len = 0;
  bool cur_nonblank = false;
  const auto end_line = [&] {
    ++line_no;
    if (cur_nonblank) {
      out.last_nonblank_line = line_no;
      if (++out.rows > max_rows) too_many(out.rows, line_no);
    }
    cur_len = 0;
    cur_nonblank = false;
  };
  while (true) {
    ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      throw IoError(name + ": read failed: " + std::strerror(errno));
    }
    if (n == 0) break;
    const char* p = buf.data();
    const char* end = p + n;
    while (p < end) {
      const auto* nl =
          static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(end - p)));
      const char* stop = nl ? nl : end;
      for (const char* q = p; !cur_nonblank && q < stop; ++q)
        cur_nonblank = *q != ' ' && *q != '\t' && *q != '\r';
      cur_len += static_cast<std::size_t>(stop - p);
      if (cur_len > max_line)
        throw DataError(name + ": line " + std::to_string(line_no + 1) + " is longer than " +
                        std::to_string(max_line) +
                        " bytes (CsvOptions::max_line_bytes): not a CSV text file?");
      if (!nl) break;
      end_line();
      p = nl + 1;
    }
  }
  if (cur_len > 0) end_line();
  return out;
}

bool blank(std::string_view line) { return trim(line).empty(); }

}  // namespace

Eigen::Index CsvTable::column_index(const std::string& name) const {
  for (std::size_t j = 0; j < header.size(); ++j)
    if (header[j] == name) return static_cast<Eigen::Index>(j);
  return -1;
}

CsvTable load_numeric_csv(const std::filesystem::path& path, const CsvOptions& options) {
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

  // Pass 1: the header, the number of data rows (up to the last non-blank line) and the limits.
  CsvTable table;
  table.source = name;
  std::size_t cols = 0;
  long last_nonblank = 0;  // line number
  std::uint64_t rows = 0;  // non-blank lines after the header
  {
    LineReader lines(f.fd, name, options.max_line_bytes);
    std::string_view line;
    if (!lines.next(line)) throw DataError(name + ": empty file (a header line is required)");
    std::unordered_set<std::string> seen;
    std::string_view rest = line;
    for (;;) {
      const std::size_t comma = rest.find(',');
      const std::string_view cell = trim(rest.substr(0, comma));
      const std::size_t col = table.header.size() + 1;
      if (cell.empty()) {
        // A file of blank lines is empty, not a header with an empty name.
        bool all_blank = blank(line);
        while (all_blank && lines.next(line)) all_blank = blank(line);
        if (all_blank) throw DataError(name + ": empty file (a header line is required)");
        throw DataError(name + ": line 1 (header), column " + std::to_string(col) +
                        ": empty column name");
      }
      if (!seen.emplace(cell).second)
        throw DataError(name + ": line 1 (header), column " + std::to_string(col) +
                        ": duplicate column name " + quoted(cell));
      table.header.emplace_back(cell);
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
    cols = table.header.size();
    const auto counted = count_rows(
        f.fd, lines.offset(), name, options.max_line_bytes, options.max_values / cols,
        [&](std::uint64_t n, long line_no) {
          throw DataError(
              name + ": too much data for a data file: " + std::to_string(n) + " data rows of " +
              std::to_string(cols) + " columns by line " + std::to_string(line_no) + " (of a " +
              std::to_string(size) + "-byte file) are more than the limit of " +
              std::to_string(options.max_values) + " numbers (CsvOptions::max_values, " +
              std::to_string(options.max_values * sizeof(double) >> 20) + " MiB as doubles)");
        });
    rows = counted.rows;
    last_nonblank = counted.last_nonblank_line;
  }
  if (rows == 0) throw DataError(name + ": no data rows after the header line");

  // Pass 2: parse into the table, allocated once.
  if (::lseek(f.fd, 0, SEEK_SET) != 0)
    throw IoError(name + ": cannot seek: " + std::strerror(errno));
  try {
    table.values.resize(static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(cols));
  } catch (const std::bad_alloc&) {
    throw DataError(name + ": " + std::to_string(rows) + " rows x " + std::to_string(cols) +
                    " columns (" + std::to_string(rows * cols * sizeof(double) >> 20) +
                    " MiB as doubles) cannot be allocated: the data file is larger than the memory "
                    "available to this process");
  }
  LineReader lines(f.fd, name, options.max_line_bytes);
  std::string_view line;
  lines.next(line);  // the header, read above
  std::uint64_t r = 0;
  while (lines.next(line) && lines.line_no() <= last_nonblank) {
    const long line_no = lines.line_no();
    std::string_view rest = line;
    // Built only when an error is thrown: the happy path allocates nothing per row.
    const auto where = [&] { return name + ": line " + std::to_string(line_no); };
    if (blank(rest)) throw DataError(where() + ": blank line inside the data");
    if (r >= rows) throw DataError(where() + ": the file changed while being read");
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
      table.values(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(c)) = v;
      if (comma != std::string_view::npos) rest.remove_prefix(comma + 1);
    }
    ++r;
  }
  if (r != rows) throw DataError(name + ": the file changed while being read");
  return table;
}

}  // namespace pemc::targets
