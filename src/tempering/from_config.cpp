#include "tempering/from_config.hpp"

#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "core/error.hpp"
#include "core/number_file.hpp"
#include "densities/gaussian.hpp"
#include "tempering/annealed_importance.hpp"
#include "tempering/schedule.hpp"
#include "tempering/simulated_tempering.hpp"

namespace pemc::tempering {
namespace {

using Ladder = v1::TemperingLadderConfig;

Vector to_vector(const google::protobuf::RepeatedField<double>& r) {
  Vector v(r.size());
  for (int i = 0; i < r.size(); ++i) v[i] = r[i];
  return v;
}

// n numbers, or 1 broadcast to n.
Vector broadcast(const Vector& v, int n, const std::string& field) {
  if (v.size() == n) return v;
  if (v.size() == 1) return Vector::Constant(n, v[0]);
  throw ConfigError(field + ": expected " + std::to_string(n) + " numbers (the target's dimension) or 1, got " +
                    std::to_string(v.size()));
}

// References are evaluated with Evaluation::kShared: see reference.hpp.
constexpr auto kShared = densities::Density::Evaluation::kShared;

ReferencePtr shared_reference(densities::Gaussian psi) {
  Reference reference;  // log zeta unknown, no description: a user-given reference
  reference.density = std::make_shared<const densities::Gaussian>(std::move(psi));
  return std::make_shared<const Reference>(std::move(reference));
}

}  // namespace

ReferencePtr make_reference(const v1::TemperingReferenceConfig& c, const targets::Target& target,
                            const std::string& field, const ReferenceFitter& fit) {
  if (!c.has_fitted()) return make_reference(c, target.dim(), field);
  if (c.mean_size() > 0 || !c.mean_file().empty() || c.variance_size() > 0 ||
      c.covariance_size() > 0 || !c.cov_chol_file().empty())
    throw ConfigError(field + ": give either fitted or mean/variance/covariance/files, not both");
  if (!fit) throw ConfigError(field + ".fitted: fitted references are not available here");
  const Reference base = fit(c.fitted(), target, field + ".fitted");
  if (!base.density) throw ConfigError(field + ".fitted: the fit gave no density");
  if (base.density->dim() != target.dim())
    throw ConfigError(field + ".fitted: the base has dimension " +
                      std::to_string(base.density->dim()) + ", the target " +
                      std::to_string(target.dim()));
  return std::make_shared<const Reference>(
      Reference{base.density->copy_with_evaluation(kShared), base.log_zeta, base.description});
}

ReferencePtr make_reference(const v1::TemperingReferenceConfig& c, int dim,
                            const std::string& field) {
  if (c.mean_size() > 0 && !c.mean_file().empty())
    throw ConfigError(field + ": give at most one of mean and mean_file");
  const int n_cov = (c.variance_size() > 0) + (c.covariance_size() > 0) + !c.cov_chol_file().empty();
  if (n_cov > 1)
    throw ConfigError(field + ": give at most one of variance, covariance and cov_chol_file");
  Vector mean = Vector::Zero(dim);
  if (c.mean_size() > 0) mean = broadcast(to_vector(c.mean()), dim, field + ".mean");
  if (!c.mean_file().empty()) {
    mean = read_number_vector(c.mean_file(), dim, field + ".mean_file");
  }
  try {
    if (c.covariance_size() > 0) {
      if (c.covariance_size() != dim * dim)
        throw ConfigError(field + ".covariance: expected " + std::to_string(dim * dim) +
                          " numbers (dim x dim), got " + std::to_string(c.covariance_size()));
      const Matrix cov = Eigen::Map<const Matrix>(c.covariance().data(), dim, dim).transpose();
      if (!cov.isApprox(cov.transpose(), 1e-12))
        throw ConfigError(field + ".covariance: not symmetric");
      Eigen::LLT<Matrix> llt(cov);
      if (llt.info() != Eigen::Success)
        throw ConfigError(field + ".covariance: not positive definite");
      return shared_reference(densities::Gaussian::from_cholesky(mean, llt.matrixL(), kShared));
    }
    if (!c.cov_chol_file().empty()) {
      // dim x dim, row by row.
      const Vector l = read_number_vector(c.cov_chol_file(), dim * dim, field + ".cov_chol_file");
      const Matrix lower = Eigen::Map<const Matrix>(l.data(), dim, dim).transpose();
      return shared_reference(densities::Gaussian::from_cholesky(mean, lower, kShared));
    }
    Vector var = Vector::Ones(dim);
    if (c.variance_size() > 0) var = broadcast(to_vector(c.variance()), dim, field + ".variance");
    return shared_reference(densities::Gaussian::from_variances(mean, var, kShared));
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    if (what.rfind(field, 0) == 0) throw;
    throw ConfigError(field + ": " + what);
  } catch (const NumericalError& e) {
    throw ConfigError(field + ": " + e.what());
  }
}

std::vector<double> make_ladder(const Ladder& c, bool has_reference, Ladder::Kind default_kind,
                                const std::string& field) {
  Ladder::Kind kind = c.kind() == Ladder::KIND_UNSPECIFIED ? default_kind : c.kind();
  try {
    if (kind == Ladder::EXPLICIT) {
      if (c.betas_size() == 0) throw ConfigError(field + ".betas: EXPLICIT needs the betas");
      std::vector<double> b(c.betas().begin(), c.betas().end());
      check_ladder(b, (field + ".betas").c_str());
      return b;
    }
    if (c.betas_size() > 0)
      throw ConfigError(field + ".betas: given, but the ladder kind is not EXPLICIT");
    const int k = c.n_levels();
    if (k < 2) throw ConfigError(field + ".n_levels: must be >= 2, got " + std::to_string(k));
    const bool geometric = kind == Ladder::GEOMETRIC;
    const double beta_min =
        c.has_beta_min() ? c.beta_min() : ((has_reference && !geometric) ? 0.0 : 1e-3);
    if (!(beta_min >= 0.0 && beta_min < 1.0))
      throw ConfigError(field + ".beta_min: must be in [0, 1), got " + std::to_string(beta_min));
    if ((geometric || !has_reference) && !(beta_min > 0.0))
      throw ConfigError(field + ".beta_min: must be > 0 " +
                        (geometric ? std::string("for a GEOMETRIC ladder")
                                   : std::string("without a reference (power path)")));
    switch (kind) {
      case Ladder::GEOMETRIC: {
        if (!has_reference) return geometric_ladder(k, beta_min);
        if (k < 3)
          throw ConfigError(field + ".n_levels: a GEOMETRIC ladder with a reference needs >= 3");
        auto g = geometric_ladder(k - 1, beta_min);
        g.insert(g.begin(), 0.0);
        return g;
      }
      case Ladder::SIGMOIDAL: {
        const double s = c.has_sigmoid_scale() ? c.sigmoid_scale() : 4.0;
        if (!(s > 0.0)) throw ConfigError(field + ".sigmoid_scale: must be > 0");
        return sigmoidal_ladder(k, beta_min, s);
      }
      default:
        return linear_ladder(k, beta_min);
    }
  } catch (const std::invalid_argument& e) {
    throw ConfigError(field + ": " + e.what());
  }
}

TemperingSampler make_parallel_tempering(const v1::ParallelTemperingConfig& c,
                                         targets::TargetPtr target,
                                         const LocalKernelFactory& factory,
                                         parallel::GroupCommPtr group,
                                         const ReferenceFitter& fit_reference) {
  const std::string field = "sampler.parallel_tempering";
  ReferencePtr reference;
  if (c.has_reference())
    reference = make_reference(c.reference(), *target, field + ".reference", fit_reference);
  ParallelTemperingOptions o;
  o.betas = make_ladder(c.ladder(), reference != nullptr,
                        reference ? Ladder::LINEAR : Ladder::GEOMETRIC, field + ".ladder");
  if (c.fixed_leg()) {
    if (!reference)
      throw ConfigError(field + ".fixed_leg: the fixed (power-path) leg runs beside a reference leg");
    o.fixed_betas = make_ladder(c.fixed_ladder(), false, Ladder::GEOMETRIC, field + ".fixed_ladder");
  }
  o.scheme = c.swap_scheme() == v1::ParallelTemperingConfig::STOCHASTIC_EVEN_ODD
                 ? SwapScheme::kStochasticEvenOdd
                 : SwapScheme::kDeterministicEvenOdd;
  if (c.has_n_local_steps()) o.n_local_steps = c.n_local_steps();
  o.adapt_schedule = c.adapt_schedule();
  o.choose_replicas = c.choose_replicas();
  if (o.choose_replicas && !o.adapt_schedule)
    throw ConfigError(field + ".choose_replicas: needs adapt_schedule");
  if (c.has_replicas_per_barrier()) o.replicas_per_barrier = c.replicas_per_barrier();
  if (c.has_min_replicas()) o.min_replicas = c.min_replicas();
  if (c.has_max_replicas()) o.max_replicas = c.max_replicas();
  if (c.has_n_batches()) o.n_batches = c.n_batches();
  auto kernel = std::make_unique<ParallelTemperingKernel>(target, reference, factory, o,
                                                          std::move(group));
  return {target, std::move(kernel)};
}

TemperingSampler make_simulated_tempering(const v1::SimulatedTemperingConfig& c,
                                          targets::TargetPtr target,
                                          const LocalKernelFactory& factory,
                                          const ReferenceFitter& fit_reference) {
  const std::string field = "sampler.simulated_tempering";
  ReferencePtr reference;
  if (c.has_reference())
    reference = make_reference(c.reference(), *target, field + ".reference", fit_reference);
  auto betas = make_ladder(c.ladder(), reference != nullptr,
                           reference ? Ladder::LINEAR : Ladder::GEOMETRIC, field + ".ladder");
  std::vector<double> w(c.log_weights().begin(), c.log_weights().end());
  auto space = std::make_shared<SimulatedTemperingSpace>(target, reference, std::move(betas),
                                                         std::move(w));
  SimulatedTemperingOptions o;
  if (c.has_n_local_steps()) o.n_local_steps = c.n_local_steps();
  o.adapt_weights = c.adapt_weights();
  if (c.has_first_pilot_length()) o.first_pilot_length = c.first_pilot_length();
  if (c.has_n_kernel_bins()) o.n_kernel_bins = c.n_kernel_bins();
  if (c.has_n_batches()) o.n_batches = c.n_batches();
  if (o.n_kernel_bins < 1) throw ConfigError(field + ".n_kernel_bins: must be >= 1");
  auto kernel = std::make_unique<SimulatedTemperingKernel>(space, factory, o);
  return {space, std::move(kernel)};
}

TemperingSampler make_annealed_importance(const v1::AnnealedImportanceConfig& c,
                                          targets::TargetPtr target,
                                          const LocalKernelFactory& factory,
                                          const ReferenceFitter& fit_reference) {
  const std::string field = "sampler.annealed_importance";
  if (!c.has_reference()) throw ConfigError(field + ".reference: required for AIS");
  auto reference = make_reference(c.reference(), *target, field + ".reference", fit_reference);
  AnnealedImportanceOptions o;
  o.betas = make_ladder(c.ladder(), true, Ladder::SIGMOIDAL, field + ".ladder");
  if (c.has_n_local_steps()) o.n_local_steps = c.n_local_steps();
  if (c.has_n_kernel_bins()) o.n_kernel_bins = c.n_kernel_bins();
  if (o.n_kernel_bins < 1) throw ConfigError(field + ".n_kernel_bins: must be >= 1");
  auto kernel = std::make_unique<AnnealedImportanceKernel>(target, reference, factory, o);
  auto space = std::make_shared<AnnealedImportanceSpace>(target);
  return {space, std::move(kernel)};
}

}  // namespace pemc::tempering
