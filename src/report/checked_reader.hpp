#pragma once
// The reader every pemc-report command uses: RecordReader's frames and checksums, plus the
// structure pemc-dist writes, so that a hostile or inconsistent file cannot pass for a good one.
// The first record is the one header, checked against the bounds of header_bounds.hpp before
// anything is sized from it; every draw and snapshot belongs to a run the header lists, has that
// run's state dimension and a chain id inside the header's task range (a snapshot may be pooled
// over the run's chains: chain id -1); at most one footer, last,
// whose record count is the number of records before it. A record that breaks this ends the read
// like damage does (problem(), "inconsistent file: ..."), so every command reports what it read
// before it; a header outside the bounds is refused whole (UntrustedInputError).
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "pemc/v1/records.pb.h"
#include "records/record_reader.hpp"

namespace pemc::report {

class CheckedRecordReader {
 public:
  explicit CheckedRecordReader(const std::filesystem::path& path);

  // As RecordReader::next; false at the end, at damage or at the first inconsistent record.
  bool next(pemc::v1::Record& record);

  const std::optional<records::ReadProblem>& problem() const { return problem_; }
  // Good records read (an inconsistent record is not counted).
  std::int64_t records_read() const { return records_read_; }
  // Byte offset after the last good record (of the bad one, when reading stopped at one).
  std::uint64_t offset() const { return offset_; }
  const std::filesystem::path& path() const { return reader_.path(); }
  bool has_footer() const { return has_footer_; }

 private:
  // Why `record` cannot follow the records before it; empty when it can.
  std::string inconsistency(const pemc::v1::Record& record);
  // A draw's or snapshot's run, chain (nullopt: pooled over the run's chains) and state size
  // (-1: none) against the header.
  std::string check_draw(const std::string& run_id, std::optional<int> chain_id,
                         int state_size) const;

  records::RecordReader reader_;
  std::optional<records::ReadProblem> problem_;
  std::int64_t records_read_ = 0;
  std::uint64_t offset_ = 0;
  bool has_header_ = false;
  bool has_footer_ = false;
  int task_begin_ = 0, task_end_ = 0, header_dim_ = 0;
  std::map<std::string, int> run_dims_;  // the header's runs and their state dimensions
};

}  // namespace pemc::report
