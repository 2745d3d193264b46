#include "config/samplers/metric.hpp"

#include "config/matrix_checks.hpp"
#include "core/error.hpp"
#include "core/types.hpp"

namespace pemc::config {

namespace {

Vector to_vector(const google::protobuf::RepeatedField<double>& r) {
  Vector v(r.size());
  for (int i = 0; i < r.size(); ++i) v[i] = r[i];
  return v;
}

}  // namespace

void check_metric(v1::MetricKind metric, const google::protobuf::RepeatedField<double>& inv,
                  const std::string& pre, std::optional<std::int64_t> dim, Problems& p) {
  const std::string path = pre + ".inverse_metric";
  const std::int64_t n = inv.size();
  if (metric == v1::DENSE && dim)
    dense_fits(p, pre + ".metric", *dim, 4,
               "inverse metric, Cholesky factor, adaptation estimates");
  if (n == 0) return;
  if (metric == v1::UNIT) {
    p.add(path, "an initial inverse metric is given but metric is UNIT", entries(n));
    return;
  }
  if (!dim) {
    if (metric == v1::DIAGONAL) all_positive(p, path, inv);
    return;  // dimension known only once the target is built
  }
  const std::int64_t d = *dim;
  const bool diagonal = n == d;
  const bool dense = n == d * d && d > 1;
  if (!diagonal && !dense) {
    p.add(path,
          "must have dim = " + num(d) + " entries (diagonal) or dim*dim = " + num(d * d) +
              " entries (dense, row-major)",
          entries(n));
  } else if (dense && metric == v1::DIAGONAL) {
    p.add(path, "metric is DIAGONAL, so give dim = " + num(d) + " entries", entries(n));
  } else if (diagonal) {
    all_positive(p, path, inv);
  } else {
    check_spd(p, path, inv, d);
  }
}

hmc::Metric make_metric(v1::MetricKind kind, v1::MetricKind default_kind,
                        const google::protobuf::RepeatedField<double>& inverse, int dim,
                        const std::string& field) {
  if (kind == v1::METRIC_UNSPECIFIED) kind = default_kind;
  try {
    switch (kind) {
      case v1::DIAGONAL:
        if (inverse.empty()) return hmc::Metric::diagonal(Vector::Ones(dim));
        if (inverse.size() != dim)
          throw ConfigError(field + ".inverse_metric: a diagonal metric needs " +
                            std::to_string(dim) + " numbers, got " +
                            std::to_string(inverse.size()));
        return hmc::Metric::diagonal(to_vector(inverse));
      case v1::DENSE:
        if (inverse.empty()) return hmc::Metric::dense(Matrix::Identity(dim, dim));
        if (inverse.size() != dim * dim)
          throw ConfigError(field + ".inverse_metric: a dense metric needs " +
                            std::to_string(dim * dim) + " numbers, got " +
                            std::to_string(inverse.size()));
        return hmc::Metric::dense(Eigen::Map<const Matrix>(inverse.data(), dim, dim).transpose());
      default:
        if (!inverse.empty())
          throw ConfigError(field + ".inverse_metric: given, but the metric is UNIT");
        return hmc::Metric::unit(dim);
    }
  } catch (const NumericalError& e) {
    throw ConfigError(field + ": " + e.what());
  }
}

}  // namespace pemc::config
