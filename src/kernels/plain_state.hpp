#pragma once
// Checkpoint state shared by the plain kernels (HMC, NUTS, RWM, MALA): step size (or proposal
// scale), metric and, during warmup, the adapter.
#include <optional>
#include <string>

#include "adapt/state_io.hpp"
#include "adapt/warmup_adapter.hpp"
#include "hmc/metric.hpp"

namespace pemc::kernels {

inline void save_plain_state(pemc::v1::KernelState& s, const std::string& kind, double step,
                             const hmc::Metric& metric,
                             const std::optional<adapt::WarmupAdapter>& adapter) {
  s.Clear();
  s.set_kind(kind);
  adapt::put_real(s, "step_size", step);
  adapt::put_metric(s, "metric", metric);
  if (adapter) adapter->save_state(adapt::put_child(s, "adapter"));
}

// Restores step and metric; the adapter must exist (begin_warmup) exactly when one was saved.
inline void restore_plain_state(const pemc::v1::KernelState& s, const std::string& kind,
                                double& step, hmc::Metric& metric,
                                std::optional<adapt::WarmupAdapter>& adapter) {
  adapt::expect_kind(s, kind);
  const bool saved_adapter = adapt::has_child(s, "adapter");
  if (saved_adapter && !adapter)
    adapt::state_error(s, "adapter", "saved during warmup, but the kernel is not in warmup");
  step = adapt::get_real(s, "step_size");
  metric = adapt::get_metric(s, "metric", metric.dim());
  if (saved_adapter) adapter->restore_state(adapt::get_child(s, "adapter"));
  else adapter.reset();
}

}  // namespace pemc::kernels
