#include "report/checked_reader.hpp"

#include "report/header_bounds.hpp"

namespace pemc::report {

CheckedRecordReader::CheckedRecordReader(const std::filesystem::path& path)
    : reader_(path), offset_(reader_.offset()) {}

bool CheckedRecordReader::next(v1::Record& record) {
  if (problem_) return false;
  const std::uint64_t at = reader_.offset();
  if (!reader_.next(record)) {
    problem_ = reader_.problem();
    records_read_ = reader_.records_read();
    offset_ = reader_.offset();
    return false;
  }
  const std::string why = inconsistency(record);
  if (!why.empty()) {
    problem_ = records::ReadProblem{at, records_read_, "inconsistent file: " + why};
    offset_ = at;
    return false;
  }
  records_read_ = reader_.records_read();
  offset_ = reader_.offset();
  return true;
}

std::string CheckedRecordReader::check_draw(const std::string& run_id,
                                            std::optional<int> chain_id, int state_size) const {
  const auto run = run_dims_.find(run_id);
  if (!run_dims_.empty() && run == run_dims_.end())
    return "a record of run '" + run_id + "', which the header does not list";
  if (chain_id && task_end_ > 0 && (*chain_id < task_begin_ || *chain_id >= task_end_))
    return "chain id " + std::to_string(*chain_id) + " outside the header's tasks " +
           std::to_string(task_begin_) + ".." + std::to_string(task_end_ - 1);
  // A header without its runs listed (a file of an early pemc-dist) gives one dimension for all.
  const int dim = run != run_dims_.end() ? run->second : header_dim_;
  if (state_size >= 0 && dim > 0 && state_size != dim)
    return "a draw of run '" + run_id + "' with a state of " + std::to_string(state_size) +
           " coordinates, the header says " + std::to_string(dim);
  return "";
}

std::string CheckedRecordReader::inconsistency(const v1::Record& record) {
  if (has_footer_) return "a record after the footer";
  if (!has_header_ && !record.has_header())
    return "the first record is not the header (the file does not start a run)";
  switch (record.kind_case()) {
    case v1::Record::kHeader: {
      if (has_header_) return "a second header";
      const auto& h = record.header();
      check_header_bounds(h, reader_.path());
      has_header_ = true;
      task_begin_ = h.task_begin();
      task_end_ = h.task_end();
      header_dim_ = h.dim();
      for (const auto& info : h.runs()) run_dims_[info.name()] = info.dim();
      return "";
    }
    case v1::Record::kDraw:
      return check_draw(record.draw().run_id(), record.draw().chain_id(),
                        record.draw().state_size());
    case v1::Record::kEstimates: {
      // Chain id -1: a bootstrap round's estimates pooled over the run's chains (continuous
      // tempering), not one chain's.
      const auto& e = record.estimates();
      return check_draw(e.run_id(), e.chain_id() == -1 ? std::nullopt : std::optional(e.chain_id()),
                        -1);
    }
    case v1::Record::kFooter:
      has_footer_ = true;
      if (record.footer().n_records() != records_read_)
        return "the footer counts " + std::to_string(record.footer().n_records()) +
               " records before it, the file holds " + std::to_string(records_read_);
      return "";
    default:
      return "a record of unknown kind";
  }
}

}  // namespace pemc::report
