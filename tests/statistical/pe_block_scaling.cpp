// Block scaling of one pseudo-extended chain (issue 4, "Speed"): the horseshoe logistic regression
// on the prostate data (p = 5966 covariates, dim 2p + 3 = 11935, the expensive target of the
// paper's Section 4.3) with N = 8 pseudo-samples, run by pemc-dist under mpirun with
// ranks_per_chain = 1 and = 2. Reports the wall time per iteration of the chain (footer
// wall_seconds / iterations) for both and checks that 2 ranks take < 0.65 x the 1-rank time, and
// that the two runs' draws are identical (same chain, split differently).
//
//   pe_block_scaling [--iterations 20] [--out DIR] [--bin DIR]
//
// The kernel is HMC with a fixed step and 10 leapfrog steps (no adaptation): every iteration costs
// the same 10 extended gradients, so the timing measures the evaluation, not the tuning.
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

namespace fs = std::filesystem;

namespace {

#ifndef PEMC_SOURCE_DIR
#define PEMC_SOURCE_DIR "."
#endif
#ifndef PEMC_BINARY_DIR
#define PEMC_BINARY_DIR "build"
#endif
#ifndef PEMC_SHARED_DIR
#define PEMC_SHARED_DIR "../shared"
#endif

std::string config_text(int ranks_per_chain, int iterations, const fs::path& out) {
  const fs::path data = fs::path(PEMC_SHARED_DIR) / "data" / "microarray" / "prostate.csv";
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
         out.string() + "\" }\n";
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

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // progress lines appear as cells finish
  int iterations = 20;
  fs::path out = fs::path(PEMC_SOURCE_DIR) / "out" / "pe_block_scaling";
  fs::path bin = PEMC_BINARY_DIR;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--iterations"))
      iterations = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--out"))
      out = argv[i + 1];
    else if (!std::strcmp(argv[i], "--bin"))
      bin = argv[i + 1];
  }
  fs::create_directories(out);
  double per_iter[3] = {0, 0, 0};
  Run runs[3];
  for (int k : {1, 2}) {
    const fs::path cfg = out / ("k" + std::to_string(k) + ".pbtxt");
    const fs::path rec = out / ("k" + std::to_string(k) + ".pemc");
    std::ofstream(cfg) << config_text(k, iterations, rec);
    // Two ranks either way: with k = 1 the chain runs on one worker and the other rank idles.
    const std::string cmd =
        "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun "
        "--allow-run-as-root --oversubscribe -n 2 '" +
        (bin / "pemc-dist").string() + "' '" + cfg.string() + "' --overwrite --log-level warn > '" +
        (out / ("k" + std::to_string(k) + ".log")).string() + "' 2>&1";
    if (std::system(cmd.c_str()) != 0) {
      std::printf("FAIL: pemc-dist failed for ranks_per_chain = %d (see %s)\n", k,
                  (out / ("k" + std::to_string(k) + ".log")).string().c_str());
      return 1;
    }
    runs[k] = read(rec);
    per_iter[k] = runs[k].chain_wall / iterations;
    std::printf("ranks_per_chain %d: %lld draws, chain wall %.2f s, %.1f ms per iteration (%s)\n",
                k, runs[k].draws, runs[k].chain_wall, 1e3 * per_iter[k], runs[k].status.c_str());
  }
  const double ratio = per_iter[2] / per_iter[1];
  const bool same = runs[1].draw_states == runs[2].draw_states && runs[1].draws == iterations;
  std::printf("2-rank / 1-rank time per iteration: %.3f (must be < 0.65); draws %s\n", ratio,
              same ? "bit-identical" : "DIFFER");
  const bool ok = ratio < 0.65 && same && runs[1].status == "ok" && runs[2].status == "ok";
  std::printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
