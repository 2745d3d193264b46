// Block scaling of one pseudo-extended chain (issue 4, "Speed"): the horseshoe logistic regression
// on the prostate data (p = 5966 covariates, dim 2p + 3 = 11935, the expensive target of the
// paper's Section 4.3) with N = 8 pseudo-samples, run by pemc-dist under mpirun with
// ranks_per_chain = 1 and = 2. Reports the wall time per iteration of the chain (footer
// wall_seconds / iterations) for both and checks that 2 ranks take < 0.65 x the 1-rank time, and
// that the two runs' draws are identical (same chain, split differently).
//
//   pe_block_scaling [--iterations 20] [--repeats 1] [--thin 1] [--out DIR] [--bin DIR]
//
// (--thin T writes every T-th draw only: the group leader's share of the record writing, serial
// work, then shrinks; a diagnostic, the figure is with every draw written.)
// On a shared 2-core machine every other process can deschedule one of the chain's two ranks
// while the other waits for it in an exchange, so single runs scatter widely: --repeats R runs
// the 1- and 2-rank cells alternately R times each and compares their medians. The load average
// (/proc/loadavg) is printed before and after.
//
// The kernel is HMC with a fixed step and 10 leapfrog steps (no adaptation): every iteration costs
// the same 10 extended gradients, so the timing measures the evaluation, not the tuning.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "pemc/v1/records.pb.h"
#include "support/pemc_dist_runner.hpp"

namespace fs = std::filesystem;

namespace {

std::string config_text(int ranks_per_chain, int iterations, int thin, const fs::path& out) {
  const fs::path data = pemc::study::kSharedDir / "data" / "microarray" / "prostate.csv";
  return "name: \"pe_blocks_prostate_k" + std::to_string(ranks_per_chain) + "\"\n" +
         "target { horseshoe_logistic { data_file: \"" + data.string() +
         "\" split_seed: 1 train_fraction: 0.8 p0: 200 sigma: 2 slab_scale: 2 slab_df: 3 "
         "intercept_scale: 10 } }\n"
         "sampler { pseudo_extended { n_pseudo: 8 ranks_per_chain: " +
         std::to_string(ranks_per_chain) +
         " hmc { step_size: 0.002 n_leapfrog: 10 } } }\n"
         "warmup: 0\niterations: " +
         std::to_string(iterations) +
         "\nseeds { values: [1] }\ninit { uniform_radius: 0.5 }\n"
         "output { path: \"" +
         out.string() + "\" thin: " + std::to_string(thin) + " }\n";
}

struct Run {
  double chain_wall = 0.0;
  long long draws = 0;
  std::string status;
  std::vector<std::string> draw_states;  // serialized states, to compare the runs
};

Run read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[8];
  in.read(magic, 8);
  Run r;
  std::string payload;
  pemc::v1::Record rec;
  while (true) {
    unsigned char h[8];
    in.read(reinterpret_cast<char*>(h), 8);
    if (in.gcount() < 8) break;
    const std::uint32_t len = h[0] | (h[1] << 8) | (h[2] << 16) | (std::uint32_t(h[3]) << 24);
    payload.resize(len);
    in.read(payload.data(), len);
    if (!rec.ParseFromString(payload)) break;
    if (rec.has_draw()) {
      ++r.draws;
      const auto& st = rec.draw().state();
      r.draw_states.emplace_back(reinterpret_cast<const char*>(st.data()),
                                 st.size() * sizeof(double));
    }
    if (rec.has_footer() && rec.footer().chains_size() > 0) {
      r.chain_wall = rec.footer().chains(0).wall_seconds();
      r.status = rec.footer().chains(0).status();
    }
  }
  return r;
}

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return a + " " + b + " " + c;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // progress lines appear as cells finish
  int iterations = 20, repeats = 1, thin = 1;
  fs::path out = pemc::study::kSourceDir / "out" / "pe_block_scaling";
  fs::path bin = pemc::study::kBinaryDir;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--iterations"))
      iterations = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--thin"))
      thin = std::max(1, std::atoi(argv[i + 1]));
    else if (!std::strcmp(argv[i], "--repeats"))
      repeats = std::max(1, std::atoi(argv[i + 1]));
    else if (!std::strcmp(argv[i], "--out"))
      out = argv[i + 1];
    else if (!std::strcmp(argv[i], "--bin"))
      bin = argv[i + 1];
  }
  fs::create_directories(out);
  std::printf("load average before: %s\n", load_average().c_str());
  std::vector<double> per_iter[3];
  Run first[3];
  bool all_ok = true, same = true;
  for (int r = 0; r < repeats; ++r)
    for (int k : {1, 2}) {
      const fs::path cfg = out / ("k" + std::to_string(k) + ".pbtxt");
      const fs::path rec = out / ("k" + std::to_string(k) + ".pemc");
      std::ofstream(cfg) << config_text(k, iterations, thin, rec);
      // Two ranks either way: with k = 1 the chain runs on one worker and the other rank idles.
      const fs::path log = out / ("k" + std::to_string(k) + ".log");
      if (pemc::study::run_pemc_dist({.bin = bin, .ranks = 2, .config = cfg, .log = log})
              .exit_status != 0) {
        std::printf("FAIL: pemc-dist failed for ranks_per_chain = %d (see %s)\n", k,
                    log.string().c_str());
        return 1;
      }
      const Run run = read(rec);
      per_iter[k].push_back(run.chain_wall / iterations);
      std::printf("ranks_per_chain %d: %lld draws, chain wall %.2f s, %.1f ms per iteration (%s)\n",
                  k, run.draws, run.chain_wall, 1e3 * per_iter[k].back(), run.status.c_str());
      all_ok = all_ok && run.status == "ok" && run.draws == (iterations + thin - 1) / thin;
      if (r == 0 && k == 1) first[1] = run;
      // Every run of either cell gives the draws of the first 1-rank run.
      if (run.draw_states != first[1].draw_states) same = false;
    }
  std::printf("load average after: %s\n", load_average().c_str());
  const double t1 = median(per_iter[1]), t2 = median(per_iter[2]);
  const double ratio = t2 / t1;
  if (repeats > 1)
    std::printf("medians over %d runs each: 1 rank %.1f ms, 2 ranks %.1f ms per iteration\n",
                repeats, 1e3 * t1, 1e3 * t2);
  std::printf("2-rank / 1-rank time per iteration: %.3f (must be < 0.65); draws %s\n", ratio,
              same ? "bit-identical" : "DIFFER");
  const bool ok = ratio < 0.65 && same && all_ok;
  std::printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
