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

#include "config/factories.hpp"
#include "config/init_point.hpp"
#include "core/cpu_time.hpp"
#include "core/error.hpp"
#include "estimators/log_z_trust.hpp"
#include "estimators/weight_degeneracy.hpp"
#include "extended/pseudo_extended_target.hpp"
#include "hmc/partition.hpp"
#include "kernels/kernel.hpp"
#include "rng/stream.hpp"

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

// Pseudo-extended chains with N >= 2 watch their weights for degeneracy (the statistics go to the
// summary's estimates, a verdict to its warnings); nullopt for every other sampler.
std::optional<estimators::WeightDegeneracy> degeneracy_tracker(const targets::Target& space) {
  const auto* pe = dynamic_cast<const extended::PseudoExtendedTarget*>(&space);
  if (!pe || pe->n_pseudo() < 2) return std::nullopt;
  return estimators::WeightDegeneracy(pe->n_pseudo(), pe->options().beta_lower,
                                      pe->options().beta_upper);
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

}  // namespace

v1::ChainSummary run_chain(const v1::RunConfig& config, targets::TargetPtr target, ChainTask task,
                           const ChainCallbacks& cb, parallel::GroupCommPtr group,
                           const v1::ChainCheckpoint* resume) {
  const auto start = std::chrono::steady_clock::now();
  v1::ChainSummary summary;
  summary.set_chain_id(task.chain_id);
  summary.set_seed(task.seed);
  set_status(summary, ChainStatus::kOk);
  // Gradient evaluations of the sampler's own space (what kernels count, and checkpoints hold);
  // the summary's n_gradient_evals is in target gradients: per_evaluation times these.
  std::int64_t grad_evals = 0;
  std::int64_t per_evaluation = 1;
  const double earlier_seconds = resume ? resume->wall_seconds() : 0.0;
  auto elapsed = [&] {
    return earlier_seconds +
           std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  const double cpu_start = thread_cpu_seconds() - (resume ? resume->cpu_seconds() : 0.0);
  auto cpu_used = [&] { return thread_cpu_seconds() - cpu_start; };
  const int group_size = group ? group->size() : 1;

  try {
    auto setup = config::make_sampler(config.sampler(), target, group);
    auto& kernel = setup.kernel;
    const targets::Target& space = *setup.space;
    per_evaluation = space.target_gradients_per_evaluation();
    // Snapshots carry running target moments: only then do kernels accumulate them (every member
    // of a group alike, so checkpointed kernel states agree).
    if (config.output().estimates_every() > 0) kernel->track_moments();
    // Blocks: a transition moves only this member's pseudo-samples (and leaves the gradient's
    // other entries zero), so the full state is gathered — once per iteration at most — where it
    // is needed: before warmup adaptation (every member's adapter then sees the same draws, so
    // step size and metric stay identical), before a record, and for a checkpoint.
    const hmc::Partition* blocks = distributed_partition(space);
    bool state_gathered = true;
    kernels::ChainState state;
    state.x.resize(space.dim());
    bool found = resume != nullptr;
    if (resume) {
      if (resume->x_size() != space.dim() || resume->grad_size() != space.dim())
        throw DataError("checkpoint: chain " + std::to_string(task.chain_id) + " has a state of " +
                        std::to_string(resume->x_size()) + " numbers, the sampler's space has " +
                        std::to_string(space.dim()));
      state.x = Eigen::Map<const Vector>(resume->x().data(), resume->x_size());
      state.grad = Eigen::Map<const Vector>(resume->grad().data(), resume->grad_size());
      state.potential = resume->potential();
      grad_evals = resume->grad_evals();
      // The checkpoint holds the full gradient; a member keeps its own entries (as a transition
      // leaves them).
      if (blocks) blocks->zero_nonlocal(state.grad);
    }
    for (int attempt = 0; attempt < kMaxInitAttempts && !found; ++attempt) {
      rng::Stream stream(task.seed, rng::Domain::kInitialPoint, task.chain_id, attempt);
      space.initial_point(
          [&](VectorRef block) { config::draw_initial_point(config.init(), stream, block); }, state.x);
      kernels::refresh(space, state);
      ++grad_evals;
      found = std::isfinite(state.potential);
    }
    if (!found)
      throw NumericalError("no initial point with a finite potential in " +
                           std::to_string(kMaxInitAttempts) + " attempts (check `init`)");

    const std::int64_t n_warmup = config.warmup();
    const std::int64_t n_iter = config.iterations();
    const int thin = std::max(1, config.output().thin());
    v1::Record record;
    v1::Draw& draw = *record.mutable_draw();
    draw.set_run_id(config.name());
    draw.set_chain_id(task.chain_id);
    draw.set_seed(task.seed);

    // Running estimates (records.proto EstimatesSnapshot), only where records are written.
    const std::int64_t estimates_every = config.output().estimates_every();
    v1::Record snapshot;
    snapshot.mutable_estimates()->set_run_id(config.name());
    snapshot.mutable_estimates()->set_chain_id(task.chain_id);
    snapshot.mutable_estimates()->set_seed(task.seed);
    std::map<std::string, double> running;
    SnapshotMoments moments;

    std::int64_t n_divergent = 0, n_nonfinite = 0, n_written = 0, warmup_evals = 0;
    double sum_accept = 0.0;
    targets::WeightedView view;
    const auto n_outputs = static_cast<int>(target->output_names().size());
    auto degeneracy = degeneracy_tracker(space);
    // Fixed beta: no beta statistics (every beta_i is the same constant).
    const bool track_betas =
        degeneracy && static_cast<const extended::PseudoExtendedTarget&>(space).beta_sampled();
    std::int64_t t_begin = 0;
    if (resume) {
      t_begin = resume->next_iteration();
      if (t_begin < 0 || t_begin > n_warmup + n_iter)
        throw DataError("checkpoint: chain " + std::to_string(task.chain_id) + " at iteration " +
                        std::to_string(t_begin) + ", outside this run's " +
                        std::to_string(n_warmup + n_iter));
      n_divergent = resume->n_divergent();
      n_nonfinite = resume->n_nonfinite();
      n_written = resume->n_written();
      warmup_evals = resume->warmup_evals();
      sum_accept = resume->sum_accept();
      if (degeneracy && resume->weight_degeneracy_size() > 0)
        degeneracy->restore(std::span<const double>(resume->weight_degeneracy().data(),
                                                    resume->weight_degeneracy_size()));
      // The adapter exists from begin_warmup until the end_warmup at t == n_warmup.
      if (n_warmup > 0 && t_begin <= n_warmup) kernel->begin_warmup(n_warmup);
      if (resume->group_size() != group_size)
        throw DataError("checkpoint: chain " + std::to_string(task.chain_id) + " was saved on " +
                        std::to_string(resume->group_size()) + " rank(s), now " +
                        std::to_string(group_size));
      // Every member restores the leader's state: kernels whose members own parts of it (PT
      // replicas) gathered them all when saving and take their own part back here.
      kernel->restore_state(resume->kernel());
    } else if (n_warmup > 0) {
      // Keyed by iteration 0 of the adaptation domain: resumed chains restore the found step.
      rng::Stream adaptation_stream(task.seed, rng::Domain::kAdaptation, task.chain_id, 0);
      grad_evals += kernel->choose_initial_step_size(state, adaptation_stream);
      kernel->begin_warmup(n_warmup);
    }
    auto gather_state = [&] {
      if (state_gathered) return;
      blocks->gather(state.x);
      state_gathered = true;
    };
    for (std::int64_t t = t_begin; t < n_warmup + n_iter; ++t) {
      if (t > t_begin) {
        // Every member of a group checkpoints at the same boundary: the leader decides.
        double action = static_cast<double>(
            cb.checkpoint_due ? cb.checkpoint_due(t) : CheckpointAction::kNone);
        if (group && group->size() > 1) group->broadcast(std::span<double>(&action, 1), 0);
        if (action != 0.0) {
          v1::ChainCheckpoint ck;
          ck.set_chain_id(task.chain_id);
          ck.set_seed(task.seed);
          ck.set_run_id(config.name());
          ck.set_next_iteration(t);
          gather_state();
          ck.mutable_x()->Add(state.x.data(), state.x.data() + state.x.size());
          ck.set_potential(state.potential);
          if (blocks) {
            Vector grad = state.grad;  // the full gradient, from every member's own entries
            blocks->gather(grad);
            ck.mutable_grad()->Add(grad.data(), grad.data() + grad.size());
          } else {
            ck.mutable_grad()->Add(state.grad.data(), state.grad.data() + state.grad.size());
          }
          // A kernel without support leaves the state empty; the runner reports it.
          if (kernel->can_checkpoint()) kernel->save_state(*ck.mutable_kernel());
          ck.set_group_size(group_size);
          ck.set_n_divergent(n_divergent);
          ck.set_n_nonfinite(n_nonfinite);
          ck.set_n_written(n_written);
          ck.set_warmup_evals(warmup_evals);
          ck.set_grad_evals(grad_evals);
          ck.set_sum_accept(sum_accept);
          if (degeneracy) {
            const auto sums = degeneracy->save();
            ck.mutable_weight_degeneracy()->Assign(sums.begin(), sums.end());
          }
          ck.set_wall_seconds(elapsed());
          ck.set_cpu_seconds(cpu_used());
          if (cb.on_checkpoint) call_runner(cb.on_checkpoint, ck);
          if (action == static_cast<double>(CheckpointAction::kSaveAndStop)) {
            set_status(summary, ChainStatus::kCheckpointed);
            summary.set_n_gradient_evals(grad_evals * per_evaluation);
            summary.set_n_extended_gradient_evals(grad_evals);
            summary.set_wall_seconds(elapsed());
            summary.set_cpu_seconds(cpu_used());
            return summary;
          }
        }
      }
      const bool warmup = t < n_warmup;
      if (t == n_warmup && n_warmup > 0) {
        kernel->end_warmup();
        warmup_evals = grad_evals;
      }
      rng::Stream stream(task.seed, rng::Domain::kTransition, task.chain_id, t);
      const auto stats = kernel->transition(state, stream);
      state_gathered = blocks == nullptr;
      grad_evals += stats.n_gradient_evals;
      if (warmup) {
        gather_state();
        kernel->adapt(t, state, stats);
      } else {
        sum_accept += stats.accept_stat;
        n_divergent += stats.divergent;
        n_nonfinite += stats.nonfinite;
      }
      const std::int64_t i = warmup ? t : t - n_warmup;
      if ((warmup && config.output().write_warmup()) || (!warmup && i % thin == 0)) {
        draw.set_iteration(i);
        draw.set_warmup(warmup);
        gather_state();
        fill_draw(draw, state, stats);
        const bool has_view = fill_weighted_view(draw, space, state, view);
        if (n_outputs > 0 && cb.emit)
          fill_outputs(draw, *target, n_outputs, state, view, has_view, task, t);
        if (cb.emit) call_runner(cb.emit, record);
        if (!warmup) ++n_written;
        if (!warmup && degeneracy && has_view)
          degeneracy->add(std::span<const double>(view.log_weights.data(),
                                                  static_cast<std::size_t>(view.log_weights.size())),
                          track_betas ? std::span<const double>(view.extra)
                                      : std::span<const double>());
      }
      if (!warmup && estimates_every > 0 && (i + 1) % estimates_every == 0 && cb.emit) {
        auto& snap = *snapshot.mutable_estimates();
        snap.set_iteration(i + 1);
        snap.set_wall_seconds(elapsed());
        snap.set_n_gradient_evals(grad_evals * per_evaluation);
        snap.set_n_extended_gradient_evals(grad_evals);
        running.clear();
        kernel->report_estimates(running);
        snap.mutable_estimates()->clear();
        for (const auto& [key, value] : running) (*snap.mutable_estimates())[key] = value;
        fill_moments(snap, *kernel, moments);
        call_runner(cb.emit, snapshot);
      }
      if (cb.tick) call_runner(cb.tick);
    }
    if (n_warmup > 0 && n_iter == 0) {
      kernel->end_warmup();
      warmup_evals = grad_evals;
    }
    summary.set_n_draws(n_written);
    summary.set_mean_accept_stat(n_iter > 0 ? sum_accept / static_cast<double>(n_iter) : 0.0);
    summary.set_n_divergent(n_divergent);
    summary.set_n_rejected_nonfinite(n_nonfinite);
    summary.set_final_step_size(kernel->step_size());
    std::map<std::string, double> estimates;
    kernel->report_estimates(estimates);
    // A log Z carries log_z_untrusted and its reasons (estimators/log_z_trust.hpp); the run-level
    // check across chains is added with the footer (runner/log_z_checks.hpp).
    estimators::annotate_log_z_trust(estimates);
    for (const auto& [key, value] : estimates) (*summary.mutable_estimates())[key] = value;
    if (degeneracy) report_degeneracy(*degeneracy, summary);
    summary.set_n_gradient_evals_warmup(warmup_evals * per_evaluation);
    summary.set_n_extended_gradient_evals_warmup(warmup_evals);
  } catch (const CallbackFailure& f) {
    std::rethrow_exception(f.error);
  } catch (const Error& e) {
    summary.set_status(failed_status_text(e.what()));
  } catch (const std::exception& e) {
    // A user target (e.g. a plugin) may throw anything; it still ends only this chain.
    summary.set_status(failed_status_text(std::string("unexpected exception: ") + e.what()));
  }
  summary.set_n_gradient_evals(grad_evals * per_evaluation);
  summary.set_n_extended_gradient_evals(grad_evals);
  summary.set_wall_seconds(elapsed());
  summary.set_cpu_seconds(cpu_used());
  return summary;
}

}  // namespace pemc::runner
