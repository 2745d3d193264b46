#pragma once
#include <string_view>

namespace pemc {
#ifndef PEMC_VERSION
#define PEMC_VERSION "0.0.0"
#endif
inline constexpr std::string_view kVersion = PEMC_VERSION;
}  // namespace pemc
