#include "config/init_point.hpp"

#include <fmt/format.h>

#include <string>

#include "core/error.hpp"

namespace pemc::config {
namespace {

std::string numbers(int n) { return std::to_string(n) + (n == 1 ? " number" : " numbers"); }

void check_bound(const google::protobuf::RepeatedField<double>& bound, const std::string& field,
                 std::int64_t dim) {
  if (bound.size() > 1 && bound.size() != dim)
    throw ConfigError(field + ": has " + numbers(bound.size()) + ", the target's dimension is " +
                      std::to_string(dim) + " (give one number for every coordinate, or " +
                      std::to_string(dim) + ")");
}

}  // namespace

double box_bound(const google::protobuf::RepeatedField<double>& bound, Eigen::Index i) {
  if (bound.empty()) return 0.0;
  return bound.size() == 1 ? bound[0] : bound[static_cast<int>(i)];
}

void check_init_dimension(const v1::InitConfig& init, std::int64_t dim) {
  switch (init.kind_case()) {
    case v1::InitConfig::kPoint:
      if (init.point().x_size() != dim)
        throw ConfigError("init.point.x: has " + numbers(init.point().x_size()) +
                          ", the target's dimension is " + std::to_string(dim));
      break;
    case v1::InitConfig::kUniformBox: {
      const auto& box = init.uniform_box();
      check_bound(box.lower(), "init.uniform_box.lower", dim);
      check_bound(box.upper(), "init.uniform_box.upper", dim);
      for (Eigen::Index i = 0; i < dim; ++i) {
        const double lo = box_bound(box.lower(), i), hi = box_bound(box.upper(), i);
        if (!(lo < hi))
          throw ConfigError(fmt::format(
              "init.uniform_box: lower must be < upper in every coordinate (coordinate {}: lower "
              "{}, upper {})",
              i + 1, lo, hi));
      }
      break;
    }
    default:
      break;
  }
}

void draw_initial_point(const v1::InitConfig& init, rng::Stream& stream, VectorRef x) {
  // Validation checks the sizes too; a mismatch here must fail the chain, not read out of range.
  check_init_dimension(init, x.size());
  switch (init.kind_case()) {
    case v1::InitConfig::kPoint:
      for (Eigen::Index i = 0; i < x.size(); ++i) x[i] = init.point().x(static_cast<int>(i));
      break;
    case v1::InitConfig::kUniformBox: {
      const auto& box = init.uniform_box();
      for (Eigen::Index i = 0; i < x.size(); ++i) {
        const double lo = box_bound(box.lower(), i), hi = box_bound(box.upper(), i);
        x[i] = lo + (hi - lo) * stream.uniform();
      }
      break;
    }
    default: {
      const double r = init.kind_case() == v1::InitConfig::kUniformRadius ? init.uniform_radius()
                                                                          : 2.0;
      for (Eigen::Index i = 0; i < x.size(); ++i) x[i] = r * (2.0 * stream.uniform() - 1.0);
    }
  }
}

}  // namespace pemc::config
