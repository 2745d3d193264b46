#include "tempering/parallel_tempering.hpp"

#include "adapt/state_io.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "core/error.hpp"
#include "core/numerics.hpp"
#include "tempering/schedule.hpp"

namespace pemc::tempering {
namespace {

constexpr std::int64_t kMinTuneRoundsForResize = 16;
constexpr std::int64_t kMinRoundsForFinalRetune = 16;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

bool same_bits(const Vector& a, const Vector& b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), sizeof(double) * static_cast<std::size_t>(a.size())) == 0;
}

}  // namespace

ParallelTemperingKernel::ParallelTemperingKernel(targets::TargetPtr target, ReferencePtr reference,
                                                 LocalKernelFactory factory,
                                                 ParallelTemperingOptions options,
                                                 parallel::GroupCommPtr group)
    : target_(std::move(target)),
      reference_(std::move(reference)),
      factory_(std::move(factory)),
      options_(std::move(options)),
      group_(group ? std::move(group) : std::make_shared<parallel::SerialGroup>()),
      dim_(target_->dim()) {
  try {
    check_ladder(options_.betas, "parallel_tempering ladder");
  } catch (const std::invalid_argument& e) {
    throw ConfigError(e.what());
  }
  if (!reference_ && !(options_.betas.front() > 0.0))
    throw ConfigError("parallel_tempering: without a reference the lowest beta must be > 0");
  if (reference_ && reference_->density->dim() != dim_)
    throw ConfigError("parallel_tempering.reference: dimension " +
                      std::to_string(reference_->density->dim()) + " differs from the target's " +
                      std::to_string(dim_));
  if (options_.n_local_steps < 1) throw ConfigError("parallel_tempering.n_local_steps must be >= 1");
  if (options_.choose_replicas) {
    if (!(options_.replicas_per_barrier > 0.0))
      throw ConfigError("parallel_tempering.replicas_per_barrier must be > 0");
    if (options_.min_replicas < 2 || options_.max_replicas < options_.min_replicas)
      throw ConfigError("parallel_tempering: need 2 <= min_replicas <= max_replicas");
  }
  if (options_.n_batches < 2) throw ConfigError("parallel_tempering.n_batches must be >= 2");
  if (!factory_) throw ConfigError("parallel_tempering: no local kernel factory");
  if (!options_.fixed_betas.empty()) {
    if (!reference_)
      throw ConfigError("parallel_tempering: the fixed (power-path) leg needs a reference leg");
    try {
      check_ladder(options_.fixed_betas, "parallel_tempering fixed leg ladder");
    } catch (const std::invalid_argument& e) {
      throw ConfigError(e.what());
    }
    if (!(options_.fixed_betas.front() > 0.0))
      throw ConfigError("parallel_tempering: the fixed leg's lowest beta must be > 0 (power path)");
  }
  n_ref_ = static_cast<int>(options_.betas.size());
  betas_ = join_legs(options_.betas, options_.fixed_betas);
  build_levels();
  reset_sampling_stats();
}

std::vector<double> ParallelTemperingKernel::join_legs(const std::vector<double>& reference_leg,
                                                       const std::vector<double>& fixed_leg) {
  std::vector<double> line = reference_leg;
  // The power leg below the shared target level, descending.
  for (int i = static_cast<int>(fixed_leg.size()) - 2; i >= 0; --i) line.push_back(fixed_leg[i]);
  return line;
}

std::vector<double> ParallelTemperingKernel::reference_leg_betas() const {
  return std::vector<double>(betas_.begin(), betas_.begin() + n_ref_);
}

std::vector<double> ParallelTemperingKernel::fixed_leg_betas() const {
  if (n_ref_ == n_replicas()) return {};
  std::vector<double> leg(betas_.rbegin(), betas_.rend() - n_ref_);
  leg.push_back(1.0);
  return leg;
}

