#include "core/number_file.hpp"
#include "extended/base_density_fit.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>

#include "core/error.hpp"
#include "core/numerics.hpp"
#include "densities/gaussian.hpp"
#include "extended/mixture_base.hpp"
#include "pemc/v1/tempering.pb.h"
#include "rng/stream.hpp"
#include "targets/boltzmann.hpp"

namespace pemc::extended {

namespace {

// A Gaussian as BaseDensity holds its density.
densities::DensityPtr shared_gaussian(densities::Gaussian g) {
  return std::make_shared<const densities::Gaussian>(std::move(g));
}

}  // namespace

// ---- multi-start Laplace fits -----------------------------------------------------------------

std::vector<LocalGaussianFit> find_laplace_fits(const targets::Target& f,
                                                const ModeSearchOptions& options) {
  const int d = f.dim();
  Vector center = options.init_center.size() == d ? options.init_center : Vector::Zero(d);
  std::vector<LocalGaussianFit> fits;
  std::vector<Vector> modes;
  int n_nonfinite = 0, n_not_pd = 0, n_duplicate = 0;
  for (int s = 0; s < options.n_starts; ++s) {
    rng::Stream stream(options.seed, rng::Domain::kGenerator, kModeSearchStreamId,
                       static_cast<std::uint64_t>(s));
    Vector x0(d);
    for (int i = 0; i < d; ++i) x0[i] = center[i] + options.init_radius * (2.0 * stream.uniform() - 1.0);
    if (!std::isfinite(f.potential(x0))) {
      ++n_nonfinite;
      continue;
    }
    LbfgsResult r;
    try {
      r = minimize_lbfgs(f, x0, options.lbfgs);
    } catch (const NumericalError&) {
      ++n_nonfinite;
      continue;
    }
    bool duplicate = false;
    for (const auto& mode : modes)
      if ((mode - r.x).norm() <= options.dedup_tolerance) duplicate = true;
    if (duplicate) {
      ++n_duplicate;
      continue;
    }
    try {
      fits.push_back(laplace_fit(f, r.x, options.hessian_step));
      modes.push_back(r.x);
    } catch (const NumericalError&) {
      ++n_not_pd;
    }
  }
  if (fits.empty())
    throw NumericalError("mode search: no usable mode from " + std::to_string(options.n_starts) +
                         " starts (" + std::to_string(n_nonfinite) + " non-finite, " +
                         std::to_string(n_not_pd) + " with a non-positive-definite Hessian)");
  std::stable_sort(fits.begin(), fits.end(), [](const auto& a, const auto& b) {
    return a.log_evidence > b.log_evidence;
  });
  return fits;
}

// ---- Boltzmann mean-field fits ----------------------------------------------------------------

namespace {

// Entropy of a +-1 variable with mean m: -(p log p + (1-p) log(1-p)), p = (1+m)/2.
double binary_entropy(double m) {
  const double p = 0.5 * (1.0 + m), q = 0.5 * (1.0 - m);
  double h = 0.0;
  if (p > 0.0) h -= p * std::log(p);
  if (q > 0.0) h -= q * std::log(q);
  return h;
}

}  // namespace

std::vector<LocalGaussianFit> boltzmann_mean_field_fits(const targets::BoltzmannRelaxation& target,
                                                        const MeanFieldOptions& options) {
  const Matrix& q = target.q();
  const Vector& b = target.b();
  const auto db = q.rows(), d = q.cols();
  Matrix w = q * q.transpose();
  const double trace_d = w.diagonal().sum();
  w.diagonal().setZero();
  // l = ELBO + 0.5 Tr D + (d/2) log 2pi - d_b log 2 (eq. (52) with D = diag(QQ')).
  const double offset = 0.5 * trace_d + 0.5 * static_cast<double>(d) * kLog2Pi -
                        static_cast<double>(db) * std::log(2.0);
  std::vector<Vector> found;
  std::vector<LocalGaussianFit> fits;
  for (int s = 0; s < options.n_starts; ++s) {
    rng::Stream stream(options.seed, rng::Domain::kGenerator, kMeanFieldStreamId,
                       static_cast<std::uint64_t>(s));
    Vector m(db);
    for (Eigen::Index i = 0; i < db; ++i) m[i] = 2.0 * stream.uniform() - 1.0;
    for (int sweep = 0; sweep < options.max_iterations; ++sweep) {
      double change = 0.0;
      for (Eigen::Index i = 0; i < db; ++i) {
        const double mi = std::tanh(w.row(i).dot(m) + b[i]);  // exact coordinate maximiser
        change = std::max(change, std::fabs(mi - m[i]));
        m[i] = mi;
      }
      if (change <= options.tolerance) break;
    }
    bool duplicate = false;
    for (const auto& f : found)
      if ((f - m).cwiseAbs().maxCoeff() <= options.dedup_tolerance) duplicate = true;
    if (duplicate) continue;
    found.push_back(m);
    double elbo = 0.5 * m.dot(w * m) + b.dot(m);
    for (Eigen::Index i = 0; i < db; ++i) elbo += binary_entropy(m[i]);
    LocalGaussianFit fit;
    fit.mean = q.transpose() * m;
    const Vector var_s = (1.0 - m.array().square()).matrix();
    fit.covariance = Matrix::Identity(d, d) + q.transpose() * var_s.asDiagonal() * q;
    fit.log_evidence = elbo + offset;
    fits.push_back(std::move(fit));
  }
  std::stable_sort(fits.begin(), fits.end(), [](const auto& a, const auto& b) {
    return a.log_evidence > b.log_evidence;
  });
  return fits;
}

// ---- mean-field Gaussian variational fit --------------------------------------------------------

LocalGaussianFit fit_mean_field_gaussian(const targets::Target& f, const VariationalOptions& o) {
  const int d = f.dim();
  Vector m = o.init_mean;
  if (m.size() != d) {
    ModeSearchOptions search;
    search.n_starts = 4;
    search.seed = o.seed;
    std::vector<LocalGaussianFit> fits;
    try {
      fits = find_laplace_fits(f, search);
      m = fits.front().mean;
    } catch (const NumericalError&) {
      m = Vector::Zero(d);  // no usable mode: start at the origin
    }
  }
  Vector w = Vector::Constant(d, o.init_log_sd);
  // Adam state for (m, w).
  constexpr double kBeta1 = 0.9, kBeta2 = 0.999, kEps = 1e-8;
  Vector mom_m = Vector::Zero(d), mom_w = Vector::Zero(d), var_m = Vector::Zero(d), var_w = Vector::Zero(d);
  Vector g_m(d), g_w(d), eps(d), x(d), grad(d), sd(d);
  Vector avg_m = Vector::Zero(d), avg_w = Vector::Zero(d);
  int n_avg = 0, n_steps_with_draws = 0;
  double b1t = 1.0, b2t = 1.0;
  for (int t = 0; t < o.iterations; ++t) {
    rng::Stream stream(o.seed, rng::Domain::kGenerator, kVariationalStreamId, static_cast<std::uint64_t>(t));
    sd = w.array().exp().matrix();
    g_m.setZero();
    g_w.setZero();
    int n_ok = 0;
    for (int k = 0; k < o.samples_per_step; ++k) {
      stream.fill_normal(eps);
      x = m + sd.cwiseProduct(eps);
      const double phi = f.potential_and_gradient(x, grad);
      if (!std::isfinite(phi) || !grad.allFinite()) continue;
      g_m += grad;
      g_w += grad.cwiseProduct(sd).cwiseProduct(eps);
      ++n_ok;
    }
    if (n_ok > 0) {
      ++n_steps_with_draws;
      // Gradients of the negative ELBO.
      g_m /= n_ok;
      g_w = g_w / n_ok - Vector::Ones(d);
      b1t *= kBeta1;
      b2t *= kBeta2;
      mom_m = kBeta1 * mom_m + (1 - kBeta1) * g_m;
      mom_w = kBeta1 * mom_w + (1 - kBeta1) * g_w;
      var_m = kBeta2 * var_m + (1 - kBeta2) * g_m.cwiseAbs2();
      var_w = kBeta2 * var_w + (1 - kBeta2) * g_w.cwiseAbs2();
      const double step = o.learning_rate * std::sqrt(1 - b2t) / (1 - b1t);
      m.array() -= step * mom_m.array() / (var_m.array().sqrt() + kEps);
      w.array() -= step * mom_w.array() / (var_w.array().sqrt() + kEps);
    }
    if (2 * t >= o.iterations) {
      avg_m += m;
      avg_w += w;
      ++n_avg;
    }
  }
  if (n_steps_with_draws == 0)
    throw NumericalError("variational fit: no draw with a finite potential in any step");
  m = avg_m / n_avg;
  w = avg_w / n_avg;
  // ELBO of the averaged q from fresh draws.
  rng::Stream stream(o.seed, rng::Domain::kGenerator, kVariationalStreamId + 1, 0);
  sd = w.array().exp().matrix();
  // ELBO = E_q[-phi(x) - log q(x)] averaged draw by draw (log q(x) = -|eps|^2/2 - sum w -
  // (d/2) log 2pi): the log q term is a control variate, exact when q matches the target.
  double sum = 0.0;
  for (int k = 0; k < o.elbo_samples; ++k) {
    stream.fill_normal(eps);
    x = m + sd.cwiseProduct(eps);
    sum += -f.potential(x) + 0.5 * eps.squaredNorm();
  }
  LocalGaussianFit out;
  out.log_evidence = sum / o.elbo_samples + w.sum() + 0.5 * d * kLog2Pi;
  if (!std::isfinite(out.log_evidence))
    throw NumericalError("variational fit: the final ELBO is not finite (the fitted q puts mass "
                         "where the potential is infinite)");
  out.mean = m;
  out.covariance = (2.0 * w).array().exp().matrix().asDiagonal();
  return out;
}

// ---- combining --------------------------------------------------------------------------------

LocalGaussianFit moment_match(const std::vector<LocalGaussianFit>& fits) {
  if (fits.empty()) throw NumericalError("moment_match: no local fits");
  std::vector<double> l;
  for (const auto& f : fits) l.push_back(f.log_evidence);
  const double log_zeta = log_sum_exp(l);
  if (!std::isfinite(log_zeta)) throw NumericalError("moment_match: the log evidences are not finite");
  const auto d = fits.front().mean.size();
  LocalGaussianFit out;
  out.mean = Vector::Zero(d);
  out.covariance = Matrix::Zero(d, d);
  for (const auto& f : fits) out.mean += std::exp(f.log_evidence - log_zeta) * f.mean;
  for (const auto& f : fits) {
    const double w = std::exp(f.log_evidence - log_zeta);
    const Vector c = f.mean - out.mean;
    out.covariance += w * (f.covariance + c * c.transpose());
  }
  out.covariance = 0.5 * (out.covariance + out.covariance.transpose());
  out.log_evidence = log_zeta;
  return out;
}

BaseDensity refit_base(const estimators::TemperingRbAccumulator& acc, double log_zeta_used,
                       double covariance_scale) {
  const double log_z = acc.log_z(log_zeta_used);
  if (!std::isfinite(log_z))
    throw NumericalError("bootstrap refit: no log Z estimate (no positive weights yet)");
  if (!(covariance_scale > 0.0) || !std::isfinite(covariance_scale))
    throw NumericalError("bootstrap refit: covariance scale must be finite and > 0, got " +
                         std::to_string(covariance_scale));
  try {
    return BaseDensity{shared_gaussian(densities::Gaussian::from_covariance(
                           acc.mean(), covariance_scale * acc.covariance())),
                       log_z,
                       "bootstrap refit from " + std::to_string(acc.count()) + " draws"};
  } catch (const NumericalError& e) {
    throw NumericalError(std::string("bootstrap refit: ") + e.what());
  }
}

// ---- from a config -----------------------------------------------------------------------------

namespace {

Vector to_vector(const google::protobuf::RepeatedField<double>& r) {
  Vector v(r.size());
  for (int i = 0; i < r.size(); ++i) v[i] = r[i];
  return v;
}

void require_positive(double v, const std::string& field) {
  if (!(v > 0.0) || !std::isfinite(v))
    throw ConfigError(field + ": must be finite and > 0, got " + std::to_string(v));
}

void require_range(std::int64_t v, std::int64_t lo, std::int64_t hi, const std::string& field) {
  if (v < lo || v > hi)
    throw ConfigError(field + ": must be in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                      "], got " + std::to_string(v));
}

BaseDensity user_gaussian(const v1::GaussianBaseConfig& g, int d, const std::string& field) {
  if (!g.has_log_zeta()) throw ConfigError(field + ".log_zeta: required for a user-given base");
  if (!std::isfinite(g.log_zeta())) throw ConfigError(field + ".log_zeta: must be finite");
  const bool has_mean = g.mean_size() > 0, has_mean_file = !g.mean_file().empty();
  if (has_mean == has_mean_file)
    throw ConfigError(field + ": give exactly one of mean and mean_file");
  Vector mean;
  if (has_mean) {
    if (g.mean_size() != d)
      throw ConfigError(field + ".mean: expected " + std::to_string(d) +
                        " numbers (the target's dimension), got " + std::to_string(g.mean_size()));
    mean = to_vector(g.mean());
  } else {
    mean = read_number_vector(g.mean_file(), d, field + ".mean_file");
  }
  const int n_cov = (g.covariance_size() > 0) + (g.variance_size() > 0) +
                    !g.covariance_file().empty() + !g.cov_chol_file().empty();
  if (n_cov > 1)
    throw ConfigError(field + ": give at most one of covariance, variance, covariance_file, cov_chol_file");
  const auto dd = static_cast<Eigen::Index>(d) * d;
  std::optional<densities::Gaussian> psi;
  try {
    if (g.covariance_size() > 0) {
      if (g.covariance_size() != dd)
        throw ConfigError(field + ".covariance: expected " + std::to_string(dd) +
                          " numbers (dim x dim), got " + std::to_string(g.covariance_size()));
      const Matrix cov = Eigen::Map<const Matrix>(g.covariance().data(), d, d).transpose();
      psi = densities::Gaussian::from_covariance(mean, cov);
    } else if (g.variance_size() > 0) {
      if (g.variance_size() != d)
        throw ConfigError(field + ".variance: expected " + std::to_string(d) + " numbers, got " +
                          std::to_string(g.variance_size()));
      const Vector var = to_vector(g.variance());
      if (!(var.array() > 0.0).all() || !var.allFinite())
        throw ConfigError(field + ".variance: every entry must be finite and > 0");
      psi = densities::Gaussian::from_cholesky(mean, var.cwiseSqrt().asDiagonal().toDenseMatrix());
    } else if (!g.covariance_file().empty()) {
      const Vector v = read_number_vector(g.covariance_file(), dd, field + ".covariance_file");
      psi = densities::Gaussian::from_covariance(mean, Eigen::Map<const Matrix>(v.data(), d, d).transpose());
    } else if (!g.cov_chol_file().empty()) {
      const Vector v = read_number_vector(g.cov_chol_file(), dd, field + ".cov_chol_file");
      const Matrix l = Eigen::Map<const Matrix>(v.data(), d, d).transpose();
      const double scale = std::max(1.0, l.cwiseAbs().maxCoeff());
      for (Eigen::Index j = 1; j < d; ++j)
        for (Eigen::Index i = 0; i < j; ++i)
          if (std::fabs(l(i, j)) > 1e-12 * scale)
            throw DataError(field + ".cov_chol_file " + g.cov_chol_file() + ": row " +
                            std::to_string(i + 1) + ", column " + std::to_string(j + 1) +
                            " is above the diagonal and not zero (expected a lower-triangular factor)");
      psi = densities::Gaussian::from_cholesky(mean, l);
    } else {
      psi = densities::Gaussian::from_cholesky(mean, Matrix::Identity(d, d));
    }
    return BaseDensity{shared_gaussian(std::move(*psi)), g.log_zeta(), "user"};
  } catch (const NumericalError& e) {
    throw ConfigError(field + ": " + e.what());
  }
}

ModeSearchOptions mode_search_options(const v1::ModeSearchConfig& c, int d, const std::string& field) {
  ModeSearchOptions o;
  if (c.has_n_starts()) {
    require_range(c.n_starts(), 1, 10000, field + ".n_starts");
    o.n_starts = c.n_starts();
  }
  if (c.has_init_radius()) {
    require_positive(c.init_radius(), field + ".init_radius");
    o.init_radius = c.init_radius();
  }
  if (c.init_center_size() > 0) {
    if (c.init_center_size() != d)
      throw ConfigError(field + ".init_center: expected " + std::to_string(d) + " numbers, got " +
                        std::to_string(c.init_center_size()));
    o.init_center = to_vector(c.init_center());
  }
  o.seed = c.seed();
  if (c.has_max_iterations()) {
    require_range(c.max_iterations(), 1, std::numeric_limits<int>::max(), field + ".max_iterations");
    o.lbfgs.max_iterations = c.max_iterations();
  }
  if (c.has_gradient_tolerance()) {
    require_positive(c.gradient_tolerance(), field + ".gradient_tolerance");
    o.lbfgs.gradient_tolerance = c.gradient_tolerance();
  }
  if (c.has_history()) {
    require_range(c.history(), 1, 100, field + ".history");
    o.lbfgs.history = c.history();
  }
  if (c.has_dedup_tolerance()) {
    require_positive(c.dedup_tolerance(), field + ".dedup_tolerance");
    o.dedup_tolerance = c.dedup_tolerance();
  }
  if (c.has_hessian_step()) {
    require_positive(c.hessian_step(), field + ".hessian_step");
    o.hessian_step = c.hessian_step();
  }
  return o;
}

BaseDensity from_fit(const LocalGaussianFit& fit, bool has_override, double log_zeta_override,
                     std::string description, const std::string& field) {
  if (has_override && !std::isfinite(log_zeta_override))
    throw ConfigError(field + ".log_zeta: must be finite");
  try {
    return BaseDensity{shared_gaussian(densities::Gaussian::from_covariance(fit.mean, fit.covariance)),
                       has_override ? log_zeta_override : fit.log_evidence, std::move(description)};
  } catch (const NumericalError& e) {
    throw NumericalError(field + ": the fitted covariance is unusable: " + e.what());
  }
}

BaseDensity laplace_base(const v1::LaplaceBaseConfig& c, const targets::Target& target,
                         const std::string& f) {
  const auto fits = find_laplace_fits(target, mode_search_options(c.search(), target.dim(),
                                                                  f + ".search"));
  const std::string n = std::to_string(fits.size());
  if (c.moment_match_modes())
    return from_fit(moment_match(fits), c.has_log_zeta(), c.log_zeta(),
                    "moment-matched Laplace mixture (" + n + " modes)", f);
  return from_fit(fits.front(), c.has_log_zeta(), c.log_zeta(),
                  "Laplace at the best of " + n + " modes", f);
}

BaseDensity mean_field_base(const v1::BoltzmannMeanFieldBaseConfig& c,
                            const targets::Target& target, const std::string& f) {
  const auto* bm = dynamic_cast<const targets::BoltzmannRelaxation*>(&target);
  if (!bm) throw ConfigError(f + ": needs a boltzmann target, the target is " + target.name());
  MeanFieldOptions o;
  if (c.has_n_starts()) {
    require_range(c.n_starts(), 1, 1000000, f + ".n_starts");
    o.n_starts = c.n_starts();
  }
  o.seed = c.seed();
  if (c.has_max_iterations()) {
    require_range(c.max_iterations(), 1, std::numeric_limits<int>::max(), f + ".max_iterations");
    o.max_iterations = c.max_iterations();
  }
  if (c.has_tolerance()) {
    require_positive(c.tolerance(), f + ".tolerance");
    o.tolerance = c.tolerance();
  }
  if (c.has_dedup_tolerance()) {
    require_positive(c.dedup_tolerance(), f + ".dedup_tolerance");
    o.dedup_tolerance = c.dedup_tolerance();
  }
  const auto fits = boltzmann_mean_field_fits(*bm, o);
  return from_fit(moment_match(fits), c.has_log_zeta(), c.log_zeta(),
                  "moment-matched mean-field mixture (" + std::to_string(fits.size()) + " fits)", f);
}

BaseDensity variational_base(const v1::VariationalBaseConfig& c, const targets::Target& target,
                             const std::string& f) {
  const int d = target.dim();
  VariationalOptions o;
  if (c.has_iterations()) {
    require_range(c.iterations(), 2, std::numeric_limits<int>::max(), f + ".iterations");
    o.iterations = c.iterations();
  }
  if (c.has_samples_per_step()) {
    require_range(c.samples_per_step(), 1, 1000000, f + ".samples_per_step");
    o.samples_per_step = c.samples_per_step();
  }
  if (c.has_learning_rate()) {
    require_positive(c.learning_rate(), f + ".learning_rate");
    o.learning_rate = c.learning_rate();
  }
  o.seed = c.seed();
  if (c.has_elbo_samples()) {
    require_range(c.elbo_samples(), 1, std::numeric_limits<int>::max(), f + ".elbo_samples");
    o.elbo_samples = c.elbo_samples();
  }
  if (c.init_mean_size() > 0) {
    if (c.init_mean_size() != d)
      throw ConfigError(f + ".init_mean: expected " + std::to_string(d) + " numbers, got " +
                        std::to_string(c.init_mean_size()));
    o.init_mean = to_vector(c.init_mean());
  }
  if (c.has_init_log_sd()) {
    if (!std::isfinite(c.init_log_sd())) throw ConfigError(f + ".init_log_sd: must be finite");
    o.init_log_sd = c.init_log_sd();
  }
  return from_fit(fit_mean_field_gaussian(target, o), c.has_log_zeta(), c.log_zeta(),
                  "mean-field Gaussian variational fit", f);
}

}  // namespace

BaseDensity make_base_density(const v1::BaseDensityConfig& config, const targets::Target& target,
                              const std::string& field, const modes::ModeSet* modes) {
  switch (config.kind_case()) {
    case v1::BaseDensityConfig::kGaussian:
      return user_gaussian(config.gaussian(), target.dim(), field + ".gaussian");
    case v1::BaseDensityConfig::kLaplace:
      return laplace_base(config.laplace(), target, field + ".laplace");
    case v1::BaseDensityConfig::kBoltzmannMeanField:
      return mean_field_base(config.boltzmann_mean_field(), target, field + ".boltzmann_mean_field");
    case v1::BaseDensityConfig::kVariational:
      return variational_base(config.variational(), target, field + ".variational");
    case v1::BaseDensityConfig::kMixture:
      if (!modes)
        throw ConfigError(field + ".mixture: builds on the run's mode search (config `modes`), "
                          "which did not run");
      return mixture_base(config.mixture(), target, *modes, field + ".mixture");
    case v1::BaseDensityConfig::KIND_NOT_SET:
      break;
  }
  throw ConfigError(field +
                    ": required: set one of mixture, gaussian, laplace, boltzmann_mean_field, "
                    "variational");
}

}  // namespace pemc::extended
