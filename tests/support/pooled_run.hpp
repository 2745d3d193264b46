#pragma once
// The run the pooled-warmup unit tests drive a coordinator with: NUTS, pooled, warmup 300 with
// 20-iteration buffers, 50 draws.
#include "pemc/v1/config.pb.h"

namespace pemc::testing {

inline v1::RunConfig pooled_run() {
  v1::RunConfig run;
  run.set_name("p");
  run.set_warmup(300);
  run.set_iterations(50);
  auto& a = *run.mutable_sampler()->mutable_nuts()->mutable_adaptation();
  a.set_enabled(true);
  a.set_pooled(true);
  a.set_init_buffer(20);
  a.set_term_buffer(20);
  return run;
}

}  // namespace pemc::testing
