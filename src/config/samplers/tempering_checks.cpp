#include "config/samplers/tempering_checks.hpp"

#include "config/file_checks.hpp"

namespace pemc::config {

void check_reference(const v1::TemperingReferenceConfig& r, const std::string& pre, Problems& p) {
  if (r.has_fitted() && (r.mean_size() > 0 || !r.mean_file().empty() || r.variance_size() > 0 ||
                         r.covariance_size() > 0 || !r.cov_chol_file().empty()))
    p.add(pre + ".fitted", "give either fitted or mean/variance/covariance/files, not both");
  if (r.mean_size() > 0 && !r.mean_file().empty())
    p.add(pre + ".mean_file", "give at most one of mean and mean_file", quoted(r.mean_file()));
  const int covs = (r.variance_size() > 0) + (r.covariance_size() > 0) + !r.cov_chol_file().empty();
  if (covs > 1) p.add(pre, "give at most one of variance, covariance and cov_chol_file");
  all_positive(p, pre + ".variance", r.variance());
  if (!r.mean_file().empty()) readable_file(p, pre + ".mean_file", r.mean_file());
  if (!r.cov_chol_file().empty()) readable_file(p, pre + ".cov_chol_file", r.cov_chol_file());
}

void check_ladder(const v1::TemperingLadderConfig& l, const std::string& pre, bool has_reference,
                  Problems& p) {
  if (l.kind() == v1::TemperingLadderConfig::EXPLICIT) {
    if (l.betas_size() < 2) {
      p.add(pre + ".betas", "EXPLICIT needs at least 2 inverse temperatures",
            entries(l.betas_size()));
      return;
    }
    for (int i = 0; i < l.betas_size(); ++i) {
      if (!(l.betas(i) >= 0.0 && l.betas(i) <= 1.0))
        p.add(el(pre + ".betas", i), "must be in [0, 1]", num(l.betas(i)));
      if (i > 0 && !(l.betas(i) > l.betas(i - 1)))
        p.add(el(pre + ".betas", i), "must be strictly ascending", num(l.betas(i)));
    }
    if (l.betas(l.betas_size() - 1) != 1.0)
      p.add(el(pre + ".betas", l.betas_size() - 1), "the last inverse temperature must be 1",
            num(l.betas(l.betas_size() - 1)));
    if (!has_reference && l.betas(0) <= 0.0)
      p.add(el(pre + ".betas", 0), "must be > 0 without a reference (exp(-0 phi) is improper)",
            num(l.betas(0)));
    return;
  }
  if (l.betas_size() > 0)
    p.add(pre + ".betas", "given, but the ladder kind is not EXPLICIT", entries(l.betas_size()));
  if (l.n_levels() < 2)
    p.add(pre + ".n_levels", "required: the number of levels, >= 2",
          num(std::int64_t{l.n_levels()}));
  if (l.has_beta_min()) {
    if (!(l.beta_min() >= 0.0 && l.beta_min() < 1.0)) {
      p.add(pre + ".beta_min", "must be in [0, 1)", num(l.beta_min()));
    } else if (l.beta_min() == 0.0 &&
               (!has_reference || l.kind() == v1::TemperingLadderConfig::GEOMETRIC)) {
      p.add(pre + ".beta_min",
            has_reference ? "must be > 0 for a GEOMETRIC ladder"
                          : "must be > 0 without a reference (exp(-0 phi) is improper)",
            num(l.beta_min()));
    }
  }
  optional_positive(p, pre + ".sigmoid_scale", l.has_sigmoid_scale(), l.sigmoid_scale());
}

}  // namespace pemc::config
