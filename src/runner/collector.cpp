#include "runner/collector.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <set>

#include "core/error.hpp"
#include "runner/chain_status.hpp"
#include "runner/checkpoint.hpp"
#include "runner/log_z_checks.hpp"
#include "runner/run_warnings.hpp"

namespace pemc::runner {
namespace {

std::int64_t unix_ms_now() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

Collector::Collector(const std::filesystem::path& path, bool overwrite)
    : path_(path), writer_(path, records::RecordWriter::Options{overwrite}) {}

Collector::Collector(const std::filesystem::path& path, const v1::Checkpoint& resume_from,
                     const std::filesystem::path& checkpoint_file, const RecordDropFilter& drop)
    : path_(path),
      writer_(reopen_record_file(path, resume_from.record_bytes(), resume_from.n_records(),
                                 resume_from.records_crc32(), drop)),
      resumed_completed_(resume_from.completed().begin(), resume_from.completed().end()),
      sequence_(resume_from.sequence()),
      earlier_wall_seconds_(resume_from.wall_seconds()),
      disk_sequence_(resume_from.sequence()),
      disk_records_(writer_.records_written()),
      disk_bytes_(static_cast<std::int64_t>(writer_.bytes_written())),
      disk_checkpoint_(checkpoint_file) {
  for (const auto& c : resumed_completed_) chains_[c.chain_id()] = c;
}

void Collector::write_header(const v1::Header& header) {
  v1::Record r;
  *r.mutable_header() = header;
  writer_.write(r);
  writer_.flush();
}

void Collector::on_records(int source, std::string_view frames) {
  const std::int64_t n = records::count_frames(frames);
  if (epoch_ >= 0 && parts_.count(source)) {
    held_.emplace_back(std::string(frames), n);  // after this leader's checkpoint boundary
    return;
  }
  try {
    writer_.write_frames(frames, n);
    writer_.flush();
  } catch (const IoError& e) {
    if (write_error_.empty()) write_error_ = e.what();
    throw;
  }
}

std::optional<std::uint64_t> Collector::on_record_range(int source, const RecordRange& range) {
  if (epoch_ >= 0 && parts_.count(source)) {
    held_ranges_.emplace_back(source, range);  // after this leader's checkpoint boundary
    return std::nullopt;
  }
  try {
    return writer_.reserve(range.bytes, range.records, range.crc32);
  } catch (const IoError& e) {
    if (write_error_.empty()) write_error_ = e.what();
    throw;
  }
}

void Collector::on_record_fill(std::uint64_t offset, std::string_view frames) {
  const std::int64_t n = records::count_frames(frames);
  try {
    writer_.fill(offset, frames, n);
  } catch (const IoError& e) {
    if (write_error_.empty()) write_error_ = e.what();
    throw;
  }
}

void Collector::salvage() noexcept {
  try {
    for (auto& [frames, n] : held_) writer_.write_frames(frames, n);
    held_.clear();
    writer_.flush();
  } catch (const std::exception& e) {
    if (write_error_.empty()) write_error_ = e.what();
  }
}

std::string Collector::describe_on_disk(bool final) const {
  std::string s = path_.string() + " holds " + std::to_string(writer_.records_flushed()) +
                  " records (" + std::to_string(writer_.bytes_flushed()) + " bytes)";
  if (!write_error_.empty()) s += ", then a failed write (the file may end in a partial record)";
  if (disk_sequence_ > 0) {
    s += "; checkpoint " + std::to_string(disk_sequence_) + " (" + disk_checkpoint_.string() +
         ") covers the first " + std::to_string(disk_records_) + " records (" +
         std::to_string(disk_bytes_) + " bytes)";
    if (final)
      s += ": continue from it with: " + (checkpoint_ && !checkpoint_->resume_command.empty()
                                              ? checkpoint_->resume_command
                                              : std::string("the same command and --resume"));
  } else {
    s += final ? "; no checkpoint: a new run must start over (--overwrite)" : ", no checkpoint yet";
  }
  return s;
}

std::optional<std::int64_t> Collector::on_worker_done(int source, const v1::Footer& part) {
  for (const auto& c : part.chains()) chains_[c.chain_id()] = c;
  ++workers_done_;
  // A leader that finished without answering an epoch is accounted for by this report (a part it
  // sent earlier in the open epoch takes precedence).
  done_lists_[source].assign(part.chains().begin(), part.chains().end());
  if (epoch_ >= 0) return try_complete_epoch();
  return std::nullopt;
}

std::optional<std::int64_t> Collector::on_checkpoint_part(int source, const v1::CheckpointPart& part) {
  if (!checkpoint_) throw IoError("collector: checkpoint part from rank " + std::to_string(source) +
                                  " but checkpointing is not set up");
  if (epoch_ < 0) epoch_ = part.epoch();
  if (part.epoch() != epoch_)
    throw IoError("collector: checkpoint part of epoch " + std::to_string(part.epoch()) +
                  " from rank " + std::to_string(source) + " while epoch " +
                  std::to_string(epoch_) + " is open");
  parts_[source] = part;
  return try_complete_epoch();
}

std::optional<std::int64_t> Collector::on_rounds_part(const v1::CheckpointPart& part) {
  if (!checkpoint_ || !checkpoint_->rounds_part)
    throw IoError("collector: a pooling state but no run with rounds is checkpointed");
  if (epoch_ < 0) epoch_ = part.epoch();
  if (part.epoch() != epoch_)
    throw IoError("collector: the pooling state of epoch " + std::to_string(part.epoch()) +
                  " while epoch " + std::to_string(epoch_) + " is open");
  rounds_part_ = part;
  return try_complete_epoch();
}

std::optional<std::int64_t> Collector::try_complete_epoch() {
  for (int leader : checkpoint_->leaders)
    if (!parts_.count(leader) && !done_lists_.count(leader)) return std::nullopt;
  if (checkpoint_->rounds_part && !rounds_part_) return std::nullopt;
  const auto t0 = std::chrono::steady_clock::now();
  const std::int64_t epoch = epoch_;
  checkpoint_error_.clear();
  v1::Checkpoint c = checkpoint_->base;
  std::set<int> seen;
  auto add_completed = [&](const v1::ChainSummary& s) {
    if (seen.insert(s.chain_id()).second) *c.add_completed() = s;
  };
  for (const auto& s : resumed_completed_) add_completed(s);
  for (int leader : checkpoint_->leaders) {
    const auto it = parts_.find(leader);
    if (it == parts_.end()) {
      for (const auto& s : done_lists_[leader]) add_completed(s);
      continue;
    }
    const auto& p = it->second;
    if (!p.error().empty() && checkpoint_error_.empty())
      checkpoint_error_ = "rank " + std::to_string(leader) + ": " + p.error();
    for (const auto& s : p.completed()) add_completed(s);
    for (const auto& k : p.in_progress()) *c.add_in_progress() = k;
  }
  if (rounds_part_) *c.mutable_rounds() = rounds_part_->rounds();
  if (checkpoint_error_.empty()) {
    try {
      writer_.flush();
      fsync_file(path_);
      c.set_record_bytes(static_cast<std::int64_t>(writer_.bytes_written()));
      c.set_n_records(writer_.records_written());
      c.set_records_crc32(writer_.crc32());
      c.set_sequence(++sequence_);
      c.set_unix_ms(unix_ms_now());
      c.set_wall_seconds(earlier_wall_seconds_ +
                         std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                                       checkpoint_->started)
                             .count());
      write_checkpoint(checkpoint_->path, c);
      last_ = c;
      disk_sequence_ = c.sequence();
      disk_records_ = c.n_records();
      disk_bytes_ = c.record_bytes();
      disk_checkpoint_ = checkpoint_->path;
    } catch (const Error& e) {
      checkpoint_error_ = e.what();
    }
  }
  checkpoint_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (checkpoint_error_.empty())
    spdlog::debug("checkpoint {} written: {} ({} finished, {} running chains, {} records, {:.3f} s)",
                  sequence_, checkpoint_->path.string(), c.completed_size(), c.in_progress_size(),
                  c.n_records(), checkpoint_seconds_);
  // Records held back belong after the checkpoint's position.
  epoch_ = -1;
  parts_.clear();
  rounds_part_.reset();
  for (auto& [frames, n] : held_) writer_.write_frames(frames, n);
  held_.clear();
  for (const auto& [source, range] : held_ranges_)
    granted_.emplace_back(source, writer_.reserve(range.bytes, range.records, range.crc32));
  held_ranges_.clear();
  try {
    writer_.flush();
  } catch (const IoError& e) {
    if (write_error_.empty()) write_error_ = e.what();
    throw;
  }
  return epoch;
}

v1::Footer Collector::finish(double wall_seconds) {
  v1::Footer footer;
  int failed = 0;
  double cpu_seconds = 0.0;
  for (auto& [id, c] : chains_) {
    if (status_of(c) != ChainStatus::kOk) ++failed;
    cpu_seconds += c.cpu_seconds();
    *footer.add_chains() = c;
  }
  // Whether each run's chains agree on log Z within their SEs: known only once all are here.
  annotate_mode_checks(footer, mode_shares_);  // first: the log Z rules read its verdict
  annotate_log_z_runs(footer);
  // Last: the chains' warnings are complete (the mode check adds some).
  if (!runs_.empty()) {
    const DrawVerdicts draws = check_written_draws();
    annotate_run_warnings(footer, runs_, study_, &draws);
  }
  footer.set_cpu_seconds(cpu_seconds);
  footer.set_wall_seconds(earlier_wall_seconds_ + wall_seconds);
  footer.set_end_time_unix_ms(unix_ms_now());
  footer.set_n_records(writer_.records_written());
  footer.set_status(footer_status_text(failed));
  v1::Record r;
  *r.mutable_footer() = footer;
  writer_.write(r);
  writer_.close();
  return footer;
}

DrawVerdicts Collector::check_written_draws() {
  // Per run with chains, in the plan's order: its chains that finished ok and their draw counts.
  std::vector<report::RunOkChains> runs;
  for (const auto& run : runs_) {
    report::RunOkChains r;
    r.run_id = run.name();
    bool any = false;
    for (const auto& [id, c] : chains_) {
      if (c.run_id() != run.name()) continue;
      any = true;
      if (status_of(c) == ChainStatus::kOk) r.n_draws[c.chain_id()] = c.n_draws();
    }
    if (any) runs.push_back(std::move(r));
  }
  writer_.flush();  // every draw on disk before it is read back
  const auto t0 = std::chrono::steady_clock::now();
  DrawVerdicts out{report::check_draws(path_, runs, report::draw_check_limits_from_environment()),
                   path_};
  spdlog::debug("R-hat and bulk ESS of {} runs from the draws read back in {:.3f} s", runs.size(),
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  return out;
}

void Collector::close_without_footer() { writer_.close(); }

}  // namespace pemc::runner