void ParallelTemperingKernel::build_levels() {
  const int k = n_replicas();
  targets_.clear();
  kernels_.clear();
  for (int l = 0; l < k; ++l) {
    targets_.push_back(
        std::make_shared<TemperedTarget>(target_, reference_, betas_[l], !on_fixed_leg(l)));
    kernels_.push_back(factory_(targets_.back()));
    if (!kernels_.back()) throw ConfigError("parallel_tempering: the local kernel factory failed");
  }
  level_of_.resize(k);
  replica_at_.resize(k);
  for (int r = 0; r < k; ++r) level_of_[r] = replica_at_[r] = r;
  owner_.assign(k, 0);
  for (int m = 0; m < group_->size(); ++m) {
    const auto b = group_->block_of(m, k);
    for (int r = b.begin; r < b.end; ++r) owner_[r] = m;
  }
  replicas_.resize(k);
  tune_reject_.assign(k - 1, 0.0);
  tune_rounds_ = 0;
}

void ParallelTemperingKernel::reset_sampling_stats() {
  const int k = n_replicas();
  sampling_rounds_ = 0;
  accept_sum_.assign(k - 1, 0.0);
  round_trips_.reset(k);
  stepping_stone_.emplace(2 * n_stepping_stone_pairs(), options_.n_batches);
}

void ParallelTemperingKernel::begin_warmup(std::int64_t n_warmup) {
  warmup_ = n_warmup > 0;
  n_warmup_ = n_warmup;
  warmup_round_ = 0;
  kernel_warmup_offset_ = 0;
  tune_length_ = 1;
  next_tune_ = 1;
  tune_rounds_ = 0;
  std::fill(tune_reject_.begin(), tune_reject_.end(), 0.0);
  if (!warmup_) return;
  for (auto& k : kernels_) k->begin_warmup(n_warmup * options_.n_local_steps);
}

void ParallelTemperingKernel::end_warmup() {
  if (!warmup_) return;
  if (options_.adapt_schedule && tune_rounds_ >= kMinRoundsForFinalRetune) retune(false);
  for (auto& k : kernels_) k->end_warmup();
  warmup_ = false;
  reset_sampling_stats();
}

void ParallelTemperingKernel::retune(bool allow_resize) {
  const int k = n_replicas();
  std::vector<double> rejection(k - 1);
  for (int i = 0; i + 1 < k; ++i)
    rejection[i] = tune_rounds_ > 0 ? tune_reject_[i] / static_cast<double>(tune_rounds_) : 0.0;
  // One leg: the whole line; stabilised PT: each leg from its own rejection rates (the power
  // leg's pairs reversed so that its betas ascend).
  const auto retune_leg = [&](const std::vector<double>& betas, const std::vector<double>& rej) {
    const double total = communication_barrier(rej).total;
    int n_new = static_cast<int>(betas.size());
    if (allow_resize && options_.choose_replicas)
      n_new = replicas_for_barrier(total, options_.replicas_per_barrier, options_.min_replicas,
                                   options_.max_replicas);
    return std::pair{equalise_barrier(betas, rej, n_new), total};
  };
  const std::vector<double> ref_rejection(rejection.begin(), rejection.begin() + (n_ref_ - 1));
  auto [new_ref, barrier] = retune_leg(reference_leg_betas(), ref_rejection);
  std::vector<double> new_fixed;
  if (n_ref_ < k) {
    const std::vector<double> fixed_rejection(rejection.rbegin(),
                                              rejection.rend() - (n_ref_ - 1));
    auto [leg, fixed_barrier] = retune_leg(fixed_leg_betas(), fixed_rejection);
    new_fixed = std::move(leg);
    barrier += fixed_barrier;
  }
  barrier_warmup_ = barrier;
  const auto new_betas = join_legs(new_ref, new_fixed);
  if (static_cast<int>(new_betas.size()) != k || static_cast<int>(new_ref.size()) != n_ref_) {
    resize(new_betas, static_cast<int>(new_ref.size()));
  } else {
    betas_ = new_betas;
    for (int l = 0; l < k; ++l) targets_[l]->set_beta(betas_[l]);
    // Cached potentials of this member's replicas stay valid: PathPoint is beta-free.
  }
  std::fill(tune_reject_.begin(), tune_reject_.end(), 0.0);
  tune_rounds_ = 0;
}

