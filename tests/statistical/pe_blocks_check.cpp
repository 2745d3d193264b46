// Pseudo-sample blocks over MPI ranks (issue 4): one pseudo-extended chain spread over all ranks
// of MPI_COMM_WORLD (MpiGroupComm). Every rank owns a block of pseudo-samples, integrates only
// those, and exchanges only per-pseudo-sample scalars, summed in global index order, so
//   - the potential and the (gathered) gradient bits, and
//   - whole NUTS and HMC chains (sampled and fixed beta, step-size and diagonal metric
//     adaptation; the state gathered once per iteration, as the chain driver does)
// must be the same on every rank AND the same for any number of ranks. This program prints one
// line per case with hashes of every bit; tests/mpi/pe_blocks_test.sh runs it under mpirun -n 1, 2
// and 4 and compares the outputs. It also exits 1 if the ranks of one run disagree, if a rank's
// gradient is not zero outside its own pseudo-samples, and checks that a target throwing on one
// rank makes every rank throw (no rank left waiting).
//
//   mpirun -n K pe_blocks_check
#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "extended/pseudo_extended_target.hpp"
#include "kernels/hmc.hpp"
#include "kernels/nuts.hpp"
#include "parallel/mpi_group_comm.hpp"
#include "rng/stream.hpp"
#include "targets/mixture.hpp"

namespace {

using namespace pemc;

// FNV-1a over the bits of doubles.
struct Hash {
  std::uint64_t h = 1469598103934665603ull;
  void add(double v) {
    unsigned char b[8];
    std::memcpy(b, &v, 8);
    for (unsigned char c : b) {
      h ^= c;
      h *= 1099511628211ull;
    }
  }
  void add(const Vector& v) {
    for (Eigen::Index i = 0; i < v.size(); ++i) add(v[i]);
  }
};

targets::TargetPtr kou(bool b) {
  std::vector<targets::GaussianMixture::Component> comps;
  const Eigen::Vector2d centre(5.0, 5.0);
  for (const Vector& mu : targets::kou_means()) {
    const double dist = (mu - centre).norm();
    if (b)
      comps.push_back({1.0 / dist, mu, Vector::Constant(2, dist / 20.0)});
    else
      comps.push_back({1.0 / 20.0, mu, Vector::Constant(2, 0.01)});
  }
  return std::make_shared<targets::GaussianMixture>(comps);
}

class ThrowAtTrigger final : public targets::Target {
 public:
  int dim() const override { return 2; }
  std::string name() const override { return "throwing"; }
  double potential(ConstVectorRef x) const override {
    if (x[0] == 7.25) throw DataError("boom");
    return 0.5 * x.squaredNorm();
  }
  double potential_and_gradient(ConstVectorRef x, VectorRef g) const override {
    g = x;
    return potential(x);
  }
};

struct Case {
  std::string name;
  bool scenario_b = false;
  extended::PseudoExtendedOptions options;
};

// Potential and gradient at fixed points; then a NUTS and two HMC chains from a fixed start.
std::vector<std::uint64_t> run_case(const Case& c, parallel::GroupCommPtr group, int& bad) {
  auto pe = std::make_shared<extended::PseudoExtendedTarget>(kou(c.scenario_b), c.options, group);
  const hmc::Partition& blocks = pe->partition();
  const int dim = pe->dim();
  Hash values;
  Vector g(dim), z(dim);
  for (std::uint64_t p = 0; p < 8; ++p) {
    rng::Stream s(p, rng::Domain::kTest, 1, 0);
    for (int j = 0; j < dim; ++j)
      z[j] = j < 2 * c.options.n_pseudo ? 10.0 * s.uniform() : s.normal();
    g.setConstant(1.0);
    values.add(pe->potential_and_gradient(z, g));
    Vector own = g;
    blocks.zero_nonlocal(own);
    if (own != g) ++bad;  // entries of other ranks' pseudo-samples must be zero
    blocks.gather(g);
    values.add(g);
    values.add(pe->potential(z));
  }
  auto chain = [&](kernels::Kernel& k, int n_warmup, int n_iter) {
    Hash h;
    kernels::ChainState st;
    st.x.resize(dim);
    rng::Stream init(3, rng::Domain::kInitialPoint, 0, 0);
    pe->initial_point(
        [&](VectorRef x) {
          for (Eigen::Index j = 0; j < x.size(); ++j) x[j] = 10.0 * init.uniform();
        },
        st.x);
    kernels::refresh(*pe, st);
    k.begin_warmup(n_warmup);
    for (int t = 0; t < n_warmup + n_iter; ++t) {
      if (t == n_warmup) k.end_warmup();
      rng::Stream s(3, rng::Domain::kTransition, 0, static_cast<std::uint64_t>(t));
      const auto stats = k.transition(st, s);
      blocks.gather(st.x);  // as the chain driver does, once per iteration
      if (t < n_warmup) k.adapt(t, st, stats);
      h.add(st.x);
      h.add(st.potential);
      h.add(stats.accept_stat);
      h.add(static_cast<double>(stats.n_leapfrog));
    }
    h.add(k.step_size());
    return h.h;
  };
  adapt::WarmupAdapterOptions adapt;
  adapt.step_size.target_accept = kernels::kNutsDefaultTargetAccept;
  adapt.adapt_metric = true;
  kernels::NutsOptions no;
  no.step_size = 0.1;
  no.adaptation = adapt;
  kernels::NutsKernel nuts(pe, hmc::Metric::diagonal(Vector::Ones(dim)), no);
  kernels::HmcOptions ho;
  ho.step_size = 0.02;
  ho.n_leapfrog = 10;
  ho.jitter_n_leapfrog = true;
  kernels::HmcKernel hmc(pe, hmc::Metric::unit(dim), ho);
  kernels::HmcOptions ha;
  ha.step_size = 0.02;
  ha.n_leapfrog = 8;
  ha.jitter_step_size = true;
  ha.adaptation = adapt;
  ha.adaptation->step_size.target_accept = 0.65;
  kernels::HmcKernel hmc_adapt(pe, hmc::Metric::diagonal(Vector::Ones(dim)), ha);
  return {values.h, chain(nuts, 60, 60), chain(hmc, 0, 60), chain(hmc_adapt, 60, 40)};
}

}  // namespace

