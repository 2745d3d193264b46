#include "runner/collector.hpp"

#include <chrono>

namespace pemc::runner {

Collector::Collector(const std::filesystem::path& path, bool overwrite)
    : writer_(path, records::RecordWriter::Options{overwrite}) {}

void Collector::write_header(const v1::Header& header) {
  v1::Record r;
  *r.mutable_header() = header;
  writer_.write(r);
  writer_.flush();
}

void Collector::on_records(std::string_view frames) {
  writer_.write_frames(frames, records::count_frames(frames));
  writer_.flush();
}

void Collector::on_worker_done(const v1::Footer& part) {
  for (const auto& c : part.chains()) chains_[c.chain_id()] = c;
  ++workers_done_;
}

v1::Footer Collector::finish(double wall_seconds) {
  v1::Footer footer;
  int failed = 0;
  for (auto& [id, c] : chains_) {
    if (c.status() != "ok") ++failed;
    *footer.add_chains() = c;
  }
  footer.set_wall_seconds(wall_seconds);
  footer.set_end_time_unix_ms(std::chrono::duration_cast<std::chrono::milliseconds>(
                                  std::chrono::system_clock::now().time_since_epoch())
                                  .count());
  footer.set_n_records(writer_.records_written());
  footer.set_status(failed == 0 ? "ok" : std::to_string(failed) + " chain(s) failed");
  v1::Record r;
  *r.mutable_footer() = footer;
  writer_.write(r);
  writer_.close();
  return footer;
}

}  // namespace pemc::runner