void ParallelTemperingKernel::resize(const std::vector<double>& new_betas, int new_n_ref) {
  // recv_ holds every replica's x from this round's warmup allgather (x does not change in swaps).
  const int k_old = n_replicas();
  const int n_new = static_cast<int>(new_betas.size());
  const ReplicaRowLayout layout = row_layout();
  const int per = layout.size();
  const std::vector<double> old_betas = betas_;
  const std::vector<int> old_replica_at = replica_at_;
  const int old_n_ref = n_ref_;
  // The old level nearest in beta on the same leg (the target level belongs to both).
  const auto same_leg = [old_n_ref](int old_level, bool fixed) {
    return fixed ? old_level >= old_n_ref - 1 : old_level < old_n_ref;
  };
  std::vector<Vector> seed_x(n_new);
  for (int j = 0; j < n_new; ++j) {
    const bool fixed = j >= new_n_ref;
    int best = fixed ? old_n_ref - 1 : 0;
    for (int l = 0; l < k_old; ++l)
      if (same_leg(l, fixed) &&
          std::fabs(old_betas[l] - new_betas[j]) < std::fabs(old_betas[best] - new_betas[j]))
        best = l;
    const int r = old_replica_at[best];
    seed_x[j] = Eigen::Map<const Vector>(
        recv_.data() + static_cast<std::size_t>(r) * per + layout.x(), dim_);
  }
  betas_ = new_betas;
  n_ref_ = new_n_ref;
  build_levels();
  // Called after warmup round warmup_round_ - 1 completed: rounds warmup_round_ .. n_warmup_ - 1
  // remain for the new kernels' adaptation.
  const std::int64_t remaining = std::max<std::int64_t>(1, n_warmup_ - warmup_round_);
  kernel_warmup_offset_ = warmup_round_;
  for (auto& kern : kernels_) kern->begin_warmup(remaining * options_.n_local_steps);
  const auto block = group_->my_block(n_new);
  for (int r = block.begin; r < block.end; ++r)
    evaluate_path_point(*target_, reference_.get(), seed_x[r], replicas_[r]);
  round_trips_.reset(n_new);
}

void ParallelTemperingKernel::start_replicas(const kernels::ChainState& state) {
  // Every replica starts at the driver's initial point, whose phi and gradient it already has.
  const auto block = group_->my_block(n_replicas());
  for (int r = block.begin; r < block.end; ++r) {
    PathPoint& p = replicas_[r];
    p.x = state.x;
    p.phi = state.potential;
    p.grad_phi = state.grad;
    p.grad_psi.resize(dim_);
    if (reference_) {
      p.psi = reference_->density->potential_and_gradient(p.x, p.grad_psi);
    } else {
      p.psi = 0.0;
      p.grad_psi.setZero();
    }
  }
  initialised_ = true;
}

void ParallelTemperingKernel::explore_locally(std::uint64_t sub_seed) {
  const auto t_local = std::chrono::steady_clock::now();
  const ReplicaRowLayout layout = row_layout();
  const auto block = group_->my_block(n_replicas());
  send_.assign(static_cast<std::size_t>(block.end - block.begin) * layout.size(), 0.0);
  for (int r = block.begin; r < block.end; ++r) {
    double* row = send_.data() + static_cast<std::size_t>(r - block.begin) * layout.size();
    if (exact_level(level_of_[r]))
      draw_from_reference(r, sub_seed, row);
    else
      run_local_steps(r, sub_seed, row);
  }
  local_seconds_ += seconds_since(t_local);
}

