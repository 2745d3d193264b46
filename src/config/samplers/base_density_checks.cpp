#include "config/samplers/base_density_checks.hpp"

#include "config/file_checks.hpp"

namespace pemc::config {

namespace {

void check_gaussian_base(const v1::GaussianBaseConfig& g, const std::string& pre, Problems& p) {
  if ((g.mean_size() > 0) == !g.mean_file().empty())
    p.add(pre, "give exactly one of mean and mean_file");
  const int covs = (g.variance_size() > 0) + (g.covariance_size() > 0) +
                   !g.covariance_file().empty() + !g.cov_chol_file().empty();
  if (covs > 1)
    p.add(pre, "give at most one of covariance, variance, covariance_file and cov_chol_file");
  all_positive(p, pre + ".variance", g.variance());
  if (!g.has_log_zeta())
    p.add(pre + ".log_zeta", "required: the approximation log zeta to log Z (eq. 14)");
  for (const auto& [field, file] : {std::pair{".mean_file", g.mean_file()},
                                    {".covariance_file", g.covariance_file()},
                                    {".cov_chol_file", g.cov_chol_file()}})
    if (!file.empty()) readable_file(p, pre + field, file);
}

}  // namespace

void check_base_density(const v1::BaseDensityConfig& b, const std::string& bp, Problems& p) {
  switch (b.kind_case()) {
    case v1::BaseDensityConfig::kGaussian:
      check_gaussian_base(b.gaussian(), bp + ".gaussian", p);
      break;
    case v1::BaseDensityConfig::kLaplace: {
      const auto& s = b.laplace().search();
      const std::string sp = bp + ".laplace.search";
      if (s.has_n_starts()) in_range(p, sp + ".n_starts", s.n_starts(), 1, 10000);
      optional_positive(p, sp + ".init_radius", s.has_init_radius(), s.init_radius());
      optional_at_least(p, sp + ".max_iterations", s.has_max_iterations(), s.max_iterations(), 1);
      optional_positive(p, sp + ".gradient_tolerance", s.has_gradient_tolerance(),
                        s.gradient_tolerance());
      if (s.has_history()) in_range(p, sp + ".history", s.history(), 1, 100);
      optional_positive(p, sp + ".hessian_step", s.has_hessian_step(), s.hessian_step());
      break;
    }
    case v1::BaseDensityConfig::kBoltzmannMeanField: {
      const auto& m = b.boltzmann_mean_field();
      const std::string mp = bp + ".boltzmann_mean_field";
      optional_at_least(p, mp + ".n_starts", m.has_n_starts(), m.n_starts(), 1);
      optional_at_least(p, mp + ".max_iterations", m.has_max_iterations(), m.max_iterations(), 1);
      optional_positive(p, mp + ".tolerance", m.has_tolerance(), m.tolerance());
      break;
    }
    case v1::BaseDensityConfig::kVariational: {
      const auto& v = b.variational();
      const std::string vp = bp + ".variational";
      optional_at_least(p, vp + ".iterations", v.has_iterations(), v.iterations(), 2);
      optional_at_least(p, vp + ".samples_per_step", v.has_samples_per_step(), v.samples_per_step(),
                        1);
      optional_positive(p, vp + ".learning_rate", v.has_learning_rate(), v.learning_rate());
      optional_at_least(p, vp + ".elbo_samples", v.has_elbo_samples(), v.elbo_samples(), 1);
      break;
    }
    case v1::BaseDensityConfig::kMixture: {
      const auto& m = b.mixture();
      const std::string mp = bp + ".mixture";
      if (m.has_widen() && !(m.widen() >= 1.0)) p.add(mp + ".widen", "must be >= 1", num(m.widen()));
      if (m.has_defensive_weight() && !(m.defensive_weight() >= 0.0 && m.defensive_weight() < 1.0))
        p.add(mp + ".defensive_weight", "must be in [0, 1)", num(m.defensive_weight()));
      optional_positive(p, mp + ".defensive_widen", m.has_defensive_widen(), m.defensive_widen());
      optional_at_least(p, mp + ".max_components", m.has_max_components(), m.max_components(), 1);
      break;
    }
    case v1::BaseDensityConfig::KIND_NOT_SET:
      p.add(bp, "required: set one of " + oneof_names(v1::BaseDensityConfig::descriptor()));
      break;
  }
}

}  // namespace pemc::config
