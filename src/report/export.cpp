#include "report/export.hpp"

#include <fmt/format.h>

#include <string>

#include "records/record_reader.hpp"

namespace pemc::report {
namespace {

// RFC 4180 quoting for a text cell: run ids come from config names and file stems and may hold
// commas or quotes, which would otherwise shift every later column of the row.
std::string csv_cell(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

}  // namespace

std::int64_t export_csv(const std::filesystem::path& path, std::ostream& out,
                        const ExportOptions& options) {
  records::RecordReader reader(path);
  v1::Record record;
  int dim = -1;
  int n_weights = -1;
  std::int64_t rows = 0;
  std::string line;
  while (reader.next(record)) {
    if (record.has_header()) dim = record.header().dim();
    if (!record.has_draw()) continue;
    const auto& d = record.draw();
    if (d.warmup() && !options.include_warmup) continue;
    if (n_weights < 0) {
      if (dim < 0) dim = d.state_size();
      n_weights = d.log_weights_size();
      line = "run_id,chain_id,seed,iteration,warmup,potential__,accept_stat__,stepsize__,"
             "n_leapfrog__,treedepth__,divergent__,energy__";
      for (int i = 0; i < dim; ++i) line += fmt::format(",x.{}", i + 1);
      for (int i = 0; i < n_weights; ++i) line += fmt::format(",log_weight.{}", i + 1);
      out << line << '\n';
    }
    line = fmt::format("{},{},{},{},{},{:.17g},{:.17g},{:.17g},{},{},{},{:.17g}", csv_cell(d.run_id()),
                       d.chain_id(), d.seed(), d.iteration(), d.warmup() ? 1 : 0, d.potential(),
                       d.accept_stat(), d.step_size(), d.n_leapfrog(), d.tree_depth(),
                       d.divergent() ? 1 : 0, d.energy());
    for (double x : d.state()) line += fmt::format(",{:.17g}", x);
    for (int i = 0; i < n_weights; ++i)
      line += fmt::format(",{:.17g}", i < d.log_weights_size() ? d.log_weights(i) : 0.0);
    out << line << '\n';
    ++rows;
  }
  return rows;
}

}  // namespace pemc::report
