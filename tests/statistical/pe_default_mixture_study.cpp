// Pseudo-extended with DEFAULT settings on separated Gaussian mixtures in 10 and 20 dimensions
// (issue 31): every chain must find every mode, the pooled mode weights must match the truth within
// their Monte Carlo error, and no chain may warn of degenerate weights.
//
//   pe_default_mixture_study [--dims 10,20] [--seeds K] [--iterations M] [--warmup W]
//                            [--n-pseudo N] [--np 2] [--no-run] [--out DIR] [--bin DIR]
//
// Target (d dimensions): 4 components with means (+-6, +-6, 0, ..., 0), variance 0.25 on every
// coordinate and weights 0.1 (+,+), 0.2 (+,-), 0.3 (-,+), 0.4 (-,-): neighbouring modes are 12
// apart, 24 standard deviations, so plain NUTS never crosses. Sampler: pseudo-extended
// NUTS with N pseudo-samples and nothing else set (beta_lower, beta_upper and g(beta) = Beta(d/2 +
// 1, 1) are the defaults); the NUTS kernel adapts its step size and diagonal metric as in
// configs/quickstart.pbtxt. Seeds 1..K, initial points uniform in [-2, 2]^d (the default init).
//
// Per chain c and mode k, the weight estimate is the self-normalised weighted frequency
// (Theorem 2.1) of the mode's quadrant of (x_1, x_2): m_ck = (1/T) sum_t sum_i w_ti 1[x_ti in k].
// Checks (exit 1 if any fails):
//   1. every chain's status is "ok" and it has no warnings (ChainSummary.warnings);
//   2. every chain finds every mode: m_ck >= w_k / 2 (a chain that never visits a mode has m_ck ~ 0,
//      one that does has m_ck = w_k up to its Monte Carlo error, far below w_k / 2 here);
//   3. the pooled estimate mbar_k = mean_c m_ck is within t * se_k of w_k, se_k = sd_c(m_ck) /
//      sqrt(K): the chains are independent, so se_k is the Monte Carlo standard error of mbar_k
//      estimated from the chains' spread, and t is the Student-t quantile with K - 1 degrees of
//      freedom at 1 - alpha / (2 * 4 * n_dims), alpha = 0.01 (two-sided, Bonferroni over the 4
//      modes of every dimension: the whole study has a 1% false-alarm rate).
// It also prints the RMSE of E[x] over chains and coordinates (truth: E[x_1] = -2.4, E[x_2] =
// -1.2, 0 elsewhere) and the chains' degeneracy statistics (ChainSummary.estimates).
#include <boost/math/distributions/students_t.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/numerics.hpp"
#include "pemc/v1/records.pb.h"
#include "records/record_reader.hpp"
#include "support/pemc_dist_runner.hpp"

namespace fs = std::filesystem;

namespace {

constexpr int kModes = 4;
// Quadrant of (x_1, x_2) -> mode: (+,+) 0, (+,-) 1, (-,+) 2, (-,-) 3.
constexpr double kWeights[kModes] = {0.1, 0.2, 0.3, 0.4};
constexpr double kMeans[kModes][2] = {{6, 6}, {6, -6}, {-6, 6}, {-6, -6}};
constexpr double kVariance = 0.25;
constexpr double kAlpha = 0.01;

struct Options {
  std::vector<int> dims{10, 20};
  int seeds = 16;
  std::int64_t iterations = 20000;
  std::int64_t warmup = 1000;
  int n_pseudo = 5;
  int np = 2;
  bool run = true;
  fs::path out = pemc::study::kSourceDir / "out" / "pe_default_mixture";
  fs::path bin = pemc::study::kBinaryDir;
};

std::vector<int> parse_list(const std::string& s) {
  std::vector<int> out;
  std::stringstream ss(s);
  std::string part;
  while (std::getline(ss, part, ',')) out.push_back(std::stoi(part));
  return out;
}

Options parse_args(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error(a + " needs a value");
      return argv[++i];
    };
    if (a == "--dims") o.dims = parse_list(value());
    else if (a == "--seeds") o.seeds = std::stoi(value());
    else if (a == "--iterations") o.iterations = std::stoll(value());
    else if (a == "--warmup") o.warmup = std::stoll(value());
    else if (a == "--n-pseudo") o.n_pseudo = std::stoi(value());
    else if (a == "--np") o.np = std::stoi(value());
    else if (a == "--no-run") o.run = false;
    else if (a == "--out") o.out = value();
    else if (a == "--bin") o.bin = value();
    else throw std::runtime_error("unknown option " + a);
  }
  if (o.seeds < 2) throw std::runtime_error("--seeds must be >= 2 (the tolerance needs a spread)");
  return o;
}

