// Continuous tempering study (Graham & Storkey 2017): runs the paper configs in-process, chain by
// chain exactly as pemc-dist's chain driver does (same streams, so the same draws), and checks the
// issue's result criteria from the Rao-Blackwellised estimators (eqs. (20)-(22)):
//
//   1-D bimodal (configs/paper/bimodal1d_ct_{joint,gibbs}.pbtxt, log Z = 0, masses 1/2 each):
//     the pooled estimate over the seeds (merged accumulators, eq. (20)) has |log Z| < 0.02 and
//     both mode masses within 0.02 of 1/2; per-seed errors are printed (RMSE, max).
//   Boltzmann pe28 (configs/paper/boltzmann28_ct_{joint,gibbs}.pbtxt, shipped base):
//     over the seeds, RMSE of log Z < 0.1, and RMSE of E[x] and of Cov[x] at most 1/5 of the
//     base's own RMSE (base mean and covariance against truth.json).
//
//   ct_study [--config FILE ...] [--set FIELD=VALUE ...] [--iterations N] [--warmup N]
//            [--seeds K] [--threads T] [--no-check] [--bootstrap N1]
//
// Bootstrap rounds (Section 6): a config with sampler.continuous_tempering.bootstrap runs them
// exactly as pemc-dist does (src/extended/continuous_tempering_bootstrap.hpp: the same round
// configs, seeds, pooled merge in chain order and refit), so every chain's estimates are
// bit-identical to pemc-dist's; only the final round is scored, and the printed gradient counts
// include the bootstrap rounds. --bootstrap N1 is shorthand for
// `bootstrap { rounds: 1 draws_per_round: N1 }` with iterations - N1 in the final round (the same
// total number of draws per chain, plus one more warmup).
//
// Without --config: the four configs above. Runs from PEMC_SOURCE_DIR (the configs' data paths are
// relative to the repository root). Exit status 0 iff every check passes (--no-check: always 0,
// for tuning runs with --set).
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "config/defaults.hpp"
#include "config/factories.hpp"
#include "config/init_point.hpp"
#include "config/load.hpp"
#include "config/overrides.hpp"
#include "config/validate.hpp"
#include "core/error.hpp"
#include "core/numerics.hpp"
#include "estimators/rb_tempering.hpp"
#include "extended/base_density.hpp"
#include "extended/base_density_fit.hpp"
#include "extended/continuous_tempering.hpp"
#include "extended/continuous_tempering_bootstrap.hpp"
#include "extended/repeated_transition_kernel.hpp"
#include "rng/stream.hpp"

