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

struct CsvOptions {
  // Files larger than this are refused before anything is read (the whole file is read into
  // memory, and a multi-gigabyte "CSV" is almost certainly the wrong path).
  std::uintmax_t max_bytes = std::uintmax_t{2} << 30;  // 2 GiB
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
