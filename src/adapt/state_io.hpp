#pragma once
// Helpers to save and restore a sampler's members in a generic KernelState (checkpoint.proto):
// named double and int64 arrays and texts, checked on the way back in (a missing entry or a wrong
// length is a DataError naming the kernel and the entry, never a silent default). Lives in adapt,
// the lowest module with state to save (kernels, extended and tempering build on it).
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/types.hpp"
#include "hmc/metric.hpp"
#include "pemc/v1/checkpoint.pb.h"

namespace pemc::adapt {

using pemc::v1::KernelState;

inline void put_reals(KernelState& s, const std::string& key, const double* data, std::size_t n) {
  auto* v = (*s.mutable_reals())[key].mutable_values();
  v->Resize(static_cast<int>(n), 0.0);
  std::copy(data, data + n, v->mutable_data());
}
inline void put_real(KernelState& s, const std::string& key, double x) { put_reals(s, key, &x, 1); }
inline void put_vector(KernelState& s, const std::string& key, const Vector& x) {
  put_reals(s, key, x.data(), static_cast<std::size_t>(x.size()));
}
inline void put_matrix(KernelState& s, const std::string& key, const Matrix& m) {
  put_reals(s, key, m.data(), static_cast<std::size_t>(m.size()));
  (*s.mutable_ints())[key + ".shape"].mutable_values()->Add(m.rows());
  (*s.mutable_ints())[key + ".shape"].mutable_values()->Add(m.cols());
}
inline void put_reals(KernelState& s, const std::string& key, const std::vector<double>& x) {
  put_reals(s, key, x.data(), x.size());
}
template <class Int>
inline void put_ints(KernelState& s, const std::string& key, const std::vector<Int>& x) {
  auto* v = (*s.mutable_ints())[key].mutable_values();
  v->Clear();
  for (auto i : x) v->Add(static_cast<std::int64_t>(i));
}
inline void put_int(KernelState& s, const std::string& key, std::int64_t x) {
  (*s.mutable_ints())[key].mutable_values()->Add(x);
}

[[noreturn]] inline void state_error(const KernelState& s, const std::string& key,
                                     const std::string& what) {
  throw DataError("checkpoint: kernel state '" + s.kind() + "', entry '" + key + "': " + what);
}

inline const google::protobuf::RepeatedField<double>& get_reals(const KernelState& s,
                                                                const std::string& key) {
  const auto it = s.reals().find(key);
  if (it == s.reals().end()) state_error(s, key, "missing");
  return it->second.values();
}
inline double get_real(const KernelState& s, const std::string& key) {
  const auto& v = get_reals(s, key);
  if (v.size() != 1) state_error(s, key, "expected 1 number, got " + std::to_string(v.size()));
  return v[0];
}
inline std::vector<double> get_real_vector(const KernelState& s, const std::string& key) {
  const auto& v = get_reals(s, key);
  return {v.begin(), v.end()};
}
// Into `x`; with expected_size >= 0 the length must match.
inline void get_vector(const KernelState& s, const std::string& key, Vector& x,
                       Eigen::Index expected_size = -1) {
  const auto& v = get_reals(s, key);
  if (expected_size >= 0 && v.size() != expected_size)
    state_error(s, key, "expected " + std::to_string(expected_size) + " numbers, got " +
                            std::to_string(v.size()));
  x.resize(v.size());
  std::copy(v.begin(), v.end(), x.data());
}
inline const google::protobuf::RepeatedField<std::int64_t>& get_ints(const KernelState& s,
                                                                     const std::string& key) {
  const auto it = s.ints().find(key);
  if (it == s.ints().end()) state_error(s, key, "missing");
  return it->second.values();
}
inline std::int64_t get_int(const KernelState& s, const std::string& key) {
  const auto& v = get_ints(s, key);
  if (v.size() != 1) state_error(s, key, "expected 1 integer, got " + std::to_string(v.size()));
  return v[0];
}
template <class Int>
inline std::vector<Int> get_int_vector(const KernelState& s, const std::string& key) {
  const auto& v = get_ints(s, key);
  std::vector<Int> out;
  out.reserve(static_cast<std::size_t>(v.size()));
  for (auto i : v) out.push_back(static_cast<Int>(i));
  return out;
}
inline void get_matrix(const KernelState& s, const std::string& key, Matrix& m) {
  const auto& shape = get_ints(s, key + ".shape");
  const auto& v = get_reals(s, key);
  if (shape.size() != 2 || shape[0] < 0 || shape[1] < 0 || shape[0] * shape[1] != v.size())
    state_error(s, key, "malformed matrix");
  m.resize(shape[0], shape[1]);
  std::copy(v.begin(), v.end(), m.data());
}
inline void put_text(KernelState& s, const std::string& key, const std::string& text) {
  (*s.mutable_texts())[key] = text;
}
inline const std::string& get_text(const KernelState& s, const std::string& key) {
  const auto it = s.texts().find(key);
  if (it == s.texts().end()) state_error(s, key, "missing text");
  return it->second;
}
inline bool has_child(const KernelState& s, const std::string& key) {
  return s.children().count(key) > 0;
}
inline KernelState& put_child(KernelState& s, const std::string& key) {
  return (*s.mutable_children())[key];
}
inline const KernelState& get_child(const KernelState& s, const std::string& key) {
  const auto it = s.children().find(key);
  if (it == s.children().end()) state_error(s, key, "missing child state");
  return it->second;
}
// The kind written by save must be the kind restoring (a checkpoint of another sampler).
inline void expect_kind(const KernelState& s, const std::string& kind) {
  if (s.kind() != kind)
    throw DataError("checkpoint: kernel state of kind '" + s.kind() + "' cannot restore a '" +
                    kind + "' kernel");
}

// A metric is saved by its inverse mass matrix; restoring rebuilds it with the same factory (and so
// the same Cholesky factor) as the adaptation that produced it.
inline void put_metric(KernelState& s, const std::string& key, const hmc::Metric& m) {
  auto& c = put_child(s, key);
  c.set_kind("metric");
  put_int(c, "kind", static_cast<std::int64_t>(m.kind()));
  put_int(c, "dim", m.dim());
  if (m.kind() == hmc::MetricKind::kDiagonal) put_vector(c, "inverse_diagonal", m.inverse_diagonal());
  if (m.kind() == hmc::MetricKind::kDense) put_matrix(c, "inverse_dense", m.inverse_dense());
}
inline hmc::Metric get_metric(const KernelState& s, const std::string& key, int expected_dim) {
  const auto& c = get_child(s, key);
  const auto kind = get_int(c, "kind");
  const auto dim = get_int(c, "dim");
  if (dim != expected_dim)
    state_error(c, "dim", "metric of dimension " + std::to_string(dim) + ", the kernel has " +
                              std::to_string(expected_dim));
  switch (kind) {
    case static_cast<std::int64_t>(hmc::MetricKind::kUnit):
      return hmc::Metric::unit(expected_dim);
    case static_cast<std::int64_t>(hmc::MetricKind::kDiagonal): {
      Vector d;
      get_vector(c, "inverse_diagonal", d, expected_dim);
      return hmc::Metric::diagonal(d);
    }
    case static_cast<std::int64_t>(hmc::MetricKind::kDense): {
      Matrix m;
      get_matrix(c, "inverse_dense", m);
      if (m.rows() != expected_dim || m.cols() != expected_dim) state_error(c, "inverse_dense", "wrong shape");
      return hmc::Metric::dense(m);
    }
    default:
      state_error(c, "kind", "unknown metric kind " + std::to_string(kind));
  }
}

}  // namespace pemc::adapt
