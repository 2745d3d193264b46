// Fuzzes the text-format config path of pemc-dist: parse_text_config, then (as pemc-dist does)
// apply_defaults and validation. Any escape other than pemc::Error, and any sanitizer report, is a
// finding.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "config/defaults.hpp"
#include "config/load.hpp"
#include "config/validate.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    auto loaded = pemc::config::parse_text_config(text, "fuzz.pbtxt");
    pemc::config::apply_defaults(loaded);
    (void)pemc::config::find_problems(loaded);
    (void)pemc::config::known_dimension(loaded.config);
    pemc::config::validate(loaded);
  } catch (const pemc::Error& e) {
    pemc::fuzz::check_message(e);
  }
  return 0;
}
