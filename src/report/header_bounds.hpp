#pragma once
// A record file is untrusted input: a header with a correct checksum may still ask for anything
// (a dimension of 2^31 - 1, millions of quantity names, absurd iteration counts). Before a report
// sizes anything from a header, its numbers are checked against the limits pemc-dist itself
// enforces on the configs it runs (config/limits.hpp); a header outside them is refused whole.
#include <filesystem>

#include "pemc/v1/records.pb.h"

namespace pemc::report {

// Largest number of runs a header may list (the study limit, config/limits.hpp kMaxRuns).
// UntrustedInputError "<file>: the header is not one pemc-dist writes: <what> (got N, at most M);
// refusing to read the file" when a dimension, a count, a name, the task range or an iteration
// count is out of bounds.
void check_header_bounds(const pemc::v1::Header& header, const std::filesystem::path& file);

}  // namespace pemc::report
