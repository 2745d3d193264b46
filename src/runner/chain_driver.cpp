#include "runner/chain_driver.hpp"

#include <chrono>
#include <cmath>
#include <map>
#include <optional>
#include <span>
#include <exception>
#include <limits>
#include <string>
#include <utility>

#include <spdlog/spdlog.h>

#include "config/factories.hpp"
#include "config/init_point.hpp"
#include "config/modes.hpp"
#include "core/cpu_time.hpp"
#include "core/error.hpp"
#include "estimators/log_z_trust.hpp"
#include "estimators/weight_degeneracy.hpp"
#include "estimators/weight_degeneracy_source.hpp"
#include "hmc/partition.hpp"
#include "kernels/kernel.hpp"
#include "modes/mode_occupancy.hpp"
#include "modes/mode_search.hpp"
#include "rng/stream.hpp"
#include "runner/model_message_tally.hpp"
#include "runner/transition_health.hpp"

namespace pemc::runner {
namespace {

constexpr int kMaxInitAttempts = 100;

// Extended targets add the weighted original-space samples the state stands for; false for a
// plain target (the state is the sample).
bool fill_weighted_view(v1::Draw& d, const targets::Target& target, const kernels::ChainState& s,
                        targets::WeightedView& view) {
  if (!target.weighted_view(s.x, view)) return false;
  const auto n = static_cast<int>(view.samples.size());
  d.mutable_extra_states()->Resize(n, 0.0);
  std::copy(view.samples.data(), view.samples.data() + n, d.mutable_extra_states()->mutable_data());
  const auto k = static_cast<int>(view.log_weights.size());
  d.mutable_log_weights()->Resize(k, 0.0);
  std::copy(view.log_weights.data(), view.log_weights.data() + k,
            d.mutable_log_weights()->mutable_data());
  d.mutable_extra()->Assign(view.extra.begin(), view.extra.end());
  return true;
}

// The target's named outputs (records.proto Draw.outputs) of every sample the draw stands for:
// the weighted view's samples where the sampler has one, else the state. Randomness (Stan's
// generated quantities) is keyed by (seed, kOutputs, chain, iteration) and the sample's index,
// so the outputs are the same for any number of ranks and across checkpoint/resume.
void fill_outputs(v1::Draw& d, const targets::Target& target, int k, const kernels::ChainState& s,
                  const targets::WeightedView& view, bool has_view, const ChainTask& task,
                  std::int64_t t) {
  d.clear_outputs();
  if (!has_view && s.x.size() != target.dim()) return;  // a state that is not a target point
  const auto& samples_matrix = view.samples;
  const int n = has_view ? static_cast<int>(samples_matrix.cols()) : 1;
  d.mutable_outputs()->Resize(n * k, 0.0);
  rng::Stream stream(task.seed, rng::Domain::kOutputs, task.chain_id, static_cast<std::uint64_t>(t));
  for (int j = 0; j < n; ++j) {
    std::span<double> row(d.mutable_outputs()->mutable_data() + static_cast<std::ptrdiff_t>(j) * k,
                          static_cast<std::size_t>(k));
    const std::uint64_t seed = stream.bits();
    if (has_view)
      target.write_outputs(samples_matrix.col(j), seed, row);
    else
      target.write_outputs(s.x, seed, row);
  }
}

void fill_draw(v1::Draw& d, const kernels::ChainState& s, const kernels::TransitionStats& t) {
  d.mutable_state()->Resize(static_cast<int>(s.x.size()), 0.0);
  std::copy(s.x.data(), s.x.data() + s.x.size(), d.mutable_state()->mutable_data());
  d.set_potential(s.potential);
  d.set_accept_stat(t.accept_stat);
  d.set_accepted(t.accepted);
  d.set_step_size(t.step_size);
  d.set_n_leapfrog(t.n_leapfrog);
  d.set_tree_depth(t.tree_depth);
  d.set_divergent(t.divergent);
  d.set_energy(t.energy);
}

// What fill_moments asks the kernel for (reused between snapshots).
struct SnapshotMoments {
  Vector mean;
  Matrix covariance;
};

// Packs the upper triangle of c row-major (records.proto EstimatesSnapshot.covariance).
void put_upper(const Matrix& c, google::protobuf::RepeatedField<double>& out) {
  out.Clear();
  out.Reserve(static_cast<int>(c.rows() * (c.rows() + 1) / 2));
  for (Eigen::Index i = 0; i < c.rows(); ++i)
    for (Eigen::Index j = i; j < c.cols(); ++j) out.Add(c(i, j));
}

// The kernel's running target moments and its base's moments, where it has them.
void fill_moments(v1::EstimatesSnapshot& snap, const kernels::Kernel& kernel, SnapshotMoments& m) {
  snap.clear_mean();
  snap.clear_covariance();
  if (kernel.report_moments(m.mean, m.covariance)) {
    snap.mutable_mean()->Assign(m.mean.data(), m.mean.data() + m.mean.size());
    put_upper(m.covariance, *snap.mutable_covariance());
  }
  double log_zeta = std::numeric_limits<double>::quiet_NaN();
  if (kernel.report_base(m.mean, m.covariance, log_zeta)) {
    auto& base = *snap.mutable_base();
    base.mutable_mean()->Assign(m.mean.data(), m.mean.data() + m.mean.size());
    put_upper(m.covariance, *base.mutable_covariance());
    if (std::isfinite(log_zeta))
      base.set_log_zeta(log_zeta);
    else
      base.clear_log_zeta();
  } else {
    snap.clear_base();
  }
}

// Carries an exception out of a runner callback (emit/tick) past the chain's own handlers: a
// failure there (e.g. the collector's disk is full, on the rank that collects) is the run's, not
// this chain's, and must not be reported as a failed chain while the run carries on.
struct CallbackFailure {
  std::exception_ptr error;
};

template <class F, class... Args>
void call_runner(const F& f, Args&&... args) {
  try {
    f(std::forward<Args>(args)...);
  } catch (...) {
    throw CallbackFailure{std::current_exception()};
  }
}

// A space partitioned over several members (pseudo-sample blocks: hmc/partition.hpp), or
// nullptr. Each member's state then holds only its own items up to date between gathers.
const hmc::Partition* distributed_partition(const targets::Target& space) {
  const auto* p = dynamic_cast<const hmc::PartitionedSpace*>(&space);
  return p && p->partition().group_size() > 1 ? &p->partition() : nullptr;
}

// The space's weight-degeneracy source (estimators/weight_degeneracy_source.hpp: e.g. a
// pseudo-extended target), or nullptr. Chains on such a space watch their weights for degeneracy
// (the statistics go to the summary's estimates, a verdict to its warnings).
const estimators::WeightDegeneracySource* degeneracy_source(const targets::Target& space) {
  return dynamic_cast<const estimators::WeightDegeneracySource*>(&space);
}

// The tracker's statistics as ChainSummary estimates and, when degenerate, a warning.
void report_degeneracy(const estimators::WeightDegeneracy& tracker, v1::ChainSummary& summary) {
  const auto s = tracker.stats();
  auto& e = *summary.mutable_estimates();
  e["max_weight_mean"] = s.mean_max_weight;
  e["kish_ess_per_draw"] = s.ess_per_draw;
  if (!std::isnan(s.beta_at_lower_fraction)) e["beta_at_lower_fraction"] = s.beta_at_lower_fraction;
  e["weight_handoff_rate"] = s.weight_handoff_rate;
  if (const auto w = estimators::degeneracy_warning(s)) summary.add_warnings(*w);
}

// What a chain counts, carried across a checkpoint.
struct ChainCounts {
  // Gradient evaluations of the sampler's own space (what kernels count, and checkpoints hold);
  // the summary's n_gradient_evals is in target gradients: per_evaluation times these.
  std::int64_t grad_evals = 0;
  std::int64_t warmup_evals = 0;  // grad_evals when warmup ended
  std::int64_t n_divergent = 0, n_nonfinite = 0, n_written = 0;
  double sum_accept = 0.0;
};

// A chain's wall time and its thread's CPU time, continuing a resumed chain's.
class ChainClock {
 public:
  explicit ChainClock(const v1::ChainCheckpoint* resume)
      : start_(std::chrono::steady_clock::now()),
        earlier_seconds_(resume ? resume->wall_seconds() : 0.0),
        cpu_start_(thread_cpu_seconds() - (resume ? resume->cpu_seconds() : 0.0)) {}
  double wall_seconds() const {
    return earlier_seconds_ +
           std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  double cpu_seconds() const { return thread_cpu_seconds() - cpu_start_; }

 private:
  std::chrono::steady_clock::time_point start_;
  double earlier_seconds_;
  double cpu_start_;
};

// One chain from its initial point (or checkpoint) to its end (or a stop checkpoint).
class ChainRun {
 public:
  ChainRun(const v1::RunConfig& config, targets::TargetPtr target, ChainTask task,
           const ChainCallbacks& cb, parallel::GroupCommPtr group,
           const v1::ChainCheckpoint* resume, modes::ModeSetPtr modes,
           modes::ModeSetPtr reference_modes)
      : config_(config),
        target_(std::move(target)),
        task_(task),
        cb_(cb),
        group_(std::move(group)),
        resume_(resume),
        modes_(std::move(modes)),
        reference_modes_(std::move(reference_modes)),
        group_size_(group_ ? group_->size() : 1),
        clock_(resume),
        messages_(task.chain_id),
        health_(config.sampler()) {}

