#pragma once
// Seeded random test inputs: a well-conditioned SPD matrix and a Gaussian vector (std::mt19937_64,
// so each seed gives the same numbers on every platform run by these tests).
#include <cstdint>
#include <random>

#include "core/types.hpp"

namespace pemc::test {

// A A' / d + I / 2 with A's entries N(0, 1): symmetric positive definite, eigenvalues >= 1/2.
inline Matrix random_spd(int d, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> n(0.0, 1.0);
  Matrix a(d, d);
  for (int i = 0; i < d; ++i)
    for (int j = 0; j < d; ++j) a(i, j) = n(gen);
  return a * a.transpose() / d + 0.5 * Matrix::Identity(d, d);
}

// d entries N(0, scale^2).
inline Vector random_vector(int d, std::uint64_t seed, double scale = 1.0) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> n(0.0, scale);
  Vector v(d);
  for (int i = 0; i < d; ++i) v[i] = n(gen);
  return v;
}

}  // namespace pemc::test
