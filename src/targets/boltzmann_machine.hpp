#pragma once
// A Boltzmann machine P(s) ∝ exp(0.5 s'Ws + s'b) on s in {-1,+1}^{d_b}: loading from text files and
// the random generator of the continuous tempering paper (Graham & Storkey 2017, Appendix B).
#include <cstdint>
#include <filesystem>

#include "core/types.hpp"

namespace pemc::targets {

struct BoltzmannMachine {
  Matrix W;  // d_b x d_b, symmetric, zero diagonal
  Vector b;  // d_b
};

// Reads W (d_b x d_b, row-major) and b (d_b numbers): whitespace-separated numbers in any line
// layout; d_b is sqrt(count of W's numbers). W is symmetrised exactly ((W + W') / 2) after the
// check. Throws IoError if a file cannot be read; DataError (naming the file) for: a token that is
// not a number or not finite (with its line and column), an empty file, a count that is not a
// perfect square (with the per-line counts if the rows are ragged), a b count != d_b, an asymmetric
// W (the worst pair (i, j) and both values; tolerance 1e-9 * max(1, max|W|)) or a non-zero diagonal
// entry (same tolerance).
BoltzmannMachine load_boltzmann_machine(const std::filesystem::path& w_file,
                                        const std::filesystem::path& b_file);

// Graham & Storkey (2017), Appendix B, with Stream(seed, Domain::kGenerator, 0, 0) drawn in this
// order: G (n x n standard normals, row by row), n_i (n normals), then b (n normals).
//   R = Haar-distributed orthogonal matrix: the Q of G = QR with each column multiplied by the sign
//       of the corresponding diagonal entry of R (Mezzadri 2007), e_i = scale_hi * tanh(scale_lo n_i)
//       (the paper's s_1 = 6, s_2 = 2), V = R diag(e) R', W = V with the diagonal set to zero,
//       b_i = bias_scale * N(0, 1).
// Throws ConfigError if n_units < 2 or a scale is negative or not finite.
BoltzmannMachine generate_boltzmann_machine(std::uint64_t seed, int n_units, double scale_hi = 6,
                                            double scale_lo = 2, double bias_scale = 0.1);

}  // namespace pemc::targets
