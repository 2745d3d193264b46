#include "warmup/pooled_warmup_rounds.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "records/model_message_list.hpp"
#include "warmup/reference_fit.hpp"
#include "warmup/stuck_chains.hpp"

namespace pemc::warmup {
namespace {

// ChainSummary.status of a chain that ran to the end (records.proto; the runner's kOk).
constexpr const char* kOk = "ok";
// The largest dimension whose pseudo-extended target stage keeps dense window sums (d^2 numbers
// per chain and window in its report).
constexpr int kMaxDenseFitDim = 128;
// EstimatesSnapshot.chain_id of the pooled records (as continuous tempering's bootstrap rounds).
constexpr int kPooledChainId = -1;

// The median of the chains' adapted step sizes (the geometric mean of the middle two for an even
// count): one chain stuck where only tiny steps are accepted must not set every chain's step.
double median_step_size(const std::map<int, ChainRoundReport>& reports) {
  std::vector<double> logs;
  for (const auto& [id, r] : reports)
    if (r.ok) logs.push_back(std::log(r.final_step_size));
  if (logs.empty()) return 0.0;
  std::sort(logs.begin(), logs.end());
  const std::size_t n = logs.size();
  return std::exp(n % 2 ? logs[n / 2] : 0.5 * (logs[n / 2 - 1] + logs[n / 2]));
}

void add_totals(v1::ChainSummary& s, const ChainTotals& t) {
  s.set_n_gradient_evals(s.n_gradient_evals() + t.gradient_evals);
  s.set_n_gradient_evals_warmup(s.n_gradient_evals_warmup() + t.gradient_evals);
  s.set_n_extended_gradient_evals(s.n_extended_gradient_evals() + t.extended_gradient_evals);
  s.set_n_extended_gradient_evals_warmup(s.n_extended_gradient_evals_warmup() +
                                         t.extended_gradient_evals);
  s.set_wall_seconds(s.wall_seconds() + t.wall_seconds);
  s.set_cpu_seconds(s.cpu_seconds() + t.cpu_seconds);
  // The earlier rounds' model messages first, then this round's.
  std::vector<v1::ModelMessage> messages = t.model_messages;
  records::merge_model_messages(messages, {s.model_messages().begin(), s.model_messages().end()});
  s.mutable_model_messages()->Assign(messages.begin(), messages.end());
}

std::string windows_text(const WindowDecision& d) {
  return d.first_window == d.last_window ? fmt::format("window {}", d.last_window)
                                         : fmt::format("windows {}-{}", d.first_window,
                                                       d.last_window);
}

// One chain's one round on its ranks.
class PooledChainRound final : public extended::ChainRound {
 public:
  PooledChainRound(const v1::RunConfig& run, const ScheduleSizes& sizes, int chain_id,
                   std::uint64_t seed, int round, std::optional<RoundBroadcast> b,
                   const modes::ModeSet* modes)
      : run_(run), sizes_(sizes), chain_id_(chain_id), seed_(seed), round_(round),
        broadcast_(std::move(b)) {
    plan_ = broadcast_ ? broadcast_->plan : first_round(sizes_);
    if (broadcast_) {
      const auto it = broadcast_->chains.find(chain_id);
      if (it == broadcast_->chains.end())
        throw DataError(fmt::format("pooled warmup: round {} has no state for chain {}", round,
                                    chain_id));
      before_ = it->second.totals;
    }
    config_ = pooled_round_config(run_, plan_, broadcast_ ? &*broadcast_ : nullptr, chain_id,
                                  pooled_initial_metric(run_, modes));
    on_target_ = pools_pseudo_extended(run_) && !config_.sampler().has_pseudo_extended();
    if (plan_.phase == Phase::kWindow) {
      window_.emplace();  // its sums are sized by the first draw
      dense_ = pooled_metric_is_dense(run_);
    }
    if (pools_pseudo_extended(run_) && !on_target_ && broadcast_ && modes) fit_reference(*modes);
  }

  modes::ModeSetPtr reference_modes() const override { return reference_modes_; }

  std::optional<v1::ChainSummary> refused() const override { return std::nullopt; }
  const v1::RunConfig& config() const override { return config_; }
  std::uint64_t seed() const override {
    return is_final() ? seed_ : pooled_round_seed(seed_, round_);
  }
  bool is_final() const override { return plan_.phase == Phase::kSample; }
  std::int64_t skipped_iterations() const override {
    return is_final() ? sizes_.max_warmup - plan_.warmup_before : 0;
  }

