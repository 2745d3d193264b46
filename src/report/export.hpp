#pragma once
// Draws as CSV, one row per draw in file order (Stan-like columns), for work in R or Python.
#include <filesystem>
#include <ostream>

namespace pemc::report {

struct ExportOptions {
  bool include_warmup = false;
};

// Returns the number of rows written. Stops at damage (after the good part) and throws nothing
// for it: the caller checks the file with verify if needed.
std::int64_t export_csv(const std::filesystem::path& path, std::ostream& out,
                        const ExportOptions& options);

}  // namespace pemc::report
