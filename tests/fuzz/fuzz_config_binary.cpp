// Fuzzes the binary (.pb) config path: parse_binary_config, apply_defaults, validation.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "config/defaults.hpp"
#include "config/load.hpp"
#include "config/validate.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    auto loaded = pemc::config::parse_binary_config(bytes, "fuzz.pb");
    pemc::config::apply_defaults(loaded);
    (void)pemc::config::find_problems(loaded);
    (void)pemc::config::known_dimension(loaded.config);
    pemc::config::validate(loaded);
  } catch (const pemc::Error& e) {
    pemc::fuzz::check_message(e);
  }
  return 0;
}