int main(int argc, char** argv) {
  boost::mpi::environment env(argc, argv);
  boost::mpi::communicator world;
  auto group = std::make_shared<parallel::MpiGroupComm>(world);
  std::vector<Case> cases;
  {
    Case c{"kou_b_n5_sampled", true, {}};
    c.options.n_pseudo = 5;
    cases.push_back(c);
    Case c3{"kou_a_n3_sampled", false, {}};  // with 4 ranks one block is empty
    c3.options.n_pseudo = 3;
    cases.push_back(c3);
    Case c7{"kou_b_n7_fixed0.3", true, {}};
    c7.options.n_pseudo = 7;
    c7.options.fixed_beta = 0.3;
    cases.push_back(c7);
    Case c10{"kou_a_n10_priors", false, {}};
    c10.options.n_pseudo = 10;
    c10.options.beta_lower = 0.1;
    c10.options.beta_upper = 0.9;
    c10.options.beta_target = {2.0, 2.0};
    cases.push_back(c10);
  }
  int bad = 0;
  for (const Case& c : cases) {
    const auto h = run_case(c, group, bad);
    for (std::size_t k = 0; k < h.size(); ++k) {
      // Every rank of this run must agree.
      std::uint64_t lo = 0, hi = 0;
      boost::mpi::all_reduce(world, h[k], lo, boost::mpi::minimum<std::uint64_t>());
      boost::mpi::all_reduce(world, h[k], hi, boost::mpi::maximum<std::uint64_t>());
      if (lo != hi) ++bad;
    }
    if (world.rank() == 0)
      std::printf("%-20s values %016llx  nuts %016llx  hmc %016llx  hmc_adapt %016llx\n",
                  c.name.c_str(), static_cast<unsigned long long>(h[0]),
                  static_cast<unsigned long long>(h[1]), static_cast<unsigned long long>(h[2]),
                  static_cast<unsigned long long>(h[3]));
  }
  // A throw at pseudo-sample 4 of 6 (on one rank when several) must reach every rank.
  {
    extended::PseudoExtendedOptions o;
    o.n_pseudo = 6;
    extended::PseudoExtendedTarget t(std::make_shared<ThrowAtTrigger>(), o, group);
    Vector z = Vector::Zero(t.dim());
    z[8] = 7.25;
    Vector g(t.dim());
    int threw = 0;
    try {
      t.potential_and_gradient(z, g);
    } catch (const Error&) {
      threw = 1;
    }
    int all_threw = 0;
    boost::mpi::all_reduce(world, threw, all_threw, std::plus<int>());
    if (world.rank() == 0)
      std::printf("%-20s %s\n", "throw_on_one_rank",
                  all_threw == world.size() ? "every rank threw" : "NOT every rank threw");
    if (all_threw != world.size()) ++bad;
  }
  if (world.rank() == 0 && bad) std::printf("FAIL: %d disagreements between ranks\n", bad);
  return bad ? 1 : 0;
}
