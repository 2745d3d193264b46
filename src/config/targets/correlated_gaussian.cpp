// A Gaussian with a tridiagonal precision (CorrelatedGaussianTarget): dimension and correlation.
#include "targets/correlated_gaussian.hpp"

#include <cmath>

#include "config/limits.hpp"
#include "config/target_kinds.hpp"
#include "config/targets/all_kinds.hpp"

namespace pemc::config {

namespace {

void check_correlated_gaussian(const v1::CorrelatedGaussianTarget& c, Problems& p) {
  const std::string pre = "target.correlated_gaussian";
  // O(dim) memory (tridiagonal precision), so only the dimension limit applies.
  in_range(p, pre + ".dim", c.dim(), 1, kMaxDimension);
  if (!(std::fabs(c.rho()) < 1)) p.add(pre + ".rho", "must be in (-1, 1)", num(c.rho()));
}

}  // namespace

TargetKind correlated_gaussian_target_kind() {
  return {
      .kind = v1::TargetConfig::kCorrelatedGaussian,
      .name = "correlated_gaussian",
      .validate = [](const v1::TargetConfig& t,
                     Problems& p) { check_correlated_gaussian(t.correlated_gaussian(), p); },
      .make = [](const v1::TargetConfig& t) -> targets::TargetPtr {
        return targets::make_correlated_gaussian(t.correlated_gaussian());
      },
      .dimension =
          [](const v1::TargetConfig& t) { return std::int64_t{t.correlated_gaussian().dim()}; },
  };
}

}  // namespace pemc::config
