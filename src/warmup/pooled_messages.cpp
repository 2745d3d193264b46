#include "warmup/pooled_messages.hpp"

#include "adapt/state_io.hpp"
#include "records/model_message_list.hpp"

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
using adapt::get_text;
using adapt::put_reals;
using adapt::put_text;
using adapt::put_vector;
using v1::KernelState;

// Model messages as children "0", "1", ... in their order (absent: none).
void put_model_messages(KernelState& s, const std::vector<v1::ModelMessage>& messages) {
  if (messages.empty()) return;
  auto& list = put_child(s, "model_messages");
  for (std::size_t i = 0; i < messages.size(); ++i) {
    auto& one = put_child(list, std::to_string(i));
    put_int(one, "kind", messages[i].kind());
    put_int(one, "count", messages[i].count());
    put_text(one, "text", messages[i].text());
  }
}

std::vector<v1::ModelMessage> get_model_messages(const KernelState& s) {
  std::vector<v1::ModelMessage> out;
  if (!has_child(s, "model_messages")) return out;
  const auto& list = get_child(s, "model_messages");
  for (std::size_t i = 0; i < list.children().size(); ++i) {
    const auto& one = get_child(list, std::to_string(i));
    const auto kind = get_int(one, "kind");
    if (!v1::ModelMessage::Kind_IsValid(static_cast<int>(kind)) || kind == 0)
      throw DataError("pooled warmup: model message of unknown kind " + std::to_string(kind));
    auto& m = out.emplace_back();
    m.set_kind(static_cast<v1::ModelMessage::Kind>(kind));
    m.set_count(get_int(one, "count"));
    m.set_text(get_text(one, "text"));
  }
  return out;
}

void put_totals(KernelState& s, const ChainTotals& t) {
  put_int(s, "gradient_evals", t.gradient_evals);
  put_int(s, "extended_gradient_evals", t.extended_gradient_evals);
  put_real(s, "wall_seconds", t.wall_seconds);
  put_real(s, "cpu_seconds", t.cpu_seconds);
  put_model_messages(s, t.model_messages);
  put_int(s, "restarts", t.restarts);
}

ChainTotals get_totals(const KernelState& s) {
  ChainTotals t{get_int(s, "gradient_evals"), get_int(s, "extended_gradient_evals"),
                get_real(s, "wall_seconds"), get_real(s, "cpu_seconds"), get_model_messages(s)};
  // Absent from the checkpoints of versions without restarts.
  if (s.ints().count("restarts")) t.restarts = static_cast<int>(get_int(s, "restarts"));
  return t;
}

void put_sums(KernelState& w, const WindowSums& sums) {
  put_int(w, "n", sums.count());
  put_int(w, "dense", sums.dense() ? 1 : 0);
  put_vector(w, "mean", sums.mean());
  put_matrix(w, "m2", sums.m2());
}

WindowSums get_sums(const KernelState& w) {
  Vector mean;
  Matrix m2;
  get_vector(w, "mean", mean);
  get_matrix(w, "m2", m2);
  return WindowSums::from_parts(get_int(w, "n"), std::move(mean), std::move(m2),
                                get_int(w, "dense") != 0);
}

void put_window(KernelState& w, const ChainWindow& window) {
  put_sums(w, window.sums);
  put_reals(w, "log_density", window.log_density);
}

ChainWindow get_window(const KernelState& w) {
  return ChainWindow{get_sums(w), get_real_vector(w, "log_density")};
}

// Map keys of the state's children: window numbers and chain ids.
int key_number(const std::string& key, const char* what) {
  std::size_t used = 0;
  int n = 0;
  try {
    n = std::stoi(key, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != key.size())
    throw DataError(std::string("pooled warmup: malformed ") + what + " '" + key + "'");
  return n;
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
  records::merge_model_messages(model_messages, o.model_messages);
  restarts += o.restarts;
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
  if (window) put_window(put_child(s, "window"), *window);
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
  if (has_child(s, "window")) r.window = get_window(get_child(s, "window"));
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
  if (!fits.empty()) {
    auto& fs = put_child(s, "fits");
    for (const auto& [id, f] : fits) {
      auto& one = put_child(fs, std::to_string(id));
      put_sums(one, f.sums);
      put_real(one, "mean_log_density", f.mean_log_density);
    }
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
    b.chains.emplace(key_number(key, "chain id"), std::move(c));
  }
  if (has_child(s, "fits"))
    for (const auto& [key, one] : get_child(s, "fits").children())
      b.fits.emplace(key_number(key, "chain id"),
                     ChainFit{get_sums(one), get_real(one, "mean_log_density")});
  return b;
}

std::string CoordinatorState::encode() const {
  KernelState s;
  s.set_kind("pooled_warmup_coordinator");
  if (!broadcast.empty()) {
    KernelState b;
    if (!b.ParseFromString(broadcast)) throw DataError("pooled warmup: malformed broadcast");
    put_child(s, "broadcast") = std::move(b);
  }
  auto& ts = put_child(s, "totals");
  for (const auto& [id, t] : totals) put_totals(put_child(ts, std::to_string(id)), t);
  auto& ws = put_child(s, "windows");
  for (const auto& [window, chains] : windows) {
    auto& one = put_child(ws, std::to_string(window));
    for (const auto& [id, w] : chains) put_window(put_child(one, std::to_string(id)), w);
  }
  if (decision) {
    auto& d = put_child(s, "decision");
    put_int(d, "converged", decision->converged ? 1 : 0);
    put_int(d, "first_window", decision->first_window);
    put_int(d, "last_window", decision->last_window);
    put_real(d, "rhat", decision->rhat);
    put_real(d, "bulk_ess", decision->bulk_ess);
    put_int(d, "n_draws", decision->n_draws);
    put_reals(d, "inverse_metric", decision->inverse_metric);
  }
  return s.SerializeAsString();
}

CoordinatorState CoordinatorState::decode(const std::string& bytes) {
  const KernelState s = parse(bytes, "pooled_warmup_coordinator");
  CoordinatorState c;
  if (has_child(s, "broadcast")) c.broadcast = get_child(s, "broadcast").SerializeAsString();
  for (const auto& [id, t] : get_child(s, "totals").children())
    c.totals.emplace(key_number(id, "chain id"), get_totals(t));
  for (const auto& [window, chains] : get_child(s, "windows").children()) {
    auto& one = c.windows[key_number(window, "window number")];
    for (const auto& [id, w] : chains.children())
      one.emplace(key_number(id, "chain id"), get_window(w));
  }
  if (has_child(s, "decision")) {
    const auto& d = get_child(s, "decision");
    WindowDecision w;
    w.converged = get_int(d, "converged") != 0;
    w.first_window = static_cast<int>(get_int(d, "first_window"));
    w.last_window = static_cast<int>(get_int(d, "last_window"));
    w.rhat = get_real(d, "rhat");
    w.bulk_ess = get_real(d, "bulk_ess");
    w.n_draws = get_int(d, "n_draws");
    w.inverse_metric = get_real_vector(d, "inverse_metric");
    c.decision = std::move(w);
  }
  return c;
}

}  // namespace pemc::warmup
