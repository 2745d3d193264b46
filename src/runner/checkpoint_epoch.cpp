#include "runner/checkpoint_epoch.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cstring>

#include "core/error.hpp"

namespace pemc::runner {

std::string EpochBegin::encode() const {
  std::string bytes(2 * sizeof(std::int64_t), '\0');
  const std::int64_t v[2] = {epoch, stop ? 1 : 0};
  std::memcpy(bytes.data(), v, sizeof v);
  return bytes;
}

EpochBegin EpochBegin::decode(const std::string& bytes) {
  std::int64_t v[2];
  if (bytes.size() != sizeof v)
    throw IoError("malformed checkpoint epoch message (" + std::to_string(bytes.size()) +
                  " bytes)");
  std::memcpy(v, bytes.data(), sizeof v);
  return {v[0], v[1] != 0};
}

CheckpointEpochs::CheckpointEpochs(double every_seconds, std::int64_t every_iterations,
                                   Clock::time_point start, std::int64_t last_written_sequence,
                                   std::int64_t last_written_bytes)
    : every_seconds_(every_seconds),
      every_iterations_(every_iterations),
      last_checkpoint_(start),
      last_written_seq_(last_written_sequence),
      last_written_bytes_(last_written_bytes) {}

std::optional<bool> CheckpointEpochs::due(Clock::time_point now, std::int64_t done_iterations,
                                          std::size_t n_leaders, bool idle) const {
  if (epoch_active_ || stopping_ || idle) return std::nullopt;
  if (stop_requested_) return true;
  bool periodic = every_seconds_ > 0 &&
                  std::chrono::duration<double>(now - last_checkpoint_).count() >= every_seconds_;
  if (every_iterations_ > 0)
    periodic = periodic || done_iterations - done_at_checkpoint_ >=
                               every_iterations_ * static_cast<std::int64_t>(n_leaders);
  if (periodic) return false;
  return std::nullopt;
}

EpochBegin CheckpointEpochs::open(bool stop) {
  epoch_active_ = true;
  stopping_ = stopping_ || stop;
  ++epoch_;
  spdlog::debug("checkpoint epoch {} ({})", epoch_, stop ? "stop" : "periodic");
  return {epoch_, stop};
}

void CheckpointEpochs::on_written(const v1::CheckpointPart& w, Clock::time_point now,
                                  std::int64_t done_iterations) {
  epoch_active_ = false;
  last_checkpoint_ = now;
  done_at_checkpoint_ = done_iterations;
  if (w.error().empty()) {
    last_written_seq_ = w.epoch();
    last_written_bytes_ = w.record_bytes();
    spdlog::info("checkpoint {} written ({} records, up to byte {})", w.epoch(), w.n_records(),
                 w.record_bytes());
  } else {
    spdlog::error("checkpoint not written: {}{}", w.error(),
                  last_written_seq_ > 0
                      ? fmt::format(" (checkpoint {} stays on disk)", last_written_seq_)
                      : std::string(" (no checkpoint on disk)"));
  }
}

}  // namespace pemc::runner