void ParallelTemperingKernel::draw_from_reference(int r, std::uint64_t sub_seed, double* row) {
  const ReplicaRowLayout layout = row_layout();
  const int n_local = options_.n_local_steps;
  PathPoint& p = replicas_[r];
  rng::Stream rs(sub_seed, rng::Domain::kTransition, static_cast<std::uint64_t>(r), 0);
  work_.x.resize(dim_);
  reference_->density->sample(rs, work_.x);
  evaluate_path_point(*target_, reference_.get(), work_.x, p);
  ReplicaRoundReport report;
  report.v = p.v();
  report.phi = p.phi;
  report.gradient_evals = 1;
  report.sum_accept = n_local;  // an exact draw is always "accepted"
  report.write(row);
  if (layout.warmup) {
    std::fill(row + layout.accept_stat(0), row + layout.accept_stat(n_local), 1.0);
    std::copy(p.x.data(), p.x.data() + dim_, row + layout.x());
  }
}

void ParallelTemperingKernel::run_local_steps(int r, std::uint64_t sub_seed, double* row) {
  const ReplicaRowLayout layout = row_layout();
  const int l = level_of_[r];
  PathPoint& p = replicas_[r];
  ReplicaRoundReport report;
  p.to_chain_state(betas_[l], work_, !on_fixed_leg(l));
  for (int s = 0; s < options_.n_local_steps; ++s) {
    rng::Stream rs(sub_seed, rng::Domain::kTransition, static_cast<std::uint64_t>(r),
                   static_cast<std::uint64_t>(s));
    const auto st = kernels_[l]->transition(work_, rs);
    report.gradient_evals += static_cast<double>(st.n_gradient_evals);
    report.sum_accept += st.accept_stat;
    report.leapfrogs += st.n_leapfrog;
    report.divergent += st.divergent;
    report.nonfinite += st.nonfinite;
    if (layout.warmup) row[layout.accept_stat(s)] = st.accept_stat;
  }
  if (!same_bits(work_.x, p.x)) report.gradient_evals += targets_[l]->path_point(work_.x, p);
  report.v = p.v();
  report.phi = p.phi;
  report.write(row);
  if (layout.warmup) std::copy(p.x.data(), p.x.data() + dim_, row + layout.x());
}

double ParallelTemperingKernel::exchange_reports() {
  const int k = n_replicas();
  const int per = row_layout().size();
  const auto t_comm = std::chrono::steady_clock::now();
  recv_.resize(static_cast<std::size_t>(k) * per);
  group_->allgather_blocks(send_, k, per, recv_);
  comm_seconds_ += seconds_since(t_comm);
  v_.resize(k);
  phi_.resize(k);
  double total_evals = 0;
  for (int r = 0; r < k; ++r) {
    const auto report = ReplicaRoundReport::read(received_row(r));
    v_[r] = report.v;
    phi_[r] = report.phi;
    total_evals += report.gradient_evals;
  }
  return total_evals;
}

const double* ParallelTemperingKernel::received_row(int replica) const {
  return recv_.data() + static_cast<std::size_t>(replica) * row_layout().size();
}

void ParallelTemperingKernel::replay_adaptation() {
  const ReplicaRowLayout layout = row_layout();
  const int n_local = options_.n_local_steps;
  kernels::ChainState adapt_state;
  kernels::TransitionStats adapt_stats;
  for (int l = 0; l < n_replicas(); ++l) {
    if (exact_level(l)) continue;  // its kernel is never used
    const double* row = received_row(replica_at_[l]);
    adapt_state.x = Eigen::Map<const Vector>(row + layout.x(), dim_);
    for (int s = 0; s < n_local; ++s) {
      adapt_stats.accept_stat = row[layout.accept_stat(s)];
      kernels_[l]->adapt((warmup_round_ - kernel_warmup_offset_) * n_local + s, adapt_state,
                         adapt_stats);
    }
  }
}

void ParallelTemperingKernel::add_stepping_stone_terms() {
  const int pairs = n_stepping_stone_pairs();
  ss_terms_.resize(2 * static_cast<std::size_t>(pairs));
  for (int i = 0; i < pairs; ++i) {
    const double db = betas_[i + 1] - betas_[i];
    ss_terms_[i] = -db * v_[replica_at_[i]];
    ss_terms_[pairs + i] = db * v_[replica_at_[i + 1]];
  }
  stepping_stone_->add(ss_terms_.data());
}

