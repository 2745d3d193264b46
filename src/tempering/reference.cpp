#include "tempering/reference.hpp"

#include <fmt/format.h>

namespace pemc::tempering {

std::string describe_fitted(const Reference* reference) {
  if (!reference || reference->description.empty()) return {};
  return fmt::format("fitted reference: {}, log zeta {:.6g}", reference->description, reference->log_zeta);
}

}  // namespace pemc::tempering