std::string config_text(int d, const Options& o, const fs::path& output) {
  std::string zeros;
  for (int i = 2; i < d; ++i) zeros += ", 0";
  std::string t = "name: \"pe_default_d" + std::to_string(d) + "\"\ntarget { mixture {\n";
  for (int k = 0; k < kModes; ++k) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "  components { weight: %g mean: [%g, %g%s] variance: %g }\n",
                  kWeights[k], kMeans[k][0], kMeans[k][1], zeros.c_str(), kVariance);
    t += buf;
  }
  t += "} }\n";
  t += "sampler { pseudo_extended {\n  n_pseudo: " + std::to_string(o.n_pseudo) +
       "\n  nuts { step_size: 0.1 metric: DIAGONAL adaptation { enabled: true adapt_metric: true } }\n} }\n";
  t += "warmup: " + std::to_string(o.warmup) + "\niterations: " + std::to_string(o.iterations) +
       "\nseeds { base: 1 count: " + std::to_string(o.seeds) + " }\n";
  t += "output { path: \"" + output.string() + "\" }\n";
  return t;
}

struct ChainResult {
  std::int64_t n_draws = 0;
  double mode_sum[kModes] = {0, 0, 0, 0};
  std::vector<double> x_sum;  // sum over draws of the per-draw weighted mean
  std::string status = "missing from footer";
  std::vector<std::string> warnings;
  std::map<std::string, double> estimates;
};

int mode_of(double x1, double x2) { return (x1 > 0 ? 0 : 2) + (x2 > 0 ? 0 : 1); }