void ParallelTemperingKernel::swap_levels(std::uint64_t sub_seed) {
  const int k = n_replicas();
  rng::Stream swap_stream(sub_seed, rng::Domain::kSwap, 0, 0);
  last_swaps_ = swap_round(betas_, v_, phi_, n_ref_ - 1, replica_at_, level_of_, options_.scheme,
                           round_, swap_stream);
  round_trips_.observe(level_of_, k);
  if (warmup_) {
    for (int i = 0; i + 1 < k; ++i) tune_reject_[i] += 1.0 - last_swaps_.accept_prob[i];
    ++tune_rounds_;
  } else {
    for (int i = 0; i + 1 < k; ++i) accept_sum_[i] += last_swaps_.accept_prob[i];
    ++sampling_rounds_;
  }
}

std::int64_t ParallelTemperingKernel::finish_warmup_round() {
  ++warmup_round_;
  if (!options_.adapt_schedule || warmup_round_ != next_tune_) return 0;
  const bool allow_resize = tune_rounds_ >= kMinTuneRoundsForResize &&
                            2 * warmup_round_ <= n_warmup_ && warmup_round_ < n_warmup_;
  const int k_before = n_replicas();
  retune(allow_resize);
  tune_length_ *= 2;
  next_tune_ += tune_length_;
  // A resize evaluated the target at every new replica's seed point.
  return n_replicas() != k_before ? n_replicas() : 0;
}

void ParallelTemperingKernel::take_cold_state(kernels::ChainState& state) {
  const int cold = replica_at_[cold_level()];
  if (group_->size() == 1) {
    const PathPoint& p = replicas_[cold];
    state.x = p.x;
    state.potential = p.phi;
    state.grad = p.grad_phi;
    return;
  }
  const auto t_b = std::chrono::steady_clock::now();
  cold_.assign(2 * static_cast<std::size_t>(dim_) + 1, 0.0);
  if (owner_of(cold) == group_->rank()) {
    const PathPoint& p = replicas_[cold];
    std::copy(p.x.data(), p.x.data() + dim_, cold_.begin());
    cold_[dim_] = p.phi;
    std::copy(p.grad_phi.data(), p.grad_phi.data() + dim_, cold_.begin() + dim_ + 1);
  }
  group_->broadcast(cold_, owner_of(cold));
  comm_seconds_ += seconds_since(t_b);
  state.x = Eigen::Map<const Vector>(cold_.data(), dim_);
  state.potential = cold_[dim_];
  state.grad = Eigen::Map<const Vector>(cold_.data() + dim_ + 1, dim_);
}

kernels::TransitionStats ParallelTemperingKernel::transition(kernels::ChainState& state,
                                                             rng::Stream& stream) {
  const std::uint64_t sub_seed = stream.bits();
  if (!initialised_) start_replicas(state);
  const Vector previous_x = state.x;
  const bool warm = warmup_;

  // 1. Local exploration of this member's replicas; 2. one allgather: every member now has every
  // replica's row, in replica order.
  explore_locally(sub_seed);
  const double total_evals = exchange_reports();
  const auto top = ReplicaRoundReport::read(received_row(replica_at_[cold_level()]));  // at beta = 1
  // 3. Warmup: identical adaptation of every level's kernel on every member. Sampling: stepping
  // stone terms from the states explored at each level this round (before swaps).
  if (warm)
    replay_adaptation();
  else
    add_stepping_stone_terms();
  // 4. Swaps: the same decisions on every member.
  swap_levels(sub_seed);

  kernels::TransitionStats stats;
  stats.accept_stat = top.sum_accept / options_.n_local_steps;
  stats.n_leapfrog = static_cast<int>(top.leapfrogs);
  stats.divergent = top.divergent > 0;
  stats.nonfinite = top.nonfinite > 0;
  stats.step_size = kernels_[cold_level()]->step_size();

  // 5. Schedule adaptation between tuning rounds of doubling length; its evaluations are
  // group-wide, outside the per-replica counts.
  const std::int64_t extra_evals = warm ? finish_warmup_round() : 0;
  ++round_;
  // 6. The beta = 1 replica's state, from its owner.
  take_cold_state(state);
  stats.accepted = !same_bits(state.x, previous_x);
  stats.n_gradient_evals = static_cast<std::int64_t>(total_evals) + extra_evals;
  return stats;
}

