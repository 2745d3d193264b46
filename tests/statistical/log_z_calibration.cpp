// Log Z calibration study (issue 31): are the log Z estimators of PT (stepping stone), AIS, ST and
// CT unbiased on generated Boltzmann relaxations, and do their per-chain standard errors mean what
// they say — or, where they cannot, does the run say so? See tests/support/log_z_calibration.hpp
// for the statistics and the checks, docs/log-z-calibration.md for the results.
//
//   log_z_calibration [--estimators pt,ais,st,ct] [--instances SEED:UNITS,...] [--seeds K]
//                     [--chains-per-run R] [--threads T] [--set FIELD=VALUE ...] [--chains]
//                     [--no-check]
//
// Defaults: all four estimators on gen1-16u, gen1-20u, gen2-24u and gen1-28u, 32 seeds, 2 threads.
// --set applies to every estimator's config where the field exists (e.g. --set iterations=20000
// or --set sampler.annealed_importance.ladder.n_levels=2000). --chains prints every chain's error,
// SE, z and doubts. --chains-per-run R judges the K chains as K / R runs of R chains each (the
// run-level checks see R chains at a time; R = 1 or 2 makes every log Z unchecked); the
// estimator's label gets "xR". Exit status 0 iff every cell passes and every estimator has at
// least one instance whose chains are mostly trusted and pass every check (so the checks cannot
// all be passed by flagging; not asked of R < 3, where no chain can be trusted); --no-check:
// always 0.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "support/log_z_calibration.hpp"

namespace {

using namespace pemc::log_z_study;

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, sep);)
    if (!item.empty()) out.push_back(item);
  return out;
}

int usage(const char* why) {
  std::fprintf(stderr,
               "log_z_calibration: %s\nusage: log_z_calibration [--estimators pt,ais,st,ct] "
               "[--instances SEED:UNITS,...] [--seeds K] [--chains-per-run R] [--threads T] "
               "[--set FIELD=VALUE ...] [--chains] [--no-check]\n",
               why);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> names = {"pt", "ais", "st", "ct"};
  std::vector<Instance> instances = {{1, 16}, {1, 20}, {2, 24}, {1, 28}};
  int n_seeds = 32, threads = 2, chains_per_run = 0;
  bool check = true, show_chains = false;
  std::vector<std::string> sets;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      auto value = [&]() -> std::string {
        if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
        return argv[++i];
      };
      if (a == "--estimators") {
        names = split(value(), ',');
      } else if (a == "--instances") {
        instances.clear();
        for (const auto& item : split(value(), ',')) {
          const auto parts = split(item, ':');
          if (parts.size() != 2) throw std::invalid_argument("--instances: expected SEED:UNITS");
          instances.push_back({std::stoull(parts[0]), std::stoi(parts[1])});
        }
      } else if (a == "--seeds") {
        n_seeds = std::stoi(value());
      } else if (a == "--chains-per-run") {
        chains_per_run = std::stoi(value());
        if (chains_per_run < 1) throw std::invalid_argument("--chains-per-run must be >= 1");
      } else if (a == "--threads") {
        threads = std::stoi(value());
      } else if (a == "--set") {
        sets.push_back(value());
      } else if (a == "--chains") {
        show_chains = true;
      } else if (a == "--no-check") {
        check = false;
      } else {
        throw std::invalid_argument("unknown argument " + a);
      }
    }
  } catch (const std::exception& e) {
    return usage(e.what());
  }
  std::vector<Estimator> chosen;
  for (const auto& e : default_estimators())
    for (const auto& n : names)
      if (e.name == n) chosen.push_back(e);
  if (chosen.size() != names.size()) return usage("unknown estimator in --estimators");

  std::printf("log Z calibration: %d seeds per cell, %d threads\n", n_seeds, threads);
  std::string table = table_header();
  bool ok = true;
  std::set<std::string> trusted_pass;  // estimators with a trusted, passing instance
  try {
    for (const auto& inst : instances) {
      const auto t0 = std::chrono::steady_clock::now();
      const double truth = exact_log_z(cell_config(chosen.front(), inst, 1, sets));
      std::printf("\n== %s: exact log Z %.6f (enumeration %.1f s)\n", inst.label().c_str(), truth,
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      for (const auto& e : chosen) {
        const auto config = cell_config(e, inst, n_seeds, sets);
        const auto w0 = std::chrono::steady_clock::now();
        const auto chains = run_cell(config, threads, chains_per_run);
        const double wall =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
        const std::string label =
            chains_per_run > 0 ? fmt::format("{} x{}", e.name, chains_per_run) : e.name;
        const auto s = summarise(label, inst.label(), truth, chains);
        const std::string row = table_row(s, check);
        table += row;
        std::printf("%s", row.c_str());
        for (const auto& c : chains)
          if (c.estimates().count("pooled_log_z")) {
            // The run-level pooled AIS estimate over every chain's runs (one run of them all).
            const auto& p = c.estimates();
            const double err = p.at("pooled_log_z") - truth, se = p.at("pooled_log_z_se");
            std::printf("   pooled over the chains' runs: log Z error %+.4f ± %.4f (z %+.2f), "
                        "Pareto k-hat %.2f, ESS %.0f, %s",
                        err, se, err / se,
                        p.count("pooled_log_weight_pareto_k") ? p.at("pooled_log_weight_pareto_k")
                                                              : NAN,
                        p.at("pooled_ess"),
                        p.at("pooled_log_z_untrusted") == 1.0 ? "untrusted" : "trusted");
            if (p.count("pooled_log_z_without_heavy_tail_chains"))
              std::printf("; without the %.0f chains whose own tail is heavy: error %+.4f",
                          p.at("pooled_heavy_tail_chains"),
                          p.at("pooled_log_z_without_heavy_tail_chains") - truth);
            std::printf("\n");
            break;
          }
        std::printf("   (%lld warmup + %lld iterations per chain, %.0f target gradients, wall %.1f s; "
                    "%d failed; spread ratio %.2f)\n",
                    static_cast<long long>(config.warmup()),
                    static_cast<long long>(config.iterations()), s.mean_gradient_evals, wall,
                    s.n_failed, s.spread_ratio);
        if (show_chains)
          for (const auto& c : s.chains)
            std::printf("     seed %3llu  error %+8.4f  se %7.4f  z %+6.2f %s  %s\n",
                        static_cast<unsigned long long>(c.seed), c.error, c.se, c.z,
                        c.diagnostics.c_str(), c.doubts.empty() ? "trusted" : c.doubts.c_str());
        for (const auto& c : chains)
          if (c.status() != "ok")
            std::printf("     chain %d: %s\n", c.chain_id(), c.status().c_str());
        if (check) {
          ok &= s.pass();
          if (!s.mostly_warned() && s.pass()) trusted_pass.insert(e.name);
        }
        std::fflush(stdout);
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "log_z_calibration: %s\n", e.what());
    return 2;
  }
  std::printf("\n%s", table.c_str());
  if (check) {
    for (const auto& e : chosen)
      if ((chains_per_run == 0 || chains_per_run >= 3) && !trusted_pass.count(e.name)) {
        std::printf("CHECK %s: no instance where its chains are trusted and pass\n",
                    e.name.c_str());
        ok = false;
      }
    std::printf("CHECK overall: %s\n", ok ? "pass" : "FAIL");
  }
  return check && !ok ? 1 : 0;
}