  // Runs the chain; the summary gets everything but its status (set only by a stop checkpoint)
  // and the counts that finish() adds. Throws what the sampler or target throws.
  void run(v1::ChainSummary& summary);
  // The counts and times every summary ends with, whatever ended the chain.
  void finish(v1::ChainSummary& summary) const;

 private:
  void build_sampler();
  void log_fit(double seconds) const;
  // The run's modes when it has a search (found here, serially, when the runner gave none) and
  // the chain's mode occupancy (modes/mode_occupancy.hpp).
  void prepare_modes();
  void restore_state();
  void find_initial_point();
  // Where the chain starts (0, or the checkpoint's iteration) with the kernel ready for it.
  std::int64_t start_iteration();
  // The boundary before iteration t (t > first): a checkpoint if the leader asks for one.
  // Returns true when the chain stops there.
  bool checkpoint_boundary(std::int64_t t);
  v1::ChainCheckpoint save_checkpoint(std::int64_t t);
  void iterate(std::int64_t t);
  void write_draw(std::int64_t t, std::int64_t i, bool warmup,
                  const kernels::TransitionStats& stats);
  void write_snapshot(std::int64_t i);
  // The written post-warmup draw counts_.n_written: its samples (or state) into the occupancy.
  void add_to_occupancy(bool has_view);
  void summarize(v1::ChainSummary& summary);
  // Blocks: the full state, gathered at most once per iteration (see build_sampler).
  void gather_state() {
    if (state_gathered_) return;
    blocks_->gather(state_.x);
    state_gathered_ = true;
  }

