#include "config/validate.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <google/protobuf/descriptor.h>
#include <unistd.h>

#include <Eigen/Cholesky>
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <set>
#include <unordered_map>

#include "adapt/warmup_adapter.hpp"
#include "config/file_checks.hpp"
#include "config/finite_and_enum_checks.hpp"
#include "config/init_point.hpp"
#include "config/matrix_checks.hpp"
#include "config/overrides.hpp"
#include "core/error.hpp"
#include "core/types.hpp"
#include "extended/pseudo_extended.hpp"

namespace pemc::config {

namespace pb = google::protobuf;
namespace v1 = pemc::v1;

namespace {

// Lines of one ConfigError; the rest are counted.
constexpr std::size_t kMaxReportedProblems = 100;

// ---- targets ----------------------------------------------------------------------------------
void check_gaussian(const v1::GaussianTarget& g, Problems& p) {
  const std::string pre = "target.gaussian";
  const std::int64_t d = g.mean_size();
  if (d == 0) {
    p.add(pre + ".mean", "required: the mean (its size is the dimension; dimension 0 is not allowed)");
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
            "must have dim*dim = " + num(d * d) + " entries (row-major, dim = mean size " + num(d) + ")",
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

void check_mixture(const v1::MixtureTarget& m, Problems& p) {
  const std::string pre = "target.mixture";
  const bool preset = m.preset() != v1::MixtureTarget::PRESET_UNSPECIFIED;
  if (preset && m.components_size() > 0) {
    p.add(pre + ".components", "give either a preset or components, not both",
          entries(m.components_size()) + " with preset " +
              v1::MixtureTarget::Preset_Name(m.preset()));
    return;
  }
  if (!preset && m.components_size() == 0) {
    p.add(pre, "required: a preset (BIMODAL_1D, KOU_A, KOU_B) or at least one component");
    return;
  }
  if (m.components_size() > kMaxDimension) {
    p.add(pre + ".components", "more components than the limit " + num(kMaxDimension),
          num(std::int64_t{m.components_size()}));
    return;
  }
  const std::int64_t dim = m.components_size() > 0 ? m.components(0).mean_size() : 0;
  for (int k = 0; k < m.components_size(); ++k) {
    const auto& c = m.components(k);
    const std::string cp = el(pre + ".components", k);
    positive(p, cp + ".weight", c.weight());
    const std::int64_t dk = c.mean_size();
    if (dk == 0) {
      p.add(cp + ".mean", "required: the component mean (dimension 0 is not allowed)");
      continue;
    }
    if (dk > kMaxDimension) {
      p.add(cp + ".mean", "dimension above the limit " + num(kMaxDimension), entries(dk));
      continue;
    }
    if (k > 0 && dim > 0 && dk != dim) {
      p.add(cp + ".mean",
            "all components need the same dimension: components[0].mean has " + entries(dim),
            entries(dk));
    }
    const bool iso = c.has_variance();
    const bool diag = c.diag_variance_size() > 0;
    if (iso && diag) {
      p.add(cp + ".diag_variance", "give either variance (isotropic) or diag_variance, not both");
    } else if (!iso && !diag) {
      p.add(cp, "required: variance (isotropic, > 0) or diag_variance (" + entries(dk) + " > 0)");
    } else if (iso) {
      positive(p, cp + ".variance", c.variance());
    } else if (c.diag_variance_size() != dk) {
      p.add(cp + ".diag_variance", "must have " + entries(dk) + " (the component mean's size)",
            entries(c.diag_variance_size()));
    } else {
      all_positive(p, cp + ".diag_variance", c.diag_variance());
    }
  }
}

void check_boltzmann(const v1::BoltzmannTarget& b, Problems& p) {
  const std::string pre = "target.boltzmann";
  const bool w = !b.weights_file().empty();
  const bool q = !b.q_file().empty();
  const bool g = b.has_generated();
  const int sources = int{w} + int{q} + int{g};
  if (sources == 0) {
    p.add(pre,
          "required: exactly one source of the model: weights_file + bias_file, q_file + "
          "bias_file, or generated { ... }");
    return;
  }
  if (sources > 1) {
    if (w && q) p.add(pre + ".q_file", "weights_file and q_file are exclusive (give one)", quoted(b.q_file()));
    if (g && (w || q)) {
      p.add(pre + ".generated", std::string("generated is exclusive with ") + (w ? "weights_file" : "q_file") +
                                    " (give one source)");
    }
    return;
  }
  if (w || q) {
    if (b.bias_file().empty()) {
      p.add(pre + ".bias_file", std::string("required with ") + (w ? "weights_file" : "q_file"));
    } else {
      readable_file(p, pre + ".bias_file", b.bias_file(), kMaxBoltzmannFileBytes);
    }
    if (w) readable_file(p, pre + ".weights_file", b.weights_file(), kMaxBoltzmannFileBytes);
    if (q) readable_file(p, pre + ".q_file", b.q_file(), kMaxBoltzmannFileBytes);
  } else {
    if (!b.bias_file().empty()) {
      p.add(pre + ".bias_file", "not used with generated (the biases are generated too); remove it",
            quoted(b.bias_file()));
    }
    const auto& gen = b.generated();
    in_range(p, pre + ".generated.n_units", gen.n_units(), 2, kMaxBoltzmannUnits);
    positive(p, pre + ".generated.weight_scale_hi", gen.weight_scale_hi());
    positive(p, pre + ".generated.weight_scale_lo", gen.weight_scale_lo());
    positive(p, pre + ".generated.bias_scale", gen.bias_scale());
  }
  in_range(p, pre + ".max_enumeration_units", b.max_enumeration_units(), 0, kMaxEnumerationUnitsLimit);
}

void check_horseshoe(const v1::HorseshoeLogisticTarget& h, Problems& p) {
  const std::string pre = "target.horseshoe_logistic";
  readable_file(p, pre + ".data_file", h.data_file());
  positive(p, pre + ".p0", h.p0());
  if (!(h.train_fraction() > 0 && h.train_fraction() < 1)) {
    p.add(pre + ".train_fraction", "must be in (0, 1)", num(h.train_fraction()));
  }
  positive(p, pre + ".sigma", h.sigma());
  positive(p, pre + ".slab_scale", h.slab_scale());
  positive(p, pre + ".slab_df", h.slab_df());
  positive(p, pre + ".intercept_scale", h.intercept_scale());
}

void check_target(const v1::RunConfig& cfg, Problems& p) {
  if (!cfg.has_target() || cfg.target().kind_case() == v1::TargetConfig::KIND_NOT_SET) {
    p.add("target", "required: set one of " + oneof_names(v1::TargetConfig::descriptor()));
    return;
  }
  const auto& t = cfg.target();
  if (t.has_box_lower() && t.has_box_upper() && !(t.box_lower() < t.box_upper())) {
    p.add("target.box_upper", "box_lower must be < box_upper",
          "box_lower " + num(t.box_lower()) + ", box_upper " + num(t.box_upper()));
  }
  switch (t.kind_case()) {
    case v1::TargetConfig::kGaussian:
      check_gaussian(t.gaussian(), p);
      break;
    case v1::TargetConfig::kCorrelatedGaussian: {
      const auto& c = t.correlated_gaussian();
      const std::string pre = "target.correlated_gaussian";
      // O(dim) memory (tridiagonal precision), so only the dimension limit applies.
      in_range(p, pre + ".dim", c.dim(), 1, kMaxDimension);
      if (!(std::fabs(c.rho()) < 1)) p.add(pre + ".rho", "must be in (-1, 1)", num(c.rho()));
      break;
    }
    case v1::TargetConfig::kMixture:
      check_mixture(t.mixture(), p);
      break;
    case v1::TargetConfig::kBoltzmann:
      check_boltzmann(t.boltzmann(), p);
      break;
    case v1::TargetConfig::kHorseshoeLogistic:
      check_horseshoe(t.horseshoe_logistic(), p);
      break;
    case v1::TargetConfig::kRadon:
      readable_file(p, "target.radon.data_file", t.radon().data_file());
      break;
    case v1::TargetConfig::kBanana:
      if (t.banana().has_v()) positive(p, "target.banana.v", t.banana().v());
      break;
    case v1::TargetConfig::kFlower: {
      const auto& f = t.flower();
      if (f.has_sd()) positive(p, "target.flower.sd", f.sd());
      if (f.has_petals() && f.petals() < 1) p.add("target.flower.petals", "must be >= 1", num(std::int64_t{f.petals()}));
      break;
    }
    case v1::TargetConfig::kFunnel: {
      const auto& f = t.funnel();
      in_range(p, "target.funnel.dim", f.dim(), 2, kMaxDimension);
      if (f.has_v_scale()) positive(p, "target.funnel.v_scale", f.v_scale());
      break;
    }
    case v1::TargetConfig::kPlugin:
      readable_file(p, "target.plugin.library", t.plugin().library());
      break;
    case v1::TargetConfig::kStan:
      readable_file(p, "target.stan.model_file", t.stan().model_file());
      if (!t.stan().data_file().empty())
        readable_file(p, "target.stan.data_file", t.stan().data_file(), kMaxStanDataBytes);
      break;
    case v1::TargetConfig::KIND_NOT_SET:
      break;
  }
}

// ---- samplers ---------------------------------------------------------------------------------
void check_adaptation(const v1::AdaptationConfig& a, const std::string& pre, Problems& p) {
  if (a.has_target_accept() && !(a.target_accept() > 0 && a.target_accept() < 1)) {
    p.add(pre + ".target_accept", "must be in (0, 1)", num(a.target_accept()));
  }
  if (a.has_gamma()) positive(p, pre + ".gamma", a.gamma());
  if (a.has_t0() && !(a.t0() >= 0)) p.add(pre + ".t0", "must be >= 0", num(a.t0()));
  // Dual averaging converges for kappa in (0.5, 1] (Hoffman & Gelman 2014, Section 3.2.1).
  if (a.has_kappa() && !(a.kappa() > 0.5 && a.kappa() <= 1)) {
    p.add(pre + ".kappa", "must be in (0.5, 1]", num(a.kappa()));
  }
  if (a.has_init_buffer() && a.init_buffer() < 0) {
    p.add(pre + ".init_buffer", "must be >= 0", num(std::int64_t{a.init_buffer()}));
  }
  if (a.has_term_buffer() && a.term_buffer() < 0) {
    p.add(pre + ".term_buffer", "must be >= 0", num(std::int64_t{a.term_buffer()}));
  }
  if (a.has_base_window() && a.base_window() < 1) {
    p.add(pre + ".base_window", "must be >= 1", num(std::int64_t{a.base_window()}));
  }
}

void check_metric(v1::MetricKind metric, const pb::RepeatedField<double>& inv,
                  const std::string& pre, std::optional<std::int64_t> dim, Problems& p) {
  const std::string path = pre + ".inverse_metric";
  const std::int64_t n = inv.size();
  if (metric == v1::DENSE && dim) dense_fits(p, pre + ".metric", *dim, 4, "inverse metric, Cholesky factor, adaptation estimates");
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

// step_size is required, except where the first step size can be searched for: a top-level
// sampler (`top_level_warmup` is its warmup length) that adapts during a warmup.
void check_step_size(bool has, double step_size, const v1::AdaptationConfig& a,
                     const std::string& pre, std::optional<std::int64_t> top_level_warmup,
                     Problems& p) {
  const std::string path = pre + ".step_size";
  if (has) {
    positive(p, path, step_size);
  } else if (!top_level_warmup) {
    p.add(path, "required for the kernel of a composite sampler (it is not searched for)");
  } else if (!a.enabled()) {
    p.add(path, "required when adaptation is disabled (only an adapting sampler searches for it)");
  } else if (*top_level_warmup <= 0) {
    p.add(path, "required when warmup is 0 (it is searched for at the start of warmup)");
  }
}

void check_hmc(const v1::HmcConfig& h, const std::string& pre, std::optional<std::int64_t> dim,
               std::optional<std::int64_t> top_level_warmup, Problems& p) {
  check_step_size(h.has_step_size(), h.step_size(), h.adaptation(), pre, top_level_warmup, p);
  in_range(p, pre + ".n_leapfrog", h.n_leapfrog(), 1, kMaxLeapfrogSteps);
  check_metric(h.metric(), h.inverse_metric(), pre, dim, p);
  check_adaptation(h.adaptation(), pre + ".adaptation", p);
}

void check_nuts(const v1::NutsConfig& n, const std::string& pre, std::optional<std::int64_t> dim,
                std::optional<std::int64_t> top_level_warmup, Problems& p) {
  check_step_size(n.has_step_size(), n.step_size(), n.adaptation(), pre, top_level_warmup, p);
  if (n.has_max_tree_depth()) in_range(p, pre + ".max_tree_depth", n.max_tree_depth(), 1, kMaxTreeDepthLimit);
  if (n.has_max_energy_error()) positive(p, pre + ".max_energy_error", n.max_energy_error());
  check_metric(n.metric(), n.inverse_metric(), pre, dim, p);
  check_adaptation(n.adaptation(), pre + ".adaptation", p);
}

// The HMC/NUTS kernel inside a composite sampler. Its space is not the target's (extended,
// tempered or augmented), so dimension-dependent metric checks are left to the sampler's factory.
void check_local_kernel(const v1::HmcConfig* hmc, const v1::NutsConfig* nuts,
                        const std::string& pre, Problems& p) {
  if (hmc) {
    check_hmc(*hmc, pre + ".hmc", std::nullopt, std::nullopt, p);
  } else if (nuts) {
    check_nuts(*nuts, pre + ".nuts", std::nullopt, std::nullopt, p);
  } else {
    p.add(pre, "required: set hmc or nuts (the local kernel)");
  }
}

template <class C>
void check_local_kernel_of(const C& c, const std::string& pre, Problems& p) {
  check_local_kernel(c.has_hmc() ? &c.hmc() : nullptr, c.has_nuts() ? &c.nuts() : nullptr, pre, p);
}

// CT paper eq. (4): the base/reference must be a normalised density; file and inline forms are
// exclusive.
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
      p.add(pre + ".betas", "EXPLICIT needs at least 2 inverse temperatures", entries(l.betas_size()));
      return;
    }
    for (int i = 0; i < l.betas_size(); ++i) {
      if (!(l.betas(i) >= 0.0 && l.betas(i) <= 1.0)) p.add(el(pre + ".betas", i), "must be in [0, 1]", num(l.betas(i)));
      if (i > 0 && !(l.betas(i) > l.betas(i - 1)))
        p.add(el(pre + ".betas", i), "must be strictly ascending", num(l.betas(i)));
    }
    if (l.betas(l.betas_size() - 1) != 1.0)
      p.add(el(pre + ".betas", l.betas_size() - 1), "the last inverse temperature must be 1",
            num(l.betas(l.betas_size() - 1)));
    if (!has_reference && l.betas(0) <= 0.0)
      p.add(el(pre + ".betas", 0), "must be > 0 without a reference (exp(-0 phi) is improper)", num(l.betas(0)));
    return;
  }
  if (l.betas_size() > 0) p.add(pre + ".betas", "given, but the ladder kind is not EXPLICIT", entries(l.betas_size()));
  if (l.n_levels() < 2) p.add(pre + ".n_levels", "required: the number of levels, >= 2", num(std::int64_t{l.n_levels()}));
  if (l.has_beta_min()) {
    if (!(l.beta_min() >= 0.0 && l.beta_min() < 1.0)) {
      p.add(pre + ".beta_min", "must be in [0, 1)", num(l.beta_min()));
    } else if (l.beta_min() == 0.0 &&
               (!has_reference || l.kind() == v1::TemperingLadderConfig::GEOMETRIC)) {
      p.add(pre + ".beta_min",
            has_reference ? "must be > 0 for a GEOMETRIC ladder" : "must be > 0 without a reference (exp(-0 phi) is improper)",
            num(l.beta_min()));
    }
  }
  optional_positive(p, pre + ".sigmoid_scale", l.has_sigmoid_scale(), l.sigmoid_scale());
}

void check_pseudo_extended(const v1::PseudoExtendedConfig& c, const std::string& pre, Problems& p) {
  for (auto& issue : extended::config_problems(c, pre)) {
    // The kernel's absence is reported by check_local_kernel_of with the same path.
    if (issue.field_path == pre + ".kernel") continue;
    p.add(issue.field_path, issue.reason, issue.value);
  }
  check_local_kernel_of(c, pre, p);
}

void check_gaussian_base(const v1::GaussianBaseConfig& g, const std::string& pre, Problems& p) {
  if ((g.mean_size() > 0) == !g.mean_file().empty())
    p.add(pre, "give exactly one of mean and mean_file");
  const int covs = (g.variance_size() > 0) + (g.covariance_size() > 0) +
                   !g.covariance_file().empty() + !g.cov_chol_file().empty();
  if (covs > 1) p.add(pre, "give at most one of covariance, variance, covariance_file and cov_chol_file");
  all_positive(p, pre + ".variance", g.variance());
  if (!g.has_log_zeta()) p.add(pre + ".log_zeta", "required: the approximation log zeta to log Z (eq. 14)");
  for (const auto& [field, file] : {std::pair{".mean_file", g.mean_file()}, {".covariance_file", g.covariance_file()},
                                    {".cov_chol_file", g.cov_chol_file()}})
    if (!file.empty()) readable_file(p, pre + field, file);
}

void check_continuous_tempering(const v1::ContinuousTemperingConfig& c, const std::string& pre,
                                Problems& p) {
  check_local_kernel_of(c, pre, p);
  const auto& b = c.base();
  const std::string bp = pre + ".base";
  switch (b.kind_case()) {
    case v1::BaseDensityConfig::kGaussian: check_gaussian_base(b.gaussian(), bp + ".gaussian", p); break;
    case v1::BaseDensityConfig::kLaplace: {
      const auto& s = b.laplace().search();
      const std::string sp = bp + ".laplace.search";
      if (s.has_n_starts()) in_range(p, sp + ".n_starts", s.n_starts(), 1, 10000);
      optional_positive(p, sp + ".init_radius", s.has_init_radius(), s.init_radius());
      optional_at_least(p, sp + ".max_iterations", s.has_max_iterations(), s.max_iterations(), 1);
      optional_positive(p, sp + ".gradient_tolerance", s.has_gradient_tolerance(), s.gradient_tolerance());
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
      optional_at_least(p, vp + ".samples_per_step", v.has_samples_per_step(), v.samples_per_step(), 1);
      optional_positive(p, vp + ".learning_rate", v.has_learning_rate(), v.learning_rate());
      optional_at_least(p, vp + ".elbo_samples", v.has_elbo_samples(), v.elbo_samples(), 1);
      break;
    }
    case v1::BaseDensityConfig::KIND_NOT_SET:
      p.add(bp, "required: set one of " + oneof_names(v1::BaseDensityConfig::descriptor()));
      break;
  }
  optional_positive(p, pre + ".sigmoid_scale", c.has_sigmoid_scale(), c.sigmoid_scale());
  optional_positive(p, pre + ".control_mass", c.has_control_mass(), c.control_mass());
  if (c.has_sweeps_per_draw()) in_range(p, pre + ".sweeps_per_draw", c.sweeps_per_draw(), 1, 10000);
  optional_at_least(p, pre + ".n_batches", c.has_n_batches(), c.n_batches(), 2);
  if (c.has_initial_beta()) {
    const double b0 = c.initial_beta();
    if (c.variant() == v1::ContinuousTemperingConfig::JOINT && !(b0 > 0.0 && b0 < 1.0))
      p.add(pre + ".initial_beta", "must be in (0, 1) for the JOINT variant", num(b0));
    else if (!(b0 >= 0.0 && b0 <= 1.0))
      p.add(pre + ".initial_beta", "must be in [0, 1]", num(b0));
  }
}

// Bootstrap rounds (tempering.proto ContinuousTemperingBootstrapConfig). Needs the run: the
// rounds add to its iterations, and its checkpoints cannot hold the refitted bases.
void check_ct_bootstrap(const v1::RunConfig& cfg, const std::string& pre, Problems& p) {
  const auto& c = cfg.sampler().continuous_tempering();
  if (!c.has_bootstrap()) return;
  const auto& b = c.bootstrap();
  const std::string bp = pre + ".bootstrap";
  constexpr std::int64_t kMaxRounds = 100;
  if (b.rounds() < 1 || b.rounds() > kMaxRounds)
    p.add(bp + ".rounds", "must be in [1, " + num(kMaxRounds) +
                              "] (bootstrap rounds before the final one; omit bootstrap for none)",
          num(std::int64_t{b.rounds()}));
  if (b.draws_per_round() < 1)
    p.add(bp + ".draws_per_round", "must be >= 1 (post-warmup draws per chain in a bootstrap round)",
          num(b.draws_per_round()));
  else if (b.draws_per_round() > kMaxIterations)
    p.add(bp + ".draws_per_round", "more than the limit " + num(kMaxIterations), num(b.draws_per_round()));
  if (b.has_warmup() && b.warmup() < 0) p.add(bp + ".warmup", "must be >= 0", num(b.warmup()));
  optional_positive(p, bp + ".covariance_scale", b.has_covariance_scale(), b.covariance_scale());
  if (b.has_keep_variance_ratio() && !(b.keep_variance_ratio() >= 1.0))
    p.add(bp + ".keep_variance_ratio", "must be >= 1 (1e300: always use the refit)",
          num(b.keep_variance_ratio()));
  if (!p.has(bp + ".rounds") && !p.has(bp + ".draws_per_round") && !p.has(bp + ".warmup") &&
      cfg.iterations() >= 0 && cfg.warmup() >= 0) {
    const double per_round = static_cast<double>(b.has_warmup() ? b.warmup() : cfg.warmup()) +
                             static_cast<double>(b.draws_per_round()) *
                                 (c.has_sweeps_per_draw() && c.sweeps_per_draw() > 1 ? c.sweeps_per_draw() : 1);
    if (b.rounds() * per_round + static_cast<double>(cfg.warmup()) +
            static_cast<double>(cfg.iterations()) > static_cast<double>(kMaxIterations))
      p.add(bp + ".rounds", "rounds x (warmup + draws_per_round) + warmup + iterations is more than "
                            "the limit " + num(kMaxIterations) +
                            " (a bootstrap draw counts as sweeps_per_draw iterations)",
            num(std::int64_t{b.rounds()}));
  }
  if (cfg.checkpoint().every_seconds() > 0 || cfg.checkpoint().every_iterations() > 0)
    p.add(bp, "runs with bootstrap rounds cannot be checkpointed (a checkpoint does not hold the "
              "refitted bases): set checkpoint.every_seconds and checkpoint.every_iterations to 0");
}

void check_parallel_tempering(const v1::ParallelTemperingConfig& c, const std::string& pre,
                              Problems& p) {
  check_local_kernel_of(c, pre, p);
  if (c.has_reference()) check_reference(c.reference(), pre + ".reference", p);
  check_ladder(c.ladder(), pre + ".ladder", c.has_reference(), p);
  optional_at_least(p, pre + ".n_local_steps", c.has_n_local_steps(), c.n_local_steps(), 1);
  if (c.choose_replicas() && !c.adapt_schedule())
    p.add(pre + ".choose_replicas", "needs adapt_schedule: true (K is chosen from the adapted barrier)");
  optional_positive(p, pre + ".replicas_per_barrier", c.has_replicas_per_barrier(), c.replicas_per_barrier());
  optional_at_least(p, pre + ".min_replicas", c.has_min_replicas(), c.min_replicas(), 2);
  const int lo = c.has_min_replicas() ? c.min_replicas() : 3;
  if (c.has_max_replicas() && c.max_replicas() < lo)
    p.add(pre + ".max_replicas", "must be >= min_replicas (" + num(std::int64_t{lo}) + ")", num(std::int64_t{c.max_replicas()}));
  if (c.ranks_per_chain() < 0) p.add(pre + ".ranks_per_chain", "must be >= 1 (0 means 1)", num(std::int64_t{c.ranks_per_chain()}));
  optional_at_least(p, pre + ".n_batches", c.has_n_batches(), c.n_batches(), 2);
}

void check_simulated_tempering(const v1::SimulatedTemperingConfig& c, const std::string& pre,
                               Problems& p) {
  check_local_kernel_of(c, pre, p);
  if (c.has_reference()) check_reference(c.reference(), pre + ".reference", p);
  check_ladder(c.ladder(), pre + ".ladder", c.has_reference(), p);
  optional_at_least(p, pre + ".n_local_steps", c.has_n_local_steps(), c.n_local_steps(), 1);
  const auto& l = c.ladder();
  const int levels = l.kind() == v1::TemperingLadderConfig::EXPLICIT ? l.betas_size() : l.n_levels();
  if (c.log_weights_size() > 0 && c.log_weights_size() != levels)
    p.add(pre + ".log_weights", "needs one weight per level (" + num(std::int64_t{levels}) + ")",
          entries(c.log_weights_size()));
  optional_at_least(p, pre + ".first_pilot_length", c.has_first_pilot_length(), c.first_pilot_length(), 1);
  optional_at_least(p, pre + ".n_kernel_bins", c.has_n_kernel_bins(), c.n_kernel_bins(), 1);
  optional_at_least(p, pre + ".n_batches", c.has_n_batches(), c.n_batches(), 2);
}

void check_annealed_importance(const v1::AnnealedImportanceConfig& c, const std::string& pre,
                               Problems& p) {
  check_local_kernel_of(c, pre, p);
  if (!c.has_reference()) {
    p.add(pre + ".reference", "required: AIS anneals from a normalised reference (beta_0 = 0)");
  } else {
    check_reference(c.reference(), pre + ".reference", p);
  }
  check_ladder(c.ladder(), pre + ".ladder", true, p);
  const auto& l = c.ladder();
  if (l.kind() == v1::TemperingLadderConfig::EXPLICIT && l.betas_size() > 0 && l.betas(0) != 0.0)
    p.add(el(pre + ".ladder.betas", 0), "AIS starts at the reference: must be 0", num(l.betas(0)));
  if (l.kind() != v1::TemperingLadderConfig::EXPLICIT && l.has_beta_min() && l.beta_min() != 0.0 &&
      l.kind() != v1::TemperingLadderConfig::GEOMETRIC)
    p.add(pre + ".ladder.beta_min", "AIS starts at the reference: must be 0", num(l.beta_min()));
  optional_at_least(p, pre + ".n_local_steps", c.has_n_local_steps(), c.n_local_steps(), 1);
  optional_at_least(p, pre + ".n_kernel_bins", c.has_n_kernel_bins(), c.n_kernel_bins(), 1);
}

void check_sampler(const v1::RunConfig& cfg, std::optional<std::int64_t> dim, Problems& p) {
  if (!cfg.has_sampler() || cfg.sampler().kind_case() == v1::SamplerConfig::KIND_NOT_SET) {
    p.add("sampler", "required: set one of " + oneof_names(v1::SamplerConfig::descriptor()));
    return;
  }
  const auto& s = cfg.sampler();
  switch (s.kind_case()) {
    case v1::SamplerConfig::kHmc:
      check_hmc(s.hmc(), "sampler.hmc", dim, cfg.warmup(), p);
      break;
    case v1::SamplerConfig::kNuts:
      check_nuts(s.nuts(), "sampler.nuts", dim, cfg.warmup(), p);
      break;
    case v1::SamplerConfig::kRwm:
      positive(p, "sampler.rwm.proposal_scale", s.rwm().proposal_scale());
      check_adaptation(s.rwm().adaptation(), "sampler.rwm.adaptation", p);
      break;
    case v1::SamplerConfig::kMala:
      positive(p, "sampler.mala.step_size", s.mala().step_size());
      check_adaptation(s.mala().adaptation(), "sampler.mala.adaptation", p);
      break;
    case v1::SamplerConfig::kPseudoExtended:
      check_pseudo_extended(s.pseudo_extended(), "sampler.pseudo_extended", p);
      break;
    case v1::SamplerConfig::kContinuousTempering:
      check_continuous_tempering(s.continuous_tempering(), "sampler.continuous_tempering", p);
      check_ct_bootstrap(cfg, "sampler.continuous_tempering", p);
      break;
    case v1::SamplerConfig::kParallelTempering:
      check_parallel_tempering(s.parallel_tempering(), "sampler.parallel_tempering", p);
      break;
    case v1::SamplerConfig::kSimulatedTempering:
      check_simulated_tempering(s.simulated_tempering(), "sampler.simulated_tempering", p);
      break;
    case v1::SamplerConfig::kAnnealedImportance:
      check_annealed_importance(s.annealed_importance(), "sampler.annealed_importance", p);
      break;
    case v1::SamplerConfig::KIND_NOT_SET:
      break;
  }
}

// ---- run-level fields -------------------------------------------------------------------------
void check_seeds(const v1::RunConfig& cfg, Problems& p) {
  const auto& s = cfg.seeds();
  const bool values = s.values_size() > 0;
  if (values && s.count() != 0) {
    p.add("seeds.count", "give either seeds.values or seeds.base/count, not both",
          num(std::int64_t{s.count()}));
  }
  if (values && s.base() != 0) {
    p.add("seeds.base", "give either seeds.values or seeds.base/count, not both", std::to_string(s.base()));
  }
  if (!values && s.count() == 0) {
    p.add("seeds", "required: seeds.values (explicit seeds) or seeds.count >= 1 (base, base+1, ...)");
  }
  if (!values && s.count() < 0) p.add("seeds.count", "must be >= 1", num(std::int64_t{s.count()}));
  if (s.count() > kMaxSeeds) p.add("seeds.count", "more seeds than the limit " + num(kMaxSeeds), num(std::int64_t{s.count()}));
  if (s.values_size() > kMaxSeeds) {
    p.add("seeds.values", "more seeds than the limit " + num(kMaxSeeds), entries(s.values_size()));
  }
  if (!values && s.count() > 0 &&
      s.base() > std::numeric_limits<std::uint64_t>::max() - static_cast<std::uint64_t>(s.count() - 1)) {
    p.add("seeds.base", "base + count - 1 overflows uint64 (seeds would repeat)", std::to_string(s.base()));
  }
  std::unordered_map<std::uint64_t, int> first;
  int reported = 0;
  for (int i = 0; i < s.values_size(); ++i) {
    const auto [it, inserted] = first.try_emplace(s.values(i), i);
    if (inserted) continue;
    if (++reported <= kMaxElementProblems) {
      p.add(el("seeds.values", i), "duplicate of seeds.values[" + std::to_string(it->second) +
                                       "] (chains would be identical)",
            std::to_string(s.values(i)));
    } else {
      p.add("seeds.values", "more duplicate seeds (only the first " +
                                std::to_string(kMaxElementProblems) + " are listed)");
      break;
    }
  }
}

void check_output(const v1::RunConfig& cfg, Problems& p) {
  const auto& o = cfg.output();
  if (o.path().empty()) {
    p.add("output.path", "required: the record file to write");
  } else {
    const std::filesystem::path file(o.path());
    std::error_code ec;
    std::filesystem::path dir = file.parent_path();
    if (dir.empty()) dir = ".";
    const std::string rel = file.is_relative() ? " (relative to the working directory " +
                                                     quoted(working_directory()) + ")"
                                               : "";
    const auto st = std::filesystem::status(file, ec);
    const auto dst = std::filesystem::status(dir, ec);
    if (std::filesystem::is_directory(st)) {
      p.add("output.path", "is a directory; give a file path inside it", quoted(o.path()));
    } else if (!std::filesystem::exists(dst)) {
      p.add("output.path", "directory " + quoted(dir.string()) + " does not exist" + rel,
            quoted(o.path()));
    } else if (!std::filesystem::is_directory(dst)) {
      p.add("output.path", quoted(dir.string()) + " is not a directory", quoted(o.path()));
    } else if (::access(dir.c_str(), W_OK | X_OK) != 0) {
      p.add("output.path",
            "directory " + quoted(dir.string()) + " is not writable: " + std::strerror(errno),
            quoted(o.path()));
    } else if (std::filesystem::exists(st) && ::access(file.c_str(), W_OK) != 0) {
      p.add("output.path", std::string("existing file is not writable: ") + std::strerror(errno),
            quoted(o.path()));
    }
  }
  if (o.has_thin() && o.thin() < 1) p.add("output.thin", "must be >= 1", num(std::int64_t{o.thin()}));
  if (o.has_flush_every() && o.flush_every() < 1) {
    p.add("output.flush_every", "must be >= 1", num(std::int64_t{o.flush_every()}));
  }
  if (o.estimates_every() < 0) {
    p.add("output.estimates_every", "must be >= 0 (0: no running estimates)",
          num(std::int64_t{o.estimates_every()}));
  }
}

void check_init(const v1::RunConfig& cfg, std::optional<std::int64_t> dim, Problems& p) {
  const auto& in = cfg.init();
  switch (in.kind_case()) {
    case v1::InitConfig::kUniformRadius:
      positive(p, "init.uniform_radius", in.uniform_radius());
      break;
    case v1::InitConfig::kUniformBox: {
      // Each bound: one number for every coordinate (none = 0), or one per coordinate.
      const auto& box = in.uniform_box();
      bool sizes_ok = true;
      for (const auto* bound : {&box.lower(), &box.upper()}) {
        const std::string field =
            std::string("init.uniform_box.") + (bound == &box.lower() ? "lower" : "upper");
        if (bound->size() <= 1) continue;
        if (dim && bound->size() != *dim) {
          p.add(field, "must have 1 entry (every coordinate) or " + entries(*dim) +
                           " (the target's dimension)", entries(bound->size()));
          sizes_ok = false;
        }
      }
      if (box.lower_size() > 1 && box.upper_size() > 1 && box.lower_size() != box.upper_size()) {
        if (sizes_ok)
          p.add("init.uniform_box.upper", "must have as many entries as lower (" +
                                               entries(box.lower_size()) + "), or 1",
                entries(box.upper_size()));
        sizes_ok = false;
      }
      if (!sizes_ok) break;
      const int n = std::max({1, box.lower_size(), box.upper_size()});
      for (int i = 0; i < n; ++i) {
        const double lo = box_bound(box.lower(), i), hi = box_bound(box.upper(), i);
        if (!(lo < hi)) {
          p.add(n == 1 ? std::string("init.uniform_box.upper") : el("init.uniform_box.upper", i),
                "lower must be < upper", "lower " + num(lo) + ", upper " + num(hi));
          break;
        }
      }
      break;
    }
    case v1::InitConfig::kPoint: {
      const auto& x = in.point().x();
      if (x.empty()) {
        p.add("init.point.x", "required: the initial point's coordinates");
      } else if (dim && x.size() != *dim) {
        p.add("init.point.x", "must have " + entries(*dim) + " (the target's dimension)",
              entries(x.size()));
      } else if (cfg.has_target()) {
        const auto& t = cfg.target();
        for (int i = 0; i < x.size(); ++i) {
          if ((t.has_box_lower() && x[i] < t.box_lower()) || (t.has_box_upper() && x[i] > t.box_upper())) {
            p.add(el("init.point.x", i), "lies outside the target's box [box_lower, box_upper]", num(x[i]));
            break;
          }
        }
      }
      break;
    }
    case v1::InitConfig::KIND_NOT_SET:
      break;
  }
}

void check_run(const v1::RunConfig& cfg, Problems& p) {
  if (!cfg.has_iterations()) {
    p.add("iterations", "required: draws per chain after warmup (>= 1)");
  } else if (cfg.iterations() < 1) {
    p.add("iterations", "must be >= 1", num(cfg.iterations()));
  }
  if (cfg.has_warmup() && cfg.warmup() < 0) p.add("warmup", "must be >= 0", num(cfg.warmup()));
  // Beyond this the per-chain count warmup + iterations (and the run's total) could overflow.
  if (cfg.iterations() > kMaxIterations) {
    p.add("iterations", "more than the limit " + num(kMaxIterations), num(cfg.iterations()));
  } else if (cfg.iterations() >= 0 && cfg.warmup() > kMaxIterations - cfg.iterations()) {
    p.add("warmup", "warmup + iterations is more than the limit " + num(kMaxIterations),
          num(cfg.warmup()));
  }
  check_seeds(cfg, p);
}

}  // namespace

std::optional<std::int64_t> known_dimension(const v1::RunConfig& config) {
  const auto& t = config.target();
  std::int64_t d = 0;
  switch (t.kind_case()) {
    case v1::TargetConfig::kGaussian: d = t.gaussian().mean_size(); break;
    case v1::TargetConfig::kCorrelatedGaussian: d = t.correlated_gaussian().dim(); break;
    case v1::TargetConfig::kFunnel: d = t.funnel().dim(); break;
    case v1::TargetConfig::kBanana:
    case v1::TargetConfig::kFlower: d = 2; break;
    case v1::TargetConfig::kMixture: {
      const auto& m = t.mixture();
      switch (m.preset()) {
        case v1::MixtureTarget::BIMODAL_1D: d = 1; break;
        case v1::MixtureTarget::KOU_A:
        case v1::MixtureTarget::KOU_B: d = 2; break;
        default: d = m.components_size() > 0 ? m.components(0).mean_size() : 0; break;
      }
      break;
    }
    default: break;
  }
  if (d < 1 || d > kMaxDimension) return std::nullopt;
  return d;
}

std::vector<Problem> find_problems(const LoadedConfig& c, Scope scope) {
  Problems p;
  const auto& cfg = c.config;
  const auto shared = [&] {
    check_output(cfg, p);
    // Checkpoints (docs/checkpointing.md): periods >= 0 (0 = none); not onto the output.
    if (cfg.checkpoint().every_seconds() < 0)
      p.add("checkpoint.every_seconds", "must be >= 0 (0: no periodic checkpoints)",
            num(cfg.checkpoint().every_seconds()));
    if (cfg.checkpoint().every_iterations() < 0)
      p.add("checkpoint.every_iterations", "must be >= 0 (0: no periodic checkpoints)",
            num(cfg.checkpoint().every_iterations()));
    if (!cfg.checkpoint().path().empty() && cfg.checkpoint().path() == cfg.output().path())
      p.add("checkpoint.path", "must differ from output.path (the record file)",
            cfg.checkpoint().path());
  };
  if (scope == Scope::kShared) {
    shared();
    return p.take();
  }
  check_finite_and_enums(cfg, "", p);
  const auto dim = known_dimension(cfg);
  check_target(cfg, p);
  check_sampler(cfg, dim, p);
  check_run(cfg, p);
  check_init(cfg, dim, p);
  if (scope == Scope::kAll) shared();
  if (cfg.logging().has_progress_interval_seconds()) {
    positive(p, "logging.progress_interval_seconds", cfg.logging().progress_interval_seconds());
  }
  in_range(p, "chains_per_seed", cfg.chains_per_seed(), 1, kMaxChainsPerSeed);
  const std::int64_t n_seeds = cfg.seeds().values_size() > 0 ? cfg.seeds().values_size() : cfg.seeds().count();
  if (n_seeds > 0 && cfg.chains_per_seed() > 0 &&
      n_seeds * std::int64_t{cfg.chains_per_seed()} > kMaxTotalChains) {
    p.add("chains_per_seed",
          "seeds x chains_per_seed = " + num(n_seeds * std::int64_t{cfg.chains_per_seed()}) +
              " chains, more than the limit " + num(kMaxTotalChains),
          num(std::int64_t{cfg.chains_per_seed()}));
  } else if (n_seeds > 0 && cfg.chains_per_seed() > 0 && cfg.iterations() > 0 && cfg.warmup() >= 0 &&
             static_cast<double>(n_seeds) * cfg.chains_per_seed() *
                     (static_cast<double>(cfg.warmup()) + static_cast<double>(cfg.iterations())) >
                 4e18) {
    p.add("iterations", "chains x (warmup + iterations) is more than 4e18 iterations in total",
          num(cfg.iterations()));
  }
  return p.take();
}

// A top-level HMC/NUTS sampler's adaptation over a warmup too short for Stan's windows: what the
// warmup adapter (adapt/warmup_adapter.cpp) does instead. Nothing when the windows fit.
std::optional<Problem> short_warmup_warning(const v1::AdaptationConfig& a, bool metric_adaptable,
                                            std::int64_t warmup, const std::string& pre) {
  if (!a.enabled() || warmup < 0) return std::nullopt;  // a negative warmup is a problem
  const std::string path = pre + ".adaptation";
  const std::string got = "warmup " + num(warmup);
  if (warmup == 0)
    return Problem{path, "warmup is 0, so nothing is adapted: step_size and the metric are used "
                         "as given", got};
  if (!a.adapt_metric() || !metric_adaptable) return std::nullopt;
  if (warmup < adapt::kMinMetricWarmup)
    return Problem{path, "warmup under " + num(adapt::kMinMetricWarmup) +
                             " iterations: only the step size is adapted, the metric stays as given",
                   got};
  const std::int64_t windows = std::int64_t{a.init_buffer()} + a.base_window() + a.term_buffer();
  if (warmup >= windows) return std::nullopt;
  const auto init = static_cast<std::int64_t>(adapt::kShortWarmupInitFraction * warmup);
  const auto term = static_cast<std::int64_t>(adapt::kShortWarmupTermFraction * warmup);
  return Problem{path,
                 "warmup is shorter than init_buffer + base_window + term_buffer = " +
                     num(windows) + ": the metric is estimated once, from warmup iterations " +
                     num(init) + " to " + num(warmup - term - 1) +
                     "; the step size alone adapts before and after",
                 got};
}

std::vector<Problem> find_warnings(const LoadedConfig& c) {
  std::vector<Problem> out;
  const auto& cfg = c.config;
  const auto& s = cfg.sampler();
  std::optional<Problem> warmup_warning;
  if (s.has_hmc())
    warmup_warning = short_warmup_warning(s.hmc().adaptation(), s.hmc().metric() == v1::DIAGONAL ||
                                                                    s.hmc().metric() == v1::DENSE,
                                          cfg.warmup(), "sampler.hmc");
  if (s.has_nuts())
    warmup_warning = short_warmup_warning(s.nuts().adaptation(), s.nuts().metric() != v1::UNIT,
                                          cfg.warmup(), "sampler.nuts");
  if (warmup_warning) out.push_back(*warmup_warning);
  if (cfg.sampler().has_pseudo_extended()) {
    for (auto& w : extended::propriety_warnings(cfg.sampler().pseudo_extended(), cfg.target(),
                                                known_dimension(cfg), "sampler.pseudo_extended"))
      out.push_back({w.field_path, w.reason, w.value});
  }
  return out;
}

void validate(const LoadedConfig& c, Scope scope) {
  if (scope != Scope::kShared)
    for (const auto& w : find_warnings(c))
      spdlog::warn("{}: {}: {}{}", c.source.where(w.field_path), w.field_path, w.reason,
                   w.value ? " (got " + *w.value + ")" : std::string());
  const auto problems = find_problems(c, scope);
  if (problems.empty()) return;
  std::string msg = "invalid config '" + c.path.string() + "': " + std::to_string(problems.size()) +
                    (problems.size() == 1 ? " problem" : " problems");
  for (std::size_t i = 0; i < problems.size() && i < kMaxReportedProblems; ++i) {
    const auto& pr = problems[i];
    msg += "\n  " + c.source.where(pr.field_path) + ": " + pr.field_path + ": " + pr.reason;
    if (pr.value) msg += " (got " + *pr.value + ")";
  }
  if (problems.size() > kMaxReportedProblems) {
    msg += "\n  ... and " + std::to_string(problems.size() - kMaxReportedProblems) + " more";
  }
  throw ConfigError(msg);
}

}  // namespace pemc::config
