#pragma once
// Plain-text number files, the one reader behind every file of numbers a config names (Boltzmann
// W, b and Q, reference and base means and Cholesky factors): whitespace-separated finite numbers,
// any line layout, a leading '+' allowed. Errors name the file by what it is for
// ("boltzmann weights file 'W.txt'") and, for a bad token, its line and column.
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "core/types.hpp"

namespace pemc {

struct NumberFile {
  std::vector<double> values;
  std::vector<std::pair<int, int>> line_counts;  // (line number, numbers on it), non-empty lines
  // " (rows are ragged: line 1 has 3 numbers, line 3 has 2)" when non-empty lines differ in
  // length, else "": a hint for a count that does not fit the expected shape.
  std::string ragged_hint() const;
};

// `what` names the file's role for errors. IoError when the file cannot be read; DataError for a
// token that is not a finite number (file, line, column, token) or a file without numbers.
NumberFile read_number_file(const std::filesystem::path& file, const std::string& what);

// "what 'file'", the prefix of every message about a number file.
std::string describe_number_file(const std::filesystem::path& file, const std::string& what);

// Exactly `count` numbers; DataError naming both counts otherwise.
Vector read_number_vector(const std::filesystem::path& file, Eigen::Index count,
                          const std::string& what);

// A matrix of `rows` rows, filled row by row (its column count is the numbers / rows); DataError
// when the count is not a multiple of rows.
Matrix read_number_matrix(const std::filesystem::path& file, Eigen::Index rows,
                          const std::string& what);

}  // namespace pemc
