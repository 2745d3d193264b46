// Pseudo-extended sampler overhead (issue 4, "Speed"): time per extended-gradient evaluation
// against N x the bare target gradient time, on the Kou mixture (a cheap target, where the
// overhead shows most) and a 28-unit Boltzmann relaxation. Times are thread CPU times, the
// fastest of alternating repeats, so that other load on the machine does not decide the ratio. Also
// checks that a gradient call never touches the heap (global operator new is counted in this
// binary).
//
//   pe_overhead_bench [--quick]
// Exit status 1 if any ratio exceeds 1.15 or a gradient call allocates.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <new>
#include <string>
#include <vector>

#include "config/factories.hpp"
#include "extended/pseudo_extended_target.hpp"
#include "pemc/v1/config.pb.h"
#include "rng/stream.hpp"
#include "targets/mixture.hpp"

namespace {
std::size_t g_allocations = 0;
}  // namespace

void* operator new(std::size_t n) {
  ++g_allocations;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace pemc {
namespace {

// Thread CPU time: other processes on the machine (it has 2 cores) inflate wall time but not this.
double cpu_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return 1e9 * static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec);
}

struct Timing {
  double bare_ns = 0.0;      // one bare target gradient
  double extended_ns = 0.0;  // one extended gradient
  std::size_t allocations = 0;
};

// Where the pseudo-samples are: uniform on [lo, lo + width]^d, or (near_modes) where a PE chain on
// the Kou mixture keeps them: a component mean plus N(0, 0.01 / beta) noise, beta ~ U(0.05, 1).
struct PointSet {
  double lo = 0.0, width = 1.0;
  bool near_modes = false;
};

Timing measure(const targets::TargetPtr& base, int n_pseudo, bool quick, const PointSet& ps) {
  extended::PseudoExtendedOptions o;
  o.n_pseudo = n_pseudo;
  extended::PseudoExtendedTarget pe(base, o);
  const int d = base->dim(), n_points = 64;
  std::vector<Vector> z(n_points, Vector(pe.dim()));
  rng::Stream s(7, rng::Domain::kTest, static_cast<std::uint64_t>(n_pseudo), 0);
  const auto means = targets::kou_means();
  for (auto& v : z) {
    for (int i = 0; i < n_pseudo; ++i) {
      if (ps.near_modes) {
        const Vector& mu = means[s.below(means.size())];
        const double sd = std::sqrt(0.01 / (0.05 + 0.95 * s.uniform()));
        for (int j = 0; j < d; ++j) v[i * d + j] = mu[j] + sd * s.normal();
      } else {
        for (int j = 0; j < d; ++j) v[i * d + j] = ps.lo + ps.width * s.uniform();
      }
    }
    for (int j = n_pseudo * d; j < pe.dim(); ++j) v[j] = s.normal();
  }
  Vector g_ext(pe.dim()), g(d);
  double sink = 0.0;
  const int repeats = quick ? 5 : 25;
  const int inner = std::max(1, (quick ? 200 : 2000) / n_pseudo);
  // Bare (the same N pseudo-samples, one gradient each) and extended calls alternate, and the
  // fastest repeat of each counts, so that load from other processes affects both alike.
  double best_bare = 1e300, best_ext = 1e300;
  for (int r = 0; r < repeats; ++r) {
    const double t0 = cpu_ns();
    for (int p = 0; p < n_points; ++p)
      for (int k = 0; k < inner; ++k)
        for (int i = 0; i < n_pseudo; ++i)
          sink += base->potential_and_gradient(Eigen::Map<const Vector>(z[p].data() + i * d, d), g);
    const double t1 = cpu_ns();
    for (int p = 0; p < n_points; ++p)
      for (int k = 0; k < inner; ++k) sink += pe.potential_and_gradient(z[p], g_ext);
    const double t2 = cpu_ns();
    best_bare = std::min(best_bare, t1 - t0);
    best_ext = std::min(best_ext, t2 - t1);
  }
  Timing t;
  t.bare_ns = best_bare / (static_cast<double>(n_points) * inner * n_pseudo);
  t.extended_ns = best_ext / (static_cast<double>(n_points) * inner);
  // Heap allocations in gradient (and value-only) calls, counted outside the timing harness.
  const std::size_t before = g_allocations;
  for (int p = 0; p < n_points; ++p) {
    sink += pe.potential_and_gradient(z[p], g_ext);
    sink += pe.potential(z[p]);
  }
  t.allocations = g_allocations - before;
  if (sink == 42.0) std::puts("");
  return t;
}

}  // namespace
}  // namespace pemc

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // progress lines appear as cells finish
  using namespace pemc;
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  v1::TargetConfig kou;
  kou.mutable_mixture()->set_preset(v1::MixtureTarget::KOU_A);
  v1::TargetConfig boltz;
  const std::string data = std::string(PEMC_SHARED_DIR) + "/data/boltzmann-pe28/";
  boltz.mutable_boltzmann()->set_q_file(data + "Q.txt");
  boltz.mutable_boltzmann()->set_bias_file(data + "b.txt");
  struct Row {
    const char* name;
    targets::TargetPtr target;
    PointSet points;
  };
  const auto kou_target = config::make_target(kou);
  const Row rows[] = {{"kou_a", kou_target, {0.0, 10.0, false}},
                      {"kou_a@mode", kou_target, {0.0, 0.0, true}},
                      {"boltz28", config::make_target(boltz), {-3.0, 6.0, false}}};
  bool ok = true;
  std::printf("%-11s %4s %14s %16s %8s %8s\n", "target", "N", "bare grad ns", "extended ns",
              "ratio", "allocs");
  for (const Row& row : rows)
    for (int n : {1, 2, 5, 10, 20, 100}) {
      const Timing t = measure(row.target, n, quick, row.points);
      const double ratio = t.extended_ns / (n * t.bare_ns);
      std::printf("%-11s %4d %14.1f %16.1f %8.3f %8zu\n", row.name, n, t.bare_ns, t.extended_ns,
                  ratio, t.allocations);
      if (ratio > 1.15 || t.allocations != 0) ok = false;
    }
  std::printf("%s\n",
              ok ? "PASS: overhead <= 1.15 x N x bare, no allocation per gradient" : "FAIL");
  return ok ? 0 : 1;
}
