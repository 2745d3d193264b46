#include "tempering/running_moments.hpp"

#include <cmath>
#include <vector>

#include "adapt/state_io.hpp"
#include "core/numerics.hpp"

namespace pemc::tempering {

void add_weighted(estimators::WeightedCovariance& acc, ConstVectorRef x, double log_w) {
  if (std::isnan(log_w) || log_w == kInf) return;
  acc.add(x, log_w);
}

bool weighted_moments(bool tracked, const estimators::WeightedCovariance& acc, Vector& mean,
                      Matrix& covariance) {
  if (!tracked || acc.log_sum() == -kInf) return false;
  mean = acc.mean();
  covariance = acc.covariance();
  return true;
}

bool reference_moments(const Reference* reference, Vector& mean, Matrix& covariance,
                       double& log_zeta) {
  if (!reference) return false;
  mean = reference->density->mean();
  covariance = reference->density->covariance();
  log_zeta = reference->log_zeta;
  return true;
}

void save_moments(pemc::v1::KernelState& s, const estimators::WeightedCovariance& acc) {
  s.set_kind("weighted_covariance");
  std::vector<double> sums;
  acc.serialize(sums);
  adapt::put_reals(s, "sums", sums);
}

void restore_moments(const pemc::v1::KernelState& s, const std::string& key,
                     estimators::WeightedCovariance& acc) {
  if (!adapt::has_child(s, key)) adapt::state_error(s, key, "missing (moments were tracked)");
  const auto& child = adapt::get_child(s, key);
  adapt::expect_kind(child, "weighted_covariance");
  const auto sums = adapt::get_real_vector(child, "sums");
  if (sums.size() != estimators::WeightedCovariance::serialized_size(acc.dim()))
    adapt::state_error(child, "sums", "wrong size for the dimension");
  std::size_t pos = 0;
  acc.deserialize(sums, pos);
}

}  // namespace pemc::tempering
