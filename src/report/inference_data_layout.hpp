#pragma once
// Where a run's quantities go in an ArviZ InferenceData file (export_netcdf.hpp): one array
// variable per Stan base name ("theta" for theta[1] .. theta[J], "x" for a built-in target's
// x[1] .. x[d]), 1-based Stan indices stored at 0-based positions of dims <name>_dim_0, ...; the
// variables whose base name is a log-likelihood name go to group log_likelihood, the others to
// posterior. Pure logic, no netCDF calls.
#include <chrono>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace pemc::report {

enum class DrawGroup { kPosterior, kLogLikelihood };

struct ArrayVariable {
  std::string name;                // netCDF name (netcdf_name of the Stan base name)
  std::vector<std::size_t> shape;  // per named dim, the largest Stan index seen
  DrawGroup group = DrawGroup::kPosterior;
};

struct QuantityLayout {
  std::vector<ArrayVariable> variables;  // in order of their first quantity
  // Per quantity (in the run's order): its variable and its flat row-major position in it.
  std::vector<std::pair<std::size_t, std::size_t>> place;
};

// The dims every sampled variable starts with, and the weighted form's dim of a draw's weighted
// samples (not "sample": ArviZ's az.extract stacks chain and draw into a dim of that name).
inline constexpr const char* kChainDim = "chain";
inline constexpr const char* kDrawDim = "draw";
inline constexpr const char* kWeightedSampleDim = "weighted_sample";

// The default log-likelihood base name (Stan's convention, what loo and ArviZ look for).
inline constexpr const char* kDefaultLogLik = "log_lik";

// Splits "Sigma[2,1]" into ("Sigma", {2, 1}); a name without a well-formed 1-based index list is
// a scalar of that whole name.
std::pair<std::string, std::vector<std::size_t>> split_stan_name(const std::string& name);

// A netCDF name: Stan identifiers as they are; other characters become '_', a leading digit gets
// a '_' before it. Names that would clash with a dim of the file (chain, draw, weighted_sample,
// or the form <name>_dim_<k>) get a trailing '_'.
std::string netcdf_name(const std::string& s);

// The variables of `names` (Stan names of the run's quantities). A base name used with two ranks
// (not from Stan) keeps each such quantity's full name as a scalar of its own (with '_' appended
// while that name is a variable of another rank). Variables whose
// base name is one of `log_lik` go to kLogLikelihood.
QuantityLayout quantity_layout(const std::vector<std::string>& names,
                               const std::vector<std::string>& log_lik);

// The named dims of a variable: <name>_dim_0, <name>_dim_1, ...
std::vector<std::string> dim_names(const ArrayVariable& v);

// The base names among `names` (the run's quantities), each once, in order.
std::vector<std::string> base_names(const std::vector<std::string>& names);

// ISO 8601 in UTC with microseconds, as ArviZ writes created_at: 2026-01-31T12:34:56.123456+00:00.
std::string iso8601_utc(std::chrono::system_clock::time_point t);

}  // namespace pemc::report
