#include "report/gradient_counts.hpp"

#include <algorithm>
#include <limits>

namespace pemc::report {

GradientCounts gradient_counts(const v1::ChainSummary& s, const v1::RunConfig& run) {
  GradientCounts c;
  if (s.n_extended_gradient_evals() > 0 || s.n_gradient_evals() == 0) {
    c.target = s.n_gradient_evals();
    c.target_warmup = s.n_gradient_evals_warmup();
    c.extended = s.n_extended_gradient_evals();
    c.extended_warmup = s.n_extended_gradient_evals_warmup();
    return c;
  }
  c.converted = true;
  c.extended = s.n_gradient_evals();
  c.extended_warmup = s.n_gradient_evals_warmup();
  const std::int64_t per_evaluation =
      run.sampler().has_pseudo_extended() ? std::max(1, run.sampler().pseudo_extended().n_pseudo())
                                          : 1;
  // Saturating: a record file's counts are not trusted to be small.
  const auto times = [&](std::int64_t n) {
    std::int64_t product = 0;
    return __builtin_mul_overflow(n, per_evaluation, &product)
               ? std::numeric_limits<std::int64_t>::max()
               : product;
  };
  c.target = times(c.extended);
  c.target_warmup = times(c.extended_warmup);
  return c;
}

}  // namespace pemc::report