double ParallelTemperingKernel::step_size() const { return kernels_[cold_level()]->step_size(); }

std::vector<double> ParallelTemperingKernel::swap_accept() const {
  std::vector<double> a(accept_sum_.size(), std::numeric_limits<double>::quiet_NaN());
  if (sampling_rounds_ == 0) return a;
  for (std::size_t i = 0; i < a.size(); ++i)
    a[i] = accept_sum_[i] / static_cast<double>(sampling_rounds_);
  return a;
}

double ParallelTemperingKernel::barrier() const {
  if (sampling_rounds_ == 0) return std::numeric_limits<double>::quiet_NaN();
  double lambda = 0.0;
  for (double a : swap_accept()) lambda += 1.0 - a;
  return lambda;
}

ParallelTemperingKernel::LogZ ParallelTemperingKernel::log_z() const {
  LogZ z;
  const int pairs = n_stepping_stone_pairs();
  const auto forward = [pairs](const std::vector<double>& s, std::int64_t n) {
    double acc = 0.0;
    for (int i = 0; i < pairs; ++i) acc += s[i] - std::log(static_cast<double>(n));
    return acc;
  };
  const auto reverse = [pairs](const std::vector<double>& s, std::int64_t n) {
    double acc = 0.0;
    for (int i = 0; i < pairs; ++i) acc -= s[pairs + i] - std::log(static_cast<double>(n));
    return acc;
  };
  const auto n = stepping_stone_->count();
  if (n == 0) {
    z.forward = z.reverse = std::numeric_limits<double>::quiet_NaN();
    return z;
  }
  z.forward = forward(stepping_stone_->total(), n);
  z.reverse = reverse(stepping_stone_->total(), n);
  z.forward_se = stepping_stone_->batch_se(forward);
  z.reverse_se = stepping_stone_->batch_se(reverse);
  z.mean_se = stepping_stone_->batch_se(
      [&](const std::vector<double>& s, std::int64_t m) { return 0.5 * (forward(s, m) + reverse(s, m)); });
  return z;
}

void ParallelTemperingKernel::report_estimates(std::map<std::string, double>& e) const {
  const int k = n_replicas();
  e["n_replicas"] = k;
  e["rounds"] = static_cast<double>(sampling_rounds_);
  e["round_trips"] = static_cast<double>(round_trips_.round_trips());
  e["round_trip_rate"] =
      sampling_rounds_ > 0
          ? static_cast<double>(round_trips_.round_trips()) / static_cast<double>(sampling_rounds_)
          : std::numeric_limits<double>::quiet_NaN();
  e["barrier"] = barrier();
  e["barrier_warmup"] = barrier_warmup_;
  const auto acc = swap_accept();
  for (int i = 0; i + 1 < k; ++i) e["swap_accept_" + std::to_string(i)] = acc[i];
  for (int i = 0; i < k; ++i) e["beta_" + std::to_string(i)] = betas_[i];
  // Stabilised PT: levels n_reference_levels .. n_replicas - 1 are the power leg's.
  if (n_ref_ < k) e["n_reference_levels"] = n_ref_;
  const auto z = log_z();
  const bool normalised = reference_ && betas_.front() == 0.0;
  const std::string p = normalised ? "log_z" : "log_z_ratio";
  e[p + "_forward"] = z.forward;
  e[p + "_reverse"] = z.reverse;
  e[p + "_forward_se"] = z.forward_se;
  e[p + "_reverse_se"] = z.reverse_se;
  if (n_ref_ < k) {
    // Stabilised PT: the reference leg is a few levels from a broad reference (a mixture with a
    // defensive component) to the target. The reverse direction weights the target's draws by
    // the reference's density, heavy-tailed where the reference has mass the target lacks, and
    // comes out high (by 0.06-0.1 on the multimodal cases, many SEs); the forward one is the
    // estimate. Their disagreement is still checked (log_z_trust.hpp, directions_disagree).
    e[p] = z.forward;
    e[p + "_se"] = z.forward_se;
  } else {
    e[p] = 0.5 * (z.forward + z.reverse);
    e[p + "_se"] = z.mean_se;
  }
  e["log_z_batches"] = stepping_stone_->n_full_batches();
  e["round_trips_min_replica"] = static_cast<double>(round_trips_.min_replica_round_trips());
  e["comm_wall_seconds"] = comm_seconds_;
  e["local_wall_seconds"] = local_seconds_;
}

