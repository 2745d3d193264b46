#pragma once
// A strict loader for numeric CSV files (the data of the regression targets).
//
// Format: a header line of column names, then one line per row; cells separated by ','; every
// cell parses completely as a finite double (std::from_chars, so no leading '+', no hex, no
// quotes). Spaces/tabs around a cell and a trailing '\r' (CRLF files) are ignored; blank lines
// are only allowed at the end of the file. Because blank lines elsewhere are refused, data row r
// (0-based) is always line r + 2 of the file, which is what error messages downstream rely on.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "core/types.hpp"

namespace pemc::targets {

// Limits checked before the data is held in memory: the file size before reading, the line length
// and the number of values while a first pass streams through the file (a 1 MiB buffer, so a file
// over a limit is refused after reading at most up to the point where it crosses it, in little
// memory); only then is the table allocated (once, rows x columns doubles) and parsed in a second
// pass. Every refusal is a DataError naming the file.
struct CsvOptions {
  // Files larger than this are refused before anything is read (a multi-gigabyte "CSV" is almost
  // certainly the wrong path).
  std::uintmax_t max_bytes = std::uintmax_t{2} << 30;  // 2 GiB
  // Numbers in the table (data rows x columns): 2^26 = 67,108,864, 512 MiB as doubles. Far beyond
  // what a posterior sampler that reads all data per gradient can use (one gradient alone is 2^26
  // multiply-adds), yet a file crossing it is refused after reading at most 2^26 cells.
  std::uint64_t max_values = std::uint64_t{1} << 26;
  // One line, header included (a binary file or a file of zeros has no line breaks): 16 MiB.
  std::size_t max_line_bytes = std::size_t{16} << 20;
};

struct CsvTable {
  std::string source;               // the path as given, for later error messages
  std::vector<std::string> header;  // column names (non-empty, unique)
  Matrix values;                    // rows x cols

  // Line number in the file of 0-based data row `row` (the header is line 1).
  static long line_of_row(Eigen::Index row) { return static_cast<long>(row) + 2; }
  // 0-based index of the column called `name`, or -1.
  Eigen::Index column_index(const std::string& name) const;
};

// Throws DataError (what, file, line, column index and name) on malformed content and IoError
// when the file cannot be opened or read (with strerror).
CsvTable load_numeric_csv(const std::filesystem::path& path, const CsvOptions& options = {});

}  // namespace pemc::targets
