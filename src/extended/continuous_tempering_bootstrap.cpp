#include "extended/continuous_tempering_bootstrap.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "core/error.hpp"
#include "extended/base_density_fit.hpp"
#include "extended/continuous_tempering.hpp"

namespace pemc::extended {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Little helpers for the flat messages (same-binary peers: native byte order is fine).
class ByteWriter {
 public:
  template <class T>
  void put(T v) {
    static_assert(std::is_trivially_copyable_v<T>);
    out_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void put_string(const std::string& s) {
    put<std::uint64_t>(s.size());
    out_ += s;
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

class ByteReader {
 public:
  ByteReader(const std::string& bytes, const char* what) : bytes_(bytes), what_(what) {}
  template <class T>
  T get() {
    need(sizeof(T));
    T v;
    std::memcpy(&v, bytes_.data() + pos_, sizeof v);
    pos_ += sizeof v;
    return v;
  }
  std::string get_string() {
    const auto n = get<std::uint64_t>();
    need(n);
    std::string s = bytes_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  void expect_end() const {
    if (pos_ != bytes_.size())
      throw DataError(std::string(what_) + ": " + std::to_string(bytes_.size() - pos_) +
                      " trailing bytes");
  }

 private:
  void need(std::uint64_t n) const {
    if (n > bytes_.size() - pos_)
      throw DataError(std::string(what_) + ": message truncated");
  }
  const std::string& bytes_;
  const char* what_;
  std::size_t pos_ = 0;
};

// Standard error of the mean over finite values; NaN with fewer than two.
double standard_error(const std::vector<double>& v) {
  std::vector<double> f;
  for (double x : v)
    if (std::isfinite(x)) f.push_back(x);
  if (f.size() < 2) return kNaN;
  double m = 0.0;
  for (double x : f) m += x;
  m /= static_cast<double>(f.size());
  double s = 0.0;
  for (double x : f) s += (x - m) * (x - m);
  return std::sqrt(s / static_cast<double>(f.size() - 1) / static_cast<double>(f.size()));
}

}  // namespace

std::optional<BootstrapSettings> bootstrap_settings(const v1::RunConfig& run) {
  if (!run.sampler().has_continuous_tempering()) return std::nullopt;
  const auto& ct = run.sampler().continuous_tempering();
  if (!ct.has_bootstrap()) return std::nullopt;
  const auto& b = ct.bootstrap();
  BootstrapSettings s;
  s.rounds = b.rounds();
  s.draws_per_round = b.draws_per_round();
  s.warmup = b.has_warmup() ? b.warmup() : run.warmup();
  s.covariance_scale = b.has_covariance_scale() ? b.covariance_scale() : 1.0;
  if (b.has_keep_variance_ratio()) s.keep_variance_ratio = b.keep_variance_ratio();
  return s;
}

std::int64_t bootstrap_sweeps_per_draw(const v1::RunConfig& run) {
  const auto& ct = run.sampler().continuous_tempering();
  return ct.has_sweeps_per_draw() && ct.sweeps_per_draw() > 1 ? ct.sweeps_per_draw() : 1;
}

std::int64_t bootstrap_extra_iterations(const v1::RunConfig& run) {
  const auto s = bootstrap_settings(run);
  return s ? s->rounds * (s->warmup + s->draws_per_round * bootstrap_sweeps_per_draw(run)) : 0;
}

std::uint64_t bootstrap_round_seed(std::uint64_t seed, int round) {
  // SplitMix64 (Steele, Lea & Flood 2014) of seed + (round + 1) golden-ratio increments.
  std::uint64_t z = seed + 0x9E3779B97F4A7C15ull * (static_cast<std::uint64_t>(round) + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

v1::RunConfig bootstrap_round_config(const v1::RunConfig& run, int round,
                                     const v1::BaseDensityConfig* base) {
  const auto s = bootstrap_settings(run);
  if (!s) throw ConfigError("run '" + run.name() + "' has no continuous tempering bootstrap rounds");
  if (round < 0 || round > s->rounds)
    throw ConfigError("bootstrap round " + std::to_string(round) + " of run '" + run.name() +
                      "' outside 0.." + std::to_string(s->rounds));
  v1::RunConfig c = run;
  auto* ct = c.mutable_sampler()->mutable_continuous_tempering();
  ct->clear_bootstrap();
  if (round > 0) {
    if (!base)
      throw ConfigError("bootstrap round " + std::to_string(round) + " of run '" + run.name() +
                        "' needs the refitted base");
    *ct->mutable_base() = *base;
  }
  if (round < s->rounds) {
    c.set_warmup(s->warmup);
    // With sweeps_per_draw k > 1 a bootstrap round runs its k x draws_per_round sweeps as
    // single-sweep iterations: the same chain law and cost, but the refit's accumulator (built from
    // the round's draws) then holds every sweep's state, as the final round's kernel sums do.
    c.set_iterations(s->draws_per_round * bootstrap_sweeps_per_draw(run));
    ct->clear_sweeps_per_draw();
    auto* out = c.mutable_output();
    out->set_thin(1);
    out->set_write_warmup(false);
    out->set_estimates_every(0);
  }
  return c;
}

v1::BaseDensityConfig with_log_zeta(v1::BaseDensityConfig base, double log_zeta) {
  switch (base.kind_case()) {
    case v1::BaseDensityConfig::kGaussian:
      base.mutable_gaussian()->set_log_zeta(log_zeta);
      break;
    case v1::BaseDensityConfig::kLaplace:
      base.mutable_laplace()->set_log_zeta(log_zeta);
      break;
    case v1::BaseDensityConfig::kBoltzmannMeanField:
      base.mutable_boltzmann_mean_field()->set_log_zeta(log_zeta);
      break;
    case v1::BaseDensityConfig::kVariational:
      base.mutable_variational()->set_log_zeta(log_zeta);
      break;
    case v1::BaseDensityConfig::kMixture:
      base.mutable_mixture()->set_log_zeta(log_zeta);
      break;
    case v1::BaseDensityConfig::KIND_NOT_SET:  // validation requires a kind
      throw ConfigError("continuous tempering bootstrap: the base has no kind to set log zeta on");
  }
  return base;
}

double add_ct_draw(estimators::TemperingRbAccumulator& acc, const v1::Draw& draw) {
  if (draw.extra_size() < kExtraSize || draw.extra_states_size() < 1)
    throw DataError("bootstrap: draw " + std::to_string(draw.iteration()) + " of chain " +
                    std::to_string(draw.chain_id()) +
                    " is not a continuous-tempering draw (extra has " +
                    std::to_string(draw.extra_size()) + " numbers, extra_states " +
                    std::to_string(draw.extra_states_size()) + ")");
  const Eigen::Map<const Vector> x(draw.extra_states().data(), draw.extra_states_size());
  acc.add(x, draw.extra(kExtraLogW0), draw.extra(kExtraLogW1));
  return draw.extra(kExtraLogZeta);
}

// ---- messages ----------------------------------------------------------------------------------

std::string BootstrapChainReport::encode() const {
  ByteWriter w;
  w.put<std::int32_t>(chain_id);
  w.put<std::int32_t>(round);
  w.put<double>(log_zeta);
  w.put<double>(log_z_se);
  w.put<std::int64_t>(log_z_batches);
  w.put<std::int64_t>(gradient_evals);
  w.put<std::int64_t>(extended_gradient_evals);
  w.put<double>(wall_seconds);
  w.put<double>(cpu_seconds);
  w.put_string(status);
  const auto a = acc.serialize();
  w.put<std::uint64_t>(a.size());
  for (double v : a) w.put<double>(v);
  return w.take();
}

BootstrapChainReport BootstrapChainReport::decode(const std::string& bytes) {
  ByteReader r(bytes, "bootstrap chain report");
  BootstrapChainReport out;
  out.chain_id = r.get<std::int32_t>();
  out.round = r.get<std::int32_t>();
  out.log_zeta = r.get<double>();
  out.log_z_se = r.get<double>();
  out.log_z_batches = r.get<std::int64_t>();
  out.gradient_evals = r.get<std::int64_t>();
  out.extended_gradient_evals = r.get<std::int64_t>();
  out.wall_seconds = r.get<double>();
  out.cpu_seconds = r.get<double>();
  out.status = r.get_string();
  const auto n = r.get<std::uint64_t>();
  if (n > bytes.size() / sizeof(double)) throw DataError("bootstrap chain report: message truncated");
  std::vector<double> a(n);
  for (auto& v : a) v = r.get<double>();
  r.expect_end();
  out.acc = estimators::TemperingRbAccumulator::deserialize(a);
  return out;
}

std::string BootstrapBroadcast::encode() const {
  ByteWriter w;
  w.put<std::int32_t>(run_index);
  w.put<std::int32_t>(round);
  w.put<std::uint8_t>(base ? 1 : 0);
  w.put_string(base ? base->SerializeAsString() : std::string());
  w.put_string(error);
  v1::Footer t;
  for (const auto& [id, s] : totals) *t.add_chains() = s;
  w.put_string(t.SerializeAsString());
  return w.take();
}

BootstrapBroadcast BootstrapBroadcast::decode(const std::string& bytes) {
  ByteReader r(bytes, "bootstrap broadcast");
  BootstrapBroadcast out;
  out.run_index = r.get<std::int32_t>();
  out.round = r.get<std::int32_t>();
  const bool has_base = r.get<std::uint8_t>() != 0;
  const auto base = r.get_string();
  if (has_base) {
    out.base.emplace();
    if (!out.base->ParseFromString(base)) throw DataError("bootstrap broadcast: malformed base");
  }
  out.error = r.get_string();
  v1::Footer t;
  if (!t.ParseFromString(r.get_string())) throw DataError("bootstrap broadcast: malformed totals");
  for (const auto& s : t.chains()) out.totals[s.chain_id()] = s;
  r.expect_end();
  return out;
}

// ---- pooling -----------------------------------------------------------------------------------

BootstrapRoundResult pool_bootstrap_round(const std::vector<const BootstrapChainReport*>& reports,
                                          const BootstrapSettings& settings) {
  BootstrapRoundResult r;
  r.log_z = r.log_z_se = r.log_z_se_within = kNaN;
  if (reports.empty()) {
    r.error = "no chain finished the round";
    return r;
  }
  r.round = reports.front()->round;
  r.n_chains = static_cast<int>(reports.size());
  r.log_zeta_used = reports.front()->log_zeta;
  estimators::TemperingRbAccumulator pooled;
  std::vector<double> log_z;
  double sum_se2 = 0.0, within_dof = 0.0;
  for (const auto* c : reports) {
    if (c->log_zeta != r.log_zeta_used) {
      r.error = fmt::format("chain {} used log zeta {} in round {}, chain {} used {}", c->chain_id,
                            c->log_zeta, r.round + 1, reports.front()->chain_id, r.log_zeta_used);
      return r;
    }
    pooled.merge(c->acc);
    log_z.push_back(c->acc.log_z(r.log_zeta_used));
    sum_se2 += c->log_z_se * c->log_z_se;  // NaN when a chain has none
    within_dof += static_cast<double>(c->log_z_batches - 1);
  }
  r.log_z = pooled.log_z(r.log_zeta_used);
  r.log_z_se = standard_error(log_z);
  r.log_z_se_within = std::sqrt(sum_se2) / static_cast<double>(reports.size());
  r.log_z_se_within_dof = std::isfinite(r.log_z_se_within) ? within_dof : 0.0;
  std::size_t finite = 0;
  for (double v : log_z) finite += std::isfinite(v);
  r.log_z_se_dof = finite >= 2 ? static_cast<double>(finite - 1) : 0.0;
  r.draws = pooled.count();
  r.ess_w0 = pooled.ess_w0();
  r.ess_w1 = pooled.ess_w1();
  if (pooled.count() == 0 || !std::isfinite(r.log_z)) {
    r.error = "no usable draws (" + std::to_string(pooled.count()) +
              " draws pooled; no positive weights w0 and w1)";
    return r;
  }
  r.mean = pooled.mean();
  const Matrix cov = pooled.covariance();
  r.variance = cov.diagonal();
  const auto d = r.mean.size();
  r.mean_se.resize(d);
  r.variance_se.resize(d);
  // Per-chain moments (NaN for a chain without positive w1) for the standard errors.
  const auto n = static_cast<Eigen::Index>(reports.size());
  Matrix chain_mean = Matrix::Constant(d, n, kNaN), chain_var = Matrix::Constant(d, n, kNaN);
  for (Eigen::Index c = 0; c < n; ++c) {
    const auto& a = reports[static_cast<std::size_t>(c)]->acc;
    if (!(a.log_sum_w1() > -std::numeric_limits<double>::infinity())) continue;
    chain_mean.col(c) = a.mean();
    chain_var.col(c) = a.covariance().diagonal();
  }
  std::vector<double> m(reports.size()), v(reports.size());
  for (Eigen::Index i = 0; i < d; ++i) {
    for (Eigen::Index c = 0; c < n; ++c) {
      m[static_cast<std::size_t>(c)] = chain_mean(i, c);
      v[static_cast<std::size_t>(c)] = chain_var(i, c);
    }
    r.mean_se[i] = standard_error(m);
    r.variance_se[i] = standard_error(v);
  }
  try {
    // refit_base checks what the next round needs (finite log Z, positive definite covariance).
    (void)refit_base(pooled, r.log_zeta_used, settings.covariance_scale);
    v1::GaussianBaseConfig g;
    for (Eigen::Index i = 0; i < d; ++i) g.add_mean(r.mean[i]);
    // Row-major, as GaussianBaseConfig.covariance; exactly symmetric (see rb_tempering.cpp), so
    // the next round factorises exactly this matrix.
    for (Eigen::Index i = 0; i < d; ++i)
      for (Eigen::Index j = 0; j < d; ++j) g.add_covariance(settings.covariance_scale * cov(i, j));
    g.set_log_zeta(r.log_z);
    r.next_base = std::move(g);
  } catch (const NumericalError& e) {
    r.error = e.what();
  }
  return r;
}

v1::Record bootstrap_snapshot(const BootstrapRoundResult& r, const std::string& run_id,
                              const BootstrapSettings& settings, double wall_seconds) {
  v1::Record rec;
  auto& s = *rec.mutable_estimates();
  s.set_run_id(run_id);
  s.set_chain_id(kBootstrapPooledChainId);
  s.set_seed(0);
  s.set_iteration((r.round + 1) * settings.draws_per_round);
  s.set_wall_seconds(wall_seconds);
  s.set_n_gradient_evals(r.gradient_evals);
  s.set_n_extended_gradient_evals(r.gradient_evals);  // CT: one target gradient per evaluation
  auto& e = *s.mutable_estimates();
  e["bootstrap_round"] = r.round + 1;
  e["n_chains"] = r.n_chains;
  e["log_zeta"] = r.log_zeta_used;
  e["refit_ok"] = r.next_base ? 1.0 : 0.0;
  e["base_origin"] = r.base_origin;
  if (r.chosen_base) {
    e["next_base_origin"] = r.chosen_base_origin;
    e["base_kept"] = r.choice.use_refit ? 0.0 : 1.0;
    if (!r.choice.use_refit) e["kept_round"] = r.choice.kept_round + 1;
    e["next_log_zeta"] = r.chosen_log_zeta;
  }
  auto put = [&e](const char* key, double v) {
    if (std::isfinite(v)) e[key] = v;
  };
  put("log_z", r.log_z);
  put("log_z_se", r.log_z_se);
  put("log_z_se_within", r.log_z_se_within);
  put("log_z_var_x_draws", r.quality.variance_x_draws());
  put("variance_ratio", r.choice.variance_ratio);
  put("variance_threshold", r.choice.threshold);
  if (r.quality.log_z_se_dof > 0) e["log_z_se_dof"] = r.quality.log_z_se_dof;
  put("log_zeta_shift_z", r.quality.log_zeta_shift_z());
  if (r.n_chains > 0) {
    e["ess_w0"] = r.ess_w0;
    e["ess_w1"] = r.ess_w1;
  }
  for (Eigen::Index i = 0; i < r.mean.size(); ++i) {
    const auto k = std::to_string(i);
    e["mean_" + k] = r.mean[i];
    e["var_" + k] = r.variance[i];
    if (std::isfinite(r.mean_se[i])) e["mean_se_" + k] = r.mean_se[i];
    if (std::isfinite(r.variance_se[i])) e["var_se_" + k] = r.variance_se[i];
  }
  return rec;
}

std::string describe(const BootstrapRoundResult& r, const BootstrapSettings& settings) {
  std::string s = fmt::format("bootstrap round {}/{}: {} chain(s) x {} draws, log zeta {:.6g}",
                              r.round + 1, settings.rounds, r.n_chains, settings.draws_per_round,
                              r.log_zeta_used);
  if (std::isfinite(r.log_z)) {
    s += fmt::format(": pooled log Z {:.6g}", r.log_z);
    if (std::isfinite(r.log_z_se)) s += fmt::format(" ± {:.3g} (se across chains)", r.log_z_se);
    s += fmt::format(", Kish ESS w1 {:.0f} / w0 {:.0f}", r.ess_w1, r.ess_w0);
  }
  if (r.mean.size() > 0) {
    double max_se = 0.0;
    Eigen::Index at = 0;
    for (Eigen::Index i = 0; i < r.mean_se.size(); ++i)
      if (std::isfinite(r.mean_se[i]) && r.mean_se[i] > max_se) max_se = r.mean_se[i], at = i;
    if (r.n_chains >= 2)
      s += fmt::format("; E[x] largest se {:.3g} (x{}: {:.4g})", max_se, at, r.mean[at]);
  }
  if (std::isfinite(r.log_z_se_within)) s += fmt::format("; chains' own SEs give ± {:.3g}", r.log_z_se_within);
  if (r.next_base)
    s += fmt::format("; refit: log zeta {:.6g}, covariance x {:g}", r.next_base->log_zeta(),
                     settings.covariance_scale);
  else
    s += "; refit failed: " + r.error;
  if (!r.choice.reason.empty()) s += "; next base: " + r.choice.reason;
  if (!r.choice.warning.empty()) s += "; WARNING: " + r.choice.warning;
  return s;
}

// ---- coordinator bookkeeping -------------------------------------------------------------------

BootstrapRounds::BootstrapRounds(int run_index, BootstrapSettings settings,
                                 std::vector<int> chain_ids, v1::BaseDensityConfig configured_base)
    : run_index_(run_index),
      settings_(settings),
      live_(std::move(chain_ids)),
      current_base_(std::move(configured_base)) {
  std::sort(live_.begin(), live_.end());
  for (int id : live_) totals_[id].set_chain_id(id);
}

std::optional<BootstrapRoundResult> BootstrapRounds::on_report(BootstrapChainReport report) {
  const int id = report.chain_id;
  if (report.round != round_)
    throw DataError(fmt::format("bootstrap: chain {} reports round {}, the run is at round {}", id,
                                report.round + 1, round_ + 1));
  if (!std::binary_search(live_.begin(), live_.end(), id) || reports_.count(id))
    throw DataError(fmt::format("bootstrap: unexpected report of chain {} for round {}", id,
                                round_ + 1));
  auto& t = totals_[id];
  t.set_n_gradient_evals(t.n_gradient_evals() + report.gradient_evals);
  t.set_n_extended_gradient_evals(t.n_extended_gradient_evals() + report.extended_gradient_evals);
  t.set_wall_seconds(t.wall_seconds() + report.wall_seconds);
  t.set_cpu_seconds(t.cpu_seconds() + report.cpu_seconds);
  gradient_evals_ += report.gradient_evals;
  reports_.emplace(id, std::move(report));
  if (reports_.size() < live_.size()) return std::nullopt;
  // Complete: pool the chains that finished the round, in ascending chain id (std::map order).
  std::vector<const BootstrapChainReport*> ok;
  std::vector<int> next;
  for (const auto& [cid, rep] : reports_)
    if (rep.ok()) {
      ok.push_back(&rep);
      next.push_back(cid);
    }
  auto result = pool_bootstrap_round(ok, settings_);
  result.round = round_;
  result.gradient_evals = gradient_evals_;
  if (ok.empty()) result.error = "no chain finished bootstrap round " + std::to_string(round_ + 1);
  choose_base(result);
  live_ = std::move(next);
  reports_.clear();
  ++round_;
  return result;
}

void BootstrapRounds::choose_base(BootstrapRoundResult& result) {
  // This round's quality: its SE is the larger of the across-chain and the within-chain one.
  BootstrapRoundQuality& q = result.quality;
  q.round = result.round;
  q.log_z = result.log_z;
  const double a = result.log_z_se, w = result.log_z_se_within;
  const bool across = std::isfinite(a) && !(std::isfinite(w) && w > a);
  q.log_z_se = across ? a : w;
  q.log_z_se_dof = across ? result.log_z_se_dof : result.log_z_se_within_dof;
  q.draws = result.draws;
  q.base_origin = current_origin_;
  q.log_zeta = result.log_zeta_used;
  q.log_zeta_se = current_log_zeta_se_;
  q.refit_ok = result.next_base.has_value();
  result.base_origin = current_origin_;
  history_.push_back(q);
  bases_.push_back(current_base_);

  result.choice = choose_next_base(history_, settings_.keep_variance_ratio);
  if (result.choice.use_refit) {
    v1::BaseDensityConfig refit;
    *refit.mutable_gaussian() = *result.next_base;
    current_base_ = std::move(refit);
    current_origin_ = result.round + 1;
    current_log_zeta_se_ = q.log_z_se;
  } else if (result.choice.kept_round >= 0) {
    const auto j = static_cast<std::size_t>(result.choice.kept_round);
    current_base_ = with_log_zeta(bases_[j], history_[j].log_z);
    current_origin_ = history_[j].base_origin;
    current_log_zeta_se_ = history_[j].log_z_se;
  } else {
    return;  // no base: result.error says why the refit failed
  }
  result.chosen_base = current_base_;
  result.chosen_base_origin = current_origin_;
  result.chosen_log_zeta = result.choice.use_refit
                               ? result.next_base->log_zeta()
                               : history_[static_cast<std::size_t>(result.choice.kept_round)].log_z;
}

BootstrapBroadcast BootstrapRounds::broadcast(const BootstrapRoundResult& result) const {
  BootstrapBroadcast b;
  b.run_index = run_index_;
  b.round = result.round + 1;
  b.base = result.chosen_base;
  if (!result.chosen_base) b.error = result.error.empty() ? result.choice.reason : result.error;
  for (int id : live_) {
    auto t = totals_.at(id);
    if (result.chosen_base) (*t.mutable_estimates())["bootstrap_base_origin"] = result.chosen_base_origin;
    b.totals[id] = std::move(t);
  }
  return b;
}

void add_bootstrap_totals(v1::ChainSummary& summary, const v1::ChainSummary& totals,
                          const BootstrapSettings& settings) {
  summary.set_n_gradient_evals(summary.n_gradient_evals() + totals.n_gradient_evals());
  summary.set_n_gradient_evals_warmup(summary.n_gradient_evals_warmup() + totals.n_gradient_evals());
  summary.set_n_extended_gradient_evals(summary.n_extended_gradient_evals() +
                                        totals.n_extended_gradient_evals());
  summary.set_n_extended_gradient_evals_warmup(summary.n_extended_gradient_evals_warmup() +
                                               totals.n_extended_gradient_evals());
  summary.set_wall_seconds(summary.wall_seconds() + totals.wall_seconds());
  summary.set_cpu_seconds(summary.cpu_seconds() + totals.cpu_seconds());
  auto& e = *summary.mutable_estimates();
  e["bootstrap_rounds"] = settings.rounds;
  e["bootstrap_draws"] = static_cast<double>(settings.rounds * settings.draws_per_round);
  e["bootstrap_gradient_evals"] = static_cast<double>(totals.n_gradient_evals());
  for (const auto& [key, value] : totals.estimates()) e[key] = value;  // bootstrap_base_origin
}

}  // namespace pemc::extended
