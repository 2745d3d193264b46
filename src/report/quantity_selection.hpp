#pragma once
// --vars of summarize and diagnose: which of a run's quantities to show, named as Stan does. Each
// requested name selects
//   - the quantity of exactly that name ("mu", "theta[2]", "lp__"), or else
//   - every element of the variable of that base name ("theta" -> theta[1] .. theta[J],
//     "Sigma" -> Sigma[1,1] ..., "log_lik" -> log_lik[1] ..., "x" -> x[1] .. x[d]).
// The result lists the selected positions in the order requested (each variable's elements in
// the run's order), each once.
#include <cstddef>
#include <string>
#include <vector>

namespace pemc::report {

// Positions in `names` of the requested quantities. ConfigError for a name that selects nothing,
// saying which and listing the run's variables (base names with their element ranges) and
// `context` (e.g. "run 'eight': ").
std::vector<std::size_t> select_quantities(const std::vector<std::string>& names,
                                           const std::vector<std::string>& requested,
                                           const std::string& context = "");

// The variables among `names`, compactly: "mu, tau, theta[1..8], Sigma[1,1..2,2]" (a base name
// with its first and last element).
std::string describe_variables(const std::vector<std::string>& names);

}  // namespace pemc::report
