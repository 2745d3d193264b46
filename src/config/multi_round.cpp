#include "config/multi_round.hpp"

#include "extended/continuous_tempering_bootstrap.hpp"
#include "extended/continuous_tempering_rounds.hpp"
#include "warmup/pooled_warmup_rounds.hpp"

namespace pemc::config {

std::unique_ptr<extended::MultiRoundRun> make_multi_round_run(const v1::RunConfig& run,
                                                              int run_index) {
  if (extended::bootstrap_settings(run))
    return std::make_unique<extended::ContinuousTemperingRounds>(run, run_index);
  if (warmup::has_pooled_warmup(run))
    return std::make_unique<warmup::PooledWarmupRounds>(run, run_index);
  return nullptr;
}

}  // namespace pemc::config
