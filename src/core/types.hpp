#pragma once
// Small value types shared by every module.
#include <Eigen/Dense>
#include <cstdint>

namespace pemc {

using Vector = Eigen::VectorXd;
using Matrix = Eigen::MatrixXd;
using VectorRef = Eigen::Ref<Vector>;
using ConstVectorRef = Eigen::Ref<const Vector>;

}  // namespace pemc