  const v1::RunConfig& config_;
  targets::TargetPtr target_;
  ChainTask task_;
  const ChainCallbacks& cb_;
  parallel::GroupCommPtr group_;
  const v1::ChainCheckpoint* resume_;
  modes::ModeSetPtr modes_;
  modes::ModeSetPtr reference_modes_;
  int group_size_;
  ChainClock clock_;
  ChainCounts counts_;
  ModelMessageTally messages_;
  TransitionHealth health_;
  std::int64_t per_evaluation_ = 1;

  config::SamplerSetup setup_;
  kernels::Kernel* kernel_ = nullptr;
  const targets::Target* space_ = nullptr;
  const hmc::Partition* blocks_ = nullptr;
  bool state_gathered_ = true;
  kernels::ChainState state_;
  std::int64_t n_warmup_ = 0, n_iter_ = 0;
  int thin_ = 1;
  int n_outputs_ = 0;
  std::optional<estimators::WeightDegeneracy> degeneracy_;
  bool track_betas_ = false;
  std::optional<modes::ModeOccupancy> occupancy_;
  v1::Record record_;    // the draw record, reused
  v1::Record snapshot_;  // the running-estimates record, reused
  std::map<std::string, double> running_;
  SnapshotMoments moments_;
  targets::WeightedView view_;
};

void ChainRun::prepare_modes() {
  if (!config::mode_search_enabled(config_)) return;
  if (!modes_) {
    const auto settings = config::mode_search_settings(config_);
    modes_ = std::make_shared<const modes::ModeSet>(
        modes::search_modes(*target_, settings, modes::serial_batches(*target_, settings)));
  }
  const std::int64_t thin = std::max(1, config_.output().thin());
  const std::int64_t n_draws = (config_.iterations() + thin - 1) / thin;
  const bool within_draw = config_.sampler().has_pseudo_extended();
  occupancy_.emplace(*modes_, n_draws, within_draw);
}

void ChainRun::build_sampler() {
  prepare_modes();
  const auto started = std::chrono::steady_clock::now();
  setup_ = config::make_sampler(config_.sampler(), target_, group_,
                                config::SamplerContext{modes_, reference_modes_});
  kernel_ = setup_.kernel.get();
  log_fit(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  space_ = setup_.space.get();
  per_evaluation_ = space_->target_gradients_per_evaluation();
  // Snapshots carry running target moments: only then do kernels accumulate them (every member
  // of a group alike, so checkpointed kernel states agree).
  if (config_.output().estimates_every() > 0) kernel_->track_moments();
  // Blocks: a transition moves only this member's pseudo-samples (and leaves the gradient's
  // other entries zero), so the full state is gathered — once per iteration at most — where it
  // is needed: before warmup adaptation (every member's adapter then sees the same draws, so
  // step size and metric stay identical), before a record, and for a checkpoint.
  blocks_ = distributed_partition(*space_);
  state_.x.resize(space_->dim());
}

// Every chain fits its own reference or base (the same one: fits are deterministic); the run's
// chain 0 says so at info level, the others at debug level.
void ChainRun::log_fit(double seconds) const {
  const std::string fit = kernel_->fit_description();
  if (fit.empty() || (group_ && group_->rank() != 0)) return;
  spdlog::log(task_.chain_id == 0 ? spdlog::level::info : spdlog::level::debug,
              "{} chain {}: {} (sampler built in {:.3g} s)", config_.name(), task_.chain_id, fit,
              seconds);
}

void ChainRun::restore_state() {
  const auto& r = *resume_;
  if (r.x_size() != space_->dim() || r.grad_size() != space_->dim())
    throw DataError("checkpoint: chain " + std::to_string(task_.chain_id) + " has a state of " +
                    std::to_string(r.x_size()) + " numbers, the sampler's space has " +
                    std::to_string(space_->dim()));
  state_.x = Eigen::Map<const Vector>(r.x().data(), r.x_size());
  state_.grad = Eigen::Map<const Vector>(r.grad().data(), r.grad_size());
  state_.potential = r.potential();
  counts_.grad_evals = r.grad_evals();
  // The checkpoint holds the full gradient; a member keeps its own entries (as a transition
  // leaves them).
  if (blocks_) blocks_->zero_nonlocal(state_.grad);
}

void ChainRun::find_initial_point() {
  // A pooled warmup starts an extended sampler's sampling round from the full state its previous
  // round left (src/warmup/pooled_round_config.hpp): a point of the space's dimension.
  const auto& init = config_.init();
  if (init.has_point() && space_->dim() != space_->original_dim() &&
      init.point().x_size() == space_->dim()) {
    state_.x = Eigen::Map<const Vector>(init.point().x().data(), space_->dim());
    kernels::refresh(*space_, state_);
    ++counts_.grad_evals;
    messages_.add(target_->take_model_messages(), /*initialising=*/true);
    if (!std::isfinite(state_.potential))
      throw NumericalError("the state the pooled warmup handed on has no finite potential");
    return;
  }
  bool found = false;
  for (int attempt = 0; attempt < kMaxInitAttempts && !found; ++attempt) {
    rng::Stream stream(task_.seed, rng::Domain::kInitialPoint, task_.chain_id, attempt);
    space_->initial_point(
        [&](VectorRef block) { config::draw_initial_point(config_.init(), stream, block); },
        state_.x);
    kernels::refresh(*space_, state_);
    ++counts_.grad_evals;
    found = std::isfinite(state_.potential);
    messages_.add(target_->take_model_messages(), /*initialising=*/true);
  }
  if (!found) {
    const std::string said = messages_.first_text(v1::ModelMessage::INITIAL_POINT);
    throw NumericalError("no initial point with a finite potential in " +
                         std::to_string(kMaxInitAttempts) + " attempts (check `init`" +
                         (said.empty() ? ")" : "); the model said: " + said));
  }
}

std::int64_t ChainRun::start_iteration() {
  if (!resume_) {
    if (n_warmup_ > 0) {
      // Keyed by iteration 0 of the adaptation domain: resumed chains restore the found step.
      rng::Stream adaptation_stream(task_.seed, rng::Domain::kAdaptation, task_.chain_id, 0);
      counts_.grad_evals += kernel_->choose_initial_step_size(state_, adaptation_stream);
      kernel_->begin_warmup(n_warmup_);
    }
    return 0;
  }
  const auto& r = *resume_;
  const std::int64_t t_begin = r.next_iteration();
  if (t_begin < 0 || t_begin > n_warmup_ + n_iter_)
    throw DataError("checkpoint: chain " + std::to_string(task_.chain_id) + " at iteration " +
                    std::to_string(t_begin) + ", outside this run's " +
                    std::to_string(n_warmup_ + n_iter_));
  counts_.n_divergent = r.n_divergent();
  counts_.n_nonfinite = r.n_nonfinite();
  counts_.n_written = r.n_written();
  counts_.warmup_evals = r.warmup_evals();
  messages_.restore(r.model_messages());
  counts_.sum_accept = r.sum_accept();
  if (r.transition_health_size() > 0)
    health_.restore(
        std::span<const double>(r.transition_health().data(), r.transition_health_size()));
  else if (t_begin > n_warmup_)
    health_.mark_unknown();
  if (degeneracy_ && r.weight_degeneracy_size() > 0)
    degeneracy_->restore(
        std::span<const double>(r.weight_degeneracy().data(), r.weight_degeneracy_size()));
  if (occupancy_ && r.mode_occupancy_size() > 0)
    occupancy_->restore(
        std::span<const double>(r.mode_occupancy().data(), r.mode_occupancy_size()));
  // The adapter exists from begin_warmup until the end_warmup at t == n_warmup.
  if (n_warmup_ > 0 && t_begin <= n_warmup_) kernel_->begin_warmup(n_warmup_);
  if (r.group_size() != group_size_)
    throw DataError("checkpoint: chain " + std::to_string(task_.chain_id) + " was saved on " +
                    std::to_string(r.group_size()) + " rank(s), now " +
                    std::to_string(group_size_));
  // Every member restores the leader's state: kernels whose members own parts of it (PT
  // replicas) gathered them all when saving and take their own part back here.
  kernel_->restore_state(r.kernel());
  return t_begin;
}

v1::ChainCheckpoint ChainRun::save_checkpoint(std::int64_t t) {
  v1::ChainCheckpoint ck;
  ck.set_chain_id(task_.chain_id);
  ck.set_seed(task_.seed);
  ck.set_run_id(config_.name());
  ck.set_next_iteration(t);
  gather_state();
  ck.mutable_x()->Add(state_.x.data(), state_.x.data() + state_.x.size());
  ck.set_potential(state_.potential);
  if (blocks_) {
    Vector grad = state_.grad;  // the full gradient, from every member's own entries
    blocks_->gather(grad);
    ck.mutable_grad()->Add(grad.data(), grad.data() + grad.size());
  } else {
    ck.mutable_grad()->Add(state_.grad.data(), state_.grad.data() + state_.grad.size());
  }
  // A kernel without support leaves the state empty; the runner reports it.
  if (kernel_->can_checkpoint()) kernel_->save_state(*ck.mutable_kernel());
  ck.set_group_size(group_size_);
  ck.set_n_divergent(counts_.n_divergent);
  ck.set_n_nonfinite(counts_.n_nonfinite);
  ck.set_n_written(counts_.n_written);
  ck.set_warmup_evals(counts_.warmup_evals);
  ck.set_grad_evals(counts_.grad_evals);
  ck.set_sum_accept(counts_.sum_accept);
  const auto health = health_.save();
  ck.mutable_transition_health()->Assign(health.begin(), health.end());
  messages_.write(*ck.mutable_model_messages());
  if (degeneracy_) {
    const auto sums = degeneracy_->save();
    ck.mutable_weight_degeneracy()->Assign(sums.begin(), sums.end());
  }
  if (occupancy_) {
    const auto sums = occupancy_->save();
    ck.mutable_mode_occupancy()->Assign(sums.begin(), sums.end());
  }
  ck.set_wall_seconds(clock_.wall_seconds());
  ck.set_cpu_seconds(clock_.cpu_seconds());
  return ck;
}

bool ChainRun::checkpoint_boundary(std::int64_t t) {
  // Every member of a group checkpoints at the same boundary: the leader decides.
  double action =
      static_cast<double>(cb_.checkpoint_due ? cb_.checkpoint_due(t) : CheckpointAction::kNone);
  if (group_ && group_->size() > 1) group_->broadcast(std::span<double>(&action, 1), 0);
  if (action == 0.0) return false;
  const auto ck = save_checkpoint(t);
  if (cb_.on_checkpoint) call_runner(cb_.on_checkpoint, ck);
  return action == static_cast<double>(CheckpointAction::kSaveAndStop);
}

void ChainRun::write_draw(std::int64_t t, std::int64_t i, bool warmup,
                          const kernels::TransitionStats& stats) {
  v1::Draw& draw = *record_.mutable_draw();
  draw.set_iteration(i);
  draw.set_warmup(warmup);
  gather_state();
  fill_draw(draw, state_, stats);
  const bool has_view = fill_weighted_view(draw, *space_, state_, view_);
  if (n_outputs_ > 0 && cb_.emit && cb_.compute_outputs)
    fill_outputs(draw, *target_, n_outputs_, state_, view_, has_view, task_, t);
  if (cb_.emit) call_runner(cb_.emit, record_);
  if (!warmup && occupancy_) add_to_occupancy(has_view);
  if (!warmup) ++counts_.n_written;
  if (!warmup && degeneracy_ && has_view)
    degeneracy_->add(std::span<const double>(view_.log_weights.data(),
                                             static_cast<std::size_t>(view_.log_weights.size())),
                     track_betas_ ? std::span<const double>(view_.extra)
                                  : std::span<const double>());
}

void ChainRun::add_to_occupancy(bool has_view) {
  if (has_view)
    occupancy_->add(counts_.n_written, view_.samples,
                    std::span<const double>(view_.log_weights.data(),
                                            static_cast<std::size_t>(view_.log_weights.size())));
  else if (state_.x.size() == target_->dim())
    occupancy_->add(counts_.n_written, state_.x);
}

// Running estimates (records.proto EstimatesSnapshot) after `i` post-warmup iterations.
void ChainRun::write_snapshot(std::int64_t i) {
  auto& snap = *snapshot_.mutable_estimates();
  snap.set_iteration(i);
  snap.set_wall_seconds(clock_.wall_seconds());
  snap.set_n_gradient_evals(counts_.grad_evals * per_evaluation_);
  snap.set_n_extended_gradient_evals(counts_.grad_evals);
  running_.clear();
  kernel_->report_estimates(running_);
  snap.mutable_estimates()->clear();
  for (const auto& [key, value] : running_) (*snap.mutable_estimates())[key] = value;
  fill_moments(snap, *kernel_, moments_);
  call_runner(cb_.emit, snapshot_);
}

void ChainRun::iterate(std::int64_t t) {
  const bool warmup = t < n_warmup_;
  if (t == n_warmup_ && n_warmup_ > 0) {
    kernel_->end_warmup();
    counts_.warmup_evals = counts_.grad_evals;
  }
  rng::Stream stream(task_.seed, rng::Domain::kTransition, task_.chain_id, t);
  const auto stats = kernel_->transition(state_, stream);
  state_gathered_ = blocks_ == nullptr;
  counts_.grad_evals += stats.n_gradient_evals;
  if (warmup) {
    gather_state();
    kernel_->adapt(t, state_, stats);
  } else {
    counts_.sum_accept += stats.accept_stat;
    counts_.n_divergent += stats.divergent;
    counts_.n_nonfinite += stats.nonfinite;
    health_.add(stats);
  }
  const std::int64_t i = warmup ? t : t - n_warmup_;
  if ((warmup && config_.output().write_warmup()) || (!warmup && i % thin_ == 0))
    write_draw(t, i, warmup, stats);
  messages_.add(target_->take_model_messages(), /*initialising=*/false);
  const std::int64_t estimates_every = config_.output().estimates_every();
  if (!warmup && estimates_every > 0 && (i + 1) % estimates_every == 0 && cb_.emit)
    write_snapshot(i + 1);
  if (cb_.tick) call_runner(cb_.tick);
}

void ChainRun::summarize(v1::ChainSummary& summary) {
  summary.set_n_draws(counts_.n_written);
  summary.set_mean_accept_stat(n_iter_ > 0 ? counts_.sum_accept / static_cast<double>(n_iter_)
                                           : 0.0);
  summary.set_n_divergent(counts_.n_divergent);
  health_.write(summary);
  summary.set_n_rejected_nonfinite(counts_.n_nonfinite);
  summary.set_final_step_size(kernel_->step_size());
  std::map<std::string, double> estimates;
  kernel_->report_estimates(estimates);
  // A log Z carries log_z_untrusted and its reasons (estimators/log_z_trust.hpp); the run-level
  // check across chains is added with the footer (runner/log_z_checks.hpp).
  estimators::annotate_log_z_trust(estimates);
  for (const auto& [key, value] : estimates) (*summary.mutable_estimates())[key] = value;
  for (double w : kernel_->largest_log_weights()) summary.add_largest_log_weights(w);
  if (degeneracy_) report_degeneracy(*degeneracy_, summary);
  if (const auto n = messages_.count(v1::ModelMessage::OUTPUTS); n > 0)
    summary.add_warnings(
        "outputs not computed: the model failed on " + std::to_string(n) +
        " draw(s) (a Stan model's generated quantities threw); their outputs from the failing "
        "one on are NaN, the parameters before it stand; first message: " +
        messages_.first_text(v1::ModelMessage::OUTPUTS));
  if (occupancy_) *summary.mutable_mode_occupancy() = occupancy_->to_record();
  summary.set_n_gradient_evals_warmup(counts_.warmup_evals * per_evaluation_);
  summary.set_n_extended_gradient_evals_warmup(counts_.warmup_evals);
}

void ChainRun::run(v1::ChainSummary& summary) {
  build_sampler();
  // What the model said during the mode search is the search's (it probes far from the modes),
  // not this chain's.
  (void)target_->take_model_messages();
  if (resume_)
    restore_state();
  else
    find_initial_point();
  n_warmup_ = config_.warmup();
  n_iter_ = config_.iterations();
  thin_ = std::max(1, config_.output().thin());
  v1::Draw& draw = *record_.mutable_draw();
  draw.set_run_id(config_.name());
  draw.set_chain_id(task_.chain_id);
  draw.set_seed(task_.seed);
  // Running estimates (records.proto EstimatesSnapshot), only where records are written.
  snapshot_.mutable_estimates()->set_run_id(config_.name());
  snapshot_.mutable_estimates()->set_chain_id(task_.chain_id);
  snapshot_.mutable_estimates()->set_seed(task_.seed);
  n_outputs_ = static_cast<int>(target_->output_names().size());
  if (const auto* source = degeneracy_source(*space_)) {
    degeneracy_ = source->make_degeneracy_tracker();
    track_betas_ = degeneracy_ && source->degeneracy_tracks_betas();
  }
  const std::int64_t t_begin = start_iteration();
  messages_.add(target_->take_model_messages(), /*initialising=*/false);  // the step-size search
  for (std::int64_t t = t_begin; t < n_warmup_ + n_iter_; ++t) {
    if (t > t_begin && checkpoint_boundary(t)) {
      set_status(summary, ChainStatus::kCheckpointed);
      return;
    }
    iterate(t);
  }
  if (n_warmup_ > 0 && n_iter_ == 0) {
    kernel_->end_warmup();
    counts_.warmup_evals = counts_.grad_evals;
  }
  summarize(summary);
}

void ChainRun::finish(v1::ChainSummary& summary) const {
  summary.set_n_gradient_evals(counts_.grad_evals * per_evaluation_);
  summary.set_n_extended_gradient_evals(counts_.grad_evals);
  summary.set_wall_seconds(clock_.wall_seconds());
  summary.set_cpu_seconds(clock_.cpu_seconds());
  messages_.write(*summary.mutable_model_messages());
}

}  // namespace

v1::ChainSummary run_chain(const v1::RunConfig& config, targets::TargetPtr target, ChainTask task,
                           const ChainCallbacks& cb, parallel::GroupCommPtr group,
                           const v1::ChainCheckpoint* resume, modes::ModeSetPtr modes,
                           modes::ModeSetPtr reference_modes) {
  v1::ChainSummary summary;
  summary.set_chain_id(task.chain_id);
  summary.set_seed(task.seed);
  set_status(summary, ChainStatus::kOk);
  ChainRun chain(config, std::move(target), task, cb, std::move(group), resume,
                 std::move(modes), std::move(reference_modes));
  try {
    chain.run(summary);
  } catch (const CallbackFailure& f) {
    std::rethrow_exception(f.error);
  } catch (const Error& e) {
    summary.set_status(failed_status_text(e.what()));
  } catch (const std::exception& e) {
    // A user target (e.g. a plugin) may throw anything; it still ends only this chain.
    summary.set_status(failed_status_text(std::string("unexpected exception: ") + e.what()));
  }
  chain.finish(summary);
  return summary;
}

}  // namespace pemc::runner
