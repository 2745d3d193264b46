#pragma once
// A Stan model's data as the observed_data group of an ArviZ export (export_netcdf.hpp): every
// variable of a CmdStan JSON data file, read as the model's shim reads it
// (stan_target/shim/cmdstan_json.hpp), as an array over dims <name>_dim_0, <name>_dim_1, ...
// (ArviZ's default dim names; inference_data_layout.hpp's dim_names), values in the file's order
// (row-major: a matrix's rows, an array of vectors' vectors). Integer variables stay integers.
// Pure logic, no netCDF calls.
#include <cstddef>
#include <string>
#include <vector>

#include "report/inference_data_layout.hpp"

namespace pemc::report {

struct ObservedVariable {
  std::string data_name;  // as the data file names it
  ArrayVariable array;    // netCDF name (netcdf_name of data_name) and shape (empty: a scalar)
  bool is_int = false;    // every value a JSON integer within Stan's int (cmdstan_json.hpp)
  std::vector<double> reals;  // row-major; empty when is_int
  std::vector<int> ints;      // row-major; empty unless is_int
};

// The variables of CmdStan JSON `text`, by name; DataError naming `file` (and the variable, or
// the line and column) when it is no such JSON, as pemc-dist would have refused it.
std::vector<ObservedVariable> observed_variables(const std::string& text, const std::string& file);

// Those of `vars` whose data_name is in `names` (every one when `names` is empty), in the order of
// `vars`.
std::vector<ObservedVariable> select_observed(std::vector<ObservedVariable> vars,
                                              const std::vector<std::string>& names);

// `names` as --observed gives them: each may be a comma-separated list ("y,N"); empty items are
// dropped.
std::vector<std::string> split_observed_names(const std::vector<std::string>& names);

}  // namespace pemc::report
