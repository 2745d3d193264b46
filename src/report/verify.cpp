#include "report/verify.hpp"

#include "report/checked_reader.hpp"

namespace pemc::report {

FileCheck verify_file(const std::filesystem::path& path) {
  CheckedRecordReader reader(path);
  FileCheck out;
  v1::Record record;
  while (reader.next(record)) {
    if (record.has_header()) out.has_header = true;
  }
  out.has_footer = reader.has_footer() && !reader.problem();
  out.n_records = reader.records_read();
  out.n_bytes = reader.offset();
  out.problem = reader.problem();
  return out;
}

}  // namespace pemc::report
