#include "warmup/pooled_messages.hpp"

#include "adapt/state_io.hpp"

namespace pemc::warmup {
namespace {

using adapt::get_child;
using adapt::get_int;
using adapt::get_matrix;
using adapt::get_real;
using adapt::get_real_vector;
using adapt::get_vector;
using adapt::has_child;
using adapt::put_child;
using adapt::put_int;
using adapt::put_matrix;
using adapt::put_real;
using adapt::put_reals;
using adapt::put_vector;
using v1::KernelState;

void put_totals(KernelState& s, const ChainTotals& t) {
  put_int(s, "gradient_evals", t.gradient_evals);
  put_int(s, "extended_gradient_evals", t.extended_gradient_evals);
  put_real(s, "wall_seconds", t.wall_seconds);
  put_real(s, "cpu_seconds", t.cpu_seconds);
}

ChainTotals get_totals(const KernelState& s) {
  return {get_int(s, "gradient_evals"), get_int(s, "extended_gradient_evals"),
          get_real(s, "wall_seconds"), get_real(s, "cpu_seconds")};
}

KernelState parse(const std::string& bytes, const char* kind) {
  KernelState s;
  if (!s.ParseFromString(bytes) || s.kind() != kind)
    throw DataError(std::string("pooled warmup: malformed ") + kind + " message");
  return s;
}

}  // namespace

void ChainTotals::add(const ChainTotals& o) {
  gradient_evals += o.gradient_evals;
  extended_gradient_evals += o.extended_gradient_evals;
  wall_seconds += o.wall_seconds;
  cpu_seconds += o.cpu_seconds;
}

std::string ChainRoundReport::encode() const {
  KernelState s;
  s.set_kind("pooled_warmup_report");
  put_int(s, "chain_id", chain_id);
  put_int(s, "round", round);
  put_int(s, "ok", ok ? 1 : 0);
  put_vector(s, "last_state", last_state);
  put_real(s, "final_step_size", final_step_size);
  put_totals(put_child(s, "cost"), cost);
  if (window) {
    auto& w = put_child(s, "window");
    put_int(w, "n", window->sums.count());
    put_int(w, "dense", window->sums.dense() ? 1 : 0);
    put_vector(w, "mean", window->sums.mean());
    put_matrix(w, "m2", window->sums.m2());
    put_reals(w, "log_density", window->log_density);
  }
  return s.SerializeAsString();
}

ChainRoundReport ChainRoundReport::decode(const std::string& bytes) {
  const KernelState s = parse(bytes, "pooled_warmup_report");
  ChainRoundReport r;
  r.chain_id = static_cast<int>(get_int(s, "chain_id"));
  r.round = static_cast<int>(get_int(s, "round"));
  r.ok = get_int(s, "ok") != 0;
  get_vector(s, "last_state", r.last_state);
  r.final_step_size = get_real(s, "final_step_size");
  r.cost = get_totals(get_child(s, "cost"));
  if (has_child(s, "window")) {
    const auto& w = get_child(s, "window");
    Vector mean;
    Matrix m2;
    get_vector(w, "mean", mean);
    get_matrix(w, "m2", m2);
    r.window = ChainWindow{
        WindowSums::from_parts(get_int(w, "n"), std::move(mean), std::move(m2),
                               get_int(w, "dense") != 0),
        get_real_vector(w, "log_density")};
  }
  return r;
}

std::string RoundBroadcast::encode() const {
  KernelState s;
  s.set_kind("pooled_warmup_broadcast");
  put_int(s, "round", round);
  put_int(s, "phase", static_cast<std::int64_t>(plan.phase));
  put_int(s, "window", plan.window);
  put_int(s, "iterations", plan.iterations);
  put_int(s, "warmup_before", plan.warmup_before);
  put_reals(s, "inverse_metric", inverse_metric);
  put_real(s, "step_size", step_size);
  put_int(s, "converged", converged ? 1 : 0);
  put_real(s, "rhat", rhat);
  put_real(s, "bulk_ess", bulk_ess);
  auto& cs = put_child(s, "chains");
  for (const auto& [id, c] : chains) {
    auto& one = put_child(cs, std::to_string(id));
    put_vector(one, "state", c.state);
    put_totals(one, c.totals);
    put_real(one, "step_size", c.step_size);
  }
  return s.SerializeAsString();
}

RoundBroadcast RoundBroadcast::decode(const std::string& bytes) {
  const KernelState s = parse(bytes, "pooled_warmup_broadcast");
  RoundBroadcast b;
  b.round = static_cast<int>(get_int(s, "round"));
  const auto phase = get_int(s, "phase");
  if (phase < 0 || phase > static_cast<std::int64_t>(Phase::kSample))
    throw DataError("pooled warmup: broadcast of unknown phase " + std::to_string(phase));
  b.plan = {static_cast<Phase>(phase), static_cast<int>(get_int(s, "window")),
            get_int(s, "iterations"), get_int(s, "warmup_before")};
  b.inverse_metric = get_real_vector(s, "inverse_metric");
  b.step_size = get_real(s, "step_size");
  b.converged = get_int(s, "converged") != 0;
  b.rhat = get_real(s, "rhat");
  b.bulk_ess = get_real(s, "bulk_ess");
  for (const auto& [key, one] : get_child(s, "chains").children()) {
    Chain c;
    get_vector(one, "state", c.state);
    c.totals = get_totals(one);
    c.step_size = get_real(one, "step_size");
    b.chains.emplace(std::stoi(key), std::move(c));
  }
  return b;
}

}  // namespace pemc::warmup