  const v1::Record* on_record(const v1::Record& r) override {
    if (!r.has_draw()) return nullptr;
    const auto& d = r.draw();
    last_state_ = Eigen::Map<const Vector>(d.state().data(), d.state_size());
    if (window_) {
      if (window_->sums.dim() != last_state_.size()) {
        // A pseudo-extended run's target stage keeps dense sums up to kMaxDenseFitDim whatever
        // its metric: its reference is refitted to them (reference_fit.hpp).
        const int d = static_cast<int>(last_state_.size());
        window_->sums = WindowSums(d, dense_ || (on_target_ && d <= kMaxDenseFitDim));
      }
      window_->sums.add(last_state_);
      window_->log_density.push_back(-d.potential());
    }
    // A pseudo-extended run's rounds on the target draw in another space than its records: only
    // its terminal buffer's draws are its warmup draws.
    if (!run_.output().write_warmup() || on_target_) return nullptr;
    forward_ = r;
    auto& f = *forward_.mutable_draw();
    f.set_iteration(plan_.warmup_before + d.iteration());
    f.set_seed(seed_);
    return &forward_;
  }

  Outcome finish(v1::ChainSummary ran, bool leader) override {
    Outcome out;
    const ChainTotals cost{ran.n_gradient_evals(), ran.n_extended_gradient_evals(),
                           ran.wall_seconds(), ran.cpu_seconds(),
                           {ran.model_messages().begin(), ran.model_messages().end()}};
    add_totals(ran, before_);  // the chain's summary counts its earlier rounds as warmup
    if (is_final()) {
      auto& e = *ran.mutable_estimates();
      e["pooled_warmup_iterations"] = static_cast<double>(plan_.warmup_before);
      e["pooled_warmup_converged"] = broadcast_->converged ? 1.0 : 0.0;
      if (std::isfinite(broadcast_->rhat)) e["pooled_warmup_rhat"] = broadcast_->rhat;
      if (std::isfinite(broadcast_->bulk_ess)) e["pooled_warmup_ess"] = broadcast_->bulk_ess;
      if (before_.restarts > 0) {
        e["pooled_warmup_restarts"] = before_.restarts;
        // Its draws continue another chain's: R-hat compares fewer independent starts.
        ran.add_warnings(fmt::format(
            "pooled warmup restarted this chain {} time{} from another chain's state (it was stuck "
            "far below the others with a tiny step size; the log names the donor): its draws do "
            "not start independently of that chain's, so R-hat across the chains has fewer "
            "independent starts to compare (docs/guide.md#pooled-warmup)",
            before_.restarts, before_.restarts == 1 ? "" : "s"));
      }
      // Pseudo-extended: the chains' warmups on the target itself may sit in different modes, which
      // its sampling moves between; its draws' R-hat and mode checks judge the run.
      if (!broadcast_->converged && !pools_pseudo_extended(run_))
        ran.add_warnings(fmt::format(
            "pooled warmup ended at the configured maximum (warmup {}) before the chains agreed: "
            "log density R-hat {:.3f}, bulk ESS {:.0f} over the last windows (needed R-hat <= {} "
            "and ESS >= {:.0f}); check R-hat and ESS of the draws, or raise warmup",
            sizes_.max_warmup, broadcast_->rhat, broadcast_->bulk_ess, kRhatConverged,
            kEssConverged));
      out.summary = std::move(ran);
      return out;
    }
    if (leader) {
      ChainRoundReport report;
      report.chain_id = chain_id_;
      report.round = round_;
      report.ok = ran.status() == kOk && last_state_.size() > 0;
      report.last_state = last_state_;
      report.final_step_size = ran.final_step_size();
      report.cost = cost;
      if (window_) report.window = std::move(*window_);
      out.report = report.encode();
    }
    if (ran.status() == kOk) {
      out.round_done = true;
      return out;
    }
    ran.set_status(fmt::format("failed in pooled warmup ({} of round {}): {}",
                               phase_name(plan_.phase), round_ + 1, ran.status()));
    out.summary = std::move(ran);
    return out;
  }

