// Parallel tempering over MPI ranks: the replicas of one chain spread over every rank of
// MPI_COMM_WORLD (parallel::MpiGroupComm) must give bit-identical draws, swap decisions and
// estimates to the same chain run alone (parallel::SerialGroup).
//
//   mpirun -n N pt_group_check          (tests/mpi/pt_groups_test.sh runs N = 1, 2, 4)
//
// For each scenario rank 0 prints one line to stdout: a digest (FNV-1a over the bytes of every
// draw's x and potential, every transition's gradient count, and the final estimates except wall
// times) and a few estimates printed exactly (%a). The lines must be identical for every N. Rank 0
// then reruns the scenario alone and compares digests; exit status 1 on any mismatch.
// Timing (stderr, informational): time in group collectives per round and the number of values
// each replica contributes per round.
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>
#include <google/protobuf/text_format.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>

#include "config/factories.hpp"
#include "kernels/kernel.hpp"
#include "parallel/mpi_group_comm.hpp"
#include "rng/stream.hpp"

namespace {

struct Scenario {
  std::string name;
  std::string target;   // TargetConfig text
  std::string sampler;  // SamplerConfig text
  int warmup = 0;
  int iterations = 0;
};

struct Result {
  std::uint64_t digest = 1469598103934665603ull;
  std::map<std::string, double> estimates;
  double seconds = 0;
};

void mix(std::uint64_t& h, const void* data, std::size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
}

Result run(const Scenario& s, pemc::parallel::GroupCommPtr group) {
  pemc::v1::TargetConfig tc;
  pemc::v1::SamplerConfig sc;
  if (!google::protobuf::TextFormat::ParseFromString(s.target, &tc) ||
      !google::protobuf::TextFormat::ParseFromString(s.sampler, &sc))
    throw std::runtime_error("pt_group_check: bad scenario text in " + s.name);
  auto target = pemc::config::make_target(tc);
  auto setup = pemc::config::make_sampler(sc, target, group);
  pemc::kernels::ChainState state;
  state.x = pemc::Vector::Constant(setup.space->dim(), 1.0);
  pemc::kernels::refresh(*setup.space, state);
  Result r;
  const auto t0 = MPI_Wtime();
  if (s.warmup > 0) setup.kernel->begin_warmup(s.warmup);
  for (int t = 0; t < s.warmup + s.iterations; ++t) {
    if (t == s.warmup && s.warmup > 0) setup.kernel->end_warmup();
    pemc::rng::Stream stream(20240601, pemc::rng::Domain::kTransition, 3, static_cast<std::uint64_t>(t));
    const auto st = setup.kernel->transition(state, stream);
    mix(r.digest, state.x.data(), sizeof(double) * static_cast<std::size_t>(state.x.size()));
    mix(r.digest, &state.potential, sizeof(double));
    mix(r.digest, &st.n_gradient_evals, sizeof(st.n_gradient_evals));
  }
  r.seconds = MPI_Wtime() - t0;
  setup.kernel->report_estimates(r.estimates);
  for (const auto& [key, value] : r.estimates) {
    if (key.find("wall_seconds") != std::string::npos) continue;
    mix(r.digest, key.data(), key.size());
    mix(r.digest, &value, sizeof(value));
  }
  return r;
}

double get(const std::map<std::string, double>& m, const std::string& k) {
  const auto it = m.find(k);
  return it == m.end() ? 0.0 : it->second;
}

}  // namespace

int main(int argc, char** argv) {
  boost::mpi::environment env(argc, argv);
  boost::mpi::communicator world;
  const std::string hmc =
      "hmc { step_size: 0.1 n_leapfrog: 8 jitter_n_leapfrog: true adaptation { enabled: true } } ";
  const Scenario scenarios[] = {
      {"kou_a_deo_adaptive", "mixture { preset: KOU_A }",
       "parallel_tempering { " + hmc +
           "reference { mean: [5, 5] variance: [9, 9] } ladder { n_levels: 6 } n_local_steps: 2 "
           "adapt_schedule: true choose_replicas: true min_replicas: 3 }",
       400, 400},
      {"kou_b_seo_power", "mixture { preset: KOU_B }",
       "parallel_tempering { " + hmc +
           "ladder { kind: GEOMETRIC n_levels: 9 beta_min: 0.01 } swap_scheme: STOCHASTIC_EVEN_ODD "
           "adapt_schedule: true }",
       200, 300},
      {"kou_a_64_replicas", "mixture { preset: KOU_A }",
       "parallel_tempering { hmc { step_size: 0.05 n_leapfrog: 10 } "
       "reference { mean: [5, 5] variance: [9, 9] } ladder { n_levels: 64 } n_local_steps: 10 }",
       0, 200},
      {"kou_a_16_replicas_10_local", "mixture { preset: KOU_A }",
       "parallel_tempering { hmc { step_size: 0.05 n_leapfrog: 10 } "
       "reference { mean: [5, 5] variance: [9, 9] } ladder { n_levels: 16 } n_local_steps: 10 }",
       0, 1000},
  };
  int failures = 0;
  for (const auto& s : scenarios) {
    auto group = std::make_shared<pemc::parallel::MpiGroupComm>(world);
    const Result r = run(s, group);
    if (world.rank() == 0) {
      std::printf("%s digest=%016llx n_replicas=%g round_trips=%g barrier=%a log_z=%a\n",
                  s.name.c_str(), static_cast<unsigned long long>(r.digest),
                  get(r.estimates, "n_replicas"), get(r.estimates, "round_trips"),
                  get(r.estimates, "barrier"),
                  r.estimates.count("log_z") ? r.estimates.at("log_z")
                                             : get(r.estimates, "log_z_ratio"));
      const int rounds = s.warmup + s.iterations;
      std::fprintf(stderr,
                   "[%s] %d ranks: %.3f s total, collectives %.3f ms per round (%.1f%% of the "
                   "run), local steps %.3f ms per round on rank 0\n",
                   s.name.c_str(), world.size(), r.seconds,
                   1e3 * get(r.estimates, "comm_wall_seconds") / rounds,
                   100.0 * get(r.estimates, "comm_wall_seconds") / r.seconds,
                   1e3 * get(r.estimates, "local_wall_seconds") / rounds);
      const Result alone = run(s, std::make_shared<pemc::parallel::SerialGroup>());
      if (alone.digest != r.digest) {
        std::printf("%s MISMATCH: serial digest %016llx\n", s.name.c_str(),
                    static_cast<unsigned long long>(alone.digest));
        ++failures;
      }
    }
    world.barrier();
  }
  if (world.rank() == 0) std::printf("%s\n", failures == 0 ? "all scenarios match" : "FAILED");
  int status = failures == 0 ? 0 : 1;
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return status;
}