// ---- checkpoint (added methods) -------------------------------------------------------------

bool ParallelTemperingKernel::can_checkpoint() const {
  for (const auto& k : kernels_)
    if (!k->can_checkpoint()) return false;
  return true;
}

void ParallelTemperingKernel::save_state(pemc::v1::KernelState& state) const {
  state.Clear();
  state.set_kind(name());
  const int k = n_replicas();
  adapt::put_reals(state, "betas", betas_);
  adapt::put_int(state, "n_reference_levels", n_ref_);
  adapt::put_ints(state, "level_of", level_of_);
  adapt::put_ints(state, "replica_at", replica_at_);
  adapt::put_int(state, "initialised", initialised_ ? 1 : 0);
  adapt::put_int(state, "round", round_);
  adapt::put_int(state, "warmup", warmup_ ? 1 : 0);
  adapt::put_int(state, "n_warmup", n_warmup_);
  adapt::put_int(state, "warmup_round", warmup_round_);
  adapt::put_int(state, "kernel_warmup_offset", kernel_warmup_offset_);
  adapt::put_int(state, "tune_length", tune_length_);
  adapt::put_int(state, "next_tune", next_tune_);
  adapt::put_int(state, "tune_rounds", tune_rounds_);
  adapt::put_reals(state, "tune_reject", tune_reject_);
  adapt::put_real(state, "barrier_warmup", barrier_warmup_);
  adapt::put_int(state, "sampling_rounds", sampling_rounds_);
  adapt::put_reals(state, "accept_sum", accept_sum_);
  adapt::put_real(state, "comm_seconds", comm_seconds_);
  adapt::put_real(state, "local_seconds", local_seconds_);
  round_trips_.save_state(adapt::put_child(state, "round_trips"));
  if (stepping_stone_) stepping_stone_->save_state(adapt::put_child(state, "stepping_stone"));
  // Level kernels adapt identically on every member: the leader's are every member's.
  for (int l = 0; l < k; ++l) kernels_[l]->save_state(adapt::put_child(state, "level_" + std::to_string(l)));
  // Replicas: each member holds its block; one allgather gives every member all of them.
  if (initialised_) {
    const int per = 3 * dim_ + 2;
    const auto block = group_->my_block(k);
    std::vector<double> mine(static_cast<std::size_t>(block.end - block.begin) * per);
    for (int r = block.begin; r < block.end; ++r) {
      const PathPoint& p = replicas_[r];
      double* row = mine.data() + static_cast<std::size_t>(r - block.begin) * per;
      std::copy(p.x.data(), p.x.data() + dim_, row);
      std::copy(p.grad_phi.data(), p.grad_phi.data() + dim_, row + dim_);
      std::copy(p.grad_psi.data(), p.grad_psi.data() + dim_, row + 2 * dim_);
      row[3 * dim_] = p.phi;
      row[3 * dim_ + 1] = p.psi;
    }
    std::vector<double> all(static_cast<std::size_t>(k) * per);
    group_->allgather_blocks(mine, k, per, all);
    adapt::put_reals(state, "replicas", all);
  }
}