 private:
  // The extended rounds' reference, refitted to the target stage's draws the broadcast carries;
  // the lowest chain logs the fit when its terminal buffer starts.
  void fit_reference(const modes::ModeSet& modes) {
    if (broadcast_->fits.empty()) return;
    auto fit = fit_reference_modes(modes, broadcast_->fits);
    if (fit.description.empty()) return;
    if (plan_.phase == Phase::kTerm && chain_id_ == broadcast_->chains.begin()->first)
      spdlog::info("{}: {}", run_.name(), fit.description);
    reference_modes_ = std::make_shared<const modes::ModeSet>(std::move(fit.modes));
  }

  const v1::RunConfig& run_;
  ScheduleSizes sizes_;
  int chain_id_;
  std::uint64_t seed_;
  int round_;
  std::optional<RoundBroadcast> broadcast_;
  RoundPlan plan_;
  ChainTotals before_;
  v1::RunConfig config_;
  bool dense_ = false;
  bool on_target_ = false;  // a pseudo-extended run's round on the target itself
  modes::ModeSetPtr reference_modes_;
  std::optional<ChainWindow> window_;
  Vector last_state_;
  v1::Record forward_;
};

}  // namespace

std::uint64_t pooled_round_seed(std::uint64_t seed, int round) {
  // SplitMix64 of the seed moved by (round + 1) odd increments other than the CT bootstrap's.
  std::uint64_t z = seed + 0xD1B54A32D192ED03ull * (static_cast<std::uint64_t>(round) + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

PooledWarmupRounds::PooledWarmupRounds(v1::RunConfig run, int run_index)
    : run_(std::move(run)), run_index_(run_index) {
  const auto* a = pooled_adaptation(run_);
  if (!a || !a->pooled()) throw ConfigError("run '" + run_.name() + "' has no pooled warmup");
  sizes_ = schedule_sizes(*a, run_.warmup());
  plan_ = first_round(sizes_);
}

std::string PooledWarmupRounds::describe() const {
  return "a pooled warmup (" + pooled_field(run_) + ")";
}

std::string PooledWarmupRounds::sampler_name() const {
  const auto& s = run_.sampler();
  return std::string(s.has_pseudo_extended() ? "pseudo_extended"
                     : s.has_nuts()          ? "nuts"
                                             : "hmc") +
         " (with pooled warmup)";
}

void PooledWarmupRounds::set_chains(std::vector<int> chain_ids) { live_ = std::move(chain_ids); }

bool PooledWarmupRounds::rounds_pending() const {
  return plan_.phase != Phase::kSample && !live_.empty();
}

std::optional<extended::MultiRoundRun::RoundEnd> PooledWarmupRounds::on_report(
    const std::string& bytes, double wall_seconds) {
  auto report = ChainRoundReport::decode(bytes);
  const int id = report.chain_id;
  if (report.round != round_)
    throw DataError(fmt::format("pooled warmup: chain {} reports round {}, the run is at round {}",
                                id, report.round + 1, round_ + 1));
  if (!std::binary_search(live_.begin(), live_.end(), id) || reports_.count(id))
    throw DataError(fmt::format("pooled warmup: unexpected report of chain {} for round {}", id,
                                round_ + 1));
  reports_.emplace(id, std::move(report));
  if (reports_.size() < live_.size()) return std::nullopt;

  // Complete: pool the chains that finished the round, in ascending chain id (map order). The
  // costs join the totals only now, so that between completions the totals are those at the
  // round's start (checkpoint_state()).
  std::vector<int> ok;
  for (const auto& [cid, r] : reports_) {
    totals_[cid].add(r.cost);
    if (r.ok)
      ok.push_back(cid);
    else
      spdlog::warn("{}: chain {} failed in pooled warmup round {}; left out from now on",
                   run_.name(), cid, round_ + 1);
  }
  bool converged = false;
  std::vector<int> pooled;  // the chains whose window joined the history
  std::map<int, int> donors;  // restarted chain -> the chain whose state it restarts from
  if (plan_.phase == Phase::kWindow && !ok.empty()) {
    for (int cid : ok)
      if (!reports_.at(cid).window)
        throw DataError(fmt::format("pooled warmup: chain {} sent no window", cid));
    // Failed chains' reports (not ok) take no part: stuck_chain_restarts skips them.
    for (const auto& restart : stuck_chain_restarts(reports_, round_)) {
      donors[restart.chain_id] = restart.donor_id;
      log_restart(restart);
    }
    // A restarted chain's windows are not the posterior's: the metric and the convergence
    // verdict come from the others, and it joins them again with its next window.
    for (int cid : ok) {
      if (donors.count(cid)) {
        history_.forget(cid);
        ++totals_.at(cid).restarts;
        continue;
      }
      history_.add(plan_.window, cid, std::move(*reports_.at(cid).window));
      pooled.push_back(cid);
    }
    decision_ = history_.decide(plan_.window, pooled, pooling_of(run_),
                                !pooled_metric_is_dense(run_));
    // Not converged while a chain has just restarted: it has not been judged yet.
    if (!donors.empty()) decision_->converged = false;
    converged = decision_->converged;
    inverse_metric_ = decision_->inverse_metric;
  }
  RoundBroadcast next;
  next.round = round_ + 1;
  next.plan = next_round(sizes_, plan_, converged);
  next.inverse_metric = inverse_metric_;
  if (decision_) {
    next.converged = decision_->converged;
    next.rhat = decision_->rhat;
    next.bulk_ess = decision_->bulk_ess;
  }
  // Chains that agree sample at one step size; chains that did not (warmup ended at its maximum)
  // keep their own, as Stan's would: a pooled step there would carry one chain's trouble to all.
  if (next.plan.phase == Phase::kSample && next.converged) next.step_size = median_step_size(reports_);
  // Pseudo-extended: its extended rounds' reference is refitted to the draws the metric came from.
  if (pools_pseudo_extended(run_) && plan_.phase == Phase::kWindow &&
      next.plan.phase != Phase::kWindow && decision_)
    fits_ = history_.chain_fits(*decision_, pooled);
  next.fits = fits_;
  for (int cid : ok) {
    const auto& r = reports_.at(cid);
    const auto donor = donors.find(cid);
    const Vector& start =
        donor == donors.end() ? r.last_state : reports_.at(donor->second).last_state;
    next.chains[cid] = {start, totals_.at(cid),
                        next.step_size > 0 ? next.step_size : r.final_step_size};
  }
  const int n_reported = static_cast<int>(reports_.size());
  live_ = std::move(ok);
  reports_.clear();
  ++round_;
  const Phase done = plan_.phase;
  plan_ = next.plan;
  log_round(done, next, n_reported);

  RoundEnd end;
  end.next_round = round_;
  end.next_chains = live_;
  end.record = round_record(next, wall_seconds);
  end.broadcast = next.encode();
  broadcast_ = end.broadcast;
  return end;
}

std::string PooledWarmupRounds::checkpoint_state() const {
  return CoordinatorState{broadcast_, totals_, history_.windows(), decision_}.encode();
}

extended::MultiRoundRun::ResumePoint PooledWarmupRounds::restore(const std::string& state) {
  auto c = CoordinatorState::decode(state);
  reports_.clear();
  totals_ = std::move(c.totals);
  history_ = WindowHistory::from_windows(std::move(c.windows));
  decision_ = std::move(c.decision);
  broadcast_ = std::move(c.broadcast);
  if (broadcast_.empty()) {
    round_ = 0;
    plan_ = first_round(sizes_);
    inverse_metric_.clear();
    fits_.clear();
  } else {
    const auto b = RoundBroadcast::decode(broadcast_);
    round_ = b.round;
    plan_ = b.plan;
    inverse_metric_ = b.inverse_metric;
    fits_ = b.fits;
    std::vector<int> live;
    for (const auto& entry : b.chains) {
      const int id = entry.first;
      if (!std::binary_search(live_.begin(), live_.end(), id))
        throw DataError(fmt::format("pooled warmup: the checkpoint's round {} has chain {}, "
                                    "which is not a chain of run '{}' here",
                                    round_ + 1, id, run_.name()));
      live.push_back(id);
    }
    live_ = std::move(live);
  }
  ResumePoint p;
  p.round = round_;
  p.chains = live_;
  p.broadcast = broadcast_;
  p.restarts = plan_.phase != Phase::kSample;
  p.warmup_before = plan_.warmup_before;
  return p;
}

void PooledWarmupRounds::log_restart(const ChainRestart& r) const {
  spdlog::warn("{}: chain {} is stuck after pooled warmup round {}: its step size {:.3g} against "
               "chain {}'s {:.3g}, its log density at most {:.6g} where chain {}'s is at least "
               "{:.6g}; it restarts from chain {}'s state (docs/guide.md#pooled-warmup)",
               run_.name(), r.chain_id, round_ + 1, r.step_size, r.donor_id, r.donor_step_size,
               r.max_log_density, r.donor_id, r.donor_min_log_density, r.donor_id);
}

void PooledWarmupRounds::log_round(Phase done, const RoundBroadcast& next, int n_reported) const {
  const std::string line = fmt::format(
      "{}: pooled warmup round {} ({}) done by {} of {} chains ({} iterations each so far)",
      run_.name(), round_, phase_name(done), live_.size(), n_reported, next.plan.warmup_before);
  std::string pooled;
  if (done == Phase::kWindow && decision_)
    pooled = fmt::format("; log density R-hat {:.3f}, bulk ESS {:.0f} over {}, metric from {} draws",
                         decision_->rhat, decision_->bulk_ess, windows_text(*decision_),
                         decision_->n_draws);
  std::string what_next;
  switch (next.plan.phase) {
    case Phase::kWindow:
      what_next = fmt::format("next: window {} ({} iterations)", next.plan.window,
                              next.plan.iterations);
      break;
    case Phase::kTerm:
      what_next = fmt::format(
          "next: terminal buffer ({} iterations{})", next.plan.iterations,
          pools_pseudo_extended(run_) ? " of the pseudo-extended sampler from each chain's state" : "");
      break;
    case Phase::kSample:
      what_next =
          next.step_size > 0
              ? fmt::format("warmup ends after {} of at most {} iterations; sampling at step size {:.4g}",
                            next.plan.warmup_before, sizes_.max_warmup, next.step_size)
              : fmt::format("warmup ends after {} of at most {} iterations; each chain samples at "
                            "its own step size",
                            next.plan.warmup_before, sizes_.max_warmup);
      break;
    case Phase::kInit:
      break;
  }
  const bool unconverged_end = done == Phase::kWindow && next.plan.phase != Phase::kWindow &&
                              decision_ && !decision_->converged;
  if (unconverged_end && pools_pseudo_extended(run_))
    spdlog::info("{}{}; {} (the chains' warmups on the target did not agree before the maximum "
                 "warmup, as when they sit in different modes; pseudo-extended sampling moves "
                 "between modes, and its draws' R-hat and mode checks judge the run)",
                 line, pooled, what_next);
  else if (unconverged_end)
    spdlog::warn("{}{}; {} (the chains did not agree before the maximum warmup)", line, pooled,
                 what_next);
  else
    spdlog::info("{}{}; {}", line, pooled, what_next);
}

v1::Record PooledWarmupRounds::round_record(const RoundBroadcast& next, double wall_seconds) const {
  v1::Record rec;
  auto& s = *rec.mutable_estimates();
  s.set_run_id(run_.name());
  s.set_chain_id(kPooledChainId);
  s.set_seed(0);
  s.set_iteration(next.plan.warmup_before);
  s.set_wall_seconds(wall_seconds);
  std::int64_t grads = 0, extended = 0;
  for (const auto& [id, t] : totals_) {
    grads += t.gradient_evals;
    extended += t.extended_gradient_evals;
  }
  s.set_n_gradient_evals(grads);
  s.set_n_extended_gradient_evals(extended);
  auto& e = *s.mutable_estimates();
  e["pooled_warmup_round"] = round_;
  e["n_chains"] = static_cast<double>(live_.size());
  e["next_phase"] = static_cast<double>(next.plan.phase);
  if (decision_) {
    e["converged"] = decision_->converged ? 1.0 : 0.0;
    if (std::isfinite(decision_->rhat)) e["rhat_log_density"] = decision_->rhat;
    if (std::isfinite(decision_->bulk_ess)) e["ess_log_density"] = decision_->bulk_ess;
    e["metric_draws"] = static_cast<double>(decision_->n_draws);
  }
  if (next.plan.phase == Phase::kSample && next.step_size > 0) e["step_size"] = next.step_size;
  return rec;
}

std::unique_ptr<extended::ChainRound> PooledWarmupRounds::start_round(
    int chain_id, std::uint64_t seed, int round, const std::string* broadcast,
    const modes::ModeSet* modes) const {
  std::optional<RoundBroadcast> b;
  if (broadcast) b = RoundBroadcast::decode(*broadcast);
  if (round > 0 && !b)
    throw DataError(fmt::format("pooled warmup: round {} of chain {} without its broadcast",
                                round + 1, chain_id));
  return std::make_unique<PooledChainRound>(run_, sizes_, chain_id, seed, round, std::move(b),
                                            modes);
}

}  // namespace pemc::warmup
