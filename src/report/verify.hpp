#pragma once
// pemc-report verify (and the damage warnings of the other commands): a record file read to its end
// through CheckedRecordReader, so that besides every frame's checksum its structure is checked:
// one header first, within the bounds of header_bounds.hpp; draws and snapshots of the runs it
// lists, with their dimensions and chain ids; one footer, last, whose record count is the number
// of records before it.
#include <cstdint>
#include <filesystem>
#include <optional>

#include "records/record_reader.hpp"

namespace pemc::report {

struct FileCheck {
  std::int64_t n_records = 0;  // good records: before the problem, and after a skipped gap
  std::uint64_t n_bytes = 0;                    // magic + good frames
  std::optional<records::ReadProblem> problem;  // damage or the first inconsistent record
  bool has_header = false;
  bool has_footer = false;                      // the file ends with its footer
};

// IoError when the file cannot be opened or is not a record file; UntrustedInputError for a
// special file or a header beyond the bounds.
FileCheck verify_file(const std::filesystem::path& path);

}  // namespace pemc::report
