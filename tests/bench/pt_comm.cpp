// Parallel tempering communication benchmark (an MPI program, not part of the test suite).
//
//   mpirun --allow-run-as-root --oversubscribe -n 8 build/tests/pt_comm_bench [--rounds R]
//
// Part 1, one swap round's communication alone: the PT kernel's per-round exchange
// (parallel_tempering.cpp step 2 and the cold-state broadcast) is one allgather of a
// ReplicaRoundReport (6 numbers) per replica plus one broadcast of the beta = 1 replica's state (2d + 1 numbers). Timed
// here in isolation after a barrier, for K = 16, 64, 256 replicas over all ranks, so the figure is
// the collectives' cost and not waiting for a slower rank. Calls per round are 2 whatever K is;
// what grows with K is only the allgather's payload (6 doubles per replica).
//
// Part 2, the share of a real run: Kou mixture (a), K = 16 replicas on a linear ladder from a
// N((5,5), 9 I) reference, HMC (10 leapfrog steps) local kernels, 10 local steps per round, the
// replicas spread over all ranks. Reports each rank's time in the round's collectives (which
// includes waiting for the slowest rank: the beta = 0 replica takes one exact draw instead of 10
// HMC steps, so the rank holding it idles) as a fraction of the run.
#include <mpi.h>

#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "config/factories.hpp"
#include "densities/gaussian.hpp"
#include "kernels/kernel.hpp"
#include "parallel/mpi_group_comm.hpp"
#include "pemc/v1/config.pb.h"
#include "rng/stream.hpp"
#include "tempering/parallel_tempering.hpp"
#include "tempering/reference.hpp"
#include "tempering/replica_row.hpp"
#include "tempering/schedule.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double seconds(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// The maximum of a per-rank value over all ranks (every rank gets it).
double max_over_ranks(double v) {
  double out = 0;
  MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return out;
}

void isolated_round_cost(const boost::mpi::communicator& world, int reps) {
  pemc::parallel::MpiGroupComm group(world);
  const int dim = 2;
  if (world.rank() == 0)
    std::printf("%-8s %-6s %14s %18s %22s\n", "ranks", "K", "us per round", "collectives/round",
                "doubles in per replica");
  for (const int k : {16, 64, 256}) {
    constexpr int kFixed = pemc::tempering::ReplicaRoundReport::kSize;
    const auto block = group.block_of(group.rank(), k);
    std::vector<double> mine(static_cast<std::size_t>(block.end - block.begin) * kFixed, 1.0);
    std::vector<double> all(static_cast<std::size_t>(k) * kFixed);
    std::vector<double> cold(2 * dim + 1, 0.0);
    for (int warm = 0; warm < 50; ++warm) group.allgather_blocks(mine, k, kFixed, all);
    double total = 0;
    for (int r = 0; r < reps; ++r) {
      MPI_Barrier(MPI_COMM_WORLD);  // measure the collectives, not a late arrival
      const auto t0 = Clock::now();
      group.allgather_blocks(mine, k, kFixed, all);
      group.broadcast(cold, r % group.size());
      total += seconds(t0);
    }
    const double per_round_us = 1e6 * max_over_ranks(total) / reps;
    if (world.rank() == 0)
      std::printf("%-8d %-6d %14.2f %18d %22.2f\n", world.size(), k, per_round_us, 2,
                  kFixed + (2.0 * dim + 1) / k);
  }
}

void kou_run_share(const boost::mpi::communicator& world, int rounds) {
  pemc::v1::TargetConfig tc;
  tc.mutable_mixture()->set_preset(pemc::v1::MixtureTarget::KOU_A);
  auto target = pemc::config::make_target(tc);
  pemc::Vector mean(2), var(2);
  mean << 5, 5;
  var << 9, 9;
  auto reference = std::make_shared<const pemc::tempering::Reference>(pemc::tempering::Reference{
      std::make_shared<const pemc::densities::Gaussian>(pemc::densities::Gaussian::from_variances(
          mean, var, pemc::densities::Gaussian::Evaluation::kShared))});
  pemc::v1::HmcConfig hmc;
  hmc.set_step_size(0.05);
  hmc.set_n_leapfrog(10);
  auto factory = [hmc](pemc::targets::TargetPtr space) {
    return pemc::config::make_local_kernel(&hmc, nullptr, std::move(space), "bench");
  };
  pemc::tempering::ParallelTemperingOptions o;
  o.betas = pemc::tempering::linear_ladder(16, 0.0);
  o.n_local_steps = 10;
  o.adapt_schedule = false;
  auto group = std::make_shared<pemc::parallel::MpiGroupComm>(world);
  pemc::tempering::ParallelTemperingKernel pt(target, reference, factory, o, group);
  pemc::kernels::ChainState state;
  state.x = mean;
  pemc::kernels::refresh(*target, state);
  const auto t0 = Clock::now();
  double gradients = 0;  // the whole group's, as the kernel counts them
  for (int r = 0; r < rounds; ++r) {
    pemc::rng::Stream stream(7, pemc::rng::Domain::kTransition, 0, static_cast<std::uint64_t>(r));
    gradients += static_cast<double>(pt.transition(state, stream).n_gradient_evals);
  }
  const double wall = seconds(t0);
  const double comm = pt.comm_seconds();
  std::vector<double> shares(static_cast<std::size_t>(world.size()));
  double share = comm / wall;
  MPI_Gather(&share, 1, MPI_DOUBLE, shares.data(), 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  const double max_wall = max_over_ranks(wall);
  if (world.rank() == 0) {
    std::printf("\nKou (a), K = 16 on %d ranks, 10 local HMC steps (10 leapfrogs) per round, %d "
                "rounds: %.3f s, %.1f us per round, %.0f gradients/s per rank\n",
                world.size(), rounds, max_wall, 1e6 * max_wall / rounds,
                gradients / max_wall / world.size());
    for (int m = 0; m < world.size(); ++m)
      std::printf("  rank %d: time in the round's collectives (incl. waiting) = %.1f%% of the run\n",
                  m, 100 * shares[m]);
  }
}

}  // namespace

int main(int argc, char** argv) {
  boost::mpi::environment env(argc, argv);
  boost::mpi::communicator world;
  int rounds = 20000;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--rounds") == 0) rounds = std::atoi(argv[i + 1]);
  isolated_round_cost(world, 2000);
  kou_run_share(world, rounds);
  return 0;
}
