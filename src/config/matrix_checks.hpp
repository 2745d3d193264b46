#pragma once
// Checks of dense matrices given in a config: whether they fit in memory, and whether a matrix
// given as a flat row-major list is symmetric positive definite.
#include <google/protobuf/repeated_field.h>

#include <cstdint>
#include <string>

#include "config/problems.hpp"

namespace pemc::config {

// A dense dim x dim matrix (`copies` of them: e.g. covariance, precision, Cholesky factor) must fit
// in this machine's memory; refused before anything is allocated. `what` names the copies.
void dense_fits(Problems& p, const std::string& path, std::int64_t dim, int copies,
                const std::string& what);

// Symmetric positive definite check of a row-major n x n matrix given as a flat list (which has
// n * n entries). Definiteness is checked only up to a dimension where O(n^3) is cheap; larger
// matrices are checked when the target or kernel factorises them.
void check_spd(Problems& p, const std::string& path,
               const google::protobuf::RepeatedField<double>& a, std::int64_t n);

}  // namespace pemc::config
