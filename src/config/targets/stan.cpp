// A Stan model (StanTarget): compiled once into a cache, loaded as a target (src/stan_target/).
#include "config/file_checks.hpp"
#include "config/target_kinds.hpp"
#include "config/targets/all_kinds.hpp"
#include "stan_target/stan_target.hpp"

namespace pemc::config {

namespace {

// A Stan model's JSON data is read whole into memory by the model; larger files are refused.
constexpr std::uintmax_t kMaxStanDataBytes = std::uintmax_t{1} << 30;

void check_stan(const v1::StanTarget& s, Problems& p) {
  readable_file(p, "target.stan.model_file", s.model_file());
  if (!s.data_file().empty())
    readable_file(p, "target.stan.data_file", s.data_file(), kMaxStanDataBytes);
}

}  // namespace

TargetKind stan_target_kind() {
  return {
      .kind = v1::TargetConfig::kStan,
      .name = "stan",
      .validate = [](const v1::TargetConfig& t, Problems& p) { check_stan(t.stan(), p); },
      .make = [](const v1::TargetConfig& t) -> targets::TargetPtr {
        return stan_target::make_stan_target(t.stan());
      },
  };
}

}  // namespace pemc::config
