#pragma once
// `pemc-report truth CONFIG --write-relaxation DIR`: the Boltzmann machine relaxation a config's
// target solved, as plain text a user can load elsewhere (src/targets/boltzmann.hpp):
//   Q.txt   d_b rows of d numbers: row k is q_k, phi(x) = x'x / 2 - sum_k log cosh(q_k'x + b_k)
//   b.txt   the d_b biases, one line
//   D.txt   the d_b diagonal entries with Q Q' = W + diag(D) (solved from W; diag(Q Q') for a
//           target given by its Q)
//   W.txt   d_b rows of d_b numbers: Q Q' off the diagonal, 0 on it: the machine the relaxation
//           describes exactly (for a target built from W, that W up to the factor's residual,
//           relaxation.json's factor_residual = max |Q Q' - W - diag(D)|)
//   relaxation.json  {"n_units", "dim", "factor_residual", "trace_d", "log_z"?, "files"}
// Numbers are whitespace separated, one matrix row per line, printed with 17 significant digits
// (they read back to the same doubles): `boltzmann { q_file: "DIR/Q.txt" bias_file: "DIR/b.txt" }`
// is the same target, bit for bit.
#include <filesystem>
#include <optional>
#include <vector>

#include "targets/target.hpp"

namespace pemc::report {

// Throws ConfigError when `target` is not a Boltzmann relaxation, or when `dir` exists and is not
// an empty directory (unless overwrite: then files of the same names are replaced); nothing is
// written then. Creates dir if needed.
void prepare_relaxation_dir(const targets::Target& target, const std::filesystem::path& dir,
                            bool overwrite);

// Writes the files above (call prepare_relaxation_dir first); log_z: the exact log Z when known.
// Returns the paths written. Throws IoError when a file cannot be written.
std::vector<std::filesystem::path> write_relaxation(const targets::Target& target,
                                                    const std::filesystem::path& dir,
                                                    std::optional<double> log_z);

}  // namespace pemc::report
