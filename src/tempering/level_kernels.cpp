#include "tempering/level_kernels.hpp"

#include <algorithm>
#include <cstring>

#include "core/error.hpp"

namespace pemc::tempering {

LevelKernels::LevelKernels(targets::TargetPtr target, ReferencePtr reference,
                           const LocalKernelFactory& factory, int n_levels, int n_bins)
    : n_levels_(n_levels) {
  if (n_levels < 1 || n_bins < 1) throw ConfigError("LevelKernels: need >= 1 level and >= 1 bin");
  n_bins = std::min(n_bins, n_levels);
  for (int b = 0; b < n_bins; ++b) {
    targets_.push_back(std::make_shared<TemperedTarget>(target, reference, 1.0));
    kernels_.push_back(factory(targets_.back()));
    if (!kernels_.back()) throw ConfigError("LevelKernels: the local kernel factory failed");
  }
  counters_.assign(n_bins, 0);
}

int LevelKernels::bin_of(int level) const {
  const auto b = static_cast<std::int64_t>(level) * n_bins() / n_levels_;
  return static_cast<int>(std::clamp<std::int64_t>(b, 0, n_bins() - 1));
}

LevelKernels::Summary LevelKernels::run(int level, double beta, PathPoint& p, int n_steps,
                                        rng::Stream& stream) {
  const int b = bin_of(level);
  TemperedTarget& t = *targets_[b];
  kernels::Kernel& k = *kernels_[b];
  t.set_beta(beta);
  p.to_chain_state(beta, work_);
  Summary s;
  for (int i = 0; i < n_steps; ++i) {
    const auto st = k.transition(work_, stream);
    s.sum_accept += st.accept_stat;
    s.n_leapfrog += st.n_leapfrog;
    s.divergent |= st.divergent;
    s.nonfinite |= st.nonfinite;
    s.n_gradient_evals += st.n_gradient_evals;
    if (warmup_) k.adapt(counters_[b]++, work_, st);
  }
  const auto d = static_cast<std::size_t>(p.x.size());
  s.moved = std::memcmp(work_.x.data(), p.x.data(), sizeof(double) * d) != 0;
  if (s.moved) s.n_gradient_evals += t.path_point(work_.x, p);
  return s;
}

void LevelKernels::begin_warmup(std::int64_t n_transitions_per_bin) {
  warmup_ = n_transitions_per_bin > 0;
  std::fill(counters_.begin(), counters_.end(), 0);
  if (!warmup_) return;
  for (auto& k : kernels_) k->begin_warmup(n_transitions_per_bin);
}

void LevelKernels::end_warmup() {
  if (!warmup_) return;
  for (auto& k : kernels_) k->end_warmup();
  warmup_ = false;
}

// ---- checkpoint (added methods) ----

bool LevelKernels::can_checkpoint() const {
  for (const auto& k : kernels_)
    if (!k->can_checkpoint()) return false;
  return true;
}

void LevelKernels::save_state(pemc::v1::KernelState& s) const {
  s.set_kind("level_kernels");
  adapt::put_int(s, "warmup", warmup_ ? 1 : 0);
  adapt::put_ints(s, "counters", counters_);
  for (std::size_t b = 0; b < kernels_.size(); ++b)
    kernels_[b]->save_state(adapt::put_child(s, "bin_" + std::to_string(b)));
}

void LevelKernels::restore_state(const pemc::v1::KernelState& s) {
  adapt::expect_kind(s, "level_kernels");
  const auto counters = adapt::get_int_vector<std::int64_t>(s, "counters");
  if (counters.size() != counters_.size())
    adapt::state_error(s, "counters", "saved with " + std::to_string(counters.size()) + " bins, this has " +
                                          std::to_string(counters_.size()));
  warmup_ = adapt::get_int(s, "warmup") != 0;
  counters_ = counters;
  for (std::size_t b = 0; b < kernels_.size(); ++b)
    kernels_[b]->restore_state(adapt::get_child(s, "bin_" + std::to_string(b)));
}

}  // namespace pemc::tempering