// Reads a record file and accumulates every chain's weighted mode frequencies and mean; a damaged
// file is read up to the damage (its chains then miss their footer status).
std::map<int, ChainResult> read_chains(const fs::path& path, int d) {
  pemc::records::RecordReader reader(path);
  std::map<int, ChainResult> chains;
  pemc::v1::Record rec;
  std::vector<double> w;
  while (reader.next(rec)) {
    if (rec.has_footer()) {
      for (const auto& s : rec.footer().chains()) {
        auto& c = chains[s.chain_id()];
        c.status = s.status();
        c.warnings.assign(s.warnings().begin(), s.warnings().end());
        for (const auto& [k, v] : s.estimates()) c.estimates[k] = v;
      }
      continue;
    }
    if (!rec.has_draw() || rec.draw().warmup()) continue;
    const auto& draw = rec.draw();
    const int n = draw.log_weights_size();
    if (n < 1 || draw.extra_states_size() != n * d)
      throw std::runtime_error(path.string() + ": a draw without its pseudo-samples");
    auto& c = chains[draw.chain_id()];
    if (c.x_sum.empty()) c.x_sum.assign(static_cast<std::size_t>(d), 0.0);
    // Theorem 2.1: weights normalised within the draw.
    double max_a = -pemc::kInf;
    for (int i = 0; i < n; ++i) max_a = std::max(max_a, draw.log_weights(i));
    w.assign(static_cast<std::size_t>(n), 0.0);
    double sum = 0.0;
    for (int i = 0; i < n; ++i) sum += (w[i] = std::exp(draw.log_weights(i) - max_a));
    for (int i = 0; i < n; ++i) {
      const double wi = w[i] / sum;
      const double* x = draw.extra_states().data() + static_cast<std::ptrdiff_t>(i) * d;
      c.mode_sum[mode_of(x[0], x[1])] += wi;
      for (int j = 0; j < d; ++j) c.x_sum[j] += wi * x[j];
    }
    ++c.n_draws;
  }
  return chains;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  Options opt;
  try {
    opt = parse_args(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pe_default_mixture_study: %s\n", e.what());
    return 2;
  }
  fs::create_directories(opt.out);
  const boost::math::students_t t_dist(opt.seeds - 1);
  const double t_crit = boost::math::quantile(
      boost::math::complement(t_dist, kAlpha / (2.0 * kModes * static_cast<double>(opt.dims.size()))));
  std::printf("pseudo-extended N = %d, default beta range and g; %d seeds x (%lld warmup + %lld "
              "draws); tolerance t = %.3f x se (alpha %.2g over the study)\n",
              opt.n_pseudo, opt.seeds, static_cast<long long>(opt.warmup),
              static_cast<long long>(opt.iterations), t_crit, kAlpha);
  bool ok = true;
  for (const int d : opt.dims) {
    const std::string name = "pe_default_d" + std::to_string(d);
    const fs::path cfg = opt.out / (name + ".pbtxt"), out = opt.out / (name + ".pemc");
    double wall = 0.0;
    if (opt.run) {
      std::ofstream(cfg) << config_text(d, opt, out);
      const fs::path log = opt.out / (name + ".log");
      const auto run = pemc::study::run_pemc_dist(
          {.bin = opt.bin, .ranks = opt.np, .config = cfg, .log = log});
      wall = run.wall_seconds;
      if (run.exit_status != 0) {
        std::printf("d = %d: pemc-dist FAILED (exit %d): see %s\n", d, run.exit_status,
                    log.string().c_str());
        ok = false;
        continue;
      }
    }
    std::map<int, ChainResult> chains;
    try {
      chains = read_chains(out, d);
    } catch (const std::exception& e) {
      std::printf("d = %d: FAILED to read: %s\n", d, e.what());
      ok = false;
      continue;
    }
    const int k_chains = static_cast<int>(chains.size());
    std::printf("\nd = %d: %d chains%s\n", d, k_chains,
                opt.run ? (", " + std::to_string(static_cast<int>(wall)) + " s").c_str() : "");
    if (k_chains != opt.seeds) {
      std::printf("  CHECK FAILED: expected %d chains\n", opt.seeds);
      ok = false;
    }
    std::vector<std::vector<double>> m(kModes);
    double sq_err = 0.0;
    for (auto& [id, c] : chains) {
      if (c.status != "ok" || !c.warnings.empty()) {
        std::printf("  CHECK FAILED: chain %d: status %s%s%s\n", id, c.status.c_str(),
                    c.warnings.empty() ? "" : "; warning: ",
                    c.warnings.empty() ? "" : c.warnings.front().c_str());
        ok = false;
      }
      if (c.n_draws == 0) continue;
      std::string row;
      char buf[64];
      for (int k = 0; k < kModes; ++k) {
        const double mk = c.mode_sum[k] / static_cast<double>(c.n_draws);
        m[k].push_back(mk);
        std::snprintf(buf, sizeof buf, " %.3f", mk);
        row += buf;
        if (!(mk >= kWeights[k] / 2)) {
          std::printf("  CHECK FAILED: chain %d misses mode %d: weight %.4f < %.2f / 2\n", id, k,
                      mk, kWeights[k]);
          ok = false;
        }
      }
      for (int j = 0; j < d; ++j) {
        const double truth = j < 2 ? kWeights[0] * kMeans[0][j] + kWeights[1] * kMeans[1][j] +
                                         kWeights[2] * kMeans[2][j] + kWeights[3] * kMeans[3][j]
                                   : 0.0;
        const double e = c.x_sum[j] / static_cast<double>(c.n_draws) - truth;
        sq_err += e * e;
      }
      std::printf("  chain %2d: %lld draws, mode weights%s; max weight %.3f, Kish ESS/draw %.2f, "
                  "at beta_lower %.3f, handoffs %.3f\n",
                  id, static_cast<long long>(c.n_draws), row.c_str(), c.estimates["max_weight_mean"],
                  c.estimates["kish_ess_per_draw"], c.estimates["beta_at_lower_fraction"],
                  c.estimates["weight_handoff_rate"]);
    }
    if (m[0].size() < 2) continue;
    const double n = static_cast<double>(m[0].size());
    std::printf("  RMSE of E[x] over chains and coordinates: %.4f\n",
                std::sqrt(sq_err / (n * d)));
    std::printf("  %-6s %6s %8s %8s %7s %9s\n", "mode", "truth", "pooled", "se", "z", "|z| <= t");
    for (int k = 0; k < kModes; ++k) {
      double mean = 0.0, var = 0.0;
      for (double v : m[k]) mean += v / n;
      for (double v : m[k]) var += (v - mean) * (v - mean) / (n - 1.0);
      const double se = std::sqrt(var / n);
      const double z = (mean - kWeights[k]) / se;
      const bool pass = std::abs(z) <= t_crit;
      std::printf("  (%+d,%+d) %6.2f %8.4f %8.4f %7.2f %9s\n", static_cast<int>(kMeans[k][0] / 6),
                  static_cast<int>(kMeans[k][1] / 6), kWeights[k], mean, se, z,
                  pass ? "yes" : "NO");
      if (!pass) ok = false;
    }
  }
  std::printf("\n%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
