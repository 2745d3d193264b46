// A Gaussian target (GaussianTarget): mean plus a full or diagonal covariance.
#include "targets/gaussian.hpp"

#include "config/limits.hpp"
#include "config/matrix_checks.hpp"
#include "config/target_kinds.hpp"
#include "config/targets/all_kinds.hpp"
#include "core/error.hpp"
#include "core/types.hpp"

namespace pemc::config {

namespace {

Vector to_vector(const google::protobuf::RepeatedField<double>& r) {
  Vector v(r.size());
  for (int i = 0; i < r.size(); ++i) v[i] = r[i];
  return v;
}

targets::TargetPtr make_gaussian(const v1::GaussianTarget& g) {
  const Vector mean = to_vector(g.mean());
  const auto d = mean.size();
  Matrix cov = Matrix::Identity(d, d);
  if (g.covariance_size() > 0) {
    if (g.covariance_size() != d * d)
      throw ConfigError("target.gaussian.covariance: expected " + std::to_string(d * d) +
                        " numbers (dim x dim), got " + std::to_string(g.covariance_size()));
    cov = Eigen::Map<const Matrix>(g.covariance().data(), d, d).transpose();
  } else if (g.variance_size() > 0) {
    if (g.variance_size() != d)
      throw ConfigError("target.gaussian.variance: expected " + std::to_string(d) +
                        " numbers, got " + std::to_string(g.variance_size()));
    cov = to_vector(g.variance()).asDiagonal();
  }
  try {
    return std::make_shared<targets::Gaussian>(mean, cov);
  } catch (const NumericalError& e) {
    throw ConfigError(std::string("target.gaussian: ") + e.what());
  }
}

void check_gaussian(const v1::GaussianTarget& g, Problems& p) {
  const std::string pre = "target.gaussian";
  const std::int64_t d = g.mean_size();
  if (d == 0) {
    p.add(pre + ".mean",
          "required: the mean (its size is the dimension; dimension 0 is not allowed)");
    return;
  }
  if (d > kMaxDimension) {
    p.add(pre + ".mean", "dimension above the limit " + num(kMaxDimension), entries(d));
    return;
  }
  // The Gaussian target stores covariance, precision and a Cholesky factor densely.
  dense_fits(p, pre + ".mean", d, 3, "covariance, precision, Cholesky factor");
  if (g.covariance_size() > 0 && g.variance_size() > 0) {
    p.add(pre + ".variance", "give either covariance (full) or variance (diagonal), not both");
    return;
  }
  if (g.covariance_size() > 0) {
    if (g.covariance_size() != d * d) {
      p.add(pre + ".covariance",
            "must have dim*dim = " + num(d * d) + " entries (row-major, dim = mean size " + num(d) +
                ")",
            entries(g.covariance_size()));
    } else {
      check_spd(p, pre + ".covariance", g.covariance(), d);
    }
  }
  if (g.variance_size() > 0) {
    if (g.variance_size() != d) {
      p.add(pre + ".variance", "must have dim = " + num(d) + " entries (the mean's size)",
            entries(g.variance_size()));
    } else {
      all_positive(p, pre + ".variance", g.variance());
    }
  }
}

}  // namespace

TargetKind gaussian_target_kind() {
  return {
      .kind = v1::TargetConfig::kGaussian,
      .name = "gaussian",
      .validate = [](const v1::TargetConfig& t, Problems& p) { check_gaussian(t.gaussian(), p); },
      .make = [](const v1::TargetConfig& t) -> targets::TargetPtr {
        return make_gaussian(t.gaussian());
      },
      .dimension = [](const v1::TargetConfig& t) { return std::int64_t{t.gaussian().mean_size()}; },
  };
}

}  // namespace pemc::config
