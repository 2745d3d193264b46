// Fuzzes pemc-dist's --set FIELD.PATH=VALUE: each input line is one assignment, applied in order to
// a small valid config, then defaults and validation run as in pemc-dist.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "config/defaults.hpp"
#include "config/load.hpp"
#include "config/overrides.hpp"
#include "config/validate.hpp"
#include "fuzz_support.hpp"

namespace {
constexpr std::string_view kBase = R"(
target { gaussian { mean: [0, 0] } }
sampler { hmc { step_size: 0.1 n_leapfrog: 5 } }
iterations: 10
seeds { values: [1] }
output { path: "/dev/null" }
)";
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const pemc::config::LoadedConfig base = pemc::config::parse_text_config(kBase, "base.pbtxt");
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  pemc::config::CommandLineOverrides o;
  while (!rest.empty() && o.sets.size() < 16) {
    const auto nl = rest.find('\n');
    o.sets.emplace_back(rest.substr(0, nl));
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
  }
  try {
    auto loaded = base;
    pemc::config::apply_overrides(loaded, o);
    pemc::config::apply_defaults(loaded);
    (void)pemc::config::find_problems(loaded);
    pemc::config::validate(loaded);
  } catch (const pemc::Error& e) {
    pemc::fuzz::check_message(e);
  }
  return 0;
}
