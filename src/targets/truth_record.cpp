#include "targets/truth_record.hpp"

namespace pemc::targets {
namespace {

void copy_vector(const Vector& v, google::protobuf::RepeatedField<double>& out) {
  out.Reserve(static_cast<int>(v.size()));
  for (Eigen::Index i = 0; i < v.size(); ++i) out.Add(v[i]);
}

Vector to_vector(const google::protobuf::RepeatedField<double>& values) {
  return Eigen::Map<const Vector>(values.data(), values.size());
}

}  // namespace

v1::TargetTruth truth_record(const Truth& truth) {
  v1::TargetTruth r;
  const Eigen::Index d = truth.mean ? truth.mean->size()
                                    : truth.second_moment ? truth.second_moment->size() : 0;
  if (d > kMaxRecordedTruthValues) {
    r.set_note("left out: the target's truth has " + std::to_string(d) +
               " coordinates, more than a record file's header keeps (" +
               std::to_string(kMaxRecordedTruthValues) + ")");
    return r;
  }
  if (truth.mean) copy_vector(*truth.mean, *r.mutable_mean());
  if (truth.second_moment) copy_vector(*truth.second_moment, *r.mutable_second_moment());
  if (truth.cross_moment && truth.cross_moment->rows() == d && truth.cross_moment->cols() == d &&
      d * d <= kMaxRecordedTruthValues) {
    const Matrix& c = *truth.cross_moment;
    for (Eigen::Index i = 0; i < d; ++i)
      for (Eigen::Index j = 0; j < d; ++j) r.add_cross_moment(c(i, j));
  }
  if (truth.log_z) r.set_log_z(*truth.log_z);
  for (const auto& [key, values] : truth.extras) {
    if (static_cast<std::int64_t>(values.size()) > kMaxRecordedTruthValues) continue;
    auto& out = (*r.mutable_extras())[key];
    for (double v : values) out.add_values(v);
  }
  return r;
}

std::int64_t truth_record_values(const v1::TargetTruth& r) {
  std::int64_t n = std::int64_t{r.mean_size()} + r.second_moment_size() + r.cross_moment_size();
  for (const auto& [key, values] : r.extras()) n += values.values_size();
  return n;
}

Truth truth_from_record(const v1::TargetTruth& r, const std::string& where) {
  const auto bad = [&](const std::string& what) {
    return UntrustedInputError(where + ": the recorded truth is inconsistent: " + what);
  };
  Truth t;
  const int d = r.mean_size() > 0 ? r.mean_size() : r.second_moment_size();
  if (r.mean_size() > 0 && r.second_moment_size() > 0 && r.mean_size() != r.second_moment_size())
    throw bad("a mean of " + std::to_string(r.mean_size()) + " and a second moment of " +
              std::to_string(r.second_moment_size()) + " coordinates");
  if (r.cross_moment_size() > 0 &&
      static_cast<std::int64_t>(r.cross_moment_size()) != std::int64_t{d} * d)
    throw bad("a cross moment of " + std::to_string(r.cross_moment_size()) + " entries for " +
              std::to_string(d) + " coordinates");
  if (r.mean_size() > 0) t.mean = to_vector(r.mean());
  if (r.second_moment_size() > 0) t.second_moment = to_vector(r.second_moment());
  if (r.cross_moment_size() > 0) {
    Matrix c(d, d);
    for (int i = 0; i < d; ++i)
      for (int j = 0; j < d; ++j) c(i, j) = r.cross_moment(i * d + j);
    t.cross_moment = std::move(c);
  }
  if (r.has_log_z()) t.log_z = r.log_z();
  for (const auto& [key, values] : r.extras())
    t.extras[key] = std::vector<double>(values.values().begin(), values.values().end());
  return t;
}

}  // namespace pemc::targets