void ParallelTemperingKernel::restore_state(const pemc::v1::KernelState& state) {
  adapt::expect_kind(state, name());
  const auto betas = adapt::get_real_vector(state, "betas");
  if (betas.size() < 2) adapt::state_error(state, "betas", "fewer than 2 levels");
  // A ladder that adaptation resized needs levels (targets, kernels) of the saved size.
  betas_ = betas;
  n_ref_ = state.ints().count("n_reference_levels")
               ? static_cast<int>(adapt::get_int(state, "n_reference_levels"))
               : static_cast<int>(betas_.size());
  if (n_ref_ < 2 || n_ref_ > static_cast<int>(betas_.size()) ||
      (n_ref_ < static_cast<int>(betas_.size()) && !reference_))
    adapt::state_error(state, "n_reference_levels", "does not fit the ladder or the reference");
  build_levels();
  const int k = n_replicas();
  level_of_ = adapt::get_int_vector<int>(state, "level_of");
  replica_at_ = adapt::get_int_vector<int>(state, "replica_at");
  if (static_cast<int>(level_of_.size()) != k || static_cast<int>(replica_at_.size()) != k)
    adapt::state_error(state, "level_of", "does not match the ladder's " + std::to_string(k) + " levels");
  initialised_ = adapt::get_int(state, "initialised") != 0;
  round_ = adapt::get_int(state, "round");
  warmup_ = adapt::get_int(state, "warmup") != 0;
  n_warmup_ = adapt::get_int(state, "n_warmup");
  warmup_round_ = adapt::get_int(state, "warmup_round");
  kernel_warmup_offset_ = adapt::get_int(state, "kernel_warmup_offset");
  tune_length_ = adapt::get_int(state, "tune_length");
  next_tune_ = adapt::get_int(state, "next_tune");
  tune_rounds_ = adapt::get_int(state, "tune_rounds");
  tune_reject_ = adapt::get_real_vector(state, "tune_reject");
  barrier_warmup_ = adapt::get_real(state, "barrier_warmup");
  sampling_rounds_ = adapt::get_int(state, "sampling_rounds");
  accept_sum_ = adapt::get_real_vector(state, "accept_sum");
  comm_seconds_ = adapt::get_real(state, "comm_seconds");
  local_seconds_ = adapt::get_real(state, "local_seconds");
  if (static_cast<int>(tune_reject_.size()) != k - 1 || static_cast<int>(accept_sum_.size()) != k - 1)
    adapt::state_error(state, "accept_sum", "does not match the ladder");
  round_trips_.restore_state(adapt::get_child(state, "round_trips"));
  stepping_stone_.emplace(2 * n_stepping_stone_pairs(), options_.n_batches);
  if (adapt::has_child(state, "stepping_stone"))
    stepping_stone_->restore_state(adapt::get_child(state, "stepping_stone"));
  // The level kernels were (re)built: in warmup they adapt over what begin_warmup or the last
  // resize gave them (see resize()).
  const std::int64_t kernel_warmup =
      std::max<std::int64_t>(1, n_warmup_ - kernel_warmup_offset_) * options_.n_local_steps;
  for (int l = 0; l < k; ++l) {
    if (warmup_) kernels_[l]->begin_warmup(kernel_warmup);
    kernels_[l]->restore_state(adapt::get_child(state, "level_" + std::to_string(l)));
  }
  if (initialised_) {
    const int per = 3 * dim_ + 2;
    const auto& all = adapt::get_reals(state, "replicas");
    if (all.size() != static_cast<int>(static_cast<std::size_t>(k) * per))
      adapt::state_error(state, "replicas", "wrong length for " + std::to_string(k) +
                                                " replicas of dimension " + std::to_string(dim_));
    const auto block = group_->my_block(k);
    for (int r = block.begin; r < block.end; ++r) {
      const double* row = all.data() + static_cast<std::size_t>(r) * per;
      PathPoint& p = replicas_[r];
      p.x = Eigen::Map<const Vector>(row, dim_);
      p.grad_phi = Eigen::Map<const Vector>(row + dim_, dim_);
      p.grad_psi = Eigen::Map<const Vector>(row + 2 * dim_, dim_);
      p.phi = row[3 * dim_];
      p.psi = row[3 * dim_ + 1];
    }
  }
}

}  // namespace pemc::tempering