namespace {

using pemc::Matrix;
using pemc::Vector;
using Clock = std::chrono::steady_clock;

// Exact log ∫ exp(-phi) for the target built from boltzmann-pe28/Q.txt as shipped (enumeration;
// see src/targets/boltzmann.hpp). truth.json's log_Z_x is 5.9e-5 below it.
constexpr double kBoltzmannPe28LogZ = 160.889297;

struct ChainResult {
  std::uint64_t seed = 0;
  pemc::estimators::TemperingRbAccumulator acc;  // the recorded draws (what pemc-dist writes)
  // The kernel's own RB sums (every sweep's state; = acc unless sweeps_per_draw > 1). Scored.
  pemc::estimators::TemperingRbAccumulator sweep_acc;
  double log_zeta = 0.0;
  double log_sum_w1_right = -pemc::kInf;  // 1-D: w1 mass of x > 0
  double mean_beta = 0.0;
  double accept = 0.0;
  std::int64_t grad_evals = 0;
  double seconds = 0.0;
  std::string status = "ok";
  double log_z_se = std::numeric_limits<double>::quiet_NaN();  // the kernel's batch-means SE
  std::int64_t log_z_batches = 0;
  const pemc::estimators::TemperingRbAccumulator& scored() const {
    return sweep_acc.count() > 0 ? sweep_acc : acc;
  }
  double log_z() const { return scored().log_z(log_zeta); }
};

// The continuous-tempering kernel's RB accumulator (through a sweeps_per_draw wrapper), or null.
const pemc::estimators::TemperingRbAccumulator* kernel_rb_sums(const pemc::kernels::Kernel& k) {
  const pemc::kernels::Kernel* inner = &k;
  if (const auto* r = dynamic_cast<const pemc::extended::RepeatedTransitionKernel*>(inner))
    inner = &r->inner();
  if (const auto* j = dynamic_cast<const pemc::extended::JointTemperingKernel*>(inner))
    return &j->rb_accumulator();
  if (const auto* g = dynamic_cast<const pemc::extended::GibbsTemperingKernel*>(inner))
    return &g->rb_accumulator();
  return nullptr;
}

// One chain, as src/runner/chain_driver.cpp runs it; the RB sums over every post-warmup state
// (acc: the recorded ones; sweep_acc: the kernel's, which with sweeps_per_draw > 1 also holds the
// states between records).
ChainResult run_chain(const pemc::v1::RunConfig& config, std::uint64_t seed, int chain_id) {
  // chain_id keys the streams; the configured chain is chain_id modulo the chain count.
  ChainResult r;
  r.seed = seed;
  const auto t0 = Clock::now();
  try {
    auto target = pemc::config::make_target(config.target());
    auto setup = pemc::config::make_sampler(config.sampler(), target);
    const auto& space = *setup.space;
    pemc::kernels::ChainState state;
    state.x.resize(space.dim());
    bool found = false;
    for (int attempt = 0; attempt < 100 && !found; ++attempt) {
      pemc::rng::Stream stream(seed, pemc::rng::Domain::kInitialPoint, chain_id, attempt);
      space.initial_point([&](pemc::VectorRef b) { pemc::config::draw_initial_point(config.init(), stream, b); },
                          state.x);
      pemc::kernels::refresh(space, state);
      ++r.grad_evals;
      found = std::isfinite(state.potential);
    }
    if (!found) throw pemc::NumericalError("no finite initial point");
    const std::int64_t n_warmup = config.warmup(), n_iter = config.iterations();
    pemc::targets::WeightedView view;
    if (n_warmup > 0) setup.kernel->begin_warmup(n_warmup);
    for (std::int64_t t = 0; t < n_warmup + n_iter; ++t) {
      if (t == n_warmup && n_warmup > 0) setup.kernel->end_warmup();
      pemc::rng::Stream stream(seed, pemc::rng::Domain::kTransition, chain_id, t);
      const auto stats = setup.kernel->transition(state, stream);
      r.grad_evals += stats.n_gradient_evals;
      if (t < n_warmup) {
        setup.kernel->adapt(t, state, stats);
        continue;
      }
      r.accept += stats.accept_stat / static_cast<double>(n_iter);
      space.weighted_view(state.x, view);
      const double lw0 = view.extra[pemc::extended::kExtraLogW0];
      const double lw1 = view.extra[pemc::extended::kExtraLogW1];
      r.acc.add(view.samples.col(0), lw0, lw1);
      r.log_zeta = view.extra[pemc::extended::kExtraLogZeta];
      r.mean_beta += view.extra[pemc::extended::kExtraBeta] / static_cast<double>(n_iter);
      if (view.samples.rows() == 1 && view.samples(0, 0) > 0.0)
        r.log_sum_w1_right = pemc::log_add_exp(r.log_sum_w1_right, lw1);
    }
    if (const auto* k = kernel_rb_sums(*setup.kernel)) r.sweep_acc = *k;
    std::map<std::string, double> estimates;
    setup.kernel->report_estimates(estimates);
    if (const auto se = estimates.find("log_z_se"); se != estimates.end()) r.log_z_se = se->second;
    if (const auto k = estimates.find("log_z_batches"); k != estimates.end())
      r.log_z_batches = static_cast<std::int64_t>(k->second);
  } catch (const std::exception& e) {
    r.status = std::string("failed: ") + e.what();
  }
  r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return r;
}

// round >= 0: a bootstrap round, whose streams use bootstrap_round_seed(seed, round).
std::vector<ChainResult> run_all(const pemc::v1::RunConfig& config, int threads, int round = -1) {
  const auto seeds = pemc::config::expand_seeds(config);
  const int per_seed = std::max(1, config.chains_per_seed());
  const int n = static_cast<int>(seeds.size()) * per_seed;
  std::vector<ChainResult> out(n);
  std::atomic<int> next{0};
  auto worker = [&] {
    for (int i; (i = next++) < n;) {
      const auto seed = seeds[i / per_seed];
      out[i] = run_chain(config, round < 0 ? seed : pemc::extended::bootstrap_round_seed(seed, round), i);
      out[i].seed = seed;
    }
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < std::max(1, threads); ++t) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  return out;
}

double rms(const std::vector<double>& v) {
  double s = 0.0;
  for (double x : v) s += x * x;
  return std::sqrt(s / static_cast<double>(v.size()));
}

struct Truth {
  double log_z = 0.0;
  Vector mean;
  Matrix cov;
  bool bimodal = false;
  Vector base_mean;  // for the base-RMSE comparison (Boltzmann)
  Matrix base_cov;
  double base_log_zeta = 0.0;
};

std::vector<double> json_vector(const nlohmann::json& j) {
  std::vector<double> v;
  for (const auto& x : j) {
    if (x.is_array()) {
      for (const auto& y : x) v.push_back(y.get<double>());
    } else {
      v.push_back(x.get<double>());
    }
  }
  return v;
}

// Truth for the configs this study knows: the normalised bimodal mixture (its own truth()) and the
// pe28 Boltzmann relaxation (truth.json and the exact log Z above).
Truth truth_for(const pemc::v1::RunConfig& config) {
  Truth t;
  if (config.target().has_boltzmann()) {
    const std::filesystem::path dir =
        std::filesystem::path(config.target().boltzmann().q_file()).parent_path();
    std::ifstream in(dir / "truth.json");
    if (!in) throw pemc::IoError("cannot read " + (dir / "truth.json").string());
    const auto j = nlohmann::json::parse(in);
    const auto e = json_vector(j["E_x"]);
    const auto c = json_vector(j["Cov_x"]);
    const auto d = static_cast<Eigen::Index>(e.size());
    t.mean = Eigen::Map<const Vector>(e.data(), d);
    t.cov = Eigen::Map<const Matrix>(c.data(), d, d).transpose();
    t.log_z = kBoltzmannPe28LogZ;
    // The base exactly as the sampler builds it (shipped files, or a fit).
    const auto target = pemc::config::make_target(config.target());
    const auto base = pemc::extended::make_base_density(config.sampler().continuous_tempering().base(),
                                                        *target, "base");
    t.base_mean = base.density->mean();
    t.base_cov = base.density->covariance();
    t.base_log_zeta = base.log_zeta;
    return t;
  }
  const auto target = pemc::config::make_target(config.target());
  const auto truth = target->truth();
  if (!truth.log_z || !truth.mean || !truth.cross_moment)
    throw pemc::ConfigError("ct_study: no exact truth known for target " + target->name());
  t.log_z = *truth.log_z;
  t.mean = *truth.mean;
  t.cov = *truth.cross_moment - t.mean * t.mean.transpose();
  t.bimodal = target->dim() == 1;
  return t;
}

bool study(const std::filesystem::path& path, const pemc::config::CommandLineOverrides& overrides,
           int threads, bool check, std::int64_t bootstrap) {
  auto loaded = pemc::config::load_config(path);
  if (bootstrap > 0) {
    auto& c = loaded.config;
    auto* b = c.mutable_sampler()->mutable_continuous_tempering()->mutable_bootstrap();
    b->set_rounds(1);
    b->set_draws_per_round(bootstrap);
    c.set_iterations(c.iterations() - bootstrap);
  }
  pemc::config::apply_overrides(loaded, overrides);
  pemc::config::apply_defaults(loaded);
  // ct_study writes no records: the config's output path (relative, e.g. out/...) need not exist
  // where the study runs (a fresh checkout has no out/), so validate against a scratch path.
  loaded.config.mutable_output()->set_path(
      (std::filesystem::temp_directory_path() / "pemc_ct_study_unused.pemc").string());
  pemc::config::validate(loaded);
  auto config = loaded.config;
  Truth truth = truth_for(config);
  const auto bs = pemc::extended::bootstrap_settings(config);
  std::printf("\n== %s (%s, %lld warmup + %lld draws per chain", config.name().c_str(),
              path.string().c_str(), static_cast<long long>(config.warmup()),
              static_cast<long long>(config.iterations()));
  if (bs)
    std::printf(", after %d bootstrap round(s) of %lld warmup + %lld draws, covariance x %g",
                bs->rounds, static_cast<long long>(bs->warmup),
                static_cast<long long>(bs->draws_per_round), bs->covariance_scale);
  std::printf(")\n");
  const auto t0 = Clock::now();
  std::vector<ChainResult> chains;
  std::int64_t bootstrap_evals = 0;
  if (bs) {
    // The same rounds as pemc-dist (chain ids 0..n-1 = the run's global chain ids).
    std::optional<pemc::v1::BaseDensityConfig> base;
    std::optional<pemc::extended::BootstrapRounds> rounds;
    for (int r = 0; r < bs->rounds; ++r) {
      const auto round_config = pemc::extended::bootstrap_round_config(config, r, base ? &*base : nullptr);
      const auto res = run_all(round_config, threads, r);
      if (!rounds) {
        std::vector<int> ids(res.size());
        for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int>(i);
        rounds.emplace(0, *bs, ids, config.sampler().continuous_tempering().base());
      }
      std::optional<pemc::extended::BootstrapRoundResult> result;
      for (std::size_t i = 0; i < res.size(); ++i) {
        bootstrap_evals += res[i].grad_evals;
        if (std::find(rounds->live_chains().begin(), rounds->live_chains().end(),
                      static_cast<int>(i)) == rounds->live_chains().end())
          continue;  // failed in an earlier round
        pemc::extended::BootstrapChainReport rep;
        rep.chain_id = static_cast<int>(i);
        rep.round = r;
        rep.status = res[i].status;
        rep.log_zeta = res[i].log_zeta;
        rep.acc = res[i].acc;
        rep.log_z_se = res[i].log_z_se;
        rep.log_z_batches = res[i].log_z_batches;
        rep.gradient_evals = res[i].grad_evals;
        rep.extended_gradient_evals = res[i].grad_evals;
        rep.wall_seconds = res[i].seconds;
        if (auto done = rounds->on_report(rep)) result = done;
      }
      if (!result) throw pemc::Error("ct_study: bootstrap round did not complete");
      std::printf("  %s\n", pemc::extended::describe(*result, *bs).c_str());
      if (!result->chosen_base) return false;
      base = result->chosen_base;
      if (result->next_base) {
        const auto& refit = *result->next_base;
        const auto d = truth.mean.size();
        const Eigen::Map<const Vector> m(refit.mean().data(), d);
        const Eigen::Map<const Matrix> c(refit.covariance().data(), d, d);
        std::printf("    refitted base%s: log zeta err %+.4f, RMSE E[x] %.5f, RMSE Cov %.5f\n",
                    result->choice.use_refit ? "" : " (not used)", refit.log_zeta() - truth.log_z,
                    std::sqrt((m - truth.mean).squaredNorm() / d),
                    std::sqrt((c - truth.cov).squaredNorm() / (d * d)));
      }
    }
    chains = run_all(pemc::extended::bootstrap_round_config(config, bs->rounds, &*base), threads);
    // Scored against the configured base (the criterion compares with it).
  } else {
    chains = run_all(config, threads);
  }
  const double wall = std::chrono::duration<double>(Clock::now() - t0).count();

  std::vector<double> err_log_z, err_mean, err_cov, mass_err;
  pemc::estimators::TemperingRbAccumulator pooled;
  double pooled_right = -pemc::kInf;
  double chain_seconds = 0.0;
  std::int64_t evals = 0;
  bool ok = true;
  std::printf("  seed  log Z err   RMSE E[x]  RMSE Cov   mean beta  accept  ESS(w1)  seconds\n");
  for (const auto& c : chains) {
    if (c.status != "ok") {
      std::printf("  %4llu  %s\n", static_cast<unsigned long long>(c.seed), c.status.c_str());
      ok = false;
      continue;
    }
    const double ez = c.log_z() - truth.log_z;
    const double em = std::sqrt((c.scored().mean() - truth.mean).squaredNorm() / truth.mean.size());
    const double ec = std::sqrt((c.scored().covariance() - truth.cov).squaredNorm() / truth.cov.size());
    err_log_z.push_back(ez);
    err_mean.push_back(em);
    err_cov.push_back(ec);
    pooled.merge(c.scored());
    chain_seconds += c.seconds;
    evals += c.grad_evals;
    if (truth.bimodal) {
      pooled_right = pemc::log_add_exp(pooled_right, c.log_sum_w1_right);
      mass_err.push_back(std::exp(c.log_sum_w1_right - c.acc.log_sum_w1()) - 0.5);
    }
    std::printf("  %4llu  %+9.4f   %9.5f  %9.5f  %9.3f  %6.3f  %7.0f  %7.2f\n",
                static_cast<unsigned long long>(c.seed), ez, em, ec, c.mean_beta, c.accept,
                c.scored().ess_w1(), c.seconds);
  }
  if (err_log_z.empty()) return false;
  const double rmse_z = rms(err_log_z), rmse_m = rms(err_mean), rmse_c = rms(err_cov);
  std::printf("  RMSE over %zu chains: log Z %.4f, E[x] %.5f, Cov[x] %.5f; max |log Z err| %.4f\n",
              err_log_z.size(), rmse_z, rmse_m, rmse_c,
              std::fabs(*std::max_element(err_log_z.begin(), err_log_z.end(),
                                          [](double a, double b) { return std::fabs(a) < std::fabs(b); })));
  std::printf("  wall %.2f s for %zu chains on %d threads (sum of chain times %.2f s), %lld gradient "
              "evaluations (%lld of them in bootstrap rounds)\n",
              wall, chains.size(), threads, chain_seconds,
              static_cast<long long>(evals + bootstrap_evals), static_cast<long long>(bootstrap_evals));
  const double log_zeta = chains.front().log_zeta;
  if (truth.bimodal) {
    const double pooled_z = pooled.log_z(log_zeta) - truth.log_z;
    const double pooled_mass = std::exp(pooled_right - pooled.log_sum_w1());
    std::printf("  pooled (eq. (20) over all chains): log Z err %+.4f, mass(x > 0) %.4f, mass(x < 0) "
                "%.4f; per-chain mass RMSE %.4f\n",
                pooled_z, pooled_mass, 1.0 - pooled_mass, rms(mass_err));
    if (check) {
      const bool pass = std::fabs(pooled_z) < 0.02 && std::fabs(pooled_mass - 0.5) < 0.02;
      std::printf("  CHECK |pooled log Z err| < 0.02 and |mass - 0.5| < 0.02: %s\n", pass ? "pass" : "FAIL");
      ok &= pass;
    }
  } else if (truth.base_mean.size() > 0) {
    std::printf("  pooled (eq. (20)-(21) over all chains): log Z err %+.4f, RMSE E[x] %.5f, RMSE Cov %.5f\n",
                pooled.log_z(log_zeta) - truth.log_z,
                std::sqrt((pooled.mean() - truth.mean).squaredNorm() / truth.mean.size()),
                std::sqrt((pooled.covariance() - truth.cov).squaredNorm() / truth.cov.size()));
    if (std::getenv("CT_STUDY_VERBOSE")) {
      const Matrix pc = pooled.covariance();
      const Vector pm = pooled.mean();
      for (Eigen::Index i = 0; i < truth.mean.size(); ++i)
        std::printf("    x[%2ld]: mean %8.4f (truth %8.4f, base %8.4f)  var %8.4f (truth %8.4f, base %8.4f)\n",
                    static_cast<long>(i), pm[i], truth.mean[i], truth.base_mean[i], pc(i, i),
                    truth.cov(i, i), truth.base_cov(i, i));
    }
    const double base_z = truth.base_log_zeta - truth.log_z;
    const double base_m = std::sqrt((truth.base_mean - truth.mean).squaredNorm() / truth.mean.size());
    const double base_c = std::sqrt((truth.base_cov - truth.cov).squaredNorm() / truth.cov.size());
    std::printf("  base: log zeta err %+.4f, RMSE E[x] %.5f, RMSE Cov %.5f -> ratios: log Z %.4f, "
                "E[x] %.4f, Cov %.4f\n",
                base_z, base_m, base_c, rmse_z / std::fabs(base_z), rmse_m / base_m, rmse_c / base_c);
    if (check) {
      const bool pass = rmse_z < 0.1 && rmse_m <= base_m / 5.0 && rmse_c <= base_c / 5.0;
      std::printf("  CHECK RMSE log Z < 0.1, E[x] and Cov[x] <= base / 5: %s\n", pass ? "pass" : "FAIL");
      ok &= pass;
    }
  }
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::filesystem::path> configs;
  pemc::config::CommandLineOverrides overrides;
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  bool check = true;
  std::int64_t bootstrap = 0;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      auto value = [&]() -> std::string {
        if (i + 1 >= argc) throw pemc::ConfigError(a + ": needs a value");
        return argv[++i];
      };
      if (a == "--config") configs.emplace_back(std::filesystem::absolute(value()));
      else if (a == "--set") overrides.sets.push_back(value());
      else if (a == "--iterations") overrides.iterations = std::stoll(value());
      else if (a == "--warmup") overrides.warmup = std::stoll(value());
      else if (a == "--seeds") overrides.seeds = std::stoi(value());
      else if (a == "--threads") threads = std::stoi(value());
      else if (a == "--no-check") check = false;
      else if (a == "--bootstrap") bootstrap = std::stoll(value());
      else throw pemc::ConfigError("unknown argument " + a);
    }
    const std::filesystem::path root = PEMC_SOURCE_DIR;
    if (configs.empty())
      for (const char* c : {"bimodal1d_ct_joint", "bimodal1d_ct_gibbs", "boltzmann28_ct_joint",
                            "boltzmann28_ct_gibbs"})
        configs.push_back(root / "configs" / "paper" / (std::string(c) + ".pbtxt"));
    std::filesystem::current_path(root);
    bool ok = true;
    for (const auto& c : configs) ok &= study(c, overrides, threads, check, bootstrap);
    std::printf("\n%s\n", ok ? "ALL CHECKS PASSED" : "SOME CHECKS FAILED");
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ct_study: %s\n", e.what());
    return 2;
  }
}
