#pragma once
// The collector role: the only writer of the output file. Receives framed record batches from
// workers (in arrival order), flushes after every batch so a crash loses at most the batches in
// flight, and writes the footer once every worker has reported done.
#include <filesystem>
#include <map>
#include <string_view>

#include "pemc/v1/records.pb.h"
#include "records/record_file.hpp"

namespace pemc::runner {

class Collector {
 public:
  Collector(const std::filesystem::path& path, bool overwrite);

  void write_header(const pemc::v1::Header& header);
  void on_records(std::string_view frames);
  // A worker's final report: its chains' summaries.
  void on_worker_done(const pemc::v1::Footer& part);
  int workers_done() const { return workers_done_; }
  // Footer with chain summaries ordered by chain id; closes the file. Returns the footer written.
  pemc::v1::Footer finish(double wall_seconds);
  const std::filesystem::path& path() const { return writer_.path(); }

 private:
  records::RecordWriter writer_;
  std::map<int, pemc::v1::ChainSummary> chains_;
  int workers_done_ = 0;
};

}  // namespace pemc::runner
